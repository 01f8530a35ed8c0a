"""kinetree.anim: Motion, step-by-step reach, keyframe interpolation, IK retargeting.

Independent oracles: FK for every "target met" claim, scipy's Rotation for rotation
angles and Euler sequences, relative frame rotations from FK for the geodesic checks.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import kinetree
from kinetree import read_bvh, write_bvh
from kinetree.anim import (
    Motion,
    ball_joints,
    decompose,
    decompose_all,
    edit_by_targets,
    interpolate,
    reach,
    sequence_matrix,
    slerp,
    to_clip,
)
from kinetree.errors import InvalidValueError, ShapeError, UnsupportedError
from kinetree.ik.targets import Pose, Position

DATA = Path(__file__).resolve().parents[1] / "data" / "bvh"
CMU = DATA / "cmu_12_01_walk.bvh"
ARMS = ["LeftShoulder", "LeftArm", "LeftForeArm", "RightShoulder", "RightArm", "RightForeArm"]
LEGS = ["LHipJoint", "LeftUpLeg", "LeftLeg", "RHipJoint", "RightUpLeg", "RightLeg"]
E = np.eye(3)


def angle(R: np.ndarray) -> np.ndarray:
    """Rotation angle [rad] of rotation matrices (scipy, not kinetree)."""
    return np.linalg.norm(Rotation.from_matrix(np.reshape(R, (-1, 3, 3))).as_rotvec(), axis=-1)


@pytest.fixture(scope="module")
def walk() -> kinetree.BVHClip:
    """60 frames of the CMU walk (frame 0 of the file is a T-pose, so start at 1)."""
    return read_bvh(CMU).slice(1, 61)


# --- rotations: axis sequences, decomposition, slerp ---------------------------------

SEQUENCES = {
    "xyz": [0, 1, 2],
    "zxy": [2, 0, 1],
    "zyx": [2, 1, 0],
    "zyz": [2, 1, 2],
    "xyx": [0, 1, 0],
}


@pytest.mark.parametrize("seq", list(SEQUENCES))
def test_sequence_matrix_matches_scipy_intrinsic_euler(seq: str, rng: np.random.Generator) -> None:
    a = rng.uniform(-np.pi, np.pi, (200, 3))
    R = sequence_matrix(a, E[SEQUENCES[seq]])
    np.testing.assert_allclose(R, Rotation.from_euler(seq.upper(), a).as_matrix(), atol=1e-14)


@pytest.mark.parametrize("seq", list(SEQUENCES))
def test_decomposition_round_trips_exactly(seq: str, rng: np.random.Generator) -> None:
    # Signed axes too (the humanoid's elbow turns about -y).
    axes = E[SEQUENCES[seq]] * rng.choice([-1.0, 1.0], size=(3, 1))
    a = rng.uniform(-np.pi, np.pi, (2000, 3))
    R = sequence_matrix(a, axes)
    b = decompose(R, axes)
    np.testing.assert_allclose(sequence_matrix(b, axes), R, rtol=0, atol=1e-12)
    # Both branches are valid, and the hint picks back the angles we started from.
    both = decompose_all(R, axes)
    np.testing.assert_allclose(sequence_matrix(both, axes), np.stack([R, R], 1), rtol=0, atol=1e-12)
    np.testing.assert_allclose(decompose(R, axes, hint=a), a, rtol=0, atol=1e-9)


@pytest.mark.parametrize("seq", list(SEQUENCES))
def test_decomposition_exact_at_and_near_gimbal_lock(seq: str, rng: np.random.Generator) -> None:
    axes = E[SEQUENCES[seq]]
    lam = np.arctan2(axes[0] @ np.cross(axes[1], axes[2]), axes[0] @ axes[2])
    a = rng.uniform(-np.pi, np.pi, (400, 3))
    a[:, 1] = lam + rng.choice([0.0, np.pi], 400) + rng.choice([0.0, 1e-13, 1e-9, -1e-6], 400)
    R = sequence_matrix(a, axes)
    np.testing.assert_allclose(sequence_matrix(decompose(R, axes), axes), R, rtol=0, atol=1e-12)


def test_decomposition_general_davenport_axes(rng: np.random.Generator) -> None:
    Q = Rotation.random(random_state=3).as_matrix()
    axes = np.array([Q[:, 0], Q[:, 1], np.cos(0.7) * Q[:, 0] + np.sin(0.7) * Q[:, 2]])
    a = rng.uniform(-np.pi, np.pi, (500, 3))
    R = sequence_matrix(a, axes)
    np.testing.assert_allclose(sequence_matrix(decompose(R, axes), axes), R, rtol=0, atol=1e-12)


def test_decomposition_rejects_bad_axes() -> None:
    with pytest.raises(InvalidValueError, match="perpendicular"):
        decompose(np.eye(3), np.array([[1.0, 0, 0], [1.0, 1.0, 0], [0, 0, 1.0]]))


def test_slerp_is_the_geodesic(rng: np.random.Generator) -> None:
    Ra, Rb = Rotation.random(2, random_state=5).as_matrix()
    qa = Rotation.from_matrix(Ra).as_quat(scalar_first=True)
    qb = -Rotation.from_matrix(Rb).as_quat(scalar_first=True)  # the other cover: same arc
    u = np.linspace(0.0, 1.0, 11)
    qs = slerp(qa, qb, u)
    Rs = Rotation.from_quat(qs, scalar_first=True).as_matrix()
    total = angle(Ra.T @ Rb)[0]
    np.testing.assert_allclose(angle(Ra.T @ Rs), u * total, atol=1e-12)
    np.testing.assert_allclose(angle(Rs.transpose(0, 2, 1) @ Rb), (1 - u) * total, atol=1e-12)


# --- Motion ------------------------------------------------------------------------


def test_motion_basics() -> None:
    model = kinetree.load("planar2r")
    q = np.stack([np.linspace(0, 1, 5), np.linspace(0, -1, 5)], axis=1)
    m = Motion(model, q, fps=10.0, name="m")
    assert len(m) == 5 and m.n_frames == 5
    assert m.frame_time == pytest.approx(0.1) and m.duration == pytest.approx(0.5)
    np.testing.assert_allclose(m.positions("tip"), model.fk(q, "tip")[:, :3, 3])
    assert m.max_joint_step() == pytest.approx(0.25)
    assert m.max_joint_step("joint2") == pytest.approx(0.25)
    assert not m.q.flags.writeable
    s = m.slice(0, None, 2)
    assert len(s) == 3 and s.fps == pytest.approx(5.0)
    c = m.concat(m, drop_repeated=False)
    assert len(c) == 10 and c.metadata["parts"] == [5, 5]
    back = Motion(model, q[::-1], fps=10.0)
    assert len(m.concat(back, drop_repeated=True)) == 9
    with pytest.raises(ShapeError):
        Motion(model, np.zeros((3, 5)))
    with pytest.raises(InvalidValueError):
        Motion(model, q, fps=0.0)
    with pytest.raises(InvalidValueError, match="fps"):
        m.concat(Motion(model, q, fps=20.0))
    with pytest.raises(UnsupportedError, match="BVH"):
        to_clip(m)


def test_motion_bvh_round_trip(tmp_path: Path, walk: kinetree.BVHClip) -> None:
    m = Motion.from_clip(walk)
    assert len(m) == walk.n_frames and m.fps == pytest.approx(walk.fps) and m.clip is walk
    np.testing.assert_array_equal(m.q, walk.q)
    q = m.q.copy()
    q[:, 5] += 0.1
    clip = to_clip(m.with_q(q))
    assert clip.frame_time == walk.frame_time
    write_bvh(tmp_path / "out.bvh", clip)
    back = read_bvh(tmp_path / "out.bvh")
    np.testing.assert_allclose(back.q, q, atol=1e-12)
    # A motion with another model's clip as template is refused.
    with pytest.raises(InvalidValueError):
        to_clip(Motion(kinetree.load("planar2r"), np.zeros((1, 2))), walk)


# --- reach -------------------------------------------------------------------------


def test_reach_planar2r() -> None:
    model = kinetree.load("planar2r")
    q0 = np.array([0.3, 0.4])
    target = np.array([1.2, 0.8, 0.0])
    m = reach(model, target, q0=q0, step=0.1)
    assert m.metadata["success"]
    np.testing.assert_array_equal(m.q[0], q0)
    assert np.linalg.norm(model.fk(m.q[-1])[:3, 3] - target) <= 1e-6
    assert 2 < len(m) <= 301  # max_iter + 1 at most
    err = np.hypot(*m.metadata["error"].T)
    assert len(err) == len(m)
    assert np.all(np.diff(err) <= 1e-12)  # pinv steps shrink the error every frame
    # It stops when reached: only the last frame is within tolerance.
    dist = np.linalg.norm(m.positions() - target, axis=1)
    assert dist[-1] <= 1e-6 < dist[-2]
    assert m.targets is not None and m.targets.shape == (len(m), 1, 3)


@pytest.mark.parametrize("kind", ["pose", "position"])
def test_reach_panda(kind: str) -> None:
    model = kinetree.load("panda")
    q0 = model.neutral()
    T = model.fk(np.array([0.6, -0.3, 0.4, -2.0, 0.3, 1.9, 0.2]))
    target = T if kind == "pose" else Position(T[:3, 3])
    m = reach(model, target, q0=q0, step=0.1)
    assert m.metadata["success"]
    np.testing.assert_array_equal(m.q[0], q0)
    Tl = model.fk(m.q[-1])
    assert np.linalg.norm(Tl[:3, 3] - T[:3, 3]) <= 1e-6
    if kind == "pose":
        assert angle(T[:3, :3].T @ Tl[:3, :3])[0] <= 1e-6
    assert len(m) <= 301
    err = np.hypot(*m.metadata["error"].T)
    assert err[-1] < 1e-5 * err[0]
    assert np.mean(np.diff(err) <= 0.0) > 0.95  # essentially monotone
    # Resampled to a fixed frame count: same start and end.
    r = reach(model, target, q0=q0, step=0.1, frames=40)
    assert len(r) == 40
    np.testing.assert_array_equal(r.q[0], q0)
    np.testing.assert_array_equal(r.q[-1], m.q[-1])


def test_reach_already_there_is_one_frame() -> None:
    model = kinetree.load("panda")
    q0 = model.neutral()
    m = reach(model, model.fk(q0), q0=q0)
    assert len(m) == 1 and m.metadata["success"]


def test_reach_humanoid_pinned_feet() -> None:
    model = kinetree.load("humanoid")
    q0 = model.neutral()
    target = model.fk(q0, "chest")[:3, 3] + np.array([0.45, -0.35, 0.25])
    m = reach(model, target, "hand_r", q0=q0, pin=["foot_r", "foot_l"], rest="neutral")
    assert m.metadata["success"]
    assert np.linalg.norm(m.positions("hand_r")[-1] - target) <= 1e-6
    for foot in ("foot_r", "foot_l"):
        P = m.poses(foot)
        assert np.max(np.abs(P - P[0])) <= 1e-6
    # The drawn targets are the hand's, not the pins.
    assert m.targets is not None and m.targets.shape[1] == 1


def test_reach_bad_step() -> None:
    with pytest.raises(InvalidValueError):
        reach(kinetree.load("planar2r"), [1.0, 0.5, 0.0], step=1.5)


# --- interpolate -------------------------------------------------------------------


def relative_rotations(model: kinetree.Model, q: np.ndarray, parent: str, child: str) -> np.ndarray:
    """Rotation of ``child`` in ``parent``'s frame, from FK: (frames, 3, 3)."""
    Tp = model.fk(q, parent)
    Tc = model.fk(q, child)
    return np.swapaxes(Tp[..., :3, :3], -1, -2) @ Tc[..., :3, :3]


