"""Swing-twist limits of ball joints, enforced by projection inside the solver loop.

A ball joint's rotation ``R`` (relative to its zero pose) splits into a twist about the
bone axis ``b`` and a swing that tilts the bone: ``R = R_swing R_twist``. Anatomical
limits are a cone on the swing angle and an interval on the twist angle. After each
solver step, a joint outside them is moved to the nearest allowed rotation (the swing
axis kept, the angles clipped), and its three joint angles are recovered by a few
Newton steps on ``log(R* R(q)^T)``, which works for any axis sequence.

Layout (appended to the template arrays): ``icfg[base]`` = number of groups G, then per
group three node and three DoF indices and a flag (1: all three DoF active);
``cfg[base]`` onward per group: bone axis (3, in the joint's child frame), swing max
[rad], twist min, twist max [rad]. A partly active joint is never projected (that would
move its inactive DoF); its step is only shortened until the limits hold.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..._hints import shaped_view
from ...kinematics._kernels import no_refcount
from ...kinematics.layout import F_AXIS, F_MIMIC_OFFSET, F_MIMIC_SCALE
from ...spatial._kernels import log3, rodrigues
from ._linalg import cholesky_solve

I_STRIDE = 7
F_STRIDE = 6


@njit(cache=True)
def group_rotation(
    fdata: np.ndarray,
    nodes: np.ndarray,
    dofs: np.ndarray,
    q: np.ndarray,
    R: np.ndarray,
    Rk: np.ndarray,
) -> None:
    """``R = prod_k Rot(axis_k, scale_k q_k + offset_k)`` over the group's three nodes."""
    group_rotation_into(fdata, nodes, dofs, q, R, Rk, np.empty((3, 3)))


@njit(cache=True, inline="always")
def group_rotation_into(
    fdata: np.ndarray,
    nodes: np.ndarray,
    dofs: np.ndarray,
    q: np.ndarray,
    R: np.ndarray,
    Rk: np.ndarray,
    T: np.ndarray,
) -> None:
    """:func:`group_rotation` with its scratch ``T`` (3x3) given: allocates nothing."""
    for r in range(3):
        for c in range(3):
            R[r, c] = 1.0 if r == c else 0.0
    for j in range(3):
        nd = nodes[j]
        rodrigues(
            fdata[nd, F_AXIS : F_AXIS + 3],
            fdata[nd, F_MIMIC_SCALE] * q[dofs[j]] + fdata[nd, F_MIMIC_OFFSET],
            Rk,
        )
        for r in range(3):
            for c in range(3):
                T[r, c] = R[r, 0] * Rk[0, c] + R[r, 1] * Rk[1, c] + R[r, 2] * Rk[2, c]
        for r in range(3):
            for c in range(3):
                R[r, c] = T[r, c]


@no_refcount
def quat_from_matrix(R: np.ndarray, out: np.ndarray) -> None:
    """Unit quaternion ``(w, x, y, z)`` of a rotation matrix (Shepperd's method), w >= 0."""
    tr = R[0, 0] + R[1, 1] + R[2, 2]
    if tr > 0.0:
        s = math.sqrt(tr + 1.0) * 2.0
        out[0] = 0.25 * s
        out[1] = (R[2, 1] - R[1, 2]) / s
        out[2] = (R[0, 2] - R[2, 0]) / s
        out[3] = (R[1, 0] - R[0, 1]) / s
    elif R[0, 0] > R[1, 1] and R[0, 0] > R[2, 2]:
        s = math.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2]) * 2.0
        out[0] = (R[2, 1] - R[1, 2]) / s
        out[1] = 0.25 * s
        out[2] = (R[0, 1] + R[1, 0]) / s
        out[3] = (R[0, 2] + R[2, 0]) / s
    elif R[1, 1] > R[2, 2]:
        s = math.sqrt(1.0 + R[1, 1] - R[0, 0] - R[2, 2]) * 2.0
        out[0] = (R[0, 2] - R[2, 0]) / s
        out[1] = (R[0, 1] + R[1, 0]) / s
        out[2] = 0.25 * s
        out[3] = (R[1, 2] + R[2, 1]) / s
    else:
        s = math.sqrt(1.0 + R[2, 2] - R[0, 0] - R[1, 1]) * 2.0
        out[0] = (R[1, 0] - R[0, 1]) / s
        out[1] = (R[0, 2] + R[2, 0]) / s
        out[2] = (R[1, 2] + R[2, 1]) / s
        out[3] = 0.25 * s
    if out[0] < 0.0:
        for k in range(4):
            out[k] = -out[k]


