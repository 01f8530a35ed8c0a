"""Compiled forward kinematics and Jacobians over a model's packed arrays.

The arrays ``fdata`` and ``idata`` and the names of their columns are described in
:mod:`kinetree.kinematics.layout`. World transforms are kept as ``(n, 3, 4)`` blocks;
the last row is implicit. Batch kernels work on a range ``[start, stop)`` of the batch
and release the GIL, so :func:`kinetree._threads.run_chunks` spreads them over cores.

The kernels the IK loop calls every iteration (:func:`node_transform`, :func:`fk_nodes`,
:func:`jacobian_add`) allocate nothing and are compiled without numba's reference
counting (``_nrt=False``): numba compiles a function once per signature, with the flags
of whichever caller compiles it first, so an allocating caller here (``fk_rows``) would
otherwise leave atomic reference counts inside every IK driver's forward kinematics
(seen in the drivers' LLVM IR: 36 ``NRT_incref``/``NRT_decref`` calls in these two).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, TypeVar, cast

import numpy as np
from numba import njit

from .._compile import inline_hot
from ..model import JointType
from .layout import (
    F_AXIS,
    F_MIMIC_OFFSET,
    F_MIMIC_SCALE,
    I_AXIS_CODE,
    I_PARENT,
    I_Q_INDEX,
    I_TYPE,
    I_V_INDEX,
)

_F = TypeVar("_F", bound=Callable[..., Any])
_NO_REFCOUNT: dict[str, Any] = {"cache": True, "_nrt": False}


def no_refcount(fn: _F) -> _F:
    """``njit(cache=True)`` without numba's reference counting (see the module doc), for
    a kernel that allocates nothing (numba refuses to compile one that does)."""
    return cast(_F, njit(**_NO_REFCOUNT)(fn))


def inlined(fn: _F) -> _F:
    """:func:`no_refcount`, and inlined into the IK drivers whose speed is measured
    (:func:`kinetree._compile.inline_hot`; such a caller compiles it with its own flags):
    for the small kernels each IK iteration runs, where a call would pass every array
    argument as a dozen words (``docs/design.md``, the loop)."""
    return cast(_F, njit(inline=inline_hot, **_NO_REFCOUNT)(fn))


FIXED = int(JointType.FIXED)
REVOLUTE = int(JointType.REVOLUTE)
PRISMATIC = int(JointType.PRISMATIC)
BALL = int(JointType.BALL)


@njit(cache=True, inline="always")
def quat_rotation(
    w: float, x: float, y: float, z: float
) -> tuple[float, float, float, float, float, float, float, float, float]:
    """Row-major entries of the rotation of the quaternion ``(w, x, y, z)``, normalised
    on the way (no square root: the products are divided by the squared norm). A zero
    quaternion is the identity (as in MuJoCo); NaN stays NaN. A squared norm that would
    overflow (entries of 1e300) or underflow is taken after dividing by the largest entry."""
    n2 = w * w + x * x + y * y + z * z
    if not 1e-300 <= n2 <= 1e300 and n2 == n2:
        m = max(abs(w), abs(x), abs(y), abs(z))
        if m == 0.0:
            return 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0
        w, x, y, z = w / m, x / m, y / m, z / m
        n2 = w * w + x * x + y * y + z * z
    s = 2.0 / n2
    return (
        1.0 - s * (y * y + z * z),
        s * (x * y - w * z),
        s * (x * z + w * y),
        s * (x * y + w * z),
        1.0 - s * (x * x + z * z),
        s * (y * z - w * x),
        s * (x * z - w * y),
        s * (y * z + w * x),
        1.0 - s * (x * x + y * y),
    )


@inlined
def node_transform(
    q: np.ndarray, fdata: np.ndarray, idata: np.ndarray, i: int, W: np.ndarray
) -> None:
    """Write the world transform of node ``i`` into ``W[i]``; its parent must be done.

    Written with scalar indexing only (no array views) because this is the
    innermost loop of every solver.
    """
    p = idata[i, I_PARENT]
    jt = idata[i, I_TYPE]
    if p < 0:
        for r in range(3):
            for col in range(4):
                W[i, r, col] = fdata[i, 4 * r + col]
    else:
        o00, o01, o02, o03 = fdata[i, 0], fdata[i, 1], fdata[i, 2], fdata[i, 3]
        o10, o11, o12, o13 = fdata[i, 4], fdata[i, 5], fdata[i, 6], fdata[i, 7]
        o20, o21, o22, o23 = fdata[i, 8], fdata[i, 9], fdata[i, 10], fdata[i, 11]
        for r in range(3):
            a0 = W[p, r, 0]
            a1 = W[p, r, 1]
            a2 = W[p, r, 2]
            W[i, r, 0] = a0 * o00 + a1 * o10 + a2 * o20
            W[i, r, 1] = a0 * o01 + a1 * o11 + a2 * o21
            W[i, r, 2] = a0 * o02 + a1 * o12 + a2 * o22
            W[i, r, 3] = a0 * o03 + a1 * o13 + a2 * o23 + W[p, r, 3]
    if jt == REVOLUTE:
        qi = idata[i, I_Q_INDEX]
        off = fdata[i, F_MIMIC_OFFSET]
        th = off if qi < 0 else fdata[i, F_MIMIC_SCALE] * q[qi] + off
        code = idata[i, I_AXIS_CODE]
        c = math.cos(th)
        s = math.sin(th)
        if code != 0:
            if code < 0:
                s = -s
            ax = abs(code) - 1
            # Columns j, k span the plane of rotation about axis ``ax`` (right-handed).
            j = 1 if ax == 0 else (2 if ax == 1 else 0)
            k = 2 if ax == 0 else (0 if ax == 1 else 1)
            for r in range(3):
                cj = W[i, r, j]
                ck = W[i, r, k]
                W[i, r, j] = c * cj + s * ck
                W[i, r, k] = c * ck - s * cj
        else:
            x, y, z = fdata[i, F_AXIS], fdata[i, F_AXIS + 1], fdata[i, F_AXIS + 2]
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
                m0 = W[i, r, 0]
                m1 = W[i, r, 1]
                m2 = W[i, r, 2]
                W[i, r, 0] = m0 * R00 + m1 * R10 + m2 * R20
                W[i, r, 1] = m0 * R01 + m1 * R11 + m2 * R21
                W[i, r, 2] = m0 * R02 + m1 * R12 + m2 * R22
    elif jt == BALL:
        qi = idata[i, I_Q_INDEX]
        if qi >= 0:
            R00, R01, R02, R10, R11, R12, R20, R21, R22 = quat_rotation(
                q[qi], q[qi + 1], q[qi + 2], q[qi + 3]
            )
            for r in range(3):
                m0 = W[i, r, 0]
                m1 = W[i, r, 1]
                m2 = W[i, r, 2]
                W[i, r, 0] = m0 * R00 + m1 * R10 + m2 * R20
                W[i, r, 1] = m0 * R01 + m1 * R11 + m2 * R21
                W[i, r, 2] = m0 * R02 + m1 * R12 + m2 * R22
    elif jt == PRISMATIC:
        qi = idata[i, I_Q_INDEX]
        off = fdata[i, F_MIMIC_OFFSET]
        d = off if qi < 0 else fdata[i, F_MIMIC_SCALE] * q[qi] + off
        x, y, z = fdata[i, F_AXIS], fdata[i, F_AXIS + 1], fdata[i, F_AXIS + 2]
        for r in range(3):
            W[i, r, 3] += d * (W[i, r, 0] * x + W[i, r, 1] * y + W[i, r, 2] * z)


@inlined
def fk_nodes(
    q: np.ndarray, fdata: np.ndarray, idata: np.ndarray, nodes: np.ndarray, W: np.ndarray
) -> None:
    """World transforms of ``nodes`` (topologically sorted, ancestors included) into ``W``."""
    for t in range(nodes.shape[0]):
        node_transform(q, fdata, idata, nodes[t], W)


@inlined
def jacobian_add(
    fdata: np.ndarray,
    idata: np.ndarray,
    W: np.ndarray,
    node: int,
    p: np.ndarray,
    J: np.ndarray,
) -> None:
    """Add the 6 x nv geometric Jacobian of point ``p`` (world) fixed to ``node`` into ``J``.

    Rows are linear then angular velocity in the world frame. Revolute column
    ``[a x (p - r); a]``, prismatic ``[a; 0]``; mimic joints add ``mul`` times theirs.
    A ball node has three revolute-like columns, about its own frame's x, y, z axes
    (its motion is the angular velocity in its frame).
    """
    px, py, pz = p[0], p[1], p[2]
    k = node
    while k >= 0:
        jt = idata[k, I_TYPE]
        qi = idata[k, I_V_INDEX]
        if jt == BALL and qi >= 0:
            dx = px - W[k, 0, 3]
            dy = py - W[k, 1, 3]
            dz = pz - W[k, 2, 3]
            for c in range(3):
                ax = W[k, 0, c]
                ay = W[k, 1, c]
                az = W[k, 2, c]
                J[0, qi + c] += ay * dz - az * dy
                J[1, qi + c] += az * dx - ax * dz
                J[2, qi + c] += ax * dy - ay * dx
                J[3, qi + c] += ax
                J[4, qi + c] += ay
                J[5, qi + c] += az
        elif jt != FIXED and qi >= 0:
            mul = fdata[k, F_MIMIC_SCALE]
            x, y, z = fdata[k, F_AXIS], fdata[k, F_AXIS + 1], fdata[k, F_AXIS + 2]
            ax = W[k, 0, 0] * x + W[k, 0, 1] * y + W[k, 0, 2] * z
            ay = W[k, 1, 0] * x + W[k, 1, 1] * y + W[k, 1, 2] * z
            az = W[k, 2, 0] * x + W[k, 2, 1] * y + W[k, 2, 2] * z
            if jt == REVOLUTE:
                dx = px - W[k, 0, 3]
                dy = py - W[k, 1, 3]
                dz = pz - W[k, 2, 3]
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
        k = idata[k, I_PARENT]


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


@njit(cache=True, nogil=True)
def fk_rows(
    Q: np.ndarray,
    fdata: np.ndarray,
    idata: np.ndarray,
    nodes: np.ndarray,
    frames: np.ndarray,
    out: np.ndarray,
    start: int,
    stop: int,
) -> None:
    """World poses ``out[b]`` (F, 4, 4) of ``frames`` for rows ``start..stop`` of ``Q``
    ``(N, nq)``, one row at a time (small batches; large ones use :func:`fk_blocked`)."""
    F = frames.shape[0]
    W = np.empty((fdata.shape[0], 3, 4))
    for b in range(start, stop):
        fk_nodes(Q[b], fdata, idata, nodes, W)
        for f in range(F):
            to_homogeneous(W[frames[f]], out[b, f])


@njit(cache=True)
def jacobian_row(
    q: np.ndarray,
    fdata: np.ndarray,
    idata: np.ndarray,
    nodes: np.ndarray,
    frame: int,
    offset: np.ndarray,
    W: np.ndarray,
    J: np.ndarray,
) -> None:
    """Geometric Jacobian (6, nv) of the point ``offset`` (frame coords) on ``frame``."""
    fk_nodes(q, fdata, idata, nodes, W)
    p = np.empty(3)
    for r in range(3):
        p[r] = (W[frame, r, 0] * offset[0] + W[frame, r, 1] * offset[1]
                + W[frame, r, 2] * offset[2] + W[frame, r, 3])  # fmt: skip
    jacobian_add(fdata, idata, W, frame, p, J)


@njit(cache=True, nogil=True)
def jacobian_rows(
    Q: np.ndarray,
    fdata: np.ndarray,
    idata: np.ndarray,
    nodes: np.ndarray,
    frame: int,
    offset: np.ndarray,
    out: np.ndarray,
    start: int,
    stop: int,
) -> None:
    """Geometric Jacobians ``out[b]`` (6, nv) for rows ``start..stop`` of ``Q``;
    ``out`` must be zeroed."""
    W = np.empty((fdata.shape[0], 3, 4))
    for b in range(start, stop):
        jacobian_row(Q[b], fdata, idata, nodes, frame, offset, W, out[b])


BLOCK = 32  # configurations per block in the vectorised batch FK


@njit(cache=True, nogil=True)
def fk_blocked(
    Q: np.ndarray,
    fdata: np.ndarray,
    idata: np.ndarray,
    nodes: np.ndarray,
    frames: np.ndarray,
    out: np.ndarray,
    start: int,
    stop: int,
) -> None:
    """:func:`fk_rows` for large batches, vectorised across configurations; ``start``
    must be a multiple of the block size.

    The same recurrence as :func:`node_transform`, laid out structure-of-arrays:
    blocks of 32 configurations, each matrix entry a contiguous run over the block, so
    the compiler emits SIMD code for the products (2.4x fewer CPU cycles than one
    configuration at a time). Tests check it against :func:`fk_rows` to the last bit.
    """
    n = fdata.shape[0]
    F = frames.shape[0]
    W = np.empty((n, 12, BLOCK))
    cs = np.empty(BLOCK)
    sn = np.empty(BLOCK)
    for b0 in range(start, stop, BLOCK):
        nb = min(BLOCK, stop - b0)
        for t in range(nodes.shape[0]):
            i = nodes[t]
            p = idata[i, I_PARENT]
            jt = idata[i, I_TYPE]
            if p < 0:
                for e in range(12):
                    v = fdata[i, e]
                    for b in range(nb):
                        W[i, e, b] = v
            else:
                for r in range(3):
                    for col in range(4):
                        x0 = fdata[i, col]
                        x1 = fdata[i, 4 + col]
                        x2 = fdata[i, 8 + col]
                        add = 1.0 if col == 3 else 0.0
                        for b in range(nb):
                            W[i, 4 * r + col, b] = (
                                W[p, 4 * r, b] * x0
                                + W[p, 4 * r + 1, b] * x1
                                + W[p, 4 * r + 2, b] * x2
                                + add * W[p, 4 * r + 3, b]
                            )
            if jt == FIXED:
                continue
            qi = idata[i, I_Q_INDEX]
            mul = fdata[i, F_MIMIC_SCALE]
            off = fdata[i, F_MIMIC_OFFSET]
            ax, ay, az = fdata[i, F_AXIS], fdata[i, F_AXIS + 1], fdata[i, F_AXIS + 2]
            if jt == BALL:
                if qi < 0:
                    continue
                for b in range(nb):
                    R00, R01, R02, R10, R11, R12, R20, R21, R22 = quat_rotation(
                        Q[b0 + b, qi], Q[b0 + b, qi + 1], Q[b0 + b, qi + 2], Q[b0 + b, qi + 3]
                    )
                    for r in range(3):
                        m0 = W[i, 4 * r, b]
                        m1 = W[i, 4 * r + 1, b]
                        m2 = W[i, 4 * r + 2, b]
                        W[i, 4 * r, b] = m0 * R00 + m1 * R10 + m2 * R20
                        W[i, 4 * r + 1, b] = m0 * R01 + m1 * R11 + m2 * R21
                        W[i, 4 * r + 2, b] = m0 * R02 + m1 * R12 + m2 * R22
                continue
            if jt == PRISMATIC:
                for b in range(nb):
                    d = off if qi < 0 else mul * Q[b0 + b, qi] + off
                    for r in range(3):
                        W[i, 4 * r + 3, b] += d * (
                            W[i, 4 * r, b] * ax + W[i, 4 * r + 1, b] * ay + W[i, 4 * r + 2, b] * az
                        )
                continue
            for b in range(nb):
                th = off if qi < 0 else mul * Q[b0 + b, qi] + off
                cs[b] = math.cos(th)
                sn[b] = math.sin(th)
            code = idata[i, I_AXIS_CODE]
            if code != 0:
                sg = 1.0
                if code < 0:
                    sg = -1.0
                    code = -code
                j = 1 if code == 1 else (2 if code == 2 else 0)
                k = 2 if code == 1 else (0 if code == 2 else 1)
                for r in range(3):
                    for b in range(nb):
                        cj = W[i, 4 * r + j, b]
                        ck = W[i, 4 * r + k, b]
                        c = cs[b]
                        s = sg * sn[b]
                        W[i, 4 * r + j, b] = c * cj + s * ck
                        W[i, 4 * r + k, b] = c * ck - s * cj
            else:
                for b in range(nb):
                    c = cs[b]
                    s = sn[b]
                    t1 = 1.0 - c
                    R00 = c + ax * ax * t1
                    R01 = ax * ay * t1 - az * s
                    R02 = ax * az * t1 + ay * s
                    R10 = ay * ax * t1 + az * s
                    R11 = c + ay * ay * t1
                    R12 = ay * az * t1 - ax * s
                    R20 = az * ax * t1 - ay * s
                    R21 = az * ay * t1 + ax * s
                    R22 = c + az * az * t1
                    for r in range(3):
                        m0 = W[i, 4 * r, b]
                        m1 = W[i, 4 * r + 1, b]
                        m2 = W[i, 4 * r + 2, b]
                        W[i, 4 * r, b] = m0 * R00 + m1 * R10 + m2 * R20
                        W[i, 4 * r + 1, b] = m0 * R01 + m1 * R11 + m2 * R21
                        W[i, 4 * r + 2, b] = m0 * R02 + m1 * R12 + m2 * R22
        for b in range(nb):
            for f in range(F):
                k = frames[f]
                for r in range(3):
                    for col in range(4):
                        out[b0 + b, f, r, col] = W[k, 4 * r + col, b]
                out[b0 + b, f, 3, 0] = 0.0
                out[b0 + b, f, 3, 1] = 0.0
                out[b0 + b, f, 3, 2] = 0.0
                out[b0 + b, f, 3, 3] = 1.0


# The blocked layout and threads pay off only for large batches.
PARALLEL_MIN = 256
