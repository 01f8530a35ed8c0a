"""BVH in and out: parsing, the skeleton model, joint positions, round trips, errors.

Expected joint positions are computed here with explicit rotation matrices, never
through kinetree's FK.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest

import kinetree
from kinetree import BVHClip, FileFormatError, read_bvh, write_bvh
from kinetree.errors import InvalidValueError

DATA = Path(__file__).resolve().parents[1] / "data" / "bvh"
FILES = sorted(DATA.glob("*.bvh"))
CMU = DATA / "cmu_12_01_walk.bvh"
CHANNELS = ("Xposition", "Yposition", "Zposition", "Xrotation", "Yrotation", "Zrotation")

# (name, parent index, offset, channels, is End Site), in file order.
JointSpec = tuple[str, int, tuple[float, float, float], tuple[str, ...], bool]


# --- an independent reference: explicit matrices ------------------------------------


def Rx(deg: float) -> np.ndarray:
    c, s = np.cos(np.radians(deg)), np.sin(np.radians(deg))
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def Ry(deg: float) -> np.ndarray:
    c, s = np.cos(np.radians(deg)), np.sin(np.radians(deg))
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def Rz(deg: float) -> np.ndarray:
    c, s = np.cos(np.radians(deg)), np.sin(np.radians(deg))
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


ROT = {"X": Rx, "Y": Ry, "Z": Rz}
UNIT = {"X": np.array([1.0, 0, 0]), "Y": np.array([0, 1.0, 0]), "Z": np.array([0, 0, 1.0])}


def reference_positions(
    joints: Sequence[JointSpec], values: np.ndarray, replace: bool = True
) -> np.ndarray:
    """World positions (frames, joints, 3): local = Trans(t) C1 C2 ..., the rotations in
    channel order. ``t`` is the OFFSET with each listed position channel's axis set to
    the channel value (``replace``: Blender's and MotionBuilder's reading, the OFFSET
    being the rest value) or increased by it (``replace=False``), along the parent's
    axes wherever the channel is listed."""
    values = np.atleast_2d(values)
    out = np.zeros((values.shape[0], len(joints), 3))
    for f, row in enumerate(values):
        R_world: list[np.ndarray] = []
        p_world: list[np.ndarray] = []
        col = 0
        for i, (_, parent, offset, channels, _) in enumerate(joints):
            R = np.eye(3) if parent < 0 else R_world[parent]
            p = np.zeros(3) if parent < 0 else p_world[parent]
            t = np.array(offset, dtype=float)
            R_parent = R
            for ch in channels:
                v = row[col]
                col += 1
                if ch.endswith("rotation"):
                    R = R @ ROT[ch[0]](v)
                else:
                    k = "XYZ".index(ch[0])
                    t[k] = v if replace else t[k] + v
            p = p + R_parent @ t
            R_world.append(R)
            p_world.append(p)
            out[f, i] = p
        assert col == len(row)
    return out


def clip_spec(clip: BVHClip) -> list[JointSpec]:
    return [(j.name, j.parent, j.offset, j.channels, j.end_site) for j in clip.joints]


def format_bvh(joints: Sequence[JointSpec], values: np.ndarray, frame_time: str) -> str:
    """The test's own BVH text writer (joints in file order, every value with repr)."""
    lines = ["HIERARCHY"]
    kids: dict[int, list[int]] = {}
    for i, j in enumerate(joints):
        kids.setdefault(j[1], []).append(i)

    def emit(i: int, depth: int) -> None:
        name, parent, offset, channels, end = joints[i]
        ind = "  " * depth
        lines.append(ind + ("End Site" if end else ("ROOT " if parent < 0 else "JOINT ") + name))
        lines.append(ind + "{")
        lines.append(ind + "  OFFSET " + " ".join(repr(float(v)) for v in offset))
        if not end:
            lines.append(ind + f"  CHANNELS {len(channels)} " + " ".join(channels))
        for k in kids.get(i, []):
            emit(k, depth + 1)
        lines.append(ind + "}")

    emit(kids[-1][0], 0)
    lines += ["MOTION", f"Frames: {len(values)}", f"Frame Time: {frame_time}"]
    lines += [" ".join(repr(float(v)) for v in row) for row in values]
    return "\n".join(lines) + "\n"


def random_skeleton(rng: np.random.Generator) -> list[JointSpec]:
    """A random tree: any channel subset in any order on any joint, End Sites on leaves."""
    joints: list[JointSpec] = []

    def offset() -> tuple[float, float, float]:
        o = rng.uniform(-10.0, 10.0, 3)
        return (float(o[0]), float(o[1]), float(o[2]))

    def add(parent: int, depth: int) -> None:
        if parent < 0:
            kind = rng.integers(4)
            pos, rot = list(CHANNELS[:3]), list(rng.permutation(CHANNELS[3:]))
            channels = [pos + rot, rot + pos, list(rng.permutation(CHANNELS)), rot][kind]
        else:
            k = int(rng.integers(0, 7))
            channels = list(rng.permutation(CHANNELS)[:k])
        me = len(joints)
        joints.append((f"J{me}", parent, offset(), tuple(str(c) for c in channels), False))
        n_kids = int(rng.integers(0, 3)) if depth < 4 else 0
        for _ in range(n_kids):
            add(me, depth + 1)
        n_end = 1 if n_kids == 0 else int(rng.random() < 0.3)
        if rng.random() < 0.2:
            n_end += 1  # two End Sites under one joint
        for e in range(n_end):
            name = f"J{me}_end" if e == 0 else f"J{me}_end{e + 1}"
            joints.append((name, me, offset(), (), True))

    add(-1, 0)
    return joints


