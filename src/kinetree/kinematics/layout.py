"""The packed model: the two arrays every compiled kernel reads, and their one writer.

A model reaches the kernels as ``(fdata, idata)``, one row per node:

``fdata[i]`` (float64, :data:`F_SIZE` columns)
    ``F_ORIGIN:F_ORIGIN + 12`` origin of node ``i`` relative to its parent, a 3x4
    row-major block; ``F_AXIS:F_AXIS + 3`` joint axis in the node frame (unit);
    ``F_MIMIC_SCALE`` and ``F_MIMIC_OFFSET``: the joint value is
    ``scale * q[q_index] + offset`` (1 and 0 for an ordinary joint);
    ``F_BALL_LIMIT`` a ball node's largest rotation angle [rad] (inf: none).
``idata[i]`` (int64, :data:`I_SIZE` columns)
    ``I_PARENT`` parent node (-1 for the root); ``I_TYPE`` the
    :class:`~kinetree.model.JointType`; ``I_Q_INDEX`` index into ``q`` (-1: no DoF;
    a ball node reads ``q[I_Q_INDEX:I_Q_INDEX + 4]``, w first); ``I_V_INDEX`` the
    node's first column in a Jacobian / index into a motion (a ball node has three);
    ``I_AXIS_CODE`` +-1, +-2, +-3 when the axis is exactly +-x, +-y, +-z (the kernels
    then rotate two columns instead of applying a general rotation), else 0.

Module-level integers are compile-time constants in numba, so naming the slots costs
nothing in the kernels. :func:`packed` writes the arrays (cached per model, outside
the frozen model) and this docstring is the reader's map.
"""

from __future__ import annotations

import numpy as np

from .._cache import PerModel
from ..model import Model

__all__ = [
    "F_AXIS",
    "F_BALL_LIMIT",
    "F_MIMIC_OFFSET",
    "F_MIMIC_SCALE",
    "F_ORIGIN",
    "F_SIZE",
    "I_AXIS_CODE",
    "I_PARENT",
    "I_Q_INDEX",
    "I_SIZE",
    "I_TYPE",
    "I_V_INDEX",
    "packed",
    "packed_ik",
]

F_ORIGIN = 0  # 12 slots: rows 0..2 of the 4x4 origin, row-major
F_AXIS = 12  # 3 slots
F_MIMIC_SCALE = 15
F_MIMIC_OFFSET = 16
F_BALL_LIMIT = 17
F_SIZE = 18

I_PARENT = 0
I_TYPE = 1
I_Q_INDEX = 2
I_AXIS_CODE = 3
I_V_INDEX = 4
I_SIZE = 5

_PACKED: PerModel[tuple[np.ndarray, np.ndarray]] = PerModel()


def packed(model: Model) -> tuple[np.ndarray, np.ndarray]:
    """``(fdata, idata)`` of ``model`` (read-only, C-contiguous; built once per model)."""
    out = _PACKED.get(model)
    if out is None:
        out = _PACKED.put(model, _pack(model))
    return out


_PACKED_IK: PerModel[tuple[np.ndarray, np.ndarray]] = PerModel()


def packed_ik(model: Model) -> tuple[np.ndarray, np.ndarray]:
    """``(fdata, idata)`` as IK sees the model: :func:`packed` with every coupling of
    :attr:`Model.couplings` written as a mimic relation (the tied coordinate's nodes
    read the source's coordinate), so IK's steps, Jacobians and errors keep the
    relation; the caller writes the tied coordinates into the result."""
    if not model.couplings:
        return packed(model)
    out = _PACKED_IK.get(model)
    if out is None:
        fdata, idata = (a.copy() for a in packed(model))
        for j, src, mul, off in model.couplings:
            for k in np.nonzero(model.q_index == j)[0]:
                scale_k, off_k = fdata[k, F_MIMIC_SCALE], fdata[k, F_MIMIC_OFFSET]
                fdata[k, F_MIMIC_SCALE] = scale_k * mul
                fdata[k, F_MIMIC_OFFSET] = scale_k * off + off_k
                idata[k, I_Q_INDEX] = src
                idata[k, I_V_INDEX] = model.qv.q_v[src] if src >= 0 else -1
        for arr in (fdata, idata):
            arr.setflags(write=False)
        out = _PACKED_IK.put(model, (fdata, idata))
    return out


def _pack(model: Model) -> tuple[np.ndarray, np.ndarray]:
    n = model.n_nodes
    fdata = np.zeros((n, F_SIZE))
    fdata[:, F_ORIGIN : F_ORIGIN + 12] = model.origin[:, :3, :].reshape(n, 12)
    fdata[:, F_AXIS : F_AXIS + 3] = model.axis
    fdata[:, F_MIMIC_SCALE] = model.q_scale
    fdata[:, F_MIMIC_OFFSET] = model.q_offset
    fdata[:, F_BALL_LIMIT] = np.inf
    for k in model.qv.ball_nodes:
        fdata[k, F_BALL_LIMIT] = model.ball_limits.get(model.node_joint[k], np.inf)
    idata = np.zeros((n, I_SIZE), dtype=np.int64)
    idata[:, I_PARENT] = model.parent
    idata[:, I_TYPE] = model.joint_type
    idata[:, I_Q_INDEX] = model.q_index
    idata[:, I_V_INDEX] = model.qv.v_index
    for i in range(n):
        a = model.axis[i]
        k = int(np.argmax(np.abs(a)))
        if abs(a[k]) == 1.0 and np.count_nonzero(a) == 1:
            idata[i, I_AXIS_CODE] = (k + 1) * (1 if a[k] > 0 else -1)
    for arr in (fdata, idata):
        arr.setflags(write=False)
    return fdata, idata
