"""The shortest paths to the compiled drivers: plain pose and position targets.

This file is long because its three plans (single pose, batch, whole-body dict) share one
cache and one fallback rule.

Plain 4x4 pose targets and plain positions skip the general assembly (cached templates,
the raw pose handed to the kernel); one plain pose with the same model, options and frame
as the call before reuses its whole plan (:class:`SinglePlan`), and a dict of plain poses
and positions (a whole body's hands and feet) writes into rows laid out once per model,
frames and options (:class:`DictPlan`). The dispatcher (:mod:`.solve`) picks them; each
falls back to it (None) where a target needs the general path.
"""

from __future__ import annotations

import math
import threading
import time
from typing import Any

import numpy as np

from .._cache import PerModel
from .._compile import compiled, entry
from ..errors import InvalidValueError
from ..model import Model
from ._run import F64, NO_HISTORY_E, NO_HISTORY_Q, run, single_result, writable
from .kernel import cached_driver
from .kernel import layout as L
from .method_table import KERNEL_METHODS
from .options import IKOptions
from .problem import Template, as_q0, template
from .result import IKResult, converged
from .targets import POSE_ROW, POSITION_ROW, Pose, Position, encode_plain

__all__ = [
    "PLAIN_DICT_MAX",
    "PLANS",
    "PLANS_SIZE",
    "DictPlan",
    "SinglePlan",
    "forget_plans",
    "plain_template",
    "q0_rows",
    "single_plan",
    "solve_plain_dict",
    "solve_poses",
]

_POSE_WEIGHTS = np.ones((1, 6))
_POSITION_WEIGHTS = np.array([[1.0, 1.0, 1.0, 0.0, 0.0, 0.0]])
_PLAIN: PerModel[Template] = PerModel(limit=64)
_NEUTRAL: PerModel[np.ndarray] = PerModel()
#: The last plain template handed out, by identity of model and options: one tuple
#: (model, opts, frame, position, template), read and replaced whole so that threads
#: never see one call's model with another's template. It keeps one model alive, as its
#: template does anyway.
_LAST_PLAIN: list[tuple[Any, ...]] = [(None, None, None, None, None)]


