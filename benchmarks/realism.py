"""Realism of sparse full-body IK on held-out motion capture (docs/characters.md).

    .venv/bin/python benchmarks/realism.py                       # prints Markdown
    .venv/bin/python benchmarks/realism.py --every 10 --write docs/characters.md \
        --figure docs/figures/prior_vs_neutral.png
    .venv/bin/python benchmarks/realism.py --extra DIR           # more clips: every DIR/*.bvh
    .venv/bin/python benchmarks/realism.py --motion human --extra out/prior_data/eval_cc
        # the temporal prior's raw guesses (kinetree.learn.motion), offline and live

Clips: every ``--every``-th frame of captures of subjects the shipped ``"human"`` prior
was *not* trained on (its training clips are CMU subjects 1, 3, 6 and 7 on Reallusion's
skeleton; ``src/kinetree/learn/data/README.md``): CMU 05 (dance, turn step) and 12
(walk) and Xia et al.'s run and jump on the cgspeed CMU ``Hips`` skeleton
(tests/data/mocap, tests/data/bvh), CMU 131 (bvh11's three clips) and the CMPUT414
take (tests/data/bvh_corpus), and with ``--extra`` any folder (the Daz-style
``hip``/``abdomen``/``lShldr`` CMU 02_03 in ``outside/`` of ``collect_prior_clips.py``:
CMU subject 2 is reserved for the outside check, never for choosing settings).

Targets come from each frame's own FK: the pelvis pose plus the positions of head,
hands and feet (six-point setting) or head and hands (four-point setting), solved from
the neutral pose. Columns: solved (``result.success``, judged by kinetree on FK), the
mean per-joint position error against the captured pose over every body-part joint the
skeleton has (:func:`kinetree.io.body_parts.find_body_parts`), in % of the skeleton's
ankle-to-head height, and frames solved per second (one process, single solves).
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import kinetree
from kinetree.ik import Position
from kinetree.io.body_parts import find_body_parts
from kinetree.learn import load_prior
from kinetree.learn.prior import layout_of

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
CLIPS = {
    "CMU 05_04 dance": DATA / "mocap" / "cmu_05_04_dance.bvh",
    "CMU 05_03 turn step": DATA / "mocap" / "cmu_05_03_turn_step.bvh",
    "CMU 12_01 walk": DATA / "bvh" / "cmu_12_01_walk.bvh",
    "Xia run": DATA / "mocap" / "xia_angry_13_000_run.bvh",
    "Xia jump": DATA / "mocap" / "xia_neutral_16_000_jump.bvh",
    "CMU 131_01": DATA / "bvh_corpus" / "bvh11-cmu" / "resources__131_01.bvh",
    "CMU 131_02": DATA / "bvh_corpus" / "bvh11-cmu" / "resources__131_02.bvh",
    "CMU 131_03": DATA / "bvh_corpus" / "bvh11-cmu" / "resources__131_03.bvh",
    "CMPUT414 take": DATA / "bvh_corpus" / "cmpt414-cmu" / "Raw_Mocap_Files__1.bvh",
}
SETTINGS = {
    "six-point": ("head", "wrist_l", "wrist_r", "ankle_l", "ankle_r"),
    "four-point": ("head", "wrist_l", "wrist_r"),
}
SOLVERS: dict[str, dict[str, Any]] = {
    '`rest="neutral"` (auto)': {"rest": "neutral"},
    "auto, no rest": {},
    '`method="dls", rest="neutral"`': {"method": "dls", "rest": "neutral"},
    '`prior="human"` (auto)': {"prior": "human"},
    '`prior="human", method="dls"`': {"prior": "human", "method": "dls"},
}


def targets_of(model: kinetree.Model, q: np.ndarray, roles: tuple[str, ...]) -> dict[str, Any]:
    """The pelvis pose and the positions of ``roles`` at ``q`` (FK), keyed by frame."""
    parts = layout_of(model).parts
    T = model.fk_all(q)
    index = {n: i for i, n in enumerate(model.frame_names)}
    out: dict[str, Any] = {parts["pelvis"]: T[index[parts["pelvis"]]]}
    for role in roles:
        out[parts[role]] = Position(T[index[parts[role]], :3, 3])
    return out


def joint_error(model: kinetree.Model, q: np.ndarray, q_true: np.ndarray) -> float:
    """Mean distance over the body-part joints, in % of the ankle-to-head height."""
    layout = layout_of(model)
    idx = list(layout.node.values())
    d = model.fk_all(q)[idx, :3, 3] - model.fk_all(q_true)[idx, :3, 3]
    return float(np.linalg.norm(d, axis=1).mean() / layout.height * 100.0)


def run(
    clips: dict[str, Path], every: int, solvers: dict[str, dict[str, Any]]
) -> dict[tuple[str, str], dict[str, float]]:
    """``{(setting, solver): {"solved", "error", "fps", "n", "exact"}}`` over every clip."""
    loaded = {}
    for name, path in clips.items():
        clip = kinetree.read_bvh(path)
        if len(find_body_parts(clip.model)) and _usable(clip.model):
            loaded[name] = clip
        else:
            print(f"skipping {name}: no body parts for the prior", file=sys.stderr)
    out: dict[tuple[str, str], dict[str, float]] = {}
    for setting, roles in SETTINGS.items():
        for label, opts in solvers.items():
            ok, err, exact, n, seconds = 0, [], 0, 0, 0.0
            by_skeleton: dict[str, list[float]] = {}
            for clip in loaded.values():
                m = clip.model
                family = by_skeleton.setdefault(_skeleton(m), [])
                m.ik(targets_of(m, clip.q[0], roles), **opts)  # compile, load the prior
                for q_true in clip.q[::every]:
                    tg = targets_of(m, q_true, roles)
                    t = time.perf_counter()
                    r = m.ik(tg, **opts)
                    seconds += time.perf_counter() - t
                    n += 1
                    ok += bool(r.success)
                    exact += _meets(m, r.q, tg)
                    err.append(joint_error(m, r.q, q_true))
                    family.append(err[-1])
                print(f"  {setting:10s} {label:40s} {n} frames", file=sys.stderr)
            out[(setting, label)] = {
                "solved": 100.0 * ok / n,
                "exact": 100.0 * exact / n,
                "error": float(np.mean(err)),
                "fps": n / seconds,
                "n": n,
            } | {f"error {k}": float(np.mean(v)) for k, v in by_skeleton.items()}
    return out


def _skeleton(model: kinetree.Model) -> str:
    """A skeleton family's label: its pelvis and left shoulder joint names."""
    parts = layout_of(model).parts
    return f"{parts['pelvis']}/{parts.get('shoulder_l', '?')}"


