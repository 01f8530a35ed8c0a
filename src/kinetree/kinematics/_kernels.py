"""Compiled forward kinematics and Jacobians over a model's packed arrays.

A model reaches the kernels as two arrays (see :meth:`kinetree.Model.packed`):

``fdata[i]`` (float64, 17): origin of node ``i`` relative to its parent as a 3x4
row-major block (0:12), joint axis in the node frame (12:15), mimic multiplier
(15) and offset (16).

``idata[i]`` (int64, 4): parent index (-1 for the root), joint type (0 fixed,
1 revolute, 2 prismatic), index into ``q`` (-1 when the node has no DoF), and an
axis code (+-1, +-2, +-3 for +-x, +-y, +-z; 0 for a general axis).

World transforms are kept as ``(n, 3, 4)`` blocks; the last row is implicit.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

FIXED = 0
REVOLUTE = 1
PRISMATIC = 2


@njit(cache=True, inline="always")
def joint_value(q: np.ndarray, fd: np.ndarray, qi: int) -> float:
    """Joint coordinate of a node: ``mul * q[qi] + offset`` (rad or m)."""
    if qi < 0:
        return fd[16]
    return fd[15] * q[qi] + fd[16]


@njit(cache=True)
def node_transform(q: np.ndarray, fdata: np.ndarray, idata: np.ndarray, i: int, W: np.ndarray) -> None:
    """Write the world transform of node ``i`` into ``W[i]``; its parent must be done."""
    fd = fdata[i]
    p = idata[i, 0]
    jt = idata[i, 1]
    Wi = W[i]
    if p < 0:
        for r in range(3):
            for c in range(4):
                Wi[r, c] = fd[4 * r + c]
    else:
        Wp = W[p]
        for r in range(3):
            a0 = Wp[r, 0]
            a1 = Wp[r, 1]
            a2 = Wp[r, 2]
            for c in range(3):
                Wi[r, c] = a0 * fd[c] + a1 * fd[4 + c] + a2 * fd[8 + c]
            Wi[r, 3] = a0 * fd[3] + a1 * fd[7] + a2 * fd[11] + Wp[r, 3]
    if jt == REVOLUTE:
        th = joint_value(q, fd, idata[i, 2])
        code = idata[i, 3]
        if code != 0:
            ax = abs(code) - 1
            if code < 0:
                th = -th
            c = math.cos(th)
            s = math.sin(th)
            # Columns j, k span the plane of rotation about axis ``ax`` (right-handed).
            j = (ax + 1) % 3
            k = (ax + 2) % 3
            for r in range(3):
                cj = Wi[r, j]
                ck = Wi[r, k]
                Wi[r, j] = c * cj + s * ck
                Wi[r, k] = -s * cj + c * ck
        else:
            x, y, z = fd[12], fd[13], fd[14]
            c = math.cos(th)
            s = math.sin(th)
            t = 1.0 - c
            R00 = c + x * x * t
            R01 = x * y * t - z * s
            R02 = x * z * t + y * s
            R10 = y * x * t + z * s
            R11 = c + y * y * t
            R12 = y * z * t - x * s
            R20 = z * x * t - y * s
            R21 = z * y * t + x * s
            R22 = c + z * z * t
            for r in range(3):
                m0 = Wi[r, 0]
                m1 = Wi[r, 1]
                m2 = Wi[r, 2]
                Wi[r, 0] = m0 * R00 + m1 * R10 + m2 * R20
                Wi[r, 1] = m0 * R01 + m1 * R11 + m2 * R21
                Wi[r, 2] = m0 * R02 + m1 * R12 + m2 * R22
    elif jt == PRISMATIC:
        d = joint_value(q, fd, idata[i, 2])
        for r in range(3):
            Wi[r, 3] += d * (Wi[r, 0] * fd[12] + Wi[r, 1] * fd[13] + Wi[r, 2] * fd[14])


@njit(cache=True)
def fk_nodes(q: np.ndarray, fdata: np.ndarray, idata: np.ndarray, nodes: np.ndarray, W: np.ndarray) -> None:
    """World transforms of ``nodes`` (topologically sorted, ancestors included) into ``W``."""
    for t in range(nodes.shape[0]):
        node_transform(q, fdata, idata, nodes[t], W)


@njit(cache=True)
def jacobian_add(
    fdata: np.ndarray,
    idata: np.ndarray,
    W: np.ndarray,
    node: int,
    p: np.ndarray,
    J: np.ndarray,
) -> None:
    """Add the 6 x dof geometric Jacobian of point ``p`` (world) fixed to ``node`` into ``J``.

    Rows are linear then angular velocity in the world frame. Revolute column
    ``[a x (p - r); a]``, prismatic ``[a; 0]``; mimic joints add ``mul`` times theirs.
    """
    k = node
    while k >= 0:
        jt = idata[k, 1]
        qi = idata[k, 2]
        if jt != FIXED and qi >= 0:
            fd = fdata[k]
            Wk = W[k]
            mul = fd[15]
            ax = Wk[0, 0] * fd[12] + Wk[0, 1] * fd[13] + Wk[0, 2] * fd[14]
            ay = Wk[1, 0] * fd[12] + Wk[1, 1] * fd[13] + Wk[1, 2] * fd[14]
            az = Wk[2, 0] * fd[12] + Wk[2, 1] * fd[13] + Wk[2, 2] * fd[14]
            if jt == REVOLUTE:
                dx = p[0] - Wk[0, 3]
                dy = p[1] - Wk[1, 3]
                dz = p[2] - Wk[2, 3]
                J[0, qi] += mul * (ay * dz - az * dy)
                J[1, qi] += mul * (az * dx - ax * dz)
                J[2, qi] += mul * (ax * dy - ay * dx)
                J[3, qi] += mul * ax
                J[4, qi] += mul * ay
                J[5, qi] += mul * az
            else:
                J[0, qi] += mul * ax
                J[1, qi] += mul * ay
                J[2, qi] += mul * az
        k = idata[k, 0]


@njit(cache=True, inline="always")
def to_homogeneous(W: np.ndarray, out: np.ndarray) -> None:
    """Copy a 3x4 block into a 4x4 homogeneous matrix."""
    for r in range(3):
        for c in range(4):
            out[r, c] = W[r, c]
    out[3, 0] = 0.0
    out[3, 1] = 0.0
    out[3, 2] = 0.0
    out[3, 3] = 1.0


@njit(cache=True, parallel=True)
def fk_batch(
    Q: np.ndarray, fdata: np.ndarray, idata: np.ndarray, nodes: np.ndarray, frames: np.ndarray
) -> np.ndarray:
    """World poses ``(N, F, 4, 4)`` of ``frames`` for each row of ``Q`` ``(N, dof)``."""
    N = Q.shape[0]
    F = frames.shape[0]
    n = fdata.shape[0]
    out = np.empty((N, F, 4, 4))
    for b in prange(N):
        W = np.empty((n, 3, 4))
        fk_nodes(Q[b], fdata, idata, nodes, W)
        for f in range(F):
            to_homogeneous(W[frames[f]], out[b, f])
    return out


@njit(cache=True, parallel=True)
def jacobian_batch(
    Q: np.ndarray,
    fdata: np.ndarray,
    idata: np.ndarray,
    nodes: np.ndarray,
    frame: int,
    offset: np.ndarray,
) -> np.ndarray:
    """Geometric Jacobians ``(N, 6, dof)`` of the point ``offset`` (frame coords) on ``frame``."""
    N = Q.shape[0]
    dof = Q.shape[1]
    n = fdata.shape[0]
    out = np.zeros((N, 6, dof))
    for b in prange(N):
        W = np.empty((n, 3, 4))
        fk_nodes(Q[b], fdata, idata, nodes, W)
        Wf = W[frame]
        p = np.empty(3)
        for r in range(3):
            p[r] = Wf[r, 0] * offset[0] + Wf[r, 1] * offset[1] + Wf[r, 2] * offset[2] + Wf[r, 3]
        jacobian_add(fdata, idata, W, frame, p, out[b])
    return out
