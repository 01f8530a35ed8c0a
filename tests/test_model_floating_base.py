"""One way to a free base: :meth:`Model.with_floating_base`.

``load_urdf(floating_base=True)``, a file's own free joint at the root (URDF
``floating``, the builder's ``"free"``) and ``with_floating_base`` give the same node
layout, array by array; :attr:`Model.floating_base` names the free joint however it came.

``load(builtin, floating_base=True)``: oracle, the fixed-base model's FK, moved by the base
pose the free joint's seven coordinates describe (position in the old root's placement
frame, then the rotation).
"""

from __future__ import annotations

import numpy as np
import pytest

import kinetree
from kinetree import ModelBuilder
from kinetree.io.urdf import load_urdf
from kinetree.spatial import quat_exp, quaternion_to_matrix, rot_z, translation

LAYOUT = (
    "node_names", "parent", "origin", "axis", "joint_type", "q_index", "q_scale",
    "q_offset", "hidden", "node_joint", "joint_names", "limits", "continuous",
    "q_neutral", "joint_groups", "end_effectors", "couplings",
)  # fmt: skip

ARM = """<robot name="arm"><link name="base"/><link name="upper"/><link name="lower"/>
  <link name="hand"/>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/>
    <origin xyz="0 0 0.2"/><axis xyz="0 0 1"/><limit lower="-2" upper="2"/></joint>
  <joint name="elbow" type="revolute"><parent link="upper"/><child link="lower"/>
    <origin xyz="0.3 0 0" rpy="0.1 0 0"/><axis xyz="0 1 0"/><limit lower="-2" upper="2"/>
  </joint>
  <joint name="wrist" type="prismatic"><parent link="lower"/><child link="hand"/>
    <origin xyz="0.25 0 0"/><axis xyz="1 0 0"/><limit lower="0" upper="0.1"/></joint>
</robot>"""


def assert_same_layout(a: kinetree.Model, b: kinetree.Model) -> None:
    for name in LAYOUT:
        x, y = getattr(a, name), getattr(b, name)
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and x.shape == y.shape, name
            np.testing.assert_array_equal(x, y, err_msg=name)
        else:
            assert x == y, name


def test_urdf_floating_base_is_with_floating_base() -> None:
    fixed = load_urdf(ARM)
    free = load_urdf(ARM, floating_base=True)
    assert_same_layout(free, fixed.with_floating_base())
    # A file with its own floating root joint: the builder's free joint, the same layout.
    own = ARM.replace(
        '<link name="base"/>',
        '<link name="world"/><link name="base"/><joint name="root_joint" type="floating">'
        '<parent link="world"/><child link="base"/></joint>',
    )
    assert_same_layout(load_urdf(own), free)
    assert free.metadata["floating_base"] == "root_joint"
    assert free.floating_base == load_urdf(own).floating_base == "root_joint"


def _tree(b: ModelBuilder, root: str) -> kinetree.Model:
    b.add_joint("hip", root, "thigh", axis="y", origin=translation([0, 0.1, -0.1]))
    b.add_joint("knee", "thigh", "shin", axis="y", origin=translation([0, 0, -0.4]))
    b.add_joint("spine", root, "chest", axis="z", origin=rot_z(0.3) @ translation([0, 0, 0.2]))
    b.add_frame("foot", "shin", translation([0, 0, -0.4]))
    b.add_frame("head", "chest", translation([0, 0, 0.3]))
    return b.build()


def test_builder_free_joint_with_a_placed_root_is_with_floating_base() -> None:
    # The root sits away from the world origin (as the built-in humanoid's pelvis does):
    # the free joint's first slide carries that placement in both.
    T0 = translation([0.1, -0.2, 0.93]) @ rot_z(0.4)
    placed = _tree(ModelBuilder("legs", root="pelvis", root_origin=T0), "pelvis")
    b = ModelBuilder("legs", root="world")
    b.add_joint("root_joint", "world", "pelvis", type="free", origin=T0)
    assert_same_layout(placed.with_floating_base(), _tree(b, "pelvis"))


@pytest.mark.parametrize("name", ["humanoid", "quadruped", "panda"])
def test_built_in_models_take_the_same_way(name: str) -> None:
    assert_same_layout(kinetree.load(name, floating_base=True),
                       kinetree.models.get(name).with_floating_base())  # fmt: skip


