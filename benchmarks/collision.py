"""Collision queries on the Panda of example-robot-data (its collision meshes, its SRDF)
with a table, a pillar and a ball: time per configuration of ``model.distance`` and
``model.in_collision`` in a batch, and what fitting the spheres costs.

    .venv/bin/python benchmarks/collision.py            # the table, to stdout
    .venv/bin/python benchmarks/run.py --only collision # the same, as a run.py scenario

Needs ``pip install example-robot-data``; without it the scenario says so and is skipped.
"""

from __future__ import annotations

import importlib.metadata
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import kinetree
from kinetree.spatial import translation

N = 100_000
REPEAT = 5


def panda_paths() -> tuple[Path, Path] | None:
    """The Panda URDF and SRDF of example-robot-data, or None when it is not installed."""
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        return None
    d = Path(str(dist.locate_file("cmeel.prefix/share/example-robot-data/robots")))
    d = d / "panda_description"
    return d / "urdf" / "panda.urdf", d / "srdf" / "panda.srdf"


def scene() -> list[kinetree.collision.Obstacle]:
    """A table top under the workspace, a pillar and a ball in front of the Panda."""
    return [
        kinetree.Box(size=(0.8, 1.2, 0.04), pose=translation([0.55, 0.0, -0.025]), name="table"),
        kinetree.Cylinder(
            radius=0.05, length=1.0, pose=translation([0.45, -0.3, 0.5]), name="pillar"
        ),
        kinetree.Sphere(radius=0.08, center=(0.45, 0.3, 0.35), name="ball"),
    ]


def _best(fn: Callable[[], Any], repeat: int = REPEAT) -> float:
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def measure(log: Callable[[str], None] = print) -> tuple[list[list[str]], list[str]]:
    """The table rows and notes (see the module docstring)."""
    paths = panda_paths()
    if paths is None:
        return [], ["example-robot-data is not installed (pip install example-robot-data)."]
    urdf, srdf = paths
    model = kinetree.load(urdf, srdf=srdf)
    with tempfile.TemporaryDirectory() as tmp:  # a cold sphere cache, then a warm one
        old = os.environ.get("KINETREE_CACHE_DIR")
        os.environ["KINETREE_CACHE_DIR"] = tmp
        from kinetree.collision import spheres

        spheres._MEMORY.clear()
        t0 = time.perf_counter()
        kinetree.collision.robot_spheres(model, use_cache=True)
        cold = time.perf_counter() - t0
        spheres._MEMORY.clear()
        fresh = kinetree.load(urdf, srdf=srdf)
        t0 = time.perf_counter()
        kinetree.collision.robot_spheres(fresh)
        warm = time.perf_counter() - t0
        if old is None:
            del os.environ["KINETREE_CACHE_DIR"]
        else:
            os.environ["KINETREE_CACHE_DIR"] = old
    cm = kinetree.collision.collision_model(model)
    obstacles = scene()
    ignore = [("panda_link0", "table")]  # the base stands on the table
    Q = model.random_configuration(N, rng=2)
    cm.distance(Q[:10], obstacles, ignore=ignore)  # compile / load the kernels
    cm.in_collision(Q[:10], obstacles, ignore=ignore)
    threads = kinetree._threads.n_threads()
    rows = []

    def row(what: str, fn: Callable[[], Any], n: int, how: str) -> None:
        log(f"  collision: {what}")
        dt = _best(fn)
        rows.append([what, f"{n:,}", f"{1e3 * dt:,.2f}", f"{1e6 * dt / n:.2f}", how])

    pairs = cm.tables(obstacles, ignore=ignore).pairs.shape[0]
    for label, n_threads in ((f"{threads} threads", str(threads)), ("1 thread", "1")):
        os.environ["KINETREE_NUM_THREADS"] = n_threads
        row(
            f"`model.distance(Q, obstacles=3, self_collision=True)`, {label}",
            lambda: cm.distance(Q, obstacles, ignore=ignore),
            N,
            f"{pairs} pairs",
        )
        row(
            f"`model.in_collision(Q, obstacles=3)`, {label}",
            lambda: cm.in_collision(Q, obstacles, ignore=ignore),
            N,
            "stops at a hit",
        )
    os.environ["KINETREE_NUM_THREADS"] = str(threads)
    row(
        "obstacles only (`self_collision=False`)",
        lambda: cm.distance(Q, obstacles, False, ignore=ignore),
        N,
        f"{threads} threads",
    )
    row("self-collision only (no obstacles)", lambda: cm.distance(Q), N, f"{threads} threads")
    row("`model.fk(Q)` (for scale)", lambda: model.fk(Q), N, f"{threads} threads")
    q = Q[0]
    row(
        "one configuration, `model.distance(q, ...)`",
        lambda: [cm.distance(q, obstacles, ignore=ignore) for _ in range(200)],
        200,
        "Python call; tables cached per scene",
    )
    rs = cm.spheres
    notes = [
        f"Spheres: {len(rs.radii)} on {len(rs.links)} links (defaults: at most "
        f"{rs.max_spheres} per shape, overshoot target {1e3 * rs.max_overshoot:.0f} mm); "
        f"fitting them all took {cold:.2f} s with a cold cache and {1e3 * warm:.1f} ms from "
        "the disk cache.",
        f"Self-collision pairs checked: {len(cm.self_pairs)} (the SRDF disables the rest).",
        f"Time per configuration is the best of {REPEAT} calls over {N:,} random "
        "configurations (seed 2), divided by the count.",
    ]
    return rows, notes


HEADER = ["query", "N", "total [ms]", "µs per config", "notes"]
TITLE = "Collision distances: Panda (example-robot-data meshes) with 3 obstacles"


def main() -> int:
    rows, notes = measure(lambda s: print(s, file=sys.stderr, flush=True))
    la = os.getloadavg()
    print(f"### {TITLE}\n")
    if rows:
        print("| " + " | ".join(HEADER) + " |")
        print("|" + "---|" * len(HEADER))
        for r in rows:
            print("| " + " | ".join(r) + " |")
    print()
    for n in notes:
        print(f"- {n}")
    print(f"- Load average at the end: {la[0]:.2f} / {la[1]:.2f} / {la[2]:.2f}.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
