"""Sparse full-body IK on real motion-capture skeletons (issue: characters that reach).

Each frame of a real clip is posed from a few of its own points, solved from the
neutral pose: the pelvis pose, and the positions of the head, both hands and both
feet (six points) or of the head and hands only (four points). Every claimed success
is checked by forward kinematics here. Before the solver worked in the model's length
scale, the default method solved none of these frames with ``rest="neutral"``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import kinetree
from kinetree import Pose, Position
from kinetree.io.body_parts import find_body_parts

DATA = Path(__file__).resolve().parents[1] / "data"
#: Real clips of three sources and four subjects, each in the file's own unit.
CLIPS = (
    DATA / "mocap" / "cmu_05_04_dance.bvh",
    DATA / "bvh" / "cmu_12_01_walk.bvh",
    DATA / "bvh_corpus" / "bvh11-cmu" / "resources__131_03.bvh",
    DATA / "mocap" / "xia_angry_13_000_run.bvh",
)
SIX = ("head", "wrist_l", "wrist_r", "ankle_l", "ankle_r")
FOUR = ("head", "wrist_l", "wrist_r")


def sparse_targets(model: kinetree.Model, q: np.ndarray, roles: tuple[str, ...]) -> dict:
    parts = find_body_parts(model)
    targets: dict = {parts["pelvis"]: Pose(model.fk(q, parts["pelvis"]))}
    for r in roles:
        targets[parts[r]] = Position(model.fk(q, parts[r])[:3, 3])
    return targets


def assert_met(model: kinetree.Model, targets: dict, q: np.ndarray, tol: float) -> None:
    for frame, t in targets.items():
        T = model.fk(q, frame)
        if isinstance(t, Pose):
            assert np.linalg.norm(T[:3, 3] - np.asarray(t.T)[:3, 3]) <= tol * (1 + 1e-9)
            R = T[:3, :3].T @ np.asarray(t.T)[:3, :3]
            assert np.arccos(np.clip((np.trace(R) - 1) / 2, -1, 1)) <= tol * 1.01 + 1e-12
        else:
            assert np.linalg.norm(T[:3, 3] - np.asarray(t.xyz)) <= tol * (1 + 1e-9)


@pytest.fixture(scope="module", params=CLIPS, ids=lambda p: p.stem)
def clip(request: pytest.FixtureRequest) -> kinetree.BVHClip:
    return kinetree.read_bvh(request.param)


@pytest.mark.parametrize("roles", [SIX, FOUR], ids=["six", "four"])
@pytest.mark.parametrize("options", [{}, {"rest": "neutral"}, {"method": "dls", "rest": "neutral"},
                                     {"method": "pinv", "rest": "neutral"}], ids=str)  # fmt: skip
def test_sparse_targets_on_real_skeletons_are_met(
    clip: kinetree.BVHClip, roles: tuple[str, ...], options: dict
) -> None:
    m = clip.model
    frames = np.linspace(0, clip.n_frames - 1, 6).astype(int)
    for f in frames:
        targets = sparse_targets(m, clip.q[f], roles)
        # No wall-clock budget: the test must not depend on the machine's load (auto's
        # default budget is 50 ms; these solves take under 2 ms, benchmarks/realism.py).
        r = m.ik(targets, time_budget=None, **options)
        assert r.success, (f, r.message)
        assert_met(m, targets, r.q, 1e-6)
        assert np.all(np.isfinite(r.q))


def test_length_scale_of_a_bvh_skeleton_follows_its_unit() -> None:
    path = CLIPS[0]
    a = kinetree.read_bvh(path).model
    b = kinetree.read_bvh(path, scale=0.01).model
    assert a.length_scale == pytest.approx(100 * b.length_scale, rel=1e-12)
    # a human-sized figure: its rest pose spans the length scale times 1.7 m
    P = np.array([a.fk(a.neutral(), f)[:3, 3] for f in a.frame_names])
    assert np.ptp(P, axis=0).max() == pytest.approx(1.7 * a.length_scale, rel=1e-9)
    assert kinetree.load("panda").length_scale == 1.0


def test_a_solve_does_not_depend_on_the_unit_of_the_file() -> None:
    """The same frame read in the file's unit and scaled by 1/100 takes the same steps."""
    path = CLIPS[1]
    big, small = kinetree.read_bvh(path), kinetree.read_bvh(path, scale=0.01)
    for f in (40, 200, 400):
        rb = big.model.ik(
            sparse_targets(big.model, big.q[f], SIX), rest="neutral", tol=1e-4, time_budget=None
        )
        rs = small.model.ik(
            sparse_targets(small.model, small.q[f], SIX), rest="neutral", tol=1e-6, time_budget=None
        )
        assert rb.success and rs.success
        assert abs(rb.iterations - rs.iterations) <= 1
        angles = [i for i, n in enumerate(big.model.joint_names) if "position" not in n]
        np.testing.assert_allclose(rb.q[angles], rs.q[angles], atol=1e-3)


def test_the_rest_pull_keeps_the_pose_nearer_the_rest_pose() -> None:
    clip = kinetree.read_bvh(CLIPS[0])
    m = clip.model
    rest = m.neutral()
    nearer = 0
    frames = np.linspace(0, clip.n_frames - 1, 8).astype(int)
    for f in frames:
        targets = sparse_targets(m, clip.q[f], FOUR)
        free = m.ik(targets, method="dls")
        pulled = m.ik(targets, method="dls", rest="neutral")
        assert free.success and pulled.success
        nearer += np.linalg.norm(pulled.q[6:] - rest[6:]) < np.linalg.norm(free.q[6:] - rest[6:])
    assert nearer >= len(frames) - 1


def test_restarts_with_a_rest_pose_stay_near_it_when_a_target_is_out_of_reach() -> None:
    """A hand target far beyond the arm: no configuration meets it, so ``auto`` spends its
    restarts. With ``rest=`` they start near the rest pose, and the best effort is a pose
    near it, not one of 96 random Euler angles."""
    clip = kinetree.read_bvh(CLIPS[0])
    m = clip.model
    parts = find_body_parts(m)
    targets = sparse_targets(m, clip.q[100], SIX)
    hand = parts["wrist_r"]
    targets[hand] = Position(np.asarray(targets[hand].xyz) + np.array([60.0, 15.0, 0.0]))
    rest = m.neutral()
    first = m.ik(targets, rest="neutral", restarts=0, time_budget=None)
    kept = m.ik(targets, rest="neutral", restarts=30, time_budget=None)
    assert not first.success and not kept.success
    assert kept.restarts == 30
    # uniform restarts left it 16.7 from the rest pose (the first attempt: 2.2)
    assert np.linalg.norm(kept.q[6:] - rest[6:]) < 2 * np.linalg.norm(first.q[6:] - rest[6:])
