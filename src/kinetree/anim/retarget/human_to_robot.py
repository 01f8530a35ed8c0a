"""Characters to robots: a human clip (BVH) drives a humanoid robot.

Long because :func:`retarget_robot` is one pipeline with many documented options, and
its stages share the arrays of one clip; the stages that stand alone live beside it.

:func:`retarget_robot` (``kinetree.retarget``) runs the pipeline:

1. the mapping (:mod:`.joint_maps`) pairs source joints with robot frames;
2. the source is read in the robot's world: z up, facing +x, metres
   (:mod:`.source`), a leading calibration T-pose left out;
3. targets per frame, scaled body part by body part, rest poses aligned, planted feet
   held (:mod:`.targets`), optionally smoothed;
4. whole-body IK over every frame at once (one batch on all cores): a first pass from
   the base placed at the pelvis target with knees and elbows bent, then a second pass
   warm-started from the neighbouring frames' results (the median of the previous,
   the frame's own and the next), which removes one-frame jumps to another branch;
   then the whole clip solved together (:func:`~.clip_solve.refine_clip`: targets,
   joint accelerations and soles above the floor in one least-squares problem over all
   frames), and the body lifted where a sole would still be under the floor
   (:func:`~.clip_solve.lift_to_floor`); joint limits hold throughout
   (``CLIP_SOLVE = None`` restores the per-frame temporal pass of before);
5. with ``self_collision``: the whole-clip solve also keeps the robot's links apart
   (a row per near pair), with more steps; frames left overlapping are cleared with
   their neighbours, the legs still, then frame by frame;
6. joint-speed limits (the URDF's ``<limit velocity>``, or given): a forward pass caps
   every joint's change per frame; with ``self_collision`` the frames the cap pushed
   back into a collision are cleared again;
7. quality numbers (:func:`~.quality.retarget_quality`) in the metadata.
"""

from __future__ import annotations

import dataclasses
import math
import os
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..._validate import check_bool, check_count, check_memory, check_positive
from ..._warnings import warn_outside
from ...data import FILES, clip_path, names
from ...errors import InvalidValueError, UnsupportedError
from ...ik.targets import Pose
from ...io.bvh import BVHClip, read_bvh
from ...model import Model
from .._targets import moved_by
from ..motion import Motion
from .clip_solve import ClipSolveOptions, lift_to_floor, refine_clip
from .joint_maps import LIMB_PARTS, RetargetMap, make_map, robot_parts
from .quality import rest_overlaps, retarget_quality
from .robots import free_joint_of, load_robot
from .source import SourceFrames, prepare_source
from .targets import RobotTargets, build_targets

__all__ = ["retarget_robot"]

#: IK iterations of the first pass (from the first guess) and of the warm-started pass.
ITERATIONS = (10, 5)
MAX_STEP = 0.15
#: The temporal pass (:func:`_temporal_pass`): rounds, Gaussian sigma [frames] and the
#: iterations of each round's re-solve.
SMOOTH_ROUNDS = 2
SMOOTH_SIGMA = 1.0
SMOOTH_ITERATIONS = 4
CLIP_SOLVE: ClipSolveOptions | None = ClipSolveOptions()
#: More whole-clip steps with ``self_collision`` (links pushed apart over a few steps).
CLIP_COLLISION_ITERATIONS = 4
#: How long a lift of the body onto the floor eases in and out [s].
FLOOR_EASE = 0.1
#: The clearance [m] ``self_collision=True`` keeps between the robot's own links.
COLLISION_MARGIN = 0.005
#: Iterations of the collision-aware IK on the frames the plain passes leave too close.
COLLISION_ITERATIONS = 20
#: Largest change of a joint per collision-aware iteration [rad or m].
COLLISION_STEP = 0.15
#: Orientation weight [1/rad] with which a hand holds the plain pass's orientation there.
HOLD_ORIENTATION = 0.3
#: The collision pass (:func:`_collision_pass`): the frames each side of an overlapping
#: one solved with it, and its rounds.
COLLISION_SPREAD = 4
COLLISION_ROUNDS = 3
#: Rounds of clearing again (twice the iterations each) after the speed cap.
RECHECKS = 3
_TOL = (1e-5, 1e-4)  # [m], [rad]: the solve stops early where every target is met


