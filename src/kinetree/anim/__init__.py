"""Motion as sequences of configurations: reach animations, keyframe interpolation,
IK retargeting of clips.

* :class:`Motion`: a model's configurations ``(n_frames, dof)`` at a frame rate,
  with optional per-frame target points for drawing; BVH round trip through
  :meth:`Motion.from_clip` and :func:`to_clip`.
* :func:`reach`: seed 000's step-by-step reach, one IK iteration per frame.
* :func:`interpolate`: keyframes joined by slerp (ball joints) and linear
  interpolation (everything else).
* :func:`retarget`: IK on every frame of a clip, warm-started, with pinned frames,
  a ground height and a bound on the per-frame joint change (the clip's own skeleton).
* :func:`retarget_robot` (``kinetree.retarget``): a human clip onto a humanoid robot
  with a floating base: ready-made and guessed joint maps (:class:`RetargetMap`),
  unit and up-axis conversion, per-segment scaling, planted feet
  (:func:`detect_contacts`), joint and speed limits, quality numbers
  (:func:`retarget_quality`); :func:`free_base` and :func:`load_robot` for the robot.

The numerical work is done by :meth:`kinetree.Model.ik` and ``Model.fk``; this
package only orchestrates. Draw a motion with
``kinetree.viz.animate(m.model, m.q, path, fps=round(m.fps), targets=m.targets)``.
"""

from __future__ import annotations

from .contacts import contact_intervals, detect_contacts
from .interpolate import EASES, interpolate
from .motion import Motion, to_clip
from .reach import reach
from .retarget import retarget
from .retarget_maps import ROBOT_MAPS, SKELETON_MAPS, RetargetMap, guess_map, make_map
from .retarget_quality import rest_overlaps, retarget_quality, self_collision_frames
from .robot_retarget import retarget_robot
from .robots import free_base, load_robot
from .rotations import BallJoint, ball_joints, decompose, decompose_all, sequence_matrix, slerp

__all__ = [
    "EASES",
    "ROBOT_MAPS",
    "SKELETON_MAPS",
    "BallJoint",
    "Motion",
    "RetargetMap",
    "ball_joints",
    "contact_intervals",
    "decompose",
    "decompose_all",
    "detect_contacts",
    "free_base",
    "guess_map",
    "interpolate",
    "load_robot",
    "make_map",
    "reach",
    "rest_overlaps",
    "retarget",
    "retarget_quality",
    "retarget_robot",
    "self_collision_frames",
    "sequence_matrix",
    "slerp",
    "to_clip",
]
