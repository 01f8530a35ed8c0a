"""The benchmark scenarios: targets, the one success judge, the timers, the tables.

Every solver (kinetree's methods and each installed peer) gets the same targets,
the same start configuration and the same judge: kinetree's FK of the returned
``q``, position error [m] and rotation angle [rad] both within the scenario's
tolerance, and every joint within its limits (1e-9 rad of slack).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import peers as P

import kinetree
from kinetree.ik import Pose, Position
from kinetree.spatial import pose_error

perf = time.perf_counter

#: kinetree's IK methods in the pose tables.
METHODS = ("auto", "pinv", "dls", "sdls", "ccd", "lbfgs")
#: kinetree auto's stopping rule in every scenario.
TIME_BUDGET = 0.005
#: Slack on the joint limits before a solution counts as violating them [rad or m].
LIMIT_SLACK = 1e-9
SEED = 0


@dataclass
class Config:
    n: int = 1000
    quick: bool = False
    peers: bool = True
    #: Cap on targets for slow solvers (scipy L-BFGS-B, ikpy, pytorch_kinematics single solves).
    slow_cap: int = 100
    #: Wall-clock cap per table row [s]: a row stops early (and says so) past it.
    row_seconds: float = 60.0
    batch_sizes: tuple[int, ...] = (1, 100, 10_000, 100_000)
    fk_n: int = 100_000
    only: tuple[str, ...] = ()
    log: Callable[[str], None] = print


@dataclass
class Table:
    key: str
    title: str
    header: list[str]
    rows: list[list[str]] = field(default_factory=list)
    intro: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def markdown(self) -> str:
        out = [f"### {self.title}", ""]
        if self.intro:
            out += [*self.intro, ""]
        out.append("| " + " | ".join(self.header) + " |")
        out.append(
            "|" + "|".join("---" if i == 0 else "---:" for i in range(len(self.header))) + "|"
        )
        out += ["| " + " | ".join(r) + " |" for r in self.rows]
        if self.notes:
            out += ["", *self.notes]
        return "\n".join(out) + "\n"


# --- the judge --------------------------------------------------------------------------------


def limit_violation(model: kinetree.Model, Q: np.ndarray) -> np.ndarray:
    """Per configuration: how far the worst joint is outside its limits (0 when inside)."""
    lo, hi = model.limits[:, 0], model.limits[:, 1]
    v = np.maximum(lo - Q, Q - hi)
    v = np.where(np.isfinite(v), v, 0.0)
    return np.maximum(v.max(axis=-1), 0.0)


def judge(
    model: kinetree.Model,
    Q: np.ndarray,
    targets: dict[str, tuple[np.ndarray, str]],
    tol: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(success, max error, limit violation)`` of configurations ``Q`` (n, dof).

    ``targets`` maps a frame to ``(T (n, 4, 4), kind)``, kind "pose" or "position".
    Non-finite ``q`` fails.
    """
    Q = np.asarray(Q, dtype=float)
    finite = np.all(np.isfinite(Q), axis=-1)
    Qs = np.where(finite[:, None], Q, model.q_neutral)
    worst = np.zeros(len(Q))
    for frame, (T, kind) in targets.items():
        e = pose_error(T, model.fk(Qs, frame))
        ep = np.linalg.norm(e[:, :3], axis=1)
        er = np.linalg.norm(e[:, 3:], axis=1) if kind == "pose" else np.zeros(len(Q))
        worst = np.maximum(worst, np.maximum(ep, er))
    viol = limit_violation(model, Qs)
    ok = finite & (worst <= tol) & (viol <= LIMIT_SLACK)
    return ok, worst, np.where(finite, viol, np.inf)


# --- timing -----------------------------------------------------------------------------------


@dataclass
class Run:
    label: str
    times: np.ndarray  # seconds per solve
    Q: np.ndarray
    first: float  # seconds of the first (warm-up) call
    capped: str = ""  # why fewer targets than the scenario's n
    own_success: np.ndarray | None = None  # the solver's own verdict (kinetree rows)
    ok: np.ndarray | None = None
    close: np.ndarray | None = None  # error within tol, limits ignored
    viol: np.ndarray | None = None

    @property
    def n(self) -> int:
        return len(self.times)


