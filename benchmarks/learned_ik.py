"""Learned IK seeds on the Panda (example-robot-data, its SRDF) against random restarts.

    python benchmarks/learned_ik.py                  # train (or reuse out/learned_ik_panda.npz)
    python benchmarks/learned_ik.py --targets 150 --many 20 --steps 3000

Three measurements, each interleaved target by target (the same target solved by both
ways one after the other), timed in CPU seconds of the process (``time.process_time``:
on a shared VM the wall clock also counts other processes' time slices):

1. Collision-aware IK in the table/pillar/ball scene of ``collision_ik.py`` (its targets,
   its margin, its sphere model), from the ready pose: ``auto`` with its random restarts
   against ``seeds=learned``. Success, time per solve, every success checked by coal on
   the exact meshes.
2. The same with no ``q0`` (no good start known: ``auto`` starts from the neutral
   configuration, the learned solve from its samples).
3. ``model.ik_many`` (no obstacles) on random reachable poses: the time until 20 distinct
   exact solutions (> 0.1 rad apart, each checked by FK) are found, ``ik_many(T, 20)``,
   learned starts against random ones (the same search, the same round sizes); then
   ``ik_many(T, 50)`` both ways. Before it, the flow's sample accuracy: how far the
   frame lands from the pose its samples were drawn for.

The learned model is trained once with ``kinetree.learn.train_ik`` (PyTorch, CPU) and
kept in ``out/learned_ik_panda.npz``; a file trained with other settings is retrained.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from collision_ik import IGNORE, MARGIN, READY, ExactChecker, robots_dir, scene, targets

import kinetree

OUT = Path(__file__).resolve().parents[1] / "out" / "learned_ik_panda.npz"
#: CPU seconds of this process (every thread): on a shared VM, wall time also counts the
#: milliseconds other processes hold the cores, which swamps solves of 100 us.
CLOCK = time.process_time


def learned_model(model: kinetree.Model, frame: str, args: argparse.Namespace) -> Any:
    """The trained flow: read from ``OUT`` when it was trained with these settings."""
    from kinetree.learn import load_ik, train_ik

    want = {"samples": args.samples, "steps": args.steps, "hidden": args.hidden,
            "layers": args.layers, "seed": 0}  # fmt: skip
    if OUT.exists():
        learned = load_ik(OUT)
        if all(learned.info.get(k) == v for k, v in want.items()):
            print(f"learned IK: {OUT} (trained in {learned.info['seconds']:.0f} s)")
            return learned
    t0 = time.perf_counter()
    learned = train_ik(model, frame, samples=args.samples, steps=args.steps, hidden=args.hidden,
                       layers=args.layers, batch=1024, seed=0)  # fmt: skip
    OUT.parent.mkdir(exist_ok=True)
    learned.save(OUT)
    print(f"learned IK: trained in {time.perf_counter() - t0:.0f} s, saved to {OUT}")
    return learned


def _stats(t: np.ndarray) -> str:
    us = 1e6 * np.asarray(t)
    return (f"median {np.median(us):.0f} us, mean {us.mean():.0f} us, "
            f"p90 {np.percentile(us, 90):.0f} us, max {us.max():.0f} us")  # fmt: skip


def collision_table(model: kinetree.Model, frame: str, P: np.ndarray, q0: np.ndarray | None,
                    opts: dict[str, Any], learned: Any, checker: ExactChecker,
                    start: str, repeat: int) -> None:  # fmt: skip
    """Random restarts against learned seeds, interleaved, on every target."""
    for T in P[:8]:  # compile and warm every path of both (learned attempts, restarts)
        for first in (q0, None):
            model.ik(T, frame, q0=first, **opts)
            model.ik(T, frame, q0=first, seeds=learned, **opts)
    rows = {"random restarts (auto)": {}, "learned seeds": {"seeds": learned}}
    times: dict[str, list[float]] = {k: [] for k in rows}
    results: dict[str, list[Any]] = {k: [] for k in rows}
    for rep in range(repeat):
        for k in range(len(P)):
            for name, extra in rows.items():
                t1 = CLOCK()
                r = model.ik(P[k], frame, q0=q0, seed=k, **extra, **opts)
                times[name].append(CLOCK() - t1)
                if rep == 0:
                    results[name].append(r)
    print(f"\ncollision-aware IK from the {start}, {len(P)} targets x {repeat} passes:")
    print("| | solved | clear on the exact meshes (coal) | attempts / iterations per solve "
          "(mean) | time per solve |")  # fmt: skip
    print("|---|---|---|---|---|")
    for name in rows:
        res = results[name]
        ok = np.array([r.success for r in res])
        clear = sum(checker.clearance(r.q) > 0 for r in res if r.success)
        attempts = np.mean([1 + r.restarts for r in res])
        iterations = np.mean([r.iterations for r in res])
        print(f"| {name} | {ok.sum()}/{len(P)} ({100 * ok.mean():.1f} %) | {clear}/{ok.sum()} | "
              f"{attempts:.2f} / {iterations:.1f} | {_stats(np.array(times[name]))} |")  # fmt: skip


def sample_accuracy(model: kinetree.Model, frame: str, learned: Any, poses: int = 300) -> None:
    """Distance [cm] from the target of the frame at learned samples (16 per pose)."""
    Q = model.random_configuration(poses, rng=np.random.default_rng(5))
    P = model.fk(Q, frame)
    print(f"\nsample accuracy on {poses} random reachable poses, 16 samples each:")
    print("| temperature | median distance | best of 16 (median) | p90 |")
    print("|---|---|---|---|")
    for t in (1.0, 0.5):
        full = np.repeat(Q[:, None], 16, axis=1)
        full[..., learned.columns(model)] = learned.sample(P, 16, seed=1, temperature=t)
        X = model.fk(full.reshape(-1, model.nq), frame).reshape(poses, 16, 4, 4)
        d = 100 * np.linalg.norm(X[..., :3, 3] - P[:, None, :3, 3], axis=-1)
        print(f"| {t} | {np.median(d):.1f} cm | {np.median(d.min(axis=1)):.1f} cm | "
              f"{np.percentile(d, 90):.1f} cm |")  # fmt: skip


def many_table(model: kinetree.Model, frame: str, P: np.ndarray, learned: Any, n: int,
               want: int, repeat: int) -> None:  # fmt: skip
    """Time until ``want`` distinct exact solutions are found (``ik_many(T, want)``, which
    stops at the ``want``-th), learned starts against random ones, interleaved pose by
    pose (the order alternating), ``repeat`` passes; then ``ik_many(T, n)`` both ways:
    how many each returns and in what time."""
    for T in P[:3]:  # compile every path
        model.ik_many(T, 4, frame, seeds=learned)
        model.ik_many(T, 4, frame)
    ways = {"learned starts": {"seeds": learned}, "random starts": {}}
    for count in (want, n):
        times: dict[str, list[list[float]]] = {w: [[] for _ in P] for w in ways}
        found: dict[str, list[list[int]]] = {w: [[] for _ in P] for w in ways}
        passes = repeat if count == want else 1
        for rep in range(passes):
            for k, T in enumerate(P):
                order = list(ways) if (k + rep) % 2 == 0 else list(ways)[::-1]
                for w in order:
                    t1 = CLOCK()
                    sols = model.ik_many(T, count, frame, seed=k + 1000 * rep, **ways[w])
                    times[w][k].append(CLOCK() - t1)
                    _check_many(model, frame, T, sols)
                    found[w][k].append(len(sols))
        print(f"\nik_many(T, {count}) on {len(P)} poses (no obstacles; > 0.1 rad apart, "
              f"FK-checked), {passes} pass(es), time per pose:")  # fmt: skip
        print(
            f"| starts | calls with >= {want} | solutions (min / median) | time, all poses "
            f"(median / mean) | time, poses where both reach {want} (median / mean) |"
        )
        print("|---|---|---|---|---|")
        both = np.array([min(min(found[w][k]) for w in ways) >= want for k in range(len(P))])
        per = {w: 1e3 * np.array([np.mean(t) for t in times[w]]) for w in ways}
        for w in ways:
            f, t = np.array(found[w]), per[w]
            print(f"| {w} | {int((f >= want).sum())}/{f.size} | {f.min()} / "
                  f"{np.median(f):.0f} | {np.median(t):.2f} / {t.mean():.2f} ms | "
                  f"{np.median(t[both]):.2f} / {t[both].mean():.2f} ms |")  # fmt: skip
        tl, tr = per["learned starts"], per["random starts"]
        print(f"learned faster on {int((tl < tr).sum())}/{len(P)} poses; both reach {want} in "
              f"every call on {int(both.sum())}")  # fmt: skip


def _check_many(model: kinetree.Model, frame: str, T: np.ndarray, sols: np.ndarray) -> None:
    """The oracle: FK of every solution on the target, pairwise > 0.1 rad apart."""
    if not len(sols):
        return
    e = kinetree.spatial.pose_error(T, model.fk(sols, frame))
    assert np.linalg.norm(e[:, :3], axis=1).max() <= 1e-6
    assert np.linalg.norm(e[:, 3:], axis=1).max() <= 1e-6
    gaps = np.abs(sols[:, None] - sols[None]).max(axis=2) + 9 * np.eye(len(sols))
    assert gaps.min() > 0.1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--targets", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=2, help="timing passes over the targets")
    ap.add_argument("--many", type=int, default=50, help="poses of the ik_many comparison")
    ap.add_argument("--many-repeat", type=int, default=3, help="timing passes of ik_many")
    ap.add_argument("--only-many", action="store_true", help="skip the collision tables")
    ap.add_argument("--samples", type=int, default=1_000_000)
    ap.add_argument("--steps", type=int, default=8000)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--model", help="a saved learned IK (.npz) to use instead of training")
    args = ap.parse_args(argv)
    robots = robots_dir()
    if robots is None:
        print("learned_ik: example-robot-data is not installed; skipped")
        return 0
    try:
        import coal  # noqa: F401
        import torch  # noqa: F401
    except ImportError as e:
        print(f"learned_ik: {e.name} is not installed; skipped")
        return 0
    d = robots / "panda_description"
    model = kinetree.load(d / "urdf" / "panda.urdf", srdf=d / "srdf" / "panda.srdf")
    frame = model.end_effectors[0]
    if args.model:
        from kinetree.learn import load_ik

        learned = load_ik(args.model)
    else:
        learned = learned_model(model, frame, args)
    print(f"  {learned}")
    cm = kinetree.collision.collision_model(model, max_spheres=32, max_overshoot=0.005)
    world = scene()
    checker = ExactChecker(model, cm, world)
    _, P = targets(model, checker, args.targets, frame)
    opts = dict(obstacles=world, self_collision=True, margin=MARGIN, ignore=IGNORE,
                collision_model=cm)  # fmt: skip
    ready = model.q_neutral.copy()
    ready[:7] = READY
    if not args.only_many:
        collision_table(model, frame, P, ready, opts, learned, checker, "ready pose", args.repeat)
        collision_table(model, frame, P, None, opts, learned, checker,
                        "neutral configuration (no q0)", args.repeat)  # fmt: skip
    sample_accuracy(model, frame, learned)
    if args.many:
        Qm = model.random_configuration(args.many, rng=np.random.default_rng(11))
        many_table(model, frame, model.fk(Qm, frame), learned, 50, 20, args.many_repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
