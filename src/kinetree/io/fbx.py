"""FBX characters (binary 7.x and ASCII): the skeleton, its skinned meshes and its takes.

FBX is read by ufbx (PyPI ``ufbx``, the ``fbx`` extra), which evaluates a node's
transform as FBX defines it (translation, rotation and scaling offsets and pivots, pre and
post rotations, rotation orders, inherit modes such as Maya's segment scale compensation)
and samples the take's curves (constant, linear, cubic keys). ufbx's Python binding can end
its process with a segmentation fault when its objects are freed, so the file is read in a
child process (:mod:`kinetree.io._fbx_scene`) that hands back plain arrays; a crash there is a
:class:`~kinetree.errors.FileFormatError` here. No pip-installable library writes FBX outside
Blender: write characters as glTF or USD (:func:`kinetree.write_clip`).

Model layout
------------
* The model root is a fixed frame ``"world"`` (``"_world"`` if a node is called ``world``).
* The skeleton is every limb node, every bone a skin cluster binds, and the ancestors of
  those below the scene root (a Blender ``Armature``, a unit node scaling by 100). Each is a
  visible frame named as in the file (an empty name: ``node_<i>``; a repeated name gets
  ``_<i>`` after it).
* The layout every character format shares (:func:`kinetree.io.skeleton.build_rig`): a
  skeleton root joins ``world`` by a ``"free"`` joint and every other node its parent by a
  ``"ball"`` joint at its rest offset, whose coordinates are the node's rotation relative
  to its parent (a unit quaternion, w first); ``model.neutral()`` is the file's rest pose. A
  node whose translation the take animates (relative to its parent) joins by a ``"free"``
  joint in that clip's model.
* FBX nodes carry scale; kinetree frames are rigid. Each node's frame is the rotation part
  of its world transform (a polar decomposition) at its world position, so every joint sits
  where ufbx puts it. A static scale (a unit node scaling by 100, a uniformly scaled joint,
  segment scale compensation) is thereby baked into the offsets. A scale that the take
  animates, or a non-uniform parent scale that shears a child, cannot be baked: those joints
  are named in an :class:`FBXWarning` (their frames still sit at the right world positions).

Units and axes: lengths are converted to metres by the file's unit (``UnitScaleFactor``:
Maya's centimetres give 0.01), then multiplied by ``scale``. ``up=None`` keeps the file's
axes; ``up="z"`` turns the file's up axis to +Z and its front axis to -Y (a Y-up file turns
by +90 deg about x), ``up="y"``: up to +Y, front to +Z.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import math
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from .._warnings import warn_outside
from ..errors import (
    FileFormatError,
    InvalidValueError,
    KinetreeError,
    UnknownNameError,
    UnsupportedError,
)
from ..model import Model
from ._child import last_line, run_python
from ._files import as_path
from .skeleton import JointTree, Rig, build_rig, rig_q

if TYPE_CHECKING:
    from .clip import Clip
    from .skin import Skin

__all__ = ["FBXWarning", "load_fbx", "read_fbx_clip"]

#: Seconds the child process may take to read one file before it is stopped.
READ_TIMEOUT = 300.0
#: A joint's translation from its parent counts as animated past this change over a clip
#: (relative to the skeleton's size): below it the joint is a ball joint at the mean
#: offset, which keeps every pose within 1e-10 of the file's.
_CHANGE_TOLERANCE = 1e-10
#: A scale factor counts as animated, a stretch as shearing, past this (files store scales
#: as float32, whose rounding alone reaches 1e-7).
_SCALE_TOLERANCE = 1e-5

# ufbx CoordinateAxis values: +X, -X, +Y, -Y, +Z, -Z
_AXIS_VECTORS = np.array(
    [[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]], dtype=np.float64
)


class FBXWarning(UserWarning):
    """An FBX file holds something a rigid skeleton cannot show exactly (animated or
    shearing scale); the message names the joints."""


def _available() -> None:
    if importlib.util.find_spec("ufbx") is None:
        raise UnsupportedError(
            "reading FBX needs ufbx: pip install 'kinetree[fbx]' (or write the character as "
            "glTF or USD, which kinetree reads without it)"
        )


def _run_child(path: Path, animation: str | int | None, times: Any) -> dict[str, Any]:
    """Read ``path`` in a child process; the arrays it hands back."""
    _available()
    request = {
        "path": str(path.resolve()),
        "animation": animation,
        "times": None if times is None else [float(t) for t in np.asarray(times)],
    }
    with tempfile.TemporaryDirectory(prefix="kinetree-fbx-") as tmp:
        req = Path(tmp) / "request.json"
        out = Path(tmp) / "scene.npz"
        req.write_text(json.dumps(request), encoding="utf-8")
        done = run_python(["-m", "kinetree.io._fbx_scene", str(req), str(out)], READ_TIMEOUT)
        if done is None:
            raise FileFormatError(
                f"cannot read the FBX file {str(path)!r}: ufbx took more than {READ_TIMEOUT:g} s"
            )
        if done.returncode != 0 or not out.is_file():
            why = last_line(done, "the reader")
            if done.returncode < 0:
                why = f"ufbx crashed on it (signal {-done.returncode})"
            raise FileFormatError(f"cannot read the FBX file {str(path)!r}: {why}")
        with np.load(out, allow_pickle=False) as z:
            data = {k: z[k] for k in z.files}
    for key in ("names", "takes", "skins"):
        data[key] = json.loads(str(data[key]))
    if "take" in data:
        data["take"] = str(data["take"])
    return data


# --- geometry ---------------------------------------------------------------------------


def _rigid(W: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rotation parts ``(..., 3, 3)`` (polar decomposition) and stretches of affine ``W``."""
    L = W[..., :3, :3]
    U, _, Vt = np.linalg.svd(L)
    R = U @ Vt
    if np.any(np.linalg.det(R) < 0.0):
        raise FileFormatError(
            "the FBX skeleton has a mirrored joint (negative scale), which a rigid "
            "skeleton cannot hold"
        )
    S = np.swapaxes(R, -1, -2) @ L
    return R, S


