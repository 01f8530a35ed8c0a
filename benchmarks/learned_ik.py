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
3. ``model.ik_many(T, 50)`` (no obstacles): distinct exact solutions (> 0.1 rad apart, each
   checked by FK) with learned starts; then the time random starts need to find as many.

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


def many_table(model: kinetree.Model, frame: str, P: np.ndarray, learned: Any, n: int) -> None:
    """``ik_many(T, n)`` with learned starts; random starts asked for as many."""
    model.ik_many(P[0], 4, frame, seeds=learned)
    model.ik_many(P[0], 4, frame)  # compile
    found_l, time_l, found_r, time_r = [], [], [], []
    for k, T in enumerate(P):
        t1 = CLOCK()
        sols = model.ik_many(T, n, frame, seeds=learned, seed=k)
        time_l.append(CLOCK() - t1)
        _check_many(model, frame, T, sols)
        found_l.append(len(sols))
        t1 = CLOCK()
        rand = model.ik_many(T, max(1, len(sols)), frame, seed=k)
        time_r.append(CLOCK() - t1)
        _check_many(model, frame, T, rand)
        found_r.append(len(rand))
    fl, fr = np.array(found_l), np.array(found_r)
    tl, tr = np.array(time_l) * 1e3, np.array(time_r) * 1e3
    print(f"\nik_many(T, {n}) on {len(P)} targets (no obstacles; > 0.1 rad apart, FK-checked):")
    print("| | distinct exact solutions (min / median) | time per target (median / mean) |")
    print("|---|---|---|")
    print(f"| learned starts, ik_many(T, {n}, seeds=learned) | {fl.min()} / {np.median(fl):.0f} | "
          f"{np.median(tl):.1f} / {tl.mean():.1f} ms |")  # fmt: skip
    print(f"| random starts asked for as many | {fr.min()} / {np.median(fr):.0f} | "
          f"{np.median(tr):.1f} / {tr.mean():.1f} ms |")  # fmt: skip
    print(
        f"learned faster on {int((tl < tr).sum())}/{len(P)} targets; "
        f"targets with >= 20 learned solutions: {int((fl >= 20).sum())}/{len(P)}"
    )


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
    ap.add_argument("--many", type=int, default=10, help="targets of the ik_many comparison")
    ap.add_argument("--samples", type=int, default=200_000)
    ap.add_argument("--steps", type=int, default=3000)
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
    collision_table(model, frame, P, ready, opts, learned, checker, "ready pose", args.repeat)
    collision_table(model, frame, P, None, opts, learned, checker,
                    "neutral configuration (no q0)", args.repeat)  # fmt: skip
    if args.many:
        Qm = model.random_configuration(args.many, rng=np.random.default_rng(11))
        many_table(model, frame, model.fk(Qm, frame), learned, 50)
    return 0


if __name__ == "__main__":
    sys.exit(main())
