"""Forward kinematics and geometric Jacobians against closed forms, hand products and
central differences.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import kinetree
from kinetree import InvalidValueError, ModelBuilder, ShapeError, UnknownNameError, models
from kinetree.io import load_urdf
from kinetree.spatial import rotation, translation

PI = np.pi
MODEL_NAMES = models.available()


def Rx(t: float) -> np.ndarray:
    c, s = np.cos(t), np.sin(t)
    return np.array([[1, 0, 0, 0], [0, c, -s, 0], [0, s, c, 0], [0, 0, 0, 1.0]])


def Ry(t: float) -> np.ndarray:
    c, s = np.cos(t), np.sin(t)
    return np.array([[c, 0, s, 0], [0, 1, 0, 0], [-s, 0, c, 0], [0, 0, 0, 1.0]])


def Rz(t: float) -> np.ndarray:
    c, s = np.cos(t), np.sin(t)
    return np.array([[c, -s, 0, 0], [s, c, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]])


def L(x: float, y: float, z: float) -> np.ndarray:
    T = np.eye(4)
    T[:3, 3] = (x, y, z)
    return T


joint_angles = st.floats(-PI, PI, allow_nan=False)
lengths = st.floats(0.01, 2.0)


# --- FK against closed forms ---------------------------------------------------------------------


@given(
    t=arrays(np.float64, 3, elements=joint_angles),
    Ls=arrays(np.float64, 4, elements=lengths),
    base=arrays(np.float64, 3, elements=st.floats(-1.0, 1.0)),
)
def test_zxx_arm_matches_closed_form(t: np.ndarray, Ls: np.ndarray, base: np.ndarray) -> None:
    L1, L2, L3, L4 = Ls
    xr, yr, zr = base
    t1, t2, t3 = t
    m = models.zxx_arm(L1, L2, L3, L4, base=tuple(base))
    p = m.fk(t)[:3, 3]
    x_e = xr + L2 * np.cos(t1) - L3 * np.sin(t1) * np.cos(t2) - L4 * np.sin(t1) * np.cos(t2 + t3)
    y_e = yr + L2 * np.sin(t1) + L3 * np.cos(t1) * np.cos(t2) + L4 * np.cos(t1) * np.cos(t2 + t3)
    z_e = zr + L1 + L3 * np.sin(t2) + L4 * np.sin(t2 + t3)
    np.testing.assert_allclose(p, [x_e, y_e, z_e], rtol=0, atol=1e-12)


def test_zxx_arm_default_lengths(rng: np.random.Generator) -> None:
    m = models.get("zxx_arm")
    L1, L2, L3, L4 = 0.10, 0.05, 0.20, 0.15
    for t1, t2, t3 in rng.uniform(-PI, PI, size=(50, 3)):
        p = m.fk([t1, t2, t3])[:3, 3]
        want = [
            L2 * np.cos(t1) - L3 * np.sin(t1) * np.cos(t2) - L4 * np.sin(t1) * np.cos(t2 + t3),
            L2 * np.sin(t1) + L3 * np.cos(t1) * np.cos(t2) + L4 * np.cos(t1) * np.cos(t2 + t3),
            L1 + L3 * np.sin(t2) + L4 * np.sin(t2 + t3),
        ]
        np.testing.assert_allclose(p, want, atol=1e-12)


@given(t=arrays(np.float64, 2, elements=joint_angles), Ls=arrays(np.float64, 2, elements=lengths))
def test_planar_2r_matches_closed_form(t: np.ndarray, Ls: np.ndarray) -> None:
    (t1, t2), (L1, L2) = t, Ls
    T = models.planar_2r(L1, L2).fk(t)
    want = [L1 * np.cos(t1) + L2 * np.cos(t1 + t2), L1 * np.sin(t1) + L2 * np.sin(t1 + t2), 0.0]
    np.testing.assert_allclose(T[:3, 3], want, atol=1e-12)
    # The tip frame is rotated by t1 + t2 about z.
    np.testing.assert_allclose(T[:3, :3], Rz(t1 + t2)[:3, :3], atol=1e-14)


def test_planar_3r_matches_closed_form(rng: np.random.Generator) -> None:
    m = models.planar_3r(1.0, 0.8, 0.5)
    for t in rng.uniform(-PI, PI, size=(20, 3)):
        c = np.cumsum(t)
        want = [np.dot([1.0, 0.8, 0.5], np.cos(c)), np.dot([1.0, 0.8, 0.5], np.sin(c)), 0.0]
        np.testing.assert_allclose(m.fk(t)[:3, 3], want, atol=1e-12)


@given(t=arrays(np.float64, 3, elements=joint_angles), Ls=arrays(np.float64, 3, elements=lengths))
def test_three_axis_arm_is_product_of_rotations_and_links(t: np.ndarray, Ls: np.ndarray) -> None:
    l1, l2, l3 = Ls
    t1, t2, t3 = t
    # Seed 001: p4 = Rx(t1) L(l1) Ry(t2) L(l2) Rx(t3) L(l3) (0, 0, 0, 1).
    T = Rx(t1) @ L(0, 0, l1) @ Ry(t2) @ L(0, 0, l2) @ Rx(t3) @ L(0, 0, l3)
    got = models.three_axis(l1, l2, l3).fk(t)
    np.testing.assert_allclose(got[:3, 3], (T @ [0, 0, 0, 1])[:3], atol=1e-12)
    np.testing.assert_allclose(got, T, atol=1e-12)


def test_six_axis_arm_is_product_of_rotations_and_links(rng: np.random.Generator) -> None:
    lengths_ = (0.3, 0.3, 0.25, 0.1, 0.1, 0.08)
    rot = {"z": Rz, "y": Ry}
    m = models.get("six_axis")
    for q in rng.uniform(-PI, PI, size=(20, 6)):
        T = np.eye(4)
        for ax, th, ln in zip("zyyzyz", q, lengths_):
            T = T @ rot[ax](th) @ L(0, 0, ln)
        np.testing.assert_allclose(m.fk(q), T, atol=1e-12)


# --- published reference configurations ----------------------------------------------------------


def test_panda_urdf_equals_panda_dh(rng: np.random.Generator) -> None:
    dh, urdf = models.get("panda"), models.get("panda_urdf")
    Q = urdf.random_configuration(1000, rng)
    np.testing.assert_allclose(urdf.fk(Q, "panda_link8"), dh.fk(Q, "flange"), rtol=0, atol=1e-12)
    # Every intermediate link frame agrees with its DH counterpart in position.
    for k in range(8):
        np.testing.assert_allclose(
            urdf.fk(Q[:50], f"panda_link{k}")[:, :3, 3],
            dh.fk(Q[:50], f"link{k}")[:, :3, 3],
            atol=1e-12,
        )


def test_panda_published_ready_pose() -> None:
    q = [0.0, -PI / 4, 0.0, -3 * PI / 4, 0.0, PI / 2, PI / 4]
    for name, frame in (("panda", "flange"), ("panda_urdf", "panda_link8")):
        T = models.get(name).fk(q, frame)
        np.testing.assert_allclose(T[:3, 3], [0.307, 0.0, 0.590], atol=1e-3)
        # Flange z axis points straight down in the ready pose.
        np.testing.assert_allclose(T[:3, 2], [0.0, 0.0, -1.0], atol=1e-12)


def test_panda_zero_pose_by_hand() -> None:
    # q = 0: up 0.333 + 0.316, out by 0.0825 - 0.0825 + 0.088 in x, up 0.384, down 0.107.
    T = models.get("panda").fk(np.zeros(7))
    np.testing.assert_allclose(T[:3, 3], [0.088, 0.0, 0.333 + 0.316 + 0.384 - 0.107], atol=1e-12)
    np.testing.assert_allclose(T[:3, :3], np.diag([1.0, -1.0, -1.0]), atol=1e-12)


@pytest.mark.parametrize(
    ("name", "d1", "a2", "a3", "d4", "d5", "d6"),
    [
        ("ur5", 0.089159, -0.425, -0.39225, 0.10915, 0.09465, 0.0823),
        ("ur3", 0.1519, -0.24365, -0.21325, 0.11235, 0.08535, 0.0819),
        ("ur10", 0.1273, -0.612, -0.5723, 0.163941, 0.1157, 0.0922),
    ],
)
def test_ur_zero_pose_by_hand(
    name: str, d1: float, a2: float, a3: float, d4: float, d5: float, d6: float
) -> None:
    # Standard DH at q = 0, frame by frame:
    #   row 1: up d1, then Rx(+90): x = (1,0,0), y = (0,0,1), z = (0,-1,0)
    #   rows 2, 3: along x by a2, a3 -> (a2 + a3, 0, d1)
    #   row 4: along z = (0,-1,0) by d4, then Rx(+90): z becomes (0,0,-1)
    #   row 5: along (0,0,-1) by d5, then Rx(-90): z becomes (0,-1,0), y = (0,0,1)
    #   row 6: along (0,-1,0) by d6.
    T = models.get(name).fk(np.zeros(6))
    np.testing.assert_allclose(T[:3, 3], [a2 + a3, -(d4 + d6), d1 - d5], atol=1e-12)
    np.testing.assert_allclose(T[:3, :3], [[1, 0, 0], [0, 0, -1], [0, 1, 0]], atol=1e-12)


def test_ur5_shoulder_turn_by_hand() -> None:
    # Turning the base joint by 90 degrees turns the whole zero pose about z.
    T0 = models.get("ur5").fk(np.zeros(6))
    T1 = models.get("ur5").fk([PI / 2, 0, 0, 0, 0, 0])
    np.testing.assert_allclose(T1, Rz(PI / 2) @ T0, atol=1e-12)


def test_iiwa14_zero_pose_is_straight_up() -> None:
    T = models.get("iiwa14").fk(np.zeros(7))
    np.testing.assert_allclose(T[:3, 3], [0.0, 0.0, 0.36 + 0.42 + 0.40 + 0.126], atol=1e-12)
    np.testing.assert_allclose(T[:3, :3], np.eye(3), atol=1e-12)


def test_quadruped_zero_pose_feet_by_hand() -> None:
    m = models.get("quadruped")
    T = m.fk_all(np.zeros(12))
    names = m.frame_names
    for leg, sx, sy in (("FR", 1, -1), ("FL", 1, 1), ("RR", -1, -1), ("RL", -1, 1)):
        p = T[names.index(f"{leg}_foot"), :3, 3]
        np.testing.assert_allclose(
            p, [0.1881 * sx, (0.04675 + 0.08) * sy, 0.30 - 0.426], atol=1e-12
        )


# --- batching and fk_all -------------------------------------------------------------------------


@pytest.mark.parametrize("batch", [(), (5,), (2, 3), (1, 1, 4)])
def test_fk_batch_shapes_and_values(batch: tuple[int, ...], rng: np.random.Generator) -> None:
    m = models.get("panda")
    Q = m.random_configuration(int(np.prod(batch, dtype=int)), rng).reshape(*batch, m.dof)
    T = m.fk(Q)
    assert T.shape == (*batch, 4, 4)
    flat_T, flat_Q = T.reshape(-1, 4, 4), Q.reshape(-1, m.dof)
    for i in range(flat_Q.shape[0]):
        np.testing.assert_array_equal(flat_T[i], m.fk(flat_Q[i]))
    J = m.jacobian(Q)
    assert J.shape == (*batch, 6, m.dof)
    A = m.fk_all(Q)
    assert A.shape == (*batch, len(m.frame_names), 4, 4)


def test_fk_last_row_is_homogeneous(rng: np.random.Generator) -> None:
    m = models.get("humanoid")
    A = m.fk_all(m.random_configuration(10, rng))
    np.testing.assert_array_equal(A[..., 3, :], np.broadcast_to([0, 0, 0, 1.0], (*A.shape[:-2], 4)))
    R = A[..., :3, :3]
    np.testing.assert_allclose(
        np.swapaxes(R, -1, -2) @ R, np.broadcast_to(np.eye(3), R.shape), atol=1e-12
    )


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_fk_all_order_and_entries(name: str, rng: np.random.Generator) -> None:
    m = models.get(name)
    Q = m.random_configuration(3, rng)
    A = m.fk_all(Q)
    assert A.shape == (3, len(m.frame_names), 4, 4)
    for k, frame in enumerate(m.frame_names):
        np.testing.assert_array_equal(A[:, k], m.fk(Q, frame))


def test_fk_default_frame_is_first_end_effector(rng: np.random.Generator) -> None:
    m = models.get("humanoid")
    q = m.random_configuration(rng=rng)
    np.testing.assert_array_equal(m.fk(q), m.fk(q, m.end_effectors[0]))
    np.testing.assert_array_equal(kinetree.kinematics.fk(m, q, "hand_l"), m.fk(q, "hand_l"))


def test_fk_root_frame_is_root_origin() -> None:
    m = models.get("quadruped")
    np.testing.assert_array_equal(m.fk(m.neutral(), "trunk"), translation([0, 0, 0.30]))


def test_fk_ignores_limits() -> None:
    # FK is geometry only: a configuration outside the limits still has a pose.
    m = models.get("zxx_arm")
    assert not m.within_limits([0, 0, -1.0])
    np.testing.assert_allclose(
        m.fk([0, 0, -1.0])[:3, 3], [0.05, 0.20 + 0.15 * np.cos(-1.0), 0.10 + 0.15 * np.sin(-1.0)]
    )


# --- bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "q",
    [
        [0.0, np.nan, 0.0],
        [0.0, 0.0, np.inf],
        np.full((4, 3), np.nan),
    ],
)
def test_fk_nan_raises_invalid_value(q) -> None:
    m = models.get("zxx_arm")
    for f in (m.fk, m.fk_all, m.jacobian):
        with pytest.raises(InvalidValueError, match="NaN"):
            f(q)


@pytest.mark.parametrize("q", [[0.0, 0.0], [0.0] * 4, np.zeros((5, 2)), 0.0, np.zeros((3, 0))])
def test_fk_wrong_length_raises_shape_error(q) -> None:
    m = models.get("zxx_arm")
    for f in (m.fk, m.fk_all, m.jacobian):
        with pytest.raises(ShapeError, match=r"\(\.\.\., 3\)"):
            f(q)


def test_fk_unknown_frame_lists_frames() -> None:
    m = models.get("planar2r")
    with pytest.raises(UnknownNameError) as info:
        m.fk([0, 0], "hand")
    msg = str(info.value)
    assert "'hand'" in msg
    for frame in m.frame_names:
        assert frame in msg
    with pytest.raises(UnknownNameError, match="tip"):
        m.jacobian([0, 0], "hand")


def test_jacobian_point_must_be_a_3_vector() -> None:
    m = models.get("planar2r")
    with pytest.raises(ShapeError):
        m.jacobian([0, 0], point=[1.0, 2.0])
    with pytest.raises(InvalidValueError):
        m.jacobian([0, 0], point=[1.0, np.nan, 0.0])


def test_jacobian_batched_point_is_shape_error() -> None:
    # Regression: a (2, 3) point used to reach numpy's reshape and raise a bare ValueError.
    with pytest.raises(ShapeError, match="point"):
        models.get("planar2r").jacobian([0, 0], point=np.zeros((2, 3)))


def test_zero_dof_model_fk() -> None:
    b = ModelBuilder("rigid", root="base")
    b.add_frame("tool", "base", origin=translation([0.0, 0.0, 0.5]))
    m = b.build()
    assert m.dof == 0
    np.testing.assert_array_equal(m.fk([]), translation([0.0, 0.0, 0.5]))
    assert m.fk(np.zeros((4, 0))).shape == (4, 4, 4)
    assert m.jacobian([]).shape == (6, 0)


# --- Jacobian against central differences --------------------------------------------------------

H = 1e-6
TOL = 1e-7


def _check_jacobian(model: kinetree.Model, q: np.ndarray, fd: Callable[..., np.ndarray]) -> None:
    for frame in model.end_effectors:
        J = model.jacobian(q, frame)
        np.testing.assert_allclose(J, fd(model, q, frame, h=H), rtol=0, atol=TOL, err_msg=frame)


def _singular_configurations(model: kinetree.Model) -> list[np.ndarray]:
    """q = 0, neutral, both limit corners, and half the joints zeroed (aligned wrists/elbows)."""
    lo, hi = model.sampling_bounds()
    qs = [np.zeros(model.dof), model.neutral(), lo, hi]
    mid = 0.5 * (lo + hi)
    alternate = mid.copy()
    alternate[::2] = 0.0
    qs.append(alternate)
    alternate = mid.copy()
    alternate[1::2] = 0.0
    qs.append(alternate)
    return qs


SINGULAR_EXTRA = {
    # Stretched / folded elbows and aligned wrists of the industrial arms.
    "panda": [[0, 0, 0, 0, 0, 0, 0], [0, 0.3, 0, -0.07, 0, 0, 0], [0.5, 0, 0.5, -1.0, 0.3, 0, 0]],
    "ur5": [[0, -PI / 2, 0, -PI / 2, 0, 0], [0.3, -1.0, 0, 0.2, 0, 0.4], [0, 0, PI, 0, 0, 0]],
    "iiwa14": [[0, 0, 0, 0, 0, 0, 0], [0.4, 0.5, 0.0, 0.0, 0.0, 0.0, 0.3]],
    "planar2r": [[0.0, 0.0], [0.5, PI]],
    "zxx_arm": [[0.0, 0.0, 0.0], [0.0, PI / 2, PI]],
    "humanoid": [np.zeros(37)],
    "quadruped": [np.zeros(12)],
}


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_jacobian_matches_central_differences_near_singular(
    name: str, fd_jacobian: Callable[..., np.ndarray]
) -> None:
    m = models.get(name)
    qs = _singular_configurations(m) + [np.asarray(q, float) for q in SINGULAR_EXTRA.get(name, [])]
    for q in qs:
        _check_jacobian(m, q, fd_jacobian)


@pytest.mark.parametrize("name", MODEL_NAMES)
@settings(max_examples=15)
@given(u=arrays(np.float64, 101, elements=st.floats(0.0, 1.0)))
def test_jacobian_matches_central_differences_random(
    name: str, u: np.ndarray, fd_jacobian: Callable[..., np.ndarray]
) -> None:
    m = models.get(name)
    lo, hi = m.sampling_bounds()
    q = lo + (hi - lo) * u[: m.dof]
    _check_jacobian(m, q, fd_jacobian)


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_jacobian_with_point_offset(name: str, rng: np.random.Generator, fd_jacobian) -> None:
    m = models.get(name)
    for q in m.random_configuration(3, rng):
        for frame in m.end_effectors:
            point = rng.uniform(-0.3, 0.3, size=3)
            J = m.jacobian(q, frame, point=point)
            np.testing.assert_allclose(J, fd_jacobian(m, q, frame, point=point), atol=TOL)
            # The angular rows do not depend on the point; the linear ones do (unless fixed).
            np.testing.assert_array_equal(J[3:], m.jacobian(q, frame)[3:])


def test_jacobian_of_a_batch_equals_each(rng: np.random.Generator) -> None:
    m = models.get("ur5")
    Q = m.random_configuration(6, rng).reshape(2, 3, 6)
    J = m.jacobian(Q, point=[0.0, 0.0, 0.1])
    for i in range(2):
        for j in range(3):
            np.testing.assert_array_equal(J[i, j], m.jacobian(Q[i, j], point=[0.0, 0.0, 0.1]))


def test_jacobian_of_intermediate_frames_has_zero_columns_beyond(rng: np.random.Generator) -> None:
    m = models.get("panda")
    q = m.random_configuration(rng=rng)
    J = m.jacobian(q, "link3")
    # Joints 4..7 do not move link3.
    np.testing.assert_array_equal(J[:, 3:], 0.0)
    assert np.linalg.norm(J[:, :3]) > 0.1


def test_jacobian_planar_2r_closed_form(rng: np.random.Generator) -> None:
    L1, L2 = 1.0, 0.8
    m = models.get("planar2r")
    for t1, t2 in rng.uniform(-PI, PI, size=(10, 2)):
        J = m.jacobian([t1, t2])
        s1, c1, s12, c12 = np.sin(t1), np.cos(t1), np.sin(t1 + t2), np.cos(t1 + t2)
        want = np.array(
            [
                [-L1 * s1 - L2 * s12, -L2 * s12],
                [L1 * c1 + L2 * c12, L2 * c12],
                [0, 0],
                [0, 0],
                [0, 0],
                [1, 1],
            ]
        )
        np.testing.assert_allclose(J, want, atol=1e-14)


def _general_model() -> kinetree.Model:
    """Off-axis revolute axes, prismatic joints, a ball joint and fixed offsets."""
    b = ModelBuilder("general", root="base", root_origin=translation([0.1, -0.2, 0.3]))
    b.add_joint(
        "j1", "base", "l1", axis=[0.3, -0.5, 0.8], origin=translation([0, 0, 0.2]), limits=(-2, 2)
    )
    b.add_joint(
        "slide", "l1", "l2", type="prismatic", axis=[1.0, 1.0, 0.0],
        origin=rotation([1, 2, 3], 0.4) @ translation([0.3, 0, 0]), limits=(-0.5, 0.5),
    )  # fmt: skip
    b.add_ball_joint("ball", "l2", "l3", "zxy", origin=translation([0, 0.25, 0]))
    b.add_joint("j2", "l3", "l4", type="continuous", axis="-x", origin=translation([0.2, 0.1, 0.0]))
    b.add_joint("lift", "l4", "l5", type="prismatic", axis="z", limits=(0.0, 0.3))
    b.add_frame("tool", "l5", origin=rotation([0, 1, 0], 0.3) @ translation([0.0, 0.0, 0.15]))
    b.add_frame("side", "l3", origin=translation([0.05, 0.0, 0.0]))
    return b.build()


@settings(max_examples=30)
@given(u=arrays(np.float64, 7, elements=st.floats(0.0, 1.0)))
def test_jacobian_general_axes_prismatic_and_ball(
    u: np.ndarray, fd_jacobian: Callable[..., np.ndarray]
) -> None:
    numeric_jacobian = fd_jacobian
    m = _general_model()
    assert m.dof == 7
    lo, hi = m.sampling_bounds()
    q = lo + (hi - lo) * u
    for frame in ("tool", "side", "l2"):
        np.testing.assert_allclose(m.jacobian(q, frame), numeric_jacobian(m, q, frame), atol=TOL)
    np.testing.assert_allclose(
        m.jacobian(q, "tool", point=[0.1, 0.2, -0.1]),
        numeric_jacobian(m, q, "tool", point=np.array([0.1, 0.2, -0.1])),
        atol=TOL,
    )


def test_general_model_fk_by_hand(rng: np.random.Generator) -> None:
    m = _general_model()
    q = rng.uniform(-0.4, 0.4, size=7)
    j1, slide, bz, bx, by, j2, lift = q
    a = np.array([1.0, 1.0, 0.0]) / np.sqrt(2)
    T = (
        translation([0.1, -0.2, 0.3])
        @ translation([0, 0, 0.2]) @ rotation([0.3, -0.5, 0.8], j1)
        @ rotation([1, 2, 3], 0.4) @ translation([0.3, 0, 0]) @ translation(slide * a)
        @ translation([0, 0.25, 0]) @ Rz(bz) @ Rx(bx) @ Ry(by)
        @ translation([0.2, 0.1, 0.0]) @ Rx(-j2)
        @ translation([0, 0, lift])
        @ rotation([0, 1, 0], 0.3) @ translation([0.0, 0.0, 0.15])
    )  # fmt: skip
    np.testing.assert_allclose(m.fk(q, "tool"), T, atol=1e-12)


# --- mimic joints --------------------------------------------------------------------------------

MIMIC_URDF = """<?xml version="1.0" encoding="utf-8"?>
<robot name="gripper">
  <link name="base"/>
  <link name="arm"/>
  <link name="finger_a"/>
  <link name="finger_b"/>
  <link name="slider"/>
  <joint name="shoulder" type="revolute">
    <parent link="base"/><child link="arm"/>
    <origin xyz="0 0 0.1" rpy="0 0 0"/>
    <axis xyz="0 1 0"/>
    <limit lower="-1.5" upper="1.5" effort="1" velocity="1"/>
  </joint>
  <joint name="finger_a_joint" type="revolute">
    <parent link="arm"/><child link="finger_a"/>
    <origin xyz="0.3 0.02 0" rpy="0.1 0 0"/>
    <axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/>
  </joint>
  <joint name="finger_b_joint" type="revolute">
    <parent link="arm"/><child link="finger_b"/>
    <origin xyz="0.3 -0.02 0" rpy="0 0 0"/>
    <axis xyz="0 0 1"/>
    <limit lower="-2" upper="2" effort="1" velocity="1"/>
    <mimic joint="finger_a_joint" multiplier="-2.0" offset="0.25"/>
  </joint>
  <joint name="slider_joint" type="prismatic">
    <parent link="finger_b"/><child link="slider"/>
    <origin xyz="0.1 0 0" rpy="0 0 0"/>
    <axis xyz="1 0 0"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/>
    <mimic joint="shoulder" multiplier="0.5"/>
  </joint>
