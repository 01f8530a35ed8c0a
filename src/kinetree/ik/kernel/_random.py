"""The compiled loop's random generator: splitmix64 over a one-element state array, the
same integer arithmetic on a CPU and a GPU thread, so a seed gives the same restarts on
both.

The sums and products modulo 2^64 are written on 32-bit halves, none of which exceeds
64 bits: compiled, they are the plain wrapping arithmetic; run as Python with numpy
integers (numba's CUDA simulator), they give the same bits without numpy's overflow
warnings."""

from __future__ import annotations

import numpy as np
from numba import njit

_LOW = np.uint64(0xFFFFFFFF)
_32 = np.uint64(32)


@njit(cache=True, inline="always")
def _add(a: np.uint64, b: np.uint64) -> np.uint64:
    """``a + b`` modulo 2^64, with no intermediate above 2^64."""
    low = (a & _LOW) + (b & _LOW)
    high = ((a >> _32) + (b >> _32) + (low >> _32)) & _LOW
    return (high << _32) | (low & _LOW)


@njit(cache=True, inline="always")
def _mul(a: np.uint64, b: np.uint64) -> np.uint64:
    """``a * b`` modulo 2^64, with no intermediate above 2^64: each partial product of
    two 32-bit halves is below 2^64, and only the low 32 bits of the cross terms count."""
    a_lo, a_hi = a & _LOW, a >> _32
    b_lo, b_hi = b & _LOW, b >> _32
    low = a_lo * b_lo
    cross = ((a_hi * b_lo) & _LOW) + ((a_lo * b_hi) & _LOW) + (low >> _32)
    return ((cross & _LOW) << _32) | (low & _LOW)


@njit(cache=True)
def rand01(state: np.ndarray) -> float:
    """splitmix64 uniform in [0, 1); ``state`` is a one-element uint64 array."""
    state[0] = _add(state[0], np.uint64(0x9E3779B97F4A7C15))
    z = state[0]
    z = _mul(z ^ (z >> np.uint64(30)), np.uint64(0xBF58476D1CE4E5B9))
    z = _mul(z ^ (z >> np.uint64(27)), np.uint64(0x94D049BB133111EB))
    z = z ^ (z >> np.uint64(31))
    return float(z >> np.uint64(11)) * (1.0 / 9007199254740992.0)
