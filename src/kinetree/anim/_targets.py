"""Shared helpers: reading target specifications and the points to draw for them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..ik.targets import Pose, Position
from ..model import Model


def as_ik_target(t: Any) -> Any:
    """A plain point ``(3,)`` becomes a :class:`Position`; anything else is passed on."""
    if isinstance(t, (np.ndarray, list, tuple)):
        a = np.asarray(t, dtype=np.float64)
        if a.shape == (3,):
            return Position(a)
        return a
    return t


def target_point(t: Any) -> np.ndarray | None:
    """The world point ``(3,)`` a target asks for, or None (orientation-only targets)."""
    if isinstance(t, Position):
        return np.asarray(t.xyz, dtype=np.float64).reshape(3)
    if isinstance(t, Pose):
        return np.asarray(t.T, dtype=np.float64)[:3, 3].copy()
    if isinstance(t, np.ndarray) and t.shape == (4, 4):
        return t[:3, 3].copy()
    return None


def target_points(target: Any) -> np.ndarray:
    """Points ``(k, 3)`` of a target or a dict of targets (k may be 0)."""
    items = list(target.values()) if isinstance(target, Mapping) else [target]
    pts = [p for p in (target_point(t) for t in items) if p is not None]
    return np.array(pts, dtype=np.float64).reshape(-1, 3)


def moved_by(model: Model, frame: str, active: np.ndarray) -> bool:
    """Whether any DoF in the boolean mask ``active`` (dof,) moves ``frame``."""
    chain = model.chain(frame)
    return bool(chain) and bool(np.any(active[model.joint_indices(chain)]))
