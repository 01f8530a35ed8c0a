"""kinetree.anim.track and Tracker: targets met by FK on every frame, causal, deterministic,
smooth on the bundled walk, within the anatomical ranges; bad input refused before any
work."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import kinetree
from kinetree.anim import Tracker, anatomy, track
from kinetree.errors import (
    InvalidValueError,
    KinetreeError,
    ShapeError,
    UnknownNameError,
    UnsupportedError,
)
from kinetree.ik import Pose, Position
from kinetree.ik.kernel.swing_twist_layout import swing_twist_angles

WALK = Path(kinetree.__file__).parent / "data" / "cmu_12_01_walk.bvh"
N = 24  # frames of the walk used (every 4th: 30 fps)
TOL = 2e-6  # twice the IK's default tolerance [file unit, rad]
LEGS = ("HipJoint", "Leg", "Foot", "Toe")  # the walk's leg frames (LeftUpLeg, ...)


@pytest.fixture(scope="module")
def walk() -> tuple[kinetree.Model, np.ndarray, dict[str, int]]:
    clip = kinetree.read_bvh(WALK)
    q = np.asarray(clip.q[200 : 200 + 4 * N : 4], dtype=np.float64)
    index = {n: i for i, n in enumerate(clip.model.frame_names)}
    return clip.model, q, index


def _tracks(model: kinetree.Model, q: np.ndarray, index: dict[str, int], vr: bool) -> dict:
    T = model.fk_all(q)
    if vr:  # head and both hands as 6D poses, no pelvis
        return {f: T[:, index[f]] for f in ("Head", "LeftHand", "RightHand")}
    out = {"Hips": T[:, index["Hips"]]}
    out |= {f: T[:, index[f], :3, 3] for f in ("Head", "LeftHand", "RightHand")}
    return out


def _met(model: kinetree.Model, q: np.ndarray, tracks: dict, index: dict[str, int]) -> np.ndarray:
    """Every target of every frame within TOL, by FK (the oracle)."""
    T = model.fk_all(q)
    ok = np.ones(len(q), dtype=bool)
    for f, a in tracks.items():
        M = T[:, index[f]]
        if a.ndim == 3:
            ok &= np.abs(M - a).max(axis=(1, 2)) <= TOL
        else:
            ok &= np.linalg.norm(M[:, :3, 3] - a, axis=1) <= TOL
    return ok


def _jitter(model: kinetree.Model, q: np.ndarray, q_true: np.ndarray) -> float:
    P = model.fk_all(q)[:, :, :3, 3]
    P_true = model.fk_all(q_true)[:, :, :3, 3]
    acc = np.linalg.norm(np.diff(P, 2, axis=0), axis=2).mean()
    return float(acc / np.linalg.norm(np.diff(P_true, 2, axis=0), axis=2).mean())


@pytest.mark.parametrize("vr", [False, True], ids=["four points", "VR"])
def test_offline_meets_every_target_smoothly(walk, vr):
    model, q_true, index = walk
    tracks = _tracks(model, q_true, index, vr)
    motion = track(model, tracks, fps=30, prior=None)
    assert motion.q.shape == (N, model.nq)
    assert _met(model, motion.q, tracks, index).all()
    assert motion.metadata["success"].all()
    assert motion.metadata["position_error"].shape == (N, len(tracks))
    assert motion.metadata["position_error"].max() <= TOL
    # As smooth as the capture within 1.5x (per-frame IK with a prior: 8-20x).
    assert _jitter(model, motion.q, q_true) < 1.5
    # The floating base follows a headset: the pelvis stays near the capture's.
    if vr:
        pelvis = model.fk_all(motion.q)[:, index["Hips"], :3, 3]
        truth = model.fk_all(q_true)[:, index["Hips"], :3, 3]
        height = anatomy.body_frame(model).height
        assert np.linalg.norm(pelvis - truth, axis=1).max() < 0.15 * height


def test_tracker_is_causal_and_deterministic(walk):
    model, q_true, index = walk
    tracks = _tracks(model, q_true, index, vr=True)

    def run(tr: dict) -> np.ndarray:
        tracker = Tracker(model, fps=30, prior=None)
        return np.array([tracker.update({f: a[t] for f, a in tr.items()}).q for t in range(N)])

    q1 = run(tracks)
    assert _met(model, q1, tracks, index).all()
    # Frames after t changed: frames up to t are the same, bit for bit.
    t = N // 2
    moved = {f: a.copy() for f, a in tracks.items()}
    for a in moved.values():
        a[t + 1 :, :3, 3] += 5.0
    q2 = run(moved)
    np.testing.assert_array_equal(q1[: t + 1], q2[: t + 1])
    assert not np.array_equal(q1[t + 1 :], q2[t + 1 :])
    # Deterministic: the same stream gives the same motion; reset() starts afresh.
    np.testing.assert_array_equal(run(tracks), q1)
    tracker = Tracker(model, fps=30, prior=None)
    first = tracker.update({f: a[0] for f, a in tracks.items()}).q
    tracker.update({f: a[1] for f, a in tracks.items()})
    tracker.reset()
    np.testing.assert_array_equal(tracker.update({f: a[0] for f, a in tracks.items()}).q, first)


def test_anatomical_ranges_kept(walk):
    """Every frame within the swing-twist ranges of the anatomical model, and no elbow or
    knee bent backwards beyond the allowed 5 degrees."""
    model, q_true, index = walk
    tracks = _tracks(model, q_true, index, vr=True)
    motion = track(model, tracks, fps=30, prior=None)
    limited = anatomy.anatomical(model)
    assert limited.swing_twist  # elbows, knees, shoulders, hips, spine ...
    for group, (_, swing, lo, hi) in limited.swing_twist.items():
        for q in motion.q:
            s, t = swing_twist_angles(limited, q, group)
            assert s <= swing + 1e-6 and lo - 1e-6 <= t <= hi + 1e-6, group
    for angles in anatomy.bend_angles(model, motion.q).values():
        assert angles.min() >= -anatomy.HYPEREXTENSION - 1e-3


def test_ground_keeps_soles_above(walk):
    model, q_true, index = walk
    T = model.fk_all(q_true)
    up = 1
    floor = float(T[:, :, up, 3].min()) + 0.5  # half a unit above the capture's lowest point
    tracks = _tracks(model, q_true, index, vr=True)
    motion = track(model, tracks, fps=30, prior=None, ground=floor)
    feet = [index[f] for f in ("LeftFoot", "LeftToeBase", "RightFoot", "RightToeBase")]
    assert model.fk_all(motion.q)[:, feet, up, 3].min() >= floor - 1e-3
    assert _met(model, motion.q, tracks, index).all()


def test_unreachable_hand_does_not_drag_the_head(walk):
    model, q_true, index = walk
    T = model.fk_all(q_true[0])
    height = anatomy.body_frame(model).height
    far = T[index["LeftHand"], :3, 3] + np.array([3.0 * height, 0.0, 0.0])
    targets = {
        "Hips": T[index["Hips"]],
        "Head": Position(T[index["Head"], :3, 3]),
        "LeftHand": Position(far),
        "RightHand": Position(T[index["RightHand"], :3, 3]),
    }
    r = Tracker(model, fps=30, prior=None).update(targets)
    assert not r.success  # honest: the hand is out of reach
    got = model.fk_all(r.q)
    assert np.linalg.norm(got[index["Head"], :3, 3] - T[index["Head"], :3, 3]) <= TOL
    assert np.linalg.norm(got[index["RightHand"], :3, 3] - T[index["RightHand"], :3, 3]) <= TOL
    # The left arm reaches towards it as far as it goes.
    assert np.linalg.norm(got[index["LeftHand"], :3, 3] - far) < 3.0 * height
    assert r.frames == ("Hips", "Head", "LeftHand", "RightHand")


def test_pelvis_position_only_is_served_upright(walk):
    """A pelvis given as a position (no orientation) with head and hands: met, and the
    knees bend the way knees bend (never folded backwards)."""
    model, q_true, index = walk
    tracks = _tracks(model, q_true, index, vr=False)
    tracks["Hips"] = tracks["Hips"][:, :3, 3]
    motion = track(model, tracks, fps=30, prior=None)
    assert _met(model, motion.q, tracks, index).all()
    bends = anatomy.bend_angles(model, motion.q)
    assert min(bends["knee_l"].min(), bends["knee_r"].min()) >= -anatomy.HYPEREXTENSION - 1e-3


def test_batched_pose_and_position_targets(walk):
    model, q_true, index = walk
    tracks = _tracks(model, q_true[:4], index, vr=False)
    wrapped = {f: (Pose(a) if a.ndim == 3 else Position(a)) for f, a in tracks.items()}
    a = track(model, wrapped, fps=30, prior=None)
    b = track(model, tracks, fps=30, prior=None)
    np.testing.assert_array_equal(a.q, b.q)


class _FakeStream:
    def __init__(self, q: np.ndarray) -> None:
        self.q = q
        self.calls = 0

    def step(self, targets):
        assert all(isinstance(v, np.ndarray) for v in targets.values())
        self.calls += 1
        return self.q

    def reset(self) -> None:
        self.calls = 0


class _FakeBound:
    def __init__(self, q: np.ndarray) -> None:
        self.q = q
        self.streams: list[_FakeStream] = []
        self.offline_calls = 0

    def offline(self, tracks, fps):
        self.offline_calls += 1
        n = len(next(iter(tracks.values())))
        return np.repeat(self.q[None], n, axis=0)

    def stream(self, fps):
        s = _FakeStream(self.q)
        self.streams.append(s)
        return s


class _FakeMotionPrior:
    past, future = 4, 2

    def __init__(self, q: np.ndarray) -> None:
        self.bound = _FakeBound(q)

    def bind(self, model, *, roles=None):
        return self.bound


def test_motion_prior_guides_but_never_decides(walk):
    """A motion prior (the kinetree.learn.motion contract) is asked every frame and
    offline; even a useless guess (a crouched, twisted pose) leaves every target met."""
    model, q_true, index = walk
    tracks = _tracks(model, q_true, index, vr=True)
    bad_guess = model.neutral() + 0.6
    prior = _FakeMotionPrior(bad_guess)
    motion = track(model, tracks, fps=30, prior=prior)
    assert prior.bound.offline_calls == 1
    assert prior.bound.streams[0].calls == N
    assert _met(model, motion.q, tracks, index).all()
    assert motion.metadata["prior"] == "motion prior"


class _TruthStream:
    """A live guide that knows the capture: frame t's guess is the true configuration."""

    def __init__(self, q: np.ndarray) -> None:
        self.q, self.t = q, 0

    def step(self, targets):
        out = self.q[min(self.t, len(self.q) - 1)]
        self.t += 1
        return out

    def reset(self) -> None:
        self.t = 0


