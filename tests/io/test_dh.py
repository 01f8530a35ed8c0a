"""Denavit-Hartenberg tables (kinetree.io.from_dh), standard and modified (Craig) conventions.

Each expected pose is written from the convention's definition with plain numpy:
standard ``Rz(theta) Tz(d) Tx(a) Rx(alpha)`` per row, modified
``Rx(alpha_{i-1}) Tx(a_{i-1}) Rz(theta_i) Tz(d_i)``.
"""

from __future__ import annotations

import numpy as np
import pytest

from kinetree import InvalidValueError, ShapeError, UnsupportedError
from kinetree.io import DHRow, from_dh

PI = np.pi


def Rx(t: float) -> np.ndarray:
    c, s = np.cos(t), np.sin(t)
    return np.array([[1, 0, 0, 0], [0, c, -s, 0], [0, s, c, 0], [0, 0, 0, 1.0]])


def Rz(t: float) -> np.ndarray:
    c, s = np.cos(t), np.sin(t)
    return np.array([[c, -s, 0, 0], [s, c, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]])


def Tx(a: float) -> np.ndarray:
    T = np.eye(4)
    T[0, 3] = a
    return T


def Tz(d: float) -> np.ndarray:
    T = np.eye(4)
    T[2, 3] = d
    return T


def standard(rows: list[tuple[float, float, float, float]]) -> np.ndarray:
    """Product of standard DH rows (a, alpha, d, theta) with q already added."""
    T = np.eye(4)
    for a, alpha, d, theta in rows:
        T = T @ Rz(theta) @ Tz(d) @ Tx(a) @ Rx(alpha)
    return T


def modified(rows: list[tuple[float, float, float, float]]) -> np.ndarray:
    """Product of modified DH rows (a_{i-1}, alpha_{i-1}, d_i, theta_i) with q already added."""
    T = np.eye(4)
    for a, alpha, d, theta in rows:
        T = T @ Rx(alpha) @ Tx(a) @ Rz(theta) @ Tz(d)
    return T


# --- the same arm written both ways --------------------------------------------------------------


def test_planar_2r_standard_and_modified_agree_with_closed_form(rng: np.random.Generator) -> None:
    a1, a2 = 0.7, 0.4
    # Standard: link lengths sit on the joints' own rows.
    std = from_dh([DHRow(a=a1), DHRow(a=a2)], "standard")
    # Modified: a row carries the previous link's length; the last one becomes the tool.
    mod = from_dh([DHRow(a=0.0), DHRow(a=a1)], "modified", tool=Tx(a2))
    for t1, t2 in rng.uniform(-PI, PI, size=(30, 2)):
        want = [a1 * np.cos(t1) + a2 * np.cos(t1 + t2), a1 * np.sin(t1) + a2 * np.sin(t1 + t2), 0.0]
        np.testing.assert_allclose(std.fk([t1, t2])[:3, 3], want, atol=1e-12)
        np.testing.assert_allclose(mod.fk([t1, t2]), std.fk([t1, t2]), atol=1e-12)


def test_spatial_2r_standard_and_modified_agree(rng: np.random.Generator) -> None:
    # Standard rows (a, alpha, d): (a1, pi/2, d1), (a2, 0, 0).
    #   T = Rz(q1) Tz(d1) Tx(a1) Rx(pi/2) Rz(q2) Tx(a2)
    # Modified rows (a_{i-1}, alpha_{i-1}, d_i): (0, 0, d1), (a1, pi/2, 0), tool Tx(a2).
    #   T = Rz(q1) Tz(d1) Rx(pi/2) Tx(a1) Rz(q2) Tx(a2)
    # Equal because Tx and Rx commute.
    a1, a2, d1 = 0.3, 0.5, 0.2
    std = from_dh([DHRow(a=a1, alpha=PI / 2, d=d1), DHRow(a=a2)], "standard")
    mod = from_dh([DHRow(d=d1), DHRow(a=a1, alpha=PI / 2)], "modified", tool=Tx(a2))
    for q1, q2 in rng.uniform(-PI, PI, size=(30, 2)):
        want = Rz(q1) @ Tz(d1) @ Tx(a1) @ Rx(PI / 2) @ Rz(q2) @ Tx(a2)
        np.testing.assert_allclose(std.fk([q1, q2]), want, atol=1e-12)
        np.testing.assert_allclose(mod.fk([q1, q2]), want, atol=1e-12)
    # By hand at q = 0: out a1 + a2 along x, up d1.
    np.testing.assert_allclose(std.fk([0, 0])[:3, 3], [a1 + a2, 0, d1], atol=1e-15)
    # At q2 = pi/2 the second link points along the first frame's y, which Rx(pi/2) turned to +z.
    np.testing.assert_allclose(std.fk([0, PI / 2])[:3, 3], [a1, 0, d1 + a2], atol=1e-15)


