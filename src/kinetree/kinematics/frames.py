"""Forward kinematics and geometric Jacobians, batched over leading dimensions of ``q``.

The public functions validate once and hand plain arrays to the compiled kernels
in :mod:`kinetree.kinematics._kernels`; :func:`needed_nodes` names the nodes FK must
visit for a set of frames.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._cache import PerModel
from .._threads import run_chunks
from .._validate import as_array, check_memory
from ..errors import ShapeError
from ..model import Model
from . import _kernels
from .layout import packed

__all__ = ["fk", "fk_all", "jacobian", "needed_nodes"]

# Index arrays per model (nodes FK must visit for a set of frames), kept outside the
# frozen model and dropped with it.
_NEEDED: PerModel[np.ndarray] = PerModel(limit=256)


def needed_nodes(model: Model, frames: np.ndarray | tuple[int, ...]) -> np.ndarray:
    """Sorted node indices on the paths from the root to ``frames`` (what FK must visit)."""
    key = tuple(int(f) for f in frames)
    out = _NEEDED.get(model, key)
    if out is None:
        keep = np.zeros(model.n_nodes, dtype=bool)
        for f in key:
            keep[model.ancestors(f)] = True
        out = np.nonzero(keep)[0].astype(np.int64)
        out.setflags(write=False)
        _NEEDED.put(model, out, key)
    return out


def _as_q(model: Model, q: ArrayLike, out_floats: int) -> tuple[np.ndarray, tuple[int, ...]]:
    """``q`` as rows ``(N, nq)`` for the kernels, and its batch shape; a batch whose
    arrays (a contiguous copy of ``q``, its finiteness check and ``out_floats`` float64
    results per row) would not fit is refused before any is built."""
    if type(q) is np.ndarray and q.ndim >= 1:
        # A broadcast view may be small in memory and huge once copied: count first.
        rows = float(np.prod(q.shape[:-1], dtype=np.float64))
        check_memory(
            rows * (9 * q.shape[-1] + 8 * out_floats),
            f"a batch of {int(rows):,} configurations",
            "give fewer configurations per call",
        )
    qa = as_array(q, "q", (model.nq,))
    batch = qa.shape[:-1]
    Q = qa.reshape(int(np.prod(batch, dtype=np.int64)), model.nq)
    # One specialisation per kernel: C-contiguous, writable float64 (a read-only input
    # would otherwise compile a second copy of every kernel).
    return np.require(Q, np.float64, ("C", "W")), batch


def _fk_frames(model: Model, Q: np.ndarray, nodes: np.ndarray, frames: np.ndarray) -> np.ndarray:
    fdata, idata = packed(model)
    N = Q.shape[0]
    out = np.empty((N, frames.shape[0], 4, 4))
    if N < _kernels.PARALLEL_MIN:
        _kernels.fk_rows(Q, fdata, idata, nodes, frames, out, 0, N)
    else:
        # Chunks are whole blocks of the vectorised kernel.
        run_chunks(
            lambda a, b: _kernels.fk_blocked(Q, fdata, idata, nodes, frames, out, a, b),
            N,
            64 * _kernels.BLOCK,
        )
    return out


def fk(model: Model, q: ArrayLike, frame: str | None = None, base: str | None = None) -> np.ndarray:
    """Pose ``(..., 4, 4)`` of ``frame`` (default: the first end effector) in the world,
    or with ``base`` (a frame name) in that frame: ``T_base_frame = T_world_base^-1
    T_world_frame`` at the same ``q`` (what TRAC-IK and MoveIt call the chain's pose).
    """
    node = model.frame_index(frame)
    Q, batch = _as_q(model, q, 16 if base is None else 64)
    if base is None:
        frames = np.array([node], dtype=np.int64)
        out = _fk_frames(model, Q, needed_nodes(model, (node,)), frames)
        return out.reshape(*batch, 4, 4)
    node_base = model.frame_index(base)
    frames = np.array([node_base, node], dtype=np.int64)
    both = _fk_frames(model, Q, needed_nodes(model, (node_base, node)), frames)
    T_world_base, T_world_frame = both[:, 0], both[:, 1]
    R_base_world = np.swapaxes(T_world_base[:, :3, :3], -1, -2)
    out = np.zeros_like(T_world_frame)
    out[:, :3, :3] = R_base_world @ T_world_frame[:, :3, :3]
    out[:, :3, 3] = np.einsum(
        "nij,nj->ni", R_base_world, T_world_frame[:, :3, 3] - T_world_base[:, :3, 3]
    )
    out[:, 3, 3] = 1.0
    return out.reshape(*batch, 4, 4)


def fk_all(model: Model, q: ArrayLike) -> np.ndarray:
    """World poses ``(..., n_frames, 4, 4)`` of every frame, in ``model.frame_names`` order."""
    Q, batch = _as_q(model, q, 16 * len(model.frame_names))
    frames = np.array([model.frame_index(f) for f in model.frame_names], dtype=np.int64)
    nodes = np.arange(model.n_nodes, dtype=np.int64)
    nodes.setflags(write=False)  # as needed_nodes gives them: one kernel signature
    out = _fk_frames(model, Q, nodes, frames)
    return out.reshape(*batch, len(frames), 4, 4)


def jacobian(
    model: Model, q: ArrayLike, frame: str | None = None, point: ArrayLike | None = None
) -> np.ndarray:
    """Geometric Jacobian ``(..., 6, nv)`` in the world frame.

    Rows 0-2 map joint velocities to the linear velocity [m/s] of the frame
    origin (or of ``point``, given in the frame's coordinates [m]); rows 3-5 to
    the angular velocity [rad/s]. Revolute column ``[a x (p - r); a]``,
    prismatic ``[a; 0]`` (seed 000, section 2.4). Columns are the model's DoF
    (:attr:`kinetree.model.QVMaps.v_names`): a quaternion joint's three are its angular velocity in
    its own frame, so ``J @ v`` is the velocity of the motion ``v`` of
    :meth:`Model.integrate`.
    """
    node = model.frame_index(frame)
    Q, batch = _as_q(model, q, 6 * model.nv)
    off = np.zeros(3)
    if point is not None:
        off = as_array(point, "point", (3,))
        if off.shape != (3,):
            raise ShapeError(f"point must be one offset of shape (3,), got {off.shape}")
        off = np.require(off, np.float64, ("C", "W"))
    fdata, idata = packed(model)
    nodes = needed_nodes(model, (node,))
    N = Q.shape[0]
    out = np.zeros((N, 6, model.nv))
    run_chunks(
        lambda a, b: _kernels.jacobian_rows(Q, fdata, idata, nodes, node, off, out, a, b),
        N,
        1024,
    )
    return out.reshape(*batch, 6, model.nv)