class _TruthPrior:
    def __init__(self, q: np.ndarray) -> None:
        self.q = q

    def bind(self, model, *, roles=None):
        prior = self

        class _Bound:
            def stream(self, fps):
                return _TruthStream(prior.q)

            def offline(self, tracks, fps):
                return prior.q.copy()

        return _Bound()


@pytest.mark.parametrize("vr", [False, True], ids=["four points", "VR"])
def test_live_tracker_keeps_its_guides_posture(walk, vr):
    """A guide that is right everywhere is followed: the tracked joints sit where the
    guide puts them (the capture's), not dragged by a lagging filter, an upright guess
    of the pelvis or least-squares steps spread over the trunk."""
    model, q_true, index = walk
    tracks = _tracks(model, q_true, index, vr)
    tracker = Tracker(model, fps=30, prior=_TruthPrior(q_true))
    q = np.array([tracker.update({f: a[t] for f, a in tracks.items()}).q for t in range(N)])
    assert _met(model, q, tracks, index).all()
    height = anatomy.body_frame(model).height
    # The upper body (untracked feet are pinned while planted, the legs follow them).
    upper = [i for i, n in enumerate(model.frame_names) if not any(k in n for k in LEGS)]
    P = model.fk_all(q)[:, upper, :3, 3]
    P_true = model.fk_all(q_true)[:, upper, :3, 3]
    assert np.linalg.norm(P - P_true, axis=2).mean() < 2e-3 * height


