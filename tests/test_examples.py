"""The numbered example scripts run as-is (00_demo.py is `make demo`'s and is left to it).

Each runs in a subprocess from a temporary folder, must exit 0, print what it
promises and write its files under that folder's out/ (beside the caller, never into
the checkout).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SCRIPTS = sorted(p for p in EXAMPLES.glob("[0-9][0-9]_*.py") if not p.name.startswith("00_"))

WRITES = {
    "01_load_urdf_and_solve.py": ["01_solution.json"],
    "02_batch.py": [],
    "03_humanoid_reach.py": ["03_humanoid_reach.png"],
    "04_bvh_edit.py": ["04_walk_hand_raised.bvh"],
    "05_sparse_mocap_pose.py": [],
    "06_character.py": ["06_character.gif", "06_character.glb", "06_robot.usda"],
}
EXPECT = {
    "01_load_urdf_and_solve.py": "FK check: position error",
    "02_batch.py": "100.0% solved",
    "03_humanoid_reach.py": "above_hips       success=True",
    "04_bvh_edit.py": "240/240 frames on target",
    "05_sparse_mocap_pose.py": "four-point, prior: 21/21 frames solved",
    "06_character.py": "glTF written and read back: 1 skinned mesh, 21 frames",
}


def test_every_numbered_example_is_covered() -> None:
    assert [p.name for p in SCRIPTS] == sorted(EXPECT)


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.name for p in SCRIPTS])
def test_example_runs(script: Path, tmp_path: Path) -> None:
    r = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True,
        timeout=600, check=False,
    )  # fmt: skip
    assert r.returncode == 0, f"exit {r.returncode}\n{r.stdout}\n{r.stderr}"
    assert EXPECT[script.name] in r.stdout, r.stdout
    assert "Traceback" not in r.stderr
    written = sorted(p.name for p in (tmp_path / "out").glob("*")) if WRITES[script.name] else []
    assert written == WRITES[script.name]
    assert {p.name for p in tmp_path.iterdir()} <= {"out"}
