"""One live solve of the viewer, with ways out when the smooth one stalls.

A drag solves from the current configuration with the panel's method (damped least
squares by default, no restarts), so the model follows the mouse without jumping. From
a stretched pose (a URDF whose zero configuration is an arm held straight, a
singularity) that solve can stall centimetres short of a target ``Model.ik`` reaches.
When it does, two more solves are tried, each only if the one before did not reach:

1. the same method from a *bent start* (:func:`bent_start`): the active joints moved
   halfway towards a bent pose within their limits, away from the stretched one;
2. the library's default method with its random restarts, from the current
   configuration (the model may jump, but it reaches).

The first one that reaches is kept, else the one closest to the targets.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ik import IKResult
from ..model import Model

__all__ = ["bent_start", "solve_drag"]


#: The bent start's joints aim this fraction of their range off the middle of their limits,
#: by turns to either side (a chain with symmetric limits, straight at their middle, bends
#: into a zigzag).
BEND = 0.25


def bent_start(model: Model, q: np.ndarray, active: Any) -> np.ndarray:
    """``q`` with the ``active`` joints (a name, names or None for all) moved halfway
    towards a bent pose: the middle of each joint's limits, offset by :data:`BEND` of its
    range to alternate sides. Joints without finite limits, and quaternion coordinates,
    stay."""
    out = np.array(q, dtype=np.float64, copy=True)
    mask = model.active_mask(active) & ~model.qv.quaternion_mask
    lo, hi = model.limits[:, 0], model.limits[:, 1]
    idx = np.nonzero(mask & np.isfinite(lo) & np.isfinite(hi))[0]
    side = np.where(np.arange(idx.size) % 2 == 0, 1.0, -1.0)
    aim = 0.5 * (lo[idx] + hi[idx]) + side * BEND * (hi[idx] - lo[idx])
    out[idx] = 0.5 * (out[idx] + aim)
    return out


def _worse(a: IKResult, b: IKResult) -> bool:
    """Whether ``a`` is farther from its targets than ``b`` (position, then orientation)."""
    ea = (
        float(np.max(a.position_error, initial=0.0)),
        float(np.max(a.orientation_error, initial=0.0)),
    )
    eb = (
        float(np.max(b.position_error, initial=0.0)),
        float(np.max(b.orientation_error, initial=0.0)),
    )
    return ea > eb


def solve_drag(
    model: Model, targets: dict[str, Any], q0: np.ndarray, options: dict[str, Any]
) -> tuple[IKResult, str]:
    """``(result, how)``: the live solve of ``targets`` from ``q0`` with ``options``
    (``Model.ik``'s keywords), and how it was reached: ``""`` (the smooth solve), ``"from
    a bent start"`` or ``"with restarts"`` (see the module docstring)."""
    r = model.ik(targets, q0=q0, **options)
    if bool(r.success):
        return r, ""
    best, how = r, ""
    bent = model.ik(targets, q0=bent_start(model, q0, options.get("active")), **options)
    if bool(bent.success):
        return bent, "from a bent start"
    if _worse(best, bent):
        best, how = bent, "from a bent start"
    default = {k: v for k, v in options.items() if k not in ("method", "restarts")}
    again = model.ik(targets, q0=q0, **default)
    if bool(again.success) or _worse(best, again):
        return again, "with restarts"
    return best, how
