"""GPU batches: Panda 6D IK and FK with device="cuda", pytorch_kinematics beside it,
and the CPU's scaling over threads on the same host.

One command on a machine with an NVIDIA GPU (see docs/gpu.md for a host without a
package registry):

    python benchmarks/gpu.py                 # everything; --n 1000000 by default
    python benchmarks/gpu.py --quick         # N = 100,000, fewer repeats
    python benchmarks/gpu.py --collision-only  # the collision scene alone, CPU and GPU
    python benchmarks/gpu.py --wholebody-only  # the G1 whole-body scene alone, CPU and GPU
    python benchmarks/gpu.py --reach-only    # the Panda's reachability map alone, GPU and CPU
    python benchmarks/gpu.py --compile-only  # no GPU needed: PTX + ptxas register/spill report
                                             # (+ SASS instructions, live registers: nvdisasm);
                                             # the collision and wholebody kernels need
                                             # example-robot-data

What it measures (Panda, 6D pose targets at 1e-6 m / 1e-6 rad, joint limits on,
targets = FK of uniform random configurations within the limits, every solve from the
same seed pose ``q0`` = the neutral configuration, default ``auto`` options):

* solved % and solves/s for N targets already on the GPU (torch float64 in, torch out);
  success is re-checked here by FK of the returned q (in torch, not kinetree's kernel);
* a batch of 1,000 from numpy to numpy (transfers included), median wall time;
* FK of N configurations on the GPU (torch in, torch out), median wall time;
* pytorch_kinematics' batched ``PseudoInverseIK`` on the first ``--pk-n`` of the same
  targets, on the same GPU in float64, 10 retries (q0 + 9 random), its answers judged by
  kinetree's CPU FK at the same tolerances; the ratio of solves/s;
* collision-aware IK (``--collision-n`` targets): ``benchmarks/collision_ik.py``'s Panda
  (example-robot-data meshes and SRDF) with a table, a pillar and a ball, self-collision
  on, the same targets on the CPU and the GPU: solved, successes clear on the exact meshes
  (coal), claimed successes off target by FK, wall time (needs example-robot-data, coal);
* whole-body IK (``--wholebody-n`` targets): example-robot-data's G1 (29 DoF) with a
  free-flying base, four 6D targets (both hands, both feet) at random configurations as
  ``benchmarks/wholebody.py`` makes them, every solve from the neutral pose at 1e-6 m /
  1e-6 rad, default options: solved on the GPU (numpy dicts in, numpy out) and on the CPU
  (every core, the first ``--wholebody-cpu-n`` targets), re-checked by FK, the base
  quaternion's norm, agreement on the shared targets, solves/s (needs example-robot-data);
* the Panda's reachability map (``--reach-resolution`` 0.05 m x ``--reach-orientations``
  50, default restarts) end to end on the GPU (``workspace.reachability(device="cuda")``):
  the first call (compile) and later calls' median wall time, and the CPU map (every
  core; ``--reach-cpu full``, ``slab`` for one plane of voxels, ``none``) for the
  agreement of index, manipulability and best configurations, with FK of the GPU's best
  configurations on their voxel centres;
* the CPU batch (``device="cpu"``) at 1, 2, 4, 8, 16 threads (``KINETREE_NUM_THREADS``,
  one process each) and its parallel efficiency.

It prints markdown tables and writes them with the raw numbers as JSON (``--json``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

if not hasattr(np, "row_stack"):  # numpy 2.5 dropped it; older numba-cuda still calls it
    vars(np)["row_stack"] = np.vstack

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))  # collision_ik's scene and checker

import kinetree  # noqa: E402

TOL = 1e-6
SEED = 2024


def targets(model: kinetree.Model, n: int, seed: int = SEED) -> np.ndarray:
    """FK poses (n, 4, 4) of uniform random configurations within the limits."""
    return model.fk(model.random_configuration(n, rng=seed))


def collision_scene(
    max_spheres: int | None = None,
) -> tuple[kinetree.Model, str, list[Any], dict[str, Any]] | None:
    """``(model, frame, world, options)`` of ``benchmarks/collision_ik.py``'s scene: the
    Panda of example-robot-data (its collision meshes and SRDF) with a table, a pillar and
    a ball, self-collision on; None without example-robot-data."""
    import collision_ik as bench

    robots = bench.robots_dir()
    if robots is None or not robots.is_dir():
        return None
    d = robots / "panda_description"
    model = kinetree.load(d / "urdf" / "panda.urdf", srdf=d / "srdf" / "panda.srdf")
    cm = kinetree.collision.collision_model(
        model, max_spheres=max_spheres or bench.MAX_SPHERES, max_overshoot=bench.MAX_OVERSHOOT
    )
    world = bench.scene()
    opts = {"obstacles": world, "self_collision": True, "margin": bench.MARGIN,
            "ignore": bench.IGNORE, "collision_model": cm}  # fmt: skip
    return model, model.end_effectors[0], world, opts


def wholebody_scene(n: int, seed: int = SEED) -> tuple[kinetree.Model, dict[str, Any]] | None:
    """``(G1, {frame: Pose (n, 4, 4)})``: example-robot-data's G1 with a free base and
    its hands' and feet's poses at ``n`` configurations drawn as ``benchmarks/wholebody.py``
    draws them (joints uniform within their limits, the base within 0.2 m and 0.5 rad of
    the neutral pose), computed as one batch per frame; None without example-robot-data."""
    from scipy.spatial.transform import Rotation

    from kinetree.anim.retarget.robots import load_robot
    from kinetree.io.robot_packages import example_robot_data

    if example_robot_data() is None:
        return None
    m = load_robot("g1")
    rng = np.random.default_rng(seed)
    Q = m.random_configuration(n, rng)
    sl = m.q_slice("root_joint")
    base = m.neutral()[sl][:3]
    Q[:, sl.start : sl.start + 3] = base + rng.uniform(-0.2, 0.2, (n, 3))
    Q[:, sl.start + 3 : sl.stop] = Rotation.from_rotvec(rng.uniform(-0.5, 0.5, (n, 3))).as_quat(
        scalar_first=True
    )
    return m, {f: kinetree.Pose(m.fk(Q, f)) for f in m.end_effectors[:4]}


def wholebody_checked(m: kinetree.Model, r: Any, targets: dict[str, Any]) -> np.ndarray:
    """Whether each answer puts every frame on its target by FK (1e-6 m, 1e-6 rad)."""
    ok = np.ones(r.q.shape[0], dtype=bool)
    for f, t in targets.items():
        M, T = m.fk(r.q, f), np.asarray(t.T)
        R = np.swapaxes(M[:, :3, :3], -1, -2) @ T[:, :3, :3]
        angle = np.arccos(np.clip((np.trace(R, axis1=1, axis2=2) - 1.0) / 2.0, -1.0, 1.0))
        ok &= np.linalg.norm(M[:, :3, 3] - T[:, :3, 3], axis=1) <= TOL * (1 + 1e-9)
        ok &= angle <= 1.5 * TOL  # arccos near 0 is ill-conditioned: 1.5x, as above
    return ok


def bench_wholebody(n: int, cpu_n: int, repeats: int) -> dict[str, Any] | None:
    """The G1 whole-body scene (:func:`wholebody_scene`) on the GPU (``n`` targets) and the
    CPU (the first ``cpu_n``, every core); None without example-robot-data."""
    scene = wholebody_scene(n)
    if scene is None:
        return None
    m, targets = scene
    cpu_n = min(cpu_n, n)
    first = {f: kinetree.Pose(np.asarray(t.T)[:cpu_n]) for f, t in targets.items()}
    out: dict[str, Any] = {"wholebody_n": n, "wholebody_cpu_n": cpu_n, "wholebody_nv": m.nv}
    small = {f: kinetree.Pose(np.asarray(t.T)[:8]) for f, t in targets.items()}
    t = time.perf_counter()
    m.ik(small, tol=TOL, device="cuda")  # compile
    _sync()
    out["wholebody_first_call_s"] = time.perf_counter() - t
    m.ik(small, tol=TOL)
    res = {}
    for device, batch, count in (("cpu", first, cpu_n), ("cuda", targets, n)):
        r = m.ik(batch, tol=TOL, device=device)
        wall = _median_time(lambda d=device, b=batch: m.ik(b, tol=TOL, device=d),
                            max(1, repeats // 5))  # fmt: skip
        on = wholebody_checked(m, r, batch)
        k = f"wholebody_{device}_"
        out[k + "solved_pct"] = 100.0 * float(r.success.mean())
        out[k + "solved_checked_pct"] = 100.0 * float((r.success & on).mean())
        out[k + "claimed_but_off"] = int((r.success & ~on).sum())
        out[k + "wall_s"] = wall
        out[k + "solves_per_s"] = count / wall
        out[k + "mean_iterations"] = float(r.iterations.mean())
        out[k + "max_iterations"] = int(r.iterations.max())
        out[k + "mean_restarts"] = float(r.restarts.mean())
        sl = m.q_slice("root_joint")
        out[k + "max_quaternion_norm_error"] = float(
            np.abs(np.linalg.norm(r.q[:, sl.start + 3 : sl.stop], axis=1) - 1.0).max()
        )
        res[device] = r
    c, g = res["cpu"], res["cuda"]
    out["wholebody_same_success"] = int((c.success == g.success[:cpu_n]).sum())
    out["wholebody_same_iterations"] = int((c.iterations == g.iterations[:cpu_n]).sum())
    out["wholebody_max_q_diff"] = float(np.abs(c.q - g.q[:cpu_n]).max())
    return out


def _wholebody_rows(w: dict[str, Any]) -> list[str]:
    n, cn = w["wholebody_n"], w["wholebody_cpu_n"]
    rows = [
        "",
        f"Whole-body IK: G1 (example-robot-data, free base, {w['wholebody_nv']} DoF), four 6D "
        "targets (hands, feet) at random configurations, from the neutral pose, 1e-6 m / "
        "1e-6 rad, default options",
        "",
        "| | targets | solved | re-checked by FK | claimed but off target | solves/s | wall "
        "(median) | mean / max iterations, mean restarts | max abs(norm(base quat) - 1) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for device, count in (("cpu", cn), ("cuda", n)):
        k = f"wholebody_{device}_"
        rows.append(
            f"| {device} | {count:,} | {w[k + 'solved_pct']:.3f} % | "
            f"{w[k + 'solved_checked_pct']:.3f} % | {w[k + 'claimed_but_off']} | "
            f"{w[k + 'solves_per_s']:,.0f} | {w[k + 'wall_s'] * 1e3:.1f} ms | "
            f"{w[k + 'mean_iterations']:.1f} / {w[k + 'max_iterations']}, "
            f"{w[k + 'mean_restarts']:.2f} | {w[k + 'max_quaternion_norm_error']:.1e} |"
        )
    rows.append(
        f"\non the first {cn:,} targets (both devices): same success "
        f"{w['wholebody_same_success']:,}, same iterations {w['wholebody_same_iterations']:,}, "
        f"largest |q| difference {w['wholebody_max_q_diff']:.1e}; first GPU call (compile): "
        f"{w['wholebody_first_call_s']:.1f} s; goal: >= 1 million solves/s on the GPU"
    )
    return rows


def bench_reach(
    resolution: float, orientations: int, restarts: int | None, repeats: int, cpu: str
) -> dict[str, Any]:
    """The Panda's reachability map (``workspace.reachability``: ``resolution`` [m],
    ``orientations`` per voxel, default restarts unless ``restarts``) end to end on the
    GPU: the first call (kernels compiled) and the median of ``repeats`` later calls; and
    the CPU map (every core) of the same arguments for the agreement, over the whole map
    (``cpu="full"``), over one plane of voxels through the shoulder (``"slab"``: the GPU
    maps that plane again, since a box renumbers the problems and so their seeds), or
    not (``"none"``)."""
    from kinetree import workspace as ws

    panda = kinetree.load("panda")
    kw: dict[str, Any] = {"resolution": resolution, "orientations": orientations}
    if restarts is not None:
        kw["restarts"] = restarts
    out: dict[str, Any] = {"reach_resolution": resolution, "reach_orientations": orientations,
                           "reach_restarts": restarts, "reach_cpu": cpu}  # fmt: skip
    t = time.perf_counter()
    g = ws.reachability(panda, device="cuda", **kw)
    out["reach_first_call_s"] = time.perf_counter() - t
    out["reach_gpu_wall_s"] = _median_time(lambda: ws.reachability(panda, device="cuda", **kw),
                                           max(1, repeats // 5))  # fmt: skip
    inside = g.inside
    out["reach_voxels"] = int(inside.sum())
    out["reach_problems"] = int(g.settings["problems"])
    out["reach_gpu_problems_per_s"] = out["reach_problems"] / out["reach_gpu_wall_s"]
    out["reach_mean_index"] = float(g.index[inside].mean())
    if cpu == "none":
        return out
    if cpu == "slab":
        c = g.center
        big = 10.0 * g.radius
        kw["box"] = [[c[0] - big, c[0] + big], [c[1] - big, c[1] + big], [c[2], c[2]]]
        g = ws.reachability(panda, device="cuda", **kw)
        inside = g.inside
    t = time.perf_counter()
    c_map = ws.reachability(panda, **kw)
    out["reach_cpu_wall_s"] = time.perf_counter() - t
    out["reach_cpu_voxels"] = int(inside.sum())
    out["reach_cpu_problems"] = int(c_map.settings["problems"])
    out["reach_same_index"] = int((g.index == c_map.index)[inside].sum())
    diff = np.abs(g.manipulability - c_map.manipulability)[inside]
    scale = np.maximum(np.abs(c_map.manipulability[inside]), 1e-300)
    out["reach_max_manipulability_rel_diff"] = float((diff / scale).max(initial=0.0))
    out["reach_same_q_best"] = int(np.all(g.q_best == c_map.q_best, axis=-1)[inside].sum())
    out["reach_max_q_best_diff"] = float(np.abs(g.q_best - c_map.q_best)[inside].max(initial=0.0))
    # FK of the GPU's best configurations, the independent check: on their voxel centres.
    ok = g.index > 0
    P = panda.fk(g.q_best[ok])[:, :3, 3]
    out["reach_max_fk_error_m"] = float(np.abs(P - g.centers()[ok]).max(initial=0.0))
    return out


def _reach_rows(r: dict[str, Any]) -> list[str]:
    restarts = "default" if r["reach_restarts"] is None else r["reach_restarts"]
    rows = [
        "",
        f"Reachability map: Panda, {r['reach_resolution']:g} m voxels x "
        f"{r['reach_orientations']} orientations, restarts {restarts} "
        f"({r['reach_voxels']:,} voxels in the reach sphere, {r['reach_problems']:,} IK "
        "problems), workspace.reachability(device='cuda')",
        "",
        "| | wall | problems/s | mean index | goal |",
        "|---|---|---|---|---|",
        f"| GPU, end to end (median of later calls) | {r['reach_gpu_wall_s']:.3f} s | "
        f"{r['reach_gpu_problems_per_s']:,.0f} | {r['reach_mean_index']:.4f} | <= 1 s |",
        f"| GPU, first call (kernels compiled) | {r['reach_first_call_s']:.1f} s | | | |",
    ]
    if r["reach_cpu"] != "none":
        n = r["reach_cpu_voxels"]
        what = "whole map" if r["reach_cpu"] == "full" else "one plane of voxels"
        rows.append(f"| CPU, every core ({what}, {r['reach_cpu_problems']:,} problems) | "
                    f"{r['reach_cpu_wall_s']:.2f} s | "
                    f"{r['reach_cpu_problems'] / r['reach_cpu_wall_s']:,.0f} | | |")  # fmt: skip
        rows.append(
            f"\nGPU against CPU over {n:,} voxels: same index {r['reach_same_index']:,}, "
            f"same best configuration {r['reach_same_q_best']:,} (largest difference "
            f"{r['reach_max_q_best_diff']:.1e}), manipulability within "
            f"{r['reach_max_manipulability_rel_diff']:.1e} relative; FK of the best "
            f"configurations off their voxel centres by at most {r['reach_max_fk_error_m']:.1e} m"
        )
    return rows


def _sync() -> None:
    from numba import cuda

    cuda.synchronize()


def _median_time(fn: Any, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        _sync()
        t = time.perf_counter()
        fn()
        _sync()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def pose_errors_torch(torch: Any, model: kinetree.Model, q: Any, T: Any) -> tuple[Any, Any]:
    """Position [m] and rotation [rad] errors of FK(q) against T, on the GPU (the
    rotation angle from the Frobenius norm of R_q - R_T: 2 sqrt(2) sin(a/2))."""
    P = model.fk(q, device="cuda")
    dp = torch.linalg.norm(P[:, :3, 3] - T[:, :3, 3], dim=1)
    s = torch.linalg.norm(P[:, :3, :3] - T[:, :3, :3], dim=(1, 2)) / (2.0 * 2.0**0.5)
    return dp, 2.0 * torch.asin(torch.clamp(s, max=1.0))


def bench_gpu(n: int, repeats: int) -> dict[str, Any]:
    import torch

    panda = kinetree.load("panda")
    out: dict[str, Any] = {"device": torch.cuda.get_device_name(0), "n": n}
    T_host = targets(panda, n)
    q0 = np.asarray(panda.q_neutral)
    T = torch.from_numpy(T_host).cuda()
    Q0 = torch.from_numpy(q0).cuda()

    t = time.perf_counter()
    panda.ik(T[:64], device="cuda", q0=Q0)  # compile (cached for the process)
    _sync()
    out["first_call_s"] = time.perf_counter() - t

    runs = []
    res = None
    for _ in range(max(1, repeats // 5)):
        _sync()
        t = time.perf_counter()
        res = panda.ik(T, device="cuda", q0=Q0)
        _sync()
        runs.append(time.perf_counter() - t)
    assert res is not None
    wall = statistics.median(runs)
    dp, dr = pose_errors_torch(torch, panda, res.q, T)
    checked = (dp <= TOL * (1 + 1e-9)) & (dr <= TOL * (1 + 1e-6))
    out.update(
        ik_wall_s=wall,
        ik_solves_per_s=n / wall,
        solved_pct=100.0 * float(res.success.double().mean()),
        solved_checked_pct=100.0 * float((checked & res.success).double().mean()),
        claimed_but_off=int((res.success & ~checked).sum()),
        mean_iterations=float(res.iterations.double().mean()),
        max_iterations=int(res.iterations.max()),
        mean_restarts=float(res.restarts.double().mean()),
    )

    T1k = T_host[:1000].copy()
    panda.ik(T1k, device="cuda", q0=q0)
    out["batch1000_wall_s"] = _median_time(lambda: panda.ik(T1k, device="cuda", q0=q0), repeats)

    Q = torch.from_numpy(panda.random_configuration(n, rng=SEED + 1)).cuda()
    panda.fk(Q[:10], device="cuda")
    out["fk_wall_s"] = _median_time(lambda: panda.fk(Q, device="cuda"), repeats)
    P = panda.fk(Q[:1000], device="cuda").cpu().numpy()
    out["fk_max_diff_vs_cpu"] = float(np.abs(P - panda.fk(Q[:1000].cpu().numpy())).max())
    return out


def bench_collision(n: int, repeats: int) -> dict[str, Any] | None:
    """Collision-aware IK, ``benchmarks/collision_ik.py``'s scene and targets (hand poses
    of configurations 1 cm clear on the exact meshes, solved from the ready pose, default
    options: ``auto``, 200 restarts, 50 ms per problem), the same batch on the CPU (every
    core) and on the GPU (numpy in, numpy out): solved, successes clear on the exact
    meshes (coal), agreement, median wall time. None without example-robot-data or coal."""
    import collision_ik as bench

    scene = collision_scene()
    try:
        import coal  # noqa: F401
    except ImportError:
        return None
    if scene is None:
        return None
    model, frame, world, opts = scene
    checker = bench.ExactChecker(model, opts["collision_model"], world)
    _, P = bench.targets(model, checker, n, frame)
    q0 = model.q_neutral.copy()
    q0[:7] = bench.READY
    out: dict[str, Any] = {"collision_n": n, "spheres": len(opts["collision_model"].spheres.radii)}
    t = time.perf_counter()
    model.ik(P[:8], frame, q0=q0, device="cuda", **opts)  # compile
    _sync()
    out["collision_first_call_s"] = time.perf_counter() - t
    model.ik(P[:8], frame, q0=q0, **opts)
    res = {}
    for device in ("cpu", "cuda"):
        r = model.ik(P, frame, q0=q0, device=device, **opts)
        wall = _median_time(lambda d=device: model.ik(P, frame, q0=q0, device=d, **opts),
                            max(1, repeats // 5))  # fmt: skip
        clear = np.array([checker.clearance(q) > 0.0 if ok else False
                          for q, ok in zip(r.q, r.success, strict=True)])  # fmt: skip
        Tq = model.fk(r.q, frame)
        R = np.swapaxes(Tq[:, :3, :3], -1, -2) @ P[:, :3, :3]
        angle = np.arccos(np.clip((np.trace(R, axis1=1, axis2=2) - 1.0) / 2.0, -1.0, 1.0))
        on = (np.linalg.norm(Tq[:, :3, 3] - P[:, :3, 3], axis=1) <= TOL * (1 + 1e-9)) & (
            angle <= 1.5 * TOL
        )
        out[f"collision_{device}_solved"] = int(r.success.sum())
        out[f"collision_{device}_clear_on_meshes"] = int(clear.sum())
        out[f"collision_{device}_claimed_but_off"] = int((r.success & ~on).sum())
        out[f"collision_{device}_wall_s"] = wall
        out[f"collision_{device}_mean_iterations"] = float(r.iterations.mean())
        res[device] = r
    # The same batch on the GPU without the 50 ms per problem: whether the clock (a GPU
    # thread iterates slower than a CPU core) or the arithmetic decides a difference.
    r = model.ik(P, frame, q0=q0, device="cuda", **{**opts, "time_budget": None})
    out["collision_cuda_unbudgeted_solved"] = int(r.success.sum())
    out["collision_cuda_unbudgeted_mean_iterations"] = float(r.iterations.mean())
    both = res["cpu"].success & res["cuda"].success
    out["collision_same_success"] = int((res["cpu"].success == res["cuda"].success).sum())
    out["collision_max_q_diff_both_solved"] = (
        float(np.abs(res["cpu"].q[both] - res["cuda"].q[both]).max()) if both.any() else 0.0
    )
    return out


def bench_pytorch_kinematics(n: int) -> dict[str, Any]:
    """pytorch_kinematics' batched PseudoInverseIK on the GPU, float64, 10 retries."""
    from importlib import resources

    import pytorch_kinematics as pk
    import torch

    panda = kinetree.load("panda")
    T_host = targets(panda, n)
    with resources.as_file(resources.files("kinetree.models") / "data" / "panda.urdf") as p:
        urdf = Path(p).read_bytes()
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        chain = pk.build_serial_chain_from_urdf(urdf, "panda_link8").to(
            dtype=torch.float64, device="cuda"
        )
    finally:
        torch.set_default_dtype(old)
    lo, hi = panda.limits[:, 0], panda.limits[:, 1]
    gen = np.random.default_rng(0)
    retry = np.vstack([np.asarray(panda.q_neutral), lo + (hi - lo) * gen.random((9, 7))])
    ik = pk.PseudoInverseIK(
        chain,
        pos_tolerance=TOL,
        rot_tolerance=TOL,
        retry_configs=torch.tensor(retry, dtype=torch.float64, device="cuda"),
        joint_limits=torch.tensor(panda.limits, dtype=torch.float64, device="cuda"),
        max_iterations=100,
        lr=1.0,
        early_stopping_any_converged=True,
        clamp_to_limits=True,
    )
    goal = pk.Transform3d(matrix=torch.from_numpy(T_host).cuda(), device="cuda")
    ik.solve(pk.Transform3d(matrix=torch.from_numpy(T_host[:16]).cuda(), device="cuda"))
    _sync()
    t = time.perf_counter()
    sol = ik.solve(goal)
    torch.cuda.synchronize()
    wall = time.perf_counter() - t
    conv = sol.converged
    err = sol.err_pos + sol.err_rot
    score = torch.where(conv, torch.arange(conv.shape[1], device=err.device).to(err.dtype) - 1e9,
                        err)  # fmt: skip
    pick = torch.argmin(score, dim=1)
    q = sol.solutions[torch.arange(conv.shape[0], device=err.device), pick].cpu().numpy()
    P = panda.fk(q)
    dp = np.linalg.norm(P[:, :3, 3] - T_host[:, :3, 3], axis=1)
    R_err = np.swapaxes(T_host[:, :3, :3], -1, -2) @ P[:, :3, :3]
    dr = np.linalg.norm(kinetree.spatial.matrix_to_axis_angle(R_err), axis=-1)
    ok = (dp <= TOL) & (dr <= TOL) & np.all((q >= lo - 1e-9) & (q <= hi + 1e-9), axis=1)
    return {"pk_n": n, "pk_wall_s": wall, "pk_solves_per_s": n / wall,
            "pk_solved_pct": 100.0 * float(ok.mean())}  # fmt: skip


