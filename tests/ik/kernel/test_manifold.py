"""Joints whose configuration is a quaternion: ball (4 numbers, 3 DoF) and free (7, 6).

Oracles: transforms composed with numpy from the joint definitions (FK), central
finite differences on the manifold through ``Model.integrate`` (Jacobians), and FK at
the returned ``q`` (IK).
"""

from __future__ import annotations

import numpy as np
import pytest

import kinetree
from kinetree import Pose, Position
from kinetree.builder import ModelBuilder
from kinetree.ik.method_table import KERNEL_METHODS
from kinetree.model import JointType, Model
from kinetree.spatial import (
    quat_exp,
    quat_log,
    quat_mul,
    quaternion_to_matrix,
    rot_x,
    rot_z,
    translation,
)


def body() -> Model:
    """A small whole body: a free torso, ball shoulders and hips (two with cone limits),
    hinge elbows and knees, ball wrists and ankles; hands and feet as frames."""
    b = ModelBuilder("body", root="world")
    b.add_joint("root", "world", "torso", type="free", origin=translation([0.0, 0.0, 1.0]))
    for side, s in (("r", -1.0), ("l", 1.0)):
        b.add_joint(f"shoulder_{side}", "torso", f"upper_{side}", type="ball",
                    origin=translation([0.0, 0.2 * s, 0.4]) @ rot_x(0.1 * s))  # fmt: skip
        b.add_joint(f"elbow_{side}", f"upper_{side}", f"fore_{side}", axis="-y",
                    origin=translation([0, 0, -0.3]), limits=(0.0, 2.5))  # fmt: skip
        b.add_joint(f"wrist_{side}", f"fore_{side}", f"palm_{side}", type="ball",
                    origin=translation([0, 0, -0.25]), limits=(0.0, 1.2))  # fmt: skip
        b.add_frame(f"hand_{side}", f"palm_{side}", translation([0, 0, -0.08]))
        b.add_joint(f"hip_{side}", "torso", f"thigh_{side}", type="ball",
                    origin=translation([0.0, 0.1 * s, -0.1]), limits=(0.0, 1.8))  # fmt: skip
        b.add_joint(f"knee_{side}", f"thigh_{side}", f"shin_{side}", axis="y",
                    origin=translation([0, 0, -0.42]), limits=(0.0, 2.4))  # fmt: skip
        b.add_joint(f"ankle_{side}", f"shin_{side}", f"sole_{side}", type="ball",
                    origin=translation([0, 0, -0.42]), limits=(0.0, 0.8))  # fmt: skip
        b.add_frame(f"foot_{side}", f"sole_{side}", translation([0.05, 0, -0.06]))
    b.set_end_effectors("hand_r", "hand_l", "foot_r", "foot_l")
    return b.build()


@pytest.fixture(scope="module")
def model() -> Model:
    return body()


def test_sizes_names_and_slices(model: Model) -> None:
    assert model.nq == 7 + 2 * (4 + 1 + 4 + 4 + 1 + 4)
    assert model.nv == 6 + 2 * (3 + 1 + 3 + 3 + 1 + 3) == model.dof
    assert model.joint_names[:7] == (
        "root_x", "root_y", "root_z", "root_qw", "root_qx", "root_qy", "root_qz"
    )  # fmt: skip
    assert model.q_slice("root") == slice(0, 7)
    assert model.q_slice("shoulder_r") == slice(7, 11)
    assert model.qv.v_names[:7] == ("root_x", "root_y", "root_z", "root_wx", "root_wy",
                                 "root_wz", "shoulder_r_wx")  # fmt: skip
    q = model.neutral()
    np.testing.assert_array_equal(q[3:7], [1, 0, 0, 0])
    assert model.joint_type[model.frame_index("upper_r")] == JointType.BALL
    assert model.ball_limits == {"wrist_r": 1.2, "hip_r": 1.8, "ankle_r": 0.8,
                                 "wrist_l": 1.2, "hip_l": 1.8, "ankle_l": 0.8}  # fmt: skip
    assert "dof=34" in repr(model) and "nq=43" in repr(model)