</robot>
"""


def test_mimic_joints_follow_their_source(rng: np.random.Generator) -> None:
    m = load_urdf(MIMIC_URDF)
    assert m.joint_names == ("shoulder", "finger_a_joint")
    for s, a in rng.uniform(-1, 1, size=(10, 2)):
        b = -2.0 * a + 0.25
        T_b = L(0, 0, 0.1) @ Ry(s) @ L(0.3, -0.02, 0) @ Rz(b)
        np.testing.assert_allclose(m.fk([s, a], "finger_b"), T_b, atol=1e-12)
        np.testing.assert_allclose(m.fk([s, a], "slider"), T_b @ L(0.1 + 0.5 * s, 0, 0), atol=1e-12)


def test_mimic_joint_jacobian_matches_central_differences(
    rng: np.random.Generator, fd_jacobian
) -> None:
    m = load_urdf(MIMIC_URDF)
    for q in rng.uniform(-1, 1, size=(10, 2)):
        for frame in ("finger_a", "finger_b", "slider"):
            np.testing.assert_allclose(m.jacobian(q, frame), fd_jacobian(m, q, frame), atol=TOL)


def test_chained_mimic_joints(fd_jacobian: Callable[..., np.ndarray]) -> None:
    b = ModelBuilder("chain", root="base")
    b.add_joint("a", "base", "l1", axis="z", limits=(-1, 1))
    b.add_joint("b", "l1", "l2", axis="z", origin=translation([1, 0, 0]), mimic=("a", 2.0, 0.1))
    b.add_joint("c", "l2", "l3", axis="z", origin=translation([1, 0, 0]), mimic=("b", 3.0, 0.2))
    b.add_frame("tip", "l3", origin=translation([1, 0, 0]))
    m = b.build()
    assert m.dof == 1
    qa = 0.3
    qb = 2.0 * qa + 0.1
    qc = 3.0 * qb + 0.2
    want = Rz(qa) @ L(1, 0, 0) @ Rz(qb) @ L(1, 0, 0) @ Rz(qc) @ L(1, 0, 0)
    np.testing.assert_allclose(m.fk([qa]), want, atol=1e-12)
    # d tip / d qa: chain rule through the multipliers 1, 2 and 6.
    np.testing.assert_allclose(m.jacobian([qa]), fd_jacobian(m, np.array([qa])), atol=TOL)
    assert m.jacobian([qa])[5, 0] == pytest.approx(1 + 2 + 6)


# --- cross-check of the kinematics module entry points -------------------------------------------


def test_needed_nodes_are_ancestors() -> None:
    m = models.get("humanoid")
    node = m.frame_index("hand_r")
    nodes = kinetree.kinematics.needed_nodes(m, np.array([node]))
    np.testing.assert_array_equal(nodes, np.sort(m.ancestors(node)))
