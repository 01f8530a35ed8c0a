"""Ball joints of three revolute DoFs: which groups of a model are one, and their axes.

A ball joint in a :class:`~kinetree.model.Model` (a BVH joint with three rotation
channels) is a run of three revolute nodes at one point (see :mod:`kinetree.model`), so
its local rotation is a product of three axis rotations,
``sequence_matrix(q[dofs], axes)``. :func:`ball_joints` finds them; the rotation
maths (the angle sequences, their decomposition, slerp) is in :mod:`kinetree.spatial`,
and re-exported here as before.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model import JointType, Model
from ..spatial import (
    axis_rotation,
    decompose,
    decompose_all,
    euler_to_quat,
    pick_nearest,
    quat_to_euler,
    sequence_matrix,
    slerp,
)
from ..spatial._euler import PERPENDICULAR_TOL

__all__ = [
    "BallJoint",
    "axis_rotation",
    "ball_joints",
    "decompose",
    "decompose_all",
    "euler_to_quat",
    "pick_nearest",
    "quat_to_euler",
    "sequence_matrix",
    "slerp",
]


@dataclass(frozen=True)
class BallJoint:
    """Three revolute DoFs of one joint group at one point.

    ``dofs``: their indices into ``q``, in chain order. ``axes`` (3, 3): their unit
    axes as rows, all expressed in the frame just before the first one moves, so
    that the group's rotation is ``sequence_matrix(q[dofs], axes)`` (times a
    constant rotation on the right, irrelevant for interpolation).
    """

    name: str
    dofs: tuple[int, int, int]
    axes: np.ndarray


def ball_joints(model: Model) -> dict[str, BallJoint]:
    """The model's ball joints: each group of ``model.joint_groups`` with a run of three
    revolute nodes (parent to child, no translation between them, no mimic
    scale/offset, one node per DoF) whose axes allow a three-angle decomposition
    (``n1 ⟂ n2``, ``n2 ⟂ n3``). Other DoFs of the group (a BVH root's position
    channels) are not part of it. Groups of other shapes are left out.
    """
    out: dict[str, BallJoint] = {}
    dof_nodes: dict[int, list[int]] = {}
    for k in range(model.n_nodes):
        qi = int(model.q_index[k])
        if qi >= 0 and model.joint_type[k] != JointType.FIXED:
            dof_nodes.setdefault(qi, []).append(k)
    dof_of = {n: i for i, n in enumerate(model.joint_names)}
    for group, names in model.joint_groups.items():
        idx = [dof_of[n] for n in names if n in dof_of]
        nodes: list[int] = []
        for qi in idx:
            ks = dof_nodes.get(qi, [])
            if len(ks) != 1:
                nodes = []
                break
            k = ks[0]
            if model.joint_type[k] == JointType.REVOLUTE:
                nodes.append(k)
        if len(nodes) != 3:
            continue
        nodes.sort()
        k1, k2, k3 = nodes
        if model.parent[k2] != k1 or model.parent[k3] != k2:
            continue
        if np.any(model.origin[k2][:3, 3] != 0.0) or np.any(model.origin[k3][:3, 3] != 0.0):
            continue
        if any(model.q_scale[k] != 1.0 or model.q_offset[k] != 0.0 for k in nodes):
            continue
        O2 = model.origin[k2][:3, :3]
        O3 = model.origin[k3][:3, :3]
        axes = np.array([model.axis[k1], O2 @ model.axis[k2], O2 @ O3 @ model.axis[k3]])
        axes = axes / np.linalg.norm(axes, axis=1, keepdims=True)
        if abs(axes[0] @ axes[1]) > PERPENDICULAR_TOL or abs(axes[1] @ axes[2]) > PERPENDICULAR_TOL:
            continue
        dofs = (int(model.q_index[k1]), int(model.q_index[k2]), int(model.q_index[k3]))
        axes.setflags(write=False)
        out[group] = BallJoint(group, dofs, axes)
    return out
