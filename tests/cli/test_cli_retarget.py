"""``kinetree retarget``, the output files, data-set runs and the side-by-side GIF."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import kinetree
from kinetree.anim import load_robot
from kinetree.anim.retarget.dataset import retarget_folder
from kinetree.anim.retarget.saving import save_motion
from kinetree.anim.retarget.source import source_in_robot_world
from kinetree.cli import EXIT_FAILED, EXIT_USAGE, app
from kinetree.errors import UnsupportedError

DATA = Path(__file__).resolve().parents[1] / "data" / "bvh"
CMU = DATA / "cmu_12_01_walk.bvh"
runner = CliRunner()


def run(*args: object):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def short_walk(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The CMU walk's first 100 frames as a file (the T-pose frame and a step)."""
    path = tmp_path_factory.mktemp("clips") / "walk_start.bvh"
    kinetree.write_bvh(path, kinetree.read_bvh(CMU).slice(0, 100))
    return path


@pytest.fixture(scope="module")
def motion(short_walk: Path) -> kinetree.anim.Motion:
    return kinetree.retarget(short_walk, "humanoid", "cmu")


def test_cli_one_clip(short_walk: Path, tmp_path: Path) -> None:
    out = tmp_path / "walk.npz"
    r = run("retarget", short_walk, "--robot", "humanoid", "--map", "cmu", "-o", out,
            "--show-map")  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "99 frames onto humanoid" in r.output and "calibration frame 0 left out" in r.output
    assert "ankle_l" in r.output and "within limits: yes" in r.output
    assert "paired:" not in r.output or "ankle_l: LeftFoot" in r.output
    data = np.load(out)
    robot = load_robot("humanoid")
    assert data["q"].shape == (99, robot.nq)
    assert tuple(data["joint_names"]) == robot.joint_names
    assert float(data["fps"]) == pytest.approx(120.0, rel=1e-4)
    assert json.loads(str(data["quality"]))["within_limits"] is True
    assert json.loads(str(data["map"]))["Hips"] == "pelvis"
    assert data["contact/ankle_l"].dtype == bool


def test_cli_json_and_csv(short_walk: Path, tmp_path: Path) -> None:
    out = tmp_path / "walk.csv"
    r = run("retarget", short_walk, "-r", "humanoid", "-o", out, "--json", "--max-speed", "none")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert doc["frames"] == 99 and doc["quality"]["within_limits"]
    header = out.read_text().splitlines()[0].split(",")
    assert header[:2] == ["time", "root_joint_x"]
    table = np.loadtxt(out, delimiter=",", skiprows=1)
    assert table.shape == (99, 1 + load_robot("humanoid").nq)


def test_cli_bad_input(short_walk: Path, tmp_path: Path) -> None:
    r = run("retarget", tmp_path / "nope.bvh", "-r", "humanoid", "-o", tmp_path / "x.npz")
    assert r.exit_code == EXIT_USAGE and "bundled clips are: cmu_walk" in r.output
    r = run("retarget", short_walk, "-r", "humanoid", "-o", tmp_path / "x.txt")
    assert r.exit_code == EXIT_USAGE and "supported: .npz, .csv, .bvh" in r.output
    r = run("retarget", short_walk, "-r", "humanoid", "-o", tmp_path / "x.npz", "--max-speed", "-3")
    assert r.exit_code == EXIT_USAGE and "--max-speed" in r.output
    r = run("retarget", short_walk, "-r", "panda", "-o", tmp_path / "x.npz")
    assert r.exit_code == EXIT_USAGE and "error:" in r.output


def test_save_motion_formats(motion: kinetree.anim.Motion, tmp_path: Path) -> None:
    bvh = save_motion(motion, tmp_path / "sub" / "walk.bvh")
    clip = kinetree.read_bvh(bvh)
    assert clip.n_frames == motion.n_frames
    with pytest.raises(UnsupportedError, match=r"supported: \.npz"):
        save_motion(motion, tmp_path / "walk.json")


def test_folder_run_lists_failures_and_finishes(short_walk: Path, tmp_path: Path) -> None:
    clips = tmp_path / "clips"
    clips.mkdir()
    (clips / "walk.bvh").write_bytes(short_walk.read_bytes())
    (clips / "again").mkdir()
    (clips / "again" / "walk.bvh").write_bytes(short_walk.read_bytes())
    (clips / "tiny.bvh").write_bytes((DATA / "rotation_first_root.bvh").read_bytes())
    (clips / "broken.bvh").write_text("HIERARCHY\nROOT Hips\n{\n")
    runs = retarget_folder(clips, "humanoid", tmp_path / "out", workers=1)
    by_name = {Path(o.source).relative_to(clips).as_posix(): o for o in runs.outcomes}
    assert by_name["walk.bvh"].ok and by_name["again/walk.bvh"].ok
    assert not by_name["broken.bvh"].ok and "FileFormatError" in (by_name["broken.bvh"].error or "")
    assert not by_name["tiny.bvh"].ok
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["walk.npz", "walk_1.npz"]
    text = runs.table()
    assert "| walk.bvh | 99 |" in text and "2/4 clips" in text and "failed: " in text


def test_cli_folder_on_two_workers(short_walk: Path, tmp_path: Path) -> None:
    clips = tmp_path / "clips"
    clips.mkdir()
    for k in range(2):
        (clips / f"walk{k}.bvh").write_bytes(short_walk.read_bytes())
    (clips / "broken.bvh").write_text("not a bvh")
    r = run("retarget", clips, "-r", "humanoid", "-o", tmp_path / "out", "--format", "csv",
            "--jobs", "2")  # fmt: skip
    assert r.exit_code == EXIT_FAILED, r.output  # one clip failed; the others are written
    assert "2/3 clips" in r.output and "on 2 worker(s)" in r.output
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["walk0.csv", "walk1.csv"]


def test_source_beside_the_robot(motion: kinetree.anim.Motion, short_walk: Path,
                                 tmp_path: Path) -> None:  # fmt: skip
    src = source_in_robot_world(kinetree.read_bvh(short_walk), motion)
    assert src.n_frames == motion.n_frames
    P = src.model.fk_all(src.q)[..., :3, 3]
    assert abs(np.percentile(P[..., 2].min(axis=1), 2.0)) < 1e-9  # on the ground
    hips = src.positions("Hips")
    np.testing.assert_allclose(hips[0, :2], [0.0, 0.0], atol=1e-9)
    assert hips[-1, 0] - hips[0, 0] > 0.2  # walks along +x, like the robot
    assert 0.8 < float(P[0, :, 2].max()) < 2.0  # a person in metres
    pytest.importorskip("matplotlib")
    from kinetree.viz import animate_side_by_side

    gif = animate_side_by_side([src, motion], tmp_path / "pair.gif", max_frames=2)
    from PIL import Image

    with Image.open(gif) as im:
        assert im.n_frames == 2 and im.size[0] > im.size[1]
