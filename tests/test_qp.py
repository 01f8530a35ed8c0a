"""kinetree._qp, the one QP solver: its multipliers against the KKT conditions (bounds
included), closed forms, the equality rules, one set of status codes, and the old
import paths as aliases."""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest

from kinetree import _qp
from kinetree._qp import (
    QP_INFEASIBLE,
    QP_MAX_ITERATIONS,
    QP_NOT_CONVEX,
    QP_SOLVED,
    QPStatus,
    QPWorkspace,
    qp_iwork_size,
    qp_multipliers,
    qp_solve,
    qp_work_size,
)
from kinetree.diffik import QP, solve_qp


def _problem(seed: int):
    """A feasible random QP: rows that hold at a known point, bounds around it."""
    gen = np.random.default_rng(seed)
    n = int(gen.integers(1, 10))
    m = int(gen.integers(0, 16))
    meq = int(gen.integers(0, min(m, n) + 1))
    M = gen.normal(size=(n + 1, n))
    H = M.T @ M + 1e-3 * np.eye(n)
    g = gen.normal(size=n) * 5
    C = gen.normal(size=(m, n))
    x0 = gen.normal(size=n) * 0.5
    b = C @ x0 - np.abs(gen.normal(size=m))
    b[:meq] = C[:meq] @ x0
    lb = np.where(gen.random(n) < 0.6, x0 - gen.random(n), -np.inf)
    ub = np.where(gen.random(n) < 0.6, x0 + gen.random(n), np.inf)
    return H, g, C, b, meq, lb, ub


@pytest.mark.parametrize("seed", range(300))
def test_multipliers_meet_kkt_with_bounds(seed):
    """Stationarity H x + g = C^T lam + mu, feasibility, the multipliers' signs and
    complementary slackness, on rows and bounds alike."""
    H, g, C, b, meq, lb, ub = _problem(seed)
    status, x, lam, mu = QPWorkspace().solve(H, g, C, b, meq, lb, ub)
    assert status == QPStatus.SOLVED
    tol = 1e-9 * (1.0 + np.abs(g).max() + np.abs(H).max() * np.abs(x).max())
    np.testing.assert_allclose(H @ x + g, C.T @ lam + mu, atol=tol)
    s = C @ x - b
    assert np.all(np.abs(s[:meq]) <= tol)
    assert np.all(s[meq:] >= -tol)
    assert np.all(x >= lb - tol) and np.all(x <= ub + tol)
    assert np.all(lam[meq:] >= -tol)
    assert np.all(np.abs(lam[meq:] * s[meq:]) <= tol)
    # mu > 0 only at a lower bound, mu < 0 only at an upper bound.
    at_lo = np.abs(x - lb) <= tol
    at_hi = np.abs(x - ub) <= tol
    assert np.all((mu <= tol) | at_lo) and np.all((mu >= -tol) | at_hi)


def test_bound_multipliers_in_closed_form():
    """min 1/2 |x|^2 - t.x within [lb, ub]: x = clip(t) and mu = x - t."""
    t = np.array([2.0, -3.0, 0.5, 0.0])
    lb = np.array([-1.0, -1.0, -1.0, -np.inf])
    ub = np.array([1.0, 1.0, np.inf, 1.0])
    status, x, lam, mu = QPWorkspace().solve(np.eye(4), -t, np.zeros((0, 4)), np.zeros(0),
                                             0, lb, ub)  # fmt: skip
    assert status == QP_SOLVED and lam.shape == (0,)
    np.testing.assert_allclose(x, [1.0, -1.0, 0.5, 0.0], atol=1e-15)
    np.testing.assert_allclose(mu, [-1.0, 2.0, 0.0, 0.0], atol=1e-15)


def test_equality_multiplier_takes_the_row_sign():
    """min 1/2 |x|^2 with x0 + x1 = c: x = (c/2, c/2) and lam = c/2, either sign of c
    (the solver may add the row with its normal flipped)."""
    for c in (3.0, -3.0):
        status, x, lam, mu = QPWorkspace().solve(np.eye(2), np.zeros(2), np.ones((1, 2)),
                                                 np.array([c]), 1)  # fmt: skip
        assert status == QP_SOLVED
        np.testing.assert_allclose(x, [c / 2, c / 2], atol=1e-14)
        np.testing.assert_allclose(lam, [c / 2], atol=1e-14)
        np.testing.assert_allclose(mu, 0.0, atol=0.0)


def test_a_consistent_repeated_equality_is_skipped():
    """x0 + x1 = 1 given twice (once scaled): solved, as with one row; a contradicting
    repeat is infeasible."""
    C = np.array([[1.0, 1.0], [2.0, 2.0], [1.0, 0.0]])
    b = np.array([1.0, 2.0, -5.0])
    ws = QPWorkspace()
    status, x, lam, _ = ws.solve(np.eye(2), np.zeros(2), C, b, 2)
    assert status == QP_SOLVED
    np.testing.assert_allclose(x, [0.5, 0.5], atol=1e-14)
    np.testing.assert_allclose(C.T @ lam, [0.5, 0.5], atol=1e-14)  # H x + g = C^T lam
    status, *_ = ws.solve(np.eye(2), np.zeros(2), C, np.array([1.0, 2.5, -5.0]), 2)
    assert status == QP_INFEASIBLE


