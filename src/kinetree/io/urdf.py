"""URDF -> Model through yourdfpy (parsing) and our builder (structure checks).

Long because URDF is read here with the leniency real files need (numbers, limits,
mimics, shapes, each interpretation with a warning), the geometry and the mesh-path
lookup, and every error naming file, element and joint.

The kinematic part of the file decides whether it loads: the ``<robot>`` name, each
``<link>`` name, and in each ``<joint>`` its name, type, ``<parent>``, ``<child>``,
``<origin>``, ``<axis>``, ``<limit lower upper>`` and ``<mimic>``. Inertia, materials,
transmissions and the like are never looked at. Each link's ``<visual>`` and
``<collision>`` shapes are read into :attr:`Model.geometry` (:mod:`kinetree.geometry`),
but a shape never stops a load: an unknown or malformed one is skipped with a
:class:`~kinetree.geometry.GeometryWarning`. Mesh files are looked up at load, and those
not found are named in one warning per file (they keep their path with
``vertices=None``); the files found are read when first used (drawing, collision
spheres, the soles of retargeting), and one that cannot be read then warns once.

Mesh paths (``package://pkg/...``, ``file://...``, relative or absolute) are looked up
in, in order: the ``package_dirs`` given (each a folder holding packages, or a package
folder itself), the URDF file's folder and its ancestors (one of them named ``pkg``, or
holding a folder ``pkg``), the folders of ``ROS_PACKAGE_PATH``, and the robot folders of
installed description packages (example-robot-data, pybullet_data).

Lenient where other tools are (Pinocchio, pybullet), each time with a
:class:`URDFWarning` that says how kinetree read the file: whitespace before
``<?xml``; ``lower > upper`` read as "no limit"; a ``<mimic>`` naming a joint that is not
there read as an independent joint (``mimic="strict"`` refuses the file instead).

Supported joint types: revolute, continuous, prismatic, fixed, floating, planar and
pybullet's spherical; mimic joints follow their source joint (a ``<mimic>`` on a fixed
joint has nothing to move and is ignored; one on a floating, planar or spherical joint,
which has several coordinates, is ignored with a :class:`URDFWarning`). A ``spherical``
joint becomes a builder ``"ball"`` joint, as an MJCF ball joint does: four coordinates
``{joint}_qw, _qx, _qy, _qz`` (a unit quaternion, w first) turning the child about its
origin; its ``<axis>`` and ``<limit>`` are ignored, as pybullet ignores them. A
``floating`` joint becomes a builder ``"free"`` joint: seven coordinates
``{joint}_x, _y, _z`` (the child origin in the frame ``parent @ origin`` [m]) and
``{joint}_qw, _qx, _qy, _qz`` (a unit quaternion, w first). A ``planar`` joint becomes a
builder ``"planar"`` joint whose plane normal is the URDF ``<axis>``: coordinates
``{joint}_x``, ``{joint}_y`` [m] (translations in the plane, along the axes
:meth:`~kinetree.builder.ModelBuilder.add_joint` documents) and ``{joint}_theta`` [rad]
(rotation about the normal). The ``<limit>`` of either is ignored, as Pinocchio does.

``floating_base=True`` gives a fixed-root robot a free base, as Pinocchio's
``JointModelFreeFlyer`` root joint does: a new root link :data:`FLOATING_BASE_ROOT`
(``"world"``; ``"world_1"``, ``"world_2"``, ... when the file has a link of that name)
and a ``"free"`` joint :data:`FLOATING_BASE_JOINT` (``"root_joint"``, Pinocchio's
name) from it to the file's root link; its seven coordinates come first in ``q``. It is
:meth:`kinetree.Model.with_floating_base` applied to the fixed-base model, the one way
kinetree adds a free base.

Every error names the file (``<string>`` for URDF text), and the element and
joint or link where there is one: :class:`~kinetree.errors.FileFormatError` for
malformed XML and for missing or malformed elements and attributes,
:class:`~kinetree.errors.ModelStructureError` for links that do not form one
tree, :class:`~kinetree.errors.InvalidValueError` for values out of their
domain (NaN, a zero axis, ``lower > upper``).
"""

from __future__ import annotations

