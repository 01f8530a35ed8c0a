"""Shared fixtures and helpers for the kinetree test suite.

Every random draw is seeded: the ``rng`` fixture is a fixed-seed Generator and
hypothesis runs derandomized (the "kinetree" profile below), so a failure
repeats on every machine. Paths come from ``Path(__file__)``, so the suite runs
from any working directory.

Nothing here imports kinetree at module level: :func:`pytest_configure` must
run before numba is first imported.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from scipy.spatial.transform import Rotation

if TYPE_CHECKING:
    import kinetree

TESTS_DIR = Path(__file__).resolve().parent

settings.register_profile(
    "kinetree",
    derandomize=True,  # fixed examples: the same cases on every run and machine
    database=None,  # no .hypothesis/ folder in whatever directory pytest runs from
    deadline=None,  # the first call of a compiled kernel may take a while
    # The only function-scoped fixture used under @given is stateless (fd_jacobian).
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.load_profile("kinetree")


def pytest_configure(config: pytest.Config) -> None:
    # Under pytest-xdist each worker is already one process per core; numba's own
    # worker threads on top oversubscribe the cores, and the compiled kernels'
    # parallel regions then wait on each other (2-3x slower on a 2-core machine).
    # NUMBA_NUM_THREADS is read when numba is imported, which happens after this.
    if "PYTEST_XDIST_WORKER" in os.environ:
        os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    # A cold kernel compiles in the test process, as before the tiered start: a test that
    # counts compiled signatures must not see its first solve run interpreted
    # (tests/test_startup.py turns tiering on where it tests it).
    os.environ.setdefault("KINETREE_TIERED", "0")


@pytest.fixture
def rng() -> np.random.Generator:
    """A fresh fixed-seed generator for each test."""
    return np.random.default_rng(20240607)


def rotation_log(R: np.ndarray) -> np.ndarray:
    """Axis-angle of rotation matrices via scipy: an oracle independent of kinetree."""
    R = np.asarray(R)
    return Rotation.from_matrix(R.reshape(-1, 3, 3)).as_rotvec().reshape(*R.shape[:-2], 3)


def numeric_jacobian(
    model: kinetree.Model,
    q: np.ndarray,
    frame: str | None = None,
    point: np.ndarray | None = None,
    h: float = 1e-6,
) -> np.ndarray:
    """Central-difference geometric Jacobian ``(6, dof)`` of FK, computed in one batch.

    Linear rows: ``(p(q + h e_i) - p(q - h e_i)) / 2h`` of the frame origin (or of
    ``point``, given in frame coordinates). Angular rows:
    ``log(R(q + h e_i) R(q - h e_i)^T) / 2h`` (scipy's log, not kinetree's).
    """
    q = np.asarray(q, dtype=float)
    dof = q.shape[0]
    E = np.eye(dof) * h
    Q = np.concatenate([q + E, q - E])  # (2 dof, dof)
    T = model.fk(Q, frame)
    offset = np.zeros(3) if point is None else np.asarray(point, dtype=float)
    p = np.einsum("nij,j->ni", T[:, :3, :3], offset) + T[:, :3, 3]
    lin = (p[:dof] - p[dof:]) / (2 * h)
    dR = np.einsum("nij,nkj->nik", T[:dof, :3, :3], T[dof:, :3, :3])
    ang = rotation_log(dR) / (2 * h)
    return np.concatenate([lin.T, ang.T], axis=0)


@pytest.fixture
def fd_jacobian() -> Callable[..., np.ndarray]:
    """The central-difference Jacobian helper (see :func:`numeric_jacobian`)."""
    return numeric_jacobian


@pytest.fixture
def urdf_dir(tmp_path: Path) -> Path:
    """A scratch folder for URDF files written by a test."""
    d = tmp_path / "urdf"
    d.mkdir()
    return d
