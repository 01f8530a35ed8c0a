"""The ``kinetree`` command line (kinetree.cli), driven through typer's CliRunner."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from kinetree import models
from kinetree.cli import app, table

runner = CliRunner()

MIMIC_URDF = """<?xml version="1.0"?>
<robot name="gripper">
  <link name="base"/><link name="finger_a"/><link name="finger_b"/><link name="rail"/>
  <joint name="finger_a_joint" type="revolute">
    <parent link="base"/><child link="finger_a"/><axis xyz="0 0 1"/>
    <limit lower="-0.5" upper="1.0" effort="1" velocity="1"/>
  </joint>
  <joint name="finger_b_joint" type="revolute">
    <parent link="base"/><child link="finger_b"/><axis xyz="0 0 -1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/>
    <mimic joint="finger_a_joint" multiplier="-2" offset="0.5"/>
  </joint>
  <joint name="rail_joint" type="prismatic">
    <parent link="base"/><child link="rail"/><origin xyz="0 0 0.1"/><axis xyz="1 0 0"/>
    <limit lower="0" upper="0.2" effort="1" velocity="1"/>
  </joint>
</robot>
"""


def run(*args: str):
    return runner.invoke(app, [str(a) for a in args])


def numbers(line: str) -> list[float]:
    return [float(x) for x in re.findall(r"-?\d+\.\d+", line)]


def line_starting(output: str, prefix: str) -> str:
    hits = [ln for ln in output.splitlines() if ln.startswith(prefix)]
    assert hits, f"no line starting with {prefix!r} in:\n{output}"
    return hits[0]


@pytest.fixture
def gripper_file(tmp_path: Path) -> Path:
    p = tmp_path / "gripper.urdf"
    p.write_text(MIMIC_URDF)
    return p


# --- models --------------------------------------------------------------------------------------


def test_models_lists_every_builtin() -> None:
    r = run("models")
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0].split()[:3] == ["name", "dof", "end"]
    for name in models.available():
        m = models.get(name)
        row = next(ln for ln in lines if ln.split()[0] == name)
        assert row.split()[1] == str(m.dof)
        assert ", ".join(m.end_effectors) in row
    # One-line descriptions from the factory docstrings.
    assert "Franka Emika Panda" in r.stdout
    assert "3-DoF manipulator of seed 003" in r.stdout
    assert ":func:" not in r.stdout and "``" not in r.stdout


def test_models_table_is_aligned() -> None:
    lines = run("models").stdout.splitlines()
    col = lines[0].index("dof")
    assert lines[1][col - 2 : col] == "  "  # the rule breaks between columns
    rows = [ln for ln in lines[2:] if not ln.startswith(" ")]  # descriptions are indented
    assert len(rows) == len(models.available())
    for ln in rows:
        assert ln[col - 1] == " " and ln[col].isdigit()


def test_models_fits_80_columns() -> None:
    lines = run("models").stdout.splitlines()
    assert max(len(ln) for ln in lines) <= 80
    # Each model's description is on the line below its row, indented.
    i = next(k for k, ln in enumerate(lines) if ln.split()[:1] == ["panda"])
    assert lines[i + 1].startswith("    Franka Emika Panda")


# --- info ----------------------------------------------------------------------------------------


def test_info_panda_joints_in_degrees() -> None:
    r = run("info", "panda")
    assert r.exit_code == 0, r.output
    out = r.stdout
    assert "model: panda" in out
    assert "dof: 7" in out
    row = next(ln for ln in out.splitlines() if ln.split()[1:2] == ["joint4"])
    assert "revolute" in row and "+z" in row
    # -3.0718 .. -0.0698 rad in degrees.
    assert f"{np.degrees(-3.0718):.1f} deg" in row
    assert f"{np.degrees(-0.0698):.1f} deg" in row
    assert "end effectors: flange" in out
    assert "presets" not in out  # the panda has none


def test_info_humanoid_groups_frames_presets() -> None:
    out = run("info", "humanoid").stdout
    shoulder_rows = [
        ln for ln in out.splitlines() if ln.split()[1:2] in (["shoulder_r_x"], ["shoulder_r_y"])
    ]
    assert len(shoulder_rows) == 2 and all("shoulder_r" in ln.split()[2] for ln in shoulder_rows)
    # Hidden ball-joint nodes never show; frames list parents and end effector marks.
    assert "#" not in out.split("\nframes:")[1]
    hand = next(ln for ln in out.splitlines() if ln.split()[:1] == ["hand_r"])
    assert hand.split()[1] == "palm_r" and hand.rstrip().endswith("*")
    assert "end effectors: hand_r, hand_l, foot_r, foot_l, head" in out
    preset = next(ln for ln in out.splitlines() if ln.split()[:1] == ["right_arm"])
    assert preset.split()[1] == "6"
    assert "shoulder_r, elbow_r, wrist_r" in preset


def test_info_urdf_file_continuous_prismatic_and_mimic(gripper_file: Path) -> None:
    r = run("info", gripper_file)
    assert r.exit_code == 0, r.output
    out = r.stdout
    assert "model: gripper" in out
    assert str(gripper_file) in out
    assert "dof: 2" in out
    rail = next(ln for ln in out.splitlines() if "rail_joint" in ln and "prismatic" in ln)
    assert "0.0000 m" in rail and "0.2000 m" in rail and "+x" in rail
    assert "mimic joints" in out
    mimic = next(ln for ln in out.splitlines() if ln.split()[:1] == ["finger_b_joint"])
    assert mimic.split()[1:] == ["finger_a_joint", "-2", "0.5"]


def test_info_continuous_joint_shows_inf(tmp_path: Path) -> None:
    p = tmp_path / "wheel.urdf"
    p.write_text(
        '<robot name="wheel"><link name="a"/><link name="b"/>'
        '<joint name="spin" type="continuous"><parent link="a"/><child link="b"/>'
        '<axis xyz="0 1 0"/></joint></robot>'
    )
    out = run("info", p).stdout
    row = next(ln for ln in out.splitlines() if ln.split()[1:2] == ["spin"])
    assert row.split()[2:] == ["continuous", "+y", "-inf", "inf"]


# --- fk ------------------------------------------------------------------------------------------


def test_fk_panda_ready_pose_in_degrees() -> None:
    r = run("fk", "panda", "0", "-45", "0", "-135", "0", "90", "45", "--deg")
    assert r.exit_code == 0, r.output
    pos = numbers(line_starting(r.stdout, "position"))
    np.testing.assert_allclose(pos, [0.307, 0.0, 0.590], atol=1e-3)
    q = numbers(line_starting(r.stdout, "q "))
    np.testing.assert_allclose(q, np.radians([0, -45, 0, -135, 0, 90, 45]), atol=1e-6)


def test_fk_prints_the_pose_matrix() -> None:
    q = [0.1, -0.4, 0.2, -2.0, 0.3, 1.5, -0.6]
    r = run("fk", "panda", *q)
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    i = lines.index("pose:")
    printed = np.array([numbers(ln) for ln in lines[i + 1 : i + 5]])
    np.testing.assert_allclose(printed, models.get("panda").fk(q), atol=1e-6)
    rpy = numbers(line_starting(r.stdout, "rpy [rad]"))
    from kinetree.spatial import rpy_to_matrix

    np.testing.assert_allclose(rpy_to_matrix(rpy), printed[:3, :3], atol=1e-5)
    rpy_deg = numbers(line_starting(r.stdout, "rpy [deg]"))
    np.testing.assert_allclose(rpy_deg, np.degrees(rpy), atol=1e-3)


def test_fk_frame_option() -> None:
    r = run("fk", "humanoid", *(["0"] * 37), "--frame", "head")
    assert r.exit_code == 0, r.output
    want = models.get("humanoid").fk(np.zeros(37), "head")[:3, 3]
    np.testing.assert_allclose(numbers(line_starting(r.stdout, "position")), want, atol=1e-6)
    r = run("fk", "planar2r", "0", "0", "-f", "link2")
    np.testing.assert_allclose(numbers(line_starting(r.stdout, "position")), [1.0, 0, 0], atol=1e-9)


def test_fk_deg_leaves_prismatic_values_in_metres(gripper_file: Path) -> None:
    r = run("fk", gripper_file, "90", "0.15", "--deg", "--frame", "rail")
    assert r.exit_code == 0, r.output
    np.testing.assert_allclose(
        numbers(line_starting(r.stdout, "position")), [0.15, 0, 0.1], atol=1e-9
    )
    np.testing.assert_allclose(numbers(line_starting(r.stdout, "q "))[0], np.pi / 2, atol=1e-6)


def test_fk_notes_values_outside_the_limits() -> None:
    r = run("fk", "zxx_arm", "0", "0", "-0.5")
    assert r.exit_code == 0, r.output
    assert "outside the joint limits: joint3" in r.stdout
    assert "outside" not in run("fk", "zxx_arm", "0", "0", "0.5").stdout


@pytest.mark.parametrize("values", [["0", "1", "2"], [], ["0"] * 8])
def test_fk_wrong_number_of_values(values: list[str]) -> None:
    r = run("fk", "panda", *values)
    assert r.exit_code == 2
    assert "error: panda takes 7 joint values (joint1, joint2" in r.output
    assert f"got {len(values)}" in r.output
    assert "Traceback" not in r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)


def test_fk_unknown_frame() -> None:
    r = run("fk", "planar2r", "0", "0", "--frame", "hand")
    assert r.exit_code == 2
    assert r.stderr.startswith(
        "error: frame 'hand' not found; valid frames are: base, link1, link2, tip"
    )
    assert r.stdout == ""


def test_fk_nan_value() -> None:
    r = run("fk", "planar2r", "nan", "0")
    assert r.exit_code == 2
    assert "error: q contains NaN or inf" in r.stderr


def test_fk_non_numeric_value_is_a_usage_error() -> None:
    r = run("fk", "planar2r", "1", "abc")
    assert r.exit_code == 2
    assert "Traceback" not in r.output


# --- errors at the edge --------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["info", "fk"])
def test_unknown_model_lists_builtins(command: str) -> None:
    r = run(command, "pandaa")
    assert r.exit_code == 2
    assert r.stderr.startswith("error: model 'pandaa' not found; built-in models are: planar2r")
    assert "quadruped" in r.stderr


def test_missing_and_unsupported_files(tmp_path: Path) -> None:
    r = run("info", tmp_path / "missing.urdf")
    assert r.exit_code == 2 and "error: file" in r.stderr and "does not exist" in r.stderr
    r = run("info", tmp_path / "robot.txt")
    assert r.exit_code == 2 and "file type '.txt' is not supported" in r.stderr
    bad = tmp_path / "bad.urdf"
    bad.write_text("<robot")
    r = run("fk", bad, "0")
    assert r.exit_code == 2 and "not well-formed XML" in r.stderr
    cyc = tmp_path / "cycle.urdf"
    cyc.write_text(
        '<robot name="c"><link name="a"/><link name="b"/>'
        '<joint name="j1" type="fixed"><parent link="a"/><child link="b"/></joint>'
        '<joint name="j2" type="fixed"><parent link="b"/><child link="a"/></joint></robot>'
    )
    r = run("info", cyc)
    assert r.exit_code == 2 and r.stderr.startswith("error: ") and "cycle" in r.stderr
    assert r.exception is None or isinstance(r.exception, SystemExit)


def test_no_command_shows_help() -> None:
    r = run()
    assert "models" in r.output and "info" in r.output and "fk" in r.output


def test_version() -> None:
    import kinetree

    r = run("--version")
    assert r.exit_code == 0
    assert r.stdout.strip() == f"kinetree {kinetree.__version__}"


def test_help_of_each_command() -> None:
    for cmd in ("models", "info", "fk"):
        r = run(cmd, "--help")
        assert r.exit_code == 0, r.output
    assert "--deg" in run("fk", "--help").stdout


def test_console_script_is_declared() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    scripts = tomllib.loads(pyproject.read_text())["project"]["scripts"]
    assert scripts["kinetree"] == "kinetree.cli:main"
    from kinetree.cli import main

    assert callable(main)


def test_table_helper() -> None:
    out = table(["a", "long header"], [[1, "x"], ["wide cell", 2.5]], indent="")
    lines = out.splitlines()
    assert lines[0] == "a          long header"
    assert lines[1] == "---------  -----------"
    assert lines[3] == "wide cell  2.5"