def random_values(rng: np.random.Generator, joints: Sequence[JointSpec], n: int) -> np.ndarray:
    chans = [c for j in joints for c in j[3]]
    vals = np.empty((n, len(chans)))
    for k, c in enumerate(chans):
        lim = 180.0 if c.endswith("rotation") else 50.0
        vals[:, k] = rng.uniform(-lim, lim, n)
    return vals


# --- a classic sample, positions worked out by hand ------------------------------------

SAMPLE = """\
HIERARCHY
ROOT Hips
{
\tOFFSET 1.0 2.0 3.0
\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
\tJOINT Chest
\t{
\t\tOFFSET 0.0 5.0 0.5
\t\tCHANNELS 3 Zrotation Xrotation Yrotation
\t\tJOINT Head
\t\t{
\t\t\tOFFSET 0.0 4.0 0.0
\t\t\tCHANNELS 3 Xrotation Yrotation Zrotation
\t\t\tEnd Site
\t\t\t{
\t\t\t\tOFFSET 0.0 2.0 0.0
\t\t\t}
\t\t}
\t\tJOINT LeftArm
\t\t{
\t\t\tOFFSET 3.0 3.5 0.0
\t\t\tCHANNELS 3 Yrotation Zrotation Xrotation
\t\t\tEnd Site
\t\t\t{
\t\t\t\tOFFSET 6.0 0.0 0.0
\t\t\t}
\t\t}
\t}
\tJOINT LeftLeg
\t{
\t\tOFFSET 2.0 -1.0 0.0
\t\tCHANNELS 3 Zrotation Xrotation Yrotation
\t\tEnd Site
\t\t{
\t\t\tOFFSET 0.0 -9.0 1.0
\t\t}
\t}
}
MOTION
Frames: 3
Frame Time: 0.0333333
0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
10.5 -20 30 30 -45 60 15 25 -35 -50 10 20 70 -80 90 5 -15 25
-3 4 -5 -170 95 -10 0 0 90 180 -90 45 -30 60 -120 100 0 -45
"""
SAMPLE_NAMES = (
    "Hips", "Chest", "Head", "Head_end", "LeftArm", "LeftArm_end", "LeftLeg", "LeftLeg_end",
)  # fmt: skip


def sample_expected(row: Sequence[float]) -> np.ndarray:
    """The sample's world positions, one joint at a time, written out explicitly."""
    px, py, pz, h1, h2, h3, c1, c2, c3, d1, d2, d3, a1, a2, a3, l1, l2, l3 = row
    t = np.array
    p_hips = t([1.0, 2.0, 3.0]) + t([px, py, pz])
    R_hips = Rz(h1) @ Rx(h2) @ Ry(h3)
    p_chest = p_hips + R_hips @ t([0.0, 5.0, 0.5])
    R_chest = R_hips @ Rz(c1) @ Rx(c2) @ Ry(c3)
    p_head = p_chest + R_chest @ t([0.0, 4.0, 0.0])
    R_head = R_chest @ Rx(d1) @ Ry(d2) @ Rz(d3)
    p_head_end = p_head + R_head @ t([0.0, 2.0, 0.0])
    p_arm = p_chest + R_chest @ t([3.0, 3.5, 0.0])
    R_arm = R_chest @ Ry(a1) @ Rz(a2) @ Rx(a3)
    p_arm_end = p_arm + R_arm @ t([6.0, 0.0, 0.0])
    p_leg = p_hips + R_hips @ t([2.0, -1.0, 0.0])
    R_leg = R_hips @ Rz(l1) @ Rx(l2) @ Ry(l3)
    p_leg_end = p_leg + R_leg @ t([0.0, -9.0, 1.0])
    return np.stack([p_hips, p_chest, p_head, p_head_end, p_arm, p_arm_end, p_leg, p_leg_end])


def write_text(tmp_path: Path, text: str, name: str = "clip.bvh") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    return write_text(tmp_path, SAMPLE, "sample.bvh")


def test_sample_positions_match_hand_computation(sample: Path) -> None:
    # The hand computation reads the root's channels as added to its OFFSET (1, 2, 3).
    clip = read_bvh(sample, positions="add")
    assert clip.joint_names == SAMPLE_NAMES
    assert clip.n_frames == 3
    assert clip.frame_time == 0.0333333
    rows = [[float(v) for v in ln.split()] for ln in SAMPLE.strip().splitlines()[-3:]]
    got = clip.joint_positions()
    assert got.shape == (3, 8, 3)
    # Frame 0 is the rest pose: offsets add up.
    rest = np.array([[1, 2, 3], [1, 7, 3.5], [1, 11, 3.5], [1, 13, 3.5], [4, 10.5, 3.5],
                     [10, 10.5, 3.5], [3, 1, 3], [3, -8, 4]])  # fmt: skip
    np.testing.assert_allclose(got[0], rest, rtol=0, atol=1e-12)
    for f in range(3):
        np.testing.assert_allclose(got[f], sample_expected(rows[f]), rtol=0, atol=1e-9)
    # The generic reference agrees with the hand-written one.
    np.testing.assert_allclose(
        reference_positions(clip_spec(clip), np.array(rows), replace=False), got, rtol=0, atol=1e-9
    )
    # By default the root's channels replace its OFFSET: the whole skeleton sits
    # (1, 2, 3) lower, in every frame; q (the channel values) is the same.
    default = read_bvh(sample)
    np.testing.assert_array_equal(default.q, clip.q)
    np.testing.assert_allclose(default.joint_positions(), got - [1.0, 2.0, 3.0], atol=1e-12)
    np.testing.assert_allclose(
        reference_positions(clip_spec(clip), np.array(rows)), default.joint_positions(), atol=1e-9
    )


