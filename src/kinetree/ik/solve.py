"""``Model.ik``: validate once, pick the method and the shortest path to it.

The dispatcher only: the compiled methods (the method table's compiled-loop rows) run
through :func:`._run.run` (the method's driver over the batch); plain 4x4 poses, plain
positions and dicts of them take the plans of :mod:`._plans` (templates laid out once, a
remembered plan for one plain pose); ``Model.ik`` hands its keyword dict over as it is
(:func:`solve_keywords`). ``fabrik``, the scipy methods, ``analytic`` and seeded starts
are :mod:`.methods`, imported when first asked for, and return the same
:class:`~.result.IKResult`; a method that needs the dispatcher (seeded starts) receives it.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any

import numpy as np

from .._validate import check_memory
from ..errors import InvalidValueError, UnsupportedError
from ..model import Model
from ._plans import (
    PLAIN_DICT_MAX,
    PLANS,
    plain_template,
    q0_rows,
    repeat_dict,
    single_plan,
    solve_plain_dict,
    solve_poses,
)
from ._run import raise_status, run, run_problem
from .kernel import layout as L
from .method_table import KERNEL_METHODS, ROWS
from .options import OPTION_NAMES, IKOptions, resolve
from .problem import as_q0, build_problem
from .result import IKResult
from .targets import Pose, Position, encode_plain

__all__ = ["raise_status", "run", "solve", "solve_all", "solve_keywords", "solve_many"]


def solve(
    model: Model,
    target: Any,
    frame: str | None = None,
    *,
    q0: Any = None,
    base: str | None = None,
    options: IKOptions | None = None,
    device: str = "cpu",
    **kwargs: Any,
) -> IKResult:
    """Find ``q`` that brings ``frame`` (default: first end effector) to ``target``.

    Args:
        target: a 4x4 pose (or a batch ``(..., 4, 4)``), :class:`Position`,
            :class:`Orientation`, :class:`Pose`, :class:`Direction`, or a dict
            ``{frame: target}`` for several effectors at once (stacked errors).
        q0: initial configuration ``(nq,)`` (every batch item) or ``(..., nq)``;
            default the model's neutral configuration.
        base: a frame name: the targets are given in that frame (TRAC-IK's and
            MoveIt's chain base; see :mod:`kinetree.ik.relative`). Without
            ``active=`` only the joints between ``base`` and the targets' frames
            move; an active joint that moves ``base`` is refused.
        options: an :class:`~kinetree.ik.options.IKOptions`; keyword arguments
            (``method=``, ``tol=``, ``active=``, ...; every field of ``IKOptions``)
            build one or override its fields (``prior="human"`` among them).
        device: ``"cpu"``, or a GPU (``"cuda"``) to solve the batch there with
            :func:`kinetree.gpu.ik` (world targets only: no ``base=``).

    Returns:
        :class:`IKResult`; it never raises for an unsolvable target and never
        contains NaN. Bad input raises a :class:`~kinetree.errors.KinetreeError`.
    """
    if device != "cpu":
        return _on_device(model, target, frame, q0, base, options, kwargs, device)
    return _solve(model, target, frame, q0, base, options, kwargs, time.perf_counter())


def _on_device(
    model: Model,
    target: Any,
    frame: str | None,
    q0: Any,
    base: str | None,
    options: IKOptions | None,
    kwargs: dict[str, Any],
    device: str,
) -> IKResult:
    """:func:`kinetree.gpu.ik` for ``device`` (not the CPU)."""
    if base is not None:
        raise UnsupportedError(
            "ik(base=...) runs on the CPU only; on a GPU give world targets "
            "(T_world_base @ T, with T_world_base = model.fk(q0, base))"
        )
    from ..gpu import ik as ik_on

    return ik_on(model, target, frame, q0=q0, options=options, device=device, **kwargs)


def solve_keywords(model: Model, target: Any, frame: str | None, kw: dict[str, Any]) -> IKResult:
    """:func:`solve` with the caller's own keyword dict ``kw`` (``Model.ik``'s
    ``**options``, which it may change: ``q0``, ``base`` and ``options`` are taken out of
    it), without packing it into new keyword arguments."""
    t0 = time.perf_counter()
    q0 = kw.pop("q0", None)
    options = kw.pop("options", None)
    device = kw.pop("device", "cpu")
    if device != "cpu":
        return _on_device(model, target, frame, q0, kw.pop("base", None), options, kw, device)
    if (
        type(target) is np.ndarray
        and target.shape == (4, 4)
        and (frame is None or type(frame) is str)
        and "base" not in kw
    ):
        # One plain pose: the plan of the call before, found without :func:`_solve`.
        opts: IKOptions | None = resolve(kw) if options is None else None
        if options is not None and not kw and type(options) is IKOptions:
            opts = options
        hit = PLANS.get((id(model), id(opts), frame))
        if hit is not None and hit[0] is model and hit[1] is opts:
            return hit[2].solve(target, q0, t0)
    elif type(target) is dict and frame is None and "base" not in kw:
        # A whole body's targets again: the plan of the dict before.
        opts = resolve(kw) if options is None else None
        if options is not None and not kw and type(options) is IKOptions:
            opts = options
        if opts is not None:
            result = repeat_dict(model, opts, target, q0, t0)
            if result is not None:
                return result
    return _solve(model, target, frame, q0, kw.pop("base", None), options, kw, t0)


def _solve(
    model: Model,
    target: Any,
    frame: str | None,
    q0: Any,
    base: str | None,
    options: IKOptions | None,
    kwargs: dict[str, Any],
    t0: float,
) -> IKResult:
    """:func:`solve` with its keyword options in one dict and its start time ``t0``."""
    if options is None:
        opts = resolve(kwargs)
    elif not isinstance(options, IKOptions):
        raise InvalidValueError(f"options must be an IKOptions, got {type(options).__name__}")
    else:
        if kwargs:
            _refuse_conflicts(options, kwargs)
        opts = dataclasses.replace(options, **kwargs) if kwargs else options
    if type(target) is np.ndarray and target.dtype.kind == "c":
        raise InvalidValueError("target must be real numbers, got complex values")
    if type(target) is dict and frame is None and base is None:
        result = repeat_dict(model, opts, target, q0, t0)  # one problem: no batch to check
        if result is not None:
            return result
    _check_batch_memory(model, target, q0)
    if base is not None:
        from .relative import relative_to_base

        target, frame, opts = relative_to_base(model, target, frame, base, q0, opts)
    if opts.prior is not None:
        from .methods.prior import solve_with_prior

        return solve_with_prior(model, target, frame, opts, q0, t0, solve)
    if model.equalities and any(e.active for e in model.equalities):
        from .methods.closed_chains import solve_closed_chains

        if opts.pin:
            target, frame = _with_pins(model, target, frame, q0, opts.pin)
        return solve_closed_chains(model, target, frame, opts, q0, t0)
    if type(target) is np.ndarray and target.shape == (4, 4):
        plan = None
        if frame is None or type(frame) is str:
            hit = PLANS.get((id(model), id(opts), frame))
            if hit is not None and hit[0] is model and hit[1] is opts:
                plan = hit[2]
        if plan is None:
            plan = single_plan(model, frame, opts)
        if plan is not None:
            return plan.solve(target, q0, t0)
    if opts.seeds is not None:
        from .methods.seeded import solve_seeded

        return solve_seeded(model, target, frame, opts, q0, t0, solve)
    if opts.pin:
        target, frame = _with_pins(model, target, frame, q0, opts.pin)
    method = opts.method
    if method in KERNEL_METHODS and not opts.record:
        if type(target) is np.ndarray and target.ndim >= 2 and target.shape[-2:] == (4, 4):
            return solve_poses(model, frame, opts, target, q0, t0)
        if type(target) is dict and frame is None and 0 < len(target) <= PLAIN_DICT_MAX:
            result = solve_plain_dict(model, target, opts, q0, t0)
            if result is not None:
                return result
        if type(target) is Position:
            row = encode_plain(target)
            if row is not None:
                tpl = plain_template(model, frame, opts, position=True)
                targets = row.reshape(1, 1, L.TARGET_SIZE)
                return run(tpl, targets, q0_rows(model, q0, 1), (), opts, t0)
    if method == "analytic":
        from .methods.analytic_adapter import solve_analytic

        return solve_analytic(model, target, frame, opts, q0, t0)
    prob = build_problem(model, target, frame, opts, q0)
    method_row = ROWS[method]
    if not method_row.couplings and model.couplings:
        raise UnsupportedError(
            f"method {method!r} does not keep coupled coordinates (MJCF joint equalities); "
            f"the compiled methods do: {', '.join(sorted(KERNEL_METHODS))}"
        )
    if not method_row.quaternions and np.any(prob.template.active & model.qv.quaternion_mask):
        raise UnsupportedError(
            f"method {method!r} does not move quaternion (ball or free) joints; the "
            f"compiled methods do: {', '.join(sorted(KERNEL_METHODS))} (or leave the "
            "quaternion joints out of active=)"
        )
    if method_row.scipy is not None:
        from .methods.scipy_solvers import solve_scipy

        return solve_scipy(prob, t0)
    if method == "fabrik":
        from .methods.fabrik import solve_fabrik

        return solve_fabrik(prob, t0)
    return run_problem(prob, t0)


def _refuse_conflicts(options: IKOptions, kwargs: dict[str, Any]) -> None:
    """A keyword that sets a field of ``options=`` to another value is ambiguous: raise
    rather than let one silently win (a keyword for a field ``options`` leaves at its
    default, or one equal to it, is taken)."""
    defaults = IKOptions()
    for key, value in kwargs.items():
        mine = getattr(options, key, None)
        if key not in OPTION_NAMES or _same(mine, getattr(defaults, key)) or _same(mine, value):
            continue
        raise InvalidValueError(
            f"{key}={value!r} conflicts with options.{key}={mine!r}; give it in one place "
            f"(dataclasses.replace(options, {key}=...) changes it)"
        )


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(np.array_equal(a, b)) if hasattr(a, "__len__") else bool(a == b)
    except (TypeError, ValueError):
        return a is b


#: Field names per target dataclass (``dataclasses.fields`` is slow on a hot path).
_FIELDS: dict[type, tuple[str, ...]] = {}


def _batch_items(x: Any, trailing: int) -> float:
    """Items in the batch of an array ``x`` with ``trailing`` item dimensions (a target's
    fields and a dict's values searched too; 1 for anything else)."""
    if type(x) is np.ndarray:
        return float(math.prod(x.shape[: max(0, x.ndim - trailing)]))  # Python ints: no overflow
    if isinstance(x, dict):
        return max((_batch_items(v, 2) for v in x.values()), default=1.0)
    names = _FIELDS.get(type(x))
    if names is None:
        if not dataclasses.is_dataclass(x) or isinstance(x, type):
            return 1.0
        names = _FIELDS[type(x)] = tuple(f.name for f in dataclasses.fields(x))
    n = 1.0
    for name in names:
        v = getattr(x, name)
        if v is None:
            continue
        if type(v) is np.ndarray:
            n = max(n, _batch_items(v, 2 if v.shape[-2:] in ((4, 4), (3, 3)) else 1))
        elif isinstance(v, dict) or (dataclasses.is_dataclass(v) and not isinstance(v, type)):
            n = max(n, _batch_items(v, 1))
    return n


def _check_batch_memory(model: Model, target: Any, q0: Any) -> None:
    """Refuse a batch (of targets or of starts, a broadcast view counted as it would be
    copied) whose solve arrays would not fit, before any is built."""
    n = max(_batch_items(target, 2), _batch_items(q0, 1))
    if n > 1.0:
        per_item = 8.0 * (6 * model.nq + 4 * L.TARGET_SIZE + 16)
        check_memory(n * per_item, f"a batch of {int(n):,} IK problems", "solve fewer per call")


def _with_pins(
    model: Model, target: Any, frame: str | None, q0: Any, pins: tuple[str, ...]
) -> tuple[dict[str, Any], None]:
    """``pin=[frames]``: each pinned frame keeps its pose at ``q0`` (a Pose target)."""
    q = as_q0(model, q0, ())
    if q.ndim != 1:
        raise InvalidValueError("pin= needs one q0 (nq,), not a batch")
    targets = (
        dict(target)
        if isinstance(target, dict)
        else {frame if frame is not None else model.end_effectors[0]: target}
    )
    for name in pins:
        if name in targets:
            raise InvalidValueError(f"frame {name!r} is both pinned and a target")
        targets[name] = Pose(model.fk(q, name))
    return targets, None


def solve_all(
    model: Model, target: Any, frame: str | None = None, base: str | None = None, **options: Any
) -> np.ndarray:
    """Every closed-form solution ``(n, nq)`` (empty when unreachable); see ``ik.analytic``.

    ``base``: the target is given in that frame; every joint moves in a closed form, so
    no joint may move the base (:mod:`kinetree.ik.relative`)."""
    from .methods.analytic import solve_all as _solve_all
    from .methods.closed_chains import check_closed_chains

    check_closed_chains(model, "ik_all (closed forms)")
    if options:
        raise InvalidValueError(f"ik_all takes no options, got: {', '.join(options)}")
    if base is not None:
        from .relative import relative_to_base

        everything = IKOptions(active=model.joint_names)
        target, frame, _ = relative_to_base(model, target, frame, base, None, everything)
    return _solve_all(model, target, frame)


def solve_many(
    model: Model, target: Any, n: int, frame: str | None = None, **options: Any
) -> np.ndarray:
    """Up to ``n`` distinct exact solutions ``(k, nq)`` of one target (``Model.ik_many``):
    :func:`kinetree.ik.methods.seeded.solve_many`, each batch of starts solved by
    :func:`solve`."""
    from .methods.seeded import solve_many as _solve_many

    return _solve_many(model, target, n, frame, solve=solve, **options)
