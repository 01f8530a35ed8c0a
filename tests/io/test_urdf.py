"""URDF loading (kinetree.io.load_urdf, kinetree.load): structure, joint types, bad files.

URDFs are written inline (or into tmp_path) so each test shows the XML it reads.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import numpy as np
import pytest

import kinetree
from kinetree import (
    FileFormatError,
    InvalidValueError,
    KinetreeError,
    ModelStructureError,
    UnknownNameError,
    UnsupportedError,
    models,
)
from kinetree.io import load_urdf
from kinetree.spatial import rpy_to_matrix

PI = np.pi
LIMIT = '<limit lower="-1" upper="1" effort="1" velocity="1"/>'


def robot(links: list[str], joints: list[tuple[str, str, str, str]], name: str = "r") -> str:
    """A URDF string: ``joints`` are (name, type, parent, child), axis z, limits +-1."""
    body = "".join(f'<link name="{lk}"/>' for lk in links)
    for jn, typ, parent, child in joints:
        body += (
            f'<joint name="{jn}" type="{typ}"><parent link="{parent}"/><child link="{child}"/>'
            f'<axis xyz="0 0 1"/>{LIMIT}</joint>'
        )
    return f'<?xml version="1.0"?>\n<robot name="{name}">{body}</robot>'


def Rz(t: float) -> np.ndarray:
    c, s = np.cos(t), np.sin(t)
    return np.array([[c, -s, 0, 0], [s, c, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]])


def Ry(t: float) -> np.ndarray:
    c, s = np.cos(t), np.sin(t)
    return np.array([[c, 0, s, 0], [0, 1, 0, 0], [-s, 0, c, 0], [0, 0, 0, 1.0]])


def T(xyz, rpy=(0.0, 0.0, 0.0)) -> np.ndarray:
    out = np.eye(4)
    out[:3, :3] = rpy_to_matrix(rpy)
    out[:3, 3] = xyz
    return out


# --- a well-formed arm ---------------------------------------------------------------------------

ARM = """<?xml version="1.0" encoding="utf-8"?>
<!-- a small arm: continuous base, revolute shoulder, prismatic slide, fixed tool -->
<robot name="test_arm">
  <link name="base_link">
    <visual><geometry><mesh filename="package://no_such_package/meshes/base.stl"/></geometry></visual>
    <collision><geometry><mesh filename="package://no_such_package/meshes/base.dae"/></geometry></collision>
  </link>
  <link name="turret"><visual><geometry><mesh filename="file:///no/such/file.obj"/></geometry></visual></link>
  <link name="upper"><visual><geometry><box size="0.1 0.1 0.5"/></geometry></visual></link>
  <link name="slider"/>
  <link name="tool"/>
  <link name="camera"/>
  <joint name="base_yaw" type="continuous">
    <parent link="base_link"/><child link="turret"/>
    <origin xyz="0 0 0.2" rpy="0 0 0"/>
    <axis xyz="0 0 1"/>
  </joint>
  <joint name="shoulder" type="revolute">
    <parent link="turret"/><child link="upper"/>
    <origin xyz="0.05 0 0.1" rpy="0.3 -0.2 0.5"/>
    <axis xyz="0 2 0"/>
    <limit lower="-1.5" upper="2.0" effort="10" velocity="1"/>
  </joint>
  <joint name="slide" type="prismatic">
    <parent link="upper"/><child link="slider"/>
    <origin xyz="0 0 0.5"/>
    <axis xyz="0 0 1"/>
    <limit lower="0.0" upper="0.25" effort="10" velocity="1"/>
  </joint>
  <joint name="tool_mount" type="fixed">
    <parent link="slider"/><child link="tool"/>
    <origin xyz="0.1 0 0" rpy="0 1.5707963267948966 0"/>
  </joint>
  <joint name="camera_mount" type="fixed">
    <parent link="turret"/><child link="camera"/>
    <origin xyz="0 0.1 0"/>
  </joint>
