"""The iteration loop shared by every compiled method, and the range driver around it.

:func:`solve_one` solves one problem: it starts from ``q0`` (clipped into the limits),
and per iteration computes FK, the task errors and their badness (largest error over
tolerance), keeps the best configuration, and calls the method's ``update``. An
attempt ends when solved, after ``max_iter`` iterations, or when it stalls; then a
random restart within the limits begins, until solved, out of restarts or out of
time. Errors in the result are always those of FK at the returned ``q``.

It allocates nothing: the scratch (:class:`~kinetree.ik.kernel.layout.Work`), the clock
buffer and the random state come from the caller, so the same source can be
compiled for a GPU thread. :func:`solve_range` runs it over a slice of a batch and is
what the per-method drivers in :mod:`kinetree.ik.kernel._drivers` call; it allocates nothing
either (its scratch comes from Python).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ...kinematics._kernels import fk_nodes
from ...kinematics.layout import F_BALL_LIMIT
from ._clock import monotonic
from ._collide import clearance, final_clearance, penalised
from ._manifold import clamp_angle, normalize_quat, random_rotation
from ._random import rand01
from ._steps import jacobian_update
from ._swing_twist import project_all
from ._target_rows import check_raw_pose, check_targets, load_targets
from ._tasks import badness, task_errors
from .layout import (
    BA_KEEP,
    BA_NODE,
    BA_Q,
    IW_CLOCK,
    IW_RNG,
    IW_SIZE,
    R_HISTORY,
    R_ITERATIONS,
    R_MIN_DISTANCE,
    R_REACHABLE,
    R_RESTARTS,
    R_STATUS,
    ST_IN_COLLISION,
    ST_NONFINITE,
    ST_NOT_CONVERGED,
    ST_OK,
    T_POS,
    Collision,
    CollisionWork,
    Config,
    Work,
    carve,
    carve_collision,
    info_index,
    read_collision,
    read_config,
    scratch_floats,
    scratch_len,
    unpack,
)

# Bound per driver by ``kinetree.ik.kernel._drivers`` (see ``solve_one``); these defaults make
# the plain functions the damped least-squares loop with swing-twist limits.
update = jacobian_update
SWING_TWIST_ON = True
COLLISION_ON = False


@njit(cache=True, inline="always")
def copy(src: np.ndarray, dst: np.ndarray) -> None:
    """``dst[:] = src`` as a loop (a slice assignment needs numba's runtime, which the
    loop runs without: see ``_drivers``)."""
    for k in range(src.shape[0]):
        dst[k] = src[k]


@njit(cache=True, inline="always")
def clip_active(cf: Config, q: np.ndarray, fdata: np.ndarray) -> None:
    """Active quaternions to unit length, and active coordinates into the limits (when
    they are on): a ball joint's rotation into its cone."""
    balls = cf.balls
    for b in range(balls.shape[0]):
        normalize_quat(q, balls[b, BA_Q])
    if cf.limits:
        act, lo, hi = cf.active_q, cf.lo, cf.hi
        for kk in range(cf.na):
            k = act[kk]
            if k >= 0:
                q[k] = min(max(q[k], lo[k]), hi[k])
        for b in range(balls.shape[0]):
            clamp_angle(q, balls[b, BA_Q], fdata[balls[b, BA_NODE], F_BALL_LIMIT])


@njit(cache=True, inline="always")
def project_swing_twist(cf: Config, w: Work, fdata: np.ndarray, from_zero: bool) -> None:
    """Ball joints with swing-twist limits back within them; ``from_zero`` anchors the
    projection at the zero pose (a new start) instead of the previous iterate."""
    if from_zero:
        q_prev, act, lo, hi = w.q_prev, cf.active_q, cf.lo, cf.hi
        copy(w.q, q_prev)
        for kk in range(cf.na):
            k = act[kk]
            if k >= 0:
                q_prev[k] = min(max(0.0, lo[k]), hi[k])
    project_all(w.q, w.q_prev, fdata, cf.st_i, cf.st_f, cf.lo, cf.hi, w.st)


