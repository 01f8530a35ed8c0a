"""Teleoperation: a person's head and hands drive a humanoid robot, frame by frame.

:class:`Teleop` takes one frame of a person's head pose and two hand poses (a VR
headset and its controllers, or a tracked :class:`~kinetree.anim.Motion`), maps them to
the robot's head point and hands (:class:`~._body_map.HeadHandsMap`: axes, heights and
arm reach calibrated on the first frame) and solves the robot for them with the feet
fixed where the robot stands and the floating base free:

1. **Warm start** from the last frame's configuration: the damped least-squares steps
   of ``model.ik`` (the compiled solver) move the joints as little as meets the targets,
   so what the targets leave free (the null space: the knees' bend, the elbows' swing)
   stays where it was instead of jumping; a pull of :data:`REST_GAIN` toward the robot's
   standing posture in that null space keeps it from drifting over a long stream.
2. **Joint limits** hold on every iterate (``respect_limits``).
3. **Priorities** when the targets cannot all be met (a hand beyond the robot's reach):
   the feet and the head first, then each hand best effort with its arm's joints only;
   where the head cannot be met either (a person jumping), the upper body alone (the
   legs and base still) does its best for head and hands. The result is then
   ``success=False`` and the feet never leave their place.

Causal (frame ``t`` uses frames up to ``t``), constant memory (the last configuration,
the calibration and, with ``follow=``, one filtered point).
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..._validate import check_model
from ...errors import InvalidValueError, NotRigidError, ShapeError
from ...ik.options import IKOptions
from ...ik.result import IKResult
from ...ik.targets import Pose, Position
from ...model import Model
from ...spatial import matrix_to_axis_angle
from ..motion import Motion
from ..retarget.robots import load_robot
from ._body_map import ROLES, HeadHandsMap
from ._robot_body import RobotBody, robot_body
from ._skeleton import skeleton
from .tracker import check_rate

__all__ = ["HAND_TURN_WEIGHT", "MAX_ITER", "REST_GAIN", "Teleop"]

#: Iterations of the per-frame solve (from the last frame's configuration).
MAX_ITER = 30
#: Weight [m/rad] of a hand's turn against its place in the best-effort solve of a hand
#: out of reach (its place matters more to the task).
HAND_TURN_WEIGHT = 0.05
#: Gain of the pull toward the standing posture in the targets' null space, per iteration.
REST_GAIN = 0.02

_LAST_ROW = np.array([0.0, 0.0, 0.0, 1.0])
_EYE3 = np.eye(3)


def _read_target(role: str, t: Any, key: str) -> Any:
    """The target ``key`` of body part ``role`` as a float64 4x4 pose or a
    :class:`Position`."""
    if isinstance(t, Pose):
        t = t.T
    elif isinstance(t, Position):
        t = t.xyz
    try:
        a = np.asarray(t, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidValueError(
            f"target {key!r} is not numeric (got {type(t).__name__}); give a 4x4 pose"
            + ("" if role == "head" else " or a 3-vector")
        ) from None
    if a.shape == (4, 4):
        if not np.all(np.isfinite(a)):
            raise InvalidValueError(f"target {key!r} has NaN or inf values")
        if float(np.abs(a[3] - _LAST_ROW).max()) > 1e-9:
            raise NotRigidError(
                f"pose {key!r} is not a rigid transform: its last row must be [0, 0, 0, 1]"
            )
        R = a[:3, :3]
        det = float(
            R[0, 0] * (R[1, 1] * R[2, 2] - R[1, 2] * R[2, 1])
            - R[0, 1] * (R[1, 0] * R[2, 2] - R[1, 2] * R[2, 0])
            + R[0, 2] * (R[1, 0] * R[2, 1] - R[1, 1] * R[2, 0])
        )
        if float(np.abs(R.T @ R - _EYE3).max()) > 1e-5 or det < 0:
            raise NotRigidError(f"pose {key!r} does not hold a rotation matrix")
        return a
    if a.shape == (3,) and role != "head":
        if not np.all(np.isfinite(a)):
            raise InvalidValueError(f"target {key!r} has NaN or inf values")
        return Position(a)
    want = "a 4x4 pose" + ("" if role == "head" else " or a 3-vector")
    raise ShapeError(f"target {key!r} has shape {a.shape}; expected {want}")


class Teleop:
    """A humanoid robot driven by a person's head and hands; see the module docstring.

    Args:
        robot: ``"g1"`` (example-robot-data), ``"humanoid"`` (built in), a file, or a
            :class:`~kinetree.Model` (given a free base if it has none): any robot whose
            body parts (:func:`~kinetree.io.body_parts.find_body_parts`, or ``roles=``)
            include shoulders, wrists, hips and ankles and a head, neck or chest. A head
            frame that is not at the head (the G1's sits at its pelvis) is handled: the
            robot's head point is found from its geometry or its proportions.
        fps: frames per second of the stream [1/s], > 0.
        person: the person's skeleton (a :class:`~kinetree.Model` with body parts), if
            known: its head and wrist frame names are then accepted as keys, its up axis
            and proportions used. None: a person of human proportions.
        up: the person's up axis (``"y"``, ``"-z"``, a 3-vector); None: from ``person``,
            else the world axis nearest the hands-to-head direction at calibration.
        floor: the person's floor height along ``up`` [person's length unit].
        scale, arm_scale: robot metres per person unit for the body and for the arms
            (None: the ratio of head heights and of arm reaches, at calibration).
        follow: time constant [s] with which the person's origin follows the head's
            level position (a walking person stays within the standing robot's reach);
            None: fixed where the person stood at calibration.
        head: ``"yaw"`` (default): the robot's head follows the person's head's
            position and its turn about up, its tilt left free (a robot without a neck
            would lean its whole torso for a nod); ``"pose"``: the whole orientation.
        roles: the robot's body parts, ``{role: frame}``, replacing found ones.
        person_roles: the same for ``person``.
        stance: ``(nq,)`` the robot's standing posture (None: its neutral on the floor
            ``up = 0`` with the knees a little bent).
        **ik_options: options of every ``model.ik`` call (``tol``, ``max_iter``...).

    Targets are ``{"head": 4x4, "wrist_l": 4x4 or 3-vector, "wrist_r": ...}`` in the
    person's space (or keyed by ``person``'s frames); the first frame calibrates
    (:meth:`calibrate` to do it explicitly): the person standing, looking ahead, the
    left hand to the left of the right one.

    Raises :class:`~kinetree.errors.KinetreeError` subclasses for a bad robot, rate,
    person, axis or option, before any solve.
    """

    def __init__(
        self,
        robot: str | os.PathLike[str] | Model,
        *,
        fps: float,
        person: Model | None = None,
        up: Any = None,
        floor: float = 0.0,
        scale: float | None = None,
        arm_scale: float | None = None,
        follow: float | None = None,
        head: str = "yaw",
        roles: Mapping[str, str] | None = None,
        person_roles: Mapping[str, str] | None = None,
        stance: Any = None,
        **ik_options: Any,
    ) -> None:
        self.fps = check_rate(fps)
        _check_number("floor", floor, positive=False)
        for name, v in (("scale", scale), ("arm_scale", arm_scale), ("follow", follow)):
            if v is not None:
                _check_number(name, v, positive=True)
        for bad in ("q0", "rest", "active", "pin"):
            if bad in ik_options:
                raise InvalidValueError(f"{bad}= is set by Teleop; leave it out")
        model = load_robot(robot)
        self.body: RobotBody = robot_body(model, roles, stance)
        self.robot = model
        self.keys: dict[str, str] = {r: r for r in ROLES}
        drop = reach = None
        if person is not None:
            check_model(person, "person")
            psk = skeleton(person, person_roles)
            missing = [r for r in ROLES if r not in psk.parts]
            if missing:
                raise InvalidValueError(
                    f"person {person.name!r} lacks the body parts {', '.join(missing)}; give "
                    "person_roles={role: frame}"
                )
            for r in ROLES:
                self.keys[psk.parts[r]] = r
            if up is None:  # the world axis nearest the skeleton's up (its floor's normal)
                k = int(np.argmax(np.abs(psk.body.up)))
                up = np.eye(3)[k] * np.sign(psk.body.up[k])
            drop, reach = _person_proportions(person, psk)
        self.map = HeadHandsMap(
            self.body,
            up=up,
            floor=float(floor),
            scale=scale,
            arm_scale=arm_scale,
            follow=follow,
            fps=self.fps,
            proportions=(drop, reach),
            head=head,
        )
        base: dict[str, Any] = {
            "method": "dls",
            "max_iter": MAX_ITER,
            "restarts": 0,
            "time_budget": None,
        }
        base |= ik_options
        try:
            self.options = IKOptions(**base, rest=tuple(self.body.stance), rest_gain=REST_GAIN)
            self._plain = IKOptions(**base)
            self._arm = {
                f: IKOptions(**base, active=joints) for f, joints in self.body.arm_joints.items()
            }
            self._upper = IKOptions(**base, active=self.body.upper_joints)
        except TypeError as exc:
            raise InvalidValueError(f"unknown IK option: {exc}") from None
        self.reset()

    # --- state -------------------------------------------------------------------

    def reset(self) -> None:
        """Forget the stream and the calibration: the next frame calibrates again and
        starts from the robot's standing posture."""
        self.map.reset()
        self.q_prev: np.ndarray = self.body.stance.copy()
        self.targets: dict[str, Any] = {}

    def calibrate(self, targets: Mapping[str, Any]) -> None:
        """Calibrate on ``targets`` (one frame, the person standing and looking ahead):
        the person's axes, heights and reach against the robot's, and the robot's hand
        orientations that the person's present ones stand for (the robot's arms solved
        for the hands' positions from its standing posture)."""
        tg = self._read(targets)
        self.map.calibrate(tg)
        b = self.body
        robot_tg = self.map(tg)
        loose = {
            f: (Position(t[:3, 3]) if f in b.hands and isinstance(t, np.ndarray) else t)
            for f, t in robot_tg.items()
        }
        r = self.robot.ik({**loose, **b.feet}, q0=b.stance, options=self._plain)
        T = self.robot.fk_all(r.q)
        ix = b.sk.index
        self.map.set_robot_orientations(
            {"wrist_l": T[ix[b.hands[0]], :3, :3], "wrist_r": T[ix[b.hands[1]], :3, :3]}
        )
        self.q_prev = np.asarray(r.q, dtype=np.float64)

    # --- one frame -----------------------------------------------------------------

    def _read(self, targets: Mapping[str, Any]) -> dict[str, Any]:
        if not isinstance(targets, Mapping):
            raise InvalidValueError(
                "targets must be a mapping {'head': 4x4, 'wrist_l': ..., 'wrist_r': ...}, "
                f"got {type(targets).__name__}"
            )
        out: dict[str, Any] = {}
        for key, t in targets.items():
            role = self.keys.get(key) if isinstance(key, str) else None
            if role is None:
                raise InvalidValueError(
                    f"unknown target {key!r}; teleoperation takes: {', '.join(self.keys)}"
                )
            if role in out:
                raise InvalidValueError(f"two targets for the {role!r} body part")
            out[role] = _read_target(role, t, key)
        missing = [r for r in ROLES if r not in out]
        if missing:
            raise InvalidValueError(
                f"teleoperation needs the head and both hands every frame; missing: "
                f"{', '.join(missing)}"
            )
        return out

    def robot_targets(self, targets: Mapping[str, Any]) -> dict[str, Any]:
        """The robot's targets ``{frame: 4x4, Pose or Position}`` for one frame of the
        person's (head, hands and the fixed feet), without solving (calibrating first
        if not yet). With ``follow=`` this is a step of the stream (the origin moves);
        :attr:`targets` keeps those of the last :meth:`update`."""
        tg = self._read(targets)
        if self.map.cal is None:
            self.calibrate(tg)
        return {**self.map(tg), **self.body.feet}

    def update(self, targets: Mapping[str, Any]) -> IKResult:
        """The robot's configuration for one frame ``{"head": 4x4, "wrist_l": ...,
        "wrist_r": ...}`` (the first calibrates). The result's ``frames`` and errors are
        the robot targets' (its head frame, wrists and ankles), measured by FK;
        ``success`` says whether every one is met. Raises
        :class:`~kinetree.errors.KinetreeError` for bad targets before any solve."""
        t0 = time.perf_counter()
        full = self.robot_targets(targets)
        self.targets = full
        m = self.robot
        r = m.ik(full, q0=self.q_prev, options=self.options)
        if not bool(np.all(r.success)):
            again = m.ik(full, q0=r.q, options=self._plain)  # no pull: the targets alone
            r = again if _better(again, r) else r
        if not bool(np.all(r.success)):
            r = self._by_priority(full, r)
        self.q_prev = np.asarray(r.q, dtype=np.float64)
        return dataclasses.replace(r, elapsed=time.perf_counter() - t0)

    def _by_priority(self, full: dict[str, Any], r: IKResult) -> IKResult:
        """Feet and head exact, then each hand best effort with its arm only."""
        m, b = self.robot, self.body
        exact = {f: t for f, t in full.items() if f not in b.hands}
        first = m.ik(exact, q0=self.q_prev, options=self._plain)
        if not bool(np.all(first.success)):
            # The head cannot be met either: the upper body alone does its best for the
            # head and hands, from the last frame, so the feet stay exactly where they are.
            upper = {f: t for f, t in full.items() if f not in b.feet}
            best = m.ik(upper, q0=self.q_prev, options=self._upper)
            pos, rot = _errors(m, best.q, full, b.sk.index)
            return dataclasses.replace(
                best,
                success=False,
                position_error=pos,
                orientation_error=rot,
                frames=tuple(full),
                message="the head is out of the standing robot's reach; feet kept, best effort",
            )
        q = first.q
        for f in b.hands:
            # The hand's place first (its turn weighed lightly), then its turn where the
            # wrist allows it.
            t = full[f]
            if isinstance(t, np.ndarray):
                light = Pose(t, orientation_weight=HAND_TURN_WEIGHT)
                placed = m.ik({f: light}, q0=q, options=self._arm[f])
                turned = m.ik({f: t}, q0=placed.q, options=self._arm[f])
                q = turned.q if bool(np.all(turned.success)) else placed.q
            else:
                q = m.ik({f: t}, q0=q, options=self._arm[f]).q
        pos, rot = _errors(m, q, full, b.sk.index)
        out = dataclasses.replace(
            first,
            q=q,
            success=False,
            position_error=pos,
            orientation_error=rot,
            frames=tuple(full),
            message="a hand is out of reach; met the rest",
        )
        return out

    def run(self, tracks: Mapping[str, Any]) -> Motion:
        """The robot's :class:`~kinetree.anim.Motion` for whole tracks ``{"head": (T, 4,
        4), "wrist_l": (T, 4, 4) or (T, 3), ...}``, frame by frame through
        :meth:`update` (causal: the same as a live stream). ``metadata["teleop"]``
        holds per-frame ``success`` ``(T,)``, ``position_error`` and
        ``orientation_error`` ``(T, targets)`` and ``frames``."""
        if not isinstance(tracks, Mapping) or not tracks:
            raise InvalidValueError("tracks must be a non-empty mapping {key: (T, 4, 4) or (T, 3)}")
        arrays = {k: np.asarray(v.T if isinstance(v, Pose) else v) for k, v in tracks.items()}
        lengths = {k: (a.shape[0] if a.ndim else 0) for k, a in arrays.items()}
        if len(set(lengths.values())) != 1 or 0 in lengths.values():
            raise ShapeError(f"tracks must have the same, non-zero number of frames; got {lengths}")
        n = next(iter(lengths.values()))
        q = np.empty((n, self.robot.nq))
        ok = np.zeros(n, dtype=bool)
        pos = rot = np.empty((n, 0))
        frames: tuple[str, ...] = ()
        for t in range(n):
            r = self.update({k: a[t] for k, a in arrays.items()})
            q[t] = r.q
            ok[t] = bool(np.all(r.success))
            if t == 0:
                frames = tuple(r.frames)
                pos = np.empty((n, len(frames)))
                rot = np.empty((n, len(frames)))
            pos[t], rot[t] = r.position_error, r.orientation_error
        meta = {"success": ok, "position_error": pos, "orientation_error": rot, "frames": frames}
        return Motion(self.robot, q, fps=self.fps, name="teleop", metadata={"teleop": meta})


