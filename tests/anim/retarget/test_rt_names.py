"""Body parts as exporters write their names (any letter case, SMPL, Acclaim bones, a
caller's role map) and what retargeting says when names are not recognised: unmapped
limbs make a warning and a motion that is not good; a robot without humanoid body parts
and a skeleton with none are refused naming the problem.

Oracle: the roles are known from the skeletons' own documented layouts (CMU's cgspeed
names, SMPL's 24 joints, the ASF bones of CMU's Acclaim files); a limb that moves is
checked by FK of the retargeted motion.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import kinetree
from kinetree import ModelBuilder
from kinetree.anim import load_robot
from kinetree.body_parts import ROLES, find_body_parts
from kinetree.errors import InvalidValueError, UnknownNameError, UnsupportedError

TESTS = Path(__file__).resolve().parents[2]
CMU = TESTS / "data" / "bvh" / "cmu_12_01_walk.bvh"


def _renamed(tmp_path: Path, rename: dict[str, str] | None = None, case: str = "") -> Path:
    """The CMU walk (its first 120 frames) with joints renamed, or every name in one case."""
    text = CMU.read_text()

    def sub(m: re.Match[str]) -> str:
        name = m.group(2)
        if rename is not None:
            name = rename.get(name, name)
        elif case == "lower":
            name = name.lower()
        elif case == "upper":
            name = name.upper()
        return f"{m.group(1)}{name}"

    text = re.sub(r"^(\s*(?:ROOT|JOINT)\s+)(\S+)", sub, text, flags=re.M)
    out = tmp_path / f"walk_{case or 'renamed'}.bvh"
    out.write_text(text)
    return out


@pytest.fixture(scope="module")
def cmu_names() -> dict[str, str]:
    return find_body_parts(kinetree.read_bvh(CMU).model)


@pytest.mark.parametrize("case", ["lower", "upper"])
def test_names_in_one_letter_case(tmp_path: Path, case: str, cmu_names: dict[str, str]) -> None:
    parts = find_body_parts(kinetree.read_bvh(_renamed(tmp_path, case=case)).model)
    assert set(parts) == set(ROLES)
    want = {r: (n.lower() if case == "lower" else n.upper()) for r, n in cmu_names.items()}
    assert parts == want


def _skeleton(edges: list[tuple[str, str]]) -> kinetree.Model:
    b = ModelBuilder("skeleton", root=edges[0][0])
    for i, (parent, child) in enumerate(edges):
        b.add_joint(f"j{i}", parent, child, origin=np.eye(4))
    return b.build()


def test_smpl_ankle_and_ball_of_the_foot() -> None:
    """SMPL's tree: L_Ankle is the ankle, L_Foot (the ball of the foot) below it the toe."""
    edges = [("Pelvis", "Spine1"), ("Spine1", "Spine2"), ("Spine2", "Spine3"),
             ("Spine3", "Neck"), ("Neck", "Head")]  # fmt: skip
    for s in "LR":
        edges += [("Pelvis", f"{s}_Hip"), (f"{s}_Hip", f"{s}_Knee"), (f"{s}_Knee", f"{s}_Ankle"),
                  (f"{s}_Ankle", f"{s}_Foot"), ("Spine3", f"{s}_Collar"),
                  (f"{s}_Collar", f"{s}_Shoulder"), (f"{s}_Shoulder", f"{s}_Elbow"),
                  (f"{s}_Elbow", f"{s}_Wrist"), (f"{s}_Wrist", f"{s}_Hand")]  # fmt: skip
    parts = find_body_parts(_skeleton(edges))
    for s, side in (("L", "l"), ("R", "r")):
        assert parts[f"ankle_{side}"] == f"{s}_Ankle"
        assert parts[f"toe_{side}"] == f"{s}_Foot"
        assert parts[f"knee_{side}"] == f"{s}_Knee"
        assert parts[f"wrist_{side}"] == f"{s}_Wrist"
        assert parts[f"shoulder_{side}"] == f"{s}_Shoulder"
        assert parts[f"clavicle_{side}"] == f"{s}_Collar"
    assert parts["pelvis"] == "Pelvis"
    assert parts["head"] == "Head"


def test_acclaim_bones() -> None:
    """CMU's and HDM05's ASF bones, all lower case: lfemur, ltibia, lhumerus, lradius."""
    edges = [("root", "lowerback"), ("lowerback", "upperback"), ("upperback", "thorax"),
             ("thorax", "lowerneck"), ("lowerneck", "upperneck"),
             ("upperneck", "head")]  # fmt: skip
    for s in "lr":
        edges += [("root", f"{s}hipjoint"), (f"{s}hipjoint", f"{s}femur"),
                  (f"{s}femur", f"{s}tibia"), (f"{s}tibia", f"{s}foot"), (f"{s}foot", f"{s}toes"),
                  ("thorax", f"{s}clavicle"), (f"{s}clavicle", f"{s}humerus"),
                  (f"{s}humerus", f"{s}radius"), (f"{s}radius", f"{s}wrist"),
                  (f"{s}wrist", f"{s}hand")]  # fmt: skip
    parts = find_body_parts(_skeleton(edges))
    for s in "lr":
        assert parts[f"hip_{s}"] == f"{s}femur"
        assert parts[f"knee_{s}"] == f"{s}tibia"
        assert parts[f"ankle_{s}"] == f"{s}foot"
        assert parts[f"toe_{s}"] == f"{s}toes"
        assert parts[f"shoulder_{s}"] == f"{s}humerus"
        assert parts[f"elbow_{s}"] == f"{s}radius"
        assert parts[f"wrist_{s}"] == f"{s}wrist"
        assert parts[f"clavicle_{s}"] == f"{s}clavicle"
    assert parts["pelvis"] == "root"
    assert parts["chest"] == "thorax"