def time_single(
    label: str,
    solve: Callable[[int, np.ndarray], Any],
    n: int,
    q0: np.ndarray,
    row_seconds: float,
    cap: int | None = None,
    warm: Callable[[], Any] | None = None,
    chain: bool = False,
) -> Run:
    """Call ``solve(i, q0)`` for targets ``0..n-1`` one at a time, each timed on its own.

    The first call (``warm()``, else ``solve(0, q0)``) is timed separately and not
    counted: it pays for JIT compilation / template building. ``solve`` returns ``q``
    or ``(q, own_success)``. ``chain``: each solve starts from the previous answer.
    """
    t = perf()
    warm() if warm is not None else solve(0, q0)
    first = perf() - t
    m = n if cap is None else min(n, cap)
    capped = f"first {m} of {n} targets (slow solver)" if m < n else ""
    times, qs, own = [], [], []
    deadline = perf() + row_seconds
    q_prev = q0
    for i in range(m):
        start = q_prev if chain else q0
        t = perf()
        out = solve(i, start)
        dt = perf() - t
        if isinstance(out, tuple):
            q, s = out
            own.append(bool(s))
        else:
            q = out
        q = np.asarray(q, dtype=float)
        times.append(dt)
        qs.append(q)
        q_prev = q
        if perf() > deadline and i + 1 < m:
            capped = f"first {i + 1} of {n} targets (row stopped after {row_seconds:.0f} s)"
            break
    return Run(label, np.array(times), np.array(qs), first, capped, np.array(own) if own else None)


def us(x: float) -> str:
    x *= 1e6
    if not math.isfinite(x):
        return "-"
    if x >= 1000:
        return f"{x:,.0f}"
    return f"{x:.1f}" if x >= 10 else f"{x:.2f}"


def ratio(t: float, ref: float) -> str:
    if not (ref > 0 and math.isfinite(t)):
        return "-"
    r = t / ref
    if 0.95 <= r <= 1.05:
        return "1.0x"
    return f"{r:.1f}x slower" if r > 1 else f"{1 / r:.1f}x faster"


SINGLE_HEADER = [
    "solver",
    "n",
    "success",
    "error ≤ tol (limits ignored)",
    "median µs",
    "mean µs",
    "p99 µs",
    "solves/s",
    "max limit viol. [rad]",
    "median vs kinetree auto",
    "first call [ms]",
]


