"""CUDA kernels: thin launch wrappers around the CPU kernels' own per-item source.

Each kernel here is a few lines that give one thread its scratch (``cuda.local.array``,
sized by compile-time constants bound per model) and call the shared source, compiled
for the device by :mod:`._translate`: ``fk_nodes`` and ``jacobian_add`` from
``kinematics._kernels``, and for IK ``ik._loop.solve_one`` with the method's update
bound in, as ``ik._drivers`` binds it for a CPU driver.

* **IK: persistent threads.** A launch fills the GPU once; each thread takes the next
  problem from an atomic counter until none is left. Problems take from 2 to thousands
  of iterations (restarts), so with one problem per thread a warp would run as long as
  its slowest member; here a thread that finishes early takes more work, and only the
  last problems of a batch leave lanes idle.
* **FK and Jacobians**: one thread per configuration, grid-stride loop.

Every kernel is made on first use per (method, sizes) and kept for the process.
"""

from __future__ import annotations

import functools
from typing import Any

from ..ik import _loop, _steps
from ..ik.layout import R_ITERATIONS, R_REACHABLE, R_RESTARTS, R_STATUS, ST_OK, carve, read_config
from ..ik.layout import unpack as unpack_buffers
from ..kinematics._kernels import fk_nodes, jacobian_add, to_homogeneous
from ._translate import device, kernel

__all__ = ["fk_kernel", "ik_kernel", "jacobian_kernel", "split_kernel"]

# Bound per kernel (compile-time constants of the local arrays) and replaced by device
# functions when a kernel is made; these placeholders only name them.
N_NODES = 1
SCRATCH = 1
solve_one = _loop.solve_one
cuda: Any = None
float64: Any = None
int64: Any = None
uint64: Any = None


def _fk_source(Q: Any, fdata: Any, idata: Any, nodes: Any, frames: Any, out: Any) -> None:
    W = cuda.local.array((N_NODES, 3, 4), float64)
    b = cuda.grid(1)
    stride = cuda.gridsize(1)
    while b < Q.shape[0]:
        fk_nodes(Q[b], fdata, idata, nodes, W)
        for f in range(frames.shape[0]):
            to_homogeneous(W[frames[f]], out[b, f])
        b += stride


def _jacobian_source(
    Q: Any, fdata: Any, idata: Any, nodes: Any, frame: int, offset: Any, out: Any
) -> None:
    W = cuda.local.array((N_NODES, 3, 4), float64)
    p = cuda.local.array(3, float64)
    b = cuda.grid(1)
    stride = cuda.gridsize(1)
    while b < Q.shape[0]:
        J = out[b]
        for r in range(6):
            for c in range(J.shape[1]):
                J[r, c] = 0.0
        fk_nodes(Q[b], fdata, idata, nodes, W)
        for r in range(3):
            p[r] = (W[frame, r, 0] * offset[0] + W[frame, r, 1] * offset[1]
                    + W[frame, r, 2] * offset[2] + W[frame, r, 3])  # fmt: skip
        jacobian_add(fdata, idata, W, frame, p, J)
        b += stride


def _ik_source(
    ibuf: Any, fbuf: Any, targets: Any, q0: Any, seed: int, out: Any, hist_q: Any,
    hist_e: Any, counter: Any,
) -> None:  # fmt: skip
    fdata, idata, nodes, tgt_i, rows, cfg, icfg = unpack_buffers(ibuf, fbuf)
    T = tgt_i.shape[0]
    cf = read_config(cfg, icfg, T)
    nq = q0.shape[1]
    nv = cf.dof_node.shape[0]
    ws = cuda.local.array(SCRATCH, float64)
    w = carve(ws, fdata.shape[0], nq, nv, rows.shape[0], cf.na, T)
    clock = cuda.local.array(2, int64)
    rng = cuda.local.array(1, uint64)
    shared = q0.shape[0] == 1
    B = out.shape[0]
    b = cuda.atomic.add(counter, 0, 1)
    while b < B:
        qb = q0[0] if shared else q0[b]
        # no collision block on the GPU (COLLISION_ON is False): 0 stands for it
        solve_one(fdata, idata, nodes, tgt_i, rows, cf, w, 0, 0, targets[b], qb, seed + b,  # type: ignore[arg-type]
                  out[b], hist_q, hist_e, clock, rng)  # fmt: skip
        b = cuda.atomic.add(counter, 0, 1)


