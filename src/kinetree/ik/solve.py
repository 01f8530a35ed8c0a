"""``Model.ik``: validate once, pick the method, run it, return one kind of result.

The compiled methods (``auto``, ``pinv``, ``transpose``, ``dls``, ``sdls``, ``ccd``)
run through :func:`run`: the method's compiled driver (:mod:`._drivers`), called once
for a single solve or a small batch and over chunks on every core for a large one. Plain
4x4 pose targets and plain positions skip the general assembly (cached templates,
the raw pose handed to the kernel). ``fabrik``, the scipy methods and ``analytic``
sit beside them and return the same :class:`~.result.IKResult`.
"""

from __future__ import annotations

import dataclasses
import math
import time
import weakref
from typing import Any

import numpy as np

from .._compile import compiled, interpret_first, notice
from .._progress import progress
from .._threads import n_threads, run_chunks
from ..errors import InvalidValueError, NotRigidError, UnsupportedError
from ..model import Model
from . import layout as L
from ._drivers import cached_driver, driver
from .options import KERNEL_METHODS, IKOptions, resolve
from .problem import Problem, Template, apply_couplings, as_q0, build_problem, template
from .result import IKResult, make_result, one_result, with_clearance
from .targets import Pose, Position, encode_plain

__all__ = ["run", "solve", "solve_all"]

#: Batches at least this large run on every core.
PARALLEL_MIN = 8
#: Methods whose first problems may run interpreted while their driver compiles
#: (``_compile.interpret_first``): those without an SVD, whose Python twin does the same
#: arithmetic as the machine code (an interpreted SVD would be numpy's LAPACK, not the
#: compiled one's).
INTERPRETABLE = frozenset({"dls", "transpose", "ccd"})


