"""Computing a reachability map: voxels in the reach sphere x orientations, solved by IK.

The grid is centred on the *pivot*, the first point on the frame's chain that no active
joint moves (the Panda's shoulder), with a voxel centred on it; the sphere around it of
radius "link lengths summed" (the bound IK uses to call a target out of reach) holds
every reachable point, so voxels whose centre lies outside are 0 without a solve.
Each (voxel, orientation) pair is one IK problem: the frame at the voxel centre with
that orientation, within the joint limits, from the neutral configuration, with
``restarts`` random restarts and no time budget (so a map repeats exactly, and is the
same on one machine, on a GPU or on a cluster). Problem ``p`` of the map (voxel-major)
draws its restarts from ``seed + p``.

The index is a lower bound: a pose IK missed within its restarts counts as unreachable.
On the Panda (0.25 m grid, 50 orientations) the mean index over reachable voxels is
0.605 with no restarts, 0.739 with 5, 0.757 with 10 (the default) and 0.763 with 30,
at 1x, 1.5x, 2.8x and 6.2x the time.
"""

from __future__ import annotations

import dataclasses
import time
from itertools import pairwise
from typing import Any

import numpy as np

from .._progress import progress as progress_bar
from .._progress import silenced
from .._validate import check_bool, check_keywords, check_memory
from ..distributed._jobs import chunk_bounds, run_job, shared
from ..errors import InvalidValueError, ShapeError, UnsupportedError
from ..ik import IKOptions, Position
from ..ik.options import OPTION_NAMES
from ..ik.problem import reach_bound
from ..kinematics.manipulability import jacobian_manipulability
from ..model import Model
from ._map import ReachabilityMap
from ._orientations import orientation_samples

__all__ = ["CHUNK", "reachability"]

#: IK problems per chunk (a Dask task, or one threaded batch on this machine).
CHUNK = 20_000


def _rotations(orientations: Any) -> np.ndarray:
    """``orientations`` as ``(n, 3, 3)`` rotations; ``(0, 3, 3)`` for position only."""
    if orientations is None or (isinstance(orientations, int | np.integer) and orientations == 0):
        return np.zeros((0, 3, 3))
    if isinstance(orientations, int | np.integer) and not isinstance(orientations, bool):
        return orientation_samples(int(orientations))
    R = np.asarray(orientations, dtype=np.float64)
    if R.ndim != 3 or R.shape[1:] not in ((3, 3), (4, 4)) or len(R) == 0:
        raise ShapeError(
            "orientations must be a count (0: position only), or rotations (n, 3, 3) or "
            f"poses (n, 4, 4), got shape {R.shape}"
        )
    R = np.ascontiguousarray(R[:, :3, :3])
    err = np.abs(R @ R.transpose(0, 2, 1) - np.eye(3)).max(initial=0.0)
    if not np.all(np.isfinite(R)) or err > 1e-6 or np.any(np.linalg.det(R) < 0):
        raise InvalidValueError("orientations must be rotation matrices (orthonormal, det +1)")
    return R


def _pivot(model: Model, frame: str, active: np.ndarray) -> tuple[np.ndarray, float]:
    """The reach sphere: centre [m] (a point no active joint moves) and radius [m]."""
    node = model.frame_index(frame)
    pivot, radius = reach_bound(model, node, active, np.zeros(3))
    if pivot < 0:
        why = "no active joint moves it" if radius == 0 else "its reach is unbounded"
        raise UnsupportedError(f"no reachability map for frame {frame!r}: {why}")
    q = model.neutral()
    path = [int(k) for k in model.ancestors(node)]
    # The pivot, or (a hidden inner node of a multi-axis joint) the first visible node
    # below it that no active joint moves: the same point.
    lo, hi = model.sampling_bounds()
    gen = np.random.default_rng(0)
    Q = np.repeat(q[None], 4, axis=0)
    Q[:, active] = lo[active] + (hi[active] - lo[active]) * gen.random((4, int(active.sum())))
    for k in path[path.index(pivot) :]:
        if model.hidden[k]:
            continue
        p = model.fk(np.concatenate([q[None], Q]), model.node_names[k])[:, :3, 3]
        if np.ptp(p, axis=0).max() < 1e-9:
            return p[0], float(radius)
        break
    raise UnsupportedError(  # pragma: no cover - no built-in model has such a pivot
        f"no reachability map for frame {frame!r}: the first joint that moves it has no "
        "fixed point kinetree can name; pass center= and radius="
    )


