"""Short steps: a cost on the step itself."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ...model import Model
from .task import Task, check_cost

__all__ = ["DampingTask"]


class DampingTask(Task):
    """Penalise the step: error 0 and Jacobian the identity, so it adds ``cost`` (a
    number or one per DoF) [cost / (rad or m)] squared to the Hessian's diagonal; the velocity
    leans towards zero where the other tasks leave freedom."""

    def __init__(self, cost: ArrayLike = 1e-3) -> None:
        self._cost = check_cost(cost, "cost")
        self.cost = np.zeros(0)

    def error(self, model: Model, q: np.ndarray) -> np.ndarray:
        if self.cost.shape != (model.nv,):
            self.cost = check_cost(self._cost, "cost", model.nv)
        return np.zeros(model.nv)

    def jacobian(self, model: Model, q: np.ndarray) -> np.ndarray:
        if self.cost.shape != (model.nv,):
            self.cost = check_cost(self._cost, "cost", model.nv)
        return np.eye(model.nv)