def test_sample_model_layout(sample: Path) -> None:
    clip = read_bvh(sample)
    m = clip.model
    assert m.frame_names == ("world", *SAMPLE_NAMES)
    assert not any("#" in f for f in m.frame_names)
    assert m.joint_names[:6] == (
        "Hips_Xposition", "Hips_Yposition", "Hips_Zposition", "Hips_z", "Hips_x", "Hips_y",
    )  # fmt: skip
    assert m.joint_groups["Hips"] == m.joint_names[:6]
    assert m.joint_groups["Head"] == ("Head_x", "Head_y", "Head_z")
    assert list(m.joint_indices("LeftArm")) == [12, 13, 14]
    assert m.dof == 18 and clip.q.shape == (3, 18)
    assert set(m.end_effectors) == {"Head_end", "LeftArm_end", "LeftLeg_end"}
    assert np.all(np.isinf(m.limits))
    # q is radians for rotations and file units for positions, columns in file order.
    np.testing.assert_allclose(clip.q[1, :3], [10.5, -20, 30])
    np.testing.assert_allclose(clip.q[1, 3:6], np.radians([30, -45, 60]))
    np.testing.assert_allclose(clip.channel_values()[1, :6], [10.5, -20, 30, 30, -45, 60])
    assert clip.channels[:4] == (
        ("Hips", "Xposition"), ("Hips", "Yposition"), ("Hips", "Zposition"), ("Hips", "Zrotation"),
    )  # fmt: skip
    assert clip.fps == pytest.approx(1 / 0.0333333)
    assert "BVHClip" in repr(clip)


def test_model_fk_matches_joint_positions(sample: Path) -> None:
    clip = read_bvh(sample)
    for f in range(clip.n_frames):
        T = clip.model.fk(clip.q[f], "LeftArm_end")
        np.testing.assert_allclose(T[:3, 3], clip.joint_positions()[f, 5], atol=1e-12)


