"""Two-bone IK in closed form, with a pole target: a leg (hip, knee, ankle) or an arm
(shoulder, elbow, wrist) put on a target with its knee or elbow pointing where asked.

Geometry (:func:`two_bone_points`): with root ``a``, bone lengths ``l1``, ``l2`` and the
target ``t`` at distance ``d = |t - a|`` (clamped to ``[|l1 - l2|, l1 + l2]``), the
middle joint lies at ``a + l1 (cos(alpha) u + sin(alpha) p)``, where ``u`` is the unit
vector to the target, ``cos(alpha) = (l1^2 + d^2 - l2^2) / (2 l1 d)`` (law of cosines)
and ``p`` the unit part of ``pole - a`` perpendicular to ``u``: the knee *points at*
the pole. :func:`pole_angle` measures that: the angle between the middle joint's
perpendicular offset from the root-to-tip line and the pole's.

On a model (:func:`solve_two_bone`): the middle joint is a hinge (one revolute DoF),
the root a ball joint (a quaternion, or three revolute axes at one point such as a BVH
joint or kinetree's humanoid shoulder). The hinge angle that gives the root-to-tip
distance ``d`` solves ``A cos(theta) + B sin(theta) + C = d^2`` exactly; the root then
turns by the one rotation that takes the (root to tip, root to middle) pair of the bent
chain onto the wanted pair, and that rotation is written into the root's coordinates
(three Euler angles by a few Newton steps on a 3x3 system, to machine precision).
Joint limits are not applied: check ``model.within_limits`` or polish with ``Model.ik``.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ..._validate import as_array
from ...errors import InvalidValueError, UnsupportedError
from ...model import JointType, Model
from ...spatial import matrix_to_axis_angle, matrix_to_quaternion, quat_mul, quaternion_to_matrix
from .fabrik import node_pose

__all__ = ["pole_angle", "solve_two_bone", "two_bone_points"]


def _unit(v: np.ndarray) -> np.ndarray:
    n = float(np.linalg.norm(v))
    return v / n if n > 1e-300 else np.zeros_like(v)


def _perpendicular(v: np.ndarray, u: np.ndarray) -> np.ndarray:
    """The unit part of ``v`` perpendicular to the unit ``u`` (zero when parallel)."""
    return _unit(v - (v @ u) * u)


def pole_angle(root: ArrayLike, mid: ArrayLike, tip: ArrayLike, pole: ArrayLike) -> float:
    """Angle [rad] between where the middle joint points (its offset from the
    root-to-tip line) and where the pole is (its offset from the same line)."""
    a, b, c, p = (
        as_array(x, name, (3,))
        for x, name in ((root, "root"), (mid, "mid"), (tip, "tip"), (pole, "pole"))
    )
    u = _unit(c - a)
    m, w = _perpendicular(b - a, u), _perpendicular(p - a, u)
    return float(math.atan2(np.linalg.norm(np.cross(m, w)), float(m @ w)))


def two_bone_points(
    root: ArrayLike,
    mid: ArrayLike,
    tip: ArrayLike,
    target: ArrayLike,
    pole: ArrayLike | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``(mid, tip)`` positions [m] that put the tip on ``target`` (or as near as the
    bones reach, straight towards it), keeping the bone lengths of ``root``-``mid``-
    ``tip``, the middle joint pointing at ``pole`` (default: where it points now)."""
    a, b, c, t = (
        as_array(x, name, (3,))
        for x, name in ((root, "root"), (mid, "mid"), (tip, "tip"), (target, "target"))
    )
    l1, l2 = float(np.linalg.norm(b - a)), float(np.linalg.norm(c - b))
    if l1 <= 0 or l2 <= 0:
        raise InvalidValueError("two_bone_points: both bones need a length (> 0)")
    u = _unit(t - a)
    if not np.any(u):
        u = _unit(c - a)
    d = min(max(float(np.linalg.norm(t - a)), abs(l1 - l2)), l1 + l2)
    p = _perpendicular((b if pole is None else as_array(pole, "pole", (3,))) - a, u)
    if not np.any(p):  # pole on the line: keep the bend's side, or any perpendicular
        p = _perpendicular(b - a, u)
        if not np.any(p):
            p = _perpendicular(np.eye(3)[int(np.argmin(np.abs(u)))], u)
    cos_a = min(1.0, max(-1.0, (l1 * l1 + d * d - l2 * l2) / (2.0 * l1 * d)))
    new_mid = a + l1 * (cos_a * u + math.sqrt(1.0 - cos_a * cos_a) * p)
    return new_mid, a + d * u


# --- on a model ---------------------------------------------------------------------------


def _hinge_of(model: Model, q: np.ndarray, mid: str, tip: str) -> int:
    """The node of the hinge: ``mid`` is the link one revolute joint moves (the shin);
    joints between it and ``tip`` may only turn about the tip's own point (an ankle)."""
    k = model.frame_index(mid)
    path_mid = set(model.ancestors(k).tolist())
    p_tip = model.fk(q, tip)[:3, 3]
    for n in model.ancestors(model.frame_index(tip)):
        n = int(n)
        if n in path_mid or not model.moves(n):
            continue
        turns = model.joint_type[n] in (JointType.REVOLUTE, JointType.BALL)
        if not turns or np.linalg.norm(node_pose(model, q, n)[:3, 3] - p_tip) > 1e-9:
            raise UnsupportedError(
                f"solve_two_bone: {mid!r} must be the link of the knee or elbow, with only "
                f"joints turning about {tip!r}'s point below it; {model.node_names[n]!r} is not"
            )
    if model.joint_type[k] != JointType.REVOLUTE or model.q_scale[k] != 1.0:
        raise UnsupportedError(f"solve_two_bone: {mid!r} must hang from one revolute joint")
    return k


