"""File formats -> Model. Each loader turns one format into a :class:`Model` and nothing else."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._lazy import attach as _attach
from .._validate import check_bool
from ..errors import FileFormatError, InvalidValueError, UnknownNameError, UnsupportedError
from ..model import Model
from ._files import as_path

if TYPE_CHECKING:
    from .bvh import BVHClip as BVHClip
    from .bvh import read_bvh as read_bvh
    from .bvh import write_bvh as write_bvh
    from .bvh_export import write_motion_bvh as write_motion_bvh
    from .dh import DHRow as DHRow
    from .dh import from_dh as from_dh
    from .mjcf import MJCFWarning as MJCFWarning
    from .mjcf import from_mujoco as from_mujoco
    from .mjcf import load_mjcf as load_mjcf
    from .urdf import load_urdf as load_urdf

# Each format's module is imported when it is first used (kinetree._lazy).
_LAZY = {
    "BVHClip": ".bvh:BVHClip",
    "read_bvh": ".bvh:read_bvh",
    "write_bvh": ".bvh:write_bvh",
    "write_motion_bvh": ".bvh_export:write_motion_bvh",
    "DHRow": ".dh:DHRow",
    "from_dh": ".dh:from_dh",
    "MJCFWarning": ".mjcf:MJCFWarning",
    "from_mujoco": ".mjcf:from_mujoco",
    "load_mjcf": ".mjcf:load_mjcf",
    "load_urdf": ".urdf:load_urdf",
}
if not TYPE_CHECKING:  # type checkers read the imports above, and flag unknown names
    __getattr__, __dir__ = _attach(__name__, _LAZY)

__all__ = [
    "BVHClip",
    "DHRow",
    "MJCFWarning",
    "from_dh",
    "from_mujoco",
    "load",
    "load_mjcf",
    "load_urdf",
    "read_bvh",
    "write_bvh",
    "write_motion_bvh",
]

_FORMATS = (".urdf", ".bvh", ".xacro")
_MJCF = (".xml", ".mjcf")  # MuJoCo's suffixes (MJCF, through the mujoco package)


def load(
    name_or_path: str | os.PathLike[str],
    *,
    args: Mapping[str, Any] | None = None,
    package_dirs: Mapping[str, str | os.PathLike[str]]
    | str
    | os.PathLike[str]
    | Sequence[str | os.PathLike[str]]
    | None = None,
    floating_base: bool = False,
    srdf: str | os.PathLike[str] | None = None,
) -> Model:
    """A built-in model by name (see ``kinetree.models.available()``) or a file.

    Files: ``.urdf`` (through yourdfpy), ``.xacro`` (expanded by xacrodoc, the
    ``xacro`` extra, with xacro ``args``; see :func:`kinetree.io.xacro.load_xacro`) and
    ``.bvh`` (the clip's skeleton). ``package_dirs``: where ``package://`` and
    ``$(find pkg)`` paths are looked up first: folders holding packages, package
    folders, or a mapping package name -> folder (see :func:`load_urdf`).
    MJCF (MuJoCo XML, ``.xml`` or ``.mjcf``) is compiled by MuJoCo (the ``mjcf`` extra;
    see :func:`kinetree.io.mjcf.load_mjcf`).
    ``floating_base=True`` (URDF and xacro files, built-in models) gives the robot a
    free base: a joint ``"root_joint"`` of type ``"free"`` from a new root link
    ``"world"`` (see :func:`load_urdf`, :meth:`Model.with_floating_base`); BVH and MJCF
    raise :class:`~kinetree.errors.UnsupportedError`.

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
        raise InvalidValueError(f"args must be a mapping of xacro argument names to values, "
                                f"got {type(args).__name__}")  # fmt: skip
    if srdf is not None:
        from .srdf import read_srdf, with_disabled_pairs

        model = load(
            name_or_path, args=args, package_dirs=package_dirs, floating_base=floating_base
        )
        return with_disabled_pairs(model, read_srdf(srdf, model))
    from .. import models

    if isinstance(name_or_path, str) and name_or_path in models.available():
        _unused(args, package_dirs, f"the built-in model {name_or_path!r}")
        built = models.get(name_or_path)
        return built.with_floating_base() if floating_base else built
    p = as_path(
        name_or_path,
        f"load needs a built-in model name ({', '.join(models.available())}) or the path "
        "of a .urdf, .xacro, .bvh, .xml or .mjcf file (str or os.PathLike)",
    )
    suffix = p.suffix.lower()
    if p.is_dir():
        raise FileFormatError(
            f"{str(p)!r} is a folder; load needs a model file (.urdf, .xacro, .bvh, .xml or "
            f".mjcf) or a built-in model name ({', '.join(models.available())})"
        )
    if suffix in _FORMATS:
        if not p.exists():
            raise FileFormatError(f"file {str(p)!r} does not exist")
        if suffix == ".urdf":
            from .urdf import load_urdf

            _unused(args, None, f"the URDF file {str(p)!r}")
            dirs = (
                list(package_dirs.values()) if isinstance(package_dirs, Mapping) else package_dirs
            )
            return load_urdf(p, package_dirs=dirs, floating_base=floating_base)
        if suffix == ".xacro":  # robot.urdf.xacro, robot.xacro
            from .xacro import load_xacro

            return load_xacro(
                p, args=args, package_dirs=package_dirs,  # type: ignore[arg-type]
                floating_base=floating_base,
            )  # fmt: skip
        _unused(args, package_dirs, f"the BVH file {str(p)!r}")
        if floating_base:
            raise UnsupportedError(
                f"floating_base=True is for URDF and xacro files; the BVH file {str(p)!r} "
                "cannot take it: a BVH skeleton's root joint already moves freely (its "
                "position channels)"
            )
        from .bvh import read_bvh

        return read_bvh(p).model
    supported = (
        "kinetree loads URDF (.urdf), xacro (.xacro), BVH (.bvh), MJCF (.xml, .mjcf), "
        "DH tables (kinetree.from_dh) and the "
        f"built-in models ({', '.join(models.available())})"
    )
    if suffix in _MJCF:
        if not p.exists():
            raise FileFormatError(f"file {str(p)!r} does not exist")
        if _xml_root(p) == "robot":
            raise UnsupportedError(
                f"cannot load {str(p)!r} as MJCF (MuJoCo XML, what {suffix!r} files are "
                "read as): this file has a <robot> root, so if it is URDF, load it with "
                f"kinetree.io.load_urdf(path); {supported}"
            )
        _unused(args, package_dirs, f"the MJCF file {str(p)!r}")
        if floating_base:
            raise UnsupportedError(
                f"floating_base=True is for URDF and xacro files; the MJCF file {str(p)!r} "
                "cannot take it: an MJCF body moves freely by its own <freejoint> (add one "
                "to the file), or use load(path).with_floating_base()"
            )
        from .mjcf import load_mjcf

        return load_mjcf(p)
    if p.is_file():
        kind = {
            "robot": "URDF (a <robot> root): load it with kinetree.io.load_urdf(path)",
            "mujoco": "MJCF (a <mujoco> root): load it with kinetree.io.load_mjcf(path)",
        }
        root = _xml_root(p) if not suffix else None
        raise UnsupportedError(
            f"cannot load {str(p)!r}: "
            + (f"file type {suffix!r} is not supported" if suffix else "the file has no suffix "
               "to tell its format" + (f"; it looks like {kind[root]}" if root in kind else ""))
            + f"; supported files: {', '.join(_FORMATS + _MJCF)}; {supported}"
        )  # fmt: skip
    if suffix:
        raise UnsupportedError(
            f"cannot load {str(p)!r}: file type {suffix!r} is not supported; "
            f"supported files: {', '.join(_FORMATS + _MJCF)}; {supported}"
        )
    raise UnknownNameError(
        f"model {str(name_or_path)!r} not found; built-in models are: "
        f"{', '.join(models.available())} (or pass a path to a .urdf, .xacro, .bvh, .xml "
        "or .mjcf file)"
    )


def _unused(args: Any, package_dirs: Any, what: str) -> None:
    """Refuse ``args`` (xacro arguments) and ``package_dirs`` where ``what`` has no use for
    them: given, they would be ignored without a word."""
    for name, value, use in (
        ("args", args, "xacro arguments, for .xacro files"),
        ("package_dirs", package_dirs, "where URDF and xacro files find their meshes"),
    ):
        if value is not None:
            raise InvalidValueError(f"{name}= are {use}; {what} takes none")


def _xml_root(path: Path) -> str | None:
    """The tag of the root element of the XML file ``path``; None when none can be read.

    Only the start of the file is parsed (up to the root's opening tag).
    """
    import xml.etree.ElementTree as ET  # here: loading a built-in model parses no XML

    try:
        with open(path, "rb") as f:
            for _event, element in ET.iterparse(f, events=("start",)):
                return str(element.tag)
    except Exception:  # unreadable, not XML, a bad encoding: no root to name
        return None
    return None