def _errors(
    model: Model, q: np.ndarray, targets: dict[str, Any], index: dict[str, int]
) -> tuple[np.ndarray, np.ndarray]:
    """``(position errors, orientation errors)`` [m, rad] of the robot targets at ``q``
    by FK; a head :class:`Pose` with a ``point`` places that point, and with an
    orientation mask counts its masked axes only."""
    T = model.fk_all(q)
    pos = np.empty(len(targets))
    rot = np.zeros(len(targets))
    for k, (frame, t) in enumerate(targets.items()):
        M = T[index[frame]]
        if isinstance(t, Position):
            pos[k] = float(np.linalg.norm(M[:3, 3] - np.asarray(t.xyz)))
            continue
        A = np.asarray(t.T if isinstance(t, Pose) else t, dtype=np.float64)
        p = M[:3, 3]
        if isinstance(t, Pose) and t.point is not None:
            p = M[:3, :3] @ np.asarray(t.point) + p
        pos[k] = float(np.linalg.norm(p - A[:3, 3]))
        rot[k] = float(np.linalg.norm(_rotation_error(A[:3, :3], M[:3, :3], t)))
    return pos, rot


def _rotation_error(R_target: np.ndarray, R: np.ndarray, t: Any) -> np.ndarray:
    """The rotation vector from ``R`` to ``R_target`` in the world [rad], masked as
    the target's ``orientation_mask`` says."""
    e = np.asarray(matrix_to_axis_angle(R_target @ R.T), dtype=np.float64)
    mask = getattr(t, "orientation_mask", None)
    return e if mask is None else e * np.asarray(mask, dtype=np.float64)