def _usable(model: kinetree.Model) -> bool:
    try:
        layout_of(model)
    except kinetree.KinetreeError:
        return False
    return True


def _meets(model: kinetree.Model, q: np.ndarray, targets: dict[str, Any]) -> bool:
    """An independent check: FK of ``q`` within 1e-4 of the height on every target."""
    h = layout_of(model).height
    for frame, t in targets.items():
        p = t[:3, 3] if isinstance(t, np.ndarray) else np.asarray(t.xyz)
        if np.linalg.norm(model.fk(q, frame)[:3, 3] - p) > 1e-4 * h:
            return False
    return True


def table(results: dict[tuple[str, str], dict[str, float]]) -> str:
    lines = []
    for setting in SETTINGS:
        rows = [(lab, v) for (s, lab), v in results.items() if s == setting]
        n = rows[0][1]["n"]
        families = [k for k in rows[0][1] if k.startswith("error ")]
        head = "".join(f" {k[6:]} skeleton |" for k in families)
        lines += [
            f"**{setting}** ({int(n)} frames)",
            "",
            "| solver | solved | targets met (FK) | per-joint error, % of height |"
            f"{head} frames/s |",
            "|---|---|---|---|" + "---|" * len(families) + "---|",
        ]
        for lab, v in rows:
            cells = "".join(f" {v[k]:.2f} |" for k in families)
            lines.append(
                f"| {lab} | {v['solved']:.1f} % | {v['exact']:.1f} % | {v['error']:.2f} |"
                f"{cells} {v['fps']:.0f} |"
            )
        lines.append("")
    return "\n".join(lines)


