"""The QP of one step, built apart from its solution (so tests can read the matrices).

    minimise    1/2 dq^T H dq + c^T dq
    subject to  G dq <= h,   A dq = b,   lb <= dq <= ub

over the step ``dq`` (nv,) [rad or m] held for ``dt`` (the velocity is ``dq / dt``).
``solver="kinetree"`` is kinetree's compiled dual active-set solver, :mod:`kinetree._qp`
(the one the collision-aware IK uses too); any other name is a `qpsolvers` backend
(``pip install kinetree[qp]``: daqp, proxqp, osqp, quadprog, ...).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._qp import QPStatus, QPWorkspace
from ..errors import InvalidValueError, KinetreeError, UnknownNameError, UnsupportedError
from ..model import Model
from .limits.limit import Limit
from .tasks.task import Task

__all__ = [
    "QP",
    "NoSolutionError",
    "build_qp",
    "check_solver_options",
    "qp_solvers",
    "solve_qp",
]


class NoSolutionError(KinetreeError, RuntimeError):
    """The step's QP has no solution (the limits contradict each other) or the solver
    failed; the message says which."""


@dataclass(frozen=True, eq=False)
class QP:
    """One step's quadratic program (see the module docstring); ``A``/``b`` are empty
    (0 rows) without equalities, ``G``/``h`` without inequalities; ``lb``/``ub`` hold
    -inf/inf where a DoF is unbounded. ``task_rows`` lists each task's rows with a cost
    (what a lower priority must leave unchanged)."""

    H: np.ndarray
    c: np.ndarray
    G: np.ndarray
    h: np.ndarray
    A: np.ndarray
    b: np.ndarray
    lb: np.ndarray
    ub: np.ndarray
    task_rows: tuple[np.ndarray, ...] = ()


def _objective(model: Model, q: np.ndarray, tasks: Sequence[Task], damping: float):
    nv = model.nv
    H = damping * np.eye(nv)
    c = np.zeros(nv)
    rows: list[np.ndarray] = []
    for task in tasks:
        Ht, ct, At = task.objective(model, q)
        H += Ht
        c += ct
        rows.append(At)
    return H, c, tuple(rows)


def _constraints(model: Model, q: np.ndarray, limits: Sequence[Limit], dt: float):
    nv = model.nv
    lb_pos = np.full(nv, -np.inf)
    ub_pos = np.full(nv, np.inf)
    lb_speed = np.full(nv, -np.inf)
    ub_speed = np.full(nv, np.inf)
    Gs: list[np.ndarray] = []
    hs: list[np.ndarray] = []
    for limit in limits:
        box = limit.bounds(model, q, dt)
        if box is not None:
            lo, hi = box
            if limit.speed:
                lb_speed, ub_speed = np.maximum(lb_speed, lo), np.minimum(ub_speed, hi)
            else:
                lb_pos, ub_pos = np.maximum(lb_pos, lo), np.minimum(ub_pos, hi)
        rows = limit.inequalities(model, q, dt)
        if rows is not None:
            Gs.append(rows[0])
            hs.append(rows[1])
    # Speed bounds win: a position bound that asks for more is clipped into them.
    lb = np.clip(lb_pos, lb_speed, ub_speed)
    ub = np.clip(ub_pos, lb_speed, ub_speed)
    lb = np.minimum(lb, ub)
    G = np.concatenate(Gs) if Gs else np.zeros((0, nv))
    h = np.concatenate(hs) if hs else np.zeros(0)
    return G, h, lb, ub


def build_qp(
    model: Model,
    q: np.ndarray,
    tasks: Sequence[Task],
    dt: float,
    limits: Sequence[Limit] = (),
    damping: float = 1e-12,
) -> QP:
    """The weighted QP of one step of ``dt`` [s] from ``q`` (nq,): the tasks' terms (see
    :class:`~kinetree.diffik.tasks.Task`) plus ``damping`` [cost / (rad or m)^2] on
    the step, and the limits' bounds and rows."""
    H, c, rows = _objective(model, q, tasks, damping)
    G, h, lb, ub = _constraints(model, q, limits, dt)
    return QP(H, c, G, h, np.zeros((0, model.nv)), np.zeros(0), lb, ub, rows)


_WORKSPACE = QPWorkspace()


def qp_solvers() -> tuple[str, ...]:
    """Solver names ``solve_qp`` accepts here: "kinetree" and the installed qpsolvers
    backends."""
    try:
        import qpsolvers
    except ImportError:
        return ("kinetree",)
    return ("kinetree", *qpsolvers.available_solvers)


def check_solver_options(solver: str, options: Mapping[str, Any]) -> None:
    """Refuse options for the built-in solver, which takes none (they would be ignored
    without a word); a qpsolvers backend checks its own."""
    if solver == "kinetree" and options:
        raise InvalidValueError(
            f"solver 'kinetree' takes no options, got {', '.join(map(repr, options))}; "
            "options are passed to a qpsolvers backend (solver='osqp', ...)"
        )


def solve_qp(qp: QP, solver: str = "kinetree", **options: Any) -> np.ndarray:
    """The minimiser ``dq`` of ``qp``. ``solver``: "kinetree" or a qpsolvers backend;
    ``options`` go to qpsolvers. Raises :class:`NoSolutionError` when there is none (an
    infeasible problem, or a backend that fails), :class:`UnknownNameError` for an
    unknown solver and :class:`InvalidValueError` for options given to "kinetree"."""
    check_solver_options(solver, options)
    if solver == "kinetree":
        # kinetree._qp's rows are ">=" with the equalities first: A dq = b, -G dq >= -h.
        C = np.concatenate([qp.A, -qp.G])
        d = np.concatenate([qp.b, -qp.h])
        status, x, _, _ = _WORKSPACE.solve(qp.H, qp.c, C, d, qp.A.shape[0], qp.lb, qp.ub)
        if status == QPStatus.SOLVED:
            return x
        why = {
            QPStatus.INFEASIBLE: "the limits admit no step (infeasible)",
            QPStatus.MAX_ITERATIONS: "no solution within the active-set iteration budget",
            QPStatus.NOT_CONVEX: "the Hessian is not positive definite (add damping > 0)",
        }[status]
        raise NoSolutionError(f"QP solver 'kinetree': {why}")
    try:
        import qpsolvers
    except ImportError:
        raise UnsupportedError(
            f"solver {solver!r} needs qpsolvers (pip install 'kinetree[qp]'); "
            "solver='kinetree' needs nothing"
        ) from None
    if solver not in qpsolvers.available_solvers:
        raise UnknownNameError(
            f"solver {solver!r} not found; valid solvers here are: {', '.join(qp_solvers())}"
        )
    has_g = qp.G.shape[0] > 0
    has_a = qp.A.shape[0] > 0
    lo = np.where(np.isfinite(qp.lb), qp.lb, -1e20)
    hi = np.where(np.isfinite(qp.ub), qp.ub, 1e20)
    bounded = bool(np.any(np.isfinite(qp.lb)) or np.any(np.isfinite(qp.ub)))
    found: np.ndarray | None = qpsolvers.solve_qp(
        qp.H,
        qp.c,
        qp.G if has_g else None,
        qp.h if has_g else None,
        qp.A if has_a else None,
        qp.b if has_a else None,
        lo if bounded else None,
        hi if bounded else None,
        solver=solver,
        **options,
    )
    if found is None or not np.all(np.isfinite(found)):
        raise NoSolutionError(f"QP solver {solver!r} found no solution")
    return np.asarray(found, dtype=np.float64)
