"""A chunk of a reachability map solved on the GPU, from targets to per-voxel results.

:func:`kinetree.workspace.reachability` with ``device="cuda"`` (on this machine, not on
Dask) hands each chunk of voxels here; only the voxel centres go to the GPU and only the
per-voxel results come back. Four launches per chunk, all on the device:

1. :func:`targets_kernel` writes problem ``p = voxel * n + orientation`` (voxel-major,
   as the host path orders them): the pose ``[R_o | c_v]`` ``(B, 4, 4)``, or for a
   position-only map the encoded target row of ``Position(c_v)`` ``(B, 1, TARGET_SIZE)``;
2. the IK batch runs through :mod:`.api`'s GPU-array path (``_launch``, then
   ``_device_result``'s split, whose bad-input check is the 8 bytes that cross to the
   host), with the chunk's options and seed: problem ``p`` draws ``seed + p``;
3. :func:`manipulability_kernel`: for each solved problem, FK and the geometric
   Jacobian of the frame at its ``q`` (``kinematics._kernels.fk_nodes``/``jacobian_add``
   compiled for the device), restricted to the map's rows (6, or 3 for position only) and
   active columns, and its manipulability (:func:`singular_value_product`); -1 for a
   problem not solved;
4. :func:`reduce_kernel`: per voxel, the orientations solved, the best manipulability
   (the first on ties, as ``np.argmax``) and its ``q`` (the neutral configuration when
   none was solved).

The answers are the host path's: the same IK problems, seeds and kernels' source, the
same Jacobian, and the manipulability to round-off (tests/gpu/test_gpu_reach.py).
"""

from __future__ import annotations

import functools
import math
import time
from typing import Any

import numpy as np

from ..ik import Position
from ..ik.kernel import layout as L
from ..ik.kernel.layout import T_POS
from ..ik.options import IKOptions
from ..ik.problem import build_problem
from ..kinematics._kernels import fk_nodes, jacobian_add
from ..model import Model
from . import api
from ._arrays import cuda_runtime
from ._kernels import _cuda_names
from ._translate import device, kernel

__all__ = [
    "CHUNK",
    "manipulability_kernel",
    "reach_voxels",
    "reduce_kernel",
    "singular_value_product",
    "targets_kernel",
]

#: IK problems per chunk of a map on the GPU: large enough to fill one many times over
#: (an H100 runs about 135,000 IK threads at once) and to take the Panda's 5 cm x 50
#: orientations map (1.6 million problems) in one launch, so that the batch's slowest
#: problems are waited for once; small enough to bound its memory (about 350 bytes per
#: problem: target, result row, its split, manipulability; 0.7 GB for a full chunk).
CHUNK = 1 << 21

#: Threads per block of the small kernels here.
THREADS = 128

# Bound per kernel (compile-time constants of the local arrays; see _translate.kernel).
N_NODES = NV = ROWS = NA = TALL = WIDE = 1
cuda: Any = None
float64: Any = None
int64: Any = None
svp: Any = None


def singular_value_product(A: np.ndarray) -> float:
    """The product of the singular values of ``A`` (r, c) with ``r >= c``, overwriting
    ``A``: ``prod_j |R_jj|`` of its Householder QR ``A = Q R``, which equals
    ``sqrt(det(A^T A))``.

    The manipulability of a Jacobian ``J`` (m, n) is the product of its ``min(m, n)``
    singular values (:func:`kinetree.kinematics.jacobian_manipulability`): this with
    ``A = J^T`` when ``m <= n`` (``sqrt(det(J J^T))``) and ``A = J`` when ``m > n``
    (``sqrt(det(J^T J))``). QR works on ``A`` itself; a determinant of the Gram matrix
    by Cholesky or LU would square ``A``'s condition number first, and lose to numpy's
    SVD a factor ``cond(J)`` in relative accuracy. A column that vanishes (rank below
    ``c``) ends the product at 0. Allocation-free: a device function of the GPU kernels,
    and plain Python on numpy arrays."""
    r, c = A.shape[0], A.shape[1]
    prod = 1.0
    for j in range(c):
        s = 0.0
        for i in range(j, r):
            s += A[i, j] * A[i, j]
        norm = math.sqrt(s)  # |R_jj|: the length of column j below row j
        if norm == 0.0:
            return 0.0
        prod *= norm
        # The reflection v v^T / (v^T v) that maps column j onto e_j, applied to the
        # columns after it; v overwrites column j (not needed again).
        a = A[j, j]
        alpha = -norm if a >= 0.0 else norm  # the sign that keeps v's first entry large
        A[j, j] = a - alpha
        vv = 2.0 * (s - alpha * a)  # |v|^2 = s - 2 alpha a_jj + alpha^2 = 2 (s + norm |a_jj|) > 0
        for k in range(j + 1, c):
            d = 0.0
            for i in range(j, r):
                d += A[i, j] * A[i, k]
            f = 2.0 * d / vv
            for i in range(j, r):
                A[i, k] -= f * A[i, j]
    return prod