def bench_cpu_scaling(n: int, threads: tuple[int, ...]) -> list[dict[str, Any]]:
    """``device="cpu"`` batches, one process per thread count."""
    code = (
        "import sys, time, numpy as np; sys.path.insert(0, sys.argv[2]); import kinetree;"
        "m = kinetree.load('panda'); n = int(sys.argv[1]);"
        f"T = m.fk(m.random_configuration(n, rng={SEED})); q0 = np.asarray(m.q_neutral);"
        "m.ik(T[:200], q0=q0); best = 1e9;\n"
        "for _ in range(3):\n"
        "    t = time.perf_counter(); r = m.ik(T, q0=q0)\n"
        "    best = min(best, time.perf_counter() - t)\n"
        "print(best, float(r.success.mean()))"
    )
    rows = []
    for k in threads:
        env = dict(os.environ, KINETREE_NUM_THREADS=str(k), NUMBA_NUM_THREADS="1")
        run = subprocess.run([sys.executable, "-c", code, str(n), str(ROOT / "src")], env=env,
                             capture_output=True, text=True, check=True)  # fmt: skip
        wall, solved = map(float, run.stdout.split()[-2:])
        rows.append({"threads": k, "wall_s": wall, "solves_per_s": n / wall,
                     "solved_pct": 100 * solved})  # fmt: skip
    base = rows[0]["solves_per_s"] / rows[0]["threads"]
    for r in rows:
        r["efficiency_pct"] = 100.0 * r["solves_per_s"] / (r["threads"] * base)
    return rows


