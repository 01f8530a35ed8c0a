"""The compiled entry point of every compiled method: :func:`solve_batch`.

It is :func:`kinetree.ik._loop.solve_range` behind one signature that releases the
GIL: one compiled function serves a single solve (a batch of one), a small batch, and
a large batch split over threads by :func:`kinetree._threads.run_chunks`. Its
arguments are always C-contiguous float64/int64 arrays of fixed writability (see
``ik.solve``), so it compiles once per machine (cached on disk), on the first solve;
nothing compiles at import.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._loop import solve_range
from ._steps import CCD, DLS, PINV, SDLS, SWING_TWIST, TRANSPOSE

#: The method code of each compiled method (``auto`` is ``dls`` with other defaults).
METHOD_CODES = {"dls": DLS, "pinv": PINV, "transpose": TRANSPOSE, "sdls": SDLS, "ccd": CCD}


def method_code(kernel_method: str, swing_twist: bool) -> int:
    """The code :func:`solve_batch` takes: the method, plus the swing-twist flag."""
    return METHOD_CODES[kernel_method] | (SWING_TWIST if swing_twist else 0)


@njit(cache=True, nogil=True)
def solve_batch(
    method: int, ibuf: np.ndarray, fbuf: np.ndarray, targets: np.ndarray, q0: np.ndarray,
    seed: int, out: np.ndarray, hist_q: np.ndarray, hist_e: np.ndarray, start: int, stop: int,
) -> None:  # fmt: skip
    """Solve problems ``start..stop`` (see :func:`~kinetree.ik._loop.solve_range`)."""
    solve_range(method, ibuf, fbuf, targets, q0, seed, out, hist_q, hist_e, start, stop)
