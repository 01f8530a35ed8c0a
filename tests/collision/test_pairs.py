"""Self-collision pairs that the active joints cannot move apart (two closed fingers whose
spheres overlap, with only the arm active) are left out of the solve and reported, instead
of failing every solve; an "in collision" result names its pair and the gap or depth."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import kinetree
from kinetree import geometry as geo
from kinetree.collision import CollisionWarning
from kinetree.spatial import translation

ARM = ["j1", "j2", "j3"]


def gripper_arm() -> kinetree.Model:
    """Three revolute joints, a hand, and two fingers on prismatic joints whose spheres
    overlap by 10 mm while closed (q = 0, the neutral configuration)."""
    b = kinetree.ModelBuilder("gripper_arm", root="base")
    b.add_joint("j1", "base", "l1", axis="z", limits=(-3, 3))
    b.add_joint("j2", "l1", "l2", axis="y", origin=translation([0, 0, 0.3]), limits=(-2, 2))
    b.add_joint("j3", "l2", "hand", axis="y", origin=translation([0, 0, 0.3]), limits=(-2, 2))
    b.add_joint("f1", "hand", "left", type="prismatic", axis="y",
                origin=translation([0, 0.02, 0.1]), limits=(0, 0.04))  # fmt: skip
    b.add_joint("f2", "hand", "right", type="prismatic", axis="-y",
                origin=translation([0, -0.02, 0.1]), limits=(0, 0.04))  # fmt: skip
    b.add_frame("tool", "hand", translation([0, 0, 0.12]))
    for link, r in (("l2", 0.04), ("hand", 0.04), ("left", 0.025), ("right", 0.025)):
        b.add_geometry(link, geo.Sphere(radius=r, kind="collision"))
    return b.build()


@pytest.fixture(scope="module")
def model() -> kinetree.Model:
    return gripper_arm()


@pytest.fixture(scope="module")
def targets(model):
    Q = model.random_configuration(6, rng=np.random.default_rng(1))
    Q[:, 3:] = 0.0  # fingers closed
    return model.fk(Q, "tool")


def test_fingers_the_arm_cannot_move_apart_do_not_block_the_solve(model, targets):
    cm = kinetree.collision.collision_model(model)
    names = [(cm.spheres.links[a], cm.spheres.links[b]) for a, b in cm.self_pairs]
    assert names == [("left", "right")]  # checked in general: opening the hand moves them
    assert model.distance(model.neutral()).distance == pytest.approx(-0.010)
    ball = kinetree.Sphere(radius=0.05, center=(0.5, 0.5, 0.9))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = model.ik(targets, "tool", obstacles=[ball], self_collision=True, active=ARM)
    assert r.success.all()
    for q, T in zip(r.q, targets):  # on target by FK, fingers untouched
        np.testing.assert_allclose(model.fk(q, "tool"), T, atol=1e-6)
        assert q[3] == q[4] == 0.0
        assert model.distance(q, [ball], self_collision=False).distance >= 0.0
    said = [str(w.message) for w in caught if issubclass(w.category, CollisionWarning)]
    assert len(said) == 1 and "left-right" in said[0] and "10.0 mm deep" in said[0]


def test_pairs_left_out_follow_the_active_joints(model):
    cm = kinetree.collision.collision_model(model)
    ball = kinetree.Sphere(radius=0.05, center=(0.5, 0.5, 0.9))
    arm_only = np.zeros(model.nq, dtype=bool)
    arm_only[:3] = True
    t = cm.tables([ball], True, moving=arm_only)
    assert ("left", "right") in t.left_out
    assert ("left", "right") not in t.pair_names
    t = cm.tables([ball], True, moving=np.ones(model.nq, dtype=bool))
    assert t.left_out == () and ("left", "right") in t.pair_names
    # Only the wrist active: l2 stays where it is, so l2 against the world is left out;
    # the hand moves relative to l2, so that pair stays (if enabled).
    wrist = np.zeros(model.nq, dtype=bool)
    wrist[2] = True
    t = cm.tables([ball], True, moving=wrist)
    assert ("l2", "sphere0") in t.left_out and ("hand", "sphere0") in t.pair_names


def test_in_collision_names_the_pair_and_the_gap(model, targets):
    # l2's sphere sits on j1's axis: no joint moves it further than 240 mm from this
    # obstacle, so a 300 mm margin ends every solve on target but in collision.
    ob = kinetree.Sphere(radius=0.02, center=(0, 0, 0.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CollisionWarning)  # the fingers, as above
        r = model.ik(targets[0], "tool", obstacles=[ob], self_collision=True, active=ARM,
                     margin=0.3)  # fmt: skip
    assert not r.success
    assert "l2 and sphere0 are 240.0 mm apart" in r.message and "margin 300 mm" in r.message
