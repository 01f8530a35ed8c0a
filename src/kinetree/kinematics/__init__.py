"""Forward kinematics and geometric Jacobians, batched over leading dimensions of ``q``.

The public functions validate once and hand plain arrays to the compiled kernels
in :mod:`kinetree.kinematics._kernels`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._validate import as_array
from ..errors import ShapeError
from ..model import Model
from . import _kernels

__all__ = ["fk", "fk_all", "jacobian", "needed_nodes"]


def needed_nodes(model: Model, frames: np.ndarray) -> np.ndarray:
    """Sorted node indices on the paths from the root to ``frames`` (what FK must visit)."""
    return _needed(model, tuple(int(f) for f in frames))


def _needed(model: Model, frames: tuple[int, ...]) -> np.ndarray:
    cache: dict[tuple[int, ...], np.ndarray] = model.__dict__.setdefault("_needed_nodes", {})
    out = cache.get(frames)
    if out is None:
        keep = np.zeros(model.n_nodes, dtype=bool)
        for f in frames:
            keep[model.ancestors(f)] = True
        out = np.nonzero(keep)[0].astype(np.int64)
        out.setflags(write=False)
        cache[frames] = out
    return out


def _frame_array(model: Model, node: int) -> np.ndarray:
    cache: dict[int, np.ndarray] = model.__dict__.setdefault("_frame_arrays", {})
    out = cache.get(node)
    if out is None:
        out = np.array([node], dtype=np.int64)
        out.setflags(write=False)
        cache[node] = out
    return out


def _fk_kernel(n: int) -> Any:
    """One row at a time for small batches; blocked, vectorised and threaded for large."""
    return _kernels.fk_batch_blocked if n >= _kernels.PARALLEL_MIN else _kernels.fk_batch_serial


def _as_q(model: Model, q: ArrayLike) -> tuple[np.ndarray, tuple[int, ...]]:
    qa = as_array(q, "q", (model.dof,))
    batch = qa.shape[:-1]
    return np.ascontiguousarray(qa.reshape(int(np.prod(batch, dtype=np.int64)), model.dof)), batch


def fk(model: Model, q: ArrayLike, frame: str | None = None) -> np.ndarray:
    """World pose ``(..., 4, 4)`` of ``frame`` (default: the first end effector)."""
    node = model.frame_index(frame)
    Q, batch = _as_q(model, q)
    fdata, idata = model.packed
    frames = _frame_array(model, node)
    out = _fk_kernel(Q.shape[0])(Q, fdata, idata, _needed(model, (node,)), frames)
    return out.reshape(*batch, 4, 4)


def fk_all(model: Model, q: ArrayLike) -> np.ndarray:
    """World poses ``(..., n_frames, 4, 4)`` of every frame, in ``model.frame_names`` order."""
    Q, batch = _as_q(model, q)
    fdata, idata = model.packed
    frames = np.array([model.frame_index(f) for f in model.frame_names], dtype=np.int64)
    nodes = np.arange(model.n_nodes, dtype=np.int64)
    out = _fk_kernel(Q.shape[0])(Q, fdata, idata, nodes, frames)
    return out.reshape(*batch, len(frames), 4, 4)


def jacobian(
    model: Model, q: ArrayLike, frame: str | None = None, point: ArrayLike | None = None
) -> np.ndarray:
    """Geometric Jacobian ``(..., 6, dof)`` in the world frame.

    Rows 0-2 map joint velocities to the linear velocity [m/s] of the frame
    origin (or of ``point``, given in the frame's coordinates [m]); rows 3-5 to
    the angular velocity [rad/s]. Revolute column ``[a x (p - r); a]``,
    prismatic ``[a; 0]`` (seed 000, section 2.4).
    """
    node = model.frame_index(frame)
    Q, batch = _as_q(model, q)
    off = np.zeros(3)
    if point is not None:
        off = as_array(point, "point", (3,))
        if off.shape != (3,):
            raise ShapeError(f"point must be one offset of shape (3,), got {off.shape}")
    fdata, idata = model.packed
    big = Q.shape[0] >= _kernels.PARALLEL_MIN
    kernel = _kernels.jacobian_batch if big else _kernels.jacobian_batch_serial
    out = kernel(Q, fdata, idata, _needed(model, (node,)), node, off)
    return out.reshape(*batch, 6, model.dof)
