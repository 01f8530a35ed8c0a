"""Inverse kinematics: every method behind one call, :func:`solve` (``Model.ik``).

Jacobian methods (``pinv``, ``transpose``, ``dls``, ``sdls``) and ``ccd`` share one
compiled loop (:mod:`kinetree.ik._kernels`) and differ only in the step rule;
``fabrik``, the scipy-based ``bfgs``/``lbfgs``/``cg`` and the closed-form
``analytic`` solvers sit beside it behind the same call and result type.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ..model import Model
from . import _kernels as K
from .problem import METHODS, Problem, Template, as_q0, build_problem, template
from .result import IKResult
from .targets import Direction, Orientation, Pose, Position, _encode_plain

__all__ = [
    "METHODS",
    "Direction",
    "IKResult",
    "Orientation",
    "Pose",
    "Position",
    "Problem",
    "build_problem",
    "solve",
    "solve_all",
]


def solve(model: Model, target: Any, frame: str | None = None, **options: Any) -> IKResult:
    """Find ``q`` that brings ``frame`` (default: first end effector) to ``target``.

    Args:
        target: a 4x4 pose (or a batch ``(..., 4, 4)``), :class:`Position`,
            :class:`Orientation`, :class:`Pose`, :class:`Direction`, or a dict
            ``{frame: target}`` for several effectors at once (stacked errors).
        q0: initial configuration ``(dof,)`` (every batch item) or ``(..., dof)``.
        method: one of :data:`METHODS` (default ``"auto"``: damped least squares
            with adaptive damping, clamping to limits and random restarts).
        active: joint, group or preset names that may move (default: all).
        tol: float for position [m] and rotation [rad] alike, or a pair.
        max_iter: iteration cap per attempt. step: scale of each step (alpha).
        damping: DLS damping scale (lambda = damping * E + lambda_min).
        rest: preferred configuration (or "neutral") pulled in the null space
            with ``rest_gain``. restarts / time_budget [s]: random restarts within
            limits until solved or out of time. seed / rng: restart randomness.
        respect_limits: clamp every iterate into the limits (default True).
        clamp_target: aim an unreachable position at the nearest point the
            chain can stretch to (seed 000, section 3.1); default True: the
            result is the closest configuration, ``success`` stays False and the
            errors are measured to the original target.
        record: keep every iterate (``result.history``) for animation.
        pin: frame name(s) that keep their pose at ``q0`` while the target moves
            (feet planted while a hand reaches); they join the targets.
        pinv_form: "svd" (V S^-1 U^T) or "normal" (J^T (J J^T)^-1) for pinv.
        normalized_step: seed 001's ``delta p = alpha d / |d|``: the task error
            is clipped to this length [m / rad] per iteration.

    Returns:
        :class:`IKResult`; it never raises for an unsolvable target and never
        contains NaN. Bad input raises a :class:`~kinetree.errors.KinetreeError`.
    """
    t0 = time.perf_counter()
    if "pin" in options:
        pins = options.pop("pin")
        if pins:
            target, frame = _with_pins(model, target, frame, {**options, "pin": pins})
    if type(target) is np.ndarray and target.ndim >= 2 and target.shape[-2:] == (4, 4):
        tpl = _pose_template(model, frame, options)
        if tpl is not None:
            return _solve_poses(tpl, target, options.get("q0"), t0)
    elif type(target) is Position:
        row = _encode_plain(target)
        if row is not None:
            tpl = _pose_template(model, frame, options, position=True)
            if tpl is not None:
                return _solve_row(tpl, row, options.get("q0"), t0)
    method = options.get("method", "auto")
    if method == "analytic":
        from .analytic_adapter import solve_analytic

        return solve_analytic(model, target, frame, t0, **options)
    prob = build_problem(model, target, frame, **options)
    if method in ("bfgs", "lbfgs", "cg"):
        from .scipy_solvers import solve_scipy

        return solve_scipy(prob, t0)
    if method == "fabrik":
        from .fabrik import solve_fabrik

        return solve_fabrik(prob, t0)
    return run(prob, t0)


def _with_pins(
    model: Model, target: Any, frame: str | None, options: dict[str, Any]
) -> tuple[dict[str, Any], None]:
    """``pin=[frames]``: each pinned frame keeps its pose at ``q0`` (a Pose target)."""
    from ..errors import InvalidValueError
    from .problem import as_q0

    pins = options["pin"]
    pins = [pins] if isinstance(pins, str) else list(pins)
    q0 = as_q0(model, options.get("q0"), ())
    if q0.ndim != 1:
        raise InvalidValueError("pin= needs one q0 (dof,), not a batch")
    targets = (
        dict(target)
        if isinstance(target, dict)
        else {frame if frame is not None else model.end_effectors[0]: target}
    )
    for name in pins:
        if name in targets:
            raise InvalidValueError(f"frame {name!r} is both pinned and a target")
        targets[name] = Pose(model.fk(q0, name))
    return targets, None


_POSE_WEIGHTS = np.ones((1, 6))
_POSITION_WEIGHTS = np.array([[1.0, 1.0, 1.0, 0.0, 0.0, 0.0]])
_NO_POINT = np.zeros((1, 3))
_CACHE_SIZE = 64
_KERNEL_METHODS = frozenset({"auto", "pinv", "transpose", "dls", "sdls", "ccd"})


def _pose_template(
    model: Model, frame: str | None, options: dict[str, Any], position: bool = False
) -> Template | None:
    """The cached template for one plain pose (or ``position``) target, or None when the
    options are not hashable or need the general path."""
    if len(options) - ("q0" in options) == 0:
        key: Any = (frame, position)
    else:
        if (
            options.get("method", "auto") not in _KERNEL_METHODS
            or options.get("record")
            or options.get("rng") is not None  # a generator draws a new seed each call
        ):
            return None
        # Insertion order is part of the key: the same options in another order only
        # cost one more cached template. Types too: 1, 1.0 and True validate differently.
        key = (frame, position, *[(k, type(v), v) for k, v in options.items() if k != "q0"])
    cache: dict[Any, Template] = model.__dict__.setdefault("_ik_templates", {})
    try:
        tpl = cache.get(key)
    except TypeError:  # an unhashable option value: take the general path
        return None
    if tpl is None:
        name = frame if frame is not None else model.end_effectors[0]
        opts = {k: v for k, v in options.items() if k != "q0"}
        weights = _POSITION_WEIGHTS if position else _POSE_WEIGHTS
        tpl = template(model, (name,), (0,), weights, _NO_POINT, opts)
        if len(cache) >= _CACHE_SIZE:
            cache.clear()
        cache[key] = tpl
    return tpl


def _solve_poses(tpl: Template, P: np.ndarray, q0: Any, t0: float) -> IKResult:
    """Pose targets ``(..., 4, 4)`` straight into the compiled kernels."""
    model = tpl.model
    dof = model.dof
    if P.dtype != np.float64 or not P.flags.c_contiguous:
        P = np.ascontiguousarray(P, dtype=np.float64)
    batch = P.shape[:-2]
    if q0 is None:
        qa = model.q_neutral
    elif type(q0) is np.ndarray and q0.dtype == np.float64 and q0.shape == (dof,):
        qa = q0 if q0.flags.c_contiguous else np.ascontiguousarray(q0)
    else:
        qa = as_q0(model, q0, batch) if batch else np.ascontiguousarray(as_q0(model, q0, ()))
    if not batch:
        out = np.empty(dof + 7)
        K.solve_pose_packed(tpl.ibuf, tpl.fbuf, P, qa, out, tpl.seed)
        status, iters, restarts, _, reach = out[dof + 2 :].tolist()
        if status > 1.0:
            _raise_status(int(status))
        success = status == 0.0
        reachable = reach != 0.0
        return IKResult(
            out[:dof], success, out[dof : dof + 1], out[dof + 1 : dof + 2], int(iters),
            int(restarts), time.perf_counter() - t0,
            _message(success, reachable, int(iters), int(restarts)), reachable, None, None,
            tpl.frames, tpl.method,
        )  # fmt: skip
    fdata, idata = model.packed
    B = int(np.prod(batch))
    if qa.ndim == 1:
        q0b = qa.reshape(1, dof)
    else:
        q0b = np.ascontiguousarray(np.broadcast_to(qa, (*batch, dof)).reshape(B, dof))
    out = np.empty((B, dof + 7))
    kernel = K.solve_pose_batch if B >= K.PARALLEL_MIN else K.solve_pose_batch_serial
    kernel(fdata, idata, tpl.nodes, tpl.tgt_i, tpl.rows, tpl.cfg, tpl.icfg,
           P.reshape(B, 4, 4), q0b, out, tpl.seed)  # fmt: skip
    return _batched(tpl, out, batch, t0)


def _solve_row(tpl: Template, row: np.ndarray, q0: Any, t0: float) -> IKResult:
    """One encoded target row (a plain Position) straight into the compiled solver."""
    model = tpl.model
    dof = model.dof
    if q0 is None:
        qa = model.q_neutral
    elif type(q0) is np.ndarray and q0.dtype == np.float64 and q0.shape == (dof,):
        qa = q0 if q0.flags.c_contiguous else np.ascontiguousarray(q0)
    else:
        qa = np.ascontiguousarray(as_q0(model, q0, ()))
    out = np.empty(dof + 7)
    K.solve_rows_packed(tpl.ibuf, tpl.fbuf, row.reshape(1, 24), qa, out, tpl.seed)
    return _single(tpl, out, None, None, t0)


def _single(tpl: Template, out: np.ndarray, hq: Any, he: Any, t0: float) -> IKResult:
    dof = tpl.model.dof
    T = tpl.tgt_i.shape[0]
    status, iters, restarts, hrows, reach = out[dof + 2 * T :].tolist()
    if status > K.ST_NOT_CONVERGED:
        _raise_status(int(status))
    success = status == K.ST_OK
    reachable = reach != 0.0
    n = int(hrows)
    return IKResult(
        q=out[:dof],
        success=success,
        position_error=out[dof : dof + T],
        orientation_error=out[dof + T : dof + 2 * T],
        iterations=int(iters),
        restarts=int(restarts),
        elapsed=time.perf_counter() - t0,
        message=_message(success, reachable, int(iters), int(restarts)),
        reachable=reachable,
        history=None if hq is None else hq[:n].copy(),
        error_history=None if he is None else he[:n].copy(),
        frames=tpl.frames,
        method=tpl.method,
    )


def _batched(tpl: Template, out: np.ndarray, batch: tuple[int, ...], t0: float) -> IKResult:
    dof = tpl.model.dof
    T = tpl.tgt_i.shape[0]
    info = out[:, dof + 2 * T :]
    status = info[:, 0]
    bad = status > K.ST_NOT_CONVERGED
    if np.any(bad):
        first = int(np.argmax(bad))
        where = f" (batch item {tuple(int(i) for i in np.unravel_index(first, batch))})"
        _raise_status(int(status[first]), where)
    success = (status == K.ST_OK).reshape(batch)
    reachable = (info[:, 4] != 0).reshape(batch)
    msg = np.where(
        success,
        "converged",
        np.where(
            reachable, "not converged within the iteration/time budget", "target out of reach"
        ),
    )
    return IKResult(
        q=out[:, :dof].reshape(*batch, dof),
        success=success,
        position_error=out[:, dof : dof + T].reshape(*batch, T),
        orientation_error=out[:, dof + T : dof + 2 * T].reshape(*batch, T),
        iterations=info[:, 1].astype(np.int64).reshape(batch),
        restarts=info[:, 2].astype(np.int64).reshape(batch),
        elapsed=time.perf_counter() - t0,
        message=msg,
        reachable=reachable,
        frames=tpl.frames,
        method=tpl.method,
    )


def run(prob: Problem, t0: float) -> IKResult:
    """Run the compiled solver on an assembled problem (any targets, batched or not)."""
    tpl = prob.template
    model = tpl.model
    fdata, idata = model.packed
    dof = model.dof
    T = tpl.tgt_i.shape[0]
    if not prob.batch:
        out = np.empty(K.out_size(dof, T))
        cap = int(tpl.icfg[K.I_RECORD])
        hq = np.empty((cap, dof))
        he = np.empty((cap, 2))
        K.solve_core(
            fdata, idata, tpl.nodes, tpl.tgt_i, np.ascontiguousarray(prob.tgt_f), tpl.rows,
            np.ascontiguousarray(prob.q0, dtype=np.float64), tpl.cfg, tpl.icfg, tpl.seed,
            out, hq, he,
        )  # fmt: skip
        return _single(tpl, out, hq if cap else None, he if cap else None, t0)
    B = int(np.prod(prob.batch))
    tgt = np.ascontiguousarray(prob.tgt_f.reshape(B, T, 24))
    q0 = np.ascontiguousarray(np.broadcast_to(prob.q0, (*prob.batch, dof)).reshape(B, dof))
    out = np.empty((B, K.out_size(dof, T)))
    kernel = K.solve_batch if B >= K.PARALLEL_MIN else K.solve_batch_serial
    kernel(fdata, idata, tpl.nodes, tpl.tgt_i, tgt, tpl.rows, q0, tpl.cfg, tpl.icfg,
                  tpl.seed, out)  # fmt: skip
    return _batched(tpl, out, prob.batch, t0)


def _raise_status(status: int, where: str = "") -> None:
    from ..errors import InvalidValueError, NotRigidError

    if status == K.ST_NONFINITE:
        raise InvalidValueError(f"target or q0 contains NaN or inf{where}")
    if status == K.ST_NOT_RIGID:
        raise NotRigidError(
            f"target pose is not a rigid transform{where}: its rotation must be orthonormal "
            "with det +1 and its last row [0, 0, 0, 1]"
        )


def _message(success: bool, reachable: bool, iters: int, restarts: int) -> str:
    if success:
        return f"converged in {iters} iterations" + (
            f" after {restarts} restarts" if restarts else ""
        )
    if not reachable:
        return (
            "target out of reach: farther from the first active joint than the chain can "
            "stretch; returned the closest configuration found"
        )
    return (
        f"not converged after {iters} iterations and {restarts} restarts (iteration or time "
        "budget spent; the target may be blocked by joint limits or inactive joints)"
    )


def solve_all(model: Model, target: Any, frame: str | None = None, **options: Any) -> np.ndarray:
    """Every closed-form solution ``(n, dof)`` (empty when unreachable); see ``ik.analytic``."""
    from .analytic import solve_all as _solve_all

    if options:
        from ..errors import InvalidValueError

        raise InvalidValueError(f"ik_all takes no options, got: {', '.join(options)}")
    return _solve_all(model, target, frame)
