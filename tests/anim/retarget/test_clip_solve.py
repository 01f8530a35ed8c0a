"""The whole-clip solve (:mod:`kinetree.anim.retarget.clip_solve`).

Oracles: the banded matrix against the same matrix built densely from its definition;
the refined motion by FK of its result (targets met), by the second difference of the
joint values (spikes gone) and by the model's own limits.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import kinetree
from kinetree.anim import load_robot
from kinetree.anim.retarget.clip_solve import ClipSolveOptions, _Band, refine_clip
from kinetree.anim.retarget.targets import RobotTargets

TESTS = Path(__file__).resolve().parents[2]


def test_band_is_the_dense_matrix() -> None:
    rng = np.random.default_rng(0)
    n, nv = 6, 3
    A = rng.normal(size=(n, nv, nv))
    blocks = A @ np.swapaxes(A, 1, 2)  # symmetric
    w = rng.uniform(0.5, 2.0, nv)
    band = _Band(n, nv)
    band.add_blocks(blocks)
    band.add_second_difference(w)
    band.ab[0] += 1.0  # positive definite
    D = np.zeros((n - 2, n))
    for k in range(n - 2):
        D[k, k : k + 3] = (1.0, -2.0, 1.0)
    H = np.zeros((n * nv, n * nv))
    for t in range(n):
        H[t * nv : (t + 1) * nv, t * nv : (t + 1) * nv] = blocks[t]
    for j in range(nv):
        idx = np.arange(n) * nv + j
        H[np.ix_(idx, idx)] += w[j] * D.T @ D
    H += np.eye(n * nv)
    b = rng.normal(size=n * nv)
    np.testing.assert_allclose(band.solve(b), np.linalg.solve(H, b), rtol=1e-10, atol=1e-12)


def _targets(model: kinetree.Model, frame: str, P: np.ndarray, q: np.ndarray) -> RobotTargets:
    T = np.tile(np.eye(4), (len(P), 1, 1))
    T[:, :3, 3] = P
    return RobotTargets(frames=(frame,), poses=T[:, None], weights=np.array([[1.0, 0.0]]), q_init=q)


def _arm(h: kinetree.Model) -> list[int]:
    names = ("shoulder_r_x", "shoulder_r_y", "shoulder_r_z", "elbow_r")
    return [int(h.joint_indices(j)[0]) for j in names]


def test_a_spike_in_the_null_space_is_smoothed_and_the_targets_still_met() -> None:
    """The humanoid's hand follows a smooth path; a per-frame solution that swings the
    elbow another way on one frame only (the same hand position: the arm's null space)
    comes back smooth, the hand still on its target (FK), within limits."""
    h = load_robot("humanoid")
    hand, n, arm = "hand_r", 40, _arm(h)
    q_ref = np.tile(h.neutral(), (n, 1))
    lo, hi = h.limits[arm, 0], h.limits[arm, 1]
    phase = np.array([0.0, 1.0, 2.0, 3.0])
    wave = np.sin(2 * np.pi * np.linspace(0.0, 1.0, n)[:, None] + phase)
    q_ref[:, arm] = 0.5 * (lo + hi) + 0.1 * (hi - lo) * wave
    assert np.all(h.within_limits(q_ref))  # the reference keeps every limit (cones too)
    P = np.asarray(h.fk(q_ref, hand))[:, :3, 3]
    start = q_ref[20].copy()
    start[arm] += (0.5, -0.5, 0.5, -0.3)
    r = h.ik(kinetree.Position(P[20]), hand, q0=start, active=[h.joint_names[k] for k in arm])
    q = q_ref.copy()
    q[20] = r.q
    assert np.linalg.norm(np.asarray(h.fk(r.q, hand))[:3, 3] - P[20]) < 1e-4
    assert np.abs(q[20, arm] - q_ref[20, arm]).max() > 0.2  # a real spike to remove
    out = refine_clip(h, q, _targets(h, hand, P, q_ref), 30.0, ClipSolveOptions(iterations=4))
    miss = np.linalg.norm(np.asarray(h.fk(out, hand))[:, :3, 3] - P, axis=1)
    assert miss.max() < 5e-3
    before = np.abs(np.diff(q[:, arm], 2, axis=0)).max()
    assert np.abs(np.diff(out[:, arm], 2, axis=0)).max() < 0.25 * before
    assert np.all(h.within_limits(out, tol=1e-9))


def test_soles_are_held_at_the_floor() -> None:
    """An ankle target that would put the sole (a point 5 cm below the ankle here) 3 cm
    under the ground: the refined foot's sole, by FK, is on the ground, not under it."""
    h = load_robot("humanoid")
    n, ankle = 12, "ankle_r"
    q = np.tile(h.neutral(), (n, 1))
    T = np.asarray(h.fk(q, ankle)).copy()
    T[:, 2, 3] = 0.02  # the ankle 2 cm up: its sole 3 cm down
    tg = RobotTargets(frames=(ankle,), poses=T[:, None], weights=np.array([[1.0, 1.0]]), q_init=q)
    sole = {ankle: (np.array([[0.0, 0.0, -0.05]]), np.zeros(1))}
    out = refine_clip(h, q, tg, 30.0, ClipSolveOptions(iterations=4), soles=sole)
    T_out = np.asarray(h.fk(out, ankle))
    sole_z = T_out[:, 2, 3] + (T_out[:, :3, :3] @ np.array([0.0, 0.0, -0.05]))[:, 2]
    assert sole_z.min() > -1e-3
    assert np.abs(T_out[:, :2, 3] - T[:, :2, 3]).max() < 5e-3  # otherwise on its target


def _spikes(model: kinetree.Model, q: np.ndarray, step: float = 0.1) -> int:
    """Joint-frames (the base left out) moving more than ``step`` into a frame and more
    than ``step`` back out of it, counted here from the joint values."""
    base = set(model.joint_indices(model.floating_base).tolist()) if model.floating_base else set()
    cols = [k for k in range(model.nq) if k not in base and not model.qv.quaternion_mask[k]]
    d = np.diff(q[:, cols], axis=0)
    return int(np.sum((np.abs(d[:-1]) > step) & (np.abs(d[1:]) > step) & (d[:-1] * d[1:] < 0)))


def test_the_g1_dance_has_no_spikes_and_no_sole_under_the_floor() -> None:
    """CMU 05_04 (a tuning clip: arabesque, folding arms, bending back) onto the G1: the
    per-frame temporal pass left 24 one-frame spikes; the whole-clip solve none, every
    frame within the limits, and no sole (the foot's geometry posed by FK) below the
    floor in any frame."""
    from kinetree.anim.retarget.feet import sole_points
    from robot_data import example_robot_data

    example_robot_data()  # skips when the package is absent (make test does not install it)
    g1 = load_robot("g1")
    clip = kinetree.read_bvh(TESTS / "data" / "mocap" / "cmu_05_04_dance.bvh")
    m = kinetree.retarget(clip, g1)
    assert _spikes(g1, m.q) == 0
    assert np.all(g1.within_limits(m.q, tol=1e-9))
    for ankle in ("left_ankle_roll_link", "right_ankle_roll_link"):
        pts, rad = sole_points(g1, g1.neutral(), ankle)
        T = np.asarray(g1.fk(m.q, ankle))
        z = np.einsum("nj,kj->nk", T[:, 2, :3], pts) + T[:, 2, 3:4] - rad
        assert z.min() > -1e-3, ankle
