"""The compiled loop's clock: ``CLOCK_MONOTONIC`` read through libc, so that a solve's
time budget is checked inside the kernel without returning to Python. The GPU twin
replaces it with the device's timer (:mod:`kinetree.gpu._translate`)."""

from __future__ import annotations

import numpy as np
from numba import njit, types

# Resolved by name at link time (so functions that call it can still be cached).
_clock_gettime = types.ExternalFunction(
    "clock_gettime",
    types.int32(types.int32, types.voidptr),
)


@njit(cache=True)
def monotonic(buf: np.ndarray) -> float:
    """CLOCK_MONOTONIC in seconds; ``buf`` is a two-element int64 scratch array."""
    _clock_gettime(1, buf.ctypes.data)  # type: ignore[call-overload]
    return buf[0] + 1e-9 * buf[1]
