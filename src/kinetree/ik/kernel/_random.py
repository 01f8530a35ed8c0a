"""The compiled loop's random generator: splitmix64 over a one-element state array, the
same integer arithmetic on a CPU and a GPU thread, so a seed gives the same restarts on
both."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def rand01(state: np.ndarray) -> float:
    """splitmix64 uniform in [0, 1); ``state`` is a one-element uint64 array."""
    state[0] += np.uint64(0x9E3779B97F4A7C15)
    z = state[0]
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return float(z >> np.uint64(11)) * (1.0 / 9007199254740992.0)
