"""Deprecated home of the QP solver: it is :mod:`kinetree._qp` now.

``from kinetree.ik.qp import qp_solve`` (and the other names) still works until the
version in :mod:`kinetree._deprecated`'s table, with a :class:`DeprecationWarning` naming
the new place. ``QP_OK`` is ``QP_SOLVED`` there and ``QP_MAX_ITER`` is
``QP_MAX_ITERATIONS``.
"""

from __future__ import annotations

from .. import _deprecated

__getattr__, __dir__ = _deprecated.attributes(__name__)
