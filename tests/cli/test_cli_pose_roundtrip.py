"""``kinetree fk`` prints a pose with 6 decimals; ``kinetree ik --pose`` takes it back.

The printed rotation is orthonormal only to about 1e-6, which the IK's own
rigidity check refused for about a quarter of random Panda poses; the CLI now
projects pose input onto the nearest rotation (kinetree.spatial.orthonormalize).
"""

from __future__ import annotations

import json

import numpy as np
from typer.testing import CliRunner

from kinetree import models
from kinetree.cli import app

runner = CliRunner()


def printed_pose(stdout: str) -> str:
    lines = stdout.splitlines()
    i = lines.index("pose:")
    return "\n".join(lines[i + 1 : i + 5])


def test_fk_then_ik_round_trip_on_200_panda_configurations() -> None:
    panda = models.get("panda")
    Q = panda.random_configuration(200, rng=2024)
    off = 0
    for q in Q:
        fk = runner.invoke(app, ["fk", "panda", *map(repr, q.tolist())])
        assert fk.exit_code == 0, fk.output
        pose = printed_pose(fk.stdout)
        T_printed = np.array(pose.split(), dtype=float).reshape(4, 4)
        R = T_printed[:3, :3]
        off += np.abs(R.T @ R - np.eye(3)).max() > 1e-6  # what the IK check refused

        ik = runner.invoke(app, ["ik", "panda", "--pose", pose, "--json", "--seed", "0"])
        assert ik.exit_code == 0, (q, ik.output)
        result = json.loads(ik.stdout)
        assert result["success"]
        T = panda.fk(q)
        T_reached = panda.fk(result["q"])
        np.testing.assert_allclose(T_reached[:3, 3], T[:3, 3], atol=2e-6)
        np.testing.assert_allclose(T_reached[:3, :3], T[:3, :3], atol=2e-6)
    assert off > 0  # the sample does exercise poses that are not rigid to 1e-6
