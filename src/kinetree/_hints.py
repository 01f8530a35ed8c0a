"""Two things the kernels' source says for the GPU compiler's sake; on the CPU each is
what it looks like.

* :func:`shaped_view`, the one way compiled code cuts a flat buffer into a matrix. The
  kernels keep their scratch and their packed tables in flat arrays and take matrices
  out of them as views (``ik.layout.carve``, ``read_config``, the QP's work arrays). On
  the CPU a view is ``buf[offset:offset + size].reshape(shape)``. On a GPU that reshape
  hides the view's shape from the compiler: numba lowers it to a call of an external C
  helper (``numba_attempt_nocopy_reshape``) that takes the new shape by address, so the
  shape is a run-time value after it, even where it was a constant before. A kernel
  specialised to its sizes then keeps every general branch the sizes would prune (the
  IK kernel kept three linear solvers it never runs for one 6D target) and carries the
  shapes in registers.
* :func:`rolled`, a loop bound the GPU compiler may not unroll by. NVVM unrolls every
  loop whose trip count it knows, and a fully unrolled loop is scheduled wide: in the
  6 x 7 Gram sum of ``ik._linalg.damped_solve6`` it held two columns' loads in flight
  beside the 21 sums (the IK kernel's peak: 130 registers; rolled, 126 and no spills);
  ``ik.layout.carve`` gives the per-target views their length through it, so loops over a
  whole body's targets stay loops (the G1 kernel: 255 registers and 524 B of spills
  unrolled over its four targets, 184 and none rolled).

:mod:`kinetree.gpu._translate` swaps each for a device intrinsic, by identity, where it
swaps the clock: the view built from the buffer's pointer, the offset and the shape with
C-order strides, every number visible to the compiler; the bound passed through an empty
``mov`` the optimizer cannot see through.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

__all__ = ["rolled", "shaped_view"]


@njit(cache=True, inline="always")
def shaped_view(buf: np.ndarray, offset: int, shape: Any) -> np.ndarray:
    """The C-contiguous view of ``buf[offset:offset + prod(shape)]`` (a 1-D contiguous
    array) with the integer tuple ``shape``; no copy."""
    size = 1
    for s in shape:
        size *= s
    return buf[offset : offset + size].reshape(shape)


@njit(cache=True, inline="always")
def rolled(n: int) -> int:
    """``n`` (a loop's trip count); on the GPU a value the compiler cannot see, so the
    loop is not unrolled by it."""
    return n