def _targets_source(centers: Any, rotations: Any, out: Any) -> None:
    """``out[v * n + o] = [rotations[o] | centers[v]; 0 0 0 1]``."""
    n = rotations.shape[0]
    b = cuda.grid(1)
    stride = cuda.gridsize(1)
    while b < out.shape[0]:
        v = b // n
        o = b - v * n
        T = out[b]
        for i in range(3):
            for j in range(3):
                T[i, j] = rotations[o, i, j]
            T[i, 3] = centers[v, i]
            T[3, i] = 0.0
        T[3, 3] = 1.0
        b += stride


def _positions_source(centers: Any, row: Any, out: Any) -> None:
    """``out[v, 0]`` = the encoded target ``row`` with ``centers[v]`` as its point."""
    b = cuda.grid(1)
    stride = cuda.gridsize(1)
    while b < out.shape[0]:
        dst = out[b, 0]
        for i in range(row.shape[0]):
            dst[i] = row[i]
        for i in range(3):
            dst[T_POS + i] = centers[b, i]
        b += stride


def _manipulability_source(
    Q: Any, success: Any, fdata: Any, idata: Any, nodes: Any, frame: int, v_active: Any, w: Any
) -> None:
    """``w[b]``: the manipulability of the frame's Jacobian rows ``:ROWS`` and columns
    ``v_active`` at ``Q[b]`` where ``success[b]``, else -1."""
    W = cuda.local.array((N_NODES, 3, 4), float64)
    J = cuda.local.array((6, NV), float64)
    A = cuda.local.array((TALL, WIDE), float64)
    p = cuda.local.array(3, float64)
    b = cuda.grid(1)
    stride = cuda.gridsize(1)
    while b < Q.shape[0]:
        if not success[b]:
            w[b] = -1.0
        else:
            for r in range(6):
                for c in range(NV):
                    J[r, c] = 0.0
            fk_nodes(Q[b], fdata, idata, nodes, W)
            for r in range(3):
                p[r] = W[frame, r, 3]
            jacobian_add(fdata, idata, W, frame, p, J)
            for r in range(ROWS):
                for c in range(NA):
                    if ROWS <= NA:
                        A[c, r] = J[r, v_active[c]]
                    else:
                        A[r, c] = J[r, v_active[c]]
            w[b] = svp(A)
        b += stride


def _reduce_source(
    w: Any, success: Any, Q: Any, q_neutral: Any, count: Any, w_best: Any, q_best: Any
) -> None:
    """Per voxel ``v`` (problems ``v * n ...``): solved count, best manipulability (first
    on ties, 0 when none solved) and its ``q`` (``q_neutral`` when none solved)."""
    n = w.shape[0] // count.shape[0]
    v = cuda.grid(1)
    stride = cuda.gridsize(1)
    while v < count.shape[0]:
        start = v * n
        solved = 0
        best = 0
        top = w[start]
        for o in range(n):
            if success[start + o]:
                solved += 1
            if w[start + o] > top:
                top = w[start + o]
                best = o
        count[v] = solved
        w_best[v] = top if top > 0.0 else 0.0
        for k in range(Q.shape[1]):
            q_best[v, k] = Q[start + best, k] if solved > 0 else q_neutral[0, k]
        v += stride


@functools.cache
def targets_kernel() -> Any:
    """Poses of a chunk: ``(centers (k, 3), rotations (n, 3, 3), out (k * n, 4, 4))``."""
    return kernel(_targets_source, "kinetree_reach_targets", **_cuda_names())


