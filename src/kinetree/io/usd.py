"""USD characters (UsdSkel): a Skeleton as a Model, a SkelAnimation as a clip, and back.

Long because a stage is read here with every check a real file needs (topology, joint
influences, bind transforms, NaN) and written back with its bound meshes.

Reading (:func:`load_usd`, :func:`read_usd`; ``.usd``, ``.usda``, ``.usdc``, ``.usdz``)
goes through usd-core (the ``usd`` extra): ``UsdSkel`` gives the skeleton's joints, its
``restTransforms`` and ``bindTransforms``, and samples the animation
(``UsdSkel.AnimQuery``: USD's own value resolution, linear between time samples,
quaternions by slerp); the model is built as for glTF (:mod:`kinetree.io.skeleton`):
a free joint per root joint, whose origin is the Skeleton prim's world transform, a
ball joint per inner joint (a free one where the animation moves its translation).

* Joint names are the joint paths as authored (``"Hips/Spine/Chest"``): leaf names may
  repeat, paths do not.
* Several Skeleton prims: ``skeleton=`` picks one by prim path or name; without it a
  :class:`~kinetree.errors.KinetreeError` lists them.
* ``animation=``: a SkelAnimation by prim path, prim name or index among the stage's
  SkelAnimations; None: the one bound to the skeleton (``skel:animationSource``), else
  the rest pose as one frame.
* Times: the animation's time samples divided by the stage's ``timeCodesPerSecond``
  [s].
* Units and axes as the stage states them: lengths in the stage's unit times ``scale``
  (``model.length_scale`` is ``scale / metersPerUnit``), the stage's ``upAxis`` kept;
  ``up="z"`` turns a Y-up stage to Z-up (a Z-up stage is already).
* Static scale is baked into the offsets; an animated or shearing scale warns
  (:class:`~kinetree.io.clip.CharacterFileWarning`) naming the joints.
* Meshes bound to the skeleton become :attr:`Model.skins` (linear blend skinning with
  ``geomBindTransform`` and the ``bindTransforms``; polygons fanned into triangles).

Writing (:func:`write_usd`): a ``SkelRoot`` with the ``Skeleton`` (every frame of the
model but its root, rest and bind transforms in double precision), a ``SkelAnimation``
sampled at the clip's frames (``timeCodesPerSecond`` = the clip's fps), the bound
meshes of ``model.skins``; ``upAxis`` is the model's, ``metersPerUnit`` is
``1 / model.length_scale`` (no length is changed).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._warnings import warn_outside
from ..errors import FileFormatError, InvalidValueError, KinetreeError, UnknownNameError
from ..model import Model
from ..spatial import matrix_to_quaternion
from ._child import last_line, run_python
from ._files import as_path
from .clip import CharacterFileWarning, Clip, frame_tree, local_poses, sample_times
from .skeleton import JointTree, Rig, build_rig, check_up_scale, rig_q
from .skin import Skin

__all__ = ["load_usd", "read_usd", "write_usd"]

_SCALE_TOLERANCE = 1e-6
#: Brackets nested deeper than this in a text (usda) file are refused before USD parses
#: it: real files nest a handful, and USD's parser takes minutes on thousands.
MAX_NESTING = 64
_STRINGS = re.compile(rb'"""[\s\S]*?"""|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'')


#: A text layer larger than this [bytes] is parsed first in a child process with a time
#: limit: usd-core's parser can take minutes on malformed text (its error recovery grows
#: with the square of the repeated errors: 1.6 MB of repeated bad time samples, 119 s).
#: Smaller layers parse in well under a second whatever they hold.
CHILD_PARSE_BYTES = 256 * 1024
#: The child's time limit [s]: this, plus :data:`PARSE_SECONDS_PER_MB` per megabyte
#: (usd-core parses well-formed text at several MB/s; the margin covers a loaded machine).
PARSE_TIMEOUT_S = 20.0
PARSE_SECONDS_PER_MB = 5.0
_PARSE_CHILD = """
import sys
from pxr import Sdf
try:
    layer = Sdf.Layer.FindOrOpen(sys.argv[1])
except Exception as exc:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    print(lines[-1] if lines else type(exc).__name__, file=sys.stderr)
    sys.exit(2)
