"""Several targets: each Gram row runs over its target's columns only, to the same bit."""

from __future__ import annotations

import numpy as np
import pytest

import kinetree
from kinetree import Pose
from kinetree.ik import problem
from kinetree.ik._linalg import gram_rows
from kinetree.ik.layout import target_columns_block
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
