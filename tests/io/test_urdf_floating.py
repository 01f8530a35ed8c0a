"""URDF ``floating`` and ``planar`` joints, and ``load(..., floating_base=True)``.

The oracle composes each frame's pose with numpy alone: ``parent @ origin @ motion``,
where a floating joint's motion is ``translation(x, y, z) @ rotation(quaternion)``
(w first) and a planar joint's is ``translation(x u + y w) @ rotation(normal, theta)``
with ``u``, ``w`` the in-plane axes :meth:`kinetree.ModelBuilder.add_joint` documents.
"""

from __future__ import annotations

import warnings
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

import kinetree
from kinetree import InvalidValueError, ModelStructureError, UnsupportedError
from kinetree.io import load_urdf
from kinetree.io.urdf import FLOATING_BASE_JOINT, URDFWarning

TOL = 1e-12
FREE_SUFFIXES = ("x", "y", "z", "qw", "qx", "qy", "qz")
XACRO_PKGS = Path(__file__).resolve().parents[1] / "data" / "xacro" / "pkgs"
XACRO_ARM = XACRO_PKGS / "fake_description" / "urdf" / "arm.urdf.xacro"


# --- the numpy oracle -------------------------------------------------------------------


def rpy(r: float, p: float, y: float) -> np.ndarray:
    """URDF's fixed-axis roll-pitch-yaw: Rz(y) @ Ry(p) @ Rx(r)."""
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    Rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    Ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    Rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    return Rz @ Ry @ Rx


def pose(R: np.ndarray | None = None, t: np.ndarray | None = None) -> np.ndarray:
    T = np.eye(4)
    if R is not None:
        T[:3, :3] = R
    if t is not None:
        T[:3, 3] = t
    return T


