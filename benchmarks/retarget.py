"""Retargeting report: the clips and robots table, the speed, a data-set run, the GIF.

    .venv/bin/python benchmarks/retarget.py                 # prints Markdown
    .venv/bin/python benchmarks/retarget.py --write docs/retargeting.md \
        --gif docs/figures/retarget_walk_g1.gif

Clips: five real captures, a walk (CMU 12_01, tests/data/bvh), a run and a jump (Xia
et al.'s style data via deep-motion-editing), a dance and a dance turn step (CMU 05_04,
cut to 5 s, and 05_03), in tests/data/mocap (its README names sources and licences).
Robots: Unitree G1 and PAL Talos (example-robot-data), each with a free base. Speed:
``kinetree.retarget`` on a loaded robot and a read clip, best of ``--repeat`` runs
(robot loading and BVH parsing are timed apart). Self-collision: frames where two of
the robot's own collision spheres overlap (:func:`kinetree.anim.self_collision_frames`,
pairs that overlap at the neutral pose left out); with ``--avoid`` the same clips again
with ``self_collision=True``: speed, overlapping frames left, dip and speed violations.
Data set: the five clips copied
``--copies`` times into a folder, run by :func:`kinetree.anim.retarget_folder` on
``--workers`` processes, or with ``--dask`` on a ``dask.distributed.LocalCluster`` of
``--workers`` single-threaded workers.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import kinetree
from kinetree.anim import load_robot, self_collision_frames
from kinetree.anim.retarget.dataset import retarget_folder
from kinetree.errors import KinetreeError

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "bvh"
MOCAP = ROOT / "tests" / "data" / "mocap"
CLIPS = {
    "walk (CMU 12_01)": (DATA / "cmu_12_01_walk.bvh", "cmu"),
    "run (Xia angry_13)": (MOCAP / "xia_angry_13_000_run.bvh", "auto"),
    "jump (Xia neutral_16)": (MOCAP / "xia_neutral_16_000_jump.bvh", "auto"),
    "dance (CMU 05_04, 5 s)": (MOCAP / "cmu_05_04_dance.bvh", "auto"),
    "turn step, 165° (CMU 05_03)": (MOCAP / "cmu_05_03_turn_step.bvh", "auto"),
}
ROBOTS = ("g1", "talos")


def _robots() -> dict[str, kinetree.Model]:
    out = {}
    for name in ROBOTS:
        t = time.perf_counter()
        try:
            out[name] = load_robot(name)
        except KinetreeError as exc:
            print(f"skipping {name}: {exc}", file=sys.stderr)
            continue
        print(f"loaded {name} in {time.perf_counter() - t:.2f} s", file=sys.stderr)
    return out


def _hits(m: kinetree.anim.Motion) -> str:
    sc = self_collision_frames(m)
    return f"{sc['count']} ({1e3 * min(sc['min_distance'], 0.0):.0f} mm)"


def _avoiding(clip: object, robot: kinetree.Model, mapping: str, repeat: int) -> str:
    """The columns of ``self_collision=True``: speed, overlaps left, dip, speed limits."""
    m = kinetree.retarget(clip, robot, mapping, self_collision=True)
    best = np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        m = kinetree.retarget(clip, robot, mapping, self_collision=True)
        best = min(best, time.perf_counter() - t)
    q = m.metadata["quality"]
    dip = max(f["dip_max"] for f in q["feet"].values())
    return (f" {m.n_frames / best:.0f} | {_hits(m)} | {1e3 * dip:.1f} | "
            f"{q['speed_violations']} |")  # fmt: skip


def clips_table(
    robots: dict[str, kinetree.Model],
    repeat: int,
    collisions: bool,
    avoid: list[str] | None = None,
) -> str:
    head = (
        "| clip | robot | frames | best time [ms] | frames/s | within limits | speed-capped "
        "frames | slide median L / R [mm/frame] | slide max L / R [mm] | dip max [mm] | "
        "distance ratio | self-collision frames |"
        + (
            " avoiding: frames/s | overlapping (deepest) | dip max [mm] | speed violations |"
            if avoid
            else ""
        )
    )
    rows = [head, "|" + "---|" * (16 if avoid is not None else 12)]
    for label, (file, mapping) in CLIPS.items():
        clip = kinetree.read_bvh(file)
        for name, robot in robots.items():
            m = kinetree.retarget(clip, robot, mapping)  # warm: templates, first calls
            best = np.inf
            for _ in range(repeat):
                t = time.perf_counter()
                m = kinetree.retarget(clip, robot, mapping)
                best = min(best, time.perf_counter() - t)
            q = m.metadata["quality"]
            feet = list(q["feet"].values())
            med = " / ".join(f"{1e3 * f['slide_median']:.2f}" for f in feet)
            top = " / ".join(f"{1e3 * f['slide_max']:.1f}" for f in feet)
            dip = max(f["dip_max"] for f in feet)
            capped = len(m.metadata["retarget"]["speed_capped_frames"])
            hits = _hits(m) if collisions else "-"
            rows.append(
                f"| {label} | {name} | {m.n_frames} | {1e3 * best:.0f} | {m.n_frames / best:.0f} "
                f"| {'yes' if q['within_limits'] else 'NO'} | {capped} | {med} | {top} | "
                f"{1e3 * dip:.1f} | {q['distance_ratio']:.3f} | {hits} |"
                + (
                    (
                        _avoiding(clip, robot, mapping, repeat)
                        if name in avoid
                        else " - | - | - | - |"
                    )
                    if avoid is not None
                    else ""
                )
            )
            print(rows[-1], file=sys.stderr)
    return "\n".join(rows)


def dataset_run(robot: str, copies: int, workers: int, dask: bool) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "clips"
        folder.mkdir()
        for k in range(copies):
            for file, _ in CLIPS.values():
                shutil.copy(file, folder / f"{file.stem}_{k:03d}.bvh")
        # one clip that cannot be read: listed as failed, the rest finish
        (folder / "broken.bvh").write_text("HIERARCHY\nROOT Hips\n{\n")
        if dask:
            from dask.distributed import Client, LocalCluster

            # one IK thread per worker process: the workers share the cores
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, dashboard_address=None,
                                   env={"KINETREE_NUM_THREADS": "1"})  # fmt: skip
            with cluster, Client(cluster) as client:
                run = retarget_folder(folder, robot, Path(tmp) / "out", executor=client)
        else:
            run = retarget_folder(folder, robot, Path(tmp) / "out", workers=workers)
    lines = run.table().splitlines()
    ok_rows = [ln for ln in lines if ln.startswith("| ") and "| ok |" in ln]
    failed = [ln for ln in lines if ln.startswith("- failed")]
    reasons = sorted({ln.split(": ", 2)[-1] for ln in failed})
    summary = [ln for ln in lines if "clips," in ln]
    out = [*lines[:2], *ok_rows[:4], "| ... | | | | | | | | | |", "", *summary]
    out.append(f"\n{len(failed)} clips failed, for these reasons (the rest finished):")
    out += [f"- {r}" for r in reasons]
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--copies", type=int, default=21, help="copies of each clip in the data set")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--dask", action="store_true", help="run the data set on a Dask LocalCluster")
    ap.add_argument("--no-collisions", action="store_true", help="skip the self-collision count")
    ap.add_argument(
        "--avoid",
        nargs="*",
        default=None,
        metavar="ROBOT",
        help="add the columns of kinetree.retarget(..., self_collision=True) for these "
        "robots (all when none is named)",
    )
    ap.add_argument("--clips-only", action="store_true", help="print the clips table only")
    ap.add_argument("--write", metavar="PATH", help="replace the report in this Markdown file")
    ap.add_argument("--gif", metavar="PATH", help="also write the walk on the G1 as a GIF")
    args = ap.parse_args()
    if args.avoid == []:
        args.avoid = list(ROBOTS)
    robots = _robots()
    if args.clips_only:
        print(clips_table(robots, args.repeat, not args.no_collisions, args.avoid))
        return
    machine = (
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, load average {os.getloadavg()[0]:.1f} at the start"
    )
    report = [
        "<!-- retarget:begin -->",
        f"Measured by `python benchmarks/retarget.py --write docs/retargeting.md"
        f"{' --dask' if args.dask else ''}` on {machine}.",
        "",
        clips_table(robots, args.repeat, not args.no_collisions, args.avoid),
        "",
        f"A data set: the five clips copied {args.copies} times and one broken file, onto the "
        "G1, mapping guessed per clip, "
        + (
            f"on a `dask.distributed.LocalCluster(n_workers={args.workers}, threads_per_worker=1, "
            "env={'KINETREE_NUM_THREADS': '1'})`"
            f" (`retarget_folder(folder, 'g1', out, executor=client)`):"
            if args.dask
            else "on local processes "
            f"(`retarget_folder(folder, 'g1', out, workers={args.workers})`):"
        ),
        "",
        dataset_run("g1", args.copies, args.workers, args.dask),
        "<!-- retarget:end -->",
    ]
    text = "\n".join(report)
    if args.write:
        p = Path(args.write)
        old = p.read_text() if p.exists() else ""
        if "<!-- retarget:begin -->" in old:
            pre, rest = old.split("<!-- retarget:begin -->", 1)
            text = pre + text + rest.split("<!-- retarget:end -->", 1)[1]
        p.write_text(text if text.endswith("\n") else text + "\n")
    print(text)
    if args.gif and "g1" in robots:
        from kinetree.anim.retarget.source import source_in_robot_world
        from kinetree.viz import animate_side_by_side

        clip = kinetree.read_bvh(DATA / "cmu_12_01_walk.bvh")
        m = kinetree.retarget(clip, robots["g1"], "cmu")
        animate_side_by_side([source_in_robot_world(clip, m), m], args.gif,
                             titles=["CMU 12_01 walk (source)", "Unitree G1 (free base)"],
                             fps=12, dpi=50)  # fmt: skip


if __name__ == "__main__":
    main()
