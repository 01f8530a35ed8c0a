"""Compiled IK: one iteration loop for every Jacobian method and CCD, with limits,
null-space rest pose, random restarts, a wall-clock budget, and a batch driver.

Everything here works on plain arrays assembled by :mod:`kinetree.ik.problem`:

``tgt_i`` (T, 2) int64: frame node, kind (0 frame target, 1 direction).
``tgt_f`` (T, 24) float64: see :func:`kinetree.ik.targets.encode`.
``cfg`` float64: the scalars ``F_*`` below, then five ``dof`` blocks: limits lo,
limits hi, sampling lo, sampling hi, rest configuration; then per target the
largest distance ``reach`` its point can have from its pivot.
``icfg`` int64: the scalars ``I_*`` below, then ``active`` (padded to dof),
``dof_node`` (the node of each DoF) and per target its ``pivot``: the first node
on its path moved by an active DoF (-1: no reach check for this target).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange, types

from ..kinematics._kernels import REVOLUTE, fk_nodes, jacobian_add
from ..spatial._kernels import log3
from ._swing_twist import project_all

# --- method codes and layout -------------------------------------------------------------
PINV = 0
TRANSPOSE = 1
DLS = 2
SDLS = 3
CCD = 4

F_TOL_P = 0  # position tolerance [m]
F_TOL_R = 1  # rotation tolerance [rad]
F_STEP = 2  # step size alpha (scales d theta)
F_DAMP = 3  # damping scale for DLS (lambda = damp * E + lambda_min)
F_BUDGET = 4  # wall-clock budget [s]; <= 0: none
F_REST = 5  # null-space gain toward the rest pose
F_CUTOFF = 6  # relative singular value cut-off for pinv / sdls
F_TASK_STEP = 7  # seed 001's normalised step: |task error| clipped to this; <= 0: off
F_LAMBDA_MIN = 8  # minimal damping for DLS
F_MAX_JOINT_STEP = 9  # largest joint change per iteration [rad or m]
NF = 12

I_METHOD = 0
I_MAX_ITER = 1
I_RESTARTS = 2
I_LIMITS = 3
I_PINV_FORM = 4  # 0: SVD, 1: J^T (J J^T)^-1
I_RECORD = 5  # history capacity (rows)
I_NA = 6  # number of active DoF
I_CLAMP = 7  # move unreachable position targets onto the reachable sphere first
I_STALL = 8  # restart after this many iterations without 1 % progress
NI = 10

ST_OK = 0
ST_NOT_CONVERGED = 1
ST_NONFINITE = 2
ST_NOT_RIGID = 3

# Resolved by name at link time (so functions that call it can still be cached).
_clock_gettime = types.ExternalFunction(
    "clock_gettime",
    types.int32(types.int32, types.voidptr),
)


@njit(cache=True)
def monotonic() -> float:
    """CLOCK_MONOTONIC in seconds, callable from compiled code."""
    buf = np.empty(2, np.int64)
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


# --- small dense linear algebra -----------------------------------------------------------


@njit(cache=True, inline="always")
def cholesky_solve(A: np.ndarray, n: int, b: np.ndarray, x: np.ndarray) -> bool:
    """Solve ``A x = b`` for the SPD leading ``n x n`` block of ``A`` by ``L D L^T``.

    Reads the lower triangle; overwrites ``A`` with ``L`` (strict lower), ``L D``
    (strict upper, row k holds ``L[i, k] D[k]``) and ``1 / D`` (diagonal). No square
    roots, one division per column. False if ``A`` is not positive definite.
    """
    for j in range(n):
        d = A[j, j]
        for k in range(j):
            d -= A[j, k] * A[k, j]
        if not d > 0.0 or d == np.inf:
            return False
        inv = 1.0 / d
        A[j, j] = inv
        for i in range(j + 1, n):
            s = A[i, j]
            for k in range(j):
                s -= A[i, k] * A[k, j]
            A[j, i] = s
            A[i, j] = s * inv
    for i in range(n):
        s = b[i]
        for k in range(i):
            s -= A[i, k] * x[k]
        x[i] = s
    for i in range(n):
        x[i] *= A[i, i]
    for i in range(n - 1, -1, -1):
        s = x[i]
        for k in range(i + 1, n):
            s -= A[k, i] * x[k]
        x[i] = s
    return True


@njit(cache=True)
def damped_solve(
    J: np.ndarray, e: np.ndarray, lam: float, dq: np.ndarray, A: np.ndarray, y: np.ndarray
) -> bool:
    """``dq = J^T (J J^T + lam I)^-1 e`` (= ``(J^T J + lam I)^-1 J^T e``), smaller side.

    ``A`` (>= max(m, na) square) and ``y`` (>= max(m, na)) are scratch space.
    """
    m, na = J.shape
    if min(m, na) > 8:
        # Large systems (a character with several effectors): BLAS for the products.
        if m <= na:
            M = J @ J.T
            for i in range(m):
                M[i, i] += lam
            if not cholesky_solve(M, m, e, y):
                return False
            dq[:] = J.T @ y[:m]
        else:
            M = J.T @ J
            for a in range(na):
                M[a, a] += lam
            g = J.T @ e
            if not cholesky_solve(M, na, g, dq):
                return False
        return True
    # Small systems (at most 8 on the smaller side); six rows, the common case of one
    # 6D pose target, go through the unrolled damped_solve6 instead.
    if m <= na:
        for i in range(m):
            for j in range(i + 1):
                A[i, j] = 0.0
        for k in range(na):
            for i in range(m):
                jik = J[i, k]
                for j in range(i + 1):
                    A[i, j] += jik * J[j, k]
        for i in range(m):
            A[i, i] += lam
        if not cholesky_solve(A, m, e, y):
            return False
        for k in range(na):
            dq[k] = 0.0
        for i in range(m):
            yi = y[i]
            for k in range(na):
                dq[k] += J[i, k] * yi
    else:
        g = y
        for k in range(na):
            g[k] = 0.0
        for i in range(m):
            ei = e[i]
            for k in range(na):
                g[k] += J[i, k] * ei
        for a in range(na):
            for b in range(a + 1):
                A[a, b] = 0.0
        for i in range(m):
            for a in range(na):
                jia = J[i, a]
                for b in range(a + 1):
                    A[a, b] += jia * J[i, b]
        for a in range(na):
            A[a, a] += lam
        if not cholesky_solve(A, na, g, dq):
            return False
    return True


@njit(cache=True)
def damped_solve6(
    J: np.ndarray, e: np.ndarray, lam: float, dq: np.ndarray, A: np.ndarray, y: np.ndarray
) -> bool:
    """:func:`damped_solve` for exactly six rows (one 6D pose target), with the loop
    bounds known to the compiler so it unrolls them: about 3x faster on 6 x 7."""
    na = J.shape[1]
    a00 = a10 = a11 = a20 = a21 = a22 = a30 = a31 = a32 = a33 = 0.0
    a40 = a41 = a42 = a43 = a44 = a50 = a51 = a52 = a53 = a54 = a55 = 0.0
    for k in range(na):
        j0 = J[0, k]
        j1 = J[1, k]
        j2 = J[2, k]
        j3 = J[3, k]
        j4 = J[4, k]
        j5 = J[5, k]
        a00 += j0 * j0
        a10 += j1 * j0
        a11 += j1 * j1
        a20 += j2 * j0
        a21 += j2 * j1
        a22 += j2 * j2
        a30 += j3 * j0
        a31 += j3 * j1
        a32 += j3 * j2
        a33 += j3 * j3
        a40 += j4 * j0
        a41 += j4 * j1
        a42 += j4 * j2
        a43 += j4 * j3
        a44 += j4 * j4
        a50 += j5 * j0
        a51 += j5 * j1
        a52 += j5 * j2
        a53 += j5 * j3
        a54 += j5 * j4
        a55 += j5 * j5
    A[0, 0] = a00 + lam
    A[1, 0] = a10
    A[1, 1] = a11 + lam
    A[2, 0] = a20
    A[2, 1] = a21
    A[2, 2] = a22 + lam
    A[3, 0] = a30
    A[3, 1] = a31
    A[3, 2] = a32
    A[3, 3] = a33 + lam
    A[4, 0] = a40
    A[4, 1] = a41
    A[4, 2] = a42
    A[4, 3] = a43
    A[4, 4] = a44 + lam
    A[5, 0] = a50
    A[5, 1] = a51
    A[5, 2] = a52
    A[5, 3] = a53
    A[5, 4] = a54
    A[5, 5] = a55 + lam
    if not cholesky_solve(A, 6, e, y):
        return False
    y0, y1, y2, y3, y4, y5 = y[0], y[1], y[2], y[3], y[4], y[5]
    for k in range(na):
        dq[k] = (
            J[0, k] * y0 + J[1, k] * y1 + J[2, k] * y2 + J[3, k] * y3 + J[4, k] * y4 + J[5, k] * y5
        )
    return True


@njit(cache=True)
def damped_solve3(
    J: np.ndarray, e: np.ndarray, lam: float, dq: np.ndarray, A: np.ndarray, y: np.ndarray
) -> bool:
    """:func:`damped_solve` for exactly three rows (one position target), unrolled."""
    na = J.shape[1]
    a00 = a10 = a11 = a20 = a21 = a22 = 0.0
    for k in range(na):
        j0 = J[0, k]
        j1 = J[1, k]
        j2 = J[2, k]
        a00 += j0 * j0
        a10 += j1 * j0
        a11 += j1 * j1
        a20 += j2 * j0
        a21 += j2 * j1
        a22 += j2 * j2
    A[0, 0] = a00 + lam
    A[1, 0] = a10
    A[1, 1] = a11 + lam
    A[2, 0] = a20
    A[2, 1] = a21
    A[2, 2] = a22 + lam
    if not cholesky_solve(A, 3, e, y):
        return False
    y0, y1, y2 = y[0], y[1], y[2]
    for k in range(na):
        dq[k] = J[0, k] * y0 + J[1, k] * y1 + J[2, k] * y2
    return True


@njit(cache=True)
def dls_step(
    J: np.ndarray, e: np.ndarray, lam: float, dq: np.ndarray, A: np.ndarray, y: np.ndarray
) -> None:
    """The damped least-squares step, by the fastest route for the system's size; a
    system that is not positive definite is retried with more damping."""
    m, na = J.shape
    if m == 6 and na >= 6:
        ok = damped_solve6(J, e, lam, dq, A, y)
    elif m == 3 and na >= 3:
        ok = damped_solve3(J, e, lam, dq, A, y)
    else:
        ok = damped_solve(J, e, lam, dq, A, y)
    if not ok:
        damped_solve(J, e, lam + 1e-3, dq, A, y)


@njit(cache=True)
def check_targets(tgt_i: np.ndarray, tgt_f: np.ndarray) -> int:
    """ST_OK, ST_NONFINITE (NaN/inf anywhere) or ST_NOT_RIGID (bad rotation) for the targets."""
    for t in range(tgt_f.shape[0]):
        tf = tgt_f[t]
        for k in range(21):
            if not np.isfinite(tf[k]):
                return ST_NONFINITE
        if tgt_i[t, 1] == 0 and tf[15] + tf[16] + tf[17] > 0.0:
            for i in range(3):
                for j in range(3):
                    s = 0.0
                    for k in range(3):
                        s += tf[3 + 3 * i + k] * tf[3 + 3 * j + k]
                    if abs(s - (1.0 if i == j else 0.0)) > 1e-6:
                        return ST_NOT_RIGID
            det = (
                tf[3] * (tf[7] * tf[11] - tf[8] * tf[10])
                - tf[4] * (tf[6] * tf[11] - tf[8] * tf[9])
                + tf[5] * (tf[6] * tf[10] - tf[7] * tf[9])
            )
            if det <= 0.0:
                return ST_NOT_RIGID
    return ST_OK


@njit(cache=True)
def target_point(W: np.ndarray, node: int, tf: np.ndarray, p: np.ndarray) -> None:
    """World position of the target's point (frame origin + offset ``tf[18:21]``)."""
    Wn = W[node]
    for r in range(3):
        p[r] = Wn[r, 0] * tf[18] + Wn[r, 1] * tf[19] + Wn[r, 2] * tf[20] + Wn[r, 3]


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
        node = tgt_i[t, 0]
        tf = tgt_f[t]
        Wn = W[node]
        if tgt_i[t, 1] == 0:
            target_point(W, node, tf, p)
            for r in range(3):
                err6[t, r] = tf[r] - p[r]
            if tf[15] + tf[16] + tf[17] > 0.0:
                for i in range(3):
                    for j in range(3):
                        M[i, j] = (
                            tf[3 + 3 * i] * Wn[j, 0]
                            + tf[4 + 3 * i] * Wn[j, 1]
                            + tf[5 + 3 * i] * Wn[j, 2]
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
                if tf[12 + r] > 0.0:
                    sp += err6[t, r] * err6[t, r]
                if tf[15 + r] > 0.0:
                    sr += err6[t, 3 + r] * err6[t, 3 + r]
            errs[t, 0] = math.sqrt(sp)
            errs[t, 1] = math.sqrt(sr)
        else:
            # Direction: rotate the frame's axis a onto the world direction d.
            for r in range(3):
                p[r] = Wn[r, 0] * tf[18] + Wn[r, 1] * tf[19] + Wn[r, 2] * tf[20]
                dirs[t, r] = p[r]
            cx = p[1] * tf[2] - p[2] * tf[1]
            cy = p[2] * tf[0] - p[0] * tf[2]
            cz = p[0] * tf[1] - p[1] * tf[0]
            s = math.sqrt(cx * cx + cy * cy + cz * cz)
            c = p[0] * tf[0] + p[1] * tf[1] + p[2] * tf[2]
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
                e = np.zeros(3)
                e[k] = 1.0
                ux = p[1] * e[2] - p[2] * e[1]
                uy = p[2] * e[0] - p[0] * e[2]
                uz = p[0] * e[1] - p[1] * e[0]
                un = math.sqrt(ux * ux + uy * uy + uz * uz)
                err6[t, 3] = ux / un * math.pi
                err6[t, 4] = uy / un * math.pi
                err6[t, 5] = uz / un * math.pi
            else:
                err6[t, 3] = 0.0
                err6[t, 4] = 0.0
                err6[t, 5] = 0.0
            errs[t, 0] = 0.0
            errs[t, 1] = ang if tf[15] > 0.0 else 0.0


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
) -> None:
    """Weighted stacked error ``e`` (m) and Jacobian ``J`` (m x n_active) of all targets.

    ``rows[r] = (target, component)``; the weight of a row is ``tgt_f[t, 12 + c]``.
    """
    m = rows.shape[0]
    na = act.shape[0]
    t_prev = -1
    for r in range(m):
        t = rows[r, 0]
        c = rows[r, 1]
        if t != t_prev:
            t_prev = t
            node = tgt_i[t, 0]
            J6[:, :] = 0.0
            target_point(W, node, tgt_f[t], p)
            jacobian_add(fdata, idata, W, node, p, J6)
            if tgt_i[t, 1] == 1:
                # Only rotation perpendicular to the axis moves it: rows (I - a a^T) J_w.
                ax, ay, az = dirs[t, 0], dirs[t, 1], dirs[t, 2]
                for k in range(J6.shape[1]):
                    d = ax * J6[3, k] + ay * J6[4, k] + az * J6[5, k]
                    J6[3, k] -= ax * d
                    J6[4, k] -= ay * d
                    J6[5, k] -= az * d
        w = tgt_f[t, 12 + c]
        e[r] = w * err6[t, c]
        for k in range(na):
            J[r, k] = w * J6[c, act[k]]


