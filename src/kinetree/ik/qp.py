"""Deprecated home of the QP solver: it is :mod:`kinetree._qp` now.

``from kinetree.ik.qp import qp_solve`` (and the other names) still works for one
release, with a :class:`DeprecationWarning` naming the new place. ``QP_OK`` is
``QP_SOLVED`` there and ``QP_MAX_ITER`` is ``QP_MAX_ITERATIONS``.
"""

from __future__ import annotations

import warnings
from typing import Any

from .. import _qp

#: Old name -> name in :mod:`kinetree._qp`.
_MOVED = {
    "QP_INFEASIBLE": "QP_INFEASIBLE",
    "QP_MAX_ITER": "QP_MAX_ITERATIONS",
    "QP_NOT_CONVEX": "QP_NOT_CONVEX",
    "QP_OK": "QP_SOLVED",
    "qp_iwork_size": "qp_iwork_size",
    "qp_solve": "qp_solve",
    "qp_work_size": "qp_work_size",
}
__all__ = sorted(_MOVED)


def __getattr__(name: str) -> Any:
    if name not in _MOVED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    new = _MOVED[name]
    warnings.warn(
        f"kinetree.ik.qp.{name} is deprecated; use kinetree._qp.{new}",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(_qp, new)


def __dir__() -> list[str]:
    return sorted(__all__)
