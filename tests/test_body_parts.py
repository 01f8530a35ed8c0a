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


def _skeleton(edges: list[tuple[str, str]]) -> kinetree.Model:
    b = ModelBuilder("skeleton", root=edges[0][0])
    for i, (parent, child) in enumerate(edges):
        b.add_joint(f"j{i}", parent, child)
    return b.build()


def test_daz_style_skeleton() -> None:
    """cgspeed's Daz-friendly CMU release: hip, abdomen, lCollar, lShldr, lButtock, lThigh."""
    edges = [("hip", "abdomen"), ("abdomen", "chest"), ("chest", "neck"), ("neck", "head")]
    for s in "lr":
        edges += [("chest", f"{s}Collar"), (f"{s}Collar", f"{s}Shldr"),
                  (f"{s}Shldr", f"{s}ForeArm"), (f"{s}ForeArm", f"{s}Hand"),
                  ("hip", f"{s}Buttock"), (f"{s}Buttock", f"{s}Thigh"),
                  (f"{s}Thigh", f"{s}Shin"), (f"{s}Shin", f"{s}Foot")]  # fmt: skip
    parts = find_body_parts(_skeleton(edges))
    assert (parts["pelvis"], parts["spine"], parts["chest"], parts["head"]) == (
        "hip", "abdomen", "chest", "head",
    )  # fmt: skip
    assert (parts["clavicle_l"], parts["shoulder_l"], parts["elbow_l"], parts["wrist_l"]) == (
        "lCollar", "lShldr", "lForeArm", "lHand",
    )  # fmt: skip
    assert (parts["hip_r"], parts["knee_r"], parts["ankle_r"]) == ("rThigh", "rShin", "rFoot")


def test_reallusion_skeleton_with_pelvis_beside_the_torso() -> None:
    """Character Creator's CC_Base_ names: the legs hang from CC_Base_Pelvis, the torso
    from CC_Base_Waist, both under CC_Base_Hip, which is the pelvis role."""
    edges = [("CC_Base_Hip", "CC_Base_Pelvis"), ("CC_Base_Hip", "CC_Base_Waist"),
             ("CC_Base_Waist", "CC_Base_Spine01"), ("CC_Base_Spine01", "CC_Base_Spine02"),
             ("CC_Base_Spine02", "CC_Base_Head")]  # fmt: skip
    for s in "LR":
        edges += [("CC_Base_Spine02", f"CC_Base_{s}_Clavicle"),
                  (f"CC_Base_{s}_Clavicle", f"CC_Base_{s}_Upperarm"),
                  (f"CC_Base_{s}_Upperarm", f"CC_Base_{s}_Forearm"),
                  (f"CC_Base_{s}_Forearm", f"CC_Base_{s}_Hand"),
                  ("CC_Base_Pelvis", f"CC_Base_{s}_Thigh"),
                  (f"CC_Base_{s}_Thigh", f"CC_Base_{s}_Calf"),
                  (f"CC_Base_{s}_Calf", f"CC_Base_{s}_Foot")]  # fmt: skip
    parts = find_body_parts(_skeleton(edges))
    assert (parts["pelvis"], parts["spine"], parts["chest"]) == (
        "CC_Base_Hip", "CC_Base_Waist", "CC_Base_Spine02",
    )  # fmt: skip
    assert parts["shoulder_r"] == "CC_Base_R_Upperarm"
    assert parts["knee_l"] == "CC_Base_L_Calf"
