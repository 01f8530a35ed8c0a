"""Ball joints as rotations: axis sequences, their angle decomposition, and slerp.

A ball joint in a :class:`~kinetree.model.Model` is a run of three revolute nodes
at one point (see :mod:`kinetree.model`), so its local rotation is a product of
three axis rotations::

    R(q1, q2, q3) = exp([n1] q1) @ exp([n2] q2) @ exp([n3] q3)

with unit axes ``n1, n2, n3`` (``xyz``, ``zyx``, ``zxy`` ... Tait-Bryan sequences,
``zyz``-like proper Euler ones, or any axes with ``n1 ⟂ n2`` and ``n2 ⟂ n3``:
Davenport angles). :func:`sequence_matrix` builds ``R`` and
:func:`decompose` inverts it in closed form, accurate to rounding everywhere,
gimbal lock included. :func:`slerp` interpolates unit quaternions
``(w, x, y, z)`` along the shorter arc. Angles are radians throughout.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from .._validate import as_array
from ..errors import InvalidValueError
from ..model import JointType, Model

__all__ = [
    "BallJoint",
    "axis_rotation",
    "ball_joints",
    "decompose",
    "decompose_all",
    "euler_to_quat",
    "quat_to_euler",
    "sequence_matrix",
    "slerp",
]

_TWO_PI = 2.0 * np.pi
#: Largest ``|n1 . n2|`` / ``|n2 . n3|`` accepted as perpendicular.
_PERP_TOL = 1e-9


def _check_axes(axes: ArrayLike) -> np.ndarray:
    n = as_array(axes, "axes", (3, 3))
    if n.shape != (3, 3):
        raise InvalidValueError(f"axes must be three 3-vectors (3, 3), got shape {n.shape}")
    norms = np.linalg.norm(n, axis=1)
    if np.any(norms < 1e-12):
        raise InvalidValueError("axes must be non-zero vectors")
    n = n / norms[:, None]
    if abs(float(n[0] @ n[1])) > _PERP_TOL or abs(float(n[1] @ n[2])) > _PERP_TOL:
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


def _canonical(q: np.ndarray) -> np.ndarray:
    return np.where((q[..., :1] < 0.0), -q, q)


def matrix_to_quat(R: np.ndarray) -> np.ndarray:
    """Unit quaternions ``(..., 4)`` (w, x, y, z) with ``w >= 0`` of rotations (..., 3, 3)."""
    from ..spatial import matrix_to_quaternion

    return np.asarray(matrix_to_quaternion(R))


def quat_to_matrix(q: np.ndarray) -> np.ndarray:
    """Rotations ``(..., 3, 3)`` of quaternions ``(..., 4)`` (w, x, y, z), normalised first."""
    q = np.asarray(q, dtype=np.float64)
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    w, x, y, z = np.moveaxis(q, -1, 0)
    out = np.empty((*q.shape[:-1], 3, 3))
    out[..., 0, 0] = 1 - 2 * (y * y + z * z)
    out[..., 0, 1] = 2 * (x * y - w * z)
    out[..., 0, 2] = 2 * (x * z + w * y)
    out[..., 1, 0] = 2 * (x * y + w * z)
    out[..., 1, 1] = 1 - 2 * (x * x + z * z)
    out[..., 1, 2] = 2 * (y * z - w * x)
    out[..., 2, 0] = 2 * (x * z - w * y)
    out[..., 2, 1] = 2 * (y * z + w * x)
    out[..., 2, 2] = 1 - 2 * (x * x + y * y)
    return out


_UNIT = {"x": (1.0, 0.0, 0.0), "y": (0.0, 1.0, 0.0), "z": (0.0, 0.0, 1.0)}


def _order_axes(order: str) -> np.ndarray:
    if not isinstance(order, str) or len(order) != 3 or any(c not in _UNIT for c in order.lower()):
        raise InvalidValueError(
            f"order must be three axis letters applied in turn (intrinsic), such as 'zxy' "
            f"(BVH's usual rotation channels) or 'xyz'; got {order!r}"
        )
    return np.array([_UNIT[c] for c in order.lower()])


def quat_to_euler(q: ArrayLike, order: str = "zxy", hint: ArrayLike | None = None) -> np.ndarray:
    """Angles ``(..., 3)`` [rad] about the intrinsic axes ``order`` of the rotation of
    quaternions ``(..., 4)`` (w, x, y, z): a quaternion (ball) joint written as BVH
    rotation channels (``Zrotation Xrotation Yrotation`` is ``order="zxy"``). ``hint``
    picks the branch nearest given angles (see :func:`decompose`)."""
    qa = as_array(q, "quaternion", (4,))
    return decompose(quat_to_matrix(qa), _order_axes(order), hint)


def euler_to_quat(angles: ArrayLike, order: str = "zxy") -> np.ndarray:
    """Unit quaternions ``(..., 4)`` (w, x, y, z, ``w >= 0``) of angles ``(..., 3)`` [rad]
    about the intrinsic axes ``order``: BVH rotation channels as a ball joint's ``q``."""
    a = as_array(angles, "angles", (3,))
    return matrix_to_quat(sequence_matrix(a, _order_axes(order)))