def _toolkit_without_nvrtc() -> None:
    """Let numba-cuda compile to PTX on a machine with NVVM and ptxas but no NVRTC (a
    CUDA toolkit without it, no GPU): the target is sm_90 (``NUMBA_FORCE_CUDA_CC``, so
    NVRTC is not asked which architectures it knows) and NVRTC's path is left empty
    (only linking CUDA C, at load time, needs it)."""
    os.environ.setdefault("NUMBA_FORCE_CUDA_CC", "9.0")
    from numba.cuda import cuda_paths

    find = cuda_paths._get_nvrtc_path

    def nvrtc_path() -> Any:
        try:
            return find()
        except Exception:  # cuda.pathfinder's DynamicLibNotFoundError
            return cuda_paths._env_path_tuple("absent", None)

    cuda_paths._get_nvrtc_path = nvrtc_path


def _cuda_tool(name: str, env: str | None = None) -> str | None:
    """A CUDA tool (``ptxas``, ``nvdisasm``): ``$env`` when set, else the NVIDIA wheels'
    (``nvidia-cuda-nvcc``, ``nvidia-cuda-nvdisasm``: the same toolkit as NVVM), else
    ``$CUDA_HOME/bin``'s, else the PATH's (an older ptxas refuses a newer PTX version)."""
    import shutil

    given = os.environ.get(env) if env else None
    if given and Path(given).exists():
        return given
    try:
        import nvidia.cu13 as nv

        for folder in nv.__path__:
            cand = Path(folder) / "bin" / name
            if cand.exists():
                return str(cand)
    except ImportError:
        pass
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if home and (Path(home) / "bin" / name).exists():
        return str(Path(home) / "bin" / name)
    return shutil.which(name)


