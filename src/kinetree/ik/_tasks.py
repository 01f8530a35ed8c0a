"""What the solver measures: target checks, task errors, the stacked Jacobian, badness.

Targets arrive as rows laid out in :mod:`kinetree.ik.layout` (``T_*`` slots). Every
function here is allocation-free, so it compiles for a CPU or a GPU thread alike.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, types

from ..kinematics._kernels import jacobian_add
from ..spatial._kernels import log3
from .layout import (
    KIND_DIRECTION,
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
    TI_NODE,
)

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


@njit(cache=True)
def rand01(state: np.ndarray) -> float:
    """splitmix64 uniform in [0, 1); ``state`` is a one-element uint64 array."""
    state[0] += np.uint64(0x9E3779B97F4A7C15)
    z = state[0]
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return float(z >> np.uint64(11)) * (1.0 / 9007199254740992.0)


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


@njit(cache=True)
def target_point(W: np.ndarray, node: int, tf: np.ndarray, p: np.ndarray) -> None:
    """World position of the target's point (frame origin + offset ``tf[T_POINT:T_POINT + 3]``)."""
    Wn = W[node]
    for r in range(3):
        p[r] = (
            Wn[r, 0] * tf[T_POINT]
            + Wn[r, 1] * tf[T_POINT + 1]
            + Wn[r, 2] * tf[T_POINT + 2]
            + Wn[r, 3]
        )


@njit(cache=True)
def task_errors(
    W: np.ndarray,
    tgt_i: np.ndarray,
    tgt_f: np.ndarray,
    err6: np.ndarray,
    errs: np.ndarray,
    dirs: np.ndarray,
    p: np.ndarray,
    M: np.ndarray,
    w: np.ndarray,
) -> None:
    """Per target: error ``err6[t] = (p* - p, rotation error)`` and norms ``errs[t] = (|dp|, |dr|)``
    over the weighted (unmasked) components. ``dirs[t]`` keeps a direction target's axis.
    ``p`` (3), ``M`` (3x3) and ``w`` (3) are scratch space."""
    for t in range(tgt_i.shape[0]):
        node = tgt_i[t, TI_NODE]
        tf = tgt_f[t]
        Wn = W[node]
        if tgt_i[t, TI_KIND] == KIND_FRAME:
            target_point(W, node, tf, p)
            for r in range(3):
                err6[t, r] = tf[T_POS + r] - p[r]
            if tf[T_W_ROT] + tf[T_W_ROT + 1] + tf[T_W_ROT + 2] > 0.0:
                for i in range(3):
                    for j in range(3):
                        M[i, j] = (
                            tf[T_ROT + 3 * i] * Wn[j, 0]
                            + tf[T_ROT + 1 + 3 * i] * Wn[j, 1]
                            + tf[T_ROT + 2 + 3 * i] * Wn[j, 2]
                        )
                log3(M, w)
                for r in range(3):
                    err6[t, 3 + r] = w[r]
            else:
                for r in range(3):
                    err6[t, 3 + r] = 0.0
            sp = 0.0
            sr = 0.0
            for r in range(3):
                if tf[T_W_POS + r] > 0.0:
                    sp += err6[t, r] * err6[t, r]
                if tf[T_W_ROT + r] > 0.0:
                    sr += err6[t, 3 + r] * err6[t, 3 + r]
            errs[t, 0] = math.sqrt(sp)
            errs[t, 1] = math.sqrt(sr)
        else:
            # Direction: rotate the frame's axis a onto the world direction d.
            for r in range(3):
                p[r] = (
                    Wn[r, 0] * tf[T_POINT] + Wn[r, 1] * tf[T_POINT + 1] + Wn[r, 2] * tf[T_POINT + 2]
                )
                dirs[t, r] = p[r]
            d0, d1, d2 = tf[T_POS], tf[T_POS + 1], tf[T_POS + 2]
            cx = p[1] * d2 - p[2] * d1
            cy = p[2] * d0 - p[0] * d2
            cz = p[0] * d1 - p[1] * d0
            s = math.sqrt(cx * cx + cy * cy + cz * cz)
            c = p[0] * d0 + p[1] * d1 + p[2] * d2
            ang = math.atan2(s, c)
            for r in range(3):
                err6[t, r] = 0.0
            if s > 1e-12:
                err6[t, 3] = cx / s * ang
                err6[t, 4] = cy / s * ang
                err6[t, 5] = cz / s * ang
            elif c < 0.0:
                # Antiparallel: any axis perpendicular to a works; take the most stable one.
                k = 0
                if abs(p[1]) < abs(p[k]):
                    k = 1
                if abs(p[2]) < abs(p[k]):
                    k = 2
                e0 = 1.0 if k == 0 else 0.0
                e1 = 1.0 if k == 1 else 0.0
                e2 = 1.0 if k == 2 else 0.0
                ux = p[1] * e2 - p[2] * e1
                uy = p[2] * e0 - p[0] * e2
                uz = p[0] * e1 - p[1] * e0
                un = math.sqrt(ux * ux + uy * uy + uz * uz)
                err6[t, 3] = ux / un * math.pi
                err6[t, 4] = uy / un * math.pi
                err6[t, 5] = uz / un * math.pi
            else:
                err6[t, 3] = 0.0
                err6[t, 4] = 0.0
                err6[t, 5] = 0.0
            errs[t, 0] = 0.0
            errs[t, 1] = ang if tf[T_W_ROT] > 0.0 else 0.0


