"""Write a model in code: links joined by joints, then :meth:`ModelBuilder.build`.

Long because it is the one place every loader's structural and numeric checks live
(names, parents, cycles, limits, mimic chains, ball joints, origins), each with its message.

    b = ModelBuilder("arm", root="base")
    b.add_joint("shoulder", "base", "upper", axis="z", limits=(-2.0, 2.0))
    b.add_joint("elbow", "upper", "fore", axis="z", origin=translation([0.3, 0, 0]))
    b.add_frame("hand", "fore", origin=translation([0.25, 0, 0]))
    model = b.build()

Every loader (URDF, DH, BVH) goes through this builder, so the structural checks
(one root, no cycles, no missing parents, unique names) live here once, and so
does the bound on origins: an origin (of a joint, a frame or the root) may lie at
most :data:`MAX_ORIGIN_DISTANCE` = 1e12 length units (m) from its parent. Each
origin is finite on its own, but origins near the float range (1e308) sum to inf
in forward kinematics. 1e12 m is far beyond any real mechanism, and a chain of
origins at the bound would need some 1e296 joints to reach the float range.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ._validate import as_array, check_rigid
from .errors import InvalidValueError, ModelStructureError, UnsupportedError, unknown_name
from .geometry import Geometry
from .model import Model

__all__ = ["MAX_ORIGIN_DISTANCE", "NOT_END_EFFECTOR", "ModelBuilder", "movable_tips"]

#: Largest distance [m, or the model's length unit] of an origin from its parent frame.
MAX_ORIGIN_DISTANCE = 1e12
#: Largest mimic multiplier magnitude accepted: beyond it a joint value within the
#: source's range drives the mimic's angle or travel past what float64 trigonometry and
#: sums keep finite.
MAX_MIMIC_MULTIPLIER = 1e6

_TYPES = {"fixed": 0, "revolute": 1, "continuous": 1, "prismatic": 2, "ball": 3}
#: Joints made of several nodes (see :meth:`ModelBuilder.add_joint`).
_COMPOUND = ("free", "floating", "planar")
_QUATERNION = ("qw", "qx", "qy", "qz")
_AXES = {
    "x": (1.0, 0.0, 0.0),
    "y": (0.0, 1.0, 0.0),
    "z": (0.0, 0.0, 1.0),
    "-x": (-1.0, 0.0, 0.0),
    "-y": (0.0, -1.0, 0.0),
    "-z": (0.0, 0.0, -1.0),
}


#: Frames that are never chosen as default end effectors while another frame is left:
#: sensors and bookkeeping frames (matched anywhere in the name, any case).
NOT_END_EFFECTOR = re.compile(r"sensor|imu|camera|contour|inertia|lidar|laser|depth", re.I)


@dataclass
class _Joint:
    name: str
    parent: str
    child: str
    type: str
    axis: np.ndarray
    origin: np.ndarray
    limits: tuple[float, float]
    mimic: tuple[str, float, float] | None
    dof_name: str | None  # None for fixed and mimic joints; a ball's coordinate prefix
    hidden_child: bool
    group: str | None
    offset: float = 0.0  # the joint value is q + offset (a one-coordinate joint)
    base: bool = False  # a node of a free or planar joint (moves whole limbs alike)


def _name(value: object, what: str) -> str:
    """``value`` if it is a non-empty string, else an InvalidValueError naming ``what``."""
    if not isinstance(value, str) or not value:
        raise InvalidValueError(f"{what} must be a non-empty string, got {value!r}")
    return value


def _number(value: object, what: str) -> float:
    """``value`` as a finite float, else an InvalidValueError naming ``what``."""
    if isinstance(value, (str, bytes)):
        v = math.nan
    else:
        try:
            v = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError, OverflowError):
            v = math.nan
    if not math.isfinite(v):
        raise InvalidValueError(f"{what} must be a finite number, got {shown(value)}")
    return v


def shown(value: object, limit: int = 80) -> str:
    """``repr(value)``, cut to ``limit`` characters (an int of 400 digits stays readable)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def short_float(x: float) -> str:
    """A number for a message, 3 significant digits: ``1e308`` rather than ``1e+308``."""
    return f"{x:.3g}".replace("e+", "e")


def _axis(axis: ArrayLike | str, owner: str, label: str = "axis") -> np.ndarray:
    """A unit axis from a name ("x", "-y", ...) or a non-zero finite 3-vector."""
    if isinstance(axis, str):
        if axis not in _AXES:
            raise InvalidValueError(
                f"{owner}: {label} {axis!r} is not one of {', '.join(_AXES)} or a 3-vector"
            )
        return np.array(_AXES[axis])
    a = as_array(axis, f"{owner}: {label}", (3,))
    if a.ndim != 1:
        raise InvalidValueError(f"{owner}: {label} must be a single 3-vector, got shape {a.shape}")
    n = float(np.linalg.norm(a))
    if n < 1e-12:
        raise InvalidValueError(f"{owner}: {label} must be non-zero, got {a.tolist()}")
    a = a / n
    # Snap to an exact unit axis where it is one up to round-off (the other components
    # below 1e-12): exact FK on aligned axes without dropping real tilts.
    k = int(np.argmax(np.abs(a)))
    if np.all(np.abs(np.delete(a, k)) < 1e-12):
        sign = 1.0 if a[k] > 0 else -1.0
        a = np.zeros(3)
        a[k] = sign
    return a


def _origin(origin: ArrayLike | None, what: str) -> np.ndarray:
    """A 4x4 rigid transform (identity for None); errors name ``what``."""
    if origin is None:
        return np.eye(4)
    T = as_array(origin, what, (4, 4))
    if T.ndim != 2:
        raise InvalidValueError(f"{what} must be one 4x4 transform, got shape {T.shape}")
    check_rigid(T, what, tol=1e-9)
    return T.copy()


