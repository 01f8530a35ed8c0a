"""The main demo (``make demo``): forward kinematics of every built-in model, a picture
of each, an arm reaching a target step by step (seed 000's first figure), the
humanoid's three reach cases side by side (seed 000, section 3.2), a BVH walk
played back, the Panda with its meshes (when example-robot-data is installed) and a
convergence plot of the IK methods. Everything lands in ``out/`` under the folder it
is run from.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

import kinetree
from kinetree import Position, anim, viz

OUT = Path.cwd() / "out"  # beside the caller (``make demo``: the checkout's out/)


def fk_of_builtins() -> None:
    print(f"{'model':<12} {'dof':>3}  {'end effector':<12} position at the neutral pose [m]")
    for name in kinetree.models.available():
        model = kinetree.load(name)
        q = model.neutral()
        T = model.fk(q)
        x, y, z = T[:3, 3]
        ee = model.end_effectors[0]
        print(f"{name:<12} {model.dof:>3}  {ee:<12} ({x:+.4f}, {y:+.4f}, {z:+.4f})")
        fig = viz.draw(model, q, frames=[model.end_effectors[0]]).figure
        fig.suptitle(f"{name}: neutral pose")
        viz.save_figure(fig, OUT / "models" / f"{name}.png")


def arm_reach() -> None:
    """Seed 000's first figure: the arm moves toward the target one pinv step at a time."""
    model = kinetree.load("planar3r")
    target = np.array([0.9, 1.3, 0.0])
    # Seed 001's normalised step: the tip moves 3 cm per frame along the error direction.
    motion = anim.reach(model, target, method="pinv", step=1.0, normalized_step=0.03)
    print(f"planar3r reach: {motion.metadata['result'].message}; {len(motion)} frames")
    viz.animate(model, motion.q, OUT / "reach_arm.gif", fps=20, targets=[target],
                trail="tip", title="pseudoinverse steps toward the target")  # fmt: skip


def humanoid_cases() -> None:
    """Seed 000 section 3.2: arm only, arm + upper body, everything above the hips."""
    model = kinetree.load("humanoid")
    q0 = model.neutral()
    chest = model.fk(q0, "chest")[:3, 3]
    target = chest + np.array([0.8, -0.2, -0.5])  # low, in front: picking something up
    qs, titles = [], []
    for preset in ("right_arm", "right_arm+spine", "above_hips"):
        r = model.ik(Position(target), "hand_r", active=preset, rest="neutral")
        err_mm = 1e3 * float(r.position_error[0])
        print(f"humanoid {preset:<16} success={r.success!s:<5} error={err_mm:.3g} mm")
        qs.append(r.q)
        titles.append(f"{preset}: {'reached' if r.success else f'{err_mm:.0f} mm short'}")
    suptitle = "Reaching with more and more of the body (seed 000, 3.2)"
    fig = viz.side_by_side(model, qs, titles, targets=[[target]] * 3, suptitle=suptitle, plane="xz")
    viz.save_figure(fig, OUT / "humanoid_reach_cases.png")


def bvh_playback() -> None:
    clip = kinetree.read_bvh(kinetree.data.path("cmu_walk"), up="z")
    step = max(1, round(clip.fps / 24))
    qs = clip.q[: int(4 * clip.fps) : step]
    print(f"BVH: {clip.n_frames} frames at {clip.fps:.0f} fps, {clip.model.dof} DoF; "
          f"rendering {len(qs)} frames")  # fmt: skip
    viz.animate(clip.model, qs, OUT / "bvh_walk.gif", fps=24, title="CMU 12_01 walk (BVH)")


def panda_with_meshes() -> None:
    """The Panda reaching a pose, drawn with its meshes when example-robot-data is
    installed (``pip install 'kinetree[meshes]'``), else as a stick figure."""
    model = kinetree.load("panda")
    goal = kinetree.spatial.translation([0.1, 0.3, -0.15]) @ model.fk(model.neutral())
    r = model.ik(goal, q0=model.neutral())
    fig = viz.side_by_side(model, [model.neutral(), r.q], ["neutral pose", "IK: flange moved"],
                           targets=[None, goal], meshes=True, panel_size=4.5)  # fmt: skip
    viz.save_figure(fig, OUT / "panda_meshes.png")
    _, note = kinetree.models.with_meshes(model)
    print(f"panda_meshes.png: {'meshes' if note is None else note}")


def convergence() -> None:
    model = kinetree.load("panda")
    q_goal = np.array([0.6, -0.3, 0.4, -2.0, 0.3, 1.9, 0.2])
    T = model.fk(q_goal)
    histories = {}
    for method in ("dls", "pinv", "sdls", "transpose", "ccd"):
        r = model.ik(T, method=method, record=True, max_iter=300)
        assert r.error_history is not None
        histories[f"{method} ({r.iterations} it)"] = np.hypot(*r.error_history.T)
    fig = viz.plot_convergence(histories, title="Panda 6D pose target from the neutral pose",
                               ylabel="pose error (position m, rotation rad)")  # fmt: skip
    viz.save_figure(fig, OUT / "convergence.png")


def main() -> None:
    t0 = time.perf_counter()
    OUT.mkdir(exist_ok=True)
    fk_of_builtins()
    arm_reach()
    humanoid_cases()
    bvh_playback()
    panda_with_meshes()
    convergence()
    print(f"done in {time.perf_counter() - t0:.1f} s; pictures and animations are in {OUT}")


if __name__ == "__main__":
    main()
