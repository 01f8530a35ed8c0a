"""Solves that start from learned configurations, and many distinct solutions of one target.

``Model.ik(T, seeds=learned)``: :func:`solve_seeded` runs one attempt (no restarts) from
``q0`` when the caller gives one (a start the caller chose is tried first, as without
seeds); then draws :data:`SEED_SAMPLES` configurations for ``T`` from the seed source (a
:class:`kinetree.learn.LearnedIK`) at a low temperature and runs one attempt from each
of the :data:`SEED_ATTEMPTS` whose FK lands closest to ``T``, until one succeeds or the
time budget is spent; when none does, the ordinary solve with random restarts follows
from the closest learned result with its own budget (so a failing call may take up to
twice ``time_budget``). The best result found is returned, as from any solve.

``Model.ik_many(T, n)``: :func:`solve_many` solves ``T`` from many starts (learned
samples when ``seeds=`` is given, else uniform random configurations of the active
joints) in batches on every core, checks each success by FK against the tolerance,
and keeps those farther than ``min_distance`` from every one kept before.

The seed source is duck-typed (``frame``, ``configurations(model, T, n, q0, seed,
temperature, rank=True)``):
this layer does not import :mod:`kinetree.learn`, which sits above it.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ...errors import InvalidValueError, ShapeError, UnsupportedError
from ...model import Model
from ..options import IKOptions, resolve
from ..problem import as_q0
from ..result import IKResult, make_result
from ..targets import Pose, Position

#: The dispatcher (:func:`kinetree.ik.solve`), handed in by it: this module never imports it.
Solver = Callable[..., IKResult]

__all__ = ["MAX_SOLUTIONS", "SEED_SAMPLES", "solve_many", "solve_seeded"]

#: Learned configurations drawn per seeded solve; the :data:`SEED_ATTEMPTS` whose FK lands
#: closest to the target are tried.
SEED_SAMPLES = 4
#: Latent standard deviation of those samples: below 1 they keep to where the learned
#: density is high, which lands them closer to the target (on the Panda, the first
#: learned attempt succeeds 90 % of the time at 0.5, 78 % at 1; ``ik_many``, which wants
#: spread, samples at 1).
SEED_TEMPERATURE = 0.5
#: Learned starts tried before the random restarts take over (a learned start knows
#: nothing of obstacles; a collision-aware restart draws clear ones). On the Panda's
#: table/pillar/ball targets, 2 without further learned samples beat 3 followed by 16
#: spread ones (temperature 1, filtered to those clear of obstacles) on mean time, from
#: the ready pose and with no start given (``docs/learned_ik.md``).
SEED_ATTEMPTS = 2
#: Latent standard deviation of ``ik_many``'s learned samples (the learned distribution;
#: 1.5 and 2 found a few more solutions where they are few, and took longer elsewhere;
#: with the yield-sized rounds, 0.8 and 1.3 took longer to 20 solutions on the Panda).
MANY_TEMPERATURE = 1.0
#: Largest ``n`` of :func:`solve_many`.
MAX_SOLUTIONS = 100_000
#: Starts per attempted solution when ``max_attempts`` is not given: ``ik_many`` gives
#: up after ``ATTEMPTS_PER_SOLUTION * n`` starts.
ATTEMPTS_PER_SOLUTION = 20
#: ``ik_many`` stops after ``STALE_FACTOR * k + STALE_MIN`` solutions in a row that were
#: all within ``min_distance`` of the ``k`` kept ones: the target's solutions are
#: exhausted at that spacing (a short self-motion manifold, few branches). Were there
#: one more solution as easy to reach as the others, each success would be new with
#: probability about ``1 / (k + 1)``, and ``3 k + 20`` repeats in a row would happen
#: with probability below ``exp(-3)`` (5 %). Scaled by ``k``, not by ``n``: a pose
#: with 12 branches stops as soon whether 20 or 50 were asked for.
STALE_FACTOR = 3
STALE_MIN = 20
#: Smallest yield (new solutions per start) the round size assumes: a pose that gives
#: few does not make rounds of thousands of starts.
MIN_YIELD = 0.05
#: Most starts in one round of ``ik_many``: enough to keep every core busy, few enough
#: that the stop tests (solutions exhausted, time budget) run often when ``n`` is large.
MAX_ROUND = 256
#: Largest distance table one vectorized uniqueness test builds (kept x found rows).
DISTANCE_CELLS = 200_000

#: One learned attempt's options (no seeds, no restarts, seed 0) by the caller's options
#: less their seed: a loop that passes ``seed=k`` gets the same object every call, so
#: the compiled single-solve plan is found by identity, and no options are validated.
_ATTEMPT: dict[tuple[Any, ...], IKOptions] = {}
#: The fallback's options (no seeds, the caller's restarts and seed) by the caller's.
_FALLBACK: dict[IKOptions, IKOptions] = {}
_SEEDLESS = tuple(f.name for f in dataclasses.fields(IKOptions) if f.compare and f.name != "seed")


def _attempt(opts: IKOptions) -> IKOptions:
    """``opts`` as one descent from a given start: no seeds, no restarts."""
    key = tuple(getattr(opts, name) for name in _SEEDLESS)
    found = _ATTEMPT.get(key)
    if found is None:
        found = dataclasses.replace(opts, seeds=None, restarts=0, rng=None, seed=0)
        if len(_ATTEMPT) > 64:
            _ATTEMPT.clear()
        _ATTEMPT[key] = found
    return found


def _fallback(opts: IKOptions) -> IKOptions:
    """``opts`` without seeds: the ordinary solve with random restarts."""
    found = _FALLBACK.get(opts)
    if found is None:
        found = dataclasses.replace(opts, seeds=None)
        if len(_FALLBACK) > 64:
            _FALLBACK.clear()
        _FALLBACK[opts] = found
    return found


def _condition_poses(target: Any, source: Any) -> tuple[np.ndarray, tuple[int, ...]]:
    """The poses ``(B, 4, 4)`` the seed source is conditioned on, and the batch shape:
    a 4x4 pose (or a batch), a :class:`Pose`, or a :class:`Position` (for a source
    conditioned on positions alone)."""
    conditions = getattr(source, "conditions", "pose")
    if isinstance(target, Pose):
        target = target.T
    if isinstance(target, Position):
        if conditions != "position":
            raise UnsupportedError(
                "these seeds were learned from whole poses: give a 4x4 pose target, or "
                "learn seeds from positions (kinetree.learn.train_ik(..., "
                "conditions='position'))"
            )
        T = np.eye(4)
        T[:3, 3] = np.asarray(target.xyz, dtype=np.float64)
        return T[None], ()
    if not isinstance(target, np.ndarray) and not isinstance(target, (list, tuple)):
        raise UnsupportedError(
            "seeds= takes a 4x4 pose target (or a batch of them), a Pose or a Position, "
            f"got {type(target).__name__}"
        )
    P = np.asarray(target, dtype=np.float64)
    if P.ndim < 2 or P.shape[-2:] != (4, 4):
        raise ShapeError(f"a pose target must have shape (..., 4, 4), got {P.shape}")
    if not np.all(np.isfinite(P)):
        raise InvalidValueError("target contains NaN or inf")
    return P.reshape(-1, 4, 4), P.shape[:-2]


def _check_frame(model: Model, frame: str | None, source: Any) -> None:
    name = frame if frame is not None else model.end_effectors[0]
    model.frame_index(name)
    if name != source.frame:
        raise InvalidValueError(
            f"the seeds were learned for frame {source.frame!r}, the target is on {name!r}: "
            f"pass frame={source.frame!r} or learn seeds for {name!r}"
        )


def _better(a: IKResult | None, b: IKResult) -> bool:
    """Whether ``b`` beats ``a``: a success, else the smaller largest error."""
    if a is None:
        return True
    if bool(a.success) != bool(b.success):
        return bool(b.success)
    ea = max(float(np.max(a.position_error)), float(np.max(a.orientation_error)))
    eb = max(float(np.max(b.position_error)), float(np.max(b.orientation_error)))
    return eb < ea


def solve_seeded(
    model: Model,
    target: Any,
    frame: str | None,
    opts: IKOptions,
    q0: Any,
    t0: float,
    solve: Solver,
) -> IKResult:
    """``Model.ik(target, seeds=...)``: see the module docstring; ``solve`` is the
    dispatcher that runs each attempt."""
    source = opts.seeds
    _check_frame(model, frame, source)
    P, batch = _condition_poses(target, source)
    if batch:  # one seeded solve per pose; q0 (nq,) for all or (*batch, nq)
        Q0 = as_q0(model, q0, batch).reshape(-1, model.nq) if q0 is not None else None
        flat = np.asarray(target, dtype=np.float64).reshape(-1, 4, 4)
        results = [
            solve_seeded(model, flat[b], frame, opts, None if Q0 is None else Q0[b], t0, solve)
            for b in range(len(P))
        ]
        return make_result(
            q=np.array([r.q for r in results]),
            success=np.array([r.success for r in results]),
            position_error=np.array([r.position_error for r in results]),
            orientation_error=np.array([r.orientation_error for r in results]),
            iterations=np.array([r.iterations for r in results]),
            restarts=np.array([r.restarts for r in results]),
            reachable=np.array([r.reachable for r in results]),
            batch=batch,
            elapsed=time.perf_counter() - t0,
            frames=results[0].frames,
            method=results[0].method,
            min_distance=None
            if results[0].min_distance is None
            else np.array([r.min_distance for r in results]),
            in_collision=np.array([r.message == "in collision" for r in results]),
        )
    q_start = np.array(as_q0(model, q0, ()), dtype=np.float64)
    attempt = _attempt(opts)
    best: IKResult | None = None
    iterations = tried = 0
    if q0 is not None:
        best = solve(model, target, frame, q0=q_start, options=attempt)
        tried, iterations = 1, int(best.iterations)
    seed = opts.draw_seed()
    budget = opts.budget
    # The samples closest to the target; when they fail, the ordinary solve's random
    # restarts (drawn clear of obstacles in a collision-aware solve, all in one compiled
    # call) do better than more learned samples.
    if best is None or not best.success:
        starts = source.configurations(model, P[0], SEED_SAMPLES, q_start, seed, SEED_TEMPERATURE)
        for q in starts[:SEED_ATTEMPTS]:
            r = solve(model, target, frame, q0=q, options=attempt)
            tried += 1
            iterations += int(r.iterations)
            if _better(best, r):
                best = r
            if r.success or (budget and time.perf_counter() - t0 > budget):
                break
    assert best is not None  # SEED_ATTEMPTS >= 1
    if not best.success and not (budget and time.perf_counter() - t0 > budget):
        r = solve(model, target, frame, q0=best.q, options=_fallback(opts))
        iterations += int(r.iterations)
        tried += 1 + int(r.restarts)
        if _better(best, r):
            best = r
    best.iterations = iterations
    best.restarts = tried - 1
    best.elapsed = time.perf_counter() - t0
    return best


# --- many solutions ---------------------------------------------------------------------------


def solve_many(
    model: Model,
    target: Any,
    n: int,
    frame: str | None = None,
    *,
    solve: Solver,
    q0: Any = None,
    seeds: Any = None,
    min_distance: float = 0.1,
    max_attempts: int | None = None,
    **options: Any,
) -> np.ndarray:
    """Up to ``n`` distinct exact solutions ``(k, nq)`` of one target, ``k <= n``.

    Each start (a learned sample from ``seeds``, else a uniform random configuration of
    the active joints, the others at ``q0``; with ``seeds``, random starts take a share
    of a round when the previous one found few new solutions) is solved by one descent of
    the chosen method (no restarts); batches of starts run on every core, each sized for
    the solutions still missing at the yield of the starts so far. A solution is kept
    when FK puts the frame on a 4x4 pose target within the tolerance (position [m] and
    rotation angle [rad]; for other targets the solver's own FK check), and when it
    differs from every solution kept before by more than ``min_distance`` [rad or m] in
    some coordinate (the largest coordinate difference; continuous joints compared
    modulo 2 pi). Stops at ``n`` solutions, after ``max_attempts`` starts (default
    ``20 n``) or at ``time_budget`` [s] for the whole call (default unlimited). Fewer
    than ``n`` (none for an unreachable target) is an answer, not an error: it also
    stops after ``3 k + 20`` solutions in a row that were none of them new, ``k`` the
    number kept (:data:`STALE_FACTOR`).

    Args:
        solve: the dispatcher that solves each batch of starts
            (:func:`kinetree.ik.solve_many` hands in :func:`kinetree.ik.solve`).
        options: IK options (``method``, ``tol``, ``active``, ``obstacles``, ...); each
            start gets ``restarts=0``.
    """
    t0 = time.perf_counter()
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= MAX_SOLUTIONS:
        raise InvalidValueError(f"n must be an integer in [1, {MAX_SOLUTIONS}], got {n!r}")
    md = min_distance
    if (
        isinstance(md, bool)
        or not isinstance(md, (int, float))
        or not (np.isfinite(md) and md >= 0)
    ):
        raise InvalidValueError(f"min_distance must be a finite number >= 0 [rad or m], got {md!r}")
    attempts_max = ATTEMPTS_PER_SOLUTION * int(n) if max_attempts is None else max_attempts
    if (
        isinstance(attempts_max, bool)
        or not isinstance(attempts_max, (int, np.integer))
        or (attempts_max < 1)
    ):
        raise InvalidValueError(f"max_attempts must be an integer >= 1, got {max_attempts!r}")
    budget_in = options.pop("time_budget", None)
    opts = resolve({**options, "seeds": seeds} if seeds is not None else options)
    budget = dataclasses.replace(opts, time_budget=budget_in).budget if budget_in else 0.0
    if opts.method == "analytic":
        raise InvalidValueError("ik_many solves from starts; for closed-form branches use ik_all")
    attempt = dataclasses.replace(opts, seeds=None, restarts=0, time_budget=None, rng=None)
    pose = isinstance(target, np.ndarray) and target.shape == (4, 4)
    _refuse_batch(target)
    if pose and not np.all(np.isfinite(target)):
        raise InvalidValueError("target contains NaN or inf")
    if seeds is not None:
        _check_frame(model, frame, seeds)
        P, batch = _condition_poses(target, seeds)
        if batch:
            raise InvalidValueError("ik_many takes one target, not a batch")
    q_base = np.array(as_q0(model, q0, ()), dtype=np.float64)
    if q_base.ndim != 1:
        raise InvalidValueError("ik_many takes one q0 (nq,)")
    moving = np.nonzero(model.active_mask(opts.active))[0]
    rng = np.random.default_rng(opts.draw_seed())
    wrap = model.continuous[model.qv.v_q] & (model.qv.v_q >= 0)
    table = np.empty((n, model.nq))  # the kept solutions as rows, for the distance test
    k = tried = rounds = repeats = 0  # repeats: solutions in a row near kept ones
    share = 1.0  # of the starts that are learned ones
    while k < n and tried < attempts_max and repeats < STALE_FACTOR * k + STALE_MIN:
        if budget and time.perf_counter() - t0 >= budget:
            break
        m = _round_size(n - k, k, tried, attempts_max - tried)
        starts = np.repeat(q_base[None], m, axis=0)
        starts[:, moving] = model.random_configuration(m, rng)[:, moving]
        n_learned = int(np.ceil(share * m)) if seeds is not None else 0
        if n_learned:
            starts[:n_learned] = seeds.configurations(
                model, P[0], n_learned, q_base, opts.seed + rounds, MANY_TEMPERATURE, rank=False
            )
        rounds += 1
        tried += m
        before = k
        found = _solutions(model, target, frame, starts, attempt, pose, solve)
        k, repeats = _keep(model, table, k, found, md, wrap, repeats)
        # Learned samples crowd where the distribution is dense: once a round brings few
        # new solutions, random starts take a share (at most 3/4) of the next one.
        share = min(1.0, max(0.25, 2.0 * (k - before) / m))
    return table[:k].copy()


def _refuse_batch(target: Any) -> None:
    """``ik_many`` solves one target: a batch of poses (or a target holding one) is
    refused up front, naming what to do instead."""
    if isinstance(target, dict):
        for t in target.values():
            _refuse_batch(t)
        return
    if isinstance(target, Pose):
        target = target.T
    elif isinstance(target, Position):
        target = target.xyz
    shape = np.shape(target) if isinstance(target, (np.ndarray, list, tuple)) else ()
    one = (4, 4) if len(shape) >= 2 and shape[-2:] == (4, 4) else (3,)
    if len(shape) > len(one):
        raise InvalidValueError(
            f"ik_many takes one target, not a batch (got shape {shape}); call it once per "
            "pose, or use Model.ik for one solution of each pose of a batch"
        )


def _round_size(missing: int, kept: int, tried: int, left: int) -> int:
    """Starts of the next round: enough for the ``missing`` solutions at the yield seen so
    far (new solutions per start; 1 before the first round), with a quarter more and 4
    spare, at most ``left`` and :data:`MAX_ROUND`. The same rule for learned and random
    starts: a source whose starts converge to new solutions more often runs smaller
    rounds."""
    rate = max(kept / tried, MIN_YIELD) if tried else 1.0
    return int(max(1, min(left, MAX_ROUND, np.ceil(1.25 * missing / rate) + 4)))


def _keep(
    model: Model,
    table: np.ndarray,
    k: int,
    found: list[np.ndarray],
    md: float,
    wrap: np.ndarray,
    repeats: int,
) -> tuple[int, int]:
    """Append to ``table[:k]`` the ``found`` solutions (in order) that differ from every
    row kept before them by more than ``md`` somewhere; the new count, and the count of
    solutions in a row that were not kept (``repeats``, carried over from earlier
    rounds). Per chunk of ``found``: one vectorized test against the rows kept before
    it, then its survivors against each other."""
    n = len(table)
    step = max(1, DISTANCE_CELLS // max(1, k))
    for c in range(0, len(found), step):
        chunk = np.asarray(found[c : c + step])
        far = np.ones(len(chunk), dtype=bool)
        if k:
            far = _gap(model, table[:k][None], chunk[:, None], wrap).max(axis=2).min(axis=1) > md
        start = k
        for i in range(len(chunk)):
            if far[i] and (
                k == start or _gap(model, table[start:k], chunk[i], wrap).max(axis=1).min() > md
            ):
                table[k] = chunk[i]
                k += 1
                repeats = 0
                if k == n:
                    return k, repeats
            else:
                repeats += 1
    return k, repeats


def _gap(model: Model, a: np.ndarray, b: np.ndarray, wrap: np.ndarray) -> np.ndarray:
    """``|a - b|`` per velocity coordinate (broadcast), continuous joints modulo 2 pi."""
    if model.nq == model.nv:
        d = a - b
    else:
        a, b = np.broadcast_arrays(a, b)
        d = model.difference(a.reshape(-1, model.nq), b.reshape(-1, model.nq))
        d = d.reshape(*a.shape[:-1], model.nv)
    d[..., wrap] = (d[..., wrap] + np.pi) % (2 * np.pi) - np.pi
    return np.abs(d)


def _solutions(
    model: Model,
    target: Any,
    frame: str | None,
    starts: np.ndarray,
    attempt: IKOptions,
    pose: bool,
    solve: Solver,
) -> list[np.ndarray]:
    """The exact solutions reached from ``starts`` by ``solve``, in start order."""
    from ...kinematics import fk
    from ...spatial import pose_error

    if pose:
        T = np.asarray(target, dtype=np.float64)
        r = solve(model, np.repeat(T[None], len(starts), axis=0), frame, q0=starts, options=attempt)
        ok = np.asarray(r.success, dtype=bool)
        Q = np.asarray(r.q)[ok]
        if not len(Q):
            return []
        e = pose_error(T, fk(model, Q, frame))  # the independent check: FK of every success
        tol_p, tol_r = attempt.tol
        exact = (np.linalg.norm(e[:, :3], axis=1) <= tol_p) & (
            np.linalg.norm(e[:, 3:], axis=1) <= tol_r
        )
        return list(Q[exact])
    out = []
    for q in starts:
        r = solve(model, target, frame, q0=q, options=attempt)
        if r.success:
            out.append(np.asarray(r.q))
    return out