def test_standard_rows_with_theta_offsets(rng: np.random.Generator) -> None:
    rows = [(0.1, -PI / 2, 0.3, 0.2), (0.4, 0.3, 0.05, -0.5), (0.0, PI / 2, 0.1, 1.0)]
    m = from_dh([DHRow(a=a, alpha=al, d=d, theta=th) for a, al, d, th in rows], "standard")
    for q in rng.uniform(-PI, PI, size=(20, 3)):
        want = standard([(a, al, d, th + qi) for (a, al, d, th), qi in zip(rows, q)])
        np.testing.assert_allclose(m.fk(q), want, atol=1e-12)


def test_modified_rows_with_theta_offsets(rng: np.random.Generator) -> None:
    rows = [(0.0, 0.0, 0.3, 0.2), (0.4, -PI / 2, 0.05, -0.5), (0.2, 0.7, 0.1, 1.0)]
    m = from_dh([DHRow(a=a, alpha=al, d=d, theta=th) for a, al, d, th in rows], "modified")
    for q in rng.uniform(-PI, PI, size=(20, 3)):
        want = modified([(a, al, d, th + qi) for (a, al, d, th), qi in zip(rows, q)])
        np.testing.assert_allclose(m.fk(q), want, atol=1e-12)


# --- prismatic rows ------------------------------------------------------------------------------


def test_standard_prismatic_row_adds_q_to_d(rng: np.random.Generator) -> None:
    # A cylindrical robot: base rotation, vertical lift, horizontal reach.
    rows = [
        DHRow(d=0.5),
        DHRow(type="prismatic", alpha=-PI / 2, d=0.1, theta=0.0, limits=(0.0, 1.0)),
        DHRow(type="prismatic", d=0.2, limits=(0.0, 0.5)),
    ]
    m = from_dh(rows, "standard")
    assert m.joint_names == ("joint1", "joint2", "joint3")
    np.testing.assert_array_equal(m.limits[1:], [[0.0, 1.0], [0.0, 0.5]])
    for q1, q2, q3 in m.random_configuration(20, rng):
        want = standard([(0, 0, 0.5, q1), (0, -PI / 2, 0.1 + q2, 0.0), (0, 0, 0.2 + q3, 0.0)])
        np.testing.assert_allclose(m.fk([q1, q2, q3]), want, atol=1e-12)
    # By hand at q1 = 0: lift goes up z, then Rx(-pi/2) turns the reach axis to +y.
    np.testing.assert_allclose(
        m.fk([0.0, 0.3, 0.1])[:3, 3], [0.0, 0.2 + 0.1, 0.5 + 0.1 + 0.3], atol=1e-15
    )


def test_modified_prismatic_row_adds_q_to_d(rng: np.random.Generator) -> None:
    rows = [DHRow(d=0.5), DHRow(type="prismatic", a=0.1, alpha=-PI / 2, d=0.1, theta=0.3)]
    m = from_dh(rows, "modified")
    for q1, q2 in rng.uniform(-1, 1, size=(20, 2)):
        want = modified([(0, 0, 0.5, q1), (0.1, -PI / 2, 0.1 + q2, 0.3)])
        np.testing.assert_allclose(m.fk([q1, q2]), want, atol=1e-12)


def test_prismatic_jacobian_column_is_the_axis(fd_jacobian) -> None:
    m = from_dh([DHRow(d=0.5), DHRow(type="prismatic", alpha=-PI / 2, d=0.1)], "standard")
    q = np.array([0.4, 0.2])
    J = m.jacobian(q)
    np.testing.assert_allclose(J[3:, 1], 0.0, atol=1e-15)  # a slide does not rotate
    np.testing.assert_allclose(J[:3, 1], Rz(0.4)[:3, 2], atol=1e-15)  # along joint 2's z axis
    np.testing.assert_allclose(J, fd_jacobian(m, q), atol=1e-7)


