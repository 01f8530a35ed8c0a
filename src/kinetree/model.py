"""The kinematic tree as immutable arrays.

A :class:`Model` is a tree of *nodes* in topological order (every parent before
its children). Each node is a link frame: its world pose is

    T_world_node = T_world_parent @ origin @ motion(q)

where ``origin`` is a fixed 4x4 transform and ``motion`` a rotation about (revolute)
or translation along (prismatic) the node's ``axis`` by the joint coordinate, or
the identity (fixed). A joint with several rotation axes (a ball joint) is a run
of one-DoF nodes at one point, grouped under one user-facing name; its inner
nodes are hidden from :attr:`Model.frame_names`.

Models are built by :class:`kinetree.builder.ModelBuilder`, the loaders in
:mod:`kinetree.io`, and :mod:`kinetree.models`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from .errors import (
    InvalidValueError,
    ModelStructureError,
    ShapeError,
    UnknownNameError,
    unknown_name,
)

if TYPE_CHECKING:
    from .geometry import Geometry
    from .ik.result import IKResult

__all__ = ["JOINT_TYPES", "JointType", "Model"]


class JointType(IntEnum):
    """How a node moves with its joint coordinate (the values stored in ``joint_type``)."""

    FIXED = 0
    REVOLUTE = 1  # rotation about ``axis`` by the coordinate [rad]
    PRISMATIC = 2  # translation along ``axis`` by the coordinate [m]


JOINT_TYPES = tuple(t.name.lower() for t in JointType)

# Functions of upper layers that the convenience methods delegate to, imported on first
# use (model sits below kinematics and ik; the work stays there).
_LAZY: dict[str, Any] = {}


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class Model:
    """An immutable kinematic tree; see the module docstring for the conventions.

    Node arrays (length ``n_nodes``): ``node_names``, ``parent`` (-1 for the root),
    ``origin`` (n, 4, 4), ``axis`` (n, 3) unit vectors in the node frame,
    ``joint_type`` (:class:`JointType` values), ``q_index`` (index into
    ``q`` or -1), ``q_scale``/``q_offset`` (mimic joints: value = scale*q + offset),
    ``hidden`` (inner nodes of multi-axis joints), ``node_joint`` (the joint name
    that moves the node, or "" for the root).

    DoF arrays (length ``dof``): ``joint_names``, ``limits`` (dof, 2) in rad or m,
    ``continuous``, ``q_neutral``.
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

    def __post_init__(self) -> None:
        for attr in (
            "parent", "origin", "axis", "joint_type", "q_index", "q_scale", "q_offset",
            "hidden", "limits", "continuous", "q_neutral",
        ):  # fmt: skip
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
        """Number of degrees of freedom (length of ``q``)."""
        return len(self.joint_names)

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
        """Node index of ``frame`` (default: the first end effector)."""
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
        """Boolean mask over ``q`` of the named joints/groups/presets (all when None)."""
        mask = np.zeros(self.dof, dtype=bool)
        if names is None:
            mask[:] = True
        else:
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
        """Length of a configuration ``q`` (equal to :attr:`nv` while every joint has
        one coordinate per degree of freedom)."""
        return len(self.joint_names)

    @property
    def nv(self) -> int:
        """Length of a motion: a joint velocity, an IK step, a Jacobian row."""
        return len(self.joint_names)

    @cached_property
    def dof_node(self) -> np.ndarray:
        """``(dof,)``: the node each DoF drives directly (not through a mimic relation),
        the first such node in tree order, or -1 when only mimic joints use it."""
        out = np.full(self.dof, -1, dtype=np.int64)
        for k in range(self.n_nodes - 1, -1, -1):
            qi = self.q_index[k]
            if (
                qi >= 0
                and self.joint_type[k] != JointType.FIXED
                and self.q_scale[k] == 1.0
                and self.q_offset[k] == 0.0
            ):
                out[qi] = k
        return _frozen(out)

    @cached_property
    def dof_type(self) -> np.ndarray:
        """``(dof,)``: the :class:`JointType` of each DoF (revolute or prismatic)."""
        out = np.full(self.dof, int(JointType.REVOLUTE), dtype=np.int64)
        for k in range(self.n_nodes):
            qi = self.q_index[k]
            if qi >= 0 and self.joint_type[k] == JointType.PRISMATIC:
                out[qi] = int(JointType.PRISMATIC)
        return _frozen(out)

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

    def swing_twist_layout(self, active: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(ints, floats)`` of the swing-twist groups with an active DoF, laid out for
        :mod:`kinetree.ik._swing_twist` (``ints[0]`` is the number of groups)."""
        ints: list[int] = [0]
        floats: list[float] = []
        for group, (bone, sw, tlo, thi) in self.swing_twist.items():
            dofs, nodes = self.group_nodes(group)
            n_active = int(np.count_nonzero(active[dofs]))
            if n_active == 0:
                continue
            ints[0] += 1
            ints += [*nodes.tolist(), *dofs.tolist(), int(n_active == len(dofs))]
            floats += [*map(float, bone), sw, tlo, thi]
        return np.array(ints, dtype=np.int64), np.array(floats, dtype=np.float64)

    def swing_twist_angles(self, q: ArrayLike, group: str) -> tuple[float, float]:
        """``(swing, twist)`` [rad] of a swing-twist limited ball joint at ``q``."""
        from ._validate import as_array
        from .ik._swing_twist import group_rotation, swing_twist
        from .kinematics.layout import packed

        if group not in self.swing_twist:
            raise unknown_name("swing-twist joint", group, self.swing_twist)
        qa = as_array(q, "q", (self.dof,))
        if qa.shape != (self.dof,):
            raise ShapeError(f"q must have shape ({self.dof},), got {qa.shape}")
        dofs, nodes = self.group_nodes(group)
        R = np.empty((3, 3))
        group_rotation(packed(self)[0], nodes, dofs, np.require(qa, np.float64, ("C", "W")), R,
                       np.empty((3, 3)))  # fmt: skip
        sw, _, _, _, tw = swing_twist(R, np.ascontiguousarray(self.swing_twist[group][0]))
        return float(sw), float(tw)

    # --- configurations --------------------------------------------------------------

    def neutral(self) -> np.ndarray:
        """The model's neutral configuration (zeros clipped into the limits unless set)."""
        return self.q_neutral.copy()

    def random_configuration(
        self, n: int | None = None, rng: np.random.Generator | int | None = None
    ) -> np.ndarray:
        """Uniform random configuration(s) within limits: ``(dof,)`` or ``(n, dof)``.

        Unlimited revolute joints sample [-pi, pi]; unlimited prismatic [-1, 1] m.
        """
        gen = np.random.default_rng(rng)
        lo, hi = self.sampling_bounds()
        shape = (self.dof,) if n is None else (int(n), self.dof)
        r = gen.random(shape)
        # lo (1 - r) + hi r: no overflow when hi - lo exceeds the float range.
        return np.clip(lo * (1.0 - r) + hi * r, lo, hi)

    def sampling_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Finite ``(lo, hi)`` used for random sampling (see :meth:`random_configuration`):
        the limits, with an infinite side replaced by a span of 2 pi (revolute) or 2 m
        (prismatic) from the finite one, or by [-pi, pi] / [-1, 1] m when both are."""
        lo = self.limits[:, 0].copy()
        hi = self.limits[:, 1].copy()
        prism = self.dof_type == JointType.PRISMATIC
        span = np.where(prism, 1.0, np.pi)
        lo_inf, hi_inf = ~np.isfinite(lo), ~np.isfinite(hi)
        both = lo_inf & hi_inf
        lo_out = np.where(both, -span, np.where(lo_inf, hi - 2.0 * span, lo))
        hi_out = np.where(both, span, np.where(hi_inf, lo + 2.0 * span, hi))
        return lo_out, hi_out

    def within_limits(self, q: ArrayLike, tol: float = 0.0) -> np.ndarray:
        """Whether each configuration in ``q`` (..., dof) respects the limits."""
        q = np.asarray(q, dtype=np.float64)
        return np.all((q >= self.limits[:, 0] - tol) & (q <= self.limits[:, 1] + tol), axis=-1)

    # --- kinematics (thin delegation; the work is in kinetree.kinematics / kinetree.ik) -

    def fk(self, q: ArrayLike, frame: str | None = None) -> np.ndarray:
        """World pose ``(..., 4, 4)`` of ``frame`` (default: first end effector) at ``q``."""
        from .kinematics import fk

        return fk(self, q, frame)

    def fk_all(self, q: ArrayLike) -> np.ndarray:
        """World poses ``(..., n_frames, 4, 4)`` of every frame, ordered as ``frame_names``."""
        from .kinematics import fk_all

        return fk_all(self, q)

    def jacobian(
        self, q: ArrayLike, frame: str | None = None, point: ArrayLike | None = None
    ) -> np.ndarray:
        """Geometric Jacobian ``(..., 6, dof)`` of ``frame`` (rows: linear then angular).

        ``point`` is an optional offset in the frame's own coordinates [m].
        """
        from .kinematics import jacobian

        return jacobian(self, q, frame, point)

    def ik(self, target: Any, frame: str | None = None, **options: Any) -> IKResult:
        """Inverse kinematics; see :func:`kinetree.ik.solve` for targets and
        :class:`kinetree.ik.IKOptions` for every option, its default and unit."""
        fn: Any = _LAZY.get("solve")
        if fn is None:
            from .ik.solve import solve

            fn = _LAZY["solve"] = solve
        result: IKResult = fn(self, target, frame, **options)
        return result

    def ik_all(self, target: Any, frame: str | None = None, **options: Any) -> np.ndarray:
        """Every closed-form IK branch ``(n_solutions, dof)``; see :func:`kinetree.ik.solve_all`."""
        from .ik import solve_all

        return solve_all(self, target, frame, **options)

    def __repr__(self) -> str:
        return (
            f"Model({self.name!r}, dof={self.dof}, frames={len(self.frame_names)}, "
            f"end_effectors={list(self.end_effectors)})"
        )

    # --- derived models --------------------------------------------------------------

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
            from ._validate import as_array

            qn = as_array(q_neutral, "q_neutral", (self.dof,))
            changes["q_neutral"] = qn.copy()
        if limits is not None:
            from ._validate import as_array

            lim = as_array(limits, "limits", (self.dof, 2), finite=False)
            if np.any(np.isnan(lim)) or np.any(lim[:, 0] > lim[:, 1]):
                raise InvalidValueError("limits must be (lo, hi) pairs with lo <= hi")
            changes["limits"] = lim.copy()
            qn = changes.get("q_neutral", self.q_neutral)
            changes["q_neutral"] = np.clip(qn, lim[:, 0], lim[:, 1])
        return dataclasses.replace(self, **changes)