@njit(cache=True)
def swing_twist(R: np.ndarray, b: np.ndarray) -> tuple[float, float, float, float, float]:
    """``(swing angle, swing axis x, y, z, twist angle)`` of ``R`` about bone axis ``b``.

    Swing in [0, pi], twist in (-pi, pi]; the swing axis is perpendicular to ``b``."""
    return swing_twist_into(R, b, np.empty(4))


@njit(cache=True, inline="always")
def swing_twist_into(
    R: np.ndarray, b: np.ndarray, qt: np.ndarray
) -> tuple[float, float, float, float, float]:
    """:func:`swing_twist` with its scratch quaternion ``qt`` (4) given."""
    quat_from_matrix(R, qt)
    w, x, y, z = qt[0], qt[1], qt[2], qt[3]
    p = x * b[0] + y * b[1] + z * b[2]
    n = math.sqrt(w * w + p * p)
    if n < 1e-15:
        # A half-turn swing: no twist is defined; call it zero.
        tw_w, tw_s = 1.0, 0.0
    else:
        tw_w, tw_s = w / n, p / n
    twist = 2.0 * math.atan2(tw_s, tw_w)
    if twist > math.pi:
        twist -= 2.0 * math.pi
    elif twist <= -math.pi:
        twist += 2.0 * math.pi
    # swing = q * conj(twist), twist = (tw_w, tw_s b)
    cw, cx, cy, cz = tw_w, -tw_s * b[0], -tw_s * b[1], -tw_s * b[2]
    sw = w * cw - x * cx - y * cy - z * cz
    sx = w * cx + x * cw + y * cz - z * cy
    sy = w * cy - x * cz + y * cw + z * cx
    sz = w * cz + x * cy - y * cx + z * cw
    if sw < 0.0:
        sw, sx, sy, sz = -sw, -sx, -sy, -sz
    sn = math.sqrt(sx * sx + sy * sy + sz * sz)
    swing = 2.0 * math.atan2(sn, sw)
    if sn > 1e-15:
        return swing, sx / sn, sy / sn, sz / sn, twist
    return swing, 0.0, 0.0, 0.0, twist


@no_refcount
def _mul3(A: np.ndarray, B: np.ndarray, transpose_b: bool, out: np.ndarray) -> None:
    """``out = A B`` (or ``A B^T``) for 3x3 matrices."""
    for r in range(3):
        for c in range(3):
            if transpose_b:
                out[r, c] = A[r, 0] * B[c, 0] + A[r, 1] * B[c, 1] + A[r, 2] * B[c, 2]
            else:
                out[r, c] = A[r, 0] * B[0, c] + A[r, 1] * B[1, c] + A[r, 2] * B[2, c]


#: Floats of scratch :func:`project_all` needs (``sc``): the 3x3 matrices and vectors of
#: :func:`project_group` and :func:`feasible`, at the offsets ``S_*`` below.
S_R, S_RK, S_T, S_QT, S_RS, S_RT, S_RG, S_U, S_M = 0, 9, 18, 27, 31, 40, 49, 58, 61
S_E, S_JW, S_P, S_PN, S_A, S_G, S_DQ, S_ORIG, S_ANCHOR = 70, 73, 82, 91, 100, 109, 112, 115, 118
SCRATCH = 121


