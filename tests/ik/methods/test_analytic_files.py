"""Closed-form IK for arms as they come from files: recognised by geometry, every branch.

The UR5 comes from example-robot-data's URDF (skipped when that package is not
installed); the spherical-wrist arms are DH tables built from published numbers
(sources beside each table), with base and tool offsets and joint zero offsets.
"""

from __future__ import annotations

import math
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest

import kinetree as kt
import kinetree.models as M
from kinetree.errors import UnsupportedError
from kinetree.ik.methods.analytic import solve_all, supports, wrap_angle
from kinetree.io.dh import DHRow, from_dh
from kinetree.spatial import rot_x, rot_z, translation

PI = math.pi
DEG = PI / 180.0
N_CONFIGS = 200
FK_TOL = 1e-10  # [m] and [rad]


def _ur5_urdf_path() -> Path | None:
    """example-robot-data's ``ur5_robot.urdf``, found through the installed distribution."""
    try:
        dist = metadata.distribution("example-robot-data")
    except metadata.PackageNotFoundError:
        return None
    for f in dist.files or ():
        if str(f).endswith("ur_description/urdf/ur5_robot.urdf"):
            path = Path(str(dist.locate_file(f)))
            return path if path.is_file() else None
    return None


def ur5_from_urdf() -> kt.Model:
    path = _ur5_urdf_path()
    if path is None:
        pytest.skip("example-robot-data (with ur5_robot.urdf) is not installed")
    return kt.load(path)


def _rows(table: list[tuple[float, float, float, float, float, float]]) -> list[DHRow]:
    """``(a [m], alpha [rad], d [m], theta offset [rad], lo [deg], hi [deg])`` -> DH rows."""
    return [
        DHRow(a=a, alpha=al, d=d, theta=th, limits=(lo * DEG, hi * DEG))
        for a, al, d, th, lo, hi in table
    ]


def abb_irb140() -> kt.Model:
    # ABB IRB 140: standard DH and joint ranges of Peter Corke's Robotics Toolbox
    # (mdl_irb140.m), which follow ABB's IRB 140 product specification.
    rows = _rows(
        [
            (0.070, -PI / 2, 0.352, 0.0, -180, 180),
            (0.360, 0.0, 0.0, -PI / 2, -90, 110),
            (0.0, PI / 2, 0.0, 0.0, -230, 50),
            (0.0, -PI / 2, 0.380, 0.0, -200, 200),
            (0.0, PI / 2, 0.0, 0.0, -115, 115),
            (0.0, PI, 0.065, 0.0, -400, 400),
        ]
    )
    base = translation([0.3, -0.2, 0.1]) @ rot_z(0.4)  # mounted off the world origin
    tool = translation([0.01, 0.02, 0.15]) @ rot_x(0.3)  # a gripper's TCP
    return from_dh(rows, name="abb_irb140", base=base, tool=tool)


def kuka_kr16() -> kt.Model:
    # A KUKA KR 16-class arm: lengths of the order of KUKA's KR 16-2 data sheet [mm]
    # (not checked against the sheet; the test needs an arm of this shape): base
    # height 675, shoulder offset 260, upper arm 680, elbow offset 35, forearm 670,
    # flange 158; ranges A1 +-185, A2 -155/+35, A3 -130/+154, A4 +-350, A5 +-130,
    # A6 +-350 deg (applied here in the DH table's own zeros).
    rows = _rows(
        [
            (0.260, -PI / 2, 0.675, 0.0, -185, 185),
            (0.680, 0.0, 0.0, 0.0, -155, 35),
            (0.035, PI / 2, 0.0, -PI / 2, -130, 154),
            (0.0, -PI / 2, 0.670, 0.0, -350, 350),
            (0.0, PI / 2, 0.0, 0.0, -130, 130),
            (0.0, 0.0, 0.158, 0.0, -350, 350),
        ]
    )
    return from_dh(rows, name="kuka_kr16")


