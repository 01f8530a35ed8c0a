"""``Model.fk``, ``Model.jacobian`` and ``Model.ik`` with ``device="cuda"``.

Validation is the CPU path's (the same templates, options, limits and result type);
the kernels are the CPU kernels' source compiled for a GPU thread (:mod:`._kernels`).
numpy in, numpy out; GPU arrays in, GPU arrays out, with no copy through the host
(the one exception: 8 bytes that say whether any problem had bad input, so that bad
input raises as on the CPU).
"""

from __future__ import annotations

import dataclasses
import math
import threading
import time
from typing import Any

import numpy as np

from .._cache import PerModel
from .._validate import as_array
from ..errors import InvalidValueError, ShapeError, UnsupportedError
from ..ik.kernel import layout as L
from ..ik.options import IKOptions, resolve
from ..ik.problem import Template, apply_couplings, as_q0, build_problem, cached_template
from ..ik.result import IKResult, is_bad_input
from ..kinematics import needed_nodes, packed
from ..model import Model
from . import _kernels as K
from ._arrays import (
    as_device,
    check_device,
    cuda_runtime,
    is_gpu_array,
    like_input,
    refuse_host_tensor,
)
from ._translate import simulator

__all__ = ["fk", "ik", "jacobian"]

#: Threads per block: IK threads hold a few KB of local scratch and many registers.
IK_THREADS = 64
FK_THREADS = 128

_MODEL_ON_DEVICE: PerModel[Any] = PerModel()


def _grid(cuda: Any, n: int, threads: int, per_sm: int) -> tuple[int, int]:
    """``(blocks, threads)``: enough blocks for ``n`` items, at most ``per_sm`` per
    multiprocessor (the kernels loop over the rest). The simulator runs every thread
    as a Python thread: one small block there."""
    if simulator():
        return 1, max(1, min(n, 4))
    sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
    return launch_shape(n, sms, threads, per_sm)