@njit(cache=True, inline="always")
def mat3(sc: np.ndarray, o: int) -> np.ndarray:
    """The 3x3 matrix at offset ``o`` of the scratch ``sc`` (a view)."""
    return shaped_view(sc, o, (3, 3))


@njit(cache=True, inline="always")
def identity3(M: np.ndarray) -> None:
    """``M = I`` (a loop: a slice assignment needs numba's runtime)."""
    for r in range(3):
        for c in range(3):
            M[r, c] = 1.0 if r == c else 0.0


@no_refcount
def project_group(
    q: np.ndarray,
    fdata: np.ndarray,
    nodes: np.ndarray,
    dofs: np.ndarray,
    b: np.ndarray,
    swing_max: float,
    tw_lo: float,
    tw_hi: float,
    lo: np.ndarray,
    hi: np.ndarray,
    sc: np.ndarray,
) -> bool:
    """Move one ball joint into its swing cone and twist range, then into its per-axis
    limits; True if it had to move. ``sc``: scratch (:data:`SCRATCH` floats)."""
    R, Rk, T = mat3(sc, S_R), mat3(sc, S_RK), mat3(sc, S_T)
    group_rotation_into(fdata, nodes, dofs, q, R, Rk, T)
    sw, ux, uy, uz, tw = swing_twist_into(R, b, sc[S_QT : S_QT + 4])
    if sw <= swing_max + 1e-12 and tw_lo - 1e-12 <= tw <= tw_hi + 1e-12:
        return False
    sw = min(sw, swing_max)
    tw = min(max(tw, tw_lo), tw_hi)
    # Target rotation R* = Rot(u, sw) Rot(b, tw). Products are written as loops (numpy's
    # matrix product and solve would triple this module's compile time).
    Rs, Rt, Rg = mat3(sc, S_RS), mat3(sc, S_RT), mat3(sc, S_RG)
    u = sc[S_U : S_U + 3]
    u[0], u[1], u[2] = ux, uy, uz
    if ux == 0.0 and uy == 0.0 and uz == 0.0:
        identity3(Rs)
    else:
        rodrigues(u, sw, Rs)
    rodrigues(b, tw, Rt)
    _mul3(Rs, Rt, False, Rg)
    # Newton on the three angles: the group's axes in its base frame are the columns.
    M, Jw, P, Pn, A = mat3(sc, S_M), mat3(sc, S_JW), mat3(sc, S_P), mat3(sc, S_PN), mat3(sc, S_A)
    e, g, dq = sc[S_E : S_E + 3], sc[S_G : S_G + 3], sc[S_DQ : S_DQ + 3]
    for _ in range(8):
        group_rotation_into(fdata, nodes, dofs, q, R, Rk, T)
        _mul3(Rg, R, True, M)
        log3(M, e)
        if e[0] * e[0] + e[1] * e[1] + e[2] * e[2] < 1e-24:
            break
        identity3(P)
        for j in range(3):
            nd = nodes[j]
            a = fdata[nd, F_AXIS : F_AXIS + 3]
            mul = fdata[nd, F_MIMIC_SCALE]
            for r in range(3):
                Jw[r, j] = (P[r, 0] * a[0] + P[r, 1] * a[1] + P[r, 2] * a[2]) * mul
            rodrigues(a, mul * q[dofs[j]] + fdata[nd, F_MIMIC_OFFSET], Rk)
            _mul3(P, Rk, False, Pn)
            for r in range(3):
                for c in range(3):
                    P[r, c] = Pn[r, c]
        # damped 3x3 solve: (J^T J + eps I) dq = J^T e
        for i in range(3):
            g[i] = Jw[0, i] * e[0] + Jw[1, i] * e[1] + Jw[2, i] * e[2]
            for k in range(3):
                A[i, k] = Jw[0, i] * Jw[0, k] + Jw[1, i] * Jw[1, k] + Jw[2, i] * Jw[2, k]
            A[i, i] += 1e-12
        if not cholesky_solve(A, 3, g, dq):
            break
        for j in range(3):
            q[dofs[j]] += dq[j]
    for j in range(3):
        k = dofs[j]
        q[k] = min(max(q[k], lo[k]), hi[k])
    return True


