"""Motion as sequences of configurations: reach animations, keyframe interpolation,
editing clips by IK targets, retargeting human motion onto robots.

* :class:`Motion`: a model's configurations ``(n_frames, dof)`` at a frame rate,
  with optional per-frame target points for drawing; BVH round trip through
  :meth:`Motion.from_clip` and :func:`to_clip`; any model's motion as BVH with
  :func:`write_motion_bvh`.
* :func:`reach`: seed 000's step-by-step reach, one IK iteration per frame.
* :func:`interpolate`: keyframes joined by slerp (ball joints) and linear
  interpolation (everything else).
* :func:`edit_by_targets`: IK on every frame of a clip, warm-started, with pinned frames,
  a ground height and a bound on the per-frame joint change (the clip's own skeleton).
  Until the next release also callable as ``kinetree.anim.retarget``, deprecated.
* :func:`track` and :class:`Tracker` (:mod:`kinetree.anim.tracking`): motion from sparse
  trackers (head, hands, feet, pelvis), a whole clip offline or a live stream, every
  target met on every frame and smooth between them; :mod:`kinetree.anim.anatomy`:
  human joint ranges for skeletons read from files. :class:`Teleop`: a person's head and
  hands (VR, or a tracked motion) driving a humanoid robot frame by frame.
* :mod:`kinetree.anim.retarget`: :func:`retarget_robot` (``kinetree.retarget``), a human
  clip onto a humanoid robot with a floating base: ready-made and guessed joint maps
  (:class:`RetargetMap`), unit and up-axis conversion, per-segment scaling, planted feet
  (:func:`detect_contacts`), joint and speed limits, quality numbers
  (:func:`retarget_quality`); :func:`free_base` and :func:`load_robot` for the robot.

The numerical work is done by :meth:`kinetree.Model.ik` and ``Model.fk``; this
package only orchestrates. Draw a motion with
``kinetree.viz.animate(m.model, m.q, path, fps=round(m.fps), targets=m.targets)``.
"""

from __future__ import annotations

from .. import _deprecated
from . import anatomy as anatomy
from . import retarget as retarget
from .bvh_export import motion_to_bvh, write_motion_bvh
from .contacts import contact_intervals, detect_contacts
from .edit import edit_by_targets
from .interpolate import EASES, interpolate
from .motion import Motion, to_clip
from .reach import reach
from .retarget import (
    ROBOT_MAPS,
    SKELETON_MAPS,
    RetargetMap,
    free_base,
    guess_map,
    load_robot,
    make_map,
    rest_overlaps,
    retarget_quality,
    retarget_robot,
    self_collision_frames,
)
from .rotations import BallJoint, ball_joints, decompose, decompose_all, sequence_matrix, slerp
from .tracking import Teleop, Tracker, track

__all__ = [
    "EASES",
    "ROBOT_MAPS",
    "SKELETON_MAPS",
    "BallJoint",
    "Motion",
    "RetargetMap",
    "Teleop",
    "Tracker",
    "anatomy",
    "ball_joints",
    "contact_intervals",
    "decompose",
    "decompose_all",
    "detect_contacts",
    "edit_by_targets",
    "free_base",
    "guess_map",
    "interpolate",
    "load_robot",
    "make_map",
    "motion_to_bvh",
    "reach",
    "rest_overlaps",
    "retarget",
    "retarget_quality",
    "retarget_robot",
    "self_collision_frames",
    "sequence_matrix",
    "slerp",
    "to_clip",
    "track",
    "write_motion_bvh",
]

# Old names (the module paths before kinetree.anim.retarget, the package callable as the
# function it replaced) are served from kinetree._deprecated's table.
retarget = _deprecated.callable_package(retarget, "kinetree.anim.retarget(clip, targets, ...)")
__getattr__, __dir__ = _deprecated.attributes(__name__)
_deprecated.module_paths(__name__)
