"""A person's head and hands as a humanoid robot's targets (the teleoperation map).

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

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...errors import InvalidValueError
from ...ik.targets import Pose, Position
from ._robot_body import RobotBody, level

__all__ = [
    "ARM_REACH",
    "HEAD_MODES",
    "LEAN",
    "REACH",
    "RISE",
    "ROLES",
    "SHOULDER_DROP",
    "HeadHandsMap",
]

#: A person's shoulder line below the head's centre, as a fraction of the head's
#: height above the floor ((0.936 - 0.818) / 0.936 of the table of
#: :data:`~._robot_body.HEAD_OVER_SHOULDERS`), when no model
#: of the person is given.
SHOULDER_DROP = 0.126
#: A person's reach from the shoulders' midpoint to the wrist (half the shoulder
#: width, upper arm, forearm: 0.1295 + 0.186 + 0.146 H), as a fraction of the head's
#: height above the floor (0.936 H), when no model of the person is given.
ARM_REACH = 0.493
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


def _rotation_between(a: np.ndarray, b: np.ndarray, axis: np.ndarray) -> np.ndarray:
    """The rotation about ``axis`` taking the direction ``a`` to ``b`` (both level)."""
    return _rotation_about(axis, float(np.arctan2(float(np.cross(a, b) @ axis), float(a @ b))))


def _rotation_about(axis: np.ndarray, angle: float) -> np.ndarray:
    """The rotation by ``angle`` [rad] about the unit ``axis``."""
    K = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]])
    return np.eye(3) + np.sin(angle) * K + (1.0 - np.cos(angle)) * (K @ K)


def _yaw_of(R: np.ndarray, forward: np.ndarray, up: np.ndarray) -> np.ndarray:
    """The rotation about ``up`` that turns ``forward`` (level) as ``R`` turns it."""
    turned = level(R @ forward, up)
    if turned is None:
        return np.eye(3)
    ahead = level(forward, up)
    return _rotation_between(forward if ahead is None else ahead, turned, up)


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
        body: the robot (:func:`~._robot_body.robot_body`).
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
        left = level(p["wrist_l"] - p["wrist_r"], up)
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
        flat = d - rise * up_r
        lean = float(np.linalg.norm(flat))
        if lean > LEAN * b.head_height:
            flat *= LEAN * b.head_height / lean
        rise = min(rise, b.head_height + RISE * b.crouch)
        head_r = b.origin + flat + rise * up_r
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
        ground = p_head - float((p_head - cal.origin) @ cal.up) * cal.up
        predicted = cal.origin + cal.velocity
        e = ground - predicted
        cal.origin = predicted + a * e
        cal.velocity = cal.velocity + b * e
        turned = level(np.asarray(tg["head"])[:3, :3] @ cal.R0["head"].T @ cal.forward, cal.up)
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
