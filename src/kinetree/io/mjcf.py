"""MJCF (MuJoCo XML) -> Model, compiled by MuJoCo itself (the ``mjcf`` extra: ``mujoco``).

Long because it maps every part of a compiled MuJoCo model that kinematics and geometry
need (bodies, the four joint types with their anchors and references, sites, mocap
bodies, geoms, equality constraints), names what has no name, checks that kinetree's
``q`` is MuJoCo's ``qpos``, and turns MuJoCo's messages into kinetree's errors and warnings.

The file is compiled with ``mujoco.MjModel.from_xml_path``, so includes, ``<default>``
classes, ``childclass``, ``<frame>``, ``<compiler angle eulerseq ...>`` and every
orientation form (``quat``, ``axisangle``, ``euler``, ``xyaxes``, ``zaxis``) mean
exactly what they mean to MuJoCo. The compiled model is then walked body by body
(:func:`from_mujoco`), reproducing ``mj_kinematics``:

- a body's frame is its parent's frame times ``(body_pos, body_quat)``, then each of
  its joints in order: a hinge rotates about ``jnt_axis`` through the anchor ``jnt_pos``
  by ``qpos - qpos0`` (``qpos0`` is the joint's ``ref``; kinetree stores it as the
  joint's ``offset = -ref``), a slide translates along ``jnt_axis`` by ``qpos - qpos0``,
  a ball rotates about the anchor by the unit quaternion ``qpos[adr:adr+4]``
  (w, x, y, z), and a free joint sets the body's world pose from ``qpos[adr:adr+7]``
  (position [m], then the quaternion; ``body_pos``/``body_quat`` only give ``qpos0``);
- kinetree moves a node at its own origin, so a joint whose anchor is off the body
  origin gets an inner node at the anchor (the frame before it, translated by the
  anchor), and the next joint, or a fixed node for the body, translates back. A body
  with several joints gets one such node per joint but the last. These nodes are
  hidden (not in ``frame_names``, never end effectors), named ``f"{body}#{joint}"``
  (their fixed joints ``f"{body}#anchor"``), never a body's or a site's name.

What becomes what:

- Every body is a frame named as in MuJoCo; body 0 is the root ``"world"``. An unnamed
  body ``i`` is ``f"body_{i}"``, an unnamed joint ``j`` is ``f"joint_{j}"`` and an
  unnamed site ``k`` is ``f"site_{k}"`` (MuJoCo's ids; ``_2``, ``_3`` ... appended
  should the name be taken).
- Every site is a frame fixed to its body. MuJoCo keeps bodies and sites in separate
  namespaces, kinetree has one: a site named like a body (common: a ``torso`` body
  with a ``torso`` site) becomes ``f"{name}_site"``. ``model.metadata["bodies"]``,
  ``["sites"]`` and ``["joints"]`` give kinetree's name of each MuJoCo body, site and
  joint, by MuJoCo id.
- Joints: hinge -> ``revolute`` (``continuous`` when not limited), slide ->
  ``prismatic``, ball -> ``ball`` (``limits=(0, range[1])`` when limited), free ->
  ``free``. ``q`` is MuJoCo's ``qpos``, coordinate for coordinate (checked on every
  load), and ``model.q_neutral`` is ``qpos0``, also where it lies outside a joint's
  range (a ``ref`` outside it, or 0).
- A mocap body is fixed at its model pose (MuJoCo moves it through
  ``mjData.mocap_pos/quat``, not ``qpos``); they are listed in
  ``model.metadata["mocap_bodies"]``.
- Geoms (:mod:`kinetree.geometry`): sphere, capsule, cylinder and box as shapes,
  meshes with MuJoCo's compiled vertices and faces (already scaled and placed in the
  geom frame the shape's ``origin`` gives; ``file`` is the mesh file MuJoCo read, which
  MuJoCo may have re-centred, so use the vertices), ellipsoids as a triangle mesh of
  the ellipsoid (``Mesh`` with ``path=""``). Planes, height fields and SDF geoms are
  skipped with one :class:`~kinetree.geometry.GeometryWarning`. Kind, by MuJoCo's
  conventions: a geom that takes part in contacts (``contype`` or ``conaffinity``
  non-zero) is ``"collision"``, and also ``"visual"`` when its ``group`` is 0, 1 or 2
  (the groups MuJoCo draws by default); a geom without contacts is ``"visual"``.
- Equality constraints of type joint (``<equality><joint>``) are listed in
  ``model.metadata["joint_equalities"]`` (dicts ``joint``, ``source`` (None for a
  constant), ``polycoef`` (5 numbers), ``active``, ``coupled``). The active linear ones
  become IK couplings (:attr:`Model.couplings`): both joints keep their coordinate in
  ``q`` (``q`` stays ``qpos``), IK moves the source and writes the tied joint, so every
  IK result satisfies them. Nonlinear or inactive ones are not enforced (an
  :class:`MJCFWarning` says so).
- Closed chains, ``<equality><connect>`` and ``<weld>`` (between bodies or sites), become
  :class:`~kinetree.equality.Equality` records on :attr:`Model.equalities` (inactive ones
  too, marked so). FK reads the tree as it is; IK keeps the active ones as constraints of
  the highest priority (:mod:`kinetree.ik.methods.closed_chains`; methods that cannot
  refuse them). A weld with ``torquescale="0"`` keeps no turn and becomes a connect.
  Tendons and the other equality constraints (``tendon``, ``flex``, ``distance``) are
  ignored, with one :class:`MJCFWarning` listing them. Actuators, sensors, contacts, inertias and
  the like are never looked at.

MuJoCo refuses a moving body without mass or inertia, an inertia that breaks the
triangle inequality, or a mesh without volume whose inertia it would compute, all of
which matter to simulation only: such a file is compiled again with tiny lower bounds
(``<compiler boundmass boundinertia balanceinertia>``; meshes as shells for the volume
error), which change no pose, and loads with an :class:`MJCFWarning`.

Errors: every one is a :class:`~kinetree.errors.KinetreeError`:
:class:`~kinetree.errors.FileFormatError` for a missing file and for what MuJoCo's
compiler refuses (its message, with the file name),
:class:`~kinetree.errors.UnsupportedError` without ``mujoco`` installed (``pip install
kinetree[mjcf]``) and for a URDF file (a ``<robot>`` root: use
:func:`kinetree.io.load_urdf`). A body or site whose orientation compiles to a zero or
non-finite quaternion is a :class:`~kinetree.errors.FileFormatError` (such a geom is
skipped). MuJoCo's own compiler warnings come as
:class:`MJCFWarning`; nothing is printed and no ``MUJOCO_LOG.TXT`` is written.
"""

