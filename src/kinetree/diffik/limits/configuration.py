"""Joint position limits, approached no faster than a share of the remaining range."""

from __future__ import annotations

import numpy as np

from ..._validate import as_array
from ...errors import InvalidValueError
from ...model import Model
from .limit import Limit

__all__ = ["ConfigurationLimit"]


class ConfigurationLimit(Limit):
    """``lo <= q + dq <= hi`` for every one-number coordinate with a finite limit, as
    ``gain (lo - q) <= dq <= gain (hi - q)``: a step covers at most ``gain`` of the way
    to a limit, so limits are approached geometrically and never crossed. Quaternion
    joints' cone limits are not bounded here."""

    def __init__(self, gain: float = 0.95) -> None:
        g = float(as_array(gain, "gain"))
        if not 0.0 < g <= 1.0:
            raise InvalidValueError(f"gain must be in (0, 1], got {g:g}")
        self.gain = g
        self._layout: tuple | None = None

    def bounds(self, model: Model, q: np.ndarray, dt: float) -> tuple[np.ndarray, np.ndarray]:
        if self._layout is None or self._layout[0] is not model:
            plain = model.qv.v_q >= 0
            k = model.qv.v_q[plain]
            # Unbounded sides stay infinite: (inf - q) * gain is inf for finite q.
            self._layout = (model, plain, k, model.limits[k, 0], model.limits[k, 1])
        _, plain, k, lo, hi = self._layout
        lb = np.full(model.nv, -np.inf)
        ub = np.full(model.nv, np.inf)
        lb[plain] = self.gain * (lo - q[k])
        ub[plain] = self.gain * (hi - q[k])
        return lb, ub

    def satisfied(self, model: Model, q: np.ndarray, tol: float = 1e-9) -> bool:
        return bool(model.within_limits(q, tol))
