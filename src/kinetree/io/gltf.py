"""glTF 2.0 characters: a skin's joints as a Model, its animations as clips, and back.

Long because a glTF file is read here with every check a real file needs (accessors
bounds, loops, required extensions, NaN in curves) and written back with its mesh.

Reading (:func:`load_gltf`, :func:`read_gltf`; ``.gltf`` with ``.bin`` files or data
URIs, ``.glb``) goes through pygltflib (the ``gltf`` extra) for the JSON and the binary
chunk; accessors, curves and skins are decoded here.

Model layout
------------
* The skeleton is the joints of the file's skins (skins whose joints hang from one
  top node are one skeleton: a character cut into several meshes), plus any node lying
  between two of them. Several skeletons: ``skeleton=`` picks one by a skin's name
  (``skin_<i>`` for an unnamed skin); without it a :class:`~kinetree.errors.
  KinetreeError` lists them.
* Frames are named as the nodes (a node without a name is ``node_<index>``; a name
  used twice gets ``_<index>`` on its second use). The root is a fixed frame
  ``"world"`` (``"_world"`` when a node has that name) whose pose is the identity, or
  the base rotation of ``up="z"``.
* A top joint (whose parent is no joint) is a free joint (``x y z qw qx qy qz``) whose
  origin is the rest pose of the nodes above it. Every other joint is a ball joint
  (``qw qx qy qz``, the node's rotation, its translation the fixed origin), or a free
  joint where an animation moves its translation away from the rest translation; then
  the ``"rotations"`` preset is what IK moves by default, so bone lengths stay.
* ``q`` of a ball joint is the node's rotation quaternion itself (w first); the
  neutral configuration is the file's rest pose (the nodes' own TRS).

Scale. A node's static scale is baked into the skeleton: its children's offsets are
scaled, so every joint sits where the file puts it. A non-uniform scale on a joint
with children of children (a shear of the frames below) and an animated scale cannot
be held by rigid frames: a :class:`~kinetree.io.clip.CharacterFileWarning` names the
joints, and the rest scale is used.

Units and axes: glTF is Y-up, in metres. ``scale`` multiplies every length (the model
is in metres times ``scale``; ``model.length_scale`` is ``scale``); ``up="z"`` turns
the file to Z-up by a base rotation of +90 degrees about x, as :func:`read_bvh` does.

Curves are sampled as the specification defines them: LINEAR (rotations by slerp along
the shorter arc), STEP (the previous key) and CUBICSPLINE (Hermite with the file's
tangents, rotations normalised); before the first key the first value, after the last
key the last.

Writing (:func:`write_gltf`): every frame of the clip's model but its root becomes a
node posed relative to its nearest framed ancestor (so any model can be written: a
robot, a BVH skeleton, a glTF character); one skin holds them all; the animation has
a LINEAR translation and rotation channel for every node that moves, one key per
frame; lengths are written in metres (divided by ``model.length_scale``) and Z-up
models (``metadata["up"] == "z"``, not BVH) are turned to glTF's Y-up. The skinned
meshes of ``model.skins`` are written with their materials and textures. Accessors
are float32, as glTF has them; where float32 loses more than 1e-12 of an accessor's
largest value, its exact float64 values are written too, in a buffer view that the
accessor's ``extras`` names (``"kinetree_float64"``). Other readers see a valid glTF 2.0
file and read its float32 data; kinetree reads the float64 values only while they round
to exactly the float32 data, so a file edited elsewhere reads as edited.
"""

from __future__ import annotations

import base64
import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._warnings import warn_outside
from ..errors import FileFormatError, InvalidValueError, KinetreeError, UnknownNameError
from ..model import Model
from ..spatial import matrix_to_quaternion, quaternion_to_matrix, slerp
from ._files import as_path
from .clip import CharacterFileWarning, Clip, frame_tree, local_poses, sample_times
from .skeleton import Y_TO_Z, JointTree, Rig, build_rig, check_up_scale, rig_q
from .skin import Skin

__all__ = ["SUPPORTED_EXTENSIONS", "load_gltf", "read_gltf", "write_gltf"]

#: Extensions a file may *require* and still be read (they change no skeleton, curve or
#: mesh data read here).
SUPPORTED_EXTENSIONS = (
    "KHR_materials_unlit",
    "KHR_materials_emissive_strength",
    "KHR_texture_transform",
    "KHR_mesh_quantization",
)
_COMPONENTS = {  # componentType -> (numpy dtype, normalisation divisor)
    5120: (np.int8, 127.0),
    5121: (np.uint8, 255.0),
    5122: (np.int16, 32767.0),
    5123: (np.uint16, 65535.0),
    5125: (np.uint32, 4294967295.0),
    5126: (np.float32, 1.0),
}
_WIDTH = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}
#: A scale differing from uniform (or from its rest value) by less than this is noise.
_SCALE_TOLERANCE = 1e-6
#: The most keys or vertices one accessor may hold (checked before reading it).
_MAX_COUNT = 50_000_000
#: Key of an accessor's ``extras`` naming the buffer view of its exact float64 values.
EXACT_KEY = "kinetree_float64"


def _pygltflib() -> Any:
    try:
        import pygltflib
    except ImportError:
        from ..errors import UnsupportedError

        raise UnsupportedError(
            "reading and writing glTF needs pygltflib: pip install 'kinetree[gltf]'"
        ) from None
    return pygltflib


# --- the file -----------------------------------------------------------------------------


