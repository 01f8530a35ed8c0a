"""The centre of mass at a point (balance, or a character's weight over its feet)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..._validate import as_array
from ...errors import ShapeError
from ...model import Model
from .task import Task, check_cost, check_gain

__all__ = ["ComTask"]


class ComTask(Task):
    """Bring the centre of mass (:meth:`kinetree.Model.com`) to ``target`` (3,) [m].

    Error (3,): ``com(q) - target`` [m]; Jacobian: :meth:`kinetree.Model.com_jacobian`.
    ``cost`` [cost / m]: a number or one per world axis (``(1, 1, 0)`` keeps the centre
    of mass over a point on the ground at any height).
    """

    goal = True

    def __init__(
        self,
        target: ArrayLike | None = None,
        cost: ArrayLike = 1.0,
        gain: float = 1.0,
        lm_damping: float = 0.0,
    ) -> None:
        self.cost = check_cost(cost, "cost", 3)
        self.gain = check_gain(gain)
        self.lm_damping = self._check_lm(lm_damping)
        self.target: np.ndarray | None = None
        if target is not None:
            self.set_target(target)

    def set_target(self, target: ArrayLike) -> None:
        """Set the target point [m] (world frame)."""
        t = as_array(target, "target")
        if t.shape != (3,):
            raise ShapeError(f"ComTask target must have shape (3,), got {t.shape}")
        self.target = t.copy()

    def error(self, model: Model, q: np.ndarray) -> np.ndarray:
        c = model.com(q)
        return c - (self.target if self.target is not None else c)

    def jacobian(self, model: Model, q: np.ndarray) -> np.ndarray:
        return model.com_jacobian(q)
