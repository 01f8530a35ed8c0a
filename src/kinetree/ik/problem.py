"""Assemble an IK problem into the arrays the compiled solver reads.

Building is kept apart from solving (a test can inspect the matrices), and split
in two: a :class:`Template` holds everything that depends only on the model,
the frames, the kind of targets and the options (cached, so repeated solves pay
for it once), and :func:`build_problem` adds the per-call target and ``q0``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import as_array, check_positive
from ..errors import InvalidValueError, UnknownNameError, UnsupportedError
from ..kinematics import needed_nodes
from ..model import Model
from . import _kernels as K
from .targets import KIND_DIRECTION, TF_SIZE, encode

__all__ = ["METHODS", "Problem", "Template", "build_problem", "template"]

#: Every method name :func:`kinetree.ik.solve` accepts.
METHODS = (
    "auto", "pinv", "transpose", "dls", "sdls", "ccd", "fabrik", "bfgs", "lbfgs", "cg", "analytic",
)  # fmt: skip
KERNEL_METHODS = {
    "pinv": K.PINV,
    "transpose": K.TRANSPOSE,
    "dls": K.DLS,
    "sdls": K.SDLS,
    "ccd": K.CCD,
}
_DEFAULT_MAX_ITER = {"pinv": 200, "transpose": 2000, "dls": 200, "sdls": 500, "ccd": 500}
#: Options that shape the template (everything but ``q0``).
TEMPLATE_OPTIONS = frozenset(
    {
        "method", "active", "tol", "max_iter", "step", "damping", "lambda_min", "rest",
        "rest_gain", "restarts", "time_budget", "rng", "seed", "respect_limits",
        "clamp_target", "record", "pinv_form", "normalized_step", "cutoff", "max_joint_step",
        "stall_iter",
    }
)  # fmt: skip
OPTIONS = TEMPLATE_OPTIONS | {"q0", "pin"}


@dataclass(frozen=True)
class Template:
    """The options-and-structure half of a problem (no target values, no q0)."""

    model: Model
    frames: tuple[str, ...]
    method: str
    tgt_i: np.ndarray
    weights: np.ndarray  # (T, 6) row weights, fixed for the template
    rows: np.ndarray
    nodes: np.ndarray
    cfg: np.ndarray
    icfg: np.ndarray
    seed: int
    active: np.ndarray
    record: bool
    ibuf: np.ndarray  # everything above, packed for the single-pose fast path
    fbuf: np.ndarray


@dataclass(frozen=True)
class Problem:
    """A template plus targets ``tgt_f`` ``(*batch, T, 24)`` and ``q0`` ``(*batch, dof)``."""

    template: Template
    tgt_f: np.ndarray
    q0: np.ndarray
    batch: tuple[int, ...]


def _tolerances(tol: Any) -> tuple[float, float]:
    if isinstance(tol, (tuple, list, np.ndarray)):
        if len(tol) != 2:
            raise InvalidValueError(
                f"tol must be one number or a pair (position m, rotation rad), got {tol!r}"
            )
        return (
            check_positive(tol[0], "position tolerance"),
            check_positive(tol[1], "rotation tolerance"),
        )
    t = check_positive(tol, "tol")
    return t, t


def _seed(seed: Any, rng: Any) -> int:
    if rng is not None:
        gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        return int(gen.integers(0, 2**62))
    if seed is None:
        return 0
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InvalidValueError(f"seed must be an integer >= 0, got {seed!r}")
    return int(seed)


def _int_option(options: Mapping[str, Any], name: str, default: int) -> int:
    v = options.get(name, default)
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
        raise InvalidValueError(f"{name} must be an integer >= 0, got {v!r}")
    return int(v)


def check_options(options: Mapping[str, Any]) -> str:
    """Reject unknown options and methods; return the method name."""
    unknown = set(options) - OPTIONS
    if unknown:
        raise InvalidValueError(
            f"unknown IK option(s): {', '.join(sorted(unknown))}; "
            f"valid options are: {', '.join(sorted(OPTIONS))}"
        )
    method = options.get("method", "auto")
    if method not in METHODS:
        raise UnknownNameError(
            f"method {method!r} not found; valid methods are: {', '.join(METHODS)}"
        )
    return str(method)


def reach_bound(
    model: Model, node: int, active: np.ndarray, point: np.ndarray, limits: bool = True
) -> tuple[int, float]:
    """``(pivot, reach)``: a node whose origin no active joint moves (the first node on
    ``node``'s path that an active DoF moves if it is revolute, else its parent) and an
    upper bound [m] of the distance from
    it to the target point over all configurations: link lengths summed, prismatic travel
    added (unbounded without ``limits``). ``(-1, 0)`` when nothing active moves the frame,
    ``(-1, inf)`` when the bound is infinite."""
    path = model.ancestors(node)
    first = -1
    for s_, k in enumerate(path):
        qi = model.q_index[k]
        if model.joint_type[k] != 0 and qi >= 0 and active[qi]:
            first = s_
            break
    if first < 0:
        return -1, 0.0
    # A revolute joint does not move its own origin: that is the pivot. A prismatic one
    # does, so the pivot is its parent and its origin offset joins the sum.
    start = first if model.joint_type[path[first]] == 1 else first - 1
    reach = float(np.linalg.norm(point))
    for k in path[start + 1 :]:
        reach += float(np.linalg.norm(model.origin[k][:3, 3]))
    for k in path[first:]:
        if model.joint_type[k] == 2:
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
    options: Mapping[str, Any],
) -> Template:
    """Lay out everything but the target values; ``weights`` (T, 6), ``points`` (T, 3)."""
    method = check_options(options)
    kmethod = "dls" if method not in KERNEL_METHODS else method
    auto = method == "auto"
    dof = model.dof
    T = len(frames)
    tgt_i = np.array([(model.frame_index(f), k) for f, k in zip(frames, kinds)], dtype=np.int64)
    rows = np.array(
        [(t, c) for t in range(T) for c in range(6) if weights[t, c] > 0.0], dtype=np.int64
    ).reshape(-1, 2)
    if rows.shape[0] == 0:
        raise InvalidValueError("every target component is masked out or has weight 0")

    active = model.active_mask(options.get("active"))
    act_idx = np.nonzero(active)[0]
    if act_idx.size == 0:
        raise InvalidValueError("no active joints: `active` selects none")

    limits_on = bool(options.get("respect_limits", True))
    pivots = np.full(T, -1, dtype=np.int64)
    reach = np.zeros(T)
    for t, name in enumerate(frames):
        pv, rc = reach_bound(model, int(tgt_i[t, 0]), active, points[t], limits_on)
        if pv < 0 and rc == 0.0:
            shown = ", ".join(model.joint_names[i] for i in act_idx[:12])
            raise InvalidValueError(
                f"target on frame {name!r} cannot be moved by the active joints ({shown}"
                f"{', ...' if act_idx.size > 12 else ''}); frame {name!r} is moved by: "
                f"{', '.join(model.chain(name)) or 'nothing'}"
            )
        # The check is on the full 3-D distance: only for targets with all three position
        # components weighted (a masked target may be reachable in its free axes).
        if kinds[t] != KIND_DIRECTION and np.all(weights[t, :3] > 0) and pv >= 0:
            pivots[t] = pv
            reach[t] = rc

    tol_p, tol_r = _tolerances(options.get("tol", 1e-6))
    max_iter = _int_option(options, "max_iter", 30 if auto else _DEFAULT_MAX_ITER[kmethod])
    restarts = _int_option(options, "restarts", 200 if auto else 0)
    budget_opt = options.get("time_budget", 0.05 if auto else None)
    budget = 0.0 if budget_opt is None else check_positive(budget_opt, "time_budget")
    step = check_positive(options.get("step", 1.0), "step")
    # Damping and step limits tuned on 1000 random Panda/UR5/iiwa pose targets (see
    # docs/benchmarks.md): lambda = 0.1 * E + 1e-9 converges in a median of 8 iterations.
    damping = check_positive(options.get("damping", 0.1), "damping", allow_zero=True)
    lam_min = check_positive(options.get("lambda_min", 1e-9), "lambda_min", allow_zero=True)
    cutoff = check_positive(options.get("cutoff", 1e-6), "cutoff", allow_zero=True)
    max_js = check_positive(options.get("max_joint_step", 2.0), "max_joint_step")
    ns = options.get("normalized_step")
    task_step = 0.0 if ns is None else check_positive(ns, "normalized_step")
    pinv_form = options.get("pinv_form", "svd")
    if pinv_form not in ("svd", "normal"):
        raise InvalidValueError(f"pinv_form must be 'svd' or 'normal', got {pinv_form!r}")

    rest_opt = options.get("rest")
    rest_gain = 0.0
    rest = model.q_neutral
    gain = check_positive(options.get("rest_gain", 0.1), "rest_gain")
    if rest_opt is not None:
        if not (isinstance(rest_opt, str) and rest_opt == "neutral"):
            rest = as_array(rest_opt, "rest", (dof,))
            if rest.shape != (dof,):
                raise InvalidValueError(f"rest must have shape ({dof},), got {rest.shape}")
        rest_gain = gain

    record = bool(options.get("record", False))
    slo, shi = model.sampling_bounds()
    st_i, st_f = (
        model.swing_twist_layout(active) if limits_on else (np.zeros(1, np.int64), np.zeros(0))
    )
    cfg = np.zeros(K.NF + 5 * dof + T + st_f.size)
    cfg[K.F_TOL_P] = tol_p
    cfg[K.F_TOL_R] = tol_r
    cfg[K.F_STEP] = step
    cfg[K.F_DAMP] = damping
    cfg[K.F_BUDGET] = budget
    cfg[K.F_REST] = rest_gain
    cfg[K.F_CUTOFF] = cutoff
    cfg[K.F_TASK_STEP] = task_step
    cfg[K.F_LAMBDA_MIN] = lam_min
    cfg[K.F_MAX_JOINT_STEP] = max_js
    blocks = (model.limits[:, 0], model.limits[:, 1], slo, shi, rest)
    for b, arr in enumerate(blocks):
        cfg[K.NF + b * dof : K.NF + (b + 1) * dof] = arr
    cfg[K.NF + 5 * dof : K.NF + 5 * dof + T] = reach
    cfg[K.NF + 5 * dof + T :] = st_f

    icfg = np.zeros(K.NI + 2 * dof + T + st_i.size, dtype=np.int64)
    icfg[K.I_METHOD] = KERNEL_METHODS[kmethod]
    icfg[K.I_MAX_ITER] = max_iter
    icfg[K.I_RESTARTS] = restarts
    icfg[K.I_LIMITS] = int(bool(options.get("respect_limits", True)))
    icfg[K.I_PINV_FORM] = 0 if pinv_form == "svd" else 1
    icfg[K.I_RECORD] = (max_iter + 1) * (restarts + 1) if record else 0
    icfg[K.I_NA] = act_idx.size
    icfg[K.I_CLAMP] = int(bool(options.get("clamp_target", True)))
    icfg[K.I_STALL] = _int_option(options, "stall_iter", 4)
    icfg[K.NI : K.NI + act_idx.size] = act_idx
    dof_node = np.zeros(dof, dtype=np.int64)
    for k in range(model.n_nodes - 1, -1, -1):
        qi = model.q_index[k]
        if (
            qi >= 0
            and model.joint_type[k] != 0
            and model.q_scale[k] == 1.0
            and model.q_offset[k] == 0.0
        ):
            dof_node[qi] = k
    icfg[K.NI + dof : K.NI + 2 * dof] = dof_node
    icfg[K.NI + 2 * dof : K.NI + 2 * dof + T] = pivots
    icfg[K.NI + 2 * dof + T :] = st_i

    nodes = needed_nodes(model, tgt_i[:, 0])
    ibuf, fbuf = K.pack(*model.packed, nodes, tgt_i, rows, cfg, icfg)
    for a in (tgt_i, rows, cfg, icfg, ibuf, fbuf):
        a.setflags(write=False)
    return Template(
        model=model, frames=tuple(frames), method=method, tgt_i=tgt_i, weights=weights.copy(),
        rows=rows, nodes=nodes, cfg=cfg, icfg=icfg,
        seed=_seed(options.get("seed"), options.get("rng")), active=active, record=record,
        ibuf=ibuf, fbuf=fbuf,
    )  # fmt: skip


def _items(model: Model, target: Any, frame: str | None) -> list[tuple[str, Any]]:
    if isinstance(target, Mapping):
        if frame is not None:
            raise InvalidValueError("give either a dict {frame: target} or frame=, not both")
        if not target:
            raise InvalidValueError("the dict of targets is empty")
        items = [(str(k), v) for k, v in target.items()]
    else:
        items = [(frame if frame is not None else model.end_effectors[0], target)]
    for name, _ in items:
        model.frame_index(name)
    return items


def as_q0(model: Model, q0: Any, batch: tuple[int, ...]) -> np.ndarray:
    """``q0`` (default: the neutral configuration) broadcast to ``(*batch, dof)``."""
    dof = model.dof
    if q0 is None:
        return np.broadcast_to(model.q_neutral, (*batch, dof))
    qa = as_array(q0, "q0", (dof,))
    try:
        return np.broadcast_to(qa, (*batch, dof))
    except ValueError:
        raise InvalidValueError(
            f"q0 of shape {qa.shape} does not match the batch of targets {batch}; "
            f"give ({dof},) for all or {(*batch, dof)} for each"
        ) from None


def _freeze(value: Any) -> Any:
    """A hashable stand-in for an option value (arrays by content); raises TypeError."""
    if isinstance(value, np.ndarray):
        return ("ndarray", value.shape, value.dtype.str, value.tobytes())
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, (np.random.Generator, np.random.BitGenerator, np.random.RandomState)):
        raise TypeError("a random generator draws a new seed each call")
    hash(value)
    return (type(value), value)  # 1, 1.0 and True must not share a validated template


def cached_template(
    model: Model,
    frames: tuple[str, ...],
    kinds: tuple[int, ...],
    first: np.ndarray,
    options: Mapping[str, Any],
) -> Template:
    """:func:`template` for the targets' first row ``first`` (T, 24), memoised per model
    for hashable options: repeated solves of the same kind of problem (every frame of
    an animation) pay for the layout once."""

    def build() -> Template:
        points = first[:, 18:21] * (np.array(kinds)[:, None] == 0)
        weights = np.ascontiguousarray(first[:, 12:18])
        return template(model, frames, kinds, weights, points, options)

    try:
        key = (
            frames, kinds, first[:, 12:21].tobytes(),
            tuple(sorted((k, _freeze(v)) for k, v in options.items())),
        )  # fmt: skip
        cache: dict[Any, Template] = model.__dict__.setdefault("_ik_templates", {})
        tpl = cache.get(key)
    except TypeError:
        return build()
    if tpl is None:
        tpl = build()
        if len(cache) >= 128:
            cache.clear()
        cache[key] = tpl
    return tpl


def build_problem(model: Model, target: Any, frame: str | None = None, **options: Any) -> Problem:
    """Validate ``target`` and ``options`` once and lay them out for the kernels.

    See :func:`kinetree.ik.solve` for the meaning of every option.
    """
    check_options(options)
    items = _items(model, target, frame)
    encoded = [encode(t) for _, t in items]
    T = len(items)
    if all(not b for _, _, b in encoded):
        batch: tuple[int, ...] = ()
        tgt_f = np.stack([tf for tf, _, _ in encoded])
        first = tgt_f
    else:
        batch = tuple(np.broadcast_shapes(*(b for _, _, b in encoded)))
        tgt_f = np.empty((*batch, T, TF_SIZE))
        for t, (tf, _, _) in enumerate(encoded):
            tgt_f[..., t, :] = tf
        first = tgt_f.reshape(-1, T, TF_SIZE)[0]
    opts = {k: v for k, v in options.items() if k != "q0"}
    tpl = cached_template(
        model, tuple(name for name, _ in items), tuple(kind for _, kind, _ in encoded), first, opts
    )
    if tpl.record and batch:
        raise UnsupportedError("record=True is for single solves, not batches of targets")
    q0 = options.get("q0")
    if not batch and type(q0) is np.ndarray and q0.shape == (model.dof,) and q0.dtype == np.float64:
        q0a = q0  # finiteness is checked by the kernel
    else:
        q0a = as_q0(model, q0, batch)
    return Problem(tpl, tgt_f, q0a, batch)


def require_finite_q0(prob: Problem) -> None:
    """For solvers that use ``q0`` in Python before any kernel checks it."""
    if not np.all(np.isfinite(prob.q0)):
        raise InvalidValueError("q0 contains NaN or inf")
