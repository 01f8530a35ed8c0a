"""kinetree.anim.anatomy: human joint ranges for skeletons from files, kept by IK."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import kinetree
from kinetree.anim import anatomy
from kinetree.errors import UnsupportedError
from kinetree.ik import Position
from kinetree.ik.kernel.swing_twist_layout import swing_twist_angles

WALK = Path(kinetree.__file__).parent / "data" / "cmu_12_01_walk.bvh"


@pytest.fixture(scope="module")
def walk():
    clip = kinetree.read_bvh(WALK)
    return clip.model, np.asarray(clip.q[::8], dtype=np.float64)


def _within(model: kinetree.Model, q: np.ndarray) -> bool:
    for group, (_, swing, lo, hi) in model.swing_twist.items():
        s, t = swing_twist_angles(model, q, group)
        if s > swing + 1e-6 or not lo - 1e-6 <= t <= hi + 1e-6:
            return False
    return True


def test_ranges_from_body_parts(walk):
    model, _ = walk
    limited = anatomy.anatomical(model)
    groups = set(limited.swing_twist)
    # Hinges, ball joints and the spine, found by body part (CMU names).
    assert {"LeftForeArm", "RightForeArm", "LeftLeg", "RightLeg"} <= groups
    assert {"LeftArm", "LeftUpLeg", "LowerBack", "Spine", "Neck"} <= groups
    # The elbow's range is one-sided: it bends forward, not backward.
    _, _, lo, hi = limited.swing_twist["LeftForeArm"]
    assert lo == pytest.approx(-anatomy.HYPEREXTENSION) and hi > np.radians(140)
    assert model.swing_twist == {}  # the original is untouched


def test_the_capture_is_within_its_ranges(walk):
    """The oracle: a real human motion (the bundled walk) keeps every range and never
    bends an elbow or knee backwards."""
    model, q = walk
    limited = anatomy.anatomical(model)
    assert all(_within(limited, qq) for qq in q)
    for role, angles in anatomy.bend_angles(model, q).items():
        assert angles.min() > -np.radians(2), role
    assert max(a.max() for a in anatomy.bend_angles(model, q).values()) > np.radians(20)


def test_bend_angles_sign(walk):
    """Bending the elbow about its flexion axis one way is positive, the other way
    negative (measured on FK, independent of the joint's Euler angles)."""
    model, _ = walk
    q = model.neutral()
    sl = model.q_slice("LeftForeArm")
    got = []
    for sign in (1.0, -1.0):
        best = None
        for k in range(3):
            qq = q.copy()
            qq[sl.start + k] = sign * 0.8
            b = anatomy.bend_angles(model, qq)["elbow_l"][0]
            if best is None or abs(b) > abs(best):
                best = b
        got.append(best)
    assert got[0] * got[1] < 0  # one bends forward, the other backward
    assert max(abs(g) for g in got) == pytest.approx(0.8, abs=0.01)  # axes near-aligned


def test_clamp_moves_into_range_and_keeps_what_is_inside(walk):
    model, q = walk
    limited = anatomy.anatomical(model)
    rng = np.random.default_rng(0)
    wild = q + rng.normal(0.0, 1.0, q.shape)
    assert not all(_within(limited, qq) for qq in wild)
    fixed = anatomy.clamp(limited, wild)
    assert all(_within(limited, qq) for qq in fixed)
    toward = anatomy.clamp(limited, wild, inside=q)
    assert all(_within(limited, qq) for qq in toward)
    np.testing.assert_array_equal(anatomy.clamp(limited, q), q)


def test_ik_keeps_the_ranges(walk):
    """Reaching with the anatomical model: targets met by FK, every range kept, no
    hyperextended elbow, where the free skeleton bends one backwards."""
    model, q = walk
    limited = anatomy.anatomical(model)
    index = {n: i for i, n in enumerate(model.frame_names)}
    T = model.fk_all(q[10])
    hips = T[index["Hips"]]
    # The left hand pulled toward the shoulder from behind: a free elbow bends either way.
    shoulder = T[index["LeftArm"], :3, 3]
    hand = T[index["LeftHand"], :3, 3]
    target = shoulder + 0.5 * (hand - shoulder) - 0.1 * anatomy.body_frame(model).forward
    r = limited.ik({"Hips": hips, "LeftHand": Position(target)}, q0=q[10])
    assert r.success
    got = limited.fk_all(r.q)[index["LeftHand"], :3, 3]
    assert np.linalg.norm(got - target) < 2e-6
    assert _within(limited, r.q)
    assert anatomy.bend_angles(model, r.q)["elbow_l"][0] >= -anatomy.HYPEREXTENSION - 1e-6


def test_skeleton_without_body_parts_is_refused():
    arm = kinetree.load("panda")
    with pytest.raises(UnsupportedError, match="lacks the body parts"):
        anatomy.anatomical(arm)
