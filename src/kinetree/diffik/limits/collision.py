"""Collision avoidance: linearised distances between the robot's spheres and the world."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ..._validate import as_array
from ...collision import collision_model
from ...collision.layout import OUT_DISTANCE, OUT_SIZE
from ...errors import InvalidValueError
from ...kinematics import packed
from ...model import Model
from .. import _kernels
from .limit import Limit

__all__ = ["BUFFER", "CollisionAvoidanceLimit"]

#: The rows keep ``margin + BUFFER`` [m] (as the collision-aware IK does), so the curvature
#: a linearised row misses over one step does not cost the margin itself.
BUFFER = 1e-3


class CollisionAvoidanceLimit(Limit):
    """Keep every checked pair at least ``margin`` [m] apart.

    The robot is its collision spheres (:func:`kinetree.collision.collision_model`,
    which contain its meshes); the pairs are every link against every obstacle and,
    with ``self_collision``, the enabled link pairs. Each pair closer than
    ``detection_distance`` [m] gives the row ``d + grad . dq >= margin`` relaxed by
    ``gain`` in (0, 1]: ``-grad . dq <= gain (d - margin - BUFFER)`` (a pair approaches
    the margin geometrically; a pair inside it is pushed out); the :data:`BUFFER` of 1 mm
    absorbs what the linearisation misses over a short step, and
    :func:`~kinetree.diffik.solve` shortens a step that would still cross the margin, so
    the clearance never falls below ``margin`` there. ``ignore``: pairs of names to skip;
    ``options``: arguments of :func:`~kinetree.collision.collision_model`.
    """

    def __init__(
        self,
        obstacles: Iterable[Any] | Any = (),
        self_collision: bool = True,
        margin: float = 0.005,
        detection_distance: float = 0.1,
        gain: float = 0.85,
        ignore: Iterable[tuple[str, str]] = (),
        **options: Any,
    ) -> None:
        self.obstacles = obstacles
        self.self_collision = bool(self_collision)
        self.margin = float(as_array(margin, "margin"))
        self.detection_distance = float(as_array(detection_distance, "detection_distance"))
        if self.detection_distance <= self.margin:
            raise InvalidValueError(
                f"detection_distance ({self.detection_distance:g} m) must exceed margin "
                f"({self.margin:g} m)"
            )
        g = float(as_array(gain, "gain"))
        if not 0.0 < g <= 1.0:
            raise InvalidValueError(f"gain must be in (0, 1], got {g:g}")
        self.gain = g
        self.ignore: tuple[tuple[str, str], ...] = tuple((str(a), str(b)) for a, b in ignore)
        self.options: Mapping[str, Any] = dict(options)
        self._ready: tuple[int, Any, tuple[np.ndarray, ...]] | None = None

    def _scene(self, model: Model) -> tuple[Any, tuple[np.ndarray, ...]]:
        if self._ready is None or self._ready[0] != id(model):
            cm = collision_model(model, **self.options)
            t = cm.tables(self.obstacles, self.self_collision, self.ignore)
            n_pairs = t.pairs.shape[0]
            scratch = (
                np.empty((model.n_nodes, 3, 4)),
                np.empty((t.spheres.shape[0], 4)),
                np.empty((n_pairs, OUT_SIZE)),
                np.empty((6, model.nv)),
                np.empty(model.nv),
                np.empty((n_pairs, model.nv)),
                np.empty(n_pairs),
            )
            self._ready = (id(model), t, scratch)
        return self._ready[1], self._ready[2]

    def pair_rows(self, model: Model, q: np.ndarray) -> tuple[np.ndarray, int]:
        """Every pair's distance row (layout ``OUT_*``, refined within the detection
        distance) and the number of constraint rows at ``q``."""
        t, (W, C, out, J, grad, G, h) = self._scene(model)
        fdata, idata = packed(model)
        k = _kernels.collision_rows(
            np.require(q, np.float64, ("C", "W")),
            fdata,
            idata,
            t.nodes,
            t.spheres,
            t.links,
            t.obstacles,
            t.obstacle_data,
            t.pairs,
            self.detection_distance,
            self.margin + BUFFER,
            self.gain,
            W,
            C,
            out,
            J,
            grad,
            G,
            h,
        )
        return out, int(k)

    def inequalities(
        self, model: Model, q: np.ndarray, dt: float
    ) -> tuple[np.ndarray, np.ndarray] | None:
        _, k = self.pair_rows(model, q)
        if k == 0:
            return None
        _, scratch = self._scene(model)
        return scratch[5][:k].copy(), scratch[6][:k].copy()

    def min_distance(self, model: Model, q: np.ndarray) -> float:
        """The smallest pair distance [m] at ``q`` (inf without pairs)."""
        out, _ = self.pair_rows(model, q)
        return float(out[:, OUT_DISTANCE].min()) if out.shape[0] else float("inf")

    def satisfied(self, model: Model, q: np.ndarray, tol: float = 1e-9) -> bool:
        return self.min_distance(model, q) >= self.margin - tol
