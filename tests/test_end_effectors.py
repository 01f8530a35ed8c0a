"""Default end effectors of URDF robots: the tips of the longest movable chains."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

from kinetree.builder import NOT_END_EFFECTOR, ModelBuilder
from kinetree.io import load_urdf
from kinetree.spatial import translation
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


def _limb(b: ModelBuilder, name: str, parent: str, n: int, start: tuple[float, float, float],
          step: tuple[float, float, float]) -> str:  # fmt: skip
    """``n`` revolute joints from ``parent``: the first link at ``start``, each next one
    ``step`` further [m]; returns the last link."""
    prev = parent
    for k in range(n):
        link = f"{name}{k}"
        b.add_joint(f"{name}_j{k}", prev, link, axis="xyz"[k % 3],
                    origin=translation(start if k == 0 else step))  # fmt: skip
        prev = link
    return prev


def humanoid(order: tuple[str, ...], head_dof: int = 3) -> ModelBuilder:
    """Pelvis -> waist (3) -> chest with two 7-DoF arms and a head; two 6-DoF legs.
    ``order``: which limbs the file lists first (the tree order)."""
    b = ModelBuilder("toy_humanoid", root="pelvis")
    limbs = {
        "l_leg": lambda: _limb(b, "l_leg", "pelvis", 6, (0.0, 0.1, -0.05), (0.0, 0.0, -0.15)),
        "r_leg": lambda: _limb(b, "r_leg", "pelvis", 6, (0.0, -0.1, -0.05), (0.0, 0.0, -0.15)),
        "l_arm": lambda: _limb(b, "l_arm", "chest", 7, (0.0, 0.2, 0.3), (0.0, 0.0, -0.08)),
        "r_arm": lambda: _limb(b, "r_arm", "chest", 7, (0.0, -0.2, 0.3), (0.0, 0.0, -0.08)),
        "head": lambda: _limb(b, "head", "chest", head_dof, (0.0, 0.0, 0.4), (0.0, 0.0, 0.02)),
    }
    tips = {"l_leg": "l_sole", "r_leg": "r_sole", "l_arm": "l_hand", "r_arm": "r_hand",
            "head": "gaze"}  # fmt: skip
    chest_built = False
    for limb in order:
        if limb in ("l_arm", "r_arm", "head") and not chest_built:
            last = _limb(b, "waist", "pelvis", 3, (0.0, 0.0, 0.1), (0.0, 0.0, 0.05))
            b.add_joint("chest_fixed", last, "chest", type="fixed")
            chest_built = True
        b.add_frame(tips[limb], limbs[limb](), origin=translation([0.0, 0.0, -0.05]))
    b.default_end_effectors = "tips"
    return b


HANDS_THEN_FEET = ("r_hand", "l_hand", "r_sole", "l_sole")


@pytest.mark.parametrize(
    "order",
    [
        ("l_leg", "r_leg", "l_arm", "r_arm", "head"),
        ("head", "r_arm", "l_arm", "r_leg", "l_leg"),
        ("l_arm", "head", "r_leg", "r_arm", "l_leg"),
    ],
)
def test_hands_then_feet_right_first_whatever_the_file_order(order: tuple[str, ...]) -> None:
    """One order for every humanoid (GR1 listed its feet first, GR2 its hands), and a
    head between the arms is not an end effector however many DoF it has."""
    for head_dof in (2, 3, 5):
        assert humanoid(order, head_dof).build().end_effectors == HANDS_THEN_FEET


def test_quadruped_front_first_and_a_tail_is_no_limb() -> None:
    b = ModelBuilder("toy_dog", root="trunk")
    legs = {"HL": (-0.3, 0.1), "FR": (0.3, -0.1), "HR": (-0.3, -0.1), "FL": (0.3, 0.1)}
    for leg, (x, y) in legs.items():
        b.add_frame(f"{leg}_foot", _limb(b, leg, "trunk", 3, (x, y, 0.0), (0.0, 0.0, -0.2)))
    _limb(b, "tail", "trunk", 2, (-0.35, 0.0, 0.05), (-0.1, 0.0, 0.0))
    b.default_end_effectors = "tips"
    assert b.build().end_effectors == ("FR_foot", "FL_foot", "HR_foot", "HL_foot")


def _fourier_urdfs() -> list[Path]:
    try:
        import fourier_robot_descriptions
    except ImportError:
        return []
    root = Path(fourier_robot_descriptions.__file__).parent / "assets"
    return sorted(p for p in root.rglob("*.urdf") if re.match(r"gr\d", p.name))


@pytest.mark.skipif(not _fourier_urdfs(), reason="fourier-robot-descriptions is not installed")
def test_fourier_humanoids_agree_on_hands_then_feet() -> None:
    """GR1 (head on the waist), GR2 and GR3, with and without dexterous hands: four end
    effectors, right hand, left hand, right foot, left foot."""
    seen = 0
    for path in _fourier_urdfs():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = load_urdf(path, meshes=False)
        ee = m.end_effectors
        assert len(ee) == 4, (path.name, ee)
        assert not any("head" in f for f in ee), (path.name, ee)
        hands, feet = ee[:2], ee[2:]
        assert all(re.search("end_effector|hand", f) for f in hands), (path.name, ee)
        assert all("foot" in f for f in feet), (path.name, ee)
        assert all(re.match("r|R", h) for h in (hands[0], feet[0])), (path.name, ee)
        seen += 1
    assert seen >= 6