@njit(cache=True, inline="always")
def check_reach(cf: Config, w: Work) -> tuple[bool, bool]:
    """``(reachable, clamped)``: a pivot does not move (nothing above it is active), so a
    target farther than ``reach`` from it cannot be closed by any configuration. When
    ``clamp`` is on, such a target is moved onto the reachable sphere in ``w.tgt``."""
    reachable = True
    clamped = False
    tgt, W, pivot, reach = w.tgt, w.W, cf.pivot, cf.reach
    for t in range(tgt.shape[0]):
        pv = pivot[t]
        if pv < 0:
            continue
        d = 0.0
        for r in range(3):
            d += (tgt[t, T_POS + r] - W[pv, r, 3]) ** 2
        d = math.sqrt(d)
        if d > reach[t] * (1.0 + 1e-12) + 1e-12:
            reachable = False
            if cf.clamp:
                clamped = True
                sc = reach[t] * (1.0 - 1e-9) / d
                for r in range(3):
                    p = W[pv, r, 3]
                    tgt[t, T_POS + r] = p + (tgt[t, T_POS + r] - p) * sc
    return reachable, clamped


#: Pulled steps that may fail to halve the badness before an attempt stops pulling.
REST_STRIKES = 3


@njit(cache=True, inline="always")
def rest_pull(cf: Config, bad: float, prev: float, it: int, strikes: int) -> float:
    """The gain of this iteration's null-space pull toward the rest pose (0: none).

    The rest pose may never keep the targets from being met: the pull is skipped in an
    iteration after one that did not halve the task's badness (a pull too large for the
    linearised null space, near a singularity, shows there), for the rest of the attempt
    once :data:`REST_STRIKES` pulled steps did not, and in the second half of an attempt:
    the task then converges alone."""
    if cf.rest_gain <= 0.0 or 2 * it > cf.max_iter or bad > 0.5 * prev:
        return 0.0
    if strikes >= REST_STRIKES:
        return 0.0
    return cf.rest_gain


@njit(cache=True, inline="always")
def record(w: Work, hist_q: np.ndarray, hist_e: np.ndarray, row: int) -> int:
    """Append the iterate and its largest errors to the history; the next free row."""
    if row >= hist_q.shape[0]:
        return row
    copy(w.q, hist_q[row])
    errs = w.errs
    mp = 0.0
    mr = 0.0
    for t in range(errs.shape[0]):
        mp = max(mp, errs[t, 0])
        mr = max(mr, errs[t, 1])
    hist_e[row, 0] = mp
    hist_e[row, 1] = mr
    return row + 1


#: With a rest pose, restart ``a`` starts ``min(1, a / REST_SPREAD)`` of the way from the
#: rest pose to a uniform random configuration: the first restarts look near the pose
#: the caller prefers (a character's 96 Euler angles drawn at random make no pose a
#: person would take), later ones anywhere.
REST_SPREAD = 8.0


@njit(cache=True, inline="always")
def random_start(
    cf: Config, w: Work, fdata: np.ndarray, q0: np.ndarray, rng: np.ndarray, attempt: int
) -> None:
    """Active coordinates uniformly within the sampling bounds (drawn toward the rest
    pose in early restarts when one is set: :data:`REST_SPREAD`), or back at ``q0``
    where the bound is NaN (a free joint's position); active ball joints a random
    rotation within their limit, or ``q0``'s rotation for a free joint's."""
    q, act, lo, hi = w.q, cf.active_q, cf.sample_lo, cf.sample_hi
    spread = min(1.0, attempt / REST_SPREAD) if cf.rest_gain > 0.0 else 1.0
    rest = cf.rest
    for kk in range(cf.na):
        k = act[kk]
        if k < 0:
            continue
        if lo[k] != lo[k]:
            q[k] = q0[k]
            continue
        r = rand01(rng)
        q[k] = lo[k] * (1.0 - r) + hi[k] * r  # no overflow for limits near the float range
        if spread < 1.0:
            q[k] = rest[k] + spread * (q[k] - rest[k])
    balls = cf.balls
    for b in range(balls.shape[0]):
        s = balls[b, BA_Q]
        if balls[b, BA_KEEP] != 0:
            for c in range(4):
                q[s + c] = q0[s + c]
            normalize_quat(q, s)
        else:
            random_rotation(q, s, fdata[balls[b, BA_NODE], F_BALL_LIMIT], rng)


