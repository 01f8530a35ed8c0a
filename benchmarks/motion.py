"""Tracking motion from sparse points on held-out captures (docs/characters.md,
"Motion: tracking clips and streams").

    .venv/bin/python benchmarks/motion.py                  # prints a Markdown table
    .venv/bin/python benchmarks/motion.py --seconds 3 --clips walk,run   # quicker

Clips: captures of subjects the shipped ``"human"`` pose prior was not trained on (it
was trained on CMU subjects 1, 3, 6 and 7; ``src/kinetree/learn/data/README.md``), none of
the subjects reserved for outside checks: CMU 12_01 walk (bundled), CMU 05_04 dance and
05_03 turn step, Xia et al.'s run and jump (tests/data/mocap), CMU 131_01
(tests/data/bvh_corpus). Each is resampled to about 30 fps and cut to its first
``--seconds``.

Settings (targets from the capture's own FK): six points (pelvis pose; head, wrists,
ankles positions), four points (pelvis pose; head, wrists positions), VR (head and both
hands as 6D poses, no pelvis). Methods: :func:`kinetree.anim.track` (offline),
:class:`kinetree.anim.Tracker` (live), and today's per-frame ``model.ik(targets,
prior="human")`` warm-started from the previous frame, each given the capture's floor as
``ground=`` where it takes one.

Rows "guide": the live tracker's guide alone (the temporal prior's own configuration
per frame, before the targets are met), to show what the tracker adds to it.

Columns: frames with every target met (FK of the result within twice the IK tolerance,
1e-6 [file unit, rad]); mean joint error over the body-part joints in % of the
skeleton's ankle-to-head height; jitter ratio (mean second difference of those joints'
positions over the frames / the capture's); foot skate of untracked ankles while the
capture's own are planted [cm/s]; hyperextended arm/leg frames (a bend below -10
degrees; the capture's own count beside); frames with a sole point more than 1 % of the
height below the capture's floor; time per frame [ms], one process, one thread, wall
clock and the process's own CPU time (on a loaded machine the CPU time is what a quiet
one's wall clock would be).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np

import kinetree
from kinetree.anim import Tracker, anatomy, detect_contacts, track
from kinetree.anim.tracking._skeleton import skeleton

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
CLIPS = {
    "walk": ROOT / "src" / "kinetree" / "data" / "cmu_12_01_walk.bvh",
    "dance": DATA / "mocap" / "cmu_05_04_dance.bvh",
    "turn": DATA / "mocap" / "cmu_05_03_turn_step.bvh",
    "run": DATA / "mocap" / "xia_angry_13_000_run.bvh",
    "jump": DATA / "mocap" / "xia_neutral_16_000_jump.bvh",
    "131_01": DATA / "bvh_corpus" / "bvh11-cmu" / "resources__131_01.bvh",
}
SETTINGS = ("six", "four", "VR")
TOL = 2e-6


def tracks_of(model: kinetree.Model, q: np.ndarray, setting: str) -> dict[str, np.ndarray]:
    """The setting's tracks from the capture's FK."""
    sk = skeleton(model)
    p = sk.parts
    T = model.fk_all(q)
    ix = sk.index
    if setting == "VR":
        return {p[r]: T[:, ix[p[r]]] for r in ("head", "wrist_l", "wrist_r")}
    roles = ("head", "wrist_l", "wrist_r") + (("ankle_l", "ankle_r") if setting == "six" else ())
    out = {p["pelvis"]: T[:, ix[p["pelvis"]]]}
    out |= {p[r]: T[:, ix[p[r]], :3, 3] for r in roles}
    return out


def _frame_targets(tracks: dict[str, np.ndarray], t: int) -> dict[str, Any]:
    from kinetree.ik import Position

    return {f: (a[t] if a.ndim == 3 else Position(a[t])) for f, a in tracks.items()}


def met(model: kinetree.Model, q: np.ndarray, tracks: dict[str, np.ndarray]) -> np.ndarray:
    """(T,) every target within TOL by FK."""
    index = {n: i for i, n in enumerate(model.frame_names)}
    T = model.fk_all(q)
    ok = np.ones(q.shape[0], dtype=bool)
    for f, a in tracks.items():
        M = T[:, index[f]]
        if a.ndim == 3:
            ok &= np.linalg.norm(M[:, :3, 3] - a[:, :3, 3], axis=1) <= TOL
            c = 0.5 * (np.einsum("tij,tij->t", M[:, :3, :3], a[:, :3, :3]) - 1.0)
            ok &= np.arccos(np.clip(c, -1, 1)) <= TOL * 10  # arccos loses digits near 0
        else:
            ok &= np.linalg.norm(M[:, :3, 3] - a, axis=1) <= TOL
    return ok


def measures(
    model: kinetree.Model, q: np.ndarray, q_true: np.ndarray, fps: float, floor: float
) -> dict[str, float]:
    sk = skeleton(model)
    H = sk.height
    ix = [sk.index[f] for f in sk.parts.values()]
    P = model.fk_all(q)[:, ix, :3, 3]
    P_true = model.fk_all(q_true)[:, ix, :3, 3]
    err = float(np.linalg.norm(P - P_true, axis=2).mean() / H * 100)
    acc = np.linalg.norm(np.diff(P, 2, axis=0), axis=2).mean()
    acc_true = np.linalg.norm(np.diff(P_true, 2, axis=0), axis=2).mean()
    bends = anatomy.bend_angles(model, q)
    hyper = sum(int(np.sum(v < -np.radians(10))) for v in bends.values())
    up = sk.up_axis
    T_all = model.fk_all(q)
    soles = np.min(
        np.stack([T_all[:, list(i), up, 3].min(axis=1) for i in sk.soles.values()]), axis=0
    )
    below = int(np.sum(soles < floor - 0.01 * H))
    return {"err": err, "jitter": float(acc / max(acc_true, 1e-12)), "hyper": hyper, "below": below}


def skate(
    model: kinetree.Model, q: np.ndarray, q_true: np.ndarray, fps: float, untracked: list[str]
) -> float:
    """Mean horizontal ankle speed [cm/s] while the capture's ankle is planted."""
    sk = skeleton(model)
    up = sk.up_axis
    unit = model.length_scale
    speeds = []
    for s in untracked:
        i = sk.index[sk.parts[f"ankle_{s}"]]
        true = model.fk_all(q_true)[:, i, :3, 3]
        c = detect_contacts(true, fps, up=up, max_height=0.05 * unit, max_speed=0.35 * unit)
        path = model.fk_all(q)[:, i, :3, 3].copy()
        path[:, up] = 0.0
        v = np.linalg.norm(np.diff(path, axis=0), axis=1) * fps / unit * 100
        both = c[1:] & c[:-1]
        if both.any():
            speeds.append(v[both])
    return float(np.concatenate(speeds).mean()) if speeds else float("nan")


