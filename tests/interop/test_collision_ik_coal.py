"""Interop: collision-aware IK on the Panda of example-robot-data, every success checked
on the exact meshes by coal.

Opt-in, not part of ``make test``: it needs example-robot-data and coal and runs only with
``KINETREE_INTEROP=1``. The scene, the targets (hand poses of random configurations that
coal finds 1 cm clear) and the checker are those of ``benchmarks/collision_ik.py``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

if os.environ.get("KINETREE_INTEROP") != "1":
    pytest.skip(
        "interop tests are opt-in: pip install example-robot-data coal, set KINETREE_INTEROP=1",
        allow_module_level=True,
    )

pytest.importorskip("coal")

import kinetree

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import collision_ik as bench


@pytest.fixture(scope="module")
def setup():  # type: ignore[no-untyped-def]
    robots = bench.robots_dir()
    if robots is None or not robots.is_dir():
        pytest.skip("example-robot-data is not installed (or set EXAMPLE_ROBOT_DATA_DIR)")
    d = robots / "panda_description"
    model = kinetree.load(d / "urdf" / "panda.urdf", srdf=d / "srdf" / "panda.srdf")
    cm = kinetree.collision.collision_model(
        model, max_spheres=bench.MAX_SPHERES, max_overshoot=bench.MAX_OVERSHOOT
    )
    world = bench.scene()
    checker = bench.ExactChecker(model, cm, world)
    return model, cm, world, checker


def test_successes_are_clear_on_the_exact_meshes_and_on_target(setup):  # type: ignore[no-untyped-def]
    model, cm, world, checker = setup
    frame = model.end_effectors[0]
    _, P = bench.targets(model, checker, 140, frame, seed=11)
    q0 = model.q_neutral.copy()
    q0[:7] = bench.READY
    res = model.ik(P, frame, q0=q0, obstacles=world, self_collision=True, margin=bench.MARGIN,
                   ignore=bench.IGNORE, collision_model=cm)  # fmt: skip
    assert res.success.mean() >= 0.95
    for q, ok, T in zip(res.q, res.success, P):
        if not ok:
            continue
        assert checker.clearance(q) > 0.0
        Tq = model.fk(q, frame)
        assert np.linalg.norm(Tq[:3, 3] - T[:3, 3]) <= 1e-6
        R = Tq[:3, :3].T @ T[:3, :3]
        assert np.arccos(np.clip((np.trace(R) - 1) / 2, -1, 1)) <= 1e-6
    # min_distance is the sphere clearance, a lower bound of the exact one.
    for q, d in zip(res.q[:20], res.min_distance[:20]):
        assert d <= checker.clearance(q) + 1e-9