def _ptxas() -> str | None:
    """ptxas, for the register and spill figures of ``--compile-only``."""
    return _cuda_tool("ptxas")


def _nvdisasm() -> str | None:
    """nvdisasm (or ``$NVDISASM``), for the machine-code figures of ``--compile-only``
    (``pip install nvidia-cuda-nvdisasm``); None: they are skipped."""
    return _cuda_tool("nvdisasm", "NVDISASM")


def _sass_report(nvdisasm: str, obj: Path) -> dict[str, Any]:
    """The kernel's machine instructions (SASS) and the registers live at each of them
    (``nvdisasm --life-range-mode count``): how many instructions, and the largest and
    median number of live registers (a high median: values held across the whole loop;
    a peak far above it: one hot spot)."""
    import re

    r = subprocess.run([nvdisasm, "-c", "-lrm", "count", str(obj)], capture_output=True,
                       text=True)  # fmt: skip
    live: list[int] = []
    in_kernel = False
    for line in r.stdout.splitlines():
        section = re.match(r"//-+ \.text\.(\S+)", line)
        if section:
            in_kernel = "kinetree" in section.group(1)  # the entry, not a libdevice helper
            continue
        m = re.match(r"\s*/\*[0-9a-f]{4,}\*/.*?//\s*\|\s*(\d+)\s*\|", line)
        if in_kernel and m:
            live.append(int(m.group(1)))
    if not live:
        return {}
    return {"sass_instructions": len(live), "live_registers_max": max(live),
            "live_registers_median": int(statistics.median(live))}  # fmt: skip