def _oracle_hand(model: Model, q: np.ndarray) -> np.ndarray:
    """World pose of hand_r composed by hand from the definitions in :func:`body`."""

    def rot(quat: np.ndarray) -> np.ndarray:
        T = np.eye(4)
        T[:3, :3] = quaternion_to_matrix(quat)
        return T

    def hinge(axis: np.ndarray, angle: float) -> np.ndarray:
        T = np.eye(4)
        T[:3, :3] = kinetree.spatial.axis_angle_to_matrix(axis * angle)
        return T

    sl = {n: model.q_slice(n) for n in ("root", "shoulder_r", "elbow_r", "wrist_r")}
    root = translation([0.0, 0.0, 1.0]) @ translation(q[sl["root"]][:3]) @ rot(q[sl["root"]][3:])
    sh = translation([0.0, -0.2, 0.4]) @ rot_x(-0.1) @ rot(q[sl["shoulder_r"]])
    el = translation([0, 0, -0.3]) @ hinge(np.array([0, -1.0, 0]), q[sl["elbow_r"]][0])
    wr = translation([0, 0, -0.25]) @ rot(q[sl["wrist_r"]])
    return root @ sh @ el @ wr @ translation([0, 0, -0.08])


def test_fk_matches_composed_transforms(model: Model) -> None:
    rng = np.random.default_rng(0)
    Q = model.random_configuration(300, rng)
    Q[:, 0:3] = rng.uniform(-3, 3, (300, 3))
    # Quaternions need not be unit: FK normalises them (as MuJoCo).
    Q[:, 3:7] *= rng.uniform(0.2, 5.0, (300, 1))
    want = np.stack([_oracle_hand(model, model.normalize(q)) for q in Q])
    np.testing.assert_allclose(model.fk(Q, "hand_r"), want, atol=1e-12)  # blocked kernel
    for q, w in zip(Q[:20], want[:20]):
        np.testing.assert_allclose(model.fk(q, "hand_r"), w, atol=1e-12)  # row kernel


def test_zero_quaternion_is_identity_and_nan_propagates(model: Model) -> None:
    q = model.neutral()
    q[model.q_slice("shoulder_r")] = 0.0
    np.testing.assert_allclose(model.fk(q, "hand_r"), model.fk(model.neutral(), "hand_r"))
    q[model.q_slice("shoulder_r")] = np.nan
    with pytest.raises(kinetree.KinetreeError):
        model.fk(q, "hand_r")


def _fd_jacobian(model: Model, q: np.ndarray, frame: str, eps: float = 1e-6) -> np.ndarray:
    """Central differences on the manifold: columns from ``integrate(q, +-eps e_k)``."""
    T0 = model.fk(q, frame)
    J = np.zeros((6, model.nv))
    for k in range(model.nv):
        dv = np.zeros(model.nv)
        dv[k] = eps
        Tp, Tm = model.fk(model.integrate(q, dv), frame), model.fk(model.integrate(q, -dv), frame)
        J[:3, k] = (Tp[:3, 3] - Tm[:3, 3]) / (2 * eps)
        dR = (Tp[:3, :3] - Tm[:3, :3]) / (2 * eps) @ T0[:3, :3].T
        J[3:, k] = (dR[2, 1], dR[0, 2], dR[1, 0])
    return J


@pytest.mark.parametrize("frame", ["hand_r", "foot_l", "torso", "upper_l"])
def test_jacobian_equals_finite_differences_on_the_manifold(model: Model, frame: str) -> None:
    rng = np.random.default_rng(1)
    for q in model.random_configuration(5, rng):
        q[:3] = rng.uniform(-1, 1, 3)
        np.testing.assert_allclose(model.jacobian(q, frame), _fd_jacobian(model, q, frame),
                                   atol=1e-7)  # fmt: skip


def test_jacobian_of_a_point_and_batches(model: Model) -> None:
    rng = np.random.default_rng(2)
    Q = model.random_configuration(4, rng)
    J = model.jacobian(Q, "hand_l", point=[0.1, 0.0, -0.05])
    assert J.shape == (4, 6, model.nv)
    np.testing.assert_allclose(J[2], model.jacobian(Q[2], "hand_l", point=[0.1, 0.0, -0.05]))


def test_integrate_and_difference_are_inverse(model: Model) -> None:
    rng = np.random.default_rng(3)
    q = model.random_configuration(rng=rng)
    v = rng.normal(0, 0.5, model.nv)
    q1 = model.integrate(q, v)
    np.testing.assert_allclose(np.linalg.norm(q1[3:7]), 1.0)
    np.testing.assert_allclose(model.difference(q, q1), v, atol=1e-12)
    np.testing.assert_allclose(model.difference(q, q), 0.0, atol=1e-15)
    # q and -q are one rotation: the difference is zero
    q2 = q.copy()
    q2[model.q_slice("hip_l")] *= -1.0
    np.testing.assert_allclose(model.difference(q, q2), 0.0, atol=1e-12)