def puma560() -> kt.Model:
    # Puma 560: standard DH and joint ranges of Peter Corke's Robotics Toolbox
    # (Puma560.py / mdl_puma560.m); it has a lateral offset d3 = 0.15005 m.
    rows = _rows(
        [
            (0.0, PI / 2, 0.0, 0.0, -160, 160),
            (0.4318, 0.0, 0.0, 0.0, -110, 110),
            (0.0203, -PI / 2, 0.15005, 0.0, -135, 135),
            (0.0, PI / 2, 0.4318, 0.0, -266, 266),
            (0.0, -PI / 2, 0.0, 0.0, -100, 100),
            (0.0, 0.0, 0.0, 0.0, -266, 266),
        ]
    )
    return from_dh(rows, name="puma560")


ARMS = {
    "ur5_urdf": ur5_from_urdf,
    "abb_irb140": abb_irb140,
    "kuka_kr16": kuka_kr16,
    "puma560": puma560,
}


def pose_errors(model: kt.Model, Q: np.ndarray, T: np.ndarray) -> tuple[float, float]:
    """Worst position [m] and rotation [rad] error of ``fk(Q)`` against ``T``."""
    F = model.fk(Q)
    pos = float(np.max(np.linalg.norm(F[:, :3, 3] - T[:3, 3], axis=1), initial=0.0))
    R_err = np.einsum("nji,jk->nik", F[:, :3, :3], T[:3, :3])
    vee = np.stack(
        [
            R_err[:, 2, 1] - R_err[:, 1, 2],
            R_err[:, 0, 2] - R_err[:, 2, 0],
            R_err[:, 1, 0] - R_err[:, 0, 1],
        ],
        axis=1,
    )
    cos = 0.5 * (np.trace(R_err, axis1=1, axis2=2) - 1.0)
    ang = np.arctan2(0.5 * np.linalg.norm(vee, axis=1), cos)
    return pos, float(np.max(ang, initial=0.0))


def wrapped_distance(Q: np.ndarray, q: np.ndarray) -> np.ndarray:
    return np.max(np.abs(wrap_angle(Q - q)), axis=1)


@pytest.mark.parametrize("name", list(ARMS))
def test_recognised_from_geometry_alone(name: str) -> None:
    model = ARMS[name]()
    assert "ur_dh" not in model.metadata
    assert supports(model)


@pytest.mark.parametrize("name", list(ARMS))
def test_every_branch_exact_within_limits(name: str) -> None:
    model = ARMS[name]()
    rng = np.random.default_rng(20240611)
    lo, hi = model.limits[:, 0], model.limits[:, 1]
    worst_pos = worst_rot = 0.0
    n_branches = []
    for _ in range(N_CONFIGS):
        q = rng.uniform(lo, hi)
        T = model.fk(q)
        Q = model.ik_all(T)
        assert Q.ndim == 2 and Q.shape[1] == 6 and 1 <= Q.shape[0] <= 8
        pos, rot = pose_errors(model, Q, T)
        worst_pos, worst_rot = max(worst_pos, pos), max(worst_rot, rot)
        assert np.all(model.within_limits(Q))  # solve_all always keeps the limits
        assert np.min(wrapped_distance(Q, q)) <= 1e-8, f"generating q {q} missing"
        for i in range(Q.shape[0]):  # no duplicates, even modulo 2 pi
            assert np.all(np.delete(wrapped_distance(Q, Q[i]), i) > 1e-6)
        n_branches.append(Q.shape[0])
    assert worst_pos <= FK_TOL and worst_rot <= FK_TOL, (worst_pos, worst_rot)
    assert max(n_branches) == 8  # all eight branches do occur


@pytest.mark.parametrize("name", list(ARMS))
def test_branches_form_a_closed_set(name: str) -> None:
    """Solving from any returned branch gives back the same set: none is missed."""
    model = ARMS[name]()
    rng = np.random.default_rng(7)
    lo, hi = model.limits[:, 0], model.limits[:, 1]
    for _ in range(20):
        T = model.fk(rng.uniform(lo, hi))
        Q = solve_all(model, T)
        for s in Q:
            again = solve_all(model, model.fk(s))
            assert again.shape == Q.shape
            assert all(np.min(wrapped_distance(again, r)) <= 1e-8 for r in Q)