def _ptxas_report(ptxas: str, name: str, ptx: str, cap: int | None = None) -> dict[str, Any]:
    """Registers, stack frame and spills per thread of the kernel in ``ptx`` (sm_90);
    ``cap``: with ``-maxrregcount`` (what ``cuda.jit(max_registers=...)`` asks for).
    Where nvdisasm is found, also :func:`_sass_report`'s figures."""
    import re
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / f"{name}.ptx"
        src.write_text(ptx)
        # -c: the reshape helpers numba-cuda links at load time stay unresolved here
        cmd = [ptxas, "-c", "-arch=sm_90", "-v", str(src), "-o", str(Path(d) / "k.o")]
        if cap:
            cmd.insert(1, f"-maxrregcount={cap}")
        r = subprocess.run(cmd, capture_output=True, text=True)
        nvdisasm = _nvdisasm()
        sass = _sass_report(nvdisasm, Path(d) / "k.o") if nvdisasm and r.returncode == 0 else {}
    text = r.stderr + r.stdout
    lines = [ln.strip() for ln in text.splitlines()]
    keep = [ln for ln in lines if "registers" in ln or "stack frame" in ln]
    entry: dict[str, Any] = {"ptxas": keep[-2:] if keep else lines[-3:]}
    # The kernel's own lines are the last ones (device functions called, if any, first).
    for key, pattern in (("registers", r"Used (\d+) registers"),
                         ("stack_bytes", r"(\d+) bytes stack frame"),
                         ("spill_stores_bytes", r"(\d+) bytes spill stores"),
                         ("spill_loads_bytes", r"(\d+) bytes spill loads")):  # fmt: skip
        found = re.findall(pattern, text)
        if found:
            entry[key] = int(found[-1])
    entry.update(sass)
    return entry


