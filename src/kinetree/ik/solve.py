"""``Model.ik``: validate once, pick the method and the shortest path to it.

Long because the shortest paths (a single pose, a dict of plain targets) are plans
with their own scratch and thread rules, and they belong beside the dispatcher that
picks them; running a template lives in :mod:`._run`.

The compiled methods (``auto``, ``pinv``, ``transpose``, ``dls``, ``sdls``, ``ccd``)
run through :func:`._run.run` (the method's driver over the batch). Plain 4x4 pose
targets and plain positions skip the general assembly (cached templates, the raw pose
handed to the kernel); one plain pose with the same model, options and frame as the
call before reuses its whole plan (:class:`_Single`), and a dict of plain poses and
positions (a whole body's hands and feet) writes into rows laid out once per model,
frames and options (:class:`_DictPlan`). ``Model.ik`` hands its keyword dict over as it
is (:func:`solve_keywords`). ``fabrik``, the scipy methods and ``analytic`` sit beside
them and return the same :class:`~.result.IKResult`.
"""

from __future__ import annotations

import dataclasses
import math
import threading
import time
from typing import Any

import numpy as np

from .._cache import PerModel
from .._compile import compiled, entry
from ..errors import InvalidValueError, UnsupportedError
from ..model import Model
from ._run import (
    F64,
    NO_HISTORY_E,
    NO_HISTORY_Q,
    raise_status,
    run,
    run_problem,
    single_result,
    writable,
)
from .kernel import cached_driver
from .kernel import layout as L
from .method_table import KERNEL_METHODS, ROWS
from .options import IKOptions, resolve
from .problem import Template, as_q0, build_problem, template
from .result import IKResult, converged
from .targets import POSE_ROW, POSITION_ROW, Pose, Position, encode_plain

__all__ = ["raise_status", "run", "solve", "solve_all", "solve_keywords"]


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
    return _solve(model, target, frame, q0, base, options, kwargs, time.perf_counter())


def solve_keywords(model: Model, target: Any, frame: str | None, kw: dict[str, Any]) -> IKResult:
    """:func:`solve` with the caller's own keyword dict ``kw`` (``Model.ik``'s
    ``**options``, which it may change: ``q0``, ``base`` and ``options`` are taken out of
    it), without packing it into new keyword arguments."""
    t0 = time.perf_counter()
    q0 = kw.pop("q0", None)
    options = kw.pop("options", None)
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
        hit = _PLANS.get((id(model), id(opts), frame))
        if hit is not None and hit[0] is model and hit[1] is opts:
            return hit[2].solve(target, q0, t0)
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
        opts = dataclasses.replace(options, **kwargs) if kwargs else options
    if type(target) is np.ndarray and target.dtype.kind == "c":
        raise InvalidValueError("target must be real numbers, got complex values")
    if base is not None:
        from .relative import relative_to_base

        target, frame, opts = relative_to_base(model, target, frame, base, q0, opts)
    if type(target) is np.ndarray and target.shape == (4, 4):
        plan = None
        if frame is None or type(frame) is str:
            hit = _PLANS.get((id(model), id(opts), frame))
            if hit is not None and hit[0] is model and hit[1] is opts:
                plan = hit[2]
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
        if type(target) is dict and frame is None and 0 < len(target) <= _PLAIN_DICT_MAX:
            result = _solve_plain_dict(model, target, opts, q0, t0)
            if result is not None:
                return result
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
    row = ROWS[method]
    if not row.couplings and model.couplings:
        raise UnsupportedError(
            f"method {method!r} does not keep coupled coordinates (MJCF joint equalities); "
            f"the compiled methods do: {', '.join(sorted(KERNEL_METHODS))}"
        )
    if not row.quaternions and np.any(prob.template.active & model.quaternion_mask):
        raise UnsupportedError(
            f"method {method!r} does not move quaternion (ball or free) joints; the "
            f"compiled methods do: {', '.join(sorted(KERNEL_METHODS))} (or leave the "
            "quaternion joints out of active=)"
        )
    if row.scipy is not None:
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
_PLAIN: PerModel[Template] = PerModel(limit=64)
_NEUTRAL: PerModel[np.ndarray] = PerModel()
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
    if frame is not None and not isinstance(frame, str):
        raise InvalidValueError(f"frame must be a frame name, got {frame!r}")
    name = frame if frame is not None else model.end_effectors[0]
    tpl = _kept_template(model, (name,), (position,), opts)
    _LAST_PLAIN[0] = (model, opts, frame, position, tpl)
    return tpl