def test_quaternion_helpers() -> None:
    rng = np.random.default_rng(4)
    w = rng.normal(0, 1, (50, 3))
    w /= np.maximum(1.0, np.linalg.norm(w, axis=-1, keepdims=True) / 3.0)  # angles < pi
    np.testing.assert_allclose(quat_log(quat_exp(w)), w, atol=1e-12)
    a, b = quat_exp(w[:25]), quat_exp(w[25:])
    Ra = kinetree.spatial.axis_angle_to_matrix(w[:25])
    Rb = kinetree.spatial.axis_angle_to_matrix(w[25:])
    np.testing.assert_allclose(quaternion_to_matrix(quat_mul(a, b)), Ra @ Rb, atol=1e-12)
    np.testing.assert_allclose(quat_exp(np.zeros(3)), [1, 0, 0, 0])
    np.testing.assert_allclose(quat_log(np.array([1.0, 0, 0, 0])), 0.0)


def test_random_configurations_are_unit_and_within_limits(model: Model) -> None:
    Q = model.random_configuration(2000, rng=5)
    for name in ("shoulder_r", "wrist_l", "root"):
        quat = Q[:, model.q_slice(name)][:, -4:]
        np.testing.assert_allclose(np.linalg.norm(quat, axis=-1), 1.0)
    assert np.all(model.within_limits(Q))
    ang = 2 * np.arccos(np.minimum(1.0, np.abs(Q[:, model.q_slice("wrist_l")][:, 0])))
    assert ang.max() <= 1.2 + 1e-12 and ang.max() > 1.0  # fills the cone
    # Unlimited ball joints cover the whole group: angles near pi occur.
    ang = 2 * np.arccos(np.minimum(1.0, np.abs(Q[:, model.q_slice("shoulder_r")][:, 0])))
    assert ang.max() > 2.8
    q = model.neutral()
    q[model.q_slice("wrist_l")] = quat_exp([0.0, 1.3, 0.0])
    assert not model.within_limits(q)


def test_whole_body_ik_with_a_free_base(model: Model) -> None:
    """Both hands and both feet as 6D targets, base free: the targets come from FK of
    random whole-body configurations (random base pose too)."""
    rng = np.random.default_rng(6)
    solved = 0
    for _ in range(20):
        qt = model.random_configuration(rng=rng)
        qt[:3] = rng.uniform(-0.5, 0.5, 3)
        qt[3:7] = quat_exp(rng.uniform(-0.6, 0.6, 3))
        targets = {f: model.fk(qt, f) for f in ("hand_r", "hand_l", "foot_r", "foot_l")}
        r = model.ik(targets, tol=(1e-6, 1e-6))
        if r.success:
            solved += 1
            for f, T in targets.items():
                Tq = model.fk(r.q, f)
                assert np.linalg.norm(Tq[:3, 3] - T[:3, 3]) <= 1e-6
                assert np.linalg.norm(quat_log(kinetree.spatial.matrix_to_quaternion(
                    Tq[:3, :3].T @ T[:3, :3]))) <= 1e-6  # fmt: skip
            assert model.within_limits(r.q, tol=1e-9)
            np.testing.assert_allclose(np.linalg.norm(r.q[3:7]), 1.0, atol=1e-12)
    assert solved >= 19


ARM = ("shoulder_r", "elbow_r", "wrist_r")


def arm_pose(model: Model, rng: np.random.Generator, joints: tuple[str, ...] = ARM) -> np.ndarray:
    """The neutral pose with ``joints`` drawn at random (what IK over them can reach)."""
    q = model.neutral()
    r = model.random_configuration(rng=rng)
    for j in joints:
        q[model.q_slice(j)] = r[model.q_slice(j)]
    return q


@pytest.mark.parametrize("method", [m for m in KERNEL_METHODS if m != "auto"])
def test_compiled_methods_move_ball_joints_within_their_cones(model: Model, method: str) -> None:
    rng = np.random.default_rng(7)
    solved = 0
    for _ in range(10):
        qt = arm_pose(model, rng)
        # Restarts: an elbow pinned at its stop is a local minimum for the Jacobian
        # methods; CCD converges linearly, so its stall detector would restart too early.
        extra = {"max_iter": 3000} if method == "ccd" else {"restarts": 10}
        r = model.ik(Position(model.fk(qt, "hand_r")[:3, 3]), "hand_r", method=method,
                     active=ARM, q0=model.neutral(), **extra)  # fmt: skip
        assert np.all(np.isfinite(r.q))
        assert model.within_limits(r.q, tol=1e-9)
        if r.success:
            assert np.linalg.norm(model.fk(r.q, "hand_r")[:3, 3] - qt_hand(model, qt)) <= 1e-6
            solved += 1
    assert solved >= 8


