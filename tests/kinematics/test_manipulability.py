"""One manipulability, one convention: the product of the Jacobian's singular values.

Oracles: numpy's determinant (``sqrt(det(J J^T))`` with at least as many DoF as rows,
``sqrt(det(J^T J))`` with fewer) and SVD on random Jacobians of both shapes; central
finite differences for the gradient; every public entry point gives the same number.
"""

from __future__ import annotations

import numpy as np
import pytest

import kinetree
from kinetree import ModelBuilder, workspace
from kinetree.diffik import mass as diffik_mass
from kinetree.kinematics import jacobian_manipulability, manipulability, manipulability_gradient
from kinetree.spatial import translation


@pytest.mark.parametrize("shape", [(6, 7), (6, 6), (6, 2), (3, 2), (3, 5), (6, 4)])
def test_product_of_singular_values_is_the_determinant_form(shape: tuple[int, int]) -> None:
    m, n = shape
    J = np.random.default_rng(m * 10 + n).normal(size=(20, m, n))
    gram = J @ J.transpose(0, 2, 1) if n >= m else J.transpose(0, 2, 1) @ J
    want = np.sqrt(np.linalg.det(gram))
    np.testing.assert_allclose(jacobian_manipulability(J), want, rtol=1e-9)
    np.testing.assert_allclose(
        jacobian_manipulability(J), np.prod(np.linalg.svd(J, compute_uv=False), -1), rtol=1e-12
    )
    assert np.all(want > 0)  # never the zero sqrt(det(J J^T)) would give for n < m


def _arm(n_joints: int) -> kinetree.Model:
    """A spatial arm of ``n_joints`` revolute joints (z, y, y, x, ...), fewer than 6."""
    b = ModelBuilder(f"arm{n_joints}", root="base")
    axes = ["z", "y", "y", "x", "y"]
    parent = "base"
    for k in range(n_joints):
        offset = [0.3, 0.05 * k, 0.0] if k else [0.0, 0.0, 0.2]
        b.add_joint(f"j{k}", parent, f"l{k}", axis=axes[k], limits=(-3, 3),
                    origin=translation(offset))  # fmt: skip
        parent = f"l{k}"
    b.add_frame("tip", parent, translation([0.25, 0.02, 0.03]))
    return b.build()


@pytest.mark.parametrize(("n_joints", "rows"), [(2, "position"), (2, "all"), (4, "all"),
                                                (3, "all"), (5, "orientation")])  # fmt: skip
def test_every_entry_point_agrees_with_fewer_dof_than_rows(n_joints: int, rows: str) -> None:
    model = _arm(n_joints)
    sl = {"all": slice(0, 6), "position": slice(0, 3), "orientation": slice(3, 6)}[rows]
    Q = model.random_configuration(6, rng=n_joints)
    J = model.jacobian(Q, "tip")[:, sl]
    m, n = J.shape[-2:]
    gram = J @ J.transpose(0, 2, 1) if n >= m else J.transpose(0, 2, 1) @ J
    want = np.sqrt(np.maximum(np.linalg.det(gram), 0.0))
    np.testing.assert_allclose(model.manipulability(Q, "tip", rows), want, rtol=1e-9, atol=1e-14)
    np.testing.assert_allclose(manipulability(model, Q, "tip", rows), want, rtol=1e-9, atol=1e-14)
    np.testing.assert_allclose(diffik_mass.manipulability(model, Q, "tip", rows), want,
                               rtol=1e-9, atol=1e-14)  # fmt: skip
    np.testing.assert_allclose(workspace.manipulability(J), want, rtol=1e-9, atol=1e-14)
    for q, w in zip(Q, want):
        assert manipulability_gradient(model, q, "tip", rows)[0] == pytest.approx(w, rel=1e-9)


@pytest.mark.parametrize(("n_joints", "rows"), [(2, "all"), (3, "all"), (2, "position"),
                                                (4, "all"), (5, "all")])  # fmt: skip
def test_gradient_matches_finite_differences_for_both_shapes(n_joints: int, rows: str) -> None:
    model = _arm(n_joints)
    h = 1e-6
    for q in model.random_configuration(4, rng=100 + n_joints):
        w, g = manipulability_gradient(model, q, "tip", rows)
        fd = [(model.manipulability(q + h * e, "tip", rows)
               - model.manipulability(q - h * e, "tip", rows)) / (2 * h)
              for e in np.eye(model.nv)]  # fmt: skip
        assert w > 0
        np.testing.assert_allclose(g, fd, atol=1e-7 * (1 + np.abs(g).max()))
        assert np.abs(g).max() > 1e-6  # a real check: the measure moves with q


def test_a_straight_planar_arm_is_singular_with_fewer_dof_than_rows() -> None:
    b = ModelBuilder("planar", root="base")
    b.add_joint("a", "base", "l1", axis="z")
    b.add_joint("b", "l1", "l2", axis="z", origin=translation([0.4, 0, 0]))
    b.add_frame("tip", "l2", translation([0.3, 0, 0]))
    planar = b.build()
    # 2 DoF, 3 position rows: sigma_1 sigma_2 = l1 l2 |sin(b)|, 0 when the elbow is straight.
    for elbow in (0.0, 0.7, 2.0):
        want = 0.4 * 0.3 * abs(np.sin(elbow))
        assert planar.manipulability([0.3, elbow], "tip", "position") == pytest.approx(
            want, abs=1e-14
        )
