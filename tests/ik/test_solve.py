"""Model.ik / Model.ik_all: success rates, closed form, behaviour at the edges, batches.

Every result is checked through forward kinematics (``model.fk``) and, via
``ik_helpers.ik``, for NaN and joint-limit violations.
"""

from __future__ import annotations

import numpy as np
import pytest

import kinetree
from ik_helpers import (
    check_result,
    ik,
    model,
    pose_errors,
    position_errors,
    random_q,
    reachable_poses,
    reachable_positions,
)
from kinetree import KinetreeError, Pose, Position
from kinetree.ik.method_table import CLOSED_FORM, TABLE
from kinetree.ik.methods.analytic import wrap_angle

#: Every iterative method (all but the closed forms), from the method table.
ALL_METHODS = tuple(row.name for row in TABLE if row.kind != CLOSED_FORM)


# --- 1000 random pose targets with the default method ---------------------------------------


@pytest.mark.parametrize("name", ["panda", "ur5", "iiwa14"])
def test_auto_solves_random_pose_targets(name: str) -> None:
    m = model(name)
    _, T = reachable_poses(m, 1000, seed=20240607)
    # a generous budget per target: a loaded machine must not turn into failures
    res = ik(m, T, q0=m.neutral(), method="auto", tol=1e-6, time_budget=0.2)
    assert res.q.shape == (1000, m.dof)
    assert np.all(res.reachable)
    assert res.success.mean() >= 0.999, np.nonzero(~res.success)[0]
    ok = res.success
    pe, re = pose_errors(m, res.q[ok], T[ok])
    assert pe.max() <= 1e-6 + 1e-12
    assert re.max() <= 1e-6 + 1e-12
    # the errors the solver reports are the FK errors
    np.testing.assert_allclose(res.position_error[ok, 0], pe, rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.orientation_error[ok, 0], re, rtol=0, atol=1e-9)
    assert np.all(m.within_limits(res.q))


# --- closed form through Model.ik / Model.ik_all ------------------------------------------


def _contains(solutions: np.ndarray, q: np.ndarray, tol: float = 1e-7) -> bool:
    """Whether ``q`` is one of ``solutions`` modulo whole turns."""
    return bool(np.any(np.max(np.abs(wrap_angle(solutions - q)), axis=1) <= tol))


def _distinct(solutions: np.ndarray) -> bool:
    n = solutions.shape[0]
    return all(
        np.max(np.abs(wrap_angle(solutions[i] - solutions[j]))) > 1e-9
        for i in range(n)
        for j in range(i)
    )


def test_planar2r_ik_all_two_branches() -> None:
    m = model("planar2r")
    q, xyz = reachable_positions(m, 20, seed=31)
    generic = np.abs(np.sin(q[:, 1])) > 1e-3  # elbow not straight or folded
    assert generic.all()
    for qi, p in zip(q, xyz):
        for target in (p, m.fk(qi)):  # a 3-vector or a 4x4 pose
            S = m.ik_all(target)
            assert S.shape == (2, 2)
            assert np.all(np.isfinite(S))
            assert np.all(m.within_limits(S))
            assert position_errors(m, S, p).max() <= 1e-10
            assert _contains(S, qi)
            # elbow up and elbow down
            assert np.sign(S[0, 1]) != np.sign(S[1, 1])


def test_zxx_arm_ik_all_every_valid_branch() -> None:
    m = model("zxx_arm")
    q, xyz = reachable_positions(m, 15, seed=32)
    for qi, p in zip(q, xyz):
        S = m.ik_all(p)
        assert 1 <= S.shape[0] <= 4 and S.shape[1] == 3
        assert np.all(np.isfinite(S))
        assert np.all(m.within_limits(S))
        assert position_errors(m, S, p).max() <= 1e-10
        assert _contains(S, qi)
        assert _distinct(S)


