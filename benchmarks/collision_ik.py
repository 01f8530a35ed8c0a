"""Collision-aware IK on the Panda of example-robot-data (its collision meshes, its SRDF)
with a table top, a pillar and a ball: how many targets are solved, whether every success
is clear on the exact meshes (coal), how many plain-IK solutions collide, and the time
per solve.

    python benchmarks/collision_ik.py               # the table, to stdout
    python benchmarks/collision_ik.py --targets 300 --repeat 5

Needs example-robot-data (or ``EXAMPLE_ROBOT_DATA_DIR``, its ``robots`` folder) and coal
(``pip install coal``), e.g. the peers venv: ``PYTHONPATH=src /work/wt-bench/.venv/bin/python``.

The targets: random configurations within the limits whose exact meshes (coal, posed by
kinetree's FK) keep ``CLEAR`` = 1 cm from the obstacles and from themselves (the SRDF's
enabled pairs), with the hand over the table; their hand poses are the targets. Each is
solved from one fixed start (the Panda's "ready" pose), never from the configuration
that generated it.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import kinetree
from kinetree import geometry as geo
from kinetree.spatial import translation

CLEAR = 0.01  # clearance of the generating configurations on the exact meshes [m]
MARGIN = 0.002  # the margin IK keeps on the spheres [m]
#: Sphere coarseness: at most 48 spheres per link, at most 4 mm beyond the mesh.
MAX_SPHERES = int(os.environ.get("KT_MS", 48))
MAX_OVERSHOOT = float(os.environ.get("KT_MO", 0.004))
#: The Panda is bolted to the table: that pair touches by design.
IGNORE = (("panda_link0", "table"),)
READY = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])


def robots_dir() -> Path | None:
    env = os.environ.get("EXAMPLE_ROBOT_DATA_DIR")
    if env:
        return Path(env)
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        return None
    return Path(str(dist.locate_file("cmeel.prefix/share/example-robot-data/robots")))


def scene() -> list[Any]:
    """A table top the Panda stands on, a pillar and a ball in front of it."""
    return [
        kinetree.Box(size=(0.8, 1.2, 0.04), pose=translation([0.35, 0.0, -0.025]), name="table"),
        kinetree.Cylinder(
            radius=0.05, length=1.0, pose=translation([0.45, -0.25, 0.5]), name="pillar"
        ),
        kinetree.Sphere(radius=0.08, center=(0.45, 0.25, 0.35), name="ball"),
    ]


class ExactChecker:
    """Signed distances on the exact collision meshes by coal, posed by kinetree's FK."""

    def __init__(self, model: kinetree.Model, cm: Any, obstacles: list[Any]) -> None:
        import coal

        self.coal = coal
        self.model = model
        self.links: dict[str, list[tuple[Any, np.ndarray]]] = {}
        for frame, shapes in model.geometry.items():
            for g in shapes:
                if g.kind != "collision" or not isinstance(g, geo.Mesh):
                    continue
                b = coal.BVHModelOBBRSS()
                b.beginModel(len(g.faces), len(g.vertices))
                b.addVertices(np.asarray(g.vertices, dtype=float))
                b.addTriangles(np.asarray(g.faces, dtype=np.int32))
                b.endModel()
                self.links.setdefault(frame, []).append((b, np.asarray(g.origin)))
        self.obstacles = []
        for ob in obstacles:
            if isinstance(ob, kinetree.Box):
                shape, pose = coal.Box(*ob.size), ob.pose
            elif isinstance(ob, kinetree.Cylinder):
                shape, pose = coal.Cylinder(ob.radius, ob.length), ob.pose
            else:
                shape, pose = coal.Sphere(ob.radius), translation(ob.center)
            self.obstacles.append((ob.name, shape, pose))
        links = cm.spheres.links
        self.self_pairs = [(links[a], links[b]) for a, b in cm.self_pairs]
        self.index = {f: model.frame_names.index(f) for f in self.links}

    def _tf(self, T: np.ndarray) -> Any:
        return self.coal.Transform3s(np.ascontiguousarray(T[:3, :3]), np.ascontiguousarray(T[:3, 3]))

    def _d(self, sa: Any, Ta: np.ndarray, sb: Any, Tb: np.ndarray) -> float:
        req = self.coal.DistanceRequest()
        res = self.coal.DistanceResult()
        return float(self.coal.distance(sa, self._tf(Ta), sb, self._tf(Tb), req, res))

    def clearance(self, q: np.ndarray) -> float:
        """Smallest signed distance [m] over link-obstacle and enabled link-link pairs."""
        T = self.model.fk_all(q)
        best = np.inf
        for link, shapes in self.links.items():
            Tl = T[self.index[link]]
            for name, sb, Tb in self.obstacles:
                if (link, name) in IGNORE:
                    continue
                for sa, o in shapes:
                    best = min(best, self._d(sa, Tl @ o, sb, Tb))
        for a, b in self.self_pairs:
            if a not in self.links or b not in self.links:
                continue
            for sa, oa in self.links[a]:
                for sb, ob in self.links[b]:
                    best = min(best, self._d(sa, T[self.index[a]] @ oa, sb, T[self.index[b]] @ ob))
        return best


