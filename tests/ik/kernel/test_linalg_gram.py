"""Several targets: each Gram row runs over its target's columns only, to the same bit."""

from __future__ import annotations

import numpy as np
import pytest

import kinetree
from kinetree import Pose
from kinetree.ik import problem
from kinetree.ik.kernel._linalg import cholesky_solve, dls_solve, downdate_gram, gram_rows
from kinetree.ik.kernel.layout import target_columns_block
from kinetree.kinematics import jacobian

EFFECTORS = ("hand_r", "hand_l", "foot_r", "foot_l")


def body() -> kinetree.Model:
    return kinetree.load("humanoid").with_floating_base()


def columns(m: kinetree.Model) -> np.ndarray | None:
    """The target-columns block of a whole-body problem on ``EFFECTORS`` (all joints
    active, every row of each pose target)."""
    act = np.arange(m.nv)
    nodes = np.array([m.frame_index(f) for f in EFFECTORS])
    rows = np.array([(t, c) for t in range(len(EFFECTORS)) for c in range(6)])
    return problem._target_columns(m, act, nodes, rows)


def test_target_columns_are_the_columns_that_move_each_target() -> None:
    m = body()
    block = columns(m)
    assert block is not None
    for q in m.random_configuration(5, rng=3):
        for t, f in enumerate(EFFECTORS):
            cols = set(block[block[t] : block[t + 1]].tolist())
            J = jacobian(m, q, f)
            assert np.any(J[:, sorted(cols)], axis=0).all()  # each listed column moves it
            others = [k for k in range(m.nv) if k not in cols]
            assert not np.any(J[:, others])  # and no other column does
    # a robot with one target keeps the dense product
    nodes = np.array([m.frame_index("hand_r")])
    assert problem._target_columns(m, np.arange(m.nv), nodes, np.zeros((6, 2), int)) is None


def test_gram_rows_with_target_columns_equals_the_dense_product_bitwise() -> None:
    rng = np.random.default_rng(0)
    cols = [np.array([0, 1, 4]), np.array([0, 2, 3, 5])]
    J = np.zeros((5, 6))
    rows = np.array([[0, 0], [0, 1], [1, 0], [1, 1], [1, 2]])
    for r, (t, _) in enumerate(rows):
        J[r, cols[t]] = rng.standard_normal(cols[t].size)
    A, B = np.zeros((5, 5)), np.zeros((5, 5))
    gram_rows(J, A, rows, target_columns_block(cols))
    gram_rows(J, B, rows, np.zeros(0, dtype=np.int64))
    assert np.array_equal(np.tril(A), np.tril(B))
    assert np.allclose(np.tril(A), np.tril(J @ J.T))


