"""The QP solver as the one-step differential IK reaches it (kinetree.diffik._qp, an alias of
kinetree._qp) against KKT conditions, quadprog/daqp through qpsolvers (when installed) and
scipy, on random problems."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

from kinetree.diffik import QP, NoSolutionError, qp_solvers, solve_qp
from kinetree.diffik._qp import STATUS_INFEASIBLE, STATUS_NOT_CONVEX, STATUS_SOLVED, QPWorkspace


def _problem(seed: int, n: int, m: int, n_eq: int, degenerate: bool):
    gen = np.random.default_rng(seed)
    M = gen.normal(size=(n, n))
    H = M @ M.T + 1e-3 * np.eye(n)
    g = gen.normal(size=n) * 10
    C = gen.normal(size=(n_eq + m, n))
    if degenerate and m >= 2:
        C[n_eq + 1] = C[n_eq]  # a repeated row: a degenerate active set
    x_feasible = gen.normal(size=n)
    d = C @ x_feasible - np.abs(gen.normal(size=n_eq + m))
    d[:n_eq] = C[:n_eq] @ x_feasible
    if degenerate and m >= 2:
        d[n_eq + 1] = d[n_eq]
    return H, g, C, d


def _kkt(H, g, C, d, n_eq, x, lam) -> float:
    """The worst violation of the KKT conditions: stationarity, primal feasibility,
    dual feasibility and complementary slackness."""
    s = C @ x - d
    return max(
        float(np.abs(H @ x + g - C.T @ lam).max()),
        float(np.abs(s[:n_eq]).max(initial=0.0)),
        float(-s[n_eq:].min(initial=0.0)),
        float(-lam[n_eq:].min(initial=0.0)),
        float(np.abs(lam[n_eq:] * s[n_eq:]).max(initial=0.0)),
    )


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    n=st.integers(1, 14),
    m=st.integers(0, 40),
    n_eq=st.integers(0, 4),
    degenerate=st.booleans(),
)
def test_random_feasible_problems_meet_kkt(seed, n, m, n_eq, degenerate):
    n_eq = min(n_eq, n)
    H, g, C, d = _problem(seed, n, m, n_eq, degenerate)
    status, x, lam, _ = QPWorkspace().solve(H, g, C, d, n_eq)
    assert status == STATUS_SOLVED
    scale = 1.0 + float(np.abs(g).max()) + float(np.abs(x).max()) * float(np.abs(H).max())
    assert _kkt(H, g, C, d, n_eq, x, lam) <= 1e-9 * scale


@pytest.mark.parametrize("seed", range(40))
def test_agrees_with_quadprog_and_daqp(seed):
    qpsolvers = pytest.importorskip("qpsolvers")
    gen = np.random.default_rng(seed)
    n, m = int(gen.integers(2, 12)), int(gen.integers(1, 30))
    H, g, C, d = _problem(seed, n, m, 1, False)
    status, x, _, _ = QPWorkspace().solve(H, g, C, d, 1)
    assert status == STATUS_SOLVED
    for name in ("quadprog", "daqp"):
        if name not in qpsolvers.available_solvers:
            continue
        ref = qpsolvers.solve_qp(H, g, -C[1:], -d[1:], C[:1], d[:1], solver=name)
        np.testing.assert_allclose(x, ref, atol=1e-7 * (1 + np.abs(ref).max()))


def test_agrees_with_scipy_on_a_small_problem():
    H, g, C, d = _problem(3, 4, 6, 0, False)
    status, x, _, _ = QPWorkspace().solve(H, g, C, d, 0)
    assert status == STATUS_SOLVED
    ref = minimize(
        lambda y: 0.5 * y @ H @ y + g @ y, np.zeros(4), jac=lambda y: H @ y + g,
        constraints=[{"type": "ineq", "fun": lambda y: C @ y - d, "jac": lambda y: C}],
        method="SLSQP", options={"ftol": 1e-14, "maxiter": 500},
    )  # fmt: skip
    np.testing.assert_allclose(x, ref.x, atol=1e-6)


def test_infeasible_and_not_convex_are_reported():
    ws = QPWorkspace()
    # x >= 1 and -x >= 0 (x <= 0): no point satisfies both.
    status, x, _, _ = ws.solve(np.eye(1), np.zeros(1), np.array([[1.0], [-1.0]]),
                               np.array([1.0, 0.0]), 0)  # fmt: skip
    assert status == STATUS_INFEASIBLE
    assert np.all(np.isfinite(x))
    # Inconsistent equalities x = 1 and x = 2.
    status, _, _, _ = ws.solve(np.eye(1), np.zeros(1), np.array([[1.0], [1.0]]),
                               np.array([1.0, 2.0]), 2)  # fmt: skip
    assert status == STATUS_INFEASIBLE
    status, _, _, _ = ws.solve(-np.eye(2), np.zeros(2), np.zeros((0, 2)), np.zeros(0), 0)
    assert status == STATUS_NOT_CONVEX
    qp = QP(np.eye(1), np.zeros(1), np.array([[1.0]]), np.array([-1.0]), np.zeros((0, 1)),
            np.zeros(0), np.array([0.0]), np.array([np.inf]))  # fmt: skip
    with pytest.raises(NoSolutionError, match="infeasible"):
        solve_qp(qp)


def test_unknown_solver_lists_the_choices():
    qp = QP(np.eye(1), np.zeros(1), np.zeros((0, 1)), np.zeros(0), np.zeros((0, 1)),
            np.zeros(0), np.full(1, -np.inf), np.full(1, np.inf))  # fmt: skip
    with pytest.raises(Exception, match="kinetree") as info:
        solve_qp(qp, solver="no-such-solver")
    assert "no-such-solver" in str(info.value)
    assert "kinetree" in qp_solvers()
