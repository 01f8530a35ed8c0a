"""Character IK: swing-twist limits on ball joints, pinned frames, look-at."""

from __future__ import annotations

import numpy as np
import pytest

import kinetree
from kinetree import Direction, InvalidValueError, ModelBuilder, Position, UnknownNameError
from kinetree.spatial import translation

D = np.pi / 180


@pytest.fixture(scope="module")
def human() -> kinetree.Model:
    return kinetree.load("humanoid")


def test_humanoid_shoulders_and_hips_carry_swing_twist_limits(human: kinetree.Model) -> None:
    assert set(human.swing_twist) == {"shoulder_r", "shoulder_l", "hip_r", "hip_l"}
    sw, tw = human.swing_twist_angles(human.neutral(), "shoulder_r")
    assert sw < 10 * D and abs(tw) < 1e-12


def test_swing_twist_angles_against_a_hand_built_rotation() -> None:
    b = ModelBuilder("ball", root="base")
    b.add_ball_joint("ball", "base", "bone", "zxy", swing=1.0, twist=(-0.5, 0.5), bone_axis="z")
    m = b.build()
    # Pure twist about the bone (z): only the first axis turns.
    assert m.swing_twist_angles([0.3, 0.0, 0.0], "ball") == pytest.approx((0.0, 0.3), abs=1e-12)
    # Pure swing: a rotation about x tilts the z bone by that angle, no twist.
    assert m.swing_twist_angles([0.0, 0.4, 0.0], "ball") == pytest.approx((0.4, 0.0), abs=1e-12)
    # Swing of a composed rotation equals the angle between the bone and its image.
    q = np.array([0.2, 0.5, -0.3])
    R = m.fk(q, "bone")[:3, :3]
    swing = np.arccos(np.clip(R[:, 2] @ [0, 0, 1], -1, 1))
    assert m.swing_twist_angles(q, "ball")[0] == pytest.approx(swing, abs=1e-12)


@pytest.mark.parametrize("method", ["auto", "dls", "pinv", "ccd"])
def test_ik_results_respect_the_cone_and_twist(human: kinetree.Model, method: str) -> None:
    rng = np.random.default_rng(1)
    chest = human.fk(human.neutral(), "chest")[:3, 3]
    for _ in range(25):
        goal = chest + rng.uniform([-0.3, -0.9, -0.9], [0.9, 0.4, 0.7])
        r = human.ik(Position(goal), "hand_r", active="right_arm", method=method, restarts=2,
                     max_iter=200)  # fmt: skip
        sw, tw = human.swing_twist_angles(r.q, "shoulder_r")
        assert sw <= 150 * D + 1e-9 and -80 * D - 1e-9 <= tw <= 80 * D + 1e-9
        assert human.within_limits(r.q)


def test_cone_blocks_a_pose_the_box_limits_alone_allow() -> None:
    def arm(swing: float | None) -> kinetree.Model:
        b = ModelBuilder("arm", root="base")
        limits = [(-3.0, 3.0)] * 3
        if swing is None:
            b.add_ball_joint("shoulder", "base", "upper", "xyz", limits=limits)
        else:
            b.add_ball_joint("shoulder", "base", "upper", "xyz", limits=limits, swing=swing,
                             bone_axis="-z")  # fmt: skip
        b.add_frame("hand", "upper", origin=translation([0, 0, -0.5]))
        return b.build()

    goal = np.array([0.0, 0.5, 0.0])  # the hand straight out sideways: a 90 degree swing
    free = arm(None).ik(Position(goal))
    coned = arm(60 * D)
    limited = coned.ik(Position(goal), restarts=3)
    assert free.success
    assert not limited.success and limited.reachable  # reachable by length, not by the cone
    assert coned.swing_twist_angles(limited.q, "shoulder")[0] <= 60 * D + 1e-9
    # the closest allowed hand position is on the cone's rim
    hand = coned.fk(limited.q)[:3, 3]
    assert np.degrees(np.arccos(-hand[2] / np.linalg.norm(hand))) == pytest.approx(60, abs=0.5)


def test_swing_twist_is_off_without_respect_limits() -> None:
    b = ModelBuilder("arm", root="base")
    b.add_ball_joint("shoulder", "base", "upper", "xyz", swing=30 * D, bone_axis="-z")
    b.add_frame("hand", "upper", origin=translation([0, 0, -0.5]))
    m = b.build()
    r = m.ik(Position([0.0, 0.5, 0.0]), respect_limits=False)
    assert r.success and m.swing_twist_angles(r.q, "shoulder")[0] > 80 * D


def test_bad_swing_twist_arguments() -> None:
    b = ModelBuilder("x", root="base")
    with pytest.raises(InvalidValueError, match="three axes"):
        b.add_ball_joint("j", "base", "c", "xy", swing=1.0)
    with pytest.raises(InvalidValueError, match="swing"):
        b.add_ball_joint("j", "base", "c", "xyz", swing=4.0)
    with pytest.raises(InvalidValueError, match="twist"):
        b.add_ball_joint("j", "base", "c", "xyz", twist=(0.5, -0.5))
    m = kinetree.load("humanoid")
    with pytest.raises(UnknownNameError, match="shoulder_r"):
        m.swing_twist_angles(m.neutral(), "elbow_r")


def test_pinned_feet_stay_planted_while_the_hand_reaches(human: kinetree.Model) -> None:
    q0 = human.neutral()
    goal = human.fk(q0, "chest")[:3, 3] + [0.5, -0.3, -0.4]
    r = human.ik(Position(goal), "hand_r", pin=["foot_r", "foot_l"], q0=q0, rest="neutral")
    assert r.success and r.frames == ("hand_r", "foot_r", "foot_l")
    for f in ("foot_r", "foot_l"):
        np.testing.assert_allclose(human.fk(r.q, f), human.fk(q0, f), atol=1e-6)


def test_pin_errors(human: kinetree.Model) -> None:
    with pytest.raises(InvalidValueError, match="both pinned and a target"):
        human.ik(Position([0.3, 0, 1]), "hand_r", pin="hand_r")
    with pytest.raises(UnknownNameError, match="frame 'toe'"):
        human.ik(Position([0.3, 0, 1]), "hand_r", pin=["toe"])


def test_head_look_at(human: kinetree.Model) -> None:
    d = np.array([1.0, -0.4, -0.3])
    r = human.ik(Direction(d, axis=[1, 0, 0]), "head", active=["neck"], tol=1e-9)
    assert r.success
    fwd = human.fk(r.q, "head")[:3, 0]
    np.testing.assert_allclose(fwd, d / np.linalg.norm(d), atol=1e-8)