sys.exit(0 if layer is not None else 3)
"""


def _check_text(path: Path, where: str) -> None:
    """Refuse a text USD file whose brackets nest deeper than :data:`MAX_NESTING`, or
    (larger than :data:`CHILD_PARSE_BYTES`) that usd-core cannot parse within its time
    limit in a child process."""
    with open(path, "rb") as fh:
        head = fh.read(8)
    if head.startswith(b"PXR-USDC") or head.startswith(b"PK"):
        return  # crate or usdz: binary
    raw = path.read_bytes()
    data = np.frombuffer(_STRINGS.sub(b"", raw), dtype=np.uint8)
    step = np.isin(data, np.frombuffer(b"([{", np.uint8)).astype(np.int64)
    step -= np.isin(data, np.frombuffer(b")]}", np.uint8))
    depth = int(np.max(np.cumsum(step), initial=0))
    if depth > MAX_NESTING:
        raise FileFormatError(
            f"{where} nests brackets {depth} deep (more than {MAX_NESTING}): not a USD layer "
            "kinetree reads"
        )
    if len(raw) > CHILD_PARSE_BYTES:
        _parse_in_child(path, where, len(raw))


def _parse_in_child(path: Path, where: str, size: int) -> None:
    """Parse the layer in a child process; a parse past the time limit or an error
    there is a :class:`~kinetree.errors.FileFormatError` here (before this process
    parses it)."""
    limit = PARSE_TIMEOUT_S + PARSE_SECONDS_PER_MB * size / 1e6
    done = run_python(["-c", _PARSE_CHILD, str(path.resolve())], limit)
    if done is None:
        raise FileFormatError(
            f"{where} cannot be opened: usd-core did not finish parsing its "
            f"{size / 1e6:.1f} MB of text within {limit:.3g} s (malformed text makes its "
            "parser slow)"
        )
    if done.returncode != 0:
        raise FileFormatError(f"{where} cannot be opened: {last_line(done, 'the parser')}")


def _pxr() -> Any:
    try:
        import pxr  # noqa: F401
        from pxr import Gf, Sdf, Tf, Usd, UsdGeom, UsdSkel, Vt
    except ImportError:
        from ..errors import UnsupportedError

        raise UnsupportedError(
            "reading and writing USD needs usd-core: pip install 'kinetree[usd]'"
        ) from None
    return dataclasses.make_dataclass(
        "Pxr", ["Gf", "Sdf", "Tf", "Usd", "UsdGeom", "UsdSkel", "Vt"]
    )(Gf, Sdf, Tf, Usd, UsdGeom, UsdSkel, Vt)


def _np(m: Any) -> np.ndarray:
    """A Gf.Matrix4d (row vectors, translation in the last row) as a column-vector 4x4."""
    return np.array(m, dtype=np.float64).reshape(4, 4).T


def _gf(lib: Any, M: np.ndarray) -> Any:
    return lib.Gf.Matrix4d(*M.T.ravel().tolist())


class _Stage:
    """An opened stage and the skeleton chosen in it."""

    def __init__(self, path: Path, skeleton: str | None) -> None:
        lib = _pxr()
        self.lib = lib
        self.path = path
        self.where = f"USD file {str(path)!r}"
        if not path.is_file():
            raise FileFormatError(f"{self.where} does not exist")
        if path.stat().st_size == 0:
            raise FileFormatError(f"{self.where} is empty")
        _check_text(path, self.where)
        try:
            stage = lib.Usd.Stage.Open(str(path), lib.Usd.Stage.LoadAll)
        except Exception as exc:  # Tf.ErrorException and friends
            raise FileFormatError(f"{self.where} cannot be opened: {_first_line(exc)}") from None
        if stage is None:
            raise FileFormatError(f"{self.where} cannot be opened")
        self.stage = stage
        skels = [p for p in stage.Traverse() if p.IsA(lib.UsdSkel.Skeleton)]
        if not skels:
            raise FileFormatError(f"{self.where} has no Skeleton prim (UsdSkel)")
        paths = [str(p.GetPath()) for p in skels]
        if skeleton is None:
            if len(skels) > 1:
                raise KinetreeError(
                    f"{self.where} holds {len(skels)} skeletons; choose one with "
                    f"skeleton=... (its prim path or name): {', '.join(paths)}"
                )
            prim = skels[0]
        else:
            found = [p for p in skels if skeleton in (str(p.GetPath()), p.GetName())]
            if not found:
                raise UnknownNameError(
                    f"skeleton {skeleton!r} not found in {self.where}; its skeletons are: "
                    f"{', '.join(paths)}"
                )
            prim = found[0]
        self.skel = lib.UsdSkel.Skeleton(prim)
        self.cache = lib.UsdSkel.Cache()
        root = prim.GetParent()
        while root and not root.IsA(lib.UsdSkel.Root):
            root = root.GetParent()
        self.root = lib.UsdSkel.Root(root) if root else None
        if self.root is not None:
            self.cache.Populate(self.root, lib.Usd.TraverseInstanceProxies())
        self.query = self.cache.GetSkelQuery(self.skel)
        if not self.query:
            raise FileFormatError(f"{self.where}: skeleton {paths[0]!r} is not valid UsdSkel")
        topo = self.query.GetTopology()
        ok, why = topo.Validate()
        if not ok:
            raise FileFormatError(f"{self.where}: skeleton {str(prim.GetPath())!r}: {why}")
        self.joints = [str(j) for j in self.query.GetJointOrder()]
        if not self.joints:
            raise FileFormatError(f"{self.where}: skeleton {str(prim.GetPath())!r} has no joints")
        if len(set(self.joints)) != len(self.joints):
            raise FileFormatError(f"{self.where}: skeleton joints repeat a path")
        self.parent = [int(i) for i in topo.GetParentIndices()]
        self.tcps = float(stage.GetTimeCodesPerSecond() or 24.0)
        self.up = str(lib.UsdGeom.GetStageUpAxis(stage)).lower()
        self.meters = float(lib.UsdGeom.GetStageMetersPerUnit(stage))

    def animations(self) -> list[Any]:
        lib = self.lib
        return [p for p in self.stage.Traverse() if p.IsA(lib.UsdSkel.Animation)]


def _first_line(exc: BaseException) -> str:
    try:
        text = " ".join(str(exc).split())
    except Exception:  # a message holding bytes that are not text (a mangled file's)
        text = type(exc).__name__
    return text[:300] or type(exc).__name__


def _decompose(M: np.ndarray, what: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """``(t, r (x, y, z, w), s, sheared)`` of a column-vector 4x4."""
    if not np.all(np.isfinite(M)):
        raise FileFormatError(f"{what} contains NaN or inf")
    t = M[:3, 3].copy()
    s = np.linalg.norm(M[:3, :3], axis=0)
    if np.any(s == 0.0):
        raise FileFormatError(f"{what} has a zero scale")
    if np.linalg.det(M[:3, :3]) < 0:
        s[0] = -s[0]
    R = M[:3, :3] / s
    sheared = bool(np.max(np.abs(R.T @ R - np.eye(3))) > 1e-5)
    if sheared:
        u, _, vt = np.linalg.svd(R)
        R = u @ vt
    if not np.all(np.isfinite(R)) or np.linalg.det(R) <= 0.5:
        raise FileFormatError(f"{what} is not a rotation and scale")
    q = matrix_to_quaternion(R)
    return t, np.array([q[1], q[2], q[3], q[0]]), s, sheared


def _anim_prim(st: _Stage, animation: str | int | None) -> Any | None:
    anims = st.animations()
    names = [str(p.GetPath()) for p in anims]
    if animation is None:
        bound = st.query.GetAnimQuery()
        if bound:
            return bound.GetPrim()
        return None
    if isinstance(animation, (int, np.integer)) and not isinstance(animation, bool):
        if 0 <= animation < len(anims):
            return anims[int(animation)]
        raise UnknownNameError(
            f"animation index {animation} is out of range: {st.where} has {len(anims)} "
            f"SkelAnimations: {', '.join(names) or 'none'}"
        )
    for p in anims:
        if animation in (str(p.GetPath()), p.GetName()):
            return p
    raise UnknownNameError(
        f"animation {animation!r} not found in {st.where}; its SkelAnimations are: "
        f"{', '.join(names) or 'none'}"
    )


def _components(
    st: _Stage, prim: Any, codes: Sequence[float]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(mask (J,), t (T, J, 3), r (T, J, 4) xyzw, s (T, J, 3))`` of the animation at
    ``codes``, in skeleton joint order; ``mask``: joints the animation drives."""
    lib = st.lib
    aq = st.cache.GetAnimQuery(lib.UsdSkel.Animation(prim))
    if not aq:
        raise FileFormatError(f"{st.where}: {str(prim.GetPath())!r} is not a valid SkelAnimation")
    order = [str(j) for j in aq.GetJointOrder()]
    index = {j: i for i, j in enumerate(st.joints)}
    cols = [index.get(j, -1) for j in order]
    nj = len(st.joints)
    mask = np.zeros(nj, dtype=bool)
    T = np.zeros((len(codes), nj, 3))
    R = np.zeros((len(codes), nj, 4))
    S = np.ones((len(codes), nj, 3))
    for k, code in enumerate(codes):
        got = aq.ComputeJointLocalTransformComponents(lib.Usd.TimeCode(code))
        if not got or len(got) != 3:
            raise FileFormatError(f"{st.where}: animation {str(prim.GetPath())!r} has no "
                                  f"transforms at time {code}")  # fmt: skip
        t, r, s = (list(x) for x in got)
        if len(t) != len(order) or len(r) != len(order) or len(s) != len(order):
            raise FileFormatError(
                f"{st.where}: animation {str(prim.GetPath())!r} has {len(t)} translations, "
                f"{len(r)} rotations, {len(s)} scales for {len(order)} joints"
            )
        for a, c in enumerate(cols):
            if c < 0:
                continue
            mask[c] = True
            T[k, c] = tuple(t[a])
            im = r[a].GetImaginary()
            R[k, c] = (im[0], im[1], im[2], r[a].GetReal())
            S[k, c] = tuple(float(v) for v in s[a])
    for what, arr in (("translations", T), ("rotations", R), ("scales", S)):
        if not np.all(np.isfinite(arr)):
            raise FileFormatError(
                f"{st.where}: animation {str(prim.GetPath())!r} {what} contain NaN or inf"
            )
    if np.any(np.linalg.norm(R[:, mask], axis=-1) == 0.0):
        raise FileFormatError(f"{st.where}: animation {str(prim.GetPath())!r} has a zero "
                              "rotation quaternion")  # fmt: skip
    return mask, T, R, S


