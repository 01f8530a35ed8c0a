"""Inverse kinematics: every method behind one call, :func:`solve` (``Model.ik``).

Jacobian methods (``pinv``, ``transpose``, ``dls``, ``sdls``) and ``ccd`` share one
compiled loop and differ only in the step rule; ``fabrik``, the scipy-based
``bfgs``/``lbfgs``/``cg`` and the closed-form ``analytic`` solvers sit beside it
behind the same call and result type. See ``docs/design.md`` for the core's layout.
"""

from __future__ import annotations

from .. import _deprecated
from .options import DEFAULT_OPTIONS as DEFAULT_OPTIONS
from .options import METHODS as METHODS
from .options import MIN_TOLERANCE as MIN_TOLERANCE
from .options import IKOptions as IKOptions
from .options import IKPrior as IKPrior
from .problem import Problem as Problem
from .problem import build_problem as build_problem
from .result import IKResult as IKResult
from .solve import solve as solve
from .solve import solve_all as solve_all
from .solve import solve_keywords as solve_keywords
from .solve import solve_many as solve_many
from .targets import Direction as Direction
from .targets import Orientation as Orientation
from .targets import Pose as Pose
from .targets import Position as Position

__all__ = [
    "DEFAULT_OPTIONS",
    "METHODS",
    "MIN_TOLERANCE",
    "Direction",
    "IKOptions",
    "IKPrior",
    "IKResult",
    "Orientation",
    "Pose",
    "Position",
    "Problem",
    "build_problem",
    "solve",
    "solve_all",
    "solve_keywords",
    "solve_many",
]

# The old paths of the modules that moved into kernel/ and methods/ (kinetree._deprecated).
__getattr__, __dir__ = _deprecated.attributes(__name__)
_deprecated.module_paths(__name__)
