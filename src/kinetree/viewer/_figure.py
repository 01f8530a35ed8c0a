"""A model drawn in a viser scene: meshes, skeleton, frames, collision shapes; moved by q.

Scene layout under a prefix (``/robot`` by default): one node per frame,
``{prefix}/f{i}``, placed at the frame's world pose; its visual meshes
(``.../visual{j}``), collision shapes (``.../collision{j}``, hidden until asked for)
and name label hang below it, in the frame's coordinates, so moving the model sends
one pose per frame. A character's skinned meshes (:attr:`Model.skins`) are viser skinned
meshes, ``{prefix}_skin{k}``, in world coordinates: one bone per skin joint, set to the
rigid transform ``T_world_joint(q) @ inverse_bind`` (identity at the bind pose), so the
browser deforms the mesh by linear blend skinning as the pose changes. The skeleton (bones
and joint dots) is drawn in world coordinates and rewritten on each move while it is shown.

A link whose mesh could not be read is drawn with its bones (the lines from its frame
to its children's), with a :class:`~kinetree.geometry.GeometryWarning`; a model with no
visual shapes at all is drawn as a skeleton.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._warnings import warn_outside
from ..drawing import Parts, bones, missing_bones, model_parts
from ..geometry import GeometryWarning
from ..model import Model
from ..spatial import matrix_to_quaternion

__all__ = ["RobotFigure", "model_size"]

_BONE_COLOR = (30, 90, 200)
_JOINT_COLOR = (50, 50, 60)
_COLLISION_OPACITY = 0.45
_SPHERE_COLOR = (40, 170, 90)  # green: the spheres collision queries and IK use
# Visual colours a little darker than the files say: white links on the viewer's white
# background would lose their outline.
_VISUAL_SHADE = 0.85


def model_size(model: Model, q: np.ndarray) -> float:
    """The largest extent of the model's frames at ``q`` [model length unit] (> 0)."""
    P = np.asarray(model.fk_all(q))[:, :3, 3]
    size = float(np.max(np.ptp(P, axis=0))) if len(P) else 0.0
    return size if size > 1e-9 else 1.0


def _rgb(color: tuple[float, float, float], shade: float = 1.0) -> tuple[int, int, int]:
    r, g, b = (round(255 * shade * min(max(c, 0.0), 1.0)) for c in color)
    return (r, g, b)