def _codes(st: _Stage, prim: Any) -> list[float]:
    aq = st.cache.GetAnimQuery(st.lib.UsdSkel.Animation(prim))
    codes = list(aq.GetJointTransformTimeSamples()) if aq else []
    return [float(c) for c in codes]


def _rig(st: _Stage, up: str | None, scale: float) -> tuple[Rig, float]:
    lib = st.lib
    rest_attr = st.skel.GetRestTransformsAttr().Get()
    if rest_attr is not None and not hasattr(rest_attr, "__len__"):
        raise FileFormatError(f"{st.where}: skeleton restTransforms is not an array of matrices")
    if rest_attr is None or len(rest_attr) != len(st.joints):
        raise FileFormatError(
            f"{st.where}: skeleton restTransforms has {0 if rest_attr is None else len(rest_attr)} "
            f"matrices for {len(st.joints)} joints"
        )
    n = len(st.joints)
    t = np.zeros((n, 3))
    r = np.zeros((n, 4))
    s = np.ones((n, 3))
    sheared = []
    for i, m in enumerate(rest_attr):
        t[i], r[i], s[i], sh = _decompose(_np(m), f"{st.where}: rest transform of {st.joints[i]!r}")
        if sh:
            sheared.append(st.joints[i])
    xf = lib.UsdGeom.XformCache(lib.Usd.TimeCode.Default())
    above_m = _np(xf.GetLocalToWorldTransform(st.skel.GetPrim()))
    if not np.all(np.isfinite(above_m)):
        raise FileFormatError(f"{st.where}: the skeleton's transform contains NaN or inf")
    # Which joints does an animation move away from rest (their translation)?
    pos = np.zeros((n, 3))
    for i in range(n):
        p = st.parent[i]
        pos[i] = t[i] + (pos[p] if p >= 0 else 0.0)
    size = float(np.max(np.ptp(pos, axis=0))) if n > 1 else 1.0
    size = size if size > 0.0 else 1.0
    moved = [False] * n
    animated_scale: set[str] = set()
    for prim in st.animations():
        codes = _codes(st, prim) or [lib.Usd.TimeCode.Default().GetValue()]
        mask, T, _, S = _components(st, prim, codes)
        for i in range(n):
            if not mask[i]:
                continue
            if np.max(np.abs(T[:, i] - t[i])) > 1e-10 * size:
                moved[i] = True
            if np.max(np.abs(S[:, i] - s[i])) > _SCALE_TOLERANCE * float(np.max(np.abs(s[i]))):
                animated_scale.add(st.joints[i])
    kids = {p for p in st.parent if p >= 0}
    shear = [
        st.joints[i]
        for i in range(n)
        if i in kids
        and any(st.parent[c] >= 0 and st.parent[st.parent[c]] == i for c in range(n))
        and float(np.max(np.abs(s[i] / np.mean(s[i]) - 1.0))) > _SCALE_TOLERANCE
    ]
    if sheared or shear:
        warn_outside(
            f"{st.where}: sheared or non-uniform scale on joints {', '.join(sheared + shear)}; "
            "rigid frames keep their offsets but not the shear",
            CharacterFileWarning,
        )
    if animated_scale:
        warn_outside(
            f"{st.where}: animated scale on joints {', '.join(sorted(animated_scale))} is not "
            "read (rigid frames); their rest scale is used",
            CharacterFileWarning,
        )
    tree = JointTree(
        names=list(st.joints),
        parent=list(st.parent),
        t=t,
        r=r,
        s=s,
        above=[above_m if p < 0 else None for p in st.parent],
        moved=[m and st.parent[i] >= 0 for i, m in enumerate(moved)],
    )
    file_up = "z" if st.up == "z" else "y"
    metadata = {
        "source": str(st.path),
        "format": "usd",
        "up": "z" if (up == "z" or file_up == "z") else "y",
        "scale": scale,
        "meters_per_unit": st.meters,
        "length_scale": scale / st.meters if st.meters > 0 else scale,
        "skeleton": str(st.skel.GetPrim().GetPath()),
    }
    rig = build_rig(
        st.path.stem or "usd", tree, up, scale, metadata, st.where, rotate_up=file_up == "y"
    )
    model = dataclasses.replace(
        rig.model, units=f"{st.meters:g} m" + (f" x {scale!r}" if scale != 1.0 else "")
    )
    return dataclasses.replace(rig, model=model), size


