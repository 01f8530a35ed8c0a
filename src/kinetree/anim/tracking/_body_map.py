"""A person's head and hands as a humanoid robot's targets (the teleoperation map).

:class:`RobotBody` is what teleoperation needs to know of a robot, found once from its
body parts (:func:`~kinetree.io.body_parts.find_body_parts`, or ``roles=``): its axes,
a standing posture with both soles on the floor ``up = 0`` and the knees a little bent,
the feet's poses there, its shoulders and arm reach, and its *head point*:

* the head frame's origin where it is above the shoulders (a skeleton's head joint);
* else the centre of the head frame's own geometry (its mesh), where that is above the
  shoulders (the G1's ``head_link`` has its origin at the pelvis, its mesh on top);
* else a point above the shoulders' midpoint by :data:`HEAD_OVER_SHOULDERS` of the
  shoulders' height over the floor (human proportions).

:class:`HeadHandsMap` takes one frame of a person's head pose and hand poses (or hand
positions), in the person's space and units, to that robot's head point and hands,
calibrated on the person's first frame (standing, looking ahead, hands low):

* axes: the person's up (given, or the world axis nearest the hands-to-head direction)
  and left (the right hand to the left one, level) against the robot's; ``C`` turns
  one set into the other;
* head: ``p_r = o_r + s C (p - o_p)``, ``o`` the floor point under the calibrated head
  (the person's following a walking person with ``follow=`` seconds), ``s`` the robot's
  head-point height over the person's head height;
* hands: from the shoulders' midpoint, estimated as the head point lowered by the
  shoulders' drop below it (the person's model's, or human proportions), at the arm
  reach ratio ``s_arm``: ``p_r = m_r + s_arm C (p - m_p)``;
* orientations: the change since calibration, seen in the robot's axes, applied to the
  robot's calibration orientation: ``R_r = C (R R_0^T) C^T R_r0``.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...errors import InvalidValueError, UnsupportedError
from ...ik.targets import Pose, Position
from ...model import Model
from ..retarget.feet import sole_height
from ..retarget.robots import joint_centre
from ._skeleton import Skeleton, skeleton

__all__ = [
    "ARM_REACH",
    "CROUCH",
    "HEAD_MODES",
    "HEAD_OVER_SHOULDERS",
    "SHOULDER_DROP",
    "HeadHandsMap",
    "RobotBody",
    "robot_body",
]

#: The head's centre above the shoulders' line, as a fraction of the shoulders' height
#: above the floor: (0.936 - 0.818) / 0.818 of the segment proportions of Drillis and
#: Contini (1966), as tabulated in Winter, *Biomechanics and Motor Control of Human
#: Movement* (eye level 0.936 H, shoulder 0.818 H).
HEAD_OVER_SHOULDERS = 0.144
#: A person's shoulder line below the head's centre, as a fraction of the head's
#: height above the floor ((0.936 - 0.818) / 0.936 of the same table), when no model
#: of the person is given.
SHOULDER_DROP = 0.126
#: A person's reach from the shoulders' midpoint to the wrist (half the shoulder
#: width, upper arm, forearm: 0.1295 + 0.186 + 0.146 H), as a fraction of the head's
#: height above the floor (0.936 H), when no model of the person is given.
ARM_REACH = 0.493
#: The robot's standing posture lowers its pelvis by this fraction of its leg length
#: from the straight-legged neutral (a straight knee is a singularity the solver
#: cannot bend out of, and leaves no room to stand taller).
CROUCH = 0.04
#: How far [rad] a straight knee is bent before the stance is solved.
KNEE_BEND = 0.3
#: The robot's head point leans at most this fraction of its height from above its
#: feet, and rises at most this fraction of the stance's crouch above the stance.
LEAN = 0.08
RISE = 0.5
#: A hand target is kept within this fraction of the arm's length of its shoulder (a
#: straight elbow is a singularity).
REACH = 0.97

_AXES = {"x": 0, "y": 1, "z": 2}
#: What the head's orientation drives: its turn about up only, or all of it.
HEAD_MODES = ("yaw", "pose")


def _axis(up: Any) -> np.ndarray:
    """A unit vector from ``"z"``, ``"-y"``, ``1`` or a 3-vector."""
    if isinstance(up, str):
        s = up.strip().lower()
        sign = -1.0 if s.startswith("-") else 1.0
        s = s.lstrip("+-")
        if s not in _AXES:
            raise InvalidValueError(f"up must be 'x', 'y', 'z' (optionally signed), got {up!r}")
        v = np.zeros(3)
        v[_AXES[s]] = sign
        return v
    try:
        v = np.asarray(up, dtype=np.float64).reshape(3)
    except (TypeError, ValueError):
        raise InvalidValueError(f"up must be an axis name or a 3-vector, got {up!r}") from None
    n = float(np.linalg.norm(v))
    if not np.isfinite(n) or n < 1e-9:
        raise InvalidValueError(f"up must be a finite non-zero vector, got {up!r}")
    return v / n


def _level(v: np.ndarray, up: np.ndarray) -> np.ndarray | None:
    """``v`` made perpendicular to ``up`` and unit, or None where it is (nearly) along it."""
    w = v - up * float(v @ up)
    n = float(np.linalg.norm(w))
    return None if n < 1e-9 else w / n


def _rotation_between(a: np.ndarray, b: np.ndarray, axis: np.ndarray) -> np.ndarray:
    """The rotation about ``axis`` taking the direction ``a`` to ``b`` (both level)."""
    return _rotation_about(axis, float(np.arctan2(float(np.cross(a, b) @ axis), float(a @ b))))


def _rotation_about(axis: np.ndarray, angle: float) -> np.ndarray:
    """The rotation by ``angle`` [rad] about the unit ``axis``."""
    K = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]])
    return np.eye(3) + np.sin(angle) * K + (1.0 - np.cos(angle)) * (K @ K)


def _yaw_of(R: np.ndarray, forward: np.ndarray, up: np.ndarray) -> np.ndarray:
    """The rotation about ``up`` that turns ``forward`` (level) as ``R`` turns it."""
    turned = _level(R @ forward, up)
    if turned is None:
        return np.eye(3)
    ahead = _level(forward, up)
    return _rotation_between(forward if ahead is None else ahead, turned, up)


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
    left = _level(body.left, up)
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


@dataclass
class _Calibration:
    C: np.ndarray  # person axes -> robot axes
    up: np.ndarray  # the person's up
    origin: np.ndarray  # the person's floor point under the calibrated head
    velocity: np.ndarray  # the origin's velocity per frame (``follow=``)
    forward: np.ndarray  # the person's forward at calibration
    scale: float
    arm_scale: float
    drop: float  # the person's shoulder drop below the head [person unit]
    R0: dict[str, np.ndarray]  # the person's calibration orientations, by role
    R_robot: dict[str, np.ndarray]  # the robot's calibration orientations, by role
    heading: float = 0.0  # the followed turn of the head about up [rad]
    heading_rate: float = 0.0  # its rate [rad per frame]
    heading_raw: float = 0.0  # the last unwrapped turn of the head [rad]


ROLES = ("head", "wrist_l", "wrist_r")


class HeadHandsMap:
    """Maps a person's head pose and hand poses (or positions) to a robot's targets;
    see the module docstring.

    Args:
        body: the robot (:func:`robot_body`).
        up: the person's up: ``"y"``, ``"-z"``, a 3-vector, or None (the world axis
            nearest the hands-to-head direction at calibration).
        floor: the person's floor height along ``up`` [person's unit].
        scale: robot metres per person unit for the body (None: head heights' ratio).
        arm_scale: the same for the arms (None: arm reaches' ratio).
        proportions: the person's shoulders' drop below the head and arm reach, as
            fractions of the head's height above the floor (None each: human
            proportions, :data:`SHOULDER_DROP` and :data:`ARM_REACH`).
        follow: time constant [s] with which the person's floor origin follows the
            head's level position (a person who walks about stays in the robot's reach;
            None: fixed at calibration).
        fps: frames per second (for ``follow``).
        head: ``"yaw"``: the robot's head turns as the person's head turns about up,
            its tilt left to the solve (a robot without a neck tilts its whole torso
            with its head; a person nods without leaning); ``"pose"``: the whole turn.
    """

    def __init__(
        self,
        body: RobotBody,
        *,
        up: Any = None,
        floor: float = 0.0,
        scale: float | None = None,
        arm_scale: float | None = None,
        proportions: tuple[float | None, float | None] = (None, None),
        follow: float | None = None,
        fps: float = 30.0,
        head: str = "yaw",
    ) -> None:
        if head not in HEAD_MODES:
            raise InvalidValueError(f"head must be one of {', '.join(HEAD_MODES)}, got {head!r}")
        self.head = head
        self.body = body
        self.up = None if up is None else _axis(up)
        self.floor = float(floor)
        self.scale = scale
        self.arm_scale = arm_scale
        self.drop = SHOULDER_DROP if proportions[0] is None else float(proportions[0])
        self.reach = ARM_REACH if proportions[1] is None else float(proportions[1])
        self.follow = None if follow is None else float(np.exp(-1.0 / (follow * fps)))
        self.cal: _Calibration | None = None

    def reset(self) -> None:
        """Forget the calibration: the next frame calibrates again."""
        self.cal = None

    def calibrate(self, tg: Mapping[str, Any]) -> None:
        """Calibrate on one frame ``{role: 4x4 or Position}`` of a person standing,
        looking ahead; the robot's calibration orientations are its stance's until
        :meth:`set_robot_orientations`."""
        p = {r: _position(tg[r]) for r in ROLES}
        hands = 0.5 * (p["wrist_l"] + p["wrist_r"])
        up = self.up
        if up is None:
            d = p["head"] - hands
            k = int(np.argmax(np.abs(d)))
            up = np.zeros(3)
            up[k] = np.sign(d[k]) if d[k] != 0 else 1.0
        left = _level(p["wrist_l"] - p["wrist_r"], up)
        if left is None:
            raise InvalidValueError(
                "cannot calibrate: the hands are one above the other (stand with the left "
                "hand to the left of the right one)"
            )
        A_person = np.stack([left, up, np.cross(left, up)], axis=1)
        C = self.body.axes @ A_person.T
        h = float(p["head"] @ up) - self.floor
        if not h > 0:
            raise InvalidValueError(
                f"cannot calibrate: the head is {h:g} above the floor {self.floor:g} along up "
                "(give floor= and up= of the person's space)"
            )
        b = self.body
        drop = self.drop * h
        reach = self.reach * h
        scale = self.scale if self.scale is not None else b.head_height / h
        arm_scale = self.arm_scale if self.arm_scale is not None else b.arm_reach / reach
        origin = p["head"] - (float(p["head"] @ up) - self.floor) * up
        T = b.model.fk_all(b.stance)
        ix = b.sk.index
        R_robot = {
            "head": T[ix[b.head_frame], :3, :3].copy(),
            "wrist_l": T[ix[b.hands[0]], :3, :3].copy(),
            "wrist_r": T[ix[b.hands[1]], :3, :3].copy(),
        }
        R0 = {r: np.asarray(tg[r])[:3, :3].copy() for r in ROLES if not _is_position(tg[r])}
        self.cal = _Calibration(
            C, up, origin, np.zeros(3), A_person[:, 2].copy(), scale=scale,
            arm_scale=arm_scale, drop=float(drop), R0=R0, R_robot=R_robot,
        )  # fmt: skip

    def set_robot_orientations(self, R: Mapping[str, np.ndarray]) -> None:
        """The robot's orientations ``{role: (3, 3)}`` that the calibration frame's
        orientations map to (the robot's pose for the calibration frame)."""
        assert self.cal is not None
        self.cal.R_robot.update({r: np.asarray(m, dtype=np.float64) for r, m in R.items()})

    def __call__(self, tg: Mapping[str, Any]) -> dict[str, Any]:
        """``{robot frame: (4, 4) or Position}`` for one frame ``{role: 4x4 or
        Position}`` (head pose, wrist_l, wrist_r); calibrates on the first."""
        if self.cal is None:
            self.calibrate(tg)
        cal = self.cal
        assert cal is not None
        b = self.body
        up_r = b.up
        p_head = _position(tg["head"])
        if self.follow is not None:
            tg = self._follow(cal, tg, p_head)
            p_head = _position(tg["head"])
        # The head point: scaled from the origin, leaning and rising no further than the
        # standing robot can (its feet stay where they are).
        d = cal.scale * (cal.C @ (p_head - cal.origin))
        rise = float(d @ up_r)
        level = d - rise * up_r
        lean = float(np.linalg.norm(level))
        if lean > LEAN * b.head_height:
            level *= LEAN * b.head_height / lean
        rise = min(rise, b.head_height + RISE * b.crouch)
        head_r = b.origin + level + rise * up_r
        R_head = cal.C @ (np.asarray(tg["head"])[:3, :3] @ cal.R0["head"].T) @ cal.C.T
        if self.head == "yaw":
            R_head = _yaw_of(R_head, b.axes[:, 2], up_r)
        R_head_r = R_head @ cal.R_robot["head"]
        mid_p = p_head - cal.drop * cal.up
        mid_r = head_r - b.shoulder_drop * up_r
        out: dict[str, Any] = {}
        for k, role in enumerate(ROLES[1:]):
            t = tg[role]
            p = mid_r + cal.arm_scale * (cal.C @ (_position(t) - mid_p))
            # Within the arm's reach of its shoulder (which turns with the head).
            shoulder = head_r + R_head @ b.shoulders[k]
            v = p - shoulder
            n = float(np.linalg.norm(v))
            if n > REACH * b.arms[k]:
                p = shoulder + v * (REACH * b.arms[k] / n)
            if _is_position(t):
                out[b.hands[k]] = Position(p)
                continue
            M = np.eye(4)
            dR = np.asarray(t)[:3, :3] @ cal.R0[role].T
            M[:3, :3] = cal.C @ dR @ cal.C.T @ cal.R_robot[role]
            M[:3, 3] = p
            out[b.hands[k]] = M
        T_head = np.eye(4)
        T_head[:3, :3] = R_head_r
        T_head[:3, 3] = head_r
        if self.head == "yaw":  # the head point placed, the frame turned about up
            mask = np.abs(up_r)
            target = Pose(T_head, orientation_mask=mask, point=b.head_offset)
            return {b.head_frame: target, **out}
        return {b.head_frame: b.head_frame_pose(T_head), **out}

    def _follow(
        self, cal: _Calibration, tg: Mapping[str, Any], p_head: np.ndarray
    ) -> dict[str, Any]:
        """Move the origin toward the head's level position and the heading toward the
        head's, each by a critically damped alpha-beta filter (gains ``1 - l^2`` and
        ``(1 - l)^2``, ``l`` the decay per frame: a steady walk or turn is followed
        without lag), and return the targets turned back by that heading about the
        origin (a person who turns around stays facing the robot's way)."""
        lam = self.follow
        assert lam is not None
        a, b = 1.0 - lam * lam, (1.0 - lam) ** 2
        level = p_head - float((p_head - cal.origin) @ cal.up) * cal.up
        predicted = cal.origin + cal.velocity
        e = level - predicted
        cal.origin = predicted + a * e
        cal.velocity = cal.velocity + b * e
        turned = _level(np.asarray(tg["head"])[:3, :3] @ cal.R0["head"].T @ cal.forward, cal.up)
        if turned is not None:
            raw = float(np.arctan2(np.cross(cal.forward, turned) @ cal.up, cal.forward @ turned))
            raw += 2.0 * np.pi * round((cal.heading_raw - raw) / (2.0 * np.pi))  # unwrapped
            cal.heading_raw = raw
            predicted_h = cal.heading + cal.heading_rate
            eh = raw - predicted_h
            cal.heading = predicted_h + a * eh
            cal.heading_rate = cal.heading_rate + b * eh
        R = _rotation_about(cal.up, -cal.heading)
        out: dict[str, Any] = {}
        for role, t in tg.items():
            if isinstance(t, Position):
                out[role] = Position(cal.origin + R @ (np.asarray(t.xyz) - cal.origin))
                continue
            M = np.array(t, dtype=np.float64)
            M[:3, :3] = R @ M[:3, :3]
            M[:3, 3] = cal.origin + R @ (M[:3, 3] - cal.origin)
            out[role] = M
        return out


def _is_position(t: Any) -> bool:
    return isinstance(t, Position)


def _position(t: Any) -> np.ndarray:
    return np.asarray(t.xyz, dtype=np.float64) if isinstance(t, Position) else np.asarray(t)[:3, 3]