import io
import logging
import math
import os
import re
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from .._warnings import warn_outside
from ..builder import ModelBuilder
from ..errors import (
    FileFormatError,
    InvalidValueError,
    KinetreeError,
    ModelStructureError,
    UnsupportedError,
)
from ..geometry import (
    Box,
    Capsule,
    Cylinder,
    Geometry,
    GeometryWarning,
    Mesh,
    Sphere,
)
from ..model import Model
from ..spatial import rpy_to_matrix
from ._files import as_path, decode_xml

__all__ = [
    "FLOATING_BASE_JOINT",
    "FLOATING_BASE_ROOT",
    "URDFWarning",
    "load_urdf",
    "resolve_mesh_path",
]

#: Name of the free joint that ``floating_base=True`` adds above the file's root link.
FLOATING_BASE_JOINT = "root_joint"
#: Name of the root link that ``floating_base=True`` adds (``world_1``, ``world_2``, ...
#: when the file already has a link of this name).
FLOATING_BASE_ROOT = "world"


class URDFWarning(UserWarning):
    """kinetree read a URDF leniently; the message says how it interpreted the file."""


_MIMIC_MODES = ("warn", "strict")

_SUPPORTED = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar", "spherical")
# Joints with one coordinate: the ones a <mimic> may name and follow.
_ONE_COORDINATE = ("revolute", "continuous", "prismatic")
_SEVERAL_COORDINATES = ("floating", "planar", "spherical")
# URDF joint type -> the builder's, where they differ.
_BUILDER_TYPE = {"floating": "free", "spherical": "ball"}

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


def load_urdf(
    path_or_text: str | os.PathLike[str],
    *,
    name: str | None = None,
    package_dirs: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None = None,
    mimic: str = "warn",
    meshes: bool = True,
    floating_base: bool = False,
) -> Model:
    """Load a URDF file (or a URDF string starting with ``<``) into a :class:`Model`.

    ``name``: the model's name (default: the ``<robot>`` name). ``package_dirs``: folders
    (one or a list) where ``package://`` mesh paths are looked up first (see the module
    docstring for the other places). ``mimic``: ``"warn"`` loads a ``<mimic>`` that names
    a missing joint as an independent joint, with a :class:`URDFWarning`; ``"strict"``
    raises :class:`~kinetree.errors.ModelStructureError`. ``meshes``: read mesh files
    (vertices and faces, through trimesh); False keeps only their paths.
    ``floating_base``: add a free joint :data:`FLOATING_BASE_JOINT` (``"root_joint"``)
    from a new root link :data:`FLOATING_BASE_ROOT` (``"world"``) to the file's root
    link, so the robot's base moves freely (7 more coordinates first in ``q``: position
    [m] then a unit quaternion w first; 6 more DoF). The base pose at
    ``q[model.q_slice("root_joint")] = (0, 0, 0, 1, 0, 0, 0)`` is the identity, where
    every frame is where the fixed-base model puts it.
    """
    import yourdfpy

    if name is not None and (not isinstance(name, str) or not name):
        raise InvalidValueError(f"load_urdf: name must be a non-empty string or None, got {name!r}")
    if not isinstance(floating_base, (bool, np.bool_)):
        raise InvalidValueError(
            f"load_urdf: floating_base must be True or False, got {floating_base!r}"
        )
    if mimic not in _MIMIC_MODES:
        raise InvalidValueError(
            f"load_urdf: mimic must be one of {', '.join(_MIMIC_MODES)}, got {mimic!r}"
        )
    dirs = _package_dirs(package_dirs)
    base: Path | None = None
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
            text = decode_xml(p.read_bytes(), source)
        except OSError as exc:
            raise FileFormatError(f"cannot read URDF file {source}: {exc.strerror}") from None
        base = p.resolve().parent
    stripped = text.lstrip("\ufeff \t\r\n")
    lead = text[: len(text) - len(stripped)]
    if lead.strip("\ufeff") and stripped.startswith("<?xml"):
        warn_outside(
            f"{source}: whitespace before the XML declaration '<?xml' (not allowed by XML); "
            "kinetree skipped it",
            URDFWarning,
        )
    try:
        root = ET.fromstring(stripped)
    except ET.ParseError as exc:
        end = stripped.rfind("</robot>") + len("</robot>")
        try:
            if end < len("</robot>") or not stripped[end:].strip():
                raise ET.ParseError(str(exc))
            root = ET.fromstring(stripped[:end])
        except ET.ParseError:
            raise FileFormatError(f"{source}: not well-formed XML: {exc}") from None
        warn_outside(
            f"{source}: characters after </robot> ({exc}); kinetree ignored them", URDFWarning
        )
    kinematic = _kinematic_part(root, source)
    # yourdfpy logs what it finds odd; the file's problems are ours to report.
    logger = logging.getLogger("yourdfpy")
    was_disabled, logger.disabled = logger.disabled, True
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
    finally:
        logger.disabled = was_disabled
    geometry = _geometry(root, source, _Finder(base, dirs), meshes)
    return _to_model(
        robot,
        name or robot.robot.name or Path(source).stem,
        source,
        mimic,
        geometry,
        floating_base=bool(floating_base),
        full=root,
    )