</robot>
"""


@pytest.fixture
def arm_file(urdf_dir: Path) -> Path:
    p = urdf_dir / "test_arm.urdf"
    p.write_text(ARM)
    return p


def test_urdf_structure(arm_file: Path) -> None:
    m = load_urdf(arm_file)
    assert m.name == "test_arm"
    assert m.joint_names == ("base_yaw", "shoulder", "slide")  # fixed joints have no DoF
    assert m.frame_names[0] == "base_link"
    assert set(m.frame_names) == {"base_link", "turret", "upper", "slider", "tool", "camera"}
    assert m.end_effectors == ("tool",)  # the movable tip; never a camera
    assert m.metadata["source"] == str(arm_file)


def test_urdf_limits_continuous_revolute_prismatic(arm_file: Path) -> None:
    m = load_urdf(arm_file)
    np.testing.assert_array_equal(m.limits, [[-np.inf, np.inf], [-1.5, 2.0], [0.0, 0.25]])
    np.testing.assert_array_equal(m.continuous, [True, False, False])
    assert m.within_limits(m.neutral())
    np.testing.assert_array_equal(m.neutral(), [0.0, 0.0, 0.0])


def test_urdf_fk_by_hand(arm_file: Path, rng: np.random.Generator) -> None:
    m = load_urdf(arm_file)
    for yaw, sh, sl in m.random_configuration(20, rng):
        # URDF origin rpy is Rz(yaw) Ry(pitch) Rx(roll); axis "0 2 0" is the unit y axis.
        want = (
            T([0, 0, 0.2]) @ Rz(yaw)
            @ T([0.05, 0, 0.1], [0.3, -0.2, 0.5]) @ Ry(sh)
            @ T([0, 0, 0.5]) @ T([0, 0, sl])
            @ T([0.1, 0, 0], [0, PI / 2, 0])
        )  # fmt: skip
        np.testing.assert_allclose(m.fk([yaw, sh, sl], "tool"), want, atol=1e-12)
        np.testing.assert_allclose(
            m.fk([yaw, sh, sl], "camera"), T([0, 0, 0.2]) @ Rz(yaw) @ T([0, 0.1, 0]), atol=1e-12
        )


def test_urdf_fk_matches_yourdfpy(arm_file: Path, rng: np.random.Generator) -> None:
    yourdfpy = pytest.importorskip("yourdfpy")
    ref = yourdfpy.URDF.load(str(arm_file), load_meshes=False, build_scene_graph=True)
    m = load_urdf(arm_file)
    for q in m.random_configuration(10, rng):
        ref.update_cfg(dict(zip(m.joint_names, q)))
        for frame, pose in zip(m.frame_names, m.fk_all(q)):
            np.testing.assert_allclose(pose, ref.get_transform(frame), atol=1e-12)


def test_urdf_from_string_equals_from_file(arm_file: Path, rng: np.random.Generator) -> None:
    a, b = load_urdf(arm_file), load_urdf(ARM)
    q = a.random_configuration(5, rng)
    np.testing.assert_array_equal(a.fk_all(q), b.fk_all(q))
    assert b.metadata["source"] == "<string>"
    assert load_urdf(ARM, name="renamed").name == "renamed"


def test_urdf_with_missing_meshes_loads(arm_file: Path) -> None:
    # package:// and file:// meshes that do not exist are never opened.
    m = kinetree.load(arm_file)
    assert m.dof == 3


def test_urdf_without_xml_declaration_or_with_encoding() -> None:
    bare = ARM.split("\n", 1)[1]  # drop <?xml ... encoding="utf-8"?>
    assert load_urdf(bare).dof == 3
    upper = ARM.replace('encoding="utf-8"', 'encoding="UTF-8"')
    assert load_urdf(upper).dof == 3


def test_shipped_panda_urdf_by_path(rng: np.random.Generator) -> None:
    path = resources.files("kinetree.models") / "data" / "panda.urdf"
    with resources.as_file(path) as p:
        m = kinetree.load(p)
        m_str = kinetree.load(str(p))
    ref = models.get("panda_urdf")
    q = ref.random_configuration(20, rng)
    np.testing.assert_array_equal(m.fk(q, "panda_link8"), ref.fk(q))
    np.testing.assert_array_equal(m_str.fk(q, "panda_link8"), ref.fk(q))


def test_uppercase_suffix(arm_file: Path) -> None:
    upper = arm_file.with_name("ARM.URDF")
    upper.write_text(ARM)
    assert kinetree.load(upper).dof == 3


# --- mimic ---------------------------------------------------------------------------------------


def test_urdf_mimic_joint() -> None:
    text = robot(["a", "b", "c"], [("j1", "revolute", "a", "b"), ("j2", "revolute", "b", "c")])
    text = text.replace(
        "</joint></robot>", '<mimic joint="j1" multiplier="-0.5" offset="0.1"/></joint></robot>'
    )
    m = load_urdf(text)
    assert m.joint_names == ("j1",)
    np.testing.assert_allclose(m.fk([0.4], "c"), Rz(0.4 - 0.5 * 0.4 + 0.1), atol=1e-15)


def test_urdf_mimic_defaults_multiplier_one_offset_zero() -> None:
    text = robot(["a", "b", "c"], [("j1", "revolute", "a", "b"), ("j2", "revolute", "b", "c")])
    text = text.replace("</joint></robot>", '<mimic joint="j1"/></joint></robot>')
    np.testing.assert_allclose(load_urdf(text).fk([0.3], "c"), Rz(0.6), atol=1e-15)


def test_urdf_mimic_of_unknown_joint() -> None:
    text = robot(["a", "b"], [("j1", "revolute", "a", "b")])
    text = text.replace("</joint></robot>", '<mimic joint="ghost"/></joint></robot>')
    with pytest.raises(ModelStructureError, match="mimic joint='ghost'> names no joint"):
        load_urdf(text, mimic="strict")


# --- structure errors ----------------------------------------------------------------------------


def test_urdf_cycle_without_root() -> None:
    text = robot(["a", "b"], [("j1", "revolute", "a", "b"), ("j2", "revolute", "b", "a")])
    with pytest.raises(ModelStructureError, match=r"no root link.*cycle"):
        load_urdf(text)


def test_urdf_cycle_beside_the_root() -> None:
    text = robot(
        ["r", "a", "b", "c"],
        [("j1", "revolute", "r", "a"), ("j2", "revolute", "b", "c"), ("j3", "revolute", "c", "b")],
    )
    with pytest.raises(ModelStructureError, match="links b, c are not connected to the root 'r'"):
        load_urdf(text)


def test_urdf_link_with_two_parents() -> None:
    text = robot(
        ["a", "b", "c"],
        [("j1", "revolute", "a", "b"), ("j2", "revolute", "b", "c"), ("j3", "revolute", "a", "c")],
    )
    with pytest.raises(ModelStructureError, match="link 'c' has two parent joints: 'j2' and 'j3'"):
        load_urdf(text)


def test_urdf_two_roots() -> None:
    text = robot(["a", "b", "c"], [("j1", "revolute", "a", "b")])
    with pytest.raises(ModelStructureError, match=r"2 root links \(a, c\)"):
        load_urdf(text)


@pytest.mark.parametrize("missing_end", ["parent", "child"])
def test_urdf_missing_link(missing_end: str) -> None:
    joint = (
        ("j2", "revolute", "ghost", "c")
        if missing_end == "parent"
        else ("j2", "revolute", "b", "ghost")
    )
    text = robot(
        ["a", "b", "c"] if missing_end == "parent" else ["a", "b"],
        [("j1", "revolute", "a", "b"), joint],
    )
    with pytest.raises(
        ModelStructureError, match=f"{missing_end} link 'ghost' of joint 'j2' not found; links are"
    ):
        load_urdf(text)


@pytest.mark.parametrize("jtype", ["hinge", "ball", "universal"])
def test_urdf_unsupported_joint_types(jtype: str) -> None:
    text = robot(["a", "b"], [("j1", jtype, "a", "b")])
    with pytest.raises(UnsupportedError) as info:
        load_urdf(text)
    msg = str(info.value)
    assert f"joint 'j1' has type '{jtype}'" in msg
    assert "revolute, continuous, prismatic, fixed, floating, planar, spherical" in msg


def test_urdf_duplicate_joint_names() -> None:
    text = robot(["a", "b", "c"], [("j1", "revolute", "a", "b"), ("j1", "revolute", "b", "c")])
    with pytest.raises(ModelStructureError, match="duplicate joint names: j1"):
        load_urdf(text)


def test_urdf_zero_axis_is_invalid() -> None:
    text = robot(["a", "b"], [("j1", "revolute", "a", "b")]).replace('xyz="0 0 1"', 'xyz="0 0 0"')
    with pytest.raises(InvalidValueError, match="non-zero"):
        load_urdf(text)


def test_urdf_limit_defaults_are_zero() -> None:
    # URDF spec: <limit> lower and upper default to 0 (regression: lower was -inf).
    text = robot(["a", "b"], [("j1", "revolute", "a", "b")]).replace('lower="-1" ', "")
    np.testing.assert_array_equal(load_urdf(text).limits, [[0.0, 1.0]])
    text = robot(["a", "b"], [("j1", "prismatic", "a", "b")]).replace('upper="1" ', "")
    np.testing.assert_array_equal(load_urdf(text).limits, [[-1.0, 0.0]])
    # No <limit> element at all: unlimited.
    text = robot(["a", "b"], [("j1", "revolute", "a", "b")]).replace(LIMIT, "")
    np.testing.assert_array_equal(load_urdf(text).limits, [[-np.inf, np.inf]])


# --- unreadable files ----------------------------------------------------------------------------


def test_unreadable_path(tmp_path: Path) -> None:
    with pytest.raises(FileFormatError, match="cannot read URDF file"):
        load_urdf(tmp_path / "nope.urdf")
    with pytest.raises(FileFormatError, match="cannot read URDF file"):
        load_urdf(tmp_path)  # a directory


def test_not_xml(urdf_dir: Path) -> None:
    p = urdf_dir / "text.urdf"
    p.write_text("this is not a robot\n")
    with pytest.raises(FileFormatError, match="not well-formed XML") as info:
        load_urdf(p)
    assert str(p) in str(info.value)
    with pytest.raises(FileFormatError, match="not well-formed XML"):
        load_urdf('<robot name="r"><link name="a">')


def test_binary_file(urdf_dir: Path) -> None:
    p = urdf_dir / "binary.urdf"
    p.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(FileFormatError):
        kinetree.load(p)


def test_xml_that_is_not_a_robot() -> None:
    with pytest.raises(FileFormatError, match="invalid URDF"):
        load_urdf("<html><body/></html>")


def test_bad_number_in_urdf() -> None:
    text = robot(["a", "b"], [("j1", "revolute", "a", "b")]).replace(
        '<axis xyz="0 0 1"/>', '<origin xyz="0 zero 0"/><axis xyz="0 0 1"/>'
    )
    with pytest.raises(FileFormatError, match="zero"):
        load_urdf(text)


# --- kinetree.load -------------------------------------------------------------------------------


def test_load_unknown_name_lists_builtins() -> None:
    with pytest.raises(UnknownNameError) as info:
        kinetree.load("pandaa")
    msg = str(info.value)
    assert "'pandaa' not found" in msg
    for name in models.available():
        assert name in msg
    assert ".urdf" in msg


def test_load_unsupported_suffix(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedError, match=r"file type '\.txt' is not supported"):
        kinetree.load("robot.txt")
    p = tmp_path / "robot.txt"
    p.write_text(ARM)
    with pytest.raises(UnsupportedError, match=r"\.urdf"):
        kinetree.load(p)


def test_load_missing_urdf(tmp_path: Path) -> None:
    with pytest.raises(FileFormatError, match="does not exist"):
        kinetree.load(tmp_path / "missing.urdf")
    with pytest.raises(FileFormatError, match="does not exist"):
        kinetree.load(str(tmp_path / "missing.urdf"))


def test_load_builtin_by_name() -> None:
    for name in models.available():
        assert kinetree.load(name) is models.get(name)


def test_every_load_error_is_a_kinetree_error(tmp_path: Path) -> None:
    for bad in ("nope", "x.txt", tmp_path / "x.urdf", "<robot/>"):
        with pytest.raises(KinetreeError):
            kinetree.load(bad) if not str(bad).startswith("<") else load_urdf(bad)


# --- the public namespace ------------------------------------------------------------------------


def test_star_import_exports_all() -> None:
    namespace: dict[str, object] = {}
    exec("from kinetree import *", namespace)
    for name in kinetree.__all__:
        assert name in namespace, name
        assert getattr(kinetree, name) is namespace[name]
    assert issubclass(kinetree.UnknownNameError, kinetree.KinetreeError)


@pytest.mark.parametrize(
    "module", ["kinetree.spatial", "kinetree.models", "kinetree.io", "kinetree.errors"]
)
def test_submodule_all_names_exist(module: str) -> None:
    import importlib

    mod = importlib.import_module(module)
    namespace: dict[str, object] = {}
    exec(f"from {module} import *", namespace)
    for name in mod.__all__:
        assert hasattr(mod, name), f"{module}.__all__ names missing {name!r}"
        assert name in namespace
