"""The ik, animate and bvh commands of the CLI."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from typer.testing import CliRunner

import kinetree
from kinetree.cli import app

DATA = Path(__file__).resolve().parents[1] / "data" / "bvh"
runner = CliRunner()


def test_ik_solves_and_the_printed_q_reaches_the_target() -> None:
    res = runner.invoke(app, ["ik", "planar2r", "-t", "1.0", "0.9", "0", "--tol", "1e-9"])
    assert res.exit_code == 0, res.output
    assert "success: True" in res.output
    rows = [line.split() for line in res.output.splitlines() if line.strip().startswith("joint")]
    q = [float(r[1]) for r in rows if r[1][0] in "-0123456789"]
    m = kinetree.load("planar2r")
    np.testing.assert_allclose(m.fk(np.array(q))[:3, 3], [1.0, 0.9, 0.0], atol=1e-5)


def test_ik_with_orientation_in_degrees() -> None:
    res = runner.invoke(
        app, ["ik", "panda", "-t", "0.4", "0.1", "0.5", "--rpy", "180", "0", "0", "--deg"]
    )
    assert res.exit_code == 0, res.output
    assert "success: True" in res.output and "deg, m" in res.output


def test_ik_unreachable_exits_1_with_a_reason() -> None:
    res = runner.invoke(app, ["ik", "planar2r", "-t", "3", "0", "0"])
    assert res.exit_code == 1
    assert "out of reach" in res.output


def test_ik_unknown_method_is_a_clean_error() -> None:
    res = runner.invoke(app, ["ik", "planar2r", "-t", "1", "0", "0", "-m", "magic"])
    assert res.exit_code == 2
    assert "method 'magic' not found" in res.output and "dls" in res.output


def test_animate_writes_a_gif(tmp_path: Path) -> None:
    out = tmp_path / "reach.gif"
    res = runner.invoke(
        app, ["animate", "planar2r", "-t", "0.5", "1.2", "0", "-o", str(out), "--step", "0.3"]
    )
    assert res.exit_code == 0, res.output
    with Image.open(out) as im:
        assert im.n_frames > 3


def test_animate_bad_suffix_is_a_clean_error(tmp_path: Path) -> None:
    res = runner.invoke(
        app, ["animate", "planar2r", "-t", "0.5", "1.2", "0", "-o", str(tmp_path / "x.avi")]
    )
    assert res.exit_code == 2
    assert ".gif" in res.output


def test_bvh_info_and_fk() -> None:
    path = DATA / "rotation_first_root.bvh"
    res = runner.invoke(app, ["bvh", "info", str(path)])
    assert res.exit_code == 0, res.output
    assert "4 frames" in res.output and "LeftLeg_end" in res.output
    # End Sites are not joints: counted apart.
    assert "4 joints, 2 end sites, 15 channels" in res.output
    res = runner.invoke(app, ["bvh", "fk", str(path), "-n", "2"])
    assert res.exit_code == 0, res.output
    clip = kinetree.read_bvh(path)
    hips = clip.joint_positions()[2, 0]
    row = next(line for line in res.output.splitlines() if line.strip().startswith("Hips"))
    np.testing.assert_allclose([float(v) for v in row.split()[1:]], hips, atol=1e-4)
    res = runner.invoke(app, ["bvh", "fk", str(path), "-n", "9"])
    # The motion frame is --index/-n; --frame is a frame (joint) name, as everywhere.
    assert res.exit_code == 2 and "--index" in res.output


def test_bvh_retarget_moves_the_joint(tmp_path: Path) -> None:
    src = DATA / "rotation_first_root.bvh"
    out = tmp_path / "moved.bvh"
    res = runner.invoke(
        app,
        ["bvh", "retarget", str(src), "-j", "Head_end", "--offset", "1", "0", "0", "-a", "Spine",
         "-a", "Head", "-o", str(out)],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    a, b = kinetree.read_bvh(src), kinetree.read_bvh(out)
    k = a.joint_names.index("Head_end")
    np.testing.assert_allclose(
        b.joint_positions()[:, k], a.joint_positions()[:, k] + [1, 0, 0], atol=1e-5
    )
    # joints outside --active are untouched: the leg keeps its place
    leg = a.joint_names.index("LeftLeg_end")
    np.testing.assert_allclose(b.joint_positions()[:, leg], a.joint_positions()[:, leg], atol=1e-9)


@pytest.mark.parametrize(
    "cmd", [["bvh", "info", "missing.bvh"], ["ik", "nosuchmodel", "-t", "0", "0", "0"]]
)
def test_missing_inputs_are_clean_errors(cmd: list[str]) -> None:
    res = runner.invoke(app, cmd)
    assert res.exit_code == 2
    assert res.output.startswith("error:") or "error:" in res.output
