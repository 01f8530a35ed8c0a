"""Shapes: what a link looks like (visual) and occupies (collision), and the world's obstacles.

One family of shapes serves both. Attached to a frame, a shape rides along in
:attr:`Model.geometry` for drawing, collision checking and export (kinematics never reads
it); given as an obstacle (``model.distance(q, [Box(...)])``, ``ik(...,
obstacles=...)``), the same shape is fixed in the world. Each shape sits at ``origin``, a
rigid 4x4 pose in its parent frame: the link's frame, or the world for an obstacle
(``pose`` is the same matrix under the name obstacles use; either may be given, and
:class:`Sphere` also takes its ``center``). ``kind`` is ``"visual"`` or ``"collision"``
(what a link's shape is for; an obstacle ignores it). Lengths are in the model's unit
(m), as in URDF:

- :class:`Box` ``size`` (x, y, z edge lengths), centred on its origin;
- :class:`Sphere` ``radius``;
- :class:`Cylinder` ``radius`` and ``length`` along the shape's z axis, centred;
- :class:`Capsule` a cylinder of ``length`` along z with a hemisphere of ``radius`` on
  each end (total extent ``length + 2 radius``; the pybullet / ROS 2 URDF extension);
- :class:`Mesh` a triangle mesh file: ``path`` as written in the file (``package://...``),
  ``file`` where it was found (None when it was not), ``scale`` per axis, and
  ``vertices`` (n, 3) [m, scale applied] and ``faces`` (m, 3) vertex indices when the
  file could be read (through trimesh), else None. URDF meshes are read when first
  used (``Mesh(lazy=True)``): loading a robot opens no mesh file.

The world-only obstacles (a half-space, a point cloud, a triangle surface) are in
:mod:`kinetree.collision.world`, which also turns a :class:`Mesh` into an obstacle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, overload

import numpy as np
from numpy.typing import ArrayLike

from ._validate import as_array, check_rigid
from ._warnings import warn_outside
from .errors import InvalidValueError, ShapeError

__all__ = [
    "GEOMETRY_KINDS",
    "Box",
    "Capsule",
    "Cylinder",
    "Geometry",
    "GeometryWarning",
    "Mesh",
    "Sphere",
    "read_mesh",
]

GeometryKind = Literal["visual", "collision"]
GEOMETRY_KINDS: tuple[str, ...] = ("visual", "collision")


class GeometryWarning(UserWarning):
    """A shape kinetree skipped or could not read: the model loads without it."""


def _pose(origin: object, what: str = "geometry origin") -> np.ndarray:
    """``origin`` as a read-only rigid 4x4 pose (None: the identity)."""
    try:
        T = np.eye(4) if origin is None else np.array(origin, dtype=float)
    except (TypeError, ValueError):
        raise InvalidValueError(f"{what} must be a finite 4x4 pose, got {origin!r}") from None
    if T.shape != (4, 4) or not np.all(np.isfinite(T)):
        shape = f"shape {T.shape}" if T.shape != (4, 4) else "NaN or inf"
        raise InvalidValueError(f"{what} must be a finite 4x4 pose, got {shape}")
    check_rigid(T, what)
    T.setflags(write=False)
    return T


def check_length(value: object, what: str) -> float:
    """``value`` as a float length [m], raising :class:`InvalidValueError` naming ``what``
    unless it is a finite number >= 0."""
    try:
        v = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InvalidValueError(f"{what} must be a number [m], got {value!r}") from None
    if not (np.isfinite(v) and v >= 0.0):
        raise InvalidValueError(f"{what} must be a finite number >= 0 [m], got {value!r}")
    return v


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class Geometry:
    """A shape in a frame: its pose ``origin`` (4x4) in the frame and its ``kind``."""

    origin: np.ndarray = field(default_factory=lambda: np.eye(4))
    kind: GeometryKind = "visual"
    #: The ``name`` attribute of the URDF ``<visual>`` / ``<collision>`` element, if any.
    name: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "origin", _pose(self.origin))
        self._check_kind()

    def _check_kind(self) -> None:
        if self.kind not in GEOMETRY_KINDS:
            raise InvalidValueError(
                f"geometry kind must be one of {', '.join(GEOMETRY_KINDS)}, got {self.kind!r}"
            )
        if self.name is not None and not isinstance(self.name, str):
            raise InvalidValueError(
                f"{type(self).__name__} name must be a str or None, got {self.name!r}"
            )

    def _place(self, pose: object, origin: object, kind: object, name: object) -> None:
        """Set the common fields of a primitive: ``pose`` and ``origin`` name one matrix."""
        what = type(self).__name__
        if pose is not None and origin is not None:
            raise InvalidValueError(f"{what}: give pose or origin (the same 4x4), not both")
        T = pose if origin is None else origin
        object.__setattr__(self, "origin", _pose(T, f"{what} pose"))
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "name", name)
        self._check_kind()

    @property
    def pose(self) -> np.ndarray:
        """``origin``: the shape's 4x4 pose in its parent frame (the world for an obstacle)."""
        return self.origin

    def __repr__(self) -> str:
        """One short line: the shape's sizes, where it sits, its kind (never a mesh's
        arrays, and a mesh not read yet stays unread)."""
        parts = self._repr_parts()
        t = self.origin[:3, 3]
        if np.any(t != 0.0):
            parts.append(f"at=({', '.join(f'{v:.6g}' for v in t)})")
        if np.any(self.origin[:3, :3] != np.eye(3)):
            parts.append("rotated")
        parts.append(f"kind={self.kind!r}")
        if self.name is not None:
            parts.append(f"name={self.name!r}")
        return f"{type(self).__name__}({', '.join(parts)})"

    def _repr_parts(self) -> list[str]:
        """The fields of this kind of shape, as :meth:`__repr__` shows them."""
        return []