def compile_only(
    methods: tuple[str, ...] = ("dls",), ptx_dir: Path | None = None
) -> dict[str, Any]:
    """Compile the kernels to PTX for sm_90 without a GPU (numba-cuda with NVVM) and,
    where ptxas is found, report registers, stack and spills per thread. The IK kernel
    is the one ``Model.ik(poses, device="cuda")`` makes for the Panda's 6D pose batch
    with default options (``auto`` runs the ``dls`` kernel); ``wholebody``: the kernel of
    :func:`bench_wholebody`'s G1 dict of four poses; ``humanoid``: the built-in humanoid's
    hands and feet, with its swing-twist limits projected."""
    import types

    _toolkit_without_nvrtc()
    import numba.cuda.dispatcher as dispatcher
    from numba import boolean, cuda, float64, int64

    # Device functions ask the current device for its compute capability; there is none.
    dispatcher.get_current_device = lambda: types.SimpleNamespace(compute_capability=(9, 0))
    from kinetree.gpu import _kernels as K
    from kinetree.gpu.api import _pose_template
    from kinetree.ik.options import resolve
    from kinetree.ik.problem import build_problem

    panda = kinetree.load("panda")
    n = panda.n_nodes
    A1, A2, A3 = float64[::1], float64[:, ::1], float64[:, :, ::1]
    I1, I2, B1 = int64[::1], int64[:, ::1], boolean[::1]
    sigs: dict[str, Any] = {
        "fk": (K.fk_kernel(n), (A2, A2, I2, I1, I1, float64[:, :, :, ::1])),
        "jacobian": (K.jacobian_kernel(n), (A2, A2, I2, I1, int64, A1, A3)),
        "split": (K.split_kernel(), (A2, int64, int64, A2, A2, A2, B1, I1, I1, B1, I1, A2)),
    }
    for method in methods:
        if method == "collision":
            scene = collision_scene()
            if scene is None:
                print("collision: example-robot-data is not installed; skipped", flush=True)
                continue
            model, frame, _, opts_c = scene
            opts = resolve(opts_c)
            tpl = _pose_template(model, frame, opts)
            sigs["split_collision"] = (K.split_kernel(True), (*sigs["split"][1][:-1], A1))
        elif method in ("wholebody", "humanoid"):
            if method == "wholebody":
                wb = wholebody_scene(1)
                if wb is None:
                    print("wholebody: example-robot-data is not installed; skipped", flush=True)
                    continue
                body, body_targets = wb
                name = "ik_wholebody"
            else:
                # The built-in humanoid, hands and feet: its ball joints' swing-twist
                # limits are projected after every step, on the device as on the CPU.
                body = kinetree.load("humanoid")
                Q = body.random_configuration(1, rng=5)
                frames = ("hand_r", "hand_l", "foot_r", "foot_l")
                body_targets = {f: kinetree.Pose(body.fk(Q, f)) for f in frames}
                name = "ik_humanoid_swing_twist"
            opts = resolve({"tol": TOL})
            prob = build_problem(body, body_targets, None, opts)
            tpl = prob.template
            kern = K.ik_kernel(opts.kernel_method, tpl.ibuf, tpl.fbuf, prob.tgt_f.shape[1:])
            sigs[name] = (kern, (A3, A2, int64, A2, I1, A2, A2))
            continue
        else:
            opts = resolve({"method": method})
            tpl = _pose_template(panda, None, opts)
        kern = K.ik_kernel(opts.kernel_method, tpl.ibuf, tpl.fbuf, (4, 4))
        sigs[f"ik_{method}"] = (kern, (A3, A2, int64, A2, I1, A2, A2))
    ptxas = _ptxas()
    report: dict[str, Any] = {"ptxas_path": ptxas}
    for name, (kern, sig) in sigs.items():
        t = time.perf_counter()
        ptx, _ = cuda.compile_ptx(kern.py_func, sig, cc=(9, 0))
        entry: dict[str, Any] = {"ptx_bytes": len(ptx), "compile_s": time.perf_counter() - t}
        if ptx_dir is not None:
            ptx_dir.mkdir(parents=True, exist_ok=True)
            (ptx_dir / f"{name}.ptx").write_text(ptx)
        if ptxas:
            entry.update(_ptxas_report(ptxas, name, ptx))
            if name.startswith("ik_"):
                capped = _ptxas_report(ptxas, name, ptx, cap=128)
                entry["at_128_registers"] = {k: v for k, v in capped.items() if k != "ptxas"}
        report[name] = entry
        print(name, json.dumps(entry), flush=True)
    return report


