"""The one QP solver of kinetree: small, dense, exact, allocation-free, compiled.

    minimise    1/2 x^T H x + g^T x
    subject to  C[:meq] x  = b[:meq]
                C[meq:] x >= b[meq:]
                lb <= x <= ub            (entries may be -inf / inf)

``H`` must be symmetric positive definite (an IK step adds its damping to ``J^T J``).
The method is the dual active-set method of Goldfarb and Idnani (Mathematical
Programming 27, 1983): it starts from the unconstrained minimum ``-H^-1 g`` and adds
the most violated constraint one at a time, dropping a constraint whose multiplier
would turn negative, so every iterate is optimal for the constraints active so far.
The factors ``J = L^-T Q`` and ``R`` (with ``H = L L^T`` and ``Q^T L^-1 N = [R; 0]``
for the active normals ``N``) are updated by Givens rotations. It ends at the exact
optimum after finitely many steps, or proves the constraints infeasible: a violated
constraint that no step of the primal or the dual can satisfy. The bounds are
constraints of their own (normals ``e_i`` and ``-e_i``), never rows of ``C``.

At the optimum the multipliers (:func:`qp_multipliers`) satisfy the KKT conditions

    H x + g = C^T lam + mu,    lam[meq:] >= 0,    mu_i >= 0 at a lower bound,
                                                   mu_i <= 0 at an upper bound,

with ``lam`` and ``mu`` zero on inactive rows and bounds.

Two callers: the collision-aware IK step (:mod:`kinetree.ik.kernel._collide`, inside the
compiled loop) and the one-step differential IK (:func:`kinetree.diffik.solve_qp`,
through :class:`QPWorkspace`). Plain arrays in, a status code out, scratch passed in
(:func:`qp_work_size`, :func:`qp_iwork_size`), so it compiles for a CPU or a GPU thread
alike. Call it from compiled code, or from Python::

    from kinetree._qp import QP_SOLVED, qp_iwork_size, qp_solve, qp_work_size
    x = np.empty(n)
    status = qp_solve(H, g, C, b, 0, lb, ub, x, np.empty(qp_work_size(n, m)),
                      np.empty(qp_iwork_size(n, m), np.int64))

or, allocating the outputs, ``QPWorkspace().solve(H, g, C, b, meq, lb, ub)``.
"""

from __future__ import annotations

import math
from enum import IntEnum

import numpy as np
from numba import njit

from ._hints import shaped_view

__all__ = [
    "QP_INFEASIBLE",
    "QP_MAX_ITERATIONS",
    "QP_NOT_CONVEX",
    "QP_SOLVED",
    "QPStatus",
    "QPWorkspace",
    "qp_iwork_size",
    "qp_multipliers",
    "qp_solve",
    "qp_work_size",
]


class QPStatus(IntEnum):
    """What :func:`qp_solve` returns (the ``QP_*`` constants are the same codes as plain
    ints, which compiled callers compare against)."""

    #: ``x`` is the optimum; :func:`qp_multipliers` reads the multipliers.
    SOLVED = 0
    #: No ``x`` satisfies the constraints (``x``: the last iterate, finite).
    INFEASIBLE = 1
    #: ``H`` is not positive definite, or holds NaN (``x`` untouched).
    NOT_CONVEX = 2
    #: More active-set changes than a finite run needs: numerical trouble (``x``: the
    #: last iterate).
    MAX_ITERATIONS = 3


QP_SOLVED: int = QPStatus.SOLVED.value
QP_INFEASIBLE: int = QPStatus.INFEASIBLE.value
QP_NOT_CONVEX: int = QPStatus.NOT_CONVEX.value
QP_MAX_ITERATIONS: int = QPStatus.MAX_ITERATIONS.value

#: Relative size below which a direction counts as zero (a constraint dependent on
#: the active ones), and the relative violation a solution may keep.
_EPS = 1e-12
#: Relative residual below which an equality dependent on the earlier ones counts as
#: a consistent repeat (skipped) rather than a contradiction (infeasible).
_EQ_TOL = 1e-9


@njit(cache=True)
def qp_work_size(n: int, m: int) -> int:
    """Floats of scratch :func:`qp_solve` needs for ``n`` variables and ``m`` rows of
    ``C`` (the bounds need none)."""
    return 2 * n * n + 4 * n + 1


