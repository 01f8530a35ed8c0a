"""Swing-twist limited ball joints as the solver reads them, and their angles.

:func:`swing_twist_layout` writes the arrays that :mod:`kinetree.ik.kernel._swing_twist`
reads inside the solver loop (its docstring names the slots): ``ints[0]`` the number
G of groups with an active DoF, then per group three node and three DoF indices and a
flag (1: all three DoF active); ``floats`` per group the bone axis (3, in the joint's
child frame), swing max [rad], twist min, twist max [rad].
:func:`swing_twist_angles` measures one joint's swing and twist at a configuration.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..._validate import as_array
from ...errors import ShapeError, unknown_name
from ...kinematics.layout import packed
from ...model import Model
from ._swing_twist import group_rotation, swing_twist

__all__ = ["swing_twist_angles", "swing_twist_layout"]


def swing_twist_layout(model: Model, active: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(ints, floats)`` of ``model``'s swing-twist groups with a DoF in ``active``
    (a boolean mask over ``q``), laid out as in the module docstring."""
    ints: list[int] = [0]
    floats: list[float] = []
    for group, (bone, sw, tlo, thi) in model.swing_twist.items():
        dofs, nodes = model.group_nodes(group)
        n_active = int(np.count_nonzero(active[dofs]))
        if n_active == 0:
            continue
        ints[0] += 1
        ints += [*nodes.tolist(), *dofs.tolist(), int(n_active == len(dofs))]
        floats += [*map(float, bone), sw, tlo, thi]
    return np.array(ints, dtype=np.int64), np.array(floats, dtype=np.float64)


def swing_twist_angles(model: Model, q: ArrayLike, group: str) -> tuple[float, float]:
    """``(swing, twist)`` [rad] of the swing-twist limited ball joint ``group`` at one
    configuration ``q`` (nq,)."""
    if group not in model.swing_twist:
        raise unknown_name("swing-twist joint", group, model.swing_twist)
    qa = as_array(q, "q", (model.nq,))
    if qa.shape != (model.nq,):
        raise ShapeError(f"q must have shape ({model.nq},), got {qa.shape}")
    dofs, nodes = model.group_nodes(group)
    R = np.empty((3, 3))
    group_rotation(
        packed(model)[0], nodes, dofs, np.require(qa, np.float64, ("C", "W")), R, np.empty((3, 3))
    )
    sw, _, _, _, tw = swing_twist(R, np.ascontiguousarray(model.swing_twist[group][0]))
    return float(sw), float(tw)