def test_interpolate_humanoid(rng: np.random.Generator) -> None:
    model = kinetree.load("humanoid")
    lo, hi = model.sampling_bounds()
    qa = model.neutral()
    qb = np.clip(qa + rng.uniform(-0.5, 0.5, model.dof), lo, hi)
    m = interpolate(model, [qa, qb], n_frames=10)
    assert len(m) == 11
    np.testing.assert_array_equal(m.q[0], qa)
    np.testing.assert_array_equal(m.q[-1], qb)
    assert set(m.metadata["ball_joints"]) == {
        "spine", "chest", "neck", "shoulder_r", "shoulder_l", "hip_r", "hip_l",
    }  # fmt: skip
    # Ball joint: the rotation moves along the geodesic (angle from qa grows linearly,
    # and the midpoint is at half the angle).
    R = relative_rotations(model, m.q, "clavicle_r", "upper_arm_r")
    total = angle(R[0].T @ R[-1])[0]
    u = np.arange(11) / 10
    np.testing.assert_allclose(angle(R[0].T @ R), u * total, atol=1e-9)
    np.testing.assert_allclose(angle(np.swapaxes(R, 1, 2) @ R[-1]), (1 - u) * total, atol=1e-9)
    # Single-DoF joints: linear, hence monotone.
    for j in ("elbow_r", "knee_l"):
        k = model.joint_indices(j)[0]
        np.testing.assert_allclose(m.q[:, k], qa[k] + u * (qb[k] - qa[k]), atol=1e-15)
        d = np.diff(m.q[:, k]) * np.sign(qb[k] - qa[k])
        assert np.all(d >= 0)