@pytest.mark.parametrize("name", ["abb_irb140", "puma560"])
def test_numeric_ik_finds_no_other_branch(name: str) -> None:
    """An independent oracle: numeric IK from random seeds lands only on returned branches."""
    model = ARMS[name]()
    rng = np.random.default_rng(3)
    lo, hi = model.limits[:, 0], model.limits[:, 1]
    for _ in range(3):
        T = model.fk(rng.uniform(lo, hi))
        Q = solve_all(model, T)
        for _ in range(8):
            res = model.ik(T, q0=rng.uniform(lo, hi), tol=(1e-10, 1e-10))
            if res.success:
                assert np.min(wrapped_distance(Q, res.q)) <= 1e-5


def test_ur5_urdf_and_builtin_ur5_agree() -> None:
    urdf = ur5_from_urdf()
    builtin = M.ur5()
    q = np.array([0.3, -1.1, 1.4, -0.7, 1.9, -2.2])
    Q_urdf = solve_all(urdf, urdf.fk(q))
    Q_builtin = solve_all(builtin, builtin.fk(q))
    assert Q_urdf.shape[0] == Q_builtin.shape[0] == 8
    for r in Q_urdf:  # the URDF's zero is the DH zero of the built-in model
        assert np.min(wrapped_distance(Q_builtin, r)) <= 1e-8


def test_unstructured_6r_arm_is_unsupported_with_reason() -> None:
    # a 6R arm with a wrist offset d5: axes 4, 5, 6 do not meet, axes 3, 4 not parallel
    rows = _rows(
        [
            (0.1, -PI / 2, 0.4, 0.0, -180, 180),
            (0.5, 0.0, 0.0, 0.0, -180, 180),
            (0.0, PI / 2, 0.0, 0.0, -180, 180),
            (0.0, -PI / 2, 0.45, 0.0, -180, 180),
            (0.0, PI / 2, 0.08, 0.0, -180, 180),
            (0.0, 0.0, 0.1, 0.0, -180, 180),
        ]
    )
    model = from_dh(rows, name="offset_wrist")
    assert not supports(model)
    with pytest.raises(UnsupportedError, match="axes 4, 5, 6 do not meet") as info:
        solve_all(model, model.fk(np.zeros(6)))
    assert "axes 2, 3, 4 are not parallel" in str(info.value)
    with pytest.raises(UnsupportedError, match="7 DoF, not 6"):
        M.panda().ik_all(np.eye(4))


@pytest.mark.parametrize("name", ["abb_irb140", "kuka_kr16", "puma560"])
def test_near_and_at_wrist_singularity(name: str) -> None:
    """q5 = 0 (q4, q6 one motion) and q5 = 1e-7 (square roots lose digits): still exact."""
    model = ARMS[name]()
    rng = np.random.default_rng(11)
    lo, hi = model.limits[:, 0], model.limits[:, 1]
    for k in range(40):
        q = rng.uniform(lo, hi)
        q[4] = 0.0 if k % 2 else 1e-7
        T = model.fk(q)
        Q = solve_all(model, T)
        assert Q.shape[0] >= 1
        pos, rot = pose_errors(model, Q, T)
        assert pos <= FK_TOL and rot <= FK_TOL
        if k % 2 == 0:  # q4 - q6 is conditioned 1 / sin q5: 1e-16 in the pose, ~1e-9 here
            assert np.min(wrapped_distance(Q, q)) <= 1e-6


def _tool_errors(model: kt.Model, Q: np.ndarray, frame: str, T: np.ndarray) -> float:
    """Largest entry of ``fk(Q, frame) - T`` (metres and rotation-matrix entries)."""
    return float(np.max(np.abs(model.fk(Q, frame) - T), initial=0.0))


