"""Differential IK to convergence: one-step solves, integrated until the goals are met."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._validate import as_array, check_bool, check_count
from ..errors import InvalidValueError
from ..model import Model
from .qp import NoSolutionError, check_solver_options
from .step import _check, levels_of, step_parts
from .tasks.task import Task

__all__ = ["DiffIKResult", "solve"]

#: Halvings of a step that would cross a limit that held before it (2^-30: the step is gone).
MAX_HALVINGS = 30


@dataclass(frozen=True, eq=False)
class DiffIKResult:
    """The outcome of :func:`solve`.

    ``q`` (nq,) the last configuration; ``success``: every goal task's error is within
    ``tolerance`` and every limit holds at ``q``; ``steps`` taken; ``errors`` the goal
    tasks' final error sizes (one per goal task); ``history`` (steps + 1, nq) when
    recorded; ``message`` says why it stopped.
    """

    q: np.ndarray
    success: bool
    steps: int
    errors: tuple[float, ...]
    message: str
    history: np.ndarray | None = field(default=None, repr=False)


def _goals(goals: Any) -> list[Task]:
    """``goals`` (a task or a list of them) as a list of tasks; anything else raises."""
    out = [goals] if isinstance(goals, Task) else goals
    if not isinstance(out, list | tuple) or not all(isinstance(t, Task) for t in out):
        raise InvalidValueError(
            f"goals must be a task or a list of tasks (kinetree.diffik.tasks), got {goals!r}"
        )
    return list(out)


def _keep_priorities(
    model: Model, q: np.ndarray, levels: list[list[Any]], parts: list[np.ndarray]
) -> np.ndarray:
    """The step ``sum(parts)`` with each lower level's part shortened (halved, at most
    :data:`MAX_HALVINGS` times, else dropped) until the goal tasks of the levels above it
    end no worse than without it.

    A lower level moves in the null space of the higher levels' Jacobians, which keeps
    them to first order only: over a finite step its motion bends the higher tasks off
    their targets (a posture task pulling an arm back through its null space), and over
    iterations that drift can win over the first level's progress."""
    dq = parts[0]
    for k in range(1, len(parts)):
        above = [t for level in levels[:k] for t in level if t.goal]
        if not above:
            dq = dq + parts[k]
            continue
        base_q = model.integrate(q, dq)
        base = [t.error_norm(model, base_q) for t in above]
        part = parts[k]
        for _ in range(MAX_HALVINGS):
            trial = model.integrate(q, dq + part)
            if all(t.error_norm(model, trial) <= b + 1e-12 for t, b in zip(above, base)):
                dq = dq + part
                break
            part = part * 0.5
    return dq


def solve(
    model: Model,
    q0: ArrayLike,
    tasks: Any,
    dt: float = 1.0,
    limits: Any = (),
    *,
    solver: str = "kinetree",
    damping: float = 1e-12,
    tolerance: float = 1e-6,
    max_steps: int = 500,
    goals: Any = None,
    record: bool = False,
    **solver_options: Any,
) -> DiffIKResult:
    """Iterate :func:`~kinetree.diffik.solve_step` from ``q0`` with steps of ``dt`` [s]
    until the goal tasks' errors (``goals``: default the tasks of the first level that
    have targets: frame and centre-of-mass tasks) are at most ``tolerance`` [m or rad],
    or ``max_steps`` steps, or a step that no longer moves (below 1e-12). Never raises
    on a failed solve: an infeasible step ends the loop with ``success=False``.
    """
    q, step, lims, lam = _check(model, q0, dt, limits, damping)
    levels = levels_of(tasks)
    check_solver_options(solver, solver_options)
    tol = float(as_array(tolerance, "tolerance"))
    if not tol > 0.0:
        raise InvalidValueError(f"tolerance must be > 0, got {tol:g}")
    max_steps = check_count(max_steps, "max_steps")
    check_bool(record, "record")
    goal_tasks = [t for t in levels[0] if t.goal] if goals is None else _goals(goals)
    q = model.normalize(q)
    history = [q.copy()] if record else []

    def errors(qc: np.ndarray) -> tuple[float, ...]:
        return tuple(t.error_norm(model, qc) for t in goal_tasks)

    def done(qc: np.ndarray) -> bool:
        return all(e <= tol for e in errors(qc)) and all(
            lim.satisfied(model, qc, 1e-6) for lim in lims
        )

    message = f"not converged after {int(max_steps)} steps"
    steps = 0
    while True:
        if done(q):
            message = "converged"
            break
        if steps >= int(max_steps):
            break
        try:
            parts = step_parts(model, q, levels, step, lims, solver, lam, **solver_options)
            dq = _keep_priorities(model, q, levels, parts)
        except NoSolutionError as exc:
            message = f"stopped: {exc}"
            break
        if not np.all(np.isfinite(dq)):  # pragma: no cover - the solvers return finite steps
            message = "stopped: the step is not finite"
            break
        q_next = model.integrate(q, dq)
        held = [lim for lim in lims if lim.satisfied(model, q, 1e-9)]
        halvings = 0
        # A linearised limit (collision distances) may still be crossed by a long step:
        # halve it until every limit that held still holds.
        while halvings < MAX_HALVINGS and not all(
            lim.satisfied(model, q_next, 1e-9) for lim in held
        ):
            dq = dq * 0.5
            q_next = model.integrate(q, dq)
            halvings += 1
        if halvings == MAX_HALVINGS:
            message = "stopped: every step shortening it still crosses a limit"
            break
        q = q_next
        steps += 1
        if record:
            history.append(q.copy())
        if float(np.max(np.abs(dq), initial=0.0)) < 1e-12:
            message = "stalled: the step vanished before the goals were met"
            if done(q):
                message = "converged"
            break
    ok = done(q)
    return DiffIKResult(
        q=q,
        success=ok,
        steps=steps,
        errors=errors(q),
        message=message if ok or message != "converged" else "limits violated",
        history=np.array(history) if record else None,
    )
