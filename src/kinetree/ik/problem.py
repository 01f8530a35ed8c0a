"""Assemble an IK problem into the arrays the compiled solver reads.

Long because a template gathers every option's arrays (limits, rest, swing-twist,
collision, sparse columns) in one place, which is where a new option is added.

Building is kept apart from solving (a test can inspect the matrices), and split in
two: a :class:`Template` holds everything that depends only on the model, the
frames, the kind and weights of the targets and the :class:`~.options.IKOptions`
(cached per model, so repeated solves pay for it once), and :func:`build_problem`
adds the per-call targets and ``q0``. The arrays' slots are named in
:mod:`kinetree.ik.kernel.layout`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._cache import PerModel
from .._validate import as_array
from ..errors import InvalidValueError, ShapeError, UnsupportedError
from ..kinematics import needed_nodes
from ..kinematics.layout import packed_ik
from ..model import JointType, Model
from .kernel import layout as L
from .kernel.swing_twist_layout import swing_twist_layout
from .options import (
    COLLISION_BUFFER,
    COLLISION_INFLUENCE,
    COLLISION_MAX_STEP,
    COLLISION_SEEDS,
    IKOptions,
)
from .targets import encode

__all__ = ["Problem", "Template", "as_q0", "build_problem", "cached_template", "template"]

#: IK scratch above this many bytes is refused up front (it grows with the error rows
#: times the active DoF).
MAX_SCRATCH_BYTES = 2 * 1024**3


@dataclass(frozen=True, eq=False)
class Template:
    """The options-and-structure half of a problem (no target values, no ``q0``).

    ``tgt_i`` (T, 2), ``rows`` (m, 2), ``nodes`` and ``(ibuf, fbuf)`` are the kernels'
    arrays (:mod:`~kinetree.ik.kernel.layout`); the rest are the same facts for Python
    solvers: per-DoF ``lo``/``hi`` limits, ``sample_lo``/``sample_hi`` restart bounds,
    ``rest`` configuration and ``rest_gain`` (0: no pull), and the active DoF.
    """

    model: Model
    frames: tuple[str, ...]
    options: IKOptions
    tgt_i: np.ndarray
    weights: np.ndarray  # (T, 6) row weights, fixed for the template
    rows: np.ndarray
    nodes: np.ndarray
    active: np.ndarray  # (nq,) bool
    active_idx: np.ndarray  # (na,) indices into the motion
    lo: np.ndarray
    hi: np.ndarray
    sample_lo: np.ndarray
    sample_hi: np.ndarray
    rest: np.ndarray
    rest_gain: float
    has_swing_twist: bool  # swing-twist limits enforced (ball joints with cones, active)
    ibuf: np.ndarray
    fbuf: np.ndarray
    #: The packed scene of a collision-aware solve (``kinetree.collision.CollisionTables``),
    #: None without collision checks.
    collision: Any = None
    #: Length of the float64 scratch one driver call needs (``layout.driver_scratch_len``).
    scratch: int = 0

    @property
    def method(self) -> str:
        return self.options.method

    @property
    def n_targets(self) -> int:
        return int(self.tgt_i.shape[0])


@dataclass(frozen=True)
class Problem:
    """A template plus targets ``tgt_f`` ``(*batch, T, TARGET_SIZE)`` and ``q0``
    ``(*batch, nq)``."""

    template: Template
    tgt_f: np.ndarray
    q0: np.ndarray
    batch: tuple[int, ...]


def reach_bound(
    model: Model, node: int, active: np.ndarray, point: np.ndarray, limits: bool = True
) -> tuple[int, float]:
    """``(pivot, reach)``: a node whose origin no active joint moves (the first node on
    ``node``'s path that an active DoF moves if it is revolute, else its parent) and an
    upper bound [m] of the distance from it to the target point over all
    configurations: link lengths summed, prismatic travel added (unbounded without
    ``limits``). ``(-1, 0)`` when nothing active moves the frame, ``(-1, inf)`` when
    the bound is infinite."""
    path = model.ancestors(node)
    first = -1
    for s_, k in enumerate(path):
        if model.moves(k) and active[model.q_index[k]]:
            first = s_
            break
    if first < 0:
        return -1, 0.0
    # A revolute joint does not move its own origin: that is the pivot. A prismatic one
    # does, so the pivot is its parent and its origin offset joins the sum.
    turns = model.joint_type[path[first]] in (JointType.REVOLUTE, JointType.BALL)
    start = first if turns else first - 1
    reach = float(np.linalg.norm(point))
    for k in path[start + 1 :]:
        reach += float(np.linalg.norm(model.origin[k][:3, 3]))
    for k in path[first:]:
        if model.joint_type[k] == JointType.PRISMATIC:
            if not limits:
                return -1, float("inf")
            lim = np.abs(model.limits[model.q_index[k]]) * abs(model.q_scale[k])
            reach += float(np.max(lim)) + abs(float(model.q_offset[k]))
    if not np.isfinite(reach):
        return -1, float("inf")
    return int(path[start]), reach


def template(
    model: Model,
    frames: tuple[str, ...],
    kinds: tuple[int, ...],
    weights: np.ndarray,
    points: np.ndarray,
    opts: IKOptions,
    nodes: tuple[int, ...] | None = None,
) -> Template:
    """Lay out everything but the target values; ``weights`` (T, 6), ``points`` (T, 3).
    ``nodes`` overrides the frames' nodes (a hidden inner node of a ball joint)."""
    nq, nv = model.nq, model.nv
    T = len(frames)
    if nodes is None:
        nodes = tuple(model.frame_index(f) for f in frames)
    tgt_i = np.array(list(zip(nodes, kinds)), dtype=np.int64).reshape(T, 2)
    rows = np.array(
        [(t, c) for t in range(T) for c in range(6) if weights[t, c] > 0.0], dtype=np.int64
    ).reshape(-1, 2)
    if rows.shape[0] == 0:
        raise InvalidValueError("every target component is masked out or has weight 0")

    active = model.active_mask(opts.active)
    for j, _, _, _ in model.couplings:
        active[j] = False  # IK writes a tied coordinate from its source
    act_idx = model.qv.v_of_coordinates(np.nonzero(active)[0])
    if act_idx.size == 0:
        if model.nv == 0 or (opts.active is None and not np.any(active)):
            raise UnsupportedError(
                f"model {model.name!r} has no joint that IK could move (it has "
                f"{model.nv} degrees of freedom{', all tied to others' if model.nv else ''})"
            )
        raise InvalidValueError(
            f"no active joints: active={list(opts.active or [])!r} selects no joint that "
            "moves (tied joints follow their source)"
        )
    n, m, na = model.n_nodes, rows.shape[0], act_idx.size
    need = 8 * L.scratch_size(n, nq, nv, m, na, T)
    if need > MAX_SCRATCH_BYTES:
        raise UnsupportedError(
            f"IK over {na} active DoF and {m} error rows needs {need / 1024**3:.1f} GiB of "
            f"scratch (it grows with the error rows times the active DoF); at most "
            f"{MAX_SCRATCH_BYTES / 1024**3:.0f} GiB: select fewer joints with active="
        )

    limits_on = opts.respect_limits
    pivots = np.full(T, -1, dtype=np.int64)
    reach = np.zeros(T)
    for t, name in enumerate(frames):
        pv, rc = reach_bound(model, int(tgt_i[t, 0]), active, points[t], limits_on)
        if pv < 0 and rc == 0.0:
            shown = ", ".join(model.qv.v_names[i] for i in act_idx[:12])
            raise InvalidValueError(
                f"target on frame {name!r} cannot be moved by the active joints ({shown}"
                f"{', ...' if act_idx.size > 12 else ''}); frame {name!r} is moved by: "
                f"{', '.join(model.chain(name)) or 'nothing'}"
            )
        # The check is on the full 3-D distance: only for targets with all three position
        # components weighted (a masked target may be reachable in its free axes).
        if kinds[t] != L.KIND_DIRECTION and np.all(weights[t, :3] > 0) and pv >= 0:
            pivots[t] = pv
            reach[t] = rc

    rest = model.q_neutral
    rest_gain = 0.0
    if opts.rest is not None:
        if opts.rest != "neutral":
            rest = np.asarray(opts.rest, dtype=np.float64)
            if rest.shape != (nq,):
                raise ShapeError(f"rest must have shape ({nq},), got {rest.shape}")
        rest_gain = opts.rest_gain
    slo, shi = model.sampling_bounds()
    st_i, st_f = (
        swing_twist_layout(model, active) if limits_on else (np.zeros(1, np.int64), np.zeros(0))
    )
    lo, hi = model.limits[:, 0], model.limits[:, 1]
    act_q, balls, keep = _quaternion_layout(model, act_idx)
    slo, shi = slo.copy(), shi.copy()
    slo[keep] = shi[keep] = np.nan  # restarts keep q0's value (a free joint's position)
    length = model.length_scale
    unit = np.ones(nq)
    unit[_prismatic_coordinates(model)] = length
    units_on = bool(np.any(unit[act_q[act_q >= 0]] != 1.0))
    cfg, icfg = L.write_config(
        {
            L.C_TOL_P: opts.tol[0],
            L.C_TOL_R: opts.tol[1],
            L.C_STEP: opts.step,
            L.C_DAMPING: opts.damping,
            L.C_LAMBDA_MIN: opts.lambda_min,
            L.C_BUDGET: opts.budget,
            L.C_REST_GAIN: rest_gain,
            L.C_CUTOFF: opts.cutoff,
            L.C_TASK_STEP: opts.normalized_step or 0.0,
            L.C_MAX_JOINT_STEP: opts.max_joint_step,
            L.C_INV_LENGTH: 1.0 / length,
        },
        {
            L.N_MAX_ITER: opts.iterations,
            L.N_RESTARTS: opts.attempts,
            L.N_LIMITS: int(limits_on),
            L.N_PINV_FORM: 0 if opts.pinv_form == "svd" else 1,
            L.N_RECORD: opts.history_rows,
            L.N_CLAMP: int(opts.clamp_target),
            L.N_STALL: opts.stall_iter,
            L.N_TOTAL_ITER: opts.iteration_budget or 0,
            L.N_NQ: nq,
            L.N_NV: nv,
            L.N_UNITS: int(units_on),
        },
        (lo, hi, slo, shi, rest, unit),
        reach,
        st_f,
        act_idx,
        act_q,
        np.maximum(model.qv.dof_node, 0),
        pivots,
        balls,
        st_i,
        _target_columns(model, act_idx, tgt_i[:, 0], rows),
    )
    coll = None
    fk_frames = tuple(int(k) for k in tgt_i[:, 0])
    if opts.collision:
        coll = _collision_tables(model, opts, active)
        cfg, icfg = L.write_collision(
            cfg,
            icfg,
            {
                L.CF_MARGIN: opts.margin,
                L.CF_CUTOFF: opts.margin + COLLISION_INFLUENCE,
                L.CF_INFLUENCE: opts.margin + COLLISION_INFLUENCE,
                L.CF_BUFFER: COLLISION_BUFFER,
                L.CF_MAX_STEP: COLLISION_MAX_STEP,
            },
            COLLISION_SEEDS,
            coll.spheres,
            coll.links,
            coll.obstacles,
            coll.obstacle_data,
            coll.pairs,
        )
        fk_frames += tuple(int(k) for k in coll.nodes)
    fk_nodes = needed_nodes(model, fk_frames)
    ibuf, fbuf = L.pack(*packed_ik(model), fk_nodes, tgt_i, rows, cfg, icfg)
    for a in (tgt_i, rows, act_idx, slo, shi, rest):
        a.setflags(write=False)
    return Template(
        model=model,
        frames=tuple(frames),
        options=opts,
        tgt_i=tgt_i,
        weights=weights.copy(),
        rows=rows,
        nodes=fk_nodes,
        active=active,
        active_idx=act_idx,
        lo=lo,
        hi=hi,
        sample_lo=slo,
        sample_hi=shi,
        rest=rest,
        rest_gain=rest_gain,
        has_swing_twist=bool(limits_on and st_i[0] > 0),
        ibuf=ibuf,
        fbuf=fbuf,
        collision=coll,
        scratch=L.driver_scratch_len(ibuf, fbuf, nq),
    )


def _collision_tables(model: Model, opts: IKOptions, active: np.ndarray) -> Any:
    """The packed scene of ``opts`` (obstacles, self pairs, ignored pairs) for ``model``,
    without the pairs the ``active`` coordinates cannot move apart (reported by
    :func:`kinetree.collision.report.report_left_out` when they touch)."""
    from ..collision.report import report_left_out
    from ..collision.robot import collision_model

    cm = opts.collision_model if opts.collision_model is not None else collision_model(model)
    if cm.model is not model:
        raise InvalidValueError(
            f"collision_model was made for model {cm.model.name!r}, not for this model "
            f"({model.name!r}); make one with kinetree.collision.collision_model(model)"
        )
    tables = cm.tables(opts.obstacles, opts.self_pairs, opts.ignore, moving=active)
    if tables.left_out:
        report_left_out(cm, tables, opts.obstacles, opts.self_pairs, opts.ignore)
    return tables


#: Several targets get per-target column lists (``layout.N_SPARSE``) when their rows touch
#: at most this share of the Jacobian's entries (a humanoid's four effectors: about 1/3).
SPARSE_SHARE = 0.75


def _target_columns(
    model: Model, act_idx: np.ndarray, nodes: np.ndarray, rows: np.ndarray
) -> np.ndarray | None:
    """For each target, the active columns (indices into ``act_idx``) that move its node:
    the DoF of its ancestors, mimic joints included; None for one target, or where the
    lists would not save much (see :func:`~kinetree.ik.kernel._linalg.gram_rows`)."""
    T = nodes.shape[0]
    if T < 2:
        return None
    vi, jt, parent = model.qv.v_index, model.joint_type, model.parent
    col_of = {int(v): kk for kk, v in enumerate(act_idx)}
    columns = []
    for node in nodes:
        cols: set[int] = set()
        k = int(node)
        while k >= 0:
            if vi[k] >= 0 and jt[k] != JointType.FIXED:
                for d in range(3 if jt[k] == JointType.BALL else 1):
                    kk = col_of.get(int(vi[k]) + d)
                    if kk is not None:
                        cols.add(kk)
            k = int(parent[k])
        columns.append(np.array(sorted(cols), dtype=np.int64))
    touched = sum(columns[int(t)].size for t in rows[:, 0])
    if touched > SPARSE_SHARE * rows.shape[0] * act_idx.size:
        return None
    return L.target_columns_block(columns)


def _prismatic_coordinates(model: Model) -> np.ndarray:
    """Indices into ``q`` of the prismatic joints' coordinates (lengths, not angles)."""
    jt, qi = model.joint_type, model.q_index
    return np.array(
        [qi[k] for k in range(model.n_nodes) if jt[k] == JointType.PRISMATIC and qi[k] >= 0],
        dtype=np.int64,
    )


def _quaternion_layout(
    model: Model, act_idx: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(active_q, balls, keep)``: the coordinate each active DoF moves (-1 for a
    quaternion's angular DoF), the ``BA_*`` rows of the active ball joints, and a mask
    over ``q`` of the coordinates restarts leave at ``q0``: a free joint's (its
    position and rotation place the whole robot; drawing them at random would throw
    it about the room)."""
    act_q = model.qv.v_q[act_idx]
    rows: list[list[int]] = []
    keep = np.zeros(model.nq, dtype=bool)
    pos = {int(v): kk for kk, v in enumerate(act_idx)}
    for k in model.qv.ball_nodes:
        v = int(model.qv.v_index[k])
        if v not in pos:
            continue
        s = int(model.q_index[k])
        p = int(model.parent[k])  # a free joint's ball sits on its z slide
        free = (
            p >= 0
            and model.joint_type[p] == JointType.PRISMATIC
            and model.node_joint[p] == model.node_joint[k]
        )
        if free:
            keep[model.joint_indices(model.node_joint[k])] = True
        rows.append([int(k), s, pos[v], int(free)])
    balls = np.array(rows, dtype=np.int64).reshape(-1, L.BALL_SIZE)
    return act_q, balls, keep


# Templates per model, kept outside the frozen model and dropped with it.
_TEMPLATES: PerModel[Template] = PerModel(limit=128)


def cached_template(
    model: Model,
    frames: tuple[str, ...],
    kinds: tuple[int, ...],
    first: np.ndarray,
    opts: IKOptions,
) -> Template:
    """:func:`template` for the targets' first row ``first`` (T, TARGET_SIZE),
    remembered per model: repeated solves of the same kind of problem (every frame of
    an animation) pay for the layout once."""
    shape = first[:, L.T_W_POS : L.T_POINT + 3]
    key = (frames, kinds, shape.tobytes(), opts.layout_key())
    tpl = _TEMPLATES.get(model, key)
    if tpl is None:
        is_point = (np.array(kinds) == L.KIND_FRAME)[:, None]
        points = first[:, L.T_POINT : L.T_POINT + 3] * is_point
        weights = np.ascontiguousarray(first[:, L.T_W_POS : L.T_W_ROT + 3])
        tpl = _TEMPLATES.put(
            model, template(model, frames, kinds, weights, points, opts.layout_key()), key
        )
    return tpl


def _items(model: Model, target: Any, frame: str | None) -> list[tuple[str, Any]]:
    if isinstance(target, Mapping):
        if frame is not None:
            raise InvalidValueError("give either a dict {frame: target} or frame=, not both")
        if not target:
            raise InvalidValueError("the dict of targets is empty")
        items = [(k, v) for k, v in target.items()]
        for k, _ in items:
            if not isinstance(k, str):
                raise InvalidValueError(f"target dict keys must be frame names, got {k!r}")
    else:
        if frame is not None and not isinstance(frame, str):
            raise InvalidValueError(f"frame must be a frame name, got {frame!r}")
        items = [(frame if frame is not None else model.end_effectors[0], target)]
    for name, _ in items:
        model.frame_index(name)
    return items


def as_q0(model: Model, q0: Any, batch: tuple[int, ...]) -> np.ndarray:
    """``q0`` (default: the neutral configuration) broadcast to ``(*batch, nq)``."""
    nq = model.nq
    if q0 is None:
        return np.broadcast_to(model.q_neutral, (*batch, nq))
    qa = as_array(q0, "q0", (nq,))
    try:
        return np.broadcast_to(qa, (*batch, nq))
    except ValueError:
        raise InvalidValueError(
            f"q0 of shape {qa.shape} does not match the batch of targets {batch}; "
            f"give ({nq},) for all or {(*batch, nq)} for each"
        ) from None


def _normalise_weights(tgt_f: np.ndarray) -> None:
    """Scale every weight so the largest is 1: only their ratios matter, and tiny
    uniform weights would otherwise drown the step under the damping floor."""
    w = tgt_f[..., L.T_W_POS : L.T_W_ROT + 3]
    top = float(np.max(w)) if w.size else 0.0
    if top > 0.0 and top != 1.0:
        w /= top


def build_problem(
    model: Model, target: Any, frame: str | None, opts: IKOptions, q0: Any = None
) -> Problem:
    """Validate ``target`` once and lay it out with ``opts`` for the kernels."""
    items = _items(model, target, frame)
    encoded = [encode(t) for _, t in items]
    T = len(items)
    if all(not b for _, _, b in encoded):
        batch: tuple[int, ...] = ()
        tgt_f = np.stack([tf for tf, _, _ in encoded])
        first = tgt_f
    else:
        shapes = [b for _, _, b in encoded]
        try:
            batch = tuple(np.broadcast_shapes(*shapes))
        except ValueError:
            raise InvalidValueError(
                "the targets' batch shapes do not broadcast together: "
                + ", ".join(f"{name!r} {b}" for (name, _), b in zip(items, shapes))
            ) from None
        if int(np.prod(batch)) == 0:
            raise InvalidValueError(f"the batch of targets is empty (shape {batch})")
        tgt_f = np.empty((*batch, T, L.TARGET_SIZE))
        for t, (tf, _, _) in enumerate(encoded):
            tgt_f[..., t, :] = tf
        first = tgt_f.reshape(-1, T, L.TARGET_SIZE)[0]
    _normalise_weights(tgt_f)
    tpl = cached_template(
        model, tuple(name for name, _ in items), tuple(kind for _, kind, _ in encoded), first, opts
    )
    if opts.record and batch:
        raise UnsupportedError("record=True is for single solves, not batches of targets")
    return Problem(tpl, tgt_f, as_q0(model, q0, batch), batch)


def apply_couplings(model: Model, q: np.ndarray) -> None:
    """Write every tied coordinate of ``q`` (..., nq) from its source, in place."""
    for j, src, mul, off in model.couplings:
        q[..., j] = off if src < 0 else mul * q[..., src] + off


def require_finite_q0(prob: Problem) -> None:
    """For solvers that use ``q0`` in Python before any kernel checks it."""
    if not np.all(np.isfinite(prob.q0)):
        raise InvalidValueError("q0 contains NaN or inf")
