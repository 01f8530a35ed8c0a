"""Fitting spheres that hold a triangle mesh: deep centres, radii just past the surface.

A ball centred at an interior point ``c`` with radius ``depth(c) + t``, where ``depth`` is
the distance from ``c`` to the surface, holds the largest ball inside the solid around
``c`` grown by ``t``: no point of it is farther than ``t`` from the solid. So the spheres
are chosen among such balls, for interior points sampled on a grid (inside where the
generalised winding number says so): greedily, the ball holding the most triangles (all
three corners; the triangles are first cut so no edge exceeds a fraction of the mesh's
size) and interior samples not yet held, until all are held. A sphere holds every corner
of its triangles, hence (being convex) the triangles: the union holds the whole surface
exactly, and the interior at every sample.

The chosen spheres are then refined (:func:`_refine`): each element goes to the sphere
that holds it reaching least beyond the solid, each centre moves (pattern search, staying
inside) to lower its own reach beyond the solid, and each radius shrinks to exactly what
its sphere holds.

``t`` starts at ``max_overshoot``; while the cover needs more than ``max_spheres``
balls it doubles, then is bisected down to the least ``t`` found that fits. Whatever a
finished cover leaves (a thin part with no interior sample near it) goes to the chosen
sphere that needs the least growth to hold it, which may then reach farther than ``t``;
:func:`overshoot` measures the result.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from . import _kernels

__all__ = ["fit_mesh", "inside", "overshoot", "subdivide"]


def fibonacci_directions(n: int) -> np.ndarray:
    """``n`` unit vectors spread evenly over the sphere (a Fibonacci lattice)."""
    k = np.arange(n) + 0.5
    z = 1.0 - 2.0 * k / n
    phi = np.pi * (1.0 + 5.0**0.5) * k
    rho = np.sqrt(1.0 - z * z)
    return np.stack([rho * np.cos(phi), rho * np.sin(phi), z], axis=1)


def subdivide(tris: np.ndarray, max_edge: float) -> np.ndarray:
    """Triangles ``(m, 3, 3)`` cut at the middle of their longest edge until no edge is
    longer than ``max_edge`` [m] (the same surface, in smaller pieces)."""
    out = []
    todo = tris
    for _ in range(64):
        e = np.stack([todo[:, 1] - todo[:, 0], todo[:, 2] - todo[:, 1], todo[:, 0] - todo[:, 2]], 1)
        length = np.linalg.norm(e, axis=2)
        longest = np.argmax(length, axis=1)
        big = length[np.arange(len(todo)), longest] > max_edge
        out.append(todo[~big])
        todo, longest = todo[big], longest[big]
        if len(todo) == 0:
            break
        # Rotate each triangle so its longest edge is corners 0-1, then halve it.
        idx = (longest[:, None] + np.arange(3)[None]) % 3
        t = np.take_along_axis(todo, idx[:, :, None], axis=1)
        mid = 0.5 * (t[:, 0] + t[:, 1])
        todo = np.concatenate(
            [np.stack([t[:, 0], mid, t[:, 2]], 1), np.stack([mid, t[:, 1], t[:, 2]], 1)]
        )
    out.append(todo)
    return np.concatenate(out)


def inside(points: np.ndarray, tris: np.ndarray) -> np.ndarray:
    """Whether each point is inside the mesh: its generalised winding number (the solid
    angles of the triangles seen from it, over 4 pi, by Van Oosterom and Strackee's
    formula) above one half. Works for meshes with small holes too."""
    out = np.empty(len(points), dtype=bool)
    for s in range(0, len(points), 512):
        P = points[s : s + 512]
        a = tris[None, :, 0] - P[:, None]
        b = tris[None, :, 1] - P[:, None]
        c = tris[None, :, 2] - P[:, None]
        la, lb, lc = (np.linalg.norm(v, axis=2) for v in (a, b, c))
        det = np.einsum("pti,pti->pt", a, np.cross(b, c))
        den = (
            la * lb * lc
            + np.einsum("pti,pti->pt", a, b) * lc
            + np.einsum("pti,pti->pt", a, c) * lb
            + np.einsum("pti,pti->pt", b, c) * la
        )
        w = np.arctan2(det, den).sum(axis=1) / (2.0 * np.pi)
        out[s : s + 512] = np.abs(w) > 0.5
    return out


@njit(cache=True, nogil=True)
def _reach(corners: np.ndarray, cand: np.ndarray, out: np.ndarray) -> None:
    """``out[e, c]``: the largest distance [m] from candidate ``c`` (n, 3) to a corner of
    element ``e`` (``corners`` (m, 3, 3))."""
    for e in range(corners.shape[0]):
        for c in range(cand.shape[0]):
            best = 0.0
            for k in range(3):
                d = (
                    (corners[e, k, 0] - cand[c, 0]) ** 2
                    + (corners[e, k, 1] - cand[c, 1]) ** 2
                    + (corners[e, k, 2] - cand[c, 2]) ** 2
                )
                best = max(best, d)
            out[e, c] = math.sqrt(best)


def _cover(reach: np.ndarray, rho: np.ndarray, max_spheres: int) -> list[int] | None:
    """Greedy cover: candidate indices whose balls (radius ``rho``) hold every element
    (``reach[e, c]``: the radius candidate ``c`` needs to hold element ``e``), or None
    when more than ``max_spheres`` are needed. Elements no candidate holds are ignored."""
    held = reach <= rho[None]
    todo = np.any(held, axis=1)
    chosen: list[int] = []
    while np.any(todo):
        if len(chosen) >= max_spheres:
            return None
        c = int(np.argmax(held[todo].sum(axis=0)))
        chosen.append(c)
        todo &= ~held[:, c]
    return chosen


def overshoot(C: np.ndarray, r: np.ndarray, tris: np.ndarray, directions: int = 200) -> float:
    """How far [m] the union of spheres reaches beyond the mesh (module docstring)."""
    dirs = fibonacci_directions(directions)
    P = (C[:, None] + r[:, None, None] * dirs[None]).reshape(-1, 3)
    owner = np.repeat(np.arange(len(C)), directions)
    d_all = np.linalg.norm(P[:, None] - C[None], axis=2) - r[None]
    d_all[np.arange(len(P)), owner] = np.inf
    free = np.min(d_all, axis=1) > -1e-12 if len(C) > 1 else np.ones(len(P), dtype=bool)
    P = P[free]
    if len(P) == 0:
        return 0.0
    P = P[~inside(P, tris)]
    if len(P) == 0:
        return 0.0
    dist = np.empty(len(P))
    _kernels.points_to_mesh(
        np.ascontiguousarray(P), np.ascontiguousarray(tris.reshape(-1, 3)), dist
    )
    return float(dist.max())


def _depth(c: np.ndarray, corners: np.ndarray) -> float:
    out = np.empty(1)
    _kernels.points_to_mesh(c[None], corners, out)
    return float(out[0])


def _refine(
    C: np.ndarray, depth: np.ndarray, elements: np.ndarray, tris: np.ndarray, step: float
) -> tuple[np.ndarray, np.ndarray]:
    """Centres moved and radii shrunk to what each sphere must hold.

    Each element goes to the sphere that holds it reaching least beyond the solid
    (``reach - depth``); each centre then moves by pattern search (steps along the axes,
    halved when none helps, staying inside the solid) to lower its own
    ``max reach - depth``, and the elements are dealt again. The radii are the exact reach
    of what each sphere holds, so every element stays held."""
    corners = np.ascontiguousarray(tris.reshape(-1, 3))
    C = C.copy()
    depth = depth.copy()
    owner = np.zeros(len(elements), dtype=np.int64)

    def reach_of(c: np.ndarray, idx: np.ndarray) -> float:
        return float(np.max(np.linalg.norm(elements[idx] - c, axis=2))) if len(idx) else 0.0

    for _ in range(3):
        R = np.empty((len(elements), len(C)))
        _reach(elements, np.ascontiguousarray(C), R)
        owner = np.argmin(R - depth[None], axis=1)
        for j in range(len(C)):
            idx = np.nonzero(owner == j)[0]
            if len(idx) == 0:
                continue
            best = reach_of(C[j], idx) - depth[j]
            s = step
            while s > 0.05 * step:
                moved = False
                for d in np.concatenate([np.eye(3), -np.eye(3)]):
                    c = C[j] + s * d
                    if not inside(c[None], tris)[0]:
                        continue
                    dep = _depth(c, corners)
                    val = reach_of(c, idx) - dep
                    if val < best - 1e-12:
                        best, C[j], depth[j], moved = val, c, dep, True
                if not moved:
                    s *= 0.5
    R = np.empty((len(elements), len(C)))
    _reach(elements, np.ascontiguousarray(C), R)
    owner = np.argmin(R - depth[None], axis=1)
    r = np.zeros(len(C))
    np.maximum.at(r, owner, R[np.arange(len(elements)), owner])
    used = np.bincount(owner, minlength=len(C)) > 0
    return C[used], r[used] + 1e-9


def fit_mesh(
    vertices: np.ndarray, faces: np.ndarray, max_spheres: int, max_overshoot: float
) -> tuple[np.ndarray, np.ndarray, float]:
    """``(centers (k, 3), radii (k,), overshoot)`` [m] of spheres holding the triangle mesh
    (module docstring)."""
    tris = np.asarray(vertices, dtype=np.float64)[np.asarray(faces, dtype=np.int64)]
    lo, hi = tris.reshape(-1, 3).min(axis=0), tris.reshape(-1, 3).max(axis=0)
    size = float(np.max(hi - lo))
    if size <= 0.0:
        return lo[None].copy(), np.full(1, 1e-9), 0.0
    pieces = subdivide(tris, size / 16.0)
    # Candidates: interior points of a grid of about 3000 over the bounding box.
    ext = np.maximum(hi - lo, 1e-12)
    step = float((np.prod(ext) / 3000.0) ** (1.0 / 3.0))
    axes = [
        np.arange(lo[i] + 0.5 * step, hi[i], step)
        if ext[i] > step
        else np.array([0.5 * (lo[i] + hi[i])])
        for i in range(3)
    ]
    grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)
    cand = grid[inside(grid, tris)]
    if len(cand) == 0:  # open or flat: the triangles' centres
        cand = pieces.mean(axis=1)
    depth = np.empty(len(cand))
    _kernels.points_to_mesh(
        np.ascontiguousarray(cand), np.ascontiguousarray(tris.reshape(-1, 3)), depth
    )
    # Elements to hold: the cut triangles (by their farthest corner) and the candidates.
    elements = np.ascontiguousarray(np.concatenate([pieces, np.repeat(cand[:, None], 3, axis=1)]))
    reach = np.empty((len(elements), len(cand)))
    _reach(elements, np.ascontiguousarray(cand), reach)
    t = max(float(max_overshoot), 1e-6 * size)
    chosen = _cover(reach, depth + t, max_spheres)
    if chosen is None:  # double t until a cover fits, then bisect between the last two
        bad = t
        while chosen is None:
            bad, t = t, 2.0 * t
            chosen = _cover(reach, depth + t, max_spheres)
        for _ in range(6):
            mid = 0.5 * (bad + t)
            trial = _cover(reach, depth + mid, max_spheres)
            if trial is None:
                bad = mid
            else:
                t, chosen = mid, trial
    C, r = _refine(cand[chosen], depth[chosen], elements, tris, 0.5 * step)
    return C, r, overshoot(C, r, tris)
