"""A compiled dense QP solver: the dual active-set method of Goldfarb and Idnani.

Solves

    minimise    1/2 x^T H x + g^T x
    subject to  C[:n_eq] x  = d[:n_eq]        (equalities)
                C[n_eq:] x >= d[n_eq:]        (inequalities)

for a symmetric positive definite ``H`` (n x n) and any number of rows ``C`` (m x n).
The method (D. Goldfarb and A. Idnani, "A numerically stable dual method for solving
strictly convex quadratic programs", Math. Programming 27, 1983) starts from the
unconstrained minimum ``x = -H^{-1} g`` and adds violated constraints one at a time,
dropping those whose multipliers would turn negative, so every iterate is dual
feasible and the first primal feasible one is optimal. It keeps ``J = L^{-T} Q`` and
the upper triangle ``R`` of the QR factors of ``L^{-1} N`` (``H = L L^T``, ``N`` the
active rows), updated by Givens rotations; ``J``'s first ``q`` columns span the active
normals' image, the others their null space in the ``H`` metric.

An infeasible problem is found when a violated constraint can be reached neither by a
primal step nor by a dual step (``STATUS_INFEASIBLE``). The core
(:func:`solve_dense`) allocates nothing: every array is a slot of a
:class:`QPWorkspace`, so a control loop reuses one per problem size.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = [
    "STATUS_INFEASIBLE",
    "STATUS_MAX_ITERATIONS",
    "STATUS_NOT_CONVEX",
    "STATUS_SOLVED",
    "QPWorkspace",
    "solve_dense",
]

STATUS_SOLVED = 0
STATUS_INFEASIBLE = 1
STATUS_MAX_ITERATIONS = 2
STATUS_NOT_CONVEX = 3  # H is not positive definite (its Cholesky factor failed)

# A constraint counts as violated when its scaled residual is below -FEASIBILITY_TOL
# times (1 + |d_i| / |C_i|): exact to rounding on well-scaled problems.
FEASIBILITY_TOL = 1e-12
# A direction counts as zero when |J2^T n|^2 <= DEPENDENCE_TOL * |J^T n|^2: the new
# normal lies (to rounding) in the span of the active ones.
DEPENDENCE_TOL = 1e-14


@njit(cache=True)
def _factor(H: np.ndarray, L: np.ndarray, J: np.ndarray) -> bool:
    """``H = L L^T`` (lower ``L``) and ``J = L^{-T}`` (upper); False if ``H`` is not
    positive definite (or holds NaN)."""
    n = H.shape[0]
    for j in range(n):
        s = H[j, j]
        for k in range(j):
            s -= L[j, k] * L[j, k]
        if not s > 0.0:
            return False
        L[j, j] = math.sqrt(s)
        for i in range(j + 1, n):
            t = H[i, j]
            for k in range(j):
                t -= L[i, k] * L[j, k]
            L[i, j] = t / L[j, j]
    # Row c of J is column c of L^{-1}: forward substitution of L y = e_c.
    for c in range(n):
        for i in range(n):
            if i < c:
                J[c, i] = 0.0
                continue
            t = 1.0 if i == c else 0.0
            for k in range(c, i):
                t -= L[i, k] * J[c, k]
            J[c, i] = t / L[i, i]
    return True


@njit(cache=True, inline="always")
def _rotate_columns(J: np.ndarray, a: int, b: int, c: float, s: float) -> None:
    for i in range(J.shape[0]):
        ja = J[i, a]
        jb = J[i, b]
        J[i, a] = c * ja + s * jb
        J[i, b] = -s * ja + c * jb


@njit(cache=True)
def _directions(
    J: np.ndarray, R: np.ndarray, normal: np.ndarray, q: int, dv: np.ndarray, z: np.ndarray,
    r: np.ndarray,
) -> tuple[float, float]:  # fmt: skip
    """``dv = J^T n``, the primal direction ``z = J2 J2^T n``, the dual direction
    ``r = R^{-1} J1^T n``; returns ``(z . n, |dv|^2)``."""
    n = J.shape[0]
    total = 0.0
    for j in range(n):
        t = 0.0
        for i in range(n):
            t += J[i, j] * normal[i]
        dv[j] = t
        total += t * t
    zn = 0.0
    for i in range(n):
        z[i] = 0.0
    for j in range(q, n):
        zn += dv[j] * dv[j]
        for i in range(n):
            z[i] += J[i, j] * dv[j]
    for j in range(q - 1, -1, -1):
        t = dv[j]
        for k in range(j + 1, q):
            t -= R[j, k] * r[k]
        r[j] = t / R[j, j]
    return zn, total


@njit(cache=True)
def _add(J: np.ndarray, R: np.ndarray, dv: np.ndarray, q: int) -> None:
    """Append the normal whose ``dv = J^T n`` is given as active column ``q``: rotate
    ``dv[q+1:]`` to zero (the same rotations on ``J``'s columns), then ``R[:q+1, q]``."""
    n = J.shape[0]
    for j in range(n - 1, q, -1):
        a = dv[j - 1]
        b = dv[j]
        if b == 0.0:
            continue
        h = math.hypot(a, b)
        c = a / h
        s = b / h
        dv[j - 1] = h
        dv[j] = 0.0
        _rotate_columns(J, j - 1, j, c, s)
    for i in range(q + 1):
        R[i, q] = dv[i]


@njit(cache=True)
def _drop(J: np.ndarray, R: np.ndarray, k: int, q: int) -> None:
    """Remove active column ``k`` of ``q``: shift the later columns of ``R`` left and
    rotate its subdiagonal away (the same rotations on ``J``'s columns)."""
    for j in range(k, q - 1):
        for i in range(j + 2):
            R[i, j] = R[i, j + 1]
    for j in range(k, q - 1):
        a = R[j, j]
        b = R[j + 1, j]
        if b == 0.0:
            continue
        h = math.hypot(a, b)
        c = a / h
        s = b / h
        for col in range(j, q - 1):
            ra = R[j, col]
            rb = R[j + 1, col]
            R[j, col] = c * ra + s * rb
            R[j + 1, col] = -s * ra + c * rb
        R[j + 1, j] = 0.0
        _rotate_columns(J, j, j + 1, c, s)
    for i in range(q):
        R[i, q - 1] = 0.0


@njit(cache=True)
def solve_dense(
    H: np.ndarray,
    g: np.ndarray,
    C: np.ndarray,
    d: np.ndarray,
    n_eq: int,
    max_iterations: int,
    x: np.ndarray,
    lam: np.ndarray,
    L: np.ndarray,
    J: np.ndarray,
    R: np.ndarray,
    dv: np.ndarray,
    z: np.ndarray,
    r: np.ndarray,
    u: np.ndarray,
    active: np.ndarray,
    is_active: np.ndarray,
) -> tuple[int, int]:
    """Solve the QP of the module docstring into ``x`` (n,) and the multipliers ``lam``
    (m,) (``H x + g = C^T lam``, ``lam >= 0`` on inequalities, 0 on inactive rows).

    Scratch (a :class:`QPWorkspace`): ``L``, ``J``, ``R`` (n, n); ``dv``, ``z``, ``r``
    (n,); ``u`` (n + 1,); ``active`` (n + 1,) int64; ``is_active`` (m,) bool. Returns
    ``(status, iterations)``; on failure ``x`` holds the last iterate.
    """
    n = H.shape[0]
    m = C.shape[0]
    for i in range(m):
        lam[i] = 0.0
        is_active[i] = False
    if not _factor(H, L, J):
        for i in range(n):
            x[i] = 0.0
        return STATUS_NOT_CONVEX, 0
    for i in range(n):
        for j in range(n):
            R[i, j] = 0.0
    # Unconstrained minimum x = -J J^T g.
    for j in range(n):
        t = 0.0
        for i in range(n):
            t += J[i, j] * g[i]
        dv[j] = t
    for i in range(n):
        t = 0.0
        for j in range(n):
            t += J[i, j] * dv[j]
        x[i] = -t
    q = 0
    iterations = 0
    # Equalities first: each is a full step along z (either sign).
    for e in range(n_eq):
        iterations += 1
        zn, total = _directions(J, R, C[e], q, dv, z, r)
        s = -d[e]
        scale = abs(d[e])
        for i in range(n):
            s += C[e, i] * x[i]
            scale += abs(C[e, i] * x[i])
        if zn <= DEPENDENCE_TOL * total or q >= n:
            if abs(s) > 1e-9 * (1.0 + scale):
                return STATUS_INFEASIBLE, iterations
            continue  # a consistent repeat of the active equalities
        t = -s / zn
        for i in range(n):
            x[i] += t * z[i]
        for j in range(q):
            u[j] -= t * r[j]
        u[q] = t
        active[q] = e
        is_active[e] = True
        _add(J, R, dv, q)
        q += 1
    # Inequalities: add the most violated, dropping blocking ones on the way.
    while True:
        p = -1
        worst = 0.0
        for i in range(n_eq, m):
            if is_active[i]:
                continue
            s = -d[i]
            nrm = 0.0
            for k in range(n):
                s += C[i, k] * x[k]
                nrm += C[i, k] * C[i, k]
            nrm = math.sqrt(nrm)
            if nrm == 0.0:
                if d[i] > FEASIBILITY_TOL * (1.0 + abs(d[i])):
                    return STATUS_INFEASIBLE, iterations  # 0 >= d with d > 0
                continue
            scaled = s / nrm
            if scaled < -FEASIBILITY_TOL * (1.0 + abs(d[i]) / nrm) and scaled < worst:
                worst = scaled
                p = i
        if p < 0:
            break
        u[q] = 0.0
        while True:
            iterations += 1
            if iterations > max_iterations:
                return STATUS_MAX_ITERATIONS, iterations
            s = -d[p]
            for k in range(n):
                s += C[p, k] * x[k]
            zn, total = _directions(J, R, C[p], q, dv, z, r)
            t1 = np.inf
            k_drop = -1
            for j in range(q):
                if active[j] >= n_eq and r[j] > 0.0:
                    ratio = u[j] / r[j]
                    if ratio < t1:
                        t1 = ratio
                        k_drop = j
            full = zn > DEPENDENCE_TOL * total
            t2 = max(-s / zn, 0.0) if full else np.inf
            t = min(t1, t2)
            if t == np.inf:
                return STATUS_INFEASIBLE, iterations
            if full:
                for i in range(n):
                    x[i] += t * z[i]
            for j in range(q):
                u[j] -= t * r[j]
            u[q] += t
            if full and t2 <= t1:
                active[q] = p
                is_active[p] = True
                _add(J, R, dv, q)
                q += 1
                break
            # Partial (or purely dual) step: constraint k_drop leaves the active set.
            is_active[active[k_drop]] = False
            for j in range(k_drop, q):
                u[j] = u[j + 1]
                if j + 1 < q:
                    active[j] = active[j + 1]
            _drop(J, R, k_drop, q)
            q -= 1
    for j in range(q):
        lam[active[j]] = u[j]
    return STATUS_SOLVED, iterations


class QPWorkspace:
    """Scratch arrays of :func:`solve_dense` for ``n`` variables and ``m`` rows (grown on
    demand, so a control loop allocates once)."""

    def __init__(self, n: int = 0, m: int = 0) -> None:
        self.n = -1
        self.m = -1
        self.reserve(n, m)

    def reserve(self, n: int, m: int) -> None:
        if n != self.n:
            self.n = n
            self.L = np.zeros((n, n))
            self.J = np.zeros((n, n))
            self.R = np.zeros((n, n))
            self.dv = np.zeros(n)
            self.z = np.zeros(n)
            self.r = np.zeros(n)
            self.u = np.zeros(n + 1)
            self.active = np.zeros(n + 1, dtype=np.int64)
        if m > self.m:
            self.m = m
            self.is_active = np.zeros(m, dtype=np.bool_)

    def solve(
        self, H: np.ndarray, g: np.ndarray, C: np.ndarray, d: np.ndarray, n_eq: int,
        max_iterations: int = 0,
    ) -> tuple[int, np.ndarray, np.ndarray, int]:  # fmt: skip
        """``(status, x, lam, iterations)`` of the QP (arrays as :func:`solve_dense`)."""
        n = H.shape[0]
        m = C.shape[0]
        self.reserve(n, m)
        x = np.zeros(n)
        lam = np.zeros(m)
        budget = max_iterations or 10 * (n + m) + 50
        status, its = solve_dense(
            H, g, C, d, n_eq, budget, x, lam, self.L, self.J, self.R, self.dv, self.z,
            self.r, self.u, self.active, self.is_active[:m],
        )  # fmt: skip
        return int(status), x, lam, int(its)
