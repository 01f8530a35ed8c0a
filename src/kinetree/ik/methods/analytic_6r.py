r"""Closed-form IK of 6R arms recognised from their geometry (any file, any convention).

Two families, both solved on the arm's product of exponentials, so base and
tool offsets, joint zero offsets and reversed axes need no special case::

    T(q) = E1(q1) E2(q2) ... E6(q6) M,    Ei(t) = rotation by t about axis i

where axis i (unit direction ``w_i``, a point ``p_i``) and ``M = T(0)`` are read
from the model at ``q = 0`` (``w_i`` from the angular rows of the Jacobian,
``p_i = p_tool + w_i x v_i`` from the linear ones). The target ``T`` becomes
``g = T M^-1 = E1 ... E6``. Lengths in metres, angles in radians.

Spherical wrist ("ortho-parallel": KUKA KR, ABB IRB, Fanuc, Puma 560)
    Axes 2 and 3 are parallel, axes 4, 5 and 6 meet in the wrist centre
    ``c``. ``E4 E5 E6`` fix ``c``, so ``g c = E1 E2 E3 c``.

    * q1: rotations about the parallel axes 2 and 3 keep a point's height
      along ``w2``, so ``w2 . (E1^-1 g c - p2) = w2 . (c - p2)``, an equation
      ``A cos q1 + B sin q1 = C``: two branches (shoulder front/back).
    * q3: ``E2`` keeps the distance to axis 2, so
      ``|(E3 c - p2)_perp| = |(E1^-1 g c - p2)_perp|`` (perpendicular to
      ``w2``), again ``A cos q3 + B sin q3 = C``: two branches (elbow up/down);
      then q2 turns ``E3 c - p2`` onto ``E1^-1 g c - p2`` about ``w2``.
    * q4, q5, q6: ``R4 R5 R6 = (R1 R2 R3)^T R_g``. ``R4 R5`` maps ``w6`` to
      ``R_w w6`` (Paden-Kahan subproblem 2: two branches, wrist flip), then
      q6 turns a vector normal to ``w6`` into place. When ``w6`` lines up with
      ``w4`` (wrist singularity) q4 and q6 are one motion; q4 is then 0.

UR family
    Axes 2, 3, 4 are parallel, axes 5 and 6 meet in a point ``c`` (on axis 6,
    so ``g c = E1 ... E5 c`` and ``E5 c = c``).

    * q1: ``w2 . (E1^-1 g c - p2) = w2 . (c - p2)``: two branches.
    * q5, q6: ``w2`` is fixed by ``R2 R3 R4``, so
      ``R5 R6 (R_g^T R1 w2) = w2`` (subproblem 2: two branches). When
      ``R_g^T R1 w2`` lies along ``w6`` (wrist singularity) q6 is 0.
    * ``H = E1^-1 g (E5 E6)^-1 = E2 E3 E4`` moves the point ``p4`` of axis 4
      like ``E2 E3``: a planar 2R problem (q3 two branches, then q2), and q4
      turns ``R3^T R2^T R_H`` about ``w4``.

Both give up to eight branches. A model is of a family when its six DoF are
revolute joints along one serial chain to the default end effector and the
axes have the family's structure (to ``AXIS_TOL``); the product of
exponentials is then checked against ``model.fk`` at fixed configurations
before it is used.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...model import JointType, Model

__all__ = ["Screw6R", "describe_6r", "ik_screw_6r"]

AXIS_TOL = 1e-9  # [rad] and [m] relative to the arm size: parallel / intersecting axes
CLIP_TOL = 1e-9  # x arm size: a target this far outside the workspace is rounding noise
MERGE_TOL = 1e-12  # x arm size: this close to a workspace boundary, two branches are one
FREE_TOL = 1e-10  # a vector this close to its rotation axis leaves the angle free (set to 0)
FK_CHECK_TOL = 1e-9  # [m] and [-]: the screw model must reproduce model.fk this well

_PROBE = np.array(
    [[math.sin(1.3 * (j + 1) * (k + 2)) * 2.9 for j in range(6)] for k in range(3)]
)  # fixed configurations [rad] for the FK check


@dataclass(frozen=True)
class Screw6R:
    """A recognised 6R arm: its axes at ``q = 0`` in chain order and its family.

    ``kind``: ``"spherical_wrist"`` or ``"ur"``. ``order[i]``: the DoF index of
    the i-th joint from the base. ``w``: ``(6, 3)`` unit axis directions;
    ``p``: ``(6, 3)`` a point on each axis [m]; ``center``: the wrist centre
    (spherical) or the meeting point of axes 5 and 6 (UR) [m]; ``M``: the tool
    pose at ``q = 0``; ``scale``: the arm's size [m].
    """

    kind: str
    order: tuple[int, ...]
    w: np.ndarray
    p: np.ndarray
    center: np.ndarray
    M: np.ndarray
    scale: float


# --- rotations and subproblems --------------------------------------------------------


def _cross(a: np.ndarray | Sequence[float], b: np.ndarray | Sequence[float]) -> np.ndarray:
    """``a x b`` for 3-vectors (``np.cross`` costs ten times more on one pair)."""
    a0, a1, a2 = float(a[0]), float(a[1]), float(a[2])
    b0, b1, b2 = float(b[0]), float(b[1]), float(b[2])
    return np.array([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0])


def _rot(w: np.ndarray, t: float) -> np.ndarray:
    """Rotation matrix by ``t`` [rad] about the unit vector ``w`` (Rodrigues)."""
    c, s = math.cos(t), math.sin(t)
    x, y, z = w
    K = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
    return np.eye(3) + s * K + (1.0 - c) * (K @ K)


def _motion(w: np.ndarray, p: np.ndarray, t: float) -> np.ndarray:
    """4x4 rotation by ``t`` about the line through ``p`` along ``w``."""
    R = _rot(w, t)
    out = np.eye(4)
    out[:3, :3] = R
    out[:3, 3] = p - R @ p
    return out


def _perp(v: np.ndarray, w: np.ndarray) -> np.ndarray:
    return v - w * float(w @ v)


def _angle_about(w: np.ndarray, u: np.ndarray, v: np.ndarray) -> float:
    """Subproblem 1: the angle turning ``u`` towards ``v`` about ``w`` (0 when free)."""
    u_p, v_p = _perp(u, w), _perp(v, w)
    if float(np.linalg.norm(u_p)) < FREE_TOL or float(np.linalg.norm(v_p)) < FREE_TOL:
        return 0.0
    return math.atan2(float(w @ _cross(u_p, v_p)), float(u_p @ v_p))


def _cos_sin(A: float, B: float, C: float, scale: float) -> list[float]:
    """Every ``t`` with ``A cos t + B sin t = C``: two, one (tangent) or none.

    ``rho cos(t - phi) = C`` with ``rho = |(A, B)|``; ``C`` at most
    ``CLIP_TOL * scale`` beyond ``rho`` is clipped onto it. When ``A = B = C = 0``
    every ``t`` solves it (a singular arm) and ``[0.0]`` stands for them all.
    """
    rho = math.hypot(A, B)
    phi = math.atan2(B, A)
    gap = rho - abs(C)
    if not math.isfinite(gap):
        return []
    if rho < FREE_TOL * scale:  # t does not matter (e.g. wrist centre on axis 1): t = 0
        return [0.0] if abs(C) <= CLIP_TOL * scale else []
    if gap < -CLIP_TOL * scale:
        return []
    if gap <= MERGE_TOL * scale:
        return [phi + (0.0 if C >= 0.0 else math.pi)]
    k = math.sqrt(gap * (rho + abs(C)))
    return [phi + math.atan2(k, C), phi + math.atan2(-k, C)]


def _two_axes(
    w1: np.ndarray, w2: np.ndarray, u: np.ndarray, v: np.ndarray
) -> list[tuple[float, float]]:
    """Subproblem 2: every ``(t1, t2)`` with ``Rot(w1, t1) Rot(w2, t2) u = v`` (unit vectors).

    The middle vector ``m = Rot(w2, t2) u = Rot(w1, -t1) v`` has ``w2 . m = w2 . u``,
    ``w1 . m = w1 . v`` and ``|m| = 1``: ``m = a w1 + b w2 + g (w1 x w2)`` with
    two signs of ``g``.
    """
    cw = float(w1 @ w2)
    n = _cross(w1, w2)
    n2 = float(n @ n)
    den = cw * cw - 1.0
    a = (cw * float(w2 @ u) - float(w1 @ v)) / den
    b = (cw * float(w1 @ v) - float(w2 @ u)) / den
    g2 = (1.0 - a * a - b * b - 2.0 * a * b * cw) / n2
    if g2 < -CLIP_TOL:
        return []
    gs = [0.0] if g2 <= 0.0 else [math.sqrt(g2), -math.sqrt(g2)]
    out = []
    for g in gs:
        m = a * w1 + b * w2 + g * n
        out.append((_angle_about(w1, m, v), _angle_about(w2, u, m)))
    return out


def _planar(arm: Screw6R, j: int, x0: np.ndarray, x: np.ndarray) -> list[tuple[float, float]]:
    """Every ``(t_j, t_{j+1})`` with ``E_j E_{j+1} x0 = x`` for parallel axes j, j+1.

    Subproblem 3 for ``t_{j+1}`` (the distance of ``E_{j+1} x0`` from axis j),
    then subproblem 1 for ``t_j``.
    """
    w, pa, pb = arm.w[j], arm.p[j], arm.p[j + 1]
    u = _perp(x0 - pb, w)
    s = _perp(pb - pa, w)
    d = _perp(x - pa, w)
    C = 0.5 * (float(d @ d) - float(u @ u) - float(s @ s))
    out = []
    for t_b in _cos_sin(float(s @ u), float(s @ _cross(w, u)), C, arm.scale**2):
        y = _rot(w, t_b) @ (x0 - pb) + pb
        out.append((_angle_about(w, y - pa, x - pa), t_b))
    return out


def _first_joint(arm: Screw6R, x: np.ndarray) -> list[float]:
    """Every ``q1`` with ``w2 . (E1^-1 x - p2) = w2 . (center - p2)``."""
    w1, p1, w2, p2 = arm.w[0], arm.p[0], arm.w[1], arm.p[1]
    r = x - p1
    r_par = w1 * float(w1 @ r)
    # E1(-t) x - p1 = r_par + cos t r_perp - sin t (w1 x r)
    A = float(w2 @ (r - r_par))
    B = -float(w2 @ _cross(w1, r))
    C = float(w2 @ (arm.center - p2)) - float(w2 @ (p1 - p2)) - float(w2 @ r_par)
    return _cos_sin(A, B, C, arm.scale)


def ik_screw_6r(arm: Screw6R, T: np.ndarray) -> np.ndarray:
    """Every joint vector ``(n, 6)`` [rad, DoF order] with ``T(q) = T``; no limits applied."""
    g = T @ np.linalg.inv(arm.M)
    R_g = g[:3, :3]
    x = R_g @ arm.center + g[:3, 3]
    w, p = arm.w, arm.p
    sols: list[list[float]] = []
    for q1 in _first_joint(arm, x):
        E1_inv = _motion(w[0], p[0], -q1)
        x1 = E1_inv[:3, :3] @ x + E1_inv[:3, 3]
        if arm.kind == "spherical_wrist":
            for q2, q3 in _planar(arm, 1, arm.center, x1):
                R123 = _rot(w[0], q1) @ _rot(w[1], q2) @ _rot(w[2], q3)
                R_w = R123.T @ R_g
                for q4, q5 in _two_axes(w[3], w[4], w[5], R_w @ w[5]):
                    R6 = (_rot(w[3], q4) @ _rot(w[4], q5)).T @ R_w
                    e = _cross(w[5], [1.0, 0.0, 0.0])
                    if float(np.linalg.norm(e)) < 0.5:
                        e = _cross(w[5], [0.0, 1.0, 0.0])
                    q6 = _angle_about(w[5], e, R6 @ e)
                    sols.append([q1, q2, q3, q4, q5, q6])
        else:
            a = R_g.T @ _rot(w[0], q1) @ w[1]
            for q5, q6 in _two_axes(w[4], w[5], a, w[1]):
                H = E1_inv @ g @ np.linalg.inv(_motion(w[4], p[4], q5) @ _motion(w[5], p[5], q6))
                x4 = H[:3, :3] @ p[3] + H[:3, 3]
                for q2, q3 in _planar(arm, 1, p[3], x4):
                    R4 = (_rot(w[1], q2) @ _rot(w[2], q3)).T @ H[:3, :3]
                    e = _cross(w[3], [1.0, 0.0, 0.0])
                    if float(np.linalg.norm(e)) < 0.5:
                        e = _cross(w[3], [0.0, 1.0, 0.0])
                    q4 = _angle_about(w[3], e, R4 @ e)
                    sols.append([q1, q2, q3, q4, q5, q6])
    if not sols:
        return np.zeros((0, 6))
    chain = np.array([_refine(arm, np.array(q), T) for q in sols])
    out = np.empty_like(chain)
    out[:, list(arm.order)] = chain
    return out


def _refine(arm: Screw6R, q: np.ndarray, T: np.ndarray, steps: int = 2) -> np.ndarray:
    """``q`` (chain order) after Gauss-Newton steps on the screw model towards ``T``.

    Near a singularity (``sin q5 ~ 0``, a stretched elbow) the square roots above
    lose half the digits; two least-squares steps on the spatial Jacobian restore
    them (the closed form already lies in the right basin).
    """
    for _ in range(steps):
        G = np.eye(4)
        J = np.empty((6, 6))
        for i in range(6):
            w_i = G[:3, :3] @ arm.w[i]
            p_i = G[:3, :3] @ arm.p[i] + G[:3, 3]
            J[3:, i] = w_i
            J[:3, i] = _cross(p_i, w_i)  # spatial twist: v = -w x p
            G = G @ _motion(arm.w[i], arm.p[i], float(q[i]))
        F = G @ arm.M
        dR = T[:3, :3] @ F[:3, :3].T
        d_rot = 0.5 * np.array([dR[2, 1] - dR[1, 2], dR[0, 2] - dR[2, 0], dR[1, 0] - dR[0, 1]])
        d_pos = T[:3, 3] - F[:3, 3] - _cross(d_rot, F[:3, 3])
        err = np.concatenate([d_pos, d_rot])
        if float(np.max(np.abs(err))) < 1e-13 * arm.scale:  # already exact
            break
        q = q + np.linalg.lstsq(J, err, rcond=1e-12)[0]
    return q


# --- recognition ----------------------------------------------------------------------


def _screw_fk(arm: Screw6R, q: np.ndarray) -> np.ndarray:
    T = np.eye(4)
    for i, j in enumerate(arm.order):
        T = T @ _motion(arm.w[i], arm.p[i], float(q[j]))
    return T @ arm.M


def _parallel(a: np.ndarray, b: np.ndarray) -> bool:
    return float(np.linalg.norm(_cross(a, b))) <= AXIS_TOL


def _meeting_point(
    ws: list[np.ndarray], ps: list[np.ndarray], scale: float
) -> tuple[np.ndarray | None, float]:
    """The point common to the lines ``(p_i, w_i)`` (least squares) and its worst distance."""
    A = sum(np.eye(3) - np.outer(w, w) for w in ws)
    b = sum((np.eye(3) - np.outer(w, w)) @ p for w, p in zip(ws, ps))
    if abs(float(np.linalg.det(A))) < 1e-12:
        return None, math.inf
    c = np.linalg.solve(A, b)
    worst = max(float(np.linalg.norm(_perp(c - p, w))) for w, p in zip(ws, ps))
    return (c if worst <= AXIS_TOL * scale else None), worst


def describe_6r(model: Model) -> tuple[Screw6R | None, str]:
    """The recognised arm (or None) and, when None, what is missing, in words."""
    if model.dof != 6:
        return None, f"it has {model.dof} DoF, not 6"
    if np.any(model.qv.dof_type != JointType.REVOLUTE):
        return None, "not every DoF is a revolute joint"
    nodes = np.asarray(model.qv.dof_node)
    if np.any(nodes < 0):
        return None, "some DoF drive only mimic/scaled joints"
    tip = model.frame_index(None)
    on_chain = set(int(k) for k in model.ancestors(tip)) | {tip}
    if not all(int(k) in on_chain for k in nodes):
        return None, "its six joints do not lie on one chain to the end effector"
    order = tuple(
        int(j) for j in sorted(range(6), key=lambda j: len(model.ancestors(int(nodes[j]))))
    )
    q0 = np.zeros(6)
    M = np.asarray(model.fk(q0), dtype=np.float64)
    J = np.asarray(model.jacobian(q0), dtype=np.float64)
    ws, ps = [], []
    for j in order:
        wj, vj = J[3:, j], J[:3, j]
        if abs(float(np.linalg.norm(wj)) - 1.0) > 1e-9:
            return (
                None,
                f"joint {model.joint_names[j]!r} does not turn the end effector at unit rate",
            )
        ws.append(wj / float(np.linalg.norm(wj)))
        ps.append(M[:3, 3] + _cross(wj, vj))
    w, p = np.array(ws), np.array(ps)
    scale = 1.0 + float(np.max(np.linalg.norm(p - M[:3, 3], axis=1)))
    missing: list[str] = []
    found: Screw6R | None = None
    if _parallel(w[0], w[1]):
        return None, "axes 1 and 2 are parallel"
    if not _parallel(w[1], w[2]):
        return None, "axes 2 and 3 are not parallel"
    # spherical wrist
    c, dist = _meeting_point([w[3], w[4], w[5]], [p[3], p[4], p[5]], scale)
    if c is None:
        missing.append(f"axes 4, 5, 6 do not meet in one point (off by {dist:.3g} m)")
    elif _parallel(w[3], w[4]) or _parallel(w[4], w[5]):
        missing.append("axis 5 is parallel to axis 4 or 6")
    else:
        found = Screw6R("spherical_wrist", order, w, p, c, M, scale)
    if found is None:
        c, dist = _meeting_point([w[4], w[5]], [p[4], p[5]], scale)
        if not _parallel(w[2], w[3]):
            missing.append("axes 2, 3, 4 are not parallel (UR family)")
        elif c is None:
            missing.append(f"axes 5 and 6 do not meet (off by {dist:.3g} m)")
        elif _parallel(w[3], w[4]) or _parallel(w[4], w[5]):
            missing.append("axis 5 is parallel to axis 4 or 6")
        else:
            found = Screw6R("ur", order, w, p, c, M, scale)
    if found is None:
        return None, "; ".join(missing)
    for q in _PROBE:
        if not np.allclose(_screw_fk(found, q), model.fk(q), rtol=0.0, atol=FK_CHECK_TOL * scale):
            return None, "its forward kinematics is not a product of the six joint rotations"
    return found, ""