def solve(
    model: Model,
    target: Any,
    frame: str | None = None,
    *,
    q0: Any = None,
    base: str | None = None,
    options: IKOptions | None = None,
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
            build one or override its fields.

    Returns:
        :class:`IKResult`; it never raises for an unsolvable target and never
        contains NaN. Bad input raises a :class:`~kinetree.errors.KinetreeError`.
    """
    t0 = time.perf_counter()
    if options is None:
        opts = resolve(kwargs)
    elif not isinstance(options, IKOptions):
        raise InvalidValueError(f"options must be an IKOptions, got {type(options).__name__}")
    else:
        opts = dataclasses.replace(options, **kwargs) if kwargs else options
    if type(target) is np.ndarray and target.dtype.kind == "c":
        raise InvalidValueError("target must be real numbers, got complex values")
    if base is not None:
        from .relative import relative_to_base

        target, frame, opts = relative_to_base(model, target, frame, base, q0, opts)
    if type(target) is np.ndarray and target.shape == (4, 4):
        last = _LAST_SINGLE[0]  # one read: another thread may replace it meanwhile
        plan = last[3] if last[0] is model and last[1] is opts and last[2] == frame else None
        if plan is None:
            plan = _single_plan(model, frame, opts)
        if plan is not None:
            return plan.solve(target, q0, t0)
    if opts.seeds is not None:
        from .seeded import solve_seeded

        return solve_seeded(model, target, frame, opts, q0, t0)
    if opts.pin:
        target, frame = _with_pins(model, target, frame, q0, opts.pin)
    method = opts.method
    if method in KERNEL_METHODS and not opts.record:
        if type(target) is np.ndarray and target.ndim >= 2 and target.shape[-2:] == (4, 4):
            return _solve_poses(model, frame, opts, target, q0, t0)
        if type(target) is Position:
            row = encode_plain(target)
            if row is not None:
                tpl = _plain_template(model, frame, opts, position=True)
                targets = row.reshape(1, 1, L.TARGET_SIZE)
                return run(tpl, targets, _q0_rows(model, q0, 1), (), opts, t0)
    if method == "analytic":
        from .analytic_adapter import solve_analytic

        return solve_analytic(model, target, frame, opts, q0, t0)
    prob = build_problem(model, target, frame, opts, q0)
    if method == "fabrik" and model.couplings:
        raise UnsupportedError(
            "method 'fabrik' does not keep coupled coordinates (MJCF joint equalities); "
            f"the compiled methods do: {', '.join(sorted(KERNEL_METHODS))}"
        )
    if method in ("bfgs", "lbfgs", "cg", "fabrik") and np.any(
        prob.template.active & model.quaternion_mask
    ):
        raise UnsupportedError(
            f"method {method!r} does not move quaternion (ball or free) joints; the "
            f"compiled methods do: {', '.join(sorted(KERNEL_METHODS))} (or leave the "
            "quaternion joints out of active=)"
        )
    if method in ("bfgs", "lbfgs", "cg"):
        from .scipy_solvers import solve_scipy

        return solve_scipy(prob, t0)
    if method == "fabrik":
        from .fabrik import solve_fabrik

        return solve_fabrik(prob, t0)
    return run_problem(prob, t0)


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


# --- the fast paths: plain pose and position targets -------------------------------------------

_POSE_WEIGHTS = np.ones((1, 6))
_POSITION_WEIGHTS = np.array([[1.0, 1.0, 1.0, 0.0, 0.0, 0.0]])
_NO_POINT = np.zeros((1, 3))
_PLAIN: weakref.WeakKeyDictionary[Model, dict[Any, Template]] = weakref.WeakKeyDictionary()
_NEUTRAL: weakref.WeakKeyDictionary[Model, np.ndarray] = weakref.WeakKeyDictionary()
#: The last plain template handed out, by identity of model and options: one tuple
#: (model, opts, frame, position, template), read and replaced whole so that threads
#: never see one call's model with another's template. It keeps one model alive, as its
#: template does anyway.
_LAST_PLAIN: list[tuple[Any, ...]] = [(None, None, None, None, None)]


def _plain_template(
    model: Model, frame: str | None, opts: IKOptions, position: bool = False
) -> Template:
    """The cached template of one plain pose (or ``position``) target on ``frame``."""
    last = _LAST_PLAIN[0]
    if last[0] is model and last[1] is opts and last[2] is frame and last[3] is position:
        return last[4]  # a control loop or animation repeats the same call
    cache = _PLAIN.get(model)
    if cache is None:
        cache = _PLAIN[model] = {}
    key = (frame, position, opts.layout_key())
    tpl = cache.get(key)
    if tpl is None:
        if frame is not None and not isinstance(frame, str):
            raise InvalidValueError(f"frame must be a frame name, got {frame!r}")
        name = frame if frame is not None else model.end_effectors[0]
        weights = _POSITION_WEIGHTS if position else _POSE_WEIGHTS
        tpl = template(model, (name,), (L.KIND_FRAME,), weights, _NO_POINT, opts.layout_key())
        if len(cache) >= 64:
            cache.clear()
        cache[key] = tpl
    _LAST_PLAIN[0] = (model, opts, frame, position, tpl)
    return tpl


class _Single:
    """One plain pose target on one frame, solved by an already compiled driver: what
    :func:`run` and :func:`_single` look up per call, looked up once per (model,
    options, frame). A control loop or an animation calls ``Model.ik`` with the same
    options and frame thousands of times; this path spends about 2 us of Python around
    the driver where the general one spends 5 (``docs/benchmarks.md``)."""

    __slots__ = ("fbuf", "ibuf", "kernel", "neutral", "nq", "opts", "scratch", "seed", "shape",
                 "tpl")  # fmt: skip

    def __init__(self, tpl: Template, kernel: Any, opts: IKOptions) -> None:
        nq = tpl.model.nq
        self.tpl, self.kernel, self.opts, self.nq = tpl, kernel, opts, nq
        self.ibuf, self.fbuf = tpl.ibuf, tpl.fbuf
        self.shape = (1, L.result_size(nq, 1))
        self.neutral = _q0_rows(tpl.model, None, 1)
        self.seed = opts.seed if opts.rng is None else None
        self.scratch = tpl.scratch

    def solve(self, P: np.ndarray, q0: Any, t0: float) -> IKResult:
        """Solve the (4, 4) pose ``P`` from ``q0`` (None: neutral)."""
        nq = self.nq
        f = P.flags
        if not (f.c_contiguous and f.writeable and P.dtype is _F64):
            P = np.require(P, np.float64, ("C", "W"))
        if q0 is None:
            q = self.neutral
        elif type(q0) is np.ndarray and q0.shape == (nq,) and q0.dtype is _F64:
            g = q0.flags
            q = q0.reshape(1, nq) if g.writeable and g.c_contiguous else _writable(q0[None])
        else:
            q = _writable(_q0_rows(self.tpl.model, q0, 1))
        out = np.empty(self.shape)
        seed = self.seed if self.seed is not None else self.opts.draw_seed()
        self.kernel(self.ibuf, self.fbuf, P.reshape(1, 4, 4), q, seed, out, _NO_HISTORY_Q,
                    _NO_HISTORY_E, np.zeros(self.scratch), 0, 1)  # fmt: skip
        return _single(self.tpl, out[0], nq, 1, _NO_HISTORY_Q, _NO_HISTORY_E, 0, t0)


#: The last single-pose plan: one tuple (model, opts, frame, plan), matched by identity,
#: read and replaced whole (thread-safe under the GIL).
_LAST_SINGLE: list[tuple[Any, ...]] = [(None, None, None, None)]


def _single_plan(model: Model, frame: str | None, opts: IKOptions) -> _Single | None:
    """The :class:`_Single` of a plain pose on ``frame``, or None where the general path
    must run: options that record, pin or need another method, coupled coordinates, or a
    driver not yet compiled in this process (its first call may compile or interpret)."""
    if (
        opts.method not in KERNEL_METHODS
        or opts.record
        or opts.pin
        or model.couplings
        or opts.seeds is not None
    ):
        return None
    tpl = _plain_template(model, frame, opts)
    kernel = cached_driver(opts.kernel_method, tpl.has_swing_twist, tpl.collision is not None)
    if not compiled(kernel):
        return None
    plan = _Single(tpl, kernel, opts)
    _LAST_SINGLE[0] = (model, opts, frame, plan)
    return plan


def _q0_rows(model: Model, q0: Any, B: int, batch: tuple[int, ...] = ()) -> np.ndarray:
    """``q0`` as a writable ``(1, nq)`` (shared) or ``(B, nq)`` float64 array (a view of
    the caller's where it already is one): one compiled specialisation whatever the
    caller passed, read-only arrays included."""
    nq = model.nq
    if q0 is None:
        neutral = _NEUTRAL.get(model)
        if neutral is None:  # shared, never written by the kernels
            neutral = _NEUTRAL[model] = model.q_neutral.reshape(1, nq).copy()
        return neutral
    if type(q0) is np.ndarray and q0.shape == (nq,) and q0.dtype is _F64:
        # The kernels never write q0: a view will do when it has the kernels' flags.
        return q0.reshape(1, nq) if q0.flags.writeable else q0.reshape(1, nq).copy()
    qa = as_q0(model, q0, batch)
    return np.array(qa, dtype=np.float64).reshape(1 if qa.ndim == 1 else B, nq)


def _solve_poses(
    model: Model, frame: str | None, opts: IKOptions, P: np.ndarray, q0: Any, t0: float
) -> IKResult:
    """Pose targets ``(..., 4, 4)`` straight into the compiled kernels."""
    tpl = _plain_template(model, frame, opts)
    batch = P.shape[:-2]
    B = math.prod(batch)
    if B == 0:
        raise InvalidValueError(f"the batch of target poses is empty (shape {P.shape})")
    P = _writable(P).reshape(B, 4, 4)
    return run(tpl, P, _q0_rows(model, q0, B, batch), batch, opts, t0)


# --- the compiled path ----------------------------------------------------------------------------


def run_problem(prob: Problem, t0: float) -> IKResult:
    """Run the compiled solver on an assembled problem (any targets, batched or not)."""
    tpl = prob.template
    B = int(np.prod(prob.batch)) if prob.batch else 1
    targets = np.require(prob.tgt_f.reshape(B, tpl.n_targets, L.TARGET_SIZE), np.float64,
                         ("C", "W"))  # fmt: skip
    q0 = np.array(prob.q0, dtype=np.float64).reshape(-1, tpl.model.nq)  # (B or 1, nq)
    return run(tpl, targets, q0, prob.batch, tpl.options, t0)


def run(
    tpl: Template,
    targets: np.ndarray,
    q0: np.ndarray,
    batch: tuple[int, ...],
    opts: IKOptions,
    t0: float,
) -> IKResult:
    """Solve ``targets`` (B, T, TARGET_SIZE) rows or (B, 4, 4) raw poses from ``q0``
    ((1, nq) shared or (B, nq)) with the template's method; ``batch`` is the shape the
    result takes (``()`` for one solve)."""
    nq = tpl.model.nq
    T = tpl.n_targets
    # One compiled signature whatever the caller built: C-contiguous, writable float64.
    targets = _writable(targets)
    q0 = _writable(q0)
    B = targets.shape[0]
    out = np.empty((B, L.result_size(nq, T)))
    rows = opts.history_rows if not batch else 0
    if rows:
        hist_q = np.empty((rows, nq))
        hist_e = np.empty((rows, 2))
    else:
        hist_q, hist_e = _NO_HISTORY_Q, _NO_HISTORY_E
    seed = opts.draw_seed()
    method = tpl.options.kernel_method
    collide = tpl.collision is not None
    kernel = cached_driver(method, tpl.has_swing_twist, collide)
    ib, fb = tpl.ibuf, tpl.fbuf
    ns = tpl.scratch
    if B < PARALLEL_MIN and compiled(kernel):
        kernel(ib, fb, targets, q0, seed, out, hist_q, hist_e, np.zeros(ns), 0, B)
    else:
        first = 0  # problems solved before the machine code is ready (tiered start)
        if not collide and not compiled(kernel) and method in INTERPRETABLE:
            build = (driver.__module__, "driver", (method, tpl.has_swing_twist))
            args = (ib, fb, targets, q0, seed, out, hist_q, hist_e, np.zeros(ns))
            first = interpret_first(kernel, build, args, B, opts.budget)
        if first < B:
            with notice(kernel), progress(B - first, "ik") as tick:  # a bar on stderr after 2 s

                def part(a: int, b: int) -> None:
                    # Scratch per call: chunks run on several threads at once.
                    kernel(ib, fb, targets, q0, seed, out, hist_q, hist_e, np.zeros(ns),
                           first + a, first + b)  # fmt: skip
                    tick(b - a)

                if B - first < PARALLEL_MIN:
                    part(0, B - first)
                else:
                    run_chunks(part, B - first, max(4, min(64, B // (8 * n_threads()) or 1)))
    if tpl.model.couplings:
        apply_couplings(tpl.model, out[:, :nq])
        if rows:
            apply_couplings(tpl.model, hist_q)
    if not batch:
        return _single(tpl, out[0], nq, T, hist_q, hist_e, rows, t0)
    r = L.read_result(out, nq, T)
    _raise_bad_input(r["status"], batch)
    return make_result(
        q=r["q"], success=r["status"] == L.ST_OK, position_error=r["position_error"],
        orientation_error=r["orientation_error"], iterations=r["iterations"],
        restarts=r["restarts"], reachable=r["reachable"] != 0.0, batch=batch,
        elapsed=time.perf_counter() - t0, frames=tpl.frames, method=tpl.method,
        min_distance=r["min_distance"] if collide else None,
        in_collision=r["status"] == L.ST_IN_COLLISION,
    )  # fmt: skip


#: The float64 dtype: numpy's built-in dtypes are singletons, and ``is`` costs 40 ns
#: where ``a.dtype == np.float64`` costs 170 (three such checks per single solve).
_F64 = np.dtype(np.float64)
_NO_HISTORY_Q = np.empty((0, 0))  # never written: the kernel records no row into them
_NO_HISTORY_E = np.empty((0, 2))


def _writable(a: np.ndarray) -> np.ndarray:
    """``a`` if it is C-contiguous, writable float64 (the kernels' one signature), else a
    copy that is."""
    f = a.flags
    if f.c_contiguous and f.writeable and a.dtype is _F64:
        return a
    return np.require(a, np.float64, ("C", "W"))


def _single(
    tpl: Template, row: np.ndarray, nq: int, T: int, hist_q: np.ndarray, hist_e: np.ndarray,
    rows: int, t0: float,
) -> IKResult:  # fmt: skip
    """The result of one solve, read from its row without array arithmetic (the per-call
    cost of control loops and animations). The kernel already reports a NaN error as inf."""
    i = L.info_offset(nq, T)
    status, iters, restarts, n, reach, clear = row[i : i + L.R_SIZE].tolist()
    if status > L.ST_NOT_CONVERGED and status != L.ST_IN_COLLISION:  # bad input
        raise_status(int(status))
    # Positional: keyword calls cost microseconds here (see one_result).
    result = one_result(
        row[:nq], status == L.ST_OK, row[nq : nq + T], row[nq + T : nq + 2 * T], int(iters),
        int(restarts), reach != 0.0, time.perf_counter() - t0, tpl.frames, tpl.method,
        hist_q[: int(n)].copy() if rows else None, hist_e[: int(n)].copy() if rows else None,
    )  # fmt: skip
    if tpl.collision is not None:
        with_clearance(result, clear, status == L.ST_IN_COLLISION, tpl)
    return result


def _raise_bad_input(status: np.ndarray, batch: tuple[int, ...]) -> None:
    """Statuses above ``ST_NOT_CONVERGED`` are bad input: raise for the first one."""
    bad = np.isin(status, L.BAD_INPUT)
    if not np.any(bad):
        return
    first = int(np.argmax(bad))
    where = ""
    if batch:
        where = f" (batch item {tuple(int(i) for i in np.unravel_index(first, batch))})"
    raise_status(int(status[first]), where)


def raise_status(status: int, where: str = "") -> None:
    """Raise the error of a kernel status code (see ``layout.ST_*``)."""
    if status == L.ST_NONFINITE:
        raise InvalidValueError(f"target or q0 contains NaN or inf{where}")
    if status == L.ST_TOO_FAR:
        raise InvalidValueError(
            f"a target coordinate is beyond {L.MAX_COORDINATE:g} (model units){where}"
        )
    if status == L.ST_NOT_RIGID:
        raise NotRigidError(
            f"target pose is not a rigid transform{where}: its rotation must be orthonormal "
            f"within {L.RIGID_TOL:g} (max |R^T R - I| entry) with det +1 and its last row "
            "[0, 0, 0, 1]; kinetree.spatial.orthonormalize projects a near-rigid pose"
        )


def solve_all(
    model: Model, target: Any, frame: str | None = None, base: str | None = None, **options: Any
) -> np.ndarray:
    """Every closed-form solution ``(n, nq)`` (empty when unreachable); see ``ik.analytic``.

    ``base``: the target is given in that frame; every joint moves in a closed form, so
    no joint may move the base (:mod:`kinetree.ik.relative`)."""
    from .analytic import solve_all as _solve_all

    if options:
        raise InvalidValueError(f"ik_all takes no options, got: {', '.join(options)}")
    if base is not None:
        from .relative import relative_to_base

        everything = IKOptions(active=model.joint_names)
        target, frame, _ = relative_to_base(model, target, frame, base, None, everything)
    return _solve_all(model, target, frame)
