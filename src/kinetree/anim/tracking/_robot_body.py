"""What teleoperation needs to know of a humanoid robot: :class:`RobotBody`, found once
by :func:`robot_body` from its body parts (:func:`~kinetree.io.body_parts.find_body_parts`,
or ``roles=``): its axes, a standing posture with both soles on the floor ``up = 0`` and
the knees a little bent, the feet's poses there, its shoulders and arm reach, and its
*head point*:

* the head frame's origin where it is above the shoulders (a skeleton's head joint);
* else the centre of the head frame's own geometry (its mesh), where that is above the
  shoulders (the G1's ``head_link`` has its origin at the pelvis, its mesh on top);
* else a point above the shoulders' midpoint by :data:`HEAD_OVER_SHOULDERS` of the
  shoulders' height over the floor (human proportions).
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...errors import InvalidValueError, UnsupportedError
from ...model import Model
from ..retarget.feet import sole_height
from ..retarget.robots import joint_centre
from ._skeleton import Skeleton, skeleton

__all__ = ["CROUCH", "HEAD_OVER_SHOULDERS", "KNEE_BEND", "RobotBody", "level", "robot_body"]

#: The head's centre above the shoulders' line, as a fraction of the shoulders' height
#: above the floor: (0.936 - 0.818) / 0.818 of the segment proportions of Drillis and
#: Contini (1966), as tabulated in Winter, *Biomechanics and Motor Control of Human
#: Movement* (eye level 0.936 H, shoulder 0.818 H).
HEAD_OVER_SHOULDERS = 0.144
#: The robot's standing posture lowers its pelvis by this fraction of its leg length
#: from the straight-legged neutral (a straight knee is a singularity the solver
#: cannot bend out of, and leaves no room to stand taller).
CROUCH = 0.04
#: How far [rad] a straight knee is bent before the stance is solved.
KNEE_BEND = 0.3


def level(v: np.ndarray, up: np.ndarray) -> np.ndarray | None:
    """``v`` made perpendicular to ``up`` and unit, or None where it is (nearly) along it."""
    w = v - up * float(v @ up)
    n = float(np.linalg.norm(w))
    return None if n < 1e-9 else w / n


def _geometry_centre(model: Model, frame: str) -> np.ndarray | None:
    """The centre of the bounding box of ``frame``'s own shapes, in the frame, or None
    where it has none that can be read."""
    points = []
    for shape in model.geometry.get(frame, ()):
        origin = np.asarray(getattr(shape, "origin", np.eye(4)), dtype=np.float64)
        if origin.shape != (4, 4):
            origin = np.eye(4)
        verts = None
        if hasattr(shape, "vertices"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # a mesh that cannot be read: no centre
                verts = shape.vertices
            if verts is None:
                continue
            verts = np.asarray(verts, dtype=np.float64)
        else:
            verts = np.zeros((1, 3))
        points.append(verts @ origin[:3, :3].T + origin[:3, 3])
    if not points:
        return None
    P = np.concatenate(points)
    return 0.5 * (P.min(axis=0) + P.max(axis=0))


@dataclass(frozen=True, eq=False)
class RobotBody:
    """A humanoid robot as teleoperation sees it; built by :func:`robot_body`.

    Attributes:
        model: the robot (with a free base).
        sk: its :class:`~._skeleton.Skeleton` (body parts, axes).
        axes: ``(3, 3)`` the body's left, up and forward as columns (world; up is
            the world axis nearest the body's).
        up: the world up (unit); the floor is ``p @ up = 0``.
        stance: ``(nq,)`` the standing posture: soles on the floor, knees bent by
            :data:`CROUCH`.
        head_frame: the frame that carries the head point.
        head_offset: ``(3,)`` the head point in ``head_frame`` [m].
        hands: ``(left, right)`` wrist frames.
        feet: ``{ankle frame: (4, 4)}`` the ankles' poses at the stance.
        origin: ``(3,)`` the floor point under the head point at the stance [m].
        head_height: the head point's height above the floor at the stance [m].
        shoulder_drop: the shoulders' midpoint below the head point at the stance [m].
        shoulders: ``(2, 3)`` the left and right shoulder centres from the head point
            at the stance [m].
        arms: ``(2,)`` shoulder to elbow to wrist, left and right [m].
        crouch: how far the stance's pelvis is below the straight-legged one [m].
        arm_reach: shoulders' midpoint to shoulder to elbow to wrist, sides averaged [m].
        arm_joints: ``{wrist frame: joints}`` from the chest (or pelvis) to the wrist.
        upper_joints: the joints above the pelvis (none of the legs' or the base's).
    """

    model: Model
    sk: Skeleton
    axes: np.ndarray
    up: np.ndarray
    stance: np.ndarray
    head_frame: str
    head_offset: np.ndarray
    hands: tuple[str, str]
    feet: dict[str, np.ndarray]
    origin: np.ndarray
    head_height: float
    shoulder_drop: float
    shoulders: np.ndarray
    arms: np.ndarray
    crouch: float
    arm_reach: float
    arm_joints: dict[str, tuple[str, ...]]
    upper_joints: tuple[str, ...]

    def head_pose(self, T_frame: np.ndarray) -> np.ndarray:
        """The head point's pose ``(4, 4)`` given the head frame's pose."""
        T = T_frame.copy()
        T[:3, 3] = T_frame[:3, :3] @ self.head_offset + T_frame[:3, 3]
        return T

    def head_frame_pose(self, T_point: np.ndarray) -> np.ndarray:
        """The head frame's pose ``(4, 4)`` that puts the head point at ``T_point``."""
        T = T_point.copy()
        T[:3, 3] = T_point[:3, 3] - T_point[:3, :3] @ self.head_offset
        return T