@contextlib.contextmanager
def _usd_errors(path: object) -> Iterator[None]:
    """USD's own errors (``Tf.ErrorException``: a value of the wrong type, an unreadable
    primvar) as :class:`~kinetree.errors.FileFormatError` naming the file."""
    try:
        yield
    except KinetreeError:
        raise
    except Exception as exc:
        if type(exc).__module__.startswith("pxr") or type(exc).__name__ == "ErrorException":
            raise FileFormatError(f"USD file {str(path)!r}: {_first_line(exc)}") from None
        raise


def _open(path: str | os.PathLike[str], skeleton: str | None) -> _Stage:
    p = as_path(path, "the path of a .usd, .usda, .usdc or .usdz file (str or os.PathLike)")
    return _Stage(p, skeleton)


def load_usd(
    path: str | os.PathLike[str],
    *,
    skeleton: str | None = None,
    up: str | None = None,
    scale: float = 1.0,
) -> Model:
    """The UsdSkel Skeleton of a USD file as a :class:`Model` at its rest pose, with the
    meshes bound to it (:attr:`Model.skins`). See the module docstring.

    Raises :class:`~kinetree.errors.FileFormatError` naming the problem for a file that
    cannot be read (missing, truncated, no Skeleton, an invalid joint topology,
    restTransforms that do not match the joints, NaN),
    :class:`~kinetree.errors.KinetreeError` listing the skeletons of a file with several.
    """
    s = check_up_scale(up, scale)
    with _usd_errors(path):
        st = _open(path, skeleton)
        rig, _ = _rig(st, up, s)
        return _with_skins(st, rig)