def _source_clip(clip: Any) -> BVHClip | Motion:
    if isinstance(clip, (BVHClip, Motion)):
        return clip
    if isinstance(clip, (str, os.PathLike)):
        return read_bvh(clip_path(clip))  # a path or a bundled clip's name, as the CLI
    raise InvalidValueError(
        "clip must be a BVHClip, a Motion, the path of a .bvh file or a bundled clip's name "
        f"({', '.join(n for n in names() if FILES[n].endswith('.bvh'))}), "
        f"got {type(clip).__name__}"
    )


def _calibration_frame(src: SourceFrames) -> bool:
    """Whether frame 0 is a calibration pose (a T-pose before the take, as CMU's BVH
    conversions have): its jump to frame 1 is far larger than any later one."""
    if src.T.shape[0] < 4:
        return False
    P = src.T[:, :, :3, 3]
    step = np.linalg.norm(np.diff(P, axis=0), axis=2).max(axis=1)  # [m per frame]
    later = float(np.percentile(step[1:], 99))
    return bool(step[0] > 0.1 and step[0] > 10.0 * later)


def _parents(source: Model, mp: RetargetMap) -> dict[str, str | None]:
    """Each mapped source joint's nearest mapped ancestor (None for the topmost)."""
    out: dict[str, str | None] = {}
    for j in mp.pairs:
        out[j] = None
        for k in source.ancestors(source.frame_index(j))[-2::-1]:
            name = source.node_names[int(k)]
            if name in mp.pairs and not source.hidden[int(k)]:
                out[j] = name
                break
    return out


def _smooth(T: np.ndarray, sigma: float) -> np.ndarray:
    """Gaussian smoothing over frames (axis 0) of poses ``(n, k, 4, 4)``, ``sigma`` in
    frames; rotations projected back onto the nearest rotation."""
    if sigma <= 0 or T.shape[0] < 3:
        return T
    r = max(1, int(3 * sigma))
    x = np.arange(-r, r + 1)
    w = np.exp(-0.5 * (x / sigma) ** 2)
    w /= w.sum()
    pad = np.concatenate([np.repeat(T[:1], r, 0), T, np.repeat(T[-1:], r, 0)])
    out = np.zeros_like(T)
    for i, wi in enumerate(w):
        out += wi * pad[i : i + T.shape[0]]
    U, _, Vt = np.linalg.svd(out[..., :3, :3])
    d = np.sign(np.linalg.det(U @ Vt))
    U[..., :, 2] *= d[..., None]
    out[..., :3, :3] = U @ Vt
    out[..., 3, :] = (0.0, 0.0, 0.0, 1.0)
    return out


def _unmapped(mp: RetargetMap, robot_roles: Mapping[str, str]) -> tuple[str, ...]:
    """The limb body parts (:data:`~.joint_maps.LIMB_PARTS`) the robot has (found on it
    or, for a given mapping, on none) that ``mp`` leaves out; warns naming them."""
    have = set(mp.roles.values())
    robot_has = set(robot_roles) if robot_roles else set(LIMB_PARTS)
    out = tuple(r for r in LIMB_PARTS if r in robot_has and r not in have)
    if out:
        warn_outside(
            f"the source's {', '.join(out)} are not mapped, so the robot's limbs there stay "
            "still (their joint names were not recognised); name them with roles="
            "{role: source joint} or give mapping={source joint: robot frame} (the map's "
            "report: motion.metadata['retarget']['map'].report)",
            UserWarning,
        )
    return out


def _ik_targets(tg: RobotTargets, frames: np.ndarray | None = None) -> dict[str, Pose]:
    """The IK targets of every clip frame, or of the clip frames ``frames``."""
    out: dict[str, Pose] = {}
    for t, f in enumerate(tg.frames):
        wp, wr = (float(w) for w in tg.weights[t])
        poses = tg.poses[:, t] if frames is None else tg.poses[frames, t]
        out[f] = Pose(
            np.ascontiguousarray(poses),
            position_mask=None if wp > 0 else (False, False, False),
            orientation_mask=None if wr > 0 else (False, False, False),
            position_weight=wp if wp > 0 else None,
            orientation_weight=wr if wr > 0 else None,
        )
    return out


