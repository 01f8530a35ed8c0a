"""Quasi-Newton and conjugate-gradient IK through :func:`scipy.optimize.minimize`.

The objective is smooth everywhere (``|R - R*|_F^2 / 2`` for orientation instead
of the axis-angle norm) and its exact gradient comes from the compiled Jacobian
(:func:`kinetree.ik._kernels.cost_grad`). ``lbfgs`` takes the joint limits as
bounds; ``bfgs`` and ``cg`` are unconstrained and their result is clipped into
the limits (then checked through FK like every other method).
"""

from __future__ import annotations

import time

import numpy as np
from scipy.optimize import minimize

from . import _kernels as K
from .problem import Problem, require_finite_q0
from .result import IKResult

__all__ = ["solve_scipy"]

_SCIPY = {"bfgs": "BFGS", "lbfgs": "L-BFGS-B", "cg": "CG"}


def _one(
    prob: Problem, tgt_f: np.ndarray, q0: np.ndarray, t0: float
) -> tuple[np.ndarray, np.ndarray, int, int, bool]:
    tpl = prob.template
    model = tpl.model
    fdata, idata = model.packed
    dof = model.dof
    cfg, icfg = tpl.cfg, tpl.icfg
    act = icfg[K.NI : K.NI + int(icfg[K.I_NA])].copy()
    lo = cfg[K.NF : K.NF + dof]
    hi = cfg[K.NF + dof : K.NF + 2 * dof]
    slo = cfg[K.NF + 2 * dof : K.NF + 3 * dof]
    shi = cfg[K.NF + 3 * dof : K.NF + 4 * dof]
    rest = np.ascontiguousarray(cfg[K.NF + 4 * dof : K.NF + 5 * dof])
    rest_w = 1e-6 * cfg[K.F_REST]  # a gentle preference; it biases the optimum slightly
    tol_p, tol_r = cfg[K.F_TOL_P], cfg[K.F_TOL_R]
    limits = bool(icfg[K.I_LIMITS])
    max_iter = int(icfg[K.I_MAX_ITER])
    restarts = int(icfg[K.I_RESTARTS])
    budget = float(cfg[K.F_BUDGET])
    method = _SCIPY[tpl.method]
    rng = np.random.default_rng(tpl.seed)
    tgt = np.ascontiguousarray(tgt_f)
    q_full = np.array(q0, dtype=np.float64)
    if limits:
        q_full[act] = np.clip(q_full[act], lo[act], hi[act])
    bounds = list(zip(lo[act], hi[act])) if limits and method == "L-BFGS-B" else None

    def fun(qa: np.ndarray) -> tuple[float, np.ndarray]:
        return K.cost_grad(
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
    best_err = K.evaluate(fdata, idata, tpl.nodes, tpl.tgt_i, tgt, best_q)
    best_bad = max(np.max(best_err[:, 0]) / tol_p, np.max(best_err[:, 1]) / tol_r)
    iters = 0
    attempt = 0
    while True:
        x0 = q_full[act].copy()
        opts = {"maxiter": max_iter, "gtol": 1e-14}
        if method == "L-BFGS-B":
            opts = {"maxiter": max_iter, "gtol": 1e-14, "ftol": 1e-300}
        res = minimize(fun, x0, jac=True, method=method, bounds=bounds, options=opts)
        iters += int(res.nit)
        x = res.x if np.all(np.isfinite(res.x)) else x0
        q = q_full.copy()
        q[act] = np.clip(x, lo[act], hi[act]) if limits else x
        err = K.evaluate(fdata, idata, tpl.nodes, tpl.tgt_i, tgt, q)
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
    from . import _message

    require_finite_q0(prob)
    dof = prob.template.model.dof
    T = prob.template.tgt_i.shape[0]
    batch = prob.batch
    B = int(np.prod(batch)) if batch else 1
    tgts = prob.tgt_f.reshape(B, T, 24)
    for b in range(B):  # bad targets are errors before any optimisation runs
        st = K.check_targets(prob.template.tgt_i, np.ascontiguousarray(tgts[b]))
        if st != K.ST_OK:
            from . import _raise_status

            idx = tuple(int(i) for i in np.unravel_index(b, batch)) if batch else ()
            where = f" (batch item {idx})" if batch else ""
            _raise_status(st, where)
    q0s = np.broadcast_to(prob.q0, (*batch, dof)).reshape(B, dof)
    qs = np.empty((B, dof))
    errs = np.empty((B, T, 2))
    its = np.empty(B, dtype=np.int64)
    rs = np.empty(B, dtype=np.int64)
    ok = np.empty(B, dtype=bool)
    for b in range(B):
        qs[b], errs[b], its[b], rs[b], ok[b] = _one(prob, tgts[b], q0s[b], time.perf_counter())
    reach = _reachable(prob, tgts, q0s)
    if not batch:
        return IKResult(
            q=qs[0],
            success=bool(ok[0]),
            position_error=errs[0, :, 0],
            orientation_error=errs[0, :, 1],
            iterations=int(its[0]),
            restarts=int(rs[0]),
            elapsed=time.perf_counter() - t0,
            message=_message(bool(ok[0]), bool(reach[0]), int(its[0]), int(rs[0])),
            reachable=bool(reach[0]),
            frames=prob.template.frames,
            method=prob.template.method,
        )
    return IKResult(
        q=qs.reshape(*batch, dof),
        success=ok.reshape(batch),
        position_error=errs[:, :, 0].reshape(*batch, T),
        orientation_error=errs[:, :, 1].reshape(*batch, T),
        iterations=its.reshape(batch),
        restarts=rs.reshape(batch),
        elapsed=time.perf_counter() - t0,
        message=np.where(ok, "converged", "not converged").reshape(batch),
        reachable=reach.reshape(batch),
        frames=prob.template.frames,
        method=prob.template.method,
    )


def _reachable(prob: Problem, tgts: np.ndarray, q0s: np.ndarray) -> np.ndarray:
    """Reach check of the compiled solver (zero iterations) for each item."""
    from . import run
    from .problem import Problem as P

    tpl = prob.template
    icfg = tpl.icfg.copy()
    icfg[K.I_MAX_ITER] = 0
    icfg[K.I_RESTARTS] = 0
    icfg[K.I_RECORD] = 0
    import dataclasses

    probe = dataclasses.replace(tpl, icfg=icfg, record=False)
    batch = (tgts.shape[0],)
    r = run(P(probe, tgts, q0s, batch), time.perf_counter())
    return np.asarray(r.reachable, dtype=bool)
