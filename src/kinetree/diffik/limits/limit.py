"""The limit base class: linear inequalities on the step ``dq`` (nv,)."""

from __future__ import annotations

import numpy as np

from ...model import Model

__all__ = ["Limit"]


class Limit:
    """Base class of the limits in :mod:`kinetree.diffik.limits`.

    A limit gives box bounds ``lb <= dq <= ub`` (:meth:`bounds`) or general rows
    ``G dq <= h`` (:meth:`inequalities`), or both, for a step of ``dt`` seconds from
    ``q``. ``speed``: the bounds are a hard speed limit, which wins where position
    bounds would ask for more (a joint outside its range comes back at full speed).
    """

    speed: bool = False

    def bounds(
        self, model: Model, q: np.ndarray, dt: float
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """``(lb, ub)`` (nv,) on the step [rad or m], or None."""
        return None

    def inequalities(
        self, model: Model, q: np.ndarray, dt: float
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """``(G, h)`` with ``G dq <= h``, or None."""
        return None

    def satisfied(self, model: Model, q: np.ndarray, tol: float = 1e-9) -> bool:
        """Whether ``q`` itself respects the limit (what a solve's success requires)."""
        return True

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({inner})"
