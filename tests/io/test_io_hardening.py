"""Loaders and the builder refuse bad input with a KinetreeError that names the problem.

One test per check at the public edge: ``kinetree.load``, ``load_urdf``, ``from_dh``,
``read_bvh``/``write_bvh`` and the ``ModelBuilder`` methods. Each bad input must raise
a :class:`kinetree.KinetreeError` subclass (never a bare TypeError, ValueError,
IndexError, KeyError, AttributeError or RecursionError) whose message names the
argument, the file, the element and the joint where there is one, and the valid
choices. Malformed URDFs are written inline so each test shows the XML it reads.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import kinetree
from kinetree import (
    FileFormatError,
    InvalidValueError,
    KinetreeError,
    ModelBuilder,
    ModelStructureError,
    ShapeError,
    UnsupportedError,
    read_bvh,
    write_bvh,
)
from kinetree.io import DHRow, from_dh, load_urdf
from kinetree.io.bvh import BVHClip, BVHJoint

# Exception types that must never escape a loader or the builder.
FOREIGN = (TypeError, ValueError, IndexError, KeyError, AttributeError, RecursionError)


def raises_kinetree(
    fn: Callable[[], object], cls: type[KinetreeError] = KinetreeError, *parts: str
) -> str:
    """Call ``fn``; it must raise ``cls`` (a KinetreeError) whose message has every part."""
    with pytest.raises(KinetreeError) as info:
        fn()
    assert isinstance(info.value, cls), f"{type(info.value).__name__}: {info.value}"
    msg = str(info.value)
    for part in parts:
        assert part in msg, f"{part!r} not in {msg!r}"
    return msg


# --- URDF helpers ------------------------------------------------------------------------------

LIMIT = '<limit lower="-1" upper="1" effort="1" velocity="1"/>'


def joint(
    name: str | None = "j1",
    parent: str | None = "a",
    child: str | None = "b",
    jtype: str = "revolute",
    body: str = '<axis xyz="0 0 1"/>' + LIMIT,
) -> str:
    name_attr = "" if name is None else f' name="{name}"'
    p = "" if parent is None else f'<parent link="{parent}"/>'
    c = "" if child is None else f'<child link="{child}"/>'
    return f'<joint{name_attr} type="{jtype}">{p}{c}{body}</joint>'


def urdf(*parts: str, links: tuple[str, ...] = ("a", "b")) -> str:
    body = "".join(f'<link name="{lk}"/>' for lk in links) + "".join(parts)
    return f'<?xml version="1.0"?>\n<robot name="r">{body}</robot>'


def write_urdf(tmp_path: Path, text: str, name: str = "broken.urdf") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def mimic_urdf(mimic: str) -> str:
    return urdf(
        joint(),
        joint("j2", "b", "c", body=f'<axis xyz="0 0 1"/>{LIMIT}{mimic}'),
        links=("a", "b", "c"),
    )


# --- 1. non-finite numbers: mimic, origin, axis, limits, neutral -------------------------------


@pytest.mark.parametrize(
    "mimic", [("j1", np.nan, 0.0), ("j1", np.inf, 0.0), ("j1", 1.0, np.nan), ("j1", 1.0, -np.inf)]
)
def test_builder_rejects_non_finite_mimic(mimic: tuple[str, float, float]) -> None:
    b = ModelBuilder("m", root="a").add_joint("j1", "a", "b")

    def go() -> None:
        b.add_joint("j2", "b", "c", mimic=mimic)
        b.build()

    raises_kinetree(go, InvalidValueError, "joint 'j2'", "mimic")


@pytest.mark.parametrize(
    "mimic", ['<mimic joint="j1" multiplier="nan"/>', '<mimic joint="j1" offset="inf"/>']
)
def test_urdf_rejects_non_finite_mimic(mimic: str, tmp_path: Path) -> None:
    p = write_urdf(tmp_path, mimic_urdf(mimic))
    raises_kinetree(lambda: load_urdf(p), KinetreeError, str(p), "joint 'j2'", "mimic")
    raises_kinetree(lambda: kinetree.load(p), KinetreeError, str(p), "joint 'j2'")


@pytest.mark.parametrize(
    "mimic", [("j1",), "j1", ("j1", "x", 0.0), (1, 1.0, 0.0), ("j1", 1.0, 0.0, 2.0), None]
)
def test_builder_rejects_malformed_mimic(mimic: Any) -> None:
    b = ModelBuilder("m", root="a").add_joint("j1", "a", "b")
    if mimic is None:  # None means "no mimic": fine
        b.add_joint("j2", "b", "c", mimic=mimic).build()
        return

    def go() -> None:
        b.add_joint("j2", "b", "c", mimic=mimic)
        b.build()

    raises_kinetree(go, InvalidValueError, "joint 'j2'", "mimic", "(source_joint, multiplier")


def test_builder_rejects_mimic_on_a_fixed_joint() -> None:
    b = ModelBuilder("m", root="a").add_joint("j1", "a", "b")
    raises_kinetree(
        lambda: b.add_joint("j2", "b", "c", type="fixed", mimic=("j1", 1.0, 0.0)),
        InvalidValueError,
        "joint 'j2'",
        "fixed",
    )


@pytest.mark.parametrize(
    ("kwargs", "parts"),
    [
        ({"origin": np.full((4, 4), np.nan)}, ("joint 'j'", "origin", "NaN")),
        ({"axis": [np.nan, 0.0, 1.0]}, ("joint 'j'", "axis", "NaN")),
        ({"axis": [0.0, 0.0, 0.0]}, ("joint 'j'", "axis", "non-zero")),
        ({"axis": np.eye(3)}, ("joint 'j'", "axis")),
        ({"origin": np.eye(3)}, ("joint 'j'", "origin", "4, 4)")),
        ({"origin": np.diag([2.0, 1, 1, 1])}, ("joint 'j'", "origin")),
        ({"limits": (np.nan, 1.0)}, ("joint 'j'", "limits", "NaN")),
        ({"limits": (0.0, np.nan)}, ("joint 'j'", "limits", "NaN")),
        ({"limits": (np.inf, np.inf)}, ("joint 'j'", "limits")),
        ({"limits": (-np.inf, -np.inf)}, ("joint 'j'", "limits")),
        ({"limits": (0.0, 1.0, 2.0)}, ("joint 'j'", "limits", "(lo, hi)")),
        ({"limits": 1.0}, ("joint 'j'", "limits", "(lo, hi)")),
        ({"limits": (2.0, 1.0)}, ("joint 'j'", "lo <= hi")),
    ],
)
def test_builder_rejects_bad_joint_numbers(kwargs: dict[str, Any], parts: tuple[str, ...]) -> None:
    b = ModelBuilder("m", root="a")
    raises_kinetree(lambda: b.add_joint("j", "a", "b", **kwargs), KinetreeError, *parts)


def test_builder_infinite_limits_mean_no_limit() -> None:
    m = ModelBuilder("m", root="a").add_joint("j", "a", "b", limits=(-np.inf, np.inf)).build()
    np.testing.assert_array_equal(m.limits, [[-np.inf, np.inf]])
    m = ModelBuilder("m", root="a").add_joint("j", "a", "b", limits=(0.0, np.inf)).build()
    np.testing.assert_array_equal(m.limits, [[0.0, np.inf]])


@pytest.mark.parametrize("value", [np.nan, np.inf, "x", None])
def test_builder_rejects_bad_neutral_values(value: Any) -> None:
    b = ModelBuilder("m", root="a").add_joint("j", "a", "b")
    raises_kinetree(lambda: b.set_neutral({"j": value}).build(), InvalidValueError, "'j'")


@pytest.mark.parametrize("values", [None, [("j", 1.0)], 3.0])
def test_builder_set_neutral_needs_a_mapping(values: Any) -> None:
    b = ModelBuilder("m", root="a").add_joint("j", "a", "b")
    raises_kinetree(lambda: b.set_neutral(values), InvalidValueError, "mapping")


def test_builder_rejects_non_finite_root_origin() -> None:
    raises_kinetree(
        lambda: ModelBuilder("m", root_origin=np.full((4, 4), np.nan)),
        InvalidValueError,
        "root_origin",
    )


# --- 2. wrong types: names, joint types, ball joints, presets ----------------------------------


@pytest.mark.parametrize("jtype", [None, ["revolute"], 1, ""])
def test_builder_rejects_bad_joint_type(jtype: Any) -> None:
    b = ModelBuilder("m", root="a")
    raises_kinetree(
        lambda: b.add_joint("j", "a", "b", type=jtype),
        UnsupportedError,
        "joint 'j'",
        "fixed, revolute, continuous, prismatic",
    )


@pytest.mark.parametrize("argument", ["name", "parent", "child"])
@pytest.mark.parametrize("value", [None, 3, "", ("a",)])
def test_builder_add_joint_needs_string_names(argument: str, value: Any) -> None:
    # Regression: add_joint(None, ...) made an immobile joint without a word.
    args = {"name": "j", "parent": "a", "child": "b"} | {argument: value}
    b = ModelBuilder("m", root="a")
    raises_kinetree(lambda: b.add_joint(**args), InvalidValueError, argument, "string")


def test_builder_add_joint_none_name_is_not_silently_immobile() -> None:
    b = ModelBuilder("m", root="a")
    with pytest.raises(InvalidValueError, match="name"):
        b.add_joint(None, "a", "b")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("make", "parts"),
    [
        (lambda: ModelBuilder(None), ("name", "string")),  # type: ignore[arg-type]
        (lambda: ModelBuilder("m", root=None), ("root", "string")),  # type: ignore[arg-type]
        (lambda: ModelBuilder("m", root_origin=np.eye(3)), ("root_origin", "4, 4)")),
        (lambda: ModelBuilder("m").add_frame(None, "base"), ("name", "string")),
        (lambda: ModelBuilder("m").add_frame("f", None), ("parent", "string")),
    ],
)
def test_builder_constructor_and_frame_arguments(
    make: Callable[[], object], parts: tuple[str, ...]
) -> None:
    raises_kinetree(make, KinetreeError, *parts)


@pytest.mark.parametrize(
    ("kwargs", "parts"),
    [
        ({"axes": None}, ("ball joint 's'", "axes")),
        ({"axes": 3}, ("ball joint 's'", "axes")),
        ({"axes": "xyw"}, ("ball joint 's'", "axis 'w'")),
        ({"axes": [[np.nan, 0.0, 0.0]]}, ("ball joint 's'", "NaN")),
        ({"limits": 3}, ("ball joint 's'", "limits")),
        ({"limits": [(np.nan, 1.0), None, None]}, ("s_x", "NaN")),
        ({"swing": "x"}, ("ball joint 's'", "swing")),
        ({"swing": np.nan}, ("ball joint 's'", "swing")),
        ({"twist": 1.0}, ("ball joint 's'", "twist")),
        ({"twist": (np.nan, 1.0)}, ("ball joint 's'", "twist")),
        ({"swing": 1.0, "bone_axis": [np.nan, 0.0, 0.0]}, ("ball joint 's'", "bone_axis")),
        ({"name": None}, ("name", "string")),
    ],
)
def test_builder_ball_joint_arguments(kwargs: dict[str, Any], parts: tuple[str, ...]) -> None:
    args: dict[str, Any] = {"name": "s", "parent": "a", "child": "b"} | kwargs
    b = ModelBuilder("m", root="a")
    raises_kinetree(lambda: b.add_ball_joint(**args), KinetreeError, *parts)


def test_builder_presets_and_end_effectors() -> None:
    b = ModelBuilder("m", root="a").add_joint("elbow", "a", "b")
    raises_kinetree(lambda: b.add_preset("p", None), InvalidValueError, "preset 'p'")  # type: ignore[arg-type]
    raises_kinetree(lambda: b.add_preset(None, ["elbow"]), InvalidValueError, "preset")  # type: ignore[arg-type]
    raises_kinetree(lambda: b.add_preset("p", [1]), InvalidValueError, "preset 'p'")  # type: ignore[list-item]
    raises_kinetree(
        lambda: b.set_end_effectors(["b"]),  # type: ignore[arg-type]
        InvalidValueError,
        "end effector",
        "string",
    )
    # One joint name as a plain string is that joint, not its letters.
    assert b.add_preset("p", "elbow").build().presets["p"] == ("elbow",)


# --- 2. from_dh --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rows",
    [
        np.array([[0.0, 0.0, 0.0, 0.0]]),
        [[0.0, 0.0, 0.0, 0.0]],
        [(0.0, 0.0, 0.0, 0.0)],
        DHRow(a=1.0),
        None,
        "rows",
        3,
        [DHRow(a=1.0), {"a": 1.0}],
    ],
)
def test_from_dh_needs_dh_rows(rows: Any) -> None:
    raises_kinetree(lambda: from_dh(rows), InvalidValueError, "rows", "DHRow")


def test_from_dh_accepts_any_iterable_of_rows() -> None:
    m = from_dh(DHRow(a=1.0) for _ in range(2))
    assert m.dof == 2


@pytest.mark.parametrize(
    ("kwargs", "cls", "parts"),
    [
        ({"tool": np.eye(3)}, ShapeError, ("tool", "4, 4)")),
        ({"tool": np.full((4, 4), np.nan)}, InvalidValueError, ("tool", "NaN")),
        ({"tool": np.diag([2.0, 1, 1, 1])}, InvalidValueError, ("tool",)),
        ({"tool": "x"}, InvalidValueError, ("tool",)),
        ({"base": np.eye(3)}, ShapeError, ("base", "4, 4)")),
        ({"base": np.full((4, 4), np.inf)}, InvalidValueError, ("base", "NaN")),
        ({"name": None}, InvalidValueError, ("name", "string")),
        ({"tool_name": None}, InvalidValueError, ("tool_name", "string")),
        ({"tool_name": "link1"}, KinetreeError, ("link1",)),
        ({"metadata": [1]}, InvalidValueError, ("metadata", "dict")),
        ({"convention": None}, UnsupportedError, ("'standard' or 'modified'",)),
    ],
)
def test_from_dh_keyword_arguments(
    kwargs: dict[str, Any], cls: type[KinetreeError], parts: tuple[str, ...]
) -> None:
    raises_kinetree(lambda: from_dh([DHRow(a=1.0)], **kwargs), cls, *parts)


@pytest.mark.parametrize(
    ("row", "parts"),
    [
        (DHRow(a="x"), ("DH row 1", "a", "'x'")),  # type: ignore[arg-type]
        (DHRow(theta=None), ("DH row 1", "theta")),  # type: ignore[arg-type]
        (DHRow(d=[1.0, 2.0]), ("DH row 1", "d")),  # type: ignore[arg-type]
        (DHRow(name=3), ("DH row 1", "name", "string")),  # type: ignore[arg-type]
        (DHRow(limits=(1.0,)), ("joint1", "limits")),
        (DHRow(limits=(np.nan, 1.0)), ("joint1", "NaN")),
        (DHRow(type=None), ("DH row 1", "revolute or prismatic")),  # type: ignore[arg-type]
    ],
)
def test_from_dh_row_fields(row: DHRow, parts: tuple[str, ...]) -> None:
    raises_kinetree(lambda: from_dh([row]), KinetreeError, *parts)


# --- 2. kinetree.load, read_bvh, write_bvh: paths ----------------------------------------------


@pytest.mark.parametrize("bad", [None, 3, 1.5, [], b"panda", {"a": 1}])
def test_load_needs_a_name_or_path(bad: Any) -> None:
    msg = raises_kinetree(lambda: kinetree.load(bad), InvalidValueError, type(bad).__name__)
    assert "panda" in msg and ".urdf" in msg and ".bvh" in msg


@pytest.mark.parametrize("bad", [None, 3, b"<robot/>", []])
def test_load_urdf_needs_a_path_or_text(bad: Any) -> None:
    raises_kinetree(lambda: load_urdf(bad), InvalidValueError, type(bad).__name__, "URDF")


def test_load_urdf_name_must_be_a_string(tmp_path: Path) -> None:
    raises_kinetree(lambda: load_urdf(urdf(joint()), name=3), InvalidValueError, "name")  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [None, 3, b"x.bvh", []])
def test_read_bvh_needs_a_path(bad: Any) -> None:
    raises_kinetree(lambda: read_bvh(bad), InvalidValueError, type(bad).__name__, "path")


MINI_BVH = """HIERARCHY
ROOT Hips
{
\tOFFSET 0 0 0
\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
\tJOINT Spine
\t{
\t\tOFFSET 0 10 0
\t\tCHANNELS 3 Zrotation Xrotation Yrotation
\t\tEnd Site
\t\t{
\t\t\tOFFSET 0 5 0
\t\t}
\t}
\tEnd Site
\t{
\t\tOFFSET 1 0 0
\t}
}
MOTION
Frames: 2
Frame Time: 0.04
1 2 3 10 20 30 1 2 3
4 5 6 40 50 60 4 5 6
"""


@pytest.fixture
def mini_clip(tmp_path: Path) -> BVHClip:
    p = tmp_path / "mini.bvh"
    p.write_text(MINI_BVH)
    return read_bvh(p)


def test_write_bvh_into_a_missing_folder(mini_clip: BVHClip, tmp_path: Path) -> None:
    folder = tmp_path / "no" / "such"
    msg = raises_kinetree(
        lambda: write_bvh(folder / "out.bvh", mini_clip), FileFormatError, str(folder)
    )
    assert "does not exist" in msg
    assert not folder.exists()  # not created behind the caller's back


def test_write_bvh_onto_a_folder(mini_clip: BVHClip, tmp_path: Path) -> None:
    raises_kinetree(lambda: write_bvh(tmp_path, mini_clip), FileFormatError, str(tmp_path))


@pytest.mark.parametrize("bad", [None, 3, b"x.bvh"])
def test_write_bvh_needs_a_path(bad: Any, mini_clip: BVHClip) -> None:
    raises_kinetree(lambda: write_bvh(bad, mini_clip), InvalidValueError, "path")


def test_write_bvh_needs_a_clip(tmp_path: Path) -> None:
    raises_kinetree(lambda: write_bvh(tmp_path / "x.bvh", None), InvalidValueError, "BVHClip")  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", ["Sp{ine", "Spi}ne", "Sp\nine", "Sp  ine", " Spine", ""])
def test_write_bvh_refuses_names_it_cannot_write(
    bad: str, mini_clip: BVHClip, tmp_path: Path
) -> None:
    # A joint without channels may carry any name its model does not need; the file
    # could not be read back with it.
    joints = list(mini_clip.joints)
    joints[2] = BVHJoint(bad, 1, joints[2].offset)
    clip = dataclasses.replace(mini_clip, joints=tuple(joints))
    out = tmp_path / "out.bvh"
    raises_kinetree(lambda: write_bvh(out, clip), InvalidValueError, repr(bad), "name")
    assert not out.exists()


@pytest.mark.parametrize(
    ("index", "joint", "parts"),
    [
        (2, BVHJoint("Tip", 7, (0.0, 0.0, 0.0)), ("joints[2]", "parent")),
        (2, BVHJoint("Tip", 2, (0.0, 0.0, 0.0)), ("joints[2]", "parent")),
        (2, BVHJoint("Tip", -1, (0.0, 0.0, 0.0)), ("joints[2]", "root")),
        (3, BVHJoint("Tip", 2, (0.0, 0.0, 0.0), (), True), ("joints[3]", "End Site")),
        (2, BVHJoint("Tip", 1, (0.0, float("nan"), 0.0), (), True), ("joints[2]", "offset")),
        (2, BVHJoint("Tip", 1, (0.0, 0.0)), ("joints[2]", "offset")),  # type: ignore[arg-type]
    ],
)
def test_bvh_clip_checks_its_hierarchy(
    index: int, joint: BVHJoint, parts: tuple[str, ...], mini_clip: BVHClip
) -> None:
    joints = list(mini_clip.joints)
    joints[index] = joint
    raises_kinetree(
        lambda: dataclasses.replace(mini_clip, joints=tuple(joints)), InvalidValueError, *parts
    )


def _deep_bvh(depth: int) -> str:
    lines = [
        "HIERARCHY",
        "ROOT J0",
        "{",
        "OFFSET 0 0 0",
        "CHANNELS 3 Zrotation Xrotation Yrotation",
    ]
    for i in range(1, depth):
        lines += [f"JOINT J{i}", "{", "OFFSET 0 1 0", "CHANNELS 1 Zrotation"]
    lines += ["End Site", "{", "OFFSET 0 1 0", "}"]
    lines += ["}"] * depth
    n = 3 + (depth - 1)
    row = " ".join(["1.5"] * n)
    lines += ["MOTION", "Frames: 2", "Frame Time: 0.0333333", row, row]
    return "\n".join(lines) + "\n"


def test_bvh_nested_1200_joints_deep_loads_and_round_trips(tmp_path: Path) -> None:
    # Regression: the recursive parser raised RecursionError on deep files.
    p = tmp_path / "deep.bvh"
    text = _deep_bvh(1200)
    p.write_text(text)
    clip = read_bvh(p)
    assert len(clip.joints) == 1201 and clip.model.dof == 1202
    assert clip.n_joints == 1200 and clip.n_end_sites == 1
    pos = clip.joint_positions()
    assert pos.shape == (2, 1201, 3) and np.all(np.isfinite(pos))
    out = tmp_path / "deep_out.bvh"
    write_bvh(out, clip)
    again = read_bvh(out)
    assert again.joints == clip.joints
    np.testing.assert_array_equal(again.q, clip.q)


def test_bvh_counts_end_sites_apart_from_joints(mini_clip: BVHClip) -> None:
    assert mini_clip.n_joints == 2
    assert mini_clip.n_end_sites == 2
    assert len(mini_clip.joint_names) == mini_clip.n_joints + mini_clip.n_end_sites


# --- 2/4. BVHClip construction -----------------------------------------------------------------


def test_bvh_clip_arguments(mini_clip: BVHClip) -> None:
    base = {
        "model": mini_clip.model,
        "q": mini_clip.q,
        "frame_time": 0.04,
        "joints": mini_clip.joints,
    }
    for change, parts in [
        ({"model": None}, ("model", "Model")),
        ({"q": "x"}, ("q",)),
        ({"q": None}, ("q",)),
        ({"frame_time": "soon"}, ("frame_time",)),
        ({"frame_time": None}, ("frame_time",)),
        ({"joints": None}, ("joints",)),
        ({"joints": (None,)}, ("joints", "BVHJoint")),
    ]:
        raises_kinetree(lambda c=change: BVHClip(**(base | c)), InvalidValueError, *parts)
    raises_kinetree(lambda: mini_clip.with_q("x"), InvalidValueError, "q")
    raises_kinetree(lambda: mini_clip.slice(step="x"), InvalidValueError, "step")  # type: ignore[arg-type]
    raises_kinetree(lambda: mini_clip.slice(start="x"), InvalidValueError, "start")  # type: ignore[arg-type]


# --- 3. URDF messages --------------------------------------------------------------------------


def test_urdf_missing_parent_link_is_not_called_a_cycle(tmp_path: Path) -> None:
    # Regression: a parent link that no <link> defines left no root, reported as a cycle.
    text = urdf(joint("j1", "a", "b"), joint("j2", "b", "c"), links=("b", "c"))
    p = write_urdf(tmp_path, text)
    msg = raises_kinetree(
        lambda: load_urdf(p),
        ModelStructureError,
        str(p),
        "parent link 'a' of joint 'j1' not found; links are: b, c",
    )
    assert "cycle" not in msg


def test_urdf_missing_child_link_names_the_joint(tmp_path: Path) -> None:
    p = write_urdf(tmp_path, urdf(joint("j1", "a", "ghost")))
    raises_kinetree(
        lambda: load_urdf(p),
        ModelStructureError,
        str(p),
        "child link 'ghost' of joint 'j1' not found; links are: a, b",
    )


MALFORMED_URDF = [
    ("joint without name", urdf(joint(name=None)), ("<joint>", "'name'")),
    ("link without name", urdf(joint(), links=("a",)).replace("<joint", "<link/><joint", 1),
     ("<link>", "'name'")),
    ("empty link name", urdf(joint(), links=("a", "b", "")), ("<link>", "'name'")),
    ("robot without name", urdf(joint()).replace('<robot name="r">', "<robot>"),
     ("<robot>", "'name'")),
    ("origin with text", urdf(joint(body='<origin xyz="a b c"/>')),
     ("joint 'j1'", "<origin>", "xyz", "'a b c'", "3 numbers")),
    ("origin with two numbers", urdf(joint(body='<origin xyz="1 2"/>')),
     ("joint 'j1'", "<origin>", "xyz", "3 numbers")),
    ("rpy with text", urdf(joint(body='<origin rpy="0 x 0"/>')),
     ("joint 'j1'", "<origin>", "rpy")),
    ("axis with text", urdf(joint(body='<axis xyz="0 0 q"/>')), ("joint 'j1'", "<axis>", "xyz")),
    ("axis with four numbers", urdf(joint(body='<axis xyz="0 0 1 0"/>')),
     ("joint 'j1'", "<axis>", "xyz")),
    ("limit with text", urdf(joint(body='<axis xyz="0 0 1"/><limit lower="x" upper="1"/>')),
     ("joint 'j1'", "<limit>", "lower", "'x'")),
    ("missing parent", urdf(joint(parent=None)), ("joint 'j1'", "<parent>")),
    ("missing child", urdf(joint(child=None)), ("joint 'j1'", "<child>")),
    ("parent without link", urdf(joint(parent=None, body='<parent/>')),
     ("joint 'j1'", "<parent>", "'link'")),
    ("joint without type", urdf(joint()).replace(' type="revolute"', ""),
     ("joint 'j1'", "'type'", "revolute, continuous, prismatic, fixed")),
    ("mimic without joint", mimic_urdf('<mimic multiplier="2"/>'),
     ("joint 'j2'", "<mimic>", "'joint'")),
    ("mimic with text", mimic_urdf('<mimic joint="j1" multiplier="two"/>'),
     ("joint 'j2'", "<mimic>", "multiplier", "'two'")),
    ("not a robot", "<html><body/></html>", ("<robot>", "<html>")),
]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "parts"), [c[1:] for c in MALFORMED_URDF], ids=[c[0] for c in MALFORMED_URDF]
)
def test_malformed_urdf_names_file_element_and_joint(
    text: str, parts: tuple[str, ...], tmp_path: Path
) -> None:
    p = write_urdf(tmp_path, text)
    msg = raises_kinetree(lambda: load_urdf(p), FileFormatError, str(p), "invalid URDF", *parts)
    for leak in ("NoneType", "object has no attribute", "could not convert", "broadcast"):
        assert leak not in msg
    # The same from a string: the source is "<string>".
    raises_kinetree(lambda: load_urdf(text), FileFormatError, "<string>", *parts)


@pytest.mark.parametrize(
    ("body", "parts"),
    [
        ('<origin xyz="nan 0 0"/><axis xyz="0 0 1"/>', ("joint 'j1'", "origin", "NaN")),
        ('<origin rpy="0 inf 0"/><axis xyz="0 0 1"/>', ("joint 'j1'", "origin", "NaN")),
        ('<axis xyz="0 nan 1"/>', ("joint 'j1'", "axis", "NaN")),
        ('<axis xyz="0 0 0"/>', ("joint 'j1'", "axis", "non-zero")),
        # lower > upper loads as "no limit" with a warning: tests/io/test_urdf_lenient.py
        ('<axis xyz="0 0 1"/><limit lower="nan" upper="1"/>', ("joint 'j1'", "NaN")),
    ],
)
def test_urdf_value_errors_name_file_and_joint(
    body: str, parts: tuple[str, ...], tmp_path: Path
) -> None:
    p = write_urdf(tmp_path, urdf(joint(body=body)))
    raises_kinetree(lambda: load_urdf(p), InvalidValueError, str(p), *parts)


def test_urdf_infinite_limits_are_no_limits() -> None:
    text = urdf(joint(body='<axis xyz="0 0 1"/><limit lower="-inf" upper="inf"/>'))
    np.testing.assert_array_equal(load_urdf(text).limits, [[-np.inf, np.inf]])


def test_urdf_ignores_geometry_it_never_reads() -> None:
    # Kinematics reads no geometry, inertia or material: malformed ones do not stop a load.
    link = (
        '<link name="b"><visual><geometry/></visual>'
        '<inertial><mass value="heavy"/></inertial>'
        '<collision><geometry><box size="1 x"/></geometry></collision></link>'
    )
    text = urdf(joint(), links=("a",)).replace("<joint", link + "<joint", 1)
    m = load_urdf(text)
    assert m.frame_names == ("a", "b")


def test_urdf_mimic_on_a_fixed_joint_is_ignored() -> None:
    text = urdf(
        joint(),
        joint("j2", "b", "c", jtype="fixed", body='<mimic joint="j1" multiplier="2"/>'),
        links=("a", "b", "c"),
    )
    m = load_urdf(text)
    assert m.joint_names == ("j1",)
    np.testing.assert_array_equal(m.fk([0.5], "c"), m.fk([0.5], "b"))


# --- 4. every loader error is a KinetreeError --------------------------------------------------


def test_no_foreign_exception_escapes_the_loaders(tmp_path: Path) -> None:
    calls: list[Callable[[], object]] = [
        lambda: kinetree.load(None),  # type: ignore[arg-type]
        lambda: load_urdf(None),  # type: ignore[arg-type]
        lambda: read_bvh(None),  # type: ignore[arg-type]
        lambda: from_dh(np.zeros((2, 4))),  # type: ignore[arg-type]
        lambda: from_dh([DHRow()], tool=np.eye(3)),
        lambda: ModelBuilder("m").add_joint(None, "base", "b"),  # type: ignore[arg-type]
    ]
    for text, _ in [c[1:] for c in MALFORMED_URDF]:
        calls.append(lambda t=text: load_urdf(t))
    for call in calls:
        try:
            call()
        except KinetreeError:
            pass
        except FOREIGN as exc:  # pragma: no cover - the failure being tested for
            pytest.fail(f"{type(exc).__name__} escaped: {exc}")
        else:  # pragma: no cover
            pytest.fail("no error raised")


# --- 5. what the first fuzz campaign found (docs/fuzz.md) --------------------------------------

HUGE_INT = 10**400  # a Python int past the float range: float() raises OverflowError


@pytest.mark.parametrize(
    ("row", "parts"),
    [
        (DHRow(a=HUGE_INT), ("DH row 1", "a", "too large for a float")),
        (DHRow(theta=-HUGE_INT), ("DH row 1", "theta", "too large for a float")),
        (DHRow(limits=(-HUGE_INT, HUGE_INT)), ("joint1", "too large for a float", "-inf")),
        (DHRow(limits=(0.0, HUGE_INT)), ("joint1", "too large for a float")),
    ],
)
def test_from_dh_ints_too_large_for_a_float(row: DHRow, parts: tuple[str, ...]) -> None:
    msg = raises_kinetree(lambda: from_dh([row]), InvalidValueError, *parts)
    assert len(msg) < 400, "the 400-digit int is cut short in the message"


@pytest.mark.parametrize(
    ("row", "parts"),
    [
        (DHRow(alpha="abc"), ("DH row 1", "alpha", "'abc'")),  # type: ignore[arg-type]
        (DHRow(alpha="1.5"), ("DH row 1", "alpha", "'1.5'")),  # type: ignore[arg-type]
        (DHRow(alpha=1j), ("DH row 1", "alpha", "1j")),  # type: ignore[arg-type]
        (DHRow(alpha=np.array([1.0])), ("DH row 1", "alpha")),  # type: ignore[arg-type]
        (DHRow(d=np.float16(np.inf)), ("DH row 1", "d", "NaN or inf")),
        (DHRow(limits={}), ("joint1", "limits", "pair (lo, hi)")),  # type: ignore[arg-type]
        (DHRow(limits={0: -1.0, 1: 1.0}), ("joint1", "limits", "{0: -1.0")),  # type: ignore[arg-type]
        (DHRow(limits=("-1", "1")), ("joint1", "limits", "('-1', '1')")),  # type: ignore[arg-type]
    ],
)
def test_from_dh_refuses_wrong_typed_fields(row: DHRow, parts: tuple[str, ...]) -> None:
    raises_kinetree(lambda: from_dh([row]), InvalidValueError, *parts)


def test_from_dh_tool_of_the_wrong_shape_is_a_shape_error() -> None:
    raises_kinetree(
        lambda: from_dh([DHRow()], tool=[[1.0, 0, 0, 0]]), ShapeError, "tool", "4, 4)", "(1, 4)"
    )


@pytest.mark.parametrize(
    "limits",
    [
        {},
        {0: -1.0, 1: 1.0},
        ("-1", "1"),
        (b"0", 1.0),
        (1j, 2.0),
        (None, 1.0),
        (np.array([0.0]), 1.0),
        (True, 2.0),
        (0.0, HUGE_INT),
    ],
)
def test_builder_limits_must_be_a_pair_of_numbers(limits: Any) -> None:
    b = ModelBuilder("m", root="a")
    raises_kinetree(lambda: b.add_joint("j", "a", "b", limits=limits), InvalidValueError, "'j'")


def test_builder_limits_may_be_an_array_or_list() -> None:
    b = ModelBuilder("m", root="a")
    b.add_joint("j1", "a", "b", limits=np.array([-1.0, 1.0]))
    b.add_joint("j2", "b", "c", limits=[-2, 2])
    np.testing.assert_array_equal(b.build().limits, [[-1.0, 1.0], [-2.0, 2.0]])


@pytest.mark.parametrize(
    "call",
    [
        lambda: ModelBuilder("m").add_joint("j", "base", "b", axis=[HUGE_INT, 0, 0]),
        lambda: ModelBuilder("m").add_ball_joint("j", "base", "b", swing=HUGE_INT),
        lambda: ModelBuilder("m").add_joint("j", "base", "b").set_neutral({"j": HUGE_INT}),
        lambda: from_dh(
            [DHRow()], base=[[1, 0, 0, HUGE_INT], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]
        ),
        lambda: read_bvh("clip.bvh", scale=HUGE_INT),
    ],
    ids=["axis", "swing", "neutral", "base", "bvh-scale"],
)
def test_ints_past_the_float_range_are_invalid_values(call: Callable[[], object]) -> None:
    raises_kinetree(call, InvalidValueError)


def test_bvh_clip_frame_time_past_the_float_range(mini_clip: BVHClip) -> None:
    raises_kinetree(
        lambda: dataclasses.replace(mini_clip, frame_time=HUGE_INT),
        InvalidValueError,
        "frame_time",
    )


# Origins: each finite, but two near 1e308 sum to inf in FK. The builder refuses an origin
# more than MAX_ORIGIN_DISTANCE = 1e12 from its parent, for every loader.


def far(x: float) -> np.ndarray:
    T = np.eye(4)
    T[0, 3] = x
    return T


def test_builder_refuses_origins_past_1e12() -> None:
    from kinetree.builder import MAX_ORIGIN_DISTANCE

    assert MAX_ORIGIN_DISTANCE == 1e12
    b = ModelBuilder("m", root="a")
    raises_kinetree(
        lambda: b.add_joint("x", "a", "b", origin=far(1e308)),
        InvalidValueError,
        "origin of joint 'x' is 1e308 m from its parent; kinetree accepts at most 1e12 m",
    )
    raises_kinetree(
        lambda: b.add_frame("tip", "a", origin=far(-2e12)),
        InvalidValueError,
        "origin of frame 'tip' is 2e12 m from its parent",
    )
    raises_kinetree(
        lambda: b.add_ball_joint("s", "a", "b", origin=far(1e13)),
        InvalidValueError,
        "origin of ball joint 's' is 1e13 m",
    )
    raises_kinetree(
        lambda: ModelBuilder("m", root_origin=far(1e300)),
        InvalidValueError,
        "root_origin is 1e300 m from the world origin",
    )
    # The bound itself is accepted, and a long chain at the bound stays finite.
    for k in range(100):
        b.add_joint(f"j{k}", "a" if k == 0 else f"l{k - 1}", f"l{k}", origin=far(1e12))
    m = b.build()
    assert np.all(np.isfinite(m.fk_all(m.neutral())))


def test_from_dh_huge_lengths_name_the_row() -> None:
    raises_kinetree(
        lambda: from_dh([DHRow(a=1e308), DHRow(a=1e308)]),
        InvalidValueError,
        "DH row 1: a is 1e308 m",
        "at most 1e12 m",
    )
    raises_kinetree(
        lambda: from_dh([DHRow(), DHRow(d=-3e12)], convention="modified"),
        InvalidValueError,
        "DH row 2: d is -3e12 m",
    )
    raises_kinetree(
        lambda: from_dh([DHRow()], tool=far(1e308)),
        InvalidValueError,
        "origin of frame 'flange' is 1e308 m from its parent",
    )


def test_urdf_huge_origins_name_file_and_joint(tmp_path: Path) -> None:
    origin = '<origin xyz="1e308 0 0"/><axis xyz="0 0 1"/>' + LIMIT
    text = urdf(
        joint("j1", "a", "b", body=origin),
        joint("j2", "b", "c", body=origin),
        links=("a", "b", "c"),
    )
    p = write_urdf(tmp_path, text)
    raises_kinetree(
        lambda: kinetree.load(p),
        InvalidValueError,
        str(p),
        "origin of joint 'j1' is 1e308 m from its parent; kinetree accepts at most 1e12 m",
    )


def test_bvh_huge_offsets_and_positions_name_joint_and_line(tmp_path: Path) -> None:
    p = tmp_path / "far.bvh"
    p.write_text(MINI_BVH.replace("OFFSET 0 10 0", "OFFSET 0 1e308 0"))
    raises_kinetree(
        lambda: read_bvh(p), FileFormatError, str(p), "line 6", "joint 'Spine'", "1e308"
    )
    p.write_text(MINI_BVH.replace("4 5 6 40", "4 1e308 6 40"))
    raises_kinetree(
        lambda: read_bvh(p),
        FileFormatError,
        "line 24",
        "Yposition of joint 'Hips' in frame 2 is 1e308",
        "at most 1e12",
    )
    p.write_text(MINI_BVH)
    raises_kinetree(
        lambda: read_bvh(p, scale=1e300), FileFormatError, "line 6", "joint 'Spine'", "1e301"
    )


# Wide trees: the duplicate-name checks were O(n^2) (8,000 sibling BVH joints took 12.6 s).


def _cpu_seconds(f: Any) -> float:
    """CPU time of ``f()`` in this process (not wall time: other processes do not count)."""
    import time

    t0 = time.process_time()
    f()
    return time.process_time() - t0


def test_builder_build_is_not_quadratic_in_the_number_of_joints() -> None:
    # A growth ratio, not a time limit: 4x the joints must cost well under 16x (quadratic).
    def builder(n: int) -> ModelBuilder:
        b = ModelBuilder("wide", root="a")
        for k in range(n):
            b.add_joint(f"j{k}", "a", f"l{k}", type="fixed")
        return b

    small, large = builder(5_000), builder(20_000)
    assert len(large.build().frame_names) == 20_001
    ratio = min(_cpu_seconds(large.build) for _ in range(2)) / max(
        min(_cpu_seconds(small.build) for _ in range(2)), 1e-4
    )
    assert ratio < 9.0, f"build() of 4x the sibling joints cost {ratio:.1f}x the CPU time"


def test_wide_bvh_of_5000_sibling_joints_loads(tmp_path: Path) -> None:
    def write(n: int) -> Path:
        joints = "".join(
            f"JOINT w{k}\n{{\nOFFSET 1 0 0\nCHANNELS 1 Zrotation\n"
            "End Site\n{\nOFFSET 0 1 0\n}\n}\n"
            for k in range(n)
        )
        p = tmp_path / f"wide{n}.bvh"
        p.write_text(
            "HIERARCHY\nROOT r\n{\nOFFSET 0 0 0\nCHANNELS 0\n" + joints + "}\n"
            "MOTION\nFrames: 1\nFrame Time: 0.04\n" + " 0" * n + "\n"
        )
        return p

    n = 5000
    small, large = write(n // 4), write(n)
    clip = read_bvh(large)
    assert clip.model.dof == n and clip.n_end_sites == n
    # A growth ratio, not a time limit: 4x the joints must cost well under 16x (quadratic).
    t_large = min(_cpu_seconds(lambda: read_bvh(large)) for _ in range(2))
    t_small = min(_cpu_seconds(lambda: read_bvh(small)) for _ in range(2))
    ratio = t_large / max(t_small, 1e-4)
    assert ratio < 9.0, f"reading 4x the sibling joints cost {ratio:.1f}x the CPU time"


def test_urdf_duplicate_links_are_still_reported(tmp_path: Path) -> None:
    p = write_urdf(tmp_path, urdf(joint(), links=("a", "b", "b", "a", "c")))
    raises_kinetree(lambda: load_urdf(p), ModelStructureError, str(p), "defined twice: a, b")


# MJCF loads through MuJoCo (tests/io/test_mjcf.py); a URDF must have a <robot> root.

MJCF = """<mujoco model="arm"><worldbody><body name="link1" pos="0 0 0.1">
<joint name="j1" type="hinge" axis="0 0 1"/></body></worldbody></mujoco>
"""


@pytest.mark.parametrize("name", ["arm.xml", "arm.XML", "arm.mjcf"])
def test_load_reads_mjcf_by_name(name: str, tmp_path: Path) -> None:
    pytest.importorskip("mujoco")
    from kinetree.io import MJCFWarning

    p = tmp_path / name
    p.write_text(MJCF)
    # link1 has no mass: MuJoCo would not simulate it; its kinematics load, with a warning
    with pytest.warns(MJCFWarning, match="would not simulate"):
        model = kinetree.load(p)
    assert model.joint_names == ("j1",) and model.frame_names == ("world", "link1")


def test_load_xml_with_a_robot_root_points_to_load_urdf(tmp_path: Path) -> None:
    p = tmp_path / "arm.xml"
    p.write_text(urdf(joint()))
    raises_kinetree(lambda: kinetree.load(p), UnsupportedError, "<robot>", "load_urdf", "MJCF")
    assert load_urdf(p).joint_names == ("j1",)


@pytest.mark.parametrize(
    ("text", "root"),
    [
        ('<link name="a"><link name="b"><mujoco model="m"/></link></link>', "<link>"),
        (MJCF, "<mujoco>"),
        ('<robots><robot name="r"><link name="a"/></robot></robots>', "<robots>"),
    ],
)
def test_urdf_needs_a_robot_root(text: str, root: str, tmp_path: Path) -> None:
    p = write_urdf(tmp_path, text)
    msg = raises_kinetree(lambda: kinetree.load(p), FileFormatError, str(p), root, "<robot>")
    if root == "<mujoco>":
        assert "MJCF" in msg


def test_huge_mimic_multiplier_is_refused() -> None:
    from kinetree import ModelBuilder

    b = ModelBuilder("m", root="a")
    b.add_joint("j1", "a", "b", axis="z", limits=(-2.0, 2.0))
    with pytest.raises(KinetreeError, match="mimic multiplier"):
        b.add_joint("j2", "b", "c", axis="z", mimic=("j1", 1e308, 0.0))


@pytest.mark.parametrize("empty", ["", "   "])
def test_an_empty_path_is_called_empty(empty: str) -> None:
    with pytest.raises(InvalidValueError, match="empty path") as info:
        kinetree.load(empty)
    assert "folder" not in str(info.value)


@pytest.mark.parametrize(
    "url", ["https://example.com/robots/arm.urdf", "file:///tmp/arm.urdf", "s3://bucket/a.xml"]
)
def test_a_url_is_named_as_given(url: str) -> None:
    with pytest.raises(UnsupportedError, match="URL") as info:
        kinetree.load(url)
    assert repr(url) in str(info.value)  # every slash kept