from __future__ import annotations

import dataclasses
import math
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .._warnings import warn_outside
from ..builder import ModelBuilder
from ..equality import Equality
from ..errors import (
    FileFormatError,
    InvalidValueError,
    KinetreeError,
    ModelStructureError,
    UnsupportedError,
)
from ..geometry import Box, Capsule, Cylinder, Geometry, GeometryWarning, Mesh, Sphere
from ..model import Model
from ._files import as_path, xml_root

__all__ = ["MJCFWarning", "from_mujoco", "load_mjcf"]

INSTALL_HINT = "pip install kinetree[mjcf]"

# MuJoCo's enum values (mjtJoint, mjtGeom, mjtEq), fixed by its ABI (tests compare them).
_FREE, _BALL, _SLIDE, _HINGE = 0, 1, 2, 3
_PLANE, _HFIELD, _SPHERE, _CAPSULE, _ELLIPSOID, _CYLINDER, _BOX, _MESH, _SDF = range(9)
_GEOM_NAMES = ("plane", "hfield", "sphere", "capsule", "ellipsoid", "cylinder", "box", "mesh")
_EQ_CONNECT, _EQ_WELD, _EQ_JOINT = 0, 1, 2
_OBJ_SITE = 6  # mjtObj: an equality between sites (else between bodies)
_EQ_NAMES = ("connect", "weld", "joint", "tendon", "flex", "flexvert", "flexstrain", "distance")
#: Groups MuJoCo's viewer draws by default: a colliding geom in one of them is also visual.
_DRAWN_GROUPS = (0, 1, 2)

# mju_user_warning is process-wide: one load at a time swaps it.
_WARNING_HOOK = threading.Lock()


class MJCFWarning(UserWarning):
    """Something in an MJCF file that kinetree ignores or does not enforce (the message says
    what), or a warning of MuJoCo's compiler."""


def _mujoco() -> Any:
    """The ``mujoco`` module, or UnsupportedError saying how to install it."""
    try:
        import mujoco
    except ImportError:
        raise UnsupportedError(
            f"loading MJCF (MuJoCo XML) needs the mujoco package: {INSTALL_HINT}"
        ) from None
    return mujoco


