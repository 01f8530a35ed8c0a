"""CUDA kernels: thin launch wrappers around the CPU kernels' own per-item source.

Each kernel here is a few lines that give one thread its scratch (``cuda.local.array``,
sized by compile-time constants bound per model) and call the shared source, compiled
for the device by :mod:`._translate`: ``fk_nodes`` and ``jacobian_add`` from
``kinematics._kernels``, and for IK ``ik.kernel.solve_one`` with the method's update
bound in, as ``ik.kernel.driver`` binds it for a CPU driver; with collision checks, its
collision variant (``COLLISION_ON``, the update ``ik.kernel.collision_update``: the
step as a QP with distance rows), the robot's spheres constants and the world's
obstacles arguments of the kernel.

* **IK: persistent threads.** A launch fills the GPU once; each thread takes the next
  problem from an atomic counter until none is left. Problems take from 2 to thousands
  of iterations (restarts), so with one problem per thread a warp would run as long as
  its slowest member; here a thread that finishes early takes more work, and only the
  last problems of a batch leave lanes idle.
* **FK and Jacobians**: one thread per configuration, grid-stride loop.

FK and Jacobian kernels are made on first use per model size, IK kernels per method and
template (:func:`ik_kernel`), and kept for the process.
"""

from __future__ import annotations

import functools
import hashlib
import os
from typing import Any

import numpy as np

from .._compile import kernel_digest
from ..collision.layout import LINK_SIZE, OBSTACLE_SIZE, SPHERE_SIZE
from ..errors import InvalidValueError, UnsupportedError
from ..ik import kernel as IK
from ..ik import method_table
from ..ik.kernel import layout as L
from ..ik.kernel.layout import (
    R_ITERATIONS,
    R_MIN_DISTANCE,
    R_REACHABLE,
    R_RESTARTS,
    R_STATUS,
    ST_OK,
    Collision,
    carve,
    carve_collision,
    read_config,
)
from ..ik.kernel.layout import unpack as unpack_buffers
from ..ik.result import is_bad_input
from ..kinematics._kernels import fk_nodes, jacobian_add, to_homogeneous
from ..kinematics.layout import F_SIZE
from ._translate import device, kernel

__all__ = ["fk_kernel", "ik_kernel", "jacobian_kernel", "split_kernel"]

# Bound per kernel (compile-time constants of the local arrays) and replaced by device
# functions when a kernel is made; these placeholders only name them.
N_NODES = NQ = NV = NA = N_ROWS = N_TARGETS = SCRATCH = SRC_ROWS = SRC_COLS = 1
FDATA = IDATA = TGT_I = ROWS = np.zeros((0, 0))
NODES = CFG = ICFG = np.zeros(0)
# The collision block (collision-aware kernels only; ``COLLIDE`` prunes it from the others):
# the robot's tables, the pairs and the scalars as constants (the world's obstacles are
# arguments), the sizes of its scratch (floats after the plain scratch's
# ``SCRATCH_PLAIN`` in the one float array, ints in an array of ``ISCRATCH``).
COLLIDE = False
SCRATCH_PLAIN = ISCRATCH = N_SPHERES = N_LINKS = N_PAIRS = SEEDS = 1
MARGIN = CUTOFF = INFLUENCE = BUFFER = MAX_STEP = 0.0
SPHERES = LINKS = PAIRS = np.zeros((0, 0))
solve_one = IK.solve_one
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
    targets: Any, q0: Any, seed: int, out: Any, counter: Any, obstacles: Any, odata: Any
) -> None:
    # The template's arrays are this kernel's constants: every size, node list, joint type,
    # axis, limit and option folds into the code (see ik_kernel). Each is a constant of
    # its own, in its final shape: a reshape on the GPU goes through an external helper,
    # after which the compiler no longer knows shapes or strides. The world's obstacles
    # (collision kernels only) are arguments: a scene that moves keeps its kernel.
    fdata, idata, nodes, tgt_i, rows = FDATA, IDATA, NODES, TGT_I, ROWS
    cf = read_config(CFG, ICFG, N_TARGETS)
    # The scratch stays one local array carved into views (measured: one local array
    # per field, all of constant shape, unrolls more and needs more registers).
    ws = cuda.local.array(SCRATCH, float64)
    w = carve(ws, N_NODES, NQ, NV, N_ROWS, NA, N_TARGETS)
    if COLLIDE:
        # The collision block as ``layout.read_collision`` reads it on the CPU, from the
        # kernel's constants and the obstacle tables; its scratch after the plain scratch
        # and in ints of its own.
        ck = Collision(MARGIN, CUTOFF, INFLUENCE, BUFFER, MAX_STEP, SEEDS, SPHERES, LINKS,
                       obstacles, odata, PAIRS)  # fmt: skip
        iws = cuda.local.array(ISCRATCH, int64)
        cw = carve_collision(ws[SCRATCH_PLAIN:], iws, N_SPHERES, N_LINKS, N_PAIRS, NV, NQ, NA)
    else:
        # Never read: the branches that would are pruned from this variant (as in
        # ``_loop.solve_range``).
        ck = 0  # type: ignore[assignment]
        cw = 0  # type: ignore[assignment]
    # This thread's problem in arrays of constant shape (the kernel arguments' shapes are
    # only known at run time): a raw 4x4 pose or the encoded target rows, and q0.
    src = cuda.local.array((SRC_ROWS, SRC_COLS), float64)
    qs = cuda.local.array(NQ, float64)
    clock = cuda.local.array(2, int64)
    rng = cuda.local.array(1, uint64)
    shared = q0.shape[0] == 1
    B = out.shape[0]
    b = cuda.atomic.add(counter, 0, 1)
    while b < B:
        r = 0 if shared else b
        for k in range(NQ):
            qs[k] = q0[r, k]
        tb = targets[b]
        for i in range(SRC_ROWS):
            for j in range(SRC_COLS):
                src[i, j] = tb[i, j]
        # no history (record is bound to a no-op): 0 stands for its arrays
        solve_one(fdata, idata, nodes, tgt_i, rows, cf, w, ck, cw, src, qs, seed + b,
                  out[b], 0, 0, clock, rng)  # type: ignore[arg-type]  # fmt: skip
        b = cuda.atomic.add(counter, 0, 1)