def test_ur5_ik_all_up_to_eight_branches() -> None:
    m = model("ur5")
    q, T = reachable_poses(m, 15, seed=33)
    counts = []
    for qi, Ti in zip(q, T):
        S = m.ik_all(Ti)
        counts.append(S.shape[0])
        assert 1 <= S.shape[0] <= 8 and S.shape[1] == 6
        assert np.all(np.isfinite(S))
        assert np.all(m.within_limits(S))
        F = m.fk(S)
        assert np.abs(F - Ti).max() <= 1e-10
        pe, re = pose_errors(m, S, np.broadcast_to(Ti, F.shape))
        assert pe.max() <= 1e-10 and re.max() <= 1e-10
        assert _contains(S, qi)
        assert _distinct(S)
    assert 8 in counts


@pytest.mark.parametrize(("name", "pose"), [("planar2r", False), ("zxx_arm", False), ("ur5", True)])
def test_ik_all_misses_no_branch_a_numeric_solver_finds(name: str, pose: bool) -> None:
    """DLS from many random starts lands only on branches that ik_all returns."""
    m = model(name)
    _, T = reachable_poses(m, 3, seed=34)
    q0 = random_q(m, 40, seed=35)
    for Ti in T:
        S = m.ik_all(Ti)
        many = np.broadcast_to(Ti, (40, 4, 4))
        target = many if pose else Position(many[:, :3, 3])
        res = ik(m, target, q0=q0, method="dls", tol=1e-9, max_iter=100)
        assert res.success.sum() >= 20
        for qs in res.q[res.success]:
            assert _contains(S, qs, tol=1e-5), (qs, S)


def test_analytic_method_returns_a_branch_nearest_q0() -> None:
    m = model("planar2r")
    q, xyz = reachable_positions(m, 10, seed=36)
    for qi, p in zip(q, xyz):
        S = m.ik_all(p)
        for k in range(S.shape[0]):
            res = ik(m, Position(p), method="analytic", q0=S[k] + 1e-3)
            assert res.method == "analytic"
            assert res.success and res.reachable
            assert res.iterations == 0
            np.testing.assert_allclose(res.q, S[k], rtol=0, atol=1e-12)
            assert position_errors(m, res.q, p) <= 1e-10
        # a raw 3-vector works too
        res = ik(m, p, method="analytic", q0=qi)
        assert _contains(res.q[None], qi)


def test_analytic_method_on_ur5() -> None:
    m = model("ur5")
    q, T = reachable_poses(m, 10, seed=37)
    q = wrap_angle(q)  # representatives in (-pi, pi]: one of the returned branches
    T = m.fk(q)
    for qi, Ti in zip(q, T):
        for target in (Ti, Pose(Ti)):
            res = ik(m, target, method="analytic", q0=qi)
            assert res.success
            assert _contains(m.ik_all(Ti), res.q, tol=1e-12)
            pe, re = pose_errors(m, res.q, Ti)
            assert pe <= 1e-10 and re <= 1e-10
            np.testing.assert_allclose(res.q, qi, rtol=0, atol=1e-8)


def test_analytic_nearest_branch_respects_whole_turns() -> None:
    m = model("ur5")
    q_true = np.array([0.5, -1.0, 1.2, 4.0, 1.0, -5.0])  # joints 4 and 6 beyond pi
    assert m.within_limits(q_true)
    res = ik(m, m.fk(q_true), method="analytic", q0=q_true)
    assert res.success
    np.testing.assert_allclose(res.q, q_true, rtol=0, atol=1e-8)


def test_analytic_unreachable() -> None:
    for name, target in (("planar2r", np.array([2.5, 0.3, 0.0])), ("ur5", None)):
        m = model(name)
        if target is None:
            target = m.fk(m.neutral())
            target[:3, 3] += [3.0, 0.0, 0.0]
        S = m.ik_all(target)
        assert S.shape == (0, m.dof)
        res = ik(m, target, method="analytic")
        assert not res.success and not res.reachable
        assert "reach" in res.message


def test_analytic_keeps_inactive_joints() -> None:
    m = model("ur5")
    q_true = np.array([0.3, -1.0, 1.2, -0.5, 0.8, 0.2])
    q0 = m.neutral()
    try:
        res = ik(m, m.fk(q_true), method="analytic", q0=q0, active=["joint1", "joint2"])
    except KinetreeError:
        return  # refusing is fine too
    np.testing.assert_array_equal(res.q[2:], q0[2:])


