"""xacro -> URDF (through ``xacrodoc``, which runs ROS's xacro processor) -> Model.

ROS description packages ship their robots as xacro files: URDF with macros,
properties, ``<xacro:arg>`` arguments and includes. :func:`load_xacro` expands one
with the xacro processor and loads the URDF it gives with
:func:`~kinetree.io.urdf.load_urdf`; no ROS installation is needed.

Where files are found:

- a relative ``<xacro:include filename="...">`` is resolved from the folder of the
  file that includes it (not from the working directory);
- ``$(find pkg)`` and a ``package://pkg/...`` include resolve ``pkg`` through
  ``package_dirs`` (a mapping ``name -> folder``, or a list of folders whose
  subfolders are packages, named by folder or by their ``package.xml``), then
  through the package that holds the file itself (the nearest folder above it with
  a ``package.xml``), then through ROS's own search (``ROS_PACKAGE_PATH``) where
  one is set up;
- ``package://`` URIs of meshes are left as written: kinetree never loads meshes.

xacro and xacrodoc keep their state in module globals (the include stack, the
package finder and its cache); a lock serialises the loads, and each load starts
from a fresh package finder and puts the previous one back, so ``package_dirs``
of one call never leak into the next.

Every error names the file: :class:`~kinetree.errors.FileFormatError` for a
missing or unreadable file, a missing include and any error of xacro itself (an
unknown macro, a bad expression, an ``args`` value that makes the expansion fail);
:class:`~kinetree.errors.UnknownNameError` for an unknown package (listing the
known ones) and for an ``args`` name that the file does not declare (listing the
declared ones); :class:`~kinetree.errors.InvalidValueError` for ``args`` or
``package_dirs`` of the wrong type; the errors of
:func:`~kinetree.io.urdf.load_urdf` for the URDF the expansion gives.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import (
    FileFormatError,
    InvalidValueError,
    KinetreeError,
    UnknownNameError,
    UnsupportedError,
)
from ..model import Model
from ._files import as_path
from .urdf import load_urdf

__all__ = ["load_xacro"]

ArgValue = str | int | float | bool
PackageDirs = Mapping[str, str | os.PathLike[str]] | Sequence[str | os.PathLike[str]]

_LOCK = threading.Lock()  # xacro and xacrodoc keep their state in module globals
_PACKAGE_URI = "package://"


def load_xacro(
    path: str | os.PathLike[str],
    args: Mapping[str, ArgValue] | None = None,
    package_dirs: PackageDirs | None = None,
    **urdf_options: Any,
) -> Model:
    """Expand the xacro file ``path`` and load the URDF it gives into a :class:`Model`.

    ``args``: values of the file's ``<xacro:arg>`` arguments, as on xacro's command
    line (``name:=value``); numbers and booleans are written as xacro reads them
    (``True`` -> ``"true"``). A name that no ``<xacro:arg>`` declares raises.
    ``package_dirs``: where ``$(find pkg)`` and ``package://pkg/`` includes look,
    either ``{"pkg": folder}`` or a list of folders whose subfolders are packages.
    ``urdf_options``: passed on to :func:`~kinetree.io.urdf.load_urdf` (``name=``,
    ``floating_base=``).

    The model's ``metadata["source"]`` is the xacro file and ``metadata["xacro_args"]``
    the arguments given.
    """
    p = as_path(path, "load_xacro needs the path of a xacro file (str or os.PathLike)")
    arg_values = _arg_values(args)
    known_packages = _package_map(package_dirs)
    try:
        import xacro
        import xacrodoc
    except ImportError:
        raise UnsupportedError(
            f"cannot load {str(p)!r}: xacro files need the xacrodoc package; "
            "pip install kinetree[xacro]"
        ) from None
    if not p.is_file():
        raise FileFormatError(
            f"xacro file {str(p)!r} does not exist"
            if not p.exists()
            else f"xacro file {str(p)!r} is not a file"
        )
    source = str(p)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else f"not UTF-8 text ({exc.reason})"
        raise FileFormatError(f"cannot read xacro file {source!r}: {reason}") from None
    try:
        ET.fromstring(text)  # xacro's own message for malformed XML names no line
    except ET.ParseError as exc:
        raise FileFormatError(f"{source}: not well-formed XML: {exc}") from None

    declared = _DeclaredArgs(arg_values)
    with _LOCK, _xacro_state(xacro, xacrodoc.packages, p.resolve(), known_packages) as stack:
        try:
            doc = xacrodoc.XacroDoc.from_string(
                text, subargs=declared, resolve_packages=False, rootdir=p.parent
            )
            urdf_text = doc.to_urdf_string()
        except Exception as exc:
            raise _xacro_error(exc, source, stack, known_packages, arg_values) from None
    unknown = sorted(set(arg_values) - declared.asked)
    if unknown:
        shown = ", ".join(sorted(declared.asked)) or "(none)"
        raise UnknownNameError(
            f"{source}: xacro arg {unknown[0]!r} is not declared by the file "
            f"(no <xacro:arg name={unknown[0]!r}>); declared args are: {shown}"
        )
    # Mesh paths of the expansion are looked up in the same packages, then beside the file.
    urdf_options.setdefault("package_dirs", [*known_packages.values(), p.resolve().parent])
    try:
        model = load_urdf(urdf_text, **urdf_options)
    except KinetreeError as exc:
        message = str(exc)
        if message.startswith("<string>"):
            message = message[len("<string>") :]
        else:
            message = ": " + message
        hint = f" (xacro args: {arg_values})" if arg_values else ""
        raise type(exc)(f"{source} (expanded by xacro){hint}{message}") from None
    metadata = {**model.metadata, "source": source, "xacro_args": dict(arg_values)}
    return dataclasses.replace(model, metadata=metadata)


# --- arguments ---------------------------------------------------------------------------


def _arg_values(args: object) -> dict[str, str]:
    """``args`` checked and written as xacro's command line would give them (strings)."""
    if args is None:
        return {}
    if not isinstance(args, Mapping):
        raise InvalidValueError(
            f"load_xacro: args must be a mapping of xacro arg names to values (str, int, "
            f"float or bool) or None, got {type(args).__name__}"
        )
    out: dict[str, str] = {}
    for key, value in args.items():
        if not isinstance(key, str) or not key:
            raise InvalidValueError(
                f"load_xacro: args names must be non-empty strings, got {key!r}"
            )
        if isinstance(value, bool):
            out[key] = "true" if value else "false"
        elif isinstance(value, (int, float, str)):
            out[key] = repr(value) if isinstance(value, float) else str(value)
        else:
            raise InvalidValueError(
                f"load_xacro: args[{key!r}] must be a str, int, float or bool, "
                f"got {type(value).__name__}: {value!r}"
            )
    return out


