"""What tracking needs to know about a skeleton: its body parts, its size, its feet
and soles, the ground, and how to move its floating base.

:class:`Skeleton` is built once per tracker (:func:`skeleton`) and answers those
questions with arrays, so that the per-frame loop does no name lookups.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...errors import InvalidValueError, UnsupportedError
from ...io.body_parts import find_body_parts
from ...model import Model
from ..anatomy import BodyFrame, body_frame

__all__ = ["Ground", "Skeleton", "read_ground", "skeleton"]

_AXES = {"x": 0, "y": 1, "z": 2}


@dataclass(frozen=True)
class Ground:
    """A horizontal floor: ``height`` [model length unit] along the world axis ``up``
    (0, 1 or 2). No sole point of a tracked body goes below it."""

    height: float
    up: int


def read_ground(ground: Any, default_up: int) -> Ground | None:
    """``ground=`` as a :class:`Ground`: None; a height (along the skeleton's up axis
    ``default_up``); ``(height, "y")``/``(height, 1)``; or a :class:`Ground`."""
    if ground is None or isinstance(ground, Ground):
        return ground
    up = default_up
    height: Any = ground
    if isinstance(ground, (tuple, list)):
        if len(ground) != 2:
            raise InvalidValueError(
                f"ground must be a height or (height, up axis 'x'|'y'|'z'), got {ground!r}"
            )
        height, axis = ground
        if isinstance(axis, str) and axis.lower() in _AXES:
            up = _AXES[axis.lower()]
        elif isinstance(axis, (int, np.integer)) and not isinstance(axis, bool) and 0 <= axis < 3:
            up = int(axis)
        else:
            raise InvalidValueError(f"ground up axis must be 'x', 'y' or 'z', got {axis!r}")
    if isinstance(height, bool) or not isinstance(height, (int, float, np.integer, np.floating)):
        raise InvalidValueError(f"ground height must be a number, got {height!r}")
    if not np.isfinite(float(height)):
        raise InvalidValueError(f"ground height must be finite, got {height!r}")
    return Ground(float(height), up)


@dataclass(frozen=True, eq=False)
class Skeleton:
    """A model seen as a body.

    Attributes:
        model: the model.
        parts: ``{role: frame}``.
        body: the rest pose's :class:`~kinetree.anim.anatomy.BodyFrame`.
        up_axis: the world axis closest to the body's up.
        index: ``{frame: node index}`` of the frames fk_all returns.
        soles: per side (``"l"``, ``"r"``), the frames whose heights count as the
            foot's sole (ankle, toe and the toe's end).
        base_cols: velocity columns that translate the floating base (empty: fixed).
        base_q: the configuration coordinates of those columns.
        base_pinv: ``(len(base_q), 3)``: the base coordinates' change for a world
            translation of the pelvis, where it is the same at every configuration (a
            BVH root's position channels); None where it is not (a quaternion base
            translating in its own frame).
        yaw_col: the velocity column turning the base about the world up (-1: none).
    """

    model: Model
    parts: dict[str, str]
    body: BodyFrame
    up_axis: int
    index: dict[str, int]
    soles: dict[str, tuple[int, ...]]
    base_cols: np.ndarray
    base_q: np.ndarray
    base_pinv: np.ndarray | None

    @property
    def height(self) -> float:
        return self.body.height

    def role_frames(self) -> list[str]:
        return list(self.parts.values())

    def sole_heights(self, T_all: np.ndarray, up: int) -> dict[str, float]:
        """Lowest sole point per side [length unit] along world axis ``up``."""
        return {s: float(np.min(T_all[list(ix), up, 3])) for s, ix in self.soles.items()}

    def shift_base(self, q: np.ndarray, delta: np.ndarray) -> np.ndarray:
        """``q`` with the floating base moved by the world translation ``delta`` (3,)
        (the pelvis moves by the part of ``delta`` the base can make)."""
        if self.base_cols.size == 0:
            return q
        m = self.model
        if self.base_pinv is not None:  # the base translates along fixed world axes
            out = q.copy()
            out[self.base_q] += self.base_pinv @ delta
            return out
        J = m.jacobian(q, self.parts["pelvis"])[:3, self.base_cols]
        v = np.zeros(m.nv)
        v[self.base_cols] = np.linalg.lstsq(J, delta, rcond=None)[0]
        return np.asarray(m.integrate(q, v), dtype=np.float64)


def _base_columns(model: Model, pelvis: str) -> np.ndarray:
    """Velocity columns that move the pelvis as a pure translation (a floating base's
    translation DoF, or a BVH root's position channels)."""
    q = model.neutral()
    J = model.jacobian(q, pelvis)
    lin = np.linalg.norm(J[:3], axis=0)
    ang = np.linalg.norm(J[3:], axis=0)
    cols = np.flatnonzero((lin > 1e-6) & (ang < 1e-9))
    if cols.size and np.linalg.matrix_rank(J[:3, cols]) < 3:
        return np.zeros(0, dtype=np.int64)
    return cols


def _base_map(model: Model, pelvis: str, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """``(base_q, base_pinv)`` of :class:`Skeleton`: the coordinates of the velocity
    columns ``cols``, and the least-squares map from a world translation to their change
    when the pelvis Jacobian's columns are the same at the neutral pose and at two other
    configurations and each column is one coordinate (else None)."""
    empty = np.zeros(0, dtype=np.int64)
    if cols.size == 0:
        return empty, None
    coords = [np.flatnonzero(np.asarray(model.qv.q_v) == c) for c in cols]
    if any(c.size != 1 for c in coords) or len(model.qv.ball_nodes) > 0:
        return empty, None
    base_q = np.array([int(c[0]) for c in coords], dtype=np.int64)
    rng = np.random.default_rng(0)
    J0 = model.jacobian(model.neutral(), pelvis)[:3, cols]
    for _ in range(2):
        q = model.neutral() + rng.uniform(-1.0, 1.0, model.nq)
        if not np.allclose(model.jacobian(q, pelvis)[:3, cols], J0, atol=1e-12):
            return empty, None
    return base_q, np.linalg.pinv(J0)


def skeleton(model: Model, roles: Mapping[str, str] | None = None) -> Skeleton:
    """The :class:`Skeleton` of ``model``. ``roles``: ``{role: frame}`` that replace or
    add to :func:`~kinetree.io.body_parts.find_body_parts`. Raises
    :class:`~kinetree.errors.UnsupportedError` naming what is missing when the model has
    no pelvis, head and hips (or shoulders), :class:`~kinetree.errors.UnknownNameError`
    for a role frame the model lacks."""
    parts = find_body_parts(model)
    if roles is not None:
        if not isinstance(roles, Mapping):
            raise InvalidValueError(f"roles must be a mapping {{role: frame}}, got {roles!r}")
        from ...io.body_parts import ROLES

        for role, frame in roles.items():
            if role not in ROLES:
                from ...errors import unknown_name

                raise unknown_name("role", role, ROLES)
            model.frame_index(frame)
        parts.update(roles)
    try:
        body = body_frame(model, parts)
    except UnsupportedError as exc:
        raise UnsupportedError(f"tracking needs a body: {exc}") from None
    T = model.fk_all(model.neutral())
    index = {n: i for i, n in enumerate(model.frame_names)}
    up_axis = int(np.argmax(np.abs(body.up)))
    soles: dict[str, tuple[int, ...]] = {}
    for s in ("l", "r"):
        frames = [parts[r] for r in (f"ankle_{s}", f"toe_{s}") if r in parts]
        if not frames:
            continue
        tip = model.frame_index(frames[-1])  # a node: parent and hidden are per node
        kids = [
            index[model.node_names[k]]
            for k, p in enumerate(model.parent)
            if p == tip and not model.hidden[k] and model.node_names[k] in index
        ]
        ix = [index[f] for f in frames] + kids[:1]
        soles[s] = tuple(ix)
    del T
    cols = _base_columns(model, parts["pelvis"])
    base_q, pinv = _base_map(model, parts["pelvis"], cols)
    return Skeleton(
        model=model,
        parts=parts,
        body=body,
        up_axis=up_axis,
        index=index,
        soles=soles,
        base_cols=cols,
        base_q=base_q,
        base_pinv=pinv,
    )