# --- every stored file, and generated ones ---------------------------------------------


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_files_match_reference(path: Path) -> None:
    clip = read_bvh(path)
    frames = sorted({0, clip.n_frames // 2, clip.n_frames - 1})
    vals = clip.channel_values()[frames]
    expected = reference_positions(clip_spec(clip), vals)
    np.testing.assert_allclose(clip.joint_positions()[frames], expected, rtol=0, atol=1e-9)


def assert_same_clip(a: BVHClip, b: BVHClip) -> None:
    assert b.joint_names == a.joint_names
    assert [j.channels for j in b.joints] == [j.channels for j in a.joints]
    assert [j.parent for j in b.joints] == [j.parent for j in a.joints]
    assert b.n_frames == a.n_frames
    assert b.frame_time == a.frame_time
    assert b.model.joint_names == a.model.joint_names
    np.testing.assert_allclose(b.joint_positions(), a.joint_positions(), rtol=0, atol=1e-9)


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_round_trip_files(path: Path, tmp_path: Path) -> None:
    a = read_bvh(path)
    out = tmp_path / "out.bvh"
    write_bvh(out, a)
    b = read_bvh(out)
    assert_same_clip(a, b)
    assert b.frame_time_text == a.frame_time_text
    # Writing again gives the same text: the format is stable.
    out2 = tmp_path / "out2.bvh"
    write_bvh(out2, b)
    assert out2.read_text() == out.read_text()


def test_full_precision_frame_time_digits(tmp_path: Path) -> None:
    a = read_bvh(DATA / "full_precision_frame_time.bvh")
    assert a.frame_time_text == "0.0417083750417"
    assert a.frame_time == 0.0417083750417
    out = tmp_path / "out.bvh"
    write_bvh(out, a)
    assert "Frame Time: 0.0417083750417\n" in out.read_text()
    assert read_bvh(out).frame_time == a.frame_time


def test_rotation_first_root(tmp_path: Path) -> None:
    clip = read_bvh(DATA / "rotation_first_root.bvh")
    assert clip.joints[0].channels == (
        "Zrotation", "Xrotation", "Yrotation", "Xposition", "Yposition", "Zposition",
    )  # fmt: skip
    # The position channels act first (in the parent's frame), whatever their place.
    assert clip.model.joint_names[:6] == (
        "Hips_Xposition", "Hips_Yposition", "Hips_Zposition", "Hips_z", "Hips_x", "Hips_y",
    )  # fmt: skip
    # Root world position = p, not R(z, x, y) @ p.
    rows = clip.channel_values()
    np.testing.assert_allclose(clip.joint_positions()[:, 0], rows[:, 3:6], atol=1e-12)
    # Spine = p + R @ offset.
    R = Rz(rows[0, 0]) @ Rx(rows[0, 1]) @ Ry(rows[0, 2])
    np.testing.assert_allclose(
        clip.joint_positions()[0, 1], rows[0, 3:6] + R @ [0.0, 10.0, 0.0], atol=1e-12
    )
    out = tmp_path / "rf.bvh"
    write_bvh(out, clip)
    text = out.read_text()
    assert "CHANNELS 6 Zrotation Xrotation Yrotation Xposition Yposition Zposition" in text
    assert_same_clip(clip, read_bvh(out))
    write_bvh(tmp_path / "rf2.bvh", read_bvh(out))
    assert (tmp_path / "rf2.bvh").read_text() == text


def test_rotation_first_root_reads_like_its_position_first_twin(tmp_path: Path) -> None:
    text = (DATA / "rotation_first_root.bvh").read_text()
    first = "CHANNELS 6 Zrotation Xrotation Yrotation Xposition Yposition Zposition"
    twin_header = "CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation"
    head, motion = text.split("MOTION\n")
    lines = motion.splitlines()
    rows = [r.split() for r in lines[2:] if r.strip()]
    twin_rows = [" ".join(r[3:6] + r[0:3] + r[6:]) for r in rows]
    twin = head.replace(first, twin_header) + "MOTION\n" + "\n".join(lines[:2] + twin_rows)
    path = tmp_path / "twin.bvh"
    path.write_text(twin + "\n")
    a, b = read_bvh(DATA / "rotation_first_root.bvh"), read_bvh(path)
    np.testing.assert_allclose(a.joint_positions(), b.joint_positions(), rtol=0, atol=1e-12)
    Ta = a.model.fk_all(a.q)
    Tb = b.model.fk_all(b.q)
    np.testing.assert_allclose(Ta, Tb, rtol=0, atol=1e-12)  # orientations too


def test_rotations_preset_and_default_on_position_channels_everywhere(tmp_path: Path) -> None:
    joints: list[JointSpec] = [
        ("Hips", -1, (0.0, 0.0, 0.0), CHANNELS, False),
        ("Spine", 0, (0.0, 1.0, 0.0), ("Zrotation", "Xposition", "Yposition", "Zposition"),
         False),
        ("Arm", 1, (1.0, 0.0, 0.0), CHANNELS[::-1], False),
        ("Arm_end", 2, (1.0, 0.0, 0.0), (), True),
    ]  # fmt: skip
    values = np.zeros((1, 16))
    values[0, 7:10] = (0.0, 1.0, 0.0)  # Spine at its OFFSET
    clip = read_bvh(write_text(tmp_path, format_bvh(joints, values, "0.1")))
    m = clip.model
    rotations = m.presets["rotations"]
    assert rotations == ("Hips_x", "Hips_y", "Hips_z", "Spine_z", "Arm_z", "Arm_y", "Arm_x")
    assert m.default_active == ("rotations",)
    # By default IK moves rotations only: bone lengths stay.
    goal = m.fk(clip.q[0], "Arm_end")[:3, 3] + [0.3, 0.4, 0.0]
    r = m.ik(kinetree.Position(goal), "Arm_end", q0=clip.q[0])
    moved = np.nonzero(np.abs(r.q - clip.q[0]) > 0)[0]
    assert moved.size and all(m.joint_names[k] in rotations for k in moved)
    assert np.linalg.norm(m.fk(r.q, "Arm_end")[:3, 3] - goal) < 1e-6
    # ... unless asked: every DoF by name.
    r2 = m.ik(kinetree.Position(goal), "Arm_end", q0=clip.q[0], active=list(m.joint_names))
    assert r2.success
    # A root-only position skeleton keeps every DoF active by default.
    assert read_bvh(CMU).model.default_active is None


def test_standard_name_presets() -> None:
    m = read_bvh(CMU).model
    assert m.presets["right_arm"] == tuple(
        f"{j}_{a}" for j in ("RightArm", "RightForeArm", "RightHand") for a in "zyx"
    )
    assert set(m.presets["right_arm+spine"]) == set(m.presets["right_arm"]) | {
        f"{j}_{a}" for j in ("RightShoulder", "Spine1") for a in "zyx"
    }
    above = set(m.presets["above_hips"])
    assert {"LowerBack_z", "Head_x", "LeftHand_y", "RThumb_z"} <= above
    assert not above & {"Hips_z", "LeftUpLeg_x", "Hips_Xposition"}
    assert m.presets["left_leg"] == tuple(
        f"{j}_{a}" for j in ("LeftUpLeg", "LeftLeg", "LeftFoot") for a in "zyx"
    )
    assert len(m.presets["legs"]) == 18
    # The seed's three reaching cases, on a real skeleton.
    q0 = read_bvh(CMU).q[100]
    for preset in ("right_arm", "right_arm+spine", "above_hips"):
        mask = m.active_mask(preset)
        goal = m.fk(q0, "RightHand")[:3, 3] + [2.0, 1.0, 1.0]
        r = m.ik(kinetree.Position(goal), "RightHand", q0=q0, active=preset)
        assert r.success, preset
        assert np.all(r.q[~mask] == q0[~mask])
    # Skeletons without standard names get "rotations" only.
    tiny = read_bvh(DATA / "rotation_first_root.bvh").model
    assert set(tiny.presets) == {"rotations"}


@pytest.mark.parametrize("seed", range(12))
def test_generated_skeletons(seed: int, tmp_path: Path) -> None:
    rng = np.random.default_rng(seed)
    joints = random_skeleton(rng)
    values = random_values(rng, joints, int(rng.integers(1, 6)))
    if values.shape[1] == 0:
        pytest.skip("no channels drawn")
    path = write_text(tmp_path, format_bvh(joints, values, "0.0125"), "gen.bvh")
    a = read_bvh(path)
    assert a.joint_names == tuple(j[0] for j in joints)
    assert [j.channels for j in a.joints] == [j[3] for j in joints]
    np.testing.assert_allclose(
        a.joint_positions(), reference_positions(joints, values), rtol=0, atol=1e-9
    )
    out = tmp_path / "out.bvh"
    write_bvh(out, a)
    b = read_bvh(out)
    assert_same_clip(a, b)
    assert b.frame_time_text == "0.0125"


def test_position_channels_on_inner_joint_and_zero_channels(tmp_path: Path) -> None:
    joints: list[JointSpec] = [
        ("Root", -1, (0.0, 0.0, 0.0), ("Yrotation",), False),
        ("Slide", 0, (1.0, 0.0, 0.0), ("Zposition", "Xrotation", "Xposition"), False),
        ("Rigid", 1, (0.0, 2.0, 0.0), (), False),
        ("Rigid_end", 2, (0.0, 1.0, 0.0), (), True),
    ]
    values = np.array([[90.0, 3.0, 90.0, 4.0], [0.0, -1.0, 0.0, 0.5]])
    path = write_text(tmp_path, format_bvh(joints, values, "0.5"))
    # By default a position channel replaces the OFFSET along its axis: Slide sits at
    # Ry(90)(4, 0, 3) = (3, 0, -4) in frame 0, Rigid 2 further along x.
    P = read_bvh(path).joint_positions()
    np.testing.assert_allclose(P, reference_positions(joints, values), atol=1e-12)
    np.testing.assert_allclose(P[0, 1], [3.0, 0.0, -4.0], atol=1e-12)
    np.testing.assert_allclose(P[0, 2], [5.0, 0.0, -4.0], atol=1e-12)
    clip = read_bvh(path, positions="add")
    # Positions act first, in the parent's frame: the group lists them first.
    assert clip.model.joint_groups["Slide"] == ("Slide_Zposition", "Slide_Xposition", "Slide_x")
    assert "Rigid" not in clip.model.joint_groups
    P = clip.joint_positions()
    np.testing.assert_allclose(P, reference_positions(joints, values, replace=False), atol=1e-12)
    # Frame 0 by hand: Ry(90) maps x->-z, z->x. Slide at Ry(90)((1,0,0) + (4,0,3)) =
    # (3,0,-5) (both position channels along Root's axes); Rigid: + Ry(90)Rx(90)(0,2,0) =
    # (2,0,0).
    np.testing.assert_allclose(P[0, 1], [3.0, 0.0, -5.0], atol=1e-12)
    np.testing.assert_allclose(P[0, 2], [5.0, 0.0, -5.0], atol=1e-12)
    out = tmp_path / "out.bvh"
    write_bvh(out, clip)
    assert_same_clip(clip, read_bvh(out, positions="add"))


def test_world_name_collision_and_two_end_sites(tmp_path: Path) -> None:
    joints: list[JointSpec] = [
        ("world", -1, (0.0, 0.0, 0.0), ("Xposition", "Zrotation"), False),
        ("world_end", 0, (1.0, 0.0, 0.0), (), True),
        ("world_end2", 0, (0.0, 1.0, 0.0), (), True),
    ]
    values = np.array([[1.0, 90.0]])
    clip = read_bvh(write_text(tmp_path, format_bvh(joints, values, "1")))
    assert clip.model.frame_names == ("_world", "world", "world_end", "world_end2")
    np.testing.assert_allclose(
        clip.joint_positions()[0], [[1, 0, 0], [1, 1, 0], [0, 0, 0]], atol=1e-12
    )


# --- kinetree.load, options, clip helpers ------------------------------------------------


@pytest.mark.parametrize("name", ["cmu_12_01_walk.bvh", "rotation_first_root.bvh"])
def test_load_gives_the_clip_model(name: str) -> None:
    path = DATA / name
    m1 = kinetree.load(path)
    m2 = read_bvh(path).model
    m3 = kinetree.load(str(path))
    assert m1.frame_names == m2.frame_names == m3.frame_names
    assert m1.joint_names == m2.joint_names
    assert dict(m1.joint_groups) == dict(m2.joint_groups)
    q = m1.random_configuration(4, rng=0)
    np.testing.assert_allclose(m1.fk_all(q), m2.fk_all(q), rtol=0, atol=1e-12)


def test_scale(sample: Path, tmp_path: Path) -> None:
    a = read_bvh(sample)
    b = read_bvh(sample, scale=0.01)
    np.testing.assert_allclose(b.joint_positions(), 0.01 * a.joint_positions(), atol=1e-12)
    assert b.joints[1].offset == pytest.approx((0.0, 0.05, 0.005))
    np.testing.assert_allclose(b.q[1, :3], [0.105, -0.2, 0.3])
    np.testing.assert_allclose(b.q[:, 3:], a.q[:, 3:])  # angles do not scale
    out = tmp_path / "m.bvh"
    write_bvh(out, b)  # written in the scaled unit
    assert_same_clip(b, read_bvh(out))
    for bad in (0.0, -1.0, float("nan"), "big"):
        with pytest.raises(InvalidValueError, match="scale"):
            read_bvh(sample, scale=bad)  # type: ignore[arg-type]


def test_up_z(tmp_path: Path) -> None:
    y_up = read_bvh(CMU)
    z_up = read_bvh(CMU, up="z")
    names = list(y_up.joint_names)
    P = z_up.joint_positions()
    head, hips = P[:, names.index("Head")], P[:, names.index("Hips")]
    assert np.all(head[:, 2] > hips[:, 2] + 5.0)  # the head is above the hips along +z
    Py = y_up.joint_positions()
    np.testing.assert_allclose(P[..., 0], Py[..., 0], atol=1e-12)
    np.testing.assert_allclose(P[..., 1], -Py[..., 2], atol=1e-12)
    np.testing.assert_allclose(P[..., 2], Py[..., 1], atol=1e-12)
    np.testing.assert_allclose(z_up.q, y_up.q)
    # Written files keep the source's axes; reading with the same up= gives the same clip.
    out = tmp_path / "z.bvh"
    write_bvh(out, z_up)
    assert_same_clip(y_up, read_bvh(out))
    assert_same_clip(z_up, read_bvh(out, up="z"))
    with pytest.raises(InvalidValueError, match="up"):
        read_bvh(CMU, up="x")


def test_slice_and_with_q(tmp_path: Path) -> None:
    clip = read_bvh(CMU)
    part = clip.slice(100, 110)
    assert part.n_frames == 10
    np.testing.assert_array_equal(part.q, clip.q[100:110])
    np.testing.assert_allclose(
        part.joint_positions(), clip.joint_positions()[100:110], rtol=0, atol=1e-12
    )
    out = tmp_path / "part.bvh"
    write_bvh(out, part)
    assert_same_clip(part, read_bvh(out))
    half = clip.slice(step=2)
    assert half.n_frames == 262 and half.frame_time == pytest.approx(2 * clip.frame_time)
    with pytest.raises(InvalidValueError):
        clip.slice(600, 700)
    rest = clip.with_q(np.zeros(clip.model.dof))
    assert rest.n_frames == 1
    assert rest.joint_positions()[0, 0].tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(kinetree.ShapeError):
        clip.with_q(np.zeros((2, 3)))
    assert not clip.q.flags.writeable


# --- the CMU walk -------------------------------------------------------------------------


def test_cmu_walk() -> None:
    t0 = time.perf_counter()
    clip = read_bvh(CMU)
    assert time.perf_counter() - t0 < 1.0
    assert clip.n_frames == 524
    assert clip.frame_time == pytest.approx(1 / 120, rel=1e-4)
    assert clip.fps == pytest.approx(120.0, rel=1e-4)
    assert sum(not j.end_site for j in clip.joints) == 31
    assert clip.model.dof == 6 + 30 * 3
    names = list(clip.joint_names)
    P = clip.joint_positions()
    height = P[:, names.index("Hips"), 1]
    assert 10.0 < height.mean() < 25.0
    assert np.all(P[:, names.index("Head"), 1] > height)
    feet = {side: P[:, names.index(f"{side}ToeBase"), :] for side in ("Left", "Right")}
    for foot in feet.values():
        assert foot[:, 1].min() > -0.05 * height.mean()  # not through the floor
        assert foot[:, 1].min() < 0.05 * height.mean()  # touches it
        assert foot[:, 1].max() < 0.4 * height.mean()  # steps, does not climb
    # The lowest joint is always on a foot.
    lowest = {names[k] for k in P[:, :, 1].argmin(axis=1)}
    assert all("Foot" in n or "Toe" in n for n in lowest)
    # The walker travels forward while the feet take turns leading.
    travel = P[-1, 0] - P[0, 0]
    assert abs(travel[2]) > 3.0 * height.mean() and abs(travel[0]) < 0.2 * abs(travel[2])
    lead = np.sign(feet["Left"][:, 2] - feet["Right"][:, 2])
    assert np.count_nonzero(np.diff(lead[lead != 0])) >= 4


# --- malformed files ------------------------------------------------------------------

MINI = [
    "HIERARCHY",  # 1
    "ROOT Hips",  # 2
    "{",  # 3
    "\tOFFSET 0 0 0",  # 4
    "\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation",  # 5
    "\tJOINT Spine",  # 6
    "\t{",  # 7
    "\t\tOFFSET 0 10 0",  # 8
    "\t\tCHANNELS 3 Zrotation Xrotation Yrotation",  # 9
    "\t\tEnd Site",  # 10
    "\t\t{",  # 11
    "\t\t\tOFFSET 0 5 0",  # 12
    "\t\t}",  # 13
    "\t}",  # 14
    "}",  # 15
    "MOTION",  # 16
    "Frames: 2",  # 17
    "Frame Time: 0.04",  # 18
    "1 2 3 10 20 30 1 2 3",  # 19
    "4 5 6 40 50 60 4 5 6",  # 20
]


def edit(line: int, text: str | None) -> Callable[[list[str]], list[str]]:
    """Replace 1-based ``line`` with ``text`` (None deletes it)."""

    def f(lines: list[str]) -> list[str]:
        out = list(lines)
        if text is None:
            del out[line - 1]
        else:
            out[line - 1] = text
        return out

    return f


def insert(line: int, text: str) -> Callable[[list[str]], list[str]]:
    return lambda lines: [*lines[: line - 1], text, *lines[line - 1 :]]


MALFORMED = [
    ("empty", lambda lines: [], 1, "expected 'HIERARCHY', found end of file"),
    ("no HIERARCHY", edit(1, "HIERARCHIE"), 1, "expected 'HIERARCHY'"),
    ("missing close brace", edit(14, None), 15, "expected JOINT, End Site or '}' closing joint"),
    ("extra close brace", insert(15, "}"), 16, "expected 'MOTION' after the hierarchy"),
    ("missing open brace", edit(7, None), 7, "expected '{' opening joint 'Spine'"),
    ("missing OFFSET", edit(8, None), 8, "expected 'OFFSET' of joint 'Spine', found 'CHANNELS'"),
    ("short OFFSET", edit(8, "\t\tOFFSET 0 10"), 9, "expected a number (OFFSET of joint"),
    ("text OFFSET", edit(12, "\t\t\tOFFSET 0 five 0"), 12, "found 'five'"),
    ("unknown channel", edit(9, "\t\tCHANNELS 3 Zrotation Wrotation Yrotation"), 9, "'Wrotation'"),
    ("repeated channel", edit(9, "\t\tCHANNELS 3 Zrotation Xrotation Zrotation"), 9, "twice"),
    ("channel count too big", edit(9, "\t\tCHANNELS 4 Zrotation Xrotation Yrotation"), 10,
     "expected a channel name"),
    ("channel count text", edit(9, "\t\tCHANNELS three"), 9, "expected the channel count"),
    ("duplicate joint", edit(6, "\tJOINT Hips"), 6, "duplicated joint name 'Hips'"),
    ("second root", insert(16, "ROOT Other"), 16, "only one ROOT"),
    ("no MOTION", lambda lines: lines[:15], 15, "closed at line 15), found end of file"),
    ("MOTION extra", edit(16, "MOTION now"), 16, "expected a new line after 'MOTION'"),
    ("no Frames", edit(17, "Frame: 2"), 17, "expected 'Frames: <count>'"),
    ("Frames text", edit(17, "Frames: two"), 17, "expected 'Frames: <count>'"),
    ("zero frames", lambda lines: [*lines[:16], "Frames: 0", "Frame Time: 0.04"], 17, "no frames"),
    ("bad Frame Time", edit(18, "Frame Time: soon"), 18, "expected 'Frame Time: <seconds>'"),
    ("zero Frame Time", edit(18, "Frame Time: 0"), 18, "positive number"),
    ("missing Frame Time", lambda lines: lines[:17], 17, "expected 'Frame Time: <seconds>'"),
    ("too few motion lines", edit(17, "Frames: 3"), 17, "expected 3 motion lines"),
    ("too many motion lines", edit(17, "Frames: 1"), 20, "expected end of file after 1 motion"),
    ("short motion line", edit(20, "4 5 6 40 50 60 4 5"), 20, "expected 9 numbers"),
    ("long motion line", edit(19, "1 2 3 10 20 30 1 2 3 4"), 19, "found 10"),
    ("text motion value", edit(20, "4 5 6 40 x 60 4 5 6"), 20, "found 'x'"),
    ("nan motion value", edit(19, "1 2 3 nan 20 30 1 2 3"), 19, "found 'nan'"),
    ("no channels", lambda lines: [*lines[:4], *lines[5:8], *lines[9:]], 2, "CHANNELS"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("mutate", "line", "message"),
    [case[1:] for case in MALFORMED],
    ids=[case[0] for case in MALFORMED],
)
def test_malformed(
    mutate: Callable[[list[str]], list[str]], line: int, message: str, tmp_path: Path
) -> None:
    path = write_text(tmp_path, "\n".join(mutate(MINI)) + "\n", "broken.bvh")
    with pytest.raises(FileFormatError) as info:
        read_bvh(path)
    text = str(info.value)
    assert str(path) in text
    assert f"line {line}:" in text
    assert message in text


def test_mini_is_valid(tmp_path: Path) -> None:
    clip = read_bvh(write_text(tmp_path, "\n".join(MINI) + "\n"))
    assert clip.n_frames == 2 and clip.joint_names == ("Hips", "Spine", "Spine_end")


def test_unreadable_file(tmp_path: Path) -> None:
    missing = tmp_path / "missing.bvh"
    with pytest.raises(FileFormatError, match=r"missing\.bvh"):
        read_bvh(missing)
    with pytest.raises(FileFormatError, match="cannot read BVH file"):
        read_bvh(tmp_path)  # a directory
    with pytest.raises(FileFormatError, match="does not exist"):
        kinetree.load(missing)


def test_crlf_and_braces_on_name_lines(tmp_path: Path) -> None:
    text = "\r\n".join(MINI).replace("JOINT Spine\r\n\t{", "JOINT Spine {") + "\r\n"
    clip = read_bvh(write_text(tmp_path, text))
    assert clip.joint_names == ("Hips", "Spine", "Spine_end")
    assert clip.n_frames == 2


def test_error_line_numbers_with_crlf(tmp_path: Path) -> None:
    lines = edit(20, "4 5 6 40 50 60 4 5")(MINI)
    path = write_text(tmp_path, "\r\n".join(lines) + "\r\n")
    with pytest.raises(FileFormatError, match=r"line 20: expected 9 numbers"):
        read_bvh(path)


# --- position channels: they replace the OFFSET ------------------------------------------

# A Bandai-Namco-style skeleton: every bone along its joint's x, position channels on every
# joint holding the joint's translation (= its OFFSET), rotations in Z X Y order.
BANDAI_CHANNELS = ("Xposition", "Yposition", "Zposition", "Zrotation", "Xrotation", "Yrotation")
BANDAI: list[JointSpec] = [
    ("joint_Root", -1, (0.0, 0.0, 0.0), BANDAI_CHANNELS, False),
    ("Hips", 0, (0.85, 93.98, -2.0), BANDAI_CHANNELS, False),
    ("Spine", 1, (15.74, 0.0, 0.0), BANDAI_CHANNELS, False),
    ("Head", 2, (16.38, 0.0, 0.0), BANDAI_CHANNELS, False),
    ("Head_end", 3, (6.46, 0.0, 0.0), (), True),
    ("UpperLeg_L", 1, (-2.19, -6.47, 0.0), BANDAI_CHANNELS, False),
    ("LowerLeg_L", 5, (39.08, 0.0, -1.2e-05), BANDAI_CHANNELS, False),
    ("Foot_L", 6, (40.99, 0.0, 0.0), BANDAI_CHANNELS, False),
    ("Foot_L_end", 7, (11.75, 0.0, 0.0), (), True),
]


def test_bandai_style_bones_keep_their_offset_length(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    moving = [j for j in BANDAI if not j[4]]
    values = np.zeros((5, 6 * len(moving)))
    for k, (_, _, offset, _, _) in enumerate(moving):
        values[:, 6 * k : 6 * k + 3] = offset  # the channel repeats the OFFSET
        values[:, 6 * k + 3 : 6 * k + 6] = rng.uniform(-120.0, 120.0, (5, 3))
    values[:, 0:3] = rng.uniform(-300.0, 300.0, (5, 3))  # the root travels
    values = np.round(values, 6)  # as a file holds them (write_bvh keeps 15 digits)
    path = write_text(tmp_path, format_bvh(BANDAI, values, "0.0166667"))
    clip = read_bvh(path)
    P = clip.joint_positions()
    np.testing.assert_allclose(P, reference_positions(BANDAI, values), rtol=0, atol=1e-9)
    for i, (name, parent, offset, _, _) in enumerate(BANDAI):
        if parent <= 0:
            continue
        length = np.linalg.norm(P[:, i] - P[:, parent], axis=-1)
        np.testing.assert_allclose(length, np.linalg.norm(offset), rtol=1e-12, err_msg=name)
    # The root sits at its channels; read as added, every bone is twice as long.
    np.testing.assert_allclose(P[:, 0], values[:, 0:3], rtol=0, atol=1e-9)
    added = read_bvh(path, positions="add").joint_positions()
    shin = np.linalg.norm(added[:, 7] - added[:, 6], axis=-1)
    np.testing.assert_allclose(shin, 2 * np.linalg.norm(BANDAI[7][2]), rtol=1e-12)
    # q is the file's channel values; the rest pose (neutral) is the OFFSET skeleton.
    pos = np.array([not c.endswith("rotation") for j in moving for c in j[3]])
    np.testing.assert_array_equal(clip.channel_values()[:, pos], values[:, pos])
    rest = np.asarray(clip.model.fk(clip.model.neutral(), "Foot_L"))[:3, 3]
    np.testing.assert_allclose(rest, [0.85 - 2.19 + 39.08 + 40.99, 93.98 - 6.47, -2.0 - 1.2e-05])
    # Writing and reading back gives the same numbers and the same positions.
    out = tmp_path / "out.bvh"
    write_bvh(out, clip)
    back = read_bvh(out)
    np.testing.assert_array_equal(back.q, clip.q)
    np.testing.assert_array_equal(back.joint_positions(), P)


def test_root_with_an_offset_sits_at_its_channels(tmp_path: Path) -> None:
    joints: list[JointSpec] = [
        ("Hips", -1, (10.0, 90.0, 5.0), CHANNELS, False),
        ("Spine", 0, (0.0, 10.0, 0.0), ("Zrotation",), False),
        ("Spine_end", 1, (0.0, 5.0, 0.0), (), True),
    ]
    values = np.array([[1.0, 2.0, 3.0, 0.0, 0.0, 90.0, 0.0], [10.0, 90.0, 5.0, 0.0, 0.0, 0.0, 0.0]])
    path = write_text(tmp_path, format_bvh(joints, values, "0.1"))
    P = read_bvh(path).joint_positions()
    # Frame 0: Hips at (1, 2, 3); its Rz(90) turns (0, 10, 0) to (-10, 0, 0) and
    # (0, 5, 0) to (-5, 0, 0).
    np.testing.assert_allclose(P[0], [[1, 2, 3], [-9, 2, 3], [-14, 2, 3]], atol=1e-12)
    # Frame 1: channels equal to the OFFSET are the rest pose, the OFFSETs summed.
    np.testing.assert_allclose(P[1], [[10, 90, 5], [10, 100, 5], [10, 105, 5]], atol=1e-12)
    added = read_bvh(path, positions="add").joint_positions()
    np.testing.assert_allclose(added, P + np.array([10.0, 90.0, 5.0]), atol=1e-12)
    # A twin listing the root's rotations first moves the same way.
    twin = [(joints[0][0], -1, joints[0][2], CHANNELS[3:] + CHANNELS[:3], False), *joints[1:]]
    twin_values = np.concatenate([values[:, 3:6], values[:, 0:3], values[:, 6:]], axis=1)
    Pt = read_bvh(write_text(tmp_path, format_bvh(twin, twin_values, "0.1"), "twin.bvh"))
    np.testing.assert_allclose(Pt.joint_positions(), P, rtol=0, atol=1e-12)


def test_positions_option_is_checked(sample: Path) -> None:
    with pytest.raises(InvalidValueError, match=r"positions must be 'replace'.*or 'add'"):
        read_bvh(sample, positions="absolute")


@pytest.mark.parametrize("ending", ["\r", "\r\n"])
def test_line_endings_of_every_platform(ending: str, tmp_path: Path) -> None:
    """A BVH file with classic Mac OS line ends (a lone CR) or Windows ones reads as the
    same file with LF ends."""
    source = DATA / "bvh_test1.bvh"
    text = source.read_bytes().decode("utf-8").replace("\r\n", "\n")
    p = tmp_path / "ends.bvh"
    p.write_bytes(text.replace("\n", ending).encode("utf-8"))
    want, got = read_bvh(source), read_bvh(p)
    assert got.model.joint_names == want.model.joint_names
    assert got.frame_time == want.frame_time
    np.testing.assert_array_equal(got.q, want.q)