def _check_number(name: str, v: Any, *, positive: bool) -> None:
    """:class:`~kinetree.errors.InvalidValueError` unless ``v`` is a finite number (and
    > 0 where ``positive``)."""
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise InvalidValueError(f"{name} must be a number, got {v!r}")
    if not np.isfinite(v) or (positive and v <= 0):
        raise InvalidValueError(f"{name} must be finite{' and > 0' if positive else ''}, got {v!r}")


def _better(a: IKResult, b: IKResult) -> bool:
    """Whether ``a`` is nearer its targets than ``b`` (success first, then the error)."""
    sa, sb = bool(np.all(a.success)), bool(np.all(b.success))
    if sa != sb:
        return sa
    ea = float(np.sum(a.position_error) + np.sum(a.orientation_error))
    eb = float(np.sum(b.position_error) + np.sum(b.orientation_error))
    return ea < eb


def _person_proportions(person: Model, psk: Any) -> tuple[float | None, float | None]:
    """The person's shoulders' drop below the head and arm reach, as fractions of the
    head's height above the soles, at its rest pose (None where a part is missing)."""
    parts = psk.parts
    T = person.fk_all(person.neutral())
    ix = psk.index
    up = psk.body.up

    def p(role: str) -> np.ndarray:
        return np.asarray(T[ix[parts[role]], :3, 3])

    if not all(f"shoulder_{s}" in parts for s in ("l", "r")):
        return None, None
    soles = [ix[parts[r]] for r in ("ankle_l", "ankle_r", "toe_l", "toe_r") if r in parts]
    if not soles:
        return None, None
    floor = min(float(T[i, :3, 3] @ up) for i in soles)
    h = float(p("head") @ up) - floor
    if h <= 0:
        return None, None
    mid = 0.5 * (p("shoulder_l") + p("shoulder_r"))
    drop = float((p("head") - mid) @ up) / h
    reach = []
    for s in ("l", "r"):
        chain = [mid, p(f"shoulder_{s}")]
        if f"elbow_{s}" in parts:
            chain.append(p(f"elbow_{s}"))
        chain.append(p(f"wrist_{s}"))
        reach.append(sum(float(np.linalg.norm(b - a)) for a, b in itertools.pairwise(chain)) / h)
    return drop, float(np.mean(reach))