class _File:
    """A parsed glTF file: the JSON document (pygltflib) and its buffers' bytes."""

    def __init__(self, path: Path) -> None:
        lib = _pygltflib()
        self.path = path
        self.where = f"glTF file {str(path)!r}"
        try:
            size = path.stat().st_size
        except OSError as exc:
            raise FileFormatError(f"cannot read {self.where}: {exc.strerror or exc}") from None
        if size == 0:
            raise FileFormatError(f"{self.where} is empty")
        try:
            import logging

            logging.getLogger("pygltflib").disabled = True
            doc = lib.GLTF2().load(str(path))
        except Exception as exc:  # pygltflib raises whatever its parser met
            raise FileFormatError(f"{self.where} cannot be parsed: {_short(exc)}") from None
        if doc is None:
            raise FileFormatError(f"{self.where} cannot be parsed")
        self.doc = doc
        version = str(getattr(doc.asset, "version", "") or "")
        if not version.startswith("2."):
            raise FileFormatError(
                f"{self.where} is glTF {version or '(no version)'}; kinetree reads glTF 2.0"
            )
        required = [str(e) for e in (doc.extensionsRequired or [])]
        unsupported = [e for e in required if e not in SUPPORTED_EXTENSIONS]
        if unsupported:
            raise FileFormatError(
                f"{self.where} requires the extension {unsupported[0]!r}, which kinetree does "
                f"not read; supported required extensions: {', '.join(SUPPORTED_EXTENSIONS)}"
            )
        self._buffers: dict[int, bytes] = {}
        self.nodes = list(doc.nodes or [])
        self.names = _node_names(self.nodes)

    # --- raw data ----------------------------------------------------------------------------

    def buffer(self, index: int) -> bytes:
        if index in self._buffers:
            return self._buffers[index]
        buffers = self.doc.buffers or []
        if not 0 <= index < len(buffers):
            raise FileFormatError(f"{self.where}: buffer {index} does not exist")
        buf = buffers[index]
        uri = buf.uri
        if uri is not None and not isinstance(uri, str):
            raise FileFormatError(f"{self.where}: buffer {index} uri is not a string")
        if uri is None:
            try:
                data = self.doc.binary_blob()
            except Exception:
                data = None
            if data is None:
                raise FileFormatError(f"{self.where}: buffer {index} has no data (no uri, no GLB)")
        elif uri.startswith("data:"):
            head, _, body = uri.partition(",")
            if not head.endswith(";base64"):
                raise FileFormatError(f"{self.where}: buffer {index} data URI is not base64")
            try:
                data = base64.b64decode(body, validate=False)
            except (ValueError, TypeError) as exc:
                raise FileFormatError(f"{self.where}: buffer {index}: {_short(exc)}") from None
        else:
            data = self._external(uri, f"buffer {index}")
        length = _int(buf.byteLength or 0, f"{self.where}: buffer {index} byteLength")
        if len(data) < length:
            raise FileFormatError(
                f"{self.where}: buffer {index} holds {len(data)} bytes, fewer than its "
                f"byteLength {length} (a truncated file?)"
            )
        self._buffers[index] = bytes(data)
        return self._buffers[index]

    def _external(self, uri: str, what: str) -> bytes:
        from urllib.parse import unquote

        p = self.path.parent / unquote(uri)
        try:
            return p.read_bytes()
        except OSError as exc:
            raise FileFormatError(
                f"{self.where}: {what} file {uri!r} cannot be read: {exc.strerror or exc}"
            ) from None

    def view(self, index: int) -> tuple[bytes, int, int, int | None]:
        """``(buffer bytes, start, length, stride)`` of buffer view ``index``."""
        views = self.doc.bufferViews or []
        if not isinstance(index, int) or not 0 <= index < len(views):
            raise FileFormatError(f"{self.where}: buffer view {index!r} does not exist")
        v = views[index]
        where = f"{self.where}: buffer view {index}"
        data = self.buffer(_int(v.buffer, f"{where}: buffer"))
        start = _int(v.byteOffset or 0, f"{where}: byteOffset")
        length = _int(v.byteLength or 0, f"{where}: byteLength")
        if start < 0 or length < 0 or start + length > len(data):
            raise FileFormatError(
                f"{self.where}: buffer view {index} (bytes {start}..{start + length}) reaches "
                f"past its buffer of {len(data)} bytes (a truncated file?)"
            )
        stride = None if v.byteStride is None else _int(v.byteStride, f"{where}: byteStride")
        return data, start, length, stride

    def accessor(self, index: object, what: str) -> np.ndarray:
        """Accessor ``index`` as float64 ``(count, width)`` (normalised ints scaled)."""
        accessors = self.doc.accessors or []
        if not isinstance(index, int) or not 0 <= index < len(accessors):
            raise FileFormatError(f"{self.where}: {what}: accessor {index!r} does not exist")
        a = accessors[index]
        where = f"{self.where}: {what} (accessor {index})"
        if a.componentType not in _COMPONENTS or a.type not in _WIDTH:
            raise FileFormatError(
                f"{where}: component type {a.componentType!r} / type {a.type!r} is not glTF's"
            )
        dtype, divisor = _COMPONENTS[a.componentType]
        width = _WIDTH[a.type]
        count = _int(a.count or 0, f"{where}: count")
        if not 0 < count <= _MAX_COUNT:
            raise FileFormatError(f"{where}: count {count} is out of range 1..{_MAX_COUNT}")
        item = np.dtype(dtype).itemsize
        out = np.zeros((count, width), dtype=np.float64)
        if a.bufferView is not None:
            data, start, length, stride = self.view(a.bufferView)
            offset = _int(a.byteOffset or 0, f"{where}: byteOffset")
            step = int(stride) if stride else item * width
            if a.type.startswith("MAT") and item < 4 and not stride:
                raise FileFormatError(f"{where}: small-component matrices are not supported")
            need = offset + step * (count - 1) + item * width
            if offset < 0 or step < item * width or need > length:
                raise FileFormatError(
                    f"{where} reads {need} bytes of a {length}-byte buffer view (a truncated "
                    "or malformed file?)"
                )
            raw = np.ndarray(
                shape=(count, width),
                dtype=np.dtype(dtype).newbyteorder("<"),
                buffer=data,
                offset=start + offset,
                strides=(step, item),
            )
            out[:] = raw
        if a.sparse is not None:
            self._sparse(a.sparse, out, dtype, where)
        if a.normalized and divisor != 1.0:
            out = np.maximum(out / divisor, -1.0)
        elif a.componentType == 5126 and a.sparse is None:
            return self._exact(a, out)
        return out

    def _exact(self, a: Any, single: np.ndarray) -> np.ndarray:
        """The float64 values kinetree wrote beside a float32 accessor, where the
        accessor's ``extras`` names them: each value that rounds to exactly the float32
        value read, the float32 value elsewhere.

        Any other reader sees the float32 data alone; a file edited elsewhere reads as
        edited (a changed float32 value no longer matches its float64 one), never stale.
        """
        extras = a.extras if isinstance(a.extras, dict) else {}
        index = extras.get(EXACT_KEY)
        if not isinstance(index, int) or isinstance(index, bool):
            return single
        try:
            data, start, length, _ = self.view(index)
        except FileFormatError:
            return single
        if length != single.size * 8:
            return single
        exact = np.frombuffer(data, dtype="<f8", count=single.size, offset=start)
        exact = exact.reshape(single.shape).astype(np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            same = np.isfinite(exact) & (exact.astype(np.float32) == single.astype(np.float32))
        return np.where(same, exact, single)

    def _sparse(self, sparse: Any, out: np.ndarray, dtype: Any, where: str) -> None:
        n = int(sparse.count or 0)
        if not 0 < n <= out.shape[0]:
            raise FileFormatError(f"{where}: sparse count {n} is out of range")
        idx_type = _COMPONENTS.get(sparse.indices.componentType, (None, 0))[0]
        if idx_type not in (np.uint8, np.uint16, np.uint32):
            raise FileFormatError(f"{where}: sparse indices must be unsigned integers")
        parts = []
        for part, dt, width in (
            (sparse.indices, idx_type, 1),
            (sparse.values, dtype, out.shape[1]),
        ):
            data, start, length, _ = self.view(part.bufferView)
            off = int(part.byteOffset or 0)
            size = np.dtype(dt).itemsize * width * n
            if off < 0 or off + size > length:
                raise FileFormatError(f"{where}: sparse data reaches past its buffer view")
            arr = np.frombuffer(
                data, dtype=np.dtype(dt).newbyteorder("<"), count=width * n, offset=start + off
            )
            parts.append(arr.reshape(n, width))
        idx = parts[0][:, 0].astype(np.int64)
        if idx.max(initial=0) >= out.shape[0]:
            raise FileFormatError(f"{where}: a sparse index is past the accessor's count")
        out[idx] = parts[1]

    def image(self, index: int) -> tuple[bytes, str] | None:
        images = self.doc.images or []
        if not 0 <= index < len(images):
            return None
        im = images[index]
        mime = str(im.mimeType or "")
        if im.bufferView is not None:
            data, start, length, _ = self.view(im.bufferView)
            return data[start : start + length], mime or "image/png"
        uri = im.uri or ""
        if uri.startswith("data:"):
            head, _, body = uri.partition(",")
            mime = mime or head[5:].split(";")[0]
            try:
                return base64.b64decode(body), mime
            except (ValueError, TypeError):
                return None
        if uri:
            try:
                data = self._external(uri, f"image {index}")
            except FileFormatError:
                return None
            return data, mime or (
                "image/jpeg" if uri.lower().endswith((".jpg", ".jpeg")) else "image/png"
            )
        return None


def _int(value: object, what: str) -> int:
    """A JSON integer, or FileFormatError naming ``what``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise FileFormatError(f"{what} must be an integer, got {value!r:.60}")
    return value


def _short(exc: BaseException) -> str:
    try:
        text = str(exc) or type(exc).__name__
    except Exception:  # a message holding bytes that are not text
        text = type(exc).__name__
    return text if len(text) <= 200 else text[:197] + "..."


def _node_names(nodes: Sequence[Any]) -> list[str]:
    """The frame name of every node: its name, ``node_<i>`` without one, ``<name>_<i>``
    for a name met before."""
    out: list[str] = []
    seen: set[str] = set()
    for i, n in enumerate(nodes):
        name = n.name if isinstance(n.name, str) and n.name.strip() else f"node_{i}"
        if name in seen:
            name = f"{name}_{i}"
        while name in seen:
            name = f"{name}_"
        seen.add(name)
        out.append(name)
    return out


# --- the node tree ------------------------------------------------------------------------


def _parents(f: _File) -> list[int]:
    """Each node's parent (-1: a root); a node with two parents or a loop raises."""
    n = len(f.nodes)
    parent = [-1] * n
    for i, node in enumerate(f.nodes):
        for c in node.children or []:
            if not isinstance(c, int) or not 0 <= c < n:
                raise FileFormatError(
                    f"{f.where}: node {f.names[i]!r} has a child {c!r} that does not exist"
                )
            if parent[c] != -1 or c == i:
                raise FileFormatError(
                    f"{f.where}: node {f.names[c]!r} has two parents ({f.names[parent[c]]!r} "
                    f"and {f.names[i]!r}) or is its own child: the node tree has a loop"
                    if c != i
                    else f"{f.where}: node {f.names[c]!r} is its own child: a skeleton loop"
                )
            parent[c] = i
    for i in range(n):  # a loop has no root above it
        seen = {i}
        p = parent[i]
        while p >= 0:
            if p in seen:
                raise FileFormatError(
                    f"{f.where}: the node tree has a loop through {f.names[p]!r} (a skeleton loop)"
                )
            seen.add(p)
            p = parent[p]
    return parent


@dataclass
class _Trs:
    """A node's rest transform: translation, rotation (x, y, z, w), scale."""

    t: np.ndarray
    r: np.ndarray
    s: np.ndarray


def _rest(f: _File, i: int) -> _Trs:
    node = f.nodes[i]
    where = f"{f.where}: node {f.names[i]!r}"
    if node.matrix is not None and list(node.matrix) != [
        1,
        0,
        0,
        0,
        0,
        1,
        0,
        0,
        0,
        0,
        1,
        0,
        0,
        0,
        0,
        1,
    ]:
        M = _finite(node.matrix, 16, f"{where}: matrix").reshape(4, 4).T  # column-major
        t = M[:3, 3].copy()
        s = np.linalg.norm(M[:3, :3], axis=0)
        if np.any(s == 0.0):
            raise FileFormatError(f"{where}: matrix has a zero scale")
        if np.linalg.det(M[:3, :3]) < 0:
            s[0] = -s[0]
        R = M[:3, :3] / s
        if np.max(np.abs(R.T @ R - np.eye(3))) > 1e-5:
            warn_outside(
                f"{f.where}: node {f.names[i]!r} has a sheared matrix; its rotation is taken "
                "as the nearest one",
                CharacterFileWarning,
            )
            u, _, vt = np.linalg.svd(R)
            R = u @ vt
        if not np.all(np.isfinite(R)) or np.linalg.det(R) <= 0.5:
            raise FileFormatError(f"{where}: matrix is not a rotation and scale")
        q = matrix_to_quaternion(R)  # w first
        return _Trs(t, np.array([q[1], q[2], q[3], q[0]]), s)
    t = _finite(
        node.translation if node.translation is not None else [0, 0, 0], 3, f"{where}: translation"
    )
    r = _finite(
        node.rotation if node.rotation is not None else [0, 0, 0, 1], 4, f"{where}: rotation"
    )
    s = _finite(node.scale if node.scale is not None else [1, 1, 1], 3, f"{where}: scale")
    nr = float(np.linalg.norm(r))
    if nr == 0.0:
        raise FileFormatError(f"{where}: rotation is the zero quaternion")
    return _Trs(t, r / nr, s)


def _finite(value: object, n: int, what: str) -> np.ndarray:
    try:
        a = np.asarray(value, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        raise FileFormatError(f"{what} is not a list of {n} numbers") from None
    if a.shape != (n,):
        raise FileFormatError(f"{what} has {a.size} numbers, not {n}")
    if not np.all(np.isfinite(a)):
        raise FileFormatError(f"{what} contains NaN or inf")
    return a


def _matrix(trs: _Trs) -> np.ndarray:
    M = np.eye(4)
    x, y, z, w = trs.r
    M[:3, :3] = quaternion_to_matrix([w, x, y, z]) * trs.s
    M[:3, 3] = trs.t
    return M


# --- choosing the skeleton ----------------------------------------------------------------


@dataclass
class _Skeleton:
    """The chosen skeleton: its nodes (parents first), its parents within it, and the
    skins bound to it."""

    name: str
    nodes: list[int]
    parent: list[int]  # index into nodes, -1 for a top joint
    skins: list[int]


def _skin_name(f: _File, k: int) -> str:
    s = f.doc.skins[k]
    return s.name if isinstance(s.name, str) and s.name.strip() else f"skin_{k}"


def _skeleton(f: _File, parent: list[int], skeleton: str | None) -> _Skeleton:
    skins = f.doc.skins or []
    if not skins:
        raise FileFormatError(f"{f.where} has no skin, so no skeleton to read")
    n = len(f.nodes)

    def top(i: int) -> int:
        while parent[i] >= 0:
            i = parent[i]
        return i

    # Skins whose joints share node trees are one skeleton (a skin's joints may hang from
    # several top nodes: each is then a top joint): trees joined by a skin, union-find.
    joined: dict[int, int] = {}

    def rep(r: int) -> int:
        while joined.setdefault(r, r) != r:
            r = joined[r]
        return r

    skin_roots: list[int] = []
    for k, s in enumerate(skins):
        joints = list(s.joints or [])
        if not joints:
            raise FileFormatError(f"{f.where}: skin {_skin_name(f, k)!r} has no joints")
        for j in joints:
            if not isinstance(j, int) or not 0 <= j < n:
                raise FileFormatError(
                    f"{f.where}: skin {_skin_name(f, k)!r} names joint {j!r}, a node that does "
                    f"not exist (the file has {n} nodes)"
                )
        roots = sorted({rep(top(j)) for j in joints})
        for r in roots[1:]:
            joined[r] = roots[0]
        skin_roots.append(roots[0])
    groups: dict[int, list[int]] = {}
    for k, r in enumerate(skin_roots):
        groups.setdefault(rep(r), []).append(k)
    names = {r: [_skin_name(f, k) for k in ks] for r, ks in groups.items()}
    if skeleton is None:
        if len(groups) > 1:
            listed = "; ".join(", ".join(v) for v in names.values())
            raise KinetreeError(
                f"{f.where} holds {len(groups)} skeletons; choose one by a skin's name with "
                f"skeleton=...: {listed}"
            )
        root = next(iter(groups))
    else:
        found = [r for r, v in names.items() if skeleton in v]
        if not found:
            raise UnknownNameError(
                f"skeleton {skeleton!r} not found in {f.where}; its skins are: "
                f"{', '.join(v for vs in names.values() for v in vs)}"
            )
        root = found[0]
    chosen = groups[root]
    joint_set: set[int] = {j for k in chosen for j in skins[k].joints}
    # Add the nodes between joints: walk up from each joint to the highest joint.
    members = set(joint_set)
    for j in joint_set:
        path: list[int] = []
        p = parent[j]
        while p >= 0:
            if p in joint_set:
                members.update(path)
                break
            path.append(p)
            p = parent[p]
    order = _topological(f, parent, members)
    where = {node: i for i, node in enumerate(order)}
    par = []
    for node in order:
        p = parent[node]
        while p >= 0 and p not in where:
            p = parent[p]
        par.append(where[p] if p >= 0 else -1)
    return _Skeleton(names[root][0], order, par, chosen)


def _topological(f: _File, parent: list[int], members: set[int]) -> list[int]:
    depth = {}
    for i in members:
        d, p = 0, parent[i]
        while p >= 0:
            d, p = d + 1, parent[p]
        depth[i] = d
    return sorted(members, key=lambda i: (depth[i], i))


# --- curves -------------------------------------------------------------------------------


@dataclass
class _Channel:
    times: np.ndarray  # (k,)
    values: np.ndarray  # (k, w) or (k, 3, w) for CUBICSPLINE (in-tangent, value, out-tangent)
    interpolation: str
    path: str


def _animations(f: _File) -> list[Any]:
    return list(f.doc.animations or [])


def _animation_name(f: _File, k: int) -> str:
    a = f.doc.animations[k]
    return a.name if isinstance(a.name, str) and a.name.strip() else f"animation_{k}"


def _pick_animation(f: _File, animation: str | int | None) -> int | None:
    anims = _animations(f)
    if not anims:
        if animation is None:
            return None
        raise UnknownNameError(f"animation {animation!r} not found: {f.where} has no animations")
    names = [_animation_name(f, k) for k in range(len(anims))]
    if animation is None:
        return 0
    if isinstance(animation, (int, np.integer)) and not isinstance(animation, bool):
        if 0 <= animation < len(anims):
            return int(animation)
        raise UnknownNameError(
            f"animation index {animation} is out of range: {f.where} has {len(anims)} "
            f"animations: {', '.join(names)}"
        )
    if isinstance(animation, str) and animation in names:
        return names.index(animation)
    raise UnknownNameError(
        f"animation {animation!r} not found in {f.where}; its animations are: {', '.join(names)}"
    )


def _channels(f: _File, k: int) -> dict[tuple[int, str], _Channel]:
    anim = f.doc.animations[k]
    name = _animation_name(f, k)
    samplers = list(anim.samplers or [])
    out: dict[tuple[int, str], _Channel] = {}
    for c, ch in enumerate(anim.channels or []):
        target = ch.target
        path = getattr(target, "path", None)
        node = getattr(target, "node", None)
        if path not in ("translation", "rotation", "scale") or node is None:
            continue  # morph weights, or a pointer to something else
        if not isinstance(node, int) or not 0 <= node < len(f.nodes):
            raise FileFormatError(
                f"{f.where}: animation {name!r} channel {c} targets node "
                f"{node!r}, which does not exist"
            )
        s = ch.sampler
        if not isinstance(s, int) or not 0 <= s < len(samplers):
            raise FileFormatError(
                f"{f.where}: animation {name!r} channel {c} uses sampler {s!r}, which does not "
                "exist"
            )
        sampler = samplers[s]
        what = f"animation {name!r} channel {c} ({f.names[node]} {path})"
        interp = sampler.interpolation or "LINEAR"
        if interp not in ("LINEAR", "STEP", "CUBICSPLINE"):
            raise FileFormatError(f"{f.where}: {what}: unknown interpolation {interp!r}")
        t = f.accessor(sampler.input, f"{what} times")[:, 0]
        v = f.accessor(sampler.output, f"{what} values")
        width = 4 if path == "rotation" else 3
        if v.shape[1] != width:
            raise FileFormatError(
                f"{f.where}: {what}: values have {v.shape[1]} components, not {width}"
            )
        per_key = 3 if interp == "CUBICSPLINE" else 1
        if v.shape[0] != per_key * t.shape[0]:
            raise FileFormatError(
                f"{f.where}: {what}: {v.shape[0]} values for {t.shape[0]} key times "
                f"({interp} needs {per_key} per key)"
            )
        if not np.all(np.isfinite(t)) or not np.all(np.isfinite(v)):
            raise FileFormatError(f"{f.where}: {what} contains NaN or inf")
        if np.any(np.diff(t) <= 0.0):
            raise FileFormatError(f"{f.where}: {what}: key times are not strictly increasing")
        if per_key == 3:
            v = v.reshape(t.shape[0], 3, width)
        out[(node, path)] = _Channel(t, v, interp, path)
    return out


def _sample(ch: _Channel, times: np.ndarray) -> np.ndarray:
    """The channel's values ``(len(times), w)`` at ``times`` (the glTF rules)."""
    t = ch.times
    cubic = ch.interpolation == "CUBICSPLINE"
    vals = ch.values[:, 1] if cubic else ch.values
    rot = ch.path == "rotation"
    if len(t) == 1:
        out = np.repeat(vals[:1], len(times), axis=0)
    else:
        k = np.clip(np.searchsorted(t, times, side="right") - 1, 0, len(t) - 2)
        dt = t[k + 1] - t[k]
        u = np.clip((times - t[k]) / dt, 0.0, 1.0)
        if ch.interpolation == "STEP":
            out = np.where((times >= t[k + 1])[:, None], vals[k + 1], vals[k])
        elif cubic:
            u2, u3 = u * u, u * u * u
            h00 = 2 * u3 - 3 * u2 + 1
            h10 = u3 - 2 * u2 + u
            h01 = -2 * u3 + 3 * u2
            h11 = u3 - u2
            b = ch.values[k, 2]  # out-tangent of key k
            a = ch.values[k + 1, 0]  # in-tangent of key k + 1
            out = (
                h00[:, None] * vals[k]
                + (h10 * dt)[:, None] * b
                + h01[:, None] * vals[k + 1]
                + (h11 * dt)[:, None] * a
            )
        elif rot:
            out = slerp(vals[k], vals[k + 1], u)
        else:
            out = (1.0 - u)[:, None] * vals[k] + u[:, None] * vals[k + 1]
        before, after = times <= t[0], times >= t[-1]
        out[before] = vals[0]
        out[after] = vals[-1]
    if rot:
        n = np.linalg.norm(out, axis=1, keepdims=True)
        if np.any(n == 0.0):
            raise FileFormatError("a rotation curve reaches the zero quaternion")
        out = out / n
    return out


# --- reading ------------------------------------------------------------------------------


@dataclass
class _Read:
    """What one reading of a file gives: the rig (model and how to pose it), the
    skeleton's nodes, and the file."""

    rig: Rig
    skeleton: _Skeleton
    file: _File

    @property
    def model(self) -> Model:
        return self.rig.model


def _read(
    path: str | os.PathLike[str],
    skeleton: str | None,
    up: str | None,
    scale: float,
    file: _File | None = None,
) -> _Read:
    s = check_up_scale(up, scale)
    f = file or _File(as_path(path, "the path of a .gltf or .glb file (str or os.PathLike)"))
    parent = _parents(f)
    sk = _skeleton(f, parent, skeleton)
    rest = [_rest(f, i) for i in sk.nodes]
    size = _skeleton_size(f, parent, sk, rest)
    every = [_channels(f, k) for k in range(len(_animations(f)))]
    free = []
    for i, node in enumerate(sk.nodes):
        moved = sk.parent[i] < 0
        for chans in every:
            ch = chans.get((node, "translation"))
            if ch is None or moved:
                continue
            vals = ch.values[:, 1] if ch.interpolation == "CUBICSPLINE" else ch.values
            moved = bool(np.max(np.abs(vals - rest[i].t)) > 1e-10 * size)
            if ch.interpolation == "CUBICSPLINE":
                moved |= bool(np.any(ch.values[:, [0, 2]] != 0.0))
        free.append(moved)
    _warn_scales(f, sk, rest, every)
    above: list[np.ndarray | None] = []
    for i, node in enumerate(sk.nodes):
        if sk.parent[i] >= 0:
            above.append(None)
            continue
        W = np.eye(4)
        chain = []
        a = parent[node]
        while a >= 0:
            chain.append(a)
            a = parent[a]
        for a in reversed(chain):
            W = W @ _matrix(_rest(f, a))
        above.append(W)
    tree = JointTree(
        names=[f.names[i] for i in sk.nodes],
        parent=list(sk.parent),
        t=np.array([r.t for r in rest]).reshape(-1, 3),
        r=np.array([r.r for r in rest]).reshape(-1, 4),
        s=np.array([r.s for r in rest]).reshape(-1, 3),
        above=above,
        moved=free,
    )
    metadata = {
        "source": str(f.path),
        "format": "gltf",
        "up": "z" if up == "z" else "y",
        "scale": s,
        "length_scale": s,
        "skeleton": sk.name,
    }
    rig = build_rig(f.path.stem or "gltf", tree, up, s, metadata, f.where)
    return _Read(rig, sk, f)


def _skeleton_size(f: _File, parent: list[int], sk: _Skeleton, rest: list[_Trs]) -> float:
    """The largest extent of the joints at rest (metres), for tolerances."""
    W: dict[int, np.ndarray] = {}
    for i in range(len(sk.nodes)):
        p = sk.parent[i]
        W[i] = (W[p] if p >= 0 else np.eye(4)) @ _matrix(rest[i])
    pos = np.array([W[i][:3, 3] for i in W])
    return float(np.max(np.ptp(pos, axis=0))) if len(pos) > 1 else 1.0


def _warn_scales(
    f: _File, sk: _Skeleton, rest: list[_Trs], every: Sequence[Mapping[tuple[int, str], _Channel]]
) -> None:
    has_grandchildren = set()
    for p in sk.parent:
        if p >= 0 and sk.parent[p] >= 0:
            has_grandchildren.add(sk.parent[p])
    sheared = [
        f.names[sk.nodes[i]]
        for i, r in enumerate(rest)
        if i in has_grandchildren
        and float(np.max(np.abs(r.s / np.mean(r.s) - 1.0))) > _SCALE_TOLERANCE
    ]
    animated = sorted(
        {
            f.names[node]
            for chans in every
            for (node, path), ch in chans.items()
            if path == "scale"
            and node in sk.nodes
            and float(
                np.max(
                    np.abs(
                        (ch.values[:, 1] if ch.interpolation == "CUBICSPLINE" else ch.values)
                        - rest[sk.nodes.index(node)].s
                    )
                )
            )
            > _SCALE_TOLERANCE * float(np.max(np.abs(rest[sk.nodes.index(node)].s)))
        }
    )
    if sheared:
        warn_outside(
            f"{f.where}: non-uniform scale on joints {', '.join(sheared)} shears the frames "
            "below them; rigid frames keep their offsets but not the shear",
            CharacterFileWarning,
        )
    if animated:
        warn_outside(
            f"{f.where}: animated scale on joints {', '.join(animated)} is not read (rigid "
            "frames); their rest scale is used",
            CharacterFileWarning,
        )


def load_gltf(
    path: str | os.PathLike[str],
    *,
    skeleton: str | None = None,
    up: str | None = None,
    scale: float = 1.0,
) -> Model:
    """The skeleton of a glTF 2.0 file as a :class:`Model` at its rest pose, with its
    skinned meshes (:attr:`Model.skins`). See the module docstring for the layout,
    ``skeleton``, ``up`` and ``scale``.

    Raises :class:`~kinetree.errors.FileFormatError` naming the problem for a file that
    cannot be read (truncated, malformed, a skin naming a missing node, a node loop, an
    unsupported required extension, NaN), :class:`~kinetree.errors.KinetreeError`
    listing the skeletons of a file with several when ``skeleton`` is not given.
    """
    r = _read(path, skeleton, up, scale)
    return _with_skins(r)


def read_gltf(
    path: str | os.PathLike[str],
    animation: str | int | None = None,
    *,
    fps: float | None = None,
    times: ArrayLike | None = None,
    skeleton: str | None = None,
    up: str | None = None,
    scale: float = 1.0,
) -> Clip:
    """An animation of a glTF 2.0 file as a :class:`~kinetree.io.clip.Clip`.

    ``animation``: its name (``animation_<i>`` for an unnamed one) or index; None: the
    first (a file without animations gives its rest pose as one frame). ``fps`` /
    ``times`` [s]: where to sample (:func:`~kinetree.io.clip.sample_times`); neither:
    every key time of the animation's channels on the skeleton.
    """
    r = _read(path, skeleton, up, scale)
    model = _with_skins(r)
    k = _pick_animation(r.file, animation)
    chans = _channels(r.file, k) if k is not None else {}
    members = set(r.skeleton.nodes)
    mine = {key: ch for key, ch in chans.items() if key[0] in members}
    native = np.concatenate([ch.times for ch in mine.values()]) if mine else np.zeros(1)
    t = sample_times(native, fps, times)
    where = {node: i for i, node in enumerate(r.skeleton.nodes)}
    rotations: dict[int, np.ndarray] = {}
    translations: dict[int, np.ndarray] = {}
    for (node, path_), ch in mine.items():
        if path_ == "rotation":
            rotations[where[node]] = _sample(ch, t)
        elif path_ == "translation":
            translations[where[node]] = _sample(ch, t)
    q = rig_q(r.rig, rotations, translations, len(t))
    name = _animation_name(r.file, k) if k is not None else model.name
    return Clip(
        model=model,
        q=q,
        times=t,
        fps=float(fps) if fps is not None else 0.0,
        name=name,
        joint_names=tuple(r.file.names[i] for i in r.skeleton.nodes),
        source=str(r.file.path),
        format="gltf",
        keys={
            (r.file.names[node], path_): (ch.times, ch.values)
            for (node, path_), ch in mine.items()
            if ch.interpolation != "CUBICSPLINE" and path_ != "scale"
        },
    )


# --- skins --------------------------------------------------------------------------------


def _with_skins(r: _Read) -> Model:
    f = r.file
    skins: list[Skin] = []
    BU = r.rig.base
    BU_inv = np.linalg.inv(BU)
    members = {node: i for i, node in enumerate(r.skeleton.nodes)}
    k_acc = r.rig.k
    for node_index, node in enumerate(f.nodes):
        if node.skin not in r.skeleton.skins or node.mesh is None:
            continue
        gskin = f.doc.skins[node.skin]
        joints = list(gskin.joints)
        nj = len(joints)
        if gskin.inverseBindMatrices is not None:
            ibm = f.accessor(
                gskin.inverseBindMatrices,
                f"skin {_skin_name(f, node.skin)!r} inverse bind matrices",
            )
            if ibm.shape != (nj, 16):
                raise FileFormatError(
                    f"{f.where}: skin {_skin_name(f, node.skin)!r} has {ibm.shape[0]} inverse "
                    f"bind matrices for {nj} joints"
                )
            ibm = np.swapaxes(ibm.reshape(nj, 4, 4), 1, 2)
        else:
            ibm = np.tile(np.eye(4), (nj, 1, 1))
        if not np.all(np.isfinite(ibm)):
            raise FileFormatError(f"{f.where}: inverse bind matrices contain NaN or inf")
        K = np.array([k_acc[members[j]] for j in joints])
        inv_bind = np.empty_like(ibm)
        for j in range(nj):
            D = np.diag([*(r.rig.scale * K[j]), 1.0])
            inv_bind[j] = D @ ibm[j] @ BU_inv
        meshes = f.doc.meshes or []
        if not isinstance(node.mesh, int) or not 0 <= node.mesh < len(meshes):
            raise FileFormatError(
                f"{f.where}: node {f.names[node_index]!r} uses mesh "
                f"{node.mesh!r}, which does not exist"
            )
        mesh = meshes[node.mesh]
        for p_i, prim in enumerate(mesh.primitives or []):
            sk = _primitive(
                f,
                prim,
                f"{mesh.name or f'mesh_{node.mesh}'}",
                p_i,
                nj,
                BU,
                [f.names[j] for j in joints],
                inv_bind,
            )
            if sk is not None:
                skins.append(sk)
    return dataclasses.replace(r.rig.model, skins=tuple(skins))


def _attribute(f: _File, prim: Any, name: str, what: str) -> np.ndarray | None:
    attrs = prim.attributes
    index = getattr(attrs, name, None)
    if index is None:
        return None
    return f.accessor(index, f"{what} {name}")


def _primitive(
    f: _File,
    prim: Any,
    mesh_name: str,
    p_i: int,
    nj: int,
    BU: np.ndarray,
    joint_names: list[str],
    inv_bind: np.ndarray,
) -> Skin | None:
    what = f"mesh {mesh_name!r} primitive {p_i}"
    mode = 4 if prim.mode is None else prim.mode
    if mode != 4:
        warn_outside(
            f"{f.where}: {what} is not triangles (mode {mode}); not read", CharacterFileWarning
        )
        return None
    pos = _attribute(f, prim, "POSITION", what)
    if pos is None:
        return None
    n = pos.shape[0]
    if not np.all(np.isfinite(pos)):
        raise FileFormatError(f"{f.where}: {what} POSITION contains NaN or inf")
    joints_cols, weight_cols = [], []
    for s in range(2):
        j = _attribute(f, prim, f"JOINTS_{s}", what)
        w = _attribute(f, prim, f"WEIGHTS_{s}", what)
        if j is None or w is None:
            break
        if j.shape != (n, 4) or w.shape != (n, 4):
            raise FileFormatError(f"{f.where}: {what} JOINTS_{s}/WEIGHTS_{s} do not match POSITION")
        joints_cols.append(j)
        weight_cols.append(w)
    if not joints_cols:
        return None
    J = np.concatenate(joints_cols, axis=1).astype(np.int64)
    W = np.concatenate(weight_cols, axis=1)
    if not np.all(np.isfinite(W)):
        raise FileFormatError(f"{f.where}: {what} WEIGHTS contain NaN or inf")
    W = np.where(W > 0.0, W, 0.0)
    if J.min() < 0 or J.max() >= nj:
        raise FileFormatError(
            f"{f.where}: {what} JOINTS index joint {int(J.max())}; the skin has {nj}"
        )
    total = W.sum(axis=1)
    zero = total <= 0.0
    if np.any(zero):  # unweighted vertices follow the first joint
        W[zero, 0] = 1.0
        J[zero, 0] = 0
        total = W.sum(axis=1)
    W = W / total[:, None]
    if prim.indices is not None:
        idx = f.accessor(prim.indices, f"{what} indices")[:, 0].astype(np.int64)
    else:
        idx = np.arange(n)
    if idx.size % 3 or (idx.size and (idx.min() < 0 or idx.max() >= n)):
        raise FileFormatError(
            f"{f.where}: {what} indices do not make triangles of its {n} vertices"
        )
    faces = idx.reshape(-1, 3)
    vertices = pos @ BU[:3, :3].T + BU[:3, 3]
    normals = _attribute(f, prim, "NORMAL", what)
    if normals is not None:
        normals = normals @ BU[:3, :3].T
        nn = np.linalg.norm(normals, axis=1, keepdims=True)
        normals = normals / np.where(nn == 0.0, 1.0, nn) if np.all(np.isfinite(normals)) else None
    uv = _attribute(f, prim, "TEXCOORD_0", what)
    colors = _attribute(f, prim, "COLOR_0", what)
    if colors is not None and colors.shape[1] == 3:
        colors = np.concatenate([colors, np.ones((n, 1))], axis=1)
    base = (0.8, 0.8, 0.8, 1.0)
    texture, mime = None, ""
    material: dict[str, Any] = {}
    mats = f.doc.materials or []
    if isinstance(prim.material, int) and 0 <= prim.material < len(mats):
        m = mats[prim.material]
        pbr = m.pbrMetallicRoughness
        if pbr is not None:
            if pbr.baseColorFactor is not None:
                base = tuple(float(c) for c in pbr.baseColorFactor)  # type: ignore[assignment]
            material["metallicFactor"] = float(
                1.0 if pbr.metallicFactor is None else pbr.metallicFactor
            )
            material["roughnessFactor"] = float(
                1.0 if pbr.roughnessFactor is None else pbr.roughnessFactor
            )
            tex = pbr.baseColorTexture
            textures = f.doc.textures or []
            if (
                tex is not None
                and 0 <= tex.index < len(textures)
                and textures[tex.index].source is not None
            ):
                got = f.image(int(textures[tex.index].source))
                if got is not None:
                    texture, mime = got
        material["name"] = m.name or ""
        material["doubleSided"] = bool(m.doubleSided)
        material["alphaMode"] = m.alphaMode or "OPAQUE"
    try:
        return Skin(
            vertices=vertices,
            faces=faces,
            joint_names=tuple(joint_names),
            joints=J,
            weights=W,
            inverse_bind=inv_bind,
            normals=normals,
            uv=uv if uv is not None and uv.shape[1] == 2 and np.all(np.isfinite(uv)) else None,
            colors=colors if colors is not None and np.all(np.isfinite(colors)) else None,
            base_color=base,
            texture=texture,
            texture_mime=mime,
            name=mesh_name if p_i == 0 else f"{mesh_name}_{p_i}",
            material=material,
        )
    except KinetreeError as exc:
        raise FileFormatError(f"{f.where}: {what}: {exc}") from None


# --- writing ------------------------------------------------------------------------------


class _Blob:
    """The binary buffer being written, and its views and accessors."""

    def __init__(self, lib: Any) -> None:
        self.lib = lib
        self.data = bytearray()
        self.views: list[Any] = []
        self.accessors: list[Any] = []

    def add(
        self,
        array: np.ndarray,
        type_: str,
        component: int,
        target: int | None = None,
        bounds: bool = False,
    ) -> int:
        dtype = {5126: "<f4", 5125: "<u4", 5123: "<u2", 5121: "u1"}[component]
        a = np.ascontiguousarray(array, dtype=dtype)
        view = self._view(a.tobytes(), target)
        count = a.shape[0]
        kw: dict[str, Any] = {}
        if bounds:
            flat = a.reshape(count, -1).astype(np.float64)
            kw = {"min": flat.min(axis=0).tolist(), "max": flat.max(axis=0).tolist()}
        if component == 5126:
            exact = np.ascontiguousarray(array, dtype="<f8")
            single = a.astype(np.float64)
            largest = float(np.abs(exact).max(initial=0.0))
            if np.any(np.abs(exact - single) > 1e-12 * largest):
                # float32 loses more than 1e-12: the exact values beside it, for kinetree.
                kw["extras"] = {EXACT_KEY: self._view(exact.tobytes(), None, align=8)}
        self.accessors.append(
            self.lib.Accessor(
                bufferView=view,
                componentType=component,
                count=count,
                type=type_,
                **kw,
            )
        )
        return len(self.accessors) - 1

    def add_bytes(self, data: bytes) -> int:
        return self._view(data, None)

    def _view(self, data: bytes, target: int | None, align: int = 4) -> int:
        while len(self.data) % align:
            self.data.append(0)
        start = len(self.data)
        self.data.extend(data)
        self.views.append(
            self.lib.BufferView(buffer=0, byteOffset=start, byteLength=len(data), target=target)
        )
        return len(self.views) - 1


def _model_up(model: Model) -> str:
    up = model.metadata.get("up")
    if up in ("y", "z"):
        return str(up)
    return "y" if model.metadata.get("format") == "bvh" else "z"


def write_gltf(path: str | os.PathLike[str], clip: Clip) -> None:
    """Write ``clip`` as glTF 2.0 (``.glb``: one binary file; ``.gltf``: JSON with the
    data embedded as a base64 data URI). See the module docstring for what is written.
    A missing folder or a failed write raises :class:`~kinetree.errors.FileFormatError`.
    """
    lib = _pygltflib()
    p = as_path(path, "write_gltf needs the path of a .glb or .gltf file (str or os.PathLike)")
    if not isinstance(clip, Clip):
        raise InvalidValueError(f"write_gltf needs a Clip, got {type(clip).__name__}")
    if not p.parent.is_dir():
        raise FileFormatError(
            f"cannot write glTF file {str(p)!r}: folder {str(p.parent)!r} does not exist"
        )
    model = clip.model
    frames, parents, local, rest = _skeleton_poses(clip)
    n = len(frames)
    blob = _Blob(lib)
    nodes: list[Any] = []
    for i, name in enumerate(frames):
        t, r = _trs(rest[i])
        nodes.append(
            lib.Node(
                name=name,
                translation=t.tolist(),
                rotation=r.tolist(),
                children=[c for c in range(n) if parents[c] == i] or None,
            )
        )
    roots = [i for i in range(n) if parents[i] < 0]
    # Animation: translation and rotation of every node that leaves its rest values.
    times = clip.times - min(float(clip.times[0]), 0.0)
    samplers: list[Any] = []
    channels: list[Any] = []
    t_acc: int | None = None
    for i in range(n):
        T = local[:, i]
        rest_t, rest_r = _trs(rest[i])
        quat = _quaternions(T[:, :3, :3])
        if np.dot(quat[0], rest_r) < 0.0:
            quat = -quat
        for path_, vals, at_rest, type_ in (
            ("translation", T[:, :3, 3], rest_t, "VEC3"),
            ("rotation", quat, rest_r, "VEC4"),
        ):
            if np.abs(vals - at_rest).max() <= 1e-12 * max(float(np.abs(at_rest).max()), 1.0):
                continue
            if t_acc is None:
                t_acc = blob.add(times[:, None], "SCALAR", 5126, bounds=True)
            out = blob.add(_as_read(clip, frames[i], path_, times, vals), type_, 5126)
            samplers.append(lib.AnimationSampler(input=t_acc, output=out, interpolation="LINEAR"))
            channels.append(
                lib.AnimationChannel(
                    sampler=len(samplers) - 1,
                    target=lib.AnimationChannelTarget(node=i, path=path_),
                )
            )
    # Skins: one per skinned mesh (all frames as joints), or one bare skin.
    world_rest = _world_of(rest, parents)
    skins_out: list[Any] = []
    meshes: list[Any] = []
    materials: list[Any] = []
    images: list[Any] = []
    textures: list[Any] = []
    C = _to_file(model)
    S = np.diag([1.0 / model.length_scale] * 3 + [1.0])
    C_inv = np.linalg.inv(C)
    for sk in model.skins or ():
        where = {name: i for i, name in enumerate(frames)}
        missing = [j for j in sk.joint_names if j not in where]
        if missing:
            raise InvalidValueError(
                f"cannot write skin {sk.name!r}: it is bound to {missing[0]!r}, which is not a "
                "frame of the clip's model"
            )
        ibm = np.linalg.inv(world_rest)  # joints not in the mesh: bound at rest
        for j, name in enumerate(sk.joint_names):
            ibm[where[name]] = S @ sk.inverse_bind[j] @ C_inv
        ibm_acc = blob.add(np.swapaxes(ibm, 1, 2).reshape(n, 16), "MAT4", 5126)
        skins_out.append(
            lib.Skin(name=sk.name or None, joints=list(range(n)), inverseBindMatrices=ibm_acc)
        )
        remap = np.array([where[name] for name in sk.joint_names], dtype=np.int64)
        meshes.append(_mesh(lib, blob, sk, remap, C, materials, images, textures))
    if not skins_out:
        ibm = np.linalg.inv(world_rest)
        ibm_acc = blob.add(np.swapaxes(ibm, 1, 2).reshape(n, 16), "MAT4", 5126)
        skins_out.append(
            lib.Skin(name=model.name, joints=list(range(n)), inverseBindMatrices=ibm_acc)
        )
    scene_nodes = list(roots)
    for k in range(len(meshes)):
        nodes.append(lib.Node(name=model.skins[k].name or f"mesh_{k}", mesh=k, skin=k))
        scene_nodes.append(len(nodes) - 1)
    doc = lib.GLTF2(
        asset=lib.Asset(version="2.0", generator="kinetree"),
        scene=0,
        scenes=[lib.Scene(nodes=scene_nodes)],
        nodes=nodes,
        skins=skins_out,
        meshes=meshes or None,
        materials=materials or None,
        images=images or None,
        textures=textures or None,
        animations=[lib.Animation(name=clip.name or None, samplers=samplers, channels=channels)]
        if channels
        else None,
        accessors=blob.accessors,
        bufferViews=blob.views,
        buffers=[lib.Buffer(byteLength=len(blob.data))],
    )
    doc.set_binary_blob(bytes(blob.data))
    try:
        if p.suffix.lower() == ".glb":
            doc.save_binary(str(p))
        else:
            doc.convert_buffers(lib.BufferFormat.DATAURI)
            doc.save_json(str(p))
    except OSError as exc:
        raise FileFormatError(f"cannot write glTF file {str(p)!r}: {exc.strerror or exc}") from None


def _as_read(clip: Clip, name: str, path: str, times: np.ndarray, vals: np.ndarray) -> np.ndarray:
    """``vals`` (one row per frame), or the key values the clip's glTF file held for this
    channel (float32, rotations as stored) where they give ``vals`` to 1e-12: a glTF
    file written back keeps its data bit for bit."""
    raw = (clip.keys or {}).get((name, path))
    if raw is None:
        return vals
    t, v = (np.asarray(a, dtype=np.float64) for a in raw)
    if v.shape != vals.shape or t.shape != times.shape:
        return vals
    if not np.array_equal(t.astype(np.float32), times.astype(np.float32)):
        return vals
    if not np.array_equal(v.astype(np.float32).astype(np.float64), v):
        return vals  # not float32 data
    meant = v
    if path == "rotation":
        norm = np.linalg.norm(v, axis=1, keepdims=True)
        if np.any(norm == 0.0):
            return vals
        meant = v / norm
        meant = np.where(np.sum(meant * vals, axis=1, keepdims=True) < 0.0, -meant, meant)
    if np.abs(meant - vals).max() > 1e-12 * max(float(np.abs(vals).max()), 1.0):
        return vals
    return v


def _to_file(model: Model) -> np.ndarray:
    """Model world -> glTF world: metres, Y-up."""
    C = np.diag([1.0 / model.length_scale] * 3 + [1.0])
    if _model_up(model) == "z":
        C = np.linalg.inv(Y_TO_Z) @ C
    return C


def _skeleton_poses(clip: Clip) -> tuple[list[str], list[int], np.ndarray, np.ndarray]:
    """Frames, their parents, their local poses per frame and at rest, in file units."""
    model = clip.model
    frames = [n for n in model.frame_names if n != model.node_names[0]]
    if not frames:
        raise InvalidValueError(f"model {model.name!r} has no frame but its root to write")
    parents = frame_tree(model, frames)
    local = local_poses(model, clip.q, frames, parents)
    rest = local_poses(model, model.neutral(), frames, parents)[0]
    s = 1.0 / model.length_scale
    A = _to_file(model)[:3, :3] * model.length_scale  # a rotation: model axes -> Y-up
    roots = [i for i, p in enumerate(parents) if p < 0]
    for arr in (local, rest[None]):
        arr[..., :3, 3] *= s  # model units -> metres
        for i in roots:  # roots hold world poses: turned into the file's axes
            arr[..., i, :3, :3] = A @ arr[..., i, :3, :3]
            arr[..., i, :3, 3] = arr[..., i, :3, 3] @ A.T
    return frames, parents, local, rest


def _world_of(local: np.ndarray, parents: Sequence[int]) -> np.ndarray:
    W = np.empty_like(local)
    for i, p in enumerate(parents):  # parents come first (frame order)
        W[i] = local[i] if p < 0 else W[p] @ local[i]
    return W


def _quaternions(R: np.ndarray) -> np.ndarray:
    """``(n, 4)`` glTF quaternions (x, y, z, w) of rotations ``(n, 3, 3)``, each on the
    side of the previous one."""
    q = matrix_to_quaternion(R)  # (n, 4) w first
    q = q[:, [1, 2, 3, 0]]
    for k in range(1, len(q)):
        if np.dot(q[k], q[k - 1]) < 0.0:
            q[k] = -q[k]
    return q


def _trs(T: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return T[:3, 3].copy(), _quaternions(T[None, :3, :3])[0]


def _mesh(
    lib: Any,
    blob: _Blob,
    sk: Skin,
    remap: np.ndarray,
    C: np.ndarray,
    materials: list[Any],
    images: list[Any],
    textures: list[Any],
) -> Any:
    v = sk.vertices @ C[:3, :3].T + C[:3, 3]
    attrs: dict[str, int] = {"POSITION": blob.add(v, "VEC3", 5126, 34962, bounds=True)}
    if sk.normals is not None:
        nrm = sk.normals @ C[:3, :3].T
        nrm /= np.linalg.norm(nrm, axis=1, keepdims=True)
        attrs["NORMAL"] = blob.add(nrm, "VEC3", 5126, 34962)
    if sk.uv is not None:
        attrs["TEXCOORD_0"] = blob.add(sk.uv, "VEC2", 5126, 34962)
    if sk.colors is not None:
        attrs["COLOR_0"] = blob.add(sk.colors, "VEC4", 5126, 34962)
    J = remap[sk.joints]
    W = sk.weights
    k = J.shape[1]
    pad = (-k) % 4
    if pad:
        J = np.concatenate([J, np.zeros((J.shape[0], pad), np.int64)], axis=1)
        W = np.concatenate([W, np.zeros((W.shape[0], pad))], axis=1)
    for s in range(J.shape[1] // 4):
        comp = 5123 if J.max(initial=0) < 65536 else 5125
        attrs[f"JOINTS_{s}"] = blob.add(J[:, 4 * s : 4 * s + 4], "VEC4", comp, 34962)
        attrs[f"WEIGHTS_{s}"] = blob.add(W[:, 4 * s : 4 * s + 4], "VEC4", 5126, 34962)
    idx = blob.add(sk.faces.reshape(-1, 1), "SCALAR", 5125, 34963)
    m = dict(sk.material)
    pbr = lib.PbrMetallicRoughness(
        baseColorFactor=list(sk.base_color),
        metallicFactor=float(m.get("metallicFactor", 0.0)),
        roughnessFactor=float(m.get("roughnessFactor", 1.0)),
    )
    if sk.texture is not None and sk.uv is not None:
        view = blob.add_bytes(sk.texture)
        images.append(lib.Image(bufferView=view, mimeType=sk.texture_mime or "image/png"))
        textures.append(lib.Texture(source=len(images) - 1))
        pbr.baseColorTexture = lib.TextureInfo(index=len(textures) - 1)
    materials.append(
        lib.Material(
            name=str(m.get("name") or sk.name or "material"),
            pbrMetallicRoughness=pbr,
            doubleSided=bool(m.get("doubleSided", False)),
            alphaMode=str(m.get("alphaMode", "OPAQUE")),
        )
    )
    attributes = lib.Attributes(**attrs)
    prim = lib.Primitive(attributes=attributes, indices=idx, material=len(materials) - 1, mode=4)
    return lib.Mesh(name=sk.name or None, primitives=[prim])