def _check_distance(T: np.ndarray, what: str, where: str, units: str) -> None:
    """Raise unless the translation of ``T`` is at most MAX_ORIGIN_DISTANCE long.

    ``what`` names the origin ("origin of joint 'elbow'"), ``where`` what it is
    measured from ("from its parent"), ``units`` the length unit ("m").
    """
    dist = math.hypot(*T[:3, 3].tolist())
    if dist > MAX_ORIGIN_DISTANCE:
        raise InvalidValueError(
            f"{what} is {short_float(dist)} {units} {where}; "
            f"kinetree accepts at most {short_float(MAX_ORIGIN_DISTANCE)} {units}"
        )


def _mimic(name: str, type: str, mimic: object) -> tuple[str, float, float] | None:
    """``(source_joint, multiplier, offset)`` checked: a joint name and two finite numbers."""
    if mimic is None:
        return None
    if type == "fixed":
        raise InvalidValueError(
            f"joint {name!r}: a fixed joint cannot mimic another joint (it has no motion); "
            "mimic needs a revolute, continuous or prismatic joint"
        )
    want = "(source_joint, multiplier, offset)"
    if isinstance(mimic, (str, bytes)) or not isinstance(mimic, Sequence) or len(mimic) != 3:
        raise InvalidValueError(f"joint {name!r}: mimic must be {want}, got {mimic!r}")
    src = mimic[0]
    if not isinstance(src, str) or not src:
        raise InvalidValueError(
            f"joint {name!r}: mimic must be {want}; the source joint must be a name, got {src!r}"
        )
    mul = _number(mimic[1], f"joint {name!r}: mimic {want}: multiplier")
    off = _number(mimic[2], f"joint {name!r}: mimic {want}: offset")
    if abs(mul) > MAX_MIMIC_MULTIPLIER:
        raise InvalidValueError(
            f"joint {name!r}: mimic multiplier {mul:g} is beyond what kinetree accepts "
            f"(|multiplier| <= {MAX_MIMIC_MULTIPLIER:g})"
        )
    if abs(off) > MAX_ORIGIN_DISTANCE:
        raise InvalidValueError(
            f"joint {name!r}: mimic offset {off:g} is beyond what kinetree accepts "
            f"(|offset| <= {MAX_ORIGIN_DISTANCE:g})"
        )
    return (src, mul, off)


def _limits(name: str, type: str, limits: object) -> tuple[float, float]:
    """``(lo, hi)`` [rad or m]; None (or a continuous joint) means no limit: (-inf, inf).

    ``limits`` is a pair (tuple, list or array of two numbers); a dict, a string or
    a bound that is not a real number (a string, a complex, an int too large for a
    float) raises naming the joint.
    """
    if type == "continuous" or limits is None:
        return (-np.inf, np.inf)
    bad = InvalidValueError(
        f"joint {name!r}: limits must be a pair (lo, hi) of numbers [rad or m] "
        f"(-inf and inf for no limit) or None, got {shown(limits)}"
    )
    if isinstance(limits, (str, bytes, Mapping)) or not (
        isinstance(limits, Sequence) or (isinstance(limits, np.ndarray) and limits.ndim == 1)
    ):
        raise bad
    if len(limits) != 2:
        raise bad
    bounds: list[float] = []
    for v in (limits[0], limits[1]):
        if isinstance(v, (str, bytes, bool, np.bool_)) or np.ndim(v) != 0:
            raise bad
        try:
            bounds.append(float(v))
        except OverflowError:
            raise InvalidValueError(
                f"joint {name!r}: limit {shown(v)} is too large for a float; "
                "use -inf and inf for no limit"
            ) from None
        except (TypeError, ValueError):
            raise bad from None
    lo, hi = bounds
    if math.isnan(lo) or math.isnan(hi):
        raise InvalidValueError(f"joint {name!r}: limits contain NaN: {shown(limits)}")
    if lo > hi:
        raise InvalidValueError(
            f"joint {name!r}: limits must satisfy lo <= hi, got {shown(limits)}"
        )
    if lo == math.inf or hi == -math.inf:
        raise InvalidValueError(
            f"joint {name!r}: limits {shown(limits)} leave no value to take; "
            "use -inf and inf for no limit"
        )
    return (lo, hi)


