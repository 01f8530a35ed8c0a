"""Shapes attached to frames: what a link looks like (visual) and what it occupies (collision).

Kinematics never reads them; they ride along in :attr:`Model.geometry` for drawing,
collision checking and export. Each shape sits in its frame at ``origin`` (a 4x4 pose of
the shape in the frame) and has a ``kind``, ``"visual"`` or ``"collision"``. Lengths are
in the model's unit (m), as in URDF:

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
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, overload

import numpy as np
from numpy.typing import ArrayLike

from ._warnings import warn_outside
from .errors import InvalidValueError

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


def _pose(origin: object) -> np.ndarray:
    T = np.eye(4) if origin is None else np.array(origin, dtype=float)
    if T.shape != (4, 4) or not np.all(np.isfinite(T)):
        raise InvalidValueError(f"geometry origin must be a finite 4x4 pose, got {origin!r}")
    T.setflags(write=False)
    return T


def _positive(value: float, what: str) -> float:
    v = float(value)
    if not (np.isfinite(v) and v >= 0.0):
        raise InvalidValueError(f"{what} must be a finite number >= 0, got {value!r}")
    return v


@dataclass(frozen=True, eq=False, kw_only=True)
class Geometry:
    """A shape in a frame: its pose ``origin`` (4x4) in the frame and its ``kind``."""

    origin: np.ndarray = field(default_factory=lambda: np.eye(4))
    kind: GeometryKind = "visual"
    #: The ``name`` attribute of the URDF ``<visual>`` / ``<collision>`` element, if any.
    name: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "origin", _pose(self.origin))
        if self.kind not in GEOMETRY_KINDS:
            raise InvalidValueError(
                f"geometry kind must be one of {', '.join(GEOMETRY_KINDS)}, got {self.kind!r}"
            )


@dataclass(frozen=True, eq=False)
class Box(Geometry):
    """A box of edge lengths ``size`` = (x, y, z) [m], centred on its origin."""

    size: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def __post_init__(self) -> None:
        super().__post_init__()
        if len(self.size) != 3:
            raise InvalidValueError(f"Box size must be 3 numbers, got {self.size!r}")
        size = tuple(_positive(s, "Box size") for s in self.size)
        object.__setattr__(self, "size", size)


@dataclass(frozen=True, eq=False)
class Sphere(Geometry):
    """A sphere of ``radius`` [m] centred on its origin."""

    radius: float = 0.0

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "radius", _positive(self.radius, "Sphere radius"))


@dataclass(frozen=True, eq=False)
class Cylinder(Geometry):
    """A cylinder of ``radius`` and ``length`` [m] along its z axis, centred on its origin."""

    radius: float = 0.0
    length: float = 0.0

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "radius", _positive(self.radius, "Cylinder radius"))
        object.__setattr__(self, "length", _positive(self.length, "Cylinder length"))


@dataclass(frozen=True, eq=False)
class Capsule(Geometry):
    """A cylinder of ``length`` [m] along z capped by hemispheres of ``radius``, centred."""

    radius: float = 0.0
    length: float = 0.0

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "radius", _positive(self.radius, "Capsule radius"))
        object.__setattr__(self, "length", _positive(self.length, "Capsule length"))


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


@dataclass(frozen=True, eq=False)
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
