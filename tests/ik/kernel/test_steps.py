"""Every IK method reaches reachable targets, checked through FK; convergence histories.

Targets are FK of uniform random configurations within the limits (fixed seeds),
so each one is reachable. Settings per method are chosen so that every target
of the fixed sets is solved: the Jacobian transpose and CCD converge linearly
and get a looser tolerance and more iterations; every method gets random
restarts (deterministic: fixed seed, no time budget) for the few targets whose
only solutions sit at a joint limit (+-pi on the small arms).
"""

from __future__ import annotations

import numpy as np
import pytest

from ik_helpers import (
    ik,
    model,
    pose_errors,
    position_errors,
    reachable_poses,
    reachable_positions,
)
from kinetree import Position
from kinetree.ik.method_table import TABLE

KERNEL_MODELS = ("planar2r", "planar3r", "three_axis", "six_axis", "panda")

#: Settings that solve every target of the sets below (see the module docstring).
SETTINGS = {
    "pinv": dict(tol=1e-6, restarts=50, max_joint_step=0.25),
    "dls": dict(tol=1e-6, restarts=20),
    "sdls": dict(tol=1e-6, restarts=20),
    "transpose": dict(tol=1e-4, max_iter=20000, restarts=50, stall_iter=200),
    "ccd": dict(tol=1e-4, max_iter=5000, restarts=20, stall_iter=100),
}


@pytest.mark.parametrize("name", KERNEL_MODELS)
@pytest.mark.parametrize("method", tuple(SETTINGS))
def test_kernel_methods_reach_every_position_target(name: str, method: str) -> None:
    m = model(name)
    _, xyz = reachable_positions(m, 20, seed=1000 + KERNEL_MODELS.index(name))
    opts = dict(SETTINGS[method], seed=7)
    res = ik(m, Position(xyz), method=method, **opts)
    assert res.method == method
    assert res.q.shape == (20, m.dof)
    assert np.all(res.reachable)
    failed = np.nonzero(~res.success)[0]
    assert failed.size == 0, f"{method} on {name}: unsolved targets {failed.tolist()}"
    err = position_errors(m, res.q, xyz)
    assert np.all(err <= opts["tol"] * (1 + 1e-6)), err.max()
    # the reported error is the FK error
    np.testing.assert_allclose(res.position_error[:, 0], err, rtol=0, atol=1e-12)
    assert np.all(res.orientation_error == 0.0)


@pytest.mark.parametrize("name", ["planar3r", "three_axis", "six_axis"])
def test_fabrik_reaches_position_targets(name: str) -> None:
    m = model(name)
    _, xyz = reachable_positions(m, 5, seed=2000)
    for p in xyz:
        res = ik(m, Position(p), method="fabrik")
        assert res.method == "fabrik"
        assert res.success, res.message
        assert position_errors(m, res.q, p) <= 1e-6


@pytest.mark.parametrize(
    ("method", "name"),
    [
        ("bfgs", "planar3r"),
        ("bfgs", "six_axis"),
        ("bfgs", "panda"),
        ("cg", "planar3r"),
        ("cg", "panda"),
        ("lbfgs", "six_axis"),
        ("lbfgs", "panda"),
    ],
)
def test_scipy_methods_reach_position_targets(method: str, name: str) -> None:
    m = model(name)
    _, xyz = reachable_positions(m, 5, seed=3000)
    res = ik(m, Position(xyz), method=method, restarts=10, max_iter=100, seed=3)
    assert res.method == method
    assert np.all(res.success), res.position_error
    assert np.all(position_errors(m, res.q, xyz) <= 1e-6)


@pytest.mark.parametrize("method", [r.name for r in TABLE if r.scipy is not None])
def test_scipy_methods_reach_a_pose(method: str) -> None:
    m = model("panda")
    q_true = np.array([0.4, -0.3, 0.2, -2.0, 0.1, 1.9, 0.5])
    T = m.fk(q_true)
    res = ik(m, T, q0=m.neutral(), method=method, restarts=5, max_iter=200, seed=1)
    assert res.success
    F = m.fk(res.q)
    assert np.linalg.norm(F[:3, 3] - T[:3, 3]) <= 1e-6
    assert np.abs(F[:3, :3] - T[:3, :3]).max() <= 1e-6