@njit(cache=True, inline="always")
def clear_start(
    cf: Config,
    w: Work,
    ck: Collision,
    cw: CollisionWork,
    fdata: np.ndarray,
    idata: np.ndarray,
    nodes: np.ndarray,
    q0: np.ndarray,
    rng: np.ndarray,
    attempt: int,
) -> None:
    """:func:`random_start` that prefers collision-free starts: up to ``ck.seeds``
    draws, the first that clears ``margin + buffer`` (else the clearest) is kept."""
    q = w.q
    keep = ck.margin + ck.buffer
    best = -np.inf
    for _ in range(max(ck.seeds, 1)):
        random_start(cf, w, fdata, q0, rng, attempt)
        fk_nodes(q, fdata, idata, nodes, w.W)
        d = final_clearance(ck, cw, w.W)
        if d > best:
            best = d
            copy(q, cw.q_seed)
        if d >= keep:
            break
    copy(cw.q_seed, q)


@njit(cache=True, inline="always")
def write_errors(
    cf: Config,
    w: Work,
    fdata: np.ndarray,
    idata: np.ndarray,
    nodes: np.ndarray,
    tgt_i: np.ndarray,
    tgt: np.ndarray,
    out: np.ndarray,
    nq: int,
    current: bool,
) -> float:
    """Errors of FK at ``w.best_q`` against ``tgt`` into ``out``; their badness. A NaN
    error (a model whose FK is not finite) is reported as inf. ``current``: ``w.W`` and
    ``w.errs`` already hold FK and errors at ``w.best_q`` against ``tgt`` (a solve that
    ended on target); they are not computed again."""
    T = tgt_i.shape[0]
    if not current:
        fk_nodes(w.best_q, fdata, idata, nodes, w.W)
        task_errors(w.W, tgt_i, tgt, w.err6, w.errs, w.dirs, w.p3, w.M33, w.w3)
    errs = w.errs
    for t in range(T):
        for c in range(2):
            v = errs[t, c]
            out[nq + c * T + t] = v if v == v else np.inf
    return badness(w.errs, cf.tol_p, cf.tol_r)