def figure(path: Path, clips: dict[str, Path], roles: tuple[str, ...], every: int) -> None:
    """Per clip (a row): the captured pose, ``rest="neutral"`` and the prior side by side
    (``method="dls"`` both), at the frame of median prior error among every ``every``-th
    frame (a typical frame, not the best)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(11, 3.6 * len(clips)))
    for row, (name, clip_path) in enumerate(clips.items()):
        clip = kinetree.read_bvh(clip_path)
        m = clip.model
        layout = layout_of(m)
        frames = np.arange(0, clip.n_frames, every)
        solved = {}
        for k in frames:
            tg = targets_of(m, clip.q[k], roles)
            solved[k] = (tg, m.ik(tg, prior="human", method="dls").q)
        errors = [joint_error(m, solved[k][1], clip.q[k]) for k in frames]
        k = int(frames[np.argsort(errors)[len(errors) // 2]])
        tg, q_prior = solved[k]
        q_neutral = m.ik(tg, method="dls", rest="neutral").q
        poses = {
            "captured": clip.q[k],
            'rest="neutral"': q_neutral,
            'prior="human"': q_prior,
        }
        index = {n: j for j, n in enumerate(m.frame_names)}
        bones = _bones(m)
        for col, (title, q) in enumerate(poses.items()):
            ax = fig.add_subplot(len(clips), 3, 3 * row + col + 1, projection="3d")
            P = _swap_up(m.fk_all(q)[:, :3, 3], layout.up_world)
            for a, b in bones:
                ax.plot(*P[[index[a], index[b]]].T, color="0.25", lw=1.6)
            for target_frame in tg:
                ax.scatter(*P[index[target_frame]], color="tab:red", s=22)
            err = joint_error(m, q, clip.q[k])
            label = f"{name}, frame {k}\n{title}" if col == 0 else f"\n{title}: {err:.1f} %"
            ax.set_title(label, fontsize=9)
            c = P[index[layout.parts["pelvis"]]]
            r = 0.55 * layout.height
            ax.set_xlim(c[0] - r, c[0] + r)
            ax.set_ylim(c[1] - r, c[1] + r)
            ax.set_zlim(c[2] - r, c[2] + r)
            ax.set_axis_off()
            ax.view_init(elev=8, azim=-70)
    fig.suptitle(
        "Targets (red): pelvis pose, head and hands; per-joint error in % of height", y=0.995
    )
    fig.tight_layout()
    fig.savefig(path, dpi=80)


def _bones(m: kinetree.Model) -> list[tuple[str, str]]:
    """(frame, its nearest visible ancestor) for every frame but the world root."""
    visible = set(m.frame_names[1:])
    out = []
    for name in m.frame_names[1:]:
        for a in m.ancestors(m.frame_index(name))[:-1][::-1]:
            parent = m.node_names[int(a)]
            if parent in visible:
                out.append((name, parent))
                break
    return out


def _swap_up(p: np.ndarray, up: np.ndarray) -> np.ndarray:
    """Points with the world up as the plot's z."""
    axis = int(np.argmax(np.abs(up)))
    order = [i for i in range(3) if i != axis] + [axis]
    out = p[:, order]
    if up[axis] < 0:
        out[:, 2] = -out[:, 2]
    return out


MOTION_SETTINGS = {
    "VR: head + hands (poses)": ({"head": True, "wrist_l": True, "wrist_r": True}),
    "four: pelvis pose, head, hands": (
        {"pelvis": True, "head": False, "wrist_l": False, "wrist_r": False}
    ),
    "six: pelvis pose, head, hands, feet": (
        {"pelvis": True, "head": False, "wrist_l": False, "wrist_r": False}
        | {"ankle_l": False, "ankle_r": False}
    ),
}


