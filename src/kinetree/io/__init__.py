"""File formats -> Model. Each loader turns one format into a :class:`Model` and nothing else."""

from __future__ import annotations

import os

from ..errors import FileFormatError, UnknownNameError, UnsupportedError
from ..model import Model
from ._files import as_path
from .bvh import BVHClip as BVHClip
from .bvh import read_bvh as read_bvh
from .bvh import write_bvh as write_bvh
from .dh import DHRow as DHRow
from .dh import from_dh as from_dh
from .urdf import load_urdf as load_urdf

__all__ = ["BVHClip", "DHRow", "from_dh", "load", "load_urdf", "read_bvh", "write_bvh"]

_FORMATS = (".urdf", ".bvh")


def load(name_or_path: str | os.PathLike[str]) -> Model:
    """A built-in model by name (see ``kinetree.models.available()``) or a file.

    Files: ``.urdf`` (through yourdfpy) and ``.bvh`` (the clip's skeleton).

    Raises :class:`~kinetree.errors.InvalidValueError` for an argument that is
    neither a ``str`` nor an ``os.PathLike`` (None, bytes, a number),
    :class:`~kinetree.errors.UnknownNameError` for an unknown name and
    :class:`~kinetree.errors.FileFormatError` for a missing or malformed file.
    """
    from .. import models

    if isinstance(name_or_path, str) and name_or_path in models.available():
        return models.get(name_or_path)
    p = as_path(
        name_or_path,
        f"load needs a built-in model name ({', '.join(models.available())}) or the path "
        "of a .urdf or .bvh file (str or os.PathLike)",
    )
    suffix = p.suffix.lower()
    if suffix in _FORMATS:
        if not p.exists():
            raise FileFormatError(f"file {str(p)!r} does not exist")
        if suffix == ".urdf":
            return load_urdf(p)
        return read_bvh(p).model
    if suffix:
        raise UnsupportedError(
            f"cannot load {str(p)!r}: file type {suffix!r} is not supported; "
            f"supported files: {', '.join(_FORMATS)}"
        )
    raise UnknownNameError(
        f"model {str(name_or_path)!r} not found; built-in models are: "
        f"{', '.join(models.available())} (or pass a path to a .urdf or .bvh file)"
    )