# --- names, base, tool ---------------------------------------------------------------------------


def test_dh_names_base_and_tool(rng: np.random.Generator) -> None:
    base = Tz(0.25) @ Rz(0.5)
    tool = Tx(0.05) @ Rx(0.2)
    rows = [DHRow(a=0.3, name="shoulder", limits=(-1, 1)), DHRow(a=0.2, alpha=0.4, name="elbow")]
    m = from_dh(rows, "standard", name="arm2", base=base, tool=tool, tool_name="tcp")
    assert m.name == "arm2"
    assert m.joint_names == ("shoulder", "elbow")
    assert m.frame_names == ("link0", "link1", "link2", "tcp")
    assert m.end_effectors == ("tcp",)
    assert m.metadata["dh_convention"] == "standard"
    np.testing.assert_array_equal(m.limits, [[-1, 1], [-np.inf, np.inf]])
    for q1, q2 in rng.uniform(-1, 1, size=(10, 2)):
        frames = m.fk_all([q1, q2])
        np.testing.assert_allclose(frames[0], base, atol=1e-15)
        # In the standard convention link_i sits on joint i's axis, turned by q_i
        # (A_1 ... A_{i-1} Rz(theta_i)); the full row product A_1 ... A_n is the tool's
        # parent. (In the modified convention link_i is DH frame i; see below.)
        np.testing.assert_allclose(frames[1], base @ Rz(q1), atol=1e-12)
        A1 = standard([(0.3, 0, 0, q1)])
        np.testing.assert_allclose(frames[2], base @ A1 @ Rz(q2), atol=1e-12)
        want = base @ standard([(0.3, 0, 0, q1), (0.2, 0.4, 0, q2)])
        np.testing.assert_allclose(m.fk([q1, q2], "tcp"), want @ tool, atol=1e-12)


def test_dh_modified_link_frames(rng: np.random.Generator) -> None:
    rows = [DHRow(d=0.3), DHRow(a=0.2, alpha=-PI / 2), DHRow(a=0.1, alpha=PI / 2, d=0.4)]
    m = from_dh(rows, "modified")
    q = rng.uniform(-1, 1, size=3)
    frames = m.fk_all(q)
    raw = [(0, 0, 0.3, q[0]), (0.2, -PI / 2, 0, q[1]), (0.1, PI / 2, 0.4, q[2])]
    for i in range(1, 4):
        np.testing.assert_allclose(frames[i], modified(raw[:i]), atol=1e-12)
    np.testing.assert_allclose(m.fk(q, "flange"), frames[3], atol=0)  # no tool: flange = frame n


# --- bad tables ----------------------------------------------------------------------------------


@pytest.mark.parametrize("convention", ["craig", "Standard", "", "distal"])
def test_bad_convention(convention: str) -> None:
    with pytest.raises(UnsupportedError, match="'standard' or 'modified'") as info:
        from_dh([DHRow(a=1.0)], convention)
    assert repr(convention) in str(info.value)


def test_empty_table() -> None:
    with pytest.raises(InvalidValueError, match="at least one row"):
        from_dh([], "standard")


@pytest.mark.parametrize("jtype", ["fixed", "continuous", "ball"])
def test_unsupported_row_type(jtype: str) -> None:
    with pytest.raises(UnsupportedError, match=f"DH row 2: joint type '{jtype}'"):
        from_dh([DHRow(a=1.0), DHRow(a=1.0, type=jtype)], "standard")


@pytest.mark.parametrize("field", ["a", "alpha", "d", "theta"])
def test_nan_in_row(field: str) -> None:
    with pytest.raises(InvalidValueError, match="DH row 1 contains NaN or inf"):
        from_dh([DHRow(**{field: np.nan})], "modified")


def test_bad_limits_in_row() -> None:
    with pytest.raises(InvalidValueError, match="lo <= hi"):
        from_dh([DHRow(a=1.0, limits=(1.0, -1.0))])


def test_bad_q_on_a_dh_arm() -> None:
    m = from_dh([DHRow(a=1.0), DHRow(a=1.0)])
    with pytest.raises(InvalidValueError, match="NaN"):
        m.fk([0.0, np.nan])
    with pytest.raises(ShapeError, match=r"\(\.\.\., 2\)"):
        m.fk([0.0, 0.0, 0.0])
    with pytest.raises(ShapeError):
        m.jacobian([0.0])