def test_tool0_of_the_ur5_urdf_is_solved_in_closed_form() -> None:
    """ROS-Industrial's ``tool0`` hangs off ``wrist_3_link`` beside ``ee_link``: every
    branch puts ``tool0`` itself on the target, the generating q among them."""
    model = ur5_from_urdf()
    assert model.end_effectors[0] != "tool0"
    rng = np.random.default_rng(12)
    lo, hi = model.limits[:, 0], model.limits[:, 1]
    for _ in range(20):
        q = rng.uniform(lo, hi)
        T_world_tool0 = model.fk(q, "tool0")
        Q = model.ik_all(T_world_tool0, "tool0")
        assert Q.shape[0] >= 1
        assert _tool_errors(model, Q, "tool0", T_world_tool0) <= FK_TOL
        assert np.min(wrapped_distance(Q, q)) <= 1e-8
    res = model.ik(T_world_tool0, "tool0", method="analytic")
    assert res.success
    assert _tool_errors(model, res.q[None], "tool0", T_world_tool0) <= FK_TOL


def _arm_with_tools() -> kt.Model:
    """A UR-structured 6R arm (axes z, y, y, y, z, y) whose flange carries a tool on a
    fixed link and a camera on the tool, both rotated and offset."""
    b = kt.ModelBuilder("tooled_arm", root="base")
    joints = [  # (axis, origin of the child in the parent) [m]
        ("z", translation([0.0, 0.0, 0.12])),
        ("y", translation([0.0, 0.15, 0.0])),
        ("y", translation([0.0, -0.1, 0.5])),
        ("y", translation([0.0, 0.0, 0.4])),
        ("z", translation([0.0, 0.1, 0.0])),
        ("y", translation([0.0, 0.0, 0.1])),
    ]
    parent = "base"
    for i, (axis, origin) in enumerate(joints, start=1):
        b.add_joint(f"j{i}", parent, f"l{i}", axis=axis, origin=origin, limits=(-PI, PI))
        parent = f"l{i}"
    b.add_frame("flange", "l6", origin=translation([0.0, 0.08, 0.0]))
    b.add_joint("tool_mount", "l6", "tool_link", type="fixed",
                origin=translation([0.03, 0.2, -0.05]) @ rot_x(0.7) @ rot_z(-1.1))  # fmt: skip
    b.add_frame("camera", "tool_link", origin=translation([0.0, 0.04, 0.02]) @ rot_z(2.0))
    b.set_end_effectors("flange")
    return b.build()


@pytest.mark.parametrize("frame", ["tool_link", "camera"])
def test_any_frame_rigid_on_the_flange_is_solved(frame: str) -> None:
    model = _arm_with_tools()
    assert supports(model)
    rng = np.random.default_rng(5)
    for _ in range(20):
        q = rng.uniform(-PI, PI, 6)
        T = model.fk(q, frame)
        Q = solve_all(model, T, frame)
        assert _tool_errors(model, Q, frame, T) <= FK_TOL
        assert np.min(wrapped_distance(Q, q)) <= 1e-8


def test_frames_that_move_against_the_flange_are_refused() -> None:
    model = _arm_with_tools()
    with pytest.raises(UnsupportedError, match="moves relative to 'flange'"):
        solve_all(model, np.eye(4), "l5")
    # a position-only closed form cannot place a point away from its tip
    b = kt.ModelBuilder("planar2r", root="base")
    b.add_joint("j1", "base", "l1", axis="z", limits=(-PI, PI))
    b.add_joint("j2", "l1", "l2", axis="z", origin=translation([0.6, 0.0, 0.0]), limits=(-PI, PI))
    b.add_frame("tip", "l2", origin=translation([0.4, 0.0, 0.0]))
    b.add_frame("tip_marker", "tip", origin=rot_z(0.3))
    b.add_frame("pen", "tip", origin=translation([0.0, 0.05, 0.0]))
    b.set_end_effectors("tip")
    planar = b.build()
    q = np.array([0.4, 1.1])
    p = planar.fk(q, "tip_marker")[:3, 3]
    Q = solve_all(planar, p, "tip_marker")
    assert np.max(np.abs(planar.fk(Q, "tip_marker")[:, :3, 3] - p)) <= FK_TOL
    assert np.min(wrapped_distance(Q, q)) <= 1e-8
    with pytest.raises(UnsupportedError, match="places a point"):
        solve_all(planar, p, "pen")