# --- step rules -------------------------------------------------------------------------------


@njit(cache=True)
def step_pinv(
    J: np.ndarray, e: np.ndarray, cutoff: float, form: int, dq: np.ndarray, A: np.ndarray
) -> None:
    """Pseudoinverse step: SVD ``V S^-1 U^T e`` with small singular values cut, or the
    normal-equation form ``J^T (J J^T)^-1 e`` of seed 001."""
    m, na = J.shape
    if form == 1:
        y = np.empty(max(m, na))
        if not damped_solve(J, e, 1e-12, dq, A, y):
            damped_solve(J, e, 1e-6, dq, A, y)
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


@njit(cache=True)
def step_transpose(J: np.ndarray, e: np.ndarray, dq: np.ndarray) -> None:
    """Jacobian transpose with the optimal step: ``alpha = <e, J J^T e> / |J J^T e|^2``."""
    m, na = J.shape
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
def step_sdls(
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


@njit(cache=True)
def nullspace_rest(
    J: np.ndarray, z: np.ndarray, out: np.ndarray, A: np.ndarray, y: np.ndarray, Jz: np.ndarray
) -> None:
    """``out = (I - J^+ J) z`` with a lightly damped ``J^+`` (secondary task: rest pose)."""
    m, na = J.shape
    for r in range(m):
        s = 0.0
        for k in range(na):
            s += J[r, k] * z[k]
        Jz[r] = s
    if not damped_solve(J, Jz, 1e-9, out, A, y):
        damped_solve(J, Jz, 1e-4, out, A, y)
    for k in range(na):
        out[k] = z[k] - out[k]


# --- CCD ----------------------------------------------------------------------------------------


@njit(cache=True)
def is_ancestor(idata: np.ndarray, anc: int, node: int) -> bool:
    k = node
    while k >= 0:
        if k == anc:
            return True
        k = idata[k, 0]
    return False


@njit(cache=True)
def ccd_sweep(
    q: np.ndarray,
    fdata: np.ndarray,
    idata: np.ndarray,
    nodes: np.ndarray,
    W: np.ndarray,
    tgt_i: np.ndarray,
    tgt_f: np.ndarray,
    act: np.ndarray,
    dof_node: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    limits: bool,
    step: float,
) -> None:
    """One CCD sweep, tip to base: each active DoF alone takes its closed-form optimum.

    For a revolute joint with world axis ``a`` through ``r``, every target term
    ``c |R(phi) v - w|^2`` (v current, w wanted: the point relative to r, and the
    frame's axes for orientation) is minimised jointly by ``phi = atan2(C, B)``
    with ``B = sum c w.(v - (a.v) a)`` and ``C = sum c w.(a x v)``.
    """
    p = np.empty(3)
    na = act.shape[0]
    for kk in range(na - 1, -1, -1):
        k = act[kk]
        node = dof_node[k]
        fk_nodes(q, fdata, idata, nodes, W)
        Wk = W[node]
        fd = fdata[node]
        ax = Wk[0, 0] * fd[12] + Wk[0, 1] * fd[13] + Wk[0, 2] * fd[14]
        ay = Wk[1, 0] * fd[12] + Wk[1, 1] * fd[13] + Wk[1, 2] * fd[14]
        az = Wk[2, 0] * fd[12] + Wk[2, 1] * fd[13] + Wk[2, 2] * fd[14]
        rx, ry, rz = Wk[0, 3], Wk[1, 3], Wk[2, 3]
        mul = fd[15]
        B = 0.0
        C = 0.0
        num = 0.0
        den = 0.0
        for t in range(tgt_i.shape[0]):
            tn = tgt_i[t, 0]
            if not is_ancestor(idata, node, tn):
                continue
            tf = tgt_f[t]
            Wt = W[tn]
            if tgt_i[t, 1] == 0:
                cp = (tf[12] + tf[13] + tf[14]) / 3.0
                if cp > 0.0:
                    target_point(W, tn, tf, p)
                    vx, vy, vz = p[0] - rx, p[1] - ry, p[2] - rz
                    wx, wy, wz = tf[0] - rx, tf[1] - ry, tf[2] - rz
                    av = ax * vx + ay * vy + az * vz
                    B += cp * (wx * (vx - av * ax) + wy * (vy - av * ay) + wz * (vz - av * az))
                    C += cp * (
                        wx * (ay * vz - az * vy)
                        + wy * (az * vx - ax * vz)
                        + wz * (ax * vy - ay * vx)
                    )
                    num += cp * (ax * (tf[0] - p[0]) + ay * (tf[1] - p[1]) + az * (tf[2] - p[2]))
                    den += cp
                co = (tf[15] + tf[16] + tf[17]) / 3.0 * 0.25  # lever of 0.5 m per radian
                if co > 0.0:
                    for j in range(3):
                        vx, vy, vz = Wt[0, j], Wt[1, j], Wt[2, j]
                        wx, wy, wz = tf[3 + j], tf[6 + j], tf[9 + j]
                        av = ax * vx + ay * vy + az * vz
                        B += co * (wx * (vx - av * ax) + wy * (vy - av * ay) + wz * (vz - av * az))
                        C += co * (
                            wx * (ay * vz - az * vy)
                            + wy * (az * vx - ax * vz)
                            + wz * (ax * vy - ay * vx)
                        )
            else:
                co = tf[15] * 0.25
                vx = Wt[0, 0] * tf[18] + Wt[0, 1] * tf[19] + Wt[0, 2] * tf[20]
                vy = Wt[1, 0] * tf[18] + Wt[1, 1] * tf[19] + Wt[1, 2] * tf[20]
                vz = Wt[2, 0] * tf[18] + Wt[2, 1] * tf[19] + Wt[2, 2] * tf[20]
                wx, wy, wz = tf[0], tf[1], tf[2]
                av = ax * vx + ay * vy + az * vz
                B += co * (wx * (vx - av * ax) + wy * (vy - av * ay) + wz * (vz - av * az))
                C += co * (
                    wx * (ay * vz - az * vy) + wy * (az * vx - ax * vz) + wz * (ax * vy - ay * vx)
                )
        if idata[node, 1] == REVOLUTE:
            if B == 0.0 and C == 0.0:
                continue
            delta = math.atan2(C, B) / mul
        else:
            if den == 0.0:
                continue
            delta = num / den / mul
        qn = q[k] + step * delta
        if limits:
            qn = min(max(qn, lo[k]), hi[k])
        q[k] = qn


# --- the solve loop ---------------------------------------------------------------------------


@njit(cache=True)
def badness(errs: np.ndarray, tol_p: float, tol_r: float) -> float:
    """max over targets of error / tolerance (<= 1 means solved)."""
    b = 0.0
    for t in range(errs.shape[0]):
        b = max(b, errs[t, 0] / tol_p, errs[t, 1] / tol_r)
    return b


@njit(cache=True)
def solve_core(
    fdata: np.ndarray,
    idata: np.ndarray,
    nodes: np.ndarray,
    tgt_i: np.ndarray,
    tgt_f: np.ndarray,
    rows: np.ndarray,
    q0: np.ndarray,
    cfg: np.ndarray,
    icfg: np.ndarray,
    seed: int,
    out: np.ndarray,
    hist_q: np.ndarray,
    hist_e: np.ndarray,
) -> None:
    """Solve one IK problem. ``out`` (see :func:`out_size`): ``q`` (dof), position
    errors (T), orientation errors (T), then status, iterations, restarts, history
    rows, reachable."""
    t_start = monotonic()
    dof = q0.shape[0]
    T = tgt_i.shape[0]
    m = rows.shape[0]
    method = icfg[I_METHOD]
    max_iter = icfg[I_MAX_ITER]
    max_restarts = icfg[I_RESTARTS]
    limits = icfg[I_LIMITS] != 0
    form = icfg[I_PINV_FORM]
    hcap = icfg[I_RECORD]
    na = icfg[I_NA]
    stall_max = icfg[I_STALL]
    act = icfg[NI : NI + na]
    dof_node = icfg[NI + dof : NI + 2 * dof]
    tol_p = cfg[F_TOL_P]
    tol_r = cfg[F_TOL_R]
    step = cfg[F_STEP]
    damp = cfg[F_DAMP]
    budget = cfg[F_BUDGET]
    rest_gain = cfg[F_REST]
    cutoff = cfg[F_CUTOFF]
    task_step = cfg[F_TASK_STEP]
    lam_min = cfg[F_LAMBDA_MIN]
    max_js = cfg[F_MAX_JOINT_STEP]
    lo = cfg[NF : NF + dof]
    hi = cfg[NF + dof : NF + 2 * dof]
    slo = cfg[NF + 2 * dof : NF + 3 * dof]
    shi = cfg[NF + 3 * dof : NF + 4 * dof]
    rest = cfg[NF + 4 * dof : NF + 5 * dof]
    T_ = tgt_i.shape[0]
    reach = cfg[NF + 5 * dof : NF + 5 * dof + T_]
    pivot = icfg[NI + 2 * dof : NI + 2 * dof + T_]
    clamp = icfg[I_CLAMP] != 0
    st_i = icfg[NI + 2 * dof + T_ :]
    st_f = cfg[NF + 5 * dof + T_ :]
    swing_twist = limits and st_i.shape[0] > 0 and st_i[0] > 0

    out[:] = 0.0
    out_q = out[:dof]
    o_info = dof + 2 * T_
    st = check_targets(tgt_i, tgt_f)
    for k in range(dof):
        if not np.isfinite(q0[k]):
            st = ST_NONFINITE
    if st != ST_OK:
        out[o_info] = st
        for k in range(dof):
            out_q[k] = q0[k] if np.isfinite(q0[k]) else 0.0
        return

    # One allocation for all scratch space, carved into views.
    n = fdata.shape[0]
    sz = max(m, na)
    sizes = (n * 12, 6 * dof, m * na, m, T * 6, T * 2, T * 3, na, na, na, na, sz * sz, sz, m,
             3, 9, 3, dof, dof, T * 24)  # fmt: skip
    total = 0
    for v in sizes:
        total += v
    ws = np.zeros(total)
    o = 0
    W = ws[o : o + n * 12].reshape((n, 3, 4))
    o += n * 12
    J6 = ws[o : o + 6 * dof].reshape((6, dof))
    o += 6 * dof
    J = ws[o : o + m * na].reshape((m, na))
    o += m * na
    e = ws[o : o + m]
    o += m
    err6 = ws[o : o + T * 6].reshape((T, 6))
    o += T * 6
    errs = ws[o : o + T * 2].reshape((T, 2))
    o += T * 2
    dirs = ws[o : o + T * 3].reshape((T, 3))
    o += T * 3
    dq = ws[o : o + na]
    o += na
    z = ws[o : o + na]
    o += na
    nz = ws[o : o + na]
    o += na
    pin = ws[o : o + na]  # 1.0 where the active-set step pinned the joint at a limit
    o += na
    A = ws[o : o + sz * sz].reshape((sz, sz))
    o += sz * sz
    y = ws[o : o + sz]
    o += sz
    Jz = ws[o : o + m]
    o += m
    p3 = ws[o : o + 3]
    o += 3
    M33 = ws[o : o + 9].reshape((3, 3))
    o += 9
    w3 = ws[o : o + 3]
    o += 3
    q = ws[o : o + dof]
    o += dof
    best_q = ws[o : o + dof]
    o += dof
    tgt = ws[o : o + T * 24].reshape((T, 24))
    for t in range(T):
        for k in range(24):
            tgt[t, k] = tgt_f[t, k]
    for k in range(dof):
        q[k] = q0[k]
    if limits:
        for kk in range(na):
            k = act[kk]
            q[k] = min(max(q[k], lo[k]), hi[k])
    q_prev = ws[0:0]  # replaced below when swing-twist limits are on
    if swing_twist:
        # Anchor for the first projection: active DoF at zero (clipped), the rest as given.
        q_prev = q.copy()
        for kk in range(na):
            k = act[kk]
            q_prev[k] = min(max(0.0, lo[k]), hi[k])
        project_all(q, q_prev, fdata, st_i, st_f, lo, hi)
        q_prev[:] = q
    reachable = 1
    clamped = False
    first = True
    best_q[:] = q
    best_b = np.inf
    rng = np.empty(1, np.uint64)
    rng[0] = np.uint64(seed)
    total_iter = 0
    hrow = 0
    attempt = 0
    status = ST_NOT_CONVERGED
    while True:
        best_local = np.inf
        stall = 0
        it = 0
        while True:
            fk_nodes(q, fdata, idata, nodes, W)
            if first:
                # Reachability: a pivot does not move (nothing above it is active), so
                # |p* - pivot| beyond ``reach`` cannot be closed by any configuration.
                first = False
                for t in range(T):
                    pv = pivot[t]
                    if pv < 0:
                        continue
                    d = 0.0
                    for r in range(3):
                        d += (tgt_f[t, r] - W[pv, r, 3]) ** 2
                    d = math.sqrt(d)
                    if d > reach[t] * (1.0 + 1e-12) + 1e-12:
                        reachable = 0
                        if clamp:
                            clamped = True
                            sc = reach[t] * (1.0 - 1e-9) / d
                            for r in range(3):
                                tgt[t, r] = W[pv, r, 3] + (tgt_f[t, r] - W[pv, r, 3]) * sc
            task_errors(W, tgt_i, tgt, err6, errs, dirs, p3, M33, w3)
            bad = badness(errs, tol_p, tol_r)
            if hrow < hcap:
                hist_q[hrow, :] = q
                mp = 0.0
                mr = 0.0
                for t in range(T):
                    mp = max(mp, errs[t, 0])
                    mr = max(mr, errs[t, 1])
                hist_e[hrow, 0] = mp
                hist_e[hrow, 1] = mr
                hrow += 1
            if bad < best_b:
                best_b = bad
                best_q[:] = q
                for t in range(T):
                    out[dof + t] = errs[t, 0]
                    out[dof + T + t] = errs[t, 1]
            if bad <= 1.0:
                status = ST_OK
                break
            if it >= max_iter:
                break
            # Stall detection: no 1 % progress on this attempt for ``stall_max`` iterations.
            if bad < 0.99 * best_local:
                best_local = bad
                stall = 0
            else:
                stall += 1
                if stall >= stall_max and max_restarts > 0:
                    break
            if budget > 0.0 and (it & 7) == 7 and monotonic() - t_start > budget:
                break
            it += 1
            total_iter += 1
            if method == CCD:
                if swing_twist:
                    q_prev[:] = q
                ccd_sweep(
                    q, fdata, idata, nodes, W, tgt_i, tgt, act, dof_node, lo, hi, limits, step
                )
                if swing_twist:
                    project_all(q, q_prev, fdata, st_i, st_f, lo, hi)
                continue
            assemble(fdata, idata, W, tgt_i, tgt, rows, err6, dirs, act, J6, J, e, p3)
            if task_step > 0.0:
                en = 0.0
                for r in range(m):
                    en += e[r] * e[r]
                en = math.sqrt(en)
                if en > task_step:
                    for r in range(m):
                        e[r] *= task_step / en
            pin[:] = 0.0
            if method == DLS:
                E = 0.0
                for r in range(m):
                    E += e[r] * e[r]
                lam = damp * 0.5 * E + lam_min
                dls_step(J, e, lam, dq, A, y)
                if limits:
                    # Active set: a joint the step pushes past a limit is pinned there, its
                    # share of the error removed, and the step re-solved for the others.
                    for _pass in range(3):
                        pinned = False
                        for kk in range(na):
                            k = act[kk]
                            qn = q[k] + step * dq[kk]
                            if qn < lo[k] or qn > hi[k]:
                                lim_k = lo[k] if qn < lo[k] else hi[k]
                                dk = lim_k - q[k]
                                for r in range(m):
                                    e[r] -= J[r, kk] * dk
                                    J[r, kk] = 0.0
                                q[k] = lim_k
                                pin[kk] = 1.0
                                pinned = True
                        if not pinned:
                            break
                        dls_step(J, e, lam, dq, A, y)
            elif method == PINV:
                step_pinv(J, e, cutoff, form, dq, A)
            elif method == TRANSPOSE:
                step_transpose(J, e, dq)
            else:
                step_sdls(J, e, rows, cutoff, dq)
            if rest_gain > 0.0 and bad > 10.0:
                # The pull toward the rest pose shapes the approach; within 10x of the
                # tolerance it stops so the last iterations converge at full speed.
                for kk in range(na):
                    k = act[kk]
                    z[kk] = rest_gain * (rest[k] - q[k])
                for kk in range(na):
                    if pin[kk] != 0.0:
                        z[kk] = 0.0
                nullspace_rest(J, z, nz, A, y, Jz)
                for kk in range(na):
                    if pin[kk] == 0.0:
                        dq[kk] += nz[kk]
            mx = 0.0
            for kk in range(na):
                if not np.isfinite(dq[kk]):
                    mx = -1.0
                    break
                mx = max(mx, abs(dq[kk]) * step)
            if mx < 0.0:
                break
            sc = step
            if mx > max_js:
                sc = step * max_js / mx
            if swing_twist:
                q_prev[:] = q
            for kk in range(na):
                k = act[kk]
                qn = q[k] + sc * dq[kk]
                if limits:
                    qn = min(max(qn, lo[k]), hi[k])
                q[k] = qn
            if swing_twist:
                project_all(q, q_prev, fdata, st_i, st_f, lo, hi)
        if status == ST_OK:
            break
        # Restarts cannot close a gap that no configuration closes: a couple of them
        # look for a better closest configuration, then stop.
        if attempt >= max_restarts or (reachable == 0 and attempt >= 2):
            break
        if budget > 0.0 and monotonic() - t_start > budget:
            break
        attempt += 1
        for kk in range(na):
            k = act[kk]
            q[k] = slo[k] + (shi[k] - slo[k]) * rand01(rng)
        if swing_twist:
            q_prev[:] = q
            for kk in range(na):
                k = act[kk]
                q_prev[k] = min(max(0.0, lo[k]), hi[k])
            project_all(q, q_prev, fdata, st_i, st_f, lo, hi)
    out_q[:] = best_q
    if clamped:
        # Errors are reported against the caller's target, not the clamped one.
        fk_nodes(best_q, fdata, idata, nodes, W)
        task_errors(W, tgt_i, tgt_f, err6, errs, dirs, p3, M33, w3)
        for t in range(T):
            out[dof + t] = errs[t, 0]
            out[dof + T + t] = errs[t, 1]
        if status == ST_OK and badness(errs, tol_p, tol_r) > 1.0:
            status = ST_NOT_CONVERGED
    out[o_info] = status
    out[o_info + 1] = total_iter
    out[o_info + 2] = attempt
    out[o_info + 3] = hrow
    out[o_info + 4] = reachable


def out_size(dof: int, T: int) -> int:
    """Length of the ``out`` vector of one solve."""
    return dof + 2 * T + 5


@njit(cache=True)
def encode_pose(P: np.ndarray, tf: np.ndarray) -> int:
    """Write a 4x4 pose target (all six components, weight 1) into ``tf`` (24)."""
    for r in range(3):
        tf[r] = P[r, 3]
        for c in range(3):
            tf[3 + 3 * r + c] = P[r, c]
    for k in range(12, 18):
        tf[k] = 1.0
    for k in range(18, 24):
        tf[k] = 0.0
    for c in range(4):
        if not np.isfinite(P[3, c]):
            return ST_NONFINITE
    if P[3, 0] != 0.0 or P[3, 1] != 0.0 or P[3, 2] != 0.0 or P[3, 3] != 1.0:
        return ST_NOT_RIGID
    return ST_OK


@njit(cache=True)
def solve_pose(
    fdata: np.ndarray, idata: np.ndarray, nodes: np.ndarray, tgt_i: np.ndarray,
    rows: np.ndarray, cfg: np.ndarray, icfg: np.ndarray, P: np.ndarray, q0: np.ndarray,
    out: np.ndarray, seed: int,
) -> None:  # fmt: skip
    """One 4x4 pose target on ``tgt_i[0]``: the fast path behind ``Model.ik(T)``."""
    tf = np.empty((1, 24))
    st = encode_pose(P, tf[0])
    if st != ST_OK:
        out[:] = 0.0
        out[q0.shape[0] + 2] = st
        return
    hq = np.empty((0, q0.shape[0]))
    he = np.empty((0, 2))
    solve_core(fdata, idata, nodes, tgt_i, tf, rows, q0, cfg, icfg, seed, out, hq, he)


def pack(
    fdata: np.ndarray, idata: np.ndarray, nodes: np.ndarray, tgt_i: np.ndarray,
    rows: np.ndarray, cfg: np.ndarray, icfg: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Pack a model and a template into one int and one float array (fewer arguments
    to hand across the Python/compiled boundary: each costs about 0.1 us per call)."""
    n = fdata.shape[0]
    head = np.array(
        [n, nodes.shape[0], tgt_i.shape[0], rows.shape[0], icfg.shape[0]], dtype=np.int64
    )
    ibuf = np.concatenate([head, idata.ravel(), nodes, tgt_i.ravel(), rows.ravel(), icfg])
    fbuf = np.concatenate([fdata.ravel(), cfg])
    return ibuf.astype(np.int64), fbuf.astype(np.float64)


@njit(cache=True, inline="always")
def unpack(ibuf: np.ndarray, fbuf: np.ndarray) -> tuple[np.ndarray, ...]:
    """Views ``(fdata, idata, nodes, tgt_i, rows, cfg, icfg)`` into packed buffers."""
    n = ibuf[0]
    nn = ibuf[1]
    T = ibuf[2]
    m = ibuf[3]
    li = ibuf[4]
    o = 5
    idata = ibuf[o : o + 4 * n].reshape((n, 4))
    o += 4 * n
    nodes = ibuf[o : o + nn]
    o += nn
    tgt_i = ibuf[o : o + 2 * T].reshape((T, 2))
    o += 2 * T
    rows = ibuf[o : o + 2 * m].reshape((m, 2))
    o += 2 * m
    icfg = ibuf[o : o + li]
    fdata = fbuf[: 17 * n].reshape((n, 17))
    cfg = fbuf[17 * n :]
    return fdata, idata, nodes, tgt_i, rows, cfg, icfg


@njit(cache=True)
def solve_pose_packed(
    ibuf: np.ndarray, fbuf: np.ndarray, P: np.ndarray, q0: np.ndarray, out: np.ndarray, seed: int
) -> None:
    """:func:`solve_pose` on packed buffers (see :func:`pack`)."""
    fdata, idata, nodes, tgt_i, rows, cfg, icfg = unpack(ibuf, fbuf)
    solve_pose(fdata, idata, nodes, tgt_i, rows, cfg, icfg, P, q0, out, seed)


@njit(cache=True)
def solve_rows_packed(
    ibuf: np.ndarray, fbuf: np.ndarray, tgt_f: np.ndarray, q0: np.ndarray, out: np.ndarray,
    seed: int,
) -> None:  # fmt: skip
    """:func:`solve_core` on packed buffers for encoded targets ``tgt_f`` (T, 24)."""
    fdata, idata, nodes, tgt_i, rows, cfg, icfg = unpack(ibuf, fbuf)
    hq = np.empty((0, q0.shape[0]))
    he = np.empty((0, 2))
    solve_core(fdata, idata, nodes, tgt_i, tgt_f, rows, q0, cfg, icfg, seed, out, hq, he)


# Batch drivers: a threaded and a serial loop around the same single solve. They are
# separate functions on purpose: numba's on-disk cache keys a function by its source
# location, not by ``parallel=``, so compiling one body twice would share one cache
# entry (and silently run the threaded driver serially).
PARALLEL_MIN = 8


@njit(cache=True, parallel=True)
def solve_pose_batch(
    fdata: np.ndarray, idata: np.ndarray, nodes: np.ndarray, tgt_i: np.ndarray,
    rows: np.ndarray, cfg: np.ndarray, icfg: np.ndarray, P: np.ndarray, q0: np.ndarray,
    out: np.ndarray, seed: int,
) -> None:  # fmt: skip
    """``solve_pose`` over ``P`` (B, 4, 4) on all cores; ``q0`` is (1, dof) or (B, dof);
    problem ``b`` draws its restarts from ``seed + b``."""
    shared = q0.shape[0] == 1
    for b in prange(P.shape[0]):
        qb = q0[0] if shared else q0[b]
        solve_pose(fdata, idata, nodes, tgt_i, rows, cfg, icfg, P[b], qb, out[b], seed + b)


@njit(cache=True)
def solve_pose_batch_serial(
    fdata: np.ndarray, idata: np.ndarray, nodes: np.ndarray, tgt_i: np.ndarray,
    rows: np.ndarray, cfg: np.ndarray, icfg: np.ndarray, P: np.ndarray, q0: np.ndarray,
    out: np.ndarray, seed: int,
) -> None:  # fmt: skip
    """:func:`solve_pose_batch` on one thread (small batches)."""
    shared = q0.shape[0] == 1
    for b in range(P.shape[0]):
        qb = q0[0] if shared else q0[b]
        solve_pose(fdata, idata, nodes, tgt_i, rows, cfg, icfg, P[b], qb, out[b], seed + b)


@njit(cache=True, parallel=True)
def solve_batch(
    fdata: np.ndarray, idata: np.ndarray, nodes: np.ndarray, tgt_i: np.ndarray,
    tgt_fb: np.ndarray, rows: np.ndarray, q0: np.ndarray, cfg: np.ndarray, icfg: np.ndarray,
    seed: int, out: np.ndarray,
) -> None:  # fmt: skip
    """``solve_core`` for each of B problems (targets ``tgt_fb`` (B, T, 24); ``q0`` (1, dof)
    or (B, dof)) on all cores; problem ``b`` draws its restarts from ``seed + b``."""
    shared = q0.shape[0] == 1
    hq = np.empty((0, q0.shape[1]))
    he = np.empty((0, 2))
    for b in prange(tgt_fb.shape[0]):
        qb = q0[0] if shared else q0[b]
        solve_core(fdata, idata, nodes, tgt_i, tgt_fb[b], rows, qb, cfg, icfg, seed + b,
                   out[b], hq, he)  # fmt: skip


@njit(cache=True)
def solve_batch_serial(
    fdata: np.ndarray, idata: np.ndarray, nodes: np.ndarray, tgt_i: np.ndarray,
    tgt_fb: np.ndarray, rows: np.ndarray, q0: np.ndarray, cfg: np.ndarray, icfg: np.ndarray,
    seed: int, out: np.ndarray,
) -> None:  # fmt: skip
    """:func:`solve_batch` on one thread (small batches)."""
    shared = q0.shape[0] == 1
    hq = np.empty((0, q0.shape[1]))
    he = np.empty((0, 2))
    for b in range(tgt_fb.shape[0]):
        qb = q0[0] if shared else q0[b]
        solve_core(fdata, idata, nodes, tgt_i, tgt_fb[b], rows, qb, cfg, icfg, seed + b,
                   out[b], hq, he)  # fmt: skip


# --- evaluation and the smooth cost used by the scipy methods ---------------------------------


@njit(cache=True)
def evaluate(
    fdata: np.ndarray, idata: np.ndarray, nodes: np.ndarray, tgt_i: np.ndarray, tgt_f: np.ndarray,
    q: np.ndarray,
) -> np.ndarray:  # fmt: skip
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
    qa: np.ndarray, q_full: np.ndarray, act: np.ndarray, fdata: np.ndarray, idata: np.ndarray,
    nodes: np.ndarray, tgt_i: np.ndarray, tgt_f: np.ndarray, rest: np.ndarray, rest_w: float,
) -> tuple[float, np.ndarray]:  # fmt: skip
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
        node = tgt_i[t, 0]
        tf = tgt_f[t]
        Wn = W[node]
        J6[:, :] = 0.0
        target_point(W, node, tf, p)
        jacobian_add(fdata, idata, W, node, p, J6)
        if tgt_i[t, 1] == 0:
            # position: f += 1/2 w^2 d^2, df/dq = -w^2 d . J_v
            for r in range(3):
                w2 = tf[12 + r] * tf[12 + r]
                if w2 == 0.0:
                    continue
                d = tf[r] - p[r]
                f += 0.5 * w2 * d * d
                for k in range(dof):
                    g_full[k] -= w2 * d * J6[r, k]
            wr = (tf[15] + tf[16] + tf[17]) / 3.0
            if wr > 0.0:
                # sum_j 1/2 |u_j - u*_j|^2 with u_j = R e_j; d u_j = omega x u_j.
                # gradient wrt omega: -sum_j u_j x u*_j.
                gx = 0.0
                gy = 0.0
                gz = 0.0
                for j in range(3):
                    ux, uy, uz = Wn[0, j], Wn[1, j], Wn[2, j]
                    vx, vy, vz = tf[3 + j], tf[6 + j], tf[9 + j]
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
            w2 = tf[15] * tf[15]
            ax = Wn[0, 0] * tf[18] + Wn[0, 1] * tf[19] + Wn[0, 2] * tf[20]
            ay = Wn[1, 0] * tf[18] + Wn[1, 1] * tf[19] + Wn[1, 2] * tf[20]
            az = Wn[2, 0] * tf[18] + Wn[2, 1] * tf[19] + Wn[2, 2] * tf[20]
            dx, dy, dz = ax - tf[0], ay - tf[1], az - tf[2]
            f += 0.5 * w2 * (dx * dx + dy * dy + dz * dz)
            gx = -(ay * tf[2] - az * tf[1])
            gy = -(az * tf[0] - ax * tf[2])
            gz = -(ax * tf[1] - ay * tf[0])
            for k in range(dof):
                g_full[k] += w2 * (gx * J6[3, k] + gy * J6[4, k] + gz * J6[5, k])
    g = np.empty(na)
    for k in range(na):
        i = act[k]
        dr = q[i] - rest[i]
        f += 0.5 * rest_w * dr * dr
        g[k] = g_full[i] + rest_w * dr
    return f, g
