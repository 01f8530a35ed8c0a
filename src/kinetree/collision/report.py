"""What a collision-aware solve tells about its pairs: the closest one when it ends in
collision, and the pairs it left out because no active joint moves them apart."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from .._warnings import warn_outside
from ..kinematics import packed
from ..model import Model
from . import _kernels
from .layout import OUT_DISTANCE, OUT_SIZE

if TYPE_CHECKING:
    from .robot import CollisionModel, CollisionTables

__all__ = ["CollisionWarning", "closest_pair", "report_left_out"]


def closest_pair(model: Model, tables: CollisionTables, q: np.ndarray) -> tuple[str, str, float]:
    """``(a, b, distance)``: the closest checked pair of ``tables`` at one configuration
    ``q`` (nq,) and its signed distance [m] on the spheres (negative: the depth of a
    penetration); ``("", "", inf)`` when nothing is checked."""
    Q = np.require(np.asarray(q, dtype=np.float64).reshape(1, model.nq), np.float64, ("C", "W"))
    fdata, idata = packed(model)
    out = np.empty((1, OUT_SIZE))
    arg = np.empty(1, dtype=np.int64)
    t = tables
    _kernels.distance_rows(
        Q,
        fdata,
        idata,
        *t.scene,
        -np.inf,
        out,
        arg,
        0,
        1,
    )
    if arg[0] < 0:
        return "", "", float("inf")
    a, b = t.pair_names[int(arg[0])]
    return a, b, float(out[0, OUT_DISTANCE])


class CollisionWarning(UserWarning):
    """A collision set-up that will not do what it seems to (pairs left out of a solve)."""


def report_left_out(
    cm: CollisionModel,
    tables: CollisionTables,
    obstacles: Any,
    self_collision: bool,
    ignore: Iterable[tuple[str, str]],
) -> None:
    """Warn (:class:`CollisionWarning`) about the pairs of ``tables.left_out`` that are in
    contact at the model's neutral configuration, with their depth [m] on the spheres:
    no solve from there could have cleared them. Left-out pairs apart there stay quiet."""
    rows, names = cm.pair_distances(
        cm.model.neutral(), obstacles, self_collision, cutoff=0.0, ignore=ignore
    )
    depth = {n: -float(rows[k, OUT_DISTANCE]) for k, n in enumerate(names)}
    touching = [(n, depth[n]) for n in tables.left_out if depth.get(n, 0.0) > 0.0]
    if not touching:
        return
    shown = ", ".join(f"{a}-{b} ({d * 1e3:.1f} mm deep)" for (a, b), d in touching[:6])
    more = f" and {len(touching) - 6} more" if len(touching) > 6 else ""
    warn_outside(
        f"{len(touching)} collision pair(s) in contact at the neutral configuration are left "
        f"out of the solve, as no active joint moves them apart: {shown}{more}. "
        "Disable them (an SRDF, disabled=, ignore=) or make a joint between them active.",
        CollisionWarning,
    )
