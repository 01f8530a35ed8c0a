"""Human motion onto a humanoid robot: :func:`retarget_robot` (``kinetree.retarget``).

One module per part of the job, in the order a clip goes through them:

* :mod:`.robots`: loading a robot, its free base, joint centres.
* :mod:`.joint_maps`: which source joint drives which robot frame
  (:class:`RetargetMap`, ready-made and guessed maps).
* :mod:`.source`: the source clip in the robot's world (units, up axis, scale).
* :mod:`.feet`: the robot's soles, planted feet, bent limbs.
* :mod:`.targets`: the per-frame IK targets built from the source.
* :mod:`.human_to_robot`: :func:`retarget_robot`, which runs the solve.
* :mod:`.quality`: quality numbers of a retargeted motion, self-collision frames.
* :mod:`.saving`: :func:`save_motion` (``.npz``, ``.csv``, ``.bvh``).
* :mod:`.dataset`: a folder of clips on several processes (:func:`retarget_folder`).

Until the next release ``kinetree.anim.retarget`` can also be called as the function it
replaces, ``kinetree.anim.retarget(clip, targets, ...)``, with a :class:`DeprecationWarning`
(:mod:`kinetree._deprecated`): that is :func:`kinetree.anim.edit_by_targets` (editing a
clip by IK targets, not human -> robot).
"""

from __future__ import annotations

from .human_to_robot import retarget_robot
from .joint_maps import ROBOT_MAPS, SKELETON_MAPS, RetargetMap, guess_map, make_map
from .quality import rest_overlaps, retarget_quality, self_collision_frames
from .robots import free_base, load_robot
from .saving import save_motion

__all__ = [
    "ROBOT_MAPS",
    "SKELETON_MAPS",
    "RetargetMap",
    "free_base",
    "guess_map",
    "load_robot",
    "make_map",
    "rest_overlaps",
    "retarget_quality",
    "retarget_robot",
    "save_motion",
    "self_collision_frames",
]