# --- convergence -------------------------------------------------------------------------


def _history_errors(m, res, xyz):
    """FK position error of every recorded iterate."""
    return position_errors(m, res.history, xyz)


@pytest.mark.parametrize("name", KERNEL_MODELS)
@pytest.mark.parametrize("method", tuple(SETTINGS))
def test_error_history_records_a_decreasing_error(name: str, method: str) -> None:
    m = model(name)
    _, xyz = reachable_positions(m, 1, seed=4000)
    p = xyz[0]
    # fewer restarts than above: the history is allocated for (max_iter + 1) * (restarts + 1)
    opts = dict(SETTINGS[method], record=True, seed=5, restarts=3)
    res = ik(m, Position(p), method=method, **opts)
    assert res.success
    h, e = res.history, res.error_history
    assert h.shape[0] == e.shape[0] >= 1
    # the history is what it says: FK of each iterate gives its error
    np.testing.assert_allclose(e[:, 0], _history_errors(m, res, p), rtol=0, atol=1e-12)
    assert np.all(e[:, 1] == 0.0)
    # starts at q0 (neutral) and ends at the returned q
    np.testing.assert_array_equal(h[0], m.neutral())
    np.testing.assert_array_equal(h[-1], res.q)
    assert e[-1, 0] <= opts["tol"]
    if e[0, 0] > 0.0:
        assert e[-1, 0] <= 1e-2 * e[0, 0]
    # one row per iterate of every attempt, the start included
    assert e.shape[0] == int(res.iterations) + int(res.restarts) + 1


def test_dls_pose_targets_from_neutral_converge_within_30_iterations() -> None:
    m = model("panda")
    _, T = reachable_poses(m, 60, seed=11)
    res = ik(m, T, q0=m.neutral(), method="dls", max_iter=30)
    assert np.all(res.restarts == 0)
    assert np.all(res.iterations <= 30)
    # most targets converge from the neutral pose alone, without any restart
    assert res.success.mean() >= 0.7, res.success.mean()
    assert np.median(res.iterations[res.success]) <= 15


def test_dls_error_history_is_mostly_monotone_and_quadratic_at_the_end() -> None:
    m = model("panda")
    _, T = reachable_poses(m, 12, seed=11)
    solved = 0
    for Ti in T:
        res = ik(m, Ti, q0=m.neutral(), method="dls", max_iter=30, record=True)
        e = res.error_history
        assert e.shape == (int(res.iterations) + 1, 2)
        # the first row is the error at q0; the result is the best iterate
        np.testing.assert_allclose(e[0], pose_errors(m, m.neutral(), Ti), rtol=0, atol=1e-12)
        best = int(np.argmin(e.max(axis=1)))
        np.testing.assert_array_equal(res.q, res.history[best])
        np.testing.assert_allclose(e[best], pose_errors(m, res.q, Ti), rtol=0, atol=1e-12)
        if not res.success:
            continue
        assert best == e.shape[0] - 1
        solved += 1
        bad = e.max(axis=1)  # tolerances are equal: badness is the larger error
        assert bad[0] > 0.1 and bad[-1] <= 1e-6
        # mostly monotone: few steps increase the error, and the final phase
        # (within 1e-2) only decreases, superlinearly
        assert np.mean(np.diff(bad) > 0) <= 0.3
        tail = bad[np.argmax(bad < 1e-2) :]
        assert np.all(np.diff(tail) < 0), tail
        if tail.size >= 3:
            assert tail[-1] <= 0.1 * tail[-2]
    assert solved >= 8


@pytest.mark.parametrize("method", ["pinv", "dls", "sdls"])
def test_jacobian_methods_on_panda_poses(method: str) -> None:
    """Full 6D pose targets with each Jacobian method (restarts for the hard ones)."""
    m = model("panda")
    _, T = reachable_poses(m, 10, seed=12)
    res = ik(m, T, method=method, restarts=50, max_joint_step=0.5, seed=2)
    assert np.all(res.success)
    F = m.fk(res.q)
    assert np.all(np.linalg.norm(F[:, :3, 3] - T[:, :3, 3], axis=-1) <= 1e-6)
    assert np.abs(F[:, :3, :3] - T[:, :3, :3]).max() <= 2e-6
