"""Dask and reachability-map numbers for docs/distributed.md and docs/benchmarks.md.

    python benchmarks/dask_cluster.py                  # everything (~25 min on 2 cores)
    python benchmarks/dask_cluster.py --quick          # small sizes, ~2 min
    python benchmarks/dask_cluster.py --only overhead,scaling,progress,map

Needs ``kinetree[distributed]`` (and ``kinetree[viz]`` for the map's figure).
Measures, printing one Markdown table each:

* ``overhead``: the scheduler's cost per task: ``kinetree.distributed.map`` of a no-op
  over 2,000 one-item chunks on a LocalCluster (threads, then worker processes);
  the size of a pickled Panda; each fresh worker's first IK call (numba cache load).
* ``scaling``: weak scaling: Panda IK targets (random configurations, 1e-6, limits),
  ``--per-worker`` targets per worker, on 1 and 2 worker processes of one thread each
  (``KINETREE_NUM_THREADS=1``), against the local batch on 1 thread.
* ``progress``: the progress hook in the CPU batch: a batch with the bar's counter on
  (drawn to /dev/null) and off, interleaved repeats.
* ``map``: the Panda reachability map (``--resolution`` 0.05 m, 50 orientations,
  10 restarts) on this machine's cores and on a 2-worker local cluster; the map and
  its figure go to ``--out`` (default out/reach_map_panda.{npz,png}).
"""

from __future__ import annotations

import argparse
import importlib
import os
import pickle
import platform
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
# This file is named like the package it measures: keep its folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]

import numpy as np  # noqa: E402


def _cluster(n_workers: int, processes: bool, threads: int = 1):
    from distributed import Client, LocalCluster

    kw = {"env": {"KINETREE_NUM_THREADS": str(threads)}} if processes else {}
    cluster = LocalCluster(
        n_workers=n_workers, threads_per_worker=1, processes=processes,
        dashboard_address=None, silence_logs=40, **kw,
    )  # fmt: skip
    return cluster, Client(cluster)


def _noop(x: int) -> int:
    return x


def _first_ik() -> float:
    import kinetree

    m = kinetree.load("panda")
    T = m.fk(m.random_configuration(16, 0))
    t = time.perf_counter()
    m.ik(T)
    return time.perf_counter() - t


def overhead(args: argparse.Namespace) -> None:
    import kinetree
    from kinetree import distributed as kd

    n = 400 if args.quick else 2000
    print("\n### Scheduler overhead per task\n")
    print("| cluster | tasks | wall [s] | per task [ms] |")
    print("|---|---:|---:|---:|")
    for processes in (False, True):
        cluster, client = _cluster(2, processes)
        kd.map(_noop, range(50), client=client)  # warm
        t = time.perf_counter()
        kd.map(_noop, range(n), client=client, chunk_size=1)
        wall = time.perf_counter() - t
        kind = "2 worker processes (tcp)" if processes else "2 workers in-process (threads)"
        print(f"| {kind} | {n} | {wall:.2f} | {1e3 * wall / n:.2f} |")
        if processes:
            firsts = client.run(_first_ik)
            print(
                "\nFirst IK call in each fresh worker process (numba kernels loaded from "
                "the disk cache): " + ", ".join(f"{v:.2f} s" for v in firsts.values())
            )
        client.close()
        cluster.close()
    m = kinetree.load("panda")
    t = time.perf_counter()
    blob = pickle.dumps(m)
    dt = time.perf_counter() - t
    print(f"\nPickled Panda: {len(blob):,} bytes in {1e3 * dt:.2f} ms.")


def _panda_targets(n: int) -> np.ndarray:
    import kinetree

    m = kinetree.load("panda")
    return m.fk(m.random_configuration(n, 42))