@dataclass(frozen=True, eq=False, init=False, repr=False)
class Box(Geometry):
    """A box of edge lengths ``size`` = (x, y, z) [m], centred on its pose:
    ``Box(size, pose)``."""

    size: tuple[float, float, float]

    def __init__(
        self,
        size: ArrayLike = (0.0, 0.0, 0.0),
        pose: ArrayLike | None = None,
        *,
        origin: ArrayLike | None = None,
        kind: GeometryKind = "visual",
        name: str | None = None,
    ) -> None:
        self._place(pose, origin, kind, name)
        edges = np.asarray(size, dtype=object).reshape(-1)
        if edges.shape != (3,):
            raise ShapeError(f"Box size must be 3 edge lengths [m], got {size!r}")
        object.__setattr__(self, "size", tuple(check_length(e, "Box size") for e in edges))

    def _repr_parts(self) -> list[str]:
        return [f"size=({', '.join(f'{v:.6g}' for v in self.size)})"]


@dataclass(frozen=True, eq=False, init=False, repr=False)
class Sphere(Geometry):
    """A ball of ``radius`` [m] centred on its pose's origin: ``Sphere(radius, center)``
    with ``center`` (3,) [m], or ``pose=`` a 4x4."""

    radius: float

    def __init__(
        self,
        radius: float = 0.0,
        center: ArrayLike | None = None,
        *,
        pose: ArrayLike | None = None,
        origin: ArrayLike | None = None,
        kind: GeometryKind = "visual",
        name: str | None = None,
    ) -> None:
        if center is not None:
            if pose is not None or origin is not None:
                raise InvalidValueError("Sphere: give center or pose (origin), not both")
            c = as_array(center, "Sphere center", (3,))
            if c.shape != (3,):
                raise ShapeError(f"Sphere center must be 3 numbers, got shape {c.shape}")
            pose = np.eye(4)
            pose[:3, 3] = c
        self._place(pose, origin, kind, name)
        object.__setattr__(self, "radius", check_length(radius, "Sphere radius"))

    @property
    def center(self) -> np.ndarray:
        """The centre (3,) [m] in the parent frame (read-only)."""
        return self.origin[:3, 3]

    def _repr_parts(self) -> list[str]:
        return [f"radius={self.radius:.6g}"]


@dataclass(frozen=True, eq=False, init=False, repr=False)
class _Segment(Geometry):
    """A shape of ``radius`` and ``length`` [m] along its pose's z axis, centred:
    ``Shape(radius, length, pose)`` (the common part of :class:`Cylinder` and
    :class:`Capsule`)."""

    radius: float
    length: float

    def __init__(
        self,
        radius: float = 0.0,
        length: float = 0.0,
        pose: ArrayLike | None = None,
        *,
        origin: ArrayLike | None = None,
        kind: GeometryKind = "visual",
        name: str | None = None,
    ) -> None:
        self._place(pose, origin, kind, name)
        what = type(self).__name__
        object.__setattr__(self, "radius", check_length(radius, f"{what} radius"))
        object.__setattr__(self, "length", check_length(length, f"{what} length"))

    def _repr_parts(self) -> list[str]:
        return [f"radius={self.radius:.6g}", f"length={self.length:.6g}"]


@dataclass(frozen=True, eq=False, init=False, repr=False)
class Cylinder(_Segment):
    """A solid cylinder of ``radius`` and ``length`` [m] along its pose's z axis, centred:
    ``Cylinder(radius, length, pose)``."""


@dataclass(frozen=True, eq=False, init=False, repr=False)
class Capsule(_Segment):
    """A segment of ``length`` [m] along its pose's z axis, centred, swept by a ball of
    ``radius`` [m] (total extent ``length + 2 radius``; the pybullet / ROS 2 URDF
    extension): ``Capsule(radius, length, pose)``."""


