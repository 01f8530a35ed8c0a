"""Regressions from a review of the IK core (each test failed before its fix)."""

from __future__ import annotations

import numpy as np
import pytest

import kinetree
from kinetree import Direction, InvalidValueError, ModelBuilder, Position
from kinetree.spatial import translation


def _rail(limits: tuple[float, float] = (-1.0, 1.0), arm: float = 0.0) -> kinetree.Model:
    b = ModelBuilder("rail", root="base")
    b.add_joint("slide", "base", "cart", type="prismatic", axis="x", limits=limits)
    if arm:
        b.add_joint("hinge", "cart", "arm", axis="z", limits=(-3.0, 3.0))
        b.add_frame("tool", "arm", origin=translation([arm, 0, 0]))
    else:
        b.add_frame("tool", "cart")
    return b.build()


def test_prismatic_first_joint_reach_is_measured_from_its_parent() -> None:
    m = _rail()
    r = m.ik(Position(np.array([0.9, 0.0, 0.0])), q0=np.array([-1.0]), method="dls")
    assert r.success and r.reachable
    assert r.q[0] == pytest.approx(0.9, abs=1e-6)


def test_masked_position_is_not_called_unreachable() -> None:
    m = kinetree.load("planar2r")
    r = m.ik(Position([0.5, 50.0, 0.0], mask=[True, False, False]), q0=[0.3, 0.4])
    assert r.success and r.reachable
    assert m.fk(r.q)[0, 3] == pytest.approx(0.5, abs=1e-6)


def test_no_limits_means_unbounded_prismatic_reach() -> None:
    m = _rail(limits=(0.0, 1.0), arm=0.5)
    r = m.ik(Position([3.0, 0.0, 0.0]), respect_limits=False)
    assert r.success and r.reachable
    assert r.q[0] == pytest.approx(2.5, abs=1e-6)


def test_partly_active_ball_joint_keeps_its_swing_twist_limits() -> None:
    m = kinetree.load("humanoid")
    q0 = m.neutral()
    k = m.joint_names.index("shoulder_r_z")
    q = q0.copy()
    q[k] = m.limits[k, 1]  # beyond the 80 degree twist limit
    r = m.ik(Position(m.fk(q, "hand_r")[:3, 3]), "hand_r", active=["shoulder_r_z"], q0=q0)
    _, twist = m.swing_twist_angles(r.q, "shoulder_r")
    assert abs(twist) <= np.radians(80) + 1e-9
    others = np.ones(m.dof, dtype=bool)
    others[k] = False
    np.testing.assert_array_equal(r.q[others], q0[others])


def test_a_generator_draws_a_new_seed_each_call() -> None:
    m = kinetree.load("panda")
    T = m.fk(m.random_configuration(rng=1))
    g = np.random.default_rng(0)
    qs = [m.ik(T, rng=g, q0=np.zeros(7), max_iter=1, restarts=3, respect_limits=False).q
          for _ in range(3)]  # fmt: skip
    assert not np.array_equal(qs[0], qs[1]) or not np.array_equal(qs[1], qs[2])


@pytest.mark.parametrize("bad", [1.0, True])
def test_option_types_are_checked_even_after_a_cached_solve(bad: object) -> None:
    m = kinetree.load("panda")
    T = m.fk(m.neutral())
    m.ik(T, seed=1)
    with pytest.raises(InvalidValueError, match="seed"):
        m.ik(T, seed=bad)
    m.ik(Position(T[:3, 3]), max_iter=5)
    with pytest.raises(InvalidValueError, match="max_iter"):
        m.ik(Position(T[:3, 3]), max_iter=5.0)


def test_direction_with_zero_weight_does_not_block_success() -> None:
    m = kinetree.load("panda")
    p = m.fk(m.neutral())[:3, 3] + [0.02, 0.0, 0.0]
    r = m.ik({"flange": Position(p), "link7": Direction([0, 1, 0], weight=0.0)})
    assert r.success


def test_rest_gain_is_validated_without_rest() -> None:
    m = kinetree.load("panda")
    with pytest.raises(InvalidValueError, match="rest_gain"):
        m.ik(m.fk(m.neutral()), rest_gain=-1.0)
