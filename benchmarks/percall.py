"""The Python around one Panda 6D solve: keyword options against a prebuilt ``IKOptions``,
and where the microseconds outside the compiled driver go.

    PYTHONPATH=src python benchmarks/percall.py                # 2000 targets x 5 rounds
    PYTHONPATH=src python benchmarks/percall.py --n 500 --rounds 3
    PYTHONPATH=src python benchmarks/percall.py --whole-body   # + whole-body dicts (4 robots)
    PYTHONPATH=src python benchmarks/percall.py --kernel-only  # the driver alone, µs/solve

Every variant solves the same target in turn (A, B, C, then the next target; the order
rotates per round), each call timed on its own with ``time.perf_counter_ns``, so that the
machine's state drifts under all of them alike. Variants: ``options=`` a prebuilt
:class:`kinetree.IKOptions`; the same options as keywords (``active=`` a list of joint
names, ``tol=``, ``time_budget=``: one list, so the identity shortcut for scalars does not
apply); no options. Then a breakdown of the prebuilt call: the compiled driver alone on
the same arguments, and the steps around it timed one by one (``--profile`` adds a
cProfile of the keyword call). One numba/BLAS thread.
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

import kinetree  # noqa: E402
from kinetree.ik import IKOptions  # noqa: E402

TOL = 1e-6
BUDGET = 0.005


def _plans_module() -> Any:
    """The module that keeps the single-pose and dict plans (``kinetree.ik._plans``; the
    dispatcher itself before the plans had their own module, for before/after runs)."""
    import importlib

    try:
        return importlib.import_module("kinetree.ik._plans")
    except ImportError:
        return importlib.import_module("kinetree.ik.solve")


def _get(module: Any, *names: str) -> Any:
    """The first of ``names`` that ``module`` has (today's name, then older ones)."""
    for name in names:
        if hasattr(module, name):
            return getattr(module, name)
    raise AttributeError(names[0])


def interleaved(variants: dict[str, Callable[[int], object]], n: int, rounds: int) -> dict:
    """Per-call times [s] of each variant, target by target, the order rotating."""
    names = list(variants)
    times = {k: [] for k in names}
    clock = time.perf_counter_ns
    for r in range(rounds):
        for i in range(n):
            k0 = (i + r) % len(names)
            for k in names[k0:] + names[:k0]:
                f = variants[k]
                t = clock()
                f(i)
                times[k].append((clock() - t) * 1e-9)
    return {k: np.asarray(v) for k, v in times.items()}


def breakdown(model: kinetree.Model, T: list[np.ndarray], opts: IKOptions, n: int) -> None:
    """The prebuilt call against its compiled driver alone, and the steps between."""

    S = _plans_module()

    q0 = model.neutral()
    model.ik(T[0], q0=q0, options=opts)
    if hasattr(S, "PLANS") or hasattr(S, "_PLANS"):
        plan = _get(S, "PLANS", "_PLANS")[(id(model), id(opts), None)][2]
    else:  # before the plans by identity
        plan = S._LAST_SINGLE[0][3]
    if plan is None:
        print("no single-pose plan (driver not compiled?)")
        return
    try:
        from kinetree.ik._run import NO_HISTORY_E, NO_HISTORY_Q, single_result
    except ImportError:  # before the run module (for before/after comparisons)
        NO_HISTORY_E, NO_HISTORY_Q = S._NO_HISTORY_E, S._NO_HISTORY_Q  # type: ignore[attr-defined]
        single_result = S._single  # type: ignore[attr-defined]

    clock = time.perf_counter_ns
    out = np.empty(plan.shape)
    q = q0.reshape(1, -1)
    call = getattr(plan, "call", plan.kernel)  # the direct entry, where there is one
    work = getattr(plan, "work", None)
    if work is None:
        work = np.zeros(plan.scratch)
    steps = {
        "Model.ik (options=)": lambda P: model.ik(P, q0=q0, options=opts),
        "ik.solve direct": lambda P: kinetree.ik.solve(model, P, q0=q0, options=opts),
        "the plan's solve": lambda P: plan.solve(P, q0, 0.0),
        "kernel alone": lambda P: call(plan.ibuf, plan.fbuf, P.reshape(1, 4, 4), q, 0, out,
                                       NO_HISTORY_Q, NO_HISTORY_E, work, 0, 1),
        "np.empty (the result row)": lambda P: np.empty(plan.shape),
        "result from row, general reader": lambda P: single_result(
            plan.tpl, out[0], plan.nq, 1, NO_HISTORY_Q, NO_HISTORY_E, 0, 0.0),
    }  # fmt: skip
    # Each step over all targets in a loop of its own (the kernel's time depends on the
    # target; the steps' order would otherwise share caches unevenly).
    parts: dict[str, list[float]] = {k: [] for k in steps}
    for _ in range(3):
        for k, f in steps.items():
            for i in range(n):
                P = T[i % len(T)]
                t = clock()
                f(P)
                parts[k].append((clock() - t) * 1e-3)
    total = float(np.median(parts["Model.ik (options=)"]))
    print("\n| step (prebuilt options, one Panda pose) | median µs |")
    print("|---|---:|")
    for k, v in parts.items():
        print(f"| {k} | {np.median(v):.2f} |")
    kern = float(np.median(parts["kernel alone"]))
    own = float(np.median(parts["the plan's solve"]))
    print(f"| Python around the kernel (call - kernel) | {total - kern:.2f} |")
    print(f"| of which in the plan (plan - kernel) | {own - kern:.2f} |")
    print(f"| of which from Model.ik to the plan (call - plan) | {total - own:.2f} |")


def whole_body(n: int, rounds: int) -> None:
    """Four 6D effectors in a dict: Talos (example-robot-data, floating base; skipped
    without it) with ``tol=``, G1 and Talos full on ``wholebody.py --targets easy``'s
    first set, and the built-in humanoid along a trajectory with ``rest=``
    an array and ``time_budget=``, as keywords and prebuilt; then the driver alone on the
    plan's rows, so that call - driver is the Python around it."""

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from scenarios import HUMANOID_FRAMES, humanoid_trajectory
    from wholebody import EXTRA_FILES, robot_file, targets_for

    S = _plans_module()
    cases: dict[str, tuple[kinetree.Model, list[dict], list, dict]] = {}
    try:
        from kinetree.anim.retarget.robots import load_robot

        talos = load_robot("talos")
        cases["Talos, tol="] = (talos, targets_for(talos, n, 0), [None] * n, {"tol": TOL})
        # ``wholebody.py --targets easy``'s sets: near the standing pose.
        for name in ("g1", "talos-full"):
            m = load_robot(str(robot_file(name))) if name in EXTRA_FILES else load_robot(name)
            easy = targets_for(m, n, 1, "easy", 0.2)
            cases[f"{name}, easy, tol="] = (m, easy, [None] * n, {"tol": TOL})
    except Exception as e:  # example-robot-data missing
        print(f"(example-robot-data's robots skipped: {e})")
    hum = kinetree.load("humanoid")
    Q = humanoid_trajectory(hum, n + 1)
    tgts = [{f: kinetree.Pose(hum.fk(q, f)) for f in HUMANOID_FRAMES} for q in Q[1:]]
    kw = {"rest": hum.neutral().copy(), "time_budget": BUDGET, "tol": TOL}
    cases["humanoid, rest= time_budget= tol="] = (hum, tgts, list(Q[:-1]), kw)
    print("\n| whole body, 4 effectors | variant | median µs | median / prebuilt |")
    print("|---|---|---:|---:|")
    for name, (m, tg, q0s, kw) in cases.items():
        opts = IKOptions(**kw)
        variants = {
            "options=IKOptions": lambda i, m=m, tg=tg, q0s=q0s, o=opts: m.ik(
                tg[i], q0=q0s[i], options=o
            ),
            "keywords": lambda i, m=m, tg=tg, q0s=q0s, kw=kw: m.ik(tg[i], q0=q0s[i], **kw),
        }
        for f in variants.values():
            f(0)
        plan = _get(S, "LAST_DICT", "_LAST_DICT")[0][3]
        out = np.empty((1, 64 * m.nq + 4096))  # room for any result row
        tpl = plan.tpl

        def driver(i: int, m=m, tg=tg, q0s=q0s, plan=plan, tpl=tpl, out=out) -> None:
            rows = plan.fill(tg[i])  # outside the timed call below
            q = _get(S, "q0_rows", "_q0_rows")(m, q0s[i], 1)
            t = time.perf_counter_ns()
            plan.kernel(tpl.ibuf, tpl.fbuf, rows, q, 0, out, S.NO_HISTORY_Q, S.NO_HISTORY_E,
                        plan.work, 0, 1)  # fmt: skip
            DRIVER.append((time.perf_counter_ns() - t) * 1e-9)

        DRIVER.clear()
        times = interleaved({**variants, "driver": driver}, n, rounds)
        base = float(np.median(times["options=IKOptions"]))
        for k in variants:
            m_ = float(np.median(times[k]))
            print(f"| {name} | {k} | {m_ * 1e6:.2f} | {m_ / base:.3f} |")
        d = float(np.median(DRIVER))
        print(f"| {name} | driver alone | {d * 1e6:.2f} | |")
        print(f"| {name} | Python around it (keywords - driver) | "
              f"{(float(np.median(times['keywords'])) - d) * 1e6:.2f} | |")  # fmt: skip


DRIVER: list[float] = []


def kernel_only(n: int, passes: int = 7) -> None:
    """The compiled driver alone, called through the single-pose plan's direct entry on
    ``n`` Panda targets of ``scenarios.pose_targets`` from the neutral pose (no time
    budget): µs per solve, best of ``passes`` passes, and the iterations per solve. What
    the kernel's own changes are measured by (the Python around it takes no part)."""

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import scenarios

    from kinetree.ik._run import NO_HISTORY_E, NO_HISTORY_Q

    S = _plans_module()
    model = kinetree.load("panda")
    T = [np.ascontiguousarray(t)[None] for t in scenarios.pose_targets(model, n)]
    q0 = model.neutral()
    opts = IKOptions(time_budget=None)
    plans = _get(S, "PLANS", "_PLANS")
    while (id(model), id(opts), None) not in plans:  # compiled (or loaded) first
        model.ik(T[0][0], q0=q0, options=opts)
        time.sleep(0.1)
    plan = _get(S, "PLANS", "_PLANS")[(id(model), id(opts), None)][2]
    call = getattr(plan, "call", plan.kernel)
    out = np.empty(plan.shape)
    q = q0[None]
    args = (plan.ibuf, plan.fbuf)
    it = plan.nq + 2 + 1  # R_ITERATIONS of the row
    iters = 0.0
    for t in T:
        call(*args, t, q, 0, out, NO_HISTORY_Q, NO_HISTORY_E, plan.work, 0, 1)
        iters += out[0, it]
    best = np.inf
    for _ in range(passes):
        t0 = time.perf_counter()
        for t in T:
            call(*args, t, q, 0, out, NO_HISTORY_Q, NO_HISTORY_E, plan.work, 0, 1)
        best = min(best, time.perf_counter() - t0)
    print(
        f"kernel alone: {best / n * 1e6:.2f} µs per solve (best of {passes} passes over {n} "
        f"Panda targets from the neutral pose), {iters / n:.2f} iterations per solve"
    )


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=2000, help="Panda targets (default 2000)")
    ap.add_argument("--rounds", type=int, default=5, help="passes over them (default 5)")
    ap.add_argument("--profile", action="store_true", help="cProfile the keyword call")
    ap.add_argument("--whole-body", action="store_true", help="also Talos and the humanoid")
    ap.add_argument("--kernel-only", action="store_true", help="the compiled driver alone")
    a = ap.parse_args(argv)
    if a.kernel_only:
        kernel_only(min(a.n, 1000))
        return 0
    model = kinetree.load("panda")
    T = [np.ascontiguousarray(t) for t in model.fk(model.random_configuration(a.n, rng=0))]
    q0 = model.neutral()
    active = list(model.joint_names)
    kw = {"active": active, "tol": TOL, "time_budget": BUDGET}
    opts = IKOptions(**kw)

    variants = {
        "options=IKOptions": lambda i: model.ik(T[i], q0=q0, options=opts),
        "keywords": lambda i: model.ik(T[i], q0=q0, active=active, tol=TOL, time_budget=BUDGET),
        "no options": lambda i: model.ik(T[i], q0=q0),
    }
    for f in variants.values():  # first calls (templates, driver load) are not counted
        f(0)
    times = interleaved(variants, a.n, a.rounds)
    load = os.getloadavg()[0]
    print(f"kinetree {kinetree.__version__}, Panda 6D at {TOL:g}, {a.n} targets x {a.rounds} "
          f"rounds, interleaved per target, load {load:.2f}\n")  # fmt: skip
    print("| variant | median µs | mean µs | median / prebuilt |")
    print("|---|---:|---:|---:|")
    base = float(np.median(times["options=IKOptions"]))
    for k, v in times.items():
        m = float(np.median(v))
        print(f"| {k} | {m * 1e6:.2f} | {v.mean() * 1e6:.2f} | {m / base:.3f} |")
    # Per-target ratio: the same target, adjacent in time.
    ratio = times["keywords"] / times["options=IKOptions"]
    print(f"\nkeywords / prebuilt, median of per-call ratios: {np.median(ratio):.3f}")
    breakdown(model, T, opts, a.n)
    if a.whole_body:
        whole_body(min(a.n, 300), a.rounds)
    if a.profile:
        import cProfile
        import pstats

        pr = cProfile.Profile()
        pr.enable()
        for i in range(a.n):
            variants["keywords"](i)
        pr.disable()
        pstats.Stats(pr).sort_stats("tottime").print_stats(15)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