def _kept_template(
    model: Model, frames: tuple[str, ...], positions: tuple[bool, ...], opts: IKOptions
) -> Template:
    """The template of plain targets on ``frames`` (a position target where
    ``positions`` says so, else a pose), kept per model, frames and options."""
    key = (frames, positions, opts.layout_key())
    tpl = _PLAIN.get(model, key)
    if tpl is None:
        T = len(frames)
        weights = np.stack([_POSITION_WEIGHTS[0] if p else _POSE_WEIGHTS[0] for p in positions])
        tpl = template(
            model, frames, (L.KIND_FRAME,) * T, weights, np.zeros((T, 3)), opts.layout_key()
        )
        _PLAIN.put(model, tpl, key)
    return tpl


#: Dicts of up to this many plain targets take :func:`_solve_plain_dict`.
_PLAIN_DICT_MAX = 64


def _solve_plain_dict(
    model: Model, target: dict[Any, Any], opts: IKOptions, q0: Any, t0: float
) -> IKResult | None:
    """``{frame: plain Pose or Position}`` (no masks, weights or offsets; several
    effectors of a whole body) straight into the kernels: the same template and rows as
    :func:`~.problem.build_problem` makes, without its general assembly. None when a
    target needs the general path."""
    frames = tuple(target)
    last = _LAST_DICT[0]
    plan: _DictPlan | None = None
    if last[0] is model and last[1] is opts and last[2] == frames:
        plan = last[3]
    rows = None if plan is None else plan.fill(target)
    if plan is None or rows is None:
        kinds, encoded = [], []
        for value in target.values():
            row = encode_plain(value)
            if row is None:
                return None  # the general path reads it (or says what is wrong)
            kinds.append(type(value) is Position)
            encoded.append(row)
        if not all(type(name) is str for name in frames):
            return None  # the general path says what a key must be
        key = (frames, tuple(kinds), opts)
        plan = _DICT_PLANS.get(model, key)
        if plan is None:
            tpl = _kept_template(model, frames, key[1], opts)
            plan = _DICT_PLANS.put(model, _DictPlan(tpl, key[1], opts), key)
        _LAST_DICT[0] = (model, opts, frames, plan)
        rows = plan.fill(target)
        if rows is None:  # an equal but unusual dtype: the rows' general assembly
            rows = np.stack(encoded)[None]
    return plan.solve(rows, q0, t0)


