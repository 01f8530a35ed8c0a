"""A skinned mesh bound to a model's frames, and linear blend skinning.

A character file (glTF, USD, FBX) carries, beside its skeleton, a mesh whose vertices
follow the joints: each vertex is bound to up to ``K`` joints with weights that sum to
one. :class:`Skin` holds one such mesh in the terms of a kinetree :class:`Model`: the
vertices in the model's world frame at the bind pose, the joints by frame name, and one
*inverse bind matrix* per joint, which takes a bind-pose world point into that joint's
frame. Loaders attach the skins they read to the model (:attr:`Model.skins`).

Linear blend skinning (:func:`deform`) places vertex ``v`` at configuration ``q`` at

    v(q) = sum_k  w[v, k] * T_world_joint[j(v, k)](q) @ inverse_bind[j(v, k)] @ v_bind

with ``T_world_joint`` the model's rigid frame poses (:meth:`Model.fk_all`). At a ``q``
that puts every joint where it was at the bind pose the mesh is ``vertices`` again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InvalidValueError, ShapeError, UnknownNameError, unknown_name
from ..model import Model

__all__ = ["Skin", "deform", "skinning_matrices"]

#: Weights of one vertex must sum to one within this before they are normalised.
_WEIGHT_SUM_TOLERANCE = 1e-2


def _array(value: object, what: str, dtype: type, shape: str) -> np.ndarray:
    """``value`` as a new read-only array of ``dtype``; raises naming ``what``."""
    if value is None or isinstance(value, (str, bytes)):
        raise InvalidValueError(f"Skin: {what} must be an array {shape}, got {value!r}")
    try:
        a: np.ndarray = np.array(value, dtype=dtype)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InvalidValueError(f"Skin: {what} must be an array {shape}: {exc}") from None
    return a


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class Skin:
    """One skinned mesh: triangles bound to a model's frames by weights.

    Attributes:
        vertices: ``(V, 3)`` vertex positions in the model's world frame at the bind
            pose [model length unit].
        faces: ``(F, 3)`` vertex indices of each triangle (counter-clockwise seen from
            outside, as glTF and USD write them).
        joint_names: ``(J,)`` the frames the mesh is bound to (names in
            :attr:`Model.frame_names`).
        joints: ``(V, K)`` indices into ``joint_names``: the joints moving each vertex.
        weights: ``(V, K)`` their weights, each row summing to one (rows within 1e-2
            of one are normalised; unused slots have weight 0).
        inverse_bind: ``(J, 4, 4)`` for each joint, the rigid transform from a bind-pose
            world point to the joint's frame (the inverse of the joint's world pose at
            the bind pose).
        normals: optional ``(V, 3)`` unit vertex normals at the bind pose (world frame).
        uv: optional ``(V, 2)`` texture coordinates (glTF convention: origin top-left).
        colors: optional ``(V, 4)`` per-vertex RGBA in [0, 1].
        base_color: RGBA in [0, 1] of the whole mesh (the material's base colour).
        texture: optional encoded image (PNG or JPEG bytes) of the base colour, read
            with ``uv``; ``texture_mime`` says which.
        name: the mesh's name in its file.
        material: other material values as the file had them (glTF
            ``pbrMetallicRoughness`` factors, ``doubleSided``...), kept for writing.
    """

    vertices: np.ndarray
    faces: np.ndarray
    joint_names: tuple[str, ...]
    joints: np.ndarray
    weights: np.ndarray
    inverse_bind: np.ndarray
    normals: np.ndarray | None = None
    uv: np.ndarray | None = None
    colors: np.ndarray | None = None
    base_color: tuple[float, float, float, float] = (0.8, 0.8, 0.8, 1.0)
    texture: bytes | None = None
    texture_mime: str = ""
    name: str = ""
    material: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        v = _array(self.vertices, "vertices", np.float64, "(V, 3)")
        if v.ndim != 2 or v.shape[1] != 3 or v.shape[0] < 1:
            raise ShapeError(f"Skin: vertices must have shape (V >= 1, 3), got {v.shape}")
        n = v.shape[0]
        f = _array(self.faces, "faces", np.int64, "(F, 3)")
        if f.size == 0:
            f = f.reshape(0, 3)
        if f.ndim != 2 or f.shape[1] != 3:
            raise ShapeError(f"Skin: faces must have shape (F, 3), got {f.shape}")
        if f.size and (f.min() < 0 or f.max() >= n):
            raise InvalidValueError(
                f"Skin: faces index vertices 0..{n - 1}, found {int(f.min())}..{int(f.max())}"
            )
        if isinstance(self.joint_names, str) or not isinstance(self.joint_names, Sequence):
            raise InvalidValueError(
                f"Skin: joint_names must be a sequence of frame names, got {self.joint_names!r}"
            )
        names = tuple(self.joint_names)
        if not names or not all(isinstance(s, str) and s for s in names):
            raise InvalidValueError("Skin: joint_names must be non-empty frame names")
        if len(set(names)) != len(names):
            raise InvalidValueError("Skin: joint_names must not repeat a name")
        nj = len(names)
        j = _array(self.joints, "joints", np.int64, "(V, K)")
        w = _array(self.weights, "weights", np.float64, "(V, K)")
        if j.ndim != 2 or j.shape[0] != n or w.shape != j.shape:
            raise ShapeError(
                f"Skin: joints and weights must both have shape (V={n}, K), got {j.shape} "
                f"and {w.shape}"
            )
        if j.size and (j.min() < 0 or j.max() >= nj):
            raise InvalidValueError(
                f"Skin: joints index joint_names 0..{nj - 1}, found {int(j.min())}..{int(j.max())}"
            )
        if not np.all(np.isfinite(w)) or np.any(w < 0.0):
            raise InvalidValueError("Skin: weights must be finite and >= 0")
        total = w.sum(axis=1)
        bad = np.nonzero(np.abs(total - 1.0) > _WEIGHT_SUM_TOLERANCE)[0]
        if bad.size:
            raise InvalidValueError(
                f"Skin: the weights of {bad.size} vertices do not sum to 1 (vertex "
                f"{int(bad[0])}: {float(total[bad[0]]):.6g})"
            )
        w = w / total[:, None]
        ib = _array(self.inverse_bind, "inverse_bind", np.float64, "(J, 4, 4)")
        if ib.shape != (nj, 4, 4):
            raise ShapeError(f"Skin: inverse_bind must have shape ({nj}, 4, 4), got {ib.shape}")
        for what, a in (("vertices", v), ("inverse_bind", ib)):
            if not np.all(np.isfinite(a)):
                raise InvalidValueError(f"Skin: {what} contains NaN or inf")
        det = np.abs(np.linalg.det(ib[:, :3, :3]))
        if np.any(~(det > 1e-12)) or np.any(
            ~np.isfinite(np.linalg.inv(ib[:, :3, :3][det > 1e-12]))
        ):
            raise InvalidValueError("Skin: an inverse_bind matrix is singular")
        object.__setattr__(self, "vertices", _readonly(v))
        object.__setattr__(self, "faces", _readonly(f))
        object.__setattr__(self, "joint_names", names)
        object.__setattr__(self, "joints", _readonly(j))
        object.__setattr__(self, "weights", _readonly(w))
        object.__setattr__(self, "inverse_bind", _readonly(ib))
        for attr, width in (("normals", 3), ("uv", 2), ("colors", 4)):
            value = getattr(self, attr)
            if value is None:
                continue
            a = _array(value, attr, np.float64, f"(V, {width})")
            if a.shape != (n, width) or not np.all(np.isfinite(a)):
                raise ShapeError(
                    f"Skin: {attr} must be finite with shape ({n}, {width}), got {a.shape}"
                )
            object.__setattr__(self, attr, _readonly(a))
        try:
            rgba = tuple(float(c) for c in self.base_color)
        except (TypeError, ValueError):
            rgba = ()
        if len(rgba) != 4 or not all(np.isfinite(rgba)):
            raise InvalidValueError(f"Skin: base_color must be RGBA, got {self.base_color!r}")
        object.__setattr__(self, "base_color", rgba)
        if self.texture is not None and not isinstance(self.texture, bytes):
            raise InvalidValueError("Skin: texture must be the encoded image's bytes or None")
        object.__setattr__(self, "material", dict(self.material))

    @property
    def n_vertices(self) -> int:
        """Number of vertices ``V``."""
        return int(self.vertices.shape[0])

    @property
    def n_faces(self) -> int:
        """Number of triangles ``F``."""
        return int(self.faces.shape[0])

    def __repr__(self) -> str:
        return (
            f"Skin({self.name!r}, vertices={self.n_vertices}, faces={self.n_faces}, "
            f"joints={len(self.joint_names)})"
        )


def _frame_columns(skin: Skin, model: Model) -> np.ndarray:
    """Indices into ``model.frame_names`` of the skin's joints."""
    index = {n: i for i, n in enumerate(model.frame_names)}
    missing = [n for n in skin.joint_names if n not in index]
    if missing:
        raise UnknownNameError(
            f"skin {skin.name!r} is bound to {len(missing)} frames model {model.name!r} "
            f"lacks: {unknown_name('frame', missing[0], model.frame_names)}"
        )
    return np.array([index[n] for n in skin.joint_names], dtype=np.int64)


def skinning_matrices(skin: Skin, model: Model, q: ArrayLike) -> np.ndarray:
    """``(..., J, 4, 4)``: ``T_world_joint(q) @ inverse_bind`` for each skin joint.

    ``q``: ``(nq,)`` or ``(..., nq)`` configurations of ``model``. Raises
    :class:`~kinetree.errors.UnknownNameError` if the model lacks a joint of the skin.
    """
    if not isinstance(skin, Skin):
        raise InvalidValueError(f"skinning_matrices needs a Skin, got {type(skin).__name__}")
    cols = _frame_columns(skin, model)
    T = model.fk_all(q)[..., cols, :, :]
    return np.asarray(T @ skin.inverse_bind)


def deform(skin: Skin, model: Model, q: ArrayLike) -> np.ndarray:
    """Vertex positions ``(V, 3)`` (``(..., V, 3)`` for a batch of ``q``) of ``skin``
    posed at ``q`` by linear blend skinning (see the module docstring) [model length
    unit, world frame]."""
    M = skinning_matrices(skin, model, q)  # (..., J, 4, 4)
    v = skin.vertices
    out = np.zeros((*M.shape[:-3], v.shape[0], 3))
    for k in range(skin.joints.shape[1]):
        w = skin.weights[:, k]
        if not np.any(w):
            continue
        Mk = M[..., skin.joints[:, k], :, :]  # (..., V, 4, 4)
        p = np.einsum("...vij,vj->...vi", Mk[..., :3, :3], v) + Mk[..., :3, 3]
        out += w[:, None] * p
    return out