# --- joint limits ----------------------------------------------------------------------------


def _narrow_planar2r():
    """planar2r whose elbow may bend only 0.1 .. 0.5 rad."""
    m = model("planar2r")
    return m.with_options(limits=[[-np.pi, np.pi], [0.1, 0.5]], q_neutral=[0.0, 0.3])


def test_target_blocked_by_limits_fails_cleanly() -> None:
    m = _narrow_planar2r()
    p = model("planar2r").fk(np.array([0.2, 1.5]))[:3, 3]  # needs |elbow| = 1.5
    for method in ALL_METHODS:
        opts = dict(method=method, max_iter=100)
        if method == "auto":
            opts.update(restarts=5, time_budget=None)
        res = ik(m, Position(p), **opts)
        assert not res.success, method
        assert res.reachable  # within the reach of the chain, only the limits block it
        assert "limits" in res.message, (method, res.message)
        assert np.all(m.within_limits(res.q))
        assert res.position_error[0] > 1e-3


@pytest.mark.parametrize("method", ["dls", "pinv", "sdls", "bfgs", "cg"])
def test_respect_limits_false_may_leave_the_limits(method: str) -> None:
    m = _narrow_planar2r()
    p = model("planar2r").fk(np.array([0.2, 1.5]))[:3, 3]
    res = ik(m, Position(p), method=method, respect_limits=False)
    assert res.success
    assert position_errors(m, res.q, p) <= 1e-6
    assert not m.within_limits(res.q)


@pytest.mark.parametrize("method", ALL_METHODS)
def test_limits_hold_from_a_start_outside_them(method: str) -> None:
    m = model("panda")
    q0 = m.neutral()
    q0[3] = 0.5  # above joint 4's upper limit (-0.0698)
    q0[0] = -3.5
    _, xyz = reachable_positions(m, 1, seed=41)
    res = ik(m, Position(xyz[0]), q0=q0, method=method, restarts=3, seed=1)
    assert np.all(m.within_limits(res.q))


# --- unreachable targets ----------------------------------------------------------------


@pytest.mark.parametrize("method", ALL_METHODS)
def test_unreachable_panda_target(method: str) -> None:
    m = model("panda")
    far = np.array([3.0, 0.0, 0.5])
    opts = dict(method=method, max_iter=50, restarts=2, time_budget=0.02)
    res = ik(m, Position(far), **opts)
    assert not res.success
    assert not res.reachable
    assert "reach" in res.message
    assert res.iterations <= 3 * (50 + 50)  # bounded by the budgets given (fabrik: + points)
    assert position_errors(m, res.q, far) == pytest.approx(res.position_error[0], abs=1e-12)
    assert res.position_error[0] >= 3.0 - 0.333 - 1.0  # farther than the arm can stretch


@pytest.mark.parametrize("method", ALL_METHODS)
def test_unreachable_planar2r_target(method: str) -> None:
    m = model("planar2r")
    p = np.array([1.5, 1.2, 0.0])  # |p| = 1.92 > 1.8
    res = ik(m, Position(p), method=method, max_iter=50, restarts=2, time_budget=0.02)
    assert not res.success and not res.reachable
    assert "reach" in res.message
    # the closest configuration is close to stretched toward the target
    assert res.position_error[0] >= np.linalg.norm(p) - 1.8 - 1e-12


def test_unreachable_batch_items_are_flagged_individually() -> None:
    m = model("panda")
    _, T = reachable_poses(m, 4, seed=42)
    T[1, :3, 3] = [3.0, 0.0, 0.5]
    T[3, :3, 3] = [0.0, -2.0, 2.0]
    res = ik(m, T, restarts=2, time_budget=0.02)
    np.testing.assert_array_equal(res.reachable, [True, False, True, False])
    np.testing.assert_array_equal(res.success, [True, False, True, False])
    assert res.message[1] == res.message[3] and "reach" in res.message[1]


