"""URDF -> Model through yourdfpy (parsing) and our builder (structure checks).

Meshes are never loaded: kinematics needs none, and ``package://`` paths that do
not resolve are fine. Only the kinematic part of the file is read: the
``<robot>`` name, each ``<link>`` name, and in each ``<joint>`` its name, type,
``<parent>``, ``<child>``, ``<origin>``, ``<axis>``, ``<limit lower upper>`` and
``<mimic>``. Geometry, inertia, materials, transmissions and the like are never
looked at, so a malformed one does not stop a load.

Supported joint types: revolute, continuous, prismatic, fixed; mimic joints
follow their source joint (a ``<mimic>`` on a fixed joint has nothing to move
and is ignored). ``floating`` and ``planar`` joints raise
:class:`~kinetree.errors.UnsupportedError`.

Every error names the file (``<string>`` for URDF text), and the element and
joint or link where there is one: :class:`~kinetree.errors.FileFormatError` for
malformed XML and for missing or malformed elements and attributes,
:class:`~kinetree.errors.ModelStructureError` for links that do not form one
tree, :class:`~kinetree.errors.InvalidValueError` for values out of their
domain (NaN, a zero axis, ``lower > upper``).
"""

from __future__ import annotations

import io
import math
import os
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from ..builder import ModelBuilder
from ..errors import (
    FileFormatError,
    InvalidValueError,
    KinetreeError,
    ModelStructureError,
    UnsupportedError,
)
from ..model import Model
from ._files import as_path

__all__ = ["load_urdf"]

_SUPPORTED = ("revolute", "continuous", "prismatic", "fixed")

# Per joint child element: its attributes we read and how many numbers each holds
# (0: a non-empty name).
_JOINT_PARTS: dict[str, dict[str, int]] = {
    "parent": {"link": 0},
    "child": {"link": 0},
    "origin": {"xyz": 3, "rpy": 3},
    "axis": {"xyz": 3},
    "limit": {"lower": 1, "upper": 1},
    "mimic": {"joint": 0, "multiplier": 1, "offset": 1},
}
_REQUIRED = {"parent": ("link",), "child": ("link",), "mimic": ("joint",)}


def load_urdf(path_or_text: str | os.PathLike[str], *, name: str | None = None) -> Model:
    """Load a URDF file (or a URDF string starting with ``<``) into a :class:`Model`.

    ``name``: the model's name (default: the ``<robot>`` name).
    """
    import yourdfpy

    if name is not None and (not isinstance(name, str) or not name):
        raise InvalidValueError(f"load_urdf: name must be a non-empty string or None, got {name!r}")
    if isinstance(path_or_text, str) and path_or_text.lstrip().startswith("<"):
        text = path_or_text
        source = "<string>"
    else:
        p = as_path(
            path_or_text,
            "load_urdf needs the path of a URDF file (str or os.PathLike) "
            "or URDF text starting with '<'",
        )
        source = str(p)
        try:
            text = p.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise FileFormatError(f"cannot read URDF file {source}: {exc.strerror}") from None
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise FileFormatError(f"{source}: not well-formed XML: {exc}") from None
    kinematic = _kinematic_part(root, source)
    try:
        robot = yourdfpy.URDF.load(
            io.BytesIO(ET.tostring(kinematic, encoding="unicode").encode("utf-8")),
            build_scene_graph=False,
            build_collision_scene_graph=False,
            load_meshes=False,
            load_collision_meshes=False,
        )
    except Exception as exc:  # pragma: no cover - the input is checked above
        raise FileFormatError(f"{source}: invalid URDF: {exc}") from None
    return _to_model(robot, name or robot.robot.name or Path(source).stem, source)


# --- checking the XML ------------------------------------------------------------------


def _kinematic_part(root: ET.Element, source: str) -> ET.Element:
    """A ``<robot>`` with only what kinematics reads, every part of it checked."""

    def bad(message: str) -> FileFormatError:
        return FileFormatError(f"{source}: invalid URDF: {message}")

    if root.tag != "robot":
        hint = " (this is MJCF, MuJoCo's format, not supported yet)" if root.tag == "mujoco" else ""
        raise bad(f"the root element is <{root.tag}>, expected <robot>{hint}")
    robot_name = root.get("name")
    if not robot_name:
        raise bad("the <robot> element has no 'name' attribute (or an empty one)")
    out = ET.Element("robot", {"name": robot_name})
    n_links = n_joints = 0
    for el in root:
        if el.tag == "link":
            n_links += 1
            link_name = el.get("name")
            if not link_name:
                raise bad(f"<link> number {n_links} has no 'name' attribute (or an empty one)")
            ET.SubElement(out, "link", {"name": link_name})
        elif el.tag == "joint":
            n_joints += 1
            out.append(_joint(el, n_joints, source, bad))
    return out