class _MeshArray:
    """``Mesh.vertices`` / ``Mesh.faces``: the array given, or, for a mesh made with
    ``lazy=True``, the file's read on first use (loading a robot reads no mesh file; the
    first drawing, collision fit or sole search does). A file that cannot be read gives
    one :class:`GeometryWarning` and None from then on."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.key = f"_{name}"

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> None: ...
    @overload
    def __get__(self, obj: Mesh, owner: type | None = None) -> np.ndarray | None: ...
    def __get__(self, obj: Mesh | None, owner: type | None = None) -> np.ndarray | None:
        if obj is None:
            return None  # the dataclass default
        if obj.__dict__.get("_unread"):
            obj._read()
        out: np.ndarray | None = obj.__dict__.get(self.key)
        return out

    def __set__(self, obj: Mesh, value: ArrayLike | None) -> None:
        obj.__dict__[self.key] = value


@dataclass(frozen=True, eq=False, repr=False)
class Mesh(Geometry):
    """A triangle mesh file; see the module docstring for the fields.

    ``lazy=True`` (what the URDF loader gives): ``vertices`` and ``faces`` are read from
    ``file`` when first asked for, not when the model loads.
    """

    path: str = ""
    scale: tuple[float, float, float] = (1.0, 1.0, 1.0)
    vertices: _MeshArray = _MeshArray()
    faces: _MeshArray = _MeshArray()
    #: Where ``path`` was found on this machine (None: not found).
    file: Path | None = None
    lazy: bool = field(default=False, repr=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        if len(self.scale) != 3:
            raise InvalidValueError(f"Mesh scale must be 3 numbers, got {self.scale!r}")
        scale = tuple(float(s) for s in self.scale)
        if not all(np.isfinite(scale)):
            raise InvalidValueError(f"Mesh scale must be finite, got {self.scale!r}")
        object.__setattr__(self, "scale", scale)
        self._keep(self.__dict__.get("_vertices"), self.__dict__.get("_faces"))
        unread = self.lazy and self.file is not None and self.__dict__.get("_vertices") is None
        self.__dict__["_unread"] = unread

    def _repr_parts(self) -> list[str]:
        parts = [repr(self.path or (str(self.file) if self.file else ""))]
        if self.scale != (1.0, 1.0, 1.0):
            parts.append(f"scale=({', '.join(f'{v:.6g}' for v in self.scale)})")
        vertices, faces = self.__dict__.get("_vertices"), self.__dict__.get("_faces")
        if self.__dict__.get("_unread"):
            parts.append("not read yet")
        elif vertices is None:
            parts.append("no vertices")
        else:
            n_faces = 0 if faces is None else len(faces)
            parts.append(f"{len(vertices):,} vertices, {n_faces:,} faces")
        return parts

    def _keep(self, vertices: ArrayLike | None, faces: ArrayLike | None) -> None:
        for attr, a in (("vertices", vertices), ("faces", faces)):
            if a is not None:
                a = np.array(a, dtype=float if attr == "vertices" else np.int64)
                if a.ndim != 2 or a.shape[1] != 3:
                    raise InvalidValueError(f"Mesh {attr} must have shape (n, 3), got {a.shape}")
                a.setflags(write=False)
            self.__dict__[f"_{attr}"] = a

    def _read(self) -> None:
        self.__dict__["_unread"] = False
        if self.file is None:
            return
        try:
            vertices, faces = read_mesh(self.file, self.scale)
        except Exception as exc:  # any reader failure: the model goes on without it
            warn_outside(
                f"mesh {str(self.file)!r} (from {self.path!r}) could not be read "
                f"({type(exc).__name__}: {exc}); the shape is left without vertices",
                GeometryWarning,
            )
            return
        self._keep(vertices, faces)


def read_mesh(file: Path, scale: tuple[float, float, float]) -> tuple[np.ndarray, np.ndarray]:
    """Vertices (scaled) [m] and triangle faces of a mesh file, through trimesh.

    A file holding a scene (several meshes, as COLLADA often does) is flattened into one
    mesh with each part at its pose in the scene. Raises ValueError for a file without
    triangles, else whatever trimesh raises (ImportError without it); the URDF loader
    turns that into a warning.
    """
    import trimesh

    loaded: Any = trimesh.load(str(file), force="mesh", process=False)
    vertices = np.asarray(loaded.vertices, dtype=np.float64) * np.asarray(scale)
    faces = np.asarray(loaded.faces, dtype=np.int64).reshape(-1, 3)
    if len(vertices) == 0 or len(faces) == 0:
        raise ValueError("no triangles in the file")
    return vertices, faces