def test_clamp_target_planar2r_stretches_toward_the_target() -> None:
    m = model("planar2r")
    p = np.array([2.5, 0.5, 0.0])
    res = ik(m, Position(p), clamp_target=True)
    assert not res.success and not res.reachable
    tip = m.fk(res.q)[:3, 3]
    # on the segment from the pivot (joint 1 at the origin) to the target, at full reach
    np.testing.assert_allclose(tip, 1.8 * p / np.linalg.norm(p), rtol=0, atol=1e-5)
    assert res.position_error[0] == pytest.approx(np.linalg.norm(p) - 1.8, abs=1e-5)


def test_clamp_target_panda_gets_as_close_as_possible() -> None:
    m = model("panda")
    far = np.array([3.0, 0.0, 0.5])
    res = ik(m, Position(far), clamp_target=True)
    assert not res.success and not res.reachable
    tip = m.fk(res.q)[:3, 3]
    pivot = m.fk(m.neutral(), "link1")[:3, 3]  # joint 1 does not move it
    u = (far - pivot) / np.linalg.norm(far - pivot)
    d = tip - pivot
    # near the pivot->target line (the panda's link offsets keep it a little off it:
    # its reach bound, the sum of link lengths, is not tight)
    assert np.linalg.norm(d - (d @ u) * u) <= 0.03
    # within a few mm of what a minimiser of the distance (L-BFGS-B, limits as bounds) gets
    best = ik(m, Position(far), method="lbfgs", restarts=5, seed=0)
    assert res.position_error[0] <= best.position_error[0] + 5e-3
    assert position_errors(m, res.q, far) == pytest.approx(res.position_error[0], abs=1e-12)


# --- singular configurations -----------------------------------------------------------------


@pytest.mark.parametrize("method", ALL_METHODS)
def test_planar2r_stretched_start_target_along_the_arm(method: str) -> None:
    m = model("planar2r")
    p = np.array([1.5, 0.0, 0.0])  # on the arm's line, inside the reach
    res = ik(m, Position(p), q0=np.zeros(2), method=method)
    if method == "auto":
        assert res.success  # restarts leave the singularity
    if res.success:
        assert position_errors(m, res.q, p) <= 1e-6
    else:
        assert res.reachable and res.position_error[0] > 0.0


@pytest.mark.parametrize("method", ALL_METHODS)
def test_panda_aligned_axes_exact_target(method: str) -> None:
    m = model("panda")
    q0 = np.zeros(7)  # joints 1, 3, 5, 7 aligned; joint 4 outside its limits
    T = m.fk(q0)
    target = Position(T[:3, 3]) if method == "fabrik" else T
    res = ik(m, target, q0=q0, method=method, respect_limits=False)
    assert res.success
    pe, re = pose_errors(m, res.q, T)
    assert pe <= 1e-6 and (method == "fabrik" or re <= 1e-6)
    # within the limits the start is moved into them first; no NaN either way
    res = ik(m, target, q0=q0, method=method)
    if method == "auto":
        assert res.success


@pytest.mark.parametrize("method", ALL_METHODS)
def test_panda_aligned_axes_nearby_target(method: str) -> None:
    m = model("panda")
    q0 = np.zeros(7)
    T = m.fk(q0)
    T[:3, 3] += [0.05, 0.0, -0.05]
    target = Position(T[:3, 3]) if method == "fabrik" else T
    res = ik(m, target, q0=q0, method=method, respect_limits=False)
    if res.success:
        pe, re = pose_errors(m, res.q, T)
        assert pe <= 1e-6 and (method == "fabrik" or re <= 1e-6)


# --- determinism, inactive joints, frames -------------------------------------------------


def _hard_poses():
    """Panda pose targets that DLS from neutral does not solve without restarts."""
    m = model("panda")
    _, T = reachable_poses(m, 40, seed=11)
    res = ik(m, T, q0=m.neutral(), method="dls")
    return m, T[~res.success][:4]


