"""How good a retarget is: what humanoid teams judge one by.

:func:`retarget_quality` measures a robot :class:`~.motion.Motion` made by
:func:`kinetree.retarget` against its own record (the source's contacts, the leg
ratio, the source's pelvis path):

* joint limits on every frame, and the largest joint speed against the robot's
  velocity limits;
* foot sliding: the distance a robot ankle moves from one frame to the next while the
  source's foot is planted (both frames planted) [m per frame], median and largest;
* ground penetration, at the sole (the lowest point of the foot's geometry, collision
  and visual shapes): how far it goes below the ground ``z = 0`` while planted, and in
  any frame;
* distance walked: the robot pelvis's horizontal travel against the source's, scaled
  by the leg ratio;
* smoothness: spikes (a joint that jumps more than :data:`SPIKE` into a frame and back
  out of it), and for every position target the largest second difference of the
  robot frame's path against the target's own ("jerk" below, [m/frame^2]);
* how far each mapped frame misses its target, per frame: median and largest [m, rad].

``good`` is False, and ``warnings`` say why, when a limb of the robot was left unmapped
(it stays still: the source's names were not recognised), the motion leaves its limits, has a
spike, shakes (a frame's jerk over :data:`JERK_FACTOR` times its target's plus
:data:`JERK_SLACK`) or puts a planted sole more than :data:`DIP_SLACK` below the ground.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import InvalidValueError
from ...model import Model
from ..motion import Motion

__all__ = [
    "DIP_SLACK",
    "JERK_FACTOR",
    "JERK_SLACK",
    "SPIKE",
    "rest_overlaps",
    "retarget_quality",
    "self_collision_frames",
    "spikes",
]

#: A spike: a joint moves more than this into a frame and back out of it [rad or m].
SPIKE = 0.1
#: A mapped frame shakes when its largest second difference exceeds its target's
#: times this, plus :data:`JERK_SLACK` [m/frame^2].
JERK_FACTOR = 3.0
JERK_SLACK = 0.005
#: How far a planted sole may go below the ground before the motion is not good [m].
DIP_SLACK = 0.005


def _path_length(P: np.ndarray) -> float:
    return float(np.sum(np.linalg.norm(np.diff(P, axis=0), axis=1)))


def spikes(q: np.ndarray, dof: list[int], step: float = SPIKE) -> np.ndarray:
    """``(n_frames, len(dof))`` bool: frame ``k`` of coordinate ``dof[i]`` is a spike,
    the coordinate moving more than ``step`` into it and more than ``step`` back out
    (the other way). First and last frames are never spikes."""
    out = np.zeros((q.shape[0], len(dof)), dtype=bool)
    if q.shape[0] < 3 or not dof:
        return out
    d = np.diff(q[:, dof], axis=0)
    d_in, d_out = d[:-1], d[1:]
    out[1:-1] = (np.abs(d_in) > step) & (np.abs(d_out) > step) & (d_in * d_out < 0)
    return out


def _second_difference(P: np.ndarray) -> float:
    """Largest ``|p[k+1] - 2 p[k] + p[k-1]|`` of a path ``(n, 3)`` [length/frame^2]."""
    if len(P) < 3:
        return 0.0
    return float(np.linalg.norm(np.diff(P, 2, axis=0), axis=1).max())


def _sole_heights(motion: Motion, frame: str, sole: Any) -> np.ndarray:
    """World height ``(n,)`` [m] of the lowest point of a foot's geometry per frame."""
    from .feet import sole_floor

    T = np.asarray(motion.model.fk(motion.q, frame))
    return np.asarray(T[:, 2, 3] - sole_floor(T[:, :3, :3], *sole))


