"""The built-in humanoid reaches a low point in front of it with more and more of its body.

Presets name sets of joints (``right_arm``, ``right_arm+spine``, ``above_hips``);
``rest="neutral"`` pulls the joints the task leaves free toward the rest pose, so
the body stays natural instead of twisting. Writes ``out/03_humanoid_reach.png``
in the folder it is run from (needs matplotlib: the ``viz`` extra).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import kinetree
from kinetree import Position

OUT = Path.cwd() / "out"  # beside the caller: the folder the script is run from


def main() -> None:
    human = kinetree.load("humanoid")
    q_rest = human.neutral()
    print(f"{human.name}: {human.dof} DoF; presets:")
    for preset, joints in human.presets.items():
        print(f"  {preset:<16} {int(human.active_mask(preset).sum()):>2} DoF  {', '.join(joints)}")

    p_chest = human.fk(q_rest, "chest")[:3, 3]
    p_goal = p_chest + np.array([0.8, -0.2, -0.5])  # [m] low, in front, to the right
    print(f"\nright hand to {np.round(p_goal, 3)} m:")
    qs, titles = [], []
    for preset in ("right_arm", "right_arm+spine", "above_hips"):
        r = human.ik(Position(p_goal), "hand_r", active=preset, rest="neutral", seed=0)
        moved = np.linalg.norm(r.q - q_rest)
        print(f"  {preset:<16} success={r.success!s:<5} error={1e3 * r.position_error[0]:7.2f} mm"
              f"  |q - q_rest| = {moved:.3f}")  # fmt: skip
        qs.append(r.q)
        titles.append(preset)

    # Without the rest pose the redundant joints go wherever the solver leaves them.
    free = human.ik(Position(p_goal), "hand_r", active="above_hips", seed=0)
    print(f"  above_hips without rest: |q - q_rest| = {np.linalg.norm(free.q - q_rest):.3f}")

    try:
        from kinetree import viz
    except ImportError:
        print("matplotlib is not installed: no picture (pip install 'kinetree[viz]')")
        return
    fig = viz.side_by_side(human, qs, titles, targets=[[p_goal]] * len(qs), plane="xz",
                           suptitle="Reaching with more and more of the body")  # fmt: skip
    path = viz.save_figure(fig, OUT / "03_humanoid_reach.png")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