def per_frame_prior(model: kinetree.Model, tracks: dict[str, np.ndarray], n: int) -> np.ndarray:
    q = np.empty((n, model.nq))
    q_prev = None
    for t in range(n):
        r = model.ik(_frame_targets(tracks, t), q0=q_prev, prior="human")
        q[t] = q_prev = r.q
    return q


def live(
    model: kinetree.Model, tracks: dict[str, np.ndarray], n: int, fps: float, floor: float
) -> tuple[np.ndarray, np.ndarray | None]:
    """The live tracker's motion, and its guide's configurations (the prior's own
    guesses, before the targets are met; None without a guide)."""
    tr = Tracker(model, fps=fps, ground=floor)
    q = np.empty((n, model.nq))
    guide = np.empty((n, model.nq))
    for t in range(n):
        q[t] = tr.update(_frame_targets(tracks, t)).q
        if tr.guide_q is not None:
            guide[t] = tr.guide_q
    return q, (guide if tr.guide is not None else None)


def run(clips: dict[str, Path], seconds: float) -> dict[tuple[str, str], dict[str, list[float]]]:
    out: dict[tuple[str, str], dict[str, list[float]]] = {}
    for name, path in clips.items():
        clip = kinetree.read_bvh(path)
        model = clip.model
        step = max(1, round(clip.fps / 30.0))
        fps = clip.fps / step
        q_true = np.asarray(clip.q[::step][: int(seconds * fps)], dtype=np.float64)
        n = q_true.shape[0]
        sk = skeleton(model)
        T_true = model.fk_all(q_true)
        floor = float(min(T_true[:, list(i), sk.up_axis, 3].min() for i in sk.soles.values()))
        for setting in SETTINGS:
            tracks = tracks_of(model, q_true, setting)
            untracked = [s for s in ("l", "r") if sk.parts[f"ankle_{s}"] not in tracks]
            guide: np.ndarray | None = None
            for method in ("offline", "live", "guide", "per-frame prior"):
                t0, c0 = time.perf_counter(), time.process_time()
                if method == "offline":
                    q = track(model, tracks, fps=fps, ground=floor).q
                elif method == "live":
                    q, guide = live(model, tracks, n, fps, floor)
                elif method == "guide":
                    if guide is None:
                        continue
                    q = guide  # measured on the live run: no time of its own
                else:
                    q = per_frame_prior(model, tracks, n)
                ms = (time.perf_counter() - t0) / n * 1e3
                cpu = (time.process_time() - c0) / n * 1e3
                row = measures(model, q, q_true, fps, floor)
                row |= {"met": float(met(model, q, tracks).mean() * 100), "ms": ms, "cpu": cpu}
                if method == "guide":
                    row["ms"] = row["cpu"] = float("nan")
                row["skate"] = skate(model, q, q_true, fps, untracked)
                row["frames"] = n
                acc = out.setdefault((setting, method), {})
                for k, v in row.items():
                    acc.setdefault(k, []).append(v)
                print(
                    f"{name:8s} {setting:5s} {method:16s} "
                    + " ".join(f"{k}={v:.3g}" for k, v in row.items()),
                    file=sys.stderr,
                    flush=True,
                )
        bends = anatomy.bend_angles(model, q_true)
        out.setdefault(("capture", ""), {}).setdefault("hyper", []).append(
            sum(int(np.sum(v < -np.radians(10))) for v in bends.values())
        )
    return out