def test_interpolate_timing_and_ease() -> None:
    model = kinetree.load("humanoid")
    qa = model.neutral()
    qb = qa.copy()
    k = model.joint_indices("elbow_r")[0]
    qb[k] = 1.2
    qc = qa.copy()
    keys = [qa, qb, qc]
    m = interpolate(model, keys, times=[0.0, 0.5, 1.5], fps=20)
    assert len(m) == 31
    np.testing.assert_array_equal(m.q[10], qb)  # 0.5 s = frame 10
    assert list(m.metadata["keyframe_index"]) == [0, 10, 30]
    s = interpolate(model, keys, n_frames=[4, 8], ease="smoothstep")
    assert len(s) == 13
    np.testing.assert_array_equal(s.q[4], qb)
    x = s.q[:5, k]
    assert np.all(np.diff(x) > 0)
    # Eases in: the first step is smaller than the linear one.
    assert x[1] - x[0] < (x[4] - x[0]) / 4
    one = interpolate(model, [qa])
    assert len(one) == 1
    with pytest.raises(InvalidValueError):
        interpolate(model, keys, ease="bounce")
    with pytest.raises(InvalidValueError):
        interpolate(model, keys, times=[0.0, 1.0, 1.0])
    with pytest.raises(ShapeError):
        interpolate(model, np.zeros((2, 3)))


