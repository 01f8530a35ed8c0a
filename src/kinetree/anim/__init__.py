"""Motion as sequences of configurations: reach animations, keyframe interpolation,
IK retargeting of clips.

* :class:`Motion`: a model's configurations ``(n_frames, dof)`` at a frame rate,
  with optional per-frame target points for drawing; BVH round trip through
  :meth:`Motion.from_clip` and :func:`to_clip`.
* :func:`reach`: seed 000's step-by-step reach, one IK iteration per frame.
* :func:`interpolate`: keyframes joined by slerp (ball joints) and linear
  interpolation (everything else).
* :func:`retarget`: IK on every frame of a clip, warm-started, with pinned frames,
  a ground height and a bound on the per-frame joint change.

The numerical work is done by :meth:`kinetree.Model.ik` and ``Model.fk``; this
package only orchestrates. Draw a motion with
``kinetree.viz.animate(m.model, m.q, path, fps=round(m.fps), targets=m.targets)``.
"""

from __future__ import annotations

from .interpolate import EASES, interpolate
from .motion import Motion, to_clip
from .reach import reach
from .retarget import retarget
from .rotations import BallJoint, ball_joints, decompose, decompose_all, sequence_matrix, slerp

__all__ = [
    "EASES",
    "BallJoint",
    "Motion",
    "ball_joints",
    "decompose",
    "decompose_all",
    "interpolate",
    "reach",
    "retarget",
    "sequence_matrix",
    "slerp",
    "to_clip",
]
