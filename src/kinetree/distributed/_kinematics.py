"""FK and IK batches on a Dask cluster, chunk by chunk, identical to the local batch.

Each chunk is one task that calls :meth:`Model.fk` or :meth:`Model.ik` on its slice of
the batch, so a worker runs it on every core (kinetree's threaded batch) or on its GPU
(``device="cuda"``). The IK seed of chunk ``[a, b)`` is ``seed + a``: problem ``k``
of the batch draws its restarts from ``seed + k`` as in the local batch, so the
results are the same bit for bit (while the per-solve ``time_budget`` is not what
stops a solve: a wall clock differs between machines).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Mapping
from itertools import pairwise
from typing import Any

import numpy as np

from .._progress import silenced
from .._validate import as_array, check_bool, check_keywords
from ..errors import InvalidValueError, ShapeError, UnsupportedError
from ..ik import Direction, IKOptions, IKResult, Orientation, Pose, Position
from ..ik.options import OPTION_NAMES
from ..ik.result import make_result
from ..model import Model
from ._client import connected
from ._jobs import chunk_bounds, run_job, shared

__all__ = ["FK_CHUNK", "IK_CHUNK", "fk", "ik"]

#: Targets per IK task by default: ~0.2 s of Panda solves on 2 cores, ~60 ms on 16
#: (the scheduler's ~1 ms per task stays below 2 %).
IK_CHUNK = 20_000
#: Configurations per FK task by default.
FK_CHUNK = 250_000


def _is_dask(a: Any) -> bool:
    return type(a).__module__.startswith("dask.array")


def _flat(a: Any, tail: tuple[int, ...], what: str) -> tuple[Any, tuple[int, ...]]:
    """``a`` (numpy-like or a Dask array) as ``(B, *tail)`` and its batch shape (``()``
    for a single one, as ``model.ik`` and ``model.fk`` take it)."""
    if not _is_dask(a):
        a = as_array(a, what, finite=False)
    if a.ndim < len(tail) or tuple(a.shape[a.ndim - len(tail) :]) != tail:
        want = ", ".join(("...", *map(str, tail)))
        raise ShapeError(f"{what} must have shape ({want}), got {tuple(a.shape)}")
    if any(not math.isfinite(n) for n in a.shape):
        raise ShapeError(f"{what} has unknown chunk sizes; call .compute_chunk_sizes() first")
    batch = tuple(int(n) for n in a.shape[: a.ndim - len(tail)])
    B = math.prod(batch)
    if B == 0:
        raise InvalidValueError(f"{what} is an empty batch (shape {tuple(a.shape)})")
    return a.reshape((B, *tail)), batch


def _target_array(targets: Any) -> Any:
    """The array of ``targets``: a plain :class:`Position` or :class:`Pose` (no mask,
    weight or point) is unwrapped; any other target object is refused, naming it."""
    if isinstance(targets, Position | Pose):
        extras = [
            f.name
            for f in dataclasses.fields(targets)
            if f.name not in ("xyz", "T") and getattr(targets, f.name) is not None
        ]
        if not extras:
            return targets.xyz if isinstance(targets, Position) else targets.T
        what = f"a {type(targets).__name__} with {', '.join(extras)}"
    elif isinstance(targets, Orientation | Direction | Mapping):
        what = f"a {type(targets).__name__} of targets"
    else:
        return targets
    raise UnsupportedError(
        f"kinetree.distributed.ik takes poses (..., 4, 4) or positions (..., 3) [m] of one "
        f"frame (or a plain Position or Pose of them), not {what}: solve those with model.ik"
    )


def _blocks(c: Any, a: Any, bounds: np.ndarray) -> list[Any]:
    """The slices ``a[bounds[i]:bounds[i + 1]]``: numpy views, or for a Dask array
    futures of its blocks rechunked to the same bounds (computed on the workers from the
    array's graph, so a lost worker's blocks are recomputed, not lost)."""
    pairs = pairwise(bounds)
    if not _is_dask(a):
        return [np.ascontiguousarray(a[i:j]) for i, j in pairs]
    sizes = tuple(int(n) for n in np.diff(bounds))
    rechunked = a.rechunk((sizes, *[(int(n),) for n in a.shape[1:]]))
    return list(c.compute(list(rechunked.to_delayed().ravel())))


def _fk_chunk(model: shared, q: np.ndarray, frame: str | None, device: str | None) -> np.ndarray:
    extra = {} if device is None else {"device": device}
    with silenced():
        return np.asarray(model.get().fk(np.asarray(q), frame, **extra))


def fk(
    model: Model,
    q: Any,
    frame: str | None = None,
    client: Any = None,
    *,
    chunk_size: int = FK_CHUNK,
    device: str | None = None,
    progress: bool | None = None,
) -> np.ndarray:
    """Poses ``(..., 4, 4)`` of ``frame`` at configurations ``q`` ``(..., nq)`` (numpy or
    Dask array), computed on a Dask cluster in chunks of ``chunk_size``; the same
    numbers as ``model.fk(q, frame)``. ``client``: see :func:`kinetree.distributed.map`;
    ``device`` is passed to ``model.fk`` on the workers."""
    model.frame_index(frame)  # an unknown frame fails here, listing the frames
    check_bool(progress, "progress", none=True)
    Q, batch = _flat(q, (model.nq,), "q")
    bounds = chunk_bounds(Q.shape[0], chunk_size)
    handle = shared(model)
    with connected(client) as c:
        chunks = [(handle, blk, frame, device) for blk in _blocks(c, Q, bounds)]
        parts = run_job(c, _fk_chunk, chunks, np.diff(bounds).tolist(), "fk", progress)
    return np.concatenate(parts).reshape((*batch, 4, 4))


def _ik_chunk(
    model: shared,
    targets: np.ndarray,
    q0: np.ndarray | None,
    frame: str | None,
    options: IKOptions,
    device: str | None,
) -> tuple[np.ndarray, ...]:
    m = model.get()
    targets = np.asarray(targets)
    target = targets if targets.shape[-1] == 4 else Position(targets)
    extra = {} if device is None else {"device": device}
    with silenced():
        r = m.ik(target, frame, q0=None if q0 is None else np.asarray(q0), options=options, **extra)
    return (
        np.asarray(r.q),
        np.asarray(r.success),
        np.asarray(r.position_error),
        np.asarray(r.orientation_error),
        np.asarray(r.iterations),
        np.asarray(r.restarts),
        np.asarray(r.reachable),
        r.frames,
        r.method,
    )


def ik(
    model: Model,
    targets: Any,
    frame: str | None = None,
    client: Any = None,
    *,
    q0: Any = None,
    chunk_size: int = IK_CHUNK,
    device: str | None = None,
    progress: bool | None = None,
    **options: Any,
) -> IKResult:
    """``model.ik(targets, frame, ...)`` on a Dask cluster, in chunks of ``chunk_size``.

    Args:
        targets: poses ``(..., 4, 4)`` or positions ``(..., 3)`` [m], numpy or Dask (one
            pose or point is a batch of shape ``()``); a plain :class:`Position` or
            :class:`Pose` of them (no mask, weight or point) is taken as its array.
        frame: the frame that reaches them (default: the first end effector).
        client: None (the embedded local cluster), a ``distributed.Client`` or a
            scheduler address ``"tcp://host:8786"``.
        q0: None, one configuration ``(nq,)``, or one per target ``(..., nq)`` (numpy or
            Dask, chunked with the targets).
        chunk_size: targets per task (default :data:`IK_CHUNK`).
        device: passed to ``model.ik`` on the workers (``"cuda"``: each worker's GPU).
        progress: a bar on stderr after 2 s; None: only on a terminal.
        **options: every :class:`~kinetree.ik.IKOptions` field (``method``, ``tol``,
            ``restarts``, ``seed``, ...), checked here before anything is sent.

    Returns:
        One :class:`IKResult` with the targets' batch shape, in their order; the same as
        ``model.ik(targets, frame, q0=q0, **options)`` (see the module notes on seeds).
    """
    t0 = time.perf_counter()
    check_keywords(options, OPTION_NAMES, "kinetree.distributed.ik")
    opts = IKOptions(**options)
    if opts.record or opts.pin:
        raise InvalidValueError("record= and pin= are single-solve options; not for a batch")
    check_bool(progress, "progress", none=True)
    model.frame_index(frame)
    targets = _target_array(targets)
    tail = (4, 4) if np.shape(targets)[-1:] == (4,) else (3,)
    P, batch = _flat(targets, tail, "targets")
    bounds = chunk_bounds(P.shape[0], chunk_size)
    Q0 = None
    if q0 is not None and np.ndim(q0) != 1:
        Q0, qbatch = _flat(q0, (model.nq,), "q0")
        if qbatch != batch:
            raise ShapeError(f"q0 has batch shape {qbatch}, the targets {batch}")
    seed = opts.draw_seed()
    handle = shared(model)
    with connected(client) as c:
        tgt_blocks = _blocks(c, P, bounds)
        if Q0 is None:
            q0_blocks: list[Any] = [None if q0 is None else np.asarray(q0, dtype=np.float64)]
            q0_blocks *= len(tgt_blocks)
        else:
            q0_blocks = _blocks(c, Q0, bounds)
        chunks = [
            (handle, tb, qb, frame, dataclasses.replace(opts, seed=seed + int(a), rng=None), device)
            for tb, qb, a in zip(tgt_blocks, q0_blocks, bounds[:-1])
        ]
        parts = run_job(c, _ik_chunk, chunks, np.diff(bounds).tolist(), "ik", progress)
    cols = [np.concatenate([p[k] for p in parts]) for k in range(7)]
    return make_result(
        q=cols[0], success=cols[1], position_error=cols[2], orientation_error=cols[3],
        iterations=cols[4], restarts=cols[5], reachable=cols[6], batch=batch,
        elapsed=time.perf_counter() - t0, frames=parts[0][7], method=parts[0][8],
    )  # fmt: skip
