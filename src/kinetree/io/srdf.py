"""SRDF files: the link pairs a robot's self-collision checks skip.

A robot's links touch where they are joined and some pairs can never meet; checking
those would report a collision at every configuration or waste time. An SRDF file lists
the pairs to skip in ``<disable_collisions link1= link2= reason=/>`` elements (as MoveIt
writes them); :func:`kinetree.collision.find_disabled_pairs` finds them automatically.
Either way the result is a plain ``{(link_a, link_b): reason}`` mapping (names sorted
within each pair), written to and read from a small SRDF file that can be edited by hand
(:func:`write_srdf`, :func:`read_srdf`). Every other SRDF element is ignored.

A model loaded with ``kinetree.load(urdf, srdf=path)`` carries its SRDF's pairs in
``model.metadata["disable_collisions"]``.
"""

from __future__ import annotations

import dataclasses
import os
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path

from ..errors import FileFormatError, UnknownNameError, unknown_name
from ..model import Model

__all__ = [
    "METADATA_KEY",
    "Pairs",
    "pair_key",
    "read_srdf",
    "with_disabled_pairs",
    "write_srdf",
]

#: Where a model keeps the disabled pairs of its SRDF.
METADATA_KEY = "disable_collisions"

Pairs = dict[tuple[str, str], str]


def pair_key(a: str, b: str) -> tuple[str, str]:
    """The two names of a pair in sorted order (the key of every pair mapping)."""
    return (a, b) if a <= b else (b, a)


def read_srdf(path: str | os.PathLike[str], model: Model | None = None) -> Pairs:
    """The ``<disable_collisions>`` pairs of an SRDF file: ``{(a, b): reason}``.

    Every other element (groups, states, end effectors) is ignored. With ``model``, each
    link must be one of its frames: an unknown one raises :class:`UnknownNameError`
    naming it and listing the frames. A missing or malformed file, or an element without
    both links, raises :class:`FileFormatError`.
    """
    p = Path(path)
    try:
        root = ET.parse(p).getroot()
    except FileNotFoundError:
        raise FileFormatError(f"SRDF file {str(p)!r} does not exist") from None
    except (ET.ParseError, OSError) as exc:
        raise FileFormatError(f"SRDF file {str(p)!r} is not readable XML: {exc}") from None
    if root.tag != "robot":
        raise FileFormatError(f"SRDF file {str(p)!r} must have a <robot> root, got <{root.tag}>")
    frames = set(model.frame_names) if model is not None else None
    out: Pairs = {}
    for el in root.iter("disable_collisions"):
        a, b = el.get("link1"), el.get("link2")
        if not a or not b:
            raise FileFormatError(
                f"SRDF file {str(p)!r}: <disable_collisions> needs link1 and link2, got "
                f"{dict(el.attrib)}"
            )
        if frames is not None and model is not None:
            for name in (a, b):
                if name not in frames:
                    msg = str(unknown_name("link", name, model.frame_names))
                    raise UnknownNameError(f"SRDF file {str(p)!r}: {msg}")
        out[pair_key(a, b)] = el.get("reason", "") or ""
    return out


def write_srdf(
    path: str | os.PathLike[str], pairs: Mapping[tuple[str, str], str], robot: str = "robot"
) -> None:
    """Write ``pairs`` as an SRDF file of ``<disable_collisions>`` elements (sorted)."""
    root = ET.Element("robot", name=robot)
    root.text = "\n  "
    items = sorted((pair_key(*k), v) for k, v in pairs.items())
    for i, ((a, b), reason) in enumerate(items):
        el = ET.SubElement(root, "disable_collisions", link1=a, link2=b, reason=reason)
        el.tail = "\n  " if i + 1 < len(items) else "\n"
    ET.ElementTree(root).write(path, encoding="unicode", xml_declaration=True)


def with_disabled_pairs(model: Model, pairs: Mapping[tuple[str, str], str]) -> Model:
    """A copy of ``model`` carrying ``pairs`` in ``metadata["disable_collisions"]``."""
    meta = dict(model.metadata)
    meta[METADATA_KEY] = {pair_key(*k): str(v) for k, v in pairs.items()}
    return dataclasses.replace(model, metadata=meta)