def _no_record(w: Any, hist_q: Any, hist_e: Any, row: int) -> int:
    """``_loop.record`` on the GPU, which keeps no history (``record=True`` stays on the
    CPU): the next free row stays 0, as on the CPU without a history."""
    return row


def _split_source(
    out: Any,
    nq: int,
    T: int,
    q: Any,
    pe: Any,
    oe: Any,
    success: Any,
    iterations: Any,
    restarts: Any,
    reachable: Any,
    worst: Any,
    clearance: Any,
) -> None:
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
    if COLLIDE:
        clearance[b] = row[i + R_MIN_DISTANCE]
    if is_bad_input(status):
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
    return kernel(
        _jacobian_source, f"kinetree_jacobian_{n_nodes}", N_NODES=n_nodes, **_cuda_names()
    )


#: The compiled methods that run on the GPU, each with the CPU drivers' step rule
#: (``ik.kernel.RULES``) or update: the method table's rows whose step allocates
#: nothing (``pinv`` and ``sdls`` take an SVD, numba's LAPACK call allocates, and stay
#: on the CPU).
GPU_METHODS = method_table.GPU_METHODS


#: ``KINETREE_GPU_CACHE=1``: keep the IK kernels in numba-cuda's disk cache (named by
#: :func:`ik_key`, so a second process loads instead of compiling). Off by default until
#: it is measured on a GPU (it could not be tried on a machine without a driver).
CACHE_ENV = "KINETREE_GPU_CACHE"


def disk_cache() -> bool:
    """Whether IK kernels go to numba-cuda's disk cache (:data:`CACHE_ENV`)."""
    return os.environ.get(CACHE_ENV, "") == "1"


#: ``KINETREE_GPU_MAX_REGISTERS=N``: cap the IK kernels at ``N`` registers per thread
#: (32-255; ptxas spills what does not fit into local memory); unset, the compiler
#: chooses. More registers per thread, fewer warps per multiprocessor: whether the
#: Panda's 126 registers without spills or a lower cap with spills runs faster is for a
#: GPU to say (``benchmarks/gpu.py --max-registers``, docs/gpu.md).
REGISTERS_ENV = "KINETREE_GPU_MAX_REGISTERS"


def max_registers() -> int | None:
    """The IK kernels' register cap (:data:`REGISTERS_ENV`), or None."""
    text = os.environ.get(REGISTERS_ENV, "").strip()
    if not text:
        return None
    try:
        cap = int(text)
    except ValueError:
        cap = 0
    if not 32 <= cap <= 255:
        raise InvalidValueError(
            f"{REGISTERS_ENV} must be a whole number of registers from 32 to 255, got {text!r}"
        )
    return cap


#: The most constant data one IK kernel compiles in [bytes] (CUDA's constant memory is
#: 64 KiB per module; the rest is left to numba-cuda's own constants).
CONSTANT_BYTES = 60_000

#: Specialised IK kernels made in this process, by :func:`ik_key`.
_IK_KERNELS: dict[str, Any] = {}


