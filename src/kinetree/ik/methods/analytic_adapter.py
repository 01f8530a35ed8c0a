"""``method="analytic"`` behind :func:`kinetree.ik.solve`: every closed-form branch,
then the one nearest ``q0`` (within limits) becomes the result."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ...errors import InvalidValueError, UnsupportedError
from ...model import Model
from ...spatial import pose_error
from ..options import IKOptions
from ..problem import as_q0
from ..result import IKResult, make_result
from ..targets import Pose, Position

__all__ = ["solve_analytic"]


def _nearest_turns(model: Model, sols: np.ndarray, q0: np.ndarray) -> np.ndarray:
    """Each revolute angle shifted by the whole turn that brings it nearest ``q0``
    while staying within its limits (``-pi..pi`` representatives come from the solver)."""
    turns = 2.0 * np.pi * np.arange(-3, 4)  # the unshifted angle is index 3
    cand = sols[:, :, None] + turns  # (n, dof, 7)
    lo = model.limits[:, 0][None, :, None] - 1e-12
    hi = model.limits[:, 1][None, :, None] + 1e-12
    dist = np.where((cand >= lo) & (cand <= hi), np.abs(cand - q0[None, :, None]), np.inf)
    dist[:, :, 3] = np.minimum(dist[:, :, 3], np.abs(sols - q0))  # always allowed
    best = np.argmin(dist, axis=2)
    return np.take_along_axis(cand, best[:, :, None], axis=2)[:, :, 0]


def solve_analytic(
    model: Model, target: Any, frame: str | None, opts: IKOptions, q0: Any, t0: float
) -> IKResult:
    """Closed-form IK for a single pose or position target (see :mod:`.analytic`).

    The result's errors are measured by FK of the returned ``q`` like every method's:
    on failure, ``q0`` and its errors to the target."""
    from .analytic import solve_all

    tp, tr = opts.tol
    if isinstance(target, Pose):
        target = target.T
    elif isinstance(target, Position):
        target = target.xyz
    elif not isinstance(target, (np.ndarray, list, tuple)):
        raise UnsupportedError(
            f"method='analytic' solves a 4x4 pose or a position; got {type(target).__name__} "
            "(use a numeric method for orientations, directions and several effectors)"
        )
    try:
        arr = np.asarray(target, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidValueError(f"target must be numeric, got {target!r}") from None
    if arr.shape not in ((4, 4), (3,)):
        raise InvalidValueError(
            f"method='analytic' takes one 4x4 pose or one 3-vector position, got shape {arr.shape}"
        )
    if not np.all(np.isfinite(arr)):
        raise InvalidValueError("target contains NaN or inf")
    q_start = np.asarray(as_q0(model, q0, ()), dtype=np.float64)
    name = frame if frame is not None else model.end_effectors[0]
    sols = solve_all(model, arr, frame)
    if sols.shape[0]:
        sols = _nearest_turns(model, sols, q_start)
    active = model.active_mask(opts.active)
    if sols.shape[0] and not np.all(active):
        # Inactive joints must keep their q0 values: keep only branches that do.
        d = np.abs(sols[:, ~active] - q_start[~active])
        d = np.minimum(d, np.abs(2.0 * np.pi - d % (2.0 * np.pi)))
        sols = sols[np.all(d < 1e-9, axis=1)]
        if sols.shape[0]:
            sols[:, ~active] = q_start[~active]
    found = sols.shape[0] > 0
    q = sols[int(np.argmin(np.linalg.norm(sols - q_start, axis=1)))] if found else q_start.copy()
    T = model.fk(q, name)
    if arr.shape == (4, 4):
        e = pose_error(arr, T)
        p_err, r_err = float(np.linalg.norm(e[:3])), float(np.linalg.norm(e[3:]))
    else:
        p_err, r_err = float(np.linalg.norm(arr - T[:3, 3])), 0.0
    ok = found and p_err <= tp and r_err <= tr
    return make_result(
        q=q,
        success=np.array(ok),
        position_error=np.array([p_err]),
        orientation_error=np.array([r_err]),
        iterations=np.array(0),
        restarts=np.array(0),
        reachable=np.array(found),
        batch=(),
        elapsed=time.perf_counter() - t0,
        frames=(name,),
        method="analytic",
    )