@functools.cache
def positions_kernel() -> Any:
    """Position targets of a chunk: ``(centers (k, 3), row (TARGET_SIZE,), out (k, 1,
    TARGET_SIZE))``."""
    return kernel(_positions_source, "kinetree_reach_positions", **_cuda_names())


@functools.cache
def manipulability_kernel(n_nodes: int, nv: int, rows: int, na: int) -> Any:
    """``(Q (B, nq), success (B,), fdata, idata, nodes, frame, v_active (na,), w (B,))``
    for a model of ``n_nodes`` nodes and ``nv`` DoF, Jacobian rows ``:rows`` and ``na``
    active columns."""
    return kernel(
        _manipulability_source,
        f"kinetree_reach_manipulability_{n_nodes}_{nv}_{rows}_{na}",
        N_NODES=n_nodes,
        NV=nv,
        ROWS=rows,
        NA=na,
        TALL=max(rows, na),
        WIDE=min(rows, na),
        svp=device(singular_value_product),
        **_cuda_names(),
    )


@functools.cache
def reduce_kernel() -> Any:
    """``(w (k * n,), success, Q (k * n, nq), q_neutral (1, nq), count (k,), w_best (k,),
    q_best (k, nq))``."""
    return kernel(_reduce_source, "kinetree_reach_reduce", **_cuda_names())


def _launch_shape(cuda: Any, n: int) -> tuple[int, int]:
    return api._grid(cuda, n, THREADS, 16)


def reach_voxels(
    model: Model,
    frame: str,
    centers: np.ndarray,
    rotations: np.ndarray,
    options: IKOptions,
    v_active: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Solve every (voxel, orientation) pair of a chunk on the GPU: per voxel of
    ``centers`` (k, 3) [m], the orientations solved (k,), the best manipulability (k,)
    and its configuration (k, nq), as numpy arrays. ``rotations`` (n, 3, 3), or
    ``(0, 3, 3)`` for position only; ``v_active``: the DoF columns of the Jacobian the
    manipulability reads. For models without coupled coordinates or quaternion joints
    (``nq == nv``); ``workspace.reachability`` keeps the others on its host path."""
    t0 = time.perf_counter()
    opts = api._options(options, {})
    cuda = cuda_runtime()
    node = model.frame_index(frame)
    k, n = len(centers), max(1, len(rotations))
    B = k * n
    centers_d = cuda.to_device(np.ascontiguousarray(centers, dtype=np.float64))
    if len(rotations):
        tpl = api._pose_template(model, frame, opts)
        targets = cuda.device_array((B, 4, 4))
        rot_d = cuda.to_device(np.ascontiguousarray(rotations, dtype=np.float64))
        blocks, threads = _launch_shape(cuda, B)
        targets_kernel()[blocks, threads](centers_d, rot_d, targets)
    else:
        # The template and encoded row of one position target (its weights normalised
        # as the host path's); each problem's row differs only in its point.
        prob = build_problem(model, Position(centers[0]), frame, opts)
        tpl = prob.template
        row = cuda.to_device(np.ascontiguousarray(prob.tgt_f.reshape(L.TARGET_SIZE)))
        targets = cuda.device_array((B, 1, L.TARGET_SIZE))
        blocks, threads = _launch_shape(cuda, B)
        positions_kernel()[blocks, threads](centers_d, row, targets)
    q_neutral = api._neutral(cuda, model)
    out = api._launch(cuda, tpl, targets, q_neutral, opts)
    r = api._device_result(cuda, tpl, out, (B,), out, t0)

    rows = 6 if len(rotations) else 3
    fdata, idata, nodes = api._model_arrays(cuda, model, node)
    va = cuda.to_device(np.ascontiguousarray(v_active, dtype=np.int64))
    w = cuda.device_array(B)
    blocks, threads = _launch_shape(cuda, B)
    manipulability_kernel(model.n_nodes, model.nv, rows, len(v_active))[blocks, threads](
        r.q, r.success, fdata, idata, nodes, node, va, w
    )
    count = cuda.device_array(k, dtype=np.int64)
    w_best = cuda.device_array(k)
    q_best = cuda.device_array((k, model.nq))
    blocks, threads = _launch_shape(cuda, k)
    reduce_kernel()[blocks, threads](w, r.success, r.q, q_neutral, count, w_best, q_best)
    return count.copy_to_host(), w_best.copy_to_host(), q_best.copy_to_host()