def load_mjcf(
    path_or_text: str | os.PathLike[str],
    *,
    name: str | None = None,
    meshes: bool = True,
) -> Model:
    """Load an MJCF file (or MJCF text starting with ``<``) through MuJoCo's compiler.

    ``name``: the model's name (default: the ``<mujoco model=...>`` name, else the file's
    stem). ``meshes``: keep the vertices [m] and faces of mesh geoms; False keeps only
    their file paths. See the module docstring for what becomes what, and
    :func:`from_mujoco` for an already compiled ``mujoco.MjModel``.

    Raises :class:`~kinetree.errors.FileFormatError` for a missing file or one MuJoCo
    refuses, :class:`~kinetree.errors.UnsupportedError` for a URDF (``<robot>`` root) or
    when ``mujoco`` is not installed.
    """
    if name is not None and (not isinstance(name, str) or not name):
        raise InvalidValueError(f"load_mjcf: name must be a non-empty string or None, got {name!r}")
    if isinstance(path_or_text, str) and path_or_text.lstrip().startswith("<"):
        text: str | None = path_or_text
        source = "<string>"
        root = _text_root(path_or_text)
    else:
        p = as_path(
            path_or_text,
            "load_mjcf needs the path of an MJCF file (str or os.PathLike) "
            "or MJCF text starting with '<'",
        )
        text, source = None, str(p)
        if not p.is_file():
            raise FileFormatError(
                f"MJCF file {source!r} does not exist"
                if not p.exists()
                else f"MJCF file {source!r} is not a file"
            )
        root = xml_root(p)
    if root == "robot":
        raise UnsupportedError(
            f"{source}: this is URDF (a <robot> root element), not MJCF; "
            "load it with kinetree.io.load_urdf(path)"
        )
    mujoco = _mujoco()
    with _quiet(mujoco) as messages:
        m = _compile(mujoco, text, source)
    for msg in messages:
        warn_outside(f"{source}: {msg}", MJCFWarning)
    default = Path(source).stem if text is None else "mjcf"
    return from_mujoco(m, name=name, source=source, meshes=meshes, default_name=default)


#: MuJoCo refuses moving bodies without mass or inertia, a simulation concern: such a
#: file is compiled again with these lower bounds [kg, kg m^2] (``<compiler boundmass
#: boundinertia>``), which change no pose.
_BOUND_MASS, _BOUND_INERTIA = 1e-9, 1e-12
#: MuJoCo's compiler errors about masses and inertias alone, which kinematics never read.
_INERTIA_ERRORS = (
    "mass and inertia of moving bodies",
    "mesh volume is too small",
    "inertia must satisfy",
)


def _compile(mujoco: Any, text: str | None, source: str) -> Any:
    """The compiled ``mujoco.MjModel``; MuJoCo's errors become FileFormatError."""

    def refused(exc: Exception) -> FileFormatError:
        message = " ".join(str(exc).split())
        return FileFormatError(f"{source}: MuJoCo cannot compile this file: {message}")

    try:
        if text is not None:
            return mujoco.MjModel.from_xml_string(text)
        return mujoco.MjModel.from_xml_path(source)
    except Exception as exc:  # MuJoCo raises ValueError with its compiler's message
        if not any(e in str(exc) for e in _INERTIA_ERRORS) or not hasattr(mujoco, "MjSpec"):
            raise refused(exc) from None
        first = exc
    m = _compile_with_bounds(mujoco, text, source, shells="mesh volume" in str(first))
    if m is None:
        raise refused(first)
    warn_outside(
        f"{source}: MuJoCo would not simulate this file ({' '.join(str(first).split())}); "
        "kinetree loaded its kinematics, which masses and inertias do not change (the masses "
        "in model.inertials come from a relaxed compile: lower bounds, balanced inertias"
        f"{', meshes as shells' if 'mesh volume' in str(first) else ''})",
        MJCFWarning,
    )
    return m


def _compile_with_bounds(mujoco: Any, text: str | None, source: str, shells: bool) -> Any:
    """The model compiled with the mass bounds and balanced inertias (and, with
    ``shells``, every mesh's inertia from its surface: a flat or open mesh has no volume),
    or None when MuJoCo still refuses it."""
    if text is not None:
        parsers = [lambda: mujoco.MjSpec.from_string(text)]
    else:
        path = Path(source)

        def from_text() -> Any:  # a file MuJoCo 4 has no reader for (".mjcf"): no includes
            spec = mujoco.MjSpec.from_string(path.read_text(encoding="utf-8"))
            spec.modelfiledir = str(path.resolve().parent) + os.sep
            return spec

        # MuJoCo 4 picks MjSpec.from_file's reader by the suffix (".xml" only)
        parsers = [lambda: mujoco.MjSpec.from_file(source), from_text]
    for parse in parsers:
        try:
            spec = parse()
            spec.compiler.boundmass = max(float(spec.compiler.boundmass), _BOUND_MASS)
            spec.compiler.boundinertia = max(float(spec.compiler.boundinertia), _BOUND_INERTIA)
            spec.compiler.balanceinertia = True
            if shells:
                for mesh in spec.meshes:
                    mesh.inertia = mujoco.mjtMeshInertia.mjMESH_INERTIA_SHELL
            return spec.compile()
        except Exception:
            continue
    return None


@contextmanager
def _quiet(mujoco: Any) -> Iterator[list[str]]:
    """Collect MuJoCo's warnings instead of letting it print them and write MUJOCO_LOG.TXT."""
    messages: list[str] = []
    with _WARNING_HOOK:
        previous = mujoco.get_mju_user_warning()
        mujoco.set_mju_user_warning(
            lambda msg: messages.append("MuJoCo's compiler warned: " + " ".join(str(msg).split()))
        )
        try:
            yield messages
        finally:
            mujoco.set_mju_user_warning(previous)