class ModelBuilder:
    """Collects links, joints and frames; :meth:`build` checks the tree and makes a Model."""

    def __init__(self, name: str, root: str = "base", root_origin: ArrayLike | None = None):
        self.name = _name(name, "model name")
        self.root = _name(root, "root link name")
        self.root_origin = _origin(root_origin, "root_origin")
        _check_distance(self.root_origin, "root_origin", "from the world origin", "m")
        self._joints: list[_Joint] = []
        self._end_effectors: list[str] | None = None
        self._presets: dict[str, tuple[str, ...]] = {}
        self._neutral: dict[str, float] = {}
        self._swing_twist: dict[str, tuple[np.ndarray, float, float, float]] = {}
        self._geometry: dict[str, list[Geometry]] = {}
        self._couplings: list[tuple[str, str | None, float, float]] = []
        self._inertials: dict[str, tuple[float, tuple[float, float, float]]] = {}
        self._velocity_limits: dict[str, float] = {}
        #: How :meth:`build` picks end effectors when none were set: ``"leaves"`` (every
        #: leaf frame) or ``"tips"`` (:func:`movable_tips`, what the URDF loader uses).
        self.default_end_effectors: str = "leaves"
        self.units = "m"
        self.metadata: dict[str, object] = {}

    # --- adding parts -----------------------------------------------------------------

    def add_joint(
        self,
        name: str,
        parent: str,
        child: str,
        type: str = "revolute",
        axis: ArrayLike | str = "z",
        origin: ArrayLike | None = None,
        limits: tuple[float, float] | None = None,
        mimic: tuple[str, float, float] | None = None,
        offset: float = 0.0,
        hidden: bool = False,
    ) -> ModelBuilder:
        """Join ``child`` to ``parent`` by a joint.

        ``type``: revolute, continuous, prismatic or fixed (one coordinate or none), or

        - ``"ball"``: a rotation by a unit quaternion about the child origin: four
          coordinates ``{name}_qw, _qx, _qy, _qz`` (w first, as MuJoCo), three DoF (the
          angular velocity in the child frame). ``limits``: None or ``(0, max_angle)``,
          the largest rotation angle [rad] from the identity (MuJoCo's ball range).
        - ``"free"`` (alias ``"floating"``): six DoF, seven coordinates
          ``{name}_x, _y, _z`` (the child origin in the frame ``parent @ origin`` [m])
          then ``_qw, _qx, _qy, _qz``; the motion is the linear velocity in that frame
          then the angular velocity in the child frame (MuJoCo's ``qpos``/``qvel``).
        - ``"planar"``: motion in the plane normal to ``axis``: ``{name}_x`` and
          ``{name}_y`` [m] along ``u`` and ``w = axis x u``, where ``u`` is the child x
          axis made perpendicular to ``axis`` (the y axis when x is parallel to it), then
          ``{name}_theta`` [rad] about ``axis``.

        The coordinates of a ball, free or planar joint are grouped under ``name``
        (:attr:`Model.joint_groups`, :meth:`Model.q_slice`).

        ``axis`` in the child frame (a 3-vector or "x", "-y", ...). ``origin``: 4x4 pose
        of the child frame in the parent frame at q = 0. ``limits``: (lo, hi) in rad or
        m; None means unlimited, and so does an infinite bound. ``mimic``:
        (source_joint, multiplier, offset) makes this joint follow another instead
        of having a DoF of its own (not on a fixed joint). ``offset`` [rad or m]: the
        joint turns or slides by ``q + offset`` (a one-coordinate joint; MuJoCo's
        ``ref`` is ``offset = -ref``). ``hidden``: ``child`` is an inner node, not a
        frame (not in :attr:`Model.frame_names`, never an end effector): the anchor of a
        joint that a loader splits off a body, for instance.

        Raises :class:`~kinetree.errors.InvalidValueError` for a name that is not a
        non-empty string, NaN or inf in ``axis``, ``origin`` or ``mimic``, an
        ``origin`` more than :data:`MAX_ORIGIN_DISTANCE` (1e12 m) from the parent,
        limits that are not a pair of numbers (a dict, strings), NaN limits or
        ``lo > hi``; :class:`~kinetree.errors.UnsupportedError` for an unknown
        ``type``. Every message names the joint.
        """
        if isinstance(type, str) and type in _COMPOUND:
            self._add_compound(name, parent, child, type, axis, origin, limits, mimic, offset)
        else:
            self._add_joint(name, parent, child, type, axis, origin, limits, mimic, offset=offset)
        if hidden:
            self._joints[-1].hidden_child = True
        return self

    def _add_compound(
        self,
        name: object,
        parent: object,
        child: object,
        type: str,
        axis: ArrayLike | str,
        origin: ArrayLike | None,
        limits: object,
        mimic: object,
        offset: object,
    ) -> ModelBuilder:
        """A free or planar joint as a run of hidden nodes (see :meth:`add_joint`)."""
        name = _name(name, "add_joint: joint name")
        parent = _name(parent, f"joint {name!r}: parent link name")
        child = _name(child, f"joint {name!r}: child link name")
        owner = f"{type} joint {name!r}"
        if mimic is not None or _number(offset, f"{owner}: offset") != 0.0:
            raise InvalidValueError(f"{owner}: mimic and offset are for one-coordinate joints")
        T = _origin(origin, f"{owner}: origin")
        _check_distance(T, f"origin of joint {name!r}", "from its parent", self.units)
        if type == "planar":
            n = _axis(axis, owner)
            u = np.array([1.0, 0.0, 0.0]) - n[0] * n
            if np.linalg.norm(u) < 1e-6:
                u = np.array([0.0, 1.0, 0.0]) - n[1] * n
            u /= np.linalg.norm(u)
            parts = [
                ("x", "prismatic", u),
                ("y", "prismatic", np.cross(n, u)),
                ("theta", "revolute", n),
            ]
            if limits is not None:
                raise InvalidValueError(f"{owner}: limits are set per coordinate; give None")
        else:
            if limits is not None:
                raise InvalidValueError(f"{owner}: a free joint has no limits; give None")
            parts = [("x", "prismatic", np.array([1.0, 0.0, 0.0])),
                     ("y", "prismatic", np.array([0.0, 1.0, 0.0])),
                     ("z", "prismatic", np.array([0.0, 0.0, 1.0])),
                     ("q", "ball", np.array([0.0, 0.0, 1.0]))]  # fmt: skip
        prev = parent
        for k, (label, jt, ax) in enumerate(parts):
            last = k == len(parts) - 1
            link = child if last else f"{child}#{name}_{label}"
            dof = name if jt == "ball" else f"{name}_{label}"
            self._joints.append(
                _Joint(
                    name=f"{name}_{label}",
                    parent=prev,
                    child=link,
                    type=jt,
                    axis=ax,
                    origin=T if k == 0 else np.eye(4),
                    limits=(-np.inf, np.inf),
                    mimic=None,
                    dof_name=dof,
                    hidden_child=not last,
                    group=name,
                    base=True,
                )
            )
            prev = link
        return self

    def _add_joint(
        self,
        name: object,
        parent: object,
        child: object,
        type: object,
        axis: ArrayLike | str,
        origin: ArrayLike | None,
        limits: object,
        mimic: object,
        frame: str | None = None,
        offset: object = 0.0,
    ) -> ModelBuilder:
        """:meth:`add_joint`; ``frame``: the frame whose fixed joint this is (for messages)."""
        name = _name(name, "add_joint: joint name")
        parent = _name(parent, f"joint {name!r}: parent link name")
        child = _name(child, f"joint {name!r}: child link name")
        if not isinstance(type, str) or type not in _TYPES:
            raise UnsupportedError(
                f"joint {name!r}: joint type {type!r} is not supported; "
                f"supported types are: {', '.join([*_TYPES, *_COMPOUND])}"
            )
        owner = f"joint {name!r}"
        ax = _axis(axis, owner)
        T = _origin(origin, f"{owner}: origin")
        what = f"origin of joint {name!r}" if frame is None else f"origin of frame {frame!r}"
        _check_distance(T, what, "from its parent", self.units)
        lim = _limits(name, type, limits)
        off = _number(offset, f"{owner}: offset")
        if abs(off) > MAX_ORIGIN_DISTANCE:
            raise InvalidValueError(f"{owner}: offset {off:g} is beyond {MAX_ORIGIN_DISTANCE:g}")
        if type == "ball":
            if mimic is not None or off != 0.0:
                raise InvalidValueError(f"{owner}: mimic and offset are for one-coordinate joints")
            if limits is not None and not (0.0 < lim[1]):
                raise InvalidValueError(
                    f"{owner}: a ball joint's limits are (0, max_angle) with max_angle > 0 "
                    f"[rad], or None; got {shown(limits)}"
                )
            lim = (0.0, lim[1])
        elif type == "fixed" and off != 0.0:
            raise InvalidValueError(f"{owner}: a fixed joint has no offset")
        mim = _mimic(name, type, mimic)
        is_dof = type != "fixed" and mim is None
        self._joints.append(
            _Joint(
                name=name,
                parent=parent,
                child=child,
                type=type,
                axis=ax if type not in ("fixed", "ball") else np.array([0.0, 0.0, 1.0]),
                origin=T,
                limits=lim,
                mimic=mim,
                dof_name=name if is_dof else None,
                hidden_child=False,
                group=name if type == "ball" else None,
                offset=off,
            )
        )
        return self

    def add_ball_joint(
        self,
        name: str,
        parent: str,
        child: str,
        axes: str | Sequence[ArrayLike] = "xyz",
        origin: ArrayLike | None = None,
        limits: Sequence[tuple[float, float] | None] | None = None,
        *,
        swing: float | None = None,
        twist: tuple[float, float] | None = None,
        bone_axis: ArrayLike | str = "z",
    ) -> ModelBuilder:
        """A multi-axis rotational joint: one revolute DoF per axis, at one point.

        With three axes it may carry anatomical swing-twist limits: ``swing`` is the
        largest angle [rad] the bone (``bone_axis``, in the child frame) may tilt away
        from its zero-pose direction, ``twist`` the (min, max) rotation about the bone
        [rad]. They hold in every IK result with ``respect_limits`` (on top of the
        per-axis ``limits``).

        ``axes`` are applied in order (intrinsic): "zxy" means rotate about z,
        then the new x, then the new y, as in a BVH channel list. DoF names are
        ``f"{name}_{axis}"`` ("shoulder_x") for named axes, ``f"{name}_{k}"``
        otherwise, all grouped under ``name``.
        """
        name = _name(name, "add_ball_joint: joint name")
        parent = _name(parent, f"ball joint {name!r}: parent link name")
        child = _name(child, f"ball joint {name!r}: child link name")
        owner = f"ball joint {name!r}"
        if isinstance(axes, str):
            ax_list: list[ArrayLike | str] = list(axes)
        elif isinstance(axes, Iterable) and not isinstance(axes, bytes):
            ax_list = list(axes)
        else:
            raise InvalidValueError(
                f"{owner}: axes must be a string of axis names such as 'zxy' or a list of "
                f"axes, got {axes!r}"
            )
        if not ax_list:
            raise InvalidValueError(f"ball joint {name!r} needs at least one axis")
        if limits is not None and (
            isinstance(limits, (str, bytes)) or not isinstance(limits, Sequence)
        ):
            raise InvalidValueError(
                f"{owner}: limits must be a list with one (lo, hi) or None per axis, got {limits!r}"
            )
        if limits is not None and len(limits) != len(ax_list):
            raise InvalidValueError(
                f"ball joint {name!r}: {len(ax_list)} axes but {len(limits)} limit pairs"
            )
        swing_twist = None
        if swing is not None or twist is not None:
            if len(ax_list) != 3:
                raise InvalidValueError(
                    f"ball joint {name!r}: swing/twist limits need three axes, got {len(ax_list)}"
                )
            want = (
                f"{owner}: need 0 <= swing <= pi and -pi <= twist min <= twist max <= pi "
                "[rad], with swing a number and twist a (min, max) pair"
            )
            try:
                sw = np.pi if swing is None else float(swing)
                if twist is None:
                    tw = (-np.pi, np.pi)
                else:
                    if isinstance(twist, (str, bytes)) or len(twist) != 2:
                        raise TypeError
                    tw = (float(twist[0]), float(twist[1]))
            except (TypeError, ValueError, OverflowError):
                raise InvalidValueError(
                    f"{want}; got swing={shown(swing)}, twist={shown(twist)}"
                ) from None
            if not (0.0 <= sw <= np.pi) or not (-np.pi <= tw[0] <= tw[1] <= np.pi):
                raise InvalidValueError(f"{want}; got swing={swing!r}, twist={twist!r}")
            swing_twist = (_axis(bone_axis, owner, "bone_axis"), sw, tw[0], tw[1])
        labels = [a if isinstance(a, str) else str(k) for k, a in enumerate(ax_list)]
        unit_axes = [_axis(ax, owner) for ax in ax_list]
        T = _origin(origin, f"{owner}: origin")
        _check_distance(T, f"origin of {owner}", "from its parent", self.units)
        dof_names = [f"{name}_{label}" for label in labels]
        lims = [
            _limits(dof, "revolute", None if limits is None else limits[k])
            for k, dof in enumerate(dof_names)
        ]
        # Everything is checked: now change the builder.
        if swing_twist is not None:
            self._swing_twist[name] = swing_twist
        prev = parent
        for k, (ax, label, dof_name) in enumerate(zip(unit_axes, labels, dof_names)):
            last = k == len(ax_list) - 1
            link = child if last else f"{child}#{label}"
            self._joints.append(
                _Joint(
                    name=dof_name,
                    parent=prev,
                    child=link,
                    type="revolute",
                    axis=ax,
                    origin=T if k == 0 else np.eye(4),
                    limits=lims[k],
                    mimic=None,
                    dof_name=dof_name,
                    hidden_child=not last,
                    group=name,
                )
            )
            prev = link
        return self

    def add_frame(self, name: str, parent: str, origin: ArrayLike | None = None) -> ModelBuilder:
        """A named frame fixed to ``parent`` (a tool point, a marker, an end site)."""
        name = _name(name, "add_frame: frame name")
        parent = _name(parent, f"frame {name!r}: parent link name")
        return self._add_joint(
            f"{name}_fixed", parent, name, "fixed", "z", origin, None, None, frame=name
        )

    def add_geometry(self, link: str, geom: Geometry) -> ModelBuilder:
        """Attach a shape (:mod:`kinetree.geometry`) to frame ``link``; several may be added.

        The frame must exist when :meth:`build` runs (its error lists the frames).
        """
        link = _name(link, "add_geometry: link name")
        if not isinstance(geom, Geometry):
            raise InvalidValueError(
                f"add_geometry({link!r}, ...): geom must be a kinetree.geometry shape "
                f"(Box, Sphere, Cylinder, Capsule, Mesh), got {shown(geom)}"
            )
        self._geometry.setdefault(link, []).append(geom)
        return self

    def set_inertial(
        self, link: str, mass: float, com: ArrayLike = (0.0, 0.0, 0.0)
    ) -> ModelBuilder:
        """Give ``link`` a ``mass`` [kg] >= 0 with its centre of mass ``com`` [m] in the
        link frame (:attr:`Model.inertials`; :meth:`Model.com` reads them). Raises
        :class:`~kinetree.errors.InvalidValueError` for a negative or non-finite mass
        or a non-finite ``com``."""
        link = _name(link, "set_inertial: link name")
        m = _number(mass, f"link {link!r}: mass")
        if m < 0.0:
            raise InvalidValueError(f"link {link!r}: mass must be >= 0 [kg], got {m:g}")
        c = np.asarray(com, dtype=np.float64) if not isinstance(com, str) else np.zeros(0)
        if c.shape != (3,) or not np.all(np.isfinite(c)):
            raise InvalidValueError(
                f"link {link!r}: centre of mass must be 3 finite numbers [m], got {shown(com)}"
            )
        self._inertials[link] = (m, (float(c[0]), float(c[1]), float(c[2])))
        return self

    def set_velocity_limit(self, joint: str, limit: float) -> ModelBuilder:
        """Bound the speed of ``joint`` (a coordinate, or a ball joint's three DoF) by
        ``limit`` > 0 [rad/s or m/s] (:attr:`Model.velocity_limits`; inf: no bound).
        Raises :class:`~kinetree.errors.InvalidValueError` for a limit that is not > 0."""
        joint = _name(joint, "set_velocity_limit: joint name")
        v = float("nan")
        try:
            v = float(limit)
        except (TypeError, ValueError):
            pass
        if not v > 0.0:
            raise InvalidValueError(
                f"joint {joint!r}: velocity limit must be > 0 [rad/s or m/s], got {shown(limit)}"
            )
        if v != float("inf"):
            self._velocity_limits[joint] = v
        return self

    def set_end_effectors(self, *frames: str) -> ModelBuilder:
        """Default IK frames (otherwise: every leaf frame), one name per argument."""
        for f in frames:
            if not isinstance(f, str):
                raise InvalidValueError(
                    f"end effector frames must be strings, one per argument "
                    f"(set_end_effectors('hand', 'foot')), got {f!r}"
                )
        self._end_effectors = list(frames)
        return self

    def add_preset(self, name: str, joints: str | Sequence[str]) -> ModelBuilder:
        """A named set of joints (or groups) for ``ik(..., active=name)``.

        ``joints``: joint or group names; a single string is one name.
        """
        name = _name(name, "preset name")
        if isinstance(joints, str):
            names: tuple[object, ...] = (joints,)
        elif isinstance(joints, Iterable) and not isinstance(joints, bytes):
            names = tuple(joints)
        else:
            names = (joints,)
        for n in names:
            if not isinstance(n, str):
                raise InvalidValueError(
                    f"preset {name!r}: joints must be joint or group names (strings), "
                    f"got {joints!r}"
                )
        self._presets[name] = names  # type: ignore[assignment]
        return self

    def add_coupling(
        self, joint: str, source: str | None, multiplier: float = 1.0, offset: float = 0.0
    ) -> ModelBuilder:
        """Tie coordinate ``joint`` to ``source`` in IK: ``q[joint] = multiplier *
        q[source] + offset`` [rad or m] (``source`` None: ``q[joint] = offset``).

        Unlike a mimic joint, ``joint`` keeps its own coordinate in ``q`` (FK reads it as
        given); IK moves only ``source`` and writes ``joint`` from it, so every IK result
        satisfies the relation. This is how MJCF joint equality constraints load."""
        joint = _name(joint, "add_coupling: joint (coordinate) name")
        if source is not None:
            source = _name(source, f"coupling of {joint!r}: source coordinate name")
        mul = _number(multiplier, f"coupling of {joint!r}: multiplier")
        off = _number(offset, f"coupling of {joint!r}: offset")
        self._couplings.append((joint, source, mul, off))
        return self

    def _coupling_rows(
        self, coord_of: Mapping[str, int], names: Sequence[str], quaternions: list[int]
    ) -> tuple[tuple[int, int, float, float], ...]:
        quat = {s_ + c for s_ in quaternions for c in range(4)}
        rows: list[tuple[int, int, float, float]] = []
        for joint, source, mul, off in self._couplings:
            for n in (joint, source):
                if n is not None and n not in coord_of:
                    raise unknown_name("coordinate", n, names)
                if n is not None and coord_of[n] in quat:
                    raise ModelStructureError(
                        f"coupling {joint!r} <- {source!r}: {n!r} is a quaternion number; "
                        "couplings tie one-number coordinates (hinges, slides)"
                    )
            if joint == source:
                raise ModelStructureError(f"coordinate {joint!r} is coupled to itself")
            src = -1 if source is None else coord_of[source]
            rows.append((coord_of[joint], src, mul, off))
        _check_couplings(rows, names)
        return tuple(rows)

    def set_neutral(self, values: Mapping[str, float]) -> ModelBuilder:
        """Neutral values [rad or m] by DoF name; others stay 0 (clipped into limits)."""
        if not isinstance(values, Mapping):
            raise InvalidValueError(
                f"set_neutral needs a mapping {{DoF name: value}}, got {type(values).__name__}"
            )
        checked = {k: _number(v, f"neutral value of {k!r}") for k, v in values.items()}
        self._neutral.update(checked)
        return self

    # --- building ------------------------------------------------------------------------

    def build(self) -> Model:
        """Check the structure and return the immutable :class:`Model`."""
        joints = self._joints
        dup = {n for n, k in Counter(j.name for j in joints).items() if k > 1}
        if dup:
            raise ModelStructureError(f"duplicate joint names: {', '.join(sorted(dup))}")
        by_child: dict[str, _Joint] = {}
        for j in joints:
            if j.child in by_child:
                raise ModelStructureError(
                    f"link {j.child!r} has two parent joints: "
                    f"{by_child[j.child].name!r} and {j.name!r}"
                )
            if j.child == self.root:
                raise ModelStructureError(
                    f"joint {j.name!r} makes the root link {self.root!r} a child (a cycle)"
                )
            by_child[j.child] = j
        links = {self.root} | set(by_child)
        for j in joints:
            if j.parent not in links:
                raise ModelStructureError(
                    f"joint {j.name!r}: parent link {j.parent!r} does not exist; "
                    f"links are: {', '.join(sorted(links))}"
                )
        kids: dict[str, list[_Joint]] = {}
        for j in joints:
            kids.setdefault(j.parent, []).append(j)
        # Depth-first from the root; links never reached sit on a cycle.
        order: list[_Joint | None] = [None]
        stack = [self.root]
        seen = {self.root}
        node_of = {self.root: 0}
        dfs: list[str] = []
        while stack:
            link = stack.pop()
            dfs.append(link)
            for j in reversed(kids.get(link, [])):
                if j.child in seen:  # pragma: no cover - excluded by single-parent check
                    raise ModelStructureError(f"cycle through link {j.child!r}")
                seen.add(j.child)
                stack.append(j.child)
        unreached = links - seen
        if unreached:
            raise ModelStructureError(
                f"links {', '.join(sorted(unreached))} are not connected to the root "
                f"{self.root!r} (a cycle, or a second root)"
            )
        for link in dfs[1:]:
            node_of[link] = len(order)
            order.append(by_child[link])

        n = len(order)
        parent = np.full(n, -1, dtype=np.int64)
        origin = np.empty((n, 4, 4))
        axis = np.zeros((n, 3))
        jtype = np.zeros(n, dtype=np.int64)
        q_index = np.full(n, -1, dtype=np.int64)
        q_scale = np.ones(n)
        q_offset = np.zeros(n)
        hidden = np.zeros(n, dtype=bool)
        node_names = [self.root] + [j.child for j in order[1:] if j is not None]
        node_joint = [""] * n
        origin[0] = self.root_origin
        axis[0] = (0.0, 0.0, 1.0)
        dof_names: list[str] = []
        lim: list[tuple[float, float]] = []
        continuous: list[bool] = []
        groups: dict[str, list[str]] = {}
        dof_of_joint: dict[str, int] = {}
        quaternions: list[int] = []  # first coordinate of each quaternion
        ball_limits: dict[str, float] = {}
        for i, jo in enumerate(order):
            if jo is None:
                continue
            j = jo
            parent[i] = node_of[j.parent]
            origin[i] = j.origin
            axis[i] = j.axis
            jtype[i] = _TYPES[j.type]
            hidden[i] = j.hidden_child
            node_joint[i] = j.group or j.name
            if j.type == "ball":
                q_index[i] = len(dof_names)
                coords = [f"{j.dof_name}_{c}" for c in _QUATERNION]
                dof_names += coords
                lim += [(-1.0, 1.0)] * 4
                continuous += [False] * 4
                quaternions.append(q_index[i])
                groups.setdefault(j.group or j.name, []).extend(coords)
                if np.isfinite(j.limits[1]) and j.limits[1] < np.pi:
                    ball_limits[j.group or j.name] = float(j.limits[1])
            elif j.dof_name is not None:
                dof_of_joint[j.name] = len(dof_names)
                q_index[i] = len(dof_names)
                q_offset[i] = j.offset
                dof_names.append(j.dof_name)
                lim.append(j.limits)
                continuous.append(j.type == "continuous")
                groups.setdefault(j.group or j.name, []).append(j.dof_name)
        joint_by_name = {j.name: j for j in joints}
        for i, jo in enumerate(order):
            if jo is None or jo.mimic is None:
                continue
            j = jo
            src, mul, off = jo.mimic
            seen_m = {j.name}
            while src not in dof_of_joint:
                nxt = joint_by_name.get(src)
                if nxt is None or nxt.mimic is None or src in seen_m:
                    raise ModelStructureError(
                        f"joint {j.name!r} mimics {src!r}, which is not a joint with a DoF; "
                        f"joints are: {', '.join(dof_names)}"
                    )
                seen_m.add(src)
                src, m2, o2 = nxt.mimic
                mul, off = mul * m2, mul * o2 + off
            q_index[i] = dof_of_joint[src]
            q_scale[i] = mul
            q_offset[i] = off
        limits = np.array(lim, dtype=np.float64).reshape(-1, 2)
        dof = len(dof_names)
        q_neutral = np.zeros(dof)
        for s_ in quaternions:
            q_neutral[s_] = 1.0
        coord_of = {nm: k for k, nm in enumerate(dof_names)}
        for k, v in self._neutral.items():
            if k not in coord_of:
                raise unknown_name("joint", k, dof_names)
            q_neutral[coord_of[k]] = v
        for s_ in quaternions:
            nrm = float(np.linalg.norm(q_neutral[s_ : s_ + 4]))
            if not nrm > 0.0:
                raise InvalidValueError(
                    f"neutral quaternion of {dof_names[s_][:-3]!r} is zero; give a unit one"
                )
            q_neutral[s_ : s_ + 4] /= nrm
        q_neutral = np.clip(q_neutral, limits[:, 0], limits[:, 1]) if dof else q_neutral

        frames = [nm for nm, h in zip(node_names, hidden) if not h]
        if self._end_effectors is not None:
            for f in self._end_effectors:
                if f not in frames:
                    raise unknown_name("frame", f, frames)
            ee = tuple(self._end_effectors)
        elif self.default_end_effectors == "tips":
            # A free or planar joint moves every limb below it alike: not a limb's DoF.
            own_dof = np.array(
                [j is not None and j.dof_name is not None and not j.base for j in order]
            )
            T_world_node = np.empty_like(origin)  # the zero configuration: origins only
            for i in range(n):
                up = int(parent[i])
                T_world_node[i] = origin[i] if up < 0 else T_world_node[up] @ origin[i]
            ee = movable_tips(
                node_names, parent, hidden, own_dof, q_index >= 0, T_world_node[:, :3, 3]
            )
        else:
            has_child = set(parent[parent >= 0].tolist())
            ee = tuple(node_names[i] for i in range(n) if i not in has_child and not hidden[i])
        for link in self._geometry:
            if link not in frames:
                raise unknown_name("frame", link, frames)
        for link in self._inertials:
            if link not in frames:
                raise unknown_name("frame", link, frames)
        for jn in self._velocity_limits:
            if jn not in dof_names and jn not in groups:
                raise unknown_name("joint", jn, dof_names)
        model = Model(
            name=self.name,
            node_names=tuple(node_names),
            parent=parent,
            origin=origin,
            axis=axis,
            joint_type=jtype,
            q_index=q_index,
            q_scale=q_scale,
            q_offset=q_offset,
            hidden=hidden,
            node_joint=tuple(node_joint),
            joint_names=tuple(dof_names),
            limits=limits,
            continuous=np.array(continuous, dtype=bool),
            q_neutral=q_neutral,
            joint_groups={k: tuple(v) for k, v in groups.items()},
            end_effectors=ee,
            presets=dict(self._presets),
            units=self.units,
            metadata=dict(self.metadata),
            swing_twist=dict(self._swing_twist),
            geometry={k: tuple(v) for k, v in self._geometry.items()},
            ball_limits=ball_limits,
            couplings=self._coupling_rows(coord_of, dof_names, quaternions),
            inertials=dict(self._inertials),
            velocity_limits=dict(self._velocity_limits),
        )
        for p, joints_ in self._presets.items():
            try:
                model.joint_indices(joints_)
            except Exception as exc:
                raise ModelStructureError(f"preset {p!r}: {exc}") from None
        return model