@njit(cache=True)
def assemble(
    fdata: np.ndarray,
    idata: np.ndarray,
    W: np.ndarray,
    tgt_i: np.ndarray,
    tgt_f: np.ndarray,
    rows: np.ndarray,
    err6: np.ndarray,
    dirs: np.ndarray,
    act: np.ndarray,
    J6: np.ndarray,
    J: np.ndarray,
    e: np.ndarray,
    p: np.ndarray,
    inv_length: float,
) -> None:
    """Weighted stacked error ``e`` (m) and Jacobian ``J`` (m x n_active) of all targets.

    ``rows[r] = (target, component)``; the weight of a row is ``tgt_f[t, T_W_POS + c]``,
    times ``inv_length`` for a position row: errors in the model's length unit are
    weighed in units of its length scale (``Model.length_scale``; 1 for a model in
    metres), so that a step does not depend on the unit a file was written in.
    """
    m = rows.shape[0]
    na = act.shape[0]
    t_prev = -1
    for r in range(m):
        t = rows[r, 0]
        c = rows[r, 1]
        if t != t_prev:
            t_prev = t
            node = tgt_i[t, TI_NODE]
            J6[:, :] = 0.0
            target_point(W, node, tgt_f[t], p)
            jacobian_add(fdata, idata, W, node, p, J6)
            if tgt_i[t, TI_KIND] == KIND_DIRECTION:
                # Only rotation perpendicular to the axis moves it: rows (I - a a^T) J_w.
                ax, ay, az = dirs[t, 0], dirs[t, 1], dirs[t, 2]
                for k in range(J6.shape[1]):
                    d = ax * J6[3, k] + ay * J6[4, k] + az * J6[5, k]
                    J6[3, k] -= ax * d
                    J6[4, k] -= ay * d
                    J6[5, k] -= az * d
        w = tgt_f[t, T_W_POS + c]
        if c < 3:
            w *= inv_length
        e[r] = w * err6[t, c]
        for k in range(na):
            J[r, k] = w * J6[c, act[k]]


@njit(cache=True, inline="always")
def scale_columns(J: np.ndarray, unit: np.ndarray, act_q: np.ndarray) -> None:
    """Each active coordinate's Jacobian column times its unit (``Config.unit``): the
    step is then solved for ``dq / unit``, so that a prismatic joint's length counts in
    the model's length scale against the angles, whatever unit the model is written in.
    :func:`to_coordinates` turns such a step back."""
    for kk in range(act_q.shape[0]):
        k = act_q[kk]
        if k >= 0 and unit[k] != 1.0:
            u = unit[k]
            for r in range(J.shape[0]):
                J[r, kk] *= u


@njit(cache=True, inline="always")
def to_coordinates(dq: np.ndarray, unit: np.ndarray, act_q: np.ndarray) -> None:
    """A step solved over :func:`scale_columns`' columns, in coordinate units."""
    for kk in range(act_q.shape[0]):
        k = act_q[kk]
        if k >= 0:
            dq[kk] *= unit[k]


@njit(cache=True)
def badness(errs: np.ndarray, tol_p: float, tol_r: float) -> float:
    """Max over targets of error / tolerance (<= 1 means solved); a NaN error is inf,
    so it is never solved."""
    b = 0.0
    for t in range(errs.shape[0]):
        vp = errs[t, 0] / tol_p
        vr = errs[t, 1] / tol_r
        if vp != vp or vr != vr:
            return np.inf
        b = max(b, vp, vr)
    return b