def _text_root(text: str) -> str | None:
    """The root tag of XML text (None when it cannot be read)."""
    import io
    import xml.etree.ElementTree as ET

    try:
        for _event, element in ET.iterparse(io.StringIO(text), events=("start",)):
            return str(element.tag)
    except Exception:
        return None
    return None


# --- the compiled model -> Model -----------------------------------------------------------


@dataclass
class _Names:
    """kinetree's name of every MuJoCo body, site and joint (by MuJoCo id)."""

    bodies: list[str]
    sites: list[str]
    joints: list[str]
    taken: set[str] = field(default_factory=set)  # every frame name so far
    joints_taken: set[str] = field(default_factory=set)

    def frame(self, base: str) -> str:
        """A new frame name: ``base``, or ``base_2``, ``base_3`` ... if taken."""
        out = _unique(base, self.taken)
        self.taken.add(out)
        return out

    def joint(self, base: str) -> str:
        """A new joint name: ``base``, or ``base_2``, ... if taken."""
        out = _unique(base, self.joints_taken)
        self.joints_taken.add(out)
        return out


def _unique(base: str, taken: set[str]) -> str:
    if base not in taken:
        return base
    k = 2
    while f"{base}_{k}" in taken:
        k += 1
    return f"{base}_{k}"


def _names_of(m: Any, adr: np.ndarray, n: int) -> list[str]:
    """Names of ``n`` objects from their addresses in ``m.names`` ("" when unnamed)."""
    blob = bytes(m.names)
    out = []
    for i in range(n):
        start = int(adr[i])
        end = blob.find(b"\0", start)
        out.append(blob[start : end if end >= 0 else len(blob)].decode("utf-8", "replace"))
    return out


def _name_everything(m: Any) -> _Names:
    bodies = _names_of(m, m.name_bodyadr, m.nbody)
    sites = _names_of(m, m.name_siteadr, m.nsite)
    joints = _names_of(m, m.name_jntadr, m.njnt)
    names = _Names(bodies=[""] * m.nbody, sites=[""] * m.nsite, joints=[""] * m.njnt)
    bodies[0] = "world"
    # Named bodies keep their names; named sites keep theirs unless a body has it.
    names.taken = {b for b in bodies if b} | {s for s in sites if s}
    for i, b in enumerate(bodies):
        names.bodies[i] = b
    body_set = {b for b in bodies if b}
    for i, b in enumerate(bodies):
        if not b:
            names.bodies[i] = names.frame(f"body_{i}")
    for k, s in enumerate(sites):
        if s and s not in body_set:
            names.sites[k] = s
    for k, s in enumerate(sites):
        if not s:
            names.sites[k] = names.frame(f"site_{k}")
        elif s in body_set:
            names.sites[k] = names.frame(f"{s}_site")
    names.joints_taken = {j for j in joints if j}
    for j, jn in enumerate(joints):
        names.joints[j] = jn if jn else names.joint(f"joint_{j}")
    for j in range(m.njnt):  # the builder's hidden nodes of a free joint
        if int(m.jnt_type[j]) == _FREE:
            body = names.bodies[int(m.jnt_bodyid[j])]
            names.taken |= {f"{body}#{names.joints[j]}_{c}" for c in ("x", "y", "z")}
            names.joints_taken |= {f"{names.joints[j]}_{c}" for c in ("x", "y", "z", "q")}
    return names


def _pose(pos: np.ndarray, quat: np.ndarray, what: str) -> np.ndarray:
    """4x4 pose from a position [m] and a quaternion (w, x, y, z), normalised; ``what``
    names the element for the FileFormatError raised on a quaternion that is zero or not
    finite (MuJoCo's compiler passes ``quat="1 0 1e308 0"`` on as zero)."""
    q = np.array(quat, dtype=float)
    big = float(np.max(np.abs(q))) if np.all(np.isfinite(q)) else math.nan
    if not big > 0.0:
        raise FileFormatError(
            f"{what}: its orientation compiles to the quaternion {q.tolist()}, not a rotation"
        )
    if not 1e-100 < big < 1e100:
        q /= big
    w, x, y, z = (float(v) for v in q)
    n = math.sqrt(w * w + x * x + y * y + z * z)
    w, x, y, z = w / n, x / n, y / n, z / n
    T = np.eye(4)
    T[:3, :3] = [
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ]
    T[:3, 3] = pos
    return T


def _unit_quaternion(q: np.ndarray) -> np.ndarray:
    """``q`` normalised; the identity for a zero or non-finite one (as mj_kinematics)."""
    q = np.array(q, dtype=float)
    big = float(np.max(np.abs(q))) if np.all(np.isfinite(q)) else 0.0
    if not big > 1e-300:
        return np.array([1.0, 0.0, 0.0, 0.0])
    q /= big
    return q / np.linalg.norm(q)


