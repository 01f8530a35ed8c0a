"""What every drawing of a model needs, whatever draws it (the browser viewer, matplotlib).

Bones: :func:`frame_parents` and :func:`bones` join each frame to its nearest frame
ancestor, the lines of a stick figure (hidden nodes, the inner nodes of ball and free
joints, sit at their joint's point and are skipped; a frame reached through a prismatic
joint, such as a BVH root's position channels, hangs free).

Parts: every shape of :attr:`Model.geometry` (:mod:`kinetree.geometry`) becomes a :class:`Part`:
vertices ``(n, 3)`` [m] in its *frame* (the shape's ``origin`` already applied), faces
``(m, 3)`` and an RGB colour in [0, 1]. Boxes, spheres, cylinders and capsules are
tessellated here; a :class:`~kinetree.geometry.Mesh` gives the triangles the loader
read. With ``colors=True`` a mesh file with materials (COLLADA, OBJ with MTL, glTF) is
read again, through trimesh, for the colour of each of its parts.

A mesh the loader could not find or read has no triangles: :func:`model_parts` lists it
in :attr:`Parts.missing` and leaves it out, so a drawing shows that link as a skeleton.

:func:`decimate` thins a triangle soup by vertex clustering (numpy only) for renderers
that cannot take a few hundred thousand triangles (matplotlib).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .errors import InvalidValueError
from .geometry import GEOMETRY_KINDS, Box, Capsule, Cylinder, Geometry, Mesh, Sphere
from .model import JointType

__all__ = [
    "DEFAULT_COLORS",
    "Part",
    "Parts",
    "bones",
    "decimate",
    "frame_parents",
    "missing_bones",
    "model_parts",
    "shape_triangles",
]

#: Colour [0, 1] of a part whose file gives none: light grey for visual shapes, a
#: translucent-looking orange for collision shapes.
DEFAULT_COLORS: dict[str, tuple[float, float, float]] = {
    "visual": (0.78, 0.80, 0.83),
    "collision": (0.95, 0.55, 0.15),
}


@dataclass(frozen=True, eq=False)
class Part:
    """One coloured triangle mesh attached to a frame.

    Attributes:
        frame: the frame the part moves with.
        vertices: ``(n, 3)`` [m], in the frame's coordinates (shape origin applied).
        faces: ``(m, 3)`` vertex indices.
        color: RGB in [0, 1].
        kind: ``"visual"`` or ``"collision"``.
        label: where the part came from (a mesh path, or the shape's type).
    """

    frame: str
    vertices: np.ndarray
    faces: np.ndarray
    color: tuple[float, float, float]
    kind: str
    label: str


@dataclass(frozen=True)
class Parts:
    """The parts of one kind of a model's geometry, and the shapes that had none.

    Attributes:
        parts: every drawable part.
        missing: ``(frame, mesh path)`` of each mesh the loader could not read.
    """

    parts: tuple[Part, ...] = ()
    missing: tuple[tuple[str, str], ...] = ()
    frames: frozenset[str] = field(default_factory=frozenset)

    @property
    def n_faces(self) -> int:
        """Total number of triangles."""
        return sum(len(p.faces) for p in self.parts)


# --- bones -------------------------------------------------------------------------------


def frame_parents(model: Any) -> np.ndarray:
    """For each frame (``frame_names`` order) the index of its nearest frame ancestor,
    or -1 for roots and for frames attached through prismatic joints."""
    hidden = np.asarray(model.hidden, dtype=bool)
    node_to_frame = -np.ones(model.n_nodes, dtype=np.int64)
    node_to_frame[~hidden] = np.arange(len(model.frame_names))
    out = -np.ones(len(model.frame_names), dtype=np.int64)
    for node in range(model.n_nodes):
        f = node_to_frame[node]
        if f < 0:
            continue
        p = int(model.parent[node])
        floating = model.joint_type[node] == JointType.PRISMATIC  # a channel, not a bone
        while p >= 0 and node_to_frame[p] < 0:
            floating = floating or model.joint_type[p] == JointType.PRISMATIC
            p = int(model.parent[p])
        out[f] = node_to_frame[p] if p >= 0 and not floating else -1
    return out


def bones(model: Any) -> np.ndarray:
    """``(k, 2)`` frame indices (parent, child) of every bone of the stick figure."""
    parents = frame_parents(model)
    child = np.flatnonzero(parents >= 0)
    return np.stack([parents[child], child], axis=-1).astype(np.int64).reshape(-1, 2)


def missing_bones(model: Any, parts: Parts) -> np.ndarray:
    """``(k, 2)`` bones that stand in for the meshes of ``parts.missing``: from each link
    with a missing mesh to its children, or from its parent to it for a leaf."""
    names = list(model.frame_names)
    all_bones = bones(model)
    broken = {names.index(f) for f, _ in parts.missing}
    parents = {int(c): int(p) for p, c in all_bones}
    heads = set(all_bones[:, 0].tolist())
    pairs = [b for b in all_bones.tolist() if b[0] in broken]
    pairs += [[parents[f], f] for f in sorted(broken) if f in parents and f not in heads]
    return np.array(pairs, dtype=np.int64).reshape(-1, 2)


# --- tessellation of the primitive shapes ------------------------------------------------


def _lathe(profile: np.ndarray, segments: int) -> tuple[np.ndarray, np.ndarray]:
    """Revolve ``profile`` ``(k, 2)`` of (radius, z) points about z: a closed surface when
    the profile starts and ends on the axis (radius 0)."""
    k = len(profile)
    angle = np.linspace(0.0, 2.0 * np.pi, segments, endpoint=False)
    c, s = np.cos(angle), np.sin(angle)
    r, z = profile[:, 0:1], profile[:, 1:2]
    V = np.stack([r * c, r * s, np.broadcast_to(z, (k, segments))], axis=-1).reshape(-1, 3)
    i = np.arange(k - 1)[:, None] * segments
    j = np.arange(segments)[None, :]
    a, b = i + j, i + (j + 1) % segments
    quads = np.stack([a, b, b + segments, a + segments], axis=-1).reshape(-1, 4)
    F = np.concatenate([quads[:, [0, 1, 2]], quads[:, [0, 2, 3]]])
    return V, F


def _arc(radius: float, z0: float, start: float, stop: float, n: int) -> np.ndarray:
    t = np.linspace(start, stop, n)
    return np.stack([radius * np.cos(t), z0 + radius * np.sin(t)], axis=-1)


def shape_triangles(shape: Geometry, segments: int = 24) -> tuple[np.ndarray, np.ndarray] | None:
    """Vertices ``(n, 3)`` [m] and faces ``(m, 3)`` of ``shape`` in its own coordinates
    (before its ``origin``); None for a mesh without triangles (not found or unreadable).

    Round shapes get ``segments`` facets around their axis (at least 3).
    """
    if segments < 3:
        raise InvalidValueError(f"segments must be at least 3, got {segments}")
    if isinstance(shape, Mesh):
        if shape.vertices is None or shape.faces is None:
            return None
        return np.asarray(shape.vertices, dtype=float), np.asarray(shape.faces, dtype=np.int64)
    if isinstance(shape, Box):
        half = np.asarray(shape.size) / 2.0
        corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)])
        F = np.array([
            [0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
            [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3],
        ])  # fmt: skip
        return corners * half, F
    rings = max(2, segments // 2)
    if isinstance(shape, Sphere):
        profile = _arc(shape.radius, 0.0, -np.pi / 2, np.pi / 2, rings + 1)
    elif isinstance(shape, Capsule):
        h = shape.length / 2.0
        profile = np.concatenate([
            _arc(shape.radius, -h, -np.pi / 2, 0.0, rings // 2 + 1),
            _arc(shape.radius, h, 0.0, np.pi / 2, rings // 2 + 1),
        ])  # fmt: skip
    elif isinstance(shape, Cylinder):
        h, r = shape.length / 2.0, shape.radius
        profile = np.array([[0.0, -h], [r, -h], [r, h], [0.0, h]])
    else:
        raise InvalidValueError(f"cannot tessellate a {type(shape).__name__}")
    return _lathe(profile, segments)


# --- colours of mesh files ---------------------------------------------------------------


@functools.lru_cache(maxsize=256)
def _file_parts(
    file: Path, scale: tuple[float, float, float]
) -> tuple[tuple[np.ndarray, np.ndarray, tuple[float, float, float] | None], ...]:
    """The parts of a mesh file with their material colours (None: no colour), through
    trimesh; () when the file cannot be read again."""
    try:
        import trimesh

        scene: Any = trimesh.load(str(file), process=False)
    except Exception:  # trimesh missing or the file unreadable: the caller keeps its mesh
        return ()
    if not hasattr(scene, "graph"):  # a single mesh
        items = [(np.eye(4), scene)]
    else:
        items = []
        for node in scene.graph.nodes_geometry:
            T, name = scene.graph[node]
            items.append((np.asarray(T, dtype=float), scene.geometry[name]))
    out = []
    for T, geom in items:
        faces = np.asarray(getattr(geom, "faces", np.empty((0, 3))), dtype=np.int64)
        if faces.size == 0:
            continue
        V = np.asarray(geom.vertices, dtype=float) @ T[:3, :3].T + T[:3, 3]
        out.append((V * np.asarray(scale), faces.reshape(-1, 3), _material_color(geom)))
    return tuple(out)


def _material_color(geom: Any) -> tuple[float, float, float] | None:
    """The main colour of a trimesh geometry's material or vertex colours, RGB [0, 1]."""
    visual = getattr(geom, "visual", None)
    if visual is None:
        return None
    rgba = None
    try:
        if getattr(visual, "kind", None) == "texture":
            material = visual.material
            rgba = getattr(material, "baseColorFactor", None)
            if rgba is None:
                rgba = getattr(material, "main_color", None)
        elif getattr(visual, "kind", None) in ("face", "vertex"):
            colors = visual.face_colors if visual.kind == "face" else visual.vertex_colors
            rgba = np.asarray(colors, dtype=float).mean(axis=0)
    except Exception:  # an odd material: no colour rather than no mesh
        return None
    if rgba is None:
        return None
    c = np.asarray(rgba, dtype=float).ravel()[:3]
    if c.size != 3 or not np.all(np.isfinite(c)):
        return None
    if c.max() > 1.0:
        c = c / 255.0
    return (float(c[0]), float(c[1]), float(c[2]))


def _mesh_parts(
    shape: Mesh, V: np.ndarray, F: np.ndarray, color: tuple[float, float, float], colors: bool
) -> list[tuple[np.ndarray, np.ndarray, tuple[float, float, float]]]:
    if colors and shape.file is not None:
        found = _file_parts(Path(shape.file), shape.scale)
        n_found = sum(len(f) for _, f, _ in found)
        # Use the file's parts only when they are the triangles the loader read.
        if found and n_found == len(F) and any(c is not None for _, _, c in found):
            return [(v, f, c if c is not None else color) for v, f, c in found]
    return [(V, F, color)]


# --- the model's parts -------------------------------------------------------------------


def model_parts(
    model: Any,
    kind: str = "visual",
    *,
    colors: bool = True,
    segments: int = 24,
    frames: Iterable[str] | None = None,
) -> Parts:
    """Every shape of ``kind`` in ``model.geometry`` as coloured triangles in its frame.

    Args:
        model: a :class:`~kinetree.model.Model`.
        kind: ``"visual"`` or ``"collision"``.
        colors: read material colours from mesh files (slower: each file is read again).
        segments: facets around round shapes.
        frames: only these frames (default all).

    Returns:
        :class:`Parts`: the parts, and the meshes that could not be read.
    """
    if kind not in GEOMETRY_KINDS:
        raise InvalidValueError(f"kind must be one of {', '.join(GEOMETRY_KINDS)}, got {kind!r}")
    wanted = None if frames is None else set(frames)
    default = DEFAULT_COLORS[kind]
    parts: list[Part] = []
    missing: list[tuple[str, str]] = []
    for frame, shapes in model.geometry.items():
        if wanted is not None and frame not in wanted:
            continue
        for shape in shapes:
            if shape.kind != kind:
                continue
            tri = shape_triangles(shape, segments)
            if tri is None:
                missing.append((frame, getattr(shape, "path", "") or type(shape).__name__))
                continue
            V, F = tri
            label = shape.path if isinstance(shape, Mesh) else type(shape).__name__.lower()
            pieces = (
                _mesh_parts(shape, V, F, default, colors)
                if isinstance(shape, Mesh)
                else [(V, F, default)]
            )
            R, p = shape.origin[:3, :3], shape.origin[:3, 3]
            for v, f, c in pieces:
                parts.append(Part(frame, v @ R.T + p, f, c, kind, label))
    return Parts(tuple(parts), tuple(missing), frozenset(p.frame for p in parts))


# --- decimation ----------------------------------------------------------------------------


def _cluster(V: np.ndarray, F: np.ndarray, cell: float) -> tuple[np.ndarray, np.ndarray]:
    """Merge the vertices of each grid cell of size ``cell`` into their mean; drop the
    triangles that collapse and the duplicates that merging creates."""
    keys = np.floor(V / cell).astype(np.int64)
    _, inverse = np.unique(keys, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    counts = np.bincount(inverse).astype(float)
    Vc = np.stack([np.bincount(inverse, V[:, k]) for k in range(3)], axis=-1) / counts[:, None]
    Fc = inverse[F]
    keep = (Fc[:, 0] != Fc[:, 1]) & (Fc[:, 1] != Fc[:, 2]) & (Fc[:, 0] != Fc[:, 2])
    Fc = Fc[keep]
    if len(Fc):
        _, first = np.unique(np.sort(Fc, axis=1), axis=0, return_index=True)
        Fc = Fc[np.sort(first)]
    return Vc, Fc


def decimate(V: np.ndarray, F: np.ndarray, max_faces: int) -> tuple[np.ndarray, np.ndarray]:
    """At most ``max_faces`` triangles approximating ``(V, F)``, by vertex clustering.

    Vertices are merged on a uniform grid whose cell size is searched (bisection on a
    log scale) for the finest grid that leaves at most ``max_faces`` triangles;
    triangles that collapse are dropped. Small features vanish first, which is what
    a picture of a whole robot can afford. Returns the input when it is small enough.
    """
    V = np.asarray(V, dtype=float)
    F = np.asarray(F, dtype=np.int64)
    if max_faces < 1:
        raise InvalidValueError(f"max_faces must be at least 1, got {max_faces}")
    if len(F) <= max_faces:
        return V, F
    extent = float(np.max(np.ptp(V, axis=0))) if len(V) else 0.0
    if extent <= 0.0:
        return V, F[:max_faces]
    lo, hi = extent * 1e-4, extent  # cell sizes: lo keeps too many, hi keeps few
    best = _cluster(V, F, hi)
    for _ in range(20):
        mid = float(np.sqrt(lo * hi))
        Vm, Fm = _cluster(V, F, mid)
        if len(Fm) <= max_faces:
            hi, best = mid, (Vm, Fm)
        else:
            lo = mid
        if hi / lo < 1.05:
            break
    Vb, Fb = best
    if len(Fb) > max_faces:  # even the coarsest grid keeps too many: keep the largest
        Fb = Fb[:max_faces]
    used = np.unique(Fb)
    remap = np.full(len(Vb), -1, dtype=np.int64)
    remap[used] = np.arange(len(used))
    return Vb[used], remap[Fb]