def _check_couplings(rows: list[tuple[int, int, float, float]], names: Sequence[str]) -> None:
    """A coordinate is tied to at most one source, and never to one that is tied."""
    tied = [j for j, _, _, _ in rows]
    twice = {names[j] for j in tied if tied.count(j) > 1}
    if twice:
        raise ModelStructureError(f"coordinates tied twice: {', '.join(sorted(twice))}")
    chained = [(names[j], names[s]) for j, s, _, _ in rows if s in set(tied)]
    if chained:
        raise ModelStructureError(
            "a coupling's source may not be tied itself: "
            + ", ".join(f"{a} <- {b}" for a, b in chained)
        )


def movable_tips(
    node_names: Sequence[str],
    parent: np.ndarray,
    hidden: np.ndarray,
    own_dof: np.ndarray,
    moves: np.ndarray | None = None,
    positions: np.ndarray | None = None,
) -> tuple[str, ...]:
    """Default end effectors: the tips of the longest movable chains of a tree, hands
    first, then feet.

    ``own_dof[i]``: node ``i`` is moved by a joint with a DoF of its own (not fixed, not a
    mimic); ``moves[i]``: node ``i`` moves with some DoF (mimic joints too; default
    ``own_dof``). Nodes are in topological order. The rule, in words:

    1. A *branch end* is a node with its own DoF and no such node below it.
    2. Branch ends that split off a common node lower in the chain than they reach
       beyond it (fingers off a hand, the two fingers of a gripper) are one *hand*: the
       split node stands for them (a mimic finger counts as a branch here).
    3. Only the longest chains count: a hand or branch end whose number of DoF from the
       root is at least half the largest (both hands and both feet of a humanoid, not
       a short head).
    4. A limb that is not one of a pair gives way to a longer one beside it: a branch
       whose DoF beyond the node where it splits off are fewer than another's beyond
       that node, with no equally long branch there to pair it, is left out (a head
       between two arms, a tail between four legs; never one of a pair of arms or legs).
    5. Each one is shown by the deepest frame in its subtree (for a hand: among the frames
       fixed to the split node), never a frame whose name matches
       :data:`NOT_END_EFFECTOR` (sensor, imu, camera, ...) while another is left.
    6. The order: hands, then feet. First the limbs that split off deeper in the tree
       (more DoF from the root to where they branch: arms hang from a chest above the
       waist joints, legs from the pelvis). Among limbs that split off equally deep, with
       ``positions`` (each node's origin at the zero configuration, z up, x forward, y
       left as in ROS's REP 103): highest first; at one height, front first; then right
       before left, by name where it says (:func:`side_rank`), else by y (``hand_r,
       hand_l, foot_r, foot_l``; ``FR, FL, RR, RL``). Heights,
       fronts and sides within 2% of the largest tip distance from the root count as
       equal. Without ``positions``: tree order within a depth.

    Without any DoF, the leaf frames (less sensors where others are left).
    """
    n = len(node_names)
    moves = own_dof if moves is None else moves
    kids: list[list[int]] = [[] for _ in range(n)]
    depth = np.zeros(n, dtype=np.int64)
    n_dof = np.zeros(n, dtype=np.int64)  # DoF on the path from the root, this node included
    for i in range(n):
        p = int(parent[i])
        if p >= 0:
            kids[p].append(i)
            depth[i] = depth[p] + 1
            n_dof[i] = n_dof[p]
        n_dof[i] += int(own_dof[i])
    # DoF nodes below each node (bottom-up; parents come first).
    dof_below = np.zeros(n, dtype=np.int64)
    moving_below = np.zeros(n, dtype=np.int64)  # mimic joints included
    for i in range(n - 1, 0, -1):
        dof_below[parent[i]] += dof_below[i] + int(own_dof[i])
        moving_below[parent[i]] += moving_below[i] + int(moves[i])

    def visible(i: int) -> bool:
        return not hidden[i]

    def pick(candidates: list[int]) -> int | None:
        """The deepest candidate frame, a non-sensor one where there is one."""
        shown_ = [i for i in candidates if visible(i)]
        plain = [i for i in shown_ if not NOT_END_EFFECTOR.search(node_names[i])]
        pool = plain or shown_
        if not pool:
            return None
        return max(pool, key=lambda i: (depth[i], -i))

    def subtree(i: int, through: bool = True) -> list[int]:
        """``i`` and its descendants (``through=False``: only those fixed to ``i``)."""
        out, stack = [], [i]
        while stack:
            k = stack.pop()
            out.append(k)
            stack.extend(c for c in kids[k] if through or not moves[c])
        return out

    ends = [i for i in range(n) if own_dof[i] and dof_below[i] == 0]
    if not ends:
        leaves = [i for i in range(n) if not kids[i] and visible(i)]
        plain = [i for i in leaves if not NOT_END_EFFECTOR.search(node_names[i])]
        return tuple(node_names[i] for i in (plain or leaves))
    # 2. Merge branch ends into hands: walk up from each end; at the first node where the
    # tree branches into several DoF chains, the end joins that node's hand when its
    # length beyond the node is shorter than the chain up to it.
    stands_for: dict[int, int] = {}
    for e in ends:
        rep, k = e, e
        while parent[k] >= 0:
            p = int(parent[k])
            branches = sum(1 for c in kids[p] if moves[c] or moving_below[c] > 0)
            if branches > 1:
                beyond = n_dof[e] - n_dof[p]
                if 0 < n_dof[p] and beyond < n_dof[p]:
                    rep = p  # a finger: keep climbing while the hand is still short
                else:
                    break
            k = p
        stands_for[e] = rep
    reps = sorted(set(stands_for.values()))
    longest = max(int(n_dof[r]) for r in reps)
    reps = [r for r in reps if 2 * int(n_dof[r]) >= longest]
    # 4. Unpaired shorter branches beside longer ones.
    split: dict[int, int] = {}
    for r in reps:
        k = r
        while parent[k] >= 0:
            k = int(parent[k])
            if sum(1 for c in kids[k] if moves[c] or moving_below[c] > 0) > 1:
                break
        split[r] = k
    beyond = {r: int(n_dof[r] - n_dof[split[r]]) for r in reps}

    def unpaired_and_shorter(r: int) -> bool:
        beside = [beyond[o] for o in reps if o != r and split[o] == split[r]]
        return bool(beside) and beyond[r] < max(beside) and beyond[r] not in beside

    reps = [r for r in reps if not unpaired_and_shorter(r)]
    # 6. Hands (limbs that split off deeper: the arms above the waist) before feet.
    by_depth: dict[int, list[int]] = {}
    for r in reps:
        hand = r not in ends
        tip = pick(subtree(r, through=not hand))
        if tip is not None and all(tip not in group for group in by_depth.values()):
            by_depth.setdefault(int(n_dof[split[r]]), []).append(tip)
    chosen: list[int] = []
    for level in sorted(by_depth, reverse=True):
        group = by_depth[level]
        if positions is not None:
            group = _hands_then_feet(group, np.asarray(positions, dtype=np.float64), node_names)
        chosen += group
    return tuple(node_names[i] for i in chosen)