def _translation(t: np.ndarray) -> np.ndarray:
    T = np.eye(4)
    T[:3, 3] = t
    return T


def coordinate_names(joint: str, jtype: int) -> list[str]:
    """kinetree's names of the ``qpos`` coordinates of a MuJoCo joint of type ``jtype``."""
    if jtype == _FREE:
        return [f"{joint}_{c}" for c in ("x", "y", "z", "qw", "qx", "qy", "qz")]
    if jtype == _BALL:
        return [f"{joint}_{c}" for c in ("qw", "qx", "qy", "qz")]
    return [joint]


def from_mujoco(
    m: Any,
    *,
    name: str | None = None,
    source: str | None = None,
    meshes: bool = True,
    default_name: str = "mjcf",
) -> Model:
    """A :class:`Model` of a compiled ``mujoco.MjModel`` ``m`` (see the module docstring).

    ``q`` of the model is ``m``'s ``qpos`` (same length, same order, same meaning);
    ``name`` defaults to the model's MuJoCo name, else ``default_name``; ``source`` is
    recorded in ``model.metadata["source"]`` (and names the model in messages).
    """
    where = source or "<MjModel>"
    names = _name_everything(m)
    model_name = name or _names_of(m, np.array([0]), 1)[0] or default_name
    b = ModelBuilder(model_name, root="world")
    b.default_end_effectors = "tips"
    geoms, skipped = _geoms(m, names, meshes)
    mocap: list[str] = []
    neutral: dict[str, float] = {}
    parent_of = m.body_parentid
    for i in range(1, m.nbody):
        frame = names.bodies[i]
        parent = names.bodies[int(parent_of[i])]
        adr, num = int(m.body_jntadr[i]), int(m.body_jntnum[i])
        if m.body_mocapid[i] >= 0:
            mocap.append(frame)
        free = num > 0 and int(m.jnt_type[adr]) == _FREE  # the pose comes from qpos
        T_body = (
            np.eye(4) if free else _pose(m.body_pos[i], m.body_quat[i], f"{where}: body {frame!r}")
        )
        if num == 0:
            b.add_joint(names.joint(f"{frame}_fixed"), parent, frame, "fixed", origin=T_body)
        else:
            _add_body_joints(b, m, names, i, T_body, parent, adr, num, neutral, where)
    for k in range(m.nsite):
        body = names.bodies[int(m.site_bodyid[k])]
        b.add_joint(
            names.joint(f"{names.sites[k]}_fixed"),
            body,
            names.sites[k],
            "fixed",
            origin=_pose(m.site_pos[k], m.site_quat[k], f"{where}: site {names.sites[k]!r}"),
        )
    for frame, geom in geoms:
        b.add_geometry(frame, geom)
    for i in range(1, m.nbody):  # MuJoCo's compiled masses and centres (body frame)
        if float(m.body_mass[i]) > 0.0:
            b.set_inertial(names.bodies[i], float(m.body_mass[i]), np.array(m.body_ipos[i]))
    b.set_neutral(neutral)
    b.metadata.update(
        source=str(source) if source is not None else "<MjModel>",
        format="mjcf",
        bodies=tuple(names.bodies),
        sites=tuple(names.sites),
        joints=tuple(names.joints),
        mocap_bodies=tuple(mocap),
        joint_equalities=_joint_equalities(m, names),
    )
    eqs: list[dict[str, Any]] = b.metadata["joint_equalities"]  # type: ignore[assignment]
    _couple(b, m, names, eqs)
    _warn_unenforced(m, where, [q for q in eqs if not q["coupled"]])
    if skipped:
        warn_outside(
            f"{where}: kinetree has no shape for {', '.join(skipped)}; skipped", GeometryWarning
        )
    model = b.build()
    _check_qpos_order(m, model, names, where)
    # The builder clips the neutral pose into the limits; MuJoCo's qpos0 may lie outside
    # a joint's range (a hinge's ref, or 0 out of range): keep qpos0 as it is.
    model = model.with_options(q_neutral=np.array(m.qpos0, dtype=float))
    loops = _closed_chains(m, names)
    return dataclasses.replace(model, equalities=loops) if loops else model