# --- checking the XML ------------------------------------------------------------------


def _kinematic_part(root: ET.Element, source: str) -> ET.Element:
    """A ``<robot>`` with only what kinematics reads, every part of it checked."""

    def bad(message: str) -> FileFormatError:
        return FileFormatError(f"{source}: invalid URDF: {message}")

    if root.tag != "robot":
        hint = " (this is MJCF, MuJoCo's format, not supported yet)" if root.tag == "mujoco" else ""
        raise bad(f"the root element is <{root.tag}>, expected <robot>{hint}")
    robot_name = root.get("name")
    if not robot_name:  # Pinocchio refuses it too
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
                if numbers is None and tag in ("origin", "limit"):
                    numbers = _lenient_numbers(value, count)
                    if numbers is not None:
                        value = " ".join(repr(v) for v in numbers)
                        warn_outside(
                            f"{source}: {owner}: <{tag}> attribute {attr}={part.get(attr)!r} is "
                            f"not {count} number(s) separated by spaces; kinetree reads it as "
                            f"{value!r} (as pybullet does)",
                            URDFWarning,
                        )
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


_NUMBER_PREFIX = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?inf", re.I)


def _lenient_numbers(text: str, count: int) -> list[float] | None:
    """The first ``count`` numbers of ``text`` read as C's ``strtod`` would (pybullet):
    separators may be commas, a token's trailing junk ("-1.57.") is dropped, extra
    numbers are ignored. None when fewer than ``count`` tokens start with a number."""
    numbers = []
    for token in text.replace(",", " ").split():
        match = _NUMBER_PREFIX.match(token)
        if match is None:
            return None
        numbers.append(float(match.group()))
    return numbers[:count] if len(numbers) >= count else None


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