def _neighbour_median(robot: Model, q: np.ndarray) -> np.ndarray:
    """The median of each frame with its previous and next (quaternions renormalised)."""
    if len(q) < 3:
        return q
    stack = np.stack([np.vstack([q[:1], q[:-1]]), q, np.vstack([q[1:], q[-1:]])])
    return robot.normalize(np.median(stack, axis=0))


def _continuous(robot: Model, q: np.ndarray) -> np.ndarray:
    """``q`` with each quaternion's sign chosen to agree with the previous frame's (q and
    -q are one rotation; averaging over frames needs them on one side)."""
    out = q.copy()
    for k in np.flatnonzero(robot.qv.quaternion_mask)[::4].tolist():
        quat = out[:, k : k + 4]
        flip = np.einsum("ij,ij->i", quat[1:], quat[:-1]) < 0
        sign = np.concatenate([[1.0], np.cumprod(np.where(flip, -1.0, 1.0))])
        out[:, k : k + 4] = quat * sign[:, None]
    return out


def _smooth_motion(robot: Model, q: np.ndarray, sigma: float) -> np.ndarray:
    """``q (n, nq)`` filtered over time: the median of each frame and its neighbours (a
    one-frame jump removed), then a Gaussian of ``sigma`` frames, quaternions
    renormalised. A weighted mean of configurations within box limits is within them."""
    if len(q) < 3 or sigma <= 0:
        return q
    x = _continuous(robot, _neighbour_median(robot, _continuous(robot, q)))
    r = max(1, math.ceil(3 * sigma))
    w = np.exp(-0.5 * (np.arange(-r, r + 1) / sigma) ** 2)
    w /= w.sum()
    pad = np.concatenate([np.repeat(x[:1], r, 0), x, np.repeat(x[-1:], r, 0)])
    out = np.zeros_like(x)
    for i, wi in enumerate(w):
        out += wi * pad[i : i + len(x)]
    return robot.normalize(out)


def _temporal_pass(
    robot: Model,
    targets: Mapping[str, Pose],
    q: np.ndarray,
    opts: Mapping[str, Any],
    rounds: int,
    iterations: int,
    **more: Any,
) -> tuple[np.ndarray, np.ndarray]:
    """``rounds`` of: smooth the motion over time (:func:`_smooth_motion`), then solve
    every frame again from its smoothed configuration, ``iterations`` damped
    least-squares steps. Those steps lie in the row space of the targets' Jacobian, so
    what the targets do not fix (an elbow's swivel about a hand's position target, the
    compromise between targets the robot cannot all meet) keeps its smoothed value,
    and what they fix is met again: smoothness in the null space of the targets.
    Returns ``q`` and the iterations spent per frame."""
    its = np.zeros(len(q), dtype=np.int64)
    for _ in range(rounds):
        start = _smooth_motion(robot, q, SMOOTH_SIGMA)
        r = robot.ik(dict(targets), q0=start, max_iter=iterations, **opts, **more)
        q, its = r.q, its + np.asarray(r.iterations)
    return q, its


def _speed_cap(
    robot: Model, q: np.ndarray, fps: float, limits: Mapping[str, float], skip: set[int]
) -> tuple[np.ndarray, np.ndarray]:
    """Cap each listed joint's change per frame at ``limit / fps``; returns the capped
    motion and the frames that were changed."""
    idx = [robot.joint_names.index(j) for j in limits if j in robot.joint_names]
    idx = [k for k in idx if k not in skip]
    if not idx or len(q) < 2:
        return q, np.zeros(0, dtype=np.int64)
    step = np.array([limits[robot.joint_names[k]] for k in idx]) / fps
    out = q.copy()
    sub = out[:, idx]
    changed = []
    for k in range(1, len(sub)):
        d = sub[k] - sub[k - 1]
        over = np.abs(d) > step
        if over.any():
            sub[k] = sub[k - 1] + np.clip(d, -step, step)
            changed.append(k)
    out[:, idx] = sub
    return out, np.array(changed, dtype=np.int64)


#: The values of ``up=``: an axis, with an optional sign.
UP_AXES = tuple(f"{sign}{a}" for sign in ("", "+", "-") for a in "xyz")


