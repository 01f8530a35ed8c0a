"""Pose a motion-capture skeleton from a few points, the seeds' central scene.

Every 25th frame of the bundled CMU walk (subject 12, never used to train the prior) is
solved from the neutral pose, given only the pelvis pose and the positions of the head
and both hands (and, in the six-point setting, both feet) taken from the frame itself.
The default solver meets those targets exactly; ``rest="neutral"`` spends the freedom
they leave on the rest pose, ``prior="human"`` on the pose a learned human prior predicts.
Printed: frames solved (checked here by FK) and the mean distance of every body-part joint
from where the capture had it, in % of the body's height.
"""

from __future__ import annotations

import numpy as np

import kinetree
from kinetree import Pose, Position
from kinetree.io.body_parts import find_body_parts


def main() -> None:
    clip = kinetree.read_bvh(kinetree.data.path("cmu_walk"))
    m = clip.model
    parts = find_body_parts(m)
    joints = list(parts.values())
    rest = np.array([m.fk(m.neutral(), f)[:3, 3] for f in joints])
    height = float(np.ptp(rest, axis=0).max())
    frames = range(0, clip.n_frames, 25)
    print(f"{m.name}: {m.dof} DoF, {len(joints)} body parts, {len(frames)} frames")
    for setting, roles in (("six", ("head", "wrist_l", "wrist_r", "ankle_l", "ankle_r")),
                           ("four", ("head", "wrist_l", "wrist_r"))):  # fmt: skip
        for label, options in (("rest", {"rest": "neutral"}), ("prior", {"prior": "human"})):
            solved, errors = 0, []
            for k in frames:
                q = clip.q[k]
                targets: dict = {parts["pelvis"]: Pose(m.fk(q, parts["pelvis"]))}
                targets |= {parts[r]: Position(m.fk(q, parts[r])[:3, 3]) for r in roles}
                # No wall-clock budget, so a busy machine gives the same answers.
                result = m.ik(targets, time_budget=None, **options)
                met = all(
                    np.linalg.norm(m.fk(result.q, f)[:3, 3] - m.fk(q, f)[:3, 3]) <= 1e-5
                    for f in targets
                )
                solved += bool(result.success and met)
                err = [np.linalg.norm(m.fk(result.q, f)[:3, 3] - m.fk(q, f)[:3, 3]) for f in joints]
                errors.append(np.mean(err) / height)
            print(f"  {setting}-point, {label:<5}: {solved}/{len(frames)} frames solved, "
                  f"per-joint error {100 * np.mean(errors):.2f} % of height")  # fmt: skip


if __name__ == "__main__":
    main()
