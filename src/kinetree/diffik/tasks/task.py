"""The task base class: an error ``e(q)`` and its Jacobian, turned into QP terms.

Every task asks the step ``dq`` (nv,) [rad or m] to satisfy ``J dq = -gain * e`` in the
least-squares sense, weighted by its costs: with ``W = diag(cost)^2`` (a cost is per unit
of error, ``[cost] / [m]`` or ``[cost] / [rad]``, so the residual ``cost * error`` is in
cost units, as in mink and pink) it adds

    1/2 || diag(cost) (J dq + gain e) ||^2  (+ 1/2 mu ||dq||^2, mu = lm_damping e^T W e)

to the QP objective, that is ``H += J^T W J + mu I`` and ``c += gain J^T W e``. The
``lm_damping`` term is Levenberg-Marquardt's: large while the error is large, vanishing
at the target, so steps stay short far away and exact near the goal.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..._validate import as_array
from ...errors import InvalidValueError, ShapeError
from ...model import Model

__all__ = ["Task", "check_cost", "check_gain"]


def check_cost(value: ArrayLike, name: str, size: int | None = None) -> np.ndarray:
    """A cost: a number >= 0 or ``size`` of them, as a ``(size,)`` array (``size`` None:
    the values only, as given, when a task is made before it knows its model)."""
    c = as_array(value, name)
    if size is None:
        if c.ndim > 1:
            raise ShapeError(f"{name} must be a number or a list of numbers, got shape {c.shape}")
    elif c.ndim == 0:
        c = np.full(size, float(c))
    if size is not None and c.shape != (size,):
        raise ShapeError(f"{name} must be a number or {size} numbers, got shape {c.shape}")
    if np.any(c < 0.0):
        raise InvalidValueError(f"{name} must be >= 0, got {c.tolist()}")
    return c


def check_gain(value: float, name: str = "gain") -> float:
    """A gain in (0, 1] (the share of the error a step removes)."""
    g = float(as_array(value, name))
    if not 0.0 < g <= 1.0:
        raise InvalidValueError(f"{name} must be in (0, 1], got {g:g}")
    return g


class Task:
    """Base class of the tasks in :mod:`kinetree.diffik.tasks`.

    Subclasses define :meth:`error` (k,) and :meth:`jacobian` (k, nv) and set
    ``self.cost`` (k,) [cost per unit of error], ``self.gain`` and ``self.lm_damping``.
    ``goal``: whether :func:`kinetree.diffik.solve` waits for this task's error to
    vanish (targets do; posture, damping and manipulability only shape the motion).
    """

    cost: np.ndarray
    gain: float = 1.0
    lm_damping: float = 0.0
    goal: bool = False

    def error(self, model: Model, q: np.ndarray) -> np.ndarray:
        """The task error ``e(q)`` (k,) that the step drives to zero."""
        raise NotImplementedError

    def jacobian(self, model: Model, q: np.ndarray) -> np.ndarray:
        """``de/dq`` (k, nv): the error's change per unit motion (along ``Model.integrate``)."""
        raise NotImplementedError

    def error_norm(self, model: Model, q: np.ndarray) -> float:
        """The size of the error that :func:`kinetree.diffik.solve` compares with its
        tolerance: the largest absolute component over the rows with a cost."""
        e = self.error(model, q)
        keep = self.cost > 0.0
        return float(np.max(np.abs(e[keep]))) if np.any(keep) else 0.0

    def objective(self, model: Model, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(H, c, A)``: this task's Hessian (nv, nv) and linear term (nv,) of the QP
        objective, and its rows ``A`` (k', nv) with a cost (what a lower priority level
        must leave unchanged)."""
        return self.terms(model, self.error(model, q), self.jacobian(model, q))

    def terms(
        self, model: Model, e: np.ndarray, J: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`objective` from an error and Jacobian already computed."""
        keep = self.cost > 0.0
        J, e, w = J[keep], e[keep], self.cost[keep] ** 2
        H = J.T @ (w[:, None] * J)
        c = self.gain * (J.T @ (w * e))
        if self.lm_damping > 0.0:
            H = H + self.lm_damping * float(e @ (w * e)) * np.eye(model.nv)
        return H, c, J

    def _check_lm(self, lm_damping: float) -> float:
        v = float(as_array(lm_damping, "lm_damping"))
        if v < 0.0:
            raise InvalidValueError(f"lm_damping must be >= 0, got {v:g}")
        return v

    def __repr__(self) -> str:
        fields: dict[str, Any] = {
            k: v for k, v in vars(self).items() if not k.startswith("_") and k != "cost"
        }
        inner = ", ".join(f"{k}={v!r}" for k, v in fields.items())
        return f"{type(self).__name__}({inner})"
