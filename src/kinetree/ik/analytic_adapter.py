"""``method="analytic"`` behind :func:`kinetree.ik.solve`: every closed-form branch,
then the one nearest ``q0`` (within limits) becomes the result."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ..errors import InvalidValueError, UnsupportedError
from ..model import Model
from .problem import _int_option, _tolerances, as_q0, check_options
from .result import IKResult
from .targets import Pose, Position

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
    model: Model, target: Any, frame: str | None, t0: float, **options: Any
) -> IKResult:
    """Closed-form IK for a single pose or position target (see :mod:`kinetree.ik.analytic`)."""
    from . import _message
    from .analytic import solve_all

    check_options(options)
    tp, tr = _tolerances(options.get("tol", 1e-6))
    for name in ("max_iter", "restarts"):
        _int_option(options, name, 0)
    if isinstance(target, Pose):
        target = target.T
    elif isinstance(target, Position):
        target = target.xyz
    elif not isinstance(target, (np.ndarray, list, tuple)):
        raise UnsupportedError(
            f"method='analytic' solves a 4x4 pose or a position; got {type(target).__name__} "
            "(use a numeric method for orientations, directions and several effectors)"
        )
    arr = np.asarray(target, dtype=np.float64)
    if arr.shape not in ((4, 4), (3,)):
        raise InvalidValueError(
            f"method='analytic' takes one 4x4 pose or one 3-vector position, got shape {arr.shape}"
        )
    if not np.all(np.isfinite(arr)):
        raise InvalidValueError("target contains NaN or inf")
    q0 = np.asarray(as_q0(model, options.get("q0"), ()), dtype=np.float64)
    name = frame if frame is not None else model.end_effectors[0]
    sols = solve_all(model, arr, frame)
    if sols.shape[0]:
        sols = _nearest_turns(model, sols, q0)
    active = model.active_mask(options.get("active"))
    if sols.shape[0] and not np.all(active):
        # Inactive joints must keep their q0 values: keep only branches that do.
        d = np.abs(sols[:, ~active] - q0[~active])
        d = np.minimum(d, np.abs(2.0 * np.pi - d % (2.0 * np.pi)))
        sols = sols[np.all(d < 1e-9, axis=1)]
        if sols.shape[0]:
            sols[:, ~active] = q0[~active]
    if sols.shape[0] == 0:
        T_fk = model.fk(q0, name)
        point = arr[:3, 3] if arr.shape == (4, 4) else arr
        p_err = float(np.linalg.norm(point - T_fk[:3, 3]))
        return IKResult(
            q=q0.copy(), success=False, position_error=np.array([p_err]),
            orientation_error=np.array([0.0]), iterations=0, restarts=0,
            elapsed=time.perf_counter() - t0,
            message="no closed-form solution: the target is out of reach, or blocked by "
            "limits or inactive joints",
            reachable=False, frames=(name,), method="analytic",
        )  # fmt: skip
    k = int(np.argmin(np.linalg.norm(sols - q0, axis=1)))
    q = sols[k]
    T = model.fk(q, name)
    if arr.shape == (4, 4):
        from ..spatial import pose_error

        e = pose_error(arr, T)
        p_err, r_err = float(np.linalg.norm(e[:3])), float(np.linalg.norm(e[3:]))
    else:
        p_err, r_err = float(np.linalg.norm(arr - T[:3, 3])), 0.0
    ok = p_err <= tp and r_err <= tr
    return IKResult(
        q=q, success=ok, position_error=np.array([p_err]), orientation_error=np.array([r_err]),
        iterations=0, restarts=0, elapsed=time.perf_counter() - t0,
        message=_message(ok, True, 0, 0) if ok else "closed-form branch misses the tolerance",
        reachable=True, frames=(name,), method="analytic",
    )  # fmt: skip
