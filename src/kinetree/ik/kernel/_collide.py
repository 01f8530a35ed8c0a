"""Collision-aware IK iterations: a damped least-squares step as a small QP whose
inequalities keep every nearby pair of the robot's spheres (and the world) apart.

Per iteration, after FK (:func:`kinetree.ik.kernel._loop.solve_one`):

* :func:`clearance` measures every pair of the collision block (as
  :func:`kinetree.collision._kernels.pair_distances` does): pairs closer than ``cutoff``
  exactly, the others by a lower bound above it. Their minimum is the iterate's clearance; the
  loop counts an iterate as solved only when it is at least ``margin``.
* :func:`collision_update` takes the step ``dq`` that minimises
  ``|J dq - e|^2 + lambda |dq|^2`` (the DLS objective and damping of ``step_dls``) subject to

  - joint limits and the per-iteration joint bound, as box bounds:
    ``max(lo - q, -s) <= dq <= min(hi - q, s)`` with ``s = min(max_joint_step, max_step)``;
  - one row per pair closer than ``influence``:
    ``grad_p . dq >= margin + buffer - d_p`` (the distance linearised at ``q``,
    :func:`kinetree.collision._kernels.distance_gradient`),

  solved exactly by :func:`kinetree._qp.qp_solve`. When the rows cannot all hold
  within the bounds (deep in a collision, farther in than one bounded step reaches, or
  at a limit), what they ask for is halved, up to ``RELAX_HALVINGS`` times (a pair
  60 mm deep leaves in two or three steps instead of never), and last relaxed to "get
  no closer" (``grad_p . dq >= min(0, margin + buffer - d_p)``); when even that fails
  the attempt ends and a restart begins.
* restarts (in the loop) draw ``seeds`` random configurations and keep the first one
  that clears ``margin + buffer`` by :func:`final_clearance` (else the clearest).

The buffer absorbs the curvature the linearisation misses; the final clearance is
re-measured on the returned ``q`` by the full closest-pair search
(:func:`final_clearance`), and a solve is a success only when it holds.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..._qp import QP_INFEASIBLE, QP_SOLVED, qp_solve
from ...collision._kernels import (
    distance_gradient,
    min_distance,
    pair_bound,
    pair_distance,
    place_pair_links,
)
from ...collision.layout import OUT_DISTANCE, OUT_EXACT
from ...kinematics._kernels import fk_nodes
from ._steps import integrate
from ._tasks import assemble, scale_columns, to_coordinates
from .layout import Collision, CollisionWork, Config, Work

#: Times an infeasible step halves what its rows ask for before it asks "no closer".
RELAX_HALVINGS = 3
#: How much more a length inside the margin weighs than the same length of target error.
PENETRATION_WEIGHT = 1000.0
#: Times a step that loses clearance is halved before it is taken anyway.
BACKTRACKS = 3
#: ... when the iterate was within this of the margin [m] (farther out, one step rarely
#: reaches a contact, and the check would cost an FK per iteration).
BACKTRACK_BAND = 0.01


@njit(cache=True, inline="always")
def clearance(ck: Collision, cw: CollisionWork, W: np.ndarray) -> float:
    """Every pair's row at the transforms ``W`` into ``cw.out``; the smallest distance
    [m] (inf without pairs).

    What :func:`~kinetree.collision._kernels.pair_distances` computes, with the broad
    phase first: a pair whose bounding-sphere bound is at least ``cutoff`` keeps only
    that bound (``OUT_EXACT`` 0), and a link's spheres are put in the world only when one
    of its pairs is refined (most links are far from everything at most iterates)."""
    out, C, ready = cw.out, cw.C, cw.ready
    spheres, links, obstacles, data, pairs = ck.spheres, ck.links, ck.obstacles, ck.data, ck.pairs
    for k in range(links.shape[0]):
        ready[k] = 0
    d = np.inf
    for p in range(pairs.shape[0]):
        v = pair_bound(W, links, obstacles, data, pairs, p)
        if v >= ck.cutoff:
            out[p, OUT_DISTANCE] = v
            out[p, OUT_EXACT] = 0.0
            d = min(d, v)
            continue
        place_pair_links(W, spheres, links, pairs, p, C, ready)
        pair_distance(W, C, links, obstacles, data, pairs, p, ck.cutoff, out[p])
        d = min(d, out[p, OUT_DISTANCE])
    return d


@njit(cache=True, inline="always")
def final_clearance(ck: Collision, cw: CollisionWork, W: np.ndarray) -> float:
    """The closest pair's signed distance [m] at ``W`` by the full search (no cutoff);
    inf when there is nothing to check."""
    arg = min_distance(
        W,
        ck.spheres,
        ck.links,
        ck.obstacles,
        ck.data,
        ck.pairs,
        -np.inf,
        cw.C,
        cw.ready,
        cw.bounds,
        cw.order,
        cw.row,
        cw.best,
    )
    return cw.best[OUT_DISTANCE] if arg >= 0 else np.inf


@njit(cache=True, inline="always")
def penalised(bad: float, d: float, margin: float, tol: float) -> float:
    """The badness of an iterate closer than ``margin``: never <= 1 (never solved), and
    falling as it gets clearer, so leaving a collision counts as progress. A millimetre
    inside the margin weighs as ``PENETRATION_WEIGHT`` millimetres of target error, so
    the iterate the loop keeps is a clear one whenever the solve found one (not the start
    on target but in collision)."""
    if d >= margin:
        return bad
    return max(bad, 1.0) + 1.0 + PENETRATION_WEIGHT * (margin - d) / tol


@njit(cache=True, inline="always")
def collision_update(
    cf: Config,
    w: Work,
    ck: Collision,
    cw: CollisionWork,
    fdata: np.ndarray,
    idata: np.ndarray,
    nodes: np.ndarray,
    tgt_i: np.ndarray,
    rows: np.ndarray,
    pull: float,
) -> bool:
    """One DLS step with distance rows (see the module doc); False when no step can be
    taken (the attempt ends). ``cw.out`` holds the pairs at the current ``q``."""
    na = cf.na
    m = rows.shape[0]
    J, e, q, act, act_q = w.J, w.e, w.q, cf.active, cf.active_q
    H, g, lb, ub, x = cw.H, cw.g, cw.lb, cw.ub, cw.x
    G, bq, out, grad = cw.G, cw.bq, cw.out, cw.grad
    assemble(
        fdata, idata, w.W, tgt_i, w.tgt, rows, w.err6, w.dirs, act, w.J6, J, e, w.p3, cf.inv_length
    )
    if cf.units:
        scale_columns(J, cf.unit, act_q)
    E = 0.0
    for r in range(m):
        if not np.isfinite(e[r]):
            return False
        E += e[r] * e[r]
    if cf.task_step > 0.0 and E > cf.task_step * cf.task_step:
        sc = cf.task_step / math.sqrt(E)  # math, not np: numba-cuda has no np.sqrt
        for r in range(m):
            e[r] *= sc
    lam = cf.damping * 0.5 * E + cf.lambda_min
    for i in range(na):
        s = 0.0
        for r in range(m):
            s += J[r, i] * e[r]
        g[i] = -s
        for j in range(i + 1):
            s = 0.0
            for r in range(m):
                s += J[r, i] * J[r, j]
            H[i, j] = s
            H[j, i] = s
        H[i, i] += lam + 1e-12
    step = cf.step
    cap = min(cf.max_joint_step, ck.max_step)
    lo, hi = cf.lo, cf.hi
    for kk in range(na):
        # Bounds of the step in each coordinate's unit (see scale_columns).
        k = act_q[kk]
        u = 1.0 if k < 0 else cf.unit[k]
        a = -cap
        b = cap
        if cf.limits and k >= 0:
            a = max(a, (lo[k] - q[k]) / u)
            b = min(b, (hi[k] - q[k]) / u)
        lb[kk] = min(a, 0.0) / step
        ub[kk] = max(b, 0.0) / step
    keep = ck.margin + ck.buffer
    nr = 0
    for p in range(out.shape[0]):
        d = out[p, OUT_DISTANCE]
        if out[p, OUT_EXACT] != 1.0 or d >= ck.influence:
            continue
        distance_gradient(fdata, idata, w.W, out[p], w.J6, grad)
        for kk in range(na):
            G[nr, kk] = grad[act[kk]] * step
        if cf.units:
            for kk in range(na):
                if act_q[kk] >= 0:
                    G[nr, kk] *= cf.unit[act_q[kk]]
        bq[nr] = keep - d
        nr += 1
    status = qp_solve(H, g, G[:nr], bq[:nr], 0, lb, ub, x, cw.qp, cw.qpi)
    # Too far in for one step: ask for half of each push-out, then a quarter..., and
    # last for "get no closer" (a step that leaves the pairs where they are).
    for h in range(RELAX_HALVINGS + 1):
        if status != QP_INFEASIBLE:
            break
        for r in range(nr):
            bq[r] = 0.5 * bq[r] if h < RELAX_HALVINGS else min(bq[r], 0.0)
        status = qp_solve(H, g, G[:nr], bq[:nr], 0, lb, ub, x, cw.qp, cw.qpi)
    if status != QP_SOLVED:
        return False
    for kk in range(na):
        if not np.isfinite(x[kk]):
            return False
    if cf.units:
        to_coordinates(x, cf.unit, act_q)
    # The rows are linear in dq; a pair's distance is not (another sphere of the link
    # may come closest). From an iterate near contact, a step that leaves the clearance
    # worse than it was (or below the margin, from above it) is halved, up to BACKTRACKS
    # times.
    d_old = np.inf
    for p in range(out.shape[0]):
        d_old = min(d_old, out[p, OUT_DISTANCE])
    floor = min(d_old, ck.margin)
    q_old = cw.q_seed
    for k in range(q.shape[0]):
        q_old[k] = q[k]
    for h in range(BACKTRACKS + 1):
        integrate(cf, q, x, step, fdata)
        if h == BACKTRACKS or d_old >= ck.margin + BACKTRACK_BAND:
            break
        fk_nodes(q, fdata, idata, nodes, w.W)
        if clearance(ck, cw, w.W) >= floor:
            break
        for k in range(q.shape[0]):
            q[k] = q_old[k]
        for kk in range(na):
            x[kk] *= 0.5
    return True
