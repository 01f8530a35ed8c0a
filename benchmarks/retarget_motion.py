"""Retargeting as motion: does the robot shake? Human clips onto the G1, measured by the
library's own quality report (:func:`kinetree.anim.retarget_quality`) and by path jerk.

    .venv/bin/python benchmarks/retarget_motion.py                     # the clips in the repo
    .venv/bin/python benchmarks/retarget_motion.py --clips DIR [DIR...] # any folders of .bvh

Per clip (default: the walk in tests/data/bvh and the four captures in tests/data/mocap;
``--clips`` adds every ``.bvh`` under the given folders): ``kinetree.retarget(clip,
"g1")`` on a loaded robot and a read clip, then

* ``spikes``: one-frame joint spikes (a joint jumping > 0.1 rad into a frame and back);
* ``jerk x``: for the pelvis, hands and feet, the mean second difference of the robot
  frame's path over the mean second difference of its target's (the capture scaled to
  the robot, feet held while planted); the largest of these ratios (1.0: as smooth as
  the scaled capture);
* ``dip mm``: how far a planted sole goes below the floor (largest over the feet);
* ``limits``: every frame within the joint limits;
* ``good``: the quality report's verdict, and ``frames/s`` (the retarget alone, best of
  ``--repeat`` runs after one to compile).

``--self-collision`` runs with ``self_collision=True``. Needs example-robot-data (the G1).

Before/after a change in one run (the same file, only the library's source differs), on
the clips that chose the settings and on held-out ones (docs/benchmarks.md names both):

    for src in /work/main/src src; do
      PYTHONPATH=$src python benchmarks/retarget_motion.py --only-given --clips HELD --repeat 3
      PYTHONPATH=$src python benchmarks/retarget_motion.py --clips TUNE --repeat 3
    done
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np

import kinetree
from kinetree.anim import load_robot

ROOT = Path(__file__).resolve().parent.parent
CLIPS = [
    ROOT / "tests" / "data" / "bvh" / "cmu_12_01_walk.bvh",
    *sorted((ROOT / "tests" / "data" / "mocap").glob("*.bvh")),
]


def _mean_jerk(P: np.ndarray) -> float:
    if len(P) < 3:
        return 0.0
    return float(np.linalg.norm(np.diff(P, 2, axis=0), axis=1).mean())


def jerk_ratio(motion: kinetree.anim.Motion) -> tuple[float, str]:
    """The largest mean-jerk ratio robot / target over the point targets, and its frame."""
    info = motion.metadata["retarget"]
    worst, which = 0.0, ""
    assert motion.targets is not None
    for k, f in enumerate(info["point_frames"]):
        P = np.asarray(motion.model.fk(motion.q, f))[:, :3, 3]
        ref = _mean_jerk(motion.targets[:, k])
        if ref <= 1e-9:
            continue
        r = _mean_jerk(P) / ref
        if r > worst:
            worst, which = r, f
    return worst, which


def measure(path: Path, robot: kinetree.Model, repeat: int, **options: object) -> dict:
    clip = kinetree.read_bvh(path)
    best = np.inf
    motion = None
    for _ in range(repeat):
        t = time.perf_counter()
        motion = kinetree.retarget(clip, robot, **options)
        best = min(best, time.perf_counter() - t)
    assert motion is not None
    q = motion.metadata["quality"]
    ratio, where = jerk_ratio(motion)
    return {
        "clip": path.stem,
        "frames": motion.n_frames,
        "spikes": q["spikes"],
        "jerk": ratio,
        "jerk_at": where,
        "dip_mm": 1000.0 * max((v["dip_max"] for v in q["feet"].values()), default=0.0),
        "limits": q["within_limits"],
        "good": q["good"],
        "fps": motion.n_frames / best,
        "warnings": q["warnings"],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clips", nargs="*", default=[], help="folders of .bvh clips to add")
    ap.add_argument("--only-given", action="store_true", help="leave out the repo's clips")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--self-collision", action="store_true")
    ap.add_argument("--verbose", action="store_true", help="print each clip's warnings")
    args = ap.parse_args()
    robot = load_robot("g1")
    paths = [] if args.only_given else list(CLIPS)
    for d in args.clips:
        paths += sorted(Path(d).glob("*.bvh"))
    options: dict[str, object] = {}
    if args.self_collision:
        options["self_collision"] = True
    kinetree.retarget(CLIPS[0], robot, **options)  # compile once
    print(
        f"kinetree.retarget onto the G1 {options or ''} on {platform.node()}, "
        f"{platform.processor() or platform.machine()}, Python {sys.version.split()[0]}"
    )
    print()
    print(
        "| clip | frames | spikes | jerk x (worst frame) | planted dip mm | within limits "
        "| good | frames/s |"
    )
    print("|---|---|---|---|---|---|---|---|")
    rows = []
    for p in paths:
        r = measure(p, robot, args.repeat, **options)
        rows.append(r)
        print(
            f"| {r['clip']} | {r['frames']} | {r['spikes']} | {r['jerk']:.2f} ({r['jerk_at']}) | "
            f"{r['dip_mm']:.1f} | {r['limits']} | {r['good']} | {r['fps']:,.0f} |",
            flush=True,
        )
        if args.verbose:
            for w in r["warnings"]:
                print(f"    {w}")
    n = len(rows)
    print()
    print(
        f"{n} clips: {sum(r['good'] for r in rows)} good, spikes {sum(r['spikes'] for r in rows)}, "
        f"jerk x median {np.median([r['jerk'] for r in rows]):.2f} max "
        f"{max(r['jerk'] for r in rows):.2f}, dip max {max(r['dip_mm'] for r in rows):.1f} mm, "
        f"frames/s median {np.median([r['fps'] for r in rows]):,.0f}"
    )


if __name__ == "__main__":
    main()
