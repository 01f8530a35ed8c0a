"""One step: the joint velocity that best serves the tasks within the limits.

Weights or strict priorities. ``tasks`` as a flat list is one level: the tasks' costs
trade them off in one QP (:func:`kinetree.diffik.build_qp`). A list of lists is a
hierarchy: level ``k`` is solved only in the null space of the rows of the levels
before it, so a lower level never changes what a higher one achieved (hierarchical
least squares by null-space projection: ``dq = dq_k + Z_k w``, with ``Z_k`` an
orthonormal basis of the null space of the stacked rows of levels ``1..k``, from an
SVD). Every level sees every limit, so the step stays feasible throughout.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._validate import as_array
from ..errors import InvalidValueError, ShapeError
from ..model import Model
from .limits.limit import Limit
from .qp import QP, NoSolutionError, _constraints, _objective, solve_qp
from .tasks.task import Task

__all__ = ["levels_of", "solve_step", "step_delta"]

# Singular values of the stacked task rows below RANK_TOL * the largest one count as
# zero: those directions stay free for the next level.
RANK_TOL = 1e-9


def levels_of(tasks: Any) -> list[list[Task]]:
    """The priority levels of ``tasks``: a flat sequence of tasks is one level, a
    sequence of sequences is one level each. Raises for anything else, naming it."""
    if isinstance(tasks, Task):
        return [[tasks]]
    if not isinstance(tasks, Sequence) or isinstance(tasks, str) or len(tasks) == 0:
        raise InvalidValueError(
            f"tasks must be a non-empty list of tasks, or a list of lists (priority "
            f"levels); got {tasks!r}"
        )
    nested = [isinstance(t, Sequence) and not isinstance(t, str) for t in tasks]
    if all(nested):
        levels = [list(level) for level in tasks]
    elif not any(nested):
        levels = [list(tasks)]
    else:
        raise InvalidValueError(
            "tasks mixes single tasks and lists; give a flat list (weights) or a list "
            "of lists (priority levels, highest first)"
        )
    for level in levels:
        if not level:
            raise InvalidValueError("a priority level is empty")
        for t in level:
            if not isinstance(t, Task):
                raise InvalidValueError(
                    f"{t!r} is not a task; tasks are FrameTask, PostureTask, ComTask, "
                    "ManipulabilityTask, DampingTask (kinetree.diffik.tasks)"
                )
    return levels


def _check(model: Model, q: ArrayLike, dt: float, limits: Any, damping: float):
    qa = as_array(q, "q")
    if qa.shape != (model.nq,):
        raise ShapeError(f"q must have shape ({model.nq},), got {qa.shape}")
    step = float(as_array(dt, "dt"))
    if not step > 0.0:
        raise InvalidValueError(f"dt must be > 0 [s], got {step:g}")
    lam = float(as_array(damping, "damping"))
    if lam < 0.0:
        raise InvalidValueError(f"damping must be >= 0, got {lam:g}")
    lims = [limits] if isinstance(limits, Limit) else list(limits or ())
    for lim in lims:
        if not isinstance(lim, Limit):
            raise InvalidValueError(
                f"{lim!r} is not a limit; limits are ConfigurationLimit, VelocityLimit, "
                "CollisionAvoidanceLimit (kinetree.diffik.limits)"
            )
    return np.require(qa, np.float64, ("C", "W")), step, lims, lam


def _null_space(rows: np.ndarray, Z: np.ndarray) -> np.ndarray:
    if rows.shape[0] == 0 or Z.shape[1] == 0:
        return Z
    M = rows @ Z
    _, s, Vt = np.linalg.svd(M, full_matrices=True)
    rank = int(np.sum(s > RANK_TOL * max(float(s[0]) if s.size else 0.0, 1e-300)))
    return Z @ Vt[rank:].T


def step_delta(
    model: Model,
    q: ArrayLike,
    tasks: Any,
    dt: float,
    limits: Any = (),
    solver: str = "kinetree",
    damping: float = 1e-12,
    **solver_options: Any,
) -> np.ndarray:
    """The step ``dq`` (nv,) [rad or m] of :func:`solve_step` (its velocity times ``dt``)."""
    return np.sum(
        step_parts(model, q, tasks, dt, limits, solver, damping, **solver_options), axis=0
    )


#: Times an infeasible step halves what its rows ask for (a pair inside the collision
#: margin pushed out) before it asks only "no closer", as the collision-aware IK's step
#: does (``kinetree.ik.kernel._collide.RELAX_HALVINGS``).
RELAX_HALVINGS = 3


def _relaxed_solve(
    qp: QP, solver: str, solver_options: dict[str, Any]
) -> tuple[np.ndarray, np.ndarray]:
    """Solve ``qp``; when its rows ``G dq <= h`` admit no step within the bounds and some
    ask for motion (``h < 0``: a pair inside its margin, at a joint limit that keeps it
    there), halve what they ask up to :data:`RELAX_HALVINGS` times, then ask only that
    they get no closer (``h = 0``), as the collision-aware IK does. The step and the ``h``
    it kept; :class:`NoSolutionError` when even "no closer" admits none."""
    h = qp.h
    for attempt in range(RELAX_HALVINGS + 2):
        try:
            return solve_qp(dataclasses.replace(qp, h=h), solver, **solver_options), h
        except NoSolutionError:
            if not np.any(h < 0.0) or attempt == RELAX_HALVINGS + 1:
                raise
            h = np.where(h < 0.0, 0.5 * h, h) if attempt < RELAX_HALVINGS else np.maximum(h, 0.0)
    raise AssertionError("unreachable")  # pragma: no cover


def step_parts(
    model: Model,
    q: ArrayLike,
    tasks: Any,
    dt: float,
    limits: Any = (),
    solver: str = "kinetree",
    damping: float = 1e-12,
    **solver_options: Any,
) -> list[np.ndarray]:
    """The step of :func:`step_delta` as one part per priority level (nv,) each, which sum
    to it: the first level's step, then each lower level's motion in the null space of
    the levels above (:func:`kinetree.diffik.solve` shortens a lower part that would
    spoil a higher level over a finite step)."""
    qa, step, lims, lam = _check(model, q, dt, limits, damping)
    levels = levels_of(tasks)
    G, h, lb, ub = _constraints(model, qa, lims, step)
    nv = model.nv
    H, c, rows = _objective(model, qa, levels[0], lam)
    empty = np.zeros((0, nv))
    dq, h = _relaxed_solve(QP(H, c, G, h, empty, np.zeros(0), lb, ub, rows), solver, solver_options)
    parts = [dq]
    if len(levels) == 1:
        return parts
    Z = _null_space(np.concatenate(rows) if rows else empty, np.eye(nv))
    lo_f, hi_f = np.isfinite(lb), np.isfinite(ub)
    for level in levels[1:]:
        if Z.shape[1] == 0:
            break
        H, c, rows = _objective(model, qa, level, lam)
        r = Z.shape[1]
        G_sub = np.concatenate([G @ Z, Z[hi_f], -Z[lo_f]])
        # dq met these rows (to the solver's rounding): a slack of -1e-17 is a zero, and a
        # row that w cannot move (|row| ~ 0) is no constraint on w.
        h_sub = np.maximum(
            np.concatenate([h - G @ dq, ub[hi_f] - dq[hi_f], dq[lo_f] - lb[lo_f]]), 0.0
        )
        movable = np.linalg.norm(G_sub, axis=1) > 1e-12
        sub = QP(
            Z.T @ H @ Z,
            Z.T @ (H @ dq + c),
            G_sub[movable],
            h_sub[movable],
            np.zeros((0, r)),
            np.zeros(0),
            np.full(r, -np.inf),
            np.full(r, np.inf),
        )
        w = solve_qp(sub, solver, **solver_options)
        parts.append(Z @ w)
        dq = dq + parts[-1]
        Z = _null_space(np.concatenate(rows) if rows else empty, Z)
    return parts


def solve_step(
    model: Model,
    q: ArrayLike,
    tasks: Any,
    dt: float,
    limits: Any = (),
    solver: str = "kinetree",
    damping: float = 1e-12,
    **solver_options: Any,
) -> np.ndarray:
    """The joint velocity ``v`` (nv,) [rad/s or m/s] for one step of ``dt`` [s] from
    ``q`` (nq,): integrate it with ``model.integrate(q, v * dt)``.

    ``tasks``: a list of tasks (:mod:`kinetree.diffik.tasks`; weighted by their costs)
    or a list of lists (strict priorities, highest first; see the module docstring).
    ``limits``: :mod:`kinetree.diffik.limits` (configuration, velocity, collision).
    ``solver``: "kinetree" (compiled, built in) or a qpsolvers backend name.
    ``damping`` [cost / (rad or m)^2]: a small cost on the step that keeps the QP
    strictly convex. Raises :class:`~kinetree.diffik.NoSolutionError` when the limits
    admit no step.
    """
    dq = step_delta(model, q, tasks, dt, limits, solver, damping, **solver_options)
    return dq / float(dt)