def _to_model(
    robot: object,
    name: str,
    source: str,
    mimic_mode: str = "warn",
    geometry: dict[str, list[Geometry]] | None = None,
    *,
    floating_base: bool = False,
    full: ET.Element | None = None,
) -> Model:
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
    for j in joints:
        if j.type not in _SUPPORTED:
            raise UnsupportedError(
                f"{source}: joint {j.name!r} has type {j.type!r}; "
                f"supported joint types are: {', '.join(_SUPPORTED)}"
            )
    root = roots[0]
    if floating_base:
        if FLOATING_BASE_JOINT in {j.name for j in joints}:
            raise ModelStructureError(
                f"{source}: floating_base=True adds a joint {FLOATING_BASE_JOINT!r}, and the "
                "file already has a joint of that name"
            )
    with _in_file(source):
        b = ModelBuilder(name, root=root)
    b.default_end_effectors = "tips"
    by_name = {j.name: j for j in joints}
    for j in joints:
        origin = np.eye(4) if j.origin is None else np.asarray(j.origin, dtype=float)
        axis = np.array([1.0, 0.0, 0.0]) if j.axis is None else np.asarray(j.axis, dtype=float)
        limits = None
        if j.type in ("revolute", "prismatic") and j.limit is not None:
            # URDF spec: a missing lower or upper attribute defaults to 0.
            lo = 0.0 if j.limit.lower is None else float(j.limit.lower)
            hi = 0.0 if j.limit.upper is None else float(j.limit.upper)
            limits = (lo, hi)
            if lo > hi:
                warn_outside(
                    f"{source}: joint {j.name!r}: <limit> lower={lo:g} > upper={hi:g}; kinetree "
                    "reads it as no limit (as pybullet does)",
                    URDFWarning,
                )
                limits = None
        mimic = None
        if j.mimic is not None and j.type in _SEVERAL_COORDINATES:
            warn_outside(
                f"{source}: joint {j.name!r}: a {j.type} joint has several coordinates and "
                f"cannot mimic {j.mimic.joint!r}; kinetree ignores its <mimic>",
                URDFWarning,
            )
        elif j.mimic is not None and j.type != "fixed":
            mul = 1.0 if j.mimic.multiplier is None else float(j.mimic.multiplier)
            off = 0.0 if j.mimic.offset is None else float(j.mimic.offset)
            mimic = (j.mimic.joint, mul, off)
            src = by_name.get(j.mimic.joint)
            if src is None or src.type not in _ONE_COORDINATE:
                what = "no joint" if src is None else f"a {src.type} joint"
                message = (
                    f"{source}: joint {j.name!r}: <mimic joint={j.mimic.joint!r}> names {what}"
                )
                if mimic_mode == "strict":
                    raise ModelStructureError(
                        f"{message}; joints are: {_listing([k.name for k in joints])}"
                    )
                warn_outside(
                    f"{message}; kinetree loads {j.name!r} as an independent joint", URDFWarning
                )
                mimic = None
        with _in_file(source):
            b.add_joint(
                j.name,
                j.parent,
                j.child,
                type=_BUILDER_TYPE.get(j.type, j.type),
                axis=axis if j.type not in ("fixed", "floating", "spherical") else "z",
                origin=origin,
                limits=limits,
                mimic=mimic,
            )
    b.metadata["source"] = source
    for link, shapes in (geometry or {}).items():
        for shape in shapes:
            b.add_geometry(link, shape)
    with _in_file(source):
        if full is not None:
            _mass_and_speed(b, full, source)
        model = b.build()
    # The one way to a free base (the same node layout as every other loader's).
    if floating_base:
        return model.with_floating_base(FLOATING_BASE_JOINT)  # its root: "world" or world_1...
    return model


def _mass_and_speed(b: ModelBuilder, root: ET.Element, source: str) -> None:
    """Link masses and centres of mass (``<inertial>``: ``<mass value>`` and ``<origin
    xyz>``; the inertia tensor is not used) and joint speed limits (``<limit velocity>``
    of one-coordinate joints without ``<mimic>``; 0 or missing: none) into the builder.
    Read from the whole file, after the kinematics: a value that is not a finite
    number >= 0 (mass) or > 0 (speed) is skipped with a warning, never an error."""

    def number(text: str | None) -> float | None:
        try:
            return float(text) if text is not None else None
        except ValueError:
            return float("nan")

    for el in root.iter("link"):
        inertial = el.find("inertial")
        name = el.get("name")
        if inertial is None or not name:
            continue
        mass_el = inertial.find("mass")
        mass = number(mass_el.get("value")) if mass_el is not None else None
        origin = inertial.find("origin")
        xyz = (origin.get("xyz") if origin is not None else None) or "0 0 0"
        com = _numbers(xyz, 3)
        if mass is None:
            continue
        if (
            com is None
            or not (math.isfinite(mass) and mass >= 0.0)
            or not all(math.isfinite(v) for v in com)
        ):
            warn_outside(
                f"{source}: link {name!r}: <inertial> mass {mass:g} or origin "
                f"xyz={xyz!r} is not usable; kinetree gives the link no mass",
                URDFWarning,
            )
            continue
        b.set_inertial(name, mass, com)
    for el in root.iter("joint"):
        limit = el.find("limit")
        name = el.get("name")
        if (
            limit is None
            or not name
            or el.get("type") not in _ONE_COORDINATE
            or el.find("mimic") is not None
        ):
            continue
        v = number(limit.get("velocity"))
        if v is None or v == 0.0 or v == float("inf"):
            continue
        if not v > 0.0:
            warn_outside(
                f"{source}: joint {name!r}: <limit velocity={limit.get('velocity')!r}> is not "
                "a number > 0; kinetree reads it as no speed limit",
                URDFWarning,
            )
            continue
        b.set_velocity_limit(name, v)


def _listing(names: list[str], limit: int = 60) -> str:
    return ", ".join(names[:limit]) + (", ..." if len(names) > limit else "")


# --- geometry --------------------------------------------------------------------------

_SHAPES = ("box", "sphere", "cylinder", "capsule", "mesh")


