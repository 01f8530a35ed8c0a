"""The example at the top of ``docs/diffik.md`` runs as written (the page's first Python
block) from the Panda's neutral pose, where its finger and link5 spheres overlap and
joint 4 is at its limit: the step relaxes the collision rows as the IK's QP does, so
it neither raises nor breaks a limit, and the hand reaches the goal (checked by FK)."""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path

import numpy as np
import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "diffik.md"


def require_example_robot_data() -> None:
    try:
        importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("example-robot-data is not installed")


def _first_block() -> str:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    return blocks[0]


def test_the_pages_example_runs_and_reaches_the_goal() -> None:
    require_example_robot_data()
    scope: dict[str, object] = {}
    exec(compile(_first_block(), str(DOC), "exec"), scope)
    panda, q, T_goal, limits = scope["panda"], scope["q"], scope["T_goal"], scope["limits"]
    T = panda.fk(q, "panda_hand")  # type: ignore[attr-defined]
    assert np.linalg.norm(T[:3, 3] - T_goal[:3, 3]) < 1e-4  # type: ignore[index]
    assert panda.within_limits(q, tol=1e-9)  # type: ignore[attr-defined]
    collision = limits[2]  # type: ignore[index]
    # inside the margin at the start: never deeper, and out of it by the end
    assert collision.min_distance(panda, q) >= collision.margin - 1e-6


def test_the_step_from_the_neutral_pose_is_relaxed_not_refused() -> None:
    require_example_robot_data()
    import kinetree
    from kinetree import diffik as dk
    from kinetree.models.descriptions import description_file

    urdf = description_file("panda")
    if urdf is None:
        pytest.skip("example-robot-data has no Panda")
    panda = kinetree.load(urdf, srdf=urdf.parents[1] / "srdf" / "panda.srdf")
    q = panda.neutral()
    limit = dk.CollisionAvoidanceLimit(margin=0.01)
    d0 = limit.min_distance(panda, q)
    assert d0 < 0.0  # the overlap the page describes
    task = dk.FrameTask("panda_hand", panda.fk(q, "panda_hand"), position_cost=1.0)
    v = dk.solve_step(panda, q, [task], dt=0.01, limits=[dk.ConfigurationLimit(), limit])
    q1 = panda.integrate(q, v * 0.01)
    assert limit.min_distance(panda, q1) >= d0 - 1e-6  # no closer
    assert panda.within_limits(q1, tol=1e-9)
