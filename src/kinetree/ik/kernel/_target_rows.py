"""The target rows a solve starts from: copied in from the caller (encoded rows or one raw
4x4 pose) and checked (finite, near enough, rigid) before the first iteration.

Rows are laid out in :mod:`kinetree.ik.kernel.layout` (``T_*`` slots); allocation-free, so it
compiles for a CPU or a GPU thread alike.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .layout import (
    KIND_FRAME,
    MAX_COORDINATE,
    RIGID_TOL,
    ST_NONFINITE,
    ST_NOT_RIGID,
    ST_OK,
    ST_TOO_FAR,
    T_POINT,
    T_POS,
    T_ROT,
    T_W_POS,
    T_W_ROT,
    TARGET_SIZE,
    TI_KIND,
)


@njit(cache=True)
def load_targets(src: np.ndarray, tgt: np.ndarray) -> None:
    """Copy the caller's targets into the working rows ``tgt`` (T, TARGET_SIZE).

    ``src`` is either encoded rows (T, TARGET_SIZE) or one raw 4x4 pose, which becomes
    a full pose target with unit weights (the fast path of ``Model.ik(T)``)."""
    if src.shape[1] == 4 and src.shape[0] == 4:
        tf = tgt[0]
        for r in range(3):
            tf[T_POS + r] = src[r, 3]
            for c in range(3):
                tf[T_ROT + 3 * r + c] = src[r, c]
            tf[T_W_POS + r] = 1.0
            tf[T_W_ROT + r] = 1.0
            tf[T_POINT + r] = 0.0
        return
    for t in range(tgt.shape[0]):
        for k in range(TARGET_SIZE):
            tgt[t, k] = src[t, k]


@njit(cache=True)
def check_raw_pose(src: np.ndarray) -> int:
    """The last row of a raw 4x4 pose: finite and ``[0, 0, 0, 1]``."""
    if src.shape[1] != 4 or src.shape[0] != 4:
        return ST_OK
    for c in range(4):
        if not np.isfinite(src[3, c]):
            return ST_NONFINITE
    if src[3, 0] != 0.0 or src[3, 1] != 0.0 or src[3, 2] != 0.0 or src[3, 3] != 1.0:
        return ST_NOT_RIGID
    return ST_OK


@njit(cache=True)
def nearest_rotation(R: np.ndarray) -> None:
    """Project ``R`` (9 values, row-major, near a rotation) onto the nearest rotation:
    Newton's iteration for the polar factor, ``R <- (R + R^-T) / 2``, quadratic."""
    for _ in range(6):
        a, b, c = R[0], R[1], R[2]
        d, e, f = R[3], R[4], R[5]
        g, h, i = R[6], R[7], R[8]
        det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)
        inv = 1.0 / det
        # R^-T = cofactor(R) / det
        n0 = 0.5 * (a + (e * i - f * h) * inv)
        n1 = 0.5 * (b - (d * i - f * g) * inv)
        n2 = 0.5 * (c + (d * h - e * g) * inv)
        n3 = 0.5 * (d - (b * i - c * h) * inv)
        n4 = 0.5 * (e + (a * i - c * g) * inv)
        n5 = 0.5 * (f - (a * h - b * g) * inv)
        n6 = 0.5 * (g + (b * f - c * e) * inv)
        n7 = 0.5 * (h - (a * f - c * d) * inv)
        n8 = 0.5 * (i + (a * e - b * d) * inv)
        change = abs(n0 - a) + abs(n4 - e) + abs(n8 - i) + abs(n1 - b) + abs(n3 - d)
        R[0], R[1], R[2], R[3], R[4], R[5], R[6], R[7], R[8] = n0, n1, n2, n3, n4, n5, n6, n7, n8
        if change < 1e-16:
            break


@njit(cache=True)
def check_targets(tgt_i: np.ndarray, tgt: np.ndarray) -> int:
    """Validate the working targets: ``ST_NONFINITE`` (NaN/inf), ``ST_TOO_FAR``
    (a coordinate beyond ``MAX_COORDINATE``), ``ST_NOT_RIGID`` (a rotation off by more
    than ``RIGID_TOL``), else ``ST_OK``; rotations within ``RIGID_TOL`` of orthonormal
    are projected onto the nearest rotation in place."""
    for t in range(tgt.shape[0]):
        tf = tgt[t]
        for k in range(TARGET_SIZE):
            if not np.isfinite(tf[k]):
                return ST_NONFINITE
        for k in range(3):
            if abs(tf[T_POS + k]) > MAX_COORDINATE or abs(tf[T_POINT + k]) > MAX_COORDINATE:
                return ST_TOO_FAR
        if (
            tgt_i[t, TI_KIND] == KIND_FRAME
            and tf[T_W_ROT] + tf[T_W_ROT + 1] + tf[T_W_ROT + 2] > 0.0
        ):
            dev = 0.0
            for i in range(3):
                for j in range(3):
                    s = 0.0
                    for k in range(3):
                        s += tf[T_ROT + 3 * i + k] * tf[T_ROT + 3 * j + k]
                    dev = max(dev, abs(s - (1.0 if i == j else 0.0)))
            R = tf[T_ROT : T_ROT + 9]
            det = (
                R[0] * (R[4] * R[8] - R[5] * R[7])
                - R[1] * (R[3] * R[8] - R[5] * R[6])
                + R[2] * (R[3] * R[7] - R[4] * R[6])
            )
            if not dev <= RIGID_TOL or det <= 0.0:
                return ST_NOT_RIGID
            if dev > 1e-15:
                nearest_rotation(R)
    return ST_OK