def check_registers(report: dict[str, Any], cap: int) -> int:
    """The exit status of ``--check-registers``: 0 when the default IK kernel (``ik_dls``;
    ``auto`` runs it) holds at most ``cap`` registers and spills nothing, else 1 (issue
    24's goal without a GPU: 128). Printed either way."""
    k = report.get("ik_dls")
    if not k or "registers" not in k:
        print("check-registers: no ptxas figures for ik_dls (--methods dls, and ptxas on PATH "
              "or CUDA_HOME)")  # fmt: skip
        return 1
    spills = k.get("spill_stores_bytes", 0) + k.get("spill_loads_bytes", 0)
    ok = k["registers"] <= cap and spills == 0
    print(f"check-registers: ik_dls {k['registers']} registers, {spills} B of spills: "
          f"{'meets' if ok else 'misses'} the goal of {cap} registers with no spills")  # fmt: skip
    return 0 if ok else 1


def _collision_rows(c: dict[str, Any]) -> list[str]:
    n = c["collision_n"]
    rows = ["", f"Collision-aware IK: Panda (example-robot-data meshes, SRDF, {c['spheres']} "
            f"spheres), table + pillar + ball, self-collision, {n} targets, default options",
            "", "| | solved | successes clear on the exact meshes (coal) | claimed but off "
            "target | wall (median) | mean iterations |", "|---|---|---|---|---|---|"]  # fmt: skip
    for device in ("cpu", "cuda"):
        k = f"collision_{device}_"
        wall, its = c[k + "wall_s"] * 1e3, c[k + "mean_iterations"]
        rows.append(f"| {device} | {c[k + 'solved']}/{n} | {c[k + 'clear_on_meshes']}/"
                    f"{c[k + 'solved']} | {c[k + 'claimed_but_off']} | {wall:.1f} ms | "
                    f"{its:.1f} |")  # fmt: skip
    rows.append(f"| cuda, no time budget | {c['collision_cuda_unbudgeted_solved']}/{n} | | | | "
                f"{c['collision_cuda_unbudgeted_mean_iterations']:.1f} |")  # fmt: skip
    rows.append(f"\nsame success on both: {c['collision_same_success']}/{n}; largest |q| "
                f"difference where both solved: {c['collision_max_q_diff_both_solved']:.1e}; "
                f"first GPU call (compile): {c['collision_first_call_s']:.1f} s")  # fmt: skip
    return rows