def read_usd(
    path: str | os.PathLike[str],
    animation: str | int | None = None,
    *,
    fps: float | None = None,
    times: ArrayLike | None = None,
    skeleton: str | None = None,
    up: str | None = None,
    scale: float = 1.0,
) -> Clip:
    """A SkelAnimation of a USD file as a :class:`~kinetree.io.clip.Clip` (see the
    module docstring for ``animation``); ``fps`` / ``times`` [s] resample, else the
    animation's time samples."""
    s = check_up_scale(up, scale)
    with _usd_errors(path):
        return _read_usd(path, animation, fps, times, skeleton, up, s)


def _read_usd(
    path: str | os.PathLike[str],
    animation: str | int | None,
    fps: float | None,
    times: ArrayLike | None,
    skeleton: str | None,
    up: str | None,
    s: float,
) -> Clip:
    st = _open(path, skeleton)
    rig, _ = _rig(st, up, s)
    model = _with_skins(st, rig)
    prim = _anim_prim(st, animation)
    if prim is None:
        t = sample_times(np.zeros(1), fps, times)
        q = np.tile(model.neutral(), (len(t), 1))
        name = model.name
    else:
        codes = _codes(st, prim)
        native = np.array(codes) / st.tcps if codes else np.zeros(1)
        t = sample_times(native, fps, times)
        mask, T, R, _ = _components(st, prim, (t * st.tcps).tolist())
        rotations = {i: R[:, i] for i in range(len(st.joints)) if mask[i]}
        translations = {i: T[:, i] for i in range(len(st.joints)) if mask[i]}
        q = rig_q(dataclasses.replace(rig, model=model), rotations, translations, len(t))
        name = str(prim.GetPath())
    return Clip(
        model=model,
        q=q,
        times=t,
        fps=float(fps) if fps is not None else (st.tcps if prim is None or len(t) < 2 else 0.0),
        name=name,
        joint_names=tuple(st.joints),
        source=str(st.path),
        format="usd",
    )


