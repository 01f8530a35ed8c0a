"""One-step differential IK beside mink and pink: the Panda of example-robot-data reaching
over a table past a pillar and a ball (the scene of ``benchmarks/collision.py``).

    PYTHONPATH=src /work/wt-bench/.venv/bin/python benchmarks/diffik.py [--targets 12]

Every library drives the same robot (the URDF with the fingers fixed and its visual
meshes dropped, so MuJoCo can import it; mink gets it through MuJoCo's URDF import) to
the same targets from the same start with the same tasks (a frame task on
``panda_hand``, position and orientation cost 1, a posture task of cost 1e-3), limits
(joint range, the URDF's joint speeds, ``dt`` = 10 ms) and collision margin (1 cm
from the obstacles, detection within 10 cm; every link but the base, which stands on
the table). Reported per library: the time of one step (solve and integrate; median
over all steps), the steps until the hand is within 1 mm and 0.01 rad of the target
(mean over the targets that converge within 600 steps), and the closest approach to
the obstacles along every trajectory measured on the **exact meshes** with Pinocchio and
coal (negative: a collision). kinetree keeps its spheres (which contain the meshes) 1 cm
away; mink measures MuJoCo's convex hulls of the meshes, pink coal's meshes.
Missing libraries are skipped with a note.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import kinetree
from kinetree import diffik as dk

DT = 0.01
MAX_STEPS = 600
MARGIN = 0.01
DETECTION = 0.1
POSITION_TOL = 1e-3
ROTATION_TOL = 1e-2
FRAME = "panda_hand"
ARM = tuple(f"panda_joint{i}" for i in range(1, 8))
Q_START = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])


def scene_urdf(folder: Path) -> Path | None:
    """The example-robot-data Panda, fingers fixed, visuals dropped, meshes absolute."""
    from collision import panda_paths

    paths = panda_paths()
    if paths is None:
        return None
    urdf = paths[0]
    text = urdf.read_text()
    meshes = urdf.parent.parent / "meshes"
    text = re.sub(r"<visual>.*?</visual>", "", text, flags=re.S)
    text = text.replace("package://example-robot-data/robots/panda_description/meshes",
                        str(meshes))  # fmt: skip
    text = re.sub(r'(<joint name="panda_finger_joint\d" )type="prismatic"', r'\1type="fixed"', text)
    text = re.sub(r"<mimic[^>]*/>", "", text)
    text = text.replace(
        "</robot>",
        '<mujoco><compiler fusestatic="false" discardvisual="true" strippath="false"/>'
        "</mujoco></robot>",
    )
    out = folder / "panda_scene.urdf"
    out.write_text(text)
    return out


def obstacles() -> list[Any]:
    from collision import scene

    return scene()


def targets(n: int, model: kinetree.Model) -> list[np.ndarray]:
    """``n`` hand poses over the table, hand pointing down as at the start, spread
    around the pillar and the ball (seeded)."""
    gen = np.random.default_rng(7)
    R = model.fk(np.r_[Q_START], FRAME)[:3, :3]
    out = []
    while len(out) < n:
        p = np.array([gen.uniform(0.3, 0.7), gen.uniform(-0.45, 0.45), gen.uniform(0.15, 0.45)])
        if np.hypot(p[0] - 0.45, p[1] + 0.3) < 0.15 or np.linalg.norm(p - [0.45, 0.3, 0.35]) < 0.2:
            continue  # the hand itself would sit in the pillar or the ball
        T = np.eye(4)
        T[:3, :3] = R
        T[:3, 3] = p
        out.append(T)
    return out


def _errors(T: np.ndarray, target: np.ndarray) -> tuple[float, float]:
    from scipy.spatial.transform import Rotation

    dp = float(np.linalg.norm(T[:3, 3] - target[:3, 3]))
    dr = float(np.linalg.norm(Rotation.from_matrix(T[:3, :3] @ target[:3, :3].T).as_rotvec()))
    return dp, dr


def run_kinetree(urdf: Path, goals: list[np.ndarray], solver: str) -> dict[str, Any]:
    model = kinetree.io.load_urdf(urdf)
    limit = dk.CollisionAvoidanceLimit(
        obstacles(), self_collision=False, margin=MARGIN, detection_distance=DETECTION,
        ignore=[("panda_link0", "table")],
    )  # fmt: skip
    limits = [dk.ConfigurationLimit(), dk.VelocityLimit(), limit]
    task = dk.FrameTask(FRAME, position_cost=1.0, orientation_cost=1.0)
    posture = dk.PostureTask(Q_START, cost=1e-3)

    def step(q: np.ndarray) -> np.ndarray:
        v = dk.solve_step(model, q, [task, posture], DT, limits, solver=solver)
        return model.integrate(q, v * DT)

    def fk(q: np.ndarray) -> np.ndarray:
        return model.fk(q, FRAME)

    return _drive(goals, Q_START.copy(), task.set_target, step, fk, lambda q: q)


def run_mink(urdf: Path, goals: list[np.ndarray]) -> dict[str, Any]:
    import mink
    import mujoco

    spec = mujoco.MjSpec.from_file(str(urdf))
    for ob in obstacles():
        kind, size = _mujoco_shape(ob, mujoco)
        geom = spec.worldbody.add_geom()
        geom.name, geom.type, geom.size, geom.pos = ob.name, kind, size, _pose(ob)[:3, 3]
    m = spec.compile()
    robot_geoms = [
        m.geom(i).name or i for i in range(m.ngeom)
        if m.body(m.geom_bodyid[i]).name not in ("world", "panda_link0")
    ]  # fmt: skip
    robot_geoms = [g for g in robot_geoms if g not in ("table", "pillar", "ball")]
    config = mink.Configuration(m)
    speeds = {j: _urdf_speed(urdf, j) for j in ARM}
    limits = [
        mink.ConfigurationLimit(m),
        mink.VelocityLimit(m, speeds),
        mink.CollisionAvoidanceLimit(
            m, [(robot_geoms, ["table", "pillar", "ball"])],
            minimum_distance_from_collisions=MARGIN, collision_detection_distance=DETECTION,
        ),
    ]  # fmt: skip
    task = mink.FrameTask(FRAME, "body", position_cost=1.0, orientation_cost=1.0)
    posture = mink.PostureTask(m, cost=1e-3)
    qadr = [m.joint(j).qposadr[0] for j in ARM]

    def set_target(T: np.ndarray) -> None:
        task.set_target(mink.SE3.from_matrix(T))

    def start(q: np.ndarray) -> np.ndarray:
        full = np.zeros(m.nq)
        full[qadr] = q
        return full

    def step(q: np.ndarray) -> np.ndarray:
        config.update(q)
        v = mink.solve_ik(config, [task, posture], DT, "daqp", damping=1e-12, limits=limits)
        config.integrate_inplace(v, DT)
        return config.q.copy()

    def fk(q: np.ndarray) -> np.ndarray:
        config.update(q)
        return config.get_transform_frame_to_world(FRAME, "body").as_matrix()

    posture.set_target(start(Q_START))
    return _drive(goals, start(Q_START), set_target, step, fk, lambda q: q[qadr])


def run_pink(urdf: Path, goals: list[np.ndarray]) -> dict[str, Any]:
    import pink
    import pinocchio as pin
    from pink.barriers import SelfCollisionBarrier

    model, geoms = _pinocchio_scene(urdf)
    data = model.createData()
    config = pink.Configuration(model, data, Q_START.copy(), collision_model=geoms,
                                collision_data=pin.GeometryData(geoms))  # fmt: skip
    task = pink.tasks.FrameTask(FRAME, position_cost=1.0, orientation_cost=1.0)
    posture = pink.tasks.PostureTask(cost=1e-3)
    posture.set_target(Q_START.copy())
    barrier = SelfCollisionBarrier(n_collision_pairs=len(geoms.collisionPairs), d_min=MARGIN)

    def set_target(T: np.ndarray) -> None:
        task.set_target(pin.SE3(T[:3, :3], T[:3, 3]))

    def step(q: np.ndarray) -> np.ndarray:
        config.update(q)
        v = pink.solve_ik(config, [task, posture], DT, solver="daqp", barriers=[barrier],
                          safety_break=False)  # fmt: skip
        return pin.integrate(model, q, v * DT)

    def fk(q: np.ndarray) -> np.ndarray:
        config.update(q)
        return config.get_transform_frame_to_world(FRAME).np

    return _drive(goals, Q_START.copy(), set_target, step, fk, lambda q: q)


def _pose(ob: Any) -> np.ndarray:
    if isinstance(ob, kinetree.Sphere):
        T = np.eye(4)
        T[:3, 3] = ob.center
        return T
    return np.asarray(ob.pose)


def _mujoco_shape(ob: Any, mujoco: Any) -> tuple[Any, list[float]]:
    if isinstance(ob, kinetree.Box):
        return mujoco.mjtGeom.mjGEOM_BOX, [s / 2 for s in ob.size]
    if isinstance(ob, kinetree.Cylinder):
        return mujoco.mjtGeom.mjGEOM_CYLINDER, [ob.radius, ob.length / 2, 0.0]
    return mujoco.mjtGeom.mjGEOM_SPHERE, [ob.radius, 0.0, 0.0]


def _coal_shape(ob: Any) -> Any:
    import coal

    if isinstance(ob, kinetree.Box):
        return coal.Box(*ob.size)
    if isinstance(ob, kinetree.Cylinder):
        return coal.Cylinder(ob.radius, ob.length)
    return coal.Sphere(ob.radius)


def _urdf_speed(urdf: Path, joint: str) -> float:
    text = urdf.read_text()
    block = text[text.index(f'<joint name="{joint}"') :]
    return float(re.search(r'velocity="([^"]+)"', block[: block.index("</joint>")]).group(1))


def _pinocchio_scene(urdf: Path) -> tuple[Any, Any]:
    """Pinocchio's model and a collision model with the obstacles fixed to the universe
    and one pair per (link mesh, obstacle)."""
    import pinocchio as pin

    model = pin.buildModelFromUrdf(str(urdf))
    geoms = pin.buildGeomFromUrdf(model, str(urdf), pin.GeometryType.COLLISION)
    robot = [i for i, g in enumerate(geoms.geometryObjects) if "link0" not in g.name]
    for ob in obstacles():
        T = _pose(ob)
        obj = pin.GeometryObject(ob.name, 0, 0, pin.SE3(T[:3, :3], T[:3, 3]), _coal_shape(ob))
        k = geoms.addGeometryObject(obj)
        for i in robot:
            geoms.addCollisionPair(pin.CollisionPair(i, k))
    return model, geoms


def _drive(
    goals: list[np.ndarray], q_start: np.ndarray, set_target: Callable[[np.ndarray], None],
    step: Callable[[np.ndarray], np.ndarray], fk: Callable[[np.ndarray], np.ndarray],
    arm: Callable[[np.ndarray], np.ndarray],
) -> dict[str, Any]:  # fmt: skip
    times: list[float] = []
    steps: list[int | None] = []
    paths: list[np.ndarray] = []
    for target in goals:
        set_target(target)
        q = q_start.copy()
        path = [arm(q)]
        done = None
        for k in range(MAX_STEPS):
            t0 = time.perf_counter()
            try:
                q = step(q)
            except Exception as exc:  # a library that gives up on a step: the run ends
                print(f"    step {k}: {type(exc).__name__}: {exc}", file=sys.stderr)
                break
            times.append(time.perf_counter() - t0)
            path.append(arm(q))
            dp, dr = _errors(fk(q), target)
            if dp <= POSITION_TOL and dr <= ROTATION_TOL:
                done = k + 1
                break
        steps.append(done)
        paths.append(np.array(path))
    return {"times": times, "steps": steps, "paths": paths}


def mesh_distances(urdf: Path, paths: list[np.ndarray]) -> list[float]:
    """The closest approach [m] of each trajectory to the obstacles, on the exact meshes
    (Pinocchio + coal)."""
    import pinocchio as pin

    model, geoms = _pinocchio_scene(urdf)
    data, gdata = model.createData(), pin.GeometryData(geoms)
    out = []
    for path in paths:
        best = np.inf
        for q in path:
            pin.computeDistances(model, data, geoms, gdata, q)
            best = min(best, min(r.min_distance for r in gdata.distanceResults))
        out.append(float(best))
    return out


def tracking_gif(path: Path, frames: int = 120) -> None:
    """The one-step solver tracking a target that circles through a ball: the hand
    follows while the arm keeps 2 cm from the ball (``kinetree.viz.animate``)."""
    import dataclasses

    from collision import panda_paths
    from kinetree import geometry as geo
    from kinetree.viz import animate

    paths = panda_paths()
    if paths is None:
        print("example-robot-data is not installed (pip install example-robot-data).")
        return
    model = kinetree.load(paths[0])
    centre = np.array([0.5, 0.0, 0.45])
    ball = kinetree.Sphere(radius=0.09, center=centre, name="ball")
    limits = [
        dk.ConfigurationLimit(), dk.VelocityLimit(),
        dk.CollisionAvoidanceLimit([ball], self_collision=False, margin=0.02,
                                   detection_distance=0.15),
    ]  # fmt: skip
    q = np.r_[Q_START, 0.02]
    task = dk.FrameTask(FRAME, orientation_cost=0.05)
    posture = dk.PostureTask(q, cost=0.05)
    R = model.fk(q, FRAME)[:3, :3]
    dt = 1.0 / 30.0
    qs, points = [], []
    for k in range(frames):
        angle = 2 * np.pi * k / frames
        p = centre + 0.22 * np.array([0.0, np.cos(angle), np.sin(angle)])  # past the rim
        p[0] = 0.5 - 0.05 * np.cos(angle)
        T = np.eye(4)
        T[:3, :3], T[:3, 3] = R, p
        task.set_target(T)
        for _ in range(3):  # three control steps per picture (90 Hz)
            v = dk.solve_step(model, q, [task, posture], dt / 3, limits)
            q = model.integrate(q, v * dt / 3)
        qs.append(q.copy())
        points.append([p])
    shown = geo.Sphere(radius=0.09, kind="visual",
                       origin=kinetree.spatial.translation(centre))  # fmt: skip
    picture = dataclasses.replace(
        model, geometry={**model.geometry, "panda_link0": (*model.geometry.get("panda_link0", ()),
                                                           shown)},
    )  # fmt: skip
    animate(picture, np.array(qs), path, fps=15, targets=np.array(points), trail=FRAME,
            title="solve_step: tracking around a ball (2 cm margin)", dpi=60)  # fmt: skip
    print(f"wrote {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--targets", type=int, default=12)
    parser.add_argument("--gif", type=Path, help="write the tracking animation here instead")
    args = parser.parse_args()
    if args.gif is not None:
        tracking_gif(args.gif)
        return
    with tempfile.TemporaryDirectory() as tmp:
        urdf = scene_urdf(Path(tmp))
        if urdf is None:
            print("example-robot-data is not installed (pip install example-robot-data).")
            return
        goals = targets(args.targets, kinetree.io.load_urdf(urdf, meshes=False))
        runs: dict[str, Callable[[list[np.ndarray]], dict[str, Any]]] = {
            "kinetree (solver='kinetree')": lambda g: run_kinetree(urdf, g, "kinetree"),
            "kinetree (solver='daqp')": lambda g: run_kinetree(urdf, g, "daqp"),
            "mink 1.3 (daqp)": lambda g: run_mink(urdf, g),
            "pink 4.4 (daqp)": lambda g: run_pink(urdf, g),
        }
        rows = []
        for name, run in runs.items():
            print(f"  {name} ...", file=sys.stderr)
            try:
                run(goals[:1])  # one target to compile and warm caches, then measured
                res = run(goals)
            except ImportError as exc:
                print(f"  {name}: skipped ({exc})", file=sys.stderr)
                continue
            ok = [s for s in res["steps"] if s is not None]
            d = mesh_distances(urdf, res["paths"])
            rows.append([
                name, f"{1e6 * np.median(res['times']):.0f}",
                f"{len(ok)}/{len(goals)}", f"{np.mean(ok):.0f}" if ok else "-",
                f"{sum(x < 0 for x in d)}/{len(goals)}", f"{1e3 * min(d):.1f}",
            ])  # fmt: skip
    head = ["library", "time per step [µs]", "converged", "steps (mean)",
            "trajectories colliding (meshes)", "closest approach on meshes [mm]"]  # fmt: skip
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    main()
