"""The kinematic tree as immutable arrays.

Long because it is the one object every layer queries: the node and coordinate arrays,
the maps between coordinates (``nq``) and motions (``nv``) that quaternion joints need,
configurations (sampling, limits, integration on the manifold), and thin delegations
to kinematics, IK and collision.

A :class:`Model` is a tree of *nodes* in topological order (every parent before
its children). Each node is a link frame: its world pose is

    T_world_node = T_world_parent @ origin @ motion(q)

where ``origin`` is a fixed 4x4 transform and ``motion`` a rotation about (revolute)
or translation along (prismatic) the node's ``axis`` by the joint coordinate, a
rotation by a unit quaternion (ball), or the identity (fixed). A joint with several
axes is a run of nodes at one point, grouped under one user-facing name; its inner
nodes are hidden from :attr:`Model.frame_names`: an Euler-chain ball joint (one
revolute node per axis, as in BVH), a free joint (three prismatic nodes then a ball
node), a planar joint (two prismatic nodes then a revolute one).

Configurations and motions. ``q`` has :attr:`Model.nq` numbers (the *coordinates*,
named by :attr:`Model.joint_names`); a motion (a velocity, an IK step, a Jacobian
column) has :attr:`Model.nv` = :attr:`Model.dof` numbers. They differ by one per
quaternion joint: a ball node reads four coordinates ``(qw, qx, qy, qz)`` (MuJoCo's
order; normalised when read) and moves with three, its angular velocity in its own
(child) frame. A free joint's ``q`` is ``x y z qw qx qy qz`` and its motion the linear
velocity in the parent frame then the angular velocity in the child frame (MuJoCo's
``qpos``/``qvel``). Steps are integrated on the manifold (:meth:`Model.integrate`).

Models are built by :class:`kinetree.builder.ModelBuilder`, the loaders in
:mod:`kinetree.io`, and :mod:`kinetree.models`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np
from numpy.typing import ArrayLike

from ._deprecated import QV_MOVED
from ._deprecated import warn as _warn_deprecated
from ._validate import as_array, check_count, check_memory
from .errors import (
    InvalidValueError,
    ModelStructureError,
    ShapeError,
    UnknownNameError,
    UnsupportedError,
    unknown_name,
)

if TYPE_CHECKING:
    from .collision.robot import DistanceResult, ObstacleLike
    from .equality import Equality
    from .geometry import Geometry
    from .ik.result import IKResult
    from .ik.targets import Target
    from .io.skin import Skin

__all__ = ["JOINT_TYPES", "IKTarget", "JointType", "Model", "QVMaps"]

#: What :meth:`Model.ik` accepts as a target: a pose ``(4, 4)`` or a batch ``(..., 4, 4)``
#: [m], a :class:`~kinetree.ik.Position`, :class:`~kinetree.ik.Orientation`,
#: :class:`~kinetree.ik.Pose` or :class:`~kinetree.ik.Direction`, or a dict ``{frame:
#: target}`` of those for several frames at once (see :func:`kinetree.ik.solve`).
IKTarget: TypeAlias = "Target | ArrayLike | Mapping[str, Target | ArrayLike]"


def _batch_of(a: np.ndarray, b: np.ndarray, name_a: str, name_b: str) -> tuple[int, ...]:
    """The broadcast batch shape of ``a`` and ``b`` (their last axes left out)."""
    try:
        return tuple(np.broadcast_shapes(a.shape[:-1], b.shape[:-1]))
    except ValueError:
        raise ShapeError(
            f"{name_a} of shape {a.shape} and {name_b} of shape {b.shape} have batch shapes "
            "that do not broadcast"
        ) from None


class JointType(IntEnum):
    """How a node moves with its joint coordinate (the values stored in ``joint_type``)."""

    FIXED = 0
    REVOLUTE = 1  # rotation about ``axis`` by the coordinate [rad]
    PRISMATIC = 2  # translation along ``axis`` by the coordinate [m]
    BALL = 3  # rotation by a unit quaternion: 4 coordinates (w, x, y, z), 3 DoF


JOINT_TYPES = tuple(t.name.lower() for t in JointType)

# Functions of upper layers that the convenience methods delegate to, imported on first
# use (model sits below kinematics and ik; the work stays there).
_LAZY: dict[str, Any] = {}


def _random_quaternions(n: int, max_angle: float, gen: np.random.Generator) -> np.ndarray:
    """``(n, 4)`` unit quaternions (w first): uniform over the rotation group when
    ``max_angle >= pi``, else a uniform axis with an angle uniform in [0, max_angle]."""
    if max_angle >= np.pi:
        u1, u2, u3 = gen.random((3, n))  # Shoemake's subgroup algorithm
        a, b = np.sqrt(1.0 - u1), np.sqrt(u1)
        return np.stack(
            [
                b * np.cos(2 * np.pi * u3),
                a * np.sin(2 * np.pi * u2),
                a * np.cos(2 * np.pi * u2),
                b * np.sin(2 * np.pi * u3),
            ],
            axis=-1,
        )
    axis = gen.normal(size=(n, 3))
    axis /= np.maximum(np.linalg.norm(axis, axis=-1, keepdims=True), 1e-300)
    half = 0.5 * max_angle * gen.random(n)
    return np.concatenate([np.cos(half)[:, None], np.sin(half)[:, None] * axis], axis=-1)


#: Members of :class:`Model` that moved (old name -> new place on the model), each an
#: entry of :data:`kinetree._deprecated.MOVED` (``kinetree.Model.<old>``), served with a
#: warning by ``Model.__getattr__``.
_MOVED_MEMBERS = {
    **{name: f"qv.{name}" for name in QV_MOVED},
    "v_indices": "qv.v_of_coordinates",
    "swing_twist_layout": "swing_twist_layout",
}

#: Slack [rad] of the swing-twist checks (:meth:`Model.within_limits`): the solver's
#: projection puts a joint on its cone to about 1e-12 rad, and that must count as inside.
SWING_TWIST_SLACK = 1e-10
#: Rounds of redrawing a ball joint that fell outside its swing-twist limits in
#: :meth:`Model.random_configuration` before the rest are pulled inside (a cone that
#: covers a fraction ``f`` of its box leaves ``(1 - f)^64`` of the draws).
CONE_REDRAWS = 64


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


def _swing_twist_of(
    w: np.ndarray, v: np.ndarray, bone: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(swing, twist)`` [rad] of unit quaternions ``(w, v)`` (shapes (...) and (..., 3))
    about the unit ``bone`` axis: ``q = swing * twist`` with the twist about the bone.
    The twist's quaternion is ``(w, p b) / n`` with ``p = v . b`` and ``n = |(w, p)|``;
    the swing's, ``q`` times the twist's inverse, has ``n`` as its scalar part and
    ``|v - p b|`` as its vector's length."""
    sign = np.where(w < 0.0, -1.0, 1.0)
    w, v = w * sign, v * sign[..., None]
    p = v @ bone
    n = np.hypot(w, p)
    twist = np.where(n < 1e-15, 0.0, 2.0 * np.arctan2(p, w))
    twist = np.where(twist > np.pi, twist - 2.0 * np.pi, twist)
    twist = np.where(twist <= -np.pi, twist + 2.0 * np.pi, twist)
    swing = 2.0 * np.arctan2(np.linalg.norm(v - p[..., None] * bone, axis=-1), n)
    return swing, twist


