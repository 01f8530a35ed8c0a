"""What the solver measures: task errors, the stacked Jacobian, badness.

Targets arrive as rows laid out in :mod:`kinetree.ik.kernel.layout` (``T_*`` slots), loaded and
checked by :mod:`._target_rows`. Every function here is allocation-free, so it compiles
for a CPU or a GPU thread alike. The clock and the random generator live in
:mod:`._clock` and :mod:`._random`; their names stay importable from here for the loop.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..._compile import inline_hot
from ...kinematics._kernels import jacobian_add
from ...spatial._kernels import log3
from ._clock import monotonic as monotonic
from ._random import rand01 as rand01
from ._target_rows import check_raw_pose as check_raw_pose
from ._target_rows import check_targets as check_targets
from ._target_rows import load_targets as load_targets
from ._target_rows import nearest_rotation as nearest_rotation
from .layout import (
    KIND_DIRECTION,
    KIND_FRAME,
    T_POINT,
    T_POS,
    T_ROT,
    T_W_POS,
    T_W_ROT,
    TI_KIND,
    TI_NODE,
)


@njit(cache=True, inline=inline_hot)
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


@njit(cache=True, inline=inline_hot)
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


@njit(cache=True, inline=inline_hot)
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


@njit(cache=True, inline=inline_hot)
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