def _axes(axes: np.ndarray, up: str | None) -> np.ndarray:
    """The rotation taking the file's axes to kinetree's for ``up``."""
    if up is None:
        return np.eye(3)
    if up not in ("y", "z"):
        raise InvalidValueError(f"up must be None (the file's axes), 'y' or 'z', got {up!r}")
    if int(axes[1]) > 5 or int(axes[2]) > 5:
        return np.eye(3)
    f_up, f_front = _AXIS_VECTORS[int(axes[1])], _AXIS_VECTORS[int(axes[2])]
    if up == "z":
        k_up, k_front = np.array([0.0, 0, 1]), np.array([0.0, -1, 0])
    else:
        k_up, k_front = np.array([0.0, 1, 0]), np.array([0.0, 0, 1])
    src = np.stack([f_up, f_front, np.cross(f_up, f_front)], axis=1)
    dst = np.stack([k_up, k_front, np.cross(k_up, k_front)], axis=1)
    return np.asarray(dst @ src.T)


def _length_scale(unit_meters: float, scale: float) -> float:
    try:
        s = float(scale)
    except (TypeError, ValueError):
        s = math.nan
    if not (math.isfinite(s) and s > 0.0):
        raise InvalidValueError(f"scale must be a positive number, got {scale!r}")
    unit = unit_meters if math.isfinite(unit_meters) and unit_meters > 0.0 else 1.0
    return unit * s


def _quat(R: np.ndarray) -> np.ndarray:
    from ..spatial import matrix_to_quaternion

    return np.asarray(matrix_to_quaternion(R))


def _names(raw: Sequence[str]) -> list[str]:
    out: list[str] = []
    seen: set[str] = set()
    for i, n in enumerate(raw):
        name = n if n else f"node_{i}"
        if name in seen:
            name = f"{name}_{i}"
        seen.add(name)
        out.append(name)
    return out