def world_range(ibuf: np.ndarray) -> tuple[int, int, int]:
    """Where a collision template's obstacle tables (``obstacles``, then
    ``obstacle_data``; ``layout.write_collision``) sit in its float buffer ``fbuf``
    (``layout.pack``), and where the row count of ``obstacle_data`` sits in ``ibuf``:
    ``(start, stop, count_at)``; ``(0, 0, -1)`` without collision checks. Read from the
    int buffer's header and the collision block's counts, without unpacking."""
    at = ibuf.shape[0] - int(ibuf[L.H_ICFG])  # where icfg starts
    o = int(ibuf[at + L.N_COLLISION])
    if o == 0:
        return 0, 0, -1
    c = at + o
    ns, nl = int(ibuf[c + L.CI_SPHERES]), int(ibuf[c + L.CI_LINKS])
    no, nd = int(ibuf[c + L.CI_OBSTACLES]), int(ibuf[c + L.CI_DATA])
    start = F_SIZE * int(ibuf[L.H_NODES]) + int(ibuf[c + L.CI_FLOATS])
    start += L.CF_SIZE + ns * SPHERE_SIZE + nl * LINK_SIZE
    return start, start + no * OBSTACLE_SIZE + nd * 3, c + L.CI_DATA


def ik_key(method: str, ibuf: np.ndarray, fbuf: np.ndarray, src_shape: tuple[int, ...]) -> str:
    """What an IK kernel is specialised to: the method, the template's two buffers (the
    model, the targets' layout, the options, the robot's collision spheres and the pairs
    to check), the shape of one problem's targets, and the digest of every kernel source
    (as the CPU drivers' names carry it). Not the world's obstacle tables, which are the
    kernel's arguments: their poses, shapes and points (a point cloud of any size) do not
    make another kernel; their number does (it sets the pairs). A register cap
    (:func:`max_registers`) is another kernel too."""
    h = hashlib.sha1(method.encode())
    ib = np.ascontiguousarray(ibuf, dtype=np.int64)
    fb = np.ascontiguousarray(fbuf, dtype=np.float64)
    a, b, count_at = world_range(ib)
    if count_at >= 0:
        ib = ib.copy()
        ib[count_at] = 0
    h.update(ib.tobytes())
    h.update(fb[:a].tobytes())
    h.update(fb[b:].tobytes())
    h.update(repr(tuple(int(s) for s in src_shape)).encode())
    h.update(repr(max_registers()).encode())
    h.update(kernel_digest().encode())
    return h.hexdigest()[:20]