class _DeclaredArgs(dict[str, str]):
    """The ``args`` dict handed to xacro, recording the names it asks about.

    xacro checks ``name in args`` for every ``<xacro:arg name=...>`` before it writes
    the default, so the names asked about are the names the files declare.
    """

    def __init__(self, values: Mapping[str, str]) -> None:
        super().__init__(values)
        self.asked: set[str] = set()

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str):
            self.asked.add(key)
        return super().__contains__(key)


# --- packages ----------------------------------------------------------------------------


def _package_map(package_dirs: object) -> dict[str, Path]:
    """``package_dirs`` as ``{package name: absolute folder}``, every folder checked."""
    if package_dirs is None:
        return {}
    what = (
        "load_xacro: package_dirs must be a mapping of package names to folders, "
        "a list of folders whose subfolders are packages, or None"
    )
    out: dict[str, Path] = {}
    if isinstance(package_dirs, Mapping):
        for name, folder in package_dirs.items():
            if not isinstance(name, str) or not name:
                raise InvalidValueError(f"{what}; got the package name {name!r}")
            d = as_path(folder, f"{what}; the folder of package {name!r} must be a str or PathLike")
            if not d.is_dir():
                raise FileFormatError(
                    f"load_xacro: folder {str(d)!r} of package {name!r} does not exist"
                    if not d.exists()
                    else f"load_xacro: {str(d)!r} (package {name!r}) is not a folder"
                )
            out[name] = d.resolve()
        return out
    if isinstance(package_dirs, (str, os.PathLike)) or not isinstance(package_dirs, Sequence):
        raise InvalidValueError(f"{what}; got {type(package_dirs).__name__}: {package_dirs!r}")
    for folder in package_dirs:
        d = as_path(folder, f"{what}; each folder must be a str or PathLike")
        if not d.is_dir():
            raise FileFormatError(
                f"load_xacro: package folder {str(d)!r} does not exist"
                if not d.exists()
                else f"load_xacro: package folder {str(d)!r} is not a folder"
            )
        for sub in sorted(d.iterdir()):
            if sub.is_dir():
                for name in (sub.name, _package_xml_name(sub)):
                    if name:
                        out.setdefault(name, sub.resolve())  # first folder listed wins
    return out


