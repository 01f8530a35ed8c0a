"""Quasi-Newton and conjugate-gradient IK through :func:`scipy.optimize.minimize`.

The objective is smooth everywhere (``|R - R*|_F^2 / 2`` for orientation instead
of the axis-angle norm) and its exact gradient comes from the compiled Jacobian
(:func:`kinetree.ik.methods._cost.cost_grad`). ``lbfgs`` takes the joint limits as
bounds; ``bfgs`` and ``cg`` are unconstrained and their result is clipped into
the limits. Ball joints with swing-twist limits (``Model.swing_twist``) are then moved
into their cones by the compiled methods' own projection (none of the three can take a
cone as a constraint), and the result is checked through FK like every other method:
a solution the projection moved off the target is a failure, never a success.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np
from scipy.optimize import minimize

from ...kinematics.layout import packed_ik
from .._run import raise_status, run
from ..kernel import check_targets
from ..kernel import layout as L
from ..kernel._swing_twist import SCRATCH, project_all
from ..kernel.swing_twist_layout import swing_twist_layout
from ..method_table import ROWS
from ..problem import Problem, apply_couplings, require_finite_q0
from ..result import IKResult, make_result
from ._cost import cost_grad, evaluate

__all__ = ["solve_scipy"]


def _one(
    prob: Problem, tgt_f: np.ndarray, q0: np.ndarray, t0: float, seed: int
) -> tuple[np.ndarray, np.ndarray, int, int, bool]:
    tpl = prob.template
    opts = tpl.options
    fdata, idata = packed_ik(tpl.model)
    act = np.array(tpl.active_idx)
    lo, hi, slo, shi = tpl.lo, tpl.hi, tpl.sample_lo, tpl.sample_hi
    rest = np.array(tpl.rest, dtype=np.float64)
    rest_w = 1e-6 * tpl.rest_gain  # a gentle preference; it biases the optimum slightly
    tol_p, tol_r = opts.tol
    limits = opts.respect_limits
    max_iter = opts.iterations
    restarts = opts.attempts
    budget = opts.budget
    method = str(ROWS[tpl.method].scipy)
    rng = np.random.default_rng(seed)
    tgt = np.ascontiguousarray(tgt_f)
    q_full = np.array(q0, dtype=np.float64)
    if limits:
        q_full[act] = np.clip(q_full[act], lo[act], hi[act])
    bounds = list(zip(lo[act], hi[act])) if limits and method == "L-BFGS-B" else None
    st_i, st_f = swing_twist_layout(tpl.model, tpl.active)
    cones = tpl.has_swing_twist  # False: nothing to project (or the limits are off)
    scratch = np.empty(SCRATCH)
    if cones:  # the start too: it is the first candidate
        project_all(q_full, q_full.copy(), fdata, st_i, st_f, lo, hi, scratch)

    def fun(qa: np.ndarray) -> tuple[float, np.ndarray]:
        return cost_grad(
            np.ascontiguousarray(qa),
            q_full,
            act,
            fdata,
            idata,
            tpl.nodes,
            tpl.tgt_i,
            tgt,
            rest,
            rest_w,
        )

    best_q = q_full.copy()
    best_err = evaluate(fdata, idata, tpl.nodes, tpl.tgt_i, tgt, best_q)
    best_bad = max(np.max(best_err[:, 0]) / tol_p, np.max(best_err[:, 1]) / tol_r)
    iters = 0
    attempt = 0
    while True:
        x0 = q_full[act].copy()
        sp_opts: dict[str, float] = {"maxiter": max_iter, "gtol": 1e-14}
        if method == "L-BFGS-B":
            sp_opts["ftol"] = 1e-300
        res = minimize(fun, x0, jac=True, method=method, bounds=bounds, options=sp_opts)
        iters += int(res.nit)
        x = res.x if np.all(np.isfinite(res.x)) else x0
        q = q_full.copy()
        q[act] = np.clip(x, lo[act], hi[act]) if limits else x
        if cones:  # into the cones, anchored at the attempt's start
            project_all(q, q_full, fdata, st_i, st_f, lo, hi, scratch)
        err = evaluate(fdata, idata, tpl.nodes, tpl.tgt_i, tgt, q)
        bad = max(np.max(err[:, 0]) / tol_p, np.max(err[:, 1]) / tol_r)
        if bad < best_bad:
            best_q, best_err, best_bad = q, err, bad
        if best_bad <= 1.0 or attempt >= restarts:
            break
        if budget > 0 and time.perf_counter() - t0 > budget:
            break
        attempt += 1
        q_full = q_full.copy()
        q_full[act] = slo[act] + (shi[act] - slo[act]) * rng.random(act.size)
    return best_q, best_err, iters, attempt, bool(best_bad <= 1.0)


def solve_scipy(prob: Problem, t0: float) -> IKResult:
    """Solve with ``bfgs``, ``lbfgs`` or ``cg`` (one item at a time for batches)."""
    require_finite_q0(prob)
    tpl = prob.template
    nq = tpl.model.nq
    T = tpl.n_targets
    batch = prob.batch
    B = int(np.prod(batch)) if batch else 1
    tgts = np.array(prob.tgt_f.reshape(B, T, L.TARGET_SIZE))
    for b in range(B):  # bad targets are errors before any optimisation runs
        st = check_targets(tpl.tgt_i, tgts[b])  # also projects near-rigid rotations
        if st != L.ST_OK:
            idx = tuple(int(i) for i in np.unravel_index(b, batch)) if batch else ()
            raise_status(st, f" (batch item {idx})" if batch else "")
    q0s = np.broadcast_to(prob.q0, (*batch, nq)).reshape(B, nq)
    qs = np.empty((B, nq))
    errs = np.empty((B, T, 2))
    its = np.empty(B, dtype=np.int64)
    rs = np.empty(B, dtype=np.int64)
    ok = np.empty(B, dtype=bool)
    seed = tpl.options.draw_seed()
    for b in range(B):
        qs[b], errs[b], its[b], rs[b], ok[b] = _one(
            prob, tgts[b], q0s[b], time.perf_counter(), seed + b
        )
    apply_couplings(tpl.model, qs)
    return make_result(
        q=qs,
        success=ok,
        position_error=errs[:, :, 0],
        orientation_error=errs[:, :, 1],
        iterations=its,
        restarts=rs,
        reachable=_reachable(prob, tgts, q0s),
        batch=batch,
        elapsed=time.perf_counter() - t0,
        frames=tpl.frames,
        method=tpl.method,
    )


def _reachable(prob: Problem, tgts: np.ndarray, q0s: np.ndarray) -> np.ndarray:
    """Reach check of the compiled solver (zero iterations) for each item."""
    from ..problem import cached_template

    tpl = prob.template
    probe_opts = dataclasses.replace(
        tpl.options, method="dls", max_iter=0, restarts=0, record=False, time_budget=None
    )
    probe = cached_template(
        tpl.model, tpl.frames, tuple(int(k) for k in tpl.tgt_i[:, 1]), tgts[0], probe_opts
    )
    r = run(
        probe,
        np.ascontiguousarray(tgts),
        np.ascontiguousarray(q0s),
        (tgts.shape[0],),
        probe_opts,
        time.perf_counter(),
    )
    return np.asarray(r.reachable, dtype=bool)
