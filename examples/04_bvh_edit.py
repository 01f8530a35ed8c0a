"""Edit a motion-capture clip: raise the right hand of the bundled CMU walk, write BVH.

The walk ships with the package (``kinetree.data.path("cmu_walk")``). IK moves
only the right arm (``RightArm``, ``RightForeArm``) on every frame, warm-started
from the frame before, so the rest of the body keeps the original motion.
Lengths are the file's (the CMU skeleton's units), Y is up. Writes
``out/04_walk_hand_raised.bvh`` in the folder it is run from.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import kinetree
from kinetree import anim, data

OUT = Path.cwd() / "out"  # beside the caller: the folder the script is run from
LIFT = np.array([0.0, 2.0, 0.0])  # [file units] up


def main() -> None:
    clip = kinetree.read_bvh(data.path("cmu_walk"))
    clip = clip.slice(0, int(2 * clip.fps))  # the first two seconds
    print(f"{clip.source}: {clip.n_frames} frames at {clip.fps:.0f} fps, {clip.model.dof} channels")

    p_hand = clip.model.fk(clip.q, "RightHand")[:, :3, 3]  # (n_frames, 3)
    motion = anim.edit_by_targets(
        clip, {"RightHand": p_hand + LIFT}, active=["RightArm", "RightForeArm"]
    )
    ok = np.asarray(motion.metadata["success"])
    print(f"{int(ok.sum())}/{ok.size} frames on target")

    OUT.mkdir(exist_ok=True)
    path = OUT / "04_walk_hand_raised.bvh"
    kinetree.write_bvh(path, motion.to_clip())

    # Read the file back and measure what changed.
    edited = kinetree.read_bvh(path)
    names = edited.joint_names
    before, after = clip.joint_positions(), edited.joint_positions()
    hand = names.index("RightHand")
    lift = after[:, hand] - before[:, hand]
    print(f"right hand moved by {np.round(lift.mean(axis=0), 4)} on average (asked {LIFT})")
    left = names.index("LeftHand")
    print(f"left hand moved by at most {np.abs(after[:, left] - before[:, left]).max():.1e}")
    print(f"wrote {path}")
    if not ok.all() or np.abs(lift - LIFT).max() > 1e-3:
        raise SystemExit("the edit missed its target")


if __name__ == "__main__":
    main()
