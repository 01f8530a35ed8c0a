"""kinetree ``auto`` against Robotics Toolbox ``ik_LM`` (C++), interleaved in one process.

    PYTHONPATH=src python benchmarks/interleaved.py                 # 1000 Panda targets, 3 runs
    PYTHONPATH=src python benchmarks/interleaved.py --n 300 --runs 2 --block 4

``benchmarks/run.py`` times each solver in its own process, one after the other; this
machine switches between a fast and a slow state for tens of seconds at a time, so a
state change between two processes moves the ratio by 30 %. Here both solvers run in
one process on the same targets and the same seed pose, alternating in blocks of
``--block`` targets (kinetree first in even blocks, ``ik_LM`` first in odd ones), each
solve timed on its own with ``time.perf_counter_ns``; both see the same machine state
within a block. Targets, settings and the success judge are those of
``benchmarks/run.py --only panda`` (``scenarios.pose_targets``, ``scenarios.judge``,
``peers.RTB``). One BLAS/OpenMP/numba thread. Prints one Markdown table: per run the
median and mean per solve of each and their ratios, and the same over all runs.
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from datetime import datetime, timezone  # noqa: E402

import numpy as np  # noqa: E402
import peers as P  # noqa: E402
import scenarios as S  # noqa: E402

import kinetree  # noqa: E402

#: Success: FK of the returned q within this of the target [m and rad], limits kept.
TOL = 1e-6


def interleave(n: int, block: int, seed_shift: int = 0) -> dict[str, np.ndarray]:
    """One run: every target solved by both, alternating per block; times in seconds."""
    arm = P.arm("panda")
    model = arm.model
    rtb = P.RTB("ik_LM")
    rtb.prepare(arm, "pose", TOL)
    T = S.pose_targets(model, n)
    Ts = [np.ascontiguousarray(t) for t in T]
    q0 = model.neutral()
    opts = {"time_budget": S.TIME_BUDGET}

    def kt(i: int) -> np.ndarray:
        return model.ik(Ts[i], q0=q0, **opts).q

    def lm(i: int) -> np.ndarray:
        return rtb.solve(Ts[i], q0)

    kt(0), lm(0)  # first calls (kernel load, template) are not counted
    t_kt = np.empty(n)
    t_lm = np.empty(n)
    Q_kt = np.empty((n, model.nq))
    Q_lm = np.empty((n, model.nq))
    clock = time.perf_counter_ns
    for b0 in range(0, n, block):
        idx = range(b0, min(n, b0 + block))
        order = ((kt, t_kt, Q_kt), (lm, t_lm, Q_lm))
        if (b0 // block + seed_shift) % 2:
            order = order[::-1]
        for solve, times, Q in order:
            for i in idx:
                t = clock()
                q = solve(i)
                times[i] = (clock() - t) * 1e-9
                Q[i] = q
    targets = {model.end_effectors[0]: (T, "pose")}
    ok_kt = S.judge(model, Q_kt, targets, TOL)[0]
    ok_lm = S.judge(model, Q_lm, targets, TOL)[0]
    return {"kt": t_kt, "lm": t_lm, "ok_kt": ok_kt, "ok_lm": ok_lm}


def row(name: str, kt: np.ndarray, lm: np.ndarray, ok_kt: np.ndarray, ok_lm: np.ndarray) -> str:
    mk, ml = np.median(kt), np.median(lm)
    ak, al = kt.mean(), lm.mean()
    return (
        f"| {name} | {len(kt)} | {100 * ok_kt.mean():.1f}% | {100 * ok_lm.mean():.1f}% | "
        f"{mk * 1e6:.1f} | {ml * 1e6:.1f} | **{ml / mk:.2f}x** | {ak * 1e6:.1f} | "
        f"{al * 1e6:.1f} | **{al / ak:.2f}x** | {np.median(lm / kt):.2f}x |"
    )


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1000, help="Panda targets (default 1000)")
    ap.add_argument("--runs", type=int, default=3, help="repeats of the whole set (default 3)")
    ap.add_argument("--block", type=int, default=1, help="targets per block (default 1)")
    a = ap.parse_args(argv)
    try:
        import roboticstoolbox  # noqa: F401
    except ImportError:
        print("roboticstoolbox-python is not installed (make bench-peers); nothing to compare")
        return 0
    load = os.getloadavg()
    print(
        f"kinetree {kinetree.__version__} auto (time_budget={S.TIME_BUDGET}) vs rtb ik_LM, "
        f"Panda 6D at {TOL:g} m / rad, {a.n} targets, interleaved in blocks of {a.block}, "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, load "
        f"{load[0]:.2f}, {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC\n"
    )
    print(
        "| run | n | kinetree success | ik_LM success | kinetree median µs | ik_LM median µs "
        "| median ratio | kinetree mean µs | ik_LM mean µs | mean ratio | median of per-target "
        "ratios |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    runs = []
    for r in range(a.runs):
        res = interleave(a.n, a.block, seed_shift=r)
        runs.append(res)
        print(row(str(r + 1), res["kt"], res["lm"], res["ok_kt"], res["ok_lm"]), flush=True)
    cat = {k: np.concatenate([x[k] for x in runs]) for k in runs[0]}
    print(row("all", cat["kt"], cat["lm"], cat["ok_kt"], cat["ok_lm"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