@pytest.mark.parametrize("path", [CMU, DATA / "standard_skeleton.bvh", DATA / "bvh_test1.bvh"])
def test_interpolate_bvh(path: Path, rng: np.random.Generator) -> None:
    clip = read_bvh(path)
    model = clip.model
    qa = clip.q[-1]
    qb = qa + rng.uniform(-0.6, 0.6, model.dof)
    m = interpolate(model, [qa, qb], n_frames=8, fps=clip.fps)
    np.testing.assert_array_equal(m.q[0], qa)
    np.testing.assert_array_equal(m.q[-1], qb)
    balls = ball_joints(model)
    assert len(balls) > 0
    u = np.arange(9) / 8
    parent_of = {j.name: clip.joints[j.parent].name for j in clip.joints if j.parent >= 0}
    for name in balls:
        if name not in parent_of:
            continue  # the root: its parent frame is "world"
        R = relative_rotations(model, m.q, parent_of[name], name)
        total = angle(R[0].T @ R[-1])[0]
        np.testing.assert_allclose(angle(R[0].T @ R), u * total, atol=1e-9, err_msg=name)
    # Prismatic DoFs (the root position) are linear.
    for i, n in enumerate(model.joint_names):
        if n.endswith("position"):
            np.testing.assert_allclose(m.q[:, i], qa[i] + u * (qb[i] - qa[i]), atol=1e-12)


# --- edit_by_targets -------------------------------------------------------------------


def test_retarget_raise_hands(walk: kinetree.BVHClip) -> None:
    src = Motion.from_clip(walk)
    lift = np.array([0.0, 3.0, 0.0])  # Y-up, inches
    targets = {f: src.positions(f) + lift for f in ("LeftHand", "RightHand")}
    m = edit_by_targets(walk, targets, active=ARMS, max_joint_step=0.05)
    md = m.metadata
    assert md["success"].all()
    for f, p in targets.items():  # FK check on every frame
        assert np.max(np.linalg.norm(m.positions(f) - p, axis=1)) <= 1e-6
    inactive = ~model_mask(walk.model, ARMS)
    np.testing.assert_array_equal(m.q[:, inactive], walk.q[:, inactive])
    assert m.max_joint_step(ARMS) < 0.05  # no popping at 120 fps
    assert len(md["popped_frames"]) == 0
    assert md["iterations"].mean() <= 4  # warm start: a few iterations a frame
    assert m.targets is not None and m.targets.shape == (60, 2, 3)
    clip = m.to_clip()
    np.testing.assert_array_equal(clip.q, m.q)


def model_mask(model: kinetree.Model, names: list[str]) -> np.ndarray:
    return model.active_mask(names)