_NEEDED = ("shoulder_l", "shoulder_r", "wrist_l", "wrist_r", "ankle_l", "ankle_r", "hip_l")


def robot_body(
    robot: Model, roles: Mapping[str, str] | None = None, stance: Any = None
) -> RobotBody:
    """The :class:`RobotBody` of ``robot`` (a model with a free base).

    Args:
        robot: a humanoid with a floating base (``kinetree.anim.load_robot`` gives one).
        roles: ``{role: frame}`` replacing or adding to the found body parts.
        stance: ``(nq,)`` a standing configuration to use as it is; None: the neutral
            placed on the floor with the knees bent by :data:`CROUCH`.

    Raises :class:`~kinetree.errors.UnsupportedError` for a robot without a free base or
    without shoulders, wrists, hips and ankles on both sides and a head, neck or chest.
    """
    if robot.floating_base is None:
        raise UnsupportedError(
            f"teleoperation needs a robot with a free base; {robot.name!r} has none "
            "(kinetree.anim.load_robot or free_base(model) gives one)"
        )
    sk = skeleton(robot, roles)
    parts = sk.parts
    missing = [r for r in _NEEDED if r not in parts]
    head_role = next((r for r in ("head", "neck", "chest") if r in parts), None)
    if missing or head_role is None:
        need = missing + ([] if head_role else ["head (or neck or chest)"])
        raise UnsupportedError(
            f"robot {robot.name!r} lacks the body parts {', '.join(need)} that teleoperation "
            f"needs; found {sorted(parts)} (give roles={{role: frame}} to name them)"
        )
    body = sk.body
    up = np.zeros(3)
    up[sk.up_axis] = np.sign(body.up[sk.up_axis])
    left = level(body.left, up)
    if left is None:
        raise UnsupportedError(
            f"robot {robot.name!r}: its left and right sides are one above the other"
        )
    axes = np.stack([left, up, np.cross(left, up)], axis=1)
    ankles = (parts["ankle_l"], parts["ankle_r"])
    crouch = 0.0
    if stance is None:
        q, crouch = _stance(robot, sk, up, ankles)
    else:
        q = np.asarray(stance, dtype=np.float64)
        if q.shape != (robot.nq,) or not np.all(np.isfinite(q)):
            raise InvalidValueError(
                f"stance must be {robot.nq} finite numbers (one configuration), got shape {q.shape}"
            )
        q = robot.normalize(q)
    T = robot.fk_all(q)
    ix = sk.index
    chest = parts.get("chest", parts["pelvis"])
    shoulders = [joint_centre(robot, q, parts[f"shoulder_{s}"], chest) for s in ("l", "r")]
    mid = 0.5 * (shoulders[0] + shoulders[1])
    floor_to_mid = float(mid @ up)
    head_frame = parts[head_role]
    T_head = T[ix[head_frame]]
    margin = 0.05 * sk.height
    offset = np.zeros(3)
    if float((T_head[:3, 3] - mid) @ up) < margin:
        centre = _geometry_centre(robot, head_frame)
        p = None if centre is None else T_head[:3, :3] @ centre + T_head[:3, 3]
        if p is None or float((p - mid) @ up) < margin:
            p = mid + HEAD_OVER_SHOULDERS * floor_to_mid * up
        offset = T_head[:3, :3].T @ (p - T_head[:3, 3])
    p_head = T_head[:3, :3] @ offset + T_head[:3, 3]
    reach, arms = [], []
    arm_joints: dict[str, tuple[str, ...]] = {}
    for k, s in enumerate(("l", "r")):
        elbow = T[ix[parts[f"elbow_{s}"]], :3, 3] if f"elbow_{s}" in parts else None
        wrist = T[ix[parts[f"wrist_{s}"]], :3, 3]
        if elbow is not None:
            arm = float(np.linalg.norm(elbow - shoulders[k]) + np.linalg.norm(wrist - elbow))
        else:
            arm = float(np.linalg.norm(wrist - shoulders[k]))
        arms.append(arm)
        reach.append(arm + float(np.linalg.norm(shoulders[k] - mid)))
        arm_joints[parts[f"wrist_{s}"]] = robot.chain(parts[f"wrist_{s}"], chest)
    return RobotBody(
        model=robot,
        sk=sk,
        axes=axes,
        up=up,
        stance=q,
        head_frame=head_frame,
        head_offset=offset,
        hands=(parts["wrist_l"], parts["wrist_r"]),
        feet={a: T[ix[a]].copy() for a in ankles},
        origin=p_head - float(p_head @ up) * up,
        head_height=float(p_head @ up),
        shoulder_drop=float((p_head - mid) @ up),
        shoulders=np.stack([shoulders[0] - p_head, shoulders[1] - p_head]),
        arms=np.asarray(arms),
        crouch=crouch,
        arm_reach=float(np.mean(reach)),
        arm_joints=arm_joints,
        upper_joints=_upper_joints(robot, parts),
    )


