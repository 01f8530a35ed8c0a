"""Per-frame IK targets for the robot, built from the source's mapped joints.

The source (already in metres, z up, facing +x: :mod:`.source`) is scaled
to the robot body part by body part:

* **pelvis**: horizontal travel times the leg ratio ``s_leg = L_robot / L_source``
  (``L``: hip to knee plus knee to ankle, both legs averaged), starting at the
  origin; height such that a straight-legged source stance gives a straight-legged
  robot stance: ``z = h_r + d_r + L_r + s_leg ((z_s - h_s) - (d_s + L_s))`` with
  ``h`` the planted ankle height above the ground and ``d`` the pelvis-to-hip drop.
* **orientations** (pelvis, chest, ankles): rest-pose alignment, ``R_robot(t) =
  R_source(t) R_source_rest^T R_robot_rest``: each robot part turns from its rest
  pose as the source part turns from its own. A foot's source rest is its mean tilt
  while planted (a skeleton's zero pose need not have flat feet: CMU's legs splay).
* **points**: a part hanging from an oriented part (hips from the pelvis, shoulders
  from the chest) sits at the robot's own rest offset, turned with it; a part down a
  limb follows the source's bone direction at the robot's length: ``p_t(j) =
  p_t(parent) + s_j (p_s(j) - p_s(parent))`` with ``s_j`` the robot's segment length
  over the source's (per segment: upper arm, forearm...; an ankle from its hip by the
  whole leg's ratio, so that a planted source ankle stays planted).
* **contacts**: while the source's ankle is planted (:func:`~.contacts.detect_contacts`)
  the robot's ankle target is held (:func:`~.feet.hold_feet`) on the ground
  (``z = h_r``, the robot's sole height); a target is never so low that the sole (the
  lowest point of the foot's geometry, :func:`~.feet.sole_points`), turned as
  the target is, goes below the ground ``z = 0``.
* **left out**: point targets that other targets already fix (a rigid toe under a posed
  ankle, a head link whose position is the torso's), see :func:`_rigid_points`.
* **reach**: an ankle target farther from its hip than ``REACH`` of the leg lowers the
  pelvis (and all above it), a hand target is pulled in towards its shoulder: a
  straight knee or elbow is a singularity the solver cannot bend out of.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from ...model import Model
from ...spatial import matrix_to_quaternion, quaternion_to_matrix
from ..contacts import detect_contacts
from .feet import (
    bend_limb,
    drop_to_reach,
    hold_feet,
    smooth_above,
    sole_floor,
    sole_points,
    untwisted_mean,
)
from .robots import free_joint_of
from .source import SourceFrames

__all__ = ["REACH", "ROLE_WEIGHTS", "RobotTargets", "build_targets"]

#: Weights of the IK target of each kind of role: (position [1/m], orientation [1/rad]);
#: only their ratios matter. Kinds absent here (hips, shoulders, clavicles, spine, neck)
#: and kinds at (0, 0) only anchor the limbs below them. Pairs without a role: a point
#: at :data:`OTHER_WEIGHT`. The head weighs 150 times less than a foot: its target
#: hangs from the chest's, which a robot whose spine differs from the source's cannot
#: follow closely (5-7 cm off on Fourier's GR1 and GR3); at 0.1 it made the built-in
#: humanoid's neck alternate frame by frame on the CMU walk (7 spikes, 0 at 0.02).
ROLE_WEIGHTS: dict[str, tuple[float, float]] = {
    "pelvis": (1.0, 1.0),
    "chest": (0.0, 0.3),
    "head": (0.02, 0.0),
    "ankle": (3.0, 1.0),
    "toe": (0.2, 0.0),
    "knee": (0.0, 0.0),
    "elbow": (0.0, 0.0),
    "wrist": (0.3, 0.0),
}
OTHER_WEIGHT = 0.2
#: The farthest an ankle (a hand) target may be from its hip (shoulder), as a fraction
#: of the robot's leg (arm) length.
REACH = 0.97
_RIGID_PARENTS = ("pelvis", "chest")


@dataclass
class RobotTargets:
    """What the IK asks of the robot in every frame.

    Attributes:
        frames: robot frame of each target, in order.
        poses: ``(n_frames, n_targets, 4, 4)`` target poses (points: the position
            column; orientation-only targets: the rotation block).
        weights: ``(n_targets, 2)`` position and orientation weights.
        q_init: ``(n_frames, nq)`` a first guess (the base placed at the pelvis
            target, the joints at the robot's neutral, straight limbs bent).
        contacts: ``{ankle frame: (n_frames,) bool}`` the source's planted frames.
        s_leg: the leg length ratio robot / source.
        segment_scale: ``{source joint: s_j}`` of the limb points.
        ground: ``{ankle frame: h_r}`` the planted height [m] of each robot ankle.
        pelvis_drop: ``(n_frames,)`` how far the pelvis was lowered for reach [m].
        soles: ``{ankle frame: (points (k, 3), radii (k,))}`` the foot's geometry in the
            ankle frame [m] (:func:`~.feet.sole_points`); the ground is ``z = 0``.
        left_out: ``{robot frame: reason}`` mapped frames whose target was left out.
    """

    frames: tuple[str, ...]
    poses: np.ndarray
    weights: np.ndarray
    q_init: np.ndarray
    contacts: dict[str, np.ndarray] = field(default_factory=dict)
    s_leg: float = 1.0
    segment_scale: dict[str, float] = field(default_factory=dict)
    ground: dict[str, float] = field(default_factory=dict)
    pelvis_drop: np.ndarray = field(default_factory=lambda: np.zeros(0))
    soles: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    left_out: dict[str, str] = field(default_factory=dict)


def _kind(role: str | None) -> str | None:
    if role is None:
        return None
    return role[:-2] if role.endswith(("_l", "_r")) else role


def _weights(role: str | None) -> tuple[float, float]:
    kind = _kind(role)
    if kind is None:
        return OTHER_WEIGHT, 0.0
    return ROLE_WEIGHTS.get(kind, (0.0, 0.0))


class _Builder:
    """The pieces of :func:`build_targets`, sharing the rest poses of both sides."""

    def __init__(
        self,
        src: SourceFrames,
        pairs: Mapping[str, str],
        roles: Mapping[str, str],
        robot: Model,
        offsets: Mapping[str, tuple[float, float, float]],
    ):
        self.src, self.pairs, self.roles, self.robot = src, pairs, roles, robot
        self.n = src.T.shape[0]
        self.q_rest = robot.neutral()
        self.Tr = {f: np.asarray(robot.fk(self.q_rest, f)) for f in pairs.values()}
        for f, off in offsets.items():  # a body part's point off its frame's origin
            if f in self.Tr:
                self.Tr[f] = self.Tr[f].copy()
                self.Tr[f][:3, 3] += self.Tr[f][:3, :3] @ np.asarray(off, dtype=np.float64)
        self.Ts = {j: src.T[:, src.index(j)] for j in pairs}
        self.Ts0 = {j: src.T_rest[src.index(j)] for j in pairs}
        self.by_role = {r: j for j, r in roles.items()}

    def joint(self, role: str) -> str | None:
        return self.by_role.get(role)

    def rest_distance(self, a: str, b: str) -> tuple[float, float]:
        """(robot, source) rest distances [m] between the pairs of source joints a, b."""
        pr = self.Tr[self.pairs[a]][:3, 3] - self.Tr[self.pairs[b]][:3, 3]
        ps = self.Ts0[a][:3, 3] - self.Ts0[b][:3, 3]
        return float(np.linalg.norm(pr)), float(np.linalg.norm(ps))

    def legs(self) -> dict[str, tuple[str, float, float]]:
        """``{ankle joint: (hip joint, robot leg length, source leg length)}`` [m]."""
        out = {}
        for side in ("l", "r"):
            hip, knee, ankle = (self.joint(f"{r}_{side}") for r in ("hip", "knee", "ankle"))
            if hip and knee and ankle:
                (r1, s1), (r2, s2) = self.rest_distance(hip, knee), self.rest_distance(knee, ankle)
                if s1 + s2 > 0:
                    out[ankle] = (hip, r1 + r2, s1 + s2)
        return out

    def orientations(self, contacts: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """``{joint: (n, 3, 3)}`` rest-aligned robot orientations of every pair."""
        out = {}
        for j, f in self.pairs.items():
            R_src0 = self.Ts0[j][:3, :3]
            c = contacts.get(j)
            if c is not None and c.any():
                R_src0 = untwisted_mean(self.Ts[j][c, :3, :3] @ R_src0.T) @ R_src0
            out[j] = self.Ts[j][:, :3, :3] @ (R_src0.T @ self.Tr[f][:3, :3])
        return out

    def first_guess(self, T_pelvis: np.ndarray) -> np.ndarray:
        """``(n, nq)``: the base where the pelvis target ``(n, 4, 4)`` puts it, the
        joints at neutral with straight knees and elbows bent."""
        robot, q = self.robot, self.q_rest.copy()
        for side in ("l", "r"):
            for root, tip, away in (("hip", "ankle", -1.0), ("shoulder", "wrist", 1.0)):
                a, b = self.joint(f"{root}_{side}"), self.joint(f"{tip}_{side}")
                if a is not None and b is not None:
                    bend_limb(robot, q, self.pairs[a], self.pairs[b], away)
        q_init = np.tile(q, (self.n, 1))
        free = free_joint_of(robot)
        if free is None:
            return q_init
        base = robot.q_slice(free)
        base_rest = np.eye(4)
        base_rest[:3, 3] = q[base][:3]
        base_rest[:3, :3] = quaternion_to_matrix(q[base][3:])
        pelvis = self.pairs[self.by_role["pelvis"]]
        W = T_pelvis @ np.linalg.inv(self.Tr[pelvis]) @ base_rest
        q_init[:, base.start : base.start + 3] = W[:, :3, 3]
        q_init[:, base.start + 3 : base.stop] = matrix_to_quaternion(W[:, :3, :3])
        return q_init


def build_targets(
    src: SourceFrames,
    pairs: Mapping[str, str],
    roles: Mapping[str, str],
    parent_of: Mapping[str, str | None],
    robot: Model,
    *,
    contacts: bool = True,
    contact_height: float = 0.05,
    contact_speed: float = 0.35,
    blend: float = 0.08,
    offsets: Mapping[str, tuple[float, float, float]] | None = None,
) -> RobotTargets:
    """The robot's targets for every frame of ``src`` (see the module docstring).

    ``pairs``: source joint -> robot frame, parents before children; ``roles``: source
    joint -> role (a ``pelvis`` is required); ``parent_of``: each mapped source joint's
    nearest mapped ancestor (None for the pelvis). ``contact_height`` [m] and
    ``contact_speed`` [m/s] are the source's contact thresholds; ``blend`` [s] the ramp
    into and out of a planted hold; ``offsets`` (:attr:`~.joint_maps.RetargetMap.offsets`)
    the points of body parts that are not their frame's origin.
    """
    b = _Builder(src, pairs, roles, robot, offsets or {})
    n, Ts, Ts0, Tr = b.n, b.Ts, b.Ts0, b.Tr
    pelvis = b.by_role["pelvis"]
    legs = b.legs()
    ankles = [a for a in (b.joint("ankle_l"), b.joint("ankle_r")) if a is not None]
    if legs:
        L_r = float(np.mean([v[1] for v in legs.values()]))
        L_s = float(np.mean([v[2] for v in legs.values()]))
        d_r = float(
            np.mean([Tr[pairs[pelvis]][2, 3] - Tr[pairs[v[0]]][2, 3] for v in legs.values()])
        )
        d_s = float(np.mean([Ts0[pelvis][2, 3] - Ts0[v[0]][2, 3] for v in legs.values()]))
    else:  # no legs: the pelvis keeps the source's height over its lowest point
        L_r = L_s = 1.0
        d_r = d_s = 0.0
    s_leg = L_r / L_s
    soles = {pairs[a]: sole_points(robot, b.q_rest, pairs[a]) for a in ankles}
    ground = {f: max(0.0, float(sole_floor(Tr[f][None, :3, :3], *soles[f])[0])) for f in soles}
    h_r = float(np.mean(list(ground.values()))) if ground else 0.0
    lows = [Ts[a][:, 2, 3] for a in ankles] or [src.T[:, :, 2, 3].min(axis=1)]
    h_s = float(np.percentile(np.min(lows, axis=0), 5.0))

    contact_of: dict[str, np.ndarray] = {}
    for a in ankles:
        contact_of[a] = np.zeros(n, dtype=bool)
        if contacts:
            contact_of[a] = detect_contacts(
                Ts[a][:, :3, 3], src.fps, max_height=contact_height, max_speed=contact_speed
            )
    R_t = b.orientations(contact_of)

    # Positions, parents first.
    P_t: dict[str, np.ndarray] = {}
    scale: dict[str, float] = {}
    p0 = Ts[pelvis][0, :3, 3]
    for j in pairs:
        par = parent_of.get(j)
        if j == pelvis or par is None:
            P = np.empty((n, 3))
            P[:, :2] = s_leg * (Ts[j][:, :2, 3] - p0[:2])
            P[:, 2] = h_r + d_r + L_r + s_leg * ((Ts[j][:, 2, 3] - h_s) - (d_s + L_s))
            P_t[j] = P
        elif roles.get(par) in _RIGID_PARENTS:
            off = Tr[pairs[par]][:3, :3].T @ (Tr[pairs[j]][:3, 3] - Tr[pairs[par]][:3, 3])
            P_t[j] = P_t[par] + R_t[par] @ off
        else:
            if j in legs:
                par, scale[j] = legs[j][0], legs[j][1] / legs[j][2]
            else:
                dr, ds = b.rest_distance(j, par)
                scale[j] = dr / ds if ds > 1e-12 else 1.0
            P_t[j] = P_t[par] + scale[j] * (Ts[j][:, :3, 3] - Ts[par][:, :3, 3])

    # Feet held while planted; the pelvis (and all on it) lowered where a foot would be
    # out of reach; hands pulled in within reach.
    blend_frames = max(1, round(blend * src.fps))
    feet: dict[str, np.ndarray] = {}
    drop = np.zeros(n)
    for a in ankles:
        T = np.zeros((n, 4, 4))
        T[:, 3, 3] = 1.0
        T[:, :3, 3], T[:, :3, :3] = P_t[a], R_t[a]
        feet[a] = hold_feet(T, contact_of[a], ground[pairs[a]], blend_frames, soles[pairs[a]])
        if a in legs:
            hip, L = legs[a][0], legs[a][1]
            drop = np.maximum(drop, drop_to_reach(P_t[hip], feet[a][:, :3, 3], REACH * L))
    drop = smooth_above(drop, blend_frames)
    for side in ("l", "r"):
        sh, el, hand = (b.joint(f"{r}_{side}") for r in ("shoulder", "elbow", "wrist"))
        if sh and el and hand:
            arm = b.rest_distance(sh, el)[0] + b.rest_distance(el, hand)[0]
            v = P_t[hand] - P_t[sh]
            d = np.linalg.norm(v, axis=1, keepdims=True)
            P_t[hand] = P_t[sh] + v * np.minimum(1.0, REACH * arm / np.maximum(d, 1e-12))
    for j in P_t:
        if j not in feet:
            P_t[j] = P_t[j] - drop[:, None] * np.array([0.0, 0.0, 1.0])

    frames: list[str] = []
    poses: list[np.ndarray] = []
    weights: list[tuple[float, float]] = []
    left_out = _rigid_points(robot, pairs, roles)
    for j, f in pairs.items():
        wp, wr = _weights(roles.get(j))
        if (wp == 0.0 and wr == 0.0) or f in left_out:
            continue
        if j in feet:
            T = feet[j]
        else:
            T = np.zeros((n, 4, 4))
            T[:, 3, 3] = 1.0
            T[:, :3, 3] = P_t[j]
            T[:, :3, :3] = R_t[j] if wr > 0 else np.eye(3)
        frames.append(f)
        poses.append(T)
        weights.append((wp, wr))
    T_pelvis = np.zeros((n, 4, 4))
    T_pelvis[:, 3, 3] = 1.0
    T_pelvis[:, :3, :3], T_pelvis[:, :3, 3] = R_t[pelvis], P_t[pelvis]
    return RobotTargets(
        frames=tuple(frames),
        poses=np.stack(poses, axis=1),
        weights=np.array(weights),
        q_init=b.first_guess(T_pelvis),
        contacts={pairs[a]: c for a, c in contact_of.items()},
        s_leg=s_leg,
        segment_scale=scale,
        ground=ground,
        pelvis_drop=drop,
        soles=soles,
        left_out=left_out,
    )


def _rigid_points(
    robot: Model, pairs: Mapping[str, str], roles: Mapping[str, str]
) -> dict[str, str]:
    """``{robot frame: reason}`` for the point targets that other targets already fix.

    A frame's pose is fixed when its whole pose is a target (an ankle, the pelvis), or
    when its orientation is one and at most three joints turn it relative to a fixed
    frame (a chest on a three-joint waist above the pelvis). A point target whose
    position only joints moving such a frame move (a toe on a robot without toe joints;
    a head link on the neck's first axis, its position the torso's) is then either met
    already or in conflict with those targets (the source's toe or head is not where
    the robot's rigid one is); its rows make the IK's system singular, and however
    small its weight, the undamped steps follow it. Left out, with the reason."""
    q = robot.neutral()
    J = {f: np.asarray(robot.jacobian(q, f)) for f in pairs.values()}
    # The DoF (Jacobian columns) that move a frame at all, and those that move its origin.
    moves = {
        f: frozenset(np.flatnonzero(np.abs(Jf).max(axis=0) > 0).tolist()) for f, Jf in J.items()
    }
    shifts = {
        f: frozenset(np.flatnonzero(np.linalg.norm(Jf[:3], axis=0) > 1e-9).tolist())
        for f, Jf in J.items()
    }
    fixed = [f for j, f in pairs.items() if min(_weights(roles.get(j))) > 0]
    for j, f in pairs.items():
        wp, wr = _weights(roles.get(j))
        if wr > 0 and wp == 0 and f not in fixed:
            if any(moves[g] <= moves[f] and len(moves[f] - moves[g]) <= 3 for g in fixed):
                fixed.append(f)
    out: dict[str, str] = {}
    for j, f in pairs.items():
        wp, wr = _weights(roles.get(j))
        if wp == 0.0 or wr > 0.0:
            continue
        by = next((g for g in fixed if g != f and shifts[f] <= moves[g]), None)
        if by is not None:
            out[f] = f"only joints that move {by!r}, whose pose other targets fix, move it"
    return out
