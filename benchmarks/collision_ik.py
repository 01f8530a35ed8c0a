"""Collision-aware IK on the Panda of example-robot-data (its collision meshes, its SRDF)
with a table top, a pillar and a ball: how many targets are solved, whether every success
is clear on the exact meshes (coal), how many plain-IK solutions collide, and the time
per solve.

    python benchmarks/collision_ik.py               # the table, to stdout
    python benchmarks/collision_ik.py --targets 300 --repeat 5 --max-spheres 16
    python benchmarks/collision_ik.py --figure docs/figures/panda_collision_ik.png

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
#: Sphere coarseness: up to 32 spheres per link, aiming at 5 mm beyond the mesh (the
#: Panda's links end 8-17 mm beyond with 32; 16 spheres: 11-23 mm, 98.7 % solved and a
#: slower tail; 48: 98.7 % and slower iterations; docs/collisions.md has the numbers).
MAX_SPHERES = 32
MAX_OVERSHOOT = 0.005
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
        return self.coal.Transform3s(
            np.ascontiguousarray(T[:3, :3]), np.ascontiguousarray(T[:3, 3])
        )

    def _d(self, sa: Any, Ta: np.ndarray, sb: Any, Tb: np.ndarray) -> float:
        req = self.coal.DistanceRequest()
        res = self.coal.DistanceResult()
        return float(self.coal.distance(sa, self._tf(Ta), sb, self._tf(Tb), req, res))

    def clearance(self, q: np.ndarray, only: str | None = None) -> float:
        """Smallest signed distance [m] over link-obstacle and enabled link-link pairs
        (``only``: to that obstacle alone)."""
        T = self.model.fk_all(q)
        best = np.inf
        for link, shapes in self.links.items():
            Tl = T[self.index[link]]
            for name, sb, Tb in self.obstacles:
                if (link, name) in IGNORE or (only is not None and name != only):
                    continue
                for sa, o in shapes:
                    best = min(best, self._d(sa, Tl @ o, sb, Tb))
        if only is not None:
            return best
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


def _draw_obstacles(ax: Any, world: list[Any]) -> None:
    """Table, pillar and ball as wireframes (matplotlib's 3D axes do not sort surfaces
    against the robot's meshes)."""
    u = np.linspace(0, 2 * np.pi, 25)
    for ob in world:
        if isinstance(ob, kinetree.Sphere):
            c, r = ob.center, ob.radius
            for v in np.linspace(-0.8, 0.8, 5):
                rr = r * np.sqrt(1 - v * v)
                ax.plot(c[0] + rr * np.cos(u), c[1] + rr * np.sin(u), np.full_like(u, c[2] + r * v),
                        color="tab:orange", lw=1.2)  # fmt: skip
            for ang in np.linspace(0, np.pi, 4, endpoint=False):
                ax.plot(c[0] + r * np.cos(u) * np.cos(ang), c[1] + r * np.cos(u) * np.sin(ang),
                        c[2] + r * np.sin(u), color="tab:orange", lw=1.2)  # fmt: skip
        elif isinstance(ob, kinetree.Cylinder):
            c, r, h = ob.pose[:3, 3], ob.radius, ob.length / 2
            for z in np.linspace(max(c[2] - h, 0.0), c[2] + h, 6):
                ax.plot(c[0] + r * np.cos(u), c[1] + r * np.sin(u), np.full_like(u, z),
                        color="tab:blue", lw=1.2)  # fmt: skip
            for ang in u[::3]:
                x, y = c[0] + r * np.cos(ang), c[1] + r * np.sin(ang)
                ax.plot([x, x], [y, y], [max(c[2] - h, 0.0), c[2] + h], color="tab:blue", lw=1.0)
        else:
            c, (sx, sy, sz) = ob.pose[:3, 3], ob.size
            x0, x1, y0, y1 = c[0] - sx / 2, c[0] + sx / 2, c[1] - sy / 2, c[1] + sy / 2
            z = c[2] + sz / 2
            ax.plot([x0, x1, x1, x0, x0], [y0, y0, y1, y1, y0], [z] * 5, color="tab:brown", lw=1.5)


def figure_target(
    model: kinetree.Model, checker: ExactChecker, q0: np.ndarray, opts: dict[str, Any]
) -> np.ndarray:
    """A hand pose past the pillar (seen from the robot) where plain IK from ``q0`` goes
    deepest into the pillar and collision-aware IK succeeds: a small grid of points, the
    hand pointing down."""
    frame = model.end_effectors[0]
    R = model.fk(q0, frame)[:3, :3]
    best, pick = np.inf, None
    for x in (0.55, 0.62, 0.7):
        for y in (-0.45, -0.38, -0.3):
            for z in (0.15, 0.3, 0.45):
                T = np.eye(4)
                T[:3, :3] = R
                T[:3, 3] = (x, y, z)
                r = model.ik(T, frame, q0=q0)
                if r.success and model.ik(T, frame, q0=q0, **opts).success:
                    d = checker.clearance(r.q, "pillar")
                    if d < best:
                        best, pick = d, T
    assert pick is not None
    return pick


def figure(model: kinetree.Model, world: list[Any], checker: ExactChecker, q0: np.ndarray,
           opts: dict[str, Any], path: str) -> None:  # fmt: skip
    """The Panda reaching past the pillar: plain IK through it, collision-aware IK around it."""
    from kinetree import viz

    frame = model.end_effectors[0]
    T = figure_target(model, checker, q0, opts)
    plain = model.ik(T, frame, q0=q0)
    safe = model.ik(T, frame, q0=q0, **opts)
    d_plain = checker.clearance(plain.q, "pillar")
    d_safe = checker.clearance(safe.q)
    fig = viz.side_by_side(
        model, [plain.q, safe.q],
        [f"model.ik(T)\n{-1e3 * d_plain:.0f} mm into the pillar (exact meshes, coal)",
         f"model.ik(T, obstacles=[table, pillar, ball])\n{1e3 * d_safe:.0f} mm clear of "
         "everything (exact meshes, coal)"],
        targets=[T, T], meshes=True, panel_size=5.0,
    )  # fmt: skip
    for ax in fig.axes:
        _draw_obstacles(ax, world)
        ax.view_init(elev=25, azim=-60)
    viz.save_figure(fig, path)
    print(f"figure: {path}; success {safe.success}, min_distance {safe.min_distance:.4f} m")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--targets", type=int, default=150)
    ap.add_argument("--repeat", type=int, default=3, help="timing passes over the targets")
    ap.add_argument("--figure", help="also draw the Panda reaching past the pillar to this file")
    ap.add_argument("--max-spheres", type=int, default=MAX_SPHERES)
    ap.add_argument("--max-overshoot", type=float, default=MAX_OVERSHOOT, help="[m]")
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
        model, max_spheres=args.max_spheres, max_overshoot=args.max_overshoot
    )
    fit = time.perf_counter() - t0
    world = scene()
    checker = ExactChecker(model, cm, world)
    _, P = targets(model, checker, args.targets, frame)
    q0 = model.q_neutral.copy()
    q0[:7] = READY
    opts = dict(obstacles=world, self_collision=True, margin=MARGIN, ignore=IGNORE,
                collision_model=cm)  # fmt: skip
    model.ik(P[0], frame, q0=q0, **opts)  # compile
    if args.figure:
        figure(model, world, checker, q0, opts, args.figure)
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
    print(f"spheres: max_spheres={args.max_spheres}, max_overshoot={args.max_overshoot} m -> "
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
    print(
        f"collision-aware, single thread, {args.repeat} passes: median {np.median(t):.0f} us, "
        f"mean {np.mean(t):.0f} us, p90 {np.percentile(t, 90):.0f} us, max {t.max():.0f} us"
    )
    print(f"plain IK on the same targets: median {np.median(tp):.0f} us, mean {np.mean(tp):.0f} us")
    print(
        f"batch on every core equals the single solves: {same}; "
        f"largest FK pose difference of successes: {err[ok].max():.1e}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
