"""kinetree.spatial: homogeneous transforms, rotation conversions, SO(3)/SE(3) log/exp, pose error.

Oracles are hand-written matrices (seed 001 and 003 print them), scipy's Rotation,
and scipy.linalg.expm; never kinetree itself.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.linalg import expm
from scipy.spatial.transform import Rotation

from kinetree import InvalidValueError, KinetreeError, ShapeError, spatial

PI = np.pi

# --- strategies ----------------------------------------------------------------------------------

finite = st.floats(-10.0, 10.0, allow_nan=False, allow_infinity=False)
angles = st.floats(-2 * PI, 2 * PI, allow_nan=False, allow_infinity=False)


@st.composite
def unit_vectors(draw: st.DrawFn) -> np.ndarray:
    v = draw(arrays(np.float64, 3, elements=st.floats(-1.0, 1.0)))
    n = np.linalg.norm(v)
    if n < 1e-3:  # too short to give a well-defined direction: use a fixed one
        return np.array([0.0, 0.0, 1.0])
    return v / n


@st.composite
def rotvecs(draw: st.DrawFn, lo: float, hi: float, log_scale: bool = False) -> np.ndarray:
    """Axis-angle vectors with angle in [lo, hi] (log-uniform when ``log_scale``)."""
    axis = draw(unit_vectors())
    if log_scale:
        angle = float(np.exp(draw(st.floats(np.log(lo), np.log(hi)))))
    else:
        angle = draw(st.floats(lo, hi))
    return axis * angle


@st.composite
def near_identity_rotvecs(draw: st.DrawFn) -> np.ndarray:
    """As jaxlie samples: an ordinary rotation vector scaled by 1e-7."""
    v = draw(arrays(np.float64, 3, elements=st.floats(-PI, PI)))
    return v * 1e-7


@st.composite
def poses(draw: st.DrawFn) -> np.ndarray:
    w = draw(rotvecs(0.0, PI - 1e-3))
    p = draw(arrays(np.float64, 3, elements=finite))
    T = np.eye(4)
    T[:3, :3] = Rotation.from_rotvec(w).as_matrix()
    T[:3, 3] = p
    return T


def rx(t: float) -> np.ndarray:
    c, s = np.cos(t), np.sin(t)
    return np.array([[1, 0, 0, 0], [0, c, -s, 0], [0, s, c, 0], [0, 0, 0, 1.0]])


def ry(t: float) -> np.ndarray:
    c, s = np.cos(t), np.sin(t)
    return np.array([[c, 0, s, 0], [0, 1, 0, 0], [-s, 0, c, 0], [0, 0, 0, 1.0]])


def rz(t: float) -> np.ndarray:
    c, s = np.cos(t), np.sin(t)
    return np.array([[c, -s, 0, 0], [s, c, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]])


def hat(w: np.ndarray) -> np.ndarray:
    return np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0.0]])


# --- 2D ------------------------------------------------------------------------------------------


def test_translation_2d_matches_hand_written_matrix() -> None:
    want = np.array([[1, 0, 2.5], [0, 1, -1.0], [0, 0, 1]])
    np.testing.assert_array_equal(spatial.translation_2d([2.5, -1.0]), want)
    # Seed 003: T_M (P, 1) = (P + M, 1).
    P = np.array([0.3, 0.7, 1.0])
    np.testing.assert_allclose(spatial.translation_2d([2.5, -1.0]) @ P, [2.8, -0.3, 1.0])


def test_scaling_2d_matches_hand_written_matrix() -> None:
    want = np.array([[2.0, 0, 0], [0, -0.5, 0], [0, 0, 1]])
    np.testing.assert_array_equal(spatial.scaling_2d([2.0, -0.5]), want)


@pytest.mark.parametrize("theta", [0.0, 0.3, -1.2, PI / 2, PI, 4.0])
def test_rotation_2d_matches_hand_written_matrix(theta: float) -> None:
    c, s = np.cos(theta), np.sin(theta)
    want = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])
    np.testing.assert_allclose(spatial.rotation_2d(theta), want, atol=1e-15)


def test_rotation_2d_is_counter_clockwise() -> None:
    # x axis turned by +90 degrees becomes the y axis.
    np.testing.assert_allclose(spatial.rotation_2d(PI / 2) @ [1, 0, 1], [0, 1, 1], atol=1e-15)


def test_planar_2r_example_as_product_of_2d_transforms() -> None:
    # Seed 003: Rot(t1) Trans(L1) Rot(t2) (L2, 0, 1) = (L1 c1 + L2 c12, L1 s1 + L2 s12, 1).
    L1, L2, t1, t2 = 1.3, 0.7, 0.4, -1.1
    T = spatial.rotation_2d(t1) @ spatial.translation_2d([L1, 0]) @ spatial.rotation_2d(t2)
    want = [L1 * np.cos(t1) + L2 * np.cos(t1 + t2), L1 * np.sin(t1) + L2 * np.sin(t1 + t2), 1.0]
    np.testing.assert_allclose(T @ [L2, 0, 1], want, atol=1e-15)


def test_2d_constructors_batch() -> None:
    assert spatial.translation_2d(np.zeros((5, 2))).shape == (5, 3, 3)
    assert spatial.scaling_2d(np.ones((2, 3, 2))).shape == (2, 3, 3, 3)
    R = spatial.rotation_2d(np.linspace(0, 1, 6).reshape(2, 3))
    assert R.shape == (2, 3, 3, 3)
    np.testing.assert_allclose(R[1, 2], spatial.rotation_2d(1.0))


# --- 3D constructors -----------------------------------------------------------------------------


def test_translation_matches_hand_written_matrix() -> None:
    want = np.array([[1, 0, 0, 1.0], [0, 1, 0, -2.0], [0, 0, 1, 0.5], [0, 0, 0, 1]])
    np.testing.assert_array_equal(spatial.translation([1.0, -2.0, 0.5]), want)


def test_scaling_matches_hand_written_matrix() -> None:
    want = np.diag([2.0, 3.0, 0.5, 1.0])
    np.testing.assert_array_equal(spatial.scaling([2.0, 3.0, 0.5]), want)
    np.testing.assert_allclose(spatial.scaling([2.0, 3.0, 0.5]) @ [1, 1, 1, 1], [2, 3, 0.5, 1])


@pytest.mark.parametrize("theta", [0.0, 0.25, -0.9, PI / 2, PI, -3.0, 7.0])
def test_rot_xyz_match_seed_001_matrices(theta: float) -> None:
    np.testing.assert_allclose(spatial.rot_x(theta), rx(theta), atol=1e-15)
    np.testing.assert_allclose(spatial.rot_y(theta), ry(theta), atol=1e-15)
    np.testing.assert_allclose(spatial.rot_z(theta), rz(theta), atol=1e-15)


def test_rot_xyz_are_right_handed() -> None:
    # +90 degrees about z takes x to y; about x takes y to z; about y takes z to x.
    np.testing.assert_allclose(spatial.rot_z(PI / 2) @ [1, 0, 0, 1], [0, 1, 0, 1], atol=1e-15)
    np.testing.assert_allclose(spatial.rot_x(PI / 2) @ [0, 1, 0, 1], [0, 0, 1, 1], atol=1e-15)
    np.testing.assert_allclose(spatial.rot_y(PI / 2) @ [0, 0, 1, 1], [1, 0, 0, 1], atol=1e-15)


def test_3d_constructors_batch() -> None:
    th = np.linspace(-1, 1, 10).reshape(2, 5)
    for f, ref in ((spatial.rot_x, rx), (spatial.rot_y, ry), (spatial.rot_z, rz)):
        T = f(th)
        assert T.shape == (2, 5, 4, 4)
        np.testing.assert_allclose(T[1, 3], ref(th[1, 3]), atol=1e-15)
    assert spatial.translation(np.zeros((4, 3))).shape == (4, 4, 4)
    assert spatial.scaling(np.ones((2, 1, 3))).shape == (2, 1, 4, 4)


@given(axis=arrays(np.float64, 3, elements=st.floats(-2.0, 2.0)), angle=angles)
def test_rotation_about_any_axis_matches_scipy(axis: np.ndarray, angle: float) -> None:
    if np.linalg.norm(axis) < 1e-6:
        axis = np.array([0.3, -0.2, 0.9])
    T = spatial.rotation(axis, angle)
    want = Rotation.from_rotvec(axis / np.linalg.norm(axis) * angle).as_matrix()
    np.testing.assert_allclose(T[:3, :3], want, atol=1e-14)
    np.testing.assert_array_equal(T[3], [0, 0, 0, 1])
    np.testing.assert_array_equal(T[:3, 3], [0, 0, 0])


def test_rotation_about_unit_axes_equals_rot_xyz() -> None:
    for axis, ref in (([1, 0, 0], rx), ([0, 2, 0], ry), ([0, 0, 0.5], rz)):
        np.testing.assert_allclose(spatial.rotation(axis, 0.7), ref(0.7), atol=1e-15)
    # The axis' sign flips the rotation.
    np.testing.assert_allclose(spatial.rotation([0, 0, -1], 0.7), rz(-0.7), atol=1e-15)


def test_rotation_batches_axes_and_angles() -> None:
    axes = np.array([[1.0, 0, 0], [0, 1, 0], [0, 0, 1]])
    T = spatial.rotation(axes, np.array([0.1, 0.2, 0.3]))
    assert T.shape == (3, 4, 4)
    np.testing.assert_allclose(T[1], ry(0.2), atol=1e-15)
    np.testing.assert_allclose(T[2], rz(0.3), atol=1e-15)


def test_rotation_zero_axis_is_invalid() -> None:
    with pytest.raises(InvalidValueError, match="axis"):
        spatial.rotation([0, 0, 0], 1.0)


def test_from_rotation_translation() -> None:
    R = Rotation.from_rotvec([0.1, 0.2, 0.3]).as_matrix()
    T = spatial.from_rotation_translation(R, [1, 2, 3])
    np.testing.assert_array_equal(T[:3, :3], R)
    np.testing.assert_array_equal(T[:3, 3], [1, 2, 3])
    np.testing.assert_array_equal(T[3], [0, 0, 0, 1])
    # A single rotation broadcast against a batch of translations.
    assert spatial.from_rotation_translation(R, np.zeros((5, 3))).shape == (5, 4, 4)


# --- compose / inverse / transform_points --------------------------------------------------------


def test_compose_is_the_matrix_product() -> None:
    A, B, C = rx(0.3), spatial.translation([1, 2, 3]), rz(-0.4)
    np.testing.assert_allclose(spatial.compose(A, B, C), A @ B @ C, atol=1e-15)
    np.testing.assert_array_equal(spatial.compose(A), A)
    # Order matters: rotate-then-translate differs from translate-then-rotate.
    assert not np.allclose(spatial.compose(A, B), spatial.compose(B, A))


@given(T=poses())
def test_inverse_times_transform_is_identity(T: np.ndarray) -> None:
    Ti = spatial.inverse(T)
    np.testing.assert_allclose(Ti @ T, np.eye(4), atol=1e-12)
    np.testing.assert_allclose(T @ Ti, np.eye(4), atol=1e-12)
    np.testing.assert_allclose(Ti, np.linalg.inv(T), atol=1e-12)


def test_inverse_batched(rng: np.random.Generator) -> None:
    R = Rotation.random(6, random_state=rng).as_matrix().reshape(2, 3, 3, 3)
    T = spatial.from_rotation_translation(R, rng.normal(size=(2, 3, 3)))
    Ti = spatial.inverse(T)
    assert Ti.shape == (2, 3, 4, 4)
    np.testing.assert_allclose(Ti @ T, np.broadcast_to(np.eye(4), (2, 3, 4, 4)), atol=1e-14)


def test_inverse_2d() -> None:
    T = spatial.rotation_2d(0.8) @ spatial.translation_2d([1.0, -3.0])
    np.testing.assert_allclose(spatial.inverse(T) @ T, np.eye(3), atol=1e-14)
    Tb = spatial.rotation_2d(np.linspace(0, 3, 4)) @ spatial.translation_2d([1.0, 2.0])
    np.testing.assert_allclose(
        spatial.inverse(Tb) @ Tb, np.broadcast_to(np.eye(3), (4, 3, 3)), atol=1e-14
    )


def test_transform_points(rng: np.random.Generator) -> None:
    T = rz(0.5) @ spatial.translation([1.0, 0.0, 2.0])
    pts = rng.normal(size=(7, 3))
    homog = np.concatenate([pts, np.ones((7, 1))], axis=1) @ T.T
    np.testing.assert_allclose(spatial.transform_points(T, pts), homog[:, :3], atol=1e-14)
    # 2D points through a 3x3 transform.
    T2 = spatial.rotation_2d(PI / 2)
    np.testing.assert_allclose(spatial.transform_points(T2, [1.0, 0.0]), [0.0, 1.0], atol=1e-15)


# --- rotation conversions ------------------------------------------------------------------------


@given(rpy=arrays(np.float64, 3, elements=st.floats(-PI, PI)))
def test_rpy_to_matrix_is_rz_ry_rx(rpy: np.ndarray) -> None:
    roll, pitch, yaw = rpy
    want = (rz(yaw) @ ry(pitch) @ rx(roll))[:3, :3]
    np.testing.assert_allclose(spatial.rpy_to_matrix(rpy), want, atol=1e-14)


@given(
    roll=st.floats(-PI + 1e-6, PI - 1e-6),
    pitch=st.floats(-PI / 2 + 1e-3, PI / 2 - 1e-3),
    yaw=st.floats(-PI + 1e-6, PI - 1e-6),
)
def test_rpy_round_trip(roll: float, pitch: float, yaw: float) -> None:
    rpy = np.array([roll, pitch, yaw])
    np.testing.assert_allclose(spatial.matrix_to_rpy(spatial.rpy_to_matrix(rpy)), rpy, atol=1e-10)


def test_rpy_batched(rng: np.random.Generator) -> None:
    rpy = rng.uniform(-1, 1, size=(2, 4, 3))
    R = spatial.rpy_to_matrix(rpy)
    assert R.shape == (2, 4, 3, 3)
    np.testing.assert_allclose(spatial.matrix_to_rpy(R), rpy, atol=1e-12)


@given(q=arrays(np.float64, 4, elements=st.floats(-1.0, 1.0)))
def test_quaternion_round_trip(q: np.ndarray) -> None:
    if np.linalg.norm(q) < 1e-3:
        q = np.array([0.5, 0.5, -0.5, 0.5])
    R = spatial.quaternion_to_matrix(q)
    # (w, x, y, z): compare with scipy, which takes (x, y, z, w).
    want = Rotation.from_quat([q[1], q[2], q[3], q[0]]).as_matrix()
    np.testing.assert_allclose(R, want, atol=1e-14)
    back = spatial.matrix_to_quaternion(R)
    assert back[0] >= 0.0
    unit = q / np.linalg.norm(q)
    sign = 1.0 if unit[0] >= 0 else -1.0
    if abs(unit[0]) < 1e-9:  # w == 0: q and -q both canonical to round-off
        sign = np.sign(np.dot(back, unit)) or 1.0
    np.testing.assert_allclose(back, sign * unit, atol=1e-12)


def test_quaternion_known_values() -> None:
    # 90 degrees about z: q = (cos 45, 0, 0, sin 45).
    h = np.sqrt(0.5)
    np.testing.assert_allclose(
        spatial.quaternion_to_matrix([h, 0, 0, h]), rz(PI / 2)[:3, :3], atol=1e-15
    )
    np.testing.assert_allclose(spatial.matrix_to_quaternion(np.eye(3)), [1, 0, 0, 0], atol=1e-15)
    # Not normalised on input: normalised first.
    np.testing.assert_allclose(spatial.quaternion_to_matrix([2.0, 0, 0, 0]), np.eye(3), atol=1e-15)


@given(w=rotvecs(0.0, PI - 1e-6))
def test_axis_angle_round_trip(w: np.ndarray) -> None:
    R = spatial.axis_angle_to_matrix(w)
    np.testing.assert_allclose(R, Rotation.from_rotvec(w).as_matrix(), atol=1e-14)
    np.testing.assert_allclose(spatial.matrix_to_axis_angle(R), w, atol=1e-11)


def test_axis_angle_batched(rng: np.random.Generator) -> None:
    w = rng.uniform(-1.5, 1.5, size=(3, 2, 3))
    R = spatial.axis_angle_to_matrix(w)
    assert R.shape == (3, 2, 3, 3)
    np.testing.assert_allclose(spatial.matrix_to_axis_angle(R), w, atol=1e-13)


def test_matrix_to_axis_angle_angle_in_zero_pi() -> None:
    # A rotation by 3pi/2 about z is a rotation by pi/2 about -z.
    w = spatial.matrix_to_axis_angle(rz(1.5 * PI)[:3, :3])
    np.testing.assert_allclose(w, [0, 0, -PI / 2], atol=1e-14)


# --- SO(3) log/exp near 0 and near pi ------------------------------------------------------------


@given(w=st.one_of(rotvecs(1e-9, 1e-5, log_scale=True), near_identity_rotvecs()))
@example(w=np.zeros(3))
@example(w=np.array([1e-300, 0.0, 0.0]))
def test_so3_exp_log_near_identity(w: np.ndarray) -> None:
    R = spatial.so3_exp(w)
    np.testing.assert_allclose(R, Rotation.from_rotvec(w).as_matrix(), atol=4e-16, rtol=0)
    # Orthonormal to round-off.
    np.testing.assert_allclose(R.T @ R, np.eye(3), atol=1e-15)
    back = spatial.so3_log(R)
    assert np.all(np.isfinite(back))
    assert np.linalg.norm(back - w) <= 1e-10 * np.linalg.norm(w) + 1e-300


@given(w=rotvecs(PI - 1e-9, PI))
@example(w=np.array([PI, 0.0, 0.0]))
@example(w=np.array([0.0, 0.0, -PI]))
@example(w=np.array([0.0, PI - 1e-9, 0.0]))
@example(w=PI / np.sqrt(3) * np.ones(3))
def test_so3_exp_log_near_pi(w: np.ndarray) -> None:
    R = spatial.so3_exp(w)
    np.testing.assert_allclose(R, Rotation.from_rotvec(w).as_matrix(), atol=1e-14)
    back = spatial.so3_log(R)
    theta = np.linalg.norm(w)
    assert np.linalg.norm(back) == pytest.approx(theta, abs=1e-12)
    # The axis is unique up to sign only at exactly pi, where w and -w are the same rotation.
    err = np.linalg.norm(back - w)
    if theta > PI - 1e-12:
        err = min(err, np.linalg.norm(back + w))
    assert err < 1e-9
    np.testing.assert_allclose(spatial.so3_exp(back), R, atol=1e-14)


@given(axis=unit_vectors(), log_gap=st.floats(np.log(1e-9), np.log(1e-1)))
def test_so3_log_between_generic_and_near_pi(axis: np.ndarray, log_gap: float) -> None:
    # Angles pi - gap with gap log-uniform in [1e-9, 0.1]: both sides of the log's
    # switch to its near-pi formula. The generic theta / (2 sin theta) formula loses
    # about eps / gap there, which this tolerance would catch for gaps below ~1e-5.
    w = axis * (PI - float(np.exp(log_gap)))
    back = spatial.so3_log(Rotation.from_rotvec(w).as_matrix())
    np.testing.assert_allclose(back, w, rtol=0, atol=1e-12)


def test_so3_log_of_scipy_rotations_at_exactly_pi() -> None:
    for axis in np.eye(3):
        R = Rotation.from_rotvec(PI * axis).as_matrix()
        back = spatial.so3_log(R)
        assert np.linalg.norm(back) == pytest.approx(PI, abs=1e-15)
        np.testing.assert_allclose(np.abs(back), PI * axis, atol=1e-12)


# --- SE(3) ---------------------------------------------------------------------------------------


@given(
    v=arrays(np.float64, 3, elements=finite),
    w=st.one_of(rotvecs(0.0, PI - 1e-3), near_identity_rotvecs()),
)
def test_se3_exp_matches_matrix_exponential(v: np.ndarray, w: np.ndarray) -> None:
    xi = np.concatenate([v, w])
    twist = np.zeros((4, 4))
    twist[:3, :3] = hat(w)
    twist[:3, 3] = v
    np.testing.assert_allclose(spatial.se3_exp(xi), expm(twist), atol=1e-12)


@given(
    v=arrays(np.float64, 3, elements=finite),
    w=st.one_of(
        rotvecs(0.0, PI - 1e-3),
        rotvecs(1e-9, 1e-4, log_scale=True),
        near_identity_rotvecs(),
    ),
)
@example(v=np.array([1.0, 2.0, 3.0]), w=np.zeros(3))
def test_se3_log_of_exp_is_identity(v: np.ndarray, w: np.ndarray) -> None:
    xi = np.concatenate([v, w])
    back = spatial.se3_log(spatial.se3_exp(xi))
    np.testing.assert_allclose(back, xi, atol=1e-9)


def test_se3_pure_translation() -> None:
    xi = np.array([0.1, -0.2, 0.3, 0, 0, 0])
    np.testing.assert_allclose(spatial.se3_exp(xi), spatial.translation([0.1, -0.2, 0.3]), atol=0)
    np.testing.assert_allclose(
        spatial.se3_log(spatial.translation([0.1, -0.2, 0.3])), xi, atol=1e-15
    )


def test_se3_batched(rng: np.random.Generator) -> None:
    xi = rng.uniform(-1, 1, size=(4, 5, 6))
    T = spatial.se3_exp(xi)
    assert T.shape == (4, 5, 4, 4)
    np.testing.assert_allclose(spatial.se3_log(T), xi, atol=1e-12)


# --- pose error ----------------------------------------------------------------------------------


@given(T=poses())
def test_pose_error_zero_for_equal_poses(T: np.ndarray) -> None:
    np.testing.assert_allclose(spatial.pose_error(T, T), np.zeros(6), atol=1e-12)


def test_pose_error_sign_and_magnitude() -> None:
    Tc = spatial.translation([1.0, 2.0, 3.0]) @ rx(0.3)
    Tt = spatial.translation([1.5, 1.0, 3.0]) @ rz(0.2) @ rx(0.3)
    # The target's orientation is R_c rotated by +0.2 about the world z axis.
    Tt[:3, :3] = rz(0.2)[:3, :3] @ Tc[:3, :3]
    err = spatial.pose_error(Tt, Tc)
    np.testing.assert_allclose(err[:3], [0.5, -1.0, 0.0], atol=1e-15)  # target - current
    np.testing.assert_allclose(err[3:], [0.0, 0.0, 0.2], atol=1e-15)
    # Swapping target and current flips the sign.
    np.testing.assert_allclose(spatial.pose_error(Tc, Tt), -err, atol=1e-15)


@given(T=poses(), w=rotvecs(0.0, PI - 1e-6), dp=arrays(np.float64, 3, elements=finite))
def test_pose_error_is_world_frame_log(T: np.ndarray, w: np.ndarray, dp: np.ndarray) -> None:
    Tt = T.copy()
    Tt[:3, :3] = Rotation.from_rotvec(w).as_matrix() @ T[:3, :3]
    Tt[:3, 3] += dp
    err = spatial.pose_error(Tt, T)
    np.testing.assert_allclose(err[:3], dp, atol=1e-12)
    np.testing.assert_allclose(err[3:], w, atol=1e-9)


@pytest.mark.parametrize("gap", [0.0, 1e-12, 1e-9, 1e-7, 1e-5, 1e-3])
def test_pose_error_near_pi(gap: float) -> None:
    angle = PI - gap
    axis = np.array([2.0, -1.0, 0.5]) / np.linalg.norm([2.0, -1.0, 0.5])
    Tc = spatial.translation([0.1, 0.2, 0.3]) @ rx(0.7)
    Tt = Tc.copy()
    Tt[:3, :3] = spatial.rotation(axis, angle)[:3, :3] @ Tc[:3, :3]
    err = spatial.pose_error(Tt, Tc)
    assert np.linalg.norm(err[3:]) == pytest.approx(angle, abs=1e-12)
    # The error rotation takes current to target.
    R_err = spatial.so3_exp(err[3:])
    np.testing.assert_allclose(R_err @ Tc[:3, :3], Tt[:3, :3], atol=1e-12)
    if gap >= 1e-9:  # away from exactly pi the axis sign is determined
        np.testing.assert_allclose(err[3:], angle * axis, atol=1e-6 if gap < 1e-8 else 1e-9)


def test_pose_error_broadcasts() -> None:
    Tt = spatial.translation(np.arange(15.0).reshape(5, 3))
    err = spatial.pose_error(Tt, np.eye(4))
    assert err.shape == (5, 6)
    np.testing.assert_allclose(err[:, :3], np.arange(15.0).reshape(5, 3))


# --- bad input -----------------------------------------------------------------------------------

NAN3 = [0.0, np.nan, 1.0]


@pytest.mark.parametrize(
    "call",
    [
        lambda: spatial.translation(NAN3),
        lambda: spatial.translation_2d([np.nan, 0.0]),
        lambda: spatial.scaling([1.0, np.inf, 1.0]),
        lambda: spatial.scaling_2d([np.nan, 1.0]),
        lambda: spatial.rot_x(np.nan),
        lambda: spatial.rot_y([0.0, np.inf]),
        lambda: spatial.rot_z(np.nan),
        lambda: spatial.rotation_2d(np.nan),
        lambda: spatial.rotation(NAN3, 0.3),
        lambda: spatial.rotation([0, 0, 1], np.nan),
        lambda: spatial.axis_angle_to_matrix(NAN3),
        lambda: spatial.so3_log(np.full((3, 3), np.nan)),
        lambda: spatial.rpy_to_matrix(NAN3),
        lambda: spatial.matrix_to_rpy(np.full((3, 3), np.nan)),
        lambda: spatial.quaternion_to_matrix([1.0, np.nan, 0.0, 0.0]),
        lambda: spatial.matrix_to_quaternion(np.full((3, 3), np.nan)),
        lambda: spatial.se3_exp([0, 0, 0, np.nan, 0, 0]),
        lambda: spatial.se3_log(np.full((4, 4), np.nan)),
        lambda: spatial.pose_error(np.full((4, 4), np.nan), np.eye(4)),
        lambda: spatial.pose_error(np.eye(4), np.full((4, 4), np.inf)),
        lambda: spatial.from_rotation_translation(np.eye(3), NAN3),
    ],
)
def test_nan_or_inf_raises_invalid_value(call) -> None:
    with pytest.raises(InvalidValueError, match="NaN or inf"):
        call()


@pytest.mark.parametrize(
    "call",
    [
        lambda: spatial.translation([1.0, 2.0]),
        lambda: spatial.translation_2d([1.0, 2.0, 3.0]),
        lambda: spatial.scaling([1.0]),
        lambda: spatial.scaling_2d(np.ones((2, 3))),
        lambda: spatial.rotation([1.0, 0.0], 0.3),
        lambda: spatial.axis_angle_to_matrix([1.0, 2.0]),
        lambda: spatial.so3_log(np.eye(4)),
        lambda: spatial.rpy_to_matrix([0.1, 0.2]),
        lambda: spatial.matrix_to_rpy(np.eye(2)),
        lambda: spatial.quaternion_to_matrix([1.0, 0.0, 0.0]),
        lambda: spatial.matrix_to_quaternion(np.eye(4)),
        lambda: spatial.se3_exp(np.zeros(5)),
        lambda: spatial.se3_log(np.eye(3)),
        lambda: spatial.pose_error(np.eye(3), np.eye(4)),
        lambda: spatial.from_rotation_translation(np.eye(3), [1.0, 2.0]),
    ],
)
def test_wrong_shape_raises_shape_error(call) -> None:
    with pytest.raises(ShapeError, match="shape"):
        call()


def test_non_numeric_input_is_invalid_value() -> None:
    with pytest.raises(InvalidValueError, match="numeric"):
        spatial.translation(["a", "b", "c"])


def test_errors_are_kinetree_errors_and_value_errors() -> None:
    with pytest.raises(KinetreeError):
        spatial.translation([1.0])
    with pytest.raises(ValueError):  # the family also derives from ValueError
        spatial.translation([np.nan, 0.0, 0.0])


def test_zero_quaternion_is_invalid_value() -> None:
    # Regression: scipy's own ValueError used to escape.
    with pytest.raises(InvalidValueError, match="non-zero"):
        spatial.quaternion_to_matrix([0.0, 0.0, 0.0, 0.0])
    with pytest.raises(InvalidValueError):
        spatial.quaternion_to_matrix([[1.0, 0, 0, 0], [0.0, 0, 0, 0]])


def test_inverse_compose_transform_points_validate_input() -> None:
    # Regression: NaN passed through, a 3x4 matrix gave IndexError, compose() a bare ValueError.
    with pytest.raises(InvalidValueError, match="NaN"):
        spatial.inverse(np.full((4, 4), np.nan))
    with pytest.raises(ShapeError, match=r"\(\.\.\., 3, 3\) or \(\.\.\., 4, 4\)"):
        spatial.inverse(np.eye(4)[:3])
    with pytest.raises(ShapeError):
        spatial.inverse(np.eye(5))
    with pytest.raises(InvalidValueError, match="at least one"):
        spatial.compose()
    with pytest.raises(ShapeError, match="mix"):
        spatial.compose(np.eye(3), np.eye(4))
    with pytest.raises(InvalidValueError):
        spatial.compose(np.eye(4), np.full((4, 4), np.inf))
    with pytest.raises(ShapeError):
        spatial.transform_points(np.eye(4), [1.0, 2.0])
    with pytest.raises(InvalidValueError):
        spatial.transform_points(np.eye(4), [1.0, np.nan, 2.0])
