"""Rotations as three angles about given axes: Euler, Tait-Bryan and Davenport angles.

A rotation that is a product of three axis rotations::

    R(a1, a2, a3) = exp([n1] a1) @ exp([n2] a2) @ exp([n3] a3)

with unit axes ``n1, n2, n3`` (``xyz``, ``zyx``, ``zxy`` ... Tait-Bryan sequences,
``zyz``-like proper Euler ones, or any axes with ``n1 ⟂ n2`` and ``n2 ⟂ n3``:
Davenport angles). :func:`sequence_matrix` builds ``R`` and :func:`decompose` inverts
it in closed form, accurate to rounding everywhere, gimbal lock included.
Angles are radians. Re-exported by :mod:`kinetree.spatial` (whose
:func:`~kinetree.spatial.quat_to_euler` and :func:`~kinetree.spatial.euler_to_quat` read
quaternions as angles about named axes with them).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._validate import as_array
from ..errors import InvalidValueError

__all__ = [
    "PERPENDICULAR_TOL",
    "axis_rotation",
    "decompose",
    "decompose_all",
    "pick_nearest",
    "sequence_matrix",
]

_TWO_PI = 2.0 * np.pi
#: Largest ``|n1 . n2|`` / ``|n2 . n3|`` accepted as perpendicular (unit axes).
PERPENDICULAR_TOL = 1e-9


def _check_axes(axes: ArrayLike) -> np.ndarray:
    n = as_array(axes, "axes", (3, 3))
    if n.shape != (3, 3):
        raise InvalidValueError(f"axes must be three 3-vectors (3, 3), got shape {n.shape}")
    norms = np.linalg.norm(n, axis=1)
    if np.any(norms < 1e-12):
        raise InvalidValueError("axes must be non-zero vectors")
    n = n / norms[:, None]
    if abs(float(n[0] @ n[1])) > PERPENDICULAR_TOL or abs(float(n[1] @ n[2])) > PERPENDICULAR_TOL:
        raise InvalidValueError(
            "a three-angle decomposition needs the middle axis perpendicular to the other "
            f"two; got n1.n2 = {float(n[0] @ n[1]):.3g}, n2.n3 = {float(n[1] @ n[2]):.3g}"
        )
    return n


def axis_rotation(axis: np.ndarray, angle: ArrayLike) -> np.ndarray:
    """Rotations ``(..., 3, 3)`` by ``angle`` [rad] (any shape) about one unit ``axis`` (3,)."""
    th = np.asarray(angle, dtype=np.float64)
    a = np.asarray(axis, dtype=np.float64)
    K = np.array(
        [[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]]
    )  # cross-product matrix [a]x
    c = np.cos(th)[..., None, None]
    s = np.sin(th)[..., None, None]
    return np.eye(3) + s * K + (1.0 - c) * (K @ K)


def sequence_matrix(angles: ArrayLike, axes: ArrayLike) -> np.ndarray:
    """``R = exp([n1] a1) exp([n2] a2) exp([n3] a3)`` for angles ``(..., 3)`` [rad].

    ``axes`` is ``(3, 3)``: the unit axes ``n1, n2, n3`` as rows (any axes here;
    :func:`decompose` needs ``n1 ⟂ n2 ⟂ n3``-adjacent ones).
    """
    a = as_array(angles, "angles", (3,))
    n = as_array(axes, "axes", (3, 3))
    n = n / np.linalg.norm(n, axis=1, keepdims=True)
    R = axis_rotation(n[0], a[..., 0])
    R = R @ axis_rotation(n[1], a[..., 1])
    return R @ axis_rotation(n[2], a[..., 2])


def decompose_all(R: ArrayLike, axes: ArrayLike) -> np.ndarray:
    """Both angle triples ``(..., 2, 3)`` [rad] with ``sequence_matrix(angles, axes) == R``.

    ``R`` is ``(..., 3, 3)``; ``axes`` rows ``n1, n2, n3`` need ``n1 ⟂ n2`` and
    ``n2 ⟂ n3`` (every Tait-Bryan and proper Euler sequence, and Davenport axes).

    Method: with ``w = R n3``, ``n1 . w = cos(a2 - lam)`` where
    ``lam = atan2(n1 . (n2 x n3), n1 . n3)``, so ``a2 = lam ± atan2(|w - (n1.w) n1|, n1.w)``
    (the two branches); ``a1`` is the angle about ``n1`` taking
    ``v = exp([n2] a2) n3`` to ``w`` (read in the plane of ``n2`` and ``n1 x n2``), and
    ``a3`` is read from the residual ``exp([n2] a2)^T exp([n1] a1)^T R``, a rotation
    about ``n3``. Taking ``a3`` from the residual keeps ``R`` exact to rounding even
    near gimbal lock, where ``a1`` alone is ill-determined; at exact lock ``a1`` is
    arbitrary and ``a3`` carries the whole rotation about the aligned axes. ``a1`` and
    ``a3`` are in ``[-pi, pi]``; ``a2`` is ``lam ± [0, pi]``.
    """
    M = as_array(R, "R", (3, 3))
    n = _check_axes(axes)
    n1, n2, n3 = n
    e3 = np.cross(n1, n2)
    lam = float(np.arctan2(n3 @ e3, n3 @ n1))
    w = M @ n3  # (..., 3)
    c = w @ n1
    w2 = w @ n2
    w3 = w @ e3
    s = np.hypot(w2, w3)  # |w - (n1.w) n1| = |sin(a2 - lam)|
    phi = np.arctan2(s, c)
    # In the (n2, e3) plane (angles measured from n2 toward e3, the sense of a rotation
    # about n1) w's perpendicular part lies at atan2(w3, w2) and v's at -+pi/2.
    # At exact lock (s == 0) a1 is free; atan2(0, 0) picks one and a3 takes the rest.
    base = np.arctan2(w3, w2)
    p = n2
    r = np.cross(n3, p)
    out = np.empty((*M.shape[:-2], 2, 3))
    for b, sign in enumerate((1.0, -1.0)):
        a2 = lam + sign * phi
        a1 = base + sign * (np.pi / 2)
        a1 = a1 - _TWO_PI * np.round(a1 / _TWO_PI)
        # The residual R2^T R1^T R is a rotation about n3; read its angle from two
        # directions perpendicular to n3 (exact to rounding even near lock).
        R12 = axis_rotation(n1, a1) @ axis_rotation(n2, a2)
        Rres = np.swapaxes(R12, -1, -2) @ M
        Mp = Rres @ p
        Mr = Rres @ r
        cos = Mp @ p + Mr @ r
        sin = np.cross(p, Mp) @ n3 + np.cross(r, Mr) @ n3
        out[..., b, 0] = a1
        out[..., b, 1] = a2
        out[..., b, 2] = np.arctan2(sin, cos)
    return out


def _wrap_near(angles: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """``angles + 2 pi k`` closest to ``ref`` (elementwise)."""
    return angles - _TWO_PI * np.round((angles - ref) / _TWO_PI)


def pick_nearest(candidates: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """From ``candidates`` ``(..., 2, 3)`` the branch (2 pi-wrapped) nearest ``ref`` (..., 3).

    Distance: the largest angle difference. Returns ``(..., 3)``.
    """
    c = _wrap_near(candidates, ref[..., None, :])
    d = np.max(np.abs(c - ref[..., None, :]), axis=-1)  # (..., 2)
    k = np.argmin(d, axis=-1)
    return np.take_along_axis(c, k[..., None, None], axis=-2)[..., 0, :]


def decompose(R: ArrayLike, axes: ArrayLike, hint: ArrayLike | None = None) -> np.ndarray:
    """Angles ``(..., 3)`` [rad] of ``R`` (..., 3, 3) for the axis sequence ``axes`` (3, 3).

    Of the two branches (see :func:`decompose_all`) this returns, with ``hint``
    (..., 3), the one nearest the hint, each angle shifted by a multiple of 2 pi to
    lie nearest the hint's; without a hint, the branch whose middle angle is
    nearest its no-rotation value (``|a2| <= pi/2`` for Tait-Bryan sequences).
    """
    both = decompose_all(R, axes)
    if hint is None:
        ref = np.zeros((*both.shape[:-2], 3))
        return pick_nearest(both, ref)
    h = as_array(hint, "hint", (3,))
    return pick_nearest(both, np.broadcast_to(h, (*both.shape[:-2], 3)))
