"""kinetree.anim.Teleop: a person's head and hands drive a humanoid robot. Every robot
target met by FK on every frame, joint limits kept, feet fixed, causal, bad input
refused before any solve; on the built-in humanoid (always there) and on the G1 of
example-robot-data (skipped without it). Also: a motion from ``track`` goes straight
into ``retarget_robot``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import kinetree
from kinetree.anim import Teleop, track
from kinetree.anim.retarget import retarget_robot
from kinetree.errors import (
    InvalidValueError,
    KinetreeError,
    NotRigidError,
    ShapeError,
    UnsupportedError,
)
from kinetree.ik import Pose, Position

WALK = Path(kinetree.__file__).parent / "data" / "cmu_12_01_walk.bvh"
TOL = 2e-6  # twice the IK's default tolerance [m, rad]
N = 30


def _g1_available() -> bool:
    from kinetree.io.robot_packages import example_robot_data

    root = example_robot_data()
    return root is not None and (root / "g1_description").exists()


@pytest.fixture(scope="module")
def person() -> tuple[kinetree.Model, dict[str, np.ndarray]]:
    """The built-in humanoid as a person waving its arms and turning its head and
    chest, smoothly: tracks of its head and hands (z up, floor near 0)."""
    model = kinetree.models.get("humanoid")
    rng = np.random.default_rng(3)
    lo, hi = model.limits[:, 0], model.limits[:, 1]
    moving = [
        i
        for i, n in enumerate(model.joint_names)
        if n.split("_")[0] in ("shoulder", "elbow", "wrist", "neck", "chest")
    ]
    amp = np.zeros(model.nq)
    amp[moving] = rng.uniform(0.2, 0.5, len(moving))
    phase = rng.uniform(0, 2 * np.pi, model.nq)
    t = np.arange(N)[:, None] / 30.0
    q = np.clip(model.neutral() + amp * np.sin(2.0 * t + phase) * (t > 0), lo, hi)
    T = model.fk_all(q)
    ix = {n: i for i, n in enumerate(model.frame_names)}
    tracks = {f: T[:, ix[f]] for f in ("head", "hand_l", "hand_r")}
    return model, tracks


def _frame(tracks: dict[str, np.ndarray], t: int) -> dict[str, np.ndarray]:
    return {k: a[t] for k, a in tracks.items()}


def _check_met(robot: kinetree.Model, q: np.ndarray, targets: dict) -> None:
    """Every robot target met at ``q`` by FK (the oracle), a masked head orientation
    on its masked axes."""
    for frame, t in targets.items():
        M = robot.fk(q, frame)
        if isinstance(t, Position):
            assert np.linalg.norm(M[:3, 3] - t.xyz) <= TOL, frame
            continue
        A = t.T if isinstance(t, Pose) else t
        p = M[:3, 3]
        if isinstance(t, Pose) and t.point is not None:  # a point fixed in the frame
            p = M[:3, :3] @ np.asarray(t.point) + p
        assert np.linalg.norm(p - A[:3, 3]) <= TOL, frame
        R = A[:3, :3] @ M[:3, :3].T
        if isinstance(t, Pose) and t.orientation_mask is not None:
            axis = np.flatnonzero(np.asarray(t.orientation_mask))[0]
            # The turn about that axis: the skew part of R along it.
            i, j = [k for k in range(3) if k != axis]
            turn = np.arctan2(R[j, i] - R[i, j], R[i, i] + R[j, j])
            assert abs(turn) <= 10 * TOL, frame
        else:
            angle = np.arccos(np.clip(0.5 * (np.trace(R) - 1.0), -1.0, 1.0))
            assert angle <= 10 * TOL, frame  # arccos loses digits near 0


@pytest.mark.parametrize("head", ["yaw", "pose"])
def test_humanoid_targets_met_limits_kept_feet_fixed(person, head) -> None:
    model, tracks = person
    tp = Teleop("humanoid", fps=30, person=model, head=head)
    robot = tp.robot
    feet = {f: T.copy() for f, T in tp.body.feet.items()}
    for t in range(N):
        r = tp.update(_frame(tracks, t))
        targets = tp.targets
        if head == "pose":
            # The whole head pose (a 6D target on the head frame) is met on every
            # frame; the hands may fall short where the neck turns the head but not
            # the shoulders the map assumes (the reason "yaw" is the default).
            assert isinstance(targets[tp.body.head_frame], np.ndarray)
            targets = {f: v for f, v in targets.items() if f not in tp.body.hands}
        else:
            assert bool(np.all(r.success)), (t, r.message)
        _check_met(robot, r.q, targets)
        assert robot.within_limits(r.q)
        for f, T in feet.items():  # the feet never move
            assert np.abs(robot.fk(r.q, f) - T).max() <= 10 * TOL


def test_head_point_and_hands_follow_the_person(person) -> None:
    """The robot's head point rises and falls with the person's head, scaled, and its
    hands move the way the person's move (in the robot's axes)."""
    model, tracks = person
    tp = Teleop("humanoid", fps=30, person=model)
    b = tp.body
    heads, hands = [], []
    for t in range(N):
        r = tp.update(_frame(tracks, t))
        heads.append(b.head_pose(tp.robot.fk(r.q, b.head_frame))[:3, 3])
        hands.append(tp.robot.fk(r.q, b.hands[0])[:3, 3])
    dz_person = tracks["head"][:, 2, 3] - tracks["head"][0, 2, 3]
    dz_robot = np.array(heads)[:, 2] - heads[0][2]
    # The head point moves as the person's head, at the calibrated scale (about 1:
    # the person is the robot's own body).
    scale = tp.map.cal.scale
    assert 0.8 < scale < 1.2
    assert np.allclose(dz_robot, scale * dz_person, atol=1e-5)
    d_person = tracks["hand_l"][:, :3, 3] - tracks["hand_l"][0, :3, 3]
    d_robot = np.array(hands) - hands[0]
    assert np.corrcoef(d_person.ravel(), d_robot.ravel())[0, 1] > 0.9


def test_causal(person) -> None:
    """Changing the frames after t leaves frames up to t unchanged."""
    model, tracks = person
    cut = 12
    other = {k: a.copy() for k, a in tracks.items()}
    other["hand_l"][cut + 1 :, 0, 3] += 0.1
    other["head"][cut + 1 :, 2, 3] -= 0.05
    a = Teleop("humanoid", fps=30, person=model).run(tracks)
    b = Teleop("humanoid", fps=30, person=model).run(other)
    assert np.array_equal(a.q[: cut + 1], b.q[: cut + 1])
    assert not np.allclose(a.q[cut + 1 :], b.q[cut + 1 :])


def test_out_of_reach_hand_is_best_effort(person) -> None:
    """A hand far beyond reach: the rest met, the feet fixed, limits kept, no success
    claimed for the hand."""
    model, tracks = person
    tp = Teleop("humanoid", fps=30, person=model, arm_scale=5.0)
    f = _frame(tracks, 0)
    tp.update(f)
    far = {k: v.copy() for k, v in f.items()}
    far["hand_l"][:3, 3] += [0.0, 0.6, 0.4]
    r = tp.update(far)
    assert not bool(np.all(r.success))
    assert "out of reach" in r.message
    head = list(tp.targets).index(tp.body.head_frame)
    assert r.position_error[head] <= TOL  # the head is met
    assert tp.robot.within_limits(r.q)
    assert np.isfinite(r.q).all()
    for foot, T in tp.body.feet.items():
        assert np.abs(tp.robot.fk(r.q, foot) - T).max() <= 10 * TOL


def test_positions_for_hands_and_roles_as_keys(person) -> None:
    _, tracks = person
    tp = Teleop("humanoid", fps=30)  # no person model: roles as keys, proportions
    for t in range(5):
        f = _frame(tracks, t)
        r = tp.update({"head": f["head"], "wrist_l": f["hand_l"][:3, 3], "wrist_r": f["hand_r"]})
        assert bool(np.all(r.success))
        assert tp.robot.within_limits(r.q)


def test_reset_calibrates_again(person) -> None:
    model, tracks = person
    tp = Teleop("humanoid", fps=30, person=model)
    first = tp.update(_frame(tracks, 0)).q
    tp.update(_frame(tracks, 5))
    tp.reset()
    assert np.array_equal(tp.update(_frame(tracks, 0)).q, first)


@pytest.mark.parametrize(
    "change, error, words",
    [
        (lambda f: {**f, "nose": f["head"]}, InvalidValueError, "unknown target 'nose'"),
        (lambda f: {"head": f["head"], "hand_l": f["hand_l"]}, InvalidValueError, "wrist_r"),
        (lambda f: {**f, "head": f["head"][:3, 3]}, ShapeError, "4x4 pose"),
        (lambda f: {**f, "hand_l": np.full((4, 4), np.nan)}, InvalidValueError, "NaN"),
        (lambda f: {**f, "hand_l": np.zeros((3, 3))}, ShapeError, "shape (3, 3)"),
        (lambda f: {**f, "hand_l": 2.0 * f["hand_l"]}, NotRigidError, "hand_l"),
        (lambda f: {**f, "hand_l": "here"}, InvalidValueError, "not numeric"),
        (lambda f: [f["head"]], InvalidValueError, "mapping"),
    ],
)
def test_bad_targets_refused(person, change, error, words) -> None:
    model, tracks = person
    tp = Teleop("humanoid", fps=30, person=model)
    with pytest.raises(error, match=words.replace("(", r"\(").replace(")", r"\)")):
        tp.update(change(_frame(tracks, 0)))
    assert tp.map.cal is None  # nothing was calibrated or solved


def test_bad_construction_refused() -> None:
    with pytest.raises(InvalidValueError, match="fps"):
        Teleop("humanoid", fps=0)
    with pytest.raises(InvalidValueError, match="scale"):
        Teleop("humanoid", fps=30, scale=-1.0)
    with pytest.raises(InvalidValueError, match="follow"):
        Teleop("humanoid", fps=30, follow=True)
    with pytest.raises(InvalidValueError, match="floor"):
        Teleop("humanoid", fps=30, floor=float("nan"))
    with pytest.raises(InvalidValueError, match="head must be one of"):
        Teleop("humanoid", fps=30, head="nod")
    with pytest.raises(InvalidValueError, match="up must be"):
        Teleop("humanoid", fps=30, up="w")
    with pytest.raises(InvalidValueError, match="q0"):
        Teleop("humanoid", fps=30, q0=np.zeros(3))
    with pytest.raises(UnsupportedError, match="body parts"):
        Teleop("panda", fps=30)  # an arm has no head, hips or ankles
    with pytest.raises(KinetreeError):
        Teleop("humanoid", fps=30, stance=np.zeros(2))


@pytest.mark.skipif(not _g1_available(), reason="needs example-robot-data (the G1)")
def test_g1_from_a_tracked_walk() -> None:
    """The G1's head frame sits at its pelvis: the head point is found on its head
    (above the shoulders, from its mesh or proportions); a person walking drives it
    with every target met, feet fixed and limits kept."""
    clip = kinetree.read_bvh(WALK)
    model = clip.model
    q = np.asarray(clip.q[200 : 200 + 4 * N : 4], dtype=np.float64)
    T = model.fk_all(q)
    ix = {n: i for i, n in enumerate(model.frame_names)}
    tracks = {f: T[:, ix[f]] for f in ("Head", "LeftHand", "RightHand")}
    floor = float(T[:, [ix["LeftToeBase"], ix["RightToeBase"]], 1, 3].min())
    tp = Teleop("g1", fps=30, person=model, floor=floor, follow=0.5)
    b = tp.body
    g1 = tp.robot
    T0 = g1.fk_all(b.stance)
    gi = {n: i for i, n in enumerate(g1.frame_names)}
    head = b.head_pose(T0[gi[b.head_frame]])[:3, 3]
    shoulders = T0[gi["left_shoulder_pitch_link"], 2, 3]
    assert T0[gi["head_link"], 2, 3] < shoulders  # the frame is not at the head...
    assert head[2] > shoulders + 0.1  # ... the head point is
    for t in range(N):
        r = tp.update(_frame(tracks, t))
        assert bool(np.all(r.success)), (t, r.message)
        _check_met(g1, r.q, tp.targets)  # the targets of this frame (follow= moves them)
        assert g1.within_limits(r.q)


def test_retarget_robot_takes_a_tracked_motion() -> None:
    """``retarget_robot(track(...))``: a clip tracked from sparse points goes straight
    onto a robot, frame for frame, within its limits."""
    clip = kinetree.read_bvh(WALK)
    model = clip.model
    q = np.asarray(clip.q[200 : 200 + 4 * 12 : 4], dtype=np.float64)
    T = model.fk_all(q)
    ix = {n: i for i, n in enumerate(model.frame_names)}
    tracks = {"Hips": T[:, ix["Hips"]]}
    tracks |= {f: T[:, ix[f], :3, 3] for f in ("Head", "LeftHand", "RightHand")}
    motion = track(model, tracks, fps=30, prior=None)
    robot = retarget_robot(motion, "humanoid", "cmu")
    assert robot.q.shape == (len(q), robot.model.nq)
    assert np.isfinite(robot.q).all()
    assert robot.model.within_limits(robot.q).all()
    # The robot's pelvis travels the way the tracked (walking) pelvis does.
    src = motion.model.fk_all(motion.q)[:, ix["Hips"], :3, 3]
    pelvis = robot.model.fk_all(robot.q)[:, robot.model.frame_index("pelvis"), :3, 3]
    assert np.linalg.norm(pelvis[-1] - pelvis[0]) > 0.1
    assert np.linalg.norm(src[-1] - src[0]) > 0
