"""Command-line flags: help text, option parsing, --json, --q0/--seed, bundled data,
output folders and exit codes (0 ok, 1 solve failed, 2 bad input)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import kinetree
from kinetree import data, models
from kinetree.cli import EXIT_FAILED, EXIT_OK, EXIT_USAGE, app
from kinetree.ik import METHODS

DATA = Path(__file__).resolve().parents[1] / "data" / "bvh"
runner = CliRunner()


def run(*args: object):
    return runner.invoke(app, [str(a) for a in args])


def flat(text: str) -> str:
    """Help text with the line wrapping undone."""
    return " ".join(text.split())


# --- help ----------------------------------------------------------------------------------------


def test_exit_code_constants() -> None:
    assert (EXIT_OK, EXIT_FAILED, EXIT_USAGE) == (0, 1, 2)


@pytest.mark.parametrize(
    "cmd", [[], ["models"], ["info"], ["fk"], ["ik"], ["animate"], ["bvh"], ["bvh", "retarget"]]
)
def test_help_documents_the_exit_codes(cmd: list[str]) -> None:
    r = run(*cmd, "--help")
    assert r.exit_code == 0, r.output
    text = flat(r.stdout)
    assert "Exit codes: 0 ok; 1 solve failed" in text and "2 bad input or usage" in text
    assert max(len(ln) for ln in r.stdout.splitlines()) <= 80


def test_ik_help_shows_units_methods_and_metavars() -> None:
    text = flat(run("ik", "--help").stdout)
    assert "Target position (m)." in text
    assert "Tolerance (m for position, rad for rotation)." in text
    assert "-t, --target X Y Z" in text and "--rpy ROLL PITCH YAW" in text
    assert "<float,float,float>" not in text
    for method in METHODS:
        assert method in text
    assert "--q0" in text and "--seed N" in text and "--json" in text


def test_retarget_help_metavars() -> None:
    text = flat(run("bvh", "retarget", "--help").stdout)
    assert "--offset DX DY DZ" in text and "<float" not in text
    assert "-a, --active NAME" in text


# --- parsing -------------------------------------------------------------------------------------


def test_unknown_option_is_reported_as_such_with_suggestions() -> None:
    r = run("fk", "planar2r", "0", "-0.5", "--degs")
    assert r.exit_code == EXIT_USAGE
    assert "no such option: --degs" in r.output.lower()
    assert "--deg" in r.output.replace("--degs", "")
    assert "Invalid value" not in r.output


def test_unknown_option_on_ik() -> None:
    r = run("ik", "planar2r", "-t", "1", "0", "0", "--tolerance", "1e-3")
    assert r.exit_code == EXIT_USAGE
    assert "no such option: --tolerance" in r.output.lower()


def test_negative_joint_values_anywhere() -> None:
    want = models.get("planar2r").fk([-0.5, 0.25])
    for args in (["-0.5", "0.25"], ["-f", "tip", "-0.5", "0.25"], ["--", "-0.5", "0.25"]):
        r = run("fk", "--json", "planar2r", *args)
        assert r.exit_code == 0, r.output
        np.testing.assert_array_equal(json.loads(r.stdout)["pose"], want)
    r = run("fk", "planar2r", "-.5", "-1e-3", "--json")
    assert json.loads(r.stdout)["q"] == [-0.5, -0.001]


def test_negative_values_in_options() -> None:
    r = run("ik", "planar2r", "-t", "-1.0", "-0.9", "0", "--json")
    assert r.exit_code == 0, r.output
    q = json.loads(r.stdout)["q"]
    np.testing.assert_allclose(models.get("planar2r").fk(q)[:3, 3], [-1, -0.9, 0], atol=1e-6)


def test_fk_prints_q_with_full_precision() -> None:
    q = [1 / 3, -np.pi / 7]
    r = run("fk", "planar2r", *(repr(v) for v in q))
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("q "))
    assert [float(v) for v in line.split(":", 1)[1].split()] == q  # exact round trip


def test_ik_prints_q_with_full_precision() -> None:
    r = run("ik", "planar2r", "-t", "1.0", "0.9", "0", "--seed", "1")
    rows = [ln.split() for ln in r.stdout.splitlines() if ln.strip().startswith("joint")]
    printed = [float(row[1]) for row in rows if row[1][0] in "-0123456789"]
    as_json = json.loads(
        run("ik", "planar2r", "-t", "1.0", "0.9", "0", "--seed", "1", "--json").stdout
    )
    assert printed == as_json["q"]


# --- json ----------------------------------------------------------------------------------------


def test_fk_json_is_exact() -> None:
    q = [0.1, -0.4, 0.2, -2.0, 0.3, 1.5, -0.6]
    r = run("fk", "panda", *q, "--json", "-f", "link4")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["frame"] == "link4" and out["q"] == q and out["outside_limits"] == []
    np.testing.assert_array_equal(out["pose"], models.get("panda").fk(q, "link4"))


def test_fk_json_with_degrees_reports_radians() -> None:
    out = json.loads(run("fk", "planar2r", "90", "0", "--deg", "--json").stdout)
    np.testing.assert_allclose(out["q"], [np.pi / 2, 0.0])


def test_ik_json_and_failure_exit_code() -> None:
    r = run("ik", "planar2r", "-t", "3", "0", "0", "--json")
    assert r.exit_code == EXIT_FAILED
    out = json.loads(r.stdout)
    assert out["success"] is False and "reach" in out["message"]
    assert len(out["q"]) == 2 and out["joint_names"] == ["joint1", "joint2"]


def test_info_json() -> None:
    out = json.loads(run("info", "humanoid", "--json").stdout)
    m = models.get("humanoid")
    assert out["dof"] == m.dof and len(out["joints"]) == m.dof
    assert out["presets"]["right_arm"]["dof"] == 6
    assert out["end_effectors"] == list(m.end_effectors)
    ur5 = json.loads(run("info", "ur5", "--json").stdout)
    assert ur5["joints"][0]["axis"] == [0.0, 0.0, 1.0]


def test_info_json_infinite_limits_are_null(tmp_path: Path) -> None:
    p = tmp_path / "wheel.urdf"
    p.write_text(
        '<robot name="wheel"><link name="a"/><link name="b"/>'
        '<joint name="spin" type="continuous"><parent link="a"/><child link="b"/>'
        '<axis xyz="0 1 0"/></joint></robot>'
    )
    joint = json.loads(run("info", p, "--json").stdout)["joints"][0]
    assert joint["type"] == "continuous" and joint["lower"] is None and joint["upper"] is None


def test_models_json() -> None:
    out = json.loads(run("models", "--json").stdout)
    assert [m["name"] for m in out] == list(models.available())
    assert out[0]["dof"] == 2


def test_bvh_info_json_counts_end_sites_apart() -> None:
    out = json.loads(run("bvh", "info", DATA / "rotation_first_root.bvh", "--json").stdout)
    assert (out["joints"], out["end_sites"], out["channels"], out["frames"]) == (4, 2, 15, 4)
    ends = [j["name"] for j in out["skeleton"] if j["end_site"]]
    assert ends == ["Head_end", "LeftLeg_end"]


# --- ik options ----------------------------------------------------------------------------------


def test_ik_q0_picks_the_branch() -> None:
    # planar2r reaches (1, 0.9) elbow up or elbow down; the start decides which.
    up = json.loads(run("ik", "planar2r", "-t", "1", "0.9", "0", "--q0", "0, 1", "--json").stdout)
    down = json.loads(
        run("ik", "planar2r", "-t", "1", "0.9", "0", "--q0", "1.5 -1", "--json").stdout
    )
    assert up["success"] and down["success"]
    assert up["q"][1] > 0 > down["q"][1]


def test_ik_q0_in_degrees_and_wrong_length() -> None:
    r = run("ik", "planar2r", "-t", "1", "0.9", "0", "--q0", "0 60", "--deg", "--json")
    assert json.loads(r.stdout)["q"][1] > 0
    r = run("ik", "planar2r", "-t", "1", "0.9", "0", "--q0", "0 1 2")
    assert r.exit_code == EXIT_USAGE and "--q0: planar2r takes 2 joint values" in r.stderr
    r = run("ik", "planar2r", "-t", "1", "0.9", "0", "--q0", "0 x")
    assert r.exit_code == EXIT_USAGE and "'x' is not a number" in r.stderr


def test_ik_seed_makes_restarts_reproducible() -> None:
    args = ["ik", "panda", "-t", "0.5", "0.3", "0.4", "--rpy", "3", "0.5", "0.2", "--json"]
    a = json.loads(run(*args, "--seed", "7").stdout)
    b = json.loads(run(*args, "--seed", "7").stdout)
    assert a["q"] == b["q"]
    assert run(*args, "--seed", "-1").exit_code == EXIT_USAGE


def test_ik_active_is_repeatable() -> None:
    r = run("ik", "panda", "-t", "0.4", "0.1", "0.5", "-a", "joint1", "-a", "joint2",
            "-a", "joint4", "--json")  # fmt: skip
    assert r.exit_code == 0, r.output
    q = np.array(json.loads(r.stdout)["q"])
    neutral = models.get("panda").neutral()
    np.testing.assert_array_equal(q[[2, 4, 5, 6]], neutral[[2, 4, 5, 6]])


def test_ik_pose_option() -> None:
    T = models.get("panda").fk([0.3, -0.4, 0.2, -2.0, 0.3, 1.5, -0.6])
    r = run("ik", "panda", "--pose", " ".join(map(repr, T.ravel().tolist())), "--json")
    assert r.exit_code == 0, r.output
    q = json.loads(r.stdout)["q"]
    np.testing.assert_allclose(models.get("panda").fk(q), T, atol=1e-6)
    # 12 numbers (the last row implied), commas and brackets are fine too.
    r = run("ik", "panda", "--pose", str(T[:3].tolist()), "--json")
    assert r.exit_code == 0, r.output


@pytest.mark.parametrize(
    ("pose", "message"),
    [
        ("1 0 0 0.3  0 1 0 0  0 0 -1 0.5", "det(R) = -1"),
        ("1 0.01 0 0.3  0 1 0 0  0 0 1 0.5", "max |R^T R - I| = 0.01"),
        ("1 0 0 0.3  0 1 0 0  0 0 1 0.5  0 0 1 1", "last row"),
        ("1 0 0 0.3  0 1 0 0  0 0 1", "16 numbers (or 12"),
    ],
)
def test_ik_pose_refused(pose: str, message: str) -> None:
    r = run("ik", "panda", "--pose", pose)
    assert r.exit_code == EXIT_USAGE
    assert r.stderr.startswith("error: --pose") and message in r.stderr


def test_ik_needs_exactly_one_kind_of_target() -> None:
    r = run("ik", "panda")
    assert r.exit_code == EXIT_USAGE and "give a target" in r.stderr
    r = run("ik", "panda", "-t", "0.3", "0", "0.5", "--pose", " ".join(["0"] * 16))
    assert r.exit_code == EXIT_USAGE and "not both" in r.stderr


# --- bundled data, output folders ----------------------------------------------------------------


def test_bundled_clip_by_name() -> None:
    r = run("bvh", "info", "cmu_walk")
    assert r.exit_code == 0, r.output
    assert "31 joints, 7 end sites, 96 channels, 524 frames" in r.stdout
    r = run("info", "cmu_walk")
    assert r.exit_code == 0 and "dof: 96" in r.stdout
    r = run("bvh", "fk", "cmu_walk", "-n", "3", "--frame", "Head")
    rows = r.stdout.splitlines()[2:]
    assert [row.split()[0] for row in rows] == ["Head"]
    clip = kinetree.read_bvh(data.path("cmu_walk"))
    k = clip.joint_names.index("Head")
    np.testing.assert_allclose([float(v) for v in rows[0].split()[1:]],
                               clip.joint_positions()[3, k], atol=1e-4)  # fmt: skip


def test_unknown_bvh_lists_the_bundled_names() -> None:
    r = run("bvh", "info", "cmu_run")
    assert r.exit_code == EXIT_USAGE
    assert "'cmu_run' does not exist; bundled clips are: cmu_walk" in r.stderr


def test_bvh_fk_unknown_frame_name() -> None:
    r = run("bvh", "fk", "cmu_walk", "--frame", "Hed")
    assert r.exit_code == EXIT_USAGE and "valid frames are" in r.stderr and "Head" in r.stderr


def test_retarget_creates_folders_and_exits_1_on_missed_frames(tmp_path: Path) -> None:
    src = DATA / "rotation_first_root.bvh"
    out = tmp_path / "new" / "deeper" / "far.bvh"
    r = run("bvh", "retarget", src, "-f", "Head_end", "--offset", "100", "0", "0",
            "-a", "Spine", "-a", "Head", "-o", out)  # fmt: skip
    assert r.exit_code == EXIT_FAILED, r.output
    assert f"created folder {out.parent}" in r.stdout
    assert "0/4 frames on target" in r.stdout
    assert "4 frame(s) missed the target" in r.stderr and ": 0, 1, 2, 3" in r.stderr
    assert kinetree.read_bvh(out).n_frames == 4  # written anyway


def test_output_parent_that_is_a_file(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    r = run("bvh", "retarget", DATA / "rotation_first_root.bvh", "-j", "Head_end",
            "--offset", "0", "0", "0", "-o", blocker / "x.bvh")  # fmt: skip
    assert r.exit_code == EXIT_USAGE and "is a file, not a folder" in r.stderr


def test_animate_creates_folders(tmp_path: Path) -> None:
    out = tmp_path / "anim" / "reach.gif"
    r = run("animate", "planar2r", "-t", "0.5", "1.2", "0", "-o", out, "--step", "0.5",
            "-a", "joint1", "-a", "joint2")  # fmt: skip
    assert r.exit_code == 0, r.output
    assert f"created folder {out.parent}" in r.stdout and out.exists()


def test_python_dash_m() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "kinetree", "--version"], capture_output=True, text=True, check=False
    )
    assert r.returncode == 0 and r.stdout.strip() == f"kinetree {kinetree.__version__}"
