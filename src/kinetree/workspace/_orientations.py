"""Rotations spread evenly over SO(3): the orientations a reachability map tries per voxel.

Super-Fibonacci spirals (M. Alexa, "Super-Fibonacci Spirals: Fast, Low-Discrepancy
Sampling of SO(3)", CVPR 2022): sample ``i`` of ``n`` is the unit quaternion

    s = i + 1/2,  r = sqrt(s / n),  R = sqrt(1 - s / n),
    a = 2 pi s / sqrt(2),  b = 2 pi s / psi,
    q_i = (r sin a, r cos a, R sin b, R cos b)

with ``psi`` the real root of ``psi^4 = psi + 4`` (1.5337...). Any ``n`` works (a
Fibonacci sphere of approach axes times a set of roll angles needs ``n`` to factor), and
the set is deterministic. For ``n = 50`` the nearest other sample of each is at least
0.68 rad away (uniform random draws: 0.34) and every rotation lies within 1.1 rad of a
sample (random: 1.3), measured over 20,000 random rotations.
"""

from __future__ import annotations

import numpy as np

from .._validate import check_memory
from ..errors import InvalidValueError
from ..spatial import quaternion_to_matrix

__all__ = ["PSI", "orientation_samples"]

#: The real root of ``x^4 = x + 4``: the second irrational of the spiral.
PSI = 1.5337511687552048


def orientation_samples(n: int) -> np.ndarray:
    """``n`` rotation matrices ``(n, 3, 3)`` spread evenly over SO(3) (super-Fibonacci)."""
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise InvalidValueError(f"the number of orientations must be an integer >= 1, got {n!r}")
    # s, r, R, a, b, the quaternions and the matrices: 20 float64 per sample.
    check_memory(int(n) * 8 * 20, f"{int(n):,} orientation samples", "ask for fewer")
    s = np.arange(int(n)) + 0.5
    r, R = np.sqrt(s / n), np.sqrt(1.0 - s / n)
    a, b = 2.0 * np.pi * s / np.sqrt(2.0), 2.0 * np.pi * s / PSI
    # Read as (w, x, y, z): a fixed relabelling of the 4 coordinates keeps the spread.
    quat = np.stack([r * np.sin(a), r * np.cos(a), R * np.sin(b), R * np.cos(b)], axis=-1)
    return quaternion_to_matrix(quat)