def _add_body_joints(
    b: ModelBuilder,
    m: Any,
    names: _Names,
    body: int,
    T_body: np.ndarray,
    parent: str,
    adr: int,
    num: int,
    neutral: dict[str, float],
    where: str,
) -> None:
    """The joints of one body, in order, ending at the body's frame (see the module doc)."""
    frame = names.bodies[body]
    if int(m.jnt_type[adr]) == _FREE:
        if num != 1 or int(m.body_parentid[body]) != 0:  # MuJoCo's compiler refuses both
            raise UnsupportedError(
                f"{where}: body {frame!r}: a free joint must be its body's only joint, in a "
                "child of the world body"
            )
        jname = names.joints[adr]
        b.add_joint(jname, "world", frame, "free")
        q0 = np.array(m.qpos0[int(m.jnt_qposadr[adr]) : int(m.jnt_qposadr[adr]) + 7])
        q0[3:] = _unit_quaternion(q0[3:])
        neutral.update(zip(coordinate_names(jname, _FREE), map(float, q0)))
        return
    pending = T_body  # what the next node's origin starts with
    prev = parent
    for k in range(adr, adr + num):
        jtype = int(m.jnt_type[k])
        jname = names.joints[k]
        if jtype == _FREE:
            raise UnsupportedError(
                f"{where}: body {frame!r}: joint {jname!r} is free but not the body's only joint"
            )
        # A slide's anchor does not change its motion: no inner node for it.
        anchor = np.zeros(3) if jtype == _SLIDE else np.array(m.jnt_pos[k], dtype=float)
        at_origin = not np.any(anchor)
        last = k == adr + num - 1
        child = frame if (last and at_origin) else names.frame(f"{frame}#{jname}")
        origin = pending @ _translation(anchor) if not at_origin else pending
        qadr = int(m.jnt_qposadr[k])
        limited = bool(m.jnt_limited[k])
        lo, hi = (float(v) for v in m.jnt_range[k])
        inner = child != frame  # an anchor node: hidden, not a frame of the model
        if jtype == _BALL:
            b.add_joint(
                jname,
                prev,
                child,
                "ball",
                origin=origin,
                limits=(0.0, hi) if limited else None,
                hidden=inner,
            )
            q0 = _unit_quaternion(m.qpos0[qadr : qadr + 4])
            neutral.update(zip(coordinate_names(jname, _BALL), map(float, q0)))
        else:
            ref = float(m.qpos0[qadr])
            kind = "prismatic" if jtype == _SLIDE else ("revolute" if limited else "continuous")
            axis = np.array(m.jnt_axis[k], dtype=float)
            lim = (lo, hi) if limited else None
            b.add_joint(
                jname,
                prev,
                child,
                kind,
                axis=axis,
                origin=origin,
                limits=lim,
                offset=-ref,
                hidden=inner,
            )
            neutral[jname] = ref
        pending = _translation(-anchor) if not at_origin else np.eye(4)
        prev = child
    if prev != frame:
        b.add_joint(names.joint(f"{frame}#anchor"), prev, frame, "fixed", origin=pending)


def _check_qpos_order(m: Any, model: Model, names: _Names, where: str) -> None:
    """Raise unless kinetree's q is MuJoCo's qpos, coordinate for coordinate."""
    index = {n: i for i, n in enumerate(model.joint_names)}
    if (model.nq, model.nv) != (m.nq, m.nv):
        raise ModelStructureError(
            f"{where}: kinetree's q has {model.nq} coordinates and {model.nv} DoF, MuJoCo's "
            f"qpos {m.nq} and qvel {m.nv} (a kinetree bug: please report it with the file)"
        )
    for j in range(m.njnt):
        first = coordinate_names(names.joints[j], int(m.jnt_type[j]))[0]
        if index.get(first) != int(m.jnt_qposadr[j]):
            raise ModelStructureError(
                f"{where}: joint {names.joints[j]!r} is at q[{index.get(first)}] in kinetree "
                f"but at qpos[{int(m.jnt_qposadr[j])}] in MuJoCo (a kinetree bug: please "
                "report it with the file)"
            )


# --- equality constraints and tendons ------------------------------------------------------


def _closed_chains(m: Any, names: _Names) -> tuple[Equality, ...]:
    """Every ``connect`` and ``weld`` equality as an :class:`~kinetree.equality.Equality`,
    read as MuJoCo's ``mj_instantiateEquality`` reads ``eq_data``: between bodies, a
    connect's points are ``data[0:3]`` in body 1 and ``data[3:6]`` in body 2 (the compiler
    fills the second from ``qpos0``), a weld's are ``data[3:6]`` in body 1 and ``data[0:3]``
    in body 2 with ``R_body1 @ quat(data[6:10]) == R_body2``; between sites, the site
    frames themselves (points 0, no turn). A weld whose ``torquescale`` is 0 keeps no
    turn: it is kept as a connect."""
    out = []
    eq_names = _names_of(m, m.name_eqadr, m.neq)
    for e in range(m.neq):
        kind = int(m.eq_type[e])
        if kind not in (_EQ_CONNECT, _EQ_WELD):
            continue
        o1, o2 = int(m.eq_obj1id[e]), int(m.eq_obj2id[e])
        data = np.array(m.eq_data[e], dtype=float)
        sites = int(m.eq_objtype[e]) == _OBJ_SITE
        frames = (
            (names.sites[o1], names.sites[o2]) if sites else (names.bodies[o1], names.bodies[o2])
        )
        weld = kind == _EQ_WELD and float(data[10]) != 0.0
        rotation = np.eye(3)
        if sites:
            p1 = p2 = np.zeros(3)
        elif kind == _EQ_CONNECT:
            p1, p2 = data[0:3], data[3:6]
        else:
            p1, p2 = data[3:6], data[0:3]
            if weld:
                rotation = _pose(np.zeros(3), data[6:10], "weld relpose")[:3, :3]
        out.append(
            Equality(
                "weld" if weld else "connect",
                frames[0],
                frames[1],
                point1=p1,
                point2=p2,
                rotation=rotation,
                active=bool(m.eq_active0[e]),
                name=eq_names[e],
            )
        )
    return tuple(out)