_SIDE_WORDS = {"right": 0, "r": 0, "rgt": 0, "left": 2, "l": 2, "lft": 2}
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")


def side_rank(name: str) -> int:
    """0 for a right-hand frame name (``right_hand``, ``r_sole``, ``RightFoot``), 2 for a
    left one, 1 when the name says neither."""
    for word in _WORD.findall(name):
        rank = _SIDE_WORDS.get(word.lower())
        if rank is not None:
            return rank
    return 1


def _hands_then_feet(tips: list[int], positions: np.ndarray, names: Sequence[str]) -> list[int]:
    """``tips`` ordered highest first (z), then front first (x), values within 2% of the
    largest tip distance from the root equal; then right before left, by name where it
    says (iCub's y axis points right), else by y ascending."""
    p = positions[tips]
    tol = 0.02 * max(float(np.max(np.linalg.norm(p - positions[0], axis=1))), 1e-9)

    def order(group: list[int], keys: list[tuple[int, float]]) -> list[int]:
        if len(group) < 2:
            return group
        if not keys:
            return sorted(group, key=lambda t: (side_rank(names[t]), positions[t, 1]))
        (axis, sign), rest = keys[0], keys[1:]
        group = sorted(group, key=lambda t: sign * positions[t, axis])
        out: list[int] = []
        run = [group[0]]
        for t in group[1:]:
            if abs(positions[t, axis] - positions[run[-1], axis]) > tol:
                out += order(run, rest)
                run = []
            run.append(t)
        return out + order(run, rest)

    return order(list(tips), [(2, -1.0), (0, -1.0)])
