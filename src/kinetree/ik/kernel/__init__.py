"""The compiled IK loop and everything it calls: one source for the CPU drivers, the
interpreted first solves and the GPU kernels (:mod:`kinetree.gpu`).

* :mod:`.layout`: every packed array the loop reads (target rows, config, result row,
  status codes), with its Python writers beside its compiled readers.
* :mod:`.swing_twist_layout`: the arrays of swing-twist limited ball joints.
* ``_loop``: :func:`solve_one` (one problem: starts, iterations, restarts, budget) and
  :func:`solve_range` (a slice of a batch).
* ``_steps``: the step rules and the updates of one iteration (:data:`RULES`,
  :data:`UPDATES`); ``_collide``: the collision-aware update (a QP with distance rows).
* ``_tasks``, ``_target_rows``: task errors and the stacked Jacobian; the target rows a
  solve starts from. ``_linalg``: damped least squares. ``_manifold``: quaternion joints.
  ``_swing_twist``: the cone projection. ``_clock``, ``_random``: the loop's clock and
  generator (the GPU replaces the clock).
* ``_drivers``: :func:`driver`, the compiled entry point of each method (a variant of
  :func:`solve_range` with the method's update bound in, made on first use).

Which update and rule each method runs is the method table's
(:mod:`kinetree.ik.method_table`).
"""

from __future__ import annotations

from . import layout as layout
from ._clock import monotonic as monotonic
from ._collide import collision_update as collision_update
from ._drivers import RULES as RULES
from ._drivers import UPDATES as UPDATES
from ._drivers import cached_driver as cached_driver
from ._drivers import driver as driver
from ._loop import solve_one as solve_one
from ._loop import solve_range as solve_range
from ._target_rows import check_targets as check_targets
from ._tasks import target_point as target_point
from ._tasks import task_errors as task_errors

__all__ = [
    "RULES",
    "UPDATES",
    "cached_driver",
    "check_targets",
    "collision_update",
    "driver",
    "layout",
    "monotonic",
    "solve_one",
    "solve_range",
    "target_point",
    "task_errors",
]
