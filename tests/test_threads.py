"""The batch thread pool: every chunk once, and Ctrl-C (an exception in the calling thread)
stops every thread after its chunk under way instead of finishing the batch."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from kinetree import _threads


@pytest.fixture
def four_threads(monkeypatch):
    monkeypatch.setattr(_threads, "n_threads", lambda: 4)


def test_every_item_once(four_threads):
    seen = np.zeros(1000, dtype=int)
    lock = threading.Lock()

    def kernel(a: int, b: int) -> None:
        with lock:
            seen[a:b] += 1

    _threads.run_chunks(kernel, 1000, 7)
    np.testing.assert_array_equal(seen, 1)


def test_interrupt_stops_every_thread(four_threads):
    main = threading.get_ident()
    done = [0]
    lock = threading.Lock()

    def kernel(a: int, b: int) -> None:
        if threading.get_ident() == main and done[0] >= 8:
            raise KeyboardInterrupt  # what Ctrl-C raises between two chunks
        time.sleep(0.001)  # a chunk of compiled work (the GIL released)
        with lock:
            done[0] += 1

    with pytest.raises(KeyboardInterrupt):
        _threads.run_chunks(kernel, 3000, 1)  # 3000 chunks: ~1 s on 4 threads
    after = done[0]
    time.sleep(0.2)
    assert done[0] == after  # no thread goes on with the batch
    assert after < 100