class RobotFigure:
    """The drawing of one model in a viser scene; :meth:`update` moves it."""

    def __init__(
        self,
        scene: Any,
        model: Model,
        q: np.ndarray,
        *,
        prefix: str = "/robot",
        meshes: bool = True,
        size: float | None = None,
        bone_color: tuple[int, int, int] = _BONE_COLOR,
    ) -> None:
        self.scene = scene
        self.model = model
        self.prefix = prefix
        self.size = size if size is not None else model_size(model, q)
        self.bones = bones(model)
        self.bone_color = bone_color
        self.visual: Parts = model_parts(model, "visual") if meshes else Parts()
        self.collision: Parts = model_parts(model, "collision", colors=False)
        names = model.frame_names
        for frame, path in self.visual.missing:
            warn_outside(
                f"{model.name}: mesh {path!r} of link {frame!r} could not be read; the link "
                "is drawn as a skeleton",
                GeometryWarning,
            )
        #: The skinned meshes drawn (a character's body), with their joints' frame indices.
        self.skins = tuple(model.skins) if meshes else ()
        #: True when the model is drawn with meshes (some visual shape could be drawn).
        self.has_meshes = bool(self.visual.parts) or bool(self.skins)
        # Bones of the links with a missing mesh, drawn even with meshes shown.
        self.patch_bones = missing_bones(model, self.visual)
        #: Frames drawn as a skeleton because a mesh of theirs could not be read.
        self.skeleton_frames = tuple(dict.fromkeys(f for f, _ in self.visual.missing))
        T = np.asarray(model.fk_all(q))
        wxyz = matrix_to_quaternion(T[:, :3, :3])
        self.nodes = [
            scene.add_frame(
                f"{prefix}/f{i}",
                show_axes=False,
                axes_length=0.12 * self.size,
                axes_radius=0.004 * self.size,
                wxyz=wxyz[i],
                position=T[i, :3, 3],
            )
            for i in range(len(names))
        ]
        index = {n: i for i, n in enumerate(names)}
        self.mesh_handles = [
            scene.add_mesh_simple(
                f"{prefix}/f{index[p.frame]}/visual{j}",
                p.vertices,
                p.faces,
                color=_rgb(p.color, _VISUAL_SHADE),
            )
            for j, p in enumerate(self.visual.parts)
        ]
        self.collision_handles = [
            scene.add_mesh_simple(
                f"{prefix}/f{index[p.frame]}/collision{j}",
                p.vertices,
                p.faces,
                color=_rgb(p.color),
                opacity=_COLLISION_OPACITY,
                visible=False,
            )
            for j, p in enumerate(self.collision.parts)
        ]
        self.skin_columns = [
            np.array([index[n] for n in skin.joint_names], dtype=np.int64) for skin in self.skins
        ]
        self.skin_handles = [self._add_skin(k, skin) for k, skin in enumerate(self.skins)]
        self.labels = [
            scene.add_label(f"{prefix}/f{i}/label", name, visible=False)
            for i, name in enumerate(names)
        ]
        self.show_skeleton = not self.has_meshes
        self.skeleton = self._add_skeleton("skeleton", self.bones, T, self.show_skeleton)
        self.patch = self._add_skeleton("patch", self.patch_bones, T, bool(len(self.patch_bones)))
        self.T = T
        self.skin_bones: list[np.ndarray] = [np.zeros((0, 7)) for _ in self.skins]
        self._move_skins()
        self.sphere_handles: list[Any] = []  # the collision spheres, made on first show
        self.sphere_error: str | None = None  # why they cannot be shown, once tried

    # --- collision spheres (kinetree.collision's approximation) ------------------------

    def _add_spheres(self) -> None:
        """Draw the spheres that kinetree's collision queries and collision-aware IK use
        (fitted, or read from the disk cache, on first show), as children of their links'
        frames so that :meth:`update` moves them."""
        from ..collision.spheres import robot_spheres
        from ..errors import KinetreeError

        try:
            rs = robot_spheres(self.model)
        except KinetreeError as exc:  # no collision geometry, a mesh file missing
            self.sphere_error = str(exc)
            return
        if not len(rs.radii):
            self.sphere_error = f"model {self.model.name!r} has no collision geometry"
            return
        index = {n: i for i, n in enumerate(self.model.frame_names)}
        self.sphere_handles = [
            self.scene.add_icosphere(
                f"{self.prefix}/f{index[frame]}/sphere{j}",
                radius=float(r),
                color=_SPHERE_COLOR,
                subdivisions=2,
                opacity=_COLLISION_OPACITY,
                position=tuple(float(v) for v in c),
            )
            for j, (frame, c, r) in enumerate(zip(rs.frames, rs.centers, rs.radii, strict=True))
        ]

    # --- skinned meshes ----------------------------------------------------------------

    def _add_skin(self, k: int, skin: Any) -> Any:
        """One skinned mesh, its bones at the identity (the bind pose)."""
        n_joints = len(skin.joint_names)
        dense = np.zeros((skin.n_vertices, n_joints), dtype=np.float32)
        rows = np.repeat(np.arange(skin.n_vertices), skin.joints.shape[1])
        np.add.at(dense, (rows, skin.joints.ravel()), skin.weights.ravel())
        return self.scene.add_mesh_skinned(
            f"{self.prefix}_skin{k}",
            np.asarray(skin.vertices, dtype=np.float32),
            np.asarray(skin.faces, dtype=np.uint32),
            bone_wxyzs=np.tile([1.0, 0.0, 0.0, 0.0], (n_joints, 1)),
            bone_positions=np.zeros((n_joints, 3)),
            skin_weights=dense,
            color=_rgb(tuple(skin.base_color[:3]), _VISUAL_SHADE),
            side="double",
        )

    def _move_skins(self) -> None:
        """Set every skin bone to ``T_world_joint @ inverse_bind`` (its rotation part, where
        a file's inverse bind matrix carries a scale) for the poses :attr:`T`."""
        for k, (skin, cols, handle) in enumerate(
            zip(self.skins, self.skin_columns, self.skin_handles, strict=True)
        ):
            M = self.T[cols] @ skin.inverse_bind
            U, _, Vt = np.linalg.svd(M[:, :3, :3])
            bones = np.concatenate([matrix_to_quaternion(U @ Vt), M[:, :3, 3]], axis=1)
            old = self.skin_bones[k]
            for j in range(len(bones)):
                if len(old) and np.array_equal(old[j], bones[j]):
                    continue
                handle.bones[j].wxyz = bones[j, :4]
                handle.bones[j].position = bones[j, 4:]
            self.skin_bones[k] = bones

    def skin_vertices(self, k: int = 0) -> np.ndarray:
        """Vertices ``(V, 3)`` of skinned mesh ``k`` as the browser draws them at the
        current pose (its bones applied to the bind-pose vertices, as three.js does)."""
        skin, bones = self.skins[k], self.skin_bones[k]
        from ..spatial import quaternion_to_matrix

        R = quaternion_to_matrix(bones[:, :4])
        v = skin.vertices
        out = np.zeros_like(v)
        for c in range(skin.joints.shape[1]):
            j = skin.joints[:, c]
            p = np.einsum("vij,vj->vi", R[j], v) + bones[j, 4:]
            out += skin.weights[:, c, None] * p
        return out

    # --- skeleton ---------------------------------------------------------------------

    def _segments(self, pairs: np.ndarray, T: np.ndarray) -> np.ndarray:
        P = T[:, :3, 3]
        if len(pairs) == 0:  # viser needs at least one segment: a point
            return np.zeros((1, 2, 3), dtype=np.float32) + P[:1, None, :]
        return np.stack([P[pairs[:, 0]], P[pairs[:, 1]]], axis=1).astype(np.float32)

    def _add_skeleton(
        self, name: str, pairs: np.ndarray, T: np.ndarray, visible: bool
    ) -> tuple[Any, Any, np.ndarray]:
        lines = self.scene.add_line_segments(
            f"{self.prefix}_{name}/bones",
            self._segments(pairs, T),
            self.bone_color,
            thickness=0.015 * self.size,
            visible=visible,
        )
        joints = np.unique(pairs) if len(pairs) else np.arange(len(T))
        dots = self.scene.add_point_cloud(
            f"{self.prefix}_{name}/joints",
            T[joints, :3, 3].astype(np.float32),
            _JOINT_COLOR,
            point_size=0.03 * self.size,
            point_shape="circle",
            precision="float32",
            visible=visible,
        )
        return lines, dots, joints

    def _move_skeleton(self, parts: tuple[Any, Any, np.ndarray], pairs: np.ndarray) -> None:
        lines, dots, joints = parts
        lines.points = self._segments(pairs, self.T)
        dots.points = self.T[joints, :3, 3].astype(np.float32)

    # --- public -------------------------------------------------------------------------

    def update(self, T: np.ndarray) -> None:
        """Move every frame to the world poses ``T`` ``(n_frames, 4, 4)``."""
        T = np.asarray(T)
        changed = np.flatnonzero(np.any(np.abs(T - self.T) > 0.0, axis=(1, 2)))
        self.T = T.copy()
        if len(changed):
            wxyz = matrix_to_quaternion(T[changed, :3, :3])
            for k, i in enumerate(changed):
                node = self.nodes[i]
                node.wxyz = wxyz[k]
                node.position = T[i, :3, 3]
        if self.skins:
            self._move_skins()
        if self.show_skeleton:
            self._move_skeleton(self.skeleton, self.bones)
        if len(self.patch_bones):
            self._move_skeleton(self.patch, self.patch_bones)

    def set_visible(
        self,
        *,
        meshes: bool | None = None,
        skeleton: bool | None = None,
        frames: bool | None = None,
        labels: bool | None = None,
        collision: bool | None = None,
        spheres: bool | None = None,
    ) -> None:
        """Show or hide each layer (None leaves it as it is). ``spheres``: the collision
        spheres of :mod:`kinetree.collision` (fitted on first show; see
        :attr:`sphere_error` when the model has none)."""
        if meshes is not None:
            for h in (*self.mesh_handles, *self.skin_handles):
                h.visible = meshes
        if skeleton is not None:
            self.show_skeleton = skeleton
            if skeleton:
                self._move_skeleton(self.skeleton, self.bones)
            for h in self.skeleton[:2]:
                h.visible = skeleton
        if frames is not None:
            for node in self.nodes:
                node.show_axes = frames
        if labels is not None:
            for h in self.labels:
                h.visible = labels
        if collision is not None:
            for h in self.collision_handles:
                h.visible = collision
        if spheres is not None:
            if spheres and not self.sphere_handles and self.sphere_error is None:
                self._add_spheres()
            for h in self.sphere_handles:
                h.visible = spheres

    def remove(self) -> None:
        """Take the drawing out of the scene."""
        groups = (
            self.mesh_handles,
            self.skin_handles,
            self.collision_handles,
            self.sphere_handles,
            self.labels,
            self.nodes,
        )
        for group in groups:
            for h in group:
                h.remove()
        for parts in (self.skeleton, self.patch):
            for h in parts[:2]:
                h.remove()