def motion_eval(clips: dict[str, Path], prior: str, seconds: float, per_clip: bool = False) -> str:
    """Raw guesses of the temporal prior (before any IK) on held-out clips at 30 fps,
    offline and live: mean error over the body-part joints in % of the height, beside
    the neutral body placed on the tracked pelvis pose (four, six points) or, without a
    pelvis, turned to the head's heading and moved under the head (VR); and the
    guesses' jitter (mean second difference of the joints) over the capture's.
    ``per_clip``: one row per clip instead of per skeleton family."""
    from kinetree.learn.motion import load_motion_prior

    mp = load_motion_prior(prior)
    rows: dict[str, dict[str, list[float]]] = {}
    for name, path in clips.items():
        clip = kinetree.read_bvh(path)
        if not _usable(clip.model):
            continue
        m = clip.model
        step = max(1, round(1.0 / (30.0 * clip.frame_time)))
        q = clip.q[::step][: int(seconds * 30)]
        fps = 1.0 / (clip.frame_time * step)
        layout = layout_of(m)
        roles = list(layout.node)
        T = m.fk_all(q)
        truth = T[:, [layout.node[r] for r in roles]][..., :3, 3]
        rest = m.fk_all(m.neutral())
        bound = mp.bind(m)
        for setting, given in MOTION_SETTINGS.items():
            tracks = {
                layout.parts[r]: (T[:, layout.node[r]] if pose else T[:, layout.node[r], :3, 3])
                for r, pose in given.items()
            }
            for mode in ("offline", "live"):
                if mode == "offline":
                    poses, placed = bound.guess_parts(tracks, fps)
                else:
                    poses, placed = _live_parts(bound, tracks, len(q), fps)
                guess = np.stack(
                    [[pl.get(r, poses[t][:3, 3]) for r in roles] for t, pl in enumerate(placed)]
                )
                err = np.linalg.norm(guess - truth, axis=-1).mean(axis=1) / layout.height * 100
                acc_g = np.linalg.norm(np.diff(guess, 2, axis=0), axis=-1).mean()
                acc_t = np.linalg.norm(np.diff(truth, 2, axis=0), axis=-1).mean()
                key = f"{setting} | {mode} | {name if per_clip else _skeleton(m)}"
                r = rows.setdefault(key, {"err": [], "neutral": [], "jitter": []})
                r["err"] += list(err)
                r["jitter"].append(acc_g / acc_t)
                if mode == "offline":
                    r["neutral"] += list(_neutral_error(m, layout, roles, rest, T, truth, given))
                else:
                    r["neutral"] = rows[key.replace("| live |", "| offline |")]["neutral"]
        print(f"  {name}: {len(q)} frames", file=sys.stderr)
    lines = [
        f"| trackers | mode | {'clip' if per_clip else 'skeleton'} | guess error, % of height |"
        " neutral body | jitter vs capture |",
        "|---|---|---|---|---|---|",
    ]
    for key, r in sorted(rows.items()):
        setting, mode, family = key.split(" | ")
        lines.append(
            f"| {setting} | {mode} | {family} | {np.mean(r['err']):.2f} |"
            f" {np.mean(r['neutral']):.2f} |"
            f" {np.mean(r['jitter']):.2f}x |"
        )
    return "\n".join(lines)


def _live_parts(bound: Any, tracks: dict[str, np.ndarray], n: int, fps: float) -> tuple:
    """The stream's raw guesses, frame by frame (its fit skipped)."""
    from kinetree.learn.motion import MotionPriorStream

    s = MotionPriorStream(bound, fps)
    poses, placed = [], []
    fit = bound._fit
    try:
        bound._fit = lambda T, pl, q, first: (poses.append(T), placed.append(pl), q)[2]
        for t in range(n):
            s.step({k: v[t] for k, v in tracks.items()})
    finally:
        bound._fit = fit
    return poses, placed


