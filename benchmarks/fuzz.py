"""The long fuzz campaign over kinetree's loaders: ``make fuzz``.

    python benchmarks/fuzz.py --cases 20000 --seed 0 --jobs 2 --out out/fuzz

Runs :mod:`fuzz_inputs` (in ``tests/``) on ``--cases`` cases (or until
``--time-limit`` seconds), prints a summary table and the findings grouped by
(kind, stage, exception type, message), and writes into ``--out``:

* ``results.jsonl``: one record per case (no input);
* ``findings.jsonl``: one record per finding, with its input (``text`` or ``b64``);
* ``findings/<kind>-<seed><ext>``: the input of each finding, ready to load;
* ``minimized/``: with ``--minimize``, the smallest input found for one case per group;
* ``summary.md``: the table and the groups.

The kinds are :data:`fuzz_inputs.KINDS`: URDF, BVH, MJCF, DH, glTF (``.gltf`` and
``.glb``) and USD (``.usda``); FBX runs when named, as its own smaller campaign
(each case reads the file in a ufbx child process, about a second):

    python benchmarks/fuzz.py --kinds fbx --cases 300 --seed 0 --jobs 2 --out out/fuzz-fbx

(its cases get :data:`FBX_TIMEOUT_S` each unless ``--timeout`` says otherwise).
``--replay urdf:123`` rebuilds one case, prints it and runs it here. The exit status
is 1 when there are findings.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import fuzz_inputs as F

BAD = ("finding", "hang", "crash")
#: Seconds an FBX case may take (a child process starts, imports ufbx, reads the file).
FBX_TIMEOUT_S = 60.0


def summary_table(results: list[dict], seconds: float) -> str:
    counts = F.outcome_counts(results)
    cols = ("cases", "loaded", "rejected", "finding", "hang", "crash")
    head = f"| kind | {' | '.join(cols)} |"
    lines = [head, "|" + "---|" * (len(cols) + 1)]
    kinds = [k for k in (*F.KINDS, *F.NAMED_KINDS) if any(r["kind"] == k for r in results)]
    for kind in [*kinds, "all"]:
        sel = [k for k in kinds if kind in (k, "all")]
        n = sum(v for (k, _), v in counts.items() if k in sel)
        row = [n] + [sum(counts[(k, o)] for k in sel) for o in cols[1:]]
        lines.append(f"| {kind} | {' | '.join(str(x) for x in row)} |")
    rate = len(results) / seconds if seconds else 0.0
    slow = sum(1 for r in results if r.get("seconds", 0) > 1.0)
    lines.append("")
    lines.append(
        f"{len(results)} cases in {seconds:.0f} s ({rate:.1f} cases/s); "
        f"rejected = raised a KinetreeError; {slow} cases took over 1 s"
    )
    return "\n".join(lines)


def replay(key: str) -> int:
    kind, seed = key.split(":")
    case = F.make_case(kind, int(seed))
    print(f"# {case.key} from {case.origin}, mutations: {', '.join(case.mutations)}")
    print(case.data[:4000].decode("utf-8", "replace"))
    with tempfile.TemporaryDirectory() as wd:
        rec = F.check_case(case, Path(wd), lambda s: print(f"# stage {s}", file=sys.stderr))
    print(json.dumps(rec, indent=1))
    return int(rec["outcome"] in BAD)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", type=Path, default=Path("out/fuzz"))
    ap.add_argument("--timeout", type=float, default=0.0, help="seconds per case")
    ap.add_argument("--time-limit", type=float, default=0.0, help="stop starting cases after")
    ap.add_argument("--kinds", default=",".join(F.KINDS))
    ap.add_argument("--minimize", action="store_true", help="shrink one case per group")
    ap.add_argument("--replay", metavar="KIND:SEED", help="run one case here and print it")
    args = ap.parse_args(argv)
    if args.replay:
        return replay(args.replay)

    if args.timeout <= 0.0:
        slow = "fbx" in args.kinds.split(",")
        args.timeout = FBX_TIMEOUT_S if slow else F.TIMEOUT_S
    out: Path = args.out
    (out / "findings").mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    deadline = t0 + args.time_limit if args.time_limit > 0 else float("inf")

    def cases():  # type: ignore[no-untyped-def]
        for case in F.campaign(args.cases, args.seed, args.kinds.split(",")):
            if time.monotonic() > deadline:
                return
            yield case

    done = Counter[str]()
    with (out / "results.jsonl").open("w") as res_f, (out / "findings.jsonl").open("w") as fnd_f:

        def on_result(case: F.Case, rec: dict) -> None:
            res_f.write(json.dumps(rec) + "\n")
            done[rec["outcome"]] += 1
            if rec["outcome"] in BAD:
                fnd_f.write(F.finding_line(case, rec) + "\n")
                fnd_f.flush()
                (out / "findings" / f"{case.kind}-{case.seed}{case.ext}").write_bytes(case.data)
            n = sum(done.values())
            if n % 1000 == 0:
                res_f.flush()
                el = time.monotonic() - t0
                print(f"  {n} cases, {el:.0f} s, {dict(done)}", file=sys.stderr, flush=True)

        stats = F.PoolStats()
        results = F.run_cases(
            cases(), jobs=args.jobs, timeout=args.timeout, on_result=on_result, stats=stats
        )
    seconds = time.monotonic() - t0
    groups = F.group_findings(results)
    table = summary_table(results, seconds)
    text = [
        f"# Fuzz run: --cases {args.cases} --seed {args.seed} --jobs {args.jobs}",
        "",
        table,
        f"worker restarts (after hangs or crashes): {stats.restarts}",
        "",
        f"## {sum(len(v) for _, v in groups)} findings in {len(groups)} groups",
        "",
        "```",
        F.format_groups(groups, limit=200),
        "```",
    ]
    if args.minimize and groups:
        text += ["", "## Minimized reproducers", ""]
        (out / "minimized").mkdir(exist_ok=True)
        with tempfile.TemporaryDirectory() as wd:
            for (kind, stage, typ, msg), recs in groups:
                first = min(recs, key=lambda r: r.get("size", 0))
                k, s = first["key"].split(":")
                small = F.minimize(F.make_case(k, int(s)), first, Path(wd), budget_s=30.0)
                name = f"{kind}-{s}{small.ext}"
                (out / "minimized" / name).write_bytes(small.data)
                shown = small.data[:1500].decode("utf-8", "replace")
                text += [f"### {kind} {stage} {typ}: {msg}", f"`{name}` ({len(small.data)} bytes)"]
                text += ["```", shown.rstrip("\n"), "```", ""]
    report = "\n".join(text) + "\n"
    (out / "summary.md").write_text(report)
    print(report)
    return int(bool(groups))


if __name__ == "__main__":
    sys.exit(main())
