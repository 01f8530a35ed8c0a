"""Checks shared by the file loaders: a path argument, and reading or writing a file."""

from __future__ import annotations

import codecs
import os
import re
from pathlib import Path

from ..errors import FileFormatError, InvalidValueError, UnsupportedError

__all__ = ["as_path", "decode_xml", "write_text", "xml_root"]

#: Byte-order marks and the codec each one announces, longest first (a UTF-32 LE mark
#: begins with UTF-16 LE's).
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
#: The encoding named by an XML declaration, read from the file's first bytes (a
#: declaration is ASCII in every encoding without a byte-order mark that XML allows).
_DECLARED = re.compile(rb"""^\s*<\?xml[^>]*?\sencoding\s*=\s*["']([A-Za-z][A-Za-z0-9._-]*)["']""")


#: A URL (``https://``, ``file://``, ``s3://``...): a path would fold its ``//`` into ``/``.
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+://")


def as_path(value: object, what: str) -> Path:
    """``value`` (a ``str`` or ``os.PathLike`` of ``str``) as a Path.

    Anything else (None, a number, bytes, a list) raises
    :class:`~kinetree.errors.InvalidValueError` whose message starts with ``what``
    (which says what is allowed) and names the type received; so does an empty (or
    blank) path, which ``Path`` would read as the current folder. A URL raises
    :class:`~kinetree.errors.UnsupportedError` with the URL as given.
    """
    if isinstance(value, (str, os.PathLike)):
        try:
            text = os.fspath(value)
        except TypeError:
            text = None
        if isinstance(text, str):
            if "\0" in text:
                raise InvalidValueError(f"{what}; got a path with a NUL character: {text!r}")
            if not text.strip():
                raise InvalidValueError(f"{what}; got an empty path {text!r}")
            if _URL.match(text):
                raise UnsupportedError(
                    f"{text!r} is a URL; kinetree reads and writes local files only: download "
                    "it first and pass the file's path"
                )
            return Path(text)
    shown = repr(value)
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    raise InvalidValueError(f"{what}; got {type(value).__name__}: {shown}")


def decode_xml(data: bytes, source: str) -> str:
    """The text of an XML file's bytes ``data``, in the encoding the file states: its
    byte-order mark (UTF-8, UTF-16 or UTF-32), else the ``encoding`` of its XML
    declaration (``<?xml version="1.0" encoding="ISO-8859-1"?>``), else UTF-8 as XML
    prescribes (bytes that are not UTF-8 become U+FFFD, as before: a lenient read).

    An encoding Python does not know, or bytes that are not in the declared encoding,
    raise :class:`~kinetree.errors.FileFormatError` naming ``source``."""
    for bom, codec in _BOMS:
        if data.startswith(bom):
            try:
                return data.decode(codec)
            except UnicodeDecodeError as exc:
                raise FileFormatError(
                    f"{source}: starts with a {codec.upper().removesuffix('-SIG')} "
                    f"byte-order mark but is not in that encoding: {exc.reason} at byte "
                    f"{exc.start}"
                ) from None
    found = _DECLARED.match(data[:1024])
    if found is None:
        return data.decode("utf-8", errors="replace")
    name = found.group(1).decode("ascii")
    try:
        codec = codecs.lookup(name).name
    except LookupError:
        raise FileFormatError(
            f"{source}: its XML declaration names encoding {name!r}, which Python does not "
            "know; save the file as UTF-8"
        ) from None
    if codec.startswith(("utf-16", "utf-32")):
        # Declared without a byte-order mark, yet the declaration read as ASCII: the
        # bytes are not in that encoding (XML requires a mark for UTF-16).
        raise FileFormatError(
            f"{source}: declares encoding {name!r} but has no byte-order mark and its "
            "declaration is single-byte text; save the file as UTF-8 (or with the mark)"
        )
    try:
        return data.decode(codec)
    except UnicodeDecodeError as exc:
        raise FileFormatError(
            f"{source}: declares encoding {name!r} but is not in it: {exc.reason} at byte "
            f"{exc.start}"
        ) from None


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
