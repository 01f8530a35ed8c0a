"""``kinetree.load``: a built-in model by name, or a model file by its suffix.

One floor above :mod:`kinetree.io` (the file formats) and :mod:`kinetree.models` (the
built-in models): it picks one of them. Files go through one table, :data:`FORMATS`,
suffix -> :class:`FileFormat`; every "which files can I load?" message is written from
it, so adding a format is one row (and its loader function) here. The same rows say
how a format's clips are read (:func:`read_clip`) and written (:func:`write_clip`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from numpy.typing import ArrayLike

from ._validate import check_bool
from .errors import FileFormatError, InvalidValueError, UnknownNameError, UnsupportedError
from .io._files import as_path, xml_root
from .io.robot_packages import ROBOT_FILES, robot_file
from .model import Model

if TYPE_CHECKING:
    from .anim.motion import Motion
    from .io.bvh import BVHClip
    from .io.clip import Clip

__all__ = ["FORMATS", "FileFormat", "load", "read_clip", "write_clip"]

PackageDirs = (
    Mapping[str, str | os.PathLike[str]] | str | os.PathLike[str] | Sequence[str | os.PathLike[str]]
)


@dataclass(frozen=True)
class FileFormat:
    """One file format :func:`load` reads.

    ``read(path, args, package_dirs, floating_base)`` returns the model; it is called
    with an existing file only, after :func:`load` has refused the arguments the format
    has no use for (``takes_args``, ``takes_package_dirs``) and ``floating_base=True``
    where the format cannot take it (``floating_base`` is then the reason, else "").
    """

    name: str  # as a person says it: "URDF"
    read: Callable[[Path, Mapping[str, Any] | None, Any, bool], Model]
    takes_args: bool = False  # xacro arguments
    takes_package_dirs: bool = False  # where package:// paths are looked up
    floating_base: str = ""  # why floating_base=True is refused ("": it is taken)
    check: Callable[[Path, str], None] | None = None  # a look at the file before reading
    #: ``clip(path, animation, fps, times, options)``: the file's motion as a Clip
    #: (:func:`read_clip`); None: the format holds no motion.
    clip: Callable[[Path, Any, Any, Any, Mapping[str, Any]], Clip] | None = None
    #: ``write(path, clip)``: a clip written in this format (:func:`write_clip`).
    write: Callable[[Path, Clip], None] | None = None
    #: The keyword options :func:`read_clip` passes on to ``clip`` (``up``, ``scale``...).
    options: tuple[str, ...] = ()


def _read_urdf(p: Path, args: Any, package_dirs: Any, floating_base: bool) -> Model:
    from .io.urdf import load_urdf

    dirs = list(package_dirs.values()) if isinstance(package_dirs, Mapping) else package_dirs
    return load_urdf(p, package_dirs=dirs, floating_base=floating_base)


def _read_xacro(p: Path, args: Any, package_dirs: Any, floating_base: bool) -> Model:
    from .io.xacro import load_xacro  # robot.urdf.xacro, robot.xacro

    return load_xacro(p, args=args, package_dirs=package_dirs, floating_base=floating_base)


def _read_bvh(p: Path, args: Any, package_dirs: Any, floating_base: bool) -> Model:
    from .io.bvh import read_bvh

    return read_bvh(p).model


def _clip_bvh(p: Path, animation: Any, fps: Any, times: Any, options: Mapping[str, Any]) -> Clip:
    from .io.bvh_clip import read_bvh_clip

    return read_bvh_clip(p, animation, fps=fps, times=times, **options)


def _write_bvh(p: Path, clip: Clip) -> None:
    from .io.bvh_clip import write_bvh_clip

    write_bvh_clip(p, clip)


def _read_gltf(p: Path, args: Any, package_dirs: Any, floating_base: bool) -> Model:
    from .io.gltf import load_gltf

    return load_gltf(p)


def _clip_gltf(p: Path, animation: Any, fps: Any, times: Any, options: Mapping[str, Any]) -> Clip:
    from .io.gltf import read_gltf

    return read_gltf(p, animation, fps=fps, times=times, **options)


def _write_gltf(p: Path, clip: Clip) -> None:
    from .io.gltf import write_gltf

    write_gltf(p, clip)


def _read_usd(p: Path, args: Any, package_dirs: Any, floating_base: bool) -> Model:
    from .io.usd import load_usd

    return load_usd(p)


def _clip_usd(p: Path, animation: Any, fps: Any, times: Any, options: Mapping[str, Any]) -> Clip:
    from .io.usd import read_usd

    return read_usd(p, animation, fps=fps, times=times, **options)


def _write_usd(p: Path, clip: Clip) -> None:
    from .io.usd import write_usd

    write_usd(p, clip)


def _read_mjcf(p: Path, args: Any, package_dirs: Any, floating_base: bool) -> Model:
    from .io.mjcf import load_mjcf

    return load_mjcf(p)


def _not_urdf(p: Path, suffix: str) -> None:
    """An ``.xml`` file may be URDF: say how to load it rather than fail in MuJoCo."""
    if xml_root(p) == "robot":
        raise UnsupportedError(
            f"cannot load {str(p)!r} as MJCF (MuJoCo XML, what {suffix!r} files are "
            "read as): this file has a <robot> root, so if it is URDF, load it with "
            f"kinetree.io.load_urdf(path); {_supported()}"
        )


_URDF = FileFormat("URDF", _read_urdf, takes_package_dirs=True)
_XACRO = FileFormat("xacro", _read_xacro, takes_args=True, takes_package_dirs=True)
_BVH = FileFormat(
    "BVH",
    _read_bvh,
    floating_base="a BVH skeleton's root joint already moves freely (its position channels)",
    clip=_clip_bvh,
    write=_write_bvh,
    options=("scale", "up", "positions"),
)
_GLTF = FileFormat(  # through pygltflib (the gltf extra)
    "glTF",
    _read_gltf,
    floating_base="a glTF skeleton's top joints already move freely (free joints)",
    clip=_clip_gltf,
    write=_write_gltf,
    options=("skeleton", "up", "scale"),
)
_USD = FileFormat(  # UsdSkel through usd-core (the usd extra)
    "USD",
    _read_usd,
    floating_base="a USD skeleton's root joints already move freely (free joints)",
    clip=_clip_usd,
    write=_write_usd,
    options=("skeleton", "up", "scale"),
)
_MJCF = FileFormat(  # compiled by MuJoCo (the mjcf extra)
    "MJCF",
    _read_mjcf,
    floating_base="an MJCF body moves freely by its own <freejoint> (add one to the file), "
    "or use load(path).with_floating_base()",
    check=_not_urdf,
)


def _read_fbx(p: Path, args: Any, package_dirs: Any, floating_base: bool) -> Model:
    from .io.fbx import load_fbx  # read by ufbx (the fbx extra)

    return load_fbx(p)


def _clip_fbx(p: Path, animation: Any, fps: Any, times: Any, options: Mapping[str, Any]) -> Clip:
    from .io.fbx import read_fbx_clip

    return read_fbx_clip(p, animation, fps=fps, times=times, **options)


_FBX = FileFormat(
    "FBX",
    _read_fbx,
    floating_base="an FBX skeleton's roots already move freely (free joints)",
    clip=_clip_fbx,
    options=("scale", "up"),
)

#: Suffix (lower case) -> the format :func:`load` reads it as.
FORMATS: dict[str, FileFormat] = {
    ".urdf": _URDF,
    ".xacro": _XACRO,
    ".bvh": _BVH,
    ".xml": _MJCF,
    ".mjcf": _MJCF,
    ".gltf": _GLTF,
    ".glb": _GLTF,
    ".usd": _USD,
    ".usda": _USD,
    ".usdc": _USD,
    ".usdz": _USD,
    ".fbx": _FBX,
}


def _suffixes(last: str = ", ") -> str:
    """``.urdf, .xacro, ...`` (``last`` joins the final two)."""
    s = list(FORMATS)
    return ", ".join(s[:-1]) + last + s[-1] if len(s) > 1 else "".join(s)


def _supported() -> str:
    """Every way to get a model, written from :data:`FORMATS`."""
    from . import models

    names: dict[str, list[str]] = {}
    for suffix, fmt in FORMATS.items():
        names.setdefault(fmt.name, []).append(suffix)
    files = ", ".join(f"{name} ({', '.join(s)})" for name, s in names.items())
    return (
        f"kinetree loads {files}, DH tables (kinetree.io.from_dh), the built-in models "
        f"({', '.join(models.available())}) and, by name, the robots of example-robot-data "
        f"({', '.join(ROBOT_FILES)})"
    )


def load(
    name_or_path: str | os.PathLike[str],
    *,
    args: Mapping[str, Any] | None = None,
    package_dirs: PackageDirs | None = None,
    floating_base: bool = False,
    srdf: str | os.PathLike[str] | None = None,
) -> Model:
    """A built-in model by name (see ``kinetree.models.available()``), a robot of
    example-robot-data by name (``"g1"``, ``"h1"``, ``"talos"``:
    :data:`kinetree.io.robot_packages.ROBOT_FILES`, the names :func:`kinetree.retarget`
    takes), or a file.

    Files (:data:`FORMATS`): ``.urdf`` (through yourdfpy), ``.xacro`` (expanded by
    xacrodoc, the ``xacro`` extra, with xacro ``args``; see
    :func:`kinetree.io.xacro.load_xacro`), ``.bvh`` (the clip's skeleton), ``.gltf`` /
    ``.glb`` (a skin's skeleton with its skinned meshes; the ``gltf`` extra; see
    :func:`kinetree.io.gltf.load_gltf`) and ``.usd``/``.usda``/``.usdc``/``.usdz``
    (a UsdSkel Skeleton; the ``usd`` extra; see :func:`kinetree.io.usd.load_usd`).
    ``package_dirs``: where ``package://`` and ``$(find pkg)`` paths are looked up
    first: folders holding packages, package folders, or a mapping package name ->
    folder (see :func:`~kinetree.io.load_urdf`). MJCF (MuJoCo XML, ``.xml`` or
    ``.mjcf``) is compiled by MuJoCo (the ``mjcf`` extra; see
    :func:`kinetree.io.mjcf.load_mjcf`).
    ``floating_base=True`` (URDF and xacro files, built-in models) gives the robot a
    free base: a joint ``"root_joint"`` of type ``"free"`` from a new root link
    ``"world"`` (see :func:`~kinetree.io.load_urdf`, :meth:`Model.with_floating_base`);
    BVH and MJCF raise :class:`~kinetree.errors.UnsupportedError`.

    ``srdf``: an SRDF file whose ``<disable_collisions>`` pairs the model's
    self-collision checks skip (:mod:`kinetree.io.srdf`; an unknown link raises
    :class:`~kinetree.errors.UnknownNameError` naming it).

    Raises :class:`~kinetree.errors.InvalidValueError` for an argument that is
    neither a ``str`` nor an ``os.PathLike`` (None, bytes, a number),
    :class:`~kinetree.errors.UnknownNameError` for an unknown name,
    :class:`~kinetree.errors.UnsupportedError` for any other file type, for a URDF
    file named ``.xml`` (said so, with the way to load it) and for MJCF without
    ``mujoco`` installed, and :class:`~kinetree.errors.FileFormatError` for a missing or
    malformed file.
    """
    check_bool(floating_base, "floating_base")
    if args is not None and not isinstance(args, Mapping):
        raise InvalidValueError(
            f"args must be a mapping of xacro argument names to values, got {type(args).__name__}"
        )
    if srdf is not None:
        from .io.srdf import read_srdf, with_disabled_pairs

        model = load(
            name_or_path, args=args, package_dirs=package_dirs, floating_base=floating_base
        )
        return with_disabled_pairs(model, read_srdf(srdf, model))
    from . import models

    if isinstance(name_or_path, str) and name_or_path in models.available():
        _unused(args, package_dirs, f"the built-in model {name_or_path!r}")
        built = models.get(name_or_path)
        return built.with_floating_base() if floating_base else built
    if isinstance(name_or_path, str) and name_or_path in ROBOT_FILES:
        _unused(args, None, f"robot {name_or_path!r}")
        path = robot_file(name_or_path)
        return _read(_URDF, path, ".urdf", None, package_dirs, floating_base)
    p = as_path(
        name_or_path,
        f"load needs a built-in model name ({', '.join(models.available())}) or the path "
        f"of a {_suffixes(' or ')} file (str or os.PathLike)",
    )
    suffix = p.suffix.lower()
    if p.is_dir():
        raise FileFormatError(
            f"{str(p)!r} is a folder; load needs a model file ({_suffixes(' or ')}) or a "
            f"built-in model name ({', '.join(models.available())})"
        )
    fmt = FORMATS.get(suffix)
    if fmt is not None:
        return _read(fmt, p, suffix, args, package_dirs, floating_base)
    if p.is_file() or suffix:
        root = xml_root(p) if p.is_file() and not suffix else None
        kind = {
            "robot": "URDF (a <robot> root): load it with kinetree.io.load_urdf(path)",
            "mujoco": "MJCF (a <mujoco> root): load it with kinetree.io.load_mjcf(path)",
        }
        why = (
            f"file type {suffix!r} is not supported"
            if suffix
            else "the file has no suffix to tell its format"
            + (f"; it looks like {kind[root]}" if root in kind else "")
        )
        raise UnsupportedError(
            f"cannot load {str(p)!r}: {why}; supported files: {_suffixes()}; {_supported()}"
        )
    raise UnknownNameError(
        f"model {str(name_or_path)!r} not found; built-in models are: "
        f"{', '.join(models.available())}; robots from example-robot-data: "
        f"{', '.join(ROBOT_FILES)} (or pass a path to a {_suffixes(' or ')} file)"
    )


def _read(
    fmt: FileFormat,
    p: Path,
    suffix: str,
    args: Mapping[str, Any] | None,
    package_dirs: Any,
    floating_base: bool,
) -> Model:
    """The model in the file ``p``, read as ``fmt``, once the arguments are checked."""
    if not p.exists():
        raise FileFormatError(f"file {str(p)!r} does not exist")
    if fmt.check is not None:
        fmt.check(p, suffix)
    what = f"the {fmt.name} file {str(p)!r}"
    unused_args = None if fmt.takes_args else args
    _unused(unused_args, None if fmt.takes_package_dirs else package_dirs, what)
    if floating_base and fmt.floating_base:
        raise UnsupportedError(
            f"floating_base=True is for URDF and xacro files; {what} cannot take it: "
            f"{fmt.floating_base}"
        )
    return fmt.read(p, args, package_dirs, floating_base)


def _unused(args: Any, package_dirs: Any, what: str) -> None:
    """Refuse ``args`` (xacro arguments) and ``package_dirs`` where ``what`` has no use for
    them: given, they would be ignored without a word."""
    for name, value, use in (
        ("args", args, "xacro arguments, for .xacro files"),
        ("package_dirs", package_dirs, "where URDF and xacro files find their meshes"),
    ):
        if value is not None:
            raise InvalidValueError(f"{name}= are {use}; {what} takes none")


def _clip_format(p: Path, verb: str) -> tuple[FileFormat, str]:
    """The format of ``p`` by its suffix, for reading or writing clips."""
    suffix = p.suffix.lower()
    fmt = FORMATS.get(suffix)
    attr = "clip" if verb == "read" else "write"
    if fmt is None or getattr(fmt, attr) is None:
        clip_suffixes = [s for s, f in FORMATS.items() if getattr(f, attr) is not None]
        what = f"file type {suffix!r}" if suffix else "a file without a suffix"
        held = " (it holds no motion)" if fmt is not None else ""
        raise UnsupportedError(
            f"cannot {verb} a clip as {what}{held}: clips are {verb} as {', '.join(clip_suffixes)}"
        )
    return fmt, suffix


def read_clip(
    path: str | os.PathLike[str],
    animation: str | int | None = None,
    *,
    fps: float | None = None,
    times: ArrayLike | None = None,
    **options: Any,
) -> Clip:
    """The motion in a character file as a :class:`~kinetree.io.clip.Clip`: the skeleton
    (``clip.model``), one configuration per frame (``clip.q``), the times [s].

    By suffix (:data:`FORMATS`): ``.bvh``, ``.gltf``/``.glb`` (glTF 2.0), ``.usd``,
    ``.usda``, ``.usdc``, ``.usdz`` (UsdSkel), ``.fbx`` where installed.
    ``animation``: which animation, by name (glTF animation name or
    ``animation_<i>``, USD SkelAnimation path or name, FBX take, BVH file stem) or index;
    None: the first. ``fps``: sample evenly at this rate [1/s] from the first key to
    the last; ``times``: sample exactly at these times [s]; neither: the file's own
    key times. Curves are sampled as the format defines them (glTF LINEAR with slerp,
    STEP, CUBICSPLINE; USD time samples, linear; BVH frames, linear per channel).

    ``options``: what the format's reader takes: ``up`` (None: the file's axes; "z":
    Y-up to Z-up), ``scale`` (multiplies every length), ``skeleton`` (glTF skin or USD
    Skeleton by name, where a file has several), BVH's ``positions``; an option the
    format has no use for raises :class:`~kinetree.errors.InvalidValueError`.

    Raises :class:`~kinetree.errors.UnsupportedError` for a suffix that holds no clips,
    :class:`~kinetree.errors.FileFormatError` for a missing or malformed file,
    :class:`~kinetree.errors.UnknownNameError` for an unknown animation or skeleton.
    """
    p = as_path(path, "read_clip needs the path of a character file (str or os.PathLike)")
    fmt, _ = _clip_format(p, "read")
    unknown = sorted(set(options) - set(fmt.options))
    if unknown:
        raise InvalidValueError(
            f"read_clip: {fmt.name} files take no option {unknown[0]!r}; their options are: "
            f"{', '.join(fmt.options) or 'none'}"
        )
    if not p.is_file():
        raise FileFormatError(
            f"file {str(p)!r} does not exist" if not p.exists() else f"{str(p)!r} is not a file"
        )
    assert fmt.clip is not None  # _clip_format checked it
    return fmt.clip(p, animation, fps, times, options)


def write_clip(clip: Clip | Motion | BVHClip, path: str | os.PathLike[str]) -> None:
    """Write a clip, a :class:`~kinetree.anim.Motion` or a BVH clip to ``path``, in the
    format its suffix names: ``.glb``/``.gltf`` (glTF 2.0: skeleton, animation, and the
    skinned meshes of ``model.skins``), ``.usd``/``.usda``/``.usdc``/``.usdz`` (UsdSkel
    Skeleton, SkelAnimation and bound meshes), ``.bvh``.

    Any model can be written: its frames (all but the root) become the file's joints,
    each posed relative to its nearest framed ancestor by FK at every frame, so reading
    the file back gives every frame's world pose again. The folder must exist; a failed
    write raises :class:`~kinetree.errors.FileFormatError`.
    """
    from .anim.motion import Motion
    from .io.bvh import BVHClip
    from .io.clip import Clip

    p = as_path(path, "write_clip needs the path of the file to write (str or os.PathLike)")
    if isinstance(clip, Motion):
        clip = Clip.from_motion(clip)
    elif isinstance(clip, BVHClip):
        clip = Clip.from_bvh(clip)
    elif not isinstance(clip, Clip):
        raise InvalidValueError(
            f"write_clip needs a Clip, a Motion or a BVHClip, got {type(clip).__name__}"
        )
    fmt, _ = _clip_format(p, "write")
    if p.is_dir():
        raise FileFormatError(f"cannot write {str(p)!r}: it is a folder")
    assert fmt.write is not None  # _clip_format checked it
    fmt.write(p, clip)
