"""Chosen joints at chosen values (a wrist kept level, a gripper held open)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..._validate import as_array
from ...errors import ShapeError, UnsupportedError
from ...model import Model
from .task import Task, check_cost, check_gain

__all__ = ["JointTask"]


class JointTask(Task):
    """Bring the coordinates of ``joints`` (joint, group or preset names) to ``target``
    (one number [rad or m] per coordinate, or one for all).

    Error (k,): ``q[joints] - target`` [rad or m]; Jacobian: the rows of the identity that
    pick those DoF. Quaternion (ball, free) joints are refused: use a :class:`FrameTask`.
    ``cost`` [cost / rad or m]: a number or one per coordinate.
    """

    goal = True

    def __init__(
        self, joints: str | list[str], target: ArrayLike, cost: ArrayLike = 1.0,
        gain: float = 1.0, lm_damping: float = 0.0,
    ) -> None:  # fmt: skip
        self.joints = joints
        self._target = as_array(target, "target")
        self._cost = check_cost(cost, "cost")
        self.gain = check_gain(gain)
        self.lm_damping = self._check_lm(lm_damping)
        self.cost = np.zeros(0)
        self._q = np.zeros(0, dtype=np.int64)
        self._model: Model | None = None

    def _ready(self, model: Model) -> None:
        if self._model is model:
            return
        idx = model.joint_indices(self.joints)  # unknown names raise, listing the joints
        if np.any(model.quaternion_mask[idx]):
            raise UnsupportedError(
                f"JointTask {self.joints!r}: quaternion (ball or free) joints are not "
                "supported; use a FrameTask on the joint's child frame"
            )
        k = idx.size
        if self._target.ndim == 0:
            self.target = np.full(k, float(self._target))
        elif self._target.shape == (k,):
            self.target = self._target.copy()
        else:
            raise ShapeError(
                f"JointTask target must be a number or {k} numbers (one per coordinate of "
                f"{self.joints!r}), got shape {self._target.shape}"
            )
        self.cost = check_cost(self._cost, "cost", k)
        self._q = idx
        self._v = model.q_v[idx]
        self._model = model

    def error(self, model: Model, q: np.ndarray) -> np.ndarray:
        self._ready(model)
        return np.asarray(q, dtype=np.float64)[self._q] - self.target

    def jacobian(self, model: Model, q: np.ndarray) -> np.ndarray:
        self._ready(model)
        J = np.zeros((self._q.size, model.nv))
        J[np.arange(self._q.size), self._v] = 1.0
        return J
