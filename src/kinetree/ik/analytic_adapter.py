"""``method="analytic"`` behind :func:`kinetree.ik.solve`: every closed-form branch,
then the one nearest ``q0`` (within limits) becomes the result."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ..errors import InvalidValueError
from ..model import Model
from .problem import as_q0, check_options
from .result import IKResult
from .targets import Pose, Position

__all__ = ["solve_analytic"]


def solve_analytic(
    model: Model, target: Any, frame: str | None, t0: float, **options: Any
) -> IKResult:
    """Closed-form IK for a single pose or position target (see :mod:`kinetree.ik.analytic`)."""
    from . import _message
    from .analytic import solve_all

    check_options(options)
    if isinstance(target, Pose):
        target = np.asarray(target.T, dtype=np.float64)
    elif isinstance(target, Position):
        target = np.asarray(target.xyz, dtype=np.float64)
    arr = np.asarray(target, dtype=np.float64)
    if arr.shape not in ((4, 4), (3,)):
        raise InvalidValueError(
            f"method='analytic' takes one 4x4 pose or one 3-vector position, got shape {arr.shape}"
        )
    if not np.all(np.isfinite(arr)):
        raise InvalidValueError("target contains NaN or inf")
    q0 = as_q0(model, options.get("q0"), ())
    sols = solve_all(model, arr, frame)
    name = frame if frame is not None else model.end_effectors[0]
    T_fk = model.fk(q0, name) if sols.shape[0] == 0 else model.fk(sols, name)
    if sols.shape[0] == 0:
        p_err = float(np.linalg.norm((arr[:3, 3] if arr.shape == (4, 4) else arr) - T_fk[:3, 3]))
        return IKResult(
            q=np.array(q0), success=False, position_error=np.array([p_err]),
            orientation_error=np.array([0.0]), iterations=0, restarts=0,
            elapsed=time.perf_counter() - t0,
            message="no closed-form solution: the target is out of reach or blocked by limits",
            reachable=False, frames=(name,), method="analytic",
        )  # fmt: skip
    # Nearest branch to q0 (the usual choice for continuity along a path).
    k = int(np.argmin(np.linalg.norm(sols - q0, axis=1)))
    q = sols[k]
    T = T_fk[k]
    if arr.shape == (4, 4):
        from ..spatial import pose_error

        e = pose_error(arr, T)
        p_err, r_err = float(np.linalg.norm(e[:3])), float(np.linalg.norm(e[3:]))
    else:
        p_err, r_err = float(np.linalg.norm(arr - T[:3, 3])), 0.0
    tol = options.get("tol", 1e-6)
    tp, tr = (tol, tol) if np.ndim(tol) == 0 else (tol[0], tol[1])
    ok = p_err <= tp and r_err <= tr
    return IKResult(
        q=q, success=ok, position_error=np.array([p_err]), orientation_error=np.array([r_err]),
        iterations=0, restarts=0, elapsed=time.perf_counter() - t0,
        message=_message(ok, True, 0, 0) if ok else "closed-form branch misses the tolerance",
        reachable=True, frames=(name,), method="analytic",
    )  # fmt: skip