def _check_options(
    source: BVHClip | Motion,
    up: Any,
    contact_height: Any,
    contact_speed: Any,
    smooth: Any,
    iterations: Any,
    contacts: Any,
    skip_calibration: Any,
    source_scale: Any,
    max_joint_speed: Any,
) -> None:
    """:func:`retarget_robot`'s options checked before any work, each error naming its
    argument (and the memory the smoothing would take)."""
    if up is not None and up not in UP_AXES:
        raise InvalidValueError(f"up must be None or one of {', '.join(UP_AXES)}; got {up!r}")
    check_positive(contact_height, "contact_height [m]")
    check_positive(contact_speed, "contact_speed [m/s]")
    sigma = check_positive(smooth, "smooth [s]", allow_zero=True) * source.fps  # [frames]
    if not isinstance(iterations, tuple | list) or len(iterations) != 2:
        raise InvalidValueError(
            f"iterations must be two counts (first pass, warm-started pass), got {iterations!r}"
        )
    for i in iterations:
        check_count(i, "iterations")
    check_bool(contacts, "contacts")
    check_bool(skip_calibration, "skip_calibration")
    if source_scale is not None:
        check_positive(source_scale, "source_scale [m per source unit]")
    speeds = max_joint_speed.values() if isinstance(max_joint_speed, Mapping) else [max_joint_speed]
    for v in speeds:
        if v is not None and not (isinstance(v, str) and v == "urdf"):
            check_positive(v, "max_joint_speed (None, 'urdf', a speed [rad/s or m/s] or a dict)")
    # _smooth pads the clip by 3 sigma each side and sums the poses of every joint
    # (three arrays of 16 float64 per joint and frame).
    reach = 2 * int(3 * sigma) if sigma > 0 else 0
    check_memory(
        3 * 16 * 8 * (source.n_frames + reach) * len(source.model.frame_names),
        f"smooth={smooth!r} s ({sigma:.3g} frames) over {source.n_frames:,} frames",
        "smooth less (a sigma longer than the clip only averages it flat)",
    )


def _collision_margin(self_collision: bool | float | None) -> float | None:
    """The clearance [m] ``self_collision`` asks for (None: no avoidance)."""
    if self_collision is False or self_collision is None:
        return None
    if isinstance(self_collision, (bool, np.bool_)):
        return COLLISION_MARGIN
    margin = (
        float(self_collision)
        if isinstance(self_collision, int | float | np.integer | np.floating)
        else math.nan
    )
    if not (math.isfinite(margin) and margin >= 0):
        raise InvalidValueError(
            f"self_collision must be True, False or a margin >= 0 [m], got {self_collision!r}"
        )
    return margin


def _clear_collisions(
    robot: Model,
    tg: RobotTargets,
    q: np.ndarray,
    opts: dict[str, Any],
    margin: float,
    ignore: tuple[tuple[str, str], ...],
    max_iter: int,
    below: float,
    frames: np.ndarray | None = None,
    start: np.ndarray | None = None,
    still: frozenset[str] = frozenset(),
) -> tuple[np.ndarray, np.ndarray]:
    """Re-solve the frames of ``q`` closer than ``below`` [m] (or the clip frames
    ``frames``) with the collision-aware IK (keeping ``margin``), each from its own
    configuration (or from ``start``, one row per frame), ``max_iter`` iterations;
    returns the new ``q`` and the frames re-solved."""
    if frames is None:
        d = np.asarray(robot.distance(q, self_collision=True, ignore=ignore).distance)
        hit = np.flatnonzero(d < below)
    else:
        hit = np.asarray(frames, dtype=np.int64)
    if hit.size == 0:
        return q, hit
    q0 = q[hit] if start is None else start
    o = dict(opts, max_joint_step=COLLISION_STEP)
    targets = _ik_targets(tg, hit)
    # A frame with a position target only (a hand) keeps, weakly, the orientation the
    # plain solve gave it: the joints that only turn it (a wrist) would otherwise be
    # the cheapest way out of every collision, and flip one way or the other per frame.
    for t, f in enumerate(tg.frames):
        wp, wr = (float(w) for w in tg.weights[t])
        if wp > 0 and wr == 0:
            poses = robot.fk(q[hit], f)
            poses[:, :3, 3] = tg.poses[hit, t, :3, 3]
            targets[f] = Pose(
                np.ascontiguousarray(poses), position_weight=wp, orientation_weight=HOLD_ORIENTATION
            )
    # The base stays where the plain passes put it (its target is then met, and left
    # out): moving the whole body out of a hand-hip collision, the legs following to
    # keep the feet, straightens a knee on one frame and not the next.
    base = robot.joint_indices(free_joint_of(robot) or ())
    o["active"] = [
        j for k, j in enumerate(robot.joint_names) if k not in set(base.tolist()) and j not in still
    ]
    mask = robot.active_mask(o["active"])
    targets = {f: t for f, t in targets.items() if moved_by(robot, f, mask)}
    r = robot.ik(
        targets,
        q0=q0,
        max_iter=max_iter,
        self_collision=True,
        margin=margin,
        ignore=ignore,
        **o,
    )
    out = q.copy()
    out[hit] = r.q
    return out, hit


