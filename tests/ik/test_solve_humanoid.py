"""Full-body IK on the humanoid: presets, several effectors at once, look-at.

World z-up, the figure faces +x, its right is -y. The pelvis is the (fixed) root.
"""

from __future__ import annotations

import numpy as np
import pytest

import kinetree
from ik_helpers import ik, model, pose_errors, position_errors, random_q
from kinetree import Direction, Orientation, Pose, Position

PRESETS = ("right_arm", "right_arm+spine", "above_hips")


@pytest.fixture(scope="module")
def human() -> kinetree.Model:
    return model("humanoid")


def _chest(h: kinetree.Model) -> np.ndarray:
    return h.fk(h.neutral(), "chest")[:3, 3]


def _reach_point(h: kinetree.Model) -> np.ndarray:
    """A point in front of the chest, a little to the right and up."""
    return _chest(h) + np.array([0.3, -0.1, 0.05])


@pytest.mark.parametrize("preset", PRESETS)
def test_right_hand_reaches_in_front_of_the_chest(human, preset: str) -> None:
    h = human
    q0 = h.neutral()
    p = _reach_point(h)
    res = ik(h, Position(p), frame="hand_r", active=preset, rest="neutral", q0=q0)
    assert res.success, res.message
    assert res.frames == ("hand_r",)
    assert position_errors(h, res.q, p, "hand_r") <= 1e-6
    # joints outside the preset keep their value exactly
    inactive = ~h.active_mask(preset)
    np.testing.assert_array_equal(res.q[inactive], q0[inactive])
    # the preset moved what it names and nothing else
    assert np.any(res.q[~inactive] != q0[~inactive])
    # feet and pelvis stay put
    for frame in ("foot_r", "foot_l", "pelvis"):
        np.testing.assert_array_equal(h.fk(res.q, frame), h.fk(q0, frame))
    # the left hand only moves when the spine does
    moved_left = not np.array_equal(h.fk(res.q, "hand_l"), h.fk(q0, "hand_l"))
    assert moved_left == (preset != "right_arm")


def test_presets_are_nested_and_keep_the_legs_out(human) -> None:
    h = human
    arm, spine, upper = (h.active_mask(p) for p in PRESETS)
    assert np.all(spine[arm]) and np.all(upper[spine])
    assert spine.sum() > arm.sum() and upper.sum() > spine.sum()
    assert not np.any(upper & h.active_mask("legs"))


def test_preset_from_another_start(human) -> None:
    """Same target from a random start within the limits; inactive joints keep it."""
    h = human
    q0 = random_q(h, 1, seed=61)[0]
    p = _reach_point(h)
    res = ik(
        h,
        Position(p),
        frame="hand_r",
        active="right_arm+spine",
        q0=q0,
        restarts=20,
        seed=0,
        time_budget=None,
    )
    assert res.success
    assert position_errors(h, res.q, p, "hand_r") <= 1e-6
    inactive = ~h.active_mask("right_arm+spine")
    np.testing.assert_array_equal(res.q[inactive], q0[inactive])


def test_four_effectors_at_once(human) -> None:
    h = human
    q0 = h.neutral()
    chest = _chest(h)
    # a reachable hand pose: where the right arm alone puts the hand at the point
    arm = ik(h, Position(_reach_point(h)), frame="hand_r", active="right_arm", rest="neutral")
    hand_r = h.fk(arm.q, "hand_r")
    hand_r[:3, 3] += [0.0, 0.0, 0.05]  # and a bit higher than the arm alone can go
    hand_l = chest + np.array([0.3, 0.1, 0.05])
    feet = {f: h.fk(q0, f) for f in ("foot_r", "foot_l")}
    targets = {
        "hand_r": Pose(hand_r),
        "hand_l": Position(hand_l),
        "foot_r": Pose(feet["foot_r"]),
        "foot_l": Pose(feet["foot_l"]),
    }
    res = ik(h, targets, q0=q0, rest="neutral", restarts=50, time_budget=None, seed=3)
    assert res.success, res.message
    assert res.frames == ("hand_r", "hand_l", "foot_r", "foot_l")
    assert res.position_error.shape == res.orientation_error.shape == (4,)
    pe, re = pose_errors(h, res.q, hand_r, "hand_r")
    assert pe <= 1e-6 and re <= 1e-6
    assert position_errors(h, res.q, hand_l, "hand_l") <= 1e-6
    for f, T in feet.items():
        pe, re = pose_errors(h, res.q, T, f)
        assert pe <= 1e-6 and re <= 1e-6
    np.testing.assert_array_equal(h.fk(res.q, "pelvis"), h.fk(q0, "pelvis"))


