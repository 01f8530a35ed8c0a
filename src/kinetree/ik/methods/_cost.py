"""The smooth cost of the scipy methods and a plain error evaluation, compiled.

Targets are rows laid out in :mod:`kinetree.ik.kernel.layout`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ...kinematics._kernels import fk_nodes, jacobian_add
from ..kernel import target_point, task_errors
from ..kernel.layout import KIND_FRAME, T_POINT, T_POS, T_ROT, T_W_POS, T_W_ROT, TI_KIND, TI_NODE


@njit(cache=True)
def evaluate(
    fdata: np.ndarray,
    idata: np.ndarray,
    nodes: np.ndarray,
    tgt_i: np.ndarray,
    tgt_f: np.ndarray,
    q: np.ndarray,
) -> np.ndarray:
    """Per-target ``(position error [m], orientation error [rad])`` at ``q``, shape (T, 2)."""
    T = tgt_i.shape[0]
    W = np.empty((fdata.shape[0], 3, 4))
    fk_nodes(q, fdata, idata, nodes, W)
    err6 = np.empty((T, 6))
    errs = np.empty((T, 2))
    dirs = np.empty((T, 3))
    task_errors(W, tgt_i, tgt_f, err6, errs, dirs, np.empty(3), np.empty((3, 3)), np.empty(3))
    return errs


@njit(cache=True)
def cost_grad(
    qa: np.ndarray,
    q_full: np.ndarray,
    act: np.ndarray,
    fdata: np.ndarray,
    idata: np.ndarray,
    nodes: np.ndarray,
    tgt_i: np.ndarray,
    tgt_f: np.ndarray,
    rest: np.ndarray,
    rest_w: float,
) -> tuple[float, np.ndarray]:
    """Smooth cost and its exact gradient over the active DoF ``qa``.

    ``f = 1/2 sum_t [ sum_i w_pi^2 (p*_i - p_i)^2 + sum_j w_r^2 |R e_j - R* e_j|^2 / 2 ]
    + rest_w/2 |q - rest|^2``; the orientation term ``|R - R*|_F^2 / 2 = 3 - tr(R*^T R)``
    is ``2 (1 - cos angle)``, smooth everywhere, unlike the axis-angle norm.
    """
    dof = q_full.shape[0]
    q = q_full.copy()
    na = act.shape[0]
    for k in range(na):
        q[act[k]] = qa[k]
    n = fdata.shape[0]
    W = np.empty((n, 3, 4))
    fk_nodes(q, fdata, idata, nodes, W)
    J6 = np.empty((6, dof))
    g_full = np.zeros(dof)
    p = np.empty(3)
    f = 0.0
    for t in range(tgt_i.shape[0]):
        node = tgt_i[t, TI_NODE]
        tf = tgt_f[t]
        Wn = W[node]
        J6[:, :] = 0.0
        target_point(W, node, tf, p)
        jacobian_add(fdata, idata, W, node, p, J6)
        if tgt_i[t, TI_KIND] == KIND_FRAME:
            # position: f += 1/2 w^2 d^2, df/dq = -w^2 d . J_v
            for r in range(3):
                w2 = tf[T_W_POS + r] * tf[T_W_POS + r]
                if w2 == 0.0:
                    continue
                d = tf[T_POS + r] - p[r]
                f += 0.5 * w2 * d * d
                for k in range(dof):
                    g_full[k] -= w2 * d * J6[r, k]
            wr = (tf[T_W_ROT] + tf[T_W_ROT + 1] + tf[T_W_ROT + 2]) / 3.0
            if wr > 0.0:
                # sum_j 1/2 |u_j - u*_j|^2 with u_j = R e_j; d u_j = omega x u_j.
                # gradient wrt omega: -sum_j u_j x u*_j.
                gx = 0.0
                gy = 0.0
                gz = 0.0
                for j in range(3):
                    ux, uy, uz = Wn[0, j], Wn[1, j], Wn[2, j]
                    vx, vy, vz = tf[T_ROT + j], tf[T_ROT + 3 + j], tf[T_ROT + 6 + j]
                    dx, dy, dz = ux - vx, uy - vy, uz - vz
                    f += 0.25 * wr * wr * (dx * dx + dy * dy + dz * dz)
                    gx -= uy * vz - uz * vy
                    gy -= uz * vx - ux * vz
                    gz -= ux * vy - uy * vx
                s = 0.5 * wr * wr
                for k in range(dof):
                    g_full[k] += s * (gx * J6[3, k] + gy * J6[4, k] + gz * J6[5, k])
        else:
            # direction: 1/2 w^2 |a - d|^2 with a = R axis; gradient wrt omega: -a x d.
            w2 = tf[T_W_ROT] * tf[T_W_ROT]
            l0, l1, l2 = tf[T_POINT], tf[T_POINT + 1], tf[T_POINT + 2]
            d0, d1, d2 = tf[T_POS], tf[T_POS + 1], tf[T_POS + 2]
            ax = Wn[0, 0] * l0 + Wn[0, 1] * l1 + Wn[0, 2] * l2
            ay = Wn[1, 0] * l0 + Wn[1, 1] * l1 + Wn[1, 2] * l2
            az = Wn[2, 0] * l0 + Wn[2, 1] * l1 + Wn[2, 2] * l2
            dx, dy, dz = ax - d0, ay - d1, az - d2
            f += 0.5 * w2 * (dx * dx + dy * dy + dz * dz)
            gx = -(ay * d2 - az * d1)
            gy = -(az * d0 - ax * d2)
            gz = -(ax * d1 - ay * d0)
            for k in range(dof):
                g_full[k] += w2 * (gx * J6[3, k] + gy * J6[4, k] + gz * J6[5, k])
    g = np.empty(na)
    for k in range(na):
        i = act[k]
        dr = q[i] - rest[i]
        f += 0.5 * rest_w * dr * dr
        g[k] = g_full[i] + rest_w * dr
    return f, g
