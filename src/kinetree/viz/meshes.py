"""Meshes in matplotlib pictures: a model's visual shapes as shaded triangles.

matplotlib draws every triangle as a polygon and sorts them by depth on each draw,
so a robot's meshes (the Panda's are about 130,000 triangles) are thinned first
(:func:`kinetree.drawing.decimate`) to a budget: every part may keep up to a common
number of triangles, so plain parts stay whole and detailed ones are thinned.
All parts go into one ``Poly3DCollection``, so they hide each other correctly. Each
triangle is shaded by the angle between its normal and a light at the camera
(Lambert, both sides lit), recomputed when the model moves.

Which meshes: ``meshes=None`` draws the model's own visual shapes (a URDF loaded with
its meshes) and a character's skinned meshes (:attr:`Model.skins`, from glTF, USD or FBX);
``meshes=True`` also looks up a built-in robot's description package
(:func:`kinetree.models.with_meshes`, the ``kinetree[meshes]`` extra); ``False``
draws the stick figure only. 2D projections are always stick figures.

A skinned mesh is deformed by linear blend skinning from the frame poses
(``T_world_joint @ inverse_bind``, weighted, as :func:`kinetree.io.skin.deform`); its
triangles are never thinned by merging vertices (that would lose their weights): past the
budget every k-th triangle is kept.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..drawing import Part, Parts, decimate, missing_bones, model_parts

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from ..io.skin import Skin
    from ..model import Model

__all__ = ["DEFAULT_MAX_FACES", "MeshLayer", "visual_parts"]

#: Triangles in one picture, all parts together.
DEFAULT_MAX_FACES = 6000


def visual_parts(model: Model, meshes: bool | None) -> Parts | None:
    """The visual parts to draw for ``meshes`` (see the module docstring); None for a
    stick figure."""
    if meshes is False:
        return None
    source = model
    if meshes is True:
        from ..models import with_meshes

        source, _ = with_meshes(model)
    parts = model_parts(source, "visual")
    return parts if parts.parts or model.skins else None


def _budgets(sizes: list[int], max_faces: int) -> list[int]:
    """Triangles for each part: a common cap ``b`` with ``sum(min(n, b)) <= max_faces``
    (the largest such cap), so simple parts (a plain tube) keep every triangle and only
    detailed ones are thinned."""
    if sum(sizes) <= max_faces:
        return list(sizes)
    lo, hi = 0, max(sizes)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if sum(min(n, mid) for n in sizes) <= max_faces:
            lo = mid
        else:
            hi = mid - 1
    return [max(1, min(n, lo)) for n in sizes]


def _thin(parts: Parts, max_faces: int) -> list[Part]:
    budgets = _budgets([len(p.faces) for p in parts.parts], max_faces)
    out = []
    for p, budget in zip(parts.parts, budgets):
        V, F = decimate(p.vertices, p.faces, budget)
        if len(F):
            out.append(Part(p.frame, V, F, p.color, p.kind, p.label))
    return out


def skinned(skin: Skin, T_joints: np.ndarray) -> np.ndarray:
    """Vertices ``(V, 3)`` of ``skin`` by linear blend skinning, its joints at the world
    poses ``T_joints`` ``(J, 4, 4)`` (in ``skin.joint_names`` order)."""
    M = T_joints @ skin.inverse_bind
    v = skin.vertices
    out = np.zeros_like(v)
    for c in range(skin.joints.shape[1]):
        Mc = M[skin.joints[:, c]]
        out += skin.weights[:, c, None] * (np.einsum("vij,vj->vi", Mc[:, :3, :3], v) + Mc[:, :3, 3])
    return out


class MeshLayer:
    """One ``Poly3DCollection`` with a model's parts, moved by :meth:`update`.

    ``view`` maps world points ``(..., 3)`` to the axes' display coordinates (the
    picture's up axis drawn vertically).
    """

    def __init__(
        self,
        ax: Axes,
        model: Model,
        parts: Parts,
        T: np.ndarray,
        view: Any,
        *,
        max_faces: int = DEFAULT_MAX_FACES,
        alpha: float = 1.0,
    ) -> None:
        from mpl_toolkits.mplot3d.art3d import Poly3DCollection

        self.ax = ax
        self.view = view
        #: Bones drawn for the links whose mesh is missing.
        self.patch_bones = missing_bones(model, parts)
        skins = tuple(model.skins)
        n_skin = sum(s.n_faces for s in skins)
        rigid_budget = max(max_faces - n_skin, max_faces // 4) if skins else max_faces
        thin = _thin(parts, rigid_budget) if parts.parts else []
        index = {n: i for i, n in enumerate(model.frame_names)}
        self.frame_of_face = np.array(
            [index[p.frame] for p in thin for _ in range(len(p.faces))], dtype=np.int64
        )
        # Triangle corners in their frames: (n_faces, 3 corners, 3).
        self.local = (
            np.concatenate([p.vertices[p.faces] for p in thin]) if thin else np.zeros((0, 3, 3))
        )
        colors = [np.tile(p.color, (len(p.faces), 1)) for p in thin]
        # Skins: (skin, its joints' frame indices, the triangles kept)
        step = max(1, -(-n_skin // max(max_faces - len(self.local), 1)))
        self.skins = [
            (
                skin,
                np.array([index[n] for n in skin.joint_names], dtype=np.int64),
                skin.faces[::step],
            )
            for skin in skins
        ]
        colors += [np.tile(skin.base_color[:3], (len(f), 1)) for skin, _, f in self.skins]
        self.base = np.concatenate(colors) if colors else np.zeros((0, 3))
        self.alpha = alpha
        self.collection = Poly3DCollection(
            self._triangles(T), linewidths=0.0, edgecolors="none", zorder=2
        )
        self.collection.set_facecolor(self._colors())
        ax.add_collection3d(self.collection)  # type: ignore[attr-defined]

    def _triangles(self, T: np.ndarray) -> np.ndarray:
        R = T[self.frame_of_face, :3, :3]
        p = T[self.frame_of_face, :3, 3]
        world = [np.einsum("fij,fcj->fci", R, self.local) + p[:, None, :]]
        for skin, cols, faces in self.skins:
            world.append(skinned(skin, T[cols])[faces])
        self.world = self.view(np.concatenate(world))
        return self.world

    def _colors(self) -> np.ndarray:
        W = self.world
        n = np.cross(W[:, 1] - W[:, 0], W[:, 2] - W[:, 0])
        n /= np.maximum(np.linalg.norm(n, axis=-1, keepdims=True), 1e-30)
        elev = np.radians(getattr(self.ax, "elev", 30.0))
        azim = np.radians(getattr(self.ax, "azim", -60.0))
        light = np.array([np.cos(elev) * np.cos(azim), np.cos(elev) * np.sin(azim), np.sin(elev)])
        light = light + np.array([0.0, 0.0, 0.6])  # a little from above
        light /= np.linalg.norm(light)
        shade = 0.35 + 0.65 * np.abs(n @ light)
        rgb = np.clip(self.base * shade[:, None], 0.0, 1.0)
        return np.concatenate([rgb, np.full((len(rgb), 1), self.alpha)], axis=1)

    @property
    def points(self) -> np.ndarray:
        """Every drawn corner in display coordinates ``(k, 3)`` (for the axes limits)."""
        return self.world.reshape(-1, 3)

    def update(self, T: np.ndarray) -> None:
        """Move the parts to frame poses ``T`` ``(n_frames, 4, 4)``."""
        self.collection.set_verts(self._triangles(T))
        self.collection.set_facecolor(self._colors())
        if getattr(self.ax, "M", None) is not None:
            # A blitted frame draws the collection alone: project (and depth-sort) it
            # here, as a full draw of the axes would.
            self.collection.do_3d_projection()
