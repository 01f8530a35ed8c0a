"""URDF -> Model through yourdfpy (parsing) and our builder (structure checks).

Meshes are never loaded: kinematics needs none, and ``package://`` paths that do
not resolve are fine. Supported joint types: revolute, continuous, prismatic,
fixed; mimic joints follow their source joint. ``floating`` and ``planar`` joints
raise :class:`~kinetree.errors.UnsupportedError`.
"""

from __future__ import annotations

import io
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from ..builder import ModelBuilder
from ..errors import FileFormatError, ModelStructureError, UnsupportedError
from ..model import Model

__all__ = ["load_urdf"]

_SUPPORTED = ("revolute", "continuous", "prismatic", "fixed")


def load_urdf(path_or_text: str | os.PathLike[str], *, name: str | None = None) -> Model:
    """Load a URDF file (or a URDF string starting with ``<``) into a :class:`Model`."""
    import yourdfpy

    text: str | None = None
    if isinstance(path_or_text, str) and path_or_text.lstrip().startswith("<"):
        text = path_or_text
        source = "<string>"
    else:
        p = Path(path_or_text)
        source = str(p)
        try:
            text = p.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise FileFormatError(f"cannot read URDF file {source}: {exc.strerror}") from None
    try:
        ET.fromstring(text)
    except ET.ParseError as exc:
        raise FileFormatError(f"{source}: not well-formed XML: {exc}") from None
    try:
        robot = yourdfpy.URDF.load(
            io.BytesIO(text.encode("utf-8")),
            build_scene_graph=False,
            build_collision_scene_graph=False,
            load_meshes=False,
            load_collision_meshes=False,
        )
    except Exception as exc:  # yourdfpy raises assorted types for bad content
        raise FileFormatError(f"{source}: invalid URDF: {exc}") from None
    return _to_model(robot, name or robot.robot.name or Path(source).stem, source)


def _to_model(robot: object, name: str, source: str) -> Model:
    urdf = robot.robot  # type: ignore[attr-defined]
    joints = list(urdf.joints)
    links = [lk.name for lk in urdf.links]
    if not links:
        raise ModelStructureError(f"{source}: the URDF defines no links")
    dup = sorted({n for n in links if links.count(n) > 1})
    if dup:
        raise ModelStructureError(f"{source}: link names defined twice: {', '.join(dup)}")
    children = {j.child for j in joints}
    roots = [lk for lk in links if lk not in children]
    if len(roots) > 1:
        raise ModelStructureError(
            f"{source}: URDF has {len(roots)} root links ({', '.join(roots)}); a robot has one"
        )
    if not roots:
        raise ModelStructureError(f"{source}: URDF has no root link (the joints form a cycle)")
    link_set = set(links)
    b = ModelBuilder(name, root=roots[0])
    for j in joints:
        if j.type not in _SUPPORTED:
            raise UnsupportedError(
                f"{source}: joint {j.name!r} has type {j.type!r}; "
                f"supported joint types are: {', '.join(_SUPPORTED)}"
            )
        for end in (j.parent, j.child):
            if end not in link_set:
                raise ModelStructureError(
                    f"{source}: joint {j.name!r} refers to link {end!r}, which is not defined"
                )
        origin = np.eye(4) if j.origin is None else np.asarray(j.origin, dtype=float)
        axis = np.array([1.0, 0.0, 0.0]) if j.axis is None else np.asarray(j.axis, dtype=float)
        limits = None
        if j.type in ("revolute", "prismatic") and j.limit is not None:
            # URDF spec: a missing lower or upper attribute defaults to 0.
            lo = 0.0 if j.limit.lower is None else float(j.limit.lower)
            hi = 0.0 if j.limit.upper is None else float(j.limit.upper)
            limits = (lo, hi)
        mimic = None
        if j.mimic is not None:
            mul = 1.0 if j.mimic.multiplier is None else float(j.mimic.multiplier)
            off = 0.0 if j.mimic.offset is None else float(j.mimic.offset)
            mimic = (j.mimic.joint, mul, off)
        b.add_joint(
            j.name, j.parent, j.child, type=j.type,
            axis=axis if j.type != "fixed" else "z", origin=origin, limits=limits, mimic=mimic,
        )  # fmt: skip
    b.metadata["source"] = source
    return b.build()
