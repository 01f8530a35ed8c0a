"""Whole-body IK with a free base on real humanoid URDFs (example-robot-data).

Both hands and both feet as 6D targets, the base free (``floating_base=True``): the
targets are FK of random whole-body configurations (random base pose, random joint
values within the limits), checked by FK at the returned ``q``. Runs in
``make test-interop``; skipped when example-robot-data is absent.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import kinetree
from kinetree.model import Model
from kinetree.spatial import matrix_to_quaternion, quat_exp, quat_log
from robot_data import example_robot_data

pytestmark = pytest.mark.skipif(
    not os.environ.get("KINETREE_INTEROP"), reason="interop suite: make test-interop"
)

ROBOTS = {
    "g1": "g1_description/urdf/g1_29dof_rev_1_0.urdf",
    "talos": "talos_data/robots/talos_reduced.urdf",
}


def load(name: str) -> Model:
    rel = ROBOTS[name]
    path = example_robot_data() / rel
    if not path.exists():
        pytest.skip(f"{path} is not installed")
    return kinetree.load(path, floating_base=True)


def rot_error(A: np.ndarray, B: np.ndarray) -> float:
    return float(np.linalg.norm(quat_log(matrix_to_quaternion(A[:3, :3].T @ B[:3, :3]))))


@pytest.mark.parametrize("name", sorted(ROBOTS))
def test_whole_body_ik_reaches_hands_and_feet(name: str) -> None:
    model = load(name)
    ee = model.end_effectors
    assert len(ee) == 4, ee  # both hands and both feet
    rng = np.random.default_rng(0)
    solved = 0
    for _ in range(20):
        qt = model.random_configuration(rng=rng)
        qt[model.q_slice("root_joint")] = np.concatenate(
            [rng.uniform(-0.3, 0.3, 3), quat_exp(rng.uniform(-0.4, 0.4, 3))]
        )
        targets = {f: model.fk(qt, f) for f in ee}
        r = model.ik(targets, tol=(1e-6, 1e-6), time_budget=1.0)
        assert np.all(np.isfinite(r.q))
        if r.success:
            for f, T in targets.items():
                Tq = model.fk(r.q, f)
                assert np.linalg.norm(Tq[:3, 3] - T[:3, 3]) <= 1e-6
                assert rot_error(Tq, T) <= 1e-6
            assert model.within_limits(r.q, tol=1e-9)
            solved += 1
    assert solved >= 19, f"{name}: {solved}/20"


def test_free_base_jacobian_equals_finite_differences() -> None:
    model = load("g1")
    rng = np.random.default_rng(1)
    q = model.random_configuration(rng=rng)
    for f in model.end_effectors:
        T0 = model.fk(q, f)
        J = model.jacobian(q, f)
        eps = 1e-6
        for k in range(model.nv):
            dv = np.zeros(model.nv)
            dv[k] = eps
            Tp, Tm = model.fk(model.integrate(q, dv), f), model.fk(model.integrate(q, -dv), f)
            lin = (Tp[:3, 3] - Tm[:3, 3]) / (2 * eps)
            dR = (Tp[:3, :3] - Tm[:3, :3]) / (2 * eps) @ T0[:3, :3].T
            np.testing.assert_allclose(J[:3, k], lin, atol=1e-7)
            np.testing.assert_allclose(J[3:, k], [dR[2, 1], dR[0, 2], dR[1, 0]], atol=1e-7)
