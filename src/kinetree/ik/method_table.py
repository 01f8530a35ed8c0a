"""Every IK method in one table: what it is, and what the rest of kinetree reads from it.

One row per method name :func:`kinetree.ik.solve` accepts. Data only (names and numbers,
no imports of the solvers): the validation of :class:`~kinetree.ik.IKOptions`, the
compiled drivers (:mod:`kinetree.ik.kernel`), the GPU's set of methods, the command
line's choices, ``docs/design.md``'s table, the tests' parametrisations and
``benchmarks/scenarios.py`` all derive their lists from :data:`TABLE`.

Adding a step rule to the compiled loop is its kernel function in
:mod:`kinetree.ik.kernel._steps` and one row here (``docs/extending.md``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = [
    "CLOSED_CHAIN_METHODS",
    "CLOSED_FORM",
    "COLLISION_METHODS",
    "COMPILED",
    "DEFAULT_MAX_ITER",
    "GPU_METHODS",
    "INTERPRETABLE",
    "KERNEL_METHODS",
    "METHODS",
    "PYTHON",
    "ROWS",
    "TABLE",
    "MethodRow",
]

#: Kinds of method: run by the one compiled loop (:mod:`kinetree.ik.kernel`), written in
#: Python around numpy or scipy (:mod:`kinetree.ik.methods`), or closed-form.
COMPILED: Final = "compiled loop"
PYTHON: Final = "Python"
CLOSED_FORM: Final = "closed form"


@dataclass(frozen=True)
class MethodRow:
    """One IK method.

    Attributes:
        name: the ``method=`` value.
        kind: :data:`COMPILED`, :data:`PYTHON` or :data:`CLOSED_FORM`.
        update: the compiled loop's update of one iteration, a function of
            :mod:`kinetree.ik.kernel._steps` (``jacobian_update`` applies ``rule``;
            ``ccd_update`` is an update of its own); None outside the compiled loop.
        rule: the step rule ``jacobian_update`` applies (a function of
            :mod:`kinetree.ik.kernel._steps`), or None.
        driver: the compiled driver its templates run on (``auto`` runs ``dls`` with
            restarts and a budget; the Python methods' templates are ``dls``'s).
        max_iter: the default ``max_iter`` [iterations].
        allocates: its step allocates (an SVD: numba's LAPACK call). Such a driver keeps
            numba's reference counting, has no interpreted first calls (an interpreted
            SVD is numpy's, not the compiled one's) and does not run on the GPU.
        collision: it keeps collision margins (its step is a QP with distance rows).
        quaternions: it moves ball and free joints (quaternion coordinates).
        couplings: it keeps coupled coordinates (MJCF joint equalities).
        closed_chains: it keeps closed kinematic loops (MJCF ``connect``/``weld``
            equalities; :mod:`kinetree.ik.methods.closed_chains` runs it).
        scipy: the ``scipy.optimize.minimize`` method it calls, or None.
        benchmark: in ``benchmarks/scenarios.py``'s pose tables (``transpose``'s 2000
            iterations and the unbounded scipy methods tell nothing more there).
    """

    name: str
    kind: str
    update: str | None = None
    rule: str | None = None
    driver: str = "dls"
    max_iter: int = 200
    allocates: bool = False
    collision: bool = False
    quaternions: bool = True
    couplings: bool = True
    closed_chains: bool = False
    scipy: str | None = None
    benchmark: bool = False


_J = "jacobian_update"

#: Every IK method, in the order the docs and ``--help`` list them.
TABLE: Final[tuple[MethodRow, ...]] = (
    MethodRow(
        "auto",
        COMPILED,
        _J,
        "step_dls",
        "dls",
        30,
        collision=True,
        closed_chains=True,
        benchmark=True,
    ),
    MethodRow("pinv", COMPILED, _J, "step_pinv", "pinv", 200, allocates=True, benchmark=True),
    MethodRow("transpose", COMPILED, _J, "step_transpose", "transpose", 2000),
    MethodRow(
        "dls",
        COMPILED,
        _J,
        "step_dls",
        "dls",
        200,
        collision=True,
        closed_chains=True,
        benchmark=True,
    ),
    MethodRow("sdls", COMPILED, _J, "step_sdls", "sdls", 500, allocates=True, benchmark=True),
    MethodRow("ccd", COMPILED, "ccd_update", None, "ccd", 500, benchmark=True),
    MethodRow("fabrik", PYTHON, quaternions=False, couplings=False),
    MethodRow("bfgs", PYTHON, quaternions=False, scipy="BFGS"),
    MethodRow("lbfgs", PYTHON, quaternions=False, scipy="L-BFGS-B", benchmark=True),
    MethodRow("cg", PYTHON, quaternions=False, scipy="CG"),
    MethodRow("analytic", CLOSED_FORM),
)

#: Rows by name.
ROWS: Final[dict[str, MethodRow]] = {row.name: row for row in TABLE}
#: Every method name :func:`kinetree.ik.solve` accepts.
METHODS: Final = tuple(ROWS)
#: Methods run by the compiled loop.
KERNEL_METHODS: Final = tuple(r.name for r in TABLE if r.kind == COMPILED)
#: Methods that keep collision margins.
COLLISION_METHODS: Final = tuple(r.name for r in TABLE if r.collision)
#: Methods that keep closed chains.
CLOSED_CHAIN_METHODS: Final = tuple(r.name for r in TABLE if r.closed_chains)
#: Compiled methods that run on the GPU: those whose step allocates nothing.
GPU_METHODS: Final = tuple(r.name for r in TABLE if r.kind == COMPILED and not r.allocates)
#: Drivers whose first problems may run interpreted while they compile
#: (``_compile.interpret_first``): those whose step allocates nothing.
INTERPRETABLE: Final = frozenset(r.driver for r in TABLE if r.kind == COMPILED and not r.allocates)
#: The default ``max_iter`` of each method [iterations].
DEFAULT_MAX_ITER: Final = {r.name: r.max_iter for r in TABLE}