def test_four_effectors_with_a_pose_the_arm_cannot_hold_alone(human) -> None:
    """Hand pointing down in front of the chest: the solver may need restarts, and
    the feet must still hold to 1e-6."""
    h = human
    q0 = h.neutral()
    hand_r = h.fk(q0, "hand_r")
    hand_r[:3, 3] = _reach_point(h)
    feet = {f: h.fk(q0, f) for f in ("foot_r", "foot_l")}
    targets = {
        "hand_r": Pose(hand_r),
        "hand_l": Position(_chest(h) + np.array([0.3, 0.1, 0.05])),
        **{f: Pose(T) for f, T in feet.items()},
    }
    res = ik(h, targets, q0=q0, rest="neutral", time_budget=None, seed=0)
    assert res.success
    for f, T in feet.items():
        pe, re = pose_errors(h, res.q, T, f)
        assert pe <= 1e-6 and re <= 1e-6
    pe, re = pose_errors(h, res.q, hand_r, "hand_r")
    assert pe <= 1e-6 and re <= 1e-6


def test_both_hands_batched_positions(human) -> None:
    """A dict whose Position carries a batch (N, 3) broadcasts against a single one."""
    h = human
    base = _reach_point(h)
    right = base + np.array([[0.0, 0.0, 0.0], [0.05, 0.0, -0.05], [-0.05, -0.05, 0.05]])
    left = base * [1, -1, 1]
    res = ik(
        h,
        {"hand_r": Position(right), "hand_l": Position(left)},
        active="above_hips",
        rest="neutral",
    )
    assert res.q.shape == (3, h.dof)
    assert res.position_error.shape == (3, 2)
    assert np.all(res.success)
    assert position_errors(h, res.q, right, "hand_r").max() <= 1e-6
    assert position_errors(h, res.q, left, "hand_l").max() <= 1e-6


@pytest.mark.parametrize("active", [None, "neck"])
def test_head_looks_at_a_direction(human, active) -> None:
    h = human
    q0 = h.neutral()
    d = np.array([1.0, 0.3, 0.2])
    res = ik(h, Direction(d), frame="head", q0=q0, active=active)
    assert res.success
    assert res.position_error[0] == 0.0
    x_axis = h.fk(res.q, "head")[:3, 0]
    u = d / np.linalg.norm(d)
    assert np.arccos(np.clip(x_axis @ u, -1, 1)) <= 1e-6 + 1e-9
    if active == "neck":
        mask = h.active_mask("neck")
        np.testing.assert_array_equal(res.q[~mask], q0[~mask])


def test_look_at_with_another_axis_and_a_hand_target(human) -> None:
    """Direction on the head (its local z up, tilted) plus a right-hand position."""
    h = human
    up = np.array([0.2, -0.1, 1.0])
    p = _reach_point(h)
    res = ik(
        h,
        {"head": Direction(up, axis=[0, 0, 1]), "hand_r": Position(p)},
        active="above_hips",
        rest="neutral",
    )
    assert res.success
    z_axis = h.fk(res.q, "head")[:3, 2]
    cos = z_axis @ (up / np.linalg.norm(up))
    assert np.arccos(np.clip(cos, -1, 1)) <= 1e-6 + 1e-9
    assert position_errors(h, res.q, p, "hand_r") <= 1e-6


def test_orientation_only_target(human) -> None:
    h = human
    q_true = h.neutral()
    q_true[h.joint_indices("neck")] = [0.2, -0.3, 0.4]
    R = h.fk(q_true, "head")[:3, :3]
    res = ik(h, Orientation(R), frame="head", active="neck")
    assert res.success
    _, re = pose_errors(h, res.q, h.fk(q_true, "head"), "head")
    assert re <= 1e-6


def test_hand_target_with_only_the_other_arm_active_raises(human) -> None:
    h = human
    with pytest.raises(kinetree.KinetreeError, match="hand_r") as info:
        h.ik(Position(_reach_point(h)), frame="hand_r", active="left_arm")
    assert isinstance(info.value, kinetree.InvalidValueError)
    # the message says what would move it
    assert "shoulder_r" in str(info.value)
    with pytest.raises(kinetree.InvalidValueError, match="foot_r"):
        h.ik(
            {"hand_r": Position(_reach_point(h)), "foot_r": Pose(h.fk(h.neutral(), "foot_r"))},
            active="above_hips",
        )


def test_unreachable_hand_target(human) -> None:
    h = human
    far = _chest(h) + np.array([2.0, 0.0, 0.0])
    res = ik(h, Position(far), frame="hand_r", active="right_arm", max_iter=50, restarts=2)
    assert not res.success and not res.reachable
    assert "reach" in res.message
