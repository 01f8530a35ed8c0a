"""A character with a body, from file to robot: FBX in, IK with a human prior, glTF and USD out.

Kenney's human character (an FBX export from Maya, shipped in tests/data/fbx: a skinned
mesh on 45 joints under a node scaled by 100 in a centimetre file) is read with its take.
A tracker's view of that take (the pelvis pose, the head, hands and feet as points) drives
the character through ``model.ik(..., prior="human")``, which fills in every joint the
points leave free with the pose a learned human prior predicts. The tracked motion is
written back as glTF (skeleton, animation and the skinned mesh) and drawn as a GIF with its
mesh; then it is retargeted to a Unitree G1 (example-robot-data; the built-in humanoid
where that is not installed) and the robot's motion written as USD.

Run from anywhere: ``python examples/06_character.py`` (needs the ``fbx`` and ``formats``
extras, and matplotlib for the GIF); files go to ./out/.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

import kinetree
from kinetree import Pose, Position
from kinetree.anim import Motion
from kinetree.io.body_parts import find_body_parts
from kinetree.io.fbx import FBXWarning

CHARACTER = (
    Path(__file__).resolve().parents[1] / "tests/data/fbx/maya_kenney_character_7700_binary.fbx"
)
TRACKED = ("head", "wrist_l", "wrist_r", "ankle_l", "ankle_r")


def main() -> None:
    out = Path("out")
    out.mkdir(exist_ok=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", FBXWarning)
        clip = kinetree.read_clip(CHARACTER, fps=24)  # the take, sampled at 24 frames/s
    m = clip.model
    (skin,) = m.skins
    print(f"{clip.name!r}: {len(clip.joint_names)} joints, {clip.n_frames} frames, mesh "
          f"{skin.n_vertices} vertices / {skin.n_faces} triangles "
          f"({len(caught)} warnings: the rig's controls scale)")  # fmt: skip

    # Track: from the neutral pose, each frame from the last, the prior filling the rest.
    # The rig's controls carry the hips (their translations are animated): every joint
    # may move, not only the rotations a character's model moves by default.
    parts = find_body_parts(m)
    every = tuple(m.joint_names)
    q = m.neutral()
    tracked, worst, solved = [], 0.0, 0
    for k in range(clip.n_frames):
        seen = clip.q[k]
        targets: dict = {parts["pelvis"]: Pose(m.fk(seen, parts["pelvis"]))}
        targets |= {parts[r]: Position(m.fk(seen, parts[r])[:3, 3]) for r in TRACKED}
        result = m.ik(targets, q0=q, prior="human", time_budget=None, active=every)
        q = result.q
        solved += bool(result.success)
        tracked.append(q)
        worst = max(worst, *(np.linalg.norm(m.fk(q, f)[:3, 3] - m.fk(seen, f)[:3, 3])
                             for f in targets))  # fmt: skip
    motion = Motion(model=m, q=np.array(tracked), fps=clip.fps, name="tracked")
    print(f"tracked: {solved}/{motion.n_frames} frames solved, the farthest target "
          f"{1e3 * worst:.2f} mm off")  # fmt: skip

    kinetree.write_clip(motion, out / "06_character.glb")  # skeleton, animation, mesh
    back = kinetree.read_clip(out / "06_character.glb")
    print(f"glTF written and read back: {len(back.model.skins)} skinned mesh, "
          f"{back.n_frames} frames")  # fmt: skip

    try:
        from kinetree import viz

        viz.animate(m, motion.q, out / "06_character.gif", fps=12, dpi=50, title="tracked")
    except kinetree.KinetreeError as exc:  # matplotlib missing: say so and go on
        print(f"no GIF: {exc}")

    try:
        robot = kinetree.anim.load_robot("g1")
    except kinetree.KinetreeError:
        robot = kinetree.load("humanoid").with_floating_base()
        print("example-robot-data is not installed: retargeting to the built-in humanoid")
    on_robot = kinetree.anim.retarget_robot(motion, robot, max_joint_speed=None)
    kinetree.write_clip(on_robot, out / "06_robot.usda")
    within = on_robot.metadata["quality"]["within_limits"]
    print(f"retargeted to {robot.name}: {on_robot.n_frames} frames, within limits: {within}")


if __name__ == "__main__":
    main()
