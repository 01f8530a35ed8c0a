"""Load a URDF, compute forward kinematics, solve inverse kinematics, check by FK.

The URDF is the Panda that ships inside the package (``kinetree/models/data``),
found through ``importlib.resources`` so the script runs from any folder. Writes
``out/01_solution.json`` in the folder it is run from.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import numpy as np

import kinetree
from kinetree.spatial import pose_error, rpy_to_matrix, translation

OUT = Path.cwd() / "out"  # beside the caller: the folder the script is run from


def main() -> None:
    urdf = resources.files("kinetree.models") / "data" / "panda.urdf"
    with resources.as_file(urdf) as path:
        robot = kinetree.load(path)
    print(f"{robot.name}: {robot.dof} joints ({', '.join(robot.joint_names)})")
    print(f"end effector: {robot.end_effectors[0]}, units: {robot.units}")

    # Forward kinematics at a bent-elbow configuration [rad].
    q_start = np.array([0.0, -0.6, 0.0, -2.2, 0.0, 1.6, 0.8])
    T_world_flange = robot.fk(q_start)
    print("flange position at q_start [m]:", np.round(T_world_flange[:3, 3], 4))

    # A target 10 cm further forward and 5 cm lower, tilted 20 degrees about x.
    T_target = translation([0.10, 0.0, -0.05]) @ T_world_flange
    T_target[:3, :3] = rpy_to_matrix([np.radians(20), 0.0, 0.0]) @ T_target[:3, :3]

    result = robot.ik(T_target, q0=q_start, seed=0)
    print(result)

    # Check the answer independently: FK of the solution against the target.
    err = pose_error(T_target, robot.fk(result.q))
    pos_err_m, rot_err_rad = float(np.linalg.norm(err[:3])), float(np.linalg.norm(err[3:]))
    lo, hi = robot.limits.T
    within_limits = bool(np.all((lo <= result.q) & (result.q <= hi)))
    print(f"FK check: position error {pos_err_m:.2e} m, rotation error {rot_err_rad:.2e} rad, "
          f"within limits: {within_limits}")  # fmt: skip
    if not (result.success and pos_err_m < 1e-6 and rot_err_rad < 1e-6 and within_limits):
        raise SystemExit("the IK solution does not reach the target")

    OUT.mkdir(exist_ok=True)
    path_out = OUT / "01_solution.json"
    path_out.write_text(
        json.dumps(
            {"joint_names": list(robot.joint_names), "q": result.q.tolist(),
             "target": T_target.tolist(), "position_error_m": pos_err_m,
             "rotation_error_rad": rot_err_rad},
            indent=2,
        )
    )  # fmt: skip
    print(f"wrote {path_out}")


if __name__ == "__main__":
    main()