def test_retarget_feet_above_ground(walk: kinetree.BVHClip) -> None:
    src = Motion.from_clip(walk)
    ground = 1.5  # above the lowest source foot height (~0.65 / ~0.74)
    m = edit_by_targets(walk, pin=["LeftFoot", "RightFoot"], ground_height=ground, active=LEGS)
    assert m.metadata["success"].all()
    for f in ("LeftFoot", "RightFoot"):
        p, s = m.positions(f), src.positions(f)
        assert s[:, 1].min() < ground  # the clamp is active on some frames
        assert p[:, 1].min() >= ground - 1e-6
        above = s[:, 1] >= ground
        assert np.max(np.linalg.norm(p[above] - s[above], axis=1)) <= 1e-6
        want = s.copy()
        want[:, 1] = np.maximum(want[:, 1], ground)
        assert np.max(np.linalg.norm(p - want, axis=1)) <= 1e-6
    assert m.max_joint_step(LEGS) < 0.1
    assert m.metadata["iterations"].mean() <= 5


def test_retarget_smooth_path_and_popping() -> None:
    model = kinetree.load("panda")
    n = 90
    q_src = np.tile(model.neutral(), (n, 1))
    src = Motion(model, q_src, fps=30.0)
    c = model.fk(model.neutral())[:3, 3]
    t = np.linspace(0.0, 2 * np.pi, n)
    circle = c + 0.1 * np.stack([np.zeros(n), np.cos(t) - 1.0, np.sin(t)], axis=1)
    m = edit_by_targets(src, {"flange": circle}, max_joint_step=0.1)
    assert m.metadata["success"].all()
    assert np.max(np.linalg.norm(m.positions("flange") - circle, axis=1)) <= 1e-6
    assert m.max_joint_step() < 0.1 and len(m.metadata["popped_frames"]) == 0
    # A jump in the path pops; with limit_joint_step the change is capped and caught up.
    jump = circle.copy()
    jump[45:] += np.array([0.0, 0.25, 0.0])
    r = edit_by_targets(src, {"flange": jump}, max_joint_step=0.1)
    assert 45 in r.metadata["popped_frames"]
    lim = edit_by_targets(src, {"flange": jump}, max_joint_step=0.1, limit_joint_step=True)
    assert lim.max_joint_step() <= 0.1 + 1e-12
    assert not lim.metadata["success"][45]
    assert lim.metadata["position_error"][45, 0] > 1e-3
    assert lim.metadata["success"][-10:].all()  # caught up


def test_retarget_callable_and_static_targets() -> None:
    model = kinetree.load("panda")
    src = Motion(model, np.tile(model.neutral(), (5, 1)), fps=10.0)
    p0 = model.fk(model.neutral())[:3, 3]
    m = edit_by_targets(src, {"flange": lambda k, q: p0 + np.array([0.0, 0.01 * k, 0.0])})
    np.testing.assert_allclose(m.positions("flange")[4], p0 + np.array([0, 0.04, 0]), atol=1e-6)
    s = edit_by_targets(src, {"flange": Pose(model.fk(model.neutral()))})
    np.testing.assert_allclose(s.q, src.q, atol=1e-9)
    with pytest.raises(InvalidValueError, match="pin"):
        edit_by_targets(src, {"flange": p0}, ground_height=0.0)
    with pytest.raises(InvalidValueError, match="both"):
        edit_by_targets(src, {"flange": p0}, pin=["flange"])
    with pytest.raises(ShapeError):
        edit_by_targets(src, {"flange": np.zeros((3, 3))})
    with pytest.raises(InvalidValueError):
        edit_by_targets(src)


def test_retarget_pins_only_what_active_joints_move(walk: kinetree.BVHClip) -> None:
    # Feet pinned while only the arms move: the feet follow the source untouched.
    targets = {"LeftHand": Motion.from_clip(walk).positions("LeftHand")[:5]}
    short = walk.slice(0, 5)
    m = edit_by_targets(short, targets, pin=["LeftFoot"], active=ARMS)
    assert m.metadata["target_frames"] == ("LeftHand",)
    with pytest.raises(InvalidValueError, match="ground_height"):
        edit_by_targets(short, targets, pin=["LeftFoot"], ground_height=100.0, active=ARMS)
    with pytest.raises(InvalidValueError, match="q0"):
        edit_by_targets(short, targets, q0=short.q[0])
