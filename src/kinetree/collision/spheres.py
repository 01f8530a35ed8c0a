"""The robot as spheres that contain its collision geometry.

Why spheres: a sphere's distance to anything is its centre's distance minus its radius,
so every pair in the kernels is one point query, and a sphere's distance changes with the
motion of its centre only (the IK rows need nothing else). Capsules would fit long links
with fewer primitives, at the price of segment-segment and segment-box queries; spheres
keep the kernels small enough to compile for a GPU thread too.

Containment, so that a configuration free for the spheres is free for the exact geometry:

- a mesh: every triangle lies in one sphere (spheres centred deep inside the solid,
  each reaching just past the surface; see :mod:`kinetree.collision._fit`), so the union
  holds the whole surface, and the interior at every sample of a grid;
- a box is the closed mesh of its 12 triangles; a cylinder is replaced by the prism of
  16 sides circumscribed about it (its corners 2 % beyond the radius), then meshed;
- a capsule gets ``k`` spheres on its segment, spaced ``s`` apart, of radius
  ``sqrt(r^2 + (s / 2)^2)``: every point of the capsule is within that of a centre;
- a sphere is itself.

Coarseness: a shape gets the fewest spheres (at most ``max_spheres``) whose union reaches
at most ``max_overshoot`` [m] beyond it, or, when ``max_spheres`` cannot do that, as
little beyond it as the fit finds (the Panda's links: 11-23 mm with 16 spheres, 8-17 mm
with 32). The
result of each mesh is cached on disk, keyed by a hash of its vertices, faces and these
two settings (``KINETREE_CACHE_DIR``, default ``~/.cache/kinetree``), so a second load
reads it back.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import geometry as geo
from .._cache import PerModel
from .._disk import _MEMORY as _disk_memory
from .._disk import cache_root, digest, kept_arrays
from .._validate import check_positive
from .._warnings import warn_outside
from ..errors import InvalidValueError, UnsupportedError
from ..model import Model
from ._fit import fit_mesh
from .layout import pack_links

__all__ = ["RobotSpheres", "cache_dir", "fit_mesh", "robot_spheres", "shape_spheres"]

#: Changes whenever the fitting changes, so old cache entries are not read back.
_ALGORITHM = "interior-balls-v2"
#: Added to every fitted radius [m], against rounding in the containment.
_PAD = 1e-9


@dataclass(frozen=True, eq=False)
class RobotSpheres:
    """The spheres of a model: plain arrays, in the frames of the links that carry them.

    ``frames`` (n,) the frame of each sphere; ``centers`` (n, 3) [m] in that frame;
    ``radii`` (n,) [m]. ``links`` the frames with collision geometry, in tree order, and
    ``nodes`` their node indices; the spheres of ``links[i]`` are rows
    ``offsets[i]:offsets[i + 1]``. ``spheres`` and ``link_table`` are the packed tables
    of :mod:`kinetree.collision.layout`.
    """

    model_name: str
    links: tuple[str, ...]
    nodes: np.ndarray
    offsets: np.ndarray
    frames: tuple[str, ...]
    centers: np.ndarray
    radii: np.ndarray
    spheres: np.ndarray
    link_table: np.ndarray
    max_spheres: int
    max_overshoot: float

    def world(self, model: Model, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """World centres ``(..., n, 3)`` [m] of the spheres at ``q`` (..., nq), and radii."""
        T = model.fk_all(q)
        idx = np.array([model.frame_names.index(f) for f in self.frames], dtype=np.int64)
        Ts = T[..., idx, :, :]
        c = np.einsum("...ij,...j->...i", Ts[..., :3, :3], self.centers) + Ts[..., :3, 3]
        return c, self.radii.copy()


def cache_dir() -> Path:
    """Where fitted spheres are kept: ``$KINETREE_CACHE_DIR/spheres``, else
    ``~/.cache/kinetree/spheres``."""
    return cache_root() / "spheres"


# --- fitting -------------------------------------------------------------------------------


def _box_mesh(half: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
    v = corners * half
    # Two triangles per face, corner index = 4 (x > 0) + 2 (y > 0) + (z > 0).
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    f = [(a, b, c) for a, b, c, d in quads] + [(a, c, d) for a, b, c, d in quads]
    return v, np.array(f, dtype=np.int64)


def _prism_mesh(radius: float, length: float, sides: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """A closed prism of ``sides`` faces circumscribed about the cylinder (holds it)."""
    rc = radius / np.cos(np.pi / sides)
    ang = 2 * np.pi * np.arange(sides) / sides
    ring = np.stack([rc * np.cos(ang), rc * np.sin(ang)], axis=1)
    h = 0.5 * length
    v = np.concatenate(
        [np.c_[ring, np.full(sides, -h)], np.c_[ring, np.full(sides, h)], [[0, 0, -h], [0, 0, h]]]
    )
    f = []
    for i in range(sides):
        j = (i + 1) % sides
        f += [
            (i, j, sides + j),
            (i, sides + j, sides + i),
            (2 * sides, j, i),
            (2 * sides + 1, sides + i, sides + j),
        ]
    return v, np.array(f, dtype=np.int64)


def _capsule(
    radius: float, length: float, max_spheres: int, max_overshoot: float
) -> tuple[np.ndarray, np.ndarray]:
    k = 1
    while k < max_spheres:
        gap = length / k if k > 1 else length
        if np.sqrt(radius**2 + (0.5 * gap) ** 2) - radius <= max_overshoot:
            break
        k += 1
    gap = length / (k - 1) if k > 1 else length
    z = np.linspace(-0.5 * length, 0.5 * length, k) if k > 1 else np.zeros(1)
    r = np.sqrt(radius**2 + (0.5 * gap) ** 2) if k > 1 else radius + 0.5 * length
    return np.c_[np.zeros(k), np.zeros(k), z], np.full(k, r + _PAD)


def _cached_fit(
    vertices: np.ndarray, faces: np.ndarray, max_spheres: int, max_overshoot: float, use_cache: bool
) -> tuple[np.ndarray, np.ndarray]:
    v = np.ascontiguousarray(vertices, dtype=np.float64)
    f = np.ascontiguousarray(faces, dtype=np.int64)
    key = digest(f"{_ALGORITHM}:{max_spheres}:{max_overshoot!r}", (v, f))

    def fit() -> dict[str, np.ndarray]:
        c, r, _ = fit_mesh(v, f, max_spheres, max_overshoot)
        return {"centers": c, "radii": r}

    out = kept_arrays("spheres", key, fit, use_cache)
    return out["centers"], out["radii"]


#: What this process fitted or read (shared with :mod:`kinetree._disk`).
_MEMORY = _disk_memory


def shape_spheres(
    shape: geo.Geometry, max_spheres: int = 16, max_overshoot: float = 0.01, use_cache: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """``(centers (k, 3), radii (k,))`` [m] holding ``shape``, in the frame the shape hangs
    from (its ``origin`` applied). Raises :class:`UnsupportedError` for a mesh whose
    file was not read."""
    if isinstance(shape, geo.Sphere):
        c, r = np.zeros((1, 3)), np.array([shape.radius])
    elif isinstance(shape, geo.Capsule):
        c, r = _capsule(shape.radius, shape.length, max_spheres, max_overshoot)
    else:
        if isinstance(shape, geo.Box):
            v, f = _box_mesh(0.5 * np.array(shape.size))
        elif isinstance(shape, geo.Cylinder):
            v, f = _prism_mesh(shape.radius, shape.length)
        elif isinstance(shape, geo.Mesh):
            if shape.vertices is None or shape.faces is None:
                where = "was not found" if shape.file is None else "could not be read"
                raise UnsupportedError(
                    f"collision mesh {shape.path!r} {where}, so no spheres can contain it; "
                    "pass package_dirs= to kinetree.load, or skip_missing=True"
                )
            v, f = shape.vertices, shape.faces
        else:
            raise UnsupportedError(f"no sphere fitting for {type(shape).__name__}")
        c, r = _cached_fit(v, f, max_spheres, max_overshoot, use_cache)
    T = shape.origin
    return c @ T[:3, :3].T + T[:3, 3], np.array(r, dtype=np.float64)


_ROBOT: PerModel[RobotSpheres] = PerModel()


def robot_spheres(
    model: Model,
    max_spheres: int = 16,
    max_overshoot: float = 0.01,
    *,
    kind: str = "collision",
    skip_missing: bool = False,
    use_cache: bool = True,
) -> RobotSpheres:
    """Spheres holding every ``kind`` shape ("collision" or "visual") of ``model``.

    ``max_spheres`` per shape and ``max_overshoot`` [m] set the coarseness (module
    docstring). A mesh whose file was not found raises :class:`UnsupportedError` naming
    it, unless ``skip_missing`` (then that shape is left out, with a warning). Cached per
    model and settings in memory, per mesh on disk (:func:`cache_dir`).
    """
    if (
        isinstance(max_spheres, bool)
        or not isinstance(max_spheres, (int, np.integer))
        or (max_spheres < 1)
    ):
        raise InvalidValueError(f"max_spheres must be an integer >= 1, got {max_spheres!r}")
    max_overshoot = check_positive(max_overshoot, "max_overshoot", allow_zero=True)
    if kind not in geo.GEOMETRY_KINDS:
        raise InvalidValueError(
            f"kind must be one of {', '.join(geo.GEOMETRY_KINDS)}, got {kind!r}"
        )
    key = (int(max_spheres), max_overshoot, kind, skip_missing)
    hit = _ROBOT.get(model, key)
    if hit is not None:
        return hit
    links: list[str] = []
    centers: list[np.ndarray] = []
    radii: list[np.ndarray] = []
    for frame in model.frame_names:
        shapes = [g for g in model.geometry.get(frame, ()) if g.kind == kind]
        cs, rs = [], []
        for g in shapes:
            try:
                c, r = shape_spheres(g, int(max_spheres), max_overshoot, use_cache)
            except UnsupportedError as exc:
                if not skip_missing:
                    raise UnsupportedError(f"link {frame!r}: {exc}") from None

                warn_outside(f"link {frame!r}: {exc}; left out", geo.GeometryWarning)
                continue
            cs.append(c)
            rs.append(r)
        if cs:
            links.append(frame)
            centers.append(np.concatenate(cs))
            radii.append(np.concatenate(rs))
    nodes = np.array([model.frame_index(f) for f in links], dtype=np.int64)
    spheres, table = pack_links(nodes.tolist(), centers, radii)
    offsets = np.concatenate([[0], np.cumsum([len(r) for r in radii])]).astype(np.int64)
    frames = tuple(f for f, r in zip(links, radii) for _ in range(len(r)))
    all_c = np.concatenate(centers) if centers else np.zeros((0, 3))
    all_r = np.concatenate(radii) if radii else np.zeros(0)
    for a in (nodes, offsets, all_c, all_r):
        a.setflags(write=False)
    out = RobotSpheres(
        model.name,
        tuple(links),
        nodes,
        offsets,
        frames,
        all_c,
        all_r,
        spheres,
        table,
        int(max_spheres),
        max_overshoot,
    )
    _ROBOT.put(model, out, key)
    return out