def _table(gpu: dict[str, Any], pk: dict[str, Any] | None, cpu: list[dict[str, Any]]) -> str:
    lines = [f"GPU: {gpu['device']}; host: {platform.processor() or platform.machine()}, "
             f"{os.cpu_count()} cores, Python {platform.python_version()}", "",
             "| measure | kinetree device='cuda' | goal |", "|---|---|---|"]  # fmt: skip
    lines += [
        f"| solved (Panda 6D, 1e-6 m / 1e-6 rad, limits) | {gpu['solved_pct']:.3f} % "
        f"(re-checked by FK: {gpu['solved_checked_pct']:.3f} %) | >= 99.9 % |",
        f"| solves/s at N = {gpu['n']:,} | {gpu['ik_solves_per_s'] / 1e6:.2f} million "
        f"({gpu['ik_wall_s'] * 1e3:.1f} ms) | >= 30 million |",
        f"| batch of 1,000, numpy in/out | {gpu['batch1000_wall_s'] * 1e3:.3f} ms | <= 1 ms |",
        f"| FK of {gpu['n']:,} configurations | {gpu['fk_wall_s'] * 1e3:.3f} ms | <= 1 ms |",
        f"| mean / max iterations, mean restarts | {gpu['mean_iterations']:.1f} / "
        f"{gpu['max_iterations']}, {gpu['mean_restarts']:.2f} | |",
    ]
    if pk:
        ratio = gpu["ik_solves_per_s"] / pk["pk_solves_per_s"]
        lines.append(
            f"| pytorch_kinematics PseudoInverseIK (N = {pk['pk_n']:,}, same GPU, fp64) | "
            f"{pk['pk_solves_per_s']:,.0f} solves/s, {pk['pk_solved_pct']:.2f} % solved; "
            f"ratio {ratio:,.0f}x | ratio >= 100x |"
        )
    if gpu.get("collision_n"):
        lines += _collision_rows(gpu)
    if gpu.get("wholebody_n"):
        lines += _wholebody_rows(gpu)
    if gpu.get("reach_problems"):
        lines += _reach_rows(gpu)
    if cpu:
        lines += ["", "| CPU threads | solves/s | efficiency | solved |", "|---|---|---|---|"]
        for r in cpu:
            lines.append(f"| {r['threads']} | {r['solves_per_s']:,.0f} | "
                         f"{r['efficiency_pct']:.0f} % | {r['solved_pct']:.2f} % |")  # fmt: skip
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1_000_000, help="targets and FK configurations")
    ap.add_argument("--pk-n", type=int, default=100_000, help="targets for pytorch_kinematics")
    ap.add_argument("--cpu-n", type=int, default=50_000, help="targets per CPU scaling run")
    ap.add_argument("--threads", default="1,2,4,8,16", help="CPU thread counts")
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--quick", action="store_true", help="N = 100,000, fewer repeats")
    ap.add_argument("--no-pk", action="store_true", help="skip pytorch_kinematics")
    ap.add_argument("--no-cpu", action="store_true", help="skip the CPU scaling")
    ap.add_argument("--collision-n", type=int, default=150,
                    help="targets of the collision scene (0: skip it)")  # fmt: skip
    ap.add_argument("--collision-only", action="store_true", help="only the collision scene")
    ap.add_argument("--wholebody-n", type=int, default=100_000,
                    help="G1 whole-body targets on the GPU (0: skip the scene)")  # fmt: skip
    ap.add_argument("--wholebody-cpu-n", type=int, default=10_000,
                    help="of those, solved on the CPU too")  # fmt: skip
    ap.add_argument("--wholebody-only", action="store_true", help="only the whole-body scene")
    ap.add_argument("--reach-resolution", type=float, default=0.05,
                    help="reachability map voxel edge [m] (0: skip the map)")  # fmt: skip
    ap.add_argument("--reach-orientations", type=int, default=50, help="orientations per voxel")
    ap.add_argument("--reach-restarts", type=int, default=None, help="default: the map's")
    ap.add_argument("--reach-cpu", choices=("full", "slab", "none"), default="full",
                    help="the CPU map for the agreement: whole, one plane, or none")  # fmt: skip
    ap.add_argument("--reach-only", action="store_true", help="only the reachability map")
    ap.add_argument("--compile-only", action="store_true", help="PTX and ptxas report, no GPU")
    ap.add_argument("--methods", default="dls,collision,wholebody",
                    help="IK kernels: dls,transpose,ccd,collision,wholebody")  # fmt: skip
    ap.add_argument("--ptx-dir", type=Path, default=None, help="keep --compile-only's PTX here")
    ap.add_argument("--json", type=Path, default=None, help="write the numbers here")
    ap.add_argument("--check-registers", type=int, default=None,
                    help="fail unless ik_dls fits in N registers, no spills")  # fmt: skip
    ap.add_argument("--max-registers", type=int, default=None,
                    help="IK kernels' register cap (KINETREE_GPU_MAX_REGISTERS)")  # fmt: skip
    a = ap.parse_args()
    if a.max_registers is not None:
        os.environ["KINETREE_GPU_MAX_REGISTERS"] = str(a.max_registers)
    if a.compile_only:
        report = compile_only(tuple(a.methods.split(",")), a.ptx_dir)
        if a.json:
            a.json.write_text(json.dumps(report, indent=1))
        if a.check_registers is not None:
            sys.exit(check_registers(report, a.check_registers))
        return
    reach = (a.reach_resolution, a.reach_orientations, a.reach_restarts, a.repeats, a.reach_cpu)
    if a.reach_only:
        res = bench_reach(*reach)
        print(json.dumps(res), flush=True)
        print("\n".join(_reach_rows(res)))
        if a.json:
            a.json.write_text(json.dumps({"reach": res}, indent=1))
        return
    if a.collision_only or a.wholebody_only:
        if a.collision_only:
            name, needs, rows = "collision", "example-robot-data and coal", _collision_rows
            res = bench_collision(a.collision_n or 150, a.repeats)
        else:
            name, needs, rows = "wholebody", "example-robot-data", _wholebody_rows
            res = bench_wholebody(a.wholebody_n or 100_000, a.wholebody_cpu_n, a.repeats)
        if res is None:
            print(f"{name} scene skipped: needs {needs}")
            return
        print(json.dumps(res), flush=True)
        print("\n".join(rows(res)))
        if a.json:
            a.json.write_text(json.dumps({name: res}, indent=1))
        return
    if a.quick:
        a.n, a.pk_n, a.cpu_n, a.repeats = 100_000, 10_000, 10_000, 5
        a.wholebody_n, a.wholebody_cpu_n = min(a.wholebody_n, 20_000), min(a.wholebody_cpu_n, 2_000)
    gpu = bench_gpu(a.n, a.repeats)
    print(json.dumps(gpu), flush=True)
    if a.collision_n:
        coll = bench_collision(a.collision_n, a.repeats)
        if coll is None:
            print("collision scene skipped: needs example-robot-data and coal", flush=True)
        else:
            gpu.update(coll)
            print(json.dumps(coll), flush=True)
    if a.wholebody_n:
        wb = bench_wholebody(a.wholebody_n, a.wholebody_cpu_n, a.repeats)
        if wb is None:
            print("wholebody scene skipped: needs example-robot-data", flush=True)
        else:
            gpu.update(wb)
            print(json.dumps(wb), flush=True)
    if a.reach_resolution:
        rm = bench_reach(*reach)
        gpu.update(rm)
        print(json.dumps(rm), flush=True)
    pk = None
    if not a.no_pk:
        try:
            pk = bench_pytorch_kinematics(a.pk_n)
            print(json.dumps(pk), flush=True)
        except ImportError as exc:
            print(f"pytorch_kinematics skipped: {exc}", flush=True)
    cpu = [] if a.no_cpu else bench_cpu_scaling(a.cpu_n, tuple(map(int, a.threads.split(","))))
    table = _table(gpu, pk, cpu)
    print(table)
    if a.json:
        a.json.write_text(json.dumps({"gpu": gpu, "pk": pk, "cpu": cpu, "table": table}, indent=1))


if __name__ == "__main__":
    main()