def _package_xml_name(folder: Path) -> str | None:
    """The ``<name>`` in ``folder/package.xml``; None when there is none to read."""
    try:
        root = ET.parse(folder / "package.xml").getroot()
    except (OSError, ET.ParseError):
        return None
    name = root.findtext("name")
    return name.strip() if name and name.strip() else None


@contextmanager
def _xacro_state(
    xacro: Any, packages: Any, path: Path, known: Mapping[str, Path]
) -> Iterator[list[str]]:
    """Set xacro and xacrodoc up for one expansion of ``path``; put them back after.

    Yields xacro's include stack (innermost file last), for error messages.
    """
    saved_finder = packages._finder  # xacrodoc's global finder: swapped, never mutated
    saved_stacks = (xacro.filestack, xacro.macrostack)
    saved_abs = xacro.abs_filename_spec
    finder = packages.PackageFinder()  # ROS's own search, where ROS is set up
    finder.walk_up_from(path)  # the package holding the file (a package.xml above it)
    finder.update_package_cache({name: str(folder) for name, folder in known.items()})

    def abs_filename_spec(spec: str) -> str:
        # xacro reads package:// include URIs as relative paths; resolve them here.
        if spec.startswith(_PACKAGE_URI):
            name, _, rest = spec[len(_PACKAGE_URI) :].partition("/")
            return os.path.join(finder.get_path(name), rest)
        return str(saved_abs(spec))

    packages._finder = finder
    xacro.init_stacks(str(path))  # relative includes: from the file's folder
    xacro.abs_filename_spec = abs_filename_spec
    try:
        yield xacro.filestack
    finally:
        packages._finder = saved_finder
        xacro.filestack, xacro.macrostack = saved_stacks
        xacro.abs_filename_spec = saved_abs


# --- errors ------------------------------------------------------------------------------


def _xacro_error(
    exc: Exception,
    source: str,
    stack: list[str],
    known: Mapping[str, Path],
    args: Mapping[str, str],
) -> KinetreeError:
    """The kinetree error for ``exc``, raised while xacro expanded ``source``."""
    from xacrodoc.packages import PackageNotFoundError

    cause = getattr(exc, "exc", None) or exc
    where = source
    inner = [f for f in stack if f and os.path.abspath(f) != os.path.abspath(source)]
    if inner:
        where = f"{source} (in included file {inner[-1]})"
    if isinstance(cause, PackageNotFoundError):
        name = cause.args[0] if cause.args else "?"
        listed = ", ".join(sorted(known)) or "(none given)"
        return UnknownNameError(
            f"{where}: xacro package {name!r} not found; known packages are: {listed}; "
            f"give its folder with package_dirs={{{name!r}: folder}} or a list of folders "
            "holding packages"
        )
    if isinstance(cause, OSError):
        missing = cause.filename or "?"
        return FileFormatError(
            f"{where}: xacro include {str(missing)!r} not found ({cause.strerror})"
        )
    message = " ".join(str(exc).split())
    hint = f" (with args {dict(args)})" if args else ""
    return FileFormatError(f"{where}: xacro error{hint}: {message}")