def launch_shape(n: int, sms: int, threads: int, per_sm: int) -> tuple[int, int]:
    """``(blocks, threads per block)`` for ``n`` items on ``sms`` multiprocessors: blocks
    of ``threads``, at most ``per_sm`` per multiprocessor. A batch too small to give
    every multiprocessor a full block is spread over all of them, in blocks of one warp
    (or of fewer lanes when there are fewer than 32 items per multiprocessor).

    One IK problem is one thread's serial work, so a small batch ends when its slowest
    warp does. Spread, every multiprocessor runs a few problems of its own (1,000
    problems on 132 multiprocessors: 143 blocks of 7 threads, not 16 blocks of 64 on 16
    of them), and a warp waits for the slowest of 7 lanes, not of 32."""
    n = max(1, n)
    if n < sms * threads:
        threads = max(1, min(threads, 32, n // sms))
    return max(1, min(math.ceil(n / threads), sms * per_sm)), threads


def _model_arrays(cuda: Any, model: Model, node: int) -> tuple[Any, Any, Any]:
    """``(fdata, idata, nodes)`` on the GPU, kept per model and frame."""
    hit = _MODEL_ON_DEVICE.get(model, node)
    if hit is None:
        fdata, idata = packed(model)
        nodes = needed_nodes(model, (node,))
        hit = (
            cuda.to_device(fdata),
            cuda.to_device(idata),
            cuda.to_device(np.ascontiguousarray(nodes)),
        )
        _MODEL_ON_DEVICE.put(model, hit, node)
    return hit


def _configurations(cuda: Any, model: Model, q: Any) -> tuple[Any, tuple[int, ...], bool]:
    """``(Q (N, nq) on the GPU, batch shape, whether q was a GPU array)``."""
    if is_gpu_array(q):
        d = as_device(cuda, q, "q", (model.nq,))
        batch = tuple(d.shape[:-1])
        return d.reshape(math.prod(batch), model.nq), batch, True
    qa = as_array(q, "q", (model.nq,))
    batch = qa.shape[:-1]
    Q = np.ascontiguousarray(qa.reshape(math.prod(batch), model.nq), dtype=np.float64)
    return cuda.to_device(Q), batch, False


def fk(model: Model, q: Any, frame: str | None = None, *, device: str = "cuda") -> Any:
    """World pose ``(..., 4, 4)`` of ``frame`` at ``q``, computed on ``device``."""
    if check_device(device) == "cpu":
        return model.fk(q, frame)
    refuse_host_tensor(q, "q", device)
    cuda = cuda_runtime()
    node = model.frame_index(frame)
    Qd, batch, on_gpu = _configurations(cuda, model, q)
    N = Qd.shape[0]
    out = cuda.device_array((N, 1, 4, 4))
    if N:
        fdata, idata, nodes = _model_arrays(cuda, model, node)
        frames = cuda.to_device(np.array([node], dtype=np.int64))
        blocks, threads = _grid(cuda, N, FK_THREADS, 16)
        K.fk_kernel(model.n_nodes)[blocks, threads](Qd, fdata, idata, nodes, frames, out)
    out = out.reshape(*batch, 4, 4)
    return like_input(q, out) if on_gpu else out.copy_to_host()


def jacobian(
    model: Model, q: Any, frame: str | None = None, point: Any = None, *, device: str = "cuda"
) -> Any:
    """Geometric Jacobian ``(..., 6, nv)`` of ``frame`` (or of ``point`` in its
    coordinates [m]) at ``q``, computed on ``device``; see :func:`kinetree.kinematics.jacobian`."""
    if check_device(device) == "cpu":
        return model.jacobian(q, frame, point)
    if model.nq != model.nv:
        raise UnsupportedError(
            "device='cuda' Jacobians are for models without quaternion joints (nq == nv); "
            "the CPU path takes them"
        )
    cuda = cuda_runtime()
    node = model.frame_index(frame)
    off = np.zeros(3)
    if point is not None:
        off = as_array(point, "point", (3,))
        if off.shape != (3,):
            raise ShapeError(f"point must be one offset of shape (3,), got {off.shape}")
    Qd, batch, on_gpu = _configurations(cuda, model, q)
    N = Qd.shape[0]
    out = cuda.device_array((N, 6, model.nv))
    if N:
        fdata, idata, nodes = _model_arrays(cuda, model, node)
        blocks, threads = _grid(cuda, N, FK_THREADS, 16)
        K.jacobian_kernel(model.n_nodes)[blocks, threads](
            Qd, fdata, idata, nodes, node, cuda.to_device(np.ascontiguousarray(off)), out
        )
    out = out.reshape(*batch, 6, model.nv)
    return like_input(q, out) if on_gpu else out.copy_to_host()


# --- IK ------------------------------------------------------------------------------------------


def _options(options: IKOptions | None, kwargs: dict[str, Any]) -> IKOptions:
    if options is None:
        opts = resolve(kwargs)
    elif not isinstance(options, IKOptions):
        raise InvalidValueError(f"options must be an IKOptions, got {type(options).__name__}")
    else:
        opts = dataclasses.replace(options, **kwargs) if kwargs else options
    if opts.method not in K.GPU_METHODS:
        raise UnsupportedError(
            f"method {opts.method!r} does not run on the GPU (the SVD methods and the "
            f"Python ones stay on the CPU); GPU methods are: {', '.join(K.GPU_METHODS)}"
        )
    if opts.record:
        raise UnsupportedError("record=True keeps a history of single solves: use the CPU")
    if opts.pin:
        raise UnsupportedError("pin= is for single solves: use the CPU, or add Pose targets")
    if opts.prior is not None or opts.seeds is not None:
        raise UnsupportedError(
            "prior= and seeds= choose starts on the CPU: solve there (device='cpu'), or give "
            "the GPU the starts as q0="
        )
    return opts


#: The target row of one plain pose (every axis weighed 1, no point offset) as
#: :func:`~kinetree.ik.problem.cached_template` keys it.
_POSE_ROW = np.zeros((1, L.TARGET_SIZE))
_POSE_ROW[:, L.T_W_POS : L.T_W_ROT + 3] = 1.0


def _pose_template(model: Model, frame: str | None, opts: IKOptions) -> Template:
    """The template of one plain pose target on ``frame``, from the IK templates' own
    cache (the one a CPU solve of the same pose target uses)."""
    if frame is not None and not isinstance(frame, str):
        raise InvalidValueError(f"frame must be a frame name, got {frame!r}")
    name = frame if frame is not None else model.end_effectors[0]
    return cached_template(model, (name,), (L.KIND_FRAME,), _POSE_ROW, opts)


def _is_pose_array(target: Any) -> bool:
    if is_gpu_array(target):
        return True
    return (
        type(target) is np.ndarray
        and target.ndim >= 2
        and target.shape[-2:] == (4, 4)
        and target.size > 0
    )


def _pose_problem(
    cuda: Any, model: Model, target: Any, frame: str | None, opts: IKOptions, q0: Any
) -> tuple[Template, Any, Any, tuple[int, ...]]:
    """Pose batches ``(..., 4, 4)`` go to the kernel raw, as the CPU's fast path hands a
    numpy pose: GPU arrays in place; numpy arrays (targets, ``q0``) stay on the host here
    and cross in the launch's one copy (:func:`_staged`). ``q0`` None: the neutral
    configuration, kept on the GPU."""
    if is_gpu_array(target):
        P = as_device(cuda, target, "target", (4, 4))
        batch = tuple(P.shape[:-2]) or (1,)  # a GPU target gives batch-shaped results
    else:
        P = np.ascontiguousarray(target, dtype=np.float64)
        batch = P.shape[:-2]
    B = math.prod(batch)
    if B == 0:
        raise InvalidValueError(f"the batch of target poses is empty (shape {tuple(P.shape)})")
    tpl = _pose_template(model, frame, opts)
    nq = model.nq
    Q0: Any = None
    if is_gpu_array(q0):
        Q0 = _device_q0(cuda, q0, nq, batch)
    elif q0 is not None:
        qa = as_q0(model, q0, batch)
        Q0 = np.ascontiguousarray(qa, dtype=np.float64).reshape(-1, nq)
    return tpl, P.reshape(B, 4, 4), Q0, batch


def _device_q0(cuda: Any, q0: Any, nq: int, batch: tuple[int, ...]) -> Any:
    """The GPU array ``q0`` as ``(1, nq)`` rows (one start for all) or ``(B, nq)`` (one
    per problem of ``batch``), in place."""
    Q0 = as_device(cuda, q0, "q0", (nq,))
    if Q0.ndim == 1:
        return Q0.reshape(1, nq)
    if tuple(Q0.shape[:-1]) != (batch or (1,)):
        raise ShapeError(f"q0 must have shape ({nq},) or {(*batch, nq)}, got {Q0.shape}")
    return Q0.reshape(math.prod(batch), nq)


def _neutral(cuda: Any, model: Model) -> Any:
    hit = _MODEL_ON_DEVICE.get(model, "neutral")
    if hit is None:
        q = np.ascontiguousarray(model.q_neutral, dtype=np.float64).reshape(1, model.nq)
        hit = _MODEL_ON_DEVICE.put(model, cuda.to_device(q), "neutral")
    return hit


def ik(
    model: Model,
    target: Any,
    frame: str | None = None,
    *,
    q0: Any = None,
    options: IKOptions | None = None,
    device: str = "cuda",
    **kwargs: Any,
) -> IKResult:
    """:func:`kinetree.ik.solve` on ``device``: the same targets, options, limits,
    restarts and :class:`~kinetree.ik.IKResult`. Pose batches ``(..., 4, 4)`` given as
    GPU arrays are solved in place and the result's arrays stay on the GPU (of the
    input's kind; ``message`` is then one line, not one per problem)."""
    if check_device(device) == "cpu":
        return model.ik(target, frame, q0=q0, options=options, **kwargs)
    refuse_host_tensor(target, "target", device)
    refuse_host_tensor(q0, "q0", device)
    t0 = time.perf_counter()
    opts = _options(options, kwargs)
    if model.equalities:
        from ..ik.methods.closed_chains import check_closed_chains

        check_closed_chains(model, "IK on the GPU (device=)")
    cuda = cuda_runtime()
    on_gpu = is_gpu_array(target)
    if on_gpu and model.couplings:
        raise UnsupportedError(
            f"model {model.name!r} has coupled coordinates (MJCF joint equalities), which "
            "are written on the host: give the targets as a numpy array, or use the CPU"
        )
    if _is_pose_array(target):
        tpl, targets, Q0, batch = _pose_problem(cuda, model, target, frame, opts, q0)
    else:
        # A GPU q0 stays on the GPU (numpy may not read it at all: a torch CUDA tensor).
        q0_on_gpu = is_gpu_array(q0)
        prob = build_problem(model, target, frame, opts, None if q0_on_gpu else q0)
        tpl, batch = prob.template, prob.batch
        B = math.prod(batch) if batch else 1
        targets = np.ascontiguousarray(
            prob.tgt_f.reshape(B, tpl.n_targets, L.TARGET_SIZE), dtype=np.float64
        )
        if q0_on_gpu:
            Q0 = _device_q0(cuda, q0, model.nq, batch)
        else:
            Q0 = np.ascontiguousarray(prob.q0, dtype=np.float64).reshape(-1, model.nq)
    if on_gpu:
        if not is_gpu_array(Q0):
            Q0 = _neutral(cuda, model) if Q0 is None else cuda.to_device(Q0)
        out = _launch(cuda, tpl, targets, Q0, opts)
        return _device_result(cuda, tpl, out, batch, target, t0)
    rows = _staged(cuda, tpl, targets, Q0, opts)
    if model.couplings:
        apply_couplings(model, rows[:, : model.nq])
    return _host_result(tpl, rows, batch, t0)


def _check_q0(Q0: Any, B: int) -> None:
    if Q0 is not None and Q0.shape[0] not in (1, B):
        raise ShapeError(f"q0 has {Q0.shape[0]} rows for {B} targets")


def _run(
    cuda: Any, tpl: Template, targets: Any, Q0: Any, opts: IKOptions, out: Any, counter: Any
) -> None:
    """Launch the template's kernel over ``targets`` (GPU) into ``out`` (GPU); ``counter``
    (one int64 on the GPU) must be 0."""
    kern = K.ik_kernel(opts.kernel_method, tpl.ibuf, tpl.fbuf, tuple(targets.shape[1:]))
    blocks, threads = _grid(cuda, targets.shape[0], IK_THREADS, 16)
    obstacles, data = _world(cuda, tpl)
    kern[blocks, threads](targets, Q0, opts.draw_seed(), out, counter, obstacles, data)


#: The obstacle tables of collision templates on the GPU, by template (each entry holds
#: its template, so that the id is not reused while it lives).
_WORLDS: dict[int, tuple[Template, Any, Any]] = {}


def _world(cuda: Any, tpl: Template) -> tuple[Any, Any]:
    """``(obstacles, obstacle_data)`` of a collision template on the GPU (copied once per
    template: a scene whose obstacles move is another template, on the same kernel), or
    a placeholder the plain kernels never read."""
    hit = _WORLDS.get(id(tpl))
    if hit is not None and hit[0] is tpl:
        return hit[1], hit[2]
    if tpl.collision is None:
        none = _MODEL_ON_DEVICE.get(tpl.model, "no world")
        if none is None:
            none = _MODEL_ON_DEVICE.put(tpl.model, cuda.to_device(np.zeros((1, 1))), "no world")
        return none, none
    coll = tpl.collision
    obstacles = cuda.to_device(np.ascontiguousarray(coll.obstacles, dtype=np.float64))
    data = cuda.to_device(np.ascontiguousarray(coll.obstacle_data, dtype=np.float64))
    if len(_WORLDS) >= 64:
        _WORLDS.clear()
    _WORLDS[id(tpl)] = (tpl, obstacles, data)
    return obstacles, data


def _launch(cuda: Any, tpl: Template, targets: Any, Q0: Any, opts: IKOptions) -> Any:
    """GPU arrays in, the result rows as a GPU array out."""
    B = targets.shape[0]
    _check_q0(Q0, B)
    out = cuda.device_array((B, L.result_size(tpl.model.nq, tpl.n_targets)))
    counter = cuda.to_device(np.zeros(1, dtype=np.int64))
    _run(cuda, tpl, targets, Q0, opts, out, counter)
    return out


#: Host batches up to this many problems reuse pinned buffers (:class:`_Staging`).
STAGED_MAX = 1 << 16


class _Staging:
    """The buffers of host batches of one size, kept per thread: a pinned host array and
    a GPU array for the inputs (targets, ``q0`` rows, the work counter's 0, in one
    block, so that they cross in one copy) and a pair for the result rows (one copy
    back). Nothing is allocated per call."""

    def __init__(self, cuda: Any, n_in: int, n_out: int) -> None:
        self.host_in = cuda.pinned_array(n_in)
        self.dev_in = cuda.device_array(n_in)
        self.host_out = cuda.pinned_array(n_out)
        self.dev_out = cuda.device_array(n_out)


_STAGING = threading.local()


def _staging(cuda: Any, n_in: int, n_out: int) -> _Staging:
    cache = getattr(_STAGING, "buffers", None)
    if cache is None:
        cache = _STAGING.buffers = {}
    st = cache.get((n_in, n_out))
    if st is None:
        if len(cache) >= 8:
            cache.clear()
        st = cache[n_in, n_out] = _Staging(cuda, n_in, n_out)
    return st


def _staged(cuda: Any, tpl: Template, src: np.ndarray, Q0: Any, opts: IKOptions) -> np.ndarray:
    """Solve the host batch ``src`` (B, ...) from ``Q0`` (host rows, GPU rows, or None for
    the neutral configuration); the result rows as a new host array. Small batches go
    through :class:`_Staging`'s buffers (one copy each way), large ones through fresh
    GPU arrays."""
    B = src.shape[0]
    _check_q0(Q0, B)
    R = L.result_size(tpl.model.nq, tpl.n_targets)
    host_q0 = Q0 is not None and not is_gpu_array(Q0)
    if B > STAGED_MAX:
        targets = cuda.to_device(src)
        Qd = cuda.to_device(Q0) if host_q0 else Q0
        out = _launch(cuda, tpl, targets, _neutral(cuda, tpl.model) if Qd is None else Qd, opts)
        return out.copy_to_host()
    n_src = src.size
    n_q0 = Q0.size if host_q0 else 0
    st = _staging(cuda, n_src + n_q0 + 1, B * R)
    h = st.host_in
    h[:n_src] = src.reshape(-1)
    if host_q0:
        h[n_src : n_src + n_q0] = Q0.reshape(-1)
    h[n_src + n_q0] = 0.0  # the work counter (int64 0 has the bits of 0.0)
    st.dev_in.copy_to_device(h)
    targets = st.dev_in[:n_src].reshape(src.shape)
    if host_q0:
        Qd = st.dev_in[n_src : n_src + n_q0].reshape(Q0.shape)
    else:
        Qd = _neutral(cuda, tpl.model) if Q0 is None else Q0
    counter = st.dev_in[n_src + n_q0 :].view(np.int64)
    out = st.dev_out.reshape(B, R)
    _run(cuda, tpl, targets, Qd, opts, out, counter)
    st.dev_out.copy_to_host(st.host_out)
    return np.array(st.host_out.reshape(B, R))


def _host_result(tpl: Template, out: np.ndarray, batch: tuple[int, ...], t0: float) -> IKResult:
    """The result of the rows ``out``, read as the CPU reads its own (a single solve's
    message names the closest pair when it ended in collision, as on the CPU)."""
    from ..ik._run import NO_HISTORY_E, NO_HISTORY_Q, batch_result, single_result

    if not batch:
        nq, T = tpl.model.nq, tpl.n_targets
        return single_result(tpl, out[0], nq, T, NO_HISTORY_Q, NO_HISTORY_E, 0, t0)
    return batch_result(tpl, out, batch, t0, tpl.collision is not None)


def _device_result(
    cuda: Any, tpl: Template, out: Any, batch: tuple[int, ...], like: Any, t0: float
) -> IKResult:
    from ..ik._run import raise_status

    nq, T = tpl.model.nq, tpl.n_targets
    B = out.shape[0]
    q = cuda.device_array((B, nq))
    pe = cuda.device_array((B, T))
    oe = cuda.device_array((B, T))
    success = cuda.device_array(B, dtype=np.bool_)
    iterations = cuda.device_array(B, dtype=np.int64)
    restarts = cuda.device_array(B, dtype=np.int64)
    reachable = cuda.device_array(B, dtype=np.bool_)
    worst = cuda.to_device(np.zeros(1, dtype=np.int64))
    collide = tpl.collision is not None
    clearance = cuda.device_array(B) if collide else pe  # pe: not written by the plain kernel
    blocks = math.ceil(B / 128)
    if simulator():
        blocks, threads = B, 1
    else:
        threads = 128
    K.split_kernel(collide)[blocks, threads](
        out, nq, T, q, pe, oe, success, iterations, restarts, reachable, worst, clearance
    )
    status = int(worst.copy_to_host()[0])  # 8 bytes: did any problem have bad input?
    if is_bad_input(status):
        raise_status(status, " (a problem of the GPU batch)")

    def shaped(d: Any, *tail: int) -> Any:
        return like_input(like, d.reshape(*batch, *tail))

    message = "solved on the GPU: per-problem outcomes are in success and reachable"
    if collide:
        message += "; clearances [m] in min_distance (closer than the margin: no success)"
    return IKResult(
        q=shaped(q, nq),
        success=shaped(success),
        position_error=shaped(pe, T),
        orientation_error=shaped(oe, T),
        iterations=shaped(iterations),
        restarts=shaped(restarts),
        elapsed=time.perf_counter() - t0,
        message=message,
        reachable=shaped(reachable),
        frames=tpl.frames,
        method=tpl.method,
        min_distance=shaped(clearance) if collide else None,
    )