def _root_nodes(model: Model, root: str, hinge: int) -> list[int]:
    """The moving nodes of the root joint: between the root's parent body and the hinge."""
    path = list(model.ancestors(hinge))[:-1]
    k_root = model.frame_index(root)
    if k_root not in path:
        raise UnsupportedError(f"solve_two_bone: {root!r} is not above the hinge")
    nodes = [k for k in path[path.index(k_root) + 1 :] if model.moves(k)]
    # Joints at the root's point only: the ball (or three revolute axes at one point).
    if not nodes:
        raise UnsupportedError(f"solve_two_bone: no joint between {root!r} and the hinge")
    return nodes


def solve_two_bone(
    model: Model,
    q: ArrayLike,
    root: str,
    mid: str,
    tip: str,
    target: ArrayLike,
    pole: ArrayLike | None = None,
) -> np.ndarray:
    """A configuration with ``tip`` on ``target`` and the ``mid`` joint pointing at
    ``pole`` (world point [m]; default: where it points at ``q``); only the ball joint
    below ``root`` and the hinge of ``mid`` change. ``root``: the frame the ball joint
    hangs from (the pelvis for a hip); ``mid``: the link the hinge moves (the shin).
    """
    qa = np.array(as_array(q, "q", (model.nq,)), dtype=np.float64)
    hinge = _hinge_of(model, qa, mid, tip)
    nodes = _root_nodes(model, root, hinge)
    T = model.fk(qa, mid)
    a = _node_point(model, qa, nodes[0])
    b, c = T[:3, 3], model.fk(qa, tip)[:3, 3]
    want_mid, want_tip = two_bone_points(a, b, c, target, pole)
    d = float(np.linalg.norm(want_tip - a))
    # 1. The hinge angle giving |a - c| = d: c(theta) = b + R(axis, theta) (c - b).
    axis = T[:3, :3] @ model.axis[hinge]
    r, s = c - b, a - b
    r_par = (r @ axis) * axis
    r_perp = r - r_par
    # |c(theta) - a|^2 = |r|^2 + |s|^2 - 2 s.(r_par + cos r_perp + sin axis x r_perp)
    A = -2.0 * float(s @ r_perp)
    B = -2.0 * float(s @ np.cross(axis, r_perp))
    C = float(r @ r + s @ s) - 2.0 * float(s @ r_par) - d * d
    R_ab = math.hypot(A, B)
    phi = math.atan2(B, A)
    x = min(1.0, max(-1.0, -C / R_ab)) if R_ab > 1e-300 else 1.0
    options = [phi + math.acos(x), phi - math.acos(x)]
    qi = int(model.q_index[hinge])
    dq = min(options, key=lambda th: abs(math.remainder(th, 2 * math.pi)))
    qa[qi] += math.remainder(dq, 2 * math.pi)
    # 2. The root rotation taking the bent chain's (tip, mid) directions onto the wanted.
    b1, c1 = model.fk(qa, mid)[:3, 3], model.fk(qa, tip)[:3, 3]
    F_now = _frame(c1 - a, b1 - a)
    F_want = _frame(want_tip - a, want_mid - a)
    R = F_want @ F_now.T
    _turn_root(model, qa, nodes, R)
    return qa


def _frame(tip_dir: np.ndarray, mid_dir: np.ndarray) -> np.ndarray:
    """An orthonormal frame: x along the tip, y towards the middle joint."""
    x = _unit(tip_dir)
    y = _perpendicular(mid_dir, x)
    if not np.any(y):
        y = _perpendicular(np.eye(3)[int(np.argmin(np.abs(x)))], x)
    return np.column_stack([x, y, np.cross(x, y)])


def _node_point(model: Model, q: np.ndarray, k: int) -> np.ndarray:
    return node_pose(model, q, k)[:3, 3]


def _turn_root(model: Model, q: np.ndarray, nodes: list[int], R: np.ndarray) -> None:
    """Turn the root joint (its ``nodes``) in place so its child frame turns by the
    world rotation ``R``."""
    last = nodes[-1]
    W = node_pose(model, q, last)[:3, :3]
    want = R @ W
    if len(nodes) == 1 and model.joint_type[nodes[0]] == JointType.BALL:
        s = int(model.q_index[nodes[0]])
        # W = P Rq: the ball's own rotation changes by P^T R P (P: its parent frame).
        P = W @ quaternion_to_matrix(q[s : s + 4]).T
        dq = matrix_to_quaternion(P.T @ R @ P)
        q[s : s + 4] = quat_mul(dq, q[s : s + 4])
        return
    if any(model.joint_type[k] != JointType.REVOLUTE for k in nodes) or len(nodes) > 3:
        raise UnsupportedError(
            "solve_two_bone: the root must be a ball joint or up to three "
            "revolute axes at one point"
        )
    idx = [int(model.q_index[k]) for k in nodes]
    for _ in range(30):  # Newton on the rotation error: quadratic, 5 steps in practice
        W = node_pose(model, q, last)[:3, :3]
        E = want @ W.T
        if np.linalg.norm(matrix_to_axis_angle(E)) < 1e-15:
            break
        J = np.column_stack([node_pose(model, q, k)[:3, :3] @ model.axis[k] for k in nodes])
        q[idx] += np.linalg.lstsq(J, matrix_to_axis_angle(E), rcond=None)[0]