@dataclass(frozen=True, eq=False)
class QVMaps:
    """The maps between a model's coordinates ``q`` (``nq``) and its motions ``v``
    (``nv``): :attr:`Model.qv`. They differ by one per quaternion (ball) node, which
    reads four coordinates and moves with three DoF.

    Attributes:
        ball_nodes: node indices of the quaternion (ball) nodes, in tree order.
        quaternion_mask: ``(nq,)``, True for the four coordinates of every quaternion.
        v_q: ``(nv,)``, the coordinate each DoF moves one-to-one, or -1 for the three
            angular DoF of a quaternion joint.
        q_v: ``(nq,)``, the DoF of each coordinate; for the four coordinates of a
            quaternion, the first of its three angular DoF.
        v_index: ``(n_nodes,)``, the first DoF of each node's coordinate (its Jacobian
            column), -1 for nodes without one; mimic nodes share their source's.
        v_names: names of the DoF (Jacobian columns): a coordinate's name, and for the
            angular DoF of a quaternion joint ``{joint}_wx``, ``_wy``, ``_wz``.
        dof_node: ``(nv,)``, the node each DoF drives directly (not through a mimic
            relation), the first such node in tree order, or -1 when only mimic joints
            use it.
        dof_type: ``(nv,)``, the :class:`JointType` of each DoF (revolute, prismatic or
            ball).
    """

    ball_nodes: np.ndarray
    quaternion_mask: np.ndarray
    v_q: np.ndarray
    q_v: np.ndarray
    v_index: np.ndarray
    v_names: tuple[str, ...]
    dof_node: np.ndarray
    dof_type: np.ndarray

    @classmethod
    def of(cls, model: Model) -> QVMaps:
        """The maps of ``model`` (read-only arrays)."""
        jt, q_index = model.joint_type, model.q_index
        ball_nodes = np.nonzero((jt == JointType.BALL) & (q_index >= 0))[0].astype(np.int64)
        nq = len(model.joint_names)
        nv = nq - len(ball_nodes)
        quat = np.zeros(nq, dtype=bool)
        for b in ball_nodes.tolist():
            quat[q_index[b] : q_index[b] + 4] = True
        # DoF each coordinate opens: one for a plain coordinate, three at a quaternion's qw.
        opens = (~quat).astype(np.int64)
        starts = q_index[ball_nodes]
        opens[starts] = 3
        q_v = np.cumsum(opens) - opens
        for s_ in starts.tolist():
            q_v[s_ + 1 : s_ + 4] = q_v[s_]
        v_q = np.full(nv, -1, dtype=np.int64)
        plain = np.nonzero(~quat)[0]
        v_q[q_v[plain]] = plain
        n_nodes = len(model.node_names)
        v_index = np.full(n_nodes, -1, dtype=np.int64)
        has = q_index >= 0
        v_index[has] = q_v[q_index[has]]
        names = [model.joint_names[k] if k >= 0 else "" for k in v_q.tolist()]
        for node in ball_nodes:
            base = model.joint_names[q_index[node]].removesuffix("_qw")
            v = int(v_index[node])
            names[v : v + 3] = [f"{base}_wx", f"{base}_wy", f"{base}_wz"]
        dof_node = np.full(nv, -1, dtype=np.int64)
        for k in range(n_nodes - 1, -1, -1):
            if v_index[k] >= 0 and jt[k] != JointType.FIXED and model.q_scale[k] == 1.0:
                n_v = 3 if jt[k] == JointType.BALL else 1
                dof_node[v_index[k] : v_index[k] + n_v] = k
        dof_type = np.full(nv, int(JointType.REVOLUTE), dtype=np.int64)
        for k in range(n_nodes):
            if v_index[k] < 0:
                continue
            if jt[k] == JointType.PRISMATIC:
                dof_type[v_index[k]] = int(JointType.PRISMATIC)
            elif jt[k] == JointType.BALL:
                dof_type[v_index[k] : v_index[k] + 3] = int(JointType.BALL)
        return cls(
            _frozen(ball_nodes),
            _frozen(quat),
            _frozen(v_q),
            _frozen(q_v),
            _frozen(v_index),
            tuple(names),
            _frozen(dof_node),
            _frozen(dof_type),
        )

    def v_of_coordinates(self, coords: ArrayLike) -> np.ndarray:
        """DoF indices moving the coordinates ``coords``: a quaternion coordinate brings
        its joint's three angular DoF."""
        out: set[int] = set()
        for k in np.asarray(coords, dtype=np.int64).tolist():
            v = int(self.q_v[k])
            out.update((v, v + 1, v + 2) if self.quaternion_mask[k] else (v,))
        return np.array(sorted(out), dtype=np.int64)