def _neutral_error(m, layout, roles, rest, T, truth, given) -> np.ndarray:
    """The neutral body's error per frame (see :func:`motion_eval`)."""
    R0 = rest[[layout.node[r] for r in roles]]
    if "pelvis" in given:
        kp = layout.node["pelvis"]
        local = np.einsum("ji,nj->ni", rest[kp, :3, :3], R0[:, :3, 3] - rest[kp, :3, 3])
        placed = np.einsum("tij,nj->tni", T[:, kp, :3, :3], local) + T[:, kp, None, :3, 3]
    else:
        kh = layout.node["head"]
        up = layout.up_world
        # yaw of the head relative to rest, about up
        fwd_rest = (rest[layout.node["pelvis"], :3, :3] @ layout.R_pelvis_body)[:, 2]
        to_head = rest[kh, :3, :3].T @ fwd_rest  # the forward in the head's frame
        fwd = np.einsum("tij,j->ti", T[:, kh, :3, :3], to_head)

        def flat(v):
            v = v - np.outer(v @ up, up) if v.ndim == 2 else v - (v @ up) * up
            return v / np.linalg.norm(v, axis=-1, keepdims=True)

        a, b = flat(fwd_rest), flat(fwd)
        ang = np.arctan2(np.cross(a, b) @ up, b @ a)
        placed = []
        for t, th in enumerate(ang):
            K = np.array([[0, -up[2], up[1]], [up[2], 0, -up[0]], [-up[1], up[0], 0]])
            R = np.eye(3) + np.sin(th) * K + (1 - np.cos(th)) * K @ K
            p = (R0[:, :3, 3] - rest[kh, :3, 3]) @ R.T + T[t, kh, :3, 3]
            placed.append(p)
        placed = np.stack(placed)
    return np.linalg.norm(placed - truth, axis=-1).mean(axis=1) / layout.height * 100


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--every", type=int, default=20, help="use every Nth frame")
    ap.add_argument("--extra", type=Path, help="a folder of more held-out .bvh clips")
    ap.add_argument("--write", type=Path, help="replace the table in this Markdown file")
    ap.add_argument("--figure", type=Path, help="write the side-by-side PNG here")
    ap.add_argument("--quick", action="store_true", help="dls rows and the prior only")
    ap.add_argument(
        "--motion",
        metavar="PRIOR",
        help="the temporal prior's raw guesses instead (a name or .npz)",
    )
    ap.add_argument("--seconds", type=float, default=10.0, help="--motion: seconds per clip")
    ap.add_argument("--only-extra", action="store_true", help="only the --extra clips")
    ap.add_argument("--per-clip", action="store_true", help="--motion: a row per clip")
    ap.add_argument(
        "--prior",
        default="human",
        metavar="PRIOR",
        help='the pose prior of the prior="human" rows (a shipped name or .npz)',
    )
    args = ap.parse_args(argv)
    if args.motion is not None:
        clips = {} if args.only_extra else dict(CLIPS)
        if args.extra is not None:
            clips |= {p.stem: p for p in sorted(args.extra.glob("*.bvh"))}
        print(motion_eval(clips, args.motion, args.seconds, args.per_clip))
        return 0
    clips = dict(CLIPS)
    if args.extra is not None:
        clips |= {p.stem: p for p in sorted(args.extra.glob("*.bvh"))}
    solvers = SOLVERS
    if args.quick:
        solvers = {k: v for k, v in SOLVERS.items() if v.get("method") == "dls"}
    prior = load_prior(args.prior)
    solvers = {k: v | {"prior": prior} if "prior" in v else v for k, v in solvers.items()}
    t = time.perf_counter()
    results = run(clips, args.every, solvers)
    text = table(results)
    text += (
        f"\n{platform.processor() or platform.machine()}, Python {platform.python_version()}, "
        f"every {args.every}th frame, {time.perf_counter() - t:.0f} s in all.\n"
    )
    print(text)
    if args.write is not None:
        _replace(args.write, text)
    if args.figure is not None:
        shown = {k: CLIPS[k] for k in ("CMU 05_04 dance", "CMU 12_01 walk")}
        shown |= {p.stem: p for p in clips.values() if p.parent == args.extra}
        figure(args.figure, shown, SETTINGS["four-point"], args.every)
    return 0


def _replace(path: Path, text: str) -> None:
    begin, end = "<!-- realism:begin -->", "<!-- realism:end -->"
    old = path.read_text() if path.exists() else f"{begin}\n{end}\n"
    head, _, rest = old.partition(begin)
    _, _, tail = rest.partition(end)
    path.write_text(f"{head}{begin}\n{text}\n{end}{tail}")


if __name__ == "__main__":
    raise SystemExit(main())
