"""The damped least-squares solve retries a system that does not factor by its own route
with more damping, and a step that still cannot be solved is zero (never stale)."""

from __future__ import annotations

import numpy as np
import pytest

from kinetree.ik.kernel._linalg import dls_solve

NO_ROWS = np.zeros((0, 2), dtype=np.int64)
NO_COLS = np.zeros(0, dtype=np.int64)


def call(J: np.ndarray, e: np.ndarray, lam: float, fill: float = 0.0) -> np.ndarray:
    m, na = J.shape
    s = min(m, na)
    rows = np.array([(0, r) for r in range(m)], dtype=np.int64)
    dq = np.full(na, fill)
    A, G, y = np.zeros((s, s)), np.zeros((s, s)), np.zeros(s)
    dls_solve(J, e, lam, dq, A, y, rows, NO_COLS, G, True)
    return dq


@pytest.mark.parametrize("m", [3, 6, 8])  # the unrolled routes and the kept-Gram one
def test_a_singular_undamped_system_is_solved_with_more_damping(m: int) -> None:
    rng = np.random.default_rng(m)
    J = rng.standard_normal((m, 11))
    J[m - 1] = 0.0  # a zero row: J J^T is singular, its last pivot exactly 0 at lam = 0
    e = rng.standard_normal(m)
    dq = call(J, e, 0.0)
    lam = 0.0 + 1e-3
    expected = J.T @ np.linalg.solve(J @ J.T + lam * np.eye(m), e)
    assert np.allclose(dq, expected, rtol=1e-10, atol=1e-12)
    # The oracle at lam = 0 does not exist: a plain solve would have failed.
    assert np.linalg.matrix_rank(J @ J.T) == m - 1


@pytest.mark.parametrize("m", [3, 6, 8, 20])
def test_a_system_that_never_factors_gives_a_zero_step(m: int) -> None:
    rng = np.random.default_rng(m)
    J = rng.standard_normal((m, 11))
    J[0, 2] = np.nan
    dq = call(J, rng.standard_normal(m), 1e-6, fill=7.0)  # 7.0: what a stale step held
    assert np.array_equal(dq, np.zeros(11))