def axis_angle(axis: np.ndarray, angle: float) -> np.ndarray:
    """Rodrigues' formula for a unit ``axis``."""
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def quaternion(w: float, x: float, y: float, z: float) -> np.ndarray:
    """Rotation matrix of the unit quaternion (w, x, y, z)."""
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def plane_axes(normal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The planar joint's in-plane axes ``(u, w)``: u is the x axis made perpendicular to
    the normal (the y axis when x is parallel to it), w = normal x u."""
    n = normal / np.linalg.norm(normal)
    u = np.array([1.0, 0.0, 0.0]) - n[0] * n
    if np.linalg.norm(u) < 1e-6:
        u = np.array([0.0, 1.0, 0.0]) - n[1] * n
    u /= np.linalg.norm(u)
    return u, np.cross(n, u)


def unit_quaternions(rng: np.random.Generator, n: int) -> np.ndarray:
    q = rng.normal(size=(n, 4))
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def free_pose(q7: np.ndarray) -> np.ndarray:
    """The motion of a free joint at its seven coordinates x y z qw qx qy qz."""
    return pose(quaternion(*q7[3:]), q7[:3])


# --- URDF with floating and planar joints -------------------------------------------------

ORIGIN_F = ((0.1, -0.2, 0.3), (0.3, -0.4, 0.5))
ORIGIN_J = ((0.0, 0.15, 0.4), (0.0, 0.2, -0.1))
AXIS_J = (0.0, 0.6, 0.8)
ORIGIN_P = ((0.25, 0.0, -0.05), (-0.6, 0.1, 0.9))
ORIGIN_TOOL = ((0.0, 0.0, 0.12), (0.0, 0.0, 0.0))


def _xyz_rpy(origin: tuple[tuple[float, ...], tuple[float, ...]]) -> str:
    xyz, r = origin
    return f'<origin xyz="{" ".join(map(str, xyz))}" rpy="{" ".join(map(str, r))}"/>'


def mixed_urdf(normal: tuple[float, float, float]) -> str:
    """base -floating f-> body -revolute j-> arm -planar p-> slider -fixed-> tool."""
    return f"""<?xml version="1.0"?>
<robot name="mixed">
  <link name="base"/><link name="body"/><link name="arm"/><link name="slider"/>
  <link name="tool"/>
  <joint name="f" type="floating">
    <parent link="base"/><child link="body"/>{_xyz_rpy(ORIGIN_F)}
  </joint>
  <joint name="j" type="revolute">
    <parent link="body"/><child link="arm"/>{_xyz_rpy(ORIGIN_J)}
    <axis xyz="{" ".join(map(str, AXIS_J))}"/><limit lower="-2" upper="2"/>
  </joint>
  <joint name="p" type="planar">
    <parent link="arm"/><child link="slider"/>{_xyz_rpy(ORIGIN_P)}
    <axis xyz="{" ".join(map(str, normal))}"/><limit lower="-0.1" upper="0.1"/>
  </joint>
  <joint name="tool_joint" type="fixed">
    <parent link="slider"/><child link="tool"/>{_xyz_rpy(ORIGIN_TOOL)}
  </joint>
</robot>
"""


def _origin(o: tuple[tuple[float, ...], tuple[float, ...]]) -> np.ndarray:
    return pose(rpy(*o[1]), np.array(o[0]))


def mixed_oracle(q7: np.ndarray, theta_j: float, xyt: np.ndarray, normal: np.ndarray) -> dict:
    """Every frame's pose, composed with numpy."""
    u, w = plane_axes(normal)
    n = normal / np.linalg.norm(normal)
    a = np.array(AXIS_J) / np.linalg.norm(AXIS_J)
    out = {"base": np.eye(4)}
    out["body"] = out["base"] @ _origin(ORIGIN_F) @ free_pose(q7)
    out["arm"] = out["body"] @ _origin(ORIGIN_J) @ pose(axis_angle(a, theta_j))
    planar = pose(t=xyt[0] * u + xyt[1] * w) @ pose(axis_angle(n, xyt[2]))
    out["slider"] = out["arm"] @ _origin(ORIGIN_P) @ planar
    out["tool"] = out["slider"] @ _origin(ORIGIN_TOOL)
    return out


NORMALS = [(0.0, 0.0, 1.0), (1.0, 0.0, 0.0), (0.0, -1.0, 0.0), (0.0, 1.0, 1.0), (0.3, -0.5, 0.8)]


@pytest.mark.parametrize("normal", NORMALS, ids=[str(n) for n in NORMALS])
def test_floating_and_planar_fk_matches_the_oracle(
    normal: tuple[float, float, float], rng: np.random.Generator
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the <limit> of the planar joint warns of nothing
        model = load_urdf(mixed_urdf(normal))
    assert model.frame_names == ("base", "body", "arm", "slider", "tool")
    assert model.joint_groups["f"] == tuple(f"f_{s}" for s in FREE_SUFFIXES)
    assert model.joint_groups["p"] == ("p_x", "p_y", "p_theta")
    assert (model.nq, model.nv) == (7 + 1 + 3, 6 + 1 + 3)
    sf, sj, sp = model.q_slice("f"), model.q_slice("j"), model.q_slice("p")
    assert (sf.stop - sf.start, sj.stop - sj.start, sp.stop - sp.start) == (7, 1, 3)
    n = np.array(normal)
    quats = unit_quaternions(rng, 25)
    for k in range(25):
        q = np.zeros(model.nq)
        q[sf] = np.concatenate([rng.uniform(-2, 2, 3), quats[k]])
        q[sj] = rng.uniform(-2, 2)
        q[sp] = np.concatenate([rng.uniform(-1, 1, 2), rng.uniform(-np.pi, np.pi, 1)])
        want = mixed_oracle(q[sf], float(q[sj][0]), q[sp], n)
        got = model.fk_all(q)
        for name, T in zip(model.frame_names, got):
            np.testing.assert_allclose(T, want[name], atol=TOL, err_msg=f"{normal}: {name}")


def test_floating_joint_at_identity_is_its_origin() -> None:
    model = load_urdf(mixed_urdf((0.0, 0.0, 1.0)))
    q = model.neutral()
    np.testing.assert_array_equal(q[model.q_slice("f")], [0, 0, 0, 1, 0, 0, 0])
    np.testing.assert_allclose(model.fk(q, "body"), _origin(ORIGIN_F), atol=TOL)


def test_a_mimic_on_a_planar_joint_is_ignored_with_a_warning() -> None:
    text = mixed_urdf((0.0, 0.0, 1.0)).replace(
        '<limit lower="-0.1" upper="0.1"/>', '<mimic joint="j" multiplier="2"/>'
    )
    with pytest.warns(URDFWarning, match="joint 'p': a planar joint .* ignores its <mimic>"):
        model = load_urdf(text)
    assert model.joint_groups["p"] == ("p_x", "p_y", "p_theta")


def test_a_mimic_naming_a_planar_joint_loads_as_an_independent_joint() -> None:
    text = mixed_urdf((0.0, 0.0, 1.0)).replace(
        '<limit lower="-2" upper="2"/>', '<limit lower="-2" upper="2"/><mimic joint="p"/>'
    )
    with pytest.warns(URDFWarning, match="names a planar joint"):
        model = load_urdf(text)
    assert "j" in model.joint_names
    with pytest.raises(ModelStructureError, match="names a planar joint"):
        load_urdf(text, mimic="strict")


# --- floating_base=True -----------------------------------------------------------------


def _panda_urdf() -> Path:
    return Path(str(resources.files("kinetree.models") / "data" / "panda.urdf"))


@pytest.fixture(scope="module")
def panda_pair() -> tuple[kinetree.Model, kinetree.Model]:
    """The shipped Panda URDF, fixed and with a free base."""
    path = _panda_urdf()
    return load_urdf(path, meshes=False), load_urdf(path, meshes=False, floating_base=True)


def test_floating_base_adds_a_world_root_and_a_free_root_joint(
    panda_pair: tuple[kinetree.Model, kinetree.Model],
) -> None:
    fixed, free = panda_pair
    assert free.nq == fixed.nq + 7
    assert free.nv == fixed.nv + 6
    assert free.frame_names == ("world", *fixed.frame_names)
    assert free.q_slice(FLOATING_BASE_JOINT) == slice(0, 7)
    assert free.joint_groups["root_joint"] == tuple(f"root_joint_{s}" for s in FREE_SUFFIXES)
    assert free.joint_names[7:] == fixed.joint_names
    assert free.end_effectors == fixed.end_effectors
    assert free.metadata["floating_base"] == "root_joint"
    np.testing.assert_array_equal(free.neutral()[:7], [0, 0, 0, 1, 0, 0, 0])
    np.testing.assert_array_equal(free.neutral()[7:], fixed.neutral())


def test_floating_base_at_identity_equals_the_fixed_base(
    panda_pair: tuple[kinetree.Model, kinetree.Model], rng: np.random.Generator
) -> None:
    fixed, free = panda_pair
    Q = fixed.random_configuration(10, rng)
    base = np.tile([0.0, 0, 0, 1, 0, 0, 0], (10, 1))
    got = free.fk_all(np.hstack([base, Q]))
    np.testing.assert_allclose(got[:, 0], np.broadcast_to(np.eye(4), (10, 4, 4)), atol=0)
    np.testing.assert_allclose(got[:, 1:], fixed.fk_all(Q), atol=TOL)


def test_floating_base_pose_moves_every_frame(
    panda_pair: tuple[kinetree.Model, kinetree.Model], rng: np.random.Generator
) -> None:
    fixed, free = panda_pair
    Q = fixed.random_configuration(20, rng)
    base = np.hstack([rng.uniform(-3, 3, (20, 3)), unit_quaternions(rng, 20)])
    got = free.fk_all(np.hstack([base, Q]))
    want = np.array([free_pose(b) for b in base])[:, None] @ fixed.fk_all(Q)
    np.testing.assert_allclose(got[:, 1:], want, atol=1e-11)
    for k in range(20):
        np.testing.assert_allclose(
            free.fk(np.concatenate([base[k], Q[k]]), "panda_link8"),
            free_pose(base[k]) @ fixed.fk(Q[k], "panda_link8"),
            atol=1e-11,
        )


def test_load_passes_floating_base_to_urdf_files() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the shipped URDF names meshes it does not ship
        free = kinetree.load(_panda_urdf(), floating_base=True)
        fixed = kinetree.load(_panda_urdf())
    assert free.nq == fixed.nq + 7 and free.frame_names[0] == "world"


@pytest.mark.filterwarnings("ignore::kinetree.geometry.GeometryWarning")  # meshes not shipped
def test_load_passes_floating_base_to_xacro_files() -> None:
    pytest.importorskip("xacrodoc")
    fixed = kinetree.load(XACRO_ARM, package_dirs=[XACRO_PKGS])
    free = kinetree.load(XACRO_ARM, package_dirs=[XACRO_PKGS], floating_base=True)
    assert free.nq == fixed.nq + 7
    assert free.frame_names == ("world", *fixed.frame_names)
    q = np.concatenate([[0.0, 0, 0, 1, 0, 0, 0], fixed.neutral()])
    np.testing.assert_allclose(free.fk_all(q)[1:], fixed.fk_all(fixed.neutral()), atol=TOL)


def test_floating_base_root_name_avoids_a_world_link() -> None:
    text = """<robot name="r"><link name="world"/><link name="a"/>
      <joint name="j" type="revolute"><parent link="world"/><child link="a"/>
      <axis xyz="0 0 1"/><limit lower="-1" upper="1"/></joint></robot>"""
    model = load_urdf(text, floating_base=True)
    assert model.frame_names == ("world_1", "world", "a")
    assert model.q_slice("root_joint") == slice(0, 7)


def test_floating_base_on_a_file_that_has_a_root_joint_is_refused() -> None:
    text = """<robot name="r"><link name="a"/><link name="b"/>
      <joint name="root_joint" type="fixed"><parent link="a"/><child link="b"/></joint>
      </robot>"""
    with pytest.raises(ModelStructureError, match="already has a joint of that name"):
        load_urdf(text, floating_base=True)


def test_floating_base_on_bvh_or_mjcf_is_refused(tmp_path: Path) -> None:
    # Built-in models take it (Model.with_floating_base, tests/test_model_floating_base.py).
    assert kinetree.load("panda", floating_base=True).nq == kinetree.load("panda").nq + 7
    bvh = Path(__file__).resolve().parents[1] / "data" / "bvh" / "bvh_test1.bvh"
    with pytest.raises(UnsupportedError, match="BVH file"):
        kinetree.load(bvh, floating_base=True)
    mjcf = tmp_path / "arm.xml"
    mjcf.write_text('<mujoco><worldbody><body name="b"/></worldbody></mujoco>')
    with pytest.raises(UnsupportedError, match=r"MJCF file .* <freejoint>"):
        kinetree.load(mjcf, floating_base=True)


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_floating_base_must_be_a_bool(value: object) -> None:
    with pytest.raises(InvalidValueError, match="floating_base must be True or False"):
        load_urdf(mixed_urdf((0.0, 0.0, 1.0)), floating_base=value)  # type: ignore[arg-type]


# --- default end effectors of a free-base humanoid -----------------------------------------


def _chain(prefix: str, parent: str, n: int, tip: str) -> str:
    """``n`` revolute joints from ``parent``; the last link is ``tip``."""
    parts, prev = [], parent
    for k in range(n):
        child = tip if k == n - 1 else f"{prefix}_link{k + 1}"
        parts.append(
            f'<link name="{child}"/><joint name="{prefix}_joint{k + 1}" type="revolute">'
            f'<parent link="{prev}"/><child link="{child}"/><origin xyz="0 0 -0.1"/>'
            f'<axis xyz="{"1 0 0" if k % 2 else "0 1 0"}"/>'
            '<limit lower="-1" upper="1"/></joint>'
        )
        prev = child
    return "".join(parts)


def humanoid_urdf() -> str:
    """Legs of 6 joints, a waist, arms of 7 joints with a two-finger gripper, a 2-joint
    neck and an IMU (a sensor frame fixed to the pelvis)."""
    body = [
        '<link name="pelvis"/>',
        _chain("left_leg", "pelvis", 6, "left_foot"),
        _chain("right_leg", "pelvis", 6, "right_foot"),
        _chain("waist", "pelvis", 1, "torso"),
        _chain("left_arm", "torso", 7, "left_hand"),
        _chain("right_arm", "torso", 7, "right_hand"),
        _chain("neck", "torso", 2, "head"),
        '<link name="imu_link"/><joint name="imu_joint" type="fixed"><parent link="pelvis"/>'
        '<child link="imu_link"/></joint>',
    ]
    for side in ("left", "right"):
        for finger in ("a", "b"):
            body.append(
                f'<link name="{side}_finger_{finger}"/>'
                f'<joint name="{side}_finger_{finger}_joint" type="prismatic">'
                f'<parent link="{side}_hand"/><child link="{side}_finger_{finger}"/>'
                '<axis xyz="0 1 0"/><limit lower="0" upper="0.04"/></joint>'
            )
    return f'<robot name="toy_humanoid">{"".join(body)}</robot>'


def test_free_base_humanoid_keeps_both_hands_and_both_feet() -> None:
    fixed = load_urdf(humanoid_urdf())
    free = load_urdf(humanoid_urdf(), floating_base=True)
    assert set(fixed.end_effectors) == {"left_foot", "right_foot", "left_hand", "right_hand"}
    assert free.end_effectors == fixed.end_effectors


def test_urdf_floating_joint_above_a_humanoid_keeps_both_hands_and_both_feet() -> None:
    text = humanoid_urdf().replace(
        '<link name="pelvis"/>',
        '<link name="world"/><link name="pelvis"/><joint name="float" type="floating">'
        '<parent link="world"/><child link="pelvis"/></joint>',
    )
    model = load_urdf(text)
    assert model.frame_names[:2] == ("world", "pelvis")
    assert set(model.end_effectors) == {"left_foot", "right_foot", "left_hand", "right_hand"}


def quadruped_urdf() -> str:
    """A trunk with four legs of 3 joints each: shorter than a free joint's 4 nodes."""
    legs = [_chain(f"{leg}_leg", "trunk", 3, f"{leg}_foot") for leg in ("fl", "fr", "hl", "hr")]
    return f'<robot name="toy_quadruped"><link name="trunk"/>{"".join(legs)}</robot>'


FEET = ("fl_foot", "fr_foot", "hl_foot", "hr_foot")


def test_free_base_quadruped_keeps_its_four_feet() -> None:
    assert load_urdf(quadruped_urdf()).end_effectors == FEET
    assert load_urdf(quadruped_urdf(), floating_base=True).end_effectors == FEET
    text = quadruped_urdf().replace(
        '<link name="trunk"/>',
        '<link name="odom"/><link name="trunk"/><joint name="base" type="floating">'
        '<parent link="odom"/><child link="trunk"/></joint>',
    )
    assert load_urdf(text).end_effectors == FEET


def test_planar_base_arm_keeps_its_tip() -> None:
    drive = (
        '<link name="floor"/><link name="cart"/><joint name="drive" type="planar">'
        '<parent link="floor"/><child link="cart"/><axis xyz="0 0 1"/></joint>'
    )
    text = f'<robot name="mobile">{drive}{_chain("arm", "cart", 2, "tip")}</robot>'
    assert load_urdf(text).end_effectors == ("tip",)