class _DictPlan:
    """Plain targets on fixed frames (a whole body's hands and feet): each call writes
    the targets' positions and rotations into rows laid out once (weights and the rest
    already in place; the same rows :func:`~.targets.encode_plain` makes), then calls the
    driver once. The rows and scratch are reused by the thread that made the plan;
    another thread gets its own (the driver runs without the GIL)."""

    __slots__ = ("kernel", "kinds", "opts", "pos", "ready", "rot", "rows", "thread", "tpl", "work")

    def __init__(self, tpl: Template, kinds: tuple[bool, ...], opts: IKOptions) -> None:
        self.tpl, self.kinds, self.opts = tpl, kinds, opts
        self.kernel = cached_driver(
            opts.kernel_method, tpl.has_swing_twist, tpl.collision is not None
        )
        self.ready = False  # the driver compiled, no coupled coordinates to fix after
        self.thread = threading.get_ident()
        self.rows, self.pos, self.rot = self._rows()
        self.work = np.zeros(tpl.scratch)

    def _rows(self) -> tuple[np.ndarray, list[np.ndarray], list[np.ndarray]]:
        """Fresh rows ``(1, T, TARGET_SIZE)`` with views of each target's position (3,)
        and rotation (3, 3) in them."""
        rows = np.stack([POSITION_ROW if p else POSE_ROW for p in self.kinds])[None]
        pos = [r[L.T_POS : L.T_POS + 3] for r in rows[0]]
        rot = [r[L.T_ROT : L.T_ROT + 9].reshape(3, 3) for r in rows[0]]
        return rows, pos, rot

    def fill(self, target: dict[Any, Any]) -> np.ndarray | None:
        """The rows of ``target``'s values, or None when one is not the plain kind
        (pose or position) this plan was laid out for."""
        if threading.get_ident() == self.thread:
            rows, pos, rot = self.rows, self.pos, self.rot
        else:
            rows, pos, rot = self._rows()
        if len(target) != len(pos):
            return None
        kinds = self.kinds
        for i, value in enumerate(target.values()):
            if kinds[i]:
                row = encode_plain(value) if type(value) is Position else None
                if row is None:
                    return None
                pos[i][:] = row[L.T_POS : L.T_POS + 3]
                continue
            if type(value) is not Pose:
                return None
            T = value.T
            if not (
                type(T) is np.ndarray
                and T.shape == (4, 4)
                and T.dtype is F64
                and value.position_mask is None
                and value.orientation_mask is None
                and value.position_weight is None
                and value.orientation_weight is None
                and value.point is None
                and T[3].tolist() == _LAST_ROW
            ):
                return None
            pos[i][:] = T[:3, 3]
            rot[i][:] = T[:3, :3]
        return rows

    def solve(self, rows: np.ndarray, q0: Any, t0: float) -> IKResult:
        """Solve ``rows`` (from :meth:`fill`) from ``q0`` (None: neutral)."""
        tpl = self.tpl
        model = tpl.model
        if not self.ready:
            self.ready = not model.couplings and compiled(self.kernel)
            if not self.ready:  # the tiered first calls and the couplings: run's way
                return run(tpl, rows.copy(), _q0_rows(model, q0, 1), (), self.opts, t0)
        nq, T = model.nq, len(self.kinds)
        out = np.empty((1, L.result_size(nq, T)))
        work = self.work if rows is self.rows else np.zeros(tpl.scratch)
        q = writable(_q0_rows(model, q0, 1))
        self.kernel(
            tpl.ibuf,
            tpl.fbuf,
            rows,
            q,
            self.opts.draw_seed(),
            out,
            NO_HISTORY_Q,
            NO_HISTORY_E,
            work,
            0,
            1,
        )
        return single_result(tpl, out[0], nq, T, NO_HISTORY_Q, NO_HISTORY_E, 0, t0)


#: The last plain dict's plan: (model, opts, frames, plan), read and replaced whole.
_LAST_DICT: list[tuple[Any, ...]] = [(None, None, None, None)]
#: Plans of plain dicts per model, by (frames, kinds, options).
_DICT_PLANS: PerModel[_DictPlan] = PerModel(limit=64)
_LAST_ROW = [0.0, 0.0, 0.0, 1.0]