def _joint_equalities(m: Any, names: _Names) -> list[dict[str, Any]]:
    out = []
    for e in range(m.neq):
        if int(m.eq_type[e]) != _EQ_JOINT:
            continue
        j1, j2 = int(m.eq_obj1id[e]), int(m.eq_obj2id[e])
        out.append(
            {
                "joint": names.joints[j1],
                "source": names.joints[j2] if j2 >= 0 else None,
                "polycoef": tuple(float(c) for c in m.eq_data[e][:5]),
                "active": bool(m.eq_active0[e]),
            }
        )
    return out


def _couple(b: ModelBuilder, m: Any, names: _Names, joint_eqs: list[dict[str, Any]]) -> None:
    """Active linear joint equalities become couplings (:meth:`ModelBuilder.add_coupling`).

    MuJoCo's relation is ``y - y0 = c0 + c1 (x - x0) + c2 (x - x0)^2 + ...`` with ``y0``
    and ``x0`` the joints' ``qpos0``; with ``c2 = c3 = c4 = 0`` it is ``y = c1 x + (y0 +
    c0 - c1 x0)``. Each dict gains ``coupled``: whether IK keeps it (a joint tied twice,
    or tied to a joint that is tied itself, keeps only the first relation)."""
    adr = {names.joints[j]: int(m.jnt_qposadr[j]) for j in range(m.njnt)}
    tied: set[str] = set()
    sources: set[str] = set()
    for q in joint_eqs:
        c = q["polycoef"]
        src = q["source"]
        q["coupled"] = bool(
            q["active"] and not any(c[2:]) and q["joint"] not in tied | sources and src not in tied
        )
        if not q["coupled"]:
            continue
        tied.add(q["joint"])
        y0 = float(m.qpos0[adr[q["joint"]]])
        if src is None:
            b.add_coupling(q["joint"], None, 0.0, y0 + c[0])
        else:
            sources.add(src)
            x0 = float(m.qpos0[adr[src]])
            b.add_coupling(q["joint"], src, c[1], y0 + c[0] - c[1] * x0)


def _warn_unenforced(m: Any, where: str, joint_eqs: list[dict[str, Any]]) -> None:
    if joint_eqs:
        shown = ", ".join(
            f"{q['joint']} = poly({q['source']})" if q["source"] else f"{q['joint']} = const"
            for q in joint_eqs
        )
        warn_outside(
            f"{where}: {len(joint_eqs)} joint equality constraint(s) ({shown}) are kept in "
            "model.metadata['joint_equalities'] but not enforced by kinetree's IK (it keeps "
            "the active linear ones; these are inactive, nonlinear or tie a joint twice)",
            MJCFWarning,
        )
    ignored: list[str] = []
    eq_names = _names_of(m, m.name_eqadr, m.neq)
    for e in range(m.neq):
        kind = int(m.eq_type[e])
        if kind not in (_EQ_JOINT, _EQ_CONNECT, _EQ_WELD):
            label = eq_names[e] or f"#{e}"
            what = _EQ_NAMES[kind] if kind < len(_EQ_NAMES) else "other"
            ignored.append(f"{what} equality {label}")
    if m.ntendon:
        t_names = [n or f"#{t}" for t, n in enumerate(_names_of(m, m.name_tendonadr, m.ntendon))]
        ignored.append(
            f"{m.ntendon} tendon(s) ({', '.join(t_names[:10])}{', ...' if m.ntendon > 10 else ''})"
        )
    if ignored:
        warn_outside(
            f"{where}: kinetree ignores {'; '.join(ignored)}: they do not constrain its kinematics",
            MJCFWarning,
        )


# --- geoms ---------------------------------------------------------------------------------


