"""Humanoid robots to retarget onto: a free base for any model, and robots by name.

* :func:`free_base`: any model's tree under a new root ``"world"`` with a free joint
  ``"root_joint"`` (Pinocchio's names, and those of ``kinetree.load(urdf,
  floating_base=True)``, which URDF robots get), its seven coordinates first in ``q``.
* :func:`load_robot`: ``"g1"``, ``"talos"`` and ``"h1"`` from the example-robot-data
  package (``pip install example-robot-data``), ``"humanoid"`` (the built-in
  skeleton), or any file :func:`kinetree.load` reads, always with a free base.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import numpy as np

from ...errors import InvalidValueError, UnknownNameError
from ...io.robot_packages import ROBOT_FILES
from ...model import Model
from ...spatial import matrix_to_quaternion

__all__ = [
    "FREE_JOINT",
    "ROBOT_FILES",
    "free_base",
    "free_joint_of",
    "has_free_base",
    "joint_centre",
    "load_robot",
    "velocity_limits",
]

#: Name of the free joint :func:`free_base` adds.
FREE_JOINT = "root_joint"


def has_free_base(model: Model) -> bool:
    """Whether the model's root body hangs from a free joint (:attr:`Model.floating_base`)."""
    return model.floating_base is not None


def free_joint_of(model: Model) -> str | None:
    """The name of the free joint that carries the whole robot, or None
    (:attr:`Model.floating_base`)."""
    return model.floating_base


def free_base(model: Model) -> Model:
    """``model`` with a free base: a new fixed root ``"world"`` (``"world_1"``... if
    taken) and a free joint :data:`FREE_JOINT` from it to the old root (the names and
    the error when :data:`FREE_JOINT` is taken are :meth:`Model.with_floating_base`'s).

    Built by :meth:`Model.with_floating_base` (the one way to add a floating base), with
    one difference of convention: the old root's placement in its model moves from the
    base's fixed origin into the base's neutral configuration. The free joint's seven
    coordinates (first in ``q``) are then the old root's world pose, position [m] and
    unit quaternion w x y z, as MuJoCo's and Pinocchio's free joints read; retargeting
    writes them so. ``fk(neutral())`` is unchanged. A model that already has a free base
    is returned as it is.
    """
    if not isinstance(model, Model):
        raise InvalidValueError(f"free_base takes a Model, got {type(model).__name__}")
    if has_free_base(model):
        return model
    T0 = model.origin[0]
    origin = model.origin.copy()
    origin[0] = np.eye(4)
    free = dataclasses.replace(model, origin=origin).with_floating_base(FREE_JOINT)
    base_q = np.concatenate([T0[:3, 3], matrix_to_quaternion(T0[:3, :3])])
    return dataclasses.replace(free, q_neutral=np.concatenate([base_q, model.q_neutral]))


def load_robot(robot: str | os.PathLike[str] | Model) -> Model:
    """A robot with a free base: a :class:`Model` (given a free base if it has none),
    a name (``"g1"``, ``"talos"``, ``"h1"`` from example-robot-data, ``"humanoid"``
    or another built-in), or a file path :func:`kinetree.load` reads.

    Raises :class:`~kinetree.errors.UnknownNameError` for an unknown name and
    :class:`~kinetree.errors.FileFormatError` when example-robot-data (or the robot's
    file in it) is not installed, saying how to get it.
    """
    from ... import models
    from ...loading import load

    if isinstance(robot, Model):
        return free_base(robot)
    if isinstance(robot, str) and robot in ROBOT_FILES:
        return load(robot, floating_base=True)
    if isinstance(robot, str) and robot in models.available():
        return free_base(models.get(robot))
    if isinstance(robot, (str, os.PathLike)) and Path(robot).suffix:
        if Path(robot).suffix.lower() in (".urdf", ".xacro"):
            return load(robot, floating_base=True)
        return free_base(load(robot))
    raise UnknownNameError(
        f"robot {robot!r} not found; robots are: {', '.join(ROBOT_FILES)} (example-robot-data), "
        f"{', '.join(models.available())} (built in), or the path of a .urdf, .xml or .xacro file"
    )


def velocity_limits(model: Model) -> dict[str, float]:
    """``{joint: speed}`` [rad/s or m/s]: :attr:`Model.velocity_limits` (a URDF's
    ``<limit velocity=...>``, read when the file was loaded), as a dict."""
    return {str(k): float(v) for k, v in model.velocity_limits.items()}


def joint_centre(model: Model, q: np.ndarray, frame: str, parent: str) -> np.ndarray:
    """Where the joints between ``parent`` and ``frame`` meet at ``q``: the world point
    ``(3,)`` [m] nearest (least squares) to the axes of the revolute DoF that move
    ``frame`` but not ``parent``, found from the Jacobian of ``frame`` (a column's
    angular part ``a`` is the axis, and ``p + a x v`` with ``v`` its linear part is the
    axis point nearest the frame's origin ``p``).

    A shoulder or hip built of three offset one-axis links (pitch, roll, yaw) has its
    links' origins spread down the limb; this is the centre of rotation of the limb's
    first joint, or the frame's origin where no axis (or only one, through it) says more.
    """
    p = np.asarray(model.fk(q, frame))[:3, 3]
    own = set(model.chain(frame)) - set(model.chain(parent))
    cols: set[int] = set()
    for k in model.joint_indices(sorted(own)) if own else ():
        v = int(model.qv.q_v[int(k)])
        cols.update((v, v + 1, v + 2) if model.qv.quaternion_mask[int(k)] else (v,))
    J = np.asarray(model.jacobian(q, frame))
    # Least squares over the axis lines, with a small pull towards p so that a direction
    # no axis fixes (one axis, or parallel ones) keeps the frame's own coordinate.
    eps = 1e-6
    A = eps * np.eye(3)
    b = eps * p
    for v in sorted(cols):
        a, lin = J[3:, v], J[:3, v]
        n = float(np.linalg.norm(a))
        if n < 1e-9:
            continue  # a prismatic DoF: no axis line
        a = a / n
        r0 = p + np.cross(a, lin / n)
        P = np.eye(3) - np.outer(a, a)
        A += P
        b += P @ r0
    return np.asarray(np.linalg.solve(A, b))
