"""Compiled entry points: one per method, and per presence of swing-twist limits.

Each driver is a variant (:func:`kinetree._compile.variant`) of the shared loop with the
method's step rule and the swing-twist switch bound as globals: numba resolves them at
compile time and prunes the branches they switch off, so a driver contains only its
method's rule, and the swing-twist projection only where a model has such limits. A
driver is made and compiled on the first solve that needs it (nothing at import) and
cached on disk under its own name. All have the signature of :func:`~._loop.solve_range` and
release the GIL: one compiled function serves a single solve (a batch of one), a
small batch, and a large batch split over threads by :func:`kinetree._threads.run_chunks`.
Its arguments are always C-contiguous float64/int64 arrays of fixed writability (see
:func:`kinetree.ik._run.run`), so each driver compiles once per machine.
"""

from __future__ import annotations

import functools
from typing import Any

from ..._compile import HOT_CALLERS, kernel_digest, variant
from ..method_table import ROWS, TABLE
from . import _collide, _loop, _steps

#: The step rule of each compiled Jacobian method, by driver (``auto`` runs ``dls``;
#: ``ccd`` has an update of its own): the method table's ``rule`` column.
RULES = {row.driver: getattr(_steps, row.rule) for row in TABLE if row.rule is not None}
#: The update of one iteration of each compiled method, by driver (``jacobian_update``,
#: which applies the rule, or an update of its own): the table's ``update`` column.
UPDATES = {row.driver: getattr(_steps, str(row.update)) for row in TABLE if row.update is not None}


#: The drivers, by ``(method, swing_twist, collision)``, into which the small kernels
#: of an iteration are inlined (``_compile.inline_hot``): the default method's on plain
#: chains and floating bases, where per-solve time is measured. Every other driver calls
#: them: inlined into all, the cold ``kinetree warmup`` took twice as long (206 -> 112 s
#: measured; inlined, the swing-twist driver compiles 20 s longer for a humanoid solve
#: 3 % faster: docs/design.md, the loop).
HOT = {("dls", False, False)}


def driver(method: str, swing_twist: bool, collision: bool = False) -> Any:
    """The compiled driver of ``method`` (``dls``, ``pinv``, ``transpose``, ``sdls``,
    ``ccd``), with or without the swing-twist projection; ``collision``: the damped
    least-squares step as a QP with distance rows (:mod:`._collide`; ``dls`` only)."""
    return cached_driver(method, bool(swing_twist), bool(collision))


@functools.cache
def cached_driver(method: str, swing_twist: bool, collision: bool) -> Any:
    """:func:`driver` for arguments that are already bools (the per-call path)."""
    tag = (
        method
        + ("_swing_twist" if swing_twist else "")
        + ("_collision" if collision else "")
        + "_"
        + kernel_digest()[:10]
    )
    if collision:
        update = _collide.collision_update
    elif method not in RULES:
        update = UPDATES[method]
    else:
        update = variant(UPDATES[method], f"jacobian_update_{method}", apply_rule=RULES[method])
    # A loop that allocates nothing runs without numba's reference counting: every array
    # it binds would otherwise cost atomic increments per iteration (measured: 20.3 ->
    # 12.0 us per Panda solve). The SVD rules allocate, so their drivers keep it; the
    # swing-twist projection works in the loop's scratch (``Work.st``) and does not.
    flags = {} if ROWS[method].allocates else {"_nrt": False}
    if (method, swing_twist, collision) in HOT:
        HOT_CALLERS.add(f"solve_one_{tag}")
    one = variant(
        _loop.solve_one,
        f"solve_one_{tag}",
        flags,
        update=update,
        SWING_TWIST_ON=swing_twist,
        COLLISION_ON=collision,
    )
    # The driver is the range loop itself, without a wrapper around it: numba optimises
    # and emits every caller's module with all it calls linked in, so each level over the
    # loop cost a whole-program LLVM pass (2.3 s of a 21 s cold compile).
    # The range loop allocates nothing either (its scratch comes from the caller), so it
    # runs without reference counting where the loop does: 1.1-1.4 us less per call.
    return variant(
        _loop.solve_range,
        f"solve_range_{tag}",
        {"nogil": True, **flags},
        solve_one=one,
        COLLISION_ON=collision,
    )