# --- bad input: a KinetreeError naming the problem, before any work --------------------


def _some_tracks(walk, n=5):
    model, q_true, index = walk
    return model, _tracks(model, q_true[:n], index, vr=False)


def test_tracks_of_different_lengths(walk):
    model, tracks = _some_tracks(walk)
    tracks["Head"] = tracks["Head"][:3]
    with pytest.raises(ShapeError, match=r"same number of frames.*Head: 3"):
        track(model, tracks, fps=30, prior=None)


def test_nan_in_a_track(walk):
    model, tracks = _some_tracks(walk)
    tracks["LeftHand"] = tracks["LeftHand"].copy()
    tracks["LeftHand"][2, 1] = np.nan
    with pytest.raises(InvalidValueError, match=r"'LeftHand' has NaN or inf values at frame 2"):
        track(model, tracks, fps=30, prior=None)


def test_unknown_frame(walk):
    model, tracks = _some_tracks(walk)
    tracks["LeftHnd"] = tracks.pop("LeftHand")
    with pytest.raises(UnknownNameError, match=r"LeftHnd.*LeftHand"):
        track(model, tracks, fps=30, prior=None)


@pytest.mark.parametrize("fps", [0, -30, float("nan"), "30"])
def test_bad_fps(walk, fps):
    model, tracks = _some_tracks(walk)
    with pytest.raises(InvalidValueError, match="fps"):
        track(model, tracks, fps=fps, prior=None)
    with pytest.raises(InvalidValueError, match="fps"):
        Tracker(model, fps=fps, prior=None)