def single_rows(runs: list[Run], ref: Run | None) -> tuple[list[list[str]], list[str]]:
    """Table rows for single-solve runs; the ratio compares medians on the same first n targets."""
    rows, notes = [], []
    marks = "*†‡§¶#"
    k = 0
    for r in runs:
        assert r.ok is not None and r.viol is not None
        label = r.label
        if r.capped:
            mark = marks[k % len(marks)] * (1 + k // len(marks))
            k += 1
            label += mark
            notes.append(f"{mark} {r.label}: {r.capped}.")
        med = float(np.median(r.times))
        if ref is None or r is ref:
            rr = "1.0x (reference)" if r is ref else "-"
        else:
            rr = ratio(med, float(np.median(ref.times[: r.n])))
        vmax = float(np.max(r.viol)) if r.n else 0.0
        rows.append(
            [
                label,
                str(r.n),
                f"{100 * r.ok.mean():.1f}%",
                f"{100 * r.close.mean():.1f}%",
                us(med),
                us(float(np.mean(r.times))),
                us(float(np.percentile(r.times, 99))),
                f"{1 / np.mean(r.times):,.0f}",
                "0" if vmax == 0 else f"{vmax:.2g}",
                rr,
                f"{1e3 * r.first:.1f}",
            ]
        )
        if r.own_success is not None and r.own_success.shape == r.ok.shape:
            bad = int(np.sum(r.own_success != r.ok))
            if bad:
                notes.append(
                    f"Note: {r.label} reported success differently from the judge on {bad} of "
                    f"{r.n} targets (kinetree's own flag vs FK check)."
                )
    return rows, notes


# --- targets ----------------------------------------------------------------------------------


def pose_targets(model: kinetree.Model, n: int, seed: int = SEED) -> np.ndarray:
    """FK of ``n`` uniform random configurations within the limits (fixed seed)."""
    return model.fk(model.random_configuration(n, rng=seed))


def _kinetree_solver(model: kinetree.Model, T: np.ndarray, method: str, kind: str) -> Callable:
    opts: dict[str, Any] = {} if method == "auto" else {"method": method}
    if method == "auto":
        opts["time_budget"] = TIME_BUDGET
    if kind == "pose":
        Ts = [np.ascontiguousarray(t) for t in T]

        def solve(i: int, q0: np.ndarray) -> tuple[np.ndarray, bool]:
            r = model.ik(Ts[i], q0=q0, **opts)
            return r.q, r.success

    else:
        ps = [Position(np.ascontiguousarray(t[:3, 3])) for t in T]

        def solve(i: int, q0: np.ndarray) -> tuple[np.ndarray, bool]:
            r = model.ik(ps[i], q0=q0, **opts)
            return r.q, r.success

    return solve


def _has_closed_form(model: kinetree.Model) -> bool:
    try:
        from kinetree.ik.analytic import supports
    except ImportError:
        return False
    return bool(supports(model))


def _judge_run(
    run: Run, model: kinetree.Model, targets: dict[str, tuple[np.ndarray, str]], tol: float
) -> None:
    sub = {f: (T[: run.n], k) for f, (T, k) in targets.items()}
    run.ok, worst, run.viol = judge(model, run.Q.reshape(run.n, model.dof), sub, tol)
    run.close = worst <= tol


def arm_scenario(cfg: Config, name: str, kind: str = "pose") -> tuple[Table, Table | None]:
    """One arm, single pose (or position-only) targets: kinetree's methods, then every peer.

    Returns the results table and, for peers, a table of FK agreement / settings.
    """
    model = kinetree.load(name)
    n, tol = cfg.n, 1e-6
    T = pose_targets(model, n)
    q0 = model.neutral()
    targets = {model.end_effectors[0]: (T, kind)}
    runs: list[Run] = []
    methods: list[str] = list(METHODS)
    if kind == "pose" and _has_closed_form(model):
        methods.insert(1, "analytic")
    for m in methods:
        cap = cfg.slow_cap if m == "lbfgs" else None
        cfg.log(f"  {name} {kind}: kinetree {m}")
        r = time_single(
            f"kinetree {m}", _kinetree_solver(model, T, m, kind), n, q0, cfg.row_seconds, cap
        )
        _judge_run(r, model, targets, tol)
        runs.append(r)
    ref = runs[0]

    fk_rows: list[list[str]] = []
    skipped: list[str] = []
    arm = P.arm(name) if cfg.peers else None
    if arm is not None:
        for peer in P.all_peers():
            try:
                t = perf()
                peer.prepare(arm, kind, tol)
                setup = perf() - t
            except P.Skip as exc:
                skipped.append(f"{peer.label}: {exc}")
                continue
            except Exception as exc:  # a peer that breaks must not stop the benchmark
                skipped.append(f"{peer.label}: setup failed ({type(exc).__name__}: {exc})")
                continue
            try:
                disc = P.fk_discrepancy(peer, arm)
            except Exception as exc:
                skipped.append(f"{peer.label}: FK check failed ({type(exc).__name__}: {exc})")
                continue
            fk_rows.append([peer.label, f"{disc:.1e}", f"{1e3 * setup:.0f}"])
            if disc > 1e-6:
                skipped.append(
                    f"{peer.label}: its model differs from kinetree's by {disc:.1e} (> tol)"
                )
                continue
            cfg.log(f"  {name} {kind}: {peer.label}")

            def solve(i: int, q: np.ndarray, peer: P.Peer = peer) -> np.ndarray:
                return peer.solve(T[i], q)

            try:
                r = time_single(peer.label, solve, n, q0, cfg.row_seconds, peer.cap or None)
            except Exception as exc:
                skipped.append(f"{peer.label}: failed while solving ({type(exc).__name__}: {exc})")
                continue
            _judge_run(r, model, targets, tol)
            runs.append(r)
    rows, notes = single_rows(runs, ref)
    what = "6D pose" if kind == "pose" else "position-only"
    title = f"{name}: {what} IK, {n} targets"
    intro = [
        f"Targets: FK of {n} uniform random configurations within the limits "
        f"(`model.random_configuration({n}, rng={SEED})`); every solve starts from "
        f"`q0 = model.neutral()`; success = kinetree FK of the returned q within "
        f"{tol:g} m{'' if kind == 'position' else f' and {tol:g} rad'} and all joints "
        f"within limits. kinetree: `model.ik({'T' if kind == 'pose' else 'Position(p)'}, "
        f"q0=q0, time_budget={TIME_BUDGET})` for auto, `method=...` with default options "
        "for the others.",
    ]
    if skipped:
        notes.append("Peers not in this table: " + "; ".join(skipped) + ".")
    table = Table(f"{name}-{kind}", title, SINGLE_HEADER, rows, intro, notes)
    agree = None
    if fk_rows:
        agree = Table(
            f"{name}-{kind}-fk",
            f"{name}: peer models vs kinetree (FK agreement)",
            ["peer", "max abs. difference of the 4x4 tip pose, 9 configs", "setup [ms]"],
            fk_rows,
            notes=list(dict.fromkeys(arm.notes)) if arm else [],
        )
    return table, agree


def analytic_scenario(cfg: Config, name: str) -> Table:
    """Closed form vs numeric on a small arm with position targets."""
    model = kinetree.load(name)
    n, tol = cfg.n, 1e-6
    T = pose_targets(model, n)
    q0 = model.neutral()
    targets = {model.end_effectors[0]: (T, "position")}
    runs = []
    for m in ("analytic", "auto", "dls"):
        cfg.log(f"  {name}: kinetree {m}")
        r = time_single(
            f"kinetree {m}", _kinetree_solver(model, T, m, "position"), n, q0, cfg.row_seconds
        )
        _judge_run(r, model, targets, tol)
        runs.append(r)
    rows, notes = single_rows(runs, runs[1])
    intro = [
        f"Position targets `Position(p)` from FK of {n} random configurations within the "
        f"limits; q0 = `model.neutral()`; tol {tol:g} m. `analytic` returns the closed-form "
        "branch nearest q0; the ratio column compares with kinetree auto.",
    ]
    return Table(
        name,
        f"{name}: closed form vs numeric, {n} position targets",
        SINGLE_HEADER,
        rows,
        intro,
        notes,
    )


# --- humanoid: four effectors along a smooth trajectory -----------------------------------------


def humanoid_trajectory(model: kinetree.Model, n: int) -> np.ndarray:
    """A smooth upper-body motion ``(n, dof)``: arms and spine swing, legs stay put."""
    gen = np.random.default_rng(SEED)
    qn = model.neutral()
    amp = np.zeros(model.dof)
    for j, a in (
        ("shoulder_r", 0.5),
        ("shoulder_l", 0.5),
        ("elbow_r", 0.5),
        ("elbow_l", 0.5),
        ("wrist_r", 0.3),
        ("wrist_l", 0.3),
        ("spine", 0.15),
        ("chest", 0.15),
    ):
        amp[model.joint_indices(j)] = a
    phase = gen.uniform(0, 2 * np.pi, model.dof)
    t = np.arange(n)[:, None]
    Q = qn + amp * np.sin(2 * np.pi * t / 250.0 + phase) * np.minimum(1.0, t / 50.0)
    return np.clip(Q, model.limits[:, 0], model.limits[:, 1])


def humanoid_scenario(cfg: Config) -> Table:
    model = kinetree.load("humanoid")
    n, tol = cfg.n, 1e-6
    Qtraj = humanoid_trajectory(model, n)
    q0 = model.neutral()
    hands = {f: model.fk(Qtraj, f) for f in ("hand_r", "hand_l")}
    feet = {f: model.fk(q0, f) for f in ("foot_r", "foot_l")}
    targets = {
        **{f: (T, "pose") for f, T in hands.items()},
        **{f: (np.broadcast_to(T, (n, 4, 4)), "pose") for f, T in feet.items()},
    }
    frames = [
        {
            "hand_r": Pose(hands["hand_r"][i]),
            "hand_l": Pose(hands["hand_l"][i]),
            "foot_r": Pose(feet["foot_r"]),
            "foot_l": Pose(feet["foot_l"]),
        }
        for i in range(n)
    ]
    runs = []
    for m in METHODS:
        opts: dict[str, Any] = {"rest": "neutral"}
        if m == "auto":
            opts["time_budget"] = TIME_BUDGET
        else:
            opts["method"] = m

        def solve(i: int, q: np.ndarray, opts: dict[str, Any] = opts) -> tuple[np.ndarray, bool]:
            r = model.ik(frames[i], q0=q, **opts)
            return r.q, r.success

        cap = cfg.slow_cap if m == "lbfgs" else None
        cfg.log(f"  humanoid: kinetree {m}")
        r = time_single(f"kinetree {m}", solve, n, q0, cfg.row_seconds, cap, chain=True)
        _judge_run(r, model, targets, tol)
        runs.append(r)
    rows, notes = single_rows(runs, runs[0])
    intro = [
        f"`humanoid` ({model.dof} DoF), {n} frames of a smooth arm-and-spine motion; each frame "
        "solves `{hand_r: Pose, hand_l: Pose, foot_r: Pose(current), foot_l: Pose(current)}` "
        'with `rest="neutral"`, warm-started from the previous frame\'s answer (frame 0 from '
        f"`model.neutral()`); success = all four frames within {tol:g} m / {tol:g} rad and joints "
        "within limits. No peer is run here: none of them has a multi-effector solver in its "
        "API (Pinocchio would need a hand-written stacked-task loop).",
    ]
    return Table(
        "humanoid",
        f"humanoid: 4 effectors, warm-started along a trajectory, {n} frames",
        SINGLE_HEADER,
        rows,
        intro,
        notes,
    )


# --- batches ----------------------------------------------------------------------------------


def batch_scenario(cfg: Config) -> Table:
    model = kinetree.load("panda")
    q0 = model.neutral()
    sizes = cfg.batch_sizes
    T = pose_targets(model, max(sizes), seed=SEED + 1)
    rows = []
    model.ik(T[:2], q0=q0, time_budget=TIME_BUDGET)  # compile / load the batch kernel
    for N in sizes:
        cfg.log(f"  batch: kinetree auto N={N}")
        reps = 5 if N <= 100 else 1
        best = np.inf
        for _ in range(reps):
            t = perf()
            r = model.ik(T[:N], q0=q0, time_budget=TIME_BUDGET)
            best = min(best, perf() - t)
        ok, _, viol = judge(
            model, r.q.reshape(N, -1), {model.end_effectors[0]: (T[:N], "pose")}, 1e-6
        )
        rows.append(
            [
                "kinetree auto",
                f"{N:,}",
                f"{1e3 * best:,.2f}",
                f"{N / best:,.0f}",
                us(best / N),
                f"{100 * ok.mean():.1f}%",
                "0" if viol.max() == 0 else f"{viol.max():.2g}",
            ]
        )
    notes = []
    if cfg.peers:
        peer = P.PyTorchKinematics()
        try:
            arm = P.arm("panda")
            peer.prepare(arm, "pose")
            peer.solve_batch(T[:2], q0)
            per = (
                0.0  # seconds per target in the last batch, to skip batches that would run too long
            )
            for N in sizes:
                if per * N > cfg.row_seconds:
                    notes.append(
                        f"pytorch_kinematics skipped at N={N:,}: at {us(per)} µs per target "
                        f"it would take about {per * N:,.0f} s (> {cfg.row_seconds:.0f} s per row)."
                    )
                    continue
                cfg.log(f"  batch: {peer.label} N={N}")
                t = perf()
                Q = peer.solve_batch(T[:N], q0)
                dt = perf() - t
                per = dt / N
                ok, _, viol = judge(model, Q, {model.end_effectors[0]: (T[:N], "pose")}, 1e-6)
                rows.append(
                    [
                        peer.label,
                        f"{N:,}",
                        f"{1e3 * dt:,.2f}",
                        f"{N / dt:,.0f}",
                        us(dt / N),
                        f"{100 * ok.mean():.1f}%",
                        "0" if viol.max() == 0 else f"{viol.max():.2g}",
                    ]
                )
        except P.Skip as exc:
            notes.append(f"pytorch_kinematics: {exc}.")
    intro = [
        "Panda 6D pose targets (FK of random configurations, seed 1), one call for the whole "
        f"batch: `model.ik(T[:N], q0=q0, time_budget={TIME_BUDGET})` (the batch kernel runs "
        "the targets in parallel over the cores; the budget applies per target). Best of 5 "
        "calls for N <= 100, one call above. pytorch_kinematics: one `PseudoInverseIK.solve` "
        "for the batch (settings below). Same judge as the single-solve tables.",
    ]
    header = [
        "solver",
        "N",
        "total [ms]",
        "solves/s",
        "µs per solve",
        "success",
        "max limit viol. [rad]",
    ]
    return Table("batch", "Batch throughput vs N (Panda, 6D pose)", header, rows, intro, notes)


def fk_scenario(cfg: Config) -> Table:
    model = kinetree.load("panda")
    N = cfg.fk_n
    Q = model.random_configuration(N, rng=SEED + 2)
    model.fk(Q[:10])
    model.fk(Q[:1000])
    best = np.inf
    for _ in range(5):
        t = perf()
        T_ref = model.fk(Q)
        best = min(best, perf() - t)
    ref_per = best / N
    rows = [
        [
            "kinetree `model.fk(Q)`",
            f"{N:,}",
            f"{1e3 * best:,.2f}",
            us(ref_per),
            "1.0x (reference)",
            "batched (numba, parallel)",
        ]
    ]
    notes = []
    if cfg.peers:
        arm = P.arm("panda")
        caps = {"rtb": N, "pytorch": N, "pinocchio": 20_000, "pybullet": 20_000, "ikpy": 2_000}
        seen = set()
        for peer in P.all_peers():
            key = peer.package
            if key in seen:
                continue
            seen.add(key)
            try:
                peer.prepare(arm, "pose")
            except P.Skip as exc:
                notes.append(f"{peer.package}: {exc}.")
                continue
            cap = next(v for k, v in caps.items() if peer.label.startswith(k))
            n = min(N, cap)
            name = {
                "roboticstoolbox-python": "rtb `ets.fkine(Q)`",
                "pytorch-kinematics": "pytorch_kinematics `chain.forward_kinematics(Q)`",
                "pin": "pinocchio `framesForwardKinematics` (Python loop)",
                "pybullet": "pybullet `resetJointState` + `getLinkState` (Python loop)",
                "ikpy": "ikpy `forward_kinematics` (Python loop)",
            }[key]
            how = (
                "batched"
                if key in ("roboticstoolbox-python", "pytorch-kinematics")
                else "one call per q"
            )
            cfg.log(f"  fk: {peer.package} n={n}")
            peer.fk_many(Q[:10])
            t = perf()
            Tp = peer.fk_many(Q[:n])
            dt = perf() - t
            err = float(np.max(np.abs(Tp - T_ref[:n])))
            rows.append(
                [
                    name,
                    f"{n:,}",
                    f"{1e3 * dt:,.2f}",
                    us(dt / n),
                    ratio(dt / n, ref_per),
                    f"{how}; max diff {err:.1e}",
                ]
            )
    intro = [
        f"Flange pose of {N:,} uniform random Panda configurations. kinetree: best of 5 calls. "
        "Peers whose FK is a Python loop run on fewer configurations (column N); compare the "
        "per-configuration column.",
    ]
    header = ["FK", "N", "total [ms]", "µs per config", "vs kinetree", "how"]
    return Table("fk", f"FK alone: {N:,} Panda configurations", header, rows, intro, notes)


ALL = (
    "panda",
    "ur5",
    "iiwa14",
    "panda-position",
    "planar2r",
    "seed003_arm",
    "humanoid",
    "batch",
    "fk",
)


def run_all(cfg: Config) -> list[Table]:
    tables: list[Table] = []
    want: Sequence[str] = cfg.only or ALL
    for key in want:
        cfg.log(f"[{key}]")
        if key in ("panda", "ur5", "iiwa14"):
            t, agree = arm_scenario(cfg, key, "pose")
            tables.append(t)
            if agree is not None:
                tables.append(agree)
        elif key == "panda-position":
            t, _ = arm_scenario(cfg, "panda", "position")
            tables.append(t)
        elif key in ("planar2r", "seed003_arm"):
            tables.append(analytic_scenario(cfg, key))
        elif key == "humanoid":
            tables.append(humanoid_scenario(cfg))
        elif key == "batch":
            tables.append(batch_scenario(cfg))
        elif key == "fk":
            tables.append(fk_scenario(cfg))
        else:
            raise SystemExit(f"unknown scenario {key!r}; choose from: {', '.join(ALL)}")
    return tables
