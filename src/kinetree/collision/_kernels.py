"""Compiled signed distances between the robot's spheres, the world and each other.

Long because the point-to-shape distances of seven obstacle types, the closest point on a
triangle, the pair kernel and its two batch drivers belong together: each is a few lines
of scalar arithmetic that the others call.

Every array and column is described in :mod:`kinetree.collision.layout`. The inner
functions take scalars and arrays and return tuples: no allocation, no array views, so
they compile for a CPU thread and could compile for a GPU thread alike. Only the batch
drivers (:func:`distance_rows`, :func:`pair_rows`) allocate their per-chunk scratch.

The distance of a sphere (centre ``c``, radius ``r``) to a shape is ``sd(c) - r`` with
``sd`` the signed distance of a point to the shape (negative inside). ``sd`` is
1-Lipschitz, so a sphere inside a bigger one is never closer than the bigger one: the
link's bounding sphere gives a lower bound for all of its spheres (the broad phase).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..kinematics._kernels import fk_nodes, jacobian_add
from .layout import (
    LINK_CENTER,
    LINK_FIRST,
    LINK_NODE,
    LINK_RADIUS,
    LINK_STOP,
    OBSTACLE_BOUND,
    OBSTACLE_BOUND_RADIUS,
    OBSTACLE_COUNT,
    OBSTACLE_HALF,
    OBSTACLE_POSE,
    OBSTACLE_RADIUS,
    OBSTACLE_START,
    OBSTACLE_TYPE,
    OUT_DISTANCE,
    OUT_EXACT,
    OUT_NODE_A,
    OUT_NODE_B,
    OUT_NORMAL,
    OUT_POINT_A,
    OUT_POINT_B,
    OUT_SIZE,
    OUT_SPHERE_A,
    OUT_SPHERE_B,
    PAIR_A,
    PAIR_B,
    PAIR_KIND,
    PAIR_SELF,
    SPHERE_CENTER,
    SPHERE_NODE,
    SPHERE_RADIUS,
    ObstacleType,
)

SPHERE = int(ObstacleType.SPHERE)
BOX = int(ObstacleType.BOX)
CAPSULE = int(ObstacleType.CAPSULE)
CYLINDER = int(ObstacleType.CYLINDER)
HALFSPACE = int(ObstacleType.HALFSPACE)
POINTS = int(ObstacleType.POINTS)
MESH = int(ObstacleType.MESH)


@njit(cache=True, inline="always")
def _unit(x: float, y: float, z: float) -> tuple[float, float, float, float]:
    """``(|v|, v / |v|)``; the z axis for a zero vector."""
    n = math.sqrt(x * x + y * y + z * z)
    if n < 1e-300:
        return 0.0, 0.0, 0.0, 1.0
    return n, x / n, y / n, z / n


@njit(cache=True)
def triangle_closest(
    px: float,
    py: float,
    pz: float,
    ax: float,
    ay: float,
    az: float,
    bx: float,
    by: float,
    bz: float,
    cx: float,
    cy: float,
    cz: float,
) -> tuple[float, float, float]:
    """The point of the triangle ``abc`` closest to ``p``.

    Minimises ``|a + s (b - a) + t (c - a) - p|^2`` over ``s, t >= 0, s + t <= 1``: the
    unconstrained minimiser when it lies inside, else the closest point on the nearest
    of the three edges (a clamped projection each). A degenerate triangle is its edges.
    """
    e0x, e0y, e0z = bx - ax, by - ay, bz - az
    e1x, e1y, e1z = cx - ax, cy - ay, cz - az
    dx, dy, dz = ax - px, ay - py, az - pz
    a00 = e0x * e0x + e0y * e0y + e0z * e0z
    a01 = e0x * e1x + e0y * e1y + e0z * e1z
    a11 = e1x * e1x + e1y * e1y + e1z * e1z
    b0 = e0x * dx + e0y * dy + e0z * dz
    b1 = e1x * dx + e1y * dy + e1z * dz
    det = a00 * a11 - a01 * a01
    if det > 1e-30 * (a00 * a11 + 1e-300):
        s = (a01 * b1 - a11 * b0) / det
        t = (a01 * b0 - a00 * b1) / det
        if s >= 0.0 and t >= 0.0 and s + t <= 1.0:
            return ax + s * e0x + t * e1x, ay + s * e0y + t * e1y, az + s * e0z + t * e1z
    best = np.inf
    qx, qy, qz = ax, ay, az
    for k in range(3):
        if k == 0:
            ux, uy, uz, vx, vy, vz = ax, ay, az, bx, by, bz
        elif k == 1:
            ux, uy, uz, vx, vy, vz = bx, by, bz, cx, cy, cz
        else:
            ux, uy, uz, vx, vy, vz = cx, cy, cz, ax, ay, az
        wx, wy, wz = vx - ux, vy - uy, vz - uz
        ww = wx * wx + wy * wy + wz * wz
        u = 0.0
        if ww > 0.0:
            u = ((px - ux) * wx + (py - uy) * wy + (pz - uz) * wz) / ww
            u = min(1.0, max(0.0, u))
        sx, sy, sz = ux + u * wx, uy + u * wy, uz + u * wz
        d2 = (sx - px) ** 2 + (sy - py) ** 2 + (sz - pz) ** 2
        if d2 < best:
            best = d2
            qx, qy, qz = sx, sy, sz
    return qx, qy, qz


@njit(cache=True, inline="always")
def point_primitive(
    kind: int, hx: float, hy: float, hz: float, radius: float, x: float, y: float, z: float
) -> tuple[float, float, float, float]:
    """Signed distance [m] of the point ``(x, y, z)`` (obstacle frame) to a sphere, box,
    capsule, cylinder or half-space, and the unit outward normal at its closest surface
    point (obstacle frame): ``closest = p - sd * normal``."""
    if kind == SPHERE:
        n, nx, ny, nz = _unit(x, y, z)
        return n - radius, nx, ny, nz
    if kind == BOX:
        qx, qy, qz = abs(x) - hx, abs(y) - hy, abs(z) - hz
        sx = 1.0 if x >= 0.0 else -1.0
        sy = 1.0 if y >= 0.0 else -1.0
        sz = 1.0 if z >= 0.0 else -1.0
        if qx > 0.0 or qy > 0.0 or qz > 0.0:
            n, nx, ny, nz = _unit(sx * max(qx, 0.0), sy * max(qy, 0.0), sz * max(qz, 0.0))
            return n, nx, ny, nz
        if qx >= qy and qx >= qz:
            return qx, sx, 0.0, 0.0
        if qy >= qz:
            return qy, 0.0, sy, 0.0
        return qz, 0.0, 0.0, sz
    if kind == CAPSULE:
        s = min(hz, max(-hz, z))
        r2 = x * x + y * y
        if r2 < 1e-300 and abs(z - s) < 1e-300:
            return -radius, 1.0, 0.0, 0.0
        n, nx, ny, nz = _unit(x, y, z - s)
        return n - radius, nx, ny, nz
    if kind == CYLINDER:
        rho = math.sqrt(x * x + y * y)
        ux, uy = (x / rho, y / rho) if rho > 1e-300 else (1.0, 0.0)
        dr = rho - radius
        dz = abs(z) - hz
        sz = 1.0 if z >= 0.0 else -1.0
        if dr > 0.0 and dz > 0.0:  # beyond the rim: the closest point is on the circle
            n = math.sqrt(dr * dr + dz * dz)
            return n, ux * dr / n, uy * dr / n, sz * dz / n
        if dr >= dz:  # outside the side only, or inside nearer the side than a cap
            return dr, ux, uy, 0.0
        return dz, 0.0, 0.0, sz
    return z, 0.0, 0.0, 1.0  # HALFSPACE


@njit(cache=True)
def point_data(
    kind: int,
    radius: float,
    data: np.ndarray,
    start: int,
    count: int,
    x: float,
    y: float,
    z: float,
) -> tuple[float, float, float, float]:
    """:func:`point_primitive` for a point cloud (balls of ``radius``) or a mesh, whose
    ``count`` points or triangles start at row ``start`` of ``data``. Unsigned: a mesh is
    a surface, so a point inside a closed mesh is at its distance from the surface."""
    best = np.inf
    bx, by, bz = 0.0, 0.0, 1.0
    if kind == POINTS:
        for k in range(start, start + count):
            dx, dy, dz2 = x - data[k, 0], y - data[k, 1], z - data[k, 2]
            d2 = dx * dx + dy * dy + dz2 * dz2
            if d2 < best:
                best = d2
                bx, by, bz = dx, dy, dz2
        n, nx, ny, nz = _unit(bx, by, bz)
        return n - radius, nx, ny, nz
    # MESH: closest point over every triangle; normal towards the point (or the face's).
    face = 0
    for t in range(count):
        k = start + 3 * t
        qx, qy, qz = triangle_closest(
            x,
            y,
            z,
            data[k, 0],
            data[k, 1],
            data[k, 2],
            data[k + 1, 0],
            data[k + 1, 1],
            data[k + 1, 2],
            data[k + 2, 0],
            data[k + 2, 1],
            data[k + 2, 2],
        )
        d2 = (x - qx) ** 2 + (y - qy) ** 2 + (z - qz) ** 2
        if d2 < best:
            best = d2
            bx, by, bz = x - qx, y - qy, z - qz
            face = k
    n, nx, ny, nz = _unit(bx, by, bz)
    if n < 1e-12:  # on the surface: the face normal
        ux, uy, uz = data[face + 1, 0] - data[face, 0], data[face + 1, 1] - data[face, 1], 0.0
        uz = data[face + 1, 2] - data[face, 2]
        vx, vy, vz = data[face + 2, 0] - data[face, 0], data[face + 2, 1] - data[face, 1], 0.0
        vz = data[face + 2, 2] - data[face, 2]
        _, nx, ny, nz = _unit(uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx)
    return n - radius, nx, ny, nz


@njit(cache=True, inline="always")
def point_obstacle(
    obstacles: np.ndarray, data: np.ndarray, o: int, x: float, y: float, z: float
) -> tuple[float, float, float, float]:
    """:func:`point_primitive` or :func:`point_data` for the world point ``(x, y, z)``
    and obstacle row ``o``; the normal is returned in the world frame."""
    P = OBSTACLE_POSE
    tx, ty, tz = x - obstacles[o, P + 3], y - obstacles[o, P + 7], z - obstacles[o, P + 11]
    # local = R^T (p - t); R is row-major in slots P + 4 r + c.
    lx = obstacles[o, P] * tx + obstacles[o, P + 4] * ty + obstacles[o, P + 8] * tz
    ly = obstacles[o, P + 1] * tx + obstacles[o, P + 5] * ty + obstacles[o, P + 9] * tz
    lz = obstacles[o, P + 2] * tx + obstacles[o, P + 6] * ty + obstacles[o, P + 10] * tz
    kind = int(obstacles[o, OBSTACLE_TYPE])
    if kind == POINTS or kind == MESH:
        sd, nx, ny, nz = point_data(
            kind,
            obstacles[o, OBSTACLE_RADIUS],
            data,
            int(obstacles[o, OBSTACLE_START]),
            int(obstacles[o, OBSTACLE_COUNT]),
            lx,
            ly,
            lz,
        )
    else:
        sd, nx, ny, nz = point_primitive(
            kind,
            obstacles[o, OBSTACLE_HALF],
            obstacles[o, OBSTACLE_HALF + 1],
            obstacles[o, OBSTACLE_HALF + 2],
            obstacles[o, OBSTACLE_RADIUS],
            lx,
            ly,
            lz,
        )
    wx = obstacles[o, P] * nx + obstacles[o, P + 1] * ny + obstacles[o, P + 2] * nz
    wy = obstacles[o, P + 4] * nx + obstacles[o, P + 5] * ny + obstacles[o, P + 6] * nz
    wz = obstacles[o, P + 8] * nx + obstacles[o, P + 9] * ny + obstacles[o, P + 10] * nz
    return sd, wx, wy, wz


@njit(cache=True, inline="always")
def _bound_obstacle(
    obstacles: np.ndarray, o: int, x: float, y: float, z: float
) -> tuple[float, float, float, float]:
    """Signed distance of the world point ``(x, y, z)`` to obstacle ``o``'s bounding
    sphere, and the unit direction from its centre (a lower bound for clouds and meshes)."""
    P = OBSTACLE_POSE
    ox = obstacles[o, OBSTACLE_BOUND]
    oy = obstacles[o, OBSTACLE_BOUND + 1]
    oz = obstacles[o, OBSTACLE_BOUND + 2]
    wx = (
        obstacles[o, P] * ox
        + obstacles[o, P + 1] * oy
        + obstacles[o, P + 2] * oz
        + obstacles[o, P + 3]
    )
    wy = (
        obstacles[o, P + 4] * ox
        + obstacles[o, P + 5] * oy
        + obstacles[o, P + 6] * oz
        + obstacles[o, P + 7]
    )
    wz = (
        obstacles[o, P + 8] * ox
        + obstacles[o, P + 9] * oy
        + obstacles[o, P + 10] * oz
        + obstacles[o, P + 11]
    )
    n, nx, ny, nz = _unit(x - wx, y - wy, z - wz)
    return n - obstacles[o, OBSTACLE_BOUND_RADIUS], nx, ny, nz


@njit(cache=True, inline="always")
def _to_world(W: np.ndarray, node: int, x: float, y: float, z: float) -> tuple[float, float, float]:
    return (
        W[node, 0, 0] * x + W[node, 0, 1] * y + W[node, 0, 2] * z + W[node, 0, 3],
        W[node, 1, 0] * x + W[node, 1, 1] * y + W[node, 1, 2] * z + W[node, 1, 3],
        W[node, 2, 0] * x + W[node, 2, 1] * y + W[node, 2, 2] * z + W[node, 2, 3],
    )


@njit(cache=True, inline="always")
def _place_spheres(
    W: np.ndarray, spheres: np.ndarray, first: int, stop: int, C: np.ndarray
) -> None:
    """``C[s, :3]`` the world centre [m] and ``C[s, 3]`` the radius of spheres
    ``first <= s < stop``, from the world transforms ``W``."""
    for s in range(first, stop):
        node = int(spheres[s, SPHERE_NODE])
        x, y, z = _to_world(
            W,
            node,
            spheres[s, SPHERE_CENTER],
            spheres[s, SPHERE_CENTER + 1],
            spheres[s, SPHERE_CENTER + 2],
        )
        C[s, 0] = x
        C[s, 1] = y
        C[s, 2] = z
        C[s, 3] = spheres[s, SPHERE_RADIUS]


@njit(cache=True)
def world_spheres(W: np.ndarray, spheres: np.ndarray, C: np.ndarray) -> None:
    """World centres of every sphere: ``C[s, :3]`` [m], and ``C[s, 3]`` its radius, from
    the world transforms ``W`` (n_nodes, 3, 4) of :func:`~kinetree.kinematics._kernels.fk_nodes`."""
    _place_spheres(W, spheres, 0, spheres.shape[0], C)


@njit(cache=True, inline="always")
def link_spheres(
    W: np.ndarray, spheres: np.ndarray, links: np.ndarray, link: int, C: np.ndarray
) -> None:
    """:func:`world_spheres` for the spheres of one ``link`` only."""
    _place_spheres(W, spheres, int(links[link, LINK_FIRST]), int(links[link, LINK_STOP]), C)


@njit(cache=True, inline="always")
def place_pair_links(
    W: np.ndarray,
    spheres: np.ndarray,
    links: np.ndarray,
    pairs: np.ndarray,
    p: int,
    C: np.ndarray,
    ready: np.ndarray,
) -> None:
    """World spheres of the links of pair ``p`` that are not placed yet (``ready`` marks
    the links already done; most links are never refined, so this is done on demand)."""
    la = pairs[p, PAIR_A]
    if ready[la] == 0:
        link_spheres(W, spheres, links, la, C)
        ready[la] = 1
    lb = pairs[p, PAIR_B]
    if pairs[p, PAIR_KIND] == PAIR_SELF and ready[lb] == 0:
        link_spheres(W, spheres, links, lb, C)
        ready[lb] = 1


@njit(cache=True, inline="always")
def _write(
    out: np.ndarray,
    d: float,
    nx: float,
    ny: float,
    nz: float,
    ax: float,
    ay: float,
    az: float,
    bx: float,
    by: float,
    bz: float,
    node_a: int,
    node_b: int,
    sphere_a: int,
    sphere_b: int,
    exact: float,
) -> None:
    out[OUT_DISTANCE] = d
    out[OUT_NORMAL] = nx
    out[OUT_NORMAL + 1] = ny
    out[OUT_NORMAL + 2] = nz
    out[OUT_POINT_A] = ax
    out[OUT_POINT_A + 1] = ay
    out[OUT_POINT_A + 2] = az
    out[OUT_POINT_B] = bx
    out[OUT_POINT_B + 1] = by
    out[OUT_POINT_B + 2] = bz
    out[OUT_NODE_A] = node_a
    out[OUT_NODE_B] = node_b
    out[OUT_SPHERE_A] = sphere_a
    out[OUT_SPHERE_B] = sphere_b
    out[OUT_EXACT] = exact


@njit(cache=True)
def pair_distance(
    W: np.ndarray,
    C: np.ndarray,
    links: np.ndarray,
    obstacles: np.ndarray,
    data: np.ndarray,
    pairs: np.ndarray,
    p: int,
    cutoff: float,
    out: np.ndarray,
) -> None:
    """Signed distance of pair ``p`` into the row ``out`` (layout ``OUT_*``).

    ``C`` holds the world spheres (:func:`world_spheres`). A pair whose broad-phase lower
    bound is at least ``cutoff`` [m] is not refined: its row holds that bound with
    ``OUT_EXACT = 0``. Self pairs: the closest two spheres, one per link. Obstacle pairs:
    the link's sphere closest to the obstacle.
    """
    la = pairs[p, PAIR_A]
    lb = pairs[p, PAIR_B]
    node_a = int(links[la, LINK_NODE])
    bax, bay, baz = _to_world(
        W, node_a, links[la, LINK_CENTER], links[la, LINK_CENTER + 1], links[la, LINK_CENTER + 2]
    )
    bar = links[la, LINK_RADIUS]
    first, stop = int(links[la, LINK_FIRST]), int(links[la, LINK_STOP])
    if pairs[p, PAIR_KIND] == PAIR_SELF:
        node_b = int(links[lb, LINK_NODE])
        bbx, bby, bbz = _to_world(
            W,
            node_b,
            links[lb, LINK_CENTER],
            links[lb, LINK_CENTER + 1],
            links[lb, LINK_CENTER + 2],
        )
        bbr = links[lb, LINK_RADIUS]
        n, nx, ny, nz = _unit(bax - bbx, bay - bby, baz - bbz)
        bound = n - bar - bbr
        if bound >= cutoff:
            _write(
                out,
                bound,
                nx,
                ny,
                nz,
                bax - bar * nx,
                bay - bar * ny,
                baz - bar * nz,
                bbx + bbr * nx,
                bby + bbr * ny,
                bbz + bbr * nz,
                node_a,
                node_b,
                -1,
                -1,
                0.0,
            )
            return
        best = np.inf
        sa, sb = first, int(links[lb, LINK_FIRST])
        for i in range(first, stop):
            # Sphere i against B's bounding sphere: skip it when it cannot improve.
            gap = (
                math.sqrt((C[i, 0] - bbx) ** 2 + (C[i, 1] - bby) ** 2 + (C[i, 2] - bbz) ** 2)
                - C[i, 3]
                - bbr
            )
            if gap >= best:
                continue
            for j in range(int(links[lb, LINK_FIRST]), int(links[lb, LINK_STOP])):
                reach = best + C[i, 3] + C[j, 3]
                d2 = (C[i, 0] - C[j, 0]) ** 2 + (C[i, 1] - C[j, 1]) ** 2 + (C[i, 2] - C[j, 2]) ** 2
                if reach > 0.0 and d2 >= reach * reach:
                    continue
                d = math.sqrt(d2) - C[i, 3] - C[j, 3]
                if d < best:
                    best = d
                    sa, sb = i, j
        n, nx, ny, nz = _unit(C[sa, 0] - C[sb, 0], C[sa, 1] - C[sb, 1], C[sa, 2] - C[sb, 2])
        ra, rb = C[sa, 3], C[sb, 3]
        _write(
            out,
            n - ra - rb,
            nx,
            ny,
            nz,
            C[sa, 0] - ra * nx,
            C[sa, 1] - ra * ny,
            C[sa, 2] - ra * nz,
            C[sb, 0] + rb * nx,
            C[sb, 1] + rb * ny,
            C[sb, 2] + rb * nz,
            node_a,
            node_b,
            sa,
            sb,
            1.0,
        )
        return
    # Obstacle pair: a lower bound first (exact for the bounding sphere of a primitive;
    # from the two bounding spheres for a point cloud or a mesh, whose distance is a loop).
    kind = int(obstacles[lb, OBSTACLE_TYPE])
    if kind == POINTS or kind == MESH:
        sd, nx, ny, nz = _bound_obstacle(obstacles, lb, bax, bay, baz)
    else:
        sd, nx, ny, nz = point_obstacle(obstacles, data, lb, bax, bay, baz)
    bound = sd - bar
    if bound >= cutoff:
        _write(
            out,
            bound,
            nx,
            ny,
            nz,
            bax - bar * nx,
            bay - bar * ny,
            baz - bar * nz,
            bax - sd * nx,
            bay - sd * ny,
            baz - sd * nz,
            node_a,
            -1,
            -1,
            -1,
            0.0,
        )
        return
    best = np.inf
    sa = first
    bsd, bnx, bny, bnz = 0.0, 0.0, 0.0, 1.0
    if kind == POINTS or kind == MESH:
        for i in range(first, stop):
            sd, nx, ny, nz = point_obstacle(obstacles, data, lb, C[i, 0], C[i, 1], C[i, 2])
            if sd - C[i, 3] < best:
                best = sd - C[i, 3]
                sa = i
                bsd, bnx, bny, bnz = sd, nx, ny, nz
    else:
        # The pose read once; each sphere centre taken to the obstacle frame, the normal
        # of the closest one back to the world.
        P = OBSTACLE_POSE
        r00, r01, r02 = obstacles[lb, P], obstacles[lb, P + 1], obstacles[lb, P + 2]
        r10, r11, r12 = obstacles[lb, P + 4], obstacles[lb, P + 5], obstacles[lb, P + 6]
        r20, r21, r22 = obstacles[lb, P + 8], obstacles[lb, P + 9], obstacles[lb, P + 10]
        tx, ty, tz = obstacles[lb, P + 3], obstacles[lb, P + 7], obstacles[lb, P + 11]
        hx, hy = obstacles[lb, OBSTACLE_HALF], obstacles[lb, OBSTACLE_HALF + 1]
        hz, rad = obstacles[lb, OBSTACLE_HALF + 2], obstacles[lb, OBSTACLE_RADIUS]
        for i in range(first, stop):
            dx, dy, dz = C[i, 0] - tx, C[i, 1] - ty, C[i, 2] - tz
            sd, nx, ny, nz = point_primitive(
                kind,
                hx,
                hy,
                hz,
                rad,
                r00 * dx + r10 * dy + r20 * dz,
                r01 * dx + r11 * dy + r21 * dz,
                r02 * dx + r12 * dy + r22 * dz,
            )
            if sd - C[i, 3] < best:
                best = sd - C[i, 3]
                sa = i
                bsd, bnx, bny, bnz = sd, nx, ny, nz
        bnx, bny, bnz = (
            r00 * bnx + r01 * bny + r02 * bnz,
            r10 * bnx + r11 * bny + r12 * bnz,
            r20 * bnx + r21 * bny + r22 * bnz,
        )
    r = C[sa, 3]
    _write(
        out,
        bsd - r,
        bnx,
        bny,
        bnz,
        C[sa, 0] - r * bnx,
        C[sa, 1] - r * bny,
        C[sa, 2] - r * bnz,
        C[sa, 0] - bsd * bnx,
        C[sa, 1] - bsd * bny,
        C[sa, 2] - bsd * bnz,
        node_a,
        -1,
        sa,
        -1,
        1.0,
    )


@njit(cache=True)
def pair_distances(
    W: np.ndarray,
    spheres: np.ndarray,
    links: np.ndarray,
    obstacles: np.ndarray,
    data: np.ndarray,
    pairs: np.ndarray,
    cutoff: float,
    C: np.ndarray,
    out: np.ndarray,
) -> None:
    """Every pair's row of ``out`` (n_pairs, OUT_SIZE) at the world transforms ``W``.

    ``C`` (n_spheres, 4) is scratch for the world spheres. Pairs farther than ``cutoff``
    [m] (``np.inf``: none) hold a lower bound (``OUT_EXACT = 0``). This is the call of an
    IK iteration, after ``fk_nodes`` has filled ``W``.
    """
    world_spheres(W, spheres, C)
    for p in range(pairs.shape[0]):
        pair_distance(W, C, links, obstacles, data, pairs, p, cutoff, out[p])


@njit(cache=True)
def distance_gradient(
    fdata: np.ndarray,
    idata: np.ndarray,
    W: np.ndarray,
    row: np.ndarray,
    J: np.ndarray,
    grad: np.ndarray,
) -> None:
    """The derivative of a pair's distance along a motion: ``grad`` (nv,) =
    ``n^T (J_p(point_a) - J_p(point_b))``, from one ``out`` row at the transforms ``W``
    (no ``b`` term for an obstacle). ``J`` (6, nv) is scratch. An IK step ``dv`` keeps
    the pair ``margin`` apart to first order when ``grad . dv >= margin - distance``.
    """
    nv = grad.shape[0]
    for c in range(nv):
        grad[c] = 0.0
    for side in range(2):
        node = int(row[OUT_NODE_A]) if side == 0 else int(row[OUT_NODE_B])
        if node < 0:
            continue
        for r in range(6):
            for c in range(nv):
                J[r, c] = 0.0
        at = OUT_POINT_A if side == 0 else OUT_POINT_B
        jacobian_add(fdata, idata, W, node, row[at : at + 3], J)
        sign = 1.0 if side == 0 else -1.0
        for c in range(nv):
            grad[c] += sign * (
                row[OUT_NORMAL] * J[0, c]
                + row[OUT_NORMAL + 1] * J[1, c]
                + row[OUT_NORMAL + 2] * J[2, c]
            )


@njit(cache=True, inline="always")
def pair_bound(
    W: np.ndarray,
    links: np.ndarray,
    obstacles: np.ndarray,
    data: np.ndarray,
    pairs: np.ndarray,
    p: int,
) -> float:
    """A lower bound [m] on pair ``p``'s distance from bounding spheres alone: the link's
    against the other link's, against a primitive (exact for the bounding sphere) or
    against the bounding sphere of a point cloud or mesh."""
    la = pairs[p, PAIR_A]
    lb = pairs[p, PAIR_B]
    node_a = int(links[la, LINK_NODE])
    ax, ay, az = _to_world(
        W, node_a, links[la, LINK_CENTER], links[la, LINK_CENTER + 1], links[la, LINK_CENTER + 2]
    )
    if pairs[p, PAIR_KIND] == PAIR_SELF:
        node_b = int(links[lb, LINK_NODE])
        bx, by, bz = _to_world(
            W,
            node_b,
            links[lb, LINK_CENTER],
            links[lb, LINK_CENTER + 1],
            links[lb, LINK_CENTER + 2],
        )
        d = math.sqrt((ax - bx) ** 2 + (ay - by) ** 2 + (az - bz) ** 2)
        return d - links[la, LINK_RADIUS] - links[lb, LINK_RADIUS]
    kind = int(obstacles[lb, OBSTACLE_TYPE])
    if kind == POINTS or kind == MESH:
        sd, _, _, _ = _bound_obstacle(obstacles, lb, ax, ay, az)
    else:
        sd, _, _, _ = point_obstacle(obstacles, data, lb, ax, ay, az)
    return sd - links[la, LINK_RADIUS]


@njit(cache=True)
def min_distance(
    W: np.ndarray,
    spheres: np.ndarray,
    links: np.ndarray,
    obstacles: np.ndarray,
    data: np.ndarray,
    pairs: np.ndarray,
    stop_below: float,
    C: np.ndarray,
    ready: np.ndarray,
    bounds: np.ndarray,
    order: np.ndarray,
    row: np.ndarray,
    best: np.ndarray,
) -> int:
    """The closest pair at ``W``: its index (-1 with no pairs) and its row in ``best``.

    Pairs are visited in the order of their lower bounds (:func:`pair_bound`), each
    refined with the best distance so far as its cutoff, and the search ends at the
    first pair whose bound cannot beat the best: usually a handful of pairs are refined.
    It also stops once the distance is below ``stop_below`` [m] (``-inf``: never), all a
    yes/no collision query needs. ``C`` (n_spheres, 4) is filled per link on first use
    (``ready`` (n_links,) int64 marks which); ``bounds`` (n_pairs,), ``order`` (n_pairs,)
    int64 and ``row`` (OUT_SIZE,) are scratch.
    """
    n = pairs.shape[0]
    for k in range(ready.shape[0]):
        ready[k] = 0
    for p in range(n):  # insertion sort by bound: n is tens, and nearly sorted runs are cheap
        v = pair_bound(W, links, obstacles, data, pairs, p)
        k = p
        while k > 0 and bounds[k - 1] > v:
            bounds[k] = bounds[k - 1]
            order[k] = order[k - 1]
            k -= 1
        bounds[k] = v
        order[k] = p
    best[OUT_DISTANCE] = np.inf
    arg = -1
    for k in range(n):
        if bounds[k] >= best[OUT_DISTANCE]:
            break
        p = order[k]
        place_pair_links(W, spheres, links, pairs, p, C, ready)
        pair_distance(W, C, links, obstacles, data, pairs, p, best[OUT_DISTANCE], row)
        if row[OUT_EXACT] == 1.0 and (arg < 0 or row[OUT_DISTANCE] < best[OUT_DISTANCE]):
            arg = p
            for c in range(OUT_SIZE):
                best[c] = row[c]
            if best[OUT_DISTANCE] < stop_below:
                break
    return arg


@njit(cache=True, nogil=True)
def distance_rows(
    Q: np.ndarray,
    fdata: np.ndarray,
    idata: np.ndarray,
    nodes: np.ndarray,
    spheres: np.ndarray,
    links: np.ndarray,
    obstacles: np.ndarray,
    data: np.ndarray,
    pairs: np.ndarray,
    stop_below: float,
    out: np.ndarray,
    arg: np.ndarray,
    start: int,
    stop: int,
) -> None:
    """:func:`min_distance` for configurations ``Q[start:stop]`` (N, nq): rows of ``out``
    (N, OUT_SIZE) and closest pair indices ``arg`` (N,)."""
    W = np.empty((fdata.shape[0], 3, 4))
    C = np.empty((spheres.shape[0], 4))
    ready = np.empty(links.shape[0], dtype=np.int64)
    bounds = np.empty(pairs.shape[0])
    order = np.empty(pairs.shape[0], dtype=np.int64)
    row = np.empty(OUT_SIZE)
    for b in range(start, stop):
        fk_nodes(Q[b], fdata, idata, nodes, W)
        arg[b] = min_distance(
            W,
            spheres,
            links,
            obstacles,
            data,
            pairs,
            stop_below,
            C,
            ready,
            bounds,
            order,
            row,
            out[b],
        )


@njit(cache=True, nogil=True)
def pair_rows(
    Q: np.ndarray,
    fdata: np.ndarray,
    idata: np.ndarray,
    nodes: np.ndarray,
    spheres: np.ndarray,
    links: np.ndarray,
    obstacles: np.ndarray,
    data: np.ndarray,
    pairs: np.ndarray,
    cutoff: float,
    out: np.ndarray,
    start: int,
    stop: int,
) -> None:
    """:func:`pair_distances` for configurations ``Q[start:stop]``: ``out`` (N, n_pairs,
    OUT_SIZE)."""
    W = np.empty((fdata.shape[0], 3, 4))
    C = np.empty((spheres.shape[0], 4))
    for b in range(start, stop):
        fk_nodes(Q[b], fdata, idata, nodes, W)
        pair_distances(W, spheres, links, obstacles, data, pairs, cutoff, C, out[b])


@njit(cache=True, nogil=True)
def points_to_mesh(P: np.ndarray, corners: np.ndarray, out: np.ndarray) -> None:
    """Unsigned distance [m] of each point ``P`` (n, 3) to the triangles whose corners are
    the rows of ``corners`` (3 m, 3), into ``out`` (n,) (used when fitting spheres)."""
    m = corners.shape[0] // 3
    for i in range(P.shape[0]):
        d, _, _, _ = point_data(MESH, 0.0, corners, 0, m, P[i, 0], P[i, 1], P[i, 2])
        out[i] = d
