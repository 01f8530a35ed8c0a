"""Checks shared by the file loaders: a path argument, and reading or writing a file."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import FileFormatError, InvalidValueError

__all__ = ["as_path", "write_text", "xml_root"]


def as_path(value: object, what: str) -> Path:
    """``value`` (a ``str`` or ``os.PathLike`` of ``str``) as a Path.

    Anything else (None, a number, bytes, a list) raises
    :class:`~kinetree.errors.InvalidValueError` whose message starts with ``what``
    (which says what is allowed) and names the type received.
    """
    if isinstance(value, (str, os.PathLike)):
        try:
            text = os.fspath(value)
        except TypeError:
            text = None
        if isinstance(text, str):
            if "\0" in text:
                raise InvalidValueError(f"{what}; got a path with a NUL character: {text!r}")
            return Path(text)
    shown = repr(value)
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    raise InvalidValueError(f"{what}; got {type(value).__name__}: {shown}")


def write_text(path: Path, text: str, kind: str) -> None:
    """Write ``text`` (UTF-8) to ``path``; an OSError becomes a FileFormatError.

    A missing folder is not created: the error names it.
    """
    folder = path.parent
    if not folder.is_dir():
        raise FileFormatError(
            f"cannot write {kind} file {str(path)!r}: folder {str(folder)!r} does not exist"
            if not folder.exists()
            else f"cannot write {kind} file {str(path)!r}: {str(folder)!r} is not a folder"
        )
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise FileFormatError(
            f"cannot write {kind} file {str(path)!r}: {exc.strerror or exc}"
        ) from None


def xml_root(path: Path) -> str | None:
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
