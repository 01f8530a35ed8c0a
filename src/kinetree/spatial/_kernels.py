"""Compiled scalar kernels on rotations: the single implementation that both the
public numpy API (:mod:`kinetree.spatial`) and the solver kernels call.

Rotations are 3x3 float64 arrays; axis-angle vectors are 3-vectors whose norm is
the angle in radians.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .._compile import inline_hot

_SMALL = 1e-7


@njit(cache=True, fastmath=False)
def rodrigues(axis: np.ndarray, angle: float, out: np.ndarray) -> None:
    """Write the rotation about unit ``axis`` by ``angle`` [rad] into ``out`` (3x3)."""
    x, y, z = axis[0], axis[1], axis[2]
    c = math.cos(angle)
    s = math.sin(angle)
    t = 1.0 - c
    out[0, 0] = c + x * x * t
    out[0, 1] = x * y * t - z * s
    out[0, 2] = x * z * t + y * s
    out[1, 0] = y * x * t + z * s
    out[1, 1] = c + y * y * t
    out[1, 2] = y * z * t - x * s
    out[2, 0] = z * x * t - y * s
    out[2, 1] = z * y * t + x * s
    out[2, 2] = c + z * z * t


@njit(cache=True)
def exp3(w: np.ndarray, out: np.ndarray) -> None:
    """SO(3) exponential of the axis-angle vector ``w`` [rad] into ``out`` (3x3)."""
    theta = math.sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2])
    if theta < _SMALL:
        # First order in w plus the second-order term keeps it accurate to ~1e-21.
        wx, wy, wz = w[0], w[1], w[2]
        out[0, 0] = 1.0 - 0.5 * (wy * wy + wz * wz)
        out[0, 1] = -wz + 0.5 * wx * wy
        out[0, 2] = wy + 0.5 * wx * wz
        out[1, 0] = wz + 0.5 * wx * wy
        out[1, 1] = 1.0 - 0.5 * (wx * wx + wz * wz)
        out[1, 2] = -wx + 0.5 * wy * wz
        out[2, 0] = -wy + 0.5 * wx * wz
        out[2, 1] = wx + 0.5 * wy * wz
        out[2, 2] = 1.0 - 0.5 * (wx * wx + wy * wy)
        return
    a = np.empty(3)
    a[0] = w[0] / theta
    a[1] = w[1] / theta
    a[2] = w[2] / theta
    rodrigues(a, theta, out)


@njit(cache=True, inline=inline_hot)
def log3(R: np.ndarray, out: np.ndarray) -> None:
    """SO(3) logarithm: the axis-angle vector ``w`` with ``exp3(w) == R``, |w| <= pi.

    Accurate near the identity (series expansion) and near pi (axis from the
    symmetric part, sign from the skew part).
    """
    tr = R[0, 0] + R[1, 1] + R[2, 2]
    cos_t = 0.5 * (tr - 1.0)
    if cos_t > 1.0:
        cos_t = 1.0
    elif cos_t < -1.0:
        cos_t = -1.0
    sx = R[2, 1] - R[1, 2]
    sy = R[0, 2] - R[2, 0]
    sz = R[1, 0] - R[0, 1]
    sin_t = 0.5 * math.sqrt(sx * sx + sy * sy + sz * sz)
    theta = math.atan2(sin_t, cos_t)
    if theta < 1e-4:
        # theta / (2 sin theta) = 1/2 + theta^2/12 + ...
        k = 0.5 + theta * theta / 12.0
        out[0] = k * sx
        out[1] = k * sy
        out[2] = k * sz
        return
    if theta < math.pi - 1e-3:
        k = theta / (2.0 * sin_t)
        out[0] = k * sx
        out[1] = k * sy
        out[2] = k * sz
        return
    # Near pi: R + R^T = 2 cos(t) I + 2 (1 - cos t) a a^T. Take the largest diagonal.
    d0 = R[0, 0] - cos_t
    d1 = R[1, 1] - cos_t
    d2 = R[2, 2] - cos_t
    one_m_c = 1.0 - cos_t
    if d0 >= d1 and d0 >= d2:
        ax = math.sqrt(max(d0 / one_m_c, 0.0))
        ay = (R[0, 1] + R[1, 0]) / (2.0 * one_m_c * ax)
        az = (R[0, 2] + R[2, 0]) / (2.0 * one_m_c * ax)
    elif d1 >= d2:
        ay = math.sqrt(max(d1 / one_m_c, 0.0))
        ax = (R[0, 1] + R[1, 0]) / (2.0 * one_m_c * ay)
        az = (R[1, 2] + R[2, 1]) / (2.0 * one_m_c * ay)
    else:
        az = math.sqrt(max(d2 / one_m_c, 0.0))
        ax = (R[0, 2] + R[2, 0]) / (2.0 * one_m_c * az)
        ay = (R[1, 2] + R[2, 1]) / (2.0 * one_m_c * az)
    n = math.sqrt(ax * ax + ay * ay + az * az)
    ax /= n
    ay /= n
    az /= n
    # The skew part fixes the sign of the axis (it is 2 sin(t) a).
    if ax * sx + ay * sy + az * sz < 0.0:
        ax, ay, az = -ax, -ay, -az
    out[0] = theta * ax
    out[1] = theta * ay
    out[2] = theta * az


@njit(cache=True)
def rotation_error(R_target: np.ndarray, R_current: np.ndarray, out: np.ndarray) -> None:
    """World-frame rotation error ``log(R_target R_current^T)`` [rad] into ``out``."""
    M = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            M[i, j] = (
                R_target[i, 0] * R_current[j, 0]
                + R_target[i, 1] * R_current[j, 1]
                + R_target[i, 2] * R_current[j, 2]
            )
    log3(M, out)


@njit(cache=True)
def log3_batch(R: np.ndarray) -> np.ndarray:
    """``log3`` over a flat batch ``(n, 3, 3)`` -> ``(n, 3)``."""
    n = R.shape[0]
    out = np.empty((n, 3))
    for i in range(n):
        log3(R[i], out[i])
    return out


@njit(cache=True)
def exp3_batch(w: np.ndarray) -> np.ndarray:
    """``exp3`` over a flat batch ``(n, 3)`` -> ``(n, 3, 3)``."""
    n = w.shape[0]
    out = np.empty((n, 3, 3))
    for i in range(n):
        exp3(w[i], out[i])
    return out


@njit(cache=True)
def rotation_error_batch(R_target: np.ndarray, R_current: np.ndarray) -> np.ndarray:
    """``rotation_error`` over flat batches ``(n, 3, 3)`` -> ``(n, 3)``."""
    n = R_target.shape[0]
    out = np.empty((n, 3))
    for i in range(n):
        rotation_error(R_target[i], R_current[i], out[i])
    return out