def _geometry(
    root: ET.Element, source: str, finder: _Finder, meshes: bool
) -> dict[str, list[Geometry]]:
    """Each link's shapes; a shape kinetree cannot read is skipped with a warning, and
    mesh files that are not found are named in one warning for the whole file."""
    out: dict[str, list[Geometry]] = {}
    missing: list[str] = []
    n_meshes = 0
    for link in root.iter("link"):
        link_name = link.get("name")
        if not link_name:
            continue  # refused by _kinematic_part already
        for kind in ("visual", "collision"):
            for number, el in enumerate(link.findall(kind), start=1):
                where = f"{source}: link {link_name!r}: <{kind}> number {number}"
                try:
                    shape = _shape(el, kind, where, finder, meshes)
                except _Skip as exc:
                    warn_outside(f"{where}: {exc}; skipped", GeometryWarning)
                    continue
                if isinstance(shape, Mesh):
                    n_meshes += 1
                    if shape.file is None and meshes:
                        missing.append(shape.path)
                if shape is not None:
                    out.setdefault(link_name, []).append(shape)
    if missing:
        _warn_missing(source, missing, n_meshes, finder)
    return out


def _warn_missing(source: str, missing: list[str], n_meshes: int, finder: _Finder) -> None:
    """One warning for every mesh of a file that is not found."""
    distinct = list(dict.fromkeys(missing))
    shown = ", ".join(repr(p) for p in distinct[:2])
    more = f" and {len(distinct) - 2} more" if len(distinct) > 2 else ""
    warn_outside(
        f"{source}: {len(missing)} of {n_meshes} meshes not found ({shown}{more}; looked "
        f"in {finder.describe(distinct[0])}); the model loads without them: pass "
        "package_dirs= to say where they are",
        GeometryWarning,
    )


class _Skip(Exception):
    """A shape that cannot be read (the message says why)."""


def _floats(el: ET.Element, attr: str, count: int, default: str | None = None) -> list[float]:
    text = el.get(attr, default)
    numbers = None if text is None else _numbers(text, count)
    if numbers is None or not all(math.isfinite(v) for v in numbers):
        want = "a finite number" if count == 1 else f"{count} finite numbers"
        raise _Skip(f"<{el.tag}> attribute {attr}={text!r} must be {want}")
    return numbers


def _shape(el: ET.Element, kind: str, where: str, finder: _Finder, meshes: bool) -> Geometry | None:
    geom = el.find("geometry")
    if geom is None or len(geom) == 0:
        raise _Skip("no shape in <geometry>")
    shape = geom[0]
    T = np.eye(4)
    origin = el.find("origin")
    if origin is not None:
        T[:3, 3] = _floats(origin, "xyz", 3, "0 0 0")
        T[:3, :3] = rpy_to_matrix(_floats(origin, "rpy", 3, "0 0 0"))
    common = {"origin": T, "kind": kind, "name": el.get("name")}
    tag = shape.tag
    if tag == "box":
        return Box(tuple(_floats(shape, "size", 3)), **common)  # type: ignore[arg-type]
    if tag == "sphere":
        return Sphere(_floats(shape, "radius", 1)[0], **common)  # type: ignore[arg-type]
    if tag in ("cylinder", "capsule"):
        cls = Cylinder if tag == "cylinder" else Capsule
        r, length = _floats(shape, "radius", 1)[0], _floats(shape, "length", 1)[0]
        return cls(r, length, **common)  # type: ignore[arg-type]
    if tag == "mesh":
        path = shape.get("filename")
        if not path:
            raise _Skip("<mesh> has no 'filename'")
        scale_text = shape.get("scale", "1 1 1")
        scale = _numbers(scale_text, 3) or _numbers(scale_text, 1)
        if scale is None or not all(math.isfinite(v) for v in scale):
            raise _Skip(f"<mesh> attribute scale={scale_text!r} must be 1 or 3 finite numbers")
        scale3 = (scale * 3)[:3]
        # The file is looked up now and read when first used (Mesh(lazy=True));
        # meshes=False: never read, and a missing file is not worth a warning.
        return Mesh(
            path,
            (scale3[0], scale3[1], scale3[2]),
            file=finder.find(path),
            lazy=meshes,
            **common,  # type: ignore[arg-type]
        )
    known = ", ".join(f"<{t}>" for t in _SHAPES)
    raise _Skip(f"shape <{tag}> is not supported (kinetree reads {known})")


