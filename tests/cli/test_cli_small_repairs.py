"""Small repairs of the command line (issue 32's low items): exit codes, widths, option
letters, units, defaults shared with the Python API."""

from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import kinetree
from kinetree.cli import app
from kinetree.cli._app import WIDTH


def run(*args: str):
    return CliRunner().invoke(app, list(args))


def test_info_of_a_bvh_stays_within_the_width_and_keeps_every_name():
    r = run("info", "cmu_walk")
    assert r.exit_code == 0, r.output
    assert max(len(line) for line in r.output.splitlines()) <= WIDTH
    clip = kinetree.load(str(kinetree.data.path("cmu_walk")))
    words = set(r.output.replace(",", " ").split())
    assert set(clip.joint_names) <= words  # wrapped, not cut
    assert set(clip.end_effectors) <= words


def test_animate_out_of_reach_exits_nonzero(tmp_path: Path):
    out = tmp_path / "reach.gif"
    r = run("animate", "planar2r", "-t", "10", "0", "0", "-o", str(out), "--no-meshes",
            "--step", "0.5")  # fmt: skip
    assert r.exit_code == 1, r.output
    assert out.is_file()  # the animation is still written
    assert "error: the target was not reached" in r.output


def test_reach_map_of_a_planar_arm_is_an_area():
    from kinetree import workspace

    arm = kinetree.load("planar2r")
    rmap = workspace.reachability(arm, resolution=0.1, orientations=0, restarts=2)
    reached = np.argwhere(rmap.index > 0)
    assert len(reached) > 10
    flat = [d for d in range(3) if np.ptp(reached[:, d]) == 0]
    assert len(flat) == 1  # one layer of voxels: the arm's plane
    assert rmap.reachable_dims == 2
    assert rmap.reachable_size == pytest.approx(len(reached) * 0.1**2)
    assert "m^2" in rmap.summary() and "m^3" not in rmap.summary()
    spatial = workspace.reachability(
        kinetree.load("panda"), resolution=0.4, orientations=0, restarts=1
    )
    assert spatial.reachable_dims == 3 and "m^3" in spatial.summary()


def test_learn_prior_epochs_default_is_the_api_default():
    from kinetree.cli.learn import prior_cmd
    from kinetree.learn import train_pose_prior

    cli = inspect.signature(prior_cmd).parameters["epochs"].default
    api = inspect.signature(train_pose_prior).parameters["epochs"].default
    assert cli == api


def test_view_names_frames_with_f_and_keeps_t_with_a_warning():
    pytest.importorskip("viser")
    new = run("view", "panda", "-f", "flange", "--port", "0", "--timeout", "0.2")
    assert new.exit_code == 0, new.output
    assert "deprecated" not in new.output
    old = run("view", "panda", "-t", "flange", "--port", "0", "--timeout", "0.2")
    assert old.exit_code == 0, old.output
    assert "view --target/-t moved to kinetree view --frame/-f" in old.output
