"""Characters to robots: free bases, joint maps, contacts, the retarget and its numbers.

The robot here is kinetree's built-in humanoid with a free base (no package needed);
the Unitree G1 and PAL Talos runs are in tests/interop/test_retarget_robots.py.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import kinetree
from kinetree.anim import (
    Motion,
    detect_contacts,
    free_base,
    guess_map,
    load_robot,
    make_map,
    retarget_quality,
)
from kinetree.anim.contacts import contact_intervals
from kinetree.errors import (
    FileFormatError,
    InvalidValueError,
    UnknownNameError,
    UnsupportedError,
)

DATA = Path(__file__).resolve().parents[2] / "data" / "bvh"
CMU = DATA / "cmu_12_01_walk.bvh"


@pytest.fixture(scope="module")
def walk() -> kinetree.BVHClip:
    return kinetree.read_bvh(CMU)


@pytest.fixture(scope="module")
def humanoid() -> kinetree.Model:
    return load_robot("humanoid")


@pytest.fixture(scope="module")
def retargeted(walk: kinetree.BVHClip, humanoid: kinetree.Model) -> Motion:
    # The T-pose frame 0, then about one stride (enough for two contacts per foot).
    return kinetree.retarget(walk.slice(0, 200), humanoid, "cmu")


# --- free bases --------------------------------------------------------------------------


def test_free_base_keeps_fk_and_puts_the_base_first() -> None:
    fixed = kinetree.load("humanoid")
    free = free_base(fixed)
    assert free.joint_names[:7] == tuple(
        f"root_joint_{c}" for c in ("x", "y", "z", "qw", "qx", "qy", "qz")
    )
    assert free.nq == fixed.nq + 7 and free.nv == fixed.nv + 6
    assert free.frame_names[0] == "world" and "pelvis" in free.frame_names
    q = fixed.random_configuration(5, rng=0)
    qf = np.concatenate([np.tile(free.neutral()[:7], (5, 1)), q], axis=1)
    np.testing.assert_allclose(free.fk_all(qf)[:, 1:], fixed.fk_all(q), rtol=0, atol=1e-12)
    np.testing.assert_allclose(free.neutral()[:3], [0.0, 0.0, 0.93])  # the old root's place
    assert free_base(free) is free
    # The base moves the whole body: a Jacobian column per base DoF.
    J = free.jacobian(free.neutral(), "hand_r")
    assert J.shape == (6, free.nv) and np.linalg.matrix_rank(J[:, :6]) == 6


@pytest.mark.parametrize("name", ["humanoid", "panda"])
def test_free_base_is_with_floating_base(name: str) -> None:
    # One way to add a floating base: free_base goes through Model.with_floating_base;
    # the only difference is where the old root's placement T0 sits (the base's neutral
    # configuration, not its fixed origin), so the base coordinates are a world pose.
    m = kinetree.load(name)
    free, ref = free_base(m), m.with_floating_base("root_joint")
    for attr in ("node_names", "node_joint", "joint_names", "joint_groups"):
        assert getattr(free, attr) == getattr(ref, attr), attr
    for attr in ("parent", "joint_type", "axis", "q_index", "q_scale", "q_offset", "hidden",
                 "limits", "continuous"):  # fmt: skip
        np.testing.assert_array_equal(getattr(free, attr), getattr(ref, attr), err_msg=attr)
    np.testing.assert_array_equal(np.delete(free.origin, 1, 0), np.delete(ref.origin, 1, 0))
    np.testing.assert_array_equal(free.origin[1], np.eye(4))
    np.testing.assert_array_equal(ref.origin[1], m.origin[0])
    assert free.metadata["floating_base"] == "root_joint" and "free_base" not in free.metadata
    q = m.random_configuration(4, rng=3)
    q_free = np.concatenate([np.tile(free.neutral()[:7], (4, 1)), q], axis=1)
    q_ref = np.concatenate([np.tile(ref.neutral()[:7], (4, 1)), q], axis=1)
    np.testing.assert_allclose(free.fk_all(q_free), ref.fk_all(q_ref), rtol=0, atol=1e-12)


def test_urdf_speed_limits_are_the_models(walk: kinetree.BVHClip, humanoid: kinetree.Model) -> None:
    # max_joint_speed="urdf" reads Model.velocity_limits (the file is not parsed again):
    # limits set on a model that has no file are used, and hold.
    import dataclasses

    limited = dataclasses.replace(humanoid, velocity_limits={"knee_l": 0.5, "elbow_r": 0.7})
    m = kinetree.retarget(walk.slice(1, 60), limited, "cmu", max_joint_speed="urdf")
    assert m.metadata["retarget"]["speed_limits"] == {"knee_l": 0.5, "elbow_r": 0.7}
    for joint, limit in (("knee_l", 0.5), ("elbow_r", 0.7)):
        k = limited.joint_names.index(joint)
        assert np.abs(np.diff(m.q[:, k])).max() <= limit / m.fps + 1e-12
    assert m.metadata["quality"]["speed_violations"] == 0


def test_free_base_name_clash() -> None:
    b = kinetree.ModelBuilder("clash", root="base")
    b.add_joint("root_joint", "base", "link")
    with pytest.raises(InvalidValueError, match="root_joint"):
        free_base(b.build())


# --- maps ---------------------------------------------------------------------------------


def test_ready_made_map_cmu_onto_humanoid(walk: kinetree.BVHClip, humanoid: kinetree.Model) -> None:
    mp = make_map("cmu", walk.model, humanoid)
    assert mp.pairs["Hips"] == "pelvis"
    assert mp.pairs["LeftFoot"] == "ankle_l" and mp.pairs["RightHand"] == "palm_r"
    assert mp.roles["LeftForeArm"] == "elbow_l"
    assert mp.role("knee_r") == ("RightLeg", "shin_r")
    assert "cmu" in mp.report


def test_guess_map_reports_what_it_paired(walk: kinetree.BVHClip, humanoid: kinetree.Model) -> None:
    mp = guess_map(walk.model, humanoid)
    assert mp.pairs["LeftUpLeg"] == "thigh_l" and mp.pairs["Hips"] == "pelvis"
    assert "paired:" in mp.report and "ankle_l: LeftFoot -> ankle_l" in mp.report
    assert mp.pairs == make_map("auto", walk.model, humanoid).pairs


def test_mixamo_map_matches_prefixed_names(humanoid: kinetree.Model) -> None:
    clip = kinetree.read_bvh(DATA / "mixamo_style.bvh")
    mp = make_map("mixamo", clip.model, humanoid)
    assert mp.pairs["mixamorig:LeftUpLeg"] == "thigh_l"
    assert mp.pairs["mixamorig:Hips"] == "pelvis"


def test_bad_maps_name_the_problem(walk: kinetree.BVHClip, humanoid: kinetree.Model) -> None:
    with pytest.raises(UnknownNameError, match=r"source joint 'LeftPaw'.*mapping='auto'"):
        make_map({"Hips": "pelvis", "LeftPaw": "hand_l"}, walk.model, humanoid)
    with pytest.raises(UnknownNameError, match=r"robot frame 'flipper'.*frames are"):
        make_map({"Hips": "pelvis", "LeftHand": "flipper"}, walk.model, humanoid)
    with pytest.raises(InvalidValueError, match="no pelvis"):
        make_map({"LeftHand": "hand_l"}, walk.model, humanoid)
    with pytest.raises(UnknownNameError, match="ready-made maps are: cmu, mixamo"):
        make_map("bandai", walk.model, humanoid)


# --- contacts -----------------------------------------------------------------------------


def _steps(n_cycles: int, fps: float) -> tuple[np.ndarray, np.ndarray]:
    """A foot path: 0.5 s planted (still, at z = 0), 0.4 s swinging 0.6 m forward up
    to 0.15 m; returns the points and the true contacts."""
    stance, swing = round(0.5 * fps), round(0.4 * fps)
    pts, truth = [], []
    x = 0.0
    for _ in range(n_cycles):
        for _ in range(stance):
            pts.append([x, 0.1, 0.0])
            truth.append(True)
        for k in range(1, swing + 1):
            u = k / (swing + 1)
            pts.append([x + 0.6 * u, 0.1, 0.15 * np.sin(np.pi * u)])
            truth.append(False)
        x += 0.6
    return np.array(pts), np.array(truth)


@pytest.mark.parametrize("fps", [30.0, 120.0])
def test_contacts_of_a_hand_made_gait(fps: float) -> None:
    pts, truth = _steps(4, fps)
    found = detect_contacts(pts, fps)
    # Each planted run is found; its ends may differ by the frame where the swing starts
    # (central differences see half the first swing step there).
    assert len(contact_intervals(found)) == len(contact_intervals(truth)) == 4
    for (a, b), (ta, tb) in zip(contact_intervals(found), contact_intervals(truth)):
        assert abs(a - ta) <= 1 and abs(b - tb) <= 1
    assert np.count_nonzero(found != truth) <= 2 * 4


def test_contacts_fill_a_one_frame_glitch() -> None:
    fps = 60.0
    pts, _ = _steps(2, fps)
    pts[10, 2] = 0.3  # one bad frame in the middle of a stance (3 fast frames around it)
    found = detect_contacts(pts, fps, fill_frames=4)
    assert found[5:25].all()  # filled: still planted
    assert np.array_equal(found[20:], detect_contacts(_steps(2, fps)[0], fps)[20:])


def test_contacts_end_when_the_heel_lifts() -> None:
    fps = 100.0
    pts = np.zeros((60, 3))
    pts[30:, 2] = np.linspace(0.0, 0.04, 30)  # rises slowly: slow and still low
    c = detect_contacts(pts, fps, max_rise=0.01)
    assert c[:30].all() and not c[-5:].any()
    assert detect_contacts(pts, fps, max_rise=None).all()


# --- the retarget -------------------------------------------------------------------------


def test_retarget_onto_the_humanoid(retargeted: Motion, humanoid: kinetree.Model) -> None:
    m = retargeted
    info, quality = m.metadata["retarget"], m.metadata["quality"]
    assert m.model is humanoid and m.q.shape == (199, humanoid.nq)
    assert info["dropped_frames"] == [0]  # the CMU clip's T-pose
    assert info["source_unit"] == "cmu"
    assert m.fps == pytest.approx(120.0, rel=1e-4)
    assert quality["within_limits"]
    assert np.all(humanoid.within_limits(m.q, tol=1e-9))
    for frame in ("ankle_l", "ankle_r"):
        feet = quality["feet"][frame]
        assert feet["planted_frames"] >= 40
        assert feet["slide_median"] <= 0.003  # [m per frame]
        assert feet["dip_max"] <= 0.01
    assert 0.7 <= quality["distance_ratio"] <= 1.3
    # The robot walks along +x (the source walks along its own facing direction).
    assert m.positions("pelvis")[-1, 0] - m.positions("pelvis")[0, 0] > 0.5
    assert np.all(np.isfinite(m.q))


def test_retarget_quality_recomputes(retargeted: Motion) -> None:
    again = retarget_quality(retargeted)
    assert again["feet"] == retargeted.metadata["quality"]["feet"]
    with pytest.raises(InvalidValueError, match=r"made by kinetree\.retarget"):
        retarget_quality(Motion(retargeted.model, retargeted.q))


def test_speed_limits_hold(walk: kinetree.BVHClip, humanoid: kinetree.Model) -> None:
    m = kinetree.retarget(walk.slice(1, 60), humanoid, "cmu", max_joint_speed=1.5)
    info = m.metadata["retarget"]
    base = sorted(info["base_coordinates"])
    joints = np.setdiff1d(humanoid.qv.v_q[humanoid.qv.v_q >= 0], base)
    step = np.abs(np.diff(m.q[:, joints], axis=0))
    assert step.max() <= 1.5 / m.fps + 1e-12
    assert len(info["speed_capped_frames"]) > 0
    assert m.metadata["quality"]["speed_violations"] == 0


def test_retarget_options_and_a_path(humanoid: kinetree.Model) -> None:
    m = kinetree.retarget(
        CMU, humanoid, None, source_scale=0.0254 / 0.45, smooth=0.02, contacts=False,
        max_joint_speed=None, iterations=(8, 0),
    )  # fmt: skip
    info = m.metadata["retarget"]
    assert info["source_unit"] == "given"
    assert not any(c.any() for c in info["contacts"].values())
    assert "paired:" in info["map"].report


def test_bad_input_names_it_and_what_to_do(walk: kinetree.BVHClip, tmp_path: Path) -> None:
    fixed = kinetree.load("humanoid")
    with pytest.raises(UnsupportedError, match=r"'humanoid' has no floating base.*free_base"):
        kinetree.retarget(walk, fixed, "cmu")
    empty = tmp_path / "empty.bvh"
    text = CMU.read_text().split("MOTION")[0] + "MOTION\nFrames: 0\nFrame Time: 0.01\n"
    empty.write_text(text)
    with pytest.raises(FileFormatError, match="no frames"):
        kinetree.retarget(empty, "humanoid", "cmu")
    with pytest.raises(UnknownNameError, match="robots are: g1, h1, talos"):
        kinetree.retarget(walk, "robocop", "cmu")
    with pytest.raises(UnknownNameError, match="source joint 'Tail'"):
        kinetree.retarget(walk, "humanoid", {"Hips": "pelvis", "Tail": "head"})
    with pytest.raises(InvalidValueError, match="contact_speed"):
        kinetree.retarget(walk, "humanoid", "cmu", contact_speed=-1.0)
    with pytest.raises(InvalidValueError, match="clip must be"):
        kinetree.retarget(42, "humanoid")  # type: ignore[arg-type]


# --- a source whose zero pose is folded (Bandai-Namco style) ------------------------------


def _folded_skeleton(path: Path) -> Path:
    """Every bone along its joint's x (spine and legs alike, so the zero pose is folded),
    position channels on every joint repeating its OFFSET, Y up: the pelvis turned
    Rz(90) sends x up, the hips turned a further 180 degrees send the legs down.
    Units: cm, 140 from ankle to head."""
    ch = "CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation"
    off = {"Hips": (0, 95, 0), "Spine": (30, 0, 0), "Head": (30, 0, 0),
           "UpperLeg_L": (0, 0, 10), "LowerLeg_L": (40, 0, 0), "Foot_L": (40, 0, 0),
           "UpperLeg_R": (0, 0, -10), "LowerLeg_R": (40, 0, 0), "Foot_R": (40, 0, 0)}  # fmt: skip
    turn = {"Hips": 90.0, "UpperLeg_L": 180.0, "UpperLeg_R": 180.0}

    def joint(name: str, kids: list[str], depth: int) -> list[str]:
        ind = "  " * depth
        out = [f"{ind}{'ROOT' if depth == 0 else 'JOINT'} {name}", ind + "{",
               f"{ind}  OFFSET {' '.join(map(str, off[name]))}", f"{ind}  {ch}"]  # fmt: skip
        for k in kids:
            out += joint(k, tree.get(k, []), depth + 1)
        if not kids:
            out += [f"{ind}  End Site", ind + "  {", f"{ind}    OFFSET 10 0 0", ind + "  }"]
        return [*out, ind + "}"]

    tree = {"Hips": ["Spine", "UpperLeg_L", "UpperLeg_R"], "Spine": ["Head"],
            "UpperLeg_L": ["LowerLeg_L"], "LowerLeg_L": ["Foot_L"],
            "UpperLeg_R": ["LowerLeg_R"], "LowerLeg_R": ["Foot_R"]}  # fmt: skip
    order = ["Hips", "Spine", "Head", "UpperLeg_L", "LowerLeg_L", "Foot_L",
             "UpperLeg_R", "LowerLeg_R", "Foot_R"]  # fmt: skip
    rows = []
    for f in range(10):
        row: list[float] = []
        for n in order:
            x, y, z = off[n]
            row += [x + 3.0 * f if n == "Hips" else x, y, z, turn.get(n, 0.0), 0.0, 0.0]
        rows.append(" ".join(f"{v:g}" for v in row))
    text = ["HIERARCHY", *joint("Hips", tree["Hips"], 0), "MOTION", "Frames: 10",
            "Frame Time: 0.0333333", *rows]  # fmt: skip
    path.write_text("\n".join(text) + "\n")
    return path


def test_folded_zero_pose_source_gets_its_up_axis_and_unit(tmp_path: Path) -> None:
    from kinetree.anim.retarget.source import prepare_source

    clip = kinetree.read_bvh(_folded_skeleton(tmp_path / "folded.bvh"))
    P = clip.joint_positions()
    names = list(clip.joint_names)
    head, foot = P[:, names.index("Head")], P[:, names.index("Foot_L")]
    np.testing.assert_allclose(head - foot, np.broadcast_to([0.0, 140.0, -10.0], head.shape),
                               atol=1e-9)  # fmt: skip  # it stands, Y up, bones at OFFSET length
    src = prepare_source(clip, [n for n in names if not n.endswith("_end")], {})
    np.testing.assert_allclose(src.R @ [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], atol=1e-12)
    assert src.unit == "cm"
    k = src.index("Head")
    np.testing.assert_allclose(src.T_rest[k, 2, 3] - src.T_rest[src.index("Foot_L"), 2, 3], 1.4)
