"""What a frame should reach: a position, an orientation, a pose, or a direction.

Each target may carry a per-axis ``mask`` (which world axes count) and a
``weight`` (scalar or per axis) used by the solvers; success is judged on the
masked components only, unweighted, against the tolerances.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._validate import as_array, check_rigid
from ..errors import InvalidValueError, NotRigidError
from .kernel.layout import (
    KIND_DIRECTION,
    KIND_FRAME,
    T_POINT,
    T_POS,
    T_ROT,
    T_W_POS,
    T_W_ROT,
    TARGET_SIZE,
)

__all__ = ["Direction", "Orientation", "Pose", "Position", "Target"]


def _vec3(x: ArrayLike | None, name: str, default: float) -> np.ndarray:
    if x is None:
        return np.full(3, default)
    a = as_array(x, name)
    if a.ndim == 0:
        return np.full(3, float(a))
    if a.shape != (3,):
        raise InvalidValueError(
            f"{name} must be a scalar or 3 values (x, y, z), got shape {a.shape}"
        )
    return a.astype(float)


_ONES3 = np.ones(3)
_LAST_ROW = np.array([0.0, 0.0, 0.0, 1.0])
_EYE9 = np.eye(3).reshape(9)


def _weights(mask: ArrayLike | None, weight: ArrayLike | None, name: str) -> np.ndarray:
    if mask is None and weight is None:
        return _ONES3
    w = _vec3(weight, f"{name} weight", 1.0)
    if np.any(w < 0):
        raise InvalidValueError(f"{name} weight must be >= 0, got {w.tolist()}")
    if mask is not None:
        m = np.asarray(mask, dtype=bool)
        if m.shape != (3,):
            raise InvalidValueError(f"{name} mask must be 3 booleans (x, y, z), got {mask!r}")
        w = w * m
    return w


@dataclass(frozen=True)
class Position:
    """Frame origin (plus an optional ``point`` offset in the frame, [m]) at ``xyz`` [m]."""

    xyz: ArrayLike
    mask: ArrayLike | None = None
    weight: ArrayLike | None = None
    point: ArrayLike | None = None


@dataclass(frozen=True)
class Orientation:
    """Frame orientation equal to the 3x3 rotation ``R`` (mask: world axes of the error)."""

    R: ArrayLike
    mask: ArrayLike | None = None
    weight: ArrayLike | None = None


@dataclass(frozen=True)
class Pose:
    """Full 4x4 pose ``T``; ``position_weight`` [1/m] and ``orientation_weight`` [1/rad]."""

    T: ArrayLike
    position_mask: ArrayLike | None = None
    orientation_mask: ArrayLike | None = None
    position_weight: ArrayLike | None = None
    orientation_weight: ArrayLike | None = None
    point: ArrayLike | None = None


@dataclass(frozen=True)
class Direction:
    """Point the frame's local ``axis`` along the world ``direction`` (a look-at).

    Orientation-only with two constrained DoF: the twist about ``axis`` is free.
    """

    direction: ArrayLike
    axis: ArrayLike = field(default_factory=lambda: np.array([1.0, 0.0, 0.0]))
    weight: float = 1.0


Target = Position | Orientation | Pose | Direction

POSE_ROW = np.zeros(TARGET_SIZE)
POSE_ROW[T_W_POS : T_W_ROT + 3] = 1.0
POSITION_ROW = np.zeros(TARGET_SIZE)
POSITION_ROW[T_ROT : T_ROT + 9] = _EYE9
POSITION_ROW[T_W_POS : T_W_POS + 3] = 1.0


def encode_plain(target: Any) -> np.ndarray | None:
    """The common case without masks, weights or offsets, for one float64 target: the
    per-frame cost of animation loops. None when the general path is needed."""
    tp = type(target)
    if tp is Pose:
        T = target.T
        if (
            type(T) is np.ndarray
            and T.shape == (4, 4)
            and T.dtype == np.float64
            and target.position_mask is None
            and target.orientation_mask is None
            and target.position_weight is None
            and target.orientation_weight is None
            and target.point is None
        ):
            if not (T[3, 0] == 0.0 and T[3, 1] == 0.0 and T[3, 2] == 0.0 and T[3, 3] == 1.0):
                return None  # the general path raises the right error
            tf = POSE_ROW.copy()
            tf[T_POS : T_POS + 3] = T[:3, 3]
            tf[T_ROT : T_ROT + 9] = T[:3, :3].ravel()
            return tf
    elif tp is Position:
        p = target.xyz
        if (
            type(p) is np.ndarray
            and p.shape == (3,)
            and p.dtype == np.float64
            and target.mask is None
            and target.weight is None
            and target.point is None
        ):
            if not np.isfinite(p).all():
                return None  # the general path raises the error
            tf = POSITION_ROW.copy()
            tf[T_POS : T_POS + 3] = p
            return tf
    return None


def encode(target: Any) -> tuple[np.ndarray, int, tuple[int, ...]]:
    """``(tf, kind, batch_shape)``: the target as ``(..., TARGET_SIZE)`` rows for the
    kernels (slots named in :mod:`kinetree.ik.kernel.layout`). Finiteness is checked here;
    rigidity of 4x4 poses by the kernel itself.
    """
    fast = encode_plain(target)
    if fast is not None:
        return fast, KIND_FRAME, ()
    if isinstance(target, np.ndarray) or isinstance(target, (list, tuple)):
        target = Pose(target)
    if isinstance(target, Pose):
        # Finiteness and rigidity of poses are checked by the solver kernel itself
        # (status codes), so a raw array costs no extra pass here.
        T = as_array(target.T, "target pose", (4, 4), finite=False)
        last = T[..., 3, :]
        for bad, exc, what in (
            (~np.all(np.isfinite(last), axis=-1), InvalidValueError, "contains NaN or inf"),
            (
                ~np.all(last == _LAST_ROW, axis=-1),
                NotRigidError,
                "is not a rigid transform: its last row must be [0, 0, 0, 1]",
            ),
        ):
            if np.any(bad):
                where = ""
                if bad.ndim:
                    idx = tuple(int(i) for i in np.unravel_index(int(np.argmax(bad)), bad.shape))
                    where = f" (batch item {idx})"
                raise exc(f"target pose{where} {what}")
        batch = T.shape[:-2]
        tf = np.zeros((*batch, TARGET_SIZE))
        tf[..., T_POS : T_POS + 3] = T[..., :3, 3]
        tf[..., T_ROT : T_ROT + 9] = T[..., :3, :3].reshape(*batch, 9)
        tf[..., T_W_POS : T_W_POS + 3] = _weights(
            target.position_mask, target.position_weight, "position"
        )
        tf[..., T_W_ROT : T_W_ROT + 3] = _weights(
            target.orientation_mask, target.orientation_weight, "orientation"
        )
        if target.point is not None:
            tf[..., T_POINT : T_POINT + 3] = _vec3(target.point, "point", 0.0)
        return tf, KIND_FRAME, batch
    if isinstance(target, Position):
        p = as_array(target.xyz, "target position", (3,))
        batch = p.shape[:-1]
        tf = np.zeros((*batch, TARGET_SIZE))
        tf[..., T_POS : T_POS + 3] = p
        tf[..., T_ROT : T_ROT + 9] = _EYE9
        tf[..., T_W_POS : T_W_POS + 3] = _weights(target.mask, target.weight, "position")
        if target.point is not None:
            tf[..., T_POINT : T_POINT + 3] = _vec3(target.point, "point", 0.0)
        return tf, KIND_FRAME, batch
    if isinstance(target, Orientation):
        R = as_array(target.R, "target orientation", (3, 3))
        T = np.zeros((*R.shape[:-2], 4, 4))
        T[..., :3, :3] = R
        T[..., 3, 3] = 1.0
        check_rigid(T, "target orientation")
        batch = R.shape[:-2]
        tf = np.zeros((*batch, TARGET_SIZE))
        tf[..., T_ROT : T_ROT + 9] = R.reshape(*batch, 9)
        tf[..., T_W_ROT : T_W_ROT + 3] = _weights(target.mask, target.weight, "orientation")
        return tf, KIND_FRAME, batch
    if isinstance(target, Direction):
        d = as_array(target.direction, "target direction", (3,))
        a = as_array(target.axis, "direction axis", (3,))
        if a.shape != (3,):
            raise InvalidValueError("Direction.axis must be one 3-vector in the frame")
        # Scale by the largest component first: the norm of [1e300, 1e300, 0] overflows.
        d = d / np.maximum(np.max(np.abs(d), axis=-1, keepdims=True), 1e-300)
        a = a / max(float(np.max(np.abs(a))), 1e-300)
        nd = np.linalg.norm(d, axis=-1, keepdims=True)
        na = float(np.linalg.norm(a))
        if np.any(nd < 1e-12) or na < 1e-12:
            raise InvalidValueError("Direction needs non-zero direction and axis vectors")
        wt = target.weight
        if isinstance(wt, bool) or not isinstance(wt, (int, float, np.integer, np.floating)):
            raise InvalidValueError(
                f"Direction weight must be one number >= 0, got {target.weight!r}"
            )
        w = float(wt)
        if not np.isfinite(w) or w < 0:
            raise InvalidValueError(
                f"Direction weight must be finite and >= 0, got {target.weight!r}"
            )
        batch = d.shape[:-1]
        tf = np.zeros((*batch, TARGET_SIZE))
        tf[..., T_POS : T_POS + 3] = d / nd
        tf[..., T_ROT : T_ROT + 9] = _EYE9
        tf[..., T_W_ROT : T_W_ROT + 3] = w
        tf[..., T_POINT : T_POINT + 3] = a / na
        return tf, KIND_DIRECTION, batch
    tensor = ""
    if not isinstance(target, np.ndarray) and hasattr(target, "__dlpack_device__"):
        tensor = " (a tensor of another array library: give tensor.numpy() on the CPU)"
    raise InvalidValueError(
        f"target of type {type(target).__name__} is not understood{tensor}; give a 4x4 "
        "pose array, Position, Orientation, Pose, Direction, or a dict {frame: target}"
    )