def _ms(values: list[float]) -> str:
    return "-" if np.all(np.isnan(values)) else f"{np.mean(values):.2f}"


def table(res: dict[tuple[str, str], dict[str, list[float]]]) -> str:
    lines = [
        "| setting | method | frames met | joint error (% height) | jitter ratio (worst clip) "
        "| foot skate (cm/s) | hyperextended | soles below floor | ms/frame | CPU ms/frame |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (setting, method), r in res.items():
        if setting == "capture":
            continue
        frames = np.array(r["frames"])
        met = float(np.sum(np.array(r["met"]) * frames) / frames.sum())
        met_s = "-" if method == "guide" else f"{met:.2f} %"  # a guide need not meet them
        sk = np.array(r["skate"])
        skate_s = "-" if np.all(np.isnan(sk)) else f"{np.nanmean(sk):.1f}"
        lines.append(
            f"| {setting} | {method} | {met_s} | {np.mean(r['err']):.2f} | "
            f"{np.mean(r['jitter']):.2f}x ({np.max(r['jitter']):.1f}x) | {skate_s} | "
            f"{int(np.sum(r['hyper']))} | {int(np.sum(r['below']))} | {_ms(r['ms'])} | "
            f"{_ms(r['cpu'])} |"
        )
    cap = res.get(("capture", ""), {}).get("hyper", [])
    lines.append("")
    lines.append(f"The captures themselves: {int(np.sum(cap))} hyperextended arm/leg frames.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=5.0, help="length of each clip [s]")
    ap.add_argument("--clips", default=",".join(CLIPS), help="comma-separated clip names")
    args = ap.parse_args(argv)
    clips = {k: CLIPS[k] for k in args.clips.split(",")}
    t0 = time.perf_counter()
    res = run(clips, args.seconds)
    print(table(res))
    print(
        f"\n{len(clips)} clips of up to {args.seconds:g} s at ~30 fps; "
        f"{platform.processor() or platform.machine()}, "
        f"Python {platform.python_version()}, numpy {np.__version__}; "
        f"{time.perf_counter() - t0:.0f} s in all."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