def plain_template(
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


#: Dicts of up to this many plain targets take :func:`solve_plain_dict`.
PLAIN_DICT_MAX = 64


def solve_plain_dict(
    model: Model, target: dict[Any, Any], opts: IKOptions, q0: Any, t0: float
) -> IKResult | None:
    """``{frame: plain Pose or Position}`` (no masks, weights or offsets; several
    effectors of a whole body) straight into the kernels: the same template and rows as
    :func:`~.problem.build_problem` makes, without its general assembly. None when a
    target needs the general path."""
    frames = tuple(target)
    last = LAST_DICT[0]
    plan: DictPlan | None = None
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
            plan = _DICT_PLANS.put(model, DictPlan(tpl, key[1], opts), key)
        LAST_DICT[0] = (model, opts, frames, plan)
        if len(DICT_PLANS) >= PLANS_SIZE:
            DICT_PLANS.clear()
        DICT_PLANS[(id(model), id(opts), frames)] = (model, opts, plan)
        rows = plan.fill(target)
        if rows is None:  # an equal but unusual dtype: the rows' general assembly
            rows = np.stack(encoded)[None]
    return plan.solve(rows, q0, t0)


def repeat_dict(
    model: Model, opts: IKOptions, target: dict[Any, Any], q0: Any, t0: float
) -> IKResult | None:
    """A dict of plain targets on the frames of the dict before, with the same model and
    options: its plan's rows filled and its driver called, nothing else looked up (a
    whole body solved target after target spends a few microseconds of Python around
    the driver). None when it is not such a repeat, or a value or ``q0`` needs the
    general path (which checks batch sizes; a plan's rows hold one problem)."""
    hit = DICT_PLANS.get((id(model), id(opts), tuple(target)))
    if hit is None or hit[0] is not model or hit[1] is not opts or opts.pin:
        return None  # pinned frames join the dict: the general path checks them
    plan: DictPlan = hit[2]
    if not (q0 is None or (type(q0) is np.ndarray and q0.shape == plan.q_shape)):
        return None
    rows = plan.fill(target)
    if rows is None:
        return None
    return plan.solve(rows, q0, t0)


def _plain_matrix(value: Any) -> np.ndarray | None:
    """The 4x4 float64 array of a plain :class:`Pose` (no masks, weights or point), or
    None (its last row is the caller's to check)."""
    if type(value) is not Pose:
        return None
    T = value.T
    if (
        type(T) is np.ndarray
        and T.shape == (4, 4)
        and T.dtype is F64
        and value.position_mask is None
        and value.orientation_mask is None
        and value.position_weight is None
        and value.orientation_weight is None
        and value.point is None
    ):
        return T
    return None


def solved_result(
    row: np.ndarray, nq: int, T: int, iters: float, restarts: float, reach: float,
    t0: float, frames: tuple[str, ...], method: str,
) -> IKResult:  # fmt: skip
    """The result of a solved result row with no collision block, built straight from
    the row (:func:`single_result` reads any row; about a microsecond more)."""
    it, rs = int(iters), int(restarts)
    return IKResult(
        row[:nq],
        True,
        row[nq : nq + T],
        row[nq + T : nq + 2 * T],
        it,
        rs,
        time.perf_counter() - t0,
        converged(it, rs),
        reach != 0.0,
        None,
        None,
        frames,
        method,
    )


class DictPlan:
    """Plain targets on fixed frames (a whole body's hands and feet): each call writes
    the targets' positions and rotations into rows laid out once (weights and the rest
    already in place; the same rows :func:`~.targets.encode_plain` makes), then calls the
    driver once. The rows and scratch are reused by the thread that made the plan;
    another thread gets its own (the driver runs without the GIL)."""

    __slots__ = (
        "call",
        "flat",
        "frames",
        "info",
        "kernel",
        "kinds",
        "last",
        "mats",
        "method",
        "neutral",
        "nq",
        "opts",
        "plain",
        "pos",
        "poses",
        "q_shape",
        "rigid",
        "rot",
        "rows",
        "rows12",
        "seed",
        "shape",
        "stack",
        "thread",
        "tpl",
        "work",
    )  # fmt: skip

    def __init__(self, tpl: Template, kinds: tuple[bool, ...], opts: IKOptions) -> None:
        self.tpl, self.kinds, self.opts = tpl, kinds, opts
        self.kernel = cached_driver(
            opts.kernel_method, tpl.has_swing_twist, tpl.collision is not None
        )
        self.thread = threading.get_ident()
        self.rows, self.pos, self.rot = self._rows()
        self.work = np.zeros(tpl.scratch)
        # All poses (a whole body's hands and feet): the 4x4s are gathered into ``mats``
        # and copied into the rows by two array assignments, not two per target.
        self.poses = not any(kinds)
        self.mats = np.zeros((len(kinds), 4, 4))
        self.stack = self.mats.reshape(4 * len(kinds), 4)  # the 4x4s stacked: a view
        self.flat = self.mats.reshape(len(kinds), 16)  # one 4x4 a row: a view
        self.last = self.mats[:, 3]  # their last rows: a view
        self.rigid = [_LAST_ROW] * len(kinds)  # what those rows must be
        self.rows12 = self.rows[0, :, L.T_POS : L.T_POS + 12]  # position, then rotation
        nq, T = tpl.model.nq, len(kinds)
        self.nq, self.q_shape = nq, (nq,)
        self.shape = (1, L.result_size(nq, T))
        self.info = slice(L.info_offset(nq, T), L.info_offset(nq, T) + L.R_SIZE)
        self.neutral = writable(q0_rows(tpl.model, None, 1))  # the driver only reads q0
        self.frames, self.method = tpl.frames, tpl.method
        self.plain = tpl.collision is None  # a solved row becomes its result here
        self.seed = opts.seed if opts.rng is None else None
        self.call: Any = None  # the driver's machine code, once it has run (:meth:`solve`)

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
        if self.poses and rows is self.rows:
            return self._fill_poses(target)
        kinds = self.kinds
        for i, value in enumerate(target.values()):
            if kinds[i]:
                row = encode_plain(value) if type(value) is Position else None
                if row is None:
                    return None
                pos[i][:] = row[L.T_POS : L.T_POS + 3]
                continue
            T = _plain_matrix(value)
            if T is None or T[3].tolist() != _LAST_ROW:
                return None
            pos[i][:] = T[:3, 3]
            rot[i][:] = T[:3, :3]
        return rows

    def _fill_poses(self, target: dict[Any, Any]) -> np.ndarray | None:
        """:meth:`fill` of a plan of poses only, on this thread's rows: the same checks
        and the same rows."""
        mats = []
        for value in target.values():
            T = _plain_matrix(value)
            if T is None:
                return None
            mats.append(T)
        np.concatenate(mats, axis=0, out=self.stack)
        if self.last.tolist() != self.rigid:
            return None
        # Each 4x4's position column, then its rotation row by row, into the rows (the
        # array's own method: numpy's function adds a Python wrapper around it).
        self.flat.take(_POSE_ORDER, axis=1, out=self.rows12)
        return self.rows

    def solve(self, rows: np.ndarray, q0: Any, t0: float) -> IKResult:
        """Solve ``rows`` (from :meth:`fill`) from ``q0`` (None: neutral)."""
        call = self.call
        if call is None:
            tpl = self.tpl
            model = tpl.model
            if model.couplings or not compiled(self.kernel):
                # The tiered first calls and the couplings: run's way.
                return run(tpl, rows.copy(), q0_rows(model, q0, 1), (), self.opts, t0)
            # The driver's machine code for the one set of argument types passed below
            # (each forced: C-contiguous writable float64 arrays, an int seed), without
            # the compiler's per-call dispatch.
            call = self.call = entry(
                self.kernel,
                (tpl.ibuf, tpl.fbuf, self.rows, self.neutral, 0, np.empty(self.shape),
                 NO_HISTORY_Q, NO_HISTORY_E, self.work, 0, 1),
            )  # fmt: skip
        nq = self.nq
        if q0 is None:
            q = self.neutral
        elif type(q0) is np.ndarray and q0.shape == self.q_shape and q0.dtype is F64:
            g = q0.flags
            q = q0[None] if g.writeable and g.c_contiguous else writable(q0[None])
        else:
            q = writable(q0_rows(self.tpl.model, q0, 1))
        out = np.empty(self.shape)
        own = rows is self.rows
        seed = self.seed if self.seed is not None else self.opts.draw_seed()
        call(
            self.tpl.ibuf,
            self.tpl.fbuf,
            rows if own else writable(rows),
            q,
            seed,
            out,
            NO_HISTORY_Q,
            NO_HISTORY_E,
            self.work if own else np.zeros(self.tpl.scratch),
            0,
            1,
        )
        row = out[0]
        status, iters, restarts, _, reach, _ = row[self.info].tolist()
        T = len(self.kinds)
        if status != L.ST_OK or not self.plain:
            return single_result(self.tpl, row, nq, T, NO_HISTORY_Q, NO_HISTORY_E, 0, t0)
        return solved_result(row, nq, T, iters, restarts, reach, t0, self.frames, self.method)


#: The last plain dict's plan: (model, opts, frames, plan), read and replaced whole.
LAST_DICT: list[tuple[Any, ...]] = [(None, None, None, None)]
#: Dict plans by identity, as :data:`PLANS`: ``(id(model), id(opts), frames) -> (model,
#: opts, plan)`` (:func:`repeat_dict`; a few call sites with options of their own each
#: keep theirs).
DICT_PLANS: dict[tuple[int, int, tuple[str, ...]], tuple[Model, IKOptions, DictPlan]] = {}
#: Plans of plain dicts per model, by (frames, kinds, options).
_DICT_PLANS: PerModel[DictPlan] = PerModel(limit=64)
_LAST_ROW = [0.0, 0.0, 0.0, 1.0]
#: Where a row's position and row-major rotation (``T_POS``, ``T_ROT``) sit in a flat 4x4.
_POSE_ORDER = np.array([3, 7, 11, 0, 1, 2, 4, 5, 6, 8, 9, 10])
assert L.T_ROT == L.T_POS + 3


class SinglePlan:
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
        "stack",
        "thread",
        "tpl",
        "work",
    )

    def __init__(self, tpl: Template, kernel: Any, opts: IKOptions) -> None:
        nq = tpl.model.nq
        self.tpl, self.kernel, self.opts, self.nq = tpl, kernel, opts, nq
        self.ibuf, self.fbuf = tpl.ibuf, tpl.fbuf
        self.shape = (1, L.result_size(nq, 1))
        self.neutral = q0_rows(tpl.model, None, 1)
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
        # passes (it forces them), without the compiler's per-call dispatch.
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
                q = writable(q0_rows(self.tpl.model, q0, 1))
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
        return solved_result(row, nq, 1, iters, restarts, reach, t0, self.frames, self.method)