class _Skeleton:
    """The file's skeleton as rigid frames in kinetree's axes and metres."""

    def __init__(self, data: dict[str, Any], up: str | None, scale: float) -> None:
        self.names = _names(data["names"])
        if not self.names:
            raise FileFormatError("the FBX file has no skeleton (no limb nodes, no skin)")
        self.parents = [int(p) for p in data["parents"]]
        self.A = _axes(data["axes"], up)
        up_axis = int(data["axes"][1])
        #: The up axis of the model's world, as the viewer names it.
        self.up_letter = "xyz"[up_axis // 2] if up_axis < 6 else "y"
        self.s = _length_scale(float(data["unit_meters"]), scale)
        #: The caller's ``scale``: model lengths are metres times it.
        self.scale = float(scale)
        rest = np.asarray(data["rest"], dtype=np.float64)
        if not np.all(np.isfinite(rest)):
            raise FileFormatError("the FBX skeleton's rest transforms contain NaN or inf")
        self.rest_affine = rest
        self.R_rest, self.S_rest = _rigid(rest)
        self.T_rest = self.convert(self.R_rest, rest[:, :3, 3])

    def convert(self, R: np.ndarray, p: np.ndarray) -> np.ndarray:
        """World rigid poses ``(..., 4, 4)`` in kinetree's axes [m] from file rotations and
        positions."""
        T = np.zeros((*R.shape[:-2], 4, 4))
        T[..., :3, :3] = self.A @ R
        T[..., :3, 3] = self.s * (p @ self.A.T)
        T[..., 3, 3] = 1.0
        return T

    def local(self, T: np.ndarray) -> np.ndarray:
        """Each node's pose relative to its parent (a root: its world pose)."""
        out = T.copy()
        for i, p in enumerate(self.parents):
            if p < 0:
                continue
            Rp = T[..., p, :3, :3]
            out[..., i, :3, :3] = np.swapaxes(Rp, -1, -2) @ T[..., i, :3, :3]
            d = T[..., i, :3, 3] - T[..., p, :3, 3]
            out[..., i, :3, 3] = np.einsum("...ji,...j->...i", Rp, d)
        return out

    @property
    def size(self) -> float:
        p = self.T_rest[:, :3, 3]
        return max(float(np.max(np.linalg.norm(p - p.mean(axis=0), axis=1))), 1e-9)


def _rig(sk: _Skeleton, free: set[int], offsets: np.ndarray, where: Path, up: str | None) -> Rig:
    """The model (:func:`kinetree.io.skeleton.build_rig`, the layout every character
    format shares) of the skeleton: rest rotations, ``offsets`` as the ball joints'
    translations, ``free`` joints moving freely."""
    rest = sk.local(sk.T_rest)
    t = rest[:, :3, 3].copy()
    inner = [i for i in range(len(sk.names)) if sk.parents[i] >= 0]
    t[inner] = offsets[inner]
    tree = JointTree(
        names=sk.names,
        parent=sk.parents,
        t=t,
        r=_quat(rest[:, :3, :3])[:, [1, 2, 3, 0]],
        s=np.ones((len(sk.names), 3)),
        above=[None] * len(sk.names),
        moved=[i in free for i in range(len(sk.names))],
    )
    metadata = {
        "source": str(where),
        "format": "fbx",
        "up": up if up is not None else sk.up_letter,
        "scale": sk.scale,
        "length_scale": sk.scale,
    }
    return build_rig(where.stem or "fbx", tree, None, 1.0, metadata, f"FBX file {str(where)!r}")


def _q(rig: Rig, sk: _Skeleton, T: np.ndarray, free: set[int]) -> np.ndarray:
    """Configurations ``(n_frames, nq)`` putting every node at its world pose ``T``."""
    loc = sk.local(T)
    rotations = {i: _quat(loc[:, i, :3, :3])[:, [1, 2, 3, 0]] for i in range(len(sk.names))}
    translations = {
        i: loc[:, i, :3, 3] for i in range(len(sk.names)) if sk.parents[i] < 0 or i in free
    }
    return rig_q(rig, rotations, translations, T.shape[0])


def _scale_warnings(sk: _Skeleton, world: np.ndarray | None) -> None:
    """Warn naming the joints whose scale is animated or shears them."""
    S = sk.S_rest
    off = S - np.einsum("nii->ni", S)[..., None] * np.eye(3)
    shear = np.max(np.abs(off), axis=(-1, -2)) > _SCALE_TOLERANCE * np.max(np.abs(S), axis=(-1, -2))
    sheared = [sk.names[i] for i in np.nonzero(shear)[0]]
    animated: list[str] = []
    if world is not None and world.shape[0] > 1:
        _, St = _rigid(world)
        change = np.max(np.abs(St - S[None]), axis=(0, -1, -2))
        animated = [sk.names[i] for i in np.nonzero(change > _SCALE_TOLERANCE)[0]]
    for what, joints in (("animated scale", animated), ("shearing scale", sheared)):
        if joints:
            warn_outside(
                f"FBX joints with {what} cannot be baked into a rigid skeleton; their frames "
                f"keep their world positions and the rotation part of their transforms: "
                f"{', '.join(joints[:12])}{' ...' if len(joints) > 12 else ''}",
                FBXWarning,
            )


def _skins(data: dict[str, Any], sk: _Skeleton) -> tuple[Skin, ...]:
    """The file's skinned meshes as :class:`~kinetree.io.skin.Skin` in the model's terms."""
    from .skin import Skin

    C = np.eye(4)
    C[:3, :3] = sk.s * sk.A
    C_inv = np.linalg.inv(C)
    Sigma = np.diag([sk.s, sk.s, sk.s, 1.0])
    out = []
    for k, meta in enumerate(data["skins"]):
        a = {key[len(f"skin{k}_") :]: v for key, v in data.items() if key.startswith(f"skin{k}_")}
        bones = [int(b) for b in a["bones"]]
        if any(b < 0 for b in bones):
            raise FileFormatError(f"FBX mesh {meta['name']!r}: a skin cluster has no bone")
        G = a["geometry_to_world"]
        v = a["vertices"] @ G[:3, :3].T + G[:3, 3]
        G_inv = np.linalg.inv(G)
        ib = []
        for c, b in enumerate(bones):
            stretch = np.eye(4)
            stretch[:3, :3] = sk.S_rest[b]
            ib.append(Sigma @ stretch @ a["geometry_to_bone"][c] @ G_inv @ C_inv)
        # one joint per bone: clusters binding the same bone share its column (the first
        # cluster's inverse bind matrix)
        first = {b: c for c, b in reversed(list(enumerate(bones)))}
        unique = sorted(first, key=lambda b: first[b])
        column = np.array([unique.index(b) for b in bones], dtype=np.int64)
        joints = column[a["joints"]] if len(column) else a["joints"]
        ib = [ib[first[b]] for b in unique]
        try:
            skin = Skin(
                vertices=sk.s * (v @ sk.A.T),
                faces=a["faces"],
                joint_names=tuple(sk.names[b] for b in unique),
                joints=joints,
                weights=a["weights"],
                inverse_bind=np.array(ib),
                base_color=tuple(meta["color"]),
                name=str(meta["name"]),
            )
        except KinetreeError as exc:  # weights that do not sum to 1, NaN vertices...
            raise FileFormatError(f"FBX mesh {meta['name']!r}: {exc}") from None
        out.append(skin)
    return tuple(out)


def _with_skins(model: Model, skins: tuple[Skin, ...]) -> Model:
    if not skins:
        return model
    return dataclasses.replace(model, skins=skins)


def _offsets(sk: _Skeleton, T: np.ndarray) -> tuple[set[int], np.ndarray]:
    """Non-root nodes whose translation from their parent changes over the frames (they
    move freely), and every node's translation from its parent in the frames (their
    mean; a ball joint's offset)."""
    loc = sk.local(T)[..., :3, 3]
    mean = loc.mean(axis=0)
    moved = np.max(np.linalg.norm(loc - mean[None], axis=-1), axis=0)
    free = {
        i for i in np.nonzero(moved > _CHANGE_TOLERANCE * sk.size)[0].tolist() if sk.parents[i] >= 0
    }
    return free, mean


def _check_path(path: str | os.PathLike[str]) -> Path:
    p = as_path(path, "an FBX file's path (str or os.PathLike)")
    if not p.is_file():
        raise FileFormatError(
            f"file {str(p)!r} does not exist" if not p.exists() else f"{str(p)!r} is not a file"
        )
    if p.stat().st_size == 0:
        raise FileFormatError(f"cannot read the FBX file {str(p)!r}: it is empty")
    return p


def load_fbx(path: str | os.PathLike[str], *, up: str | None = None, scale: float = 1.0) -> Model:
    """The skeleton of an FBX file at its rest pose, with its skinned meshes
    (:attr:`Model.skins`); see the module docstring for the layout, units and axes.

    Raises :class:`~kinetree.errors.FileFormatError` for a missing, truncated or malformed
    file (or one ufbx cannot read), :class:`~kinetree.errors.UnsupportedError` without ufbx.
    """
    p = _check_path(path)
    data = _run_child(p, None, None)
    sk = _Skeleton(data, up, scale)
    _scale_warnings(sk, None)
    rig = _rig(sk, set(), sk.local(sk.T_rest)[:, :3, 3], p, up)
    return _with_skins(rig.model, _skins(data, sk))


def read_fbx_clip(
    path: str | os.PathLike[str],
    animation: str | int | None = None,
    *,
    fps: float | None = None,
    times: ArrayLike | None = None,
    up: str | None = None,
    scale: float = 1.0,
) -> Clip:
    """A take of an FBX file as a :class:`~kinetree.io.clip.Clip`.

    ``animation``: the take (animation stack) by name or index; None: the first. A file
    with no take gives one frame at the rest pose. ``times`` [s]: sample exactly there;
    ``fps``: evenly from the take's start to its end; neither: the take's key times. Each
    sample is ufbx's evaluation of the file's curves at that time. ``up`` and ``scale``: as
    :func:`load_fbx`. Raises :class:`~kinetree.errors.UnknownNameError` for an unknown take
    (naming the file's takes), :class:`~kinetree.errors.FileFormatError` for a bad file or
    NaN in its curves, and warns (:class:`FBXWarning`) naming joints with animated scale.
    """
    from .clip import Clip as ClipType
    from .clip import sample_times

    p = _check_path(path)
    if animation is not None and (
        isinstance(animation, bool) or not isinstance(animation, (str, int))
    ):
        raise InvalidValueError(
            f"animation must be a take name, an index or None, got {animation!r}"
        )
    sample_times([0.0, 1.0], fps, times)  # checks fps= and times= before the file is read
    data = _run_child(p, None, None)
    takes: list[str] = data["takes"]
    take = animation if animation is not None else (0 if takes else None)
    if take is not None:
        found = -len(takes) <= take < len(takes) if isinstance(take, int) else take in takes
        if not found:
            raise UnknownNameError(
                f"the FBX file {str(p)!r} has no take {take!r}; its takes are: "
                f"{', '.join(repr(t) for t in takes) or 'none'} (or an index 0..{len(takes) - 1})"
            )
        t = sample_times(data["key_times"], fps, times)
        data = _run_child(p, take, t)
        world = np.asarray(data["world"], dtype=np.float64)
        if not np.all(np.isfinite(world)):
            raise FileFormatError(
                f"cannot read the FBX file {str(p)!r}: its take {data['take']!r} evaluates to "
                "NaN or inf (NaN in its curves)"
            )
        name = data["take"]
    else:
        t = np.zeros(1) if times is None else sample_times([0.0], None, times)
        world = np.repeat(data["rest"][None], len(t), axis=0)
        name = p.stem
    sk = _Skeleton(data, up, scale)
    _scale_warnings(sk, world)
    R, _ = _rigid(world)
    T = sk.convert(R, world[..., :3, 3])
    free, offsets = _offsets(sk, T)
    rig = _rig(sk, free, offsets, p, up)
    q = _q(rig, sk, T, free)
    model = _with_skins(rig.model, _skins(data, sk))
    return ClipType(
        model=model,
        q=q,
        times=t,
        fps=float(fps) if fps is not None else 0.0,
        name=name,
        joint_names=tuple(sk.names),
        source=str(p),
        format="fbx",
    )
