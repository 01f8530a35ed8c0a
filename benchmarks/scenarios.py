"""The benchmark scenarios: targets, the one success judge, the timers, the tables.

Every solver (kinetree's methods and each installed peer) gets the same targets,
the same start configuration and the same judge: kinetree's FK of the returned
``q``, position error [m] and rotation angle [rad] both within the scenario's
tolerance, and every joint within its limits (1e-6 of slack, as for the pose).
"""

from __future__ import annotations

import atexit
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import peers as P

import kinetree
from kinetree.ik import Pose, Position
from kinetree.ik.method_table import CLOSED_FORM, ROWS, TABLE
from kinetree.spatial import pose_error

perf = time.perf_counter

#: kinetree's IK methods in the pose tables (the method table's ``benchmark`` column).
METHODS = tuple(row.name for row in TABLE if row.benchmark)
#: The closed-form methods, timed beside ``auto`` and the driver it runs.
CLOSED_FORMS = tuple(row.name for row in TABLE if row.kind == CLOSED_FORM)
AUTO_DRIVER = ROWS["auto"].driver
#: kinetree auto's stopping rule in every scenario.
TIME_BUDGET = 0.005
#: Slack on the joint limits before a solution counts as violating them [rad or m].
LIMIT_SLACK = 1e-6
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
    #: Threads for single-solve processes (BLAS, OpenMP, numba, torch); None: library defaults.
    single_threads: int | None = 1
    #: Threads for batch and FK processes; None: library defaults (all cores).
    threads: int | None = None
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
    "mean vs kinetree auto",
    "first call [ms]",
]