#: Single-pose plans by identity: ``(id(model), id(opts), frame) -> (model, opts, plan)``.
#: An entry holds its model and options, so their ids are not reused while it lives, and
#: a hit is checked by ``is``. A few call sites with options of their own (equal options
#: built apart are distinct objects) each keep their plan; equal options would otherwise
#: be compared field by field on every call.
PLANS: dict[tuple[int, int, str | None], tuple[Model, IKOptions, SinglePlan]] = {}
#: Plans kept at most (then all forgotten at once).
PLANS_SIZE = 32


def forget_plans() -> None:
    """Drop every single-pose and dict plan (a test that makes drivers count as
    uncompiled)."""
    PLANS.clear()
    DICT_PLANS.clear()
    LAST_DICT[0] = (None, None, None, None)


def single_plan(model: Model, frame: str | None, opts: IKOptions) -> SinglePlan | None:
    """The :class:`SinglePlan` of a plain pose on ``frame``, or None where the general path
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
    tpl = plain_template(model, frame, opts)
    kernel = cached_driver(opts.kernel_method, tpl.has_swing_twist, tpl.collision is not None)
    if not compiled(kernel):
        return None
    plan = SinglePlan(tpl, kernel, opts)
    if len(PLANS) >= PLANS_SIZE:
        PLANS.clear()
    PLANS[(id(model), id(opts), frame)] = (model, opts, plan)
    return plan


def q0_rows(model: Model, q0: Any, B: int, batch: tuple[int, ...] = ()) -> np.ndarray:
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


def solve_poses(
    model: Model, frame: str | None, opts: IKOptions, P: np.ndarray, q0: Any, t0: float
) -> IKResult:
    """Pose targets ``(..., 4, 4)`` straight into the compiled kernels."""
    tpl = plain_template(model, frame, opts)
    batch = P.shape[:-2]
    B = math.prod(batch)
    if B == 0:
        raise InvalidValueError(f"the batch of target poses is empty (shape {P.shape})")
    P = writable(P).reshape(B, 4, 4)
    return run(tpl, P, q0_rows(model, q0, B, batch), batch, opts, t0)
