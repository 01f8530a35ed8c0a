"""IK that keeps closed chains closed (:attr:`Model.equalities`: MJCF ``connect``/``weld``).

A model with active :class:`~kinetree.equality.Equality` records is a tree with loops cut
open (Cassie's leg rods, a parallel gripper's linkage). The compiled methods see only the
tree and would move its joints as if the cuts were free, breaking the linkage. This
solver keeps every active equality as a constraint of the highest priority and the
targets second, a damped Gauss-Newton step with two levels (Siciliano and Slotine's
task priority, 1991):

    x1 = C^+ (-c)                              closing the loops (pseudo-inverse, cut-off)
    N  = I - C^+ C                             motions that keep them as they are
    x2 = (J N)^T ((J N)(J N)^T + lambda I)^-1 (e - J x1)       the targets, damped
    dx = x1 + x2 (+ the rest pull in the null space of both, with ``rest=``)

``c`` stacks each equality's violation (a connect: ``p1 - p2`` [m], three rows; a weld
adds the rotation vector of ``R1 @ rotation @ R2^T`` [rad], three more), ``C`` its
Jacobian (the difference of the two points' geometric Jacobians); ``e`` and ``J`` are the
targets' weighted error rows (the compiled methods' ``err6``) and Jacobians. Tied
coordinates (:attr:`Model.couplings`) move with their source; joint limits hold at every
iterate (a joint at a limit that the step pushes further is held there and the step
solved again without it). The step is scaled to ``max_joint_step``.

Success: every target within ``tol`` (measured as every method measures it), every
active equality within ``tol`` (gap [m] against the position tolerance, a weld's turn
[rad] against the rotation tolerance), within the joint limits. Restarts from random
configurations (which the first level closes again) follow an attempt that fails, up to
``restarts`` or the time budget (``time_budget="default"``: 1 s here, as this loop is
Python around the compiled FK and Jacobians, not a compiled loop).

Methods ``auto`` and ``dls`` run it; the others (``pinv``, ``sdls``, ``transpose``,
``ccd``, ``fabrik``, the scipy methods, ``analytic``), learned seeds, collision checks and
the GPU refuse a model with active equalities with an
:class:`~kinetree.errors.UnsupportedError` rather than return a broken linkage.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from numba import njit

from ...equality import Equality
from ...errors import UnsupportedError
from ...kinematics import needed_nodes
from ...kinematics._kernels import fk_nodes, jacobian_add
from ...kinematics.layout import packed_ik
from ...model import Model
from ...spatial import matrix_to_axis_angle
from .._run import raise_status
from ..kernel import check_targets
from ..kernel import layout as L
from ..method_table import CLOSED_CHAIN_METHODS
from ..options import IKOptions
from ..problem import Problem, apply_couplings, build_problem
from ..result import IKResult, make_result
from ._cost import evaluate

__all__ = [
    "CLOSED_CHAIN_METHODS",
    "active_equalities",
    "check_closed_chains",
    "solve_closed_chains",
]

#: ``time_budget="default"`` of this solver [s].
DEFAULT_BUDGET = 1.0
#: Iterations per attempt when ``max_iter`` is not given.
DEFAULT_MAX_ITER = 100
#: Largest factor on the targets' damping before an attempt counts as stalled.
MAX_DAMPING_SCALE = 1e10
#: Weight of the equalities' squared violations in the merit a step must lower.
LOOP_WEIGHT = 1e4


def active_equalities(model: Model) -> tuple[Equality, ...]:
    """The equalities IK keeps: the active ones of :attr:`Model.equalities`."""
    return tuple(e for e in model.equalities if e.active)


def check_closed_chains(model: Model, what: str) -> None:
    """Raise :class:`UnsupportedError` naming ``what`` when ``model`` has active
    equalities: for the ways of solving that cannot keep them."""
    loops = active_equalities(model)
    if loops:
        raise UnsupportedError(
            f"{what} does not keep closed chains, and model {model.name!r} has "
            f"{len(loops)} ({', '.join(e.label for e in loops[:4])}"
            f"{', ...' if len(loops) > 4 else ''}): methods "
            f"{' and '.join(CLOSED_CHAIN_METHODS)} on the CPU keep them (see "
            "kinetree.ik.methods.closed_chains); or solve the open tree with "
            "dataclasses.replace(model, equalities=())"
        )


def solve_closed_chains(
    model: Model, target: Any, frame: str | None, opts: IKOptions, q0: Any, t0: float
) -> IKResult:
    """Solve ``target`` on ``model`` with its active equalities kept (module docstring)."""
    if opts.method not in CLOSED_CHAIN_METHODS:
        check_closed_chains(model, f"method {opts.method!r}")
    if opts.collision:
        check_closed_chains(model, "collision-aware IK (obstacles=, self_collision=)")
    if opts.seeds is not None:
        check_closed_chains(model, "IK from learned seeds (seeds=)")
    prob = build_problem(model, target, frame, opts, q0)
    tpl = prob.template
    batch = prob.batch
    B = int(np.prod(batch)) if batch else 1
    T = tpl.n_targets
    tgts = np.array(prob.tgt_f.reshape(B, T, L.TARGET_SIZE))
    for b in range(B):  # bad targets are errors before any step
        st = check_targets(tpl.tgt_i, tgts[b])
        if st != L.ST_OK:
            idx = tuple(int(i) for i in np.unravel_index(b, batch)) if batch else ()
            raise_status(st, f" (batch item {idx})" if batch else "")
    if not np.all(np.isfinite(prob.q0)):
        raise_status(L.ST_NONFINITE, " (q0)")
    q0s = np.broadcast_to(prob.q0, (*batch, model.nq)).reshape(B, model.nq)
    solver = _Solver(prob)
    seed = opts.draw_seed()
    qs = np.empty((B, model.nq))
    errs = np.empty((B, T, 2))
    its = np.empty(B, dtype=np.int64)
    rs = np.empty(B, dtype=np.int64)
    ok = np.empty(B, dtype=bool)
    gaps = np.empty((B, 2))
    history: list[np.ndarray] = []
    for b in range(B):
        qs[b], errs[b], its[b], rs[b], ok[b], gaps[b] = solver.solve(
            tgts[b], q0s[b], seed + b, time.perf_counter(), history if opts.record else None
        )
    result = make_result(
        q=qs,
        success=ok,
        position_error=errs[:, :, 0],
        orientation_error=errs[:, :, 1],
        iterations=its,
        restarts=rs,
        reachable=np.ones(B, dtype=bool),
        batch=batch,
        elapsed=time.perf_counter() - t0,
        frames=tpl.frames,
        method=opts.method,
        history=np.array(history) if opts.record and history else None,
    )
    if not batch and not ok[0] and (gaps[0, 0] > opts.tol[0] or gaps[0, 1] > opts.tol[1]):
        result.message = (
            f"not converged: the closed chains stay open by up to {gaps[0, 0]:.3g} m and "
            f"{gaps[0, 1]:.3g} rad (tolerance {opts.tol[0]:g} m, {opts.tol[1]:g} rad): the "
            "linkage cannot close with these targets and active joints; returned the best "
            f"configuration found ({int(its[0])} iterations, {int(rs[0])} restarts)"
        )
    return result


@njit(cache=True)
def _point_jacobians(
    q: np.ndarray,
    fdata: np.ndarray,
    idata: np.ndarray,
    nodes: np.ndarray,
    W: np.ndarray,
    at: np.ndarray,
    points: np.ndarray,
    P: np.ndarray,
    J: np.ndarray,
) -> None:
    """FK of ``nodes`` into ``W`` (n, 3, 4), then for each ``k``: the world position
    ``P[k]`` of ``points[k]`` (in node ``at[k]``'s frame) and its geometric Jacobian
    ``J[k]`` (6, nv), tied coordinates folded into their sources (``packed_ik``)."""
    fk_nodes(q, fdata, idata, nodes, W)
    J[:] = 0.0
    for k in range(at.shape[0]):
        Wn = W[at[k]]
        for r in range(3):
            P[k, r] = (
                Wn[r, 0] * points[k, 0]
                + Wn[r, 1] * points[k, 1]
                + Wn[r, 2] * points[k, 2]
                + Wn[r, 3]
            )
        jacobian_add(fdata, idata, W, at[k], P[k], J[k])


class _Solver:
    """The per-problem state shared by every item of a batch."""

    def __init__(self, prob: Problem) -> None:
        tpl = prob.template
        self.model = model = tpl.model
        self.tpl = tpl
        self.opts = opts = tpl.options
        self.loops = active_equalities(model)
        self.fdata, self.idata = packed_ik(model)
        # The points whose Jacobians a step needs: each equality's two, then each target's.
        at, points = [], []
        for eq in self.loops:
            at += [model.frame_index(eq.frame1), model.frame_index(eq.frame2)]
            points += [eq.point1, eq.point2]
        self.n_loop_points = len(at)
        at += [int(k) for k in tpl.tgt_i[:, L.TI_NODE]]
        points += [np.zeros(3)] * tpl.n_targets
        self.at = np.array(at, dtype=np.int64)
        self.points = np.array(points, dtype=np.float64).reshape(-1, 3)
        self.nodes = needed_nodes(model, tuple(at))
        self.W = np.zeros((model.n_nodes, 3, 4))
        self.P = np.zeros((len(at), 3))
        self.J = np.zeros((len(at), 6, model.nv))
        self.act = np.array(tpl.active_idx, dtype=np.int64)  # DoF IK moves
        # The coordinate each active DoF moves one-to-one (-1: a quaternion's), for limits.
        self.act_q = model.qv.v_q[self.act]
        self.plain = self.act_q[self.act_q >= 0]
        self.manifold = bool(np.any(self.act_q < 0))
        self.limits = opts.respect_limits
        self.lo, self.hi = tpl.lo, tpl.hi
        self.max_iter = opts.max_iter if opts.max_iter is not None else DEFAULT_MAX_ITER
        if opts.iteration_budget is not None:
            self.max_iter = min(self.max_iter, opts.iteration_budget)
        self.budget = (
            DEFAULT_BUDGET if isinstance(opts.time_budget, str) else float(opts.time_budget or 0)
        )
        self.rest = np.array(tpl.rest, dtype=np.float64)
        # Compile the rows and the error evaluation before any clock starts.
        first = np.array(prob.tgt_f).reshape(-1, tpl.n_targets, L.TARGET_SIZE)[0]
        self.evaluate(np.array(model.q_neutral), first)

    def evaluate(self, q: np.ndarray, tgt: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """FK and the Jacobians at ``q`` (kept in ``W``, ``P``, ``J``); returns the
        targets' errors (T, 2) and the equalities' ``(largest gap [m], turn [rad])``."""
        points = self.points
        points[self.n_loop_points :] = tgt[:, L.T_POINT : L.T_POINT + 3]
        kinds = self.tpl.tgt_i[:, L.TI_KIND]
        points[self.n_loop_points :][kinds != L.KIND_FRAME] = 0.0
        _point_jacobians(
            q, self.fdata, self.idata, self.nodes, self.W, self.at, points, self.P, self.J
        )
        errs = evaluate(self.fdata, self.idata, self.tpl.nodes, self.tpl.tgt_i, tgt, q)
        gaps = np.zeros(2)
        for i, eq in enumerate(self.loops):
            gap = float(np.linalg.norm(self.P[2 * i] - self.P[2 * i + 1]))
            turn = 0.0
            if eq.kind == "weld":
                turn = float(np.linalg.norm(self._turn(i, eq)))
            gaps = np.maximum(gaps, (gap, turn))
        return errs, gaps

    def _turn(self, i: int, eq: Equality) -> np.ndarray:
        """The rotation vector [rad] of ``R1 @ rotation @ R2^T`` of the ``i``-th equality."""
        R1 = self.W[self.at[2 * i], :, :3]
        R2 = self.W[self.at[2 * i + 1], :, :3]
        return np.asarray(matrix_to_axis_angle(R1 @ eq.rotation @ R2.T))

    # --- rows (at the configuration of the last evaluate) --------------------------------

    def loop_rows(self) -> tuple[np.ndarray, np.ndarray]:
        """``(c, C)``: the equalities' violations (rows) and their Jacobian (rows, nv)."""
        cs, Cs = [], []
        P, J = self.P, self.J
        for i, eq in enumerate(self.loops):
            a, b = 2 * i, 2 * i + 1
            cs.append(P[a] - P[b])
            Cs.append(J[a, :3] - J[b, :3])
            if eq.kind == "weld":
                cs.append(self._turn(i, eq))
                Cs.append(J[a, 3:] - J[b, 3:])
        return np.concatenate(cs), np.concatenate(Cs)

    def target_rows(self, tgt: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(e, J)``: the targets' weighted error rows and their Jacobian (rows, nv)."""
        es, Js = [], []
        for t in range(self.tpl.n_targets):
            k = self.n_loop_points + t
            tf = tgt[t]
            R = self.W[self.at[k], :, :3]
            Jt = self.J[k]
            w_p = tf[L.T_W_POS : L.T_W_POS + 3]
            w_r = tf[L.T_W_ROT : L.T_W_ROT + 3]
            if int(self.tpl.tgt_i[t, L.TI_KIND]) == L.KIND_FRAME:
                es.append(w_p * (tf[L.T_POS : L.T_POS + 3] - self.P[k]))
                Js.append(w_p[:, None] * Jt[:3])
                if np.any(w_r > 0):
                    R_target = tf[L.T_ROT : L.T_ROT + 9].reshape(3, 3)
                    es.append(w_r * matrix_to_axis_angle(R_target @ R.T))
                    Js.append(w_r[:, None] * Jt[3:])
            else:  # a direction: the frame's axis a (world) onto d; d(a)/dt = w x a
                a = R @ tf[L.T_POINT : L.T_POINT + 3]
                skew = np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
                es.append(w_r * (tf[L.T_POS : L.T_POS + 3] - a))
                Js.append(w_r[:, None] * (-skew @ Jt[3:]))
        return np.concatenate(es), np.concatenate(Js)

    # --- one item ----------------------------------------------------------------------

    def solve(
        self,
        tgt: np.ndarray,
        q0: np.ndarray,
        seed: int,
        t0: float,
        history: list[np.ndarray] | None,
    ) -> tuple[np.ndarray, np.ndarray, int, int, bool, np.ndarray]:
        """``(q, errors (T, 2), iterations, restarts, success, gaps)`` of one target set."""
        model, opts = self.model, self.opts
        tol_p, tol_r = opts.tol
        rng = np.random.default_rng(seed)
        q = self.start(np.array(q0, dtype=np.float64))
        best_q, best_errs, best_gaps = q, np.full((tgt.shape[0], 2), np.inf), np.full(2, np.inf)
        best = (np.inf, np.inf)
        iters = attempt = 0
        over = False
        while True:
            errs, gaps = self.evaluate(q, tgt)
            lam = 1.0  # multiplies the damping; grows when a step does not pay
            for _ in range(self.max_iter + 1):
                loop_bad = max(gaps[0] / tol_p, gaps[1] / tol_r)
                target_bad = max(
                    float(np.max(errs[:, 0])) / tol_p, float(np.max(errs[:, 1])) / tol_r
                )
                score = (max(loop_bad, 1.0), max(target_bad, 1.0))
                if score < best:
                    best, best_q, best_errs, best_gaps = score, q.copy(), errs, gaps
                if history is not None:
                    history.append(q.copy())
                if best == (1.0, 1.0) or iters >= self.max_iter * (attempt + 1):
                    break
                over = (self.budget > 0 and time.perf_counter() - t0 > self.budget) or (
                    opts.iteration_budget is not None and iters >= opts.iteration_budget
                )
                if over:
                    break
                iters += 1
                stepped = self.step(q, tgt, _merit(errs, gaps), lam)
                if stepped is None:
                    break  # stalled: no damping makes progress; restart
                q, errs, gaps, lam = stepped
            if best == (1.0, 1.0) or over or attempt >= opts.attempts:
                break
            attempt += 1
            q = self.start(self.random_start(q0, rng))
        ok = best == (1.0, 1.0) and (not self.limits or bool(model.within_limits(best_q, 1e-9)))
        return best_q, best_errs, iters, attempt, ok, best_gaps

    def start(self, q: np.ndarray) -> np.ndarray:
        """``q`` within the limits, its tied coordinates written."""
        if self.limits:
            q[self.plain] = np.clip(q[self.plain], self.lo[self.plain], self.hi[self.plain])
        apply_couplings(self.model, q)
        return q

    def random_start(self, q0: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """A random configuration for the active coordinates (``q0``'s value elsewhere
        and where the template keeps it: a free joint's position)."""
        q = np.array(q0, dtype=np.float64)
        sample = self.model.random_configuration(rng=rng)
        move = self.tpl.active & ~np.isnan(self.tpl.sample_lo)
        q[move] = sample[move]
        return self.model.normalize(q)

    def step(
        self, q: np.ndarray, tgt: np.ndarray, merit: float, lam: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float] | None:
        """One prioritised damped step from ``q`` (at the last :meth:`evaluate`), with
        Levenberg-Marquardt's safeguard: the targets' damping grows tenfold until the
        step lowers the merit (:func:`_merit`) and shrinks after one that does.
        ``(q, errors, gaps, lam)`` after the step, or None when none pays."""
        model, opts = self.model, self.opts
        c, C = self.loop_rows()
        e, J = self.target_rows(tgt)
        C, J = C[:, self.act], J[:, self.act]
        base = opts.damping * float(e @ e) / 2.0 + opts.lambda_min
        pull = None
        if self.tpl.rest_gain > 0:
            pull = self.tpl.rest_gain * model.difference(q, self.rest)[self.act]
        qa = np.maximum(self.act_q, 0)
        at_lo = (self.act_q >= 0) & (q[qa] <= self.lo[qa])
        at_hi = (self.act_q >= 0) & (q[qa] >= self.hi[qa])
        while lam <= MAX_DAMPING_SCALE:
            cols = np.ones(self.act.size, dtype=bool)  # active DoF not held at a limit
            dx = np.zeros(self.act.size)
            for _ in range(4):
                dx = np.zeros(self.act.size)
                dx[cols] = _prioritised(
                    C[:, cols],
                    -c,
                    J[:, cols],
                    e,
                    lam * base,
                    opts.cutoff,
                    None if pull is None else pull[cols],
                )
                if not self.limits:
                    break
                held = cols & ((at_lo & (dx < 0)) | (at_hi & (dx > 0)))
                if not np.any(held):
                    break
                cols &= ~held
            biggest = float(np.max(np.abs(dx), initial=0.0))
            if biggest > opts.max_joint_step:
                dx *= opts.max_joint_step / biggest
            dx *= opts.step
            if self.manifold:
                v = np.zeros(model.nv)
                v[self.act] = dx
                q_new = model.integrate(q, v)
            else:
                q_new = q.copy()
                q_new[self.act_q] += dx
            q_new = self.start(q_new)
            errs, gaps = self.evaluate(q_new, tgt)
            if _merit(errs, gaps) < merit:
                return q_new, errs, gaps, max(lam / 10.0, 1.0)
            lam *= 10.0
        return None


def _merit(errs: np.ndarray, gaps: np.ndarray) -> float:
    """What a step must lower: the targets' squared errors [m^2 + rad^2] plus the
    equalities' squared gap and turn, weighted :data:`LOOP_WEIGHT` (they come first)."""
    return float(np.sum(errs * errs) + LOOP_WEIGHT * np.sum(gaps * gaps))


def _prioritised(
    A1: np.ndarray,
    r1: np.ndarray,
    A2: np.ndarray,
    r2: np.ndarray,
    damping: float,
    cutoff: float,
    pull: np.ndarray | None,
) -> np.ndarray:
    """``x`` solving ``A1 x = r1`` (least squares, singular values below ``cutoff``
    times the largest cut), then ``A2 x = r2`` damped in the null space of ``A1``, then
    ``pull`` projected into the null space of both."""
    n = A1.shape[1]
    U, S, Vt = np.linalg.svd(A1, full_matrices=False)
    keep = S > max(cutoff * (S[0] if S.size else 0.0), 1e-12)
    V1 = Vt[keep]
    x1 = V1.T @ ((U[:, keep].T @ r1) / S[keep])
    N1 = np.eye(n) - V1.T @ V1
    A2N = A2 @ N1
    G = A2N @ A2N.T
    G[np.diag_indices_from(G)] += damping
    x2 = A2N.T @ np.linalg.solve(G, r2 - A2 @ x1)
    x = x1 + x2
    if pull is not None:
        _, S2, Vt2 = np.linalg.svd(np.vstack([A1, A2]), full_matrices=False)
        k2 = S2 > max(cutoff * (S2[0] if S2.size else 0.0), 1e-12)
        V2 = Vt2[k2]
        x += pull - V2.T @ (V2 @ pull)
    return x