def test_auto_is_deterministic_with_restarts() -> None:
    m, T = _hard_poses()
    assert T.shape[0] >= 3
    opts = dict(q0=m.neutral(), time_budget=None, seed=123)
    a = ik(m, T, **opts)
    b = ik(m, T, **opts)
    assert np.all(a.success) and np.all(a.restarts > 0)
    np.testing.assert_array_equal(a.q, b.q)
    np.testing.assert_array_equal(a.iterations, b.iterations)
    np.testing.assert_array_equal(a.restarts, b.restarts)
    for Ti in T:  # single solves too
        s1, s2 = ik(m, Ti, **opts), ik(m, Ti, **opts)
        assert s1.q.tobytes() == s2.q.tobytes()
    # other seeds restart elsewhere: some solution differs
    c = ik(m, T, q0=m.neutral(), time_budget=None, seed=999)
    assert np.all(c.success)
    assert not np.array_equal(a.q, c.q)
    # rng= is an alternative to seed=
    d1 = ik(m, T[0], q0=m.neutral(), time_budget=None, rng=np.random.default_rng(5))
    d2 = ik(m, T[0], q0=m.neutral(), time_budget=None, rng=np.random.default_rng(5))
    np.testing.assert_array_equal(d1.q, d2.q)


@pytest.mark.parametrize("method", ["bfgs", "ccd", "fabrik"])
def test_other_methods_are_deterministic(method: str) -> None:
    m = model("six_axis")
    _, xyz = reachable_positions(m, 1, seed=43)
    a = ik(m, Position(xyz[0]), method=method, restarts=3, seed=4)
    b = ik(m, Position(xyz[0]), method=method, restarts=3, seed=4)
    np.testing.assert_array_equal(a.q, b.q)


@pytest.mark.parametrize("method", ALL_METHODS)
def test_inactive_joints_do_not_move(method: str) -> None:
    m = model("panda")
    active = ["joint1", "joint2", "joint4", "joint6"]
    mask = m.active_mask(active)
    q0 = m.neutral()
    q0[~mask] = [0.3, -0.4, 0.2]  # within limits
    q_true = q0.copy()
    q_true[mask] += [0.2, -0.15, -0.3, 0.25]
    p = m.fk(q_true)[:3, 3]
    res = ik(m, Position(p), q0=q0, method=method, active=active, restarts=5, seed=0)
    np.testing.assert_array_equal(res.q[~mask], q0[~mask])
    assert res.success
    assert position_errors(m, res.q, p) <= 1e-6


def test_inactive_joints_do_not_move_in_batches() -> None:
    m = model("panda")
    q0 = random_q(m, 8, seed=44)
    q_true = q0.copy()
    q_true[:, 4:] = random_q(m, 8, seed=45)[:, 4:]
    T = m.fk(q_true)
    res = ik(m, T, q0=q0, active=["joint5", "joint6", "joint7"], method="dls", max_iter=5)
    np.testing.assert_array_equal(res.q[:, :4], q0[:, :4])


@pytest.mark.parametrize(
    "method",
    ["fabrik", "bfgs", "lbfgs", "cg", "auto", "dls", "ccd"],
)
def test_inactive_joint_outside_limits_is_left_alone(method: str) -> None:
    m = model("panda")
    q0 = m.neutral()
    q0[6] = 3.5  # joint 7 beyond its limit (2.8973), inactive
    p = m.fk(m.neutral())[:3, 3] + [0.05, 0.05, -0.05]
    res = m.ik(Position(p), q0=q0, method=method, active=["joint1", "joint2", "joint3", "joint4"])
    check_result(m, res, respect_limits=False)
    assert res.success
    assert res.q[6] == 3.5


def test_target_frame_not_moved_by_active_joints_raises() -> None:
    m = model("panda")
    p = m.fk(m.neutral(), "link3")[:3, 3]
    with pytest.raises(kinetree.InvalidValueError, match=r"link3.*cannot be moved"):
        m.ik(Position(p), frame="link3", active=["joint5", "joint6"])
    # a joint above the frame is enough
    res = ik(m, Position(p), frame="link3", active=["joint1", "joint2"])
    assert res.success


def test_other_frames() -> None:
    m = model("panda")
    q_true = random_q(m, 1, seed=46)[0]
    T = m.fk(q_true, "link5")
    res = ik(m, T, frame="link5", restarts=20, time_budget=None)
    assert res.frames == ("link5",)
    assert res.success
    pe, re = pose_errors(m, res.q, T, "link5")
    assert pe <= 1e-6 and re <= 1e-6


