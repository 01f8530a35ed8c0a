"""Model.ik / Model.ik_all: success rates, closed form, behaviour at the edges, batches.

Every result is checked through forward kinematics (``model.fk``) and, via
``ik_helpers.ik``, for NaN and joint-limit violations.
"""

from __future__ import annotations

import numpy as np
import pytest

from ik_helpers import (
    ik,
    model,
    pose_errors,
    position_errors,
    random_q,
    reachable_poses,
    reachable_positions,
)
from kinetree import Pose, Position
from kinetree.ik.analytic import wrap_angle

ALL_METHODS = ("auto", "pinv", "transpose", "dls", "sdls", "ccd", "fabrik", "bfgs", "lbfgs", "cg")
KERNEL_METHODS = ("auto", "pinv", "transpose", "dls", "sdls", "ccd")


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


def test_seed003_ik_all_every_valid_branch() -> None:
    m = model("seed003_arm")
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


@pytest.mark.parametrize(
    ("name", "pose"), [("planar2r", False), ("seed003_arm", False), ("ur5", True)]
)
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