@njit(cache=True)
def solve_one(
    fdata: np.ndarray,
    idata: np.ndarray,
    nodes: np.ndarray,
    tgt_i: np.ndarray,
    rows: np.ndarray,
    cf: Config,
    w: Work,
    ck: Collision,
    cw: CollisionWork,
    src: np.ndarray,
    q0: np.ndarray,
    seed: int,
    out: np.ndarray,
    hist_q: np.ndarray,
    hist_e: np.ndarray,
    clock: np.ndarray,
    rng: np.ndarray,
) -> None:
    """Solve one problem into the result row ``out`` (layout: ``ik.layout``).

    ``src`` holds the targets (encoded rows, or one raw 4x4 pose). The method is the
    global ``update`` (and the rule it calls), swing-twist limits are projected when
    the global ``SWING_TWIST_ON`` is true, and the collision block (``ck``, scratch
    ``cw``; :mod:`kinetree.ik.kernel._collide`) is on when ``COLLISION_ON`` is: each driver is a
    variant of this function with these bound (``kinetree.ik.kernel._drivers``), compiled with
    only what it uses. With collisions, an iterate counts as solved only when every pair
    keeps ``margin``, and restarts prefer clear random starts."""
    t_start = monotonic(clock) if cf.budget > 0.0 else 0.0
    nq = q0.shape[0]
    info = info_index(nq, tgt_i.shape[0])
    for k in range(out.shape[0]):
        out[k] = 0.0
    status = check_raw_pose(src)
    if status == ST_OK:
        load_targets(src, w.tgt)
        status = check_targets(tgt_i, w.tgt)
    for k in range(nq):
        if not np.isfinite(q0[k]):
            status = ST_NONFINITE
    if status != ST_OK:
        out[info + R_STATUS] = status
        for k in range(nq):
            out[k] = q0[k] if np.isfinite(q0[k]) else 0.0
        return
    q = w.q
    copy(q0, q)
    clip_active(cf, q, fdata)
    if SWING_TWIST_ON:
        project_swing_twist(cf, w, fdata, True)
    copy(q, w.best_q)
    rng[0] = np.uint64(seed)
    reachable = True
    clamped = False
    best = np.inf
    total_iter = 0
    hrow = 0
    attempt = 0
    status = ST_NOT_CONVERGED
    while True:
        best_attempt = np.inf
        stall = 0
        it = 0
        prev = np.inf
        pulled = 0.0
        strikes = 0
        while True:
            fk_nodes(q, fdata, idata, nodes, w.W)
            if total_iter == 0 and it == 0 and attempt == 0:
                reachable, clamped = check_reach(cf, w)
            task_errors(w.W, tgt_i, w.tgt, w.err6, w.errs, w.dirs, w.p3, w.M33, w.w3)
            bad = badness(w.errs, cf.tol_p, cf.tol_r)
            if COLLISION_ON:
                bad = penalised(bad, clearance(ck, cw, w.W), ck.margin, cf.tol_p)
            hrow = record(w, hist_q, hist_e, hrow)
            if bad < best:
                best = bad
                copy(q, w.best_q)
            if bad <= 1.0:
                status = ST_OK
                break
            if it >= cf.max_iter or (cf.total_iter > 0 and total_iter >= cf.total_iter):
                break
            # Stall: no 1 % progress on this attempt for ``stall`` iterations.
            if bad < 0.99 * best_attempt:
                best_attempt = bad
                stall = 0
            else:
                stall += 1
                if stall >= cf.stall and cf.restarts > 0:
                    break
            if cf.budget > 0.0 and (it & 7) == 7 and monotonic(clock) - t_start > cf.budget:
                break
            it += 1
            total_iter += 1
            if SWING_TWIST_ON:
                copy(q, w.q_prev)
            if pulled > 0.0 and bad > 0.5 * prev:
                strikes += 1
            pulled = rest_pull(cf, bad, prev, it, strikes)
            if not update(cf, w, ck, cw, fdata, idata, nodes, tgt_i, rows, pulled):
                break
            prev = bad
            if SWING_TWIST_ON:
                project_swing_twist(cf, w, fdata, False)
        if status == ST_OK:
            break
        # Restarts cannot close a gap that no configuration closes: a couple of them
        # look for a better closest configuration, then stop.
        if attempt >= cf.restarts or (not reachable and attempt >= 2):
            break
        if cf.total_iter > 0 and total_iter >= cf.total_iter:
            break  # the iteration budget is spent: the best found is the answer
        if cf.budget > 0.0 and monotonic(clock) - t_start > cf.budget:
            break
        attempt += 1
        if COLLISION_ON:
            clear_start(cf, w, ck, cw, fdata, idata, nodes, q0, rng, attempt)
        else:
            random_start(cf, w, fdata, q0, rng, attempt)
        if SWING_TWIST_ON:
            project_swing_twist(cf, w, fdata, True)
    copy(w.best_q, out[:nq])
    # Reported errors are FK's at the returned q, against the caller's target (not the
    # clamped one); success is re-judged on them.
    if clamped:
        load_targets(src, w.tgt)
        check_targets(tgt_i, w.tgt)
    # Solved: the last iterate is the best one and the loop just measured it.
    current = status == ST_OK and not clamped
    final = write_errors(cf, w, fdata, idata, nodes, tgt_i, w.tgt, out, nq, current)
    if status == ST_OK and not final <= 1.0:
        status = ST_NOT_CONVERGED
    if COLLISION_ON:
        # The clearance of the returned q by the full search (W holds its FK).
        d = final_clearance(ck, cw, w.W)
        out[info + R_MIN_DISTANCE] = d
        if not d >= ck.margin and final <= 1.0:
            status = ST_IN_COLLISION
    out[info + R_STATUS] = status
    out[info + R_ITERATIONS] = total_iter
    out[info + R_RESTARTS] = attempt
    out[info + R_HISTORY] = hrow
    out[info + R_REACHABLE] = 1.0 if reachable else 0.0


