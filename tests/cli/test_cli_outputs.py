"""``-o`` where nothing can be written: a file where a folder must be, or a folder that
cannot be made. Every command says ``error: cannot write ...`` and exits with 2, before
its work (no traceback, no minutes of training first)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from kinetree.cli import app

#: A three-joint chain, two frames (file units: cm).
BVH = """HIERARCHY
ROOT hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation
  JOINT knee
  {
    OFFSET 0 -40 0
    CHANNELS 3 Zrotation Yrotation Xrotation
    JOINT ankle
    {
      OFFSET 0 -40 0
      CHANNELS 3 Zrotation Yrotation Xrotation
      End Site
      {
        OFFSET 0 0 10
      }
    }
  }
}
MOTION
Frames: 2
Frame Time: 0.033333
0 90 0 0 0 0 10 0 0 0 0 0
0 90 0 0 0 0 20 0 0 0 0 0
"""


def _commands(clip: Path) -> dict[str, tuple[list[str], str]]:
    """Each command that writes with ``-o``: its arguments and the file type it writes."""
    return {
        "reach-map": (["reach-map", "panda", "-r", "0.5", "-n", "0", "--restarts", "0"], ".npz"),
        "learn ik": (["learn", "ik", "panda", "--samples", "64", "--steps", "1"], ".npz"),
        "bvh retarget": (
            ["bvh", "retarget", str(clip), "-f", "ankle", "--offset", "1", "0", "0"],
            ".bvh",
        ),
        "animate": (["animate", "panda", "-t", "0.4", "0", "0.5", "--no-meshes"], ".gif"),
    }


@pytest.fixture
def blocker(tmp_path: Path) -> Path:
    """A plain file, where the outputs below want a folder."""
    p = tmp_path / "notes.txt"
    p.write_text("a file, not a folder\n")
    return p


@pytest.mark.parametrize("command", ["reach-map", "learn ik", "bvh retarget", "animate"])
@pytest.mark.parametrize("depth", [1, 2])
def test_output_under_a_file_is_a_clean_error(command, depth, blocker, tmp_path):
    clip = tmp_path / "chain.bvh"
    clip.write_text(BVH)
    args, ext = _commands(clip)[command]
    out = blocker.joinpath(*(["sub"] * (depth - 1)), f"out{ext}")
    result = CliRunner().invoke(app, [*args, "-o", str(out)])
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit), result.exception  # no traceback
    lines = [x for x in result.output.splitlines() if x.startswith("error:")]
    assert lines == [f"error: cannot write {str(out)!r}: {str(blocker)!r} is a file, not a folder"]
    assert blocker.read_text() == "a file, not a folder\n"


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs /proc (Linux)")
@pytest.mark.parametrize("command", ["reach-map", "bvh retarget"])
def test_output_in_a_folder_that_cannot_be_made(command, tmp_path):
    clip = tmp_path / "chain.bvh"
    clip.write_text(BVH)
    args, ext = _commands(clip)[command]
    out = f"/proc/kinetree-test-nothing/out{ext}"  # /proc takes no new folders
    result = CliRunner().invoke(app, [*args, "-o", out])
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    assert f"error: cannot write {out!r}" in result.output
