"""Joint speed limits over one step."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numpy.typing import ArrayLike

from ..._cache import PerModel
from ..._validate import as_array
from ...errors import InvalidValueError, ShapeError
from ...model import Model
from .limit import Limit

__all__ = ["VelocityLimit"]


class VelocityLimit(Limit):
    """``|dq_i| <= v_max_i dt``: joint ``i`` moves no faster than ``v_max_i`` [rad/s or
    m/s]. ``max_velocity``: None (the model's :attr:`~kinetree.Model.max_velocity`,
    from URDF ``<limit velocity>``), a number for every DoF, an (nv,) array, or a
    mapping of joint names to speeds (others: the model's). Infinite entries: no bound.
    """

    speed = True

    def __init__(self, max_velocity: float | ArrayLike | Mapping[str, float] | None = None):
        given = max_velocity.values() if isinstance(max_velocity, Mapping) else [max_velocity]
        for speed in given:
            if speed is None and not isinstance(max_velocity, Mapping):
                continue
            v = as_array(speed, "max_velocity", finite=False)
            if v.ndim > 1 or np.any(np.isnan(v)) or np.any(v <= 0.0):
                raise InvalidValueError(
                    "max_velocity must be None, a speed > 0 [rad/s or m/s], one per DoF, or "
                    f"a mapping of joint names to speeds; got {max_velocity!r}"
                )
        self.max_velocity = max_velocity
        self._cache: PerModel[np.ndarray] = PerModel(limit=1)

    def vector(self, model: Model) -> np.ndarray:
        """The (nv,) speed bounds for ``model``."""
        kept = self._cache.get(model)
        if kept is not None:
            return kept
        v = model.max_velocity.copy()
        given = self.max_velocity
        if isinstance(given, Mapping):
            for name, speed in given.items():
                v[model.qv.v_of_coordinates(model.joint_indices(name))] = float(
                    as_array(speed, f"max_velocity[{name!r}]")
                )
        elif given is not None:
            a = as_array(given, "max_velocity", finite=False)
            if a.ndim == 0:
                a = np.full(model.nv, float(a))
            if a.shape != (model.nv,):
                raise ShapeError(f"max_velocity must be a number or ({model.nv},), got {a.shape}")
            v = a.copy()
        if np.any(np.isnan(v)) or np.any(v <= 0.0):
            raise InvalidValueError(f"max_velocity must be > 0 [rad/s or m/s], got {v.tolist()}")
        return self._cache.put(model, v)

    def bounds(self, model: Model, q: np.ndarray, dt: float) -> tuple[np.ndarray, np.ndarray]:
        v = self.vector(model) * dt
        return -v, v