@no_refcount
def feasible(
    q: np.ndarray,
    fdata: np.ndarray,
    nodes: np.ndarray,
    dofs: np.ndarray,
    b: np.ndarray,
    swing_max: float,
    tw_lo: float,
    tw_hi: float,
    sc: np.ndarray,
) -> bool:
    """Whether the ball joint's swing and twist are within limits at ``q``; ``sc``:
    scratch (:data:`SCRATCH` floats)."""
    R = mat3(sc, S_R)
    group_rotation_into(fdata, nodes, dofs, q, R, mat3(sc, S_RK), mat3(sc, S_T))
    sw, _, _, _, tw = swing_twist_into(R, b, sc[S_QT : S_QT + 4])
    return sw <= swing_max + 1e-12 and tw_lo - 1e-12 <= tw <= tw_hi + 1e-12


@no_refcount
def project_all(
    q: np.ndarray,
    q_prev: np.ndarray,
    fdata: np.ndarray,
    gi: np.ndarray,
    gf: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    sc: np.ndarray,
) -> None:
    """Bring every constrained ball joint (``gi``/``gf`` as in the module doc) within its
    limits. ``q_prev`` is the previous (feasible) configuration: when the nearest
    allowed rotation lies outside the per-axis limits, the joint instead moves as far
    along its step from ``q_prev`` as the limits allow (bisection). ``sc``: scratch
    (:data:`SCRATCH` floats): nothing here allocates, so the solver loop runs without
    numba's reference counting (``ik._drivers``)."""
    G = gi[0]
    orig = sc[S_ORIG : S_ORIG + 3]
    anchor = sc[S_ANCHOR : S_ANCHOR + 3]
    for g in range(G):
        nodes = gi[1 + I_STRIDE * g : 4 + I_STRIDE * g]
        dofs = gi[4 + I_STRIDE * g : 7 + I_STRIDE * g]
        f = gf[F_STRIDE * g : F_STRIDE * (g + 1)]
        b = f[0:3]
        whole = gi[7 + I_STRIDE * g] != 0
        for j in range(3):
            orig[j] = q[dofs[j]]
        if whole:
            if not project_group(q, fdata, nodes, dofs, b, f[3], f[4], f[5], lo, hi, sc):
                continue
        if feasible(q, fdata, nodes, dofs, b, f[3], f[4], f[5], sc):
            continue
        # Anchor: the previous values if feasible, else (whole joints only) the zero pose
        # clipped to the limits; a partly active joint with no feasible anchor is left.
        for j in range(3):
            q[dofs[j]] = q_prev[dofs[j]]
        if not feasible(q, fdata, nodes, dofs, b, f[3], f[4], f[5], sc):
            if not whole:
                for j in range(3):
                    q[dofs[j]] = orig[j]
                continue
            for j in range(3):
                k = dofs[j]
                q[k] = min(max(0.0, lo[k]), hi[k])
        for j in range(3):
            anchor[j] = q[dofs[j]]
        a_ok = 0.0
        a_bad = 1.0
        for _ in range(30):
            mid = 0.5 * (a_ok + a_bad)
            for j in range(3):
                q[dofs[j]] = anchor[j] + mid * (orig[j] - anchor[j])
            if feasible(q, fdata, nodes, dofs, b, f[3], f[4], f[5], sc):
                a_ok = mid
            else:
                a_bad = mid
        for j in range(3):
            q[dofs[j]] = anchor[j] + a_ok * (orig[j] - anchor[j])
