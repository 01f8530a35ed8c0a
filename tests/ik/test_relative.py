"""Targets and FK relative to a chain base (``base=``), as TRAC-IK and MoveIt users give them.

Oracles: the relative pose from two world poses and ``numpy.linalg.inv``; its invariance
under the joints above the base; FK of the solution read in the base frame.
"""

from __future__ import annotations

import numpy as np
import pytest

import kinetree as kt
from kinetree import Orientation, Pose, Position
from kinetree.errors import UnknownNameError, UnsupportedError
from kinetree.spatial import rot_z, translation
from robot_data import example_robot_data

TOL = 1e-9  # [m] and rotation-matrix entries


def ur5_from_urdf() -> kt.Model:
    """ROS-Industrial's UR5 as example-robot-data ships it (skipped without it)."""
    return kt.load(example_robot_data() / "ur_description" / "urdf" / "ur5_robot.urdf")


@pytest.fixture(scope="module")
def human() -> kt.Model:
    return kt.load("humanoid")


def test_fk_in_a_base_frame_is_the_relative_pose(human: kt.Model) -> None:
    rng = np.random.default_rng(0)
    Q = human.random_configuration(5, rng=rng)
    T_base_hand = human.fk(Q, "hand_r", base="chest")
    want = np.linalg.inv(human.fk(Q, "chest")) @ human.fk(Q, "hand_r")
    assert T_base_hand.shape == (5, 4, 4)
    assert np.max(np.abs(T_base_hand - want)) <= TOL
    # joints above the chest move chest and hand alike: the relative pose stays
    moved = Q.copy()
    moved[:, human.joint_indices(human.chain("chest"))] += 0.4
    assert np.max(np.abs(human.fk(moved, "hand_r", base="chest") - T_base_hand)) <= TOL
    # a base that is not an ancestor works too (hand seen from the other hand)
    rel = human.fk(Q[0], "hand_r", base="hand_l")
    assert np.allclose(rel, np.linalg.inv(human.fk(Q[0], "hand_l")) @ human.fk(Q[0], "hand_r"))
    with pytest.raises(UnknownNameError, match="frames are"):
        human.fk(Q[0], "hand_r", base="chst")


def test_ik_target_in_the_chain_base_moves_only_the_chain(human: kt.Model) -> None:
    """The TRAC-IK call: a pose of the hand in the chest frame; the spine is bent at q0."""
    rng = np.random.default_rng(1)
    q0 = human.random_configuration(rng=rng)
    chain = human.joint_indices(human.chain("hand_r", "chest"))
    for _ in range(5):
        q_goal = q0.copy()
        q_goal[chain] = human.random_configuration(rng=rng)[chain]
        T_chest_hand = human.fk(q_goal, "hand_r", base="chest")
        r = human.ik(T_chest_hand, "hand_r", base="chest", q0=q0)
        assert r.success
        reached = human.fk(r.q, "hand_r", base="chest")
        assert np.max(np.abs(reached[:3, 3] - T_chest_hand[:3, 3])) <= 1e-5
        assert np.max(np.abs(reached[:3, :3] - T_chest_hand[:3, :3])) <= 1e-3
        others = np.setdiff1d(np.arange(human.nq), chain)
        assert np.array_equal(r.q[others], q0[others])  # only the chain moved


def test_ik_in_a_turned_base_of_a_urdf_arm() -> None:
    """ROS-Industrial's UR5 has a ``base`` frame turned by pi about z against
    ``base_link``: targets there are not world targets."""
    arm = ur5_from_urdf()
    rng = np.random.default_rng(2)
    lo, hi = arm.limits[:, 0], arm.limits[:, 1]
    for method in ("auto", "analytic"):
        q = rng.uniform(lo, hi)
        T_base_tool = arm.fk(q, "tool0", base="base")
        assert not np.allclose(T_base_tool, arm.fk(q, "tool0"))
        r = arm.ik(T_base_tool, "tool0", base="base", method=method)
        assert r.success
        assert np.max(np.abs(arm.fk(r.q, "tool0", base="base") - T_base_tool)) <= 1e-5
    # positions, orientations and batches are moved as well
    Q = rng.uniform(lo, hi, (4, 6))
    p = arm.fk(Q, "tool0", base="base")[:, :3, 3]
    r = arm.ik(Position(p), "tool0", base="base")
    assert np.all(r.success)
    assert np.max(np.abs(arm.fk(r.q, "tool0", base="base")[:, :3, 3] - p)) <= 1e-5
    R = arm.fk(Q[0], "tool0", base="base")[:3, :3]
    r = arm.ik(Orientation(R), "tool0", base="base")
    assert r.success and np.allclose(arm.fk(r.q, "tool0", base="base")[:3, :3], R, atol=1e-3)


