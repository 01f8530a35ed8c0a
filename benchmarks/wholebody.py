"""Whole-body IK beside placo: a floating base and four 6D targets (both hands, both feet).

    python benchmarks/wholebody.py [--robots g1 talos talos-full] [--n 200] [--placo-python PATH]
        [--targets random|easy] [--seed 0] [--scale 0.2]

Robots: example-robot-data's G1 (29 DoF) and Talos (reduced), each with a free-flying
base. Targets: the hands' and feet's poses at uniform random configurations within the
joint limits (the base at a random pose within 0.2 m / 0.5 rad of the origin), every
solve from the neutral pose, tolerance 1e-6 m / 1e-6 rad. Both solvers get the same
targets, alternated target by target in one run (kinetree here, placo in a worker
process of its own venv, since placo pins its own Pinocchio: ``make bench-wholebody``
makes it); each times only its own solve. One forward kinematics judges both: kinetree's
FK of each answer (placo's joint values and base pose mapped by name).

placo: ``KinematicsSolver`` with one soft frame task per effector (weights 1, 1),
``solve(True)`` repeated until every effector is within the tolerance by placo's own
kinematics, at most ``--placo-iter`` steps; its time counts ``solve`` and
``update_kinematics`` only (the convergence check in Python is left out, in placo's
favour).

``--targets easy``: the targets a peer finds easy (a few iterations from the standing pose):
joint values within ``--scale`` rad of the neutral (standing) pose, clipped to the limits,
the base within ``--scale`` / 2 m and ``--scale`` rad of the origin; ``--seed`` draws an
independent set. ``talos-full`` is Talos from its full URDF (``talos_full_v2.urdf``, 38 DoF
with the base).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

import kinetree  # noqa: E402
from kinetree import Pose  # noqa: E402
from kinetree.anim.retarget.robots import load_robot  # noqa: E402
from kinetree.io.robot_packages import ROBOT_FILES, example_robot_data  # noqa: E402

TOL = 1e-6

# The placo side, run with the placo venv's python: reads one JSON line per request.
WORKER = r"""
import json, sys, time
import numpy as np
import placo