@dataclass(frozen=True, eq=False)
class Model:
    """An immutable kinematic tree; see the module docstring for the conventions.

    Node arrays (length ``n_nodes``): ``node_names``, ``parent`` (-1 for the root),
    ``origin`` (n, 4, 4), ``axis`` (n, 3) unit vectors in the node frame,
    ``joint_type`` (:class:`JointType` values), ``q_index`` (index into
    ``q`` or -1), ``q_scale``/``q_offset`` (mimic joints: value = scale*q + offset),
    ``hidden`` (inner nodes of multi-axis joints), ``node_joint`` (the joint name
    that moves the node, or "" for the root).

    Coordinate arrays (length ``nq``): ``joint_names``, ``limits`` (nq, 2) in rad or m
    ([-1, 1] for quaternion coordinates), ``continuous``, ``q_neutral``.
    """

    name: str
    node_names: tuple[str, ...]
    parent: np.ndarray
    origin: np.ndarray
    axis: np.ndarray
    joint_type: np.ndarray
    q_index: np.ndarray
    q_scale: np.ndarray
    q_offset: np.ndarray
    hidden: np.ndarray
    node_joint: tuple[str, ...]
    joint_names: tuple[str, ...]
    limits: np.ndarray
    continuous: np.ndarray
    q_neutral: np.ndarray
    joint_groups: Mapping[str, tuple[str, ...]]
    end_effectors: tuple[str, ...]
    presets: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    units: str = "m"
    metadata: Mapping[str, Any] = field(default_factory=dict)
    #: Ball joints with anatomical limits: group -> (bone axis, swing max, twist min, max).
    swing_twist: Mapping[str, tuple[np.ndarray, float, float, float]] = field(default_factory=dict)
    #: Shapes attached to frames, by frame name: visual and collision geometry
    #: (:mod:`kinetree.geometry`), each with its pose in the frame. Kinematics never reads
    #: it; frames without shapes are absent (default: no geometry at all).
    geometry: Mapping[str, tuple[Geometry, ...]] = field(default_factory=dict)
    #: Quaternion (ball) joints with a limit: joint name -> the largest rotation angle
    #: [rad] away from the identity (MuJoCo's ball ``range``); absent: unlimited.
    ball_limits: Mapping[str, float] = field(default_factory=dict)
    #: Joint, group or preset names that IK moves when ``active=`` is not given (None:
    #: every DoF). A BVH skeleton with position channels on inner joints sets it to its
    #: ``"rotations"`` preset, so bone lengths stay unless asked otherwise.
    default_active: tuple[str, ...] | None = None
    #: Coordinates IK keeps tied to others (MJCF joint equalities): rows ``(joint,
    #: source, multiplier, offset)`` of coordinate indices, meaning ``q[joint] =
    #: multiplier * q[source] + offset`` (``source`` -1: ``q[joint] = offset``). FK reads
    #: every coordinate as given; IK moves only the source and writes the joint.
    couplings: tuple[tuple[int, int, float, float], ...] = ()
    # --- mass and speed (kinetree.kinematics: centre of mass; velocity limits) ---------
    #: Link inertial data by frame name: ``(mass [kg], centre of mass (x, y, z) [m] in
    #: the frame)`` (URDF ``<inertial>``, MJCF ``body_mass``/``body_ipos``); frames
    #: without it weigh nothing (default: no masses at all).
    inertials: Mapping[str, tuple[float, tuple[float, float, float]]] = field(default_factory=dict)
    #: Joint speed limits by coordinate (or ball-joint) name [rad/s or m/s] (URDF
    #: ``<limit velocity>``); absent: unlimited (MJCF has none).
    velocity_limits: Mapping[str, float] = field(default_factory=dict)
    #: Skinned meshes bound to the model's frames (:class:`kinetree.io.skin.Skin`), as a
    #: character file (glTF, USD, FBX) gives them; kinematics never reads them (default:
    #: none). Drawn by the viewer, deformed by :func:`kinetree.io.skin.deform`.
    skins: tuple[Skin, ...] = ()
    #: Closed chains (:class:`kinetree.equality.Equality`: MJCF ``connect`` and ``weld``
    #: equalities): pairs of frames IK keeps together; FK never reads them (default: none).
    equalities: tuple[Equality, ...] = ()

    def __post_init__(self) -> None:
        for attr in (
            "parent",
            "origin",
            "axis",
            "joint_type",
            "q_index",
            "q_scale",
            "q_offset",
            "hidden",
            "limits",
            "continuous",
            "q_neutral",
        ):
            object.__setattr__(self, attr, _frozen(getattr(self, attr)))
        n = len(self.node_names)
        if self.parent.shape != (n,) or np.any(self.parent >= np.arange(n)):
            # Every loop over the tree relies on parents coming first (no cycles).
            bad = int(np.argmax(self.parent >= np.arange(n))) if self.parent.shape == (n,) else 0
            raise ModelStructureError(
                "nodes must be in topological order (each parent index below its child's, "
                f"-1 for the root); node {bad} has parent {self.parent[bad]}"
            )

    # --- sizes and names ------------------------------------------------------------

    @property
    def dof(self) -> int:
        """Number of degrees of freedom: the length of a motion (equal to :attr:`nv`)."""
        return self.nv

    @property
    def n_nodes(self) -> int:
        """Number of nodes (links, hidden ball-joint nodes, and tool frames)."""
        return len(self.node_names)

    @cached_property
    def frame_names(self) -> tuple[str, ...]:
        """Names of every frame: each link and each tool frame, in tree order."""
        return tuple(n for n, h in zip(self.node_names, self.hidden) if not h)

    @cached_property
    def _node_of(self) -> dict[str, int]:
        return {n: i for i, n in enumerate(self.node_names) if not self.hidden[i]}

    @cached_property
    def _dof_of(self) -> dict[str, int]:
        return {n: i for i, n in enumerate(self.joint_names)}

    def frame_index(self, frame: str | None = None) -> int:
        """Node index of ``frame`` (default: the first end effector): an index into the
        node arrays (``node_names``, ``parent``, ``origin``, ...), which include the hidden
        inner nodes of multi-axis joints. It is not a position in :attr:`frame_names` or
        along the frame axis of :meth:`fk_all`; that is ``frame_names.index(frame)``."""
        if frame is None:
            frame = self.end_effectors[0]
        try:
            return self._node_of[frame]
        except (KeyError, TypeError):
            raise unknown_name("frame", frame, self.frame_names) from None

    def joint_indices(self, names: str | Iterable[str]) -> np.ndarray:
        """DoF indices of joint names, group names (a ball joint) or preset names."""
        if isinstance(names, str):
            names = [names]
        out: list[int] = []
        for name in names:
            if name in self._dof_of:
                out.append(self._dof_of[name])
            elif name in self.joint_groups:
                out.extend(self._dof_of[n] for n in self.joint_groups[name])
            elif name in self.presets:
                out.extend(self.joint_indices(self.presets[name]).tolist())
            else:
                valid = list(self.joint_names) + [
                    g for g in self.joint_groups if g not in self._dof_of
                ]
                msg = str(unknown_name("joint", name, valid))
                if self.presets:
                    msg += f"; presets are: {', '.join(self.presets)}"
                raise UnknownNameError(msg)
        return np.array(sorted(set(out)), dtype=np.int64)

    def active_mask(self, names: str | Iterable[str] | None) -> np.ndarray:
        """Boolean mask over ``q`` of the named joints/groups/presets; None: the
        :attr:`default_active` joints, or every coordinate when that is None too."""
        mask = np.zeros(self.nq, dtype=bool)
        if names is None:
            names = self.default_active
            if names is None:
                mask[:] = True
                return mask
        mask[self.joint_indices(names)] = True
        return mask

    # --- structure --------------------------------------------------------------------

    @cached_property
    def children(self) -> tuple[tuple[int, ...], ...]:
        """Child node indices of every node."""
        kids: list[list[int]] = [[] for _ in range(self.n_nodes)]
        for i, p in enumerate(self.parent):
            if p >= 0:
                kids[p].append(i)
        return tuple(tuple(k) for k in kids)

    def ancestors(self, node: int) -> np.ndarray:
        """Node indices from the root to ``node`` inclusive."""
        path = []
        k = int(node)
        while k >= 0:
            path.append(k)
            k = int(self.parent[k])
        return np.array(path[::-1], dtype=np.int64)

    def chain(self, tip: str | None = None, base: str | None = None) -> tuple[str, ...]:
        """DoF names that move ``tip`` relative to ``base`` (default: the root), base first."""
        tip_path = self.ancestors(self.frame_index(tip))
        start = 0
        if base is not None:
            b = self.frame_index(base)
            where = np.nonzero(tip_path == b)[0]
            if where.size == 0:
                raise InvalidValueError(
                    f"frame {base!r} is not an ancestor of {tip or self.end_effectors[0]!r}; "
                    f"ancestors are: {', '.join(self.node_names[k] for k in tip_path)}"
                )
            start = int(where[0]) + 1
        names: list[str] = []
        for k in tip_path[start:]:
            qi = self.q_index[k]
            if self.moves(k) and self.joint_names[qi] not in names:
                names.append(self.joint_names[qi])
        return tuple(names)

    @property
    def nq(self) -> int:
        """Length of a configuration ``q`` (four numbers per quaternion joint)."""
        return len(self.joint_names)

    @cached_property
    def nv(self) -> int:
        """Length of a motion: a joint velocity, an IK step, a Jacobian row."""
        return self.nq - len(self.qv.ball_nodes)

    @cached_property
    def qv(self) -> QVMaps:
        """The maps between coordinates (``q``, :attr:`nq`) and motions (``v``,
        :attr:`nv`): which nodes are quaternions, which DoF moves which coordinate, the
        node and joint type behind each DoF (:class:`QVMaps`)."""
        return QVMaps.of(self)

    def q_slice(self, joint: str) -> slice:
        """The slice of ``q`` holding ``joint``'s coordinates (a joint, a group such as a
        free or ball joint, or one coordinate name)."""
        idx = self.joint_indices(joint)
        lo, hi = int(idx.min()), int(idx.max()) + 1
        if hi - lo != idx.size:
            raise InvalidValueError(
                f"the coordinates of {joint!r} are not contiguous in q: {idx.tolist()}"
            )
        return slice(lo, hi)

    @property
    def length_scale(self) -> float:
        """The model's length unit per metre [model units / m]: 1 for a model in metres
        (URDF, MJCF, the built-ins). IK weighs position errors against rotation errors
        [rad] in units of it, so that a solve takes the same steps whatever unit a file
        was written in. A BVH file does not state its unit: its loader sets this from the
        skeleton's size (``metadata["length_scale"]``; see :func:`kinetree.read_bvh`)."""
        return float(self.metadata.get("length_scale", 1.0))

    def moves(self, node: int) -> bool:
        """Whether ``node``'s own joint moves with a DoF (not fixed, has a coordinate)."""
        return bool(self.joint_type[node] != JointType.FIXED and self.q_index[node] >= 0)

    def group_nodes(self, group: str) -> tuple[np.ndarray, np.ndarray]:
        """``(dofs, nodes)``: the DoF indices of a multi-axis joint and the revolute node
        each one turns, in axis order."""
        dofs = np.array([self._dof_of[n] for n in self.joint_groups[group]], dtype=np.int64)
        rev = self.joint_type == JointType.REVOLUTE
        nodes = np.array(
            [int(np.nonzero((self.q_index == d) & rev)[0][0]) for d in dofs], dtype=np.int64
        )
        return dofs, nodes

    def swing_twist_angles(self, q: ArrayLike, group: str) -> tuple[float, float]:
        """``(swing, twist)`` [rad] of a swing-twist limited ball joint at one
        configuration ``q`` (nq,): :meth:`cone_angles` of one configuration."""
        qa = as_array(q, "q", (self.nq,))
        if qa.shape != (self.nq,):
            raise ShapeError(f"q must have shape ({self.nq},), got {qa.shape}")
        swing, twist = self.cone_angles(qa, group)
        return float(swing), float(twist)

    def cone_angles(self, q: ArrayLike, group: str) -> tuple[np.ndarray, np.ndarray]:
        """``(swing, twist)`` [rad], each of shape ``(...)``, of the swing-twist limited
        ball joint ``group`` at configurations ``q`` (..., nq): the angle the bone is
        tilted from its rest direction, in [0, pi], and the turn about it, in (-pi, pi]
        (the decomposition the solver projects with, :mod:`kinetree.ik.kernel._swing_twist`)."""
        if group not in self.swing_twist:
            raise unknown_name("swing-twist joint", group, self.swing_twist)
        qa = as_array(q, "q", (self.nq,))
        dofs, nodes = self.group_nodes(group)
        # The group's rotation as a quaternion: the product of its three axis turns.
        w = np.ones(qa.shape[:-1])
        v = np.zeros((*qa.shape[:-1], 3))
        for d, nd in zip(dofs.tolist(), nodes.tolist()):
            half = 0.5 * (self.q_scale[nd] * qa[..., d] + self.q_offset[nd])
            cw, sv = np.cos(half), np.sin(half)[..., None] * self.axis[nd]
            w, v = (
                w * cw - np.sum(v * sv, axis=-1),
                w[..., None] * sv + cw[..., None] * v + np.cross(v, sv),
            )
        return _swing_twist_of(w, v, np.asarray(self.swing_twist[group][0], dtype=np.float64))

    def _cones_hold(self, q: np.ndarray, tol: float) -> np.ndarray:
        """Whether every swing-twist limited ball joint is within its cone and twist
        range at ``q`` (..., nq), with ``tol`` [rad] (plus :data:`SWING_TWIST_SLACK`)."""
        ok = np.ones(q.shape[:-1], dtype=bool)
        slack = tol + SWING_TWIST_SLACK
        for group, (_, swing_max, twist_lo, twist_hi) in self.swing_twist.items():
            swing, twist = self.cone_angles(q, group)
            ok &= (swing <= swing_max + slack) & (twist >= twist_lo - slack)
            ok &= twist <= twist_hi + slack
        return ok

    def _sample_cones(self, qb: np.ndarray, lo: np.ndarray, hi: np.ndarray, gen: Any) -> None:
        """Redraw, in place, each ball joint of ``qb`` (n, nq) that lies outside its
        swing-twist limits, uniformly within its per-axis bounds, until inside (so the
        draws are uniform over the allowed set); after :data:`CONE_REDRAWS` rounds, the
        few left move toward the neutral pose until inside."""
        neutral = self.q_neutral
        for group in self.swing_twist:
            dofs = self.group_nodes(group)[0]
            bad = ~self._cones_hold(qb, 0.0)
            for _ in range(CONE_REDRAWS):
                rows = np.nonzero(bad)[0]
                if not rows.size:
                    break
                r = gen.random((rows.size, dofs.size))
                qb[np.ix_(rows, dofs)] = np.clip(
                    lo[dofs] * (1.0 - r) + hi[dofs] * r, lo[dofs], hi[dofs]
                )
                bad[rows] = ~self._cones_hold(qb[rows], 0.0)
            rows = np.nonzero(bad)[0]
            if rows.size and bool(self._cones_hold(neutral, 0.0)):
                # Bisect each row on the segment from the neutral pose to its draw.
                far = qb[np.ix_(rows, dofs)].copy()
                near = np.broadcast_to(neutral[dofs], far.shape)
                a_ok, a_bad = np.zeros(rows.size), np.ones(rows.size)
                trial = qb[rows].copy()
                for _ in range(40):
                    mid = 0.5 * (a_ok + a_bad)
                    trial[:, dofs] = near + mid[:, None] * (far - near)
                    inside = self._cones_hold(trial, 0.0)
                    a_ok, a_bad = np.where(inside, mid, a_ok), np.where(inside, a_bad, mid)
                qb[np.ix_(rows, dofs)] = near + a_ok[:, None] * (far - near)

    # --- configurations --------------------------------------------------------------

    def neutral(self) -> np.ndarray:
        """The model's neutral configuration (zeros clipped into the limits unless set)."""
        return self.q_neutral.copy()

    def random_configuration(
        self, n: int | None = None, rng: np.random.Generator | int | None = None
    ) -> np.ndarray:
        """Uniform random configuration(s) within limits: ``(nq,)`` or ``(n, nq)``.

        Unlimited revolute joints sample [-pi, pi]; unlimited prismatic [-1, 1] m;
        quaternion joints a rotation uniform over the rotation group, or, with a limit,
        a uniform axis and an angle uniform within it. A ball joint with swing-twist
        limits (:attr:`swing_twist`) is drawn uniformly within its per-axis limits and
        redrawn until its swing and twist are within theirs, so every configuration
        passes :meth:`within_limits`.
        """
        if n is not None:
            n = check_count(n, "n (the number of configurations)")
            check_memory(
                3 * 8 * n * self.nq,
                f"{n:,} configurations of {self.nq} coordinates",
                "ask for fewer",
            )
        seeds = (np.random.Generator, np.random.BitGenerator, np.random.SeedSequence)
        if not (
            rng is None
            or isinstance(rng, seeds)
            or (isinstance(rng, int | np.integer) and not isinstance(rng, bool) and rng >= 0)
        ):
            raise InvalidValueError(
                f"rng must be None, a seed (an integer >= 0) or a numpy.random.Generator, "
                f"got {rng!r}"
            )
        gen = np.random.default_rng(rng)
        lo, hi = self.sampling_bounds()
        shape = (self.nq,) if n is None else (n, self.nq)
        r = gen.random(shape)
        # lo (1 - r) + hi r: no overflow when hi - lo exceeds the float range.
        q = np.clip(lo * (1.0 - r) + hi * r, lo, hi)
        qb = q.reshape(-1, self.nq) if self.nq else q
        for k in self.qv.ball_nodes:
            s_ = int(self.q_index[k])
            qb[:, s_ : s_ + 4] = _random_quaternions(
                qb.shape[0], self.ball_limits.get(self.node_joint[k], np.pi), gen
            )
        if self.swing_twist:
            self._sample_cones(qb, lo, hi, gen)
        return q

    def sampling_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Finite ``(lo, hi)`` used for random sampling (see :meth:`random_configuration`):
        the limits, with an infinite side replaced by a span of 2 pi (revolute) or 2 m
        (prismatic) from the finite one, or by [-pi, pi] / [-1, 1] m when both are."""
        lo = self.limits[:, 0].copy()
        hi = self.limits[:, 1].copy()
        prism = np.zeros(self.nq, dtype=bool)
        slides = (self.joint_type == JointType.PRISMATIC) & (self.q_index >= 0)
        prism[self.q_index[slides]] = True
        span = np.where(prism, 1.0, np.pi)
        lo_inf, hi_inf = ~np.isfinite(lo), ~np.isfinite(hi)
        both = lo_inf & hi_inf
        lo_out = np.where(both, -span, np.where(lo_inf, hi - 2.0 * span, lo))
        hi_out = np.where(both, span, np.where(hi_inf, lo + 2.0 * span, hi))
        return lo_out, hi_out

    def within_limits(self, q: ArrayLike, tol: float = 0.0) -> np.ndarray:
        """Whether each configuration in ``q`` (..., nq) respects the limits: the
        per-coordinate ones, a limited quaternion joint's rotation angle, and a
        swing-twist limited ball joint's swing and twist (:attr:`swing_twist`, the
        limits IK keeps; ``tol`` in rad, plus :data:`SWING_TWIST_SLACK`)."""
        q = as_array(q, "q", (self.nq,))
        ok = np.all((q >= self.limits[:, 0] - tol) & (q <= self.limits[:, 1] + tol), axis=-1)
        for k in self.qv.ball_nodes:
            lim = self.ball_limits.get(self.node_joint[k])
            if lim is None:
                continue
            s_ = int(self.q_index[k])
            quat = q[..., s_ : s_ + 4]
            w = np.abs(quat[..., 0]) / np.maximum(np.linalg.norm(quat, axis=-1), 1e-300)
            ok = ok & (2.0 * np.arccos(np.minimum(w, 1.0)) <= lim + tol)
        if self.swing_twist:
            ok = ok & self._cones_hold(q, tol)
        return ok

    def normalize(self, q: ArrayLike) -> np.ndarray:
        """A copy of ``q`` (..., nq) with every quaternion scaled to unit length (a zero
        quaternion becomes the identity)."""
        from .spatial import quat_normalize

        out = np.array(q, dtype=np.float64)
        for k in self.qv.ball_nodes:
            s_ = int(self.q_index[k])
            out[..., s_ : s_ + 4] = quat_normalize(out[..., s_ : s_ + 4])
        return out

    def integrate(self, q: ArrayLike, v: ArrayLike) -> np.ndarray:
        """The configuration reached from ``q`` (..., nq) by the motion ``v`` (..., nv)
        held for unit time: ``q + v`` for one-number coordinates, ``quat * exp(w)``
        (``w`` in the joint's child frame) for quaternions. The inverse of
        :meth:`difference`."""
        from .spatial import quat_exp, quat_mul

        qa = as_array(q, "q", (self.nq,))
        va = as_array(v, "v", (self.nv,))
        batch = _batch_of(qa, va, "q", "v")
        out = np.array(np.broadcast_to(qa, (*batch, self.nq)))
        simple = self.qv.v_q >= 0
        out[..., self.qv.v_q[simple]] += va[..., simple]
        for k in self.qv.ball_nodes:
            s_, v_ = int(self.q_index[k]), int(self.qv.v_index[k])
            out[..., s_ : s_ + 4] = quat_mul(out[..., s_ : s_ + 4], quat_exp(va[..., v_ : v_ + 3]))
        return self.normalize(out)

    def difference(self, q0: ArrayLike, q1: ArrayLike) -> np.ndarray:
        """The motion ``v`` (..., nv) with ``integrate(q0, v) == q1`` (the shorter way
        round for quaternions)."""
        from .spatial import quat_conj, quat_log, quat_mul

        a = self.normalize(as_array(q0, "q0", (self.nq,)))
        b = self.normalize(as_array(q1, "q1", (self.nq,)))
        shape = _batch_of(a, b, "q0", "q1")
        out = np.zeros((*shape, self.nv))
        simple = self.qv.v_q >= 0
        out[..., simple] = (b - a)[..., self.qv.v_q[simple]]
        for k in self.qv.ball_nodes:
            s_, v_ = int(self.q_index[k]), int(self.qv.v_index[k])
            out[..., v_ : v_ + 3] = quat_log(
                quat_mul(quat_conj(a[..., s_ : s_ + 4]), b[..., s_ : s_ + 4])
            )
        return out

    # --- kinematics (thin delegation; the work is in kinetree.kinematics / kinetree.ik) -

    def fk(
        self, q: ArrayLike, frame: str | None = None, device: str = "cpu", base: str | None = None
    ) -> np.ndarray:
        """World pose ``(..., 4, 4)`` of ``frame`` (default: first end effector) at ``q``;
        with ``base`` (a frame name), the pose in that frame, ``T_world_base^-1
        T_world_frame`` [m] (TRAC-IK's and MoveIt's chain from ``base`` to ``frame``).

        ``device="cuda"`` computes it on the GPU (:mod:`kinetree.gpu`; GPU arrays in,
        GPU arrays out; world poses only)."""
        if device != "cpu":
            if base is not None:
                raise UnsupportedError(
                    f"fk(base={base!r}) runs on the CPU only; on {device!r} compute both "
                    "world poses and compose them"
                )
            from .gpu import fk as fk_on

            return fk_on(self, q, frame, device=device)
        from .kinematics import fk

        return fk(self, q, frame, base)

    def fk_all(self, q: ArrayLike) -> np.ndarray:
        """World poses ``(..., n_frames, 4, 4)`` of every frame, ordered as ``frame_names``."""
        from .kinematics import fk_all

        return fk_all(self, q)

    def jacobian(
        self,
        q: ArrayLike,
        frame: str | None = None,
        point: ArrayLike | None = None,
        device: str = "cpu",
    ) -> np.ndarray:
        """Geometric Jacobian ``(..., 6, dof)`` of ``frame`` (rows: linear then angular).

        ``point`` is an optional offset in the frame's own coordinates [m];
        ``device="cuda"`` computes it on the GPU (:mod:`kinetree.gpu`).
        """
        if device != "cpu":
            from .gpu import jacobian as jacobian_on

            return jacobian_on(self, q, frame, point, device=device)
        from .kinematics import jacobian

        return jacobian(self, q, frame, point)

    def ik(self, target: IKTarget, frame: str | None = None, **options: Any) -> IKResult:
        """Inverse kinematics: :func:`kinetree.ik.solve` with the same keywords; see it
        for targets, ``base=`` (targets in that frame) and ``device="cuda"`` (the batch on
        the GPU), and :class:`kinetree.ik.IKOptions` for every option, its default and
        unit (``prior="human"`` starts from and prefers a learned human pose)."""
        fn: Any = _LAZY.get("solve")
        if fn is None:
            from .ik import solve_keywords

            fn = _LAZY["solve"] = solve_keywords
        result: IKResult = fn(self, target, frame, options)  # the dict as it is
        return result

    def ik_many(
        self, target: IKTarget, n: int, frame: str | None = None, **options: Any
    ) -> np.ndarray:
        """Up to ``n`` distinct exact IK solutions ``(k, nq)`` of one target, from learned
        starts (``seeds=``, a :class:`kinetree.learn.LearnedIK`) or random ones; see
        :func:`kinetree.ik.solve_many` (``min_distance=0.1`` rad apart)."""
        from .ik import solve_many

        return solve_many(self, target, n, frame, **options)

    def ik_all(self, target: IKTarget, frame: str | None = None, **options: Any) -> np.ndarray:
        """Every closed-form IK branch ``(n_solutions, dof)``; see :func:`kinetree.ik.solve_all`."""
        from .ik import solve_all

        return solve_all(self, target, frame, **options)

    if not TYPE_CHECKING:  # hidden from the type checker: it would accept any name

        def __getattr__(self, name: str) -> Any:
            """The deprecated members (:data:`_MOVED_MEMBERS`), which warn; anything else
            is missing."""
            new = _MOVED_MEMBERS.get(name)
            if new is None:
                raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
            _warn_deprecated(f"kinetree.Model.{name}")
            if name == "swing_twist_layout":
                from .ik.kernel.swing_twist_layout import swing_twist_layout

                return lambda active: swing_twist_layout(self, active)
            if name == "v_indices":
                return lambda names: self.qv.v_of_coordinates(self.joint_indices(names))
            return getattr(self.qv if new.startswith("qv.") else self, new.removeprefix("qv."))

    def __repr__(self) -> str:
        return (
            f"Model({self.name!r}, dof={self.nv}"
            f"{f', nq={self.nq}' if self.nq != self.nv else ''}, frames={len(self.frame_names)}, "
            f"end_effectors={list(self.end_effectors)})"
        )

    # --- derived models --------------------------------------------------------------

    @cached_property
    def floating_base(self) -> str | None:
        """The name of the free joint that carries the whole model, or None for a fixed
        base: a joint of seven coordinates (``x y z`` [m], then a unit quaternion ``qw qx
        qy qz``; three slides then a ball node) with no moving joint above it, whatever
        made it (:meth:`with_floating_base`, which every loader's ``floating_base=True``
        goes through, a URDF ``floating`` or MJCF ``free`` joint at the root)."""
        for k in self.qv.ball_nodes.tolist():
            name = self.node_joint[k]
            slides = self.ancestors(k)[-4:-1]
            if (
                len(slides) == 3
                and len(self.joint_groups.get(name, ())) == 7
                and all(self.joint_type[s_] == JointType.PRISMATIC for s_ in slides)
                and all(self.node_joint[s_] == name for s_ in slides)
                and not any(self.moves(int(a)) for a in self.ancestors(int(slides[0]))[:-1])
            ):
                return str(name)
        return None

    def with_floating_base(self, joint: str = "root_joint", root: str | None = None) -> Model:
        """This model with a free base: a new root frame ``root`` (the world, at the
        identity) and a free joint ``joint`` (7 coordinates ``{joint}_x, _y, _z, _qw,
        _qx, _qy, _qz``, first in ``q``) to the old root, placed where the old root was
        at the neutral base pose. A fixed-root robot then moves as a whole: whole-body
        IK, retargeting. The one naming rule (``kinetree.anim.free_base`` keeps it too):
        ``root=None`` is ``"world"``, or ``"world_1"``, ``"world_2"``... where the model
        has a frame or joint of that name; a ``joint``, or a ``root`` given by name,
        that is taken raises :class:`~kinetree.errors.InvalidValueError`.

        The one way kinetree adds a free base: ``load(..., floating_base=True)`` (URDF,
        xacro, built-in models) calls it; :attr:`floating_base` then names the joint
        (and ``metadata["floating_base"]`` records it)."""
        import dataclasses

        if root is None:
            taken = set(self.node_names) | set(self.joint_names) | set(self.joint_groups)
            root, k = "world", 0
            while root in taken:
                k += 1
                root = f"world_{k}"
        for what, name in (("joint", joint), ("root", root)):
            if not isinstance(name, str) or not name:
                raise InvalidValueError(f"with_floating_base: {what} must be a name, got {name!r}")
        if root in self.node_names or joint in self.joint_groups or joint in self._dof_of:
            raise InvalidValueError(
                f"with_floating_base: {root!r} or {joint!r} is already a frame or joint of "
                f"{self.name!r}; pass other names (root=..., joint=...)"
            )
        names = (
            root,
            f"{self.node_names[0]}#{joint}_x",
            f"{self.node_names[0]}#{joint}_y",
            f"{self.node_names[0]}#{joint}_z",
        )
        parent = np.concatenate([[-1, 0, 1, 2], np.where(self.parent >= 0, self.parent + 4, 3)])
        eye = np.eye(4)[None]
        # The x slide carries the old root's placement; the slides and the ball sit on it.
        origin = np.concatenate([eye, self.origin[:1], eye, eye, eye, self.origin[1:]])
        # The ball node's axis is unused; (0, 0, 1), as the builder writes a free joint's.
        axis = np.concatenate(
            [[[0, 0, 1], [1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 1]], self.axis[1:]]
        )
        jtype = self.joint_type.copy()
        jtype[0] = JointType.BALL
        joint_type = np.concatenate([[0, 2, 2, 2], jtype])
        q_index = np.concatenate([[-1, 0, 1, 2], np.where(self.q_index >= 0, self.q_index + 7, -1)])
        q_index[4] = 3
        coords = tuple(f"{joint}_{c}" for c in ("x", "y", "z", "qw", "qx", "qy", "qz"))
        lim = np.concatenate([[[-np.inf, np.inf]] * 3 + [[-1.0, 1.0]] * 4, self.limits])
        node_joint = ("", joint, joint, joint, joint, *self.node_joint[1:])
        return dataclasses.replace(
            self,
            node_names=(*names, *self.node_names),
            parent=parent.astype(np.int64),
            origin=origin,
            axis=axis.astype(np.float64),
            joint_type=joint_type.astype(np.int64),
            q_index=q_index.astype(np.int64),
            q_scale=np.concatenate([np.ones(4), self.q_scale]),
            q_offset=np.concatenate([np.zeros(4), self.q_offset]),
            hidden=np.concatenate([[False, True, True, True], self.hidden]),
            node_joint=node_joint,
            joint_names=coords + self.joint_names,
            limits=lim,
            continuous=np.concatenate([np.zeros(7, dtype=bool), self.continuous]),
            q_neutral=np.concatenate([[0, 0, 0, 1.0, 0, 0, 0], self.q_neutral]),
            joint_groups={joint: coords, **self.joint_groups},
            couplings=tuple(
                (j + 7, s_ + 7 if s_ >= 0 else -1, m, o) for j, s_, m, o in self.couplings
            ),
            metadata={**self.metadata, "floating_base": joint},
        )

    def with_options(
        self,
        *,
        end_effectors: Sequence[str] | None = None,
        presets: Mapping[str, Sequence[str]] | None = None,
        q_neutral: ArrayLike | None = None,
        limits: ArrayLike | None = None,
    ) -> Model:
        """A copy with other end effectors, presets, neutral pose or limits."""
        import dataclasses

        changes: dict[str, Any] = {}
        if end_effectors is not None:
            for f in end_effectors:
                self.frame_index(f)
            changes["end_effectors"] = tuple(end_effectors)
        if presets is not None:
            for joints in presets.values():
                self.joint_indices(joints)
            changes["presets"] = {k: tuple(v) for k, v in presets.items()}
        if q_neutral is not None:
            qn = as_array(q_neutral, "q_neutral", (self.nq,))
            changes["q_neutral"] = self.normalize(qn)
        if limits is not None:
            lim = as_array(limits, "limits", (self.nq, 2), finite=False)
            if np.any(np.isnan(lim)) or np.any(lim[:, 0] > lim[:, 1]):
                raise InvalidValueError("limits must be (lo, hi) pairs with lo <= hi")
            changes["limits"] = lim.copy()
            qn = changes.get("q_neutral", self.q_neutral)
            changes["q_neutral"] = np.clip(qn, lim[:, 0], lim[:, 1])
        return dataclasses.replace(self, **changes)

    # --- collision (thin delegation; the work is in kinetree.collision) ----------------

    def distance(
        self,
        q: ArrayLike,
        obstacles: Iterable[ObstacleLike] | ObstacleLike = (),
        self_collision: bool = True,
        **options: Any,
    ) -> DistanceResult:
        """Signed minimum distance [m] between the robot and ``obstacles`` (and between its
        own links with ``self_collision``) at ``q`` (..., nq), with the closest pair: a
        :class:`kinetree.collision.DistanceResult`. ``options``: ``ignore`` (pairs of
        names to skip), and the arguments of :func:`kinetree.collision.collision_model`."""
        from .collision import distance_query

        result: DistanceResult = distance_query(self, q, obstacles, self_collision, options, None)
        return result

    def in_collision(
        self,
        q: ArrayLike,
        obstacles: Iterable[ObstacleLike] | ObstacleLike = (),
        self_collision: bool = True,
        margin: float = 0.0,
        **options: Any,
    ) -> bool | np.ndarray:
        """Whether the robot is within ``margin`` [m] of ``obstacles`` or (with
        ``self_collision``) of itself at ``q``: a bool, or a bool array over the batch."""
        from .collision import distance_query

        hit: bool | np.ndarray = distance_query(self, q, obstacles, self_collision, options, margin)
        return hit

    # --- mass and speed (thin delegation; the work is in kinetree.kinematics) ----------

    @cached_property
    def max_velocity(self) -> np.ndarray:
        """``(nv,)`` joint speed limits [rad/s or m/s] from :attr:`velocity_limits`
        (inf where a DoF has none)."""
        out = np.full(self.nv, np.inf)
        for name, limit in self.velocity_limits.items():
            out[self.qv.v_of_coordinates(self.joint_indices(name))] = float(limit)
        return _frozen(out)

    @property
    def total_mass(self) -> float:
        """Sum of the link masses [kg] of :attr:`inertials` (0 without any)."""
        return float(sum(m for m, _ in self.inertials.values()))

    def com(self, q: ArrayLike) -> np.ndarray:
        """Centre of mass ``(..., 3)`` [m] in the world frame at ``q`` (..., nq)."""
        from .kinematics import com

        return com(self, q)

    def com_jacobian(self, q: ArrayLike) -> np.ndarray:
        """Jacobian ``(..., 3, nv)`` of the centre of mass [m per unit motion] at ``q``."""
        from .kinematics import com_jacobian

        return com_jacobian(self, q)

    def manipulability(
        self, q: ArrayLike, frame: str | None = None, rows: str = "all"
    ) -> np.ndarray:
        """Yoshikawa's manipulability of ``frame`` at ``q`` (..., nq): the product of the
        singular values of ``J``, the geometric Jacobian's ``rows`` ("all" (6),
        "position" or "orientation" (3)), which is ``sqrt(det(J J^T))`` with at least as
        many DoF as rows and ``sqrt(det(J^T J))`` with fewer
        (:mod:`kinetree.kinematics.manipulability`). Zero at a singularity."""
        from .kinematics import manipulability

        return manipulability(self, q, frame, rows)