def _opaque_limbs() -> dict[str, str]:
    """CMU joint names -> names no rule reads, for every limb joint."""
    limbs = ("UpLeg", "Leg", "Foot", "ToeBase", "Shoulder", "Arm", "ForeArm", "Hand")
    out = {}
    for side in ("Left", "Right"):
        for k, limb in enumerate(limbs):
            out[f"{side}{limb}"] = f"b{side[0]}{k:02d}"
    return out


def test_a_callers_role_map(tmp_path: Path, cmu_names: dict[str, str]) -> None:
    model = kinetree.read_bvh(_renamed(tmp_path, _opaque_limbs())).model
    alone = find_body_parts(model)
    assert "ankle_l" not in alone and "wrist_r" not in alone
    given = {r: _opaque_limbs()[cmu_names[r]] for r in ("ankle_l", "ankle_r", "wrist_l", "wrist_r",
             "knee_l", "knee_r", "hip_l", "hip_r", "elbow_l", "elbow_r", "shoulder_l",
             "shoulder_r")}  # fmt: skip
    parts = find_body_parts(model, roles=given)
    for r, f in given.items():
        assert parts[r] == f
    assert parts["pelvis"] == "Hips"
    # The chest comes from the tree once the shoulders are known.
    assert parts["chest"] == "Spine1"
    with pytest.raises(InvalidValueError, match=r"'hand_l' is not a body part.*wrist_l"):
        find_body_parts(model, roles={"hand_l": "bL07"})
    with pytest.raises(UnknownNameError, match="'nope'"):
        find_body_parts(model, roles={"wrist_l": "nope"})
    with pytest.raises(InvalidValueError, match="more than one body part"):
        find_body_parts(model, roles={"wrist_l": "bL07", "wrist_r": "bL07"})


def test_old_import_path_still_works() -> None:
    from kinetree.io import body_parts as old

    assert old.find_body_parts is find_body_parts


# --- retargeting -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def humanoid() -> kinetree.Model:
    return load_robot("humanoid")


def _moves(motion: kinetree.anim.Motion, frame: str) -> float:
    """How far [m] a robot frame travels relative to the pelvis over the clip."""
    P = np.asarray(motion.model.fk(motion.q, frame))[:, :3, 3]
    B = np.asarray(motion.model.fk(motion.q, "pelvis"))[:, :3, 3]
    rel = P - B
    return float(np.linalg.norm(rel - rel[0], axis=1).max())


def test_unmapped_limbs_are_not_good(tmp_path: Path, humanoid: kinetree.Model) -> None:
    clip = kinetree.read_bvh(_renamed(tmp_path, _opaque_limbs())).slice(0, 60)
    with pytest.warns(UserWarning, match="not mapped.*stay still"):
        m = kinetree.retarget(clip, humanoid, source_scale=0.0254 / 0.45)
    q = m.metadata["quality"]
    assert q["good"] is False
    assert set(q["unmapped"]) >= {"wrist_l", "wrist_r", "ankle_l", "ankle_r"}
    assert any("not mapped" in w for w in q["warnings"])
    # The same clip with the limbs named by the caller: mapped, and the hands move.
    given = {"wrist_l": "bL07", "wrist_r": "bR07", "elbow_l": "bL06", "elbow_r": "bR06",
             "shoulder_l": "bL05", "shoulder_r": "bR05", "ankle_l": "bL02", "ankle_r": "bR02",
             "knee_l": "bL01", "knee_r": "bR01", "hip_l": "bL00", "hip_r": "bR00"}  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        m2 = kinetree.retarget(clip, humanoid, source_scale=0.0254 / 0.45, roles=given)
    assert m2.metadata["quality"]["unmapped"] == ()
    assert _moves(m2, "palm_l") > 0.05
    assert _moves(m2, "ankle_r") > 0.05


def test_lower_case_cmu_maps_every_limb(tmp_path: Path, humanoid: kinetree.Model) -> None:
    clip = kinetree.read_bvh(_renamed(tmp_path, case="lower")).slice(0, 60)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        m = kinetree.retarget(clip, humanoid, source_scale=0.0254 / 0.45)
    assert m.metadata["quality"]["unmapped"] == ()
    assert _moves(m, "ankle_l") > 0.05


def test_non_humanoid_robot_is_named(humanoid: kinetree.Model) -> None:
    clip = kinetree.read_bvh(CMU).slice(0, 10)
    with pytest.raises(UnsupportedError, match="robot 'panda' has no humanoid body parts"):
        kinetree.retarget(clip, "panda")


def test_nothing_recognised_is_named(tmp_path: Path, humanoid: kinetree.Model) -> None:
    model = kinetree.read_bvh(CMU).model
    opaque = {n: f"n{k:02d}" for k, n in enumerate(model.frame_names) if not n.endswith("_end")}
    clip = kinetree.read_bvh(_renamed(tmp_path, opaque)).slice(0, 10)
    with pytest.raises(InvalidValueError, match=r"no body parts of skeleton .* were recognised"):
        kinetree.retarget(clip, humanoid)
    with pytest.raises(InvalidValueError, match="pairs nothing"):
        kinetree.retarget(clip, humanoid, {})