def _dilate(frames: np.ndarray, reach: int, n: int) -> np.ndarray:
    """The clip frames within ``reach`` of any of ``frames`` (sorted, within ``[0, n)``)."""
    if frames.size == 0:
        return frames
    mark = np.zeros(n + 2 * reach + 1, dtype=np.int64)
    np.add.at(mark, frames, 1)
    np.add.at(mark, frames + 2 * reach + 1, -1)
    covered = np.cumsum(mark)[reach : reach + n] > 0
    return np.flatnonzero(covered)


def _collision_pass(
    robot: Model,
    tg: RobotTargets,
    q: np.ndarray,
    opts: dict[str, Any],
    margin: float,
    ignore: tuple[tuple[str, str], ...],
    hit: np.ndarray | None = None,
    still: frozenset[str] = frozenset(),
) -> tuple[np.ndarray, np.ndarray]:
    """Clear the frames of ``q`` closer than ``margin`` (or the frames ``hit``) together
    with their neighbours (:data:`COLLISION_SPREAD` frames each side; joints named in
    ``still`` kept where they are), in :data:`COLLISION_ROUNDS` rounds:
    each round starts every frame of that window from the motion smoothed over time
    (:func:`_smooth_motion`) and solves it with the collision-aware IK. A frame moved
    out of a collision pulls its neighbours' starts along, so the way out is the same
    from one frame to the next instead of a jump into one frame and back out (each
    frame cleared alone took a wrist or an elbow one way or the other: spikes).
    Returns ``q`` and the frames of the window."""
    if hit is None:
        d = np.asarray(robot.distance(q, self_collision=True, ignore=ignore).distance)
        hit = np.flatnonzero(d < margin)
    if hit.size == 0:
        return q, hit
    window = _dilate(hit, COLLISION_SPREAD, len(q))
    for k in range(COLLISION_ROUNDS):
        start = _smooth_motion(robot, q, SMOOTH_SIGMA)[window] if k else None
        q, _ = _clear_collisions(
            robot, tg, q, opts, margin, ignore, COLLISION_ITERATIONS, margin, window, start, still
        )
    return q, window


