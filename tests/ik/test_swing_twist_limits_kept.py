"""Swing-twist limits are everyone's limits: what IK enforces, sampling draws inside,
``within_limits`` checks, and every method keeps (or reports failure).

The oracle for a joint's swing and twist is the solver's own decomposition
(:func:`kinetree.ik.kernel.swing_twist_layout.swing_twist_angles`, one configuration at a time);
poses are checked through FK.
"""

from __future__ import annotations

import numpy as np
import pytest

import kinetree
from kinetree.ik.kernel.swing_twist_layout import swing_twist_angles
from kinetree.ik.method_table import TABLE

TOL = 1e-9


@pytest.fixture(scope="module")
def human() -> kinetree.Model:
    return kinetree.load("humanoid")


def _outside(model: kinetree.Model, q: np.ndarray) -> list[str]:
    """The ball joints of ``q`` outside their swing cone or twist range."""
    bad = []
    for group, (_, swing_max, twist_lo, twist_hi) in model.swing_twist.items():
        swing, twist = swing_twist_angles(model, q, group)
        if swing > swing_max + TOL or not twist_lo - TOL <= twist <= twist_hi + TOL:
            bad.append(group)
    return bad


def _box_sample_outside(model: kinetree.Model, group: str) -> np.ndarray:
    """A configuration within every per-axis limit whose ``group`` lies outside its
    cone or twist range (uniform draws in the per-axis box, the first that is)."""
    lo, hi = model.sampling_bounds()
    rng = np.random.default_rng(7)
    for _ in range(1000):
        q = model.neutral()
        dofs = model.group_nodes(group)[0]
        q[dofs] = lo[dofs] + (hi[dofs] - lo[dofs]) * rng.random(dofs.size)
        if _outside(model, q):
            return q
    raise AssertionError("no draw outside the cone")  # pragma: no cover


def test_random_configurations_lie_inside_the_cones(human: kinetree.Model) -> None:
    Q = human.random_configuration(300, rng=0)
    assert not [i for i, q in enumerate(Q) if _outside(human, q)]
    lo, hi = human.limits[:, 0], human.limits[:, 1]
    assert np.all((Q >= lo) & (Q <= hi))
    assert np.all(human.within_limits(Q))
    # Still spread: both hips reach well into their twist range, both ways.
    twists = np.array([swing_twist_angles(human, q, "hip_l")[1] for q in Q])
    assert twists.min() < -0.4 and twists.max() > 0.4


def test_within_limits_checks_the_cones(human: kinetree.Model) -> None:
    for group in human.swing_twist:
        q = _box_sample_outside(human, group)
        assert np.all((q >= human.limits[:, 0]) & (q <= human.limits[:, 1]))
        assert not human.within_limits(q)
        assert not human.within_limits(q[None])[0]
    # a single configuration and a batch agree, and the neutral pose is inside
    assert human.within_limits(human.neutral())


def test_ik_from_an_exact_solution_stays_there(human: kinetree.Model) -> None:
    for seed in range(12):
        q = human.random_configuration(rng=seed)
        r = human.ik(human.fk(q, "foot_l"), "foot_l", q0=q)
        assert r.success, (seed, r.message)
        assert int(r.iterations) == 0
        np.testing.assert_allclose(r.q, q, atol=1e-12)


@pytest.mark.parametrize("method", [r.name for r in TABLE if r.scipy])
def test_scipy_methods_keep_the_cones(human: kinetree.Model, method: str) -> None:
    # From a start outside the hip's cone that is already an exact solution: the start
    # may not be returned as a success.
    q_out = _box_sample_outside(human, "hip_l")
    T = human.fk(q_out, "foot_l")
    r = human.ik(T, "foot_l", q0=q_out, method=method)
    assert not _outside(human, r.q)
    assert human.within_limits(r.q)
    if r.success:
        np.testing.assert_allclose(human.fk(r.q, "foot_l"), T, atol=1e-5)
    # From the neutral pose, targets of configurations inside the cones.
    for seed in range(6):
        T = human.fk(human.random_configuration(rng=100 + seed), "foot_l")
        r = human.ik(T, "foot_l", method=method, restarts=3, seed=seed)
        assert not _outside(human, r.q), (seed, _outside(human, r.q))
        if r.success:
            e = human.fk(r.q, "foot_l") - T
            assert np.abs(e).max() < 1e-4
