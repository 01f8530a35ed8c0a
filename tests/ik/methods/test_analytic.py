"""Closed-form IK (kinetree.ik.methods.analytic): every branch satisfies FK, none is missed."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kinetree.models as M
from kinetree.errors import InvalidValueError, NotRigidError, ShapeError, UnsupportedError
from kinetree.ik.methods.analytic import (
    ik_planar_2r,
    ik_ur,
    ik_zxx_arm,
    solve_all,
    supports,
    wrap_angle,
)
from kinetree.spatial import rot_x, rot_z

PI = math.pi
UR_KEYS = ("d1", "a2", "a3", "d4", "d5", "d6")
UR_FACTORIES = [M.ur3, M.ur5, M.ur10]
SEED003_ARMS = [
    lambda: M.zxx_arm(),
    lambda: M.zxx_arm(0.3, 0.1, 0.4, 0.25, base=(0.1, -0.2, 0.05)),
]


def ur_params(model):
    return tuple(model.metadata["ur_dh"][k] for k in UR_KEYS)


def seed_params(model):
    s = model.metadata["zxx_arm"]
    return (*s["L"], s["base"])


def contains(solutions: np.ndarray, q: np.ndarray, tol: float = 1e-8) -> bool:
    """Whether ``q`` is among ``solutions`` modulo 2 pi."""
    if solutions.shape[0] == 0:
        return False
    return bool(np.any(np.max(np.abs(wrap_angle(solutions - q)), axis=1) <= tol))


def position_error(model, Q: np.ndarray, p: np.ndarray) -> float:
    return float(np.max(np.abs(model.fk(Q)[:, :3, 3] - p), initial=0.0))


def pose_error(model, Q: np.ndarray, T: np.ndarray) -> float:
    return float(np.max(np.abs(model.fk(Q)[:, :3, :] - T[:3, :]), initial=0.0))


def assert_clean(Q: np.ndarray, dof: int) -> None:
    assert Q.ndim == 2 and Q.shape[1] == dof
    assert np.all(np.isfinite(Q))


# --- planar 2R -----------------------------------------------------------------------


@pytest.mark.parametrize("lengths", [(1.0, 0.8), (0.5, 1.3), (0.7, 0.7)])
def test_planar_2r_random_configurations(lengths):
    model = M.planar_2r(*lengths)
    rng = np.random.default_rng(0)
    Q = model.random_configuration(100, rng)
    for q, T in zip(Q, model.fk(Q)):
        p = T[:3, 3]
        raw = ik_planar_2r(*lengths, p[0], p[1])
        assert_clean(raw, 2)
        if abs(math.sin(q[1])) > 1e-3:  # away from the workspace boundary
            assert raw.shape[0] == 2
            assert abs(raw[0, 1] + raw[1, 1]) < 1e-12  # elbow branches t2 = +-acos
        assert position_error(model, raw, p) < 1e-10
        assert contains(raw, q)
        sol = solve_all(model, T)
        assert_clean(sol, 2)
        assert position_error(model, sol, p) < 1e-10
        assert contains(sol, q)
        assert np.all(model.within_limits(sol))


@settings(derandomize=True, max_examples=300, deadline=None)
@given(
    l1=st.floats(0.05, 3.0),
    l2=st.floats(0.05, 3.0),
    t1=st.floats(-PI, PI),
    t2=st.one_of(
        st.floats(-PI, PI),
        st.floats(-1e-7, 1e-7),
        st.floats(PI - 1e-7, PI),
        st.sampled_from([0.0, PI, -PI, 1e-15]),
    ),
)
def test_planar_2r_property(l1, l2, t1, t2):
    x = l1 * math.cos(t1) + l2 * math.cos(t1 + t2)
    y = l1 * math.sin(t1) + l2 * math.sin(t1 + t2)
    sol = ik_planar_2r(l1, l2, x, y)
    assert_clean(sol, 2)
    assert 1 <= sol.shape[0] <= 2
    tip = np.stack(
        [
            l1 * np.cos(sol[:, 0]) + l2 * np.cos(sol[:, 0] + sol[:, 1]),
            l1 * np.sin(sol[:, 0]) + l2 * np.sin(sol[:, 0] + sol[:, 1]),
        ],
        axis=1,
    )
    assert np.max(np.abs(tip - [x, y])) < 1e-10 * max(1.0, l1 + l2)
    assert np.all((sol > -PI) & (sol <= PI))
    if abs(math.sin(t2)) > 1e-4 and math.hypot(x, y) > 1e-6:
        assert sol.shape[0] == 2
        assert contains(sol, np.array([t1, t2]), tol=1e-6)


def test_planar_2r_boundary_and_unreachable():
    # stretched and folded arms: one solution (the two branches coincide), no NaN
    for q in ([0.4, 0.0], [-2.0, 0.0], [1.1, PI]):
        x = math.cos(q[0]) + 0.8 * math.cos(q[0] + q[1])
        y = math.sin(q[0]) + 0.8 * math.sin(q[0] + q[1])
        sol = ik_planar_2r(1.0, 0.8, x, y)
        assert_clean(sol, 2)
        assert 1 <= sol.shape[0] <= 2
        assert np.allclose(sol, sol[0], atol=1e-6)
        assert contains(sol, np.array(q), tol=1e-6)
    # beyond reach, inside the inner hole (|l1 - l2| = 0.2), just past the rim
    for x, y in ((2.0, 0.0), (0.0, 0.1), (1.8 + 1e-6, 0.0), (1e3, -1e3)):
        sol = ik_planar_2r(1.0, 0.8, x, y)
        assert sol.shape == (0, 2)
        assert solve_all(M.planar_2r(), [x, y, 0.0]).shape == (0, 2)
    # equal links, target at the shoulder: t2 = pi, t1 free (one representative)
    sol = ik_planar_2r(1.0, 1.0, 0.0, 0.0)
    assert_clean(sol, 2)
    assert sol.shape == (1, 2) and abs(sol[0, 1] - PI) < 1e-12


def test_planar_2r_target_forms():
    model = M.planar_2r()
    q = np.array([0.3, -1.2])
    T = model.fk(q)
    a = solve_all(model, T)
    assert np.array_equal(a, solve_all(model, T[:3, 3]))
    assert np.array_equal(a, solve_all(model, T[:2, 3]))
    assert np.array_equal(a, solve_all(model, [*T[:2, 3], 5.0]))  # z is ignored
    assert np.array_equal(a, solve_all(model, T, frame="tip"))


# --- z-x-x arm (the seed documents' 3-DoF arm) ------------------------------------------


@pytest.mark.parametrize("make", SEED003_ARMS)
def test_zxx_arm_random_configurations(make):
    model = make()
    L1, L2, L3, L4, base = seed_params(model)
    rng = np.random.default_rng(3)
    Q = model.random_configuration(150, rng)
    for q, T in zip(Q, model.fk(Q)):
        p = T[:3, 3]
        raw = ik_zxx_arm(L1, L2, L3, L4, base, p)
        assert_clean(raw, 3)
        rho = L3 * math.cos(q[1]) + L4 * math.cos(q[1] + q[2])
        if abs(math.sin(q[2])) > 1e-3 and abs(rho) > 1e-3:  # generic target
            assert raw.shape[0] == 4
        assert position_error(model, raw, p) < 1e-10
        assert contains(raw, q)
        sol = solve_all(model, p)
        assert_clean(sol, 3)
        assert position_error(model, sol, p) < 1e-10
        assert contains(sol, q)  # random_configuration respects 0 <= t3 <= pi
        assert np.all(model.within_limits(sol))
        in_limits = raw[(raw[:, 2] >= -1e-10) & (raw[:, 2] <= PI)]
        assert sol.shape[0] == in_limits.shape[0]


def test_zxx_arm_unfiltered_has_negative_elbow_branches():
    model = M.zxx_arm(0.3, 0.1, 0.4, 0.25, base=(0.1, -0.2, 0.05))
    q = np.array([0.7, -0.4, 1.2])
    p = model.fk(q)[:3, 3]
    raw = ik_zxx_arm(*seed_params(model), p)
    assert raw.shape == (4, 3)
    assert np.sum(raw[:, 2] < 0) == 2  # t3 = -acos(...): outside the seed's 0 <= t3 <= pi
    assert len({round(t1, 9) for t1 in raw[:, 0]}) == 2  # shoulder left/right
    sol = solve_all(model, model.fk(q))
    assert sol.shape == (2, 3) and np.all(sol[:, 2] >= 0)
    # the same arm without the seed's t3 limit keeps all four branches
    free = model.with_options(limits=[[-PI, PI]] * 3)
    assert solve_all(free, p).shape == (4, 3)


def test_zxx_arm_boundaries_and_unreachable():
    model = M.zxx_arm()
    L1, L2, L3, L4, base = seed_params(model)
    # stretched elbow (t3 = 0), the shoulder circle (rho = 0), both at once
    for q in ([0.5, 0.3, 0.0], [-1.0, PI / 2, 0.0], [0.2, 1.0, PI - 0.3], [0.0, PI / 2, PI]):
        p = model.fk(q)[:3, 3]
        raw = ik_zxx_arm(L1, L2, L3, L4, base, p)
        assert_clean(raw, 3)
        assert 1 <= raw.shape[0] <= 4
        assert position_error(model, raw, p) < 1e-10
        sol = solve_all(model, p)
        assert_clean(sol, 3)
        assert sol.shape[0] >= 1
        assert position_error(model, sol, p) < 1e-10
    # beyond reach; inside the cylinder of radius L2 around the first axis
    for p in ([1.0, 0.0, 0.0], [0.0, 0.0, L1 + 0.1], [0.01, 0.02, 0.0], [0.0, 0.0, 5.0]):
        assert ik_zxx_arm(L1, L2, L3, L4, base, p).shape == (0, 3)
        assert solve_all(model, p).shape == (0, 3)


def test_zxx_arm_printed_theta3_formula_is_a_typo():
    """Seed 003 prints cos t3 = (r^2 - L2^2 - L3^2 - L4^2) / (2 L2 L3); the divisor is 2 L3 L4.

    Also, its expansion of (4) + (z_e - z_r - L1)^2 prints ``L3^2 sin t2`` where
    ``L3^2 sin^2 t2`` is needed for the sum to collapse to
    ``L2^2 + L3^2 + L4^2 + 2 L3 L4 cos t3``.
    """
    L1, L2, L3, L4 = 0.10, 0.05, 0.20, 0.15
    base = np.array([0.02, -0.03, 0.01])
    model = M.zxx_arm(L1, L2, L3, L4, base=tuple(base))
    rng = np.random.default_rng(7)
    for q in model.random_configuration(50, rng):
        _, t2, t3 = q
        dx, dy, dz = model.fk(q)[:3, 3] - base - [0.0, 0.0, L1]
        numerator = dx * dx + dy * dy + dz * dz - L2**2 - L3**2 - L4**2
        assert numerator / (2 * L3 * L4) == pytest.approx(math.cos(t3), abs=1e-12)
        if abs(math.cos(t3)) > 0.05:  # the printed one is off by the factor L4 / L2 = 3
            assert abs(numerator / (2 * L2 * L3) - math.cos(t3)) > 0.05
        c2, s2 = math.cos(t2), math.sin(t2)
        c23, s23 = math.cos(t2 + t3), math.sin(t2 + t3)
        head = L2**2 + L3**2 * c2**2 + L4**2 * c23**2 + 2 * L3 * L4 * c2 * c23
        tail = 2 * L3 * L4 * s2 * s23 + L4**2 * s23**2
        r2 = dx * dx + dy * dy + dz * dz
        assert head + L3**2 * s2**2 + tail == pytest.approx(r2, abs=1e-14)
        if abs(s2 - s2**2) > 0.05:  # the printed L3^2 sin t2 misses by L3^2 (s2 - s2^2)
            assert abs(head + L3**2 * s2 + tail - r2) > 1e-3
    # and the solver, which uses 2 L3 L4, reproduces the generating configuration
    q = np.array([0.4, -0.6, 1.9])
    assert contains(solve_all(model, model.fk(q)), q)


# --- UR family ------------------------------------------------------------------------


@pytest.mark.parametrize("make", UR_FACTORIES)
def test_ur_random_configurations(make):
    model = make()
    params = ur_params(model)
    rng = np.random.default_rng(11)
    counts = set()
    Q = model.random_configuration(120, rng)
    for q, T in zip(Q, model.fk(Q)):
        raw = ik_ur(*params, T)
        assert_clean(raw, 6)
        assert 2 <= raw.shape[0] <= 8
        assert pose_error(model, raw, T) < 1e-10
        assert contains(raw, q)
        sol = solve_all(model, T)
        assert_clean(sol, 6)
        assert pose_error(model, sol, T) < 1e-10
        assert contains(sol, wrap_angle(q))
        assert np.all((sol > -PI) & (sol <= PI))  # the (-pi, pi] representative
        counts.add(sol.shape[0])
    assert 8 in counts


@pytest.mark.parametrize("make", UR_FACTORIES)
def test_ur_generic_poses_have_eight_solutions(make):
    """Flange roughly downwards at mid reach: all shoulder/wrist/elbow branches exist."""
    model = make()
    params = ur_params(model)
    reach = abs(params[1]) + abs(params[2])
    rng = np.random.default_rng(12)
    for _ in range(100):
        T = rot_z(rng.uniform(-PI, PI)) @ rot_x(PI) @ rot_x(rng.uniform(-0.25, 0.25))
        phi = rng.uniform(-PI, PI)
        r = rng.uniform(0.4, 0.6) * reach
        T[:3, 3] = [r * math.cos(phi), r * math.sin(phi), rng.uniform(0.05, 0.25) * reach]
        raw = ik_ur(*params, T)
        assert raw.shape == (8, 6)
        sol = solve_all(model, T)
        assert sol.shape == (8, 6)
        assert pose_error(model, sol, T) < 1e-10
        # the eight are distinct configurations
        diffs = np.abs(wrap_angle(sol[:, None, :] - sol[None, :, :])).max(axis=2)
        assert np.all(diffs[~np.eye(8, dtype=bool)] > 1e-6)


@pytest.mark.parametrize("make", UR_FACTORIES)
@pytest.mark.parametrize("q5", [0.0, PI, -PI, 1e-13, 1e-9, 1e-6, PI - 1e-10])
def test_ur_wrist_singularity(make, q5):
    model = make()
    q = np.array([0.3, -1.2, 1.4, -0.7, q5, 0.9])
    T = model.fk(q)
    raw = ik_ur(*ur_params(model), T)
    assert_clean(raw, 6)
    assert raw.shape[0] >= 2
    assert pose_error(model, raw, T) < 1e-10
    sol = solve_all(model, T)
    assert_clean(sol, 6)
    assert sol.shape[0] >= 2
    assert pose_error(model, sol, T) < 1e-10
    if abs(math.sin(q5)) < 1e-10:
        # q6 is free there and set to 0; q234 absorbs the difference
        singular = sol[np.abs(np.sin(sol[:, 4])) < 1e-10]
        assert singular.shape[0] >= 1 and np.all(singular[:, 5] == 0.0)
        other = ik_ur(*ur_params(model), T, q6_default=0.9)
        assert pose_error(model, other, T) < 1e-10
        assert contains(other, wrap_angle(q))


def test_ur_unreachable():
    model = M.ur5()
    for p in ([3.0, 0.0, 0.0], [0.0, 0.0, 2.0], [0.0, 0.05, 0.3]):
        T = np.eye(4)
        T[:3, 3] = p
        assert ik_ur(*ur_params(model), T).shape == (0, 6)
        assert solve_all(model, T).shape == (0, 6)


def test_ur_limits_pick_representatives():
    base = M.ur5()
    q = np.array([2.5, -1.0, 1.2, -2.8, 1.0, -3.0])
    T = base.fk(q)
    # limits [0, 2 pi]: negative angles move up one turn
    shifted = base.with_options(limits=[[0.0, 2 * PI]] * 6)
    sol = solve_all(shifted, T)
    assert sol.shape[0] == solve_all(base, T).shape[0]
    assert np.all((sol >= 0.0) & (sol <= 2 * PI))
    assert pose_error(shifted, sol, T) < 1e-10
    assert contains(sol, q)
    # narrow limits filter branches
    narrow = base.with_options(limits=[[q_i - 0.1, q_i + 0.1] for q_i in q])
    sol = solve_all(narrow, T)
    assert sol.shape == (1, 6) and np.allclose(sol[0], q, atol=1e-9)


# --- dispatch, ordering, errors --------------------------------------------------------


def test_solutions_are_sorted_and_unique():
    model = M.ur10()
    T = model.fk(np.array([0.2, -1.4, 1.6, -1.0, 1.2, 0.4]))
    sol = solve_all(model, T)
    assert sol.shape[0] == 8
    assert np.array_equal(sol, sol[np.lexsort(sol.T[::-1])])
    assert np.array_equal(sol, solve_all(model, T.copy()))  # deterministic


def test_supports_and_unsupported_models():
    # six_axis has a spherical wrist (axes 4, 5, 6 meet), recognised from its geometry
    for m in (M.planar_2r(), M.planar_2r(0.3, 0.2), M.zxx_arm(), M.ur3(), M.ur5(), M.ur10()):
        assert supports(m)
    assert supports(M.six_axis())
    for m in (M.planar_3r(), M.panda(), M.iiwa14(), M.three_axis()):
        assert not supports(m)
        with pytest.raises(UnsupportedError, match="UR3/UR5/UR10"):
            solve_all(m, np.eye(4))


def test_metadata_that_does_not_match_the_geometry_is_unsupported():
    wrong = dataclasses.replace(M.planar_2r(), metadata={"lengths": (1.0, 0.5)})
    assert not supports(wrong)
    with pytest.raises(UnsupportedError):
        solve_all(wrong, [1.0, 0.5])
    # another end effector: the closed form no longer describes it
    moved = M.ur5().with_options(end_effectors=["link5"])
    assert not supports(moved)
    with pytest.raises(UnsupportedError):
        solve_all(moved, np.eye(4))


def test_planar_2r_detected_by_name_alone():
    model = dataclasses.replace(M.planar_2r(0.9, 0.4), metadata={})
    assert supports(model)
    q = np.array([0.8, -2.1])
    assert contains(solve_all(model, model.fk(q)), q)


def test_other_frame_is_unsupported():
    with pytest.raises(UnsupportedError, match="end effector"):
        solve_all(M.ur5(), np.eye(4), frame="link3")
    with pytest.raises(UnsupportedError):
        solve_all(M.zxx_arm(), [0.1, 0.1, 0.1], frame="link2")


def test_bad_targets():
    with pytest.raises(ShapeError):
        solve_all(M.ur5(), [0.3, 0.1, 0.2])  # UR needs the pose
    with pytest.raises(ShapeError):
        solve_all(M.zxx_arm(), [0.3, 0.1])
    with pytest.raises(InvalidValueError):
        solve_all(M.planar_2r(), [np.nan, 0.0, 0.0])
    bad = np.eye(4)
    bad[0, 0] = 2.0
    with pytest.raises(NotRigidError):
        solve_all(M.ur5(), bad)
    with pytest.raises(InvalidValueError):
        ik_planar_2r(0.0, 1.0, 0.5, 0.5)
    with pytest.raises(InvalidValueError):
        ik_zxx_arm(0.1, 0.05, 0.0, 0.15, (0, 0, 0), (0.1, 0.1, 0.1))
    with pytest.raises(InvalidValueError):
        ik_ur(0.1, 0.0, -0.4, 0.1, 0.1, 0.08, np.eye(4))


def test_wrap_angle_range():
    a = np.array([-PI, PI, 3 * PI, -3 * PI, 0.0, -1e-20, 2 * PI, 7.0, -7.0])
    w = wrap_angle(a)
    assert np.all((w > -PI) & (w <= PI))
    assert w[0] == PI and w[1] == PI
    assert np.allclose(np.cos(w), np.cos(a)) and np.allclose(np.sin(w), np.sin(a))