def _target_misses(motion: Motion, info: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Per mapped frame with a target: how far the robot frame is from it, median and
    largest over the frames [m], and for orientation targets the angle [rad]."""
    out: dict[str, dict[str, float]] = {}
    points = info.get("point_frames", ())
    rotations = info.get("target_rotations", {})
    for f in dict.fromkeys([*points, *rotations]):
        T = np.asarray(motion.model.fk(motion.q, f))
        row: dict[str, float] = {}
        if f in points and motion.targets is not None:
            P = motion.targets[:, points.index(f)]
            miss = np.linalg.norm(T[:, :3, 3] - P, axis=1)
            row["miss_median"], row["miss_max"] = float(np.median(miss)), float(miss.max())
            row["jerk"] = _second_difference(T[:, :3, 3])
            row["target_jerk"] = _second_difference(P)
        if f in rotations:
            R = np.asarray(rotations[f])
            c = (np.einsum("nij,nij->n", T[:, :3, :3], R) - 1.0) / 2.0
            ang = np.arccos(np.clip(c, -1.0, 1.0))
            row["angle_median"], row["angle_max"] = float(np.median(ang)), float(ang.max())
        out[f] = row
    return out


def retarget_quality(motion: Motion) -> dict[str, Any]:
    """The numbers of the module docstring for a motion made by :func:`kinetree.retarget`.

    Keys: ``within_limits`` (bool, every frame), ``max_joint_speed`` [rad/s],
    ``speed_violations`` (DoF-frames over the robot's velocity limits), ``spikes``
    (joint-frames, :func:`spikes`) and ``spike_joints`` (``{joint: count}``); per ankle
    frame ``feet[frame]``: ``planted_frames``, ``slide_median``, ``slide_max`` [m per
    frame], ``dip_max`` [m: how far the sole goes below the ground while planted, 0 when
    never] and ``below_ground_max`` [m, in any frame]; per mapped frame with a target
    ``targets[frame]``: ``miss_median``, ``miss_max`` [m], ``jerk`` and ``target_jerk``
    [m/frame^2] (position targets), ``angle_median``, ``angle_max`` [rad] (orientation
    targets); then ``distance`` [m] (robot pelvis travel, start to end, horizontal),
    ``distance_source`` [m] (the source's, times the leg ratio), ``distance_ratio``;
    ``unmapped`` (the robot's limb body parts the map left out); ``good`` (bool) and
    ``warnings`` (why not good: see the module docstring).
    """
    meta = motion.metadata
    if "retarget" not in meta:
        raise InvalidValueError(
            "retarget_quality measures a motion made by kinetree.retarget (its metadata "
            "holds the source's contacts); this one has none"
        )
    info = meta["retarget"]
    robot, q = motion.model, motion.q
    out: dict[str, Any] = {"frames": motion.n_frames}
    out["within_limits"] = bool(np.all(robot.within_limits(q, tol=1e-9)))
    simple = robot.qv.v_q[robot.qv.v_q >= 0]
    dof = [int(k) for k in simple if int(k) not in info["base_coordinates"]]
    if motion.n_frames > 1 and dof:
        speed = np.abs(np.diff(q[:, dof], axis=0)) * motion.fps
        out["max_joint_speed"] = float(speed.max())
        limits = info.get("speed_limits") or {}
        lim = np.array([limits.get(robot.joint_names[k], np.inf) for k in dof])
        out["speed_violations"] = int(np.count_nonzero(speed > lim * (1 + 1e-9)))
    else:
        out["max_joint_speed"] = 0.0
        out["speed_violations"] = 0
    spike = spikes(q, dof)
    out["spikes"] = int(spike.sum())
    out["spike_joints"] = {
        robot.joint_names[dof[i]]: int(c) for i, c in enumerate(spike.sum(axis=0)) if c
    }
    feet: dict[str, dict[str, float]] = {}
    for frame, contact in info["contacts"].items():
        P = motion.positions(frame)
        c = np.asarray(contact, dtype=bool)
        both = c[1:] & c[:-1]
        step = np.linalg.norm(np.diff(P, axis=0), axis=1)[both]
        sole = info.get("soles", {}).get(frame)
        if sole is not None:
            z = _sole_heights(motion, frame, sole)  # the ground is z = 0
        else:  # no geometry known: the ankle against its planted height
            z = P[:, 2] - float(info["ground"][frame])
        below = -z[c] if c.any() else np.zeros(0)
        feet[frame] = {
            "planted_frames": int(c.sum()),
            "slide_median": float(np.median(step)) if step.size else 0.0,
            "slide_max": float(step.max()) if step.size else 0.0,
            "dip_max": float(max(0.0, below.max())) if below.size else 0.0,
            "below_ground_max": float(max(0.0, -z.min())) if z.size else 0.0,
        }
    out["feet"] = feet
    out["targets"] = _target_misses(motion, info)
    pelvis = motion.positions(info["pelvis"])[:, :2]
    src = np.asarray(info["source_pelvis"])[:, :2]
    out["distance"] = float(np.linalg.norm(pelvis[-1] - pelvis[0]))
    out["distance_source"] = float(np.linalg.norm(src[-1] - src[0]) * info["s_leg"])
    out["path_length"] = _path_length(pelvis)
    ds = out["distance_source"]
    out["distance_ratio"] = out["distance"] / ds if ds > 1e-9 else float("nan")
    out["unmapped"] = tuple(info.get("unmapped", ()))
    out["warnings"] = _warnings(out)
    out["good"] = not out["warnings"]
    return out


def _warnings(out: dict[str, Any]) -> list[str]:
    """Why the numbers ``out`` of :func:`retarget_quality` are not a good motion."""
    w: list[str] = []
    if out.get("unmapped"):
        w.append(
            f"body parts not mapped (the robot's limbs there stay still): "
            f"{', '.join(out['unmapped'])}"
        )
    if not out["within_limits"]:
        w.append("joint limits exceeded")
    if out["spikes"]:
        worst = sorted(out["spike_joints"].items(), key=lambda kv: -kv[1])[:3]
        w.append(
            f"{out['spikes']} spikes (a joint jumping > {SPIKE} rad and back in one frame): "
            + ", ".join(f"{j} {n}" for j, n in worst)
        )
    for f, t in out["targets"].items():
        if "jerk" in t and t["jerk"] > JERK_FACTOR * t["target_jerk"] + JERK_SLACK:
            w.append(
                f"{f} shakes: second difference up to {1000 * t['jerk']:.1f} mm/frame^2 "
                f"against its target's {1000 * t['target_jerk']:.1f}"
            )
    for f, v in out["feet"].items():
        if v["dip_max"] > DIP_SLACK:
            w.append(
                f"{f}: the sole goes {1000 * v['dip_max']:.1f} mm below the ground while planted"
            )
    return w


def rest_overlaps(robot: Model, **options: Any) -> tuple[tuple[str, str], ...]:
    """The self-collision pairs of ``robot`` whose collision spheres overlap already at
    its neutral pose (``robot.neutral()``), which its maker calls free.

    The spheres contain the meshes and reach beyond them (on the G1's torso, up to 6 cm,
    where 16 spheres cannot follow the mesh closer), so such a pair overlaps on the
    spheres wherever the robot stands; neither a count nor the IK can judge it by the
    spheres. :func:`self_collision_frames` leaves these pairs out, and so does
    ``kinetree.retarget(..., self_collision=True)``: both check the same pairs.
    ``options`` go to :func:`kinetree.collision.collision_model` (``max_spheres``...).
    """
    from ...collision.robot import collision_model

    cm = collision_model(robot, **options)
    rows, names = cm.pair_distances(robot.neutral(), (), True, cutoff=0.0)
    return tuple(names[k] for k in np.flatnonzero(rows[:, 0] < 0.0))


def self_collision_frames(
    motion: Motion, *, at_rest_ok: bool = True, **options: Any
) -> dict[str, Any]:
    """Frames where the robot's collision spheres (:mod:`kinetree.collision`) of two of
    its own links overlap.

    The sphere approximation contains the meshes, so it is conservative: some links
    overlap already when the robot stands at its neutral pose (the G1's torso and
    shoulders). With ``at_rest_ok`` those pairs are left out (:func:`rest_overlaps`: a
    pose the robot's maker calls neutral is taken to be free). ``ignore`` (pairs of link
    names) leaves out more; other ``options`` go to :meth:`Model.distance`.

    Returns ``frames`` (indices with penetration), ``count``, ``min_distance`` [m]
    (signed, negative: penetration), ``pairs`` (the closest pair of each penetrating
    frame, counted) and ``ignored`` (the pairs left out).
    """
    robot = motion.model
    ignore: list[tuple[str, str]] = [(str(a), str(b)) for a, b in options.pop("ignore", ())]
    if at_rest_ok:
        ignore += [p for p in rest_overlaps(robot, **options) if p not in ignore]
    r = robot.distance(motion.q, self_collision=True, ignore=ignore, **options)
    d = np.asarray(r.distance)
    hit = np.flatnonzero(d < 0)
    pairs: dict[tuple[str, str], int] = {}
    closest = r.closest
    for k in hit:
        key = tuple(closest[int(k)])
        pairs[key] = pairs.get(key, 0) + 1
    return {
        "frames": hit,
        "count": int(hit.size),
        "min_distance": float(d.min()) if d.size else float("inf"),
        "pairs": pairs,
        "ignored": tuple(ignore),
    }
