"""Character IK: two-bone IK in closed form with pole targets, FABRIK with hinges and cones."""

from __future__ import annotations

import math

import numpy as np
import pytest

import kinetree
from kinetree import ModelBuilder, Position
from kinetree.errors import UnsupportedError
from kinetree.ik.methods.fabrik import fabrik_points
from kinetree.ik.methods.two_bone import pole_angle, solve_two_bone, two_bone_points
from kinetree.spatial import translation

D = math.pi / 180


def test_two_bone_points_are_exact() -> None:
    rng = np.random.default_rng(0)
    for _ in range(200):
        a, b, c = rng.normal(size=(3, 3))
        l1, l2 = np.linalg.norm(b - a), np.linalg.norm(c - b)
        t = a + rng.uniform(abs(l1 - l2) + 1e-3, l1 + l2 - 1e-3) * _unit(rng.normal(size=3))
        pole = rng.normal(size=3) * 3
        m, tip = two_bone_points(a, b, c, t, pole)
        assert np.linalg.norm(tip - t) < 1e-12
        assert abs(np.linalg.norm(m - a) - l1) < 1e-12 and abs(np.linalg.norm(tip - m) - l2) < 1e-12
        assert pole_angle(a, m, tip, pole) < 1e-9


def test_two_bone_points_out_of_reach_stretch_towards_the_target() -> None:
    a, b, c = np.zeros(3), np.array([0.0, 0.0, -1.0]), np.array([0.0, 0.3, -1.8])
    m, tip = two_bone_points(a, b, c, [5.0, 0.0, 0.0])
    np.testing.assert_allclose(m, [1.0, 0.0, 0.0], atol=1e-12)
    assert np.linalg.norm(tip - [1.0 + np.linalg.norm(c - b), 0.0, 0.0]) < 1e-12


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


@pytest.mark.parametrize(
    ("root", "mid", "tip", "reach"),
    [
        ("pelvis", "shin_r", "ankle_r", (0.5, 0.78)),
        ("clavicle_l", "forearm_l", "palm_l", (0.3, 0.52)),
    ],
)
def test_the_knee_points_where_asked(root: str, mid: str, tip: str, reach: tuple) -> None:
    human = kinetree.load("humanoid")
    rng = np.random.default_rng(1)
    q0 = human.neutral()
    ball = human.frame_index(mid)
    hinge_dof = int(human.q_index[ball])
    start = _joint_point(human, q0, mid)
    for _ in range(20):
        target = start + rng.uniform(*reach) * _unit(rng.normal(size=3) - np.array([0.0, 0.0, 2.0]))
        pole = start + 2.0 * _unit(rng.normal(size=3))
        q = solve_two_bone(human, q0, root, mid, tip, target, pole)
        hip = _joint_point(human, q, mid)
        knee, ankle = human.fk(q, mid)[:3, 3], human.fk(q, tip)[:3, 3]
        assert np.linalg.norm(ankle - target) < 1e-9
        assert pole_angle(hip, knee, ankle, pole) < 1e-6  # [rad]
        changed = np.flatnonzero(q != q0)
        assert hinge_dof in changed and len(changed) <= 4


def _joint_point(model: kinetree.Model, q: np.ndarray, mid: str) -> np.ndarray:
    """The ball joint's point: the origin of the link above the hinge's link."""
    k = model.frame_index(mid)
    parent = int(model.parent[k])
    while model.hidden[parent]:
        parent = int(model.parent[parent])
    return model.fk(q, model.node_names[parent])[:3, 3]


def test_two_bone_on_a_quaternion_ball() -> None:
    b = ModelBuilder("leg", root="hips")
    b.add_joint("hip", "hips", "thigh", type="ball", origin=translation([0, -0.1, 0]))
    b.add_joint("knee", "thigh", "shin", axis="y", origin=translation([0, 0, -0.45]))
    b.add_frame("ankle", "shin", origin=translation([0, 0, -0.42]))
    m = b.build()
    q0 = m.neutral()
    q0[m.joint_indices("knee")] = 0.3
    target, pole = np.array([0.2, -0.05, -0.6]), np.array([1.0, 0.3, -0.3])
    q = solve_two_bone(m, q0, "hips", "shin", "ankle", target, pole)
    hip, knee, ankle = (m.fk(q, f)[:3, 3] for f in ("thigh", "shin", "ankle"))
    assert np.linalg.norm(ankle - target) < 1e-12
    assert pole_angle(hip, knee, ankle, pole) < 1e-9
    assert abs(np.linalg.norm(q[m.q_slice("hip")]) - 1.0) < 1e-12
    with pytest.raises(UnsupportedError, match="the link of the knee or elbow"):
        solve_two_bone(m, q0, "hips", "thigh", "ankle", target, pole)


def test_fabrik_hinges_keep_the_chain_in_its_plane() -> None:
    pts = np.array([[0.0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 0]])
    z = np.array([0.0, 0.0, 1.0])
    for target in ([1.5, 1.5, 0.0], [1.5, 1.5, 0.5], [-1.0, 0.5, 2.0]):
        p, _ = fabrik_points(pts, np.array(target), hinges={0: z, 1: z, 2: z})
        assert np.abs(p[:, 2]).max() < 1e-12  # every bone stays normal to its hinge axis
        np.testing.assert_allclose(np.linalg.norm(np.diff(p, axis=0), axis=1), 1.0, atol=1e-12)
    p, _ = fabrik_points(pts, np.array([1.5, 1.5, 0.0]), hinges={0: z, 1: z, 2: z})
    assert np.linalg.norm(p[-1] - [1.5, 1.5, 0.0]) < 1e-6  # in the plane: reached


def test_fabrik_cones_bound_every_bend() -> None:
    pts = np.array([[0.0, 0, 0], [0, 0, -1], [0, 0, -2], [0, 0, -3]])
    rng = np.random.default_rng(2)
    for _ in range(20):
        target = rng.normal(size=3) * 2.0
        limit = rng.uniform(10, 70) * D
        p, _ = fabrik_points(pts, target, cones={0: limit, 1: limit, 2: limit})
        d = np.diff(p, axis=0)
        d /= np.linalg.norm(d, axis=1)[:, None]
        assert math.acos(min(1.0, -d[0, 2])) <= limit + 1e-9  # the first about its start
        bends = np.arccos(np.clip(np.sum(d[1:] * d[:-1], axis=1), -1, 1))
        assert np.all(bends <= limit + 1e-9)  # the others about the bone before them


def test_fabrik_on_the_humanoid_honours_elbow_and_cone() -> None:
    human = kinetree.load("humanoid")
    chest = human.fk(human.neutral(), "chest")[:3, 3]
    rng = np.random.default_rng(3)
    for _ in range(10):
        goal = chest + rng.uniform([-0.2, -0.7, -0.7], [0.6, 0.1, 0.4])
        r = human.ik(Position(goal), "hand_r", active="right_arm", method="fabrik")
        sw, _ = human.swing_twist_angles(r.q, "shoulder_r")
        assert sw <= 150 * D + 1e-9 and human.within_limits(r.q)