def main():
    init = json.loads(sys.stdin.readline())
    robot = placo.RobotWrapper(init["urdf"], placo.Flags.ignore_collisions)
    frames, tol, max_iter = init["frames"], init["tol"], init["max_iter"]
    joints = list(robot.joint_names())
    q_neutral = robot.state.q.copy()
    print(json.dumps({"joints": joints}), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        robot.state.q = q_neutral.copy()
        robot.update_kinematics()
        solver = placo.KinematicsSolver(robot)
        tasks = []
        for f, T in zip(frames, req["T"]):
            t = solver.add_frame_task(f, np.array(T))
            t.configure(f, "soft", 1.0, 1.0)
            tasks.append((f, np.array(T)))
        dt = 0.0
        it = 0
        while it < max_iter:
            t0 = time.perf_counter()
            solver.solve(True)
            robot.update_kinematics()
            dt += time.perf_counter() - t0
            it += 1
            err = 0.0
            for f, T in tasks:
                M = robot.get_T_world_frame(f)
                err = max(err, np.linalg.norm(M[:3, 3] - T[:3, 3]))
                R = M[:3, :3].T @ T[:3, :3]
                err = max(err, np.arccos(np.clip((np.trace(R) - 1) / 2, -1, 1)))
            if err <= tol:
                break
        q = robot.state.q
        out = {"time": dt, "iters": it, "base": q[:7].tolist(),
               "joints": {j: float(robot.get_joint(j)) for j in joints}}
        print(json.dumps(out), flush=True)

main()
"""


class Placo:
    """The placo worker process."""

    def __init__(self, python: str, urdf: Path, frames: list[str], max_iter: int) -> None:
        self.p = subprocess.Popen(
            [python, "-c", WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        self.ask({"urdf": str(urdf), "frames": frames, "tol": TOL, "max_iter": max_iter})

    def ask(self, req: dict) -> dict:
        assert self.p.stdin is not None and self.p.stdout is not None
        self.p.stdin.write(json.dumps(req) + "\n")
        self.p.stdin.flush()
        return json.loads(self.p.stdout.readline())

    def close(self) -> None:
        if self.p.stdin is not None:
            self.p.stdin.close()
        self.p.wait(timeout=10)


def geometry_free(urdf: Path, out: Path) -> Path:
    """A copy of ``urdf`` without visual and collision elements (placo resolves no
    ``package://`` mesh paths; the kinematics are the same)."""
    import xml.etree.ElementTree as ET

    tree = ET.parse(urdf)
    for link in tree.getroot().iter("link"):
        for tag in ("visual", "collision"):
            for el in link.findall(tag):
                link.remove(el)
    path = out / urdf.name
    tree.write(path)
    return path


def placo_q(m: kinetree.Model, answer: dict) -> np.ndarray:
    """kinetree's q from placo's base (x y z qx qy qz qw) and joint values by name."""
    q = m.neutral()
    b = answer["base"]
    sl = m.q_slice("root_joint")
    q[sl] = [b[0], b[1], b[2], b[6], b[3], b[4], b[5]]
    for name, v in answer["joints"].items():
        if name in m.joint_names:
            q[m.joint_names.index(name)] = v
    return q


def error(m: kinetree.Model, q: np.ndarray, targets: dict) -> float:
    e = 0.0
    for f, t in targets.items():
        M, T = m.fk(q, f), np.asarray(t.T)
        e = max(e, float(np.linalg.norm(M[:3, 3] - T[:3, 3])))
        R = M[:3, :3].T @ T[:3, :3]
        e = max(e, float(np.arccos(np.clip((np.trace(R) - 1) / 2, -1, 1))))
    return e


#: Robots this benchmark knows beyond ROBOT_FILES: name -> file under example-robot-data.
EXTRA_FILES = {"talos-full": "talos_data/robots/talos_full_v2.urdf"}


def robot_file(name: str) -> Path:
    root = example_robot_data()
    assert root is not None
    return root / EXTRA_FILES.get(name, ROBOT_FILES.get(name, ""))


def targets_for(
    m: kinetree.Model, n: int, seed: int, kind: str = "random", scale: float = 0.2
) -> list[dict]:
    """``n`` target sets (the first four end effectors' poses at drawn configurations)."""
    from scipy.spatial.transform import Rotation

    rng = np.random.default_rng(seed)
    sl = m.q_slice("root_joint")
    if kind == "easy":
        lo, hi = m.limits[:, 0], m.limits[:, 1]
        qs = np.repeat(m.neutral()[None], n, axis=0)
        moving = np.ones(m.nq, bool)
        moving[sl] = False
        qs[:, moving] += rng.uniform(-scale, scale, (n, int(moving.sum())))
        qs[:, moving] = np.clip(qs[:, moving], lo[moving], hi[moving])
        base_pos, base_ang = scale / 2, scale
    else:
        qs = m.random_configuration(n, rng)
        base_pos, base_ang = 0.2, 0.5
    out = []
    for q in qs:
        ang = rng.uniform(-base_ang, base_ang, 3)
        w = Rotation.from_rotvec(ang).as_quat(scalar_first=True)
        q[sl] = [*(m.neutral()[sl][:3] + rng.uniform(-base_pos, base_pos, 3)), *w]
        out.append({f: Pose(m.fk(q, f)) for f in m.end_effectors[:4]})
    return out


def run(
    name: str, n: int, python: str | None, max_iter: int, kind: str, seed: int, scale: float
) -> dict:
    m = load_robot(str(robot_file(name))) if name in EXTRA_FILES else load_robot(name)
    frames = list(m.end_effectors[:4])
    targets = targets_for(m, n, seed, kind, scale)
    pl = None
    if python:
        import tempfile

        urdf = geometry_free(robot_file(name), Path(tempfile.mkdtemp()))
        pl = Placo(python, urdf, frames, max_iter)
    for t in targets[:5]:  # warm both
        m.ik(t, tol=TOL)
        if pl:
            pl.ask({"T": [np.asarray(t[f].T).tolist() for f in frames]})
    kt, ks, pt, ps, both, its, restarted, pits = [], 0, [], 0, [], [], 0, []
    for t in targets:
        t0 = time.perf_counter()
        r = m.ik(t, tol=TOL)
        kt.append(time.perf_counter() - t0)
        its.append(int(r.iterations))
        restarted += int(r.restarts) > 0
        k_ok = r.success and error(m, r.q, t) <= TOL * (1 + 1e-9)
        ks += k_ok
        if pl:
            a = pl.ask({"T": [np.asarray(t[f].T).tolist() for f in frames]})
            pt.append(a["time"])
            pits.append(a["iters"])
            p_ok = error(m, placo_q(m, a), t) <= TOL * (1 + 1e-6)
            ps += p_ok
            if p_ok and k_ok:
                both.append((kt[-1], a["time"]))
    if pl:
        pl.close()
    row = {
        "robot": name, "nv": m.nv, "n": n, "targets": kind, "seed": seed, "scale": scale,
        "kinetree_solved": ks / n, "kinetree_median_us": 1e6 * float(np.median(kt)),
        "kinetree_mean_us": 1e6 * float(np.mean(kt)),
        "kinetree_iterations_median": float(np.median(its)),
        "kinetree_iterations_mean": float(np.mean(its)), "kinetree_restarted": restarted / n,
    }  # fmt: skip
    if pl:
        row.update(
            placo_solved=ps / n, placo_median_us=1e6 * float(np.median(pt)),
            placo_mean_us=1e6 * float(np.mean(pt)),
            placo_iterations_median=float(np.median(pits)),
            ratio_median=float(np.median(pt) / np.median(kt)),
        )  # fmt: skip
        if both:
            b = np.array(both)
            row.update(
                both_solved=len(both) / n,
                ratio_median_both_solved=float(np.median(b[:, 1]) / np.median(b[:, 0])),
                ratio_mean_both_solved=float(np.mean(b[:, 1]) / np.mean(b[:, 0])),
            )
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--robots", nargs="+", default=["g1", "talos"])
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--placo-python", default=None, help="python of a venv with placo")
    ap.add_argument("--placo-iter", type=int, default=200)
    ap.add_argument("--targets", choices=["random", "easy"], default="random")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--scale", type=float, default=0.2, help="easy targets: rad (and m / 2)")
    a = ap.parse_args()
    if example_robot_data() is None:
        raise SystemExit("needs example-robot-data (pip install example-robot-data)")
    for name in a.robots:
        row = run(name, a.n, a.placo_python, a.placo_iter, a.targets, a.seed, a.scale)
        print(json.dumps(row))


if __name__ == "__main__":
    main()
