"""Retargeting quality (issue 22): no one-frame spikes on the built-in humanoid, a quality
report that counts spikes, shaking and target misses, soles kept above the ground, and
robots without a table (knees named ``shank``, shoulders and hips of offset links).

Oracles are independent of the code under test: spikes and second differences counted
here from ``q`` and FK, soles from the shapes' corners, joint centres built into the
test's own tree.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import kinetree
from kinetree import ModelBuilder
from kinetree.anim import Motion, free_base, guess_map, retarget_quality
from kinetree.anim.retarget.feet import hold_feet, sole_floor, sole_points
from kinetree.anim.retarget.robots import joint_centre
from kinetree.geometry import Box
from kinetree.io.body_parts import find_body_parts
from kinetree.spatial import rot_x, rot_y, translation
from robot_data import example_robot_data

CMU = Path(__file__).resolve().parents[2] / "data" / "bvh" / "cmu_12_01_walk.bvh"


@pytest.fixture(scope="module")
def walk() -> kinetree.BVHClip:
    return kinetree.read_bvh(CMU)


@pytest.fixture(scope="module")
def humanoid_walk(walk: kinetree.BVHClip) -> Motion:
    return kinetree.retarget(walk.slice(1, 300), "humanoid", "cmu")


def _spikes(q: np.ndarray, skip: int = 7, step: float = 0.1) -> int:
    """Joint-frames where a joint moves more than ``step`` into a frame and back out."""
    d = np.diff(q[:, skip:], axis=0)
    return int(np.sum((np.abs(d[:-1]) > step) & (np.abs(d[1:]) > step) & (d[:-1] * d[1:] < 0)))


def _second_difference(P: np.ndarray) -> float:
    return float(np.max(np.linalg.norm(P[2:] - 2 * P[1:-1] + P[:-2], axis=1)))


# --- High 3: the humanoid walk is smooth, and the report says when one is not -----------------


def test_walk_onto_the_humanoid_has_no_spikes(humanoid_walk: Motion) -> None:
    m = humanoid_walk
    assert _spikes(m.q) == 0  # main: 71 on these frames (neck, clavicles, shoulders, spine)
    info = m.metadata["retarget"]
    # Each position target's robot path shakes no more than three times its target's
    # (plus 5 mm/frame^2): main's head went 58 mm/frame^2 against its target's 4.
    for k, frame in enumerate(info["point_frames"]):
        robot = _second_difference(m.positions(frame))
        target = _second_difference(m.targets[:, k])
        assert robot <= 3.0 * target + 0.005, (frame, robot, target)
    q = m.metadata["quality"]
    assert q["spikes"] == 0 and q["good"], q["warnings"]


def test_a_toe_fixed_to_its_posed_ankle_is_left_out(humanoid_walk: Motion) -> None:
    # The humanoid has no toe joint: the toe's point target could only fight the ankle's
    # pose target (the cause of most spikes); it is left out and said so.
    info = humanoid_walk.metadata["retarget"]
    assert set(info["left_out_targets"]) == {"toe_l", "toe_r"}
    assert "toe_l" not in info["target_frames"] and "ankle_l" in info["target_frames"]
    assert "head" in info["target_frames"]  # six spine joints below the chest: it can bend


def test_quality_counts_spikes_and_shaking(humanoid_walk: Motion) -> None:
    m = humanoid_walk
    q = m.q.copy()
    neck = m.model.joint_names.index("neck_y")
    q[100, neck] += 0.4  # one frame out and back: a spike, and the head shakes
    bad = retarget_quality(m.with_q(q))
    assert bad["spikes"] == _spikes(q) == 1
    assert bad["spike_joints"] == {"neck_y": 1}
    assert not bad["good"]
    assert any("spike" in w for w in bad["warnings"])
    assert any(w.startswith("head shakes") for w in bad["warnings"])
    head = bad["targets"]["head"]
    assert head["jerk"] == pytest.approx(_second_difference(m.model.fk(q, "head")[:, :3, 3]))


def test_quality_reports_each_target_miss(humanoid_walk: Motion) -> None:
    m = humanoid_walk
    info = m.metadata["retarget"]
    targets = m.metadata["quality"]["targets"]
    assert set(targets) == set(info["target_frames"])
    for k, frame in enumerate(info["point_frames"]):
        miss = np.linalg.norm(m.model.fk(m.q, frame)[:, :3, 3] - m.targets[:, k], axis=1)
        assert targets[frame]["miss_median"] == pytest.approx(np.median(miss))
        assert targets[frame]["miss_max"] == pytest.approx(miss.max())
    R = m.model.fk(m.q, "chest")[:, :3, :3]
    R_target = info["target_rotations"]["chest"]
    angle = np.arccos(
        np.clip((np.trace(np.swapaxes(R, 1, 2) @ R_target, axis1=1, axis2=2) - 1) / 2, -1, 1)
    )
    assert targets["chest"]["angle_max"] == pytest.approx(angle.max(), abs=1e-9)


# --- Medium 11: the sole, not the ankle, meets the ground ---------------------------------------


def _box_foot() -> tuple[kinetree.Model, np.ndarray]:
    """An ankle with a 20 x 8 x 4 cm box foot whose centre is 3 cm ahead, 5 cm below."""
    b = ModelBuilder("leg", root="base")
    b.add_joint("ankle_y", "base", "ankle", axis="y")
    centre = np.array([0.03, 0.0, -0.05])
    b.add_geometry("ankle", Box(size=(0.20, 0.08, 0.04), origin=translation(centre)))
    corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
    return b.build(), centre + corners * np.array([0.10, 0.04, 0.02])


@pytest.mark.parametrize("pitch", [0.0, 0.3, -0.4])
def test_sole_floor_is_the_lowest_corner(pitch: float) -> None:
    model, corners = _box_foot()
    pts, rad = sole_points(model, model.neutral(), "ankle")
    R = rot_y(pitch)[:3, :3] @ rot_x(0.2)[:3, :3]
    expected = -np.min((corners @ R.T)[:, 2])
    assert sole_floor(R[None], pts, rad)[0] == pytest.approx(expected, abs=1e-12)


def test_a_tilted_held_foot_keeps_its_sole_above_the_ground() -> None:
    model, corners = _box_foot()
    sole = sole_points(model, model.neutral(), "ankle")
    n = 40
    T = np.tile(np.eye(4), (n, 1, 1))
    T[:, :3, :3] = rot_y(np.linspace(-0.5, 0.5, n))[:, :3, :3]  # toe down, then heel down
    h = 0.07  # the ankle's height over a flat sole
    T[:, 2, 3] = h
    contact = np.zeros(n, dtype=bool)
    contact[10:30] = True
    out = hold_feet(T, contact, h, 4, sole)
    lowest = out[:, 2, 3] + np.min(
        np.einsum("nij,kj->nki", out[:, :3, :3], corners)[..., 2], axis=1
    )
    assert lowest.min() >= -1e-12  # main clamped only the ankle: 5.4 cm through the floor
    assert np.any(np.abs(lowest) < 1e-9)  # and a tilted foot rests on its lowest corner


def _mesh_sole_heights(robot: kinetree.Model, q: np.ndarray, ankle: str) -> np.ndarray:
    """Lowest world z per frame of every vertex and sphere of the foot (the test's own)."""
    T = robot.fk(q, ankle)
    low = T[:, 2, 3].copy()
    for shape in robot.geometry.get(ankle, ()):
        W = T @ shape.origin
        if getattr(shape, "vertices", None) is not None:
            v = np.asarray(shape.vertices)
            z = np.einsum("nj,kj->nk", W[:, 2, :3], v) + W[:, 2, 3, None]
            low = np.minimum(low, z.min(axis=1))
        elif hasattr(shape, "radius") and not hasattr(shape, "length"):
            low = np.minimum(low, W[:, 2, 3] - shape.radius)
    return low


def test_g1_dip_is_measured_at_the_sole(walk: kinetree.BVHClip) -> None:
    example_robot_data()
    robot = kinetree.anim.load_robot("g1")
    m = kinetree.retarget(walk.slice(1, 200), robot, "cmu")
    quality = m.metadata["quality"]
    contacts = m.metadata["retarget"]["contacts"]
    for frame, feet in quality["feet"].items():
        z = _mesh_sole_heights(robot, m.q, frame)
        c = contacts[frame]
        # The figure is the mesh's (to the hull sampling, 1 mm), not the ankle frame's.
        assert feet["dip_max"] == pytest.approx(max(0.0, -z[c].min()), abs=1e-3)
        assert feet["below_ground_max"] == pytest.approx(max(0.0, -z.min()), abs=1e-3)
        assert feet["dip_max"] <= 0.005, frame  # main: the mesh 13-17 mm below, reported 0


# --- Medium 10: robots without a table ----------------------------------------------------------


def _fourier_leg_robot() -> tuple[kinetree.Model, np.ndarray]:
    """A two-legged, two-armed tree named as Fourier's GR1: thigh roll, pitch and yaw
    links, the yaw link 14 cm down the leg, their axes meeting at ``hip`` (the arm's
    upper_arm pitch, roll and yaw links likewise, at (0, +-0.18, 0.4)); knees named
    ``shank``."""
    b = ModelBuilder("gr_like", root="base_link")
    hip = np.array([0.0, 0.10, -0.05])
    for side, s in (("left", 1.0), ("right", -1.0)):
        h = hip * np.array([1.0, s, 1.0])
        b.add_joint(
            f"{side}_hip_roll",
            "base_link",
            f"{side}_thigh_roll_link",
            axis="x",
            origin=translation(h + np.array([-0.03, 0.0, 0.0])),
        )
        b.add_joint(
            f"{side}_hip_pitch",
            f"{side}_thigh_roll_link",
            f"{side}_thigh_pitch_link",
            axis="y",
            origin=translation((0.03, 0.02 * s, 0)),
        )
        b.add_joint(
            f"{side}_hip_yaw",
            f"{side}_thigh_pitch_link",
            f"{side}_thigh_yaw_link",
            axis="z",
            origin=translation((0, -0.02 * s, -0.14)),
        )
        b.add_joint(
            f"{side}_knee",
            f"{side}_thigh_yaw_link",
            f"{side}_shank_pitch_link",
            axis="y",
            origin=translation((0, 0, -0.30)),
            limits=(0.0, 2.0),
        )
        b.add_joint(
            f"{side}_ankle",
            f"{side}_shank_pitch_link",
            f"{side}_foot_pitch_link",
            axis="y",
            origin=translation((0, 0, -0.35)),
        )
    b.add_joint("waist", "base_link", "torso_link", axis="z", origin=translation((0, 0, 0.3)))
    # A head link on the neck's first axis: only the waist and the base move its origin.
    b.add_joint(
        "neck_yaw", "torso_link", "head_yaw_link", axis="z", origin=translation((0, 0, 0.25))
    )
    for side, s in (("left", 1.0), ("right", -1.0)):
        b.add_joint(
            f"{side}_sh_pitch",
            "torso_link",
            f"{side}_upper_arm_pitch_link",
            axis="y",
            origin=translation((0, 0.10 * s, 0.1)),
        )
        b.add_joint(
            f"{side}_sh_roll",
            f"{side}_upper_arm_pitch_link",
            f"{side}_upper_arm_roll_link",
            axis="x",
            origin=translation((0, 0.08 * s, 0)),
        )
        b.add_joint(
            f"{side}_sh_yaw",
            f"{side}_upper_arm_roll_link",
            f"{side}_upper_arm_yaw_link",
            axis="z",
            origin=translation((0, 0, -0.08)),
        )
        b.add_joint(
            f"{side}_elbow",
            f"{side}_upper_arm_yaw_link",
            f"{side}_lower_arm_pitch_link",
            axis="y",
            origin=translation((0, 0, -0.15)),
        )
        b.add_joint(
            f"{side}_wrist",
            f"{side}_lower_arm_pitch_link",
            f"{side}_hand_pitch_link",
            axis="y",
            origin=translation((0, 0, -0.2)),
        )
    return free_base(b.build()), hip


def test_shank_knees_and_joint_centres_of_offset_links(walk: kinetree.BVHClip) -> None:
    robot, hip = _fourier_leg_robot()
    parts = find_body_parts(robot)
    assert parts["knee_l"] == "left_shank_pitch_link"  # main: no knee, leg ratio 1.000
    assert parts["hip_l"] == "left_thigh_yaw_link"  # the deepest, 14 cm down the leg
    q = robot.neutral()
    assert robot.fk(q, "left_thigh_yaw_link")[2, 3] == pytest.approx(hip[2] - 0.14)
    # The three hip axes meet at `hip` (x, y and z lines through it).
    centre = joint_centre(robot, q, "left_thigh_yaw_link", "base_link")
    assert np.allclose(centre, hip, atol=1e-9)
    shoulder = joint_centre(robot, q, "left_upper_arm_yaw_link", "torso_link")
    assert np.allclose(shoulder, (0.0, 0.18, 0.4), atol=1e-9)
    mp = guess_map(walk.model, robot)
    T = robot.fk(q, "left_thigh_yaw_link")
    assert np.allclose(T[:3, 3] + T[:3, :3] @ mp.offsets["left_thigh_yaw_link"], hip)
    assert "joints' centre" in mp.report


def test_guessed_leg_ratio_uses_the_shank(walk: kinetree.BVHClip) -> None:
    robot, hip = _fourier_leg_robot()
    m = kinetree.retarget(walk.slice(1, 40), robot)
    info = m.metadata["retarget"]
    q0 = robot.neutral()
    # The robot's legs, hip centre to knee to ankle, over the source's (both averaged).
    knee = robot.fk(q0, "left_shank_pitch_link")[:3, 3]
    ankle = robot.fk(q0, "left_foot_pitch_link")[:3, 3]
    leg_robot = np.linalg.norm(knee - hip) + np.linalg.norm(ankle - knee)
    src = walk.model
    legs = []
    for side in ("Left", "Right"):
        P = [src.fk(src.neutral(), f"{side}{j}")[:3, 3] for j in ("UpLeg", "Leg", "Foot")]
        legs.append(np.linalg.norm(P[1] - P[0]) + np.linalg.norm(P[2] - P[1]))
    leg_src = np.mean(legs) * info["source_scale"]
    assert info["s_leg"] == pytest.approx(leg_robot / leg_src, rel=1e-6)
    # The head's position is the torso's, whose pose the pelvis and chest targets fix.
    assert set(info["left_out_targets"]) == {"head_yaw_link"}


@pytest.mark.skipif(
    importlib.util.find_spec("fourier_robot_descriptions") is None,
    reason="fourier-robot-descriptions is not installed",
)
@pytest.mark.parametrize("name", ["gr1t2", "gr3"])
def test_fourier_robots_get_knees_and_hips_at_their_centre(
    walk: kinetree.BVHClip, name: str
) -> None:
    import fourier_robot_descriptions as frd

    path = Path(frd.__file__).parent / "assets" / "urdf" / f"{name}.urdf"
    robot = kinetree.anim.load_robot(str(path))
    mp = guess_map(walk.model, robot)
    assert {mp.roles[j] for j in mp.pairs} >= {"knee_l", "knee_r", "hip_l", "shoulder_l"}
    q0 = robot.neutral()
    for role in ("hip_l", "shoulder_l"):
        frame = next(f for j, f in mp.pairs.items() if mp.roles[j] == role)
        T = robot.fk(q0, frame)
        point = T[:3, 3] + T[:3, :3] @ np.asarray(mp.offsets[frame])
        # Up the limb from the deepest of the offset links (7-14 cm down it).
        assert point[2] > T[2, 3] + 0.05, (role, point, T[:3, 3])
    m = kinetree.retarget(walk.slice(1, 60), robot)
    info = m.metadata["retarget"]
    assert info["s_leg"] != pytest.approx(1.0, abs=1e-3)
    assert [f for f in info["left_out_targets"]] == [
        f"head_{'roll' if name == 'gr1t2' else 'yaw'}_link"
    ]
    assert set(m.metadata["quality"]["targets"]) == set(info["target_frames"])
