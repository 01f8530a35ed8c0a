"""How good a retarget is: what humanoid teams judge one by.

:func:`retarget_quality` measures a robot :class:`~.motion.Motion` made by
:func:`kinetree.retarget` against its own record (the source's contacts, the leg
ratio, the source's pelvis path):

* joint limits on every frame, and the largest joint speed against the robot's
  velocity limits;
* foot sliding: the distance a robot ankle moves from one frame to the next while the
  source's foot is planted (both frames planted) [m per frame], median and largest;
* ground penetration: how far a planted robot ankle goes below its planted height [m];
* distance walked: the robot pelvis's horizontal travel against the source's, scaled
  by the leg ratio.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InvalidValueError
from ..model import Model
from .motion import Motion

__all__ = ["rest_overlaps", "retarget_quality", "self_collision_frames"]


def _path_length(P: np.ndarray) -> float:
    return float(np.sum(np.linalg.norm(np.diff(P, axis=0), axis=1)))


def retarget_quality(motion: Motion) -> dict[str, Any]:
    """The numbers of the module docstring for a motion made by :func:`kinetree.retarget`.

    Keys: ``within_limits`` (bool, every frame), ``max_joint_speed`` [rad/s],
    ``speed_violations`` (DoF-frames over the robot's velocity limits), and per ankle
    frame ``feet[frame]``: ``planted_frames``, ``slide_median``, ``slide_max`` [m per
    frame], ``dip_max`` [m below the planted height, 0 when never below]; then
    ``distance`` [m] (robot pelvis travel, start to end, horizontal), ``distance_source``
    [m] (the source's, times the leg ratio) and ``distance_ratio``.
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
    simple = robot.v_q[robot.v_q >= 0]
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
    feet: dict[str, dict[str, float]] = {}
    for frame, contact in info["contacts"].items():
        P = motion.positions(frame)
        c = np.asarray(contact, dtype=bool)
        both = c[1:] & c[:-1]
        step = np.linalg.norm(np.diff(P, axis=0), axis=1)[both]
        ground = float(info["ground"][frame])
        below = ground - P[c, 2] if c.any() else np.zeros(0)
        feet[frame] = {
            "planted_frames": int(c.sum()),
            "slide_median": float(np.median(step)) if step.size else 0.0,
            "slide_max": float(step.max()) if step.size else 0.0,
            "dip_max": float(max(0.0, below.max())) if below.size else 0.0,
        }
    out["feet"] = feet
    pelvis = motion.positions(info["pelvis"])[:, :2]
    src = np.asarray(info["source_pelvis"])[:, :2]
    out["distance"] = float(np.linalg.norm(pelvis[-1] - pelvis[0]))
    out["distance_source"] = float(np.linalg.norm(src[-1] - src[0]) * info["s_leg"])
    out["path_length"] = _path_length(pelvis)
    ds = out["distance_source"]
    out["distance_ratio"] = out["distance"] / ds if ds > 1e-9 else float("nan")
    return out


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
    from ..collision.robot import collision_model

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