def ik_kernel(method: str, ibuf: np.ndarray, fbuf: np.ndarray, src_shape: tuple[int, ...]) -> Any:
    """The persistent-thread IK kernel of ``method`` (``dls``, ``transpose``, ``ccd``)
    for one template (:func:`kinetree.ik.kernel.layout.pack`'s ``ibuf``, ``fbuf``) and targets
    of shape ``(B, *src_shape)``: ``(targets, q0 (1 or B, nq), seed, out, counter)``.

    The buffers are compiled in as constants: every size, node list, joint type, axis,
    limit and option is known to the compiler, which unrolls the loops over them and
    prunes what the template does not use (measured in docs/gpu.md: 255 registers with
    1.3 KB of spills before, 234 and none with it). A template with other options is
    another kernel. Made once per :func:`ik_key` and process. Raises
    :class:`~kinetree.errors.UnsupportedError` for a template too large for the GPU's
    constant memory."""
    key = ik_key(method, ibuf, fbuf, src_shape)
    hit = _IK_KERNELS.get(key)
    if hit is not None:
        return hit
    tables = unpack_buffers.py_func(ibuf, fbuf)
    fdata, _, _, tgt_i, rows, cfg, icfg = tables
    T = tgt_i.shape[0]
    cf = read_config.py_func(cfg, icfg, T)
    na = int(cf.na)
    n, nq, nv, m = fdata.shape[0], int(icfg[L.N_NQ]), int(icfg[L.N_NV]), rows.shape[0]
    # Swing-twist limits are projected as on the CPU (``Template.has_swing_twist``: limits
    # on and some cone group active). Without them the projection's scratch (``Work.st``,
    # last in ``layout.carve``) is left out: its view is carved empty (or over the
    # collision block's start, unread).
    swing = bool(cf.limits and cf.st_i[0] > 0)
    plain = L.scratch_size(n, nq, nv, m, na, T) - (0 if swing else L.SWING_TWIST_SCRATCH)
    sizes = {
        "N_NODES": n,
        "NQ": nq,
        "NV": nv,
        "NA": na,
        "N_ROWS": m,
        "N_TARGETS": T,
        "SCRATCH": plain,
        "SRC_ROWS": int(src_shape[0]),
        "SRC_COLS": int(src_shape[1]),
    }
    collide = int(icfg[L.N_COLLISION]) != 0
    consts: dict[str, Any] = {}
    if collide:
        block, cfg, icfg = collision_constants(cfg, icfg, nv, nq, na)
        sizes["SCRATCH"] = plain + block.pop("C_FLOATS")
        sizes["SCRATCH_PLAIN"] = plain
        consts.update(block)
    names = ("FDATA", "IDATA", "NODES", "TGT_I", "ROWS", "CFG", "ICFG")
    tables = (*tables[:5], cfg, icfg)
    consts.update({name: np.array(a) for name, a in zip(names, tables, strict=True)})
    size = sum(a.nbytes for a in consts.values() if isinstance(a, np.ndarray))
    if size > CONSTANT_BYTES:
        what, way_out = "the model and targets", ""
        if collide:
            what = "the model, targets and robot's collision spheres"
            way_out = ", or use fewer spheres per link (collision_model(max_spheres=...))"
        raise UnsupportedError(
            f"{what} take {size:,} bytes of the GPU's constant memory, over the "
            f"{CONSTANT_BYTES:,} a kernel may hold (a model of about 300 nodes or more): "
            f"solve it on the CPU{way_out}"
        )
    if collide:
        update = device(IK.collision_update)
    elif method not in IK.RULES:
        update = device(IK.UPDATES[method])
    else:
        update = device(
            IK.UPDATES[method],
            f"jacobian_update_{method}_gpu",
            apply_rule=device(IK.RULES[method]),
        )
    tag = method + ("_swing_twist" if swing else "") + ("_collision" if collide else "")
    one = device(
        IK.solve_one,
        f"solve_one_{tag}_gpu",
        update=update,
        SWING_TWIST_ON=swing,
        COLLISION_ON=collide,
        record=device(_no_record),
    )
    out = kernel(
        _ik_source,
        f"kinetree_ik_{tag}_{key}",
        cache=disk_cache(),
        max_registers=max_registers(),
        solve_one=one,
        COLLIDE=collide,
        **sizes,
        **consts,
        **_cuda_names(),
    )
    if len(_IK_KERNELS) >= 64:
        _IK_KERNELS.clear()
    _IK_KERNELS[key] = out
    return out


def collision_constants(
    cfg: np.ndarray, icfg: np.ndarray, nv: int, nq: int, na: int
) -> tuple[dict[str, Any], np.ndarray, np.ndarray]:
    """The collision block of a template (``layout.write_collision``) as a kernel's
    constants: its scalars, the robot's tables and the pairs each in its own shape (read
    once here, as ``layout.read_collision`` reads them per call on the CPU; the world's
    tables are the kernel's arguments: :func:`world_range`), the sizes of its scratch
    (``C_FLOATS`` floats, ``ISCRATCH`` ints: ``layout.collision_scratch_size``); and
    ``(cfg, icfg)`` without the block, which sits at their ends (the plain readers stop
    before it), so that its tables are not in constant memory twice."""
    ck = L.read_collision.py_func(cfg, icfg)
    ns, nl, npairs = ck.spheres.shape[0], ck.links.shape[0], ck.pairs.shape[0]
    floats, ints = L.collision_scratch_size(ns, npairs, nv, nq, na)
    o = int(icfg[L.N_COLLISION])
    start = int(icfg[o + L.CI_FLOATS])
    block = {
        "MARGIN": float(ck.margin),
        "CUTOFF": float(ck.cutoff),
        "INFLUENCE": float(ck.influence),
        "BUFFER": float(ck.buffer),
        "MAX_STEP": float(ck.max_step),
        "SEEDS": int(ck.seeds),
        "SPHERES": np.array(ck.spheres),
        "LINKS": np.array(ck.links),
        "PAIRS": np.array(ck.pairs),
        "N_SPHERES": ns,
        "N_LINKS": nl,
        "N_PAIRS": npairs,
        "C_FLOATS": max(floats, 1),
        "ISCRATCH": max(ints, 1),
    }
    plain_icfg = icfg[:o].copy()
    plain_icfg[L.N_COLLISION] = 0  # what the constants hold: no block to read
    return block, cfg[:start], plain_icfg


@functools.cache
def split_kernel(collide: bool = False) -> Any:
    """Result rows into the result's arrays, on the device; the largest bad-input
    status into ``worst[0]``; ``collide``: also each problem's clearance [m] into the
    last argument (which the other kernel ignores)."""
    return kernel(
        _split_source,
        "kinetree_ik_split_collision" if collide else "kinetree_ik_split",
        COLLIDE=collide,
        is_bad_input=device(is_bad_input),
        **_cuda_names(),
    )