def scaling(args: argparse.Namespace) -> None:
    import kinetree
    from kinetree import distributed as kd

    per = args.per_worker // 10 if args.quick else args.per_worker
    m = kinetree.load("panda")
    print("\n### Weak scaling: Panda IK, targets per worker fixed\n")
    print(f"{per:,} targets per worker, chunks of {args.chunk:,}, 1 thread per worker.\n")
    print("| run | workers | targets | wall [s] | solves/s | solved | efficiency |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    os.environ["KINETREE_NUM_THREADS"] = "1"  # read at every batch: this one runs on 1 thread
    T = _panda_targets(per)
    m.ik(T[:100])
    t = time.perf_counter()
    r = m.ik(T)
    base = time.perf_counter() - t
    print(f"| local batch, 1 thread | - | {per:,} | {base:.2f} | {per / base:,.0f} | "
          f"{r.success.mean():.2%} | - |")  # fmt: skip
    ref = None
    for workers in (1, 2):
        cluster, client = _cluster(workers, processes=True, threads=1)
        client.run(_first_ik)  # load the kernels in every worker first
        T = _panda_targets(per * workers)
        t = time.perf_counter()
        r = kd.ik(m, T, client=client, chunk_size=args.chunk)
        wall = time.perf_counter() - t
        ref = ref or wall
        n = per * workers
        print(f"| Dask LocalCluster | {workers} | {n:,} | {wall:.2f} | {n / wall:,.0f} | "
              f"{r.success.mean():.2%} | {ref / wall:.0%} |")  # fmt: skip
        client.close()
        cluster.close()
    os.environ.pop("KINETREE_NUM_THREADS")


def progress_cost(args: argparse.Namespace) -> None:
    import kinetree
    from kinetree import _progress

    n = 20_000 if args.quick else 200_000
    m = kinetree.load("panda")
    T = _panda_targets(n)
    m.ik(T[:100])
    devnull = open(os.devnull, "w")
    real = _progress.progress
    on, off = [], []

    def forced(total, label="", **kw):
        return real(total, label, show=True, stream=devnull)

    solve_mod = importlib.import_module("kinetree.ik._run")  # runs the batch (and shows its bar)

    for _ in range(3 if args.quick else 5):
        for flag, bucket in ((False, off), (True, on)):
            solve_mod.progress = forced if flag else real  # type: ignore[assignment]
            os.environ["KINETREE_PROGRESS"] = "0" if not flag else "1"
            t = time.perf_counter()
            m.ik(T)
            bucket.append(time.perf_counter() - t)
    solve_mod.progress = real  # type: ignore[assignment]
    os.environ.pop("KINETREE_PROGRESS")
    a, b = statistics.median(off), statistics.median(on)
    print("\n### The progress hook in the CPU batch\n")
    print(f"Panda IK, {n:,} targets, all cores, median of {len(on)} interleaved runs.\n")
    print("| bar | wall [s] | solves/s |")
    print("|---|---:|---:|")
    print(f"| off (no-op tick) | {a:.3f} | {n / a:,.0f} |")
    print(f"| on (counted, drawn to /dev/null) | {b:.3f} | {n / b:,.0f} |")
    print(f"\nDifference: {100 * (b - a) / a:+.1f} % (run-to-run noise on a loaded VM is larger).")
    # The hook's own cost, which the noise above hides: one tick per chunk of the batch.
    bar = _progress.Progress(10**9, "x", devnull, delay=0.0)
    k = 200_000
    t = time.perf_counter()
    for _ in range(k):
        bar.tick(64)
    per_tick = (time.perf_counter() - t) / k
    chunks = n // 64
    cost = chunks * per_tick
    print(f"One tick (lock, count, clock, a redraw at most 10 times a second): "
          f"{1e6 * per_tick:.2f} us; the batch above ticks {chunks:,} times (chunks of 64): "
          f"{1e3 * cost:.1f} ms, {100 * cost / a:.3f} % of its time.")  # fmt: skip


def reach_map(args: argparse.Namespace) -> None:
    import kinetree
    from kinetree import workspace

    res = 0.2 if args.quick else args.resolution
    m = kinetree.load("panda")
    print("\n### Reachability map of the Panda\n")
    print(f"{res:g} m voxels, 50 orientations per voxel, 10 restarts, 1e-6 m / 1e-6 rad.\n")
    print("| where | problems | wall [s] | problems/s | reachable voxels | mean index |")
    print("|---|---:|---:|---:|---:|---:|")
    runs = [("this machine, all cores", None)]
    if not args.map_local_only:
        runs.append(("Dask LocalCluster, 2 workers x 1 thread", "cluster"))
    maps = []
    for name, where in runs:
        cluster = client = None
        if where == "cluster":
            cluster, client = _cluster(2, processes=True, threads=1)
            client.run(_first_ik)
        workspace.reachability(m, resolution=0.3)  # compile/load the kernels first
        t = time.perf_counter()
        rmap = workspace.reachability(m, resolution=res, orientations=50, client=client)
        wall = time.perf_counter() - t
        maps.append(rmap)
        k = rmap.index > 0
        print(f"| {name} | {rmap.settings['problems']:,} | {wall:.1f} | "
              f"{rmap.settings['problems'] / wall:,.0f} | {int(k.sum()):,} | "
              f"{rmap.index[k].mean():.3f} |")  # fmt: skip
        if client is not None:
            client.close()
            cluster.close()
    if len(maps) == 2:
        same = np.array_equal(maps[0].index, maps[1].index)
        print(f"\nThe two maps are identical: {same}.")
    out = Path(args.out)
    path = maps[0].save(out.with_suffix(".npz"))
    workspace.plot_reachability(maps[0], out.with_suffix(".png"))
    print(f"\nWrote {path} and {out.with_suffix('.png')}.")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default="overhead,scaling,progress,map")
    ap.add_argument("--per-worker", type=int, default=100_000)
    ap.add_argument("--chunk", type=int, default=20_000)
    ap.add_argument("--resolution", type=float, default=0.05)
    ap.add_argument("--map-local-only", action="store_true")
    ap.add_argument("--out", default=str(ROOT / "out" / "reach_map_panda"))
    args = ap.parse_args(argv)
    from importlib.metadata import version

    import dask

    import kinetree

    print(f"kinetree {kinetree.__version__}, dask {dask.__version__}, distributed "
          f"{version('distributed')}, Python {platform.python_version()}, "
          f"{os.cpu_count()} CPUs ({platform.processor() or platform.machine()})")  # fmt: skip
    jobs = {"overhead": overhead, "scaling": scaling, "progress": progress_cost,
            "map": reach_map}  # fmt: skip
    for name in args.only.split(","):
        jobs[name.strip()](args)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
