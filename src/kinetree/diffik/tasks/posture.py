"""A configuration to stay near (a rest pose)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..._validate import as_array
from ...errors import InvalidValueError, ShapeError
from ...model import Model
from .task import Task, check_cost, check_gain

__all__ = ["PostureTask"]


class PostureTask(Task):
    """Pull every DoF towards ``target`` (nq,) (default: the model's neutral pose).

    Error (nv,): ``model.difference(target, q)`` [rad or m]; Jacobian: the identity
    (exact for one-number coordinates; for a quaternion joint, to first order near the
    target). ``cost`` [cost / rad or m]: a number or one per DoF.
    """

    def __init__(
        self,
        target: ArrayLike | None = None,
        cost: ArrayLike = 1e-3,
        gain: float = 1.0,
        lm_damping: float = 0.0,
    ) -> None:
        self._cost = check_cost(cost, "cost")  # its length is checked against the model's
        self.gain = check_gain(gain)
        self.lm_damping = self._check_lm(lm_damping)
        self.target = None if target is None else as_array(target, "target").copy()
        self.cost = np.zeros(0)

    def _ready(self, model: Model) -> np.ndarray:
        if self.cost.shape != (model.nv,):
            self.cost = check_cost(self._cost, "cost", model.nv)
        if self.target is None:
            return model.neutral()
        if self.target.shape != (model.nq,):
            raise ShapeError(
                f"PostureTask target must have shape ({model.nq},), got {self.target.shape}"
            )
        return self.target

    def set_target(self, target: ArrayLike) -> None:
        """Set the rest configuration (nq,)."""
        t = as_array(target, "target")
        if t.ndim != 1:
            raise InvalidValueError(f"target must be one configuration, got shape {t.shape}")
        self.target = t.copy()

    def error(self, model: Model, q: np.ndarray) -> np.ndarray:
        target = self._ready(model)
        if model.nq == model.nv:  # no quaternions: the difference is a subtraction
            return np.asarray(q, dtype=np.float64) - target
        return model.difference(target, q)

    def jacobian(self, model: Model, q: np.ndarray) -> np.ndarray:
        self._ready(model)
        return np.eye(model.nv)