def _with_skins(st: _Stage, rig: Rig) -> Model:
    lib = st.lib
    if st.root is None:
        return rig.model
    skins: list[Skin] = []
    BU = rig.base
    BU_inv = np.linalg.inv(BU)
    bind_attr = st.skel.GetBindTransformsAttr().Get()
    bind = (
        np.array([_np(m) for m in bind_attr])
        if bind_attr is not None
        and hasattr(bind_attr, "__len__")
        and len(bind_attr) == len(st.joints)
        else None
    )
    if bind is not None and (
        not np.all(np.isfinite(bind)) or np.any(np.abs(np.linalg.det(bind[:, :3, :3])) < 1e-12)
    ):
        raise FileFormatError(f"{st.where}: skeleton bindTransforms are singular or not finite")
    for binding in st.cache.ComputeSkelBindings(st.root, lib.Usd.TraverseInstanceProxies()):
        if binding.GetSkeleton().GetPrim() != st.skel.GetPrim():
            continue
        for sq in binding.GetSkinningTargets():
            prim = sq.GetPrim()
            where = f"{st.where}: mesh {str(prim.GetPath())!r}"
            if bind is None:
                raise FileFormatError(f"{where} is skinned, but the skeleton has no "
                                      "bindTransforms for its joints")  # fmt: skip
            mesh = lib.UsdGeom.Mesh(prim)
            if not mesh:
                continue
            points = mesh.GetPointsAttr().Get()
            if points is None or len(points) == 0:
                continue
            P = np.array(points, dtype=np.float64).reshape(-1, 3)
            if not np.all(np.isfinite(P)):
                raise FileFormatError(f"{where}: points contain NaN or inf")
            counts = np.array(mesh.GetFaceVertexCountsAttr().Get() or [], dtype=np.int64)
            idx = np.array(mesh.GetFaceVertexIndicesAttr().Get() or [], dtype=np.int64)
            if counts.sum() != idx.size or (idx.size and (idx.min() < 0 or idx.max() >= len(P))):
                raise FileFormatError(f"{where}: faceVertexIndices do not match its points")
            faces = []
            start = 0
            for c in counts:
                for k in range(1, c - 1):
                    faces.append((idx[start], idx[start + k], idx[start + k + 1]))
                start += c
            got = sq.ComputeJointInfluences()
            if not got:
                raise FileFormatError(f"{where}: joint influences cannot be read")
            ji, jw = got
            k = sq.GetNumInfluencesPerComponent()
            ji = np.array(ji, dtype=np.int64)
            jw = np.array(jw, dtype=np.float64)
            if sq.IsRigidlyDeformed():
                ji = np.tile(ji[:k], len(P))
                jw = np.tile(jw[:k], len(P))
            if ji.size != len(P) * k or jw.size != ji.size:
                raise FileFormatError(f"{where}: {ji.size} joint influences for {len(P)} points "
                                      f"x {k}")  # fmt: skip
            order = sq.GetJointOrder()
            mesh_joints = [str(j) for j in order] if order else list(st.joints)
            unknown = [j for j in mesh_joints if j not in st.joints]
            if unknown:
                raise FileFormatError(f"{where} is bound to joint {unknown[0]!r}, which the "
                                      "skeleton lacks")  # fmt: skip
            if ji.size and (ji.min() < 0 or ji.max() >= len(mesh_joints)):
                raise FileFormatError(f"{where}: a joint index is past its {len(mesh_joints)} "
                                      "joints (a skin with a joint missing)")  # fmt: skip
            if not np.all(np.isfinite(jw)):
                raise FileFormatError(f"{where}: joint weights contain NaN or inf")
            J = ji.reshape(len(P), k)
            W = np.maximum(jw.reshape(len(P), k), 0.0)
            tot = W.sum(axis=1)
            zero = tot <= 0.0
            W[zero, 0] = 1.0
            W = W / W.sum(axis=1, keepdims=True)
            G = _np(sq.GetGeomBindTransform())
            index = {j: i for i, j in enumerate(st.joints)}
            ib = []
            for name in mesh_joints:
                jj = index[name]
                D = np.diag([*(rig.scale * rig.k[jj]), 1.0])
                ib.append(D @ np.linalg.inv(bind[jj]) @ BU_inv)
            V = (BU @ G @ np.c_[P, np.ones(len(P))].T).T[:, :3]
            colors = lib.UsdGeom.PrimvarsAPI(prim).GetPrimvar("displayColor")
            base = (0.8, 0.8, 0.8, 1.0)
            if colors and colors.Get() is not None and len(colors.Get()) >= 1:
                c0 = colors.Get()[0]
                base = (float(c0[0]), float(c0[1]), float(c0[2]), 1.0)
            try:
                skins.append(
                    Skin(
                        vertices=V,
                        faces=np.array(faces, dtype=np.int64).reshape(-1, 3),
                        joint_names=tuple(mesh_joints),
                        joints=J,
                        weights=W,
                        inverse_bind=np.array(ib),
                        base_color=base,
                        name=prim.GetName(),
                    )
                )
            except KinetreeError as exc:
                raise FileFormatError(f"{where}: {exc}") from None
    return dataclasses.replace(rig.model, skins=tuple(skins))