def targets(
    model: kinetree.Model, checker: ExactChecker, n: int, frame: str, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` hand poses over the table from configurations clear by CLEAR on the meshes."""
    rng = np.random.default_rng(seed)
    Q, P = [], []
    while len(Q) < n:
        q = model.random_configuration(rng=rng)
        T = model.fk(q, frame)
        x, y, z = T[:3, 3]
        if not (0.15 <= x <= 0.75 and abs(y) <= 0.55 and 0.03 <= z <= 0.7):
            continue
        if checker.clearance(q) >= CLEAR:
            Q.append(q)
            P.append(T)
    return np.array(Q), np.array(P)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--targets", type=int, default=150)
    ap.add_argument("--repeat", type=int, default=3, help="timing passes over the targets")
    args = ap.parse_args(argv)
    robots = robots_dir()
    if robots is None:
        print("collision_ik: example-robot-data is not installed; skipped")
        return 0
    try:
        import coal  # noqa: F401
    except ImportError:
        print("collision_ik: coal is not installed (pip install coal); skipped")
        return 0
    d = robots / "panda_description"
    model = kinetree.load(d / "urdf" / "panda.urdf", srdf=d / "srdf" / "panda.srdf")
    frame = model.end_effectors[0]
    t0 = time.perf_counter()
    cm = kinetree.collision.collision_model(
        model, max_spheres=MAX_SPHERES, max_overshoot=MAX_OVERSHOOT
    )
    fit = time.perf_counter() - t0
    world = scene()
    checker = ExactChecker(model, cm, world)
    Qgen, P = targets(model, checker, args.targets, frame)
    q0 = model.q_neutral.copy()
    q0[:7] = READY
    opts = dict(obstacles=world, self_collision=True, margin=MARGIN, ignore=IGNORE,
                collision_model=cm)  # fmt: skip
    model.ik(P[0], frame, q0=q0, **opts)  # compile
    times = []
    for _ in range(args.repeat):
        for k in range(len(P)):
            t1 = time.perf_counter()
            model.ik(P[k], frame, q0=q0, **opts)
            times.append(time.perf_counter() - t1)
    plain_times = []
    for k in range(len(P)):
        t1 = time.perf_counter()
        model.ik(P[k], frame, q0=q0)
        plain_times.append(time.perf_counter() - t1)
    # Problem k of a batch draws its restarts from seed k: the same as a single solve
    # with seed=k.
    results = [model.ik(P[k], frame, q0=q0, seed=k, **opts) for k in range(len(P))]
    batch = model.ik(P, frame, q0=q0, **opts)
    plain = model.ik(P, frame, q0=q0)
    ok = np.array([r.success for r in results])
    Q = np.array([r.q for r in results])
    same = bool(np.array_equal(batch.success, ok) and np.array_equal(batch.q, Q))
    exact = np.array([checker.clearance(q) for q in Q])
    err = np.array([np.abs(model.fk(q, frame) - T).max() for q, T in zip(Q, P)])
    pose_err = np.maximum(
        np.array([r.position_error.max() for r in results]),
        np.array([r.orientation_error.max() for r in results]),
    )
    plain_exact = np.array([checker.clearance(q) for q in plain.q])
    t = np.array(times) * 1e6
    n = len(P)
    print(f"Panda (example-robot-data meshes, SRDF), table + pillar + ball, {n} targets")
    print(f"spheres: max_spheres={MAX_SPHERES}, max_overshoot={MAX_OVERSHOOT} m -> "
          f"{len(cm.spheres.radii)} spheres (fit {fit:.1f} s, cached on disk); "
          f"margin {MARGIN} m; start: the ready pose")  # fmt: skip
    print()
    print("| | solved | successes clear on the exact meshes (coal) | closest success [mm] |"
          " max pose error of successes | colliding on the meshes |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    print(f"| collision-aware IK | {ok.sum()}/{n} ({100 * ok.mean():.1f} %) | "
          f"{int((exact[ok] > 0).sum())}/{ok.sum()} | {1e3 * exact[ok].min():.2f} | "
          f"{pose_err[ok].max():.1e} | {int((exact[ok] <= 0).sum())} |")  # fmt: skip
    ps = plain.success
    print(f"| plain IK (no obstacles) | {ps.sum()}/{n} | {int((plain_exact[ps] > 0).sum())}/"
          f"{ps.sum()} | {1e3 * plain_exact[ps].min():.2f} | - | "
          f"{int((plain_exact[ps] <= 0).sum())} |")  # fmt: skip
    print()
    tp = np.array(plain_times) * 1e6
    print(f"collision-aware, single thread, {args.repeat} passes: median {np.median(t):.0f} us, "
          f"mean {np.mean(t):.0f} us, p90 {np.percentile(t, 90):.0f} us, max {t.max():.0f} us")
    print(f"plain IK on the same targets: median {np.median(tp):.0f} us, mean {np.mean(tp):.0f} us")
    print(f"batch on every core equals the single solves: {same}; "
          f"largest FK pose difference of successes: {err[ok].max():.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
