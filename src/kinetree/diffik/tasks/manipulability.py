"""Away from singularities: Yoshikawa's manipulability, pushed up its gradient."""

from __future__ import annotations

import numpy as np

from ..._validate import as_array
from ...errors import InvalidValueError
from ...model import Model
from ..mass import ROWS, manipulability_gradient
from .task import Task, check_cost, check_gain

__all__ = ["ManipulabilityTask"]


class ManipulabilityTask(Task):
    """Keep ``frame``'s manipulability ``w = sqrt(det(J J^T))`` high
    (:func:`kinetree.kinematics.manipulability.manipulability_gradient`; ``rows``: "all",
    "position" or "orientation" of the Jacobian).

    With ``minimum`` (singularity avoidance): a one-sided task, error
    ``min(w - minimum, 0)`` and Jacobian ``dw/dq`` while below, so a step raises ``w``
    by ``gain`` times the shortfall and nothing happens above it. Without (maximise):
    a linear objective ``-cost * dw/dq . dq``, a push up the gradient whose length the
    other tasks, the damping and the limits bound (its :meth:`error` is ``-w`` and its
    :meth:`jacobian` ``-dw/dq``). ``cost`` [cost per unit of w].
    """

    def __init__(
        self,
        frame: str,
        cost: float = 1e-2,
        minimum: float | None = None,
        gain: float = 1.0,
        rows: str = "all",
    ) -> None:
        if not isinstance(frame, str) or not frame:
            raise InvalidValueError(f"frame must be a frame name, got {frame!r}")
        if rows not in ROWS:
            raise InvalidValueError(f"rows {rows!r} is not one of: {', '.join(ROWS)}")
        self.frame = frame
        self.rows = rows
        self.cost = check_cost(cost, "cost", 1)
        self.gain = check_gain(gain)
        self.minimum = None if minimum is None else float(as_array(minimum, "minimum"))
        if self.minimum is not None and self.minimum < 0.0:
            raise InvalidValueError(f"minimum must be >= 0, got {self.minimum:g}")

    def value(self, model: Model, q: np.ndarray) -> float:
        """The manipulability at ``q``."""
        return manipulability_gradient(model, q, self.frame, self.rows)[0]

    def error(self, model: Model, q: np.ndarray) -> np.ndarray:
        w, _ = manipulability_gradient(model, q, self.frame, self.rows)
        if self.minimum is None:
            return np.array([-w])
        return np.array([min(w - self.minimum, 0.0)])

    def jacobian(self, model: Model, q: np.ndarray) -> np.ndarray:
        w, g = manipulability_gradient(model, q, self.frame, self.rows)
        if self.minimum is None:
            return -g[None, :]
        return (g if w < self.minimum else np.zeros_like(g))[None, :]

    def objective(self, model: Model, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self.minimum is not None:
            return super().objective(model, q)
        _, g = manipulability_gradient(model, q, self.frame, self.rows)
        return np.zeros((model.nv, model.nv)), -float(self.cost[0]) * g, g[None, :]
