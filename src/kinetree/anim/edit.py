"""Edit a motion with IK on every frame: move hands, keep feet on the ground."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from .._validate import check_positive
from ..errors import InvalidValueError, ShapeError
from ..ik.targets import Direction, Orientation, Pose, Position
from ..io.bvh import BVHClip
from ..model import Model
from ._targets import as_ik_target, moved_by, target_point
from .motion import Motion

__all__ = ["edit_by_targets"]

_AXES = {"x": 0, "y": 1, "z": 2}
_TARGET_TYPES = (Position, Orientation, Pose, Direction)
TargetSpec = Any  # array (n, 3) | (n, 4, 4) | (3,) | (4, 4) | target object | callable


def _per_frame(name: str, spec: TargetSpec, n: int) -> Callable[[int, np.ndarray], Any]:
    """A function ``(frame index, source q) -> IK target`` for one target spec."""
    if callable(spec) and not isinstance(spec, _TARGET_TYPES):
        return lambda k, q: as_ik_target(spec(k, q))
    if isinstance(spec, _TARGET_TYPES):
        return lambda k, q: spec
    a = np.asarray(spec, dtype=np.float64)
    if not np.all(np.isfinite(a)):
        raise InvalidValueError(f"targets[{name!r}] contains NaN or inf")
    if a.shape == (3,) or a.shape == (4, 4):
        t = as_ik_target(a)
        return lambda k, q: t
    if a.shape == (n, 3):
        return lambda k, q: Position(a[k])
    if a.shape == (n, 4, 4):
        return lambda k, q: a[k]
    raise ShapeError(
        f"targets[{name!r}] must be ({n}, 3) points, ({n}, 4, 4) poses, one (3,) point or "
        f"(4, 4) pose, a target object or a callable (frame, q) -> target; got shape {a.shape}"
    )


def _up_axis(up: str | None, clip: BVHClip | None) -> int:
    if up is None:
        if clip is not None:
            return 2 if clip.up == "z" else 1
        return 2
    if up not in _AXES:
        raise InvalidValueError(f"up must be 'x', 'y' or 'z', got {up!r}")
    return _AXES[up]


def edit_by_targets(
    source: BVHClip | Motion,
    targets: Mapping[str, TargetSpec] | None = None,
    *,
    active: str | Iterable[str] | None = None,
    rest: Any = None,
    max_joint_step: float | None = None,
    limit_joint_step: bool = False,
    pin: str | Iterable[str] | None = None,
    ground_height: float | None = None,
    up: str | None = None,
    method: str = "dls",
    max_iter: int = 100,
    name: str | None = None,
    **ik_options: Any,
) -> Motion:
    """IK on every frame of ``source``, warm-started from the frame before.

    Frame ``k`` is solved from ``q0`` = the source's ``q[k]`` with the active
    joints replaced by the result of frame ``k - 1`` (frame 0: the source's
    ``q[0]``), so inactive joints keep the source's values exactly and the active
    ones move on from where they were: few iterations per frame and no jumps
    between solution branches. Random restarts are off (``restarts=0``) unless given.

    Args:
        source: a :class:`~kinetree.io.bvh.BVHClip` or a :class:`Motion`.
        targets: ``{frame: spec}``; a spec is ``(n_frames, 3)`` points or
            ``(n_frames, 4, 4)`` poses (one per frame), one ``(3,)`` point or
            ``(4, 4)`` pose for every frame, a target object (``Position``, ``Pose``,
            ``Orientation``, ``Direction``), or a callable ``(k, q_source_k) ->
            target`` (anything ``Model.ik`` takes, or a point). Units: the model's.
        active: joints, groups or presets the solver may move (default: all).
        rest: null-space preference (see ``Model.ik``): a configuration,
            ``"neutral"``, or ``"source"``: each frame's source configuration, which
            keeps the redundant joints close to the original motion.
        max_joint_step: the "no popping" bound [rad, or length unit for prismatic
            DoFs] on the change of any active DoF from one frame to the next. Frames
            where the solution moves more are listed in ``metadata["popped_frames"]``;
            with ``limit_joint_step`` the change is also scaled down to the bound
            (the frame may then miss its targets; ``metadata["success"]`` says so,
            and the next frames catch up). Not the IK option of the same name (a
            per-iteration bound), which edit_by_targets does not pass on.
        pin: frames kept where they are in the source: on every frame each pinned
            frame gets a ``Position`` target at its source world position. With
            ``ground_height`` the position's height (its ``up`` coordinate) is
            raised to at least ``ground_height``; frames the source already has
            above the ground keep the source position. So
            ``pin=["LeftFoot", "RightFoot"], ground_height=h`` keeps the feet's
            motion and lifts them out of a floor at height ``h``. A pinned frame no
            active joint moves needs no target (it follows the source exactly).
        ground_height: the floor height [length unit] for ``pin`` (default: none).
        up: the vertical world axis, ``"x"``, ``"y"`` or ``"z"`` (default: ``"z"``
            for a BVH clip read with ``up="z"`` and for non-BVH models, ``"y"`` for
            other BVH clips, which are Y-up).
        method, max_iter, **ik_options: the IK settings (``tol``, ``damping``,
            ``rest_gain``...; see ``Model.ik``). Default ``method="dls"``.
        name: the motion's name (default: the source's).

    Returns:
        A :class:`Motion` at the source's fps (``clip`` kept, so ``to_clip`` works)
        whose ``targets`` are every point target per frame (for drawing), and whose
        ``metadata`` holds per frame: ``"success"`` (n,) bool, ``"position_error"``
        and ``"orientation_error"`` (n, n_targets) [length unit, rad],
        ``"iterations"`` (n,), ``"joint_step"`` (n,) the largest active-DoF change
        from the previous frame (0 on frame 0); and ``"popped_frames"``,
        ``"target_frames"``, ``"active"`` (the DoF mask).
    """
    if isinstance(source, BVHClip):
        src = Motion.from_clip(source)
    elif isinstance(source, Motion):
        src = source
    else:
        raise InvalidValueError(
            f"source must be a BVHClip or a Motion, got {type(source).__name__}"
        )
    model: Model = src.model
    n = src.n_frames
    q_src = src.q

    specs: dict[str, Callable[[int, np.ndarray], Any]] = {}
    for f, spec in (targets or {}).items():
        model.frame_index(f)
        specs[str(f)] = _per_frame(str(f), spec, n)
    pins = [] if pin is None else ([pin] if isinstance(pin, str) else list(pin))
    mask = model.active_mask(active)
    if pins:
        ax = _up_axis(up, src.clip)
        for f in pins:
            if f in specs:
                raise InvalidValueError(f"frame {f!r} is both a target and pinned")
            p = src.positions(f)
            lifted = False
            if ground_height is not None:
                low = p[:, ax] < float(ground_height)
                lifted = bool(np.any(low))
                p[low, ax] = float(ground_height)
            if not moved_by(model, f, mask):
                if lifted:
                    raise InvalidValueError(
                        f"pinned frame {f!r} is below ground_height on some frames, but no "
                        f"active joint moves it; it is moved by: {', '.join(model.chain(f))}"
                    )
                continue  # follows the source exactly anyway (inactive joints are kept)
            specs[f] = _per_frame(f, p, n)
    elif ground_height is not None:
        raise InvalidValueError("ground_height applies to pinned frames; give pin=[...]")
    if not specs:
        raise InvalidValueError("nothing to edit: give targets= and/or pin=")

    bound = None if max_joint_step is None else check_positive(max_joint_step, "max_joint_step")
    for key in ("q0", "record"):
        if key in ik_options:
            raise InvalidValueError(
                f"edit_by_targets does not take {key}=: every frame starts from the previous result"
            )
    ik_options.setdefault("restarts", 0)
    if method == "auto":
        ik_options.setdefault("time_budget", None)
    rest_source = isinstance(rest, str) and rest == "source"

    frames = tuple(specs)
    T = len(frames)
    q_out = np.empty_like(q_src)
    success = np.zeros(n, dtype=bool)
    perr = np.zeros((n, T))
    oerr = np.zeros((n, T))
    iters = np.zeros(n, dtype=np.int64)
    step = np.zeros(n)
    popped: list[int] = []
    points = np.full((n, T, 3), np.nan)
    prev: np.ndarray | None = None
    for k in range(n):
        qs = q_src[k]
        tk = {f: fn(k, qs) for f, fn in specs.items()}
        for t, f in enumerate(frames):
            pt = target_point(tk[f])
            if pt is not None:
                points[k, t] = pt
        q0 = qs.copy()
        if prev is not None:
            q0[mask] = prev[mask]
        opts = dict(ik_options, method=method, active=active, rest=qs if rest_source else rest)
        r = model.ik(tk, None, q0=q0, max_iter=max_iter, **opts)
        q = np.asarray(r.q, dtype=np.float64).copy()
        iters[k] = int(r.iterations)
        if prev is not None:
            d = q[mask] - prev[mask]
            m = float(np.max(np.abs(d), initial=0.0))
            if bound is not None and m > bound:
                popped.append(k)
                if limit_joint_step:
                    q[mask] = prev[mask] + d * (bound / m)
                    m = bound
                    # The errors where the frame really is: a zero-iteration solve.
                    r = model.ik(tk, None, q0=q, max_iter=0, **opts)
            step[k] = m
        q_out[k] = q
        success[k] = bool(r.success)
        perr[k] = r.position_error
        oerr[k] = r.orientation_error
        prev = q
    has_point = ~np.any(np.isnan(points), axis=(0, 2))
    drawn = points[:, has_point] if np.any(has_point) else None
    meta: dict[str, Any] = {
        "success": success,
        "position_error": perr,
        "orientation_error": oerr,
        "iterations": iters,
        "joint_step": step,
        "popped_frames": np.array(popped, dtype=np.int64),
        "target_frames": frames,
        "active": mask,
    }
    return Motion(
        model=model,
        q=q_out,
        fps=src.fps,
        targets=drawn,
        name=src.name if name is None else name,
        metadata=meta,
        clip=src.clip,
    )