def test_solve_qp_with_equalities_matches_the_kkt_system():
    """diffik's solve_qp with A dq = b and no active inequality: the linear KKT system."""
    gen = np.random.default_rng(7)
    M = gen.normal(size=(6, 5))
    H = M.T @ M + np.eye(5)
    c = gen.normal(size=5)
    A = gen.normal(size=(2, 5))
    b = gen.normal(size=2)
    K = np.block([[H, A.T], [A, np.zeros((2, 2))]])
    want = np.linalg.solve(K, np.r_[-c, b])[:5]
    big = np.full(5, 1e3)
    qp = QP(H, c, np.zeros((0, 5)), np.zeros(0), A, b, -big, big)
    np.testing.assert_allclose(solve_qp(qp), want, atol=1e-12)


def test_failures_leave_finite_x_and_zero_multipliers():
    ws = QPWorkspace()
    status, x, lam, mu = ws.solve(np.eye(1), np.zeros(1), np.array([[1.0], [-1.0]]),
                                  np.array([1.0, 0.0]), 0)  # fmt: skip
    assert status == QPStatus.INFEASIBLE
    assert np.all(np.isfinite(x)) and not lam.any() and not mu.any()
    status, x, lam, mu = ws.solve(np.diag([1.0, np.nan]), np.zeros(2), np.zeros((0, 2)),
                                  np.zeros(0))  # fmt: skip
    assert status == QPStatus.NOT_CONVEX
    assert not x.any() and not mu.any()


def test_a_workspace_serves_every_size():
    """Scratch kept from a larger problem gives the same answer as fresh scratch."""
    ws = QPWorkspace()
    for seed in (5, 1, 9, 2):
        H, g, C, b, meq, lb, ub = _problem(seed)
        got = ws.solve(H, g, C, b, meq, lb, ub)
        want = QPWorkspace().solve(H, g, C, b, meq, lb, ub)
        assert got[0] == want[0]
        for a, w in zip(got[1:], want[1:]):
            np.testing.assert_array_equal(a, w)


def test_the_kernel_and_its_multipliers_from_plain_arrays():
    H, g, C, b, meq, lb, ub = _problem(11)
    n, m = g.size, b.size
    work = np.empty(qp_work_size(n, m))
    iwork = np.empty(qp_iwork_size(n, m), np.int64)
    x = np.empty(n)
    assert qp_solve(H, g, C, b, meq, lb, ub, x, work, iwork) == QP_SOLVED
    lam, mu = np.empty(m), np.empty(n)
    qp_multipliers(n, m, work, iwork, lam, mu)
    _, x2, lam2, mu2 = QPWorkspace().solve(H, g, C, b, meq, lb, ub)
    np.testing.assert_array_equal(x, x2)
    np.testing.assert_array_equal(lam, lam2)
    np.testing.assert_array_equal(mu, mu2)


def test_one_set_of_status_codes():
    """Every old name of a status is the code of the same meaning (the two solvers had
    2 and 3 swapped)."""
    assert [QP_SOLVED, QP_INFEASIBLE, QP_NOT_CONVEX, QP_MAX_ITERATIONS] == [
        QPStatus.SOLVED, QPStatus.INFEASIBLE, QPStatus.NOT_CONVEX, QPStatus.MAX_ITERATIONS,
    ]  # fmt: skip
    assert len(set(QPStatus)) == 4
    old = importlib.import_module("kinetree.diffik._qp")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        ik_qp = importlib.import_module("kinetree.ik.qp")
        assert ik_qp.QP_OK == old.STATUS_SOLVED == QPStatus.SOLVED
        assert ik_qp.QP_INFEASIBLE == old.STATUS_INFEASIBLE == QPStatus.INFEASIBLE
        assert ik_qp.QP_NOT_CONVEX == old.STATUS_NOT_CONVEX == QPStatus.NOT_CONVEX
        assert ik_qp.QP_MAX_ITER == old.STATUS_MAX_ITERATIONS == QPStatus.MAX_ITERATIONS


def test_one_solver_behind_every_path():
    """diffik's workspace and the old public module reach the same compiled solver."""
    assert importlib.import_module("kinetree.diffik._qp").QPWorkspace is QPWorkspace
    with pytest.warns(DeprecationWarning, match=r"kinetree\._qp\.qp_solve"):
        from kinetree.ik.qp import qp_solve as old_solve
    assert old_solve is qp_solve


@pytest.mark.parametrize(
    ("old", "new"),
    [("QP_OK", "QP_SOLVED"), ("QP_MAX_ITER", "QP_MAX_ITERATIONS"),
     ("qp_work_size", "qp_work_size"), ("qp_iwork_size", "qp_iwork_size")],
)  # fmt: skip
def test_old_public_names_warn_and_name_the_new_place(old, new):
    ik_qp = importlib.import_module("kinetree.ik.qp")
    with pytest.warns(DeprecationWarning, match=rf"kinetree\._qp\.{new}\b"):
        value = getattr(ik_qp, old)
    assert value is getattr(_qp, new)
    assert old in dir(ik_qp)
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        ik_qp.no_such_name  # noqa: B018