@njit(cache=True)
def qp_iwork_size(n: int, m: int) -> int:
    """Integers of scratch :func:`qp_solve` needs."""
    return n + m + 2 * n


@njit(cache=True, inline="always")
def _dot(C: np.ndarray, m: int, n: int, p: int, v: np.ndarray) -> float:
    """``n_p . v`` for constraint ``p``: a row of ``C``, then the lower and the upper
    bounds (normals ``e_i`` and ``-e_i``)."""
    if p < m:
        s = 0.0
        for j in range(n):
            s += C[p, j] * v[j]
        return s
    if p < m + n:
        return v[p - m]
    return -v[p - m - n]


@njit(cache=True, inline="always")
def _rhs(b: np.ndarray, lb: np.ndarray, ub: np.ndarray, m: int, n: int, p: int) -> float:
    if p < m:
        return b[p]
    if p < m + n:
        return lb[p - m]
    return -ub[p - m - n]


@njit(cache=True)
def _consistent(C: np.ndarray, b: np.ndarray, x: np.ndarray, n: int, p: int, sp: float) -> bool:
    """Whether equality ``p``, with residual ``sp`` at ``x``, holds to rounding."""
    scale = abs(b[p])
    for j in range(n):
        scale += abs(C[p, j] * x[j])
    return abs(sp) <= _EQ_TOL * (1.0 + scale)


