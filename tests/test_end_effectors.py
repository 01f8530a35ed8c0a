"""Default end effectors of URDF robots: the tips of the longest movable chains."""

from __future__ import annotations

import re
import warnings

import pytest

from kinetree.builder import NOT_END_EFFECTOR, ModelBuilder
from kinetree.io import load_urdf
from robot_data import example_robot_data

CASES = [
    ("talos_data/robots/talos_full_v2.urdf",
     ["gripper_left", "gripper_right", "left_sole", "right_sole"]),
    ("g1_description/urdf/g1_29dof_rev_1_0.urdf",
     ["left_.*hand", "right_.*hand", "left_ankle", "right_ankle"]),
    ("g1_description/urdf/g1_29dof_with_hand_rev_1_0.urdf",
     ["left_hand", "right_hand", "left_ankle", "right_ankle"]),
    ("anymal_b_simple_description/robots/anymal.urdf",
     ["LF_FOOT", "RF_FOOT", "LH_FOOT", "RH_FOOT"]),
    ("panda_description/urdf/panda.urdf", ["panda_hand"]),
    ("ur_description/urdf/ur5_robot.urdf", ["ee_link|tool0"]),
]  # fmt: skip


@pytest.mark.parametrize(("path", "patterns"), CASES, ids=[c[0].split("/")[0] for c in CASES])
def test_hands_and_feet_never_sensors(path: str, patterns: list[str]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = load_urdf(example_robot_data() / path, meshes=False)
    ee = m.end_effectors
    assert len(ee) == len(patterns), ee
    for pattern in patterns:
        assert sum(1 for f in ee if re.match(pattern, f)) == 1, (pattern, ee)
    assert not any(NOT_END_EFFECTOR.search(f) for f in ee), ee


def tips(b: ModelBuilder) -> tuple[str, ...]:
    b.default_end_effectors = "tips"
    return b.build().end_effectors


def test_sensor_frames_only_when_nothing_else_is_left() -> None:
    b = ModelBuilder("r", root="base")
    b.add_joint("j1", "base", "link1").add_joint("j2", "link1", "link2")
    b.add_frame("tool", "link2").add_frame("camera_optical", "link2").add_frame("imu", "base")
    b.add_frame("base_inertia", "base")
    assert tips(b) == ("tool",)
    b = ModelBuilder("r", root="base").add_joint("j1", "base", "link1")
    b.add_frame("imu_link", "link1")
    assert tips(b) == ("link1",)  # the deepest non-sensor frame of the branch
    b = ModelBuilder("r", root="base").add_frame("imu_link", "base")
    assert tips(b) == ("imu_link",)  # no DoF, nothing else


def test_fingers_make_one_hand_short_branches_dropped() -> None:
    b = ModelBuilder("h", root="pelvis")
    for side in ("l", "r"):
        prev = "pelvis"
        for k in range(6):
            b.add_joint(f"{side}_leg{k}", prev, f"{side}_leg{k}_link")
            prev = f"{side}_leg{k}_link"
        b.add_frame(f"{side}_sole", prev)
        prev = "pelvis"
        for k in range(7):
            b.add_joint(f"{side}_arm{k}", prev, f"{side}_arm{k}_link")
            prev = f"{side}_arm{k}_link"
        b.add_frame(f"{side}_palm", prev)
        for finger in ("thumb", "index"):
            b.add_joint(f"{side}_{finger}0", prev, f"{side}_{finger}0_link")
            b.add_joint(f"{side}_{finger}1", f"{side}_{finger}0_link", f"{side}_{finger}_tip")
    b.add_joint("neck", "pelvis", "head")
    assert set(tips(b)) == {"l_sole", "r_sole", "l_palm", "r_palm"}
    b.default_end_effectors = "leaves"  # the builder's own default: every leaf frame
    assert "head" in b.build().end_effectors