@pytest.mark.parametrize("options", [{}, {"rest": "neutral"}, {"method": "pinv"}], ids=str)
def test_whole_body_solves_are_bit_identical_with_and_without_target_columns(
    options: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    m_sparse = body()
    qs = m_sparse.random_configuration(6, rng=5)
    targets = [{f: Pose(m_sparse.fk(q, f)) for f in EFFECTORS} for q in qs]
    a = [m_sparse.ik(t, time_budget=None, restarts=1, **options).q for t in targets]
    assert columns(m_sparse) is not None
    monkeypatch.setattr(problem, "SPARSE_SHARE", 0.0)
    m_dense = body()  # a new model: no template remembered
    assert columns(m_dense) is None
    b = [m_dense.ik(t, time_budget=None, restarts=1, **options).q for t in targets]
    assert np.array_equal(np.array(a), np.array(b))


def whole_body_system(seed: int, widths: tuple[int, ...] = (6, 6, 6, 6)) -> tuple[np.ndarray, ...]:
    """A stacked Jacobian of four targets that share a floating base's six columns, with
    rows of each target only on its own limb's columns, and its rows and column lists."""
    rng = np.random.default_rng(seed)
    limbs = [np.arange(6 + 8 * t, 6 + 8 * t + 7) for t in range(len(widths))]
    cols = [np.r_[0:6, limb] for limb in limbs]
    rows = np.array([(t, c) for t, w in enumerate(widths) for c in range(w)])
    J = np.zeros((rows.shape[0], 6 + 8 * len(widths)))
    for r, (t, _) in enumerate(rows):
        J[r, cols[t]] = rng.standard_normal(cols[t].size)
    return J, rows, cols


def test_gram_rows_in_runs_of_four_equals_the_row_by_row_product_bitwise() -> None:
    # Runs of 6, 5, 3 and 6 rows: the four-row blocks, their remainders and the diagonal.
    J, rows, cols = whole_body_system(1, (6, 5, 3, 6))
    m = J.shape[0]
    A, B = np.zeros((m, m)), np.zeros((m, m))
    gram_rows(J, A, rows, target_columns_block(cols))
    gram_rows(J, B, rows, np.zeros(0, dtype=np.int64))
    ref = np.zeros((m, m))
    for i in range(m):
        for j in range(i + 1):
            s = 0.0
            for k in range(J.shape[1]):
                s += J[i, k] * J[j, k]
            ref[i, j] = s
    assert np.array_equal(np.tril(A), ref)
    assert np.array_equal(np.tril(B), ref)


def test_pair_columns_are_the_intersections() -> None:
    cols = [np.array([0, 1, 4]), np.array([0, 2, 3, 4, 5]), np.array([2, 5])]
    block = target_columns_block(cols)
    pairs = block[len(cols)]
    for t in range(3):
        for u in range(t + 1):
            p = pairs + t * (t + 1) // 2 + u
            assert block[block[p] : block[p + 1]].tolist() == sorted(
                set(cols[t].tolist()) & set(cols[u].tolist())
            )


@pytest.mark.parametrize("n", [1, 3, 5, 8, 24, 38])
def test_cholesky_solve_solves_the_system(n: int) -> None:
    rng = np.random.default_rng(n)
    M = rng.standard_normal((n, n + 3))
    A = M @ M.T + 1e-3 * np.eye(n)
    b = rng.standard_normal(n)
    x = np.zeros(n)
    F = A.copy()
    assert cholesky_solve(F, n, b, x)
    assert np.allclose(A @ x, b, rtol=0, atol=1e-9 * np.abs(A).max() * np.abs(x).max())
    assert not cholesky_solve(-A, n, b, x)  # not positive definite: says so


def test_a_gram_matrix_downdated_by_a_column_is_that_of_the_zeroed_column() -> None:
    J, rows, cols = whole_body_system(2)
    m = J.shape[0]
    G = np.zeros((m, m))
    gram_rows(J, G, rows, target_columns_block(cols))
    for kk in (0, 3, 9, 30):  # base columns (every row) and limb columns (one target)
        downdate_gram(J, G, kk)
        J[:, kk] = 0.0
    assert np.allclose(np.tril(G), np.tril(J @ J.T), rtol=0, atol=1e-12)


def test_a_resolve_from_the_kept_gram_matrix_equals_a_fresh_one() -> None:
    J, rows, cols = whole_body_system(3)
    m, na = J.shape
    tc = target_columns_block(cols)
    e = np.random.default_rng(4).standard_normal(m)
    A, G, y = np.zeros((m, m)), np.zeros((m, m)), np.zeros(m)
    dq, fresh = np.zeros(na), np.zeros(na)
    dls_solve(J, e, 1e-3, dq, A, y, rows, tc, G, True)
    downdate_gram(J, G, 9)
    J[:, 9] = 0.0
    dls_solve(J, e, 1e-3, dq, A, y, rows, tc, G, False)
    dls_solve(J, e, 1e-3, fresh, A, y, rows, tc, np.zeros((m, m)), True)
    assert dq[9] == 0.0
    assert np.allclose(dq, fresh, rtol=1e-12, atol=1e-12)
    assert np.allclose(dq, J.T @ np.linalg.solve(J @ J.T + 1e-3 * np.eye(m), e), atol=1e-10)