def _split_source(
    out: Any, nq: int, T: int, q: Any, pe: Any, oe: Any, success: Any, iterations: Any,
    restarts: Any, reachable: Any, worst: Any,
) -> None:  # fmt: skip
    b = cuda.grid(1)
    if b >= out.shape[0]:
        return
    row = out[b]
    for k in range(nq):
        q[b, k] = row[k]
    for t in range(T):
        pe[b, t] = row[nq + t]
        oe[b, t] = row[nq + T + t]
    i = nq + 2 * T
    status = int(row[i + R_STATUS])
    success[b] = status == ST_OK
    iterations[b] = int(row[i + R_ITERATIONS])
    restarts[b] = int(row[i + R_RESTARTS])
    reachable[b] = row[i + R_REACHABLE] != 0.0
    if status > 1:
        cuda.atomic.max(worst, 0, status)


def _cuda_names() -> dict[str, Any]:
    from numba import cuda as numba_cuda
    from numba import float64 as f64
    from numba import int64 as i64
    from numba import uint64 as u64

    return {"cuda": numba_cuda, "float64": f64, "int64": i64, "uint64": u64}


@functools.cache
def fk_kernel(n_nodes: int) -> Any:
    """FK of one configuration per thread: ``(Q (N, nq), fdata, idata, nodes, frames,
    out (N, F, 4, 4))``."""
    return kernel(_fk_source, f"kinetree_fk_{n_nodes}", N_NODES=n_nodes, **_cuda_names())


@functools.cache
def jacobian_kernel(n_nodes: int) -> Any:
    """The Jacobian of one configuration per thread: ``(Q, fdata, idata, nodes, frame,
    offset (3,), out (N, 6, nv))``."""
    return kernel(_jacobian_source, f"kinetree_jacobian_{n_nodes}", N_NODES=n_nodes,
                  **_cuda_names())  # fmt: skip


#: The compiled methods that run on the GPU, and the update each binds into the loop.
#: ``pinv`` and ``sdls`` take an SVD (numba's LAPACK call allocates) and stay on the CPU.
GPU_METHODS = ("auto", "dls", "transpose", "ccd")


@functools.cache
def ik_kernel(method: str, scratch: int) -> Any:
    """The persistent-thread IK kernel of ``method`` (``dls``, ``transpose``, ``ccd``)
    with ``scratch`` floats of local memory per thread: ``(ibuf, fbuf, targets, q0,
    seed, out, hist_q, hist_e, counter)``."""
    if method == "ccd":
        update = device(_steps.ccd_update)
    else:
        rule = {"dls": _steps.step_dls, "transpose": _steps.step_transpose}[method]
        update = device(_steps.jacobian_update, f"jacobian_update_{method}_gpu",
                        apply_rule=device(rule))  # fmt: skip
    one = device(_loop.solve_one, f"solve_one_{method}_gpu", update=update,
                 SWING_TWIST_ON=False, COLLISION_ON=False)  # fmt: skip
    return kernel(_ik_source, f"kinetree_ik_{method}_{scratch}", SCRATCH=scratch,
                  solve_one=one, **_cuda_names())  # fmt: skip


@functools.cache
def split_kernel() -> Any:
    """Result rows into the result's arrays, on the device; the largest bad-input
    status into ``worst[0]``."""
    return kernel(_split_source, "kinetree_ik_split", **_cuda_names())