def _joint(
    el: ET.Element, number: int, source: str, bad: Callable[[str], FileFormatError]
) -> ET.Element:
    joint_name = el.get("name")
    if not joint_name:
        child = el.find("child")
        hint = (
            "" if child is None or not child.get("link") else f" (child link {child.get('link')!r})"
        )
        raise bad(f"<joint> number {number}{hint} has no 'name' attribute (or an empty one)")
    owner = f"joint {joint_name!r}"
    jtype = el.get("type")
    if not jtype:
        raise bad(
            f"{owner} has no 'type' attribute; supported joint types are: {', '.join(_SUPPORTED)}"
        )
    out = ET.Element("joint", {"name": joint_name, "type": jtype})
    for tag, attributes in _JOINT_PARTS.items():
        part = el.find(tag)
        if part is None:
            if tag in ("parent", "child"):
                raise bad(f"{owner} has no <{tag}> element")
            continue
        kept: dict[str, str] = {}
        for attr, count in attributes.items():
            value = part.get(attr)
            if value is None:
                if attr in _REQUIRED.get(tag, ()):
                    raise bad(f"{owner}: <{tag}> has no {attr!r} attribute")
                continue
            if count == 0:
                if not value:
                    raise bad(f"{owner}: <{tag}> has an empty {attr!r} attribute")
            else:
                numbers = _numbers(value, count)
                if numbers is None:
                    what = "a number" if count == 1 else f"{count} numbers separated by spaces"
                    raise bad(f"{owner}: <{tag}> attribute {attr}={value!r} must be {what}")
                # Infinite limits mean "no limit"; every other number must be finite.
                ok = (lambda v: not math.isnan(v)) if tag == "limit" else math.isfinite
                if not all(ok(v) for v in numbers):
                    raise InvalidValueError(
                        f"{source}: {owner}: <{tag}> attribute {attr}={value!r} contains "
                        f"{'NaN' if tag == 'limit' else 'NaN or inf'}"
                    )
            kept[attr] = value
        ET.SubElement(out, tag, kept)
    return out


def _numbers(text: str, count: int) -> list[float] | None:
    """The ``count`` numbers in ``text`` (separated by whitespace), or None."""
    parts = text.split()
    if len(parts) != count:
        return None
    try:
        return [float(p) for p in parts]
    except ValueError:
        return None


# --- building the model ----------------------------------------------------------------


@contextmanager
def _in_file(source: str) -> Iterator[None]:
    """Re-raise a builder error with the file's name in front (same class)."""
    try:
        yield
    except KinetreeError as exc:
        raise type(exc)(f"{source}: {exc}") from None


def _to_model(robot: object, name: str, source: str) -> Model:
    urdf = robot.robot  # type: ignore[attr-defined]
    joints = list(urdf.joints)
    links = [lk.name for lk in urdf.links]
    if not links:
        raise ModelStructureError(f"{source}: the URDF defines no links")
    dup = sorted(n for n, k in Counter(links).items() if k > 1)
    if dup:
        raise ModelStructureError(f"{source}: link names defined twice: {', '.join(dup)}")
    link_set = set(links)
    for j in joints:
        for role, end in (("parent", j.parent), ("child", j.child)):
            if end not in link_set:
                raise ModelStructureError(
                    f"{source}: {role} link {end!r} of joint {j.name!r} not found; "
                    f"links are: {_listing(links)}"
                )
    children = {j.child for j in joints}
    roots = [lk for lk in links if lk not in children]
    if len(roots) > 1:
        raise ModelStructureError(
            f"{source}: URDF has {len(roots)} root links ({', '.join(roots)}); a robot has one"
        )
    if not roots:
        raise ModelStructureError(f"{source}: URDF has no root link (the joints form a cycle)")
    with _in_file(source):
        b = ModelBuilder(name, root=roots[0])
    for j in joints:
        if j.type not in _SUPPORTED:
            raise UnsupportedError(
                f"{source}: joint {j.name!r} has type {j.type!r}; "
                f"supported joint types are: {', '.join(_SUPPORTED)}"
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
        if j.mimic is not None and j.type != "fixed":
            mul = 1.0 if j.mimic.multiplier is None else float(j.mimic.multiplier)
            off = 0.0 if j.mimic.offset is None else float(j.mimic.offset)
            mimic = (j.mimic.joint, mul, off)
        with _in_file(source):
            b.add_joint(
                j.name, j.parent, j.child, type=j.type,
                axis=axis if j.type != "fixed" else "z", origin=origin, limits=limits,
                mimic=mimic,
            )  # fmt: skip
    b.metadata["source"] = source
    with _in_file(source):
        return b.build()


def _listing(names: list[str], limit: int = 60) -> str:
    return ", ".join(names[:limit]) + (", ..." if len(names) > limit else "")