def _stance(
    robot: Model, sk: Skeleton, up: np.ndarray, ankles: tuple[str, str]
) -> tuple[np.ndarray, float]:
    """The neutral on the floor, the pelvis lowered by :data:`CROUCH` of the leg, and
    how far it was lowered [m] (0 where the solve failed)."""
    q = robot.neutral()
    T = robot.fk_all(q)
    ix = sk.index
    lows = []
    for s, a in zip(("l", "r"), ankles):
        sole = [sk.parts[r] for r in (f"ankle_{s}", f"toe_{s}") if r in sk.parts]
        heights = [float(T[ix[f], :3, 3] @ up) for f in sole]
        lows.append(min(min(heights), float(T[ix[a], :3, 3] @ up) - sole_height(robot, q, a)))
    q = sk.shift_base(q, -min(lows) * up)
    parts = sk.parts
    legs = []
    for s in ("l", "r"):
        chain = [f"hip_{s}", f"knee_{s}", f"ankle_{s}"]
        pts = [T[ix[parts[r]], :3, 3] for r in chain if r in parts]
        legs.append(sum(float(np.linalg.norm(b - a)) for a, b in itertools.pairwise(pts)))
    T = robot.fk_all(q)
    pelvis = parts["pelvis"]
    T_pelvis = T[ix[pelvis]].copy()
    drop = CROUCH * float(np.mean(legs))
    T_pelvis[:3, 3] -= drop * up
    targets = {pelvis: T_pelvis, **{a: T[ix[a]].copy() for a in ankles}}
    q0 = _bent_knees(robot, sk, q)
    r = robot.ik(targets, q0=q0, method="dls", max_iter=200, restarts=0, time_budget=None)
    if not bool(np.all(r.success)):
        return q, 0.0
    return np.asarray(r.q, dtype=np.float64), drop


def _upper_joints(robot: Model, parts: Mapping[str, str]) -> tuple[str, ...]:
    """The joints that move the head or a wrist but neither the pelvis nor an ankle."""
    below = set(robot.chain(parts["pelvis"]))
    for s in ("l", "r"):
        below |= set(robot.chain(parts[f"ankle_{s}"]))
    above: list[str] = []
    for role in ("head", "neck", "chest", "wrist_l", "wrist_r"):
        if role in parts:
            above += [j for j in robot.chain(parts[role]) if j not in below and j not in above]
    return tuple(above)


def _bent_knees(robot: Model, sk: Skeleton, q: np.ndarray) -> np.ndarray:
    """``q`` with each one-axis knee joint bent by :data:`KNEE_BEND` the way that moves
    the ankle backward (a straight knee is a singularity for lowering the pelvis)."""
    q = q.copy()
    back = -sk.body.forward
    for s in ("l", "r"):
        knee, ankle = sk.parts.get(f"knee_{s}"), sk.parts.get(f"ankle_{s}")
        if knee is None or ankle is None or not robot.chain(knee):
            continue
        sl = robot.q_slice(robot.chain(knee)[-1])
        if sl.stop - sl.start != 1:
            continue
        lo, hi = robot.limits[sl.start]
        p0 = robot.fk(q, ankle)[:3, 3]
        best, gain = None, 0.0
        for sign in (1.0, -1.0):
            trial = q.copy()
            trial[sl.start] = np.clip(q[sl.start] + sign * KNEE_BEND, lo, hi)
            moved = float((robot.fk(trial, ankle)[:3, 3] - p0) @ back)
            if moved > gain:
                best, gain = trial, moved
        if best is not None:
            q = best
    return q
