"""A reach animated step by step: one IK iteration per frame (seed 000's first figure)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._validate import check_positive
from ..errors import InvalidValueError, UnsupportedError
from ..ik.targets import Pose
from ..model import Model
from ._targets import as_ik_target, moved_by, target_points
from .motion import Motion

__all__ = ["reach"]


def resample(q: np.ndarray, n: int) -> np.ndarray:
    """``n`` rows linearly interpolated along the rows of ``q`` (first and last kept)."""
    k = q.shape[0]
    if k == 1:
        return np.repeat(q, n, axis=0)
    if n == 1:
        return q[-1:].copy()
    x = np.linspace(0.0, k - 1.0, n)
    i = np.minimum(np.floor(x).astype(np.int64), k - 2)
    u = (x - i)[:, None]
    out = (1.0 - u) * q[i] + u * q[i + 1]
    out[0] = q[0]
    out[-1] = q[-1]
    return out


def reach(
    model: Model,
    target: Any,
    frame: str | None = None,
    *,
    q0: ArrayLike | None = None,
    method: str = "pinv",
    step: float = 0.1,
    frames: int | None = None,
    active: str | Iterable[str] | None = None,
    rest: Any = None,
    pin: str | Iterable[str] | None = None,
    max_iter: int | None = None,
    fps: float = 30.0,
    name: str = "reach",
    **ik_options: Any,
) -> Motion:
    """The step-by-step reach toward ``target``: one IK iteration per frame.

    Runs ``model.ik(target, frame, method=method, step=step, record=True, ...)``
    once and takes its iterates (``result.history``) as the frames: frame 0 is
    ``q0`` (clamped into the limits of the active joints), each next frame is one
    step of size ``step`` (the seed's alpha) and the last is where the solver
    stopped, the first iterate within ``tol`` when the target is reached (so the
    motion ends when it reaches). Random restarts are off (``restarts=0``) unless
    given, since a restart would jump.

    Args:
        model: the model.
        target: anything :meth:`Model.ik` takes (a 4x4 pose, ``Position``, ``Pose``,
            ``Orientation``, ``Direction``, or a dict ``{frame: target}``), or a
            point ``(3,)`` [model length unit] as a ``Position``.
        frame: the frame that reaches (default: the first end effector).
        q0: start configuration ``(dof,)`` (default: the neutral one).
        method: IK method (default ``"pinv"``, as in seed 000).
        step: scale of every iteration, ``0 < step <= 1``.
        frames: resample the iterates to exactly this many frames (linear in ``q``
            along the iterate index; first and last frame kept). Default: one frame
            per iterate, at most ``max_iter + 1``.
        active: joint, group or preset names that may move (default: all).
        rest: preferred configuration pulled in the null space (see ``Model.ik``).
        pin: frames held at their pose at ``q0`` during the reach (each becomes a
            :class:`Pose` target; e.g. the feet while a hand reaches). Pinned frames
            that no active joint moves are left out (they stay put anyway). The
            solver keeps every target's error to first order per step, so a pinned
            frame drifts by O(step^2) within a frame when its joints also serve the
            reach (exactly 0 when the chains are independent, e.g. the humanoid's
            legs and arms); for pins exact to ``tol`` on every frame use
            :func:`retarget`, which solves each frame to convergence.
        max_iter: iteration cap (default ``max(200, ceil(30 / step))``, enough for
            ``(1 - step)^k`` to shrink the error by ~1e-13).
        fps: frames per second of the motion.
        name: the motion's name.
        **ik_options: passed on to :meth:`Model.ik` (``tol``, ``rest_gain``, ...).

    Returns:
        A :class:`Motion` whose ``targets`` are the target points (for drawing; pins
        left out) and
        whose ``metadata`` holds ``"result"`` (the :class:`IKResult`),
        ``"success"``, ``"iterations"`` and ``"error"`` ``(n_iterates, 2)``: the
        largest position [length unit] and orientation [rad] error at each iterate.
    """
    step = check_positive(step, "step")
    if step > 1.0:
        raise InvalidValueError(f"step must be in (0, 1], got {step}")
    if max_iter is None:
        max_iter = max(200, math.ceil(30.0 / step))
    if frames is not None and (isinstance(frames, bool) or int(frames) != frames or frames < 1):
        raise InvalidValueError(f"frames must be a positive integer, got {frames!r}")
    from ..ik.options import KERNEL_METHODS

    if method not in KERNEL_METHODS:
        raise UnsupportedError(
            f"reach animates the iterates of a step-by-step method; method {method!r} does not "
            f"record them; use one of: {', '.join(KERNEL_METHODS)}"
        )
    ik_options.pop("record", None)  # always recorded: the iterates are the frames
    ik_options.setdefault("restarts", 0)
    if method == "auto":
        ik_options.setdefault("time_budget", None)

    if isinstance(target, Mapping):
        if frame is not None:
            raise InvalidValueError("give either a dict {frame: target} or frame=, not both")
        tgt: dict[str, Any] = {str(k): as_ik_target(v) for k, v in target.items()}
    else:
        tgt = {frame if frame is not None else model.end_effectors[0]: as_ik_target(target)}
    q_start = model.neutral() if q0 is None else np.asarray(q0, dtype=np.float64)
    pts = target_points(tgt)  # drawn targets: the reach targets, not the pins
    if pin is not None:
        pins = [pin] if isinstance(pin, str) else list(pin)
        mask = model.active_mask(active)
        for f in pins:
            if f in tgt:
                raise InvalidValueError(f"frame {f!r} is both a target and pinned")
            if moved_by(model, f, mask):  # else it cannot move anyway
                tgt[f] = Pose(np.asarray(model.fk(q_start, f)))

    result = model.ik(
        tgt,
        None,
        q0=q_start,
        method=method,
        step=step,
        record=True,
        max_iter=int(max_iter),
        active=active,
        rest=rest,
        **ik_options,
    )
    if result.history is None or result.error_history is None:  # pragma: no cover
        raise UnsupportedError(f"method {method!r} returned no iterates to animate")
    qs = result.history
    if frames is not None:
        qs = resample(qs, int(frames))
    targets = np.broadcast_to(pts, (qs.shape[0], *pts.shape)) if pts.shape[0] else None
    meta = {
        "result": result,
        "success": bool(result.success),
        "iterations": int(result.iterations),
        "error": result.error_history,
        "target_frames": tuple(tgt),
    }
    return Motion(model=model, q=qs, fps=fps, targets=targets, name=name, metadata=meta)