class _Single:
    """One plain pose target on one frame, solved by an already compiled driver: what
    :func:`run` and :func:`single_result` look up per call, looked up once per (model,
    options, frame). A control loop or an animation calls ``Model.ik`` with the same
    options and frame thousands of times; this path spends about 2 us of Python around
    the driver where the general one spends 5 (``docs/benchmarks.md``)."""

    __slots__ = (
        "call",
        "fbuf",
        "frames",
        "ibuf",
        "info",
        "kernel",
        "last_q0",
        "method",
        "neutral",
        "nq",
        "opts",
        "plain",
        "scratch",
        "seed",
        "shape",
        "thread",
        "tpl",
        "work",
    )

    def __init__(self, tpl: Template, kernel: Any, opts: IKOptions) -> None:
        nq = tpl.model.nq
        self.tpl, self.kernel, self.opts, self.nq = tpl, kernel, opts, nq
        self.ibuf, self.fbuf = tpl.ibuf, tpl.fbuf
        self.shape = (1, L.result_size(nq, 1))
        self.neutral = _q0_rows(tpl.model, None, 1)
        self.seed = opts.seed if opts.rng is None else None
        self.scratch = tpl.scratch
        # The driver's scratch, reused by the thread that made the plan: no problem reads
        # a scratch value it has not written (``_loop.solve_range``), so a reused one gives
        # the same answer; another thread (the driver runs without the GIL) gets its own.
        self.work = np.zeros(tpl.scratch)
        self.thread = threading.get_ident()
        # The result row's slices: ``q``, the two errors and the status block.
        self.info = slice(L.info_offset(nq, 1), L.info_offset(nq, 1) + L.R_SIZE)
        self.frames, self.method = tpl.frames, tpl.method
        # A solved row becomes its result here, without :func:`single_result`'s general
        # reading (about a microsecond: a tenth of a Panda solve); any other row (bad
        # input, not converged, a collision block) goes there.
        self.plain = tpl.collision is None
        # The driver's machine code for the one set of argument types :meth:`solve`
        # passes (it forces them), without numba's per-call dispatch.
        self.call = entry(
            kernel,
            (
                self.ibuf,
                self.fbuf,
                np.empty((1, 4, 4)),
                self.neutral,
                self.seed if self.seed is not None else 0,
                np.empty(self.shape),
                NO_HISTORY_Q,
                NO_HISTORY_E,
                self.work,
                0,
                1,
            ),
        )
        # ``(q0, its (1, nq) view)`` of the last call: a loop passes one array again.
        self.last_q0: tuple[Any, np.ndarray] = (None, self.neutral)

    def solve(self, P: np.ndarray, q0: Any, t0: float) -> IKResult:
        """Solve the (4, 4) pose ``P`` from ``q0`` (None: neutral)."""
        nq = self.nq
        f = P.flags
        if not (f.c_contiguous and f.writeable and P.dtype is F64):
            if P.dtype.kind == "c":
                raise InvalidValueError("target must be real numbers, got complex values")
            P = np.require(P, np.float64, ("C", "W"))
        last, q = self.last_q0
        if q0 is not last:
            if type(q0) is np.ndarray and q0.shape == (nq,) and q0.dtype is F64:
                g = q0.flags
                q = q0[None] if g.writeable and g.c_contiguous else writable(q0[None])
                if q.base is q0:  # a view: it follows q0's content
                    self.last_q0 = (q0, q)
            elif q0 is None:
                q = self.neutral
            else:
                q = writable(_q0_rows(self.tpl.model, q0, 1))
        out = np.empty(self.shape)
        seed = self.seed if self.seed is not None else self.opts.draw_seed()
        work = self.work if threading.get_ident() == self.thread else np.zeros(self.scratch)
        self.call(
            self.ibuf,
            self.fbuf,
            P[None],  # (1, 4, 4): a view, as reshape makes, at half its cost
            q,
            seed,
            out,
            NO_HISTORY_Q,
            NO_HISTORY_E,
            work,
            0,
            1,
        )
        row = out[0]
        status, iters, restarts, _, reach, _ = row[self.info].tolist()
        if status != L.ST_OK or not self.plain:
            return single_result(self.tpl, row, nq, 1, NO_HISTORY_Q, NO_HISTORY_E, 0, t0)
        it, rs = int(iters), int(restarts)
        return IKResult(
            row[:nq],
            True,
            row[nq : nq + 1],
            row[nq + 1 : nq + 2],
            it,
            rs,
            time.perf_counter() - t0,
            converged(it, rs),
            reach != 0.0,
            None,
            None,
            self.frames,
            self.method,
        )


#: Single-pose plans by identity: ``(id(model), id(opts), frame) -> (model, opts, plan)``.
#: An entry holds its model and options, so their ids are not reused while it lives, and
#: a hit is checked by ``is``. A few call sites with options of their own (equal options
#: built apart are distinct objects) each keep their plan; equal options would otherwise
#: be compared field by field on every call.
_PLANS: dict[tuple[int, int, str | None], tuple[Model, IKOptions, _Single]] = {}
#: Plans kept at most (then all forgotten at once).
PLANS_SIZE = 32


def forget_plans() -> None:
    """Drop every single-pose plan (a test that makes drivers count as uncompiled)."""
    _PLANS.clear()


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
    if len(_PLANS) >= PLANS_SIZE:
        _PLANS.clear()
    _PLANS[(id(model), id(opts), frame)] = (model, opts, plan)
    return plan


def _q0_rows(model: Model, q0: Any, B: int, batch: tuple[int, ...] = ()) -> np.ndarray:
    """``q0`` as a writable ``(1, nq)`` (shared) or ``(B, nq)`` float64 array (a view of
    the caller's where it already is one): one compiled specialisation whatever the
    caller passed, read-only arrays included."""
    nq = model.nq
    if q0 is None:
        neutral = _NEUTRAL.get(model)
        if neutral is None:  # shared, never written by the kernels
            neutral = _NEUTRAL.put(model, model.q_neutral.reshape(1, nq).copy())
        return neutral
    if type(q0) is np.ndarray and q0.shape == (nq,) and q0.dtype is F64:
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
    P = writable(P).reshape(B, 4, 4)
    return run(tpl, P, _q0_rows(model, q0, B, batch), batch, opts, t0)


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
