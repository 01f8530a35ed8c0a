"""Every ``kinetree ...`` command and every Python block in README.md runs as written.

Each shell command runs through bash in a fresh temporary folder, with a
``kinetree`` on PATH that is this interpreter's ``python -m kinetree``; it must
exit 0. The Python blocks run together, in order, as one script (they build on
each other), also in a temporary folder.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)


def blocks(*languages: str) -> list[str]:
    return [body for lang, body in FENCE.findall(README.read_text()) if lang in languages]


def shell_commands() -> list[str]:
    commands = []
    for body in blocks("bash", "sh", "shell", "console"):
        for line in body.splitlines():
            line = line.strip().removeprefix("$ ")
            if line.startswith("kinetree ") or line == "kinetree":
                commands.append(line)
    return commands


COMMANDS = shell_commands()


def test_the_readme_has_commands_and_python() -> None:
    assert len(COMMANDS) >= 8
    assert any(c.startswith("kinetree bvh ") for c in COMMANDS)
    assert blocks("python")


@pytest.fixture
def path_with_kinetree(tmp_path: Path) -> dict[str, str]:
    """An environment whose ``kinetree`` is ``sys.executable -m kinetree``."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "kinetree"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m kinetree "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}


@pytest.mark.parametrize("command", COMMANDS, ids=[c.split(" #")[0].strip() for c in COMMANDS])
def test_readme_command(command: str, tmp_path: Path, path_with_kinetree: dict[str, str]) -> None:
    work = tmp_path / "work"
    work.mkdir()
    r = subprocess.run(
        ["bash", "-c", command], cwd=work, env=path_with_kinetree,
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert r.returncode == 0, f"{command}\nexit {r.returncode}\n{r.stdout}\n{r.stderr}"
    assert "Traceback" not in r.stderr
    assert r.stdout.strip(), f"{command} printed nothing"


def test_readme_python_blocks(tmp_path: Path) -> None:
    script = tmp_path / "readme_blocks.py"
    script.write_text("\n\n".join(blocks("python")))
    r = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True,
        timeout=600, check=False,
    )  # fmt: skip
    assert r.returncode == 0, f"exit {r.returncode}\n{r.stdout}\n{r.stderr}"


def _run_blocks(tmp_path: Path, source: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "readme_check.py"
    script.write_text(source)
    return subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True,
        timeout=600, check=False,
    )  # fmt: skip


def test_the_ikoptions_example_reaches_its_target(tmp_path: Path) -> None:
    """The first block ends with the IKOptions example; it must be solvable as written
    (two active joints on a 6D pose were not)."""
    first = blocks("python")[0]
    assert "IKOptions(" in first.strip().splitlines()[-2]
    r = _run_blocks(tmp_path, first + "\nassert r.success, r\nprint('solved')\n")
    assert r.returncode == 0 and "solved" in r.stdout, r.stderr[-2000:]


def test_the_collision_comment_names_the_obstacle_hit(tmp_path: Path) -> None:
    python = blocks("python")
    block = next(b for b in python if "obstacles=[ball, post]" in b)
    comment = next(line for line in block.splitlines() if "plain IK:" in line).split("#")[1]
    check = (
        "\nd = arm.distance(arm.ik(goal).q, obstacles=[ball, post])\n"
        "hit = d.pair_names[int(d.pair)][1]\n"
        "print('HIT', {'sphere0': 'ball', 'box1': 'post'}.get(hit, hit))\n"
    )
    r = _run_blocks(tmp_path, python[0] + "\n" + block + check)
    assert r.returncode == 0, r.stderr[-2000:]
    hit = r.stdout.split("HIT ")[1].split()[0]
    other = {"ball": "post", "post": "ball"}[hit]
    assert hit in comment and other not in comment, (hit, comment)