def _solve_voxels(
    model: shared,
    frame: str,
    centers: np.ndarray,
    rotations: np.ndarray,
    options: IKOptions,
    device: str | None,
    v_active: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Solve every (voxel, orientation) pair of a chunk: per voxel, the orientations
    solved, the best manipulability and its configuration."""
    m = model.get()
    k, n = len(centers), max(1, len(rotations))
    if len(rotations):
        T = np.zeros((k, n, 4, 4))
        T[:, :, :3, :3] = rotations[None]
        T[:, :, :3, 3] = centers[:, None]
        T[:, :, 3, 3] = 1.0
        target: Any = T.reshape(k * n, 4, 4)
    else:
        target = Position(centers)
    extra = {} if device is None else {"device": device}
    with silenced():
        r = m.ik(target, frame, options=options, **extra)
    ok = np.asarray(r.success).reshape(k, n)
    q = np.asarray(r.q).reshape(k, n, m.nq)
    w = np.full((k, n), -1.0)
    if ok.any():
        J = m.jacobian(q[ok], frame)[:, : 6 if len(rotations) else 3][:, :, v_active]
        w[ok] = jacobian_manipulability(J)
    best = np.argmax(w, axis=1)
    w_best = np.maximum(w[np.arange(k), best], 0.0)
    any_ok = np.any(ok, axis=1)
    q_best = np.where(any_ok[:, None], q[np.arange(k), best], m.neutral()[None])
    return ok.sum(axis=1), w_best, q_best


def _solve_on_device(
    model: shared,
    frame: str,
    centers: np.ndarray,
    rotations: np.ndarray,
    options: IKOptions,
    device: str | None,
    v_active: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_solve_voxels` on the GPU end to end (:func:`kinetree.gpu.reach_voxels`):
    only the voxel centres cross to it and only the per-voxel results come back."""
    from ..gpu import reach_voxels

    return reach_voxels(model.get(), frame, centers, rotations, options, v_active)


def reachability(
    model: Model,
    frame: str | None = None,
    resolution: float = 0.05,
    orientations: Any = 50,
    *,
    restarts: int = 10,
    seed: int = 0,
    active: Any = None,
    client: Any = None,
    device: str | None = None,
    chunk_size: int | None = None,
    progress: bool | None = None,
    center: Any = None,
    radius: float | None = None,
    box: Any = None,
    **ik_options: Any,
) -> ReachabilityMap:
    """The reachability map of ``frame``: per voxel, the fraction of ``orientations``
    solved and the best manipulability (see :class:`ReachabilityMap`).

    Args:
        frame: the frame mapped (default: the first end effector).
        resolution: voxel edge [m].
        orientations: how many rotations to try per voxel (spread evenly over SO(3):
            :func:`orientation_samples`), your own ``(n, 3, 3)`` rotations (e.g. only
            top-down grasps: a capability map for them), or 0 for position only.
        restarts: IK restarts per problem (the index is a lower bound; more restarts,
            more time, a slightly higher index).
        seed: seed of the restarts (problem ``p`` uses ``seed + p``).
        active: the joints that may move (names, groups or presets; None: all).
        client: None solves on this machine (every core); a ``distributed.Client`` or a
            scheduler address solves on a Dask cluster (:mod:`kinetree.distributed`).
        device: ``"cuda"``: the GPU. Here (``client`` None) the whole map runs on it,
            targets, IK, Jacobians, manipulability and the per-voxel reduction, and only
            per-voxel results come back (models with coupled coordinates or quaternion
            joints: IK on the GPU, the rest on the host); on Dask, passed to each
            worker's ``model.ik``.
        chunk_size: IK problems per chunk (whole voxels: ``chunk_size // n`` voxels of
            ``n`` orientations each); None: :data:`CHUNK` (20,000), or 2**21 on the GPU
            here (:data:`kinetree.gpu.REACH_CHUNK`).
        progress: a bar on stderr after 2 s; None: only on a terminal.
        center, radius: override the reach sphere [m] (default: from the chain).
        box: ``[[xmin, xmax], [ymin, ymax], [zmin, zmax]]`` [m]: solve only the voxels
            whose centre lies in this box (a table top, the plane of a planar arm); the
            others are left at 0 with ``inside`` False.
        **ik_options: other :class:`~kinetree.ik.IKOptions` fields (``tol``, ``method``,
            ``time_budget`` (default None: unlimited, so maps repeat), ...).
    """
    t0 = time.perf_counter()
    check_keywords(ik_options, OPTION_NAMES, "reachability")
    check_bool(progress, "progress", none=True)
    if isinstance(resolution, bool) or not isinstance(resolution, int | float | np.floating):
        raise InvalidValueError(f"resolution must be a length in m, got {resolution!r}")
    if not (np.isfinite(resolution) and resolution > 0):
        raise InvalidValueError(f"resolution must be > 0 m, got {resolution!r}")
    frame = frame if frame is not None else model.end_effectors[0]
    model.frame_index(frame)
    opts = IKOptions(
        **{"time_budget": None, **ik_options}, restarts=restarts, seed=seed, active=active
    )
    if opts.record or opts.pin or opts.rng is not None:
        raise InvalidValueError("record=, pin= and rng= are not options of a map")
    q_active = model.active_mask(opts.active)
    R = _rotations(orientations)
    if center is None or radius is None:
        c0, r0 = _pivot(model, frame, q_active)
        center = c0 if center is None else center
        radius = r0 if radius is None else radius
    c = np.asarray(center, dtype=np.float64)
    if c.shape != (3,) or not np.all(np.isfinite(c)):
        raise ShapeError(f"center must be 3 finite numbers [m], got {center!r}")
    if not (np.isfinite(radius) and radius > 0):
        raise InvalidValueError(f"radius must be > 0 m, got {radius!r}")
    K = int(np.ceil(radius / resolution - 1e-9))
    # Per voxel: its centre, the grid's coordinates and distance as it is built, the
    # index, the manipulability and the best configuration (float64 each).
    check_memory(
        (2 * K + 1) ** 3 * 8 * (9 + model.nq),
        f"a map of {(2 * K + 1) ** 3:,} voxels (resolution {resolution:g} m over a reach "
        f"of {radius:.3g} m)",
        "choose a coarser resolution",
    )
    origin = c - K * resolution
    steps = resolution * np.arange(-K, K + 1)
    grid = np.stack(np.meshgrid(steps, steps, steps, indexing="ij"), axis=-1)
    inside = np.linalg.norm(grid, axis=-1) <= radius + 1e-9
    if box is not None:
        b = np.asarray(box, dtype=np.float64)
        if b.shape != (3, 2) or np.any(np.isnan(b)) or np.any(b[:, 0] > b[:, 1]):
            raise ShapeError(f"box must be [[xmin, xmax], [ymin, ymax], [zmin, zmax]], got {box!r}")
        p = c + grid
        inside &= np.all((p >= b[:, 0] - 1e-9) & (p <= b[:, 1] + 1e-9), axis=-1)
    centers = (c + grid[inside]).astype(np.float64)

    n = max(1, len(R))
    # One chunk holds at least one voxel's n problems: targets, seeds and results.
    check_memory(
        n * 8 * (40 + 4 * model.nq), f"{n:,} orientations per voxel", "ask for fewer orientations"
    )
    # On the GPU here the whole chunk stays on the device (models whose IK writes
    # coupled coordinates on the host, or whose Jacobians the GPU does not take, keep
    # the host path with IK on the GPU).
    solve, default_chunk = _solve_voxels, CHUNK
    if client is None and device is not None and not model.couplings and model.nq == model.nv:
        from ..gpu import REACH_CHUNK, check_device

        if check_device(device) == "cuda":
            solve, default_chunk = _solve_on_device, REACH_CHUNK
    per_chunk = max(1, int(default_chunk if chunk_size is None else chunk_size) // n)
    bounds = chunk_bounds(len(centers), per_chunk)
    handle = shared(model)
    v_active = model.qv.v_of_coordinates(np.flatnonzero(q_active))
    chunks = [
        (
            handle,
            frame,
            centers[a:b],
            R,
            dataclasses.replace(opts, seed=seed + int(a) * n),
            device,
            v_active,
        )
        for a, b in pairwise(bounds)
    ]
    sizes = (np.diff(bounds) * n).tolist()
    if client is None:
        parts = []
        with progress_bar(int(sum(sizes)), "reach-map", show=progress) as tick:
            for args, size in zip(chunks, sizes):
                parts.append(solve(*args))
                tick(size)
    else:
        parts = run_job(client, _solve_voxels, chunks, sizes, "reach-map", progress)
    shape = inside.shape
    index = np.zeros(shape)
    best = np.zeros(shape)
    q_best = np.broadcast_to(model.neutral(), (*shape, model.nq)).copy()
    if parts:
        index[inside] = np.concatenate([p[0] for p in parts]) / n
        best[inside] = np.concatenate([p[1] for p in parts])
        q_best[inside] = np.concatenate([p[2] for p in parts])
    settings = {
        "restarts": restarts,
        "seed": seed,
        "tol": list(opts.tol),
        "method": opts.method,
        "time_budget": opts.time_budget,
        "active": list(opts.active or []),
        "device": device or "cpu",
        "where": "local" if client is None else "dask",
        "problems": int(sum(sizes)),
        "elapsed": time.perf_counter() - t0,
    }
    return ReachabilityMap(
        index=index,
        manipulability=best,
        q_best=q_best,
        inside=inside,
        origin=origin,
        resolution=float(resolution),
        center=c,
        radius=float(radius),
        orientations=R,
        model=model.name,
        frame=frame,
        settings=settings,
    )