# --- batches --------------------------------------------------------------------------------


def test_pose_batch_shapes_and_per_item_q0() -> None:
    m = model("panda")
    q_true, T = reachable_poses(m, 6, seed=51)
    res = ik(m, T, q0=m.neutral())
    assert res.q.shape == (6, 7)
    for name in ("success", "reachable", "iterations", "restarts", "message"):
        assert np.shape(getattr(res, name)) == (6,)
    assert res.position_error.shape == res.orientation_error.shape == (6, 1)
    assert res.message.dtype.kind == "U"
    assert np.all(res.success) and bool(res)
    assert "batch" in repr(res)
    pe, re = pose_errors(m, res.q, T)
    assert pe.max() <= 1e-6 and re.max() <= 1e-6
    # one q0 per item: starting at the answer takes no iteration
    res = ik(m, T, q0=q_true)
    np.testing.assert_array_equal(res.iterations, 0)
    np.testing.assert_array_equal(res.q, q_true)
    # a nested batch keeps its shape
    res = ik(m, T.reshape(2, 3, 4, 4), q0=q_true.reshape(2, 3, 7))
    assert res.q.shape == (2, 3, 7)
    assert res.success.shape == res.iterations.shape == res.message.shape == (2, 3)
    assert res.position_error.shape == (2, 3, 1)
    np.testing.assert_array_equal(res.q, q_true.reshape(2, 3, 7))
    res = ik(m, T.reshape(2, 3, 4, 4), q0=m.neutral())
    assert res.q.shape == (2, 3, 7) and np.all(res.success)
    pe, re = pose_errors(m, res.q, T.reshape(2, 3, 4, 4))
    assert pe.max() <= 1e-6 and re.max() <= 1e-6


@pytest.mark.parametrize("method", ["dls", "ccd", "bfgs"])
def test_batches_with_other_methods(method: str) -> None:
    m = model("six_axis")
    _, xyz = reachable_positions(m, 6, seed=52)
    res = ik(m, Position(xyz.reshape(2, 3, 3)), method=method, tol=1e-4, restarts=10, seed=1)
    assert res.q.shape == (2, 3, 6) and res.success.shape == (2, 3)
    assert res.position_error.shape == (2, 3, 1)
    assert np.all(res.success)
    assert position_errors(m, res.q, xyz.reshape(2, 3, 3)).max() <= 1e-4


def test_batch_equals_item_by_item() -> None:
    m = model("panda")
    _, T = reachable_poses(m, 5, seed=53)
    q0 = random_q(m, 5, seed=54)
    batch = ik(m, T, q0=q0, method="dls", max_iter=50)
    for i in range(5):
        single = ik(m, T[i], q0=q0[i], method="dls", max_iter=50)
        np.testing.assert_array_equal(batch.q[i], single.q)
        assert batch.success[i] == single.success
        assert batch.iterations[i] == single.iterations


def test_dict_of_batched_positions() -> None:
    m = model("panda")
    _, xyz = reachable_positions(m, 8, seed=55)
    res = ik(m, {"flange": Position(xyz)})
    assert res.q.shape == (8, 7) and res.success.shape == (8,)
    assert res.frames == ("flange",)
    assert np.all(res.success)
    assert position_errors(m, res.q, xyz).max() <= 1e-6
    # same through frame= and a plain Position
    res2 = ik(m, Position(xyz), frame="flange")
    assert np.all(res2.success)


def test_single_results_are_scalars() -> None:
    m = model("panda")
    _, T = reachable_poses(m, 1, seed=56)
    res = ik(m, T[0])
    assert res.q.shape == (7,)
    assert isinstance(res.success, bool) and isinstance(res.reachable, bool)
    assert isinstance(res.iterations, int) and isinstance(res.restarts, int)
    assert isinstance(res.message, str) and "converged" in res.message
    assert res.position_error.shape == (1,)
    assert res.history is None and res.error_history is None
    assert res.method == "auto"
    assert "IKResult(success=True" in repr(res)
