"""kinetree.Model: names, sizes, limits, configurations, chains, masks, immutability."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import kinetree
from kinetree import (
    InvalidValueError,
    KinetreeError,
    ModelBuilder,
    ModelStructureError,
    ShapeError,
    UnknownNameError,
    models,
)
from kinetree.spatial import translation

PI = np.pi
MODEL_NAMES = models.available()


# --- the built-in catalogue ----------------------------------------------------------------------


def test_available_models() -> None:
    names = models.available()
    for expected in ("planar2r", "zxx_arm", "panda", "panda_urdf", "ur5", "iiwa14", "humanoid"):
        assert expected in names
    assert len(set(names)) == len(names)


@pytest.mark.parametrize(
    ("name", "dof", "end_effectors"),
    [
        ("planar2r", 2, ("tip",)),
        ("planar3r", 3, ("tip",)),
        ("three_axis", 3, ("tip",)),
        ("six_axis", 6, ("tip",)),
        ("zxx_arm", 3, ("tip",)),
        ("panda", 7, ("flange",)),
        ("panda_urdf", 7, ("panda_link8",)),
        ("ur3", 6, ("flange",)),
        ("ur5", 6, ("flange",)),
        ("ur10", 6, ("flange",)),
        ("iiwa14", 7, ("flange",)),
        ("humanoid", 37, ("hand_r", "hand_l", "foot_r", "foot_l", "head")),
        ("quadruped", 12, ("FR_foot", "FL_foot", "RR_foot", "RL_foot")),
    ],
)
def test_builtin_sizes_and_end_effectors(
    name: str, dof: int, end_effectors: tuple[str, ...]
) -> None:
    m = models.get(name)
    assert m.dof == dof == len(m.joint_names)
    assert m.end_effectors == end_effectors
    assert set(end_effectors) <= set(m.frame_names)
    assert m.limits.shape == (dof, 2)
    assert m.continuous.shape == (dof,)
    assert m.neutral().shape == (dof,)


def test_get_returns_one_shared_instance() -> None:
    assert models.get("panda") is models.get("panda")
    assert kinetree.load("panda") is models.get("panda")


def test_get_unknown_model_lists_models() -> None:
    with pytest.raises(UnknownNameError) as info:
        models.get("pandaa")
    for name in MODEL_NAMES:
        assert name in str(info.value)


def test_panda_names() -> None:
    m = models.get("panda")
    assert m.joint_names == tuple(f"joint{i}" for i in range(1, 8))
    assert m.frame_names == (*(f"link{i}" for i in range(8)), "flange")
    u = models.get("panda_urdf")
    assert u.joint_names == tuple(f"panda_joint{i}" for i in range(1, 8))
    assert u.frame_names == tuple(f"panda_link{i}" for i in range(9))


def test_panda_limits_from_datasheet() -> None:
    lim = models.get("panda").limits
    np.testing.assert_allclose(lim[3], [-3.0718, -0.0698])
    np.testing.assert_allclose(lim[5], [-0.0175, 3.7525])
    np.testing.assert_array_equal(models.get("panda_urdf").limits, lim)


def test_frame_names_are_topologically_ordered() -> None:
    for name in MODEL_NAMES:
        m = models.get(name)
        assert m.frame_names[0] == m.node_names[0]  # the root first
        assert np.all(m.parent[1:] < np.arange(1, m.n_nodes))  # parents before children
        assert m.parent[0] == -1


def test_humanoid_hides_inner_ball_joint_nodes() -> None:
    m = models.get("humanoid")
    assert not any("#" in f for f in m.frame_names)
    assert any("#" in n for n in m.node_names)
    assert len(m.frame_names) == int(np.sum(~m.hidden))
    with pytest.raises(UnknownNameError):
        m.fk(m.neutral(), "upper_arm_r#x")


# --- limits, neutral, random configurations ------------------------------------------------------


def _continuous_model() -> kinetree.Model:
    b = ModelBuilder("wheel", root="base")
    b.add_joint("steer", "base", "fork", axis="z", limits=(-0.5, 0.5))
    b.add_joint("spin", "fork", "wheel", type="continuous", axis="y", limits=(-1.0, 1.0))
    b.add_joint("free", "wheel", "marker", axis="x")  # revolute without limits
    b.add_joint("slide", "marker", "slider", type="prismatic", axis="z")  # prismatic, unlimited
    return b.build()


def test_continuous_and_unlimited_joints_have_infinite_limits() -> None:
    m = _continuous_model()
    np.testing.assert_array_equal(m.limits[0], [-0.5, 0.5])
    # A continuous joint ignores the limits it was given.
    np.testing.assert_array_equal(m.limits[1], [-np.inf, np.inf])
    np.testing.assert_array_equal(m.limits[2], [-np.inf, np.inf])
    np.testing.assert_array_equal(m.limits[3], [-np.inf, np.inf])
    np.testing.assert_array_equal(m.continuous, [False, True, False, False])


def test_unlimited_sampling_bounds() -> None:
    m = _continuous_model()
    lo, hi = m.sampling_bounds()
    np.testing.assert_array_equal(lo, [-0.5, -PI, -PI, -1.0])  # prismatic: 1 m
    np.testing.assert_array_equal(hi, [0.5, PI, PI, 1.0])
    Q = m.random_configuration(2000, rng=1)
    assert np.all(Q >= lo) and np.all(Q <= hi)
    # Samples spread over the whole range, not a corner of it.
    assert np.all(Q.min(axis=0) < lo + 0.05 * (hi - lo))
    assert np.all(Q.max(axis=0) > hi - 0.05 * (hi - lo))


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_neutral_within_limits(name: str) -> None:
    m = models.get(name)
    q0 = m.neutral()
    assert q0.shape == (m.dof,)
    assert m.within_limits(q0)
    assert np.all(q0 >= m.limits[:, 0]) and np.all(q0 <= m.limits[:, 1])


def test_neutral_values() -> None:
    np.testing.assert_allclose(
        models.get("panda").neutral(), [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785]
    )
    np.testing.assert_allclose(
        models.get("ur5").neutral(), [0.0, -PI / 2, PI / 2, -PI / 2, -PI / 2, 0.0]
    )
    h = models.get("humanoid")
    assert h.neutral()[h.joint_names.index("elbow_r")] == pytest.approx(np.radians(15))
    # Zeros are clipped into the limits: panda joint 4 cannot be 0.
    b = ModelBuilder("clip", root="base")
    b.add_joint("j", "base", "l", limits=(0.2, 1.0))
    assert b.build().neutral()[0] == 0.2


def test_neutral_returns_a_copy() -> None:
    m = models.get("panda")
    q = m.neutral()
    q[:] = 99.0
    assert m.neutral()[0] == 0.0


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_random_configuration_shape_and_limits(name: str) -> None:
    m = models.get(name)
    q = m.random_configuration(rng=0)
    assert q.shape == (m.dof,)
    Q = m.random_configuration(200, rng=0)
    assert Q.shape == (200, m.dof)
    assert np.all(m.within_limits(Q))
    lo, hi = m.sampling_bounds()
    assert np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))


def test_random_configuration_is_reproducible() -> None:
    m = models.get("humanoid")
    np.testing.assert_array_equal(
        m.random_configuration(5, rng=42), m.random_configuration(5, rng=42)
    )
    g1, g2 = np.random.default_rng(7), np.random.default_rng(7)
    np.testing.assert_array_equal(m.random_configuration(5, g1), m.random_configuration(5, g2))
    # A Generator advances: its next draw differs from a fresh generator's first.
    fresh = np.random.default_rng(7)
    assert not np.array_equal(m.random_configuration(5, g1), m.random_configuration(5, fresh))
    assert not np.array_equal(m.random_configuration(rng=1), m.random_configuration(rng=2))


def test_within_limits() -> None:
    m = models.get("zxx_arm")  # t3 in [0, pi]
    assert m.within_limits([0.0, 0.0, 0.0])
    assert not m.within_limits([0.0, 0.0, -0.01])
    assert m.within_limits([0.0, 0.0, -0.01], tol=0.02)
    np.testing.assert_array_equal(m.within_limits([[0, 0, 1], [0, 0, 4]]), [True, False])


# --- names ---------------------------------------------------------------------------------------


def test_unknown_frame_lists_valid_frames() -> None:
    m = models.get("panda")
    with pytest.raises(UnknownNameError) as info:
        m.frame_index("hand")
    msg = str(info.value)
    assert msg.startswith("frame 'hand' not found")
    for f in m.frame_names:
        assert f in msg
    # It is a KeyError too, but prints without KeyError's quotes.
    assert isinstance(info.value, KeyError)
    assert not msg.startswith('"')


def test_unknown_joint_lists_joints_groups_and_presets() -> None:
    m = models.get("humanoid")
    with pytest.raises(UnknownNameError) as info:
        m.active_mask("shouldr_r")
    msg = str(info.value)
    assert "'shouldr_r'" in msg
    for j in ("shoulder_r_x", "elbow_r", "shoulder_r", "right_arm"):
        assert j in msg


def test_frame_index_default_is_first_end_effector() -> None:
    m = models.get("humanoid")
    assert m.frame_index() == m.frame_index("hand_r")
    assert m.node_names[m.frame_index("hand_r")] == "hand_r"


# --- chains and masks ----------------------------------------------------------------------------


def test_chain_panda() -> None:
    m = models.get("panda")
    assert m.chain() == m.joint_names
    assert m.chain("flange", "link3") == ("joint4", "joint5", "joint6", "joint7")
    assert m.chain("link3") == ("joint1", "joint2", "joint3")
    assert m.chain("link0") == ()


def test_chain_humanoid_ball_joints_base_first() -> None:
    m = models.get("humanoid")
    assert m.chain("hand_r") == (
        "spine_x", "spine_y", "spine_z", "chest_x", "chest_y", "chest_z",
        "clavicle_r_x", "clavicle_r_z", "shoulder_r_x", "shoulder_r_y", "shoulder_r_z",
        "elbow_r", "wrist_r_y", "wrist_r_x",
    )  # fmt: skip
    assert m.chain("hand_r", "upper_arm_r") == ("elbow_r", "wrist_r_y", "wrist_r_x")
    assert m.chain("foot_l", "pelvis") == (
        "hip_l_x",
        "hip_l_y",
        "hip_l_z",
        "knee_l",
        "ankle_l_y",
        "ankle_l_x",
    )


def test_chain_base_must_be_an_ancestor() -> None:
    m = models.get("humanoid")
    with pytest.raises(InvalidValueError, match="not an ancestor") as info:
        m.chain("hand_r", "hand_l")
    assert "pelvis" in str(info.value)  # lists the ancestors
    with pytest.raises(UnknownNameError):
        m.chain("hand_r", "nowhere")
    with pytest.raises(UnknownNameError):
        m.chain("nowhere")


def test_chain_with_mimic_joint_names_the_source() -> None:
    b = ModelBuilder("m", root="base")
    b.add_joint("a", "base", "l1", axis="z")
    b.add_joint("b", "l1", "l2", axis="z", mimic=("a", 1.0, 0.0))
    b.add_joint("c", "l2", "l3", axis="z")
    assert b.build().chain("l3") == ("a", "c")


def test_active_mask_by_joint_group_and_preset() -> None:
    m = models.get("humanoid")
    idx = {n: i for i, n in enumerate(m.joint_names)}
    mask = m.active_mask("elbow_r")
    assert mask.dtype == bool and mask.shape == (37,)
    np.testing.assert_array_equal(np.nonzero(mask)[0], [idx["elbow_r"]])
    # A group (ball joint) expands to its DoFs.
    shoulder = m.active_mask("shoulder_r")
    assert shoulder.sum() == 3
    assert {m.joint_names[i] for i in np.nonzero(shoulder)[0]} == {
        "shoulder_r_x",
        "shoulder_r_y",
        "shoulder_r_z",
    }
    # A preset expands to its groups.
    arm = m.active_mask("right_arm")
    assert {m.joint_names[i] for i in np.nonzero(arm)[0]} == {
        "shoulder_r_x", "shoulder_r_y", "shoulder_r_z", "elbow_r", "wrist_r_y", "wrist_r_x",
    }  # fmt: skip
    assert m.active_mask("above_hips").sum() == 9 + 2 * (2 + 3 + 1 + 2)
    assert m.active_mask("legs").sum() == 12
    # Several names at once; duplicates counted once.
    assert m.active_mask(["elbow_r", "elbow_l", "elbow_r"]).sum() == 2
    assert m.active_mask(None).all()
    assert m.active_mask([]).sum() == 0


def test_joint_indices_sorted_unique() -> None:
    m = models.get("humanoid")
    idx = m.joint_indices(["wrist_r", "shoulder_r", "shoulder_r_x"])
    assert list(idx) == sorted(set(idx))
    assert len(idx) == 5


def test_quadruped_presets() -> None:
    m = models.get("quadruped")
    assert set(m.presets) == {"FR_leg", "FL_leg", "RR_leg", "RL_leg"}
    np.testing.assert_array_equal(np.nonzero(m.active_mask("FL_leg"))[0], [3, 4, 5])


# --- immutability --------------------------------------------------------------------------------

ARRAY_FIELDS = (
    "parent", "origin", "axis", "joint_type", "q_index", "q_scale", "q_offset",
    "hidden", "limits", "continuous", "q_neutral",
)  # fmt: skip


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_model_arrays_are_read_only(name: str) -> None:
    m = models.get(name)
    for attr in ARRAY_FIELDS:
        a = getattr(m, attr)
        assert not a.flags.writeable, attr
        with pytest.raises(ValueError, match="read-only"):
            a.flat[0] = a.flat[0]
    from kinetree.kinematics import packed

    for a in packed(m):
        assert not a.flags.writeable


def test_model_attributes_cannot_be_reassigned() -> None:
    m = models.get("panda")
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.name = "other"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.limits = np.zeros((7, 2))  # type: ignore[misc]


def test_with_options_returns_a_new_model() -> None:
    m = models.get("panda")
    m2 = m.with_options(end_effectors=["link4", "flange"], limits=np.tile([-1.0, 1.0], (7, 1)))
    assert m2 is not m
    assert m2.end_effectors == ("link4", "flange")
    assert m.end_effectors == ("flange",)
    np.testing.assert_array_equal(m2.limits[:, 1], 1.0)
    assert m.limits[0, 1] == pytest.approx(2.8973)
    assert not m2.limits.flags.writeable
    np.testing.assert_array_equal(m2.fk(m.neutral(), "flange"), m.fk(m.neutral()))
    np.testing.assert_array_equal(m2.fk(m.neutral()), m.fk(m.neutral(), "link4"))


def test_with_options_limits_keep_neutral_within_limits() -> None:
    # Regression: the old neutral (joint 4 at -2.356) stayed outside the new limits.
    m = models.get("panda").with_options(limits=np.tile([-1.0, 1.0], (7, 1)))
    assert m.within_limits(m.neutral())
    np.testing.assert_allclose(m.neutral(), [0.0, -0.785, 0.0, -1.0, 0.0, 1.0, 0.785])


def test_with_options_validates() -> None:
    m = models.get("panda")
    with pytest.raises(UnknownNameError, match="frame 'hand'"):
        m.with_options(end_effectors=["hand"])
    with pytest.raises(UnknownNameError):
        m.with_options(presets={"arm": ["joint1", "joint9"]})
    with pytest.raises(ShapeError):
        m.with_options(q_neutral=np.zeros(6))
    with pytest.raises(InvalidValueError):
        m.with_options(limits=np.tile([1.0, -1.0], (7, 1)))
    with pytest.raises(InvalidValueError):
        m.with_options(q_neutral=[np.nan] * 7)


def test_repr_names_the_model() -> None:
    r = repr(models.get("panda"))
    assert "panda" in r and "dof=7" in r and "flange" in r


# --- building models in code ---------------------------------------------------------------------


def test_builder_defaults_end_effectors_to_leaves() -> None:
    b = ModelBuilder("y", root="base")
    b.add_joint("j1", "base", "a")
    b.add_joint("j2", "base", "b")
    b.add_joint("j3", "a", "c")
    m = b.build()
    assert set(m.end_effectors) == {"b", "c"}
    assert m.frame_names[0] == "base"


def test_builder_errors_are_kinetree_errors() -> None:
    b = ModelBuilder("bad", root="base")
    with pytest.raises(InvalidValueError, match="axis 'w'"):
        b.add_joint("j", "base", "l", axis="w")
    with pytest.raises(InvalidValueError, match="non-zero"):
        b.add_joint("j", "base", "l", axis=[0, 0, 0])
    with pytest.raises(InvalidValueError, match="lo <= hi"):
        b.add_joint("j", "base", "l", limits=(1.0, -1.0))
    with pytest.raises(kinetree.NotRigidError):
        b.add_joint("j", "base", "l", origin=np.diag([2.0, 1, 1, 1]))
    with pytest.raises(kinetree.UnsupportedError, match="'spherical'"):
        b.add_joint("j", "base", "l", type="spherical")
    with pytest.raises(InvalidValueError, match="at least one axis"):
        b.add_ball_joint("s", "base", "l", axes="")
    with pytest.raises(InvalidValueError, match="3 axes but 2 limit pairs"):
        b.add_ball_joint("s", "base", "l", axes="xyz", limits=[(0, 1), (0, 1)])


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (
            lambda b: b.add_joint("j", "base", "a").add_joint("j", "a", "b"),
            "duplicate joint names: j",
        ),
        (
            lambda b: b.add_joint("j1", "base", "a").add_joint("j2", "base", "a"),
            "'a' has two parent joints",
        ),
        (
            lambda b: b.add_joint("j1", "base", "a").add_joint("j2", "a", "base"),
            "root link 'base' a child",
        ),
        (lambda b: b.add_joint("j1", "ghost", "a"), "parent link 'ghost' does not exist"),
        (
            lambda b: (
                b.add_joint("j1", "base", "a").add_joint("j2", "c", "d").add_joint("j3", "d", "c")
            ),
            "not connected to the root",
        ),
        (lambda b: b.add_joint("j1", "base", "a", mimic=("nope", 1.0, 0.0)), "mimics 'nope'"),
        (
            lambda b: b.add_joint("j1", "base", "a").set_end_effectors("hand"),
            "frame 'hand' not found",
        ),
        (lambda b: b.add_joint("j1", "base", "a").set_neutral({"j9": 0.0}), "joint 'j9' not found"),
        (lambda b: b.add_joint("j1", "base", "a").add_preset("p", ["j9"]), "preset 'p'"),
    ],
)
def test_builder_structure_errors(build, match: str) -> None:
    b = ModelBuilder("bad", root="base")
    build(b)
    with pytest.raises(KinetreeError, match=match):
        b.build()


def test_builder_structure_error_types() -> None:
    b = ModelBuilder("bad", root="base")
    b.add_joint("j1", "base", "a").add_joint("j2", "a", "base")
    with pytest.raises(ModelStructureError):
        b.build()
    b = ModelBuilder("bad", root="base")
    b.add_joint("j1", "base", "a").set_end_effectors("hand")
    with pytest.raises(UnknownNameError):
        b.build()


def test_mimic_cycle_is_a_structure_error() -> None:
    b = ModelBuilder("loop", root="base")
    b.add_joint("a", "base", "l1", mimic=("b", 1.0, 0.0))
    b.add_joint("b", "l1", "l2", mimic=("a", 1.0, 0.0))
    with pytest.raises(ModelStructureError, match="mimics"):
        b.build()


def test_ball_joint_dof_names_and_group() -> None:
    b = ModelBuilder("ball", root="base")
    b.add_ball_joint("hip", "base", "thigh", "zxy", origin=translation([0, 0, 1]))
    b.add_ball_joint("knee", "thigh", "shin", [[1, 0, 0], [0, 1, 1]])
    m = b.build()
    assert m.joint_names == ("hip_z", "hip_x", "hip_y", "knee_0", "knee_1")
    assert m.joint_groups["hip"] == ("hip_z", "hip_x", "hip_y")
    assert m.frame_names == ("base", "thigh", "shin")
    assert m.active_mask("knee").sum() == 2


def test_nearly_aligned_axis_is_not_snapped() -> None:
    # Regression: any axis with |a_k| within 1e-12 of 1 was snapped to the exact unit
    # axis (off-axis parts up to ~1.4e-6 dropped), found on romeo.urdf.
    b = ModelBuilder("tilt", root="base")
    b.add_joint("j", "base", "l", axis=[0.0, -1.0, -4.37114e-08])  # romeo.urdf's axes
    b.add_frame("tip", "l", origin=translation([0.0, 0.0, 1.0]))
    m = b.build()
    a = np.array([0.0, -1.0, -4.37114e-08]) / np.linalg.norm([0.0, -1.0, -4.37114e-08])
    np.testing.assert_allclose(m.axis[1], a, rtol=0, atol=1e-15)
    # Rotating the tip (0, 0, 1) about that axis by pi/2 moves it by ~4e-8 in x
    # compared with the exact -y axis.
    from scipy.spatial.transform import Rotation

    want = Rotation.from_rotvec(a * PI / 2).apply([0.0, 0.0, 1.0])
    np.testing.assert_allclose(m.fk([PI / 2], "tip")[:3, 3], want, rtol=0, atol=1e-12)
    assert (
        kinetree.kinematics.packed(m)[1][1, 3] == 0
    )  # the general-axis kernel path, not the -y shortcut


def test_axis_aligned_to_round_off_is_snapped() -> None:
    b = ModelBuilder("aligned", root="base")
    b.add_joint("j", "base", "l", axis=[1e-14, -2.0, 0.0])
    m = b.build()
    np.testing.assert_array_equal(m.axis[1], [0.0, -1.0, 0.0])
    assert kinetree.kinematics.packed(m)[1][1, 3] == -2  # the -y shortcut in the kernels


# --- the public surface (issue 33: one attribute for the q/v maps) -------------------------------

#: Model's public methods and properties (its dataclass fields aside): 51 on the main branch
#: before the q/v maps went behind ``Model.qv``; a new one is added here on purpose.
MEMBERS = (
    "active_mask ancestors chain children com com_jacobian cone_angles difference distance dof "
    "fk fk_all floating_base frame_index frame_names group_nodes ik ik_all ik_many in_collision "
    "integrate jacobian joint_indices length_scale manipulability max_velocity moves n_nodes "
    "neutral normalize nq nv q_slice qv random_configuration sampling_bounds swing_twist_angles "
    "total_mass with_floating_base with_options within_limits"
).split()


def test_model_public_members_are_these() -> None:
    fields = {f.name for f in dataclasses.fields(kinetree.Model)}
    public = sorted(n for n in dir(kinetree.Model) if not n.startswith("_") and n not in fields)
    assert public == MEMBERS
    assert len(public) == 41
    # Every public name a user meets on the class (fields with defaults included).
    # 45 after the q/v maps moved, 46 with the closed chains' ``equalities`` field.
    assert len([n for n in dir(kinetree.Model) if not n.startswith("_")]) == 46 < 53


@pytest.mark.parametrize(
    "old",
    ["ball_nodes", "quaternion_mask", "v_q", "q_v", "v_index", "v_names", "dof_node", "dof_type"],
)
def test_the_moved_maps_warn_and_give_the_new_ones(old: str) -> None:
    m = kinetree.load("humanoid").with_floating_base()
    with pytest.warns(DeprecationWarning, match=rf"Model\.{old} moved to kinetree\.Model\.qv"):
        got = getattr(m, old)
    new = getattr(m.qv, old)
    assert got is new


def test_the_moved_functions_warn_and_answer_as_before() -> None:
    m = kinetree.load("humanoid").with_floating_base()
    with pytest.warns(DeprecationWarning, match="v_of_coordinates"):
        got = m.v_indices("root_joint")
    np.testing.assert_array_equal(got, np.arange(6))
    with pytest.warns(DeprecationWarning, match="qv.v_of_coordinates"):
        np.testing.assert_array_equal(m.v_of_coordinates([3]), [3, 4, 5])
    with pytest.raises(AttributeError, match="no_such_member"):
        m.no_such_member  # noqa: B018


def test_qv_maps_agree_with_integrate() -> None:
    """The maps, checked against the manifold step they serve: a unit motion along a
    plain DoF moves exactly the coordinate ``v_q`` names; along a quaternion's DoF, the
    four coordinates ``quaternion_mask`` marks."""
    m = kinetree.load("humanoid").with_floating_base()
    q = m.random_configuration(rng=0)
    assert len(m.qv.v_names) == m.nv and len(m.qv.q_v) == m.nq
    for v in range(m.nv):
        step = np.zeros(m.nv)
        step[v] = 0.1
        moved = np.flatnonzero(np.abs(m.integrate(q, step) - q) > 1e-12)
        if m.qv.v_q[v] >= 0:
            assert moved.tolist() == [m.qv.v_q[v]]
            assert m.qv.q_v[m.qv.v_q[v]] == v
        else:
            assert set(moved) <= set(np.flatnonzero(m.qv.quaternion_mask))
            assert m.qv.dof_type[v] == kinetree.JointType.BALL