def retarget_robot(
    clip: BVHClip | Motion | str | os.PathLike[str],
    robot: str | os.PathLike[str] | Model,
    mapping: Any = None,
    *,
    source_scale: float | None = None,
    up: str | None = None,
    contacts: bool = True,
    contact_height: float = 0.05,
    contact_speed: float = 0.35,
    max_joint_speed: float | Mapping[str, float] | str | None = "urdf",
    smooth: float = 0.0,
    iterations: tuple[int, int] = ITERATIONS,
    skip_calibration: bool = True,
    self_collision: bool | float = False,
    name: str | None = None,
    roles: Mapping[str, str] | None = None,
) -> Motion:
    """Retarget a human clip onto a humanoid robot with a floating base.

    Args:
        clip: a :class:`~kinetree.io.bvh.BVHClip`, a :class:`Motion`, a ``.bvh`` path or
            the name of a clip shipped with kinetree (``"cmu_walk"``, as the CLI takes).
        robot: ``"g1"``, ``"talos"``, ``"h1"`` (example-robot-data), ``"humanoid"``, a
            file, or a :class:`Model`. Names and files get a free base; a Model must
            have one (``kinetree.anim.free_base(model)``), since the clip moves it about.
        mapping: ``None``/``"auto"`` (a guess from names, reported in the metadata),
            ``"cmu"``, ``"mixamo"``, ``"humanoid"`` (ready-made, joined with the
            robot's table), a dict ``{source joint: robot frame}`` or a
            :class:`~.joint_maps.RetargetMap`.
        source_scale: metres per source length unit (None: guessed; CMU's unit is
            0.0254 / 0.45 m).
        up: the source's up axis (``"y"``, ``"z"``, ``"-y"``...); None: from its rest pose.
        contacts: hold feet still while the source's are planted.
        contact_height: a source ankle within this of its planted level [m] ...
        contact_speed: ... and slower than this [m/s] is planted.
        max_joint_speed: ``"urdf"`` (the robot's :attr:`~kinetree.Model.velocity_limits`,
            read from its URDF's ``<limit velocity>``; none for other robots), one speed
            for every joint [rad/s or m/s], a dict per joint, or None (no cap).
        smooth: Gaussian smoothing of the targets over time, sigma [s] (0: none).
        iterations: IK iterations of the first and the warm-started pass.
        skip_calibration: leave out a leading calibration pose (frame 0 far from the
            rest of the take); the metadata says whether it did.
        self_collision: keep the robot's links apart (True: by ``COLLISION_MARGIN``,
            5 mm on the collision spheres, or a margin [m]). The plain passes run first;
            the frames they leave closer than the margin are solved again by the
            collision-aware IK (``model.ik(..., self_collision=True)``) from where they
            are, hands holding the orientation the plain pass gave them; frames that
            overlap after the speed cap are cleared again (more iterations each round).
            The pairs checked are those :func:`self_collision_frames` counts: the
            robot's enabled pairs less :func:`~.quality.rest_overlaps` (pairs
            whose spheres overlap at the neutral pose). ``metadata["retarget"]
            ["collision_frames"]`` lists the frames re-solved.
        name: the motion's name (default: the source's).
        roles: the source's body parts by name, ``{role: source joint}``
            (:data:`kinetree.body_parts.ROLES`), for skeletons whose names no rule
            reads; the other parts are still found by name
            (:func:`~kinetree.body_parts.find_body_parts`).

    Body parts the robot has but the map leaves out (an arm or a leg of a skeleton
    whose names were not recognised) stay still: a :class:`UserWarning` names them,
    ``metadata["retarget"]["unmapped"]`` lists them and the quality report is not good.

    Returns:
        A :class:`Motion` of the robot (``q`` per frame with its floating base, at the
        source's frame rate). ``metadata["retarget"]`` holds the map and its report,
        the source's unit, scale and contacts, the leg ratio, per-segment scales, the
        ground heights, the frames capped by speed limits, timings [s]; and
        ``metadata["quality"]`` the numbers of :func:`~.quality.retarget_quality`.

    Raises:
        KinetreeError subclasses naming the problem and what to do: a mapping naming a
        joint or frame that is not there, a robot without a floating base, a missing
        robot package, bad options.
    """
    t0 = time.perf_counter()
    source = _source_clip(clip)
    _check_options(
        source,
        up,
        contact_height,
        contact_speed,
        smooth,
        iterations,
        contacts,
        skip_calibration,
        source_scale,
        max_joint_speed,
    )
    margin = _collision_margin(self_collision)
    robot_model = robot if isinstance(robot, Model) else load_robot(robot)
    robot_roles: dict[str, str] = {}
    if not isinstance(mapping, (Mapping, RetargetMap)):
        robot_roles = robot_parts(robot_model)[1]  # not a humanoid: say so first
    free = free_joint_of(robot_model)
    if free is None:
        raise UnsupportedError(
            f"robot {robot_model.name!r} has no floating base, so it cannot follow the clip "
            "about the room (walking moves the pelvis); give it one with "
            "kinetree.anim.free_base(robot) (or kinetree.load(urdf, floating_base=True)), "
            "or pass the robot by name or file, which adds one"
        )
    source_model = source.model
    mp = make_map(mapping, source_model, robot_model, roles=roles)
    unmapped = _unmapped(mp, robot_roles)
    joints = [j for j in source_model.frame_names if j in mp.pairs]
    src = prepare_source(source, joints, mp.roles, scale=source_scale, up=up)
    dropped: list[int] = []
    if skip_calibration and _calibration_frame(src):
        src = SourceFrames(src.names, src.T[1:], src.T_rest, src.fps, src.scale, src.unit, src.R)
        dropped = [0]
    if smooth > 0:
        src = SourceFrames(
            src.names,
            _smooth(src.T, smooth * src.fps),
            src.T_rest,
            src.fps,
            src.scale,
            src.unit,
            src.R,
        )
    pairs = {j: mp.pairs[j] for j in joints}
    t1 = time.perf_counter()
    tg = build_targets(
        src,
        pairs,
        mp.roles,
        _parents(source_model, mp),
        robot_model,
        contacts=contacts,
        contact_height=contact_height,
        contact_speed=contact_speed,
        offsets=mp.offsets,
    )
    t2 = time.perf_counter()
    targets = _ik_targets(tg)
    opts: dict[str, Any] = {
        "method": "dls",
        "restarts": 0,
        "time_budget": None,
        "tol": _TOL,
        "max_joint_step": MAX_STEP,
    }
    q, its = tg.q_init, np.zeros(len(tg.q_init), dtype=np.int64)
    if iterations[0] > 0:
        r = robot_model.ik(targets, q0=tg.q_init, max_iter=iterations[0], **opts)
        q, its = r.q, np.asarray(r.iterations)
    t3 = time.perf_counter()
    if iterations[1] > 0:
        r = robot_model.ik(
            targets, q0=_neighbour_median(robot_model, q), max_iter=iterations[1], **opts
        )
        q, its = r.q, its + np.asarray(r.iterations)
    resolved = np.zeros(0, dtype=np.int64)
    ignore: tuple[tuple[str, str], ...] = ()
    if margin is not None:
        ignore = rest_overlaps(robot_model)
    if CLIP_SOLVE is not None:
        o, collision = CLIP_SOLVE, None
        if margin is not None:
            collision = (margin, ignore)
            o = dataclasses.replace(o, iterations=o.iterations + CLIP_COLLISION_ITERATIONS)
        if margin is not None:
            d = np.asarray(robot_model.distance(q, self_collision=True, ignore=ignore).distance)
            resolved = np.flatnonzero(d < margin)
        q = refine_clip(robot_model, q, tg, src.fps, o, collision=collision)
        q = lift_to_floor(robot_model, q, tg.soles, round(FLOOR_EASE * src.fps))
    else:
        if SMOOTH_ROUNDS > 0 and len(q) >= 3:
            q, more = _temporal_pass(
                robot_model, targets, q, opts, SMOOTH_ROUNDS, SMOOTH_ITERATIONS
            )
            its = its + more
        if margin is not None:
            q, resolved = _collision_pass(robot_model, tg, q, opts, margin, ignore)
    t4 = time.perf_counter()
    base = robot_model.joint_indices(free)
    if isinstance(max_joint_speed, str):
        if max_joint_speed != "urdf":
            raise InvalidValueError(
                f"max_joint_speed must be 'urdf', a number, a dict or None, got {max_joint_speed!r}"
            )
        limits = {str(k): float(v) for k, v in robot_model.velocity_limits.items()}
    elif max_joint_speed is None:
        limits = {}
    elif isinstance(max_joint_speed, Mapping):
        limits = {str(k): float(v) for k, v in max_joint_speed.items()}
        for j in limits:
            robot_model.joint_indices(j)
    else:
        v = float(max_joint_speed)
        if not (math.isfinite(v) and v > 0):
            raise InvalidValueError(f"max_joint_speed must be positive, got {max_joint_speed!r}")
        simple = robot_model.qv.v_q[robot_model.qv.v_q >= 0]
        limits = {robot_model.joint_names[int(k)]: v for k in simple if int(k) not in base}
    q, capped = _speed_cap(robot_model, q, src.fps, limits, set(base.tolist()))
    if margin is not None and CLIP_SOLVE is not None:
        # Frames still overlapping (not cleared in the steps given, or moved back in by
        # the speed cap): more whole-clip steps, then the cap again; what is left after
        # RECHECKS rounds is cleared frame by frame (the collision-aware IK), the last
        # word (a capped frame may then exceed a speed limit, which the quality counts).
        more_steps = dataclasses.replace(CLIP_SOLVE, iterations=CLIP_COLLISION_ITERATIONS)
        for k in range(RECHECKS):
            d = np.asarray(robot_model.distance(q, self_collision=True, ignore=ignore).distance)
            if not np.any(d < 0.0):
                break
            q = refine_clip(robot_model, q, tg, src.fps, more_steps, collision=(margin, ignore))
            q = lift_to_floor(robot_model, q, tg.soles, round(FLOOR_EASE * src.fps))
            resolved = np.union1d(resolved, np.flatnonzero(d < 0.0))
            if k < RECHECKS - 1:
                q, more = _speed_cap(robot_model, q, src.fps, limits, set(base.tolist()))
                capped = np.union1d(capped, more)
        d = np.asarray(robot_model.distance(q, self_collision=True, ignore=ignore).distance)
        # The legs stay as the whole-clip solve left them (the feet on their targets):
        # the arms and the torso move out of the way.
        legs = frozenset(j for f in tg.soles for j in robot_model.chain(f)) - set(
            robot_model.chain(robot_model.node_names[0])
        )
        left = np.flatnonzero(d < 0.0)
        q, again = _collision_pass(robot_model, tg, q, opts, margin, ignore, left, legs)
        resolved = np.union1d(resolved, again)
        q, again = _clear_collisions(
            robot_model, tg, q, opts, margin, ignore, COLLISION_ITERATIONS << RECHECKS, 0.0
        )
        resolved = np.union1d(resolved, again)
    elif margin is not None:
        # Frames still overlapping (too deep for the iterations given, or moved back in
        # by the cap) are cleared again, from where they are, with twice the iterations
        # each round, then capped again; the last word is the collision pass's (a
        # capped frame may then exceed a speed limit, which the quality numbers count).
        for k in range(RECHECKS + 1):
            q, again = _clear_collisions(
                robot_model, tg, q, opts, margin, ignore, COLLISION_ITERATIONS << (k + 1), 0.0
            )
            resolved = np.union1d(resolved, again)
            if again.size == 0 or k == RECHECKS:
                break
            q, more = _speed_cap(robot_model, q, src.fps, limits, set(base.tolist()))
            capped = np.union1d(capped, more)
    t5 = time.perf_counter()
    pelvis = mp.role("pelvis")
    assert pelvis is not None  # make_map checks it
    info: dict[str, Any] = {
        "map": mp,
        "unmapped": unmapped,
        "source_unit": src.unit,
        "source_scale": src.scale,
        "source_axes": src.R,
        "dropped_frames": dropped,
        "contacts": tg.contacts,
        "ground": tg.ground,
        "s_leg": tg.s_leg,
        "segment_scale": tg.segment_scale,
        "pelvis": pelvis[1],
        "source_pelvis": src.T[:, src.index(pelvis[0]), :3, 3],
        "base_coordinates": set(base.tolist()),
        "speed_limits": limits,
        "speed_capped_frames": capped,
        "iterations": its,
        "self_collision": margin is not None,
        "collision_frames": resolved,
        "target_frames": tg.frames,
        "point_frames": tuple(f for f, w in zip(tg.frames, tg.weights) if w[0] > 0),
        "target_rotations": {
            f: tg.poses[:, t, :3, :3] for t, f in enumerate(tg.frames) if tg.weights[t][1] > 0
        },
        "left_out_targets": tg.left_out,
        "soles": tg.soles,
        "timing": {
            "source": t1 - t0,
            "targets": t2 - t1,
            "ik_first": t3 - t2,
            "ik_warm": t4 - t3,
            "speed_cap": t5 - t4,
        },
    }
    points = tg.poses[:, [t for t, w in enumerate(tg.weights) if w[0] > 0]][..., :3, 3]
    motion = Motion(
        model=robot_model,
        q=q,
        fps=src.fps,
        targets=points,
        name=name if name is not None else source_model.name,
        metadata={"retarget": info},
    )
    quality = retarget_quality(motion)
    info["timing"]["quality"] = time.perf_counter() - t5
    info["timing"]["total"] = time.perf_counter() - t0
    return Motion(
        model=robot_model,
        q=motion.q,
        fps=motion.fps,
        targets=motion.targets,
        name=motion.name,
        metadata={"retarget": info, "quality": quality},
    )
