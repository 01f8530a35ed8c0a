"""The one way compiled code cuts a flat buffer into a matrix: :func:`shaped_view`.

The kernels keep their scratch and their packed tables in flat arrays and take matrices
out of them as views (``ik.layout.carve``, ``read_config``, the QP's work arrays). On
the CPU a view is ``buf[offset:offset + size].reshape(shape)``. On a GPU that reshape
hides the view's shape from the compiler: numba lowers it to a call of an external C
helper (``numba_attempt_nocopy_reshape``) that takes the new shape by address, so the
shape is a run-time value after it, even where it was a constant before. A kernel
specialised to its sizes then keeps every general branch the sizes would prune (the IK
kernel kept three linear solvers it never runs for one 6D target) and carries the
shapes in registers. :mod:`kinetree.gpu._translate` therefore compiles
:func:`shaped_view` for the device as an intrinsic that builds the view directly: the
same pointer, shape and C-order strides, computed where the compiler sees them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

__all__ = ["shaped_view"]


@njit(cache=True, inline="always")
def shaped_view(buf: np.ndarray, offset: int, shape: Any) -> np.ndarray:
    """The C-contiguous view of ``buf[offset:offset + prod(shape)]`` (a 1-D contiguous
    array) with the integer tuple ``shape``; no copy."""
    size = 1
    for s in shape:
        size *= s
    return buf[offset : offset + size].reshape(shape)