# --- writing ---------------------------------------------------------------------------------


_TOKEN = re.compile(r"[^A-Za-z0-9_]")


def _leaf(name: str, parent: str | None) -> str:
    """The USD path element of a frame: its name after its parent's path, made valid."""
    if parent is not None and name.startswith(parent + "/"):
        name = name[len(parent) + 1 :]
    leaf = _TOKEN.sub("_", name) or "joint"
    return "_" + leaf if leaf[0].isdigit() else leaf


def _model_up(model: Model) -> str:
    up = model.metadata.get("up")
    if up in ("y", "z"):
        return str(up)
    return "y" if model.metadata.get("format") == "bvh" else "z"


def write_usd(path: str | os.PathLike[str], clip: Clip) -> None:
    """Write ``clip`` as USD (``.usda`` text, ``.usdc``/``.usd`` crate, ``.usdz``
    package). See the module docstring for what is written. A missing folder or a failed
    write raises :class:`~kinetree.errors.FileFormatError`."""
    lib = _pxr()
    p = as_path(path, "write_usd needs the path of a .usd, .usda, .usdc or .usdz file")
    if not isinstance(clip, Clip):
        raise InvalidValueError(f"write_usd needs a Clip, got {type(clip).__name__}")
    if not p.parent.is_dir():
        raise FileFormatError(f"cannot write USD file {str(p)!r}: folder {str(p.parent)!r} "
                              "does not exist")  # fmt: skip
    if p.suffix.lower() == ".usdz":
        with tempfile.TemporaryDirectory() as tmp:
            inner = Path(tmp) / (p.stem + ".usdc")
            _write(lib, inner, clip)
            from pxr import UsdUtils

            if not UsdUtils.CreateNewUsdzPackage(str(inner), str(p)):
                raise FileFormatError(f"cannot write USD file {str(p)!r}")
        return
    _write(lib, p, clip)


