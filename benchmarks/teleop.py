"""Teleoperation: a tracked person's head and hands drive Unitree's G1, frame by frame
(``kinetree.anim.Teleop``; docs/characters.md, "Teleoperation: a person drives a G1").

    .venv/bin/python benchmarks/teleop.py                     # prints a Markdown table
    .venv/bin/python benchmarks/teleop.py --seconds 3 --clips walk,dance   # quicker
    .venv/bin/python benchmarks/teleop.py --gif docs/figures/g1_teleop.gif \\
        --side-by-side docs/figures/tracking_side_by_side.gif      # the two figures

Needs example-robot-data (the G1). Clips: captures of subjects that neither the shipped
``"human"`` prior was trained on nor are reserved for outside checks (the same set as
``benchmarks/motion.py``): CMU 12_01 walk (bundled), CMU 05_04 dance and 05_03 turn step,
Xia et al.'s run and jump (tests/data/mocap), CMU 131_01 (tests/data/bvh_corpus), each
resampled to about 30 fps and cut to its first ``--seconds`` (the calibration T-pose
frame 0 left out). The person's head and both hands as 6D poses (their FK) are the
stream; the robot stands with its feet fixed, its origin following the person's walk
(``follow=0.5`` s).

Columns: frames with every robot target met (FK of the result within 2e-6 m and rad
of the head point, both hands and both feet); frames within the joint limits; feet
drift [mm] (largest distance of an ankle from where it stood); jitter ratio (mean second
difference of the robot's head point and hands over the frames / of their targets':
1.0 adds no shake); joint spikes (a joint's one-frame change above 0.25 rad that
reverses the next frame); largest joint change per frame [rad]; time per frame: median
wall, mean CPU (process time) and frames/s of the mean CPU time, one process, one
thread. CPU time is reported beside wall time because this machine is shared: wall
times there include waiting for a core.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402
from motion import CLIPS  # noqa: E402  (the held-out clips of benchmarks/motion.py)

import kinetree  # noqa: E402
from kinetree.anim import Motion, Teleop, Tracker  # noqa: E402
from kinetree.anim.tracking._skeleton import skeleton  # noqa: E402
from kinetree.ik import Pose, Position  # noqa: E402

TOL = 2e-6
SPIKE = 0.25  # [rad]
ROLES = ("head", "wrist_l", "wrist_r")


def person_stream(path: Path, seconds: float) -> tuple[Any, np.ndarray, float, float, dict]:
    """``(clip, q, fps, floor, tracks)``: the clip at about 30 fps without its first
    frame, cut to ``seconds``; the head and hands as ``(T, 4, 4)`` tracks."""
    clip = kinetree.read_bvh(path)
    model = clip.model
    step = max(1, round(clip.fps / 30.0))
    fps = clip.fps / step
    q = np.asarray(clip.q[::step][1 : 1 + int(seconds * fps)], dtype=np.float64)
    sk = skeleton(model)
    T = model.fk_all(q)
    feet = [
        sk.index[sk.parts[r]] for r in ("ankle_l", "ankle_r", "toe_l", "toe_r") if r in sk.parts
    ]
    floor = float(T[:, feet, sk.up_axis, 3].min())
    tracks = {sk.parts[r]: T[:, sk.index[sk.parts[r]]] for r in ROLES}
    return clip, q, fps, floor, tracks


def _point(robot: kinetree.Model, q: np.ndarray, frame: str, t: Any) -> np.ndarray:
    M = robot.fk(q, frame)
    if isinstance(t, Pose) and t.point is not None:
        return M[:3, :3] @ np.asarray(t.point) + M[:3, 3]
    return M[:3, 3]


def met(robot: kinetree.Model, q: np.ndarray, targets: dict[str, Any]) -> bool:
    """Every robot target within TOL at ``q`` by FK (a masked head turn on its axis)."""
    for frame, t in targets.items():
        if isinstance(t, Position):
            if np.linalg.norm(robot.fk(q, frame)[:3, 3] - t.xyz) > TOL:
                return False
            continue
        A = t.T if isinstance(t, Pose) else t
        if np.linalg.norm(_point(robot, q, frame, t) - A[:3, 3]) > TOL:
            return False
        R = A[:3, :3] @ robot.fk(q, frame)[:3, :3].T
        mask = getattr(t, "orientation_mask", None)
        if mask is not None:
            k = int(np.flatnonzero(np.asarray(mask))[0])
            i, j = [a for a in range(3) if a != k]
            err = abs(np.arctan2(R[j, i] - R[i, j], R[i, i] + R[j, j]))
        else:
            err = np.arccos(np.clip(0.5 * (np.trace(R) - 1.0), -1.0, 1.0))
        if err > 10 * TOL:  # arccos loses digits near 0
            return False
    return True


def drive(tp: Teleop, tracks: dict[str, np.ndarray], n: int) -> dict[str, Any]:
    """Stream the tracks through ``tp``; per-frame results, targets and timings."""
    robot = tp.robot
    q = np.empty((n, robot.nq))
    wall, cpu, ok = np.empty(n), np.empty(n), np.zeros(n, dtype=bool)
    targets = []
    for t in range(n):
        frame = {k: a[t] for k, a in tracks.items()}
        w0, c0 = time.perf_counter(), time.process_time()
        r = tp.update(frame)
        wall[t], cpu[t] = time.perf_counter() - w0, time.process_time() - c0
        q[t] = r.q
        targets.append(tp.targets)
        ok[t] = met(robot, r.q, tp.targets)
    return {"q": q, "wall": wall, "cpu": cpu, "met": ok, "targets": targets}


def measures(tp: Teleop, run: dict[str, Any]) -> dict[str, float]:
    robot, b = tp.robot, tp.body
    q, targets = run["q"], run["targets"]
    n = len(q)
    frames = (b.head_frame, *b.hands)
    P = np.stack([[_point(robot, q[t], f, targets[t][f]) for f in frames] for t in range(n)])
    goal = np.stack(
        [
            [
                (targets[t][f].T if isinstance(targets[t][f], Pose) else targets[t][f])[:3, 3]
                for f in frames
            ]
            for t in range(n)
        ]
    )
    acc = np.linalg.norm(np.diff(P, 2, axis=0), axis=2).mean()
    acc_goal = np.linalg.norm(np.diff(goal, 2, axis=0), axis=2).mean()
    T_all = robot.fk_all(q)
    index = {name: i for i, name in enumerate(robot.frame_names)}
    drift = max(
        float(np.linalg.norm(T_all[:, index[f], :3, 3] - T[:3, 3], axis=1).max())
        for f, T in b.feet.items()
    )
    dq = np.diff(q[:, 7:], axis=0)  # the joints (the free base's 7 coordinates left out)
    spikes = int(np.sum((np.abs(dq[:-1]) > SPIKE) & (np.sign(dq[:-1]) != np.sign(dq[1:]))))
    return {
        "met": float(run["met"].mean() * 100),
        "limits": float(robot.within_limits(q).mean() * 100),
        "drift_mm": drift * 1e3,
        "jitter": float(acc / max(acc_goal, 1e-12)),
        "spikes": spikes,
        "max_step": float(np.abs(dq).max()) if len(dq) else 0.0,
        "wall_ms": float(np.median(run["wall"]) * 1e3),
        "cpu_ms": float(run["cpu"].mean() * 1e3),
        "fps": float(1.0 / run["cpu"].mean()),
        "frames": n,
    }


def shown(model: kinetree.Model, q: np.ndarray, scale: float, up: int, name: str) -> Motion:
    """The person as drawn beside the robot: metres (``scale`` per file unit), z up, the
    pelvis starting over the origin (BVH position channels scaled as lengths)."""
    import dataclasses

    from kinetree.model import JointType

    origin = model.origin.copy()
    origin[:, :3, 3] *= scale
    q_offset = model.q_offset.copy()
    prismatic = np.zeros(model.nq, dtype=bool)
    for k in range(model.n_nodes):
        if model.joint_type[k] == JointType.PRISMATIC and model.q_index[k] >= 0:
            prismatic[model.q_index[k]] = True
            q_offset[k] *= scale
    q = np.where(prismatic, q * scale, q)
    A = np.eye(4)
    if up == 1:  # y up -> z up, facing kept
        A[:3, :3] = [[1, 0, 0], [0, 0, -1], [0, 1, 0]]
    origin[0] = A @ origin[0]
    m = dataclasses.replace(model, origin=origin, q_offset=q_offset, units="m")
    p0 = m.fk_all(q[:1])[0, :, :3, 3]
    origin = origin.copy()
    origin[0, 0, 3] -= p0[:, 0].mean()
    origin[0, 1, 3] -= p0[:, 1].mean()
    origin[0, 2, 3] -= float(m.fk_all(q)[:, :, 2, 3].min())
    return Motion(dataclasses.replace(m, origin=origin), q, fps=30.0, name=name)


def g1_gif(path: str, seconds: float) -> None:
    from kinetree.viz import animate_side_by_side

    clip, q, fps, floor, tracks = person_stream(CLIPS["dance"], seconds)
    tp = Teleop("g1", fps=fps, person=clip.model, floor=floor, follow=0.5)
    run = drive(tp, tracks, len(q))
    sk = skeleton(clip.model)
    person = shown(clip.model, q, 1.32 / sk.height, sk.up_axis, "person (CMU 05_04)")
    robot = Motion(tp.robot, run["q"], fps=fps, name="G1, teleoperated")
    animate_side_by_side(
        [person, robot],
        path,
        titles=["tracked person: head + hands", "Unitree G1 (Teleop, feet fixed)"],
        fps=12,
        dpi=50,
    )
    print(f"wrote {path}", file=sys.stderr)


def side_by_side_gif(path: str, seconds: float) -> None:
    """Truth, today's per-frame prior and the live tracker from head and hands (VR)."""
    from kinetree.viz import animate_side_by_side

    clip, q, fps, floor, tracks = person_stream(CLIPS["dance"], seconds)
    model = clip.model
    n = len(q)
    per_frame = np.empty_like(q)
    prev = None
    for t in range(n):
        r = model.ik({k: a[t] for k, a in tracks.items()}, q0=prev, prior="human")
        per_frame[t] = prev = r.q
    tracker = Tracker(model, fps=fps, ground=floor)
    live = np.stack([tracker.update({k: a[t] for k, a in tracks.items()}).q for t in range(n)])
    sk = skeleton(model)
    s = 1.7 / sk.height
    panels = [
        shown(model, q, s, sk.up_axis, "truth"),
        shown(model, per_frame, s, sk.up_axis, "per-frame prior"),
        shown(model, live, s, sk.up_axis, "Tracker"),
    ]
    animate_side_by_side(
        panels,
        path,
        titles=["capture (truth)", "per-frame ik(prior='human')", "Tracker (live)"],
        fps=12,
        dpi=45,
    )
    print(f"wrote {path}", file=sys.stderr)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--clips", default=",".join(CLIPS))
    ap.add_argument("--gif", help="write the G1 teleoperation GIF here")
    ap.add_argument("--side-by-side", help="write the truth | per-frame | tracker GIF here")
    ap.add_argument("--gif-seconds", type=float, default=4.0)
    ap.add_argument("--no-table", action="store_true")
    args = ap.parse_args()
    if not args.no_table:
        rows = []
        for name in args.clips.split(","):
            clip, q, fps, floor, tracks = person_stream(CLIPS[name], args.seconds)
            tp = Teleop("g1", fps=fps, person=clip.model, floor=floor, follow=0.5)
            drive(tp, tracks, min(10, len(q)))  # compiled kernels warm
            tp.reset()
            row = measures(tp, drive(tp, tracks, len(q)))
            rows.append((name, row))
            print(name, " ".join(f"{k}={v:.4g}" for k, v in row.items()), file=sys.stderr)
        cols = list(rows[0][1])
        print(f"G1 teleoperation from head + hands, {platform.processor() or platform.machine()}, "
              f"{os.cpu_count()} cores, one thread\n")  # fmt: skip
        print("| clip | " + " | ".join(cols) + " |")
        print("|---" * (len(cols) + 1) + "|")
        for name, row in rows:
            print(f"| {name} | " + " | ".join(f"{row[c]:.4g}" for c in cols) + " |")
        total = {c: np.mean([r[c] for _, r in rows]) for c in cols}
        print("| mean | " + " | ".join(f"{total[c]:.4g}" for c in cols) + " |")
    if args.gif:
        g1_gif(args.gif, args.gif_seconds)
    if args.side_by_side:
        side_by_side_gif(args.side_by_side, args.gif_seconds)


if __name__ == "__main__":
    main()