def qt_hand(model: Model, q: np.ndarray) -> np.ndarray:
    return model.fk(q, "hand_r")[:3, 3]


def test_a_cone_limit_holds_when_the_target_pulls_outside_it(model: Model) -> None:
    """A wrist target that needs 1.5 rad of wrist rotation, beyond its 1.2 rad cone."""
    q0 = model.neutral()
    q = q0.copy()
    q[model.q_slice("wrist_r")] = quat_exp([1.5, 0.0, 0.0])
    T = model.fk(q, "hand_r")
    r = model.ik(Pose(T), "hand_r", active="wrist_r", q0=q0)
    assert not r.success
    assert model.within_limits(r.q, tol=1e-9)
    r = model.ik(Pose(T), "hand_r", active="wrist_r", q0=q0, respect_limits=False)
    assert r.success


def test_batches_and_the_rest_pose_with_quaternions(model: Model) -> None:
    rng = np.random.default_rng(8)
    left = ("shoulder_l", "elbow_l", "wrist_l")
    Q = np.stack([arm_pose(model, rng, left) for _ in range(64)])
    T = model.fk(Q, "hand_l")
    r = model.ik(T, "hand_l", active=["shoulder_l", "elbow_l", "wrist_l"])
    assert r.success.mean() >= 0.95
    err = np.linalg.norm(model.fk(r.q, "hand_l")[..., :3, 3] - T[..., :3, 3], axis=-1)
    assert np.all(err[r.success] <= 1e-6)
    one = model.ik(T[5], "hand_l", active=["shoulder_l", "elbow_l", "wrist_l"])
    assert one.success
    np.testing.assert_allclose(model.fk(one.q, "hand_l"), T[5], atol=1e-6)
    # The null-space pull toward a rest pose also acts on quaternions.
    rest = model.neutral()
    rest[model.q_slice("shoulder_l")] = quat_exp([0.0, -0.5, 0.0])
    p = Position(model.fk(Q[0], "hand_l")[:3, 3])
    r2 = model.ik(p, "hand_l", active=["shoulder_l", "elbow_l", "wrist_l"], rest=rest)
    assert r2.success


@pytest.mark.parametrize("method", ["bfgs", "fabrik"])
def test_methods_without_quaternion_support_say_so(model: Model, method: str) -> None:
    with pytest.raises(kinetree.UnsupportedError, match="quaternion"):
        model.ik(Position([0.3, -0.2, 1.0]), "hand_r", method=method)
    # Leaving the quaternion joints out works.
    r = model.ik(Position(model.fk(model.neutral(), "hand_r")[:3, 3] + [0.0, 0.0, 0.05]),
                 "hand_r", method=method, active="elbow_r")  # fmt: skip
    assert np.all(np.isfinite(r.q))


def test_builder_rejects_bad_quaternion_joints() -> None:
    b = ModelBuilder("x")
    with pytest.raises(kinetree.InvalidValueError, match="max_angle"):
        b.add_joint("s", "base", "l", type="ball", limits=(-1.0, -0.5))
    with pytest.raises(kinetree.InvalidValueError, match="one-coordinate"):
        b.add_joint("s", "base", "l", type="ball", offset=0.3)
    with pytest.raises(kinetree.InvalidValueError, match="no limits"):
        b.add_joint("f", "base", "l", type="free", limits=(0, 1))
    b.add_joint("s", "base", "l", type="ball")
    b.set_neutral({"s_qw": 0.0, "s_qx": 0.0, "s_qy": 0.0, "s_qz": 0.0})
    with pytest.raises(kinetree.InvalidValueError, match="zero"):
        b.build()


def test_planar_joint_moves_in_its_plane() -> None:
    b = ModelBuilder("cart", root="floor")
    b.add_joint("base", "floor", "body", type="planar", axis=[0, 0, 1],
                origin=translation([0, 0, 0.1]))  # fmt: skip
    b.add_frame("nose", "body", translation([0.5, 0, 0]))
    m = b.build()
    assert m.joint_names == ("base_x", "base_y", "base_theta") and m.nv == 3
    T = m.fk([1.0, 2.0, np.pi / 2], "nose")
    np.testing.assert_allclose(T, translation([1.0, 2.0, 0.1]) @ rot_z(np.pi / 2)
                               @ translation([0.5, 0, 0]), atol=1e-15)  # fmt: skip
    r = m.ik(Position([-1.0, 0.5, 0.1]), "nose")
    assert r.success