def _write(lib: Any, p: Path, clip: Clip) -> None:
    model = clip.model
    frames = [n for n in model.frame_names if n != model.node_names[0]]
    if not frames:
        raise InvalidValueError(f"model {model.name!r} has no frame but its root to write")
    parents = frame_tree(model, frames)
    tokens: list[str] = []
    for i, name in enumerate(frames):
        par = parents[i]
        leaf = _leaf(name, frames[par] if par >= 0 else None)
        token = leaf if par < 0 else f"{tokens[par]}/{leaf}"
        while token in tokens:
            token += "_"
        tokens.append(token)
    local = local_poses(model, clip.q, frames, parents)
    rest = local_poses(model, model.neutral(), frames, parents)[0]
    world_rest = np.empty_like(rest)
    for i, par in enumerate(parents):
        world_rest[i] = rest[i] if par < 0 else world_rest[par] @ rest[i]
    try:
        if p.exists():
            p.unlink()
        stage = lib.Usd.Stage.CreateNew(str(p))
    except Exception as exc:
        raise FileFormatError(f"cannot write USD file {str(p)!r}: {_first_line(exc)}") from None
    lib.UsdGeom.SetStageUpAxis(stage, "Z" if _model_up(model) == "z" else "Y")
    lib.UsdGeom.SetStageMetersPerUnit(stage, 1.0 / model.length_scale)
    stage.SetTimeCodesPerSecond(clip.fps)
    codes = (clip.times * clip.fps).tolist()
    stage.SetStartTimeCode(codes[0])
    stage.SetEndTimeCode(codes[-1])
    root = lib.UsdSkel.Root.Define(stage, "/Root")
    stage.SetDefaultPrim(root.GetPrim())
    skel = lib.UsdSkel.Skeleton.Define(stage, "/Root/Skeleton")
    joint_tokens = lib.Vt.TokenArray(tokens)
    skel.CreateJointsAttr(joint_tokens)
    skel.CreateRestTransformsAttr(lib.Vt.Matrix4dArray([_gf(lib, M) for M in rest]))
    bind = world_rest.copy()
    where = {n: i for i, n in enumerate(frames)}
    for sk in model.skins or ():
        for j, name in enumerate(sk.joint_names):
            if name not in where:
                raise InvalidValueError(
                    f"cannot write skin {sk.name!r}: it is bound to {name!r}, which is not a "
                    "frame of the clip's model"
                )
            bind[where[name]] = np.linalg.inv(sk.inverse_bind[j])
    skel.CreateBindTransformsAttr(lib.Vt.Matrix4dArray([_gf(lib, M) for M in bind]))
    anim = lib.UsdSkel.Animation.Define(stage, "/Root/Skeleton/Animation")
    anim.CreateJointsAttr(joint_tokens)
    t_attr = anim.CreateTranslationsAttr()
    r_attr = anim.CreateRotationsAttr()
    s_attr = anim.CreateScalesAttr()
    s_attr.Set(lib.Vt.Vec3hArray([lib.Gf.Vec3h(1.0, 1.0, 1.0)] * len(frames)))
    for k, code in enumerate(codes):
        T = local[k]
        q = matrix_to_quaternion(T[:, :3, :3])  # (J, 4) w first
        time = lib.Usd.TimeCode(code)
        t_attr.Set(lib.Vt.Vec3fArray([lib.Gf.Vec3f(*v) for v in T[:, :3, 3].tolist()]), time)
        r_attr.Set(lib.Vt.QuatfArray([lib.Gf.Quatf(w, x, y, z) for w, x, y, z in q.tolist()]), time)
    binding = lib.UsdSkel.BindingAPI.Apply(skel.GetPrim())
    binding.CreateAnimationSourceRel().SetTargets([anim.GetPath()])
    lib.UsdSkel.BindingAPI.Apply(root.GetPrim()).CreateSkeletonRel().SetTargets([skel.GetPath()])
    for m, sk in enumerate(model.skins or ()):
        name = _TOKEN.sub("_", sk.name) or f"mesh_{m}"
        if name[0].isdigit():
            name = "_" + name
        mesh = lib.UsdGeom.Mesh.Define(stage, f"/Root/{name}_{m}")
        mesh.CreatePointsAttr(lib.Vt.Vec3fArray([lib.Gf.Vec3f(*v) for v in sk.vertices.tolist()]))
        mesh.CreateFaceVertexCountsAttr(lib.Vt.IntArray([3] * sk.n_faces))
        mesh.CreateFaceVertexIndicesAttr(lib.Vt.IntArray(sk.faces.ravel().tolist()))
        mesh.CreateSubdivisionSchemeAttr("none")
        mesh.CreateDisplayColorAttr(lib.Vt.Vec3fArray([lib.Gf.Vec3f(*sk.base_color[:3])]))
        b = lib.UsdSkel.BindingAPI.Apply(mesh.GetPrim())
        k = sk.joints.shape[1]
        b.CreateJointIndicesPrimvar(False, k).Set(lib.Vt.IntArray(sk.joints.ravel().tolist()))
        b.CreateJointWeightsPrimvar(False, k).Set(lib.Vt.FloatArray(sk.weights.ravel().tolist()))
        b.CreateJointsAttr(lib.Vt.TokenArray([tokens[where[j]] for j in sk.joint_names]))
        b.CreateGeomBindTransformAttr(lib.Gf.Matrix4d(1.0))
        b.CreateSkeletonRel().SetTargets([skel.GetPath()])
    try:
        stage.GetRootLayer().Save()
    except Exception as exc:
        raise FileFormatError(f"cannot write USD file {str(p)!r}: {_first_line(exc)}") from None
