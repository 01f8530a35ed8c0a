"""Step rules: how one iteration moves ``q``, given the errors at the current ``q``.

Long because the rules, their linear solves and the update that wraps them sit together:
each driver binds one rule into :func:`jacobian_update` (``_drivers``), and a reader
follows a step from the assembled system to the integrated ``q`` in one file.

A Jacobian method is a *rule* ``step_x(cf, w, rows)`` that turns the weighted stacked
system ``w.J dq = w.e`` into a step ``w.dq`` over the active DoF (it may pin joints at
their limits, :func:`step_dls`). :func:`jacobian_update` wraps any rule with what all
of them share: assembling the system, seed 001's normalised task step, the null-space
pull toward the rest pose, the joint-step cap and the integration within limits. CCD
is an update of its own (:func:`ccd_update`); both have the signature the loop calls,
``update(cf, w, ck, cw, fdata, idata, nodes, tgt_i, rows, pull) -> bool`` (``ck``, ``cw``:
the collision block and its scratch, which only :mod:`._collide`'s update reads;
``pull``: the gain of this iteration's pull toward the rest pose, 0 for none, decided by
the loop).

Adding a step rule: write ``step_x(cf, w, rows)`` that fills ``w.dq[:na]`` (scratch in
``w.A`` and ``w.y``), and name it in ``_drivers.RULES`` and ``options.KERNEL_METHODS``.
Each method's driver is compiled with only its own rule.

Functions that take the ``Config`` and ``Work`` tuples are inlined into the loop:
called, each would pass a few hundred scalars (measured: 2x slower solves).

``dls`` and ``transpose`` are allocation-free (GPU-ready); ``pinv`` and ``sdls`` call
an SVD, and large systems (more than eight rows and columns) use BLAS products.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit

from ..._hints import rolled
from ...kinematics._kernels import BALL, REVOLUTE, fk_nodes, no_refcount
from ...kinematics.layout import (
    F_AXIS,
    F_BALL_LIMIT,
    F_MIMIC_SCALE,
    I_PARENT,
    I_Q_INDEX,
    I_TYPE,
    I_V_INDEX,
)
from ._linalg import damped_solve, dls_solve, downdate_gram, keeps_gram
from ._manifold import clamp_angle, log_between, quat_step
from ._tasks import assemble, scale_columns, target_point, to_coordinates
from .layout import (
    BA_KK,
    BA_NODE,
    BA_Q,
    KIND_FRAME,
    T_POINT,
    T_POS,
    T_ROT,
    T_W_POS,
    T_W_ROT,
    TI_KIND,
    TI_NODE,
    Config,
    Work,
)

# --- linear solves of the rules -----------------------------------------------------------------


@njit(cache=True)
def pinv_solve(
    J: np.ndarray,
    e: np.ndarray,
    cutoff: float,
    form: int,
    dq: np.ndarray,
    A: np.ndarray,
    y: np.ndarray,
    rows: np.ndarray,
    tcols: np.ndarray,
) -> None:
    """Pseudoinverse step: SVD ``V S^-1 U^T e`` with small singular values cut, or the
    normal-equation form ``J^T (J J^T)^-1 e`` of seed 001."""
    m, na = J.shape
    if form == 1:
        if not damped_solve(J, e, 1e-12, dq, A, y, rows, tcols):
            damped_solve(J, e, 1e-6, dq, A, y, rows, tcols)
        return
    U, S, Vt = np.linalg.svd(J, full_matrices=False)
    dq[:] = 0.0
    smax = S[0] if S.shape[0] > 0 else 0.0
    for i in range(S.shape[0]):
        if S[i] <= cutoff * smax or S[i] <= 1e-12:
            continue
        a = 0.0
        for r in range(m):
            a += U[r, i] * e[r]
        a /= S[i]
        for k in range(na):
            dq[k] += a * Vt[i, k]


@no_refcount
def transpose_solve(J: np.ndarray, e: np.ndarray, dq: np.ndarray) -> None:
    """Jacobian transpose with the optimal step: ``alpha = <e, J J^T e> / |J J^T e|^2``."""
    m, na = J.shape
    na = rolled(na)  # loops on a GPU (``_hints.rolled``): its transpose kernel 138 -> 104 registers
    for k in range(na):
        s = 0.0
        for r in range(m):
            s += J[r, k] * e[r]
        dq[k] = s
    num = 0.0
    den = 0.0
    for r in range(m):
        s = 0.0
        for k in range(na):
            s += J[r, k] * dq[k]
        num += e[r] * s
        den += s * s
    a = num / den if den > 1e-300 else 0.0
    for k in range(na):
        dq[k] *= a


@njit(cache=True)
def sdls_solve(
    J: np.ndarray, e: np.ndarray, rows: np.ndarray, cutoff: float, dq: np.ndarray
) -> None:
    """Selectively damped least squares (Buss and Kim, 2005), gamma_max = pi/4.

    End-effector blocks are the position and rotation row groups of each target.
    """
    m, na = J.shape
    gmax = math.pi / 4.0
    U, S, Vt = np.linalg.svd(J, full_matrices=False)
    blk = np.empty(m, np.int64)
    nb = 0
    for r in range(m):
        b = 2 * rows[r, 0] + (1 if rows[r, 1] >= 3 else 0)
        blk[r] = b
        if b + 1 > nb:
            nb = b + 1
    # rho[b, k] = |block b of column k|
    rho = np.zeros((nb, na))
    for r in range(m):
        for k in range(na):
            rho[blk[r], k] += J[r, k] * J[r, k]
    for b in range(nb):
        for k in range(na):
            rho[b, k] = math.sqrt(rho[b, k])
    rsum = np.zeros(na)
    for k in range(na):
        for b in range(nb):
            rsum[k] += rho[b, k]
    dq[:] = 0.0
    smax = S[0] if S.shape[0] > 0 else 0.0
    phi = np.empty(na)
    nrm = np.zeros(nb)
    for i in range(S.shape[0]):
        if S[i] <= cutoff * smax or S[i] <= 1e-12:
            continue
        a = 0.0
        for r in range(m):
            a += U[r, i] * e[r]
        nrm[:] = 0.0
        for r in range(m):
            nrm[blk[r]] += U[r, i] * U[r, i]
        N = 0.0
        for b in range(nb):
            N += math.sqrt(nrm[b])
        Msum = 0.0
        for k in range(na):
            Msum += abs(Vt[i, k]) * rsum[k]
        Msum /= S[i]
        g = gmax * min(1.0, N / Msum) if Msum > 0.0 else gmax
        mx = 0.0
        for k in range(na):
            phi[k] = a / S[i] * Vt[i, k]
            mx = max(mx, abs(phi[k]))
        sc = g / mx if mx > g else 1.0
        for k in range(na):
            dq[k] += sc * phi[k]
    mx = 0.0
    for k in range(na):
        mx = max(mx, abs(dq[k]))
    if mx > gmax:
        for k in range(na):
            dq[k] *= gmax / mx


@no_refcount
def nullspace_rest(
    J: np.ndarray,
    z: np.ndarray,
    out: np.ndarray,
    A: np.ndarray,
    y: np.ndarray,
    Jz: np.ndarray,
    rows: np.ndarray,
    tcols: np.ndarray,
) -> None:
    """``out = (I - J^+ J) z`` with a lightly damped ``J^+`` (secondary task: rest pose)."""
    m, na = J.shape
    for r in range(m):
        s = 0.0
        for k in range(na):
            s += J[r, k] * z[k]
        Jz[r] = s
    if not damped_solve(J, Jz, 1e-9, out, A, y, rows, tcols):
        damped_solve(J, Jz, 1e-4, out, A, y, rows, tcols)
    for k in range(na):
        out[k] = z[k] - out[k]


# --- CCD ---------------------------------------------------------------------------------------


@no_refcount
def is_ancestor(idata: np.ndarray, anc: int, node: int) -> bool:
    k = node
    while k >= 0:
        if k == anc:
            return True
        k = idata[k, I_PARENT]
    return False


@no_refcount
def ccd_sweep(
    q: np.ndarray,
    fdata: np.ndarray,
    idata: np.ndarray,
    nodes: np.ndarray,
    W: np.ndarray,
    tgt_i: np.ndarray,
    tgt_f: np.ndarray,
    act: np.ndarray,
    act_q: np.ndarray,
    dof_node: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    limits: bool,
    step: float,
    p: np.ndarray,
) -> None:
    """One CCD sweep, tip to base: each active DoF alone takes its closed-form optimum.

    For a revolute joint with world axis ``a`` through ``r``, every target term
    ``c |R(phi) v - w|^2`` (v current, w wanted: the point relative to r, and the
    frame's axes for orientation) is minimised jointly by ``phi = atan2(C, B)``
    with ``B = sum c w.(v - (a.v) a)`` and ``C = sum c w.(a x v)``. A ball joint's
    three DoF turn about its own frame's x, y and z axes in turn, the same way.
    """
    na = act.shape[0]
    for kk in range(na - 1, -1, -1):
        k = act[kk]
        node = dof_node[k]
        fk_nodes(q, fdata, idata, nodes, W)
        Wk = W[node]
        fd = fdata[node]
        is_ball = idata[node, I_TYPE] == BALL
        if is_ball:
            c_ = k - idata[node, I_V_INDEX]
            x, y, z = 1.0 if c_ == 0 else 0.0, 1.0 if c_ == 1 else 0.0, 1.0 if c_ == 2 else 0.0
        else:
            x, y, z = fd[F_AXIS], fd[F_AXIS + 1], fd[F_AXIS + 2]
        ax = Wk[0, 0] * x + Wk[0, 1] * y + Wk[0, 2] * z
        ay = Wk[1, 0] * x + Wk[1, 1] * y + Wk[1, 2] * z
        az = Wk[2, 0] * x + Wk[2, 1] * y + Wk[2, 2] * z
        rx, ry, rz = Wk[0, 3], Wk[1, 3], Wk[2, 3]
        mul = fd[F_MIMIC_SCALE]
        B = 0.0
        C = 0.0
        num = 0.0
        den = 0.0
        for t in range(tgt_i.shape[0]):
            tn = tgt_i[t, TI_NODE]
            if not is_ancestor(idata, node, tn):
                continue
            tf = tgt_f[t]
            Wt = W[tn]
            if tgt_i[t, TI_KIND] == KIND_FRAME:
                cp = (tf[T_W_POS] + tf[T_W_POS + 1] + tf[T_W_POS + 2]) / 3.0
                if cp > 0.0:
                    target_point(W, tn, tf, p)
                    vx, vy, vz = p[0] - rx, p[1] - ry, p[2] - rz
                    wx, wy, wz = tf[T_POS] - rx, tf[T_POS + 1] - ry, tf[T_POS + 2] - rz
                    av = ax * vx + ay * vy + az * vz
                    B += cp * (wx * (vx - av * ax) + wy * (vy - av * ay) + wz * (vz - av * az))
                    C += cp * (
                        wx * (ay * vz - az * vy)
                        + wy * (az * vx - ax * vz)
                        + wz * (ax * vy - ay * vx)
                    )
                    num += cp * (
                        ax * (tf[T_POS] - p[0])
                        + ay * (tf[T_POS + 1] - p[1])
                        + az * (tf[T_POS + 2] - p[2])
                    )
                    den += cp
                co = (
                    (tf[T_W_ROT] + tf[T_W_ROT + 1] + tf[T_W_ROT + 2]) / 3.0 * 0.25
                )  # lever of 0.5 m per radian
                if co > 0.0:
                    for j in range(3):
                        vx, vy, vz = Wt[0, j], Wt[1, j], Wt[2, j]
                        wx, wy, wz = tf[T_ROT + j], tf[T_ROT + 3 + j], tf[T_ROT + 6 + j]
                        av = ax * vx + ay * vy + az * vz
                        B += co * (wx * (vx - av * ax) + wy * (vy - av * ay) + wz * (vz - av * az))
                        C += co * (
                            wx * (ay * vz - az * vy)
                            + wy * (az * vx - ax * vz)
                            + wz * (ax * vy - ay * vx)
                        )
            else:
                co = tf[T_W_ROT] * 0.25
                l0, l1, l2 = tf[T_POINT], tf[T_POINT + 1], tf[T_POINT + 2]
                vx = Wt[0, 0] * l0 + Wt[0, 1] * l1 + Wt[0, 2] * l2
                vy = Wt[1, 0] * l0 + Wt[1, 1] * l1 + Wt[1, 2] * l2
                vz = Wt[2, 0] * l0 + Wt[2, 1] * l1 + Wt[2, 2] * l2
                wx, wy, wz = tf[T_POS], tf[T_POS + 1], tf[T_POS + 2]
                av = ax * vx + ay * vy + az * vz
                B += co * (wx * (vx - av * ax) + wy * (vy - av * ay) + wz * (vz - av * az))
                C += co * (
                    wx * (ay * vz - az * vy) + wy * (az * vx - ax * vz) + wz * (ax * vy - ay * vx)
                )
        if is_ball:
            if B == 0.0 and C == 0.0:
                continue
            delta = step * math.atan2(C, B)
            qs = idata[node, I_Q_INDEX]
            quat_step(q, qs, delta * x, delta * y, delta * z)
            if limits:
                clamp_angle(q, qs, fd[F_BALL_LIMIT])
            continue
        if idata[node, I_TYPE] == REVOLUTE:
            if B == 0.0 and C == 0.0:
                continue
            delta = math.atan2(C, B) / mul
        else:
            if den == 0.0:
                continue
            delta = num / den / mul
        kq = act_q[kk]
        qn = q[kq] + step * delta
        if limits:
            qn = min(max(qn, lo[kq]), hi[kq])
        q[kq] = qn


# --- rules: (cf, w, rows) -> w.dq ---------------------------------------------------------------


@njit(cache=True, inline="always")
def step_dls(cf: Config, w: Work, rows: np.ndarray) -> None:
    """Damped least squares, ``lambda = damping * |e|^2 / 2 + lambda_min``, with an
    active set at the limits: a joint the step pushes past a limit is pinned there (or
    ``max_joint_step`` short of it, when the limit is farther), its share of the error
    removed, and the step re-solved for the others (three passes)."""
    # Arrays are bound to locals once: a tuple field read inside a loop costs a
    # reference-count update per access.
    J, e, dq, pinned_k, A, y, q, G = w.J, w.e, w.dq, w.pinned, w.A, w.y, w.q, w.G
    lo, hi, act = cf.lo, cf.hi, cf.active_q
    m = e.shape[0]
    na = cf.na
    step = cf.step
    E = 0.0
    for r in range(m):
        E += e[r] * e[r]
    lam = cf.damping * 0.5 * E + cf.lambda_min
    # A re-solve takes the first solve's Gram matrix less the pinned columns (a third of
    # the cost of a solve on a humanoid's 24 rows, where most iterations pin a joint).
    # One call site for the solve and its re-solves: compiled in once (on the GPU, each
    # call is inlined).
    gram = keeps_gram(m, na)
    unit = cf.unit  # dq is in units of each coordinate's unit (see scale_columns)
    for p in range(4):
        dls_solve(J, e, lam, dq, A, y, rows, cf.tcols, G, p == 0)
        if not cf.limits or p == 3:
            return
        pinned = False
        for kk in range(na):
            k = act[kk]
            if k < 0:
                continue  # a quaternion's angular DoF: its cone is enforced on integration
            u = unit[k]
            qn = q[k] + step * dq[kk] * u
            if qn < lo[k] or qn > hi[k]:
                # Pinned at the limit, or short of it by the per-iteration joint bound:
                # a pinned joint moves at most max_joint_step too.
                cap = cf.max_joint_step * u
                lim_k = max(lo[k], q[k] - cap) if qn < lo[k] else min(hi[k], q[k] + cap)
                dk = (lim_k - q[k]) / u
                if gram:
                    downdate_gram(J, G, kk)
                for r in range(m):
                    e[r] -= J[r, kk] * dk
                    J[r, kk] = 0.0
                q[k] = lim_k
                pinned_k[kk] = 1.0
                pinned = True
        if not pinned:
            return


@njit(cache=True, inline="always")
def step_pinv(cf: Config, w: Work, rows: np.ndarray) -> None:
    """Pseudoinverse (SVD with a relative cut-off, or ``J^T (J J^T)^-1``)."""
    pinv_solve(w.J, w.e, cf.cutoff, cf.pinv_form, w.dq, w.A, w.y, rows, cf.tcols)


@njit(cache=True, inline="always")
def step_transpose(cf: Config, w: Work, rows: np.ndarray) -> None:
    """Jacobian transpose with the optimal step length."""
    transpose_solve(w.J, w.e, w.dq)


@njit(cache=True, inline="always")
def step_sdls(cf: Config, w: Work, rows: np.ndarray) -> None:
    """Selectively damped least squares."""
    sdls_solve(w.J, w.e, rows, cf.cutoff, w.dq)


# --- updates: what one iteration does -------------------------------------------------------------


@njit(cache=True, inline="always")
def integrate(cf: Config, q: np.ndarray, dq: np.ndarray, scale: float, fdata: np.ndarray) -> None:
    """``q += scale * dq`` over the active DoF, clipped to the limits when they are on.

    The one place a motion (``nv`` numbers) meets a configuration (``nq``): a
    quaternion turns by ``exp(scale * w)`` on its manifold, then into its cone."""
    act, lo, hi = cf.active_q, cf.lo, cf.hi
    limits = cf.limits
    for kk in range(cf.na):
        k = act[kk]
        if k < 0:
            continue
        qn = q[k] + scale * dq[kk]
        if limits:
            qn = min(max(qn, lo[k]), hi[k])
        q[k] = qn
    balls = cf.balls
    for b in range(balls.shape[0]):
        s, kk = balls[b, BA_Q], balls[b, BA_KK]
        quat_step(q, s, scale * dq[kk], scale * dq[kk + 1], scale * dq[kk + 2])
        if limits:
            clamp_angle(q, s, fdata[balls[b, BA_NODE], F_BALL_LIMIT])


@njit(cache=True, inline="always")
def jacobian_update(
    cf: Config,
    w: Work,
    ck: Any,
    cw: Any,
    fdata: np.ndarray,
    idata: np.ndarray,
    nodes: np.ndarray,
    tgt_i: np.ndarray,
    rows: np.ndarray,
    pull: float,
) -> bool:
    """One Jacobian iteration with step ``rule``; False when the step is not finite."""
    na = cf.na
    m = rows.shape[0]
    J, e, dq, z, nz, pinned, q, act = w.J, w.e, w.dq, w.z, w.nz, w.pinned, w.q, cf.active
    assemble(
        fdata, idata, w.W, tgt_i, w.tgt, rows, w.err6, w.dirs, act, w.J6, J, e, w.p3, cf.inv_length
    )
    if cf.units:
        scale_columns(J, cf.unit, cf.active_q)
    for r in range(m):
        if not np.isfinite(e[r]):
            return False  # FK is not finite here: no step can be taken
    if cf.task_step > 0.0:
        en = 0.0
        for r in range(m):
            en += e[r] * e[r]
        en = math.sqrt(en)
        if en > cf.task_step:
            for r in range(m):
                e[r] *= cf.task_step / en
    for kk in range(na):
        pinned[kk] = 0.0
    apply_rule(cf, w, rows)
    if pull > 0.0:
        # The pull toward the rest pose, projected into the null space of the task: with
        # gain 1 the step of a Gauss-Newton method for the rest pose closest to the
        # solutions. It never moves a joint the active set pinned (that motion is not in
        # the null space); the loop turns it off where it would slow the task down.
        rest = cf.rest
        gain = pull
        act_q = cf.active_q
        for kk in range(na):
            k = act_q[kk]
            z[kk] = 0.0 if pinned[kk] != 0.0 or k < 0 else gain * (rest[k] - q[k]) / cf.unit[k]
        balls = cf.balls
        for b in range(balls.shape[0]):
            kk = balls[b, BA_KK]
            log_between(q, balls[b, BA_Q], rest, z, kk)
            for c in range(3):
                z[kk + c] *= gain
        nullspace_rest(J, z, nz, w.A, w.y, w.Jz, rows, cf.tcols)
        for kk in range(na):
            if pinned[kk] == 0.0:
                dq[kk] += nz[kk]
    step = cf.step
    # The bound holds in each coordinate's unit (a prismatic joint's in the length scale).
    mx = 0.0
    for kk in range(na):
        if not np.isfinite(dq[kk]):
            return False
        mx = max(mx, abs(dq[kk]) * step)
    if cf.units:
        to_coordinates(dq, cf.unit, cf.active_q)
    sc = step
    if mx > cf.max_joint_step:
        sc = step * cf.max_joint_step / mx
    integrate(cf, q, dq, sc, fdata)
    return True


@njit(cache=True, inline="always")
def ccd_update(
    cf: Config,
    w: Work,
    ck: Any,
    cw: Any,
    fdata: np.ndarray,
    idata: np.ndarray,
    nodes: np.ndarray,
    tgt_i: np.ndarray,
    rows: np.ndarray,
    pull: float,
) -> bool:
    """One CCD sweep (CCD has no linear system)."""
    ccd_sweep(
        w.q,
        fdata,
        idata,
        nodes,
        w.W,
        tgt_i,
        w.tgt,
        cf.active,
        cf.active_q,
        cf.dof_node,
        cf.lo,
        cf.hi,
        cf.limits,
        cf.step,
        w.p3,
    )
    return True


# --- the rule a Jacobian update calls -------------------------------------------------------------
# ``jacobian_update`` calls the global name ``apply_rule``: the damped least-squares rule
# here, and in each method's compiled variant that method's rule (``kinetree.ik.kernel._drivers``
# binds it with ``kinetree._compile.variant``), so a driver compiles only its own rule.
apply_rule = step_dls
