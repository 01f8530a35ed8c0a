"""The packed collision tables: what the distance kernels read and write, and their writers.

The kernels in :mod:`kinetree.collision._kernels` see the robot, the world and the pairs
to check as plain arrays. Their columns are named here; each writer below fills them and
the kernels read them through the same names (module-level integers are compile-time
constants in numba). All lengths are in metres.

``spheres`` (float64, ``(n_spheres, SPHERE_SIZE)``): the robot approximation
    ``SPHERE_NODE`` the model node the sphere is fixed to (an integer stored as float);
    ``SPHERE_CENTER:SPHERE_CENTER + 3`` its centre in that node's frame;
    ``SPHERE_RADIUS`` its radius. Rows are grouped by link (see ``links``).
``links`` (float64, ``(n_links, LINK_SIZE)``): one row per link with collision geometry
    ``LINK_NODE`` its node; ``LINK_FIRST`` / ``LINK_STOP`` its rows ``[first, stop)`` of
    ``spheres``; ``LINK_CENTER:LINK_CENTER + 3`` and ``LINK_RADIUS`` a bounding sphere of
    all its spheres in the node frame (the broad phase).
``obstacles`` (float64, ``(n_obstacles, OBSTACLE_SIZE)``): the world
    ``OBSTACLE_TYPE`` an :class:`ObstacleType`; ``OBSTACLE_POSE:OBSTACLE_POSE + 12`` the
    obstacle's world pose, rows 0..2 of the 4x4, row-major; ``OBSTACLE_HALF:OBSTACLE_HALF
    + 3`` half extents (box: half sizes; capsule, cylinder: ``(0, 0, half length)`` along
    the local z axis); ``OBSTACLE_RADIUS`` sphere, capsule and cylinder radius, and the
    radius of every point of a point cloud; ``OBSTACLE_START`` / ``OBSTACLE_COUNT``: rows
    of ``obstacle_data`` (point cloud: ``count`` points from row ``start``; mesh: ``count``
    triangles, three rows each); ``OBSTACLE_BOUND:OBSTACLE_BOUND + 3`` and
    ``OBSTACLE_BOUND_RADIUS`` a bounding sphere in the obstacle frame (inf for a
    half-space). A half-space is the solid ``z <= 0`` of its pose (the plane's normal is
    the pose's z axis).
``obstacle_data`` (float64, ``(n_rows, 3)``): points and triangle corners of point-cloud
    and mesh obstacles, in their obstacle's frame. Never empty (one unused row at least).
``pairs`` (int64, ``(n_pairs, PAIR_SIZE)``): what to check
    ``PAIR_KIND`` :data:`PAIR_OBSTACLE` (link ``PAIR_A`` against obstacle ``PAIR_B``) or
    :data:`PAIR_SELF` (link ``PAIR_A`` against link ``PAIR_B``).
``out`` (float64, ``(n_pairs, OUT_SIZE)``): one row per pair, written by the kernels
    ``OUT_DISTANCE`` signed distance (negative: penetration depth); ``OUT_NORMAL:+3`` the
    unit normal in the world frame, from B towards A: moving A along it increases the
    distance; ``OUT_POINT_A:+3`` / ``OUT_POINT_B:+3`` witness points in the world frame, on
    A's sphere and on B's surface, with ``distance = normal . (point_a - point_b)``;
    ``OUT_NODE_A`` / ``OUT_NODE_B`` the nodes carrying them (-1 for an obstacle);
    ``OUT_SPHERE_A`` / ``OUT_SPHERE_B`` their rows of ``spheres`` (-1 for an obstacle);
    ``OUT_EXACT`` 1 when the pair was computed, 0 when the broad phase found it farther
    than the cutoff: then the distance is a lower bound (> cutoff) from the bounding
    spheres and the other columns describe those.

For an IK step, ``d(q + dq) ~ d(q) + n^T (J_p(point_a) - J_p(point_b)) dq`` with ``J_p``
the positional rows of :func:`kinetree.kinematics._kernels.jacobian_add` at the node of each
point (no term for an obstacle). A sphere's witness point moves like its centre along the
normal, so the sphere's radius never enters the derivative.

The calls of an IK iteration (all in :mod:`kinetree.collision._kernels`, allocation-free;
the tables come from :meth:`kinetree.collision.CollisionModel.tables`, once per problem)::

    fk_nodes(q, fdata, idata, tables.nodes, W)            # W (n_nodes, 3, 4)
    pair_distances(W, tables.spheres, tables.links, tables.obstacles,
                   tables.obstacle_data, tables.pairs, cutoff, C, out)
    # C (n_spheres, 4) scratch; out (n_pairs, OUT_SIZE); rows beyond cutoff: OUT_EXACT 0
    distance_gradient(fdata, idata, W, out[p], J, grad)   # J (6, nv) scratch, grad (nv,)
    # keep pair p at least margin apart: grad . dv >= margin - out[p, OUT_DISTANCE]

``min_distance`` (the closest pair only, pruned by the best so far) is what
``model.distance`` runs per configuration (``distance_rows`` over a batch).
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum

import numpy as np

__all__ = [
    "LINK_CENTER",
    "LINK_FIRST",
    "LINK_NODE",
    "LINK_RADIUS",
    "LINK_SIZE",
    "LINK_STOP",
    "OBSTACLE_BOUND",
    "OBSTACLE_BOUND_RADIUS",
    "OBSTACLE_COUNT",
    "OBSTACLE_HALF",
    "OBSTACLE_POSE",
    "OBSTACLE_RADIUS",
    "OBSTACLE_SIZE",
    "OBSTACLE_START",
    "OBSTACLE_TYPE",
    "OUT_DISTANCE",
    "OUT_EXACT",
    "OUT_NODE_A",
    "OUT_NODE_B",
    "OUT_NORMAL",
    "OUT_POINT_A",
    "OUT_POINT_B",
    "OUT_SIZE",
    "OUT_SPHERE_A",
    "OUT_SPHERE_B",
    "PAIR_A",
    "PAIR_B",
    "PAIR_KIND",
    "PAIR_OBSTACLE",
    "PAIR_SELF",
    "PAIR_SIZE",
    "SPHERE_CENTER",
    "SPHERE_NODE",
    "SPHERE_RADIUS",
    "SPHERE_SIZE",
    "ObstacleType",
    "pack_links",
    "pack_obstacle_rows",
    "pack_pairs",
    "read_out_row",
]


class ObstacleType(IntEnum):
    """The shape of an obstacle row (the values stored in ``OBSTACLE_TYPE``)."""

    SPHERE = 0
    BOX = 1
    CAPSULE = 2
    CYLINDER = 3
    HALFSPACE = 4
    POINTS = 5
    MESH = 6


SPHERE_NODE = 0
SPHERE_CENTER = 1  # 3 slots
SPHERE_RADIUS = 4
SPHERE_SIZE = 5

LINK_NODE = 0
LINK_FIRST = 1
LINK_STOP = 2
LINK_CENTER = 3  # 3 slots
LINK_RADIUS = 6
LINK_SIZE = 7

OBSTACLE_TYPE = 0
OBSTACLE_POSE = 1  # 12 slots
OBSTACLE_HALF = 13  # 3 slots
OBSTACLE_RADIUS = 16
OBSTACLE_START = 17
OBSTACLE_COUNT = 18
OBSTACLE_BOUND = 19  # 3 slots
OBSTACLE_BOUND_RADIUS = 22
OBSTACLE_SIZE = 23

PAIR_KIND = 0
PAIR_A = 1
PAIR_B = 2
PAIR_SIZE = 3
PAIR_OBSTACLE = 0
PAIR_SELF = 1

OUT_DISTANCE = 0
OUT_NORMAL = 1  # 3 slots
OUT_POINT_A = 4  # 3 slots
OUT_POINT_B = 7  # 3 slots
OUT_NODE_A = 10
OUT_NODE_B = 11
OUT_SPHERE_A = 12
OUT_SPHERE_B = 13
OUT_EXACT = 14
OUT_SIZE = 15


def pack_links(
    nodes: Sequence[int], centers: Sequence[np.ndarray], radii: Sequence[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """``(spheres, links)`` from one ``(k, 3)`` centre array [m] and ``(k,)`` radius array
    [m] per link, each in the frame of its node ``nodes[i]``.

    A link's bounding sphere is centred on the middle of its spheres' bounding box, with
    the radius that reaches the farthest sphere's far side.
    """
    n = int(sum(len(r) for r in radii))
    spheres = np.zeros((n, SPHERE_SIZE))
    links = np.zeros((len(nodes), LINK_SIZE))
    row = 0
    for i, (node, c, r) in enumerate(zip(nodes, centers, radii)):
        c = np.asarray(c, dtype=np.float64).reshape(-1, 3)
        r = np.asarray(r, dtype=np.float64).reshape(-1)
        k = len(r)
        spheres[row : row + k, SPHERE_NODE] = node
        spheres[row : row + k, SPHERE_CENTER : SPHERE_CENTER + 3] = c
        spheres[row : row + k, SPHERE_RADIUS] = r
        links[i, LINK_NODE] = node
        links[i, LINK_FIRST] = row
        links[i, LINK_STOP] = row + k
        if k:
            mid = 0.5 * ((c - r[:, None]).min(axis=0) + (c + r[:, None]).max(axis=0))
            links[i, LINK_CENTER : LINK_CENTER + 3] = mid
            links[i, LINK_RADIUS] = float(np.max(np.linalg.norm(c - mid, axis=1) + r))
        row += k
    for a in (spheres, links):
        a.setflags(write=False)
    return spheres, links


def pack_obstacle_rows(
    rows: Sequence[tuple[int, np.ndarray, np.ndarray, float, np.ndarray | None]],
) -> tuple[np.ndarray, np.ndarray]:
    """``(obstacles, obstacle_data)`` from one ``(type, pose 4x4, half extents (3,), radius,
    data rows (k, 3) or None)`` per obstacle (:meth:`kinetree.collision.world.Obstacle.row`
    makes them). The bounding sphere is computed here, in the obstacle frame."""
    table = np.zeros((len(rows), OBSTACLE_SIZE))
    chunks: list[np.ndarray] = []
    start = 0
    for i, (kind, pose, half, radius, data) in enumerate(rows):
        t = table[i]
        t[OBSTACLE_TYPE] = int(kind)
        t[OBSTACLE_POSE : OBSTACLE_POSE + 12] = np.asarray(pose)[:3, :].reshape(12)
        t[OBSTACLE_HALF : OBSTACLE_HALF + 3] = half
        t[OBSTACLE_RADIUS] = radius
        bound_radius = float(np.linalg.norm(half)) + radius
        if kind == ObstacleType.HALFSPACE:
            bound_radius = np.inf
        if data is not None:
            count = len(data) // 3 if kind == ObstacleType.MESH else len(data)
            t[OBSTACLE_START] = start
            t[OBSTACLE_COUNT] = count
            lo, hi = data.min(axis=0), data.max(axis=0)
            mid = 0.5 * (lo + hi)
            t[OBSTACLE_BOUND : OBSTACLE_BOUND + 3] = mid
            bound_radius = float(np.max(np.linalg.norm(data - mid, axis=1))) + radius
            chunks.append(np.asarray(data, dtype=np.float64))
            start += len(data)
        t[OBSTACLE_BOUND_RADIUS] = bound_radius
    data_rows = np.concatenate(chunks) if chunks else np.zeros((1, 3))
    data_rows = np.ascontiguousarray(data_rows)
    for a in (table, data_rows):
        a.setflags(write=False)
    return table, data_rows


def pack_pairs(
    obstacle_pairs: Sequence[tuple[int, int]], self_pairs: Sequence[tuple[int, int]]
) -> np.ndarray:
    """The ``pairs`` table: ``(link, obstacle)`` rows first, then ``(link, link)`` rows."""
    out = np.zeros((len(obstacle_pairs) + len(self_pairs), PAIR_SIZE), dtype=np.int64)
    for i, (a, b) in enumerate(obstacle_pairs):
        out[i] = (PAIR_OBSTACLE, a, b)
    k = len(obstacle_pairs)
    for i, (a, b) in enumerate(self_pairs):
        out[k + i] = (PAIR_SELF, a, b)
    out.setflags(write=False)
    return out


def read_out_row(row: np.ndarray) -> dict[str, object]:
    """One ``out`` row as named Python values (the reader side of the table)."""
    return {
        "distance": float(row[OUT_DISTANCE]),
        "normal": np.array(row[OUT_NORMAL : OUT_NORMAL + 3]),
        "point_a": np.array(row[OUT_POINT_A : OUT_POINT_A + 3]),
        "point_b": np.array(row[OUT_POINT_B : OUT_POINT_B + 3]),
        "node_a": int(row[OUT_NODE_A]),
        "node_b": int(row[OUT_NODE_B]),
        "sphere_a": int(row[OUT_SPHERE_A]),
        "sphere_b": int(row[OUT_SPHERE_B]),
        "exact": bool(row[OUT_EXACT]),
    }