def single_rows(runs: list[Run], ref: Run | None) -> tuple[list[list[str]], list[str]]:
    """Table rows for single-solve runs; the ratios compare medians and means with ``ref`` on
    the same first n targets."""
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
        med, mean = float(np.median(r.times)), float(np.mean(r.times))
        if ref is None or r is ref:
            rr = rm = "1.0x (reference)" if r is ref else "-"
        else:
            rr = ratio(med, float(np.median(ref.times[: r.n])))
            rm = ratio(mean, float(np.mean(ref.times[: r.n])))
        vmax = float(np.max(r.viol)) if r.n else 0.0
        rows.append(
            [
                label,
                str(r.n),
                f"{100 * r.ok.mean():.1f}%",
                f"{100 * r.close.mean():.1f}%",
                us(med),
                us(mean),
                us(float(np.percentile(r.times, 99))),
                f"{1 / np.mean(r.times):,.0f}",
                "0" if vmax == 0 else f"{vmax:.2g}",
                rr,
                rm,
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


def headline(runs: list[Run], ref: Run, peer: str) -> list[str]:
    """One sentence: kinetree auto (``ref``) vs ``peer`` on the same targets, same run."""
    other = next((r for r in runs if r.label == peer), None)
    if other is None or other.ok is None or ref.ok is None:
        return []
    n = other.n
    a, b = ref.times[:n], other.times
    return [
        f"**Same targets, same run: {ref.label} vs {peer}** ({n} targets): success "
        f"{100 * ref.ok[:n].mean():.1f}% vs {100 * other.ok.mean():.1f}%; median "
        f"{us(float(np.median(a)))} vs {us(float(np.median(b)))} µs "
        f"({float(np.median(b)) / float(np.median(a)):.2f}x); mean "
        f"{us(float(np.mean(a)))} vs {us(float(np.mean(b)))} µs "
        f"({float(np.mean(b)) / float(np.mean(a)):.2f}x); p99 "
        f"{us(float(np.percentile(a, 99)))} vs {us(float(np.percentile(b, 99)))} µs "
        f"(ratios: {peer}'s time / kinetree's)."
    ]


# --- targets ----------------------------------------------------------------------------------


def pose_targets(model: kinetree.Model, n: int, seed: int = SEED) -> np.ndarray:
    """FK of ``n`` uniform random configurations within the limits (fixed seed)."""
    return model.fk(model.random_configuration(n, rng=seed))


def humanoid_trajectory(model: kinetree.Model, n: int) -> np.ndarray:
    """A smooth upper-body motion ``(n, dof)``: arms and spine swing, legs stay put."""
    gen = np.random.default_rng(SEED)
    qn = model.neutral()
    amp = np.zeros(model.dof)
    for j, a in (
        ("shoulder_r", 0.5), ("shoulder_l", 0.5), ("elbow_r", 0.5), ("elbow_l", 0.5),
        ("wrist_r", 0.3), ("wrist_l", 0.3), ("spine", 0.15), ("chest", 0.15),
    ):  # fmt: skip
        amp[model.joint_indices(j)] = a
    phase = gen.uniform(0, 2 * np.pi, model.dof)
    t = np.arange(n)[:, None]
    Q = qn + amp * np.sin(2 * np.pi * t / 250.0 + phase) * np.minimum(1.0, t / 50.0)
    return np.clip(Q, model.limits[:, 0], model.limits[:, 1])


HUMANOID_FRAMES = ("hand_r", "hand_l", "foot_r", "foot_l")

#: Arms with closed-form IK as they come from files, built exactly as
#: tests/ik/methods/test_analytic_files.py builds them: the UR5 of example-robot-data's
#: URDF and three spherical-wrist arms from published DH tables (base and tool offsets,
#: joint zero offsets).
CLOSED_FORM_ARMS = ("ur5_urdf", "abb_irb140", "kuka_kr16", "puma560")
_TESTS = Path(__file__).resolve().parent.parent / "tests" / "ik" / "methods"


def closed_form_arm(name: str) -> kinetree.Model:
    """The closed-form arm ``name`` of :data:`CLOSED_FORM_ARMS` (the tests' own factories).

    Raises FileNotFoundError for ``ur5_urdf`` when example-robot-data is not installed.
    """
    if str(_TESTS) not in sys.path:
        sys.path.insert(0, str(_TESTS))
    import test_analytic_files as arms

    if name == "ur5_urdf":
        path = arms._ur5_urdf_path()
        if path is None:
            raise FileNotFoundError("example-robot-data (with ur5_robot.urdf) is not installed")
        return kinetree.load(path)
    return arms.ARMS[name]()


def load_model(name: str) -> kinetree.Model:
    """A built-in model, or ``closed:<arm>`` for one of :data:`CLOSED_FORM_ARMS`."""
    if name.startswith("closed:"):
        return closed_form_arm(name[len("closed:") :])
    return kinetree.load(name)


def _has_closed_form(model: kinetree.Model) -> bool:
    try:
        from kinetree.ik.methods.analytic import supports
    except ImportError:
        return False
    return bool(supports(model))


# --- child processes ----------------------------------------------------------------------------
#
# Every group of timed rows (kinetree's methods on one scenario, or one peer) runs in
# a fresh Python process. Libraries with thread pools (numba's OpenMP layer, torch,
# OpenBLAS inside scipy) slow each other down by 10-100x when they share a process on
# a 2-core machine, and a peer that crashes (pybullet can segfault) must not take the
# benchmark down. The parent makes the targets, the child times, the parent judges.


class ChildFailed(Exception):
    pass


_TMP = Path(tempfile.mkdtemp(prefix="kinetree-bench-jobs-"))
atexit.register(shutil.rmtree, _TMP, ignore_errors=True)
_RUN_PY = Path(__file__).resolve().parent / "run.py"


#: kinetree runs batches on its own pool of Python threads (KINETREE_NUM_THREADS) over nogil
#: kernels; NUMBA_NUM_THREADS is kept for numba's own layer (unused by kinetree's batches now).
THREAD_VARS = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMBA_NUM_THREADS",
    "KINETREE_NUM_THREADS",
)


def kinetree_threads() -> int:
    """Threads kinetree uses for a batch (FK or IK) in this process."""
    try:
        from kinetree._threads import n_threads
    except ImportError:  # an older kinetree: numba's parallel layer
        import numba

        return int(numba.get_num_threads())
    return int(n_threads())


def spawn(
    job: dict[str, Any], arrays: dict[str, np.ndarray], timeout: float, threads: int | None = None
) -> tuple[dict, Any]:
    """Run ``job`` in a fresh process; ``(meta, arrays)`` of its answer or :class:`ChildFailed`.

    ``threads``: pin BLAS / OpenMP / numba / torch (which reads OMP_NUM_THREADS) to that many.
    """
    d = Path(tempfile.mkdtemp(dir=_TMP))
    np.savez(d / "in.npz", **arrays)
    (d / "job.json").write_text(json.dumps(job))
    env = dict(os.environ)
    if threads:
        env.update({v: str(threads) for v in THREAD_VARS})
    try:
        proc = subprocess.run(
            [sys.executable, str(_RUN_PY), "--child", str(d / "job.json")],
            capture_output=True, text=True, timeout=timeout, env=env,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        raise ChildFailed(f"did not finish within {timeout:.0f} s") from None
    if proc.returncode != 0 or not (d / "out.json").exists():
        lines = [
            ln for ln in proc.stderr.splitlines()
            if ln.strip() and not ln.startswith(("b3", "No inertial", " ")) and "nanobind" not in ln
        ]  # fmt: skip
        why = lines[-1] if lines else ""
        code = proc.returncode
        what = f"crashed (signal {-code})" if code < 0 else f"failed (exit {code})"
        raise ChildFailed(f"{what}{': ' + why if why else ''}")
    meta = json.loads((d / "out.json").read_text())
    out = dict(np.load(d / "out.npz")) if (d / "out.npz").exists() else {}
    return meta, out


def child_main(job_path: str) -> None:
    d = Path(job_path).parent
    job = json.loads(Path(job_path).read_text())
    arrays = dict(np.load(d / "in.npz"))
    fn = {"single": _child_single, "batch": _child_batch, "fk": _child_fk,
          "closed": _child_closed}[job["type"]]  # fmt: skip
    meta, out = fn(job, arrays)
    np.savez(d / "out.npz", **out)
    (d / "out.json").write_text(json.dumps(meta))


def _peer(label: str) -> P.Peer:
    for peer in P.all_peers():
        if peer.label == label:
            return peer
    raise KeyError(label)


def _kinetree_solvers(job: dict, arrays: dict, model: kinetree.Model) -> dict[str, Callable]:
    kind = job["kind"]
    out: dict[str, Callable] = {}
    for method in job["methods"]:
        opts: dict[str, Any] = {} if method == "auto" else {"method": method}
        if method == "auto":
            opts["time_budget"] = TIME_BUDGET
        if kind == "humanoid":
            opts["rest"] = "neutral"
            feet = {f: Pose(arrays[f]) for f in ("foot_r", "foot_l")}
            hr, hl = arrays["hand_r"], arrays["hand_l"]
            frames = [
                {"hand_r": Pose(hr[i]), "hand_l": Pose(hl[i]), **feet} for i in range(len(hr))
            ]

            def solve(i: int, q0: np.ndarray, o: dict = opts, f: list = frames) -> Any:
                r = model.ik(f[i], q0=q0, **o)
                return r.q, r.success

        elif kind == "pose":
            Ts = [np.ascontiguousarray(t) for t in arrays["T"]]

            def solve(i: int, q0: np.ndarray, o: dict = opts, Ts: list = Ts) -> Any:
                r = model.ik(Ts[i], q0=q0, **o)
                return r.q, r.success

        else:
            ps = [Position(np.ascontiguousarray(t[:3, 3])) for t in arrays["T"]]

            def solve(i: int, q0: np.ndarray, o: dict = opts, ps: list = ps) -> Any:
                r = model.ik(ps[i], q0=q0, **o)
                return r.q, r.success

        out[f"kinetree {method}"] = solve
    return out


def _child_single(job: dict, arrays: dict) -> tuple[dict, dict]:
    n, q0 = job["n"], arrays["q0"]
    rows: list[dict] = []
    out: dict[str, np.ndarray] = {}
    meta: dict[str, Any] = {"rows": rows}

    def record(run: Run) -> None:
        k = len(rows)
        rows.append({"label": run.label, "first": run.first, "capped": run.capped})
        out[f"times_{k}"] = run.times
        out[f"Q_{k}"] = run.Q
        if run.own_success is not None:
            out[f"own_{k}"] = run.own_success

    if job["solver"] == "kinetree":
        model = load_model(job["model"])
        for label, solve in _kinetree_solvers(job, arrays, model).items():
            cap = job["caps"].get(label)
            record(time_single(label, solve, n, q0, job["row_seconds"], cap, chain=job["chain"]))
        return meta, out
    peer = _peer(job["solver"])
    arm = P.arm(job["model"])
    try:
        t = perf()
        peer.prepare(arm, job["kind"], job["tol"])
        meta["setup"] = perf() - t
        meta["disc"] = P.fk_discrepancy(peer, arm)
    except P.Skip as exc:
        meta["skip"] = str(exc)
        return meta, out
    meta["notes"] = list(dict.fromkeys(arm.notes))
    if meta["disc"] > job["tol"]:
        meta["skip"] = f"its model differs from kinetree's by {meta['disc']:.1e} (> tol)"
        return meta, out
    T = arrays["T"]

    def solve(i: int, q: np.ndarray) -> np.ndarray:
        return peer.solve(T[i], q)

    record(time_single(peer.label, solve, n, q0, job["row_seconds"], peer.cap and job["slow_cap"]))
    return meta, out


def _child_closed(job: dict, arrays: dict) -> tuple[dict, dict]:
    """Time ``model.ik_all(T)`` (every closed-form branch) once per target."""
    model = load_model(job["model"])
    Ts = [np.ascontiguousarray(t) for t in arrays["T"]]
    n = job["n"]
    t = perf()
    model.ik_all(Ts[0])  # the warm-up: compiles or loads whatever the first call needs
    first = perf() - t
    times, counts, branches = [], [], []
    capped = ""
    deadline = perf() + job["row_seconds"]
    for i in range(n):
        t = perf()
        Q = model.ik_all(Ts[i])
        times.append(perf() - t)
        counts.append(len(Q))
        branches.append(np.asarray(Q, dtype=float).reshape(-1, model.dof))
        if perf() > deadline and i + 1 < n:
            capped = f"first {i + 1} of {n} targets (row stopped after {job['row_seconds']:.0f} s)"
            break
    out = {
        "times": np.array(times),
        "counts": np.array(counts, dtype=np.int64),
        "Q": np.concatenate(branches) if branches else np.zeros((0, model.dof)),
    }
    return {"first": first, "capped": capped}, out


def _child_batch(job: dict, arrays: dict) -> tuple[dict, dict]:
    T, q0 = arrays["T"], arrays["q0"]
    rows: list[dict] = []
    out: dict[str, np.ndarray] = {}
    meta: dict[str, Any] = {"rows": rows, "notes": []}
    if job["solver"] == "kinetree":
        model = kinetree.load("panda")
        model.ik(T[:2], q0=q0, time_budget=TIME_BUDGET)  # load or compile the driver
        model.ik(T[:300], q0=q0, time_budget=TIME_BUDGET)  # and start the thread pool
        meta["threads"] = kinetree_threads()

        def solve(N: int) -> np.ndarray:
            return model.ik(T[:N], q0=q0, time_budget=TIME_BUDGET).q

    else:
        peer = _peer(job["solver"])
        try:
            peer.prepare(P.arm("panda"), "pose", 1e-6)
        except P.Skip as exc:
            meta["skip"] = str(exc)
            return meta, out
        peer.solve_batch(T[:2], q0)
        try:
            import torch

            meta["threads"] = int(torch.get_num_threads())
        except ImportError:
            pass

        def solve(N: int) -> np.ndarray:
            return peer.solve_batch(T[:N], q0)

    per = 0.0  # seconds per target of the last size, to skip sizes that would take too long
    for N in job["sizes"]:
        if per * N > job["row_seconds"]:
            meta["notes"].append(
                f"{job['solver']} skipped at N={N:,}: at {us(per)} µs per target it would "
                f"take about {per * N:,.0f} s (> {job['row_seconds']:.0f} s per row)."
            )
            continue
        reps = 5 if N <= 100 else 1
        best = np.inf
        for _ in range(reps):
            t = perf()
            Q = solve(N)
            best = min(best, perf() - t)
        per = best / N
        out[f"Q_{len(rows)}"] = np.asarray(Q).reshape(N, -1)
        rows.append({"N": N, "time": best})
    return meta, out


def _child_fk(job: dict, arrays: dict) -> tuple[dict, dict]:
    Q = arrays["Q"][: job["n"]]
    if job["solver"] == "kinetree":
        model = kinetree.load("panda")
        model.fk(Q[:10])
        model.fk(Q[:1000])

        def fk(Q: np.ndarray) -> np.ndarray:
            return model.fk(Q)

        reps = 5
        extra = {"threads": kinetree_threads()}
    else:
        extra = {}
        peer = _peer(job["solver"])
        try:
            peer.prepare(P.arm("panda"), "pose", 1e-6)
        except P.Skip as exc:
            return {"skip": str(exc)}, {}
        peer.fk_many(Q[:10])
        fk = peer.fk_many
        reps = 1
    best, T = np.inf, None
    for _ in range(reps):
        t = perf()
        T = fk(Q)
        best = min(best, perf() - t)
    return {"time": best, **extra}, {"T": np.asarray(T)}


# --- parent side: scenarios -----------------------------------------------------------------------


def _runs_from(meta: dict, out: dict) -> list[Run]:
    runs = []
    for k, row in enumerate(meta.get("rows", [])):
        own = out.get(f"own_{k}")
        runs.append(
            Run(row["label"], out[f"times_{k}"], out[f"Q_{k}"], row["first"], row["capped"], own)
        )
    return runs


def _judge_run(
    run: Run, model: kinetree.Model, targets: dict[str, tuple[np.ndarray, str]], tol: float
) -> None:
    sub = {f: (T[: run.n], k) for f, (T, k) in targets.items()}
    run.ok, worst, run.viol = judge(model, run.Q.reshape(run.n, model.dof), sub, tol)
    run.close = worst <= tol


def _installed_peers(cfg: Config) -> tuple[list[P.Peer], list[str]]:
    if not cfg.peers:
        return [], []
    status = {name: st for name, _, st in P.peer_status()}
    ok, missing = [], []
    for peer in P.all_peers():
        st = status.get(peer.package, "not installed")
        if st == "ok":
            ok.append(peer)
        else:
            missing.append(f"{peer.label}: {st}")
    return ok, missing


def _threads_text(threads: int | None) -> str:
    if not threads:
        return "Each library uses its default number of threads."
    return (
        f"Each solver's process runs with {threads} BLAS / OpenMP / numba / torch / kinetree "
        f"thread{'s' if threads > 1 else ''} (`--single-threads`)."
    )


def _timeout(cfg: Config, rows: int) -> float:
    return rows * cfg.row_seconds * 3 + 300.0


def arm_scenario(cfg: Config, name: str, kind: str = "pose") -> tuple[Table, Table | None]:
    """One arm, single pose (or position-only) targets: kinetree's methods, then every peer."""
    model = kinetree.load(name)
    n, tol = cfg.n, 1e-6
    T = pose_targets(model, n)
    q0 = model.neutral()
    targets = {model.end_effectors[0]: (T, kind)}
    methods: list[str] = list(METHODS)
    if kind == "pose" and _has_closed_form(model):
        methods.insert(1, "analytic")
    arrays = {"T": T, "q0": q0}
    base = {"type": "single", "model": name, "kind": kind, "n": n, "tol": tol, "chain": False,
            "row_seconds": cfg.row_seconds, "slow_cap": cfg.slow_cap}  # fmt: skip
    cfg.log(f"  {name} {kind}: kinetree {', '.join(methods)}")
    job = {**base, "solver": "kinetree", "methods": methods,
           "caps": {"kinetree lbfgs": cfg.slow_cap}}  # fmt: skip
    meta, out = spawn(job, arrays, _timeout(cfg, len(methods)), cfg.single_threads)
    runs = _runs_from(meta, out)
    ref = runs[0]
    fk_rows: list[list[str]] = []
    peers, skipped = _installed_peers(cfg)
    arm_notes: list[str] = []
    for peer in peers:
        if kind not in peer.kinds:
            skipped.append(f"{peer.label}: no {kind}-only target in its API")
            continue
        cfg.log(f"  {name} {kind}: {peer.label}")
        try:
            meta, out = spawn(
                {**base, "solver": peer.label}, arrays, _timeout(cfg, 1), cfg.single_threads
            )
        except ChildFailed as exc:
            skipped.append(f"{peer.label}: {exc}")
            continue
        if "disc" in meta:
            fk_rows.append([peer.label, f"{meta['disc']:.1e}", f"{1e3 * meta['setup']:.0f}"])
        arm_notes += meta.get("notes", [])
        if "skip" in meta:
            skipped.append(f"{peer.label}: {meta['skip']}")
            continue
        runs += _runs_from(meta, out)
    for r in runs:
        _judge_run(r, model, targets, tol)
    rows, notes = single_rows(runs, ref)
    notes += headline(runs, ref, "rtb ik_LM")
    what = "6D pose" if kind == "pose" else "position-only"
    intro = [
        f"Targets: FK of {n} uniform random configurations within the limits "
        f"(`model.random_configuration({n}, rng={SEED})`); every solve starts from "
        f"`q0 = model.neutral()`; success = kinetree FK of the returned q within "
        f"{tol:g} m{'' if kind == 'position' else f' and {tol:g} rad'} and all joints "
        f"within limits. kinetree: `model.ik({'T' if kind == 'pose' else 'Position(p)'}, "
        f"q0=q0, time_budget={TIME_BUDGET})` for auto, `method=...` with default options "
        f"for the others. {_threads_text(cfg.single_threads)}",
    ]
    if skipped:
        notes.append("Not in this table: " + "; ".join(skipped) + ".")
    table = Table(f"{name}-{kind}", f"{name}: {what} IK, {n} targets", SINGLE_HEADER, rows,
                  intro, notes)  # fmt: skip
    agree = None
    if fk_rows:
        agree = Table(
            f"{name}-{kind}-fk",
            f"{name}: peer models vs kinetree (FK agreement)",
            ["peer", "max abs. difference of the 4x4 tip pose, 9 configs", "setup [ms]"],
            fk_rows,
            notes=list(dict.fromkeys(arm_notes)),
        )
    return table, agree


def analytic_scenario(cfg: Config, name: str) -> Table:
    """Closed form vs numeric on a small arm with position targets."""
    model = kinetree.load(name)
    n, tol = cfg.n, 1e-6
    T = pose_targets(model, n)
    q0 = model.neutral()
    methods = [*CLOSED_FORMS, "auto", AUTO_DRIVER]
    cfg.log(f"  {name}: kinetree {', '.join(methods)}")
    job = {"type": "single", "model": name, "kind": "position", "n": n, "tol": tol,
           "chain": False, "row_seconds": cfg.row_seconds, "solver": "kinetree",
           "methods": methods, "caps": {}}  # fmt: skip
    runs = _runs_from(*spawn(job, {"T": T, "q0": q0}, _timeout(cfg, 3), cfg.single_threads))
    for r in runs:
        _judge_run(r, model, {model.end_effectors[0]: (T, "position")}, tol)
    rows, notes = single_rows(runs, runs[1])
    intro = [
        f"Position targets `Position(p)` from FK of {n} random configurations within the "
        f"limits; q0 = `model.neutral()`; tol {tol:g} m. `analytic` returns the closed-form "
        "branch nearest q0; the ratio columns compare with kinetree auto.",
    ]
    title = f"{name}: closed form vs numeric, {n} position targets"
    return Table(name, title, SINGLE_HEADER, rows, intro, notes)


CLOSED_HEADER = [
    "arm",
    "solver",
    "n",
    "success",
    "branches mean (min-max)",
    "generating q among them",
    "max error [m / rad]",
    "median µs",
    "mean µs",
    "p99 µs",
    "calls/s",
    "median vs dls",
    "first call [ms]",
]


def _pose_errors(model: kinetree.Model, Q: np.ndarray, T: np.ndarray) -> np.ndarray:
    """``(n, 2)``: position [m] and rotation [rad] error of ``fk(Q[i])`` against ``T[i]``."""
    if len(Q) == 0:
        return np.zeros((0, 2))
    e = pose_error(T, model.fk(Q))
    return np.stack([np.linalg.norm(e[:, :3], axis=1), np.linalg.norm(e[:, 3:], axis=1)], axis=1)


def _err_text(err: np.ndarray) -> str:
    if len(err) == 0:
        return "-"
    m = err.max(axis=0)
    return f"{m[0]:.1e} / {m[1]:.1e}"


def closed_form_scenario(cfg: Config) -> Table:
    """Every closed-form branch (``ik_all``) of arms from files vs the numeric solvers."""
    n, tol = cfg.n, 1e-6
    rows: list[list[str]] = []
    notes: list[str] = []
    for arm in CLOSED_FORM_ARMS:
        try:
            model = closed_form_arm(arm)
        except FileNotFoundError as exc:
            notes.append(f"{arm}: not run, {exc}.")
            continue
        Qgen = model.random_configuration(n, rng=SEED)
        T = model.fk(Qgen)
        q0 = model.neutral()
        arrays = {"T": T, "q0": q0}
        key = f"closed:{arm}"
        cfg.log(f"  closed form {arm}: ik_all")
        job = {"type": "closed", "model": key, "n": n, "row_seconds": cfg.row_seconds}
        meta, out = spawn(job, arrays, _timeout(cfg, 1), cfg.single_threads)
        times, counts, Qall = out["times"], out["counts"], out["Q"]
        m = len(times)
        owner = np.repeat(np.arange(m), counts)  # the target of each branch
        err = _pose_errors(model, Qall, T[owner])
        good = (err.max(axis=1, initial=0.0) <= tol) & model.within_limits(Qall, LIMIT_SLACK)
        solved = np.zeros(m, dtype=bool)
        solved[owner[good]] = True
        dist = np.abs((Qall - Qgen[owner] + np.pi) % (2 * np.pi) - np.pi).max(axis=1, initial=0)
        found = np.zeros(m, dtype=bool)
        found[owner[dist <= 1e-8]] = True
        if meta["capped"]:
            notes.append(f"{arm} ik_all: {meta['capped']}.")
        cfg.log(f"  closed form {arm}: kinetree analytic, dls, auto")
        methods = [*CLOSED_FORMS, AUTO_DRIVER, "auto"]
        job = {"type": "single", "model": key, "kind": "pose", "n": n, "tol": tol,
               "chain": False, "row_seconds": cfg.row_seconds, "solver": "kinetree",
               "methods": methods, "caps": {}}  # fmt: skip
        runs = _runs_from(*spawn(job, arrays, _timeout(cfg, 3), cfg.single_threads))
        dls = next(r for r in runs if r.label == "kinetree dls")

        def vs_dls(t: np.ndarray, dls: Run = dls) -> str:
            return ratio(float(np.median(t)), float(np.median(dls.times[: len(t)])))

        rows.append([
            arm, "`model.ik_all(T)`", str(m), f"{100 * solved.mean():.1f}%",
            f"{counts.mean():.2f} ({counts.min()}-{counts.max()})", f"{100 * found.mean():.1f}%",
            _err_text(err), us(float(np.median(times))), us(float(np.mean(times))),
            us(float(np.percentile(times, 99))), f"{1 / np.mean(times):,.0f}", vs_dls(times),
            f"{1e3 * meta['first']:.1f}",
        ])  # fmt: skip
        for r in runs:
            _judge_run(r, model, {model.end_effectors[0]: (T, "pose")}, tol)
            assert r.ok is not None
            if r.capped:
                notes.append(f"{arm} {r.label}: {r.capped}.")
            call = "method=\"analytic\"" if r.label.endswith("analytic") else (
                f"time_budget={TIME_BUDGET}" if r.label.endswith("auto") else "method=\"dls\""
            )  # fmt: skip
            rows.append([
                "", f"`model.ik(T, q0=q0, {call})`", str(r.n), f"{100 * r.ok.mean():.1f}%",
                "-", "-", _err_text(_pose_errors(model, r.Q.reshape(r.n, -1), T[: r.n])),
                us(float(np.median(r.times))), us(float(np.mean(r.times))),
                us(float(np.percentile(r.times, 99))), f"{1 / np.mean(r.times):,.0f}",
                "1.0x (reference)" if r is dls else vs_dls(r.times), f"{1e3 * r.first:.1f}",
            ])  # fmt: skip
    intro = [
        "Arms recognised as closed-form from their geometry alone, built as "
        "`tests/ik/methods/test_analytic_files.py` builds them: `ur5_urdf` is example-robot-data's "
        "`ur5_robot.urdf` loaded with `kinetree.load`; `abb_irb140` (with a base and a tool "
        "offset), `kuka_kr16` and `puma560` (lateral offset d3) are spherical-wrist arms "
        f"from published DH tables. Targets: FK of {n} uniform random configurations within "
        f"the limits (`model.random_configuration({n}, rng={SEED})`); q0 = `model.neutral()`. "
        "Success: a configuration within the limits whose FK is within "
        f"{tol:g} m and {tol:g} rad of the target (for `ik_all`: at least one branch). "
        "*branches*: how many `ik_all` returns per target (all within the limits); "
        "*generating q among them*: the configuration the target was made from is one of "
        "them (to 1e-8 rad, modulo 2 pi); *max error*: over every branch returned (`ik_all`) "
        "or every answer, failures included. "
        f"{_threads_text(cfg.single_threads)}",
    ]
    title = f"Closed-form arms from files: every branch (`ik_all`) vs numeric IK, {n} poses each"
    return Table("closed-form", title, CLOSED_HEADER, rows, intro, notes)


def humanoid_scenario(cfg: Config) -> Table:
    model = kinetree.load("humanoid")
    n, tol = cfg.n, 1e-6
    Qtraj = humanoid_trajectory(model, n)
    q0 = model.neutral()
    arrays: dict[str, np.ndarray] = {"q0": q0}
    targets: dict[str, tuple[np.ndarray, str]] = {}
    for f in HUMANOID_FRAMES:
        if f.startswith("hand"):
            arrays[f] = model.fk(Qtraj, f)
            targets[f] = (arrays[f], "pose")
        else:
            arrays[f] = model.fk(q0, f)
            targets[f] = (np.broadcast_to(arrays[f], (n, 4, 4)), "pose")
    methods = list(METHODS)
    cfg.log(f"  humanoid: kinetree {', '.join(methods)}")
    job = {"type": "single", "model": "humanoid", "kind": "humanoid", "n": n, "tol": tol,
           "chain": True, "row_seconds": cfg.row_seconds, "solver": "kinetree",
           "methods": methods, "caps": {"kinetree lbfgs": cfg.slow_cap}}  # fmt: skip
    runs = _runs_from(*spawn(job, arrays, _timeout(cfg, len(methods)), cfg.single_threads))
    for r in runs:
        _judge_run(r, model, targets, tol)
    rows, notes = single_rows(runs, runs[0])
    intro = [
        f"`humanoid` ({model.dof} DoF), {n} frames of a smooth arm-and-spine motion; each frame "
        "solves `{hand_r: Pose, hand_l: Pose, foot_r: Pose(current), foot_l: Pose(current)}` "
        "with `rest=\"neutral\"`, warm-started from the previous frame's answer (frame 0 from "
        f"`model.neutral()`); success = all four frames within {tol:g} m / {tol:g} rad and "
        "joints within limits. No peer is run here: none of them has a multi-effector solver "
        "in its API (Pinocchio would need a hand-written stacked-task loop).",
    ]  # fmt: skip
    title = f"humanoid: 4 effectors, warm-started along a trajectory, {n} frames"
    return Table("humanoid", title, SINGLE_HEADER, rows, intro, notes)


def batch_scenario(cfg: Config) -> Table:
    model = kinetree.load("panda")
    q0 = model.neutral()
    sizes = list(cfg.batch_sizes)
    T = pose_targets(model, max(sizes), seed=SEED + 1)
    arrays = {"T": T, "q0": q0}
    rows, notes = [], []
    solvers = ["kinetree"]
    peers, missing = _installed_peers(cfg)
    solvers += [p.label for p in peers if p.batched]
    notes += [f"{m}." for m in missing if m.startswith("pytorch_kinematics")]
    for solver in solvers:
        cfg.log(f"  batch: {solver}")
        # Batches get 3x the row limit, so the cost growth up to 10k targets shows.
        job = {"type": "batch", "solver": solver, "sizes": sizes,
               "row_seconds": 3 * cfg.row_seconds}  # fmt: skip
        try:
            meta, out = spawn(job, arrays, _timeout(cfg, len(sizes)), cfg.threads)
        except ChildFailed as exc:
            notes.append(f"{solver}: {exc}.")
            continue
        if "skip" in meta:
            notes.append(f"{solver}: {meta['skip']}.")
        notes += meta.get("notes", [])
        for k, row in enumerate(meta.get("rows", [])):
            N, dt = row["N"], row["time"]
            ok, _, viol = judge(model, out[f"Q_{k}"], {"flange": (T[:N], "pose")}, 1e-6)
            label = "kinetree auto" if solver == "kinetree" else solver
            vmax = float(viol.max())
            viol_s = "0" if vmax == 0 else f"{vmax:.2g}"
            rows.append([label, str(meta.get("threads", "-")), f"{N:,}", f"{1e3 * dt:,.2f}",
                         f"{N / dt:,.0f}", us(dt / N), f"{100 * ok.mean():.1f}%",
                         viol_s])  # fmt: skip
    intro = [
        "Panda 6D pose targets (FK of random configurations, seed 1), one call for the whole "
        f"batch: `model.ik(T[:N], q0=q0, time_budget={TIME_BUDGET})` (kinetree splits the "
        "batch into chunks run by a pool of Python threads over its compiled, GIL-free driver, "
        "one thread per usable core unless `KINETREE_NUM_THREADS` says otherwise; the budget "
        "applies per target). Column *threads*: kinetree's pool size, torch's intra-op threads. "
        "Best of 5 calls for N <= 100, one call above. pytorch_kinematics: one "
        "`PseudoInverseIK.solve` for the batch (settings below). Same judge as the "
        "single-solve tables. The other peers have no batched IK.",
    ]
    header = ["solver", "threads", "N", "total [ms]", "solves/s", "µs per solve", "success",
              "max limit viol. [rad]"]  # fmt: skip
    return Table("batch", "Batch throughput vs N (Panda, 6D pose)", header, rows, intro, notes)


FK_CAPS = {"pin": 20_000, "pybullet": 20_000, "ikpy": 2_000}
FK_NAMES = {
    "roboticstoolbox-python": ("rtb `ets.fkine(Q)`", "batched (C++)"),
    "pytorch-kinematics": ("pytorch_kinematics `chain.forward_kinematics(Q)`", "batched (torch)"),
    "pin": ("pinocchio `framesForwardKinematics`", "Python loop"),
    "pybullet": ("pybullet `resetJointState` + `getLinkState`", "Python loop"),
    "ikpy": ("ikpy `chain.forward_kinematics`", "Python loop"),
}


def fk_scenario(cfg: Config) -> Table:
    model = kinetree.load("panda")
    N = cfg.fk_n
    Q = model.random_configuration(N, rng=SEED + 2)
    T_ref = model.fk(Q)
    cfg.log("  fk: kinetree")
    meta, _ = spawn(
        {"type": "fk", "solver": "kinetree", "n": N}, {"Q": Q}, _timeout(cfg, 1), cfg.threads
    )
    ref_per = meta["time"] / N
    rows = [["kinetree `model.fk(Q)`", f"{N:,}", f"{1e3 * meta['time']:,.2f}", us(ref_per),
             "1.0x (reference)",
             f"batched (numba nogil kernel, {meta.get('threads', '?')} Python threads)",
             "-"]]  # fmt: skip
    notes: list[str] = []
    peers, _ = _installed_peers(cfg)
    seen: set[str] = set()
    for peer in peers:
        if peer.package in seen:
            continue
        seen.add(peer.package)
        n = min(N, FK_CAPS.get(peer.package, N))
        cfg.log(f"  fk: {peer.package} n={n}")
        try:
            meta, out = spawn({"type": "fk", "solver": peer.label, "n": n}, {"Q": Q},
                              _timeout(cfg, 1), cfg.threads)  # fmt: skip
        except ChildFailed as exc:
            notes.append(f"{peer.package}: {exc}.")
            continue
        if "skip" in meta:
            notes.append(f"{peer.package}: {meta['skip']}.")
            continue
        err = float(np.max(np.abs(out["T"] - T_ref[:n])))
        name, how = FK_NAMES[peer.package]
        dt = meta["time"]
        rows.append([name, f"{n:,}", f"{1e3 * dt:,.2f}", us(dt / n), ratio(dt / n, ref_per), how,
                     f"{err:.1e}"])  # fmt: skip
    intro = [
        f"Flange pose of {N:,} uniform random Panda configurations (seed 2). kinetree: best of "
        "5 calls. Peers whose FK is a Python loop run on fewer configurations (column N); "
        "compare the per-configuration column. Last column: max abs. difference from "
        "kinetree's poses.",
    ]
    header = ["FK", "N", "total [ms]", "µs per config", "vs kinetree", "how", "max diff"]
    return Table("fk", f"FK alone: {N:,} Panda configurations", header, rows, intro, notes)


ALL = (
    "panda",
    "ur5",
    "iiwa14",
    "panda-position",
    "planar2r",
    "zxx_arm",
    "closed-form",
    "humanoid",
    "batch",
    "fk",
    "collision",
)


def run_all(cfg: Config) -> list[Table]:
    tables: list[Table] = []
    want: Sequence[str] = cfg.only or ALL
    for key in want:
        cfg.log(f"[{key}]")
        start = len(tables)
        la0 = os.getloadavg()[0]
        if key in ("panda", "ur5", "iiwa14"):
            t, agree = arm_scenario(cfg, key, "pose")
            tables.append(t)
            if agree is not None:
                tables.append(agree)
        elif key == "panda-position":
            t, _ = arm_scenario(cfg, "panda", "position")
            tables.append(t)
        elif key in ("planar2r", "zxx_arm"):
            tables.append(analytic_scenario(cfg, key))
        elif key == "closed-form":
            tables.append(closed_form_scenario(cfg))
        elif key == "humanoid":
            tables.append(humanoid_scenario(cfg))
        elif key == "batch":
            tables.append(batch_scenario(cfg))
        elif key == "fk":
            tables.append(fk_scenario(cfg))
        elif key == "collision":
            import collision

            rows, notes = collision.measure(cfg.log)
            intro = [
                "`model.distance` and `model.in_collision` over a batch (benchmarks/collision.py)."
            ]
            tables.append(Table("collision", collision.TITLE, collision.HEADER, rows, intro, notes))
        else:
            raise SystemExit(f"unknown scenario {key!r}; choose from: {', '.join(ALL)}")
        if len(tables) > start:
            tables[start].notes.append(
                f"Load average (1 min) when this table started / ended: "
                f"{la0:.2f} / {os.getloadavg()[0]:.2f}."
            )
    return tables