def test_quaternions_and_bvh_euler_channels_round_trip() -> None:
    from kinetree.anim.rotations import euler_to_quat, quat_to_euler, sequence_matrix

    rng = np.random.default_rng(9)
    quat = quat_exp(rng.uniform(-1.5, 1.5, (200, 3)))
    for order in ("zxy", "xyz", "zyx"):
        ang = quat_to_euler(quat, order)
        axes = np.array([{"x": [1, 0, 0], "y": [0, 1, 0], "z": [0, 0, 1]}[c] for c in order])
        np.testing.assert_allclose(sequence_matrix(ang, axes), quaternion_to_matrix(quat),
                                   atol=1e-12)  # fmt: skip
        back = euler_to_quat(ang, order)
        np.testing.assert_allclose(np.abs(np.sum(back * quat, axis=-1)), 1.0, atol=1e-12)
    with pytest.raises(kinetree.InvalidValueError, match="three axis letters"):
        quat_to_euler(quat, "xy")


def test_keyframes_slerp_quaternion_joints(model: Model) -> None:
    from kinetree.anim import interpolate

    a, b = model.neutral(), model.neutral()
    b[model.q_slice("shoulder_r")] = quat_exp([0.0, 2.0, 0.0])
    b[model.q_slice("root")][:3] = [1.0, 0.0, 0.0]
    mo = interpolate(model, [a, b], n_frames=5)
    for q in mo.q:
        u = q[0]  # the root's x moves linearly from 0 to 1
        np.testing.assert_allclose(q[model.q_slice("shoulder_r")], quat_exp([0.0, 2.0 * u, 0.0]),
                                   atol=1e-12)  # fmt: skip
    np.testing.assert_allclose(np.linalg.norm(mo.q[:, 3:7], axis=-1), 1.0)


SPHERICAL_URDF = """<robot name="pybullet_style">
  <link name="chest"/><link name="neck"/><link name="upper"/><link name="fore"/>
  <joint name="neck" type="spherical">
    <parent link="chest"/><child link="neck"/>
    <limit effort="1000.0" lower="0.2" upper=".8" twist=".3"/>
    <origin rpy="0 0 0" xyz="0 0 0.6"/><axis xyz="0 0 1"/>
  </joint>
  <joint name="shoulder" type="spherical">
    <parent link="chest"/><child link="upper"/>
    <origin rpy="0.1 0 0" xyz="0 -0.2 0.4"/>
  </joint>
  <joint name="elbow" type="revolute">
    <parent link="upper"/><child link="fore"/><origin xyz="0 0 -0.3"/><axis xyz="0 1 0"/>
    <limit lower="0" upper="2.5" effort="1" velocity="1"/>
  </joint>
</robot>"""


def test_urdf_spherical_joints_load_as_ball_joints() -> None:
    """pybullet_data's ``spherical`` joint (humanoid.urdf, spherical_joint_limit.urdf): a
    quaternion ball joint as MJCF's, its <axis> and pybullet's <limit> ignored."""
    from kinetree.io import load_urdf

    m = load_urdf(SPHERICAL_URDF)
    assert (m.nq, m.nv) == (9, 7)
    assert m.joint_groups["shoulder"] == tuple(f"shoulder_{c}" for c in ("qw", "qx", "qy", "qz"))
    assert m.ball_limits == {}
    rng = np.random.default_rng(16)
    for q in m.random_configuration(20, rng):
        R_shoulder = quaternion_to_matrix(q[m.q_slice("shoulder")])
        T_shoulder = translation([0.0, -0.2, 0.4]) @ rot_x(0.1)
        T_shoulder[:3, :3] = T_shoulder[:3, :3] @ R_shoulder
        c, s = np.cos(q[-1]), np.sin(q[-1])
        R_elbow = np.array([[c, 0, s, 0], [0, 1, 0, 0], [-s, 0, c, 0], [0, 0, 0, 1.0]])
        want = T_shoulder @ translation([0.0, 0.0, -0.3]) @ R_elbow
        np.testing.assert_allclose(m.fk(q, "fore"), want, atol=1e-12)
    goal = m.fk(m.random_configuration(rng=rng), "fore")[:3, 3]
    r = m.ik(Position(goal), "fore")
    assert r.success and np.linalg.norm(m.fk(r.q, "fore")[:3, 3] - goal) <= 1e-5
    assert np.isclose(np.linalg.norm(r.q[m.q_slice("shoulder")]), 1.0)
