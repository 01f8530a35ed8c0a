"""The shape of a GPU launch for a batch (no GPU needed: a function of the batch size
and the number of multiprocessors)."""

from __future__ import annotations

import pytest

from kinetree.gpu.api import IK_THREADS, launch_shape


def test_a_small_batch_is_spread_over_every_multiprocessor():
    # 1,000 targets on an H100's 132 multiprocessors: 143 one-warp blocks of 7 lanes
    assert launch_shape(1000, 132, IK_THREADS, 16) == (143, 7)
    assert launch_shape(1, 132, IK_THREADS, 16) == (1, 1)
    assert launch_shape(0, 132, IK_THREADS, 16) == (1, 1)


def test_a_large_batch_fills_blocks_up_to_the_cap():
    assert launch_shape(1_000_000, 132, IK_THREADS, 16) == (132 * 16, IK_THREADS)
    assert launch_shape(132 * 64, 132, 64, 16) == (132, 64)


@pytest.mark.parametrize("sms", [1, 8, 46, 132])
@pytest.mark.parametrize("n", [1, 7, 31, 100, 1000, 4223, 8447, 8448, 10**5, 10**6])
def test_every_item_has_a_thread_and_every_multiprocessor_work(n, sms):
    blocks, threads = launch_shape(n, sms, IK_THREADS, 16)
    assert 1 <= threads <= IK_THREADS
    assert 1 <= blocks <= sms * 16
    # every item gets its own thread unless the grid is at its cap (threads then loop)
    assert blocks * threads >= n or blocks == sms * 16
    # no more threads than items, but for rounding within one block
    assert (blocks - 1) * threads < n
    # the work reaches as many multiprocessors as there are items (or all of them)
    assert blocks >= min(n, sms) or threads == IK_THREADS
    assert threads == IK_THREADS or threads <= 32
    assert threads == max(1, min(32, n // sms)) or n >= sms * IK_THREADS