def _package_dirs(value: object) -> list[Path]:
    if value is None:
        return []
    items = [value] if isinstance(value, (str, os.PathLike)) else value
    if not isinstance(items, Sequence):
        raise InvalidValueError(
            f"load_urdf: package_dirs must be a folder or a list of folders, got {value!r}"
        )
    what = "load_urdf: package_dirs must hold folders (str or os.PathLike)"
    return [as_path(v, what) for v in items]


def _installed_robot_dirs() -> list[Path]:
    """Robot folders of installed description packages (found without importing them):
    example-robot-data's (:func:`~kinetree.io.robot_packages.example_robot_data`, and the
    folder two above it, since some files name ``package://example-robot-data/robots/...``)
    and pybullet_data's."""
    import importlib.util

    from .robot_packages import example_robot_data

    robots = example_robot_data()
    out = [] if robots is None else [robots, robots.parent.parent]
    try:
        spec = importlib.util.find_spec("pybullet_data")
    except (ImportError, ValueError):
        spec = None
    out += [Path(loc) for loc in ((spec.submodule_search_locations or []) if spec else [])]
    return [d for d in out if d.is_dir()]


class _Finder:
    """Looks up the file a mesh path names (see the module docstring for the order)."""

    def __init__(self, base: Path | None, package_dirs: list[Path]):
        self.base = base
        self.package_dirs = package_dirs
        self._roots: list[Path] | None = None

    def roots(self) -> list[Path]:
        """Folders that may hold packages, in lookup order (computed once)."""
        if self._roots is None:
            roots = list(self.package_dirs)
            if self.base is not None:
                roots += [self.base, *self.base.parents]
            ros = os.environ.get("ROS_PACKAGE_PATH", "")
            roots += [Path(p) for p in ros.split(os.pathsep) if p]
            roots += _installed_robot_dirs()
            self._roots = roots
        return self._roots

    def find(self, uri: str) -> Path | None:
        return resolve_mesh_path(uri, self.base, self.roots())

    def describe(self, uri: str) -> str:
        if uri.startswith("package://"):
            shown = [str(r) for r in self.roots()[:6]]
            more = len(self.roots()) - len(shown)
            return ", ".join(shown) + (f" and {more} more" if more > 0 else "")
        return str(self.base) if self.base is not None else "the current folder"


def _is_file(p: Path) -> bool:
    """``p.is_file()``, False for any path the OS refuses (a name too long, say)."""
    try:
        return p.is_file()
    except (OSError, ValueError):
        return False


def _is_dir(p: Path) -> bool:
    try:
        return p.is_dir()
    except (OSError, ValueError):
        return False


def _glob(root: Path, pattern: str) -> list[Path]:
    if len(pattern) > 1024 or pattern.count("/") > 32:  # no real package path is this deep
        return []
    try:
        return sorted(root.glob(pattern))
    except (OSError, ValueError):
        return []


def resolve_mesh_path(uri: str, base: Path | None, roots: Sequence[Path]) -> Path | None:
    """The file a URDF mesh path names, or None when it is in none of the places.

    ``package://pkg/rest``: ``root/pkg/rest`` or, for a root named ``pkg``,
    ``root/rest``, for each root in order; for a folder holding packages one level down
    (``root/*/pkg/rest``) as ROS workspaces do. ``file://path`` and plain paths: absolute,
    or relative to ``base`` (the URDF's folder) and then to each root.
    """
    if uri.startswith("package://"):
        pkg, _, rest = uri[len("package://") :].lstrip("/").partition("/")
        if not pkg:
            return None
        for root in roots:
            for candidate in (root / pkg / rest, root / rest if root.name == pkg else None):
                if candidate is not None and _is_file(candidate):
                    return candidate
        for root in roots:
            try:
                hits = _glob(root, f"*/{pkg}/{rest}") if _is_dir(root) else []
            except (OSError, ValueError):
                hits = []
            hits = [h for h in hits if _is_file(h)]
            if hits:
                return hits[0]
        return None
    path = uri[len("file://") :] if uri.startswith("file://") else uri
    p = Path(path)
    if p.is_absolute():
        return p if _is_file(p) else None
    for folder in ([base] if base is not None else []) + list(roots):
        if _is_file(folder / p):
            return (folder / p).resolve()
    return None