def test_masks_on_a_turned_base_are_refused_uniform_ones_kept() -> None:
    arm = ur5_from_urdf()
    T = arm.fk(arm.neutral(), "tool0", base="base")
    with pytest.raises(UnsupportedError, match="world axes"):
        arm.ik(Pose(T, position_mask=[True, True, False]), "tool0", base="base")
    r = arm.ik(Pose(T, orientation_weight=0.5), "tool0", base="base")
    assert r.success


def test_active_joints_that_move_the_base_are_refused(human: kt.Model) -> None:
    T = human.fk(human.neutral(), "hand_r", base="chest")
    with pytest.raises(UnsupportedError, match="chest_x") as info:
        human.ik(T, "hand_r", base="chest", active="right_arm+spine")
    assert "relative pose" in str(info.value)
    with pytest.raises(UnsupportedError, match="hangs below 'pelvis'"):
        human.ik(np.eye(4), "pelvis", base="chest")
    with pytest.raises(UnknownNameError):
        human.ik(T, "hand_r", base="nowhere")


def test_several_targets_share_the_base(human: kt.Model) -> None:
    rng = np.random.default_rng(4)
    q_goal = human.random_configuration(rng=rng)
    goals = {f: human.fk(q_goal, f, base="chest") for f in ("hand_r", "hand_l")}
    q0 = human.random_configuration(rng=rng)
    r = human.ik(
        {"hand_r": Position(goals["hand_r"][:3, 3]), "hand_l": Pose(goals["hand_l"])},
        base="chest", q0=q0,
    )  # fmt: skip
    assert r.success
    assert np.allclose(human.fk(r.q, "hand_r", base="chest")[:3, 3], goals["hand_r"][:3, 3],
                       atol=1e-5)  # fmt: skip
    assert np.allclose(human.fk(r.q, "hand_l", base="chest"), goals["hand_l"], atol=1e-3)
    spine = human.joint_indices(human.chain("chest"))
    assert np.array_equal(r.q[spine], q0[spine])


def test_a_world_offset_base_is_exact_for_a_built_arm() -> None:
    """An arm mounted on a pedestal turned and raised against the world."""
    b = kt.ModelBuilder("mounted", root="world")
    b.add_joint("mount", "world", "pedestal", type="fixed",
                origin=translation([1.0, -2.0, 0.5]) @ rot_z(2.0))  # fmt: skip
    b.add_joint("j1", "pedestal", "l1", axis="z", limits=(-3.0, 3.0))
    b.add_joint("j2", "l1", "l2", axis="y", origin=translation([0.0, 0.0, 0.3]), limits=(-3, 3))
    b.add_joint("j3", "l2", "l3", axis="y", origin=translation([0.0, 0.0, 0.4]), limits=(-3, 3))
    b.add_frame("tip", "l3", origin=translation([0.0, 0.0, 0.35]))
    arm = b.build()
    q = np.array([0.7, 0.4, -0.9])
    p_pedestal_tip = arm.fk(q, "tip", base="pedestal")[:3, 3]
    r = arm.ik(Position(p_pedestal_tip), "tip", base="pedestal")
    assert r.success
    assert np.allclose(arm.fk(r.q, "tip", base="pedestal")[:3, 3], p_pedestal_tip, atol=1e-6)
    # the same numbers as a world target miss by the mount's offset
    wrong = arm.fk(arm.ik(Position(p_pedestal_tip), "tip").q, "tip", base="pedestal")
    assert np.linalg.norm(wrong[:3, 3] - p_pedestal_tip) > 0.5


def test_closed_form_branches_in_a_base_frame() -> None:
    arm = ur5_from_urdf()
    q = np.array([0.4, -1.2, 1.1, -0.3, 0.9, 2.0])
    T_base_tool = arm.fk(q, "tool0", base="base")
    Q = arm.ik_all(T_base_tool, "tool0", base="base")
    assert Q.shape[0] >= 1
    assert np.max(np.abs(arm.fk(Q, "tool0", base="base") - T_base_tool)) <= TOL
    assert np.min(np.max(np.abs(np.angle(np.exp(1j * (Q - q)))), axis=1)) <= 1e-8
    with pytest.raises(UnsupportedError, match="base 'shoulder_link' moves"):
        arm.ik_all(np.eye(4), "tool0", base="shoulder_link")
    with pytest.raises(UnsupportedError, match="CPU only"):
        arm.ik(T_base_tool, "tool0", base="base", device="cuda")
