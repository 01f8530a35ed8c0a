"""kinetree benchmark: every IK method against the peers that are installed.

    .venv/bin/python benchmarks/run.py                 # full run (make bench), ~5-10 min on 2 cores
    .venv/bin/python benchmarks/run.py --quick         # 200 targets, smaller caps
    .venv/bin/python benchmarks/run.py --n 300 --only panda,fk
    .venv/bin/python benchmarks/run.py --write docs/benchmarks.md

Prints one Markdown table per scenario. Peers (``make bench-peers``) are imported
only if installed; missing ones are listed as "not installed" and skipped. See
benchmarks/README.md for what is measured and how.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"


def parse(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--quick", action="store_true", help="200 targets, smaller caps and batches")
    ap.add_argument(
        "--n", type=int, default=None, help="targets per scenario (default 1000, quick 200)"
    )
    ap.add_argument("--only", default="", help="comma-separated scenarios (default: all)")
    ap.add_argument("--no-peers", action="store_true", help="kinetree only")
    ap.add_argument(
        "--no-first-call", action="store_true", help="skip the cold/warm JIT cache measurement"
    )
    ap.add_argument(
        "--single-threads",
        type=int,
        default=1,
        help="threads per single-solve process (default 1; 0: each library's default)",
    )
    ap.add_argument(
        "--threads",
        type=int,
        default=None,
        help="threads for the batch and FK processes (default: each library's own)",
    )
    ap.add_argument(
        "--write", metavar="PATH", default=None, help="also write the tables into PATH (Markdown)"
    )
    ap.add_argument("--first-call-child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    return ap.parse_args(argv)


# --- first call: JIT compile (cold cache) and cache load (warm), each in a fresh process --------


def first_call_child() -> None:
    t = time.perf_counter
    out = {}
    t0 = t()
    import numpy as np

    import kinetree

    out["import kinetree"] = t() - t0
    t0 = t()
    m = kinetree.load("panda")
    out['kinetree.load("panda")'] = t() - t0
    q = m.neutral()
    t0 = t()
    T = m.fk(q)
    out["first `model.fk(q)`"] = t() - t0
    Tt = m.fk(m.random_configuration(101, rng=0))
    t0 = t()
    m.ik(Tt[0], q0=q, time_budget=0.005)
    out["first `model.ik(T, q0=q0, time_budget=0.005)`"] = t() - t0
    t0 = t()
    m.ik(Tt[1], q0=q, time_budget=0.005)
    out["second `model.ik(T, ...)` (new target)"] = t() - t0
    t0 = t()
    m.ik(Tt[1:], q0=q, time_budget=0.005)
    out["first batch `model.ik(T[100], ...)`"] = t() - t0
    t0 = t()
    m.ik(Tt[0], q0=q, method="dls")
    out['first `model.ik(T, method="dls")` (new options)'] = t() - t0
    del T, np
    print("FIRSTCALL " + json.dumps(out))


def first_call_table(log):  # type: ignore[no-untyped-def]
    from scenarios import Table

    cache = Path(tempfile.mkdtemp(prefix="kinetree-numba-cache-"))
    results = []
    # cold, then warm twice: the faster warm run counts (if kinetree's sources change
    # between two runs, numba recompiles, and the second warm run is warm again).
    for label in ("cold", "warm", "warm (again)"):
        log(f"  first call, numba cache {label} (fresh process)")
        env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
        t0 = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, str(HERE / "run.py"), "--first-call-child"],
            env=env, capture_output=True, text=True, timeout=1200,
        )  # fmt: skip
        wall = time.perf_counter() - t0
        line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("FIRSTCALL ")), None)
        if line is None:
            raise RuntimeError(f"first-call child failed:\n{proc.stderr[-2000:]}")
        d = json.loads(line[len("FIRSTCALL ") :])
        d["whole process (python start to exit)"] = wall
        results.append(d)
    shutil.rmtree(cache, ignore_errors=True)
    cold = results[0]
    warm = min(results[1:], key=lambda d: d["whole process (python start to exit)"])
    results = [cold, warm]
    rows = [[k, f"{1e3 * results[0][k]:,.1f}", f"{1e3 * results[1][k]:,.1f}"] for k in results[0]]
    intro = [
        "Each column is a fresh Python process. *cold*: an empty numba cache "
        "(`NUMBA_CACHE_DIR` set to a new folder), so every kernel compiles; *warm*: the same "
        "folder again, so kernels load from the on-disk cache (the usual case after the first "
        "run on a machine; the faster of two such runs). The timed tables below exclude "
        "this: each row's first call is a warm-up, shown in its own column (in a fresh "
        "process, so the first row of each group also pays for loading the kernels).",
    ]
    return Table(
        "first-call",
        "First call: JIT compile (cache cold) vs cache load (cache warm), Panda",
        ["step", "cache cold [ms]", "cache warm [ms]"],
        rows,
        intro,
    )


# --- machine and versions -----------------------------------------------------------------------


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_lines(single: int | None, threads: int | None) -> list[str]:
    import numba
    import numpy
    import scipy
    from scenarios import kinetree_threads

    import kinetree

    la = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:
        affinity = os.cpu_count() or 0
    return [
        f"- CPU: {cpu_model()}, {os.cpu_count()} logical cores ({affinity} usable by this process)",
        f"- OS: {platform.platform()}",
        f"- Python {platform.python_version()}, numpy {numpy.__version__}, "
        f"scipy {scipy.__version__}, "
        f"numba {numba.__version__}, kinetree {kinetree.__version__} (batches on "
        f"{kinetree_threads()} Python threads over nogil kernels)",
        "- Threads: single solves "
        + (
            f"pinned to {single} per process (`--single-threads {single}`)"
            if single
            else "with each library's default"
        )
        + "; batches and FK "
        + (
            f"pinned to {threads} (`--threads {threads}`)"
            if threads
            else "with each library's default (kinetree and torch use every core)"
        ),
        f"- Load average at start: {la[0]:.2f} / {la[1]:.2f} / {la[2]:.2f} (1 / 5 / 15 min)",
    ]


def peer_lines() -> list[str]:
    import peers as P

    rows = ["| peer (pip name) | version | status |", "|---|---|---|"]
    for name, ver, status in P.peer_status():
        rows.append(f"| {name} | {ver} | {status} |")
    try:
        import torch

        rows.append(f"| torch (for pytorch-kinematics) | {torch.__version__} | ok |")
    except ImportError:
        rows.append("| torch (for pytorch-kinematics) | - | not installed |")
    return rows


def settings_lines() -> list[str]:
    import peers as P

    out = []
    seen = set()
    for peer in P.all_peers():
        if peer.settings in seen:
            continue
        seen.add(peer.settings)
        cap = (
            " Slow: single solves run on the first 100 targets of each scenario (50 with "
            "`--quick`)."
            if peer.cap
            else ""
        )
        out.append(f"- **{peer.label}**: {peer.settings}.{cap}")
    return out


# --- main ---------------------------------------------------------------------------------------


def main(argv: list[str]) -> int:
    args = parse(argv)
    sys.path.insert(0, str(HERE))
    if args.first_call_child:
        first_call_child()
        return 0
    if args.child:
        import scenarios

        scenarios.child_main(args.child)
        return 0

    import scenarios as S

    n = args.n if args.n is not None else (200 if args.quick else 1000)
    cfg = S.Config(
        n=n,
        quick=args.quick,
        peers=not args.no_peers,
        slow_cap=50 if args.quick else 100,
        row_seconds=15.0 if args.quick else 30.0,
        batch_sizes=(1, 100, 10_000) if args.quick else (1, 100, 10_000, 100_000),
        fk_n=100_000,
        single_threads=args.single_threads or None,
        threads=args.threads or None,
        only=tuple(s for s in args.only.split(",") if s),
        log=lambda s: print(s, file=sys.stderr, flush=True),
    )
    command = "python benchmarks/run.py" + ("" if not argv else " " + " ".join(argv))
    started = datetime.now(timezone.utc)
    t0 = time.perf_counter()
    head = machine_lines(args.single_threads, args.threads)
    print("## kinetree benchmark\n")
    print("\n".join(head))
    print(f"- Date: {started:%Y-%m-%d %H:%M} UTC; command: `{command}`\n")
    if cfg.peers:
        plines = peer_lines()
        print("\n".join(plines) + "\n", flush=True)
    else:
        plines = []
    tables = []
    if not args.no_first_call and (not cfg.only or "first-call" in cfg.only):
        tables.append(first_call_table(cfg.log))
        print(tables[-1].markdown(), flush=True)
    if cfg.only == ("first-call",):
        cfg.only = ()
        want_rest = False
    else:
        want_rest = True
        cfg.only = tuple(s for s in cfg.only if s != "first-call")
    if want_rest:
        for key in cfg.only or S.ALL:
            sub = S.Config(**{**cfg.__dict__, "only": (key,)})
            for table in S.run_all(sub):
                tables.append(table)
                print(table.markdown(), flush=True)
    wall = time.perf_counter() - t0
    la = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    tail = (
        f"Whole run: {wall / 60:.1f} min; load average at the end: "
        f"{la[0]:.2f} / {la[1]:.2f} / {la[2]:.2f}."
    )
    print(tail)
    if args.write:
        write_doc(Path(args.write), head, started, command, plines, tables, tail, cfg)
        print(f"wrote {args.write}", file=sys.stderr)
    return 0


def write_doc(path, head, started, command, plines, tables, tail, cfg) -> None:  # type: ignore[no-untyped-def]
    body = [
        BEGIN,
        "",
        "## Results",
        "",
        "Measured on:",
        "",
        *head,
        f"- Date: {started:%Y-%m-%d %H:%M} UTC",
        f"- Command: `{command}` (from the repository root, with `.venv/bin/python`)",
        "",
    ]
    if plines:
        body += [
            "Peers found in this environment:",
            "",
            *plines,
            "",
            "Peer settings:",
            "",
            *settings_lines(),
            "",
        ]
    for t in tables:
        body += [t.markdown()]
    body += [tail, "", END]
    block = "\n".join(body) + "\n"
    if path.exists() and BEGIN in path.read_text() and END in path.read_text():
        text = path.read_text()
        a, b = text.index(BEGIN), text.index(END) + len(END)
        text = text[:a] + block.rstrip("\n") + text[b:]
    else:
        text = DOC_HEAD + "\n" + block
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


DOC_HEAD = """# Benchmarks

How fast kinetree solves IK and FK, and how it compares with the libraries a user
would pick instead, on the same targets with the same success judge. The tables
between the markers below are written by `benchmarks/run.py --write docs/benchmarks.md`;
everything outside them is kept.
"""


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