def test_pose_track_of_wrong_shape(walk):
    model, tracks = _some_tracks(walk)
    tracks["Hips"] = tracks["Hips"][:, :3, :]
    with pytest.raises(ShapeError, match=r"'Hips' has shape \(5, 3, 4\)"):
        track(model, tracks, fps=30, prior=None)


def test_skeleton_without_body_parts():
    arm = kinetree.load("panda")
    with pytest.raises(UnsupportedError, match="body parts"):
        Tracker(arm, fps=30, prior=None)
    with pytest.raises(UnsupportedError, match="body parts"):
        track(arm, {arm.frame_names[-1]: np.zeros((3, 3))}, fps=30, prior=None)


def test_bad_stream_frame(walk):
    model = walk[0]
    tracker = Tracker(model, fps=30, prior=None)
    with pytest.raises(ShapeError, match="'Head'"):
        tracker.update({"Head": np.zeros(4)})
    with pytest.raises(KinetreeError, match=r"rest= is set by the tracker"):
        Tracker(model, fps=30, prior=None, rest="neutral")


def test_soles_are_frames_of_the_skeleton() -> None:
    """The sole points are positions along ``fk_all``'s frame axis (not node indices,
    which count the hidden inner nodes of ball joints): on the built-in humanoid each
    side's points are its ankle, toe and the toe's child, and their heights are the
    lowest of that foot by FK."""
    from kinetree.anim.tracking._skeleton import skeleton

    body = kinetree.models.humanoid()
    sk = skeleton(body, None)
    T = body.fk_all(body.neutral())
    names = body.frame_names
    for side, ix in sk.soles.items():
        assert all(0 <= i < len(names) for i in ix)
        assert sk.parts[f"ankle_{side}"] == names[ix[0]]
    heights = sk.sole_heights(T, sk.up_axis)
    for side, ix in sk.soles.items():
        assert heights[side] == pytest.approx(min(T[i, sk.up_axis, 3] for i in ix))