def test_floating_base_names_the_free_joint_or_none() -> None:
    fixed = load_urdf(ARM)
    assert fixed.floating_base is None
    assert kinetree.models.get("humanoid").floating_base is None
    free = fixed.with_floating_base(joint="float", root="ground")
    assert free.floating_base == "float"
    # A second free base above the first: the outer one carries the whole model.
    assert free.with_floating_base(joint="outer", root="space").floating_base == "outer"
    # A free joint below a moving joint does not carry the whole model.
    b = ModelBuilder("hanging", root="base")
    b.add_joint("yaw", "base", "arm", axis="z")
    b.add_joint("loose", "arm", "box", type="free", origin=translation([0.5, 0, 0]))
    assert b.build().floating_base is None


# --- load(builtin, floating_base=True) (was tests/test_with_floating_base.py) ---------------


@pytest.mark.parametrize("name", ["panda", "humanoid", "ur5"])
def test_fk_is_the_fixed_models_moved_by_the_base(name: str) -> None:
    fixed = kinetree.load(name)
    free = kinetree.load(name, floating_base=True)
    assert (free.nq, free.nv) == (fixed.nq + 7, fixed.nv + 6)
    assert free.end_effectors == fixed.end_effectors
    assert free.q_slice("root_joint") == slice(0, 7) and free.frame_names[0] == "world"
    rng = np.random.default_rng(0)
    place = fixed.origin[0]  # where the old root sat: the free joint's frame
    for _ in range(5):
        q = fixed.random_configuration(rng=rng)
        p, w = rng.uniform(-1, 1, 3), rng.uniform(-1, 1, 3)
        base = np.eye(4)
        base[:3, :3] = quaternion_to_matrix(quat_exp(w))
        base[:3, 3] = p
        qf = np.concatenate([p, quat_exp(w), q])
        want = place @ base @ np.linalg.inv(place) @ fixed.fk_all(q)
        got = free.fk_all(qf)
        names = list(free.frame_names)
        for i, f in enumerate(fixed.frame_names):
            np.testing.assert_allclose(got[names.index(f)], want[i], atol=1e-12)
    np.testing.assert_allclose(free.neutral()[7:], fixed.neutral())


def test_whole_body_ik_on_the_built_in_humanoid() -> None:
    h = kinetree.load("humanoid", floating_base=True)
    rng = np.random.default_rng(3)
    solved = 0
    for _ in range(10):
        qt = h.random_configuration(rng=rng)
        qt[:3] = rng.uniform(-0.3, 0.3, 3)
        qt[3:7] = quat_exp(rng.uniform(-0.3, 0.3, 3))
        tg = {f: h.fk(qt, f) for f in ("hand_r", "hand_l", "foot_r", "foot_l")}
        # a count of restarts, not a wall clock: the same on a loaded machine
        r = h.ik(tg, time_budget=None, restarts=300)
        solved += bool(r.success)
        if r.success:
            for f, T in tg.items():
                np.testing.assert_allclose(h.fk(r.q, f)[:3, 3], T[:3, 3], atol=1e-6)
    assert solved >= 9


def test_names_that_are_taken_are_refused() -> None:
    free = kinetree.load("panda", floating_base=True)
    with pytest.raises(kinetree.InvalidValueError, match="already"):
        free.with_floating_base()
    twice = free.with_floating_base(joint="base2", root="ground")
    assert twice.nq == free.nq + 7


def test_one_naming_rule_for_a_free_base() -> None:
    """``Model.with_floating_base`` and ``kinetree.anim.free_base`` name the new root the
    same way ("world", else "world_1"...) and refuse a taken joint name alike."""
    from kinetree.anim import free_base

    b = ModelBuilder("taken", root="world")
    b.add_joint("j", "world", "link", "revolute", axis=(0, 0, 1))
    model = b.build()
    assert model.with_floating_base().node_names[0] == "world_1"
    assert free_base(model).node_names[0] == "world_1"
    with pytest.raises(kinetree.InvalidValueError, match="already a frame or joint"):
        model.with_floating_base(root="world")  # a root asked for by name
    b = ModelBuilder("taken_joint", root="base")
    b.add_joint("root_joint", "base", "link", "revolute", axis=(0, 0, 1))
    clash = b.build()
    for add in (clash.with_floating_base, lambda: free_base(clash)):
        with pytest.raises(kinetree.InvalidValueError, match="already a frame or joint"):
            add()