@njit(cache=True)
def qp_solve(
    H: np.ndarray,
    g: np.ndarray,
    C: np.ndarray,
    b: np.ndarray,
    meq: int,
    lb: np.ndarray,
    ub: np.ndarray,
    x: np.ndarray,
    work: np.ndarray,
    iwork: np.ndarray,
) -> int:
    """Solve the QP of the module doc into ``x`` (n,); returns a :class:`QPStatus` code.

    Args:
        H: (n, n) symmetric positive definite (only its lower triangle is read).
        g: (n,) linear term.
        C: (m, n) constraint rows, the first ``meq`` equalities, the rest ``>=``.
        b: (m,) their right-hand sides.
        lb, ub: (n,) bounds; infinite entries are no bound.
        x: (n,) the solution (written).
        work: float64 scratch of :func:`qp_work_size` ``(n, m)``; iwork: int64 scratch of
            :func:`qp_iwork_size` ``(n, m)``.

    No argument is modified except ``x``, ``work`` and ``iwork``; after
    :data:`QP_SOLVED` the scratch holds the active set and its multipliers
    (:func:`qp_multipliers`). An equality that depends on the earlier ones is skipped
    when consistent with them (to ``1e-9`` relative), else the QP is infeasible.
    """
    n = g.shape[0]
    m = b.shape[0]
    mc = m + 2 * n
    nn = n * n
    Jm = shaped_view(work, 0, (n, n))
    R = shaped_view(work, nn, (n, n))
    z = work[2 * nn : 2 * nn + n]
    d = work[2 * nn + n : 2 * nn + 2 * n]
    r = work[2 * nn + 2 * n : 2 * nn + 3 * n]
    u = work[2 * nn + 3 * n : 2 * nn + 4 * n + 1]
    act = iwork[:n]
    mark = iwork[n : n + mc]
    # H = L L^T, L into R's storage (lower triangle).
    for i in range(n):
        for j in range(i + 1):
            s = H[i, j]
            for k in range(j):
                s -= R[i, k] * R[j, k]
            if i == j:
                if not s > 0.0:
                    return QP_NOT_CONVEX
                R[i, i] = math.sqrt(s)
            else:
                R[i, j] = s / R[j, j]
    # Jm = L^-T: column c of L^-1 (forward substitution) is row c of Jm.
    for c in range(n):
        for i in range(n):
            if i < c:
                Jm[c, i] = 0.0
                continue
            s = 1.0 if i == c else 0.0
            for k in range(c, i):
                s -= R[i, k] * Jm[c, k]
            Jm[c, i] = s / R[i, i]
    for i in range(n):
        for j in range(n):
            R[i, j] = 0.0
    # The unconstrained minimum x = -H^-1 g = -Jm Jm^T g.
    for j in range(n):
        s = 0.0
        for i in range(n):
            s += Jm[i, j] * g[i]
        d[j] = s
    for i in range(n):
        s = 0.0
        for j in range(n):
            s += Jm[i, j] * d[j]
        x[i] = -s
    for p in range(mc):
        mark[p] = 0
    q = 0
    n_eq = 0  # equalities taken so far (added, or skipped as consistent repeats)
    max_steps = 8 * (mc + n) + 16
    steps = 0
    while True:
        # Step 1: the next constraint. Equalities first, in order; then the most violated
        # inequality (bounds included), if any violation is beyond the tolerance.
        p = -1
        sgn = 1.0
        if n_eq < meq:
            p = n_eq
            n_eq += 1
            sp = _dot(C, m, n, p, x) - b[p]
            if sp > 0.0:
                sgn = -1.0
                sp = -sp
        else:
            worst = 0.0
            for c in range(meq, mc):
                if mark[c] != 0:
                    continue
                rhs = _rhs(b, lb, ub, m, n, c)
                if rhs == -np.inf:
                    continue
                v = _dot(C, m, n, c, x) - rhs
                if v < -_EPS * (1.0 + abs(rhs)) and v < worst:
                    worst = v
                    p = c
            if p < 0:
                return QP_SOLVED
            sp = worst
        u[q] = 0.0
        # Step 2: move primal and dual until p is satisfied (added) or blocked.
        while True:
            steps += 1
            if steps > max_steps:
                return QP_MAX_ITERATIONS
            # d = Jm^T n_p
            for j in range(n):
                if p < m:
                    s = 0.0
                    for i in range(n):
                        s += Jm[i, j] * C[p, i]
                    d[j] = sgn * s
                elif p < m + n:
                    d[j] = Jm[p - m, j]
                else:
                    d[j] = -Jm[p - m - n, j]
            # Primal direction z = Jm[:, q:] d[q:]; dual direction r = R^-1 d[:q].
            dd = 0.0
            zz = 0.0
            for j in range(n):
                dd += d[j] * d[j]
                if j >= q:
                    zz += d[j] * d[j]
            for i in range(n):
                s = 0.0
                for j in range(q, n):
                    s += Jm[i, j] * d[j]
                z[i] = s
            for i in range(q - 1, -1, -1):
                s = d[i]
                for j in range(i + 1, q):
                    s -= R[i, j] * r[j]
                r[i] = s / R[i, i]
            # Partial step: the largest dual step keeping the active inequalities'
            # multipliers >= 0; full step: the primal step that satisfies p.
            t1 = np.inf
            drop = -1
            for j in range(q):
                if act[j] >= meq and r[j] > 0.0:
                    t = u[j] / r[j]
                    if t < t1:
                        t1 = t
                        drop = j
            t2 = np.inf
            if zz > _EPS * dd:
                t2 = -sp / zz  # z . n_p = |d[q:]|^2
            if t1 == np.inf and t2 == np.inf:
                if p < meq and _consistent(C, b, x, n, p, sp):
                    break  # a repeat of the active equalities: nothing to add
                return QP_INFEASIBLE
            t = min(t1, t2)
            if t2 < np.inf:
                for i in range(n):
                    x[i] += t * z[i]
                sp += t * zz
            for j in range(q):
                u[j] -= t * r[j]
            u[q] += t
            if t2 <= t1:
                # Add p: rotate d[q+1:] into d[q] (columns of Jm alike); R gains a column.
                for j in range(n - 1, q, -1):
                    if d[j] == 0.0:
                        continue
                    h = math.hypot(d[j - 1], d[j])
                    cs = d[j - 1] / h
                    sn = d[j] / h
                    d[j - 1] = h
                    d[j] = 0.0
                    for i in range(n):
                        a0 = Jm[i, j - 1]
                        a1 = Jm[i, j]
                        Jm[i, j - 1] = cs * a0 + sn * a1
                        Jm[i, j] = -sn * a0 + cs * a1
                for i in range(q + 1):
                    R[i, q] = d[i]
                act[q] = p
                mark[p] = 1 if sgn > 0.0 else -1  # the sign of the normal (equalities)
                q += 1
                break
            # Drop the blocking constraint: shift R's columns, restore triangularity.
            mark[act[drop]] = 0
            for j in range(drop, q - 1):
                act[j] = act[j + 1]
                for i in range(n):
                    R[i, j] = R[i, j + 1]
            for j in range(drop, q + 1):
                u[j] = u[j + 1] if j < q else u[j]
            for i in range(n):
                R[i, q - 1] = 0.0
            q -= 1
            for j in range(drop, q):
                a0 = R[j, j]
                a1 = R[j + 1, j]
                h = math.hypot(a0, a1)
                if h == 0.0:
                    continue
                cs = a0 / h
                sn = a1 / h
                for col in range(j, q):
                    v0 = R[j, col]
                    v1 = R[j + 1, col]
                    R[j, col] = cs * v0 + sn * v1
                    R[j + 1, col] = -sn * v0 + cs * v1
                for i in range(n):
                    a0 = Jm[i, j]
                    a1 = Jm[i, j + 1]
                    Jm[i, j] = cs * a0 + sn * a1
                    Jm[i, j + 1] = -sn * a0 + cs * a1


