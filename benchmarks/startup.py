"""The warm start: a whole fresh process (``import kinetree``, load the Panda, FK of 101
configurations, one IK pose, one batch of 100) with numba's disk cache already filled,
timed from outside, several times, one process after another.

    .venv/bin/python benchmarks/startup.py --runs 10
    .venv/bin/python benchmarks/startup.py --runs 10 --src /other/checkout/src --src src

Each ``--src`` folder is put first on the child's ``PYTHONPATH``; several are run in turn,
interleaved, so a change in the machine's load falls on all of them. Run each once before
(``kinetree warmup``) so its own numba cache is warm. ``--freeze`` ends the child with
``gc.freeze()``, which leaves the objects alive at exit to the operating system: the
difference is what the interpreter's teardown costs. Printed: the phases inside the
child, its wall and CPU time (user + sys), and the exit (from the end of the script to
the parent seeing the process end), as minimum and median over the runs.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

CHILD = """
import time; t0 = time.perf_counter()
import kinetree
t1 = time.perf_counter()
m = kinetree.load("panda"); t2 = time.perf_counter()
T = m.fk(m.random_configuration(101, rng=0)); t3 = time.perf_counter()
r = m.ik(T[0]); t4 = time.perf_counter(); rb = m.ik(T[1:]); t5 = time.perf_counter()
import json, sys
assert r.success and rb.success.mean() > 0.95
print(json.dumps({"import": t1 - t0, "load": t2 - t1, "fk": t3 - t2, "ik": t4 - t3,
                  "batch": t5 - t4, "modules": len(sys.modules), "end": time.time()}))
"""


def run_once(src: Path, freeze: bool) -> dict[str, float]:
    """One child process: its phases [s], wall, CPU and exit [s]."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(src), *filter(None, [env.get("PYTHONPATH")])])
    code = CHILD + ("import gc; gc.freeze()\n" if freeze else "")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    done = time.time()
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        raise SystemExit(f"the child failed:\n{out.stderr}")
    row = json.loads(out.stdout.strip().splitlines()[-1])
    row["exit"] = done - row.pop("end")
    row["wall"] = wall
    row["cpu"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    row["loadavg"] = os.getloadavg()[0]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--src", type=Path, action="append", help="source folder (repeatable)")
    parser.add_argument("--freeze", action="store_true", help="end each child with gc.freeze()")
    args = parser.parse_args()
    sources = args.src or [Path(__file__).resolve().parents[1] / "src"]
    rows: dict[Path, list[dict[str, float]]] = {s: [] for s in sources}
    for _ in range(args.runs):
        for src in sources:
            rows[src].append(run_once(src.resolve(), args.freeze))
    cols = ("wall", "cpu", "import", "load", "fk", "ik", "batch", "exit")
    print(f"{args.runs} runs{' ending with gc.freeze()' if args.freeze else ''}, "
          f"{os.cpu_count()} CPUs; seconds, min / median")  # fmt: skip
    print("| source | " + " | ".join(cols) + " | modules | load average |")
    print("|---|" + "---:|" * (len(cols) + 2))
    for src, got in rows.items():
        cells = [
            f"{min(r[c] for r in got):.3f} / {statistics.median(r[c] for r in got):.3f}"
            for c in cols
        ]
        modules = int(statistics.median(r["modules"] for r in got))
        load = statistics.mean(r["loadavg"] for r in got)
        print(f"| {src} | " + " | ".join(cells) + f" | {modules} | {load:.1f} |")


if __name__ == "__main__":
    main()
