"""One-step differential IK (the form mink and pink use) and full solves built from it.

import kinetree
from kinetree.diffik import FrameTask, PostureTask, ConfigurationLimit, VelocityLimit
panda = kinetree.load("panda")
task = FrameTask("panda_link8", target=T_goal, position_cost=1.0, orientation_cost=0.5)
v = kinetree.diffik.solve_step(panda, q, [task, PostureTask()], dt=0.01,
                               limits=[ConfigurationLimit(), VelocityLimit(2.0)])
q = panda.integrate(q, v * 0.01)

Tasks (:mod:`.tasks`, a file each): :class:`FrameTask`, :class:`PostureTask`,
:class:`ComTask`, :class:`ManipulabilityTask`, :class:`DampingTask`. Limits
(:mod:`.limits`): :class:`ConfigurationLimit`, :class:`VelocityLimit`,
:class:`CollisionAvoidanceLimit`. :func:`build_qp` builds a step's QP, :func:`solve_qp`
solves one (the compiled solver of :mod:`._qp` or a qpsolvers backend),
:func:`solve_step` does both (with strict priorities for a list of lists), and
:func:`solve` iterates steps to convergence. :mod:`.mass`: centre of mass and
manipulability.
"""

from __future__ import annotations

from . import mass as mass
from .limits import CollisionAvoidanceLimit as CollisionAvoidanceLimit
from .limits import ConfigurationLimit as ConfigurationLimit
from .limits import Limit as Limit
from .limits import VelocityLimit as VelocityLimit
from .qp import QP as QP
from .qp import NoSolutionError as NoSolutionError
from .qp import build_qp as build_qp
from .qp import qp_solvers as qp_solvers
from .qp import solve_qp as solve_qp
from .solve import DiffIKResult as DiffIKResult
from .solve import solve as solve
from .step import solve_step as solve_step
from .tasks import ComTask as ComTask
from .tasks import DampingTask as DampingTask
from .tasks import FrameTask as FrameTask
from .tasks import ManipulabilityTask as ManipulabilityTask
from .tasks import PostureTask as PostureTask
from .tasks import Task as Task

__all__ = [
    "QP",
    "CollisionAvoidanceLimit",
    "ComTask",
    "ConfigurationLimit",
    "DampingTask",
    "DiffIKResult",
    "FrameTask",
    "Limit",
    "ManipulabilityTask",
    "NoSolutionError",
    "PostureTask",
    "Task",
    "VelocityLimit",
    "build_qp",
    "mass",
    "qp_solvers",
    "solve",
    "solve_qp",
    "solve_step",
]