def _geoms(m: Any, names: _Names, meshes: bool) -> tuple[list[tuple[str, Geometry]], list[str]]:
    """``(frame, shape)`` pairs of every geom kinetree has a shape for, and the skipped
    ones in words (by type: planes, height fields, SDFs, and geoms whose compiled pose or
    size is not finite)."""
    out: list[tuple[str, Geometry]] = []
    skipped: dict[str, list[str]] = {}
    geom_names = _names_of(m, m.name_geomadr, m.ngeom)
    paths = bytes(m.paths) if getattr(m, "npaths", 0) else b""
    for g in range(m.ngeom):
        gtype = int(m.geom_type[g])
        label = geom_names[g] or None
        if gtype not in (_SPHERE, _CAPSULE, _CYLINDER, _BOX, _ELLIPSOID, _MESH):
            what = _GEOM_NAMES[gtype] if gtype < len(_GEOM_NAMES) else "sdf"
            skipped.setdefault(what, []).append(label or f"#{g}")
            continue
        collides = bool(m.geom_contype[g] or m.geom_conaffinity[g])
        kinds = ["collision"] if collides else ["visual"]
        if collides and int(m.geom_group[g]) in _DRAWN_GROUPS:
            kinds.append("visual")
        try:
            origin = _pose(m.geom_pos[g], m.geom_quat[g], "geom")
            for kind in kinds:
                common: dict[str, Any] = {"origin": origin, "kind": kind, "name": label}
                shape = _shape(m, g, gtype, common, paths, meshes)
                out.append((names.bodies[int(m.geom_bodyid[g])], shape))
        except KinetreeError:  # a pose or size that is not finite
            skipped.setdefault("degenerate", []).append(label or f"#{g}")
    text = [
        f"{len(v)} {k} geom(s) ({', '.join(v[:5])}{', ...' if len(v) > 5 else ''})"
        for k, v in skipped.items()
    ]
    return out, text


def _shape(
    m: Any, g: int, gtype: int, common: dict[str, Any], paths: bytes, meshes: bool
) -> Geometry:
    """The kinetree shape of geom ``g`` (a sphere, capsule, cylinder, box, ellipsoid or
    mesh); MuJoCo's sizes are half lengths [m]."""
    size = [float(v) for v in m.geom_size[g]]
    if gtype == _SPHERE:
        return Sphere(radius=size[0], **common)
    if gtype == _CAPSULE:
        return Capsule(radius=size[0], length=2 * size[1], **common)
    if gtype == _CYLINDER:
        return Cylinder(radius=size[0], length=2 * size[1], **common)
    if gtype == _BOX:
        return Box(size=(2 * size[0], 2 * size[1], 2 * size[2]), **common)
    if gtype == _ELLIPSOID:
        v, f = _ellipsoid(size[:3])
        return Mesh(path="", vertices=v, faces=f, **common)
    return _mesh(m, int(m.geom_dataid[g]), paths, meshes, common)


def _mesh(m: Any, mesh: int, paths: bytes, meshes: bool, common: dict[str, Any]) -> Mesh:
    """A mesh geom: MuJoCo's compiled vertices [m] and faces, and the file it read."""
    path = ""
    adr = int(m.mesh_pathadr[mesh]) if hasattr(m, "mesh_pathadr") else -1
    if adr >= 0:
        end = paths.find(b"\0", adr)
        path = paths[adr : end if end >= 0 else len(paths)].decode("utf-8", "replace")
    file = Path(path) if path and Path(path).is_file() else None
    vertices = faces = None
    if meshes:
        v0, nv = int(m.mesh_vertadr[mesh]), int(m.mesh_vertnum[mesh])
        f0, nf = int(m.mesh_faceadr[mesh]), int(m.mesh_facenum[mesh])
        vertices = np.array(m.mesh_vert[v0 : v0 + nv], dtype=np.float64)
        faces = np.array(m.mesh_face[f0 : f0 + nf], dtype=np.int64)
    sx, sy, sz = (float(s) for s in m.mesh_scale[mesh])
    return Mesh(path=path, file=file, scale=(sx, sy, sz), vertices=vertices, faces=faces, **common)


def _ellipsoid(
    radii: list[float], n_lat: int = 8, n_lon: int = 16
) -> tuple[np.ndarray, np.ndarray]:
    """Vertices [m] and faces of a latitude-longitude triangle mesh of an ellipsoid."""
    verts = [(0.0, 0.0, radii[2])]
    for i in range(1, n_lat):
        theta = math.pi * i / n_lat
        for k in range(n_lon):
            phi = 2 * math.pi * k / n_lon
            verts.append(
                (
                    radii[0] * math.sin(theta) * math.cos(phi),
                    radii[1] * math.sin(theta) * math.sin(phi),
                    radii[2] * math.cos(theta),
                )
            )
    verts.append((0.0, 0.0, -radii[2]))
    bottom = len(verts) - 1
    faces = []
    for k in range(n_lon):
        faces.append((0, 1 + k, 1 + (k + 1) % n_lon))
    for i in range(n_lat - 2):
        a, c = 1 + i * n_lon, 1 + (i + 1) * n_lon
        for k in range(n_lon):
            k2 = (k + 1) % n_lon
            faces.append((a + k, c + k, c + k2))
            faces.append((a + k, c + k2, a + k2))
    last = 1 + (n_lat - 2) * n_lon
    for k in range(n_lon):
        faces.append((last + k, bottom, last + (k + 1) % n_lon))
    return np.array(verts), np.array(faces, dtype=np.int64)