@njit(cache=True)
def solve_range(
    ibuf: np.ndarray,
    fbuf: np.ndarray,
    targets: np.ndarray,
    q0: np.ndarray,
    seed: int,
    out: np.ndarray,
    hist_q: np.ndarray,
    hist_e: np.ndarray,
    scratch: np.ndarray,
    start: int,
    stop: int,
) -> None:
    """Problems ``start..stop`` of a batch: ``targets`` (B, T, TARGET_SIZE) encoded rows
    or (B, 4, 4) raw poses; ``q0`` (1, nq) shared or (B, nq); ``out`` (B, result_size).
    Problem ``b`` draws its restarts from ``seed + b``.

    ``scratch`` (float64, one per thread, zeroed by the caller) holds
    the floats of :func:`~.layout.driver_scratch_len`, then its ints (the same 8 bytes, viewed as
    int64); no problem reads a scratch value it has not written (the problems of a range
    share one scratch). The caller allocates it so that this function allocates nothing
    either: it then runs without numba's reference counting, whose atomic increments for
    the few dozen views carved here cost about a microsecond per call (see ``_drivers``).
    Zeroed by ``np.zeros``, a large collision scratch costs only the pages it touches."""
    fdata, idata, nodes, tgt_i, rows, cfg, icfg = unpack(ibuf, fbuf)
    T = tgt_i.shape[0]
    cf = read_config(cfg, icfg, T)
    nq = q0.shape[1]
    nv = cf.dof_node.shape[0]
    m = rows.shape[0]
    n = fdata.shape[0]
    size = scratch_len(n, nq, nv, m, cf.na, T)
    nf = scratch_floats(size, cf.na, nv, nq, cfg, icfg, COLLISION_ON)
    ws = scratch[:nf]
    iws = scratch[nf:].view(np.int64)
    if COLLISION_ON:
        ck = read_collision(cfg, icfg)
        ns, npairs = ck.spheres.shape[0], ck.pairs.shape[0]
        cw = carve_collision(ws[size:], iws[IW_SIZE:], ns, ck.links.shape[0], npairs, nv, nq, cf.na)
    else:
        # Never read: the branches that would are pruned from this variant.
        ck = 0  # type: ignore[assignment]
        cw = 0  # type: ignore[assignment]
    w = carve(ws, n, nq, nv, m, cf.na, T)
    clock = iws[IW_CLOCK : IW_CLOCK + 2]
    rng = iws[IW_RNG : IW_RNG + 1].view(np.uint64)
    shared = q0.shape[0] == 1
    for b in range(start, stop):
        qb = q0[0] if shared else q0[b]
        solve_one(
            fdata,
            idata,
            nodes,
            tgt_i,
            rows,
            cf,
            w,
            ck,
            cw,
            targets[b],
            qb,
            seed + b,
            out[b],
            hist_q,
            hist_e,
            clock,
            rng,
        )
