"""Where the command line and the Python API disagreed (issue 22, friction): bundled clip
names, flags named in messages, the speed figure of ``retarget``, ``view``'s formats."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import kinetree
import kinetree.anim.retarget.human_to_robot as robot_retarget
from kinetree.cli import EXIT_USAGE, app
from kinetree.errors import InvalidValueError

runner = CliRunner()


class _Stop(Exception):
    pass


def test_retarget_takes_a_bundled_clips_name(monkeypatch: pytest.MonkeyPatch) -> None:
    """``kinetree.retarget("cmu_walk", ...)`` reads the bundled clip, as the CLI does."""
    read: list[Any] = []

    def reader(path: Any) -> Any:
        read.append(path)
        raise _Stop

    monkeypatch.setattr(robot_retarget, "read_bvh", reader)
    with pytest.raises(_Stop):
        kinetree.retarget("cmu_walk", "humanoid", "cmu")
    assert [Path(p) for p in read] == [kinetree.data.path("cmu_walk")]
    assert kinetree.data.clip_path("cmu_walk") == kinetree.data.path("cmu_walk")
    monkeypatch.undo()
    with pytest.raises(InvalidValueError, match="bundled clips are: cmu_walk"):
        kinetree.retarget("cmu_wlak", "humanoid", "cmu")


def test_messages_name_the_flags_not_python_arguments(tmp_path: Path) -> None:
    from kinetree.cli import in_cli_words

    r = runner.invoke(app, ["retarget", "cmu_walk", "--robot", "humanoid", "--map", "cmu",
                            "--scale=-1", "-o", str(tmp_path / "w.npz")])  # fmt: skip
    assert r.exit_code == EXIT_USAGE, r.output
    # the check at retarget's entry words it; the CLI names the flag, never the argument
    assert "--scale" in r.output and "> 0" in r.output and "source_scale" not in r.output
    dask = (
        "the Dask scheduler at 'tcp://h:1' did not answer within 5 s; start one with "
        "`dask scheduler`, or pass client=None for the embedded local cluster"
    )
    said = in_cli_words(dask, ["--scheduler", "-o"])
    assert "client" not in said and "leave out --scheduler" in said
    guess = "pass up= and source_scale= (metres per unit)"
    assert in_cli_words(guess, ["--up", "--scale"]) == "pass --up and --scale (metres per unit)"
    assert in_cli_words(guess, ["--resolution"]) == guess  # flags the command lacks stay


@pytest.fixture(scope="module")
def short_walk(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("clips") / "walk_start.bvh"
    kinetree.write_bvh(path, kinetree.read_bvh(kinetree.data.path("cmu_walk")).slice(0, 40))
    return path


def test_retarget_speed_leaves_out_the_loading(short_walk: Path, tmp_path: Path) -> None:
    r = runner.invoke(app, ["retarget", str(short_walk), "--robot", "humanoid", "--map", "cmu",
                            "-o", str(tmp_path / "w.npz")])  # fmt: skip
    assert r.exit_code == 0, r.output
    found = re.search(
        r"(\d+) frames onto humanoid in ([\d.]+) s: ([\d.]+) s reading the clip and the "
        r"robot, then (\d+) frames/s",
        r.output,
    )
    assert found, r.output
    n, total, reading, rate = (float(g) for g in found.groups())
    assert 0 < reading < total
    assert rate == pytest.approx(n / (total - reading), rel=0.05, abs=1.0)


def test_view_help_names_every_format() -> None:
    r = runner.invoke(app, ["view", "--help"])
    assert r.exit_code == 0
    text = " ".join(r.output.split())
    for kind in (".urdf", ".xacro", "MJCF", ".bvh"):
        assert kind in text, kind
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    viewer = readme.split("## Viewer", 1)[1].split("##", 1)[0]
    assert "xacro" in viewer and "MJCF" in viewer
