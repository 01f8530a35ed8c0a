"""Body parts from joint names and the tree: CMU, pybvh's standard skeleton, Mixamo-style
prefixes, the built-in humanoid, and names that must not be taken for a limb."""

from __future__ import annotations

from pathlib import Path

import pytest

import kinetree
from kinetree import ModelBuilder
from kinetree.io.body_parts import ROLES, find_body_parts, name_tokens, side_of

DATA = Path(__file__).parent / "data" / "bvh"


@pytest.mark.parametrize(
    ("name", "tokens", "side"),
    [
        ("mixamorig:LeftUpLeg", ("left", "up", "leg"), "l"),
        ("LHipJoint", ("l", "hip", "joint"), "l"),
        ("UpperArm_R", ("upper", "arm", "r"), "r"),
        ("Bip01 L Thigh", ("bip", "01", "l", "thigh"), "l"),
        ("right_ankle_roll_link", ("right", "ankle", "roll", "link"), "r"),
        ("Spine1", ("spine", "1"), None),
    ],
)
def test_tokens_and_sides(name: str, tokens: tuple[str, ...], side: str | None) -> None:
    assert name_tokens(name) == tokens
    assert side_of(name) == side


def test_cmu_skeleton() -> None:
    parts = find_body_parts(kinetree.read_bvh(DATA / "cmu_12_01_walk.bvh").model)
    assert set(parts) == set(ROLES)
    assert parts["pelvis"] == "Hips"
    assert parts["spine"] == "LowerBack"
    assert parts["chest"] == "Spine1"
    assert (parts["clavicle_l"], parts["shoulder_l"], parts["elbow_l"], parts["wrist_l"]) == (
        "LeftShoulder", "LeftArm", "LeftForeArm", "LeftHand",
    )  # fmt: skip
    assert (parts["hip_r"], parts["knee_r"], parts["ankle_r"], parts["toe_r"]) == (
        "RightUpLeg", "RightLeg", "RightFoot", "RightToeBase",
    )  # fmt: skip


def test_builtin_humanoid() -> None:
    parts = find_body_parts(kinetree.load("humanoid"))
    assert parts["shoulder_r"] == "upper_arm_r"
    assert parts["knee_l"] == "shin_l"
    assert parts["chest"] == "chest"
    assert parts["pelvis"] == "pelvis"


def test_out_of_order_and_numbered_names_are_dropped() -> None:
    b = ModelBuilder("robot", root="base")
    # "arm_left_7" says "arm" with nothing else of the limb: not a shoulder.
    b.add_joint("j1", "base", "arm_left_7_link")
    # A knee above its hip breaks the leg's order: both dropped (fewer than two left).
    b.add_joint("j2", "base", "left_knee_link")
    b.add_joint("j3", "left_knee_link", "left_thigh_link")
    parts = find_body_parts(b.build())
    assert parts == {}
