"""Obstacles: the shapes of the world the robot must keep clear of.

Each obstacle is fixed in the world frame; lengths in metres. The solid primitives
:class:`Box`, :class:`Sphere`, :class:`Capsule` and :class:`Cylinder` are the shapes of
:mod:`kinetree.geometry` (one family: the same class a link's shape is), posed in the
world by their ``pose`` (= ``origin``). This module adds the shapes only the world has:
:class:`HalfSpace` (a floor), :class:`PointCloud` (balls of one radius; 0: points) and
:class:`TriangleMesh` (a surface: its distance is to the nearest triangle, so a robot
sphere wholly inside a closed mesh is not seen as penetrating; use solid shapes for things
the robot could be inside of). The solids have signed distances: negative inside.
:func:`as_obstacle` places a shape in the world (a :class:`kinetree.geometry.Mesh` with
its vertices becomes a :class:`TriangleMesh`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .. import geometry as geo
from .._validate import as_array, check_rigid
from ..errors import InvalidValueError, ShapeError, UnsupportedError
from ..geometry import Box, Capsule, Cylinder, Sphere
from .layout import ObstacleType

__all__ = [
    "Box",
    "Capsule",
    "Cylinder",
    "HalfSpace",
    "Obstacle",
    "PointCloud",
    "Primitive",
    "Sphere",
    "TriangleMesh",
    "as_obstacle",
    "obstacle_rows",
    "obstacle_tuple",
    "primitive_row",
]

Row = tuple[int, np.ndarray, np.ndarray, float, "np.ndarray | None"]


def _pose(pose: Any, what: str) -> np.ndarray:
    T = np.eye(4) if pose is None else as_array(pose, f"{what} pose", (4, 4))
    if T.shape != (4, 4):
        raise ShapeError(f"{what} pose must be one 4x4 matrix, got shape {T.shape}")
    check_rigid(T, f"{what} pose")
    T = np.array(T)
    T.setflags(write=False)
    return T


def _vector(value: Any, what: str) -> np.ndarray:
    v = as_array(value, what, (3,))
    if v.shape != (3,):
        raise ShapeError(f"{what} must be 3 numbers, got shape {v.shape}")
    v = np.array(v)
    v.setflags(write=False)
    return v


@dataclass(frozen=True, eq=False, kw_only=True)
class Obstacle:
    """A shape fixed in the world; ``name`` shows in distance results (default: its type
    and index in the obstacle list)."""

    name: str | None = None

    def __post_init__(self) -> None:
        if self.name is not None and not isinstance(self.name, str):
            raise InvalidValueError(
                f"{type(self).__name__} name must be a str or None, got {self.name!r}"
            )

    def row(self) -> Row:
        """``(type, pose 4x4, half extents, radius, data rows or None)`` for
        :func:`kinetree.collision.layout.pack_obstacle_rows`."""
        raise NotImplementedError  # every subclass defines it


@dataclass(frozen=True, eq=False)
class HalfSpace(Obstacle):
    """Everything on the far side of a plane: the solid ``normal . x <= offset`` (world,
    ``normal`` a direction, normalised here; ``offset`` [m]). The floor under a robot is
    ``HalfSpace(normal=(0, 0, 1), offset=0)``."""

    normal: Any = (0.0, 0.0, 1.0)
    offset: float = 0.0

    def __post_init__(self) -> None:
        super().__post_init__()
        n = _vector(self.normal, "HalfSpace normal")
        norm = float(np.linalg.norm(n))
        if norm < 1e-12:
            raise InvalidValueError(f"HalfSpace normal must be nonzero, got {n.tolist()}")
        n = n / norm
        n.setflags(write=False)
        object.__setattr__(self, "normal", n)
        off = as_array(self.offset, "HalfSpace offset")
        if off.shape != ():
            raise ShapeError(f"HalfSpace offset must be one number [m], got {self.offset!r}")
        object.__setattr__(self, "offset", float(off))

    def row(self) -> Row:
        n = np.asarray(self.normal)
        # A rotation taking z to n: any frame whose third column is n.
        helper = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
        x = np.cross(helper, n)
        x /= np.linalg.norm(x)
        T = np.eye(4)
        T[:3, 0], T[:3, 1], T[:3, 2] = x, np.cross(n, x), n
        T[:3, 3] = self.offset * n
        return int(ObstacleType.HALFSPACE), T, np.zeros(3), 0.0, None


@dataclass(frozen=True, eq=False)
class PointCloud(Obstacle):
    """Points ``(n, 3)`` in the world [m], each a ball of ``radius`` [m] (0: bare points).

    Distances loop over every point (compiled, brute force): a cloud of 10,000 points
    costs about 10,000 point distances per robot sphere near it.
    """

    points: Any = field(default_factory=lambda: np.zeros((0, 3)))
    radius: float = 0.0

    def __post_init__(self) -> None:
        super().__post_init__()
        pts = as_array(self.points, "PointCloud points", (3,))
        if pts.ndim != 2 or pts.shape[0] == 0:
            raise ShapeError(f"PointCloud points must have shape (n, 3), n >= 1, got {pts.shape}")
        pts = np.array(pts)
        pts.setflags(write=False)
        object.__setattr__(self, "points", pts)
        object.__setattr__(self, "radius", geo.check_length(self.radius, "PointCloud radius"))

    def row(self) -> Row:
        return int(ObstacleType.POINTS), np.eye(4), np.zeros(3), self.radius, self.points


@dataclass(frozen=True, eq=False)
class TriangleMesh(Obstacle):
    """A triangle surface: ``vertices`` (n, 3) [m] in the frame ``pose`` (4x4, world) and
    ``faces`` (m, 3) vertex indices. Brute force over the triangles, like :class:`PointCloud`."""

    vertices: Any = field(default_factory=lambda: np.zeros((0, 3)))
    faces: Any = field(default_factory=lambda: np.zeros((0, 3), dtype=np.int64))
    pose: Any = None

    def __post_init__(self) -> None:
        super().__post_init__()
        v = as_array(self.vertices, "TriangleMesh vertices", (3,))
        if v.ndim != 2:
            raise ShapeError(f"TriangleMesh vertices must have shape (n, 3), got {v.shape}")
        f = np.asarray(self.faces)
        if f.ndim != 2 or f.shape[1:] != (3,) or f.shape[0] == 0:
            raise ShapeError(f"TriangleMesh faces must have shape (m, 3), m >= 1, got {f.shape}")
        if not np.issubdtype(f.dtype, np.integer) or f.min() < 0 or f.max() >= len(v):
            raise InvalidValueError(
                f"TriangleMesh faces must be vertex indices in [0, {len(v) - 1}]"
            )
        v, f = np.array(v), np.array(f, dtype=np.int64)
        for a in (v, f):
            a.setflags(write=False)
        object.__setattr__(self, "vertices", v)
        object.__setattr__(self, "faces", f)
        object.__setattr__(self, "pose", _pose(self.pose, "TriangleMesh"))

    def row(self) -> Row:
        corners = self.vertices[self.faces].reshape(-1, 3)
        return int(ObstacleType.MESH), self.pose, np.zeros(3), 0.0, corners


#: The solid primitives of :mod:`kinetree.geometry` an obstacle can be, directly.
Primitive = Box | Sphere | Capsule | Cylinder


def primitive_row(shape: Primitive) -> Row:
    """``(type, pose 4x4, half extents, radius, None)`` of a primitive in the world at its
    ``origin``, for :func:`kinetree.collision.layout.pack_obstacle_rows`."""
    T = shape.origin
    if isinstance(shape, Box):
        return int(ObstacleType.BOX), T, 0.5 * np.array(shape.size), 0.0, None
    if isinstance(shape, Sphere):
        T_center = np.eye(4)
        T_center[:3, 3] = T[:3, 3]
        return int(ObstacleType.SPHERE), T_center, np.zeros(3), shape.radius, None
    half = np.array([0.0, 0.0, 0.5 * shape.length])
    kind = ObstacleType.CAPSULE if isinstance(shape, Capsule) else ObstacleType.CYLINDER
    return int(kind), T, half, shape.radius, None


def as_obstacle(
    shape: Obstacle | geo.Geometry, pose: ArrayLike | None = None
) -> Obstacle | Primitive:
    """``shape`` as an obstacle placed at ``pose @ shape.origin`` (``pose`` default: the
    identity, and the shape is returned as it is): an :class:`Obstacle`, a primitive of
    :mod:`kinetree.geometry` (one family with the world's: no copy is needed), or a
    :class:`kinetree.geometry.Mesh` as a :class:`TriangleMesh` (its vertices loaded)."""
    if isinstance(shape, Obstacle):
        return shape
    if not isinstance(shape, geo.Geometry):
        raise UnsupportedError(
            f"an obstacle must be a kinetree.Box, Sphere, Capsule, Cylinder, HalfSpace, "
            f"PointCloud, TriangleMesh or a kinetree.geometry shape, got {type(shape).__name__}"
        )
    T = shape.origin if pose is None else _pose(pose, type(shape).__name__) @ shape.origin
    if isinstance(shape, Box | Sphere | Capsule | Cylinder):
        return shape if pose is None else dataclasses.replace(shape, origin=T)
    if isinstance(shape, geo.Mesh) and shape.vertices is not None and shape.faces is not None:
        return TriangleMesh(shape.vertices, shape.faces, T, name=shape.name)
    raise UnsupportedError(f"mesh {getattr(shape, 'path', '')!r} has no vertices loaded")


def obstacle_tuple(obstacles: Any) -> tuple[Any, ...]:
    """``obstacles`` (one obstacle or an iterable of them) as a tuple, each item left to
    :func:`as_obstacle`; an array, a string or a number is refused, naming its type (an
    array would otherwise be taken for a list of numbers)."""
    if isinstance(obstacles, (Obstacle, geo.Geometry)):
        return (obstacles,)
    if isinstance(obstacles, (np.ndarray, str, bytes)) or not isinstance(obstacles, Iterable):
        shape = f" of shape {obstacles.shape}" if isinstance(obstacles, np.ndarray) else ""
        raise InvalidValueError(
            "obstacles must be an obstacle or a list of them (kinetree.Box, Sphere, Capsule, "
            "Cylinder, HalfSpace, PointCloud, TriangleMesh or kinetree.geometry shapes), got "
            f"{type(obstacles).__name__}{shape}"
        )
    return tuple(obstacles)


def obstacle_rows(
    obstacles: Iterable[Obstacle | geo.Geometry] | Obstacle | geo.Geometry,
) -> tuple[list[Row], list[str]]:
    """The rows and display names of ``obstacles`` (a list, or one obstacle)."""
    rows: list[Row] = []
    names: list[str] = []
    for i, ob in enumerate(obstacle_tuple(obstacles)):
        o = as_obstacle(ob)
        rows.append(o.row() if isinstance(o, Obstacle) else primitive_row(o))
        names.append(o.name if o.name else f"{type(o).__name__.lower()}{i}")
    return rows, names