def slerp(qa: ArrayLike, qb: ArrayLike, u: ArrayLike) -> np.ndarray:
    """Spherical linear interpolation of unit quaternions ``(..., 4)`` at ``u`` (...) in [0, 1].

    Along the shorter arc (``qb`` is negated when ``qa . qb < 0``), so the rotation
    angle from ``qa`` grows linearly in ``u``: the geodesic on SO(3). Near-equal
    quaternions fall back to normalised linear interpolation.
    """
    a = np.asarray(qa, dtype=np.float64)
    b = np.asarray(qb, dtype=np.float64)
    t = np.asarray(u, dtype=np.float64)[..., None]
    dot = np.sum(a * b, axis=-1, keepdims=True)
    b = np.where(dot < 0.0, -b, b)
    dot = np.abs(dot)
    omega = np.arccos(np.clip(dot, -1.0, 1.0))
    so = np.sin(omega)
    small = so < 1e-9
    safe = np.where(small, 1.0, so)
    wa = np.where(small, 1.0 - t, np.sin((1.0 - t) * omega) / safe)
    wb = np.where(small, t, np.sin(t * omega) / safe)
    out = wa * a + wb * b
    return out / np.linalg.norm(out, axis=-1, keepdims=True)


@dataclass(frozen=True)
class BallJoint:
    """Three revolute DoFs of one joint group at one point.

    ``dofs``: their indices into ``q``, in chain order. ``axes`` (3, 3): their unit
    axes as rows, all expressed in the frame just before the first one moves, so
    that the group's rotation is ``sequence_matrix(q[dofs], axes)`` (times a
    constant rotation on the right, irrelevant for interpolation).
    """

    name: str
    dofs: tuple[int, int, int]
    axes: np.ndarray


def ball_joints(model: Model) -> dict[str, BallJoint]:
    """The model's ball joints: each group of ``model.joint_groups`` with a run of three
    revolute nodes (parent to child, no translation between them, no mimic
    scale/offset, one node per DoF) whose axes allow a three-angle decomposition
    (``n1 ⟂ n2``, ``n2 ⟂ n3``). Other DoFs of the group (a BVH root's position
    channels) are not part of it. Groups of other shapes are left out.
    """
    out: dict[str, BallJoint] = {}
    dof_nodes: dict[int, list[int]] = {}
    for k in range(model.n_nodes):
        qi = int(model.q_index[k])
        if qi >= 0 and model.joint_type[k] != JointType.FIXED:
            dof_nodes.setdefault(qi, []).append(k)
    dof_of = {n: i for i, n in enumerate(model.joint_names)}
    for group, names in model.joint_groups.items():
        idx = [dof_of[n] for n in names if n in dof_of]
        nodes: list[int] = []
        for qi in idx:
            ks = dof_nodes.get(qi, [])
            if len(ks) != 1:
                nodes = []
                break
            k = ks[0]
            if model.joint_type[k] == JointType.REVOLUTE:
                nodes.append(k)
        if len(nodes) != 3:
            continue
        nodes.sort()
        k1, k2, k3 = nodes
        if model.parent[k2] != k1 or model.parent[k3] != k2:
            continue
        if np.any(model.origin[k2][:3, 3] != 0.0) or np.any(model.origin[k3][:3, 3] != 0.0):
            continue
        if any(model.q_scale[k] != 1.0 or model.q_offset[k] != 0.0 for k in nodes):
            continue
        O2 = model.origin[k2][:3, :3]
        O3 = model.origin[k3][:3, :3]
        axes = np.array([model.axis[k1], O2 @ model.axis[k2], O2 @ O3 @ model.axis[k3]])
        axes = axes / np.linalg.norm(axes, axis=1, keepdims=True)
        if abs(axes[0] @ axes[1]) > _PERP_TOL or abs(axes[1] @ axes[2]) > _PERP_TOL:
            continue
        dofs = (int(model.q_index[k1]), int(model.q_index[k2]), int(model.q_index[k3]))
        axes.setflags(write=False)
        out[group] = BallJoint(group, dofs, axes)
    return out
