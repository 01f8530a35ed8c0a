"""The one-step differential IK's old solver module: one QP solver serves kinetree now,
:mod:`kinetree._qp`; these names are its aliases (private, kept for one release)."""

from __future__ import annotations

from .._qp import QP_INFEASIBLE as STATUS_INFEASIBLE
from .._qp import QP_MAX_ITERATIONS as STATUS_MAX_ITERATIONS
from .._qp import QP_NOT_CONVEX as STATUS_NOT_CONVEX
from .._qp import QP_SOLVED as STATUS_SOLVED
from .._qp import QPWorkspace as QPWorkspace

__all__ = [
    "STATUS_INFEASIBLE",
    "STATUS_MAX_ITERATIONS",
    "STATUS_NOT_CONVEX",
    "STATUS_SOLVED",
    "QPWorkspace",
]