@njit(cache=True)
def qp_multipliers(
    n: int, m: int, work: np.ndarray, iwork: np.ndarray, lam: np.ndarray, mu: np.ndarray
) -> None:
    """The multipliers of the QP that :func:`qp_solve` just solved (status
    :data:`QP_SOLVED`) with this ``work`` and ``iwork``, for ``n`` variables and ``m``
    rows: ``lam`` (m,) of the rows of ``C`` and ``mu`` (n,) of the bounds (written), so
    that ``H x + g = C^T lam + mu`` (see the module doc for their signs)."""
    nn = n * n
    u = work[2 * nn + 3 * n : 2 * nn + 4 * n + 1]
    act = iwork[:n]
    mark = iwork[n : n + m + 2 * n]
    for i in range(m):
        lam[i] = 0.0
    for i in range(n):
        mu[i] = 0.0
    q = 0
    for p in range(m + 2 * n):
        if mark[p] != 0:
            q += 1
    for j in range(q):
        p = act[j]
        v = u[j] * mark[p]
        if p < m:
            lam[p] = v
        elif p < m + n:
            mu[p - m] += v
        else:
            mu[p - m - n] -= v


class QPWorkspace:
    """Scratch of :func:`qp_solve` kept between calls (grown on demand), for Python
    callers that solve many small QPs: a control loop allocates only its outputs."""

    def __init__(self) -> None:
        self.work = np.empty(0)
        self.iwork = np.empty(0, np.int64)

    def solve(
        self,
        H: np.ndarray,
        g: np.ndarray,
        C: np.ndarray,
        b: np.ndarray,
        meq: int = 0,
        lb: np.ndarray | None = None,
        ub: np.ndarray | None = None,
    ) -> tuple[QPStatus, np.ndarray, np.ndarray, np.ndarray]:
        """``(status, x, lam, mu)`` of the QP of the module doc: the solution ``x`` (n,),
        the multipliers ``lam`` (m,) of the rows ``C`` (m, n) and ``mu`` (n,) of the
        bounds ``lb``/``ub`` (n,; None: unbounded). ``lam`` and ``mu`` are zero unless
        solved; ``x`` is the last iterate on failure (zero when ``H`` is not convex)."""
        H = np.ascontiguousarray(H, dtype=np.float64)
        n = H.shape[0]
        g = np.ascontiguousarray(g, dtype=np.float64)
        C = np.ascontiguousarray(C, dtype=np.float64).reshape(-1, n)
        b = np.ascontiguousarray(b, dtype=np.float64)
        m = b.shape[0]
        lo = np.full(n, -np.inf) if lb is None else np.ascontiguousarray(lb, dtype=np.float64)
        hi = np.full(n, np.inf) if ub is None else np.ascontiguousarray(ub, dtype=np.float64)
        if self.work.shape[0] < qp_work_size(n, m):
            self.work = np.empty(qp_work_size(n, m))
        if self.iwork.shape[0] < qp_iwork_size(n, m):
            self.iwork = np.empty(qp_iwork_size(n, m), np.int64)
        x = np.zeros(n)
        lam = np.zeros(m)
        mu = np.zeros(n)
        status = QPStatus(qp_solve(H, g, C, b, meq, lo, hi, x, self.work, self.iwork))
        if status == QPStatus.SOLVED:
            qp_multipliers(n, m, self.work, self.iwork, lam, mu)
        return status, x, lam, mu
