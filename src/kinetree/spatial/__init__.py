"""Homogeneous transforms in 2D (3x3) and 3D (4x4), rotations, SE(3) log/exp, pose error.

Long because every rotation form and its conversions are read together, and each public
function checks its input here, at the edge.

Rotations live here, every form: matrices, axis-angle, roll-pitch-yaw, quaternions
(products, exp/log, slerp), and three angles about given axes (Euler, Tait-Bryan,
Davenport; :mod:`._euler`), the BVH channels.

Every function works on arrays with any number of leading batch dimensions:
``rot_z(np.zeros((5, 2)))`` is ``(5, 2, 4, 4)``. Angles are radians, lengths
metres (or whatever unit the caller uses consistently). Quaternions are
``(w, x, y, z)``, scalar first. Roll-pitch-yaw follows URDF:
``R = Rz(yaw) @ Ry(pitch) @ Rx(roll)``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._validate import as_array
from ..errors import InvalidValueError, NotRigidError, ShapeError
from . import _kernels
from ._euler import axis_rotation as axis_rotation
from ._euler import decompose as decompose
from ._euler import decompose_all as decompose_all
from ._euler import pick_nearest as pick_nearest
from ._euler import sequence_matrix as sequence_matrix

__all__ = [
    "axis_angle_to_matrix",
    "axis_rotation",
    "compose",
    "decompose",
    "decompose_all",
    "euler_to_quat",
    "from_rotation_translation",
    "inverse",
    "matrix_to_axis_angle",
    "matrix_to_quaternion",
    "matrix_to_rpy",
    "orthonormalize",
    "pick_nearest",
    "pose_error",
    "quat_conj",
    "quat_exp",
    "quat_log",
    "quat_mul",
    "quat_normalize",
    "quat_to_euler",
    "quaternion_to_matrix",
    "rot_x",
    "rot_y",
    "rot_z",
    "rotation",
    "rotation_2d",
    "rpy_to_matrix",
    "scaling",
    "scaling_2d",
    "se3_exp",
    "se3_log",
    "sequence_matrix",
    "slerp",
    "so3_exp",
    "so3_log",
    "transform_points",
    "translation",
    "translation_2d",
]


def _eye(batch: tuple[int, ...], n: int) -> np.ndarray:
    return np.broadcast_to(np.eye(n), (*batch, n, n)).copy()


# --- 2D -----------------------------------------------------------------------------


def translation_2d(t: ArrayLike) -> np.ndarray:
    """3x3 homogeneous translation by ``t = (tx, ty)``."""
    t = as_array(t, "t", (2,))
    T = _eye(t.shape[:-1], 3)
    T[..., :2, 2] = t
    return T


def scaling_2d(s: ArrayLike) -> np.ndarray:
    """3x3 homogeneous per-axis scaling by ``s = (sx, sy)``."""
    s = as_array(s, "s", (2,))
    T = _eye(s.shape[:-1], 3)
    T[..., 0, 0] = s[..., 0]
    T[..., 1, 1] = s[..., 1]
    return T


def rotation_2d(theta: ArrayLike) -> np.ndarray:
    """3x3 homogeneous rotation by ``theta`` [rad], counter-clockwise."""
    th = as_array(theta, "theta")
    c, s = np.cos(th), np.sin(th)
    T = _eye(th.shape, 3)
    T[..., 0, 0], T[..., 0, 1] = c, -s
    T[..., 1, 0], T[..., 1, 1] = s, c
    return T


# --- 3D -----------------------------------------------------------------------------


def translation(t: ArrayLike) -> np.ndarray:
    """4x4 homogeneous translation by ``t = (tx, ty, tz)``."""
    t = as_array(t, "t", (3,))
    T = _eye(t.shape[:-1], 4)
    T[..., :3, 3] = t
    return T


def scaling(s: ArrayLike) -> np.ndarray:
    """4x4 homogeneous per-axis scaling by ``s = (sx, sy, sz)`` (not rigid)."""
    s = as_array(s, "s", (3,))
    T = _eye(s.shape[:-1], 4)
    for i in range(3):
        T[..., i, i] = s[..., i]
    return T


def _axis_rot(theta: ArrayLike, i: int, j: int) -> np.ndarray:
    th = as_array(theta, "theta")
    c, s = np.cos(th), np.sin(th)
    T = _eye(th.shape, 4)
    T[..., i, i], T[..., i, j] = c, -s
    T[..., j, i], T[..., j, j] = s, c
    return T


def rot_x(theta: ArrayLike) -> np.ndarray:
    """4x4 rotation about x by ``theta`` [rad]."""
    return _axis_rot(theta, 1, 2)


def rot_y(theta: ArrayLike) -> np.ndarray:
    """4x4 rotation about y by ``theta`` [rad]."""
    return _axis_rot(theta, 2, 0)


def rot_z(theta: ArrayLike) -> np.ndarray:
    """4x4 rotation about z by ``theta`` [rad]."""
    return _axis_rot(theta, 0, 1)


def axis_angle_to_matrix(axis_angle: ArrayLike) -> np.ndarray:
    """3x3 rotation from an axis-angle vector (direction = axis, norm = angle [rad])."""
    w = as_array(axis_angle, "axis_angle", (3,))
    flat = np.ascontiguousarray(w.reshape(-1, 3))
    return _kernels.exp3_batch(flat).reshape(*w.shape[:-1], 3, 3)


so3_exp = axis_angle_to_matrix


def matrix_to_axis_angle(R: ArrayLike) -> np.ndarray:
    """Axis-angle vector of a rotation matrix, angle in [0, pi]; exact near 0 and pi."""
    R = as_array(R, "R", (3, 3))
    flat = np.ascontiguousarray(R.reshape(-1, 3, 3))
    return _kernels.log3_batch(flat).reshape(*R.shape[:-2], 3)


so3_log = matrix_to_axis_angle


def rotation(axis: ArrayLike, angle: ArrayLike) -> np.ndarray:
    """4x4 rotation by ``angle`` [rad] about the (not necessarily unit) ``axis``."""
    a = as_array(axis, "axis", (3,))
    n = np.linalg.norm(a, axis=-1, keepdims=True)
    if np.any(n == 0.0):
        raise InvalidValueError("rotation axis must be non-zero")
    th = as_array(angle, "angle")
    w = a / n * th[..., None]
    T = _eye(w.shape[:-1], 4)
    T[..., :3, :3] = axis_angle_to_matrix(w)
    return T


def from_rotation_translation(R: ArrayLike, p: ArrayLike) -> np.ndarray:
    """4x4 pose from a 3x3 rotation and a translation ``p`` (broadcast together)."""
    R = as_array(R, "R", (3, 3))
    p = as_array(p, "p", (3,))
    batch = np.broadcast_shapes(R.shape[:-2], p.shape[:-1])
    T = _eye(batch, 4)
    T[..., :3, :3] = R
    T[..., :3, 3] = p
    return T


def compose(*transforms: ArrayLike) -> np.ndarray:
    """Product ``T1 @ T2 @ ...`` of homogeneous transforms (all 3x3 or all 4x4)."""
    if not transforms:
        raise InvalidValueError("compose needs at least one transform")
    mats = [_homogeneous(T, f"transform {i}") for i, T in enumerate(transforms)]
    n = mats[0].shape[-1]
    if any(M.shape[-1] != n for M in mats):
        raise ShapeError("compose: mix of 3x3 (2D) and 4x4 (3D) transforms")
    out = mats[0]
    for M in mats[1:]:
        out = out @ M
    return out


def _homogeneous(T: ArrayLike, name: str) -> np.ndarray:
    """``T`` as a finite (..., 3, 3) or (..., 4, 4) float array."""
    a = as_array(T, name)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2] or a.shape[-1] not in (3, 4):
        raise ShapeError(f"{name} must be (..., 3, 3) or (..., 4, 4), got {a.shape}")
    return a


def inverse(T: ArrayLike) -> np.ndarray:
    """Inverse of a rigid transform (3x3 or 4x4): ``[R^T, -R^T p]``, no general inverse."""
    T = _homogeneous(T, "T")
    n = T.shape[-1]
    R = T[..., : n - 1, : n - 1]
    p = T[..., : n - 1, n - 1]
    out = np.zeros_like(T)
    Rt = np.swapaxes(R, -1, -2)
    out[..., : n - 1, : n - 1] = Rt
    out[..., : n - 1, n - 1] = -np.einsum("...ij,...j->...i", Rt, p)
    out[..., n - 1, n - 1] = 1.0
    return out


def transform_points(T: ArrayLike, points: ArrayLike) -> np.ndarray:
    """Apply homogeneous ``T`` ((..., d+1, d+1)) to points ``(..., d)``."""
    T = _homogeneous(T, "T")
    n = T.shape[-1] - 1
    pts = as_array(points, "points", (n,))
    return np.einsum("...ij,...j->...i", T[..., :n, :n], pts) + T[..., :n, n]


def rpy_to_matrix(rpy: ArrayLike) -> np.ndarray:
    """3x3 rotation ``Rz(yaw) Ry(pitch) Rx(roll)`` from ``(roll, pitch, yaw)`` [rad]."""
    rpy = as_array(rpy, "rpy", (3,))
    flat = rpy.reshape(-1, 3)
    from scipy.spatial.transform import Rotation  # imported on use: 0.4 s at import

    R = Rotation.from_euler("xyz", flat).as_matrix()
    return R.reshape(*rpy.shape[:-1], 3, 3)


def matrix_to_rpy(R: ArrayLike) -> np.ndarray:
    """``(roll, pitch, yaw)`` [rad] of a rotation matrix; inverse of :func:`rpy_to_matrix`."""
    R = as_array(R, "R", (3, 3))
    flat = R.reshape(-1, 3, 3)
    from scipy.spatial.transform import Rotation

    return Rotation.from_matrix(flat).as_euler("xyz").reshape(*R.shape[:-2], 3)


def quaternion_to_matrix(q: ArrayLike) -> np.ndarray:
    """3x3 rotation from a quaternion ``(w, x, y, z)`` (normalised first)."""
    q = as_array(q, "quaternion", (4,))
    flat = q.reshape(-1, 4)
    if np.any(np.max(np.abs(flat), axis=-1) == 0.0):
        raise InvalidValueError("quaternion must be non-zero (it is normalised)")
    flat = quat_normalize(flat)
    from scipy.spatial.transform import Rotation

    return Rotation.from_quat(flat, scalar_first=True).as_matrix().reshape(*q.shape[:-1], 3, 3)


def matrix_to_quaternion(R: ArrayLike) -> np.ndarray:
    """Unit quaternion ``(w, x, y, z)`` with ``w >= 0`` of a rotation matrix."""
    R = as_array(R, "R", (3, 3))
    flat = R.reshape(-1, 3, 3)
    from scipy.spatial.transform import Rotation

    quat = Rotation.from_matrix(flat).as_quat(canonical=True, scalar_first=True)
    return quat.reshape(*R.shape[:-2], 4)


def quat_mul(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """Hamilton product ``a * b`` of quaternions ``(..., 4)`` (w, x, y, z): the rotation
    ``b`` then ``a`` seen from the outside, i.e. ``R(a b) = R(a) R(b)``."""
    aw, ax, ay, az = np.moveaxis(np.asarray(a, dtype=np.float64), -1, 0)
    bw, bx, by, bz = np.moveaxis(np.asarray(b, dtype=np.float64), -1, 0)
    return np.stack(
        [
            aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
        ],
        axis=-1,
    )


def quat_conj(q: ArrayLike) -> np.ndarray:
    """Conjugate ``(w, -x, -y, -z)``: the inverse rotation of a unit quaternion."""
    out = np.array(q, dtype=np.float64)
    out[..., 1:] *= -1.0
    return out


def quat_exp(w: ArrayLike) -> np.ndarray:
    """Unit quaternion ``(..., 4)`` of the rotation vector ``w`` (..., 3) [rad]: a turn
    of ``|w|`` about ``w / |w|``."""
    wa = np.asarray(w, dtype=np.float64)
    th = np.linalg.norm(wa, axis=-1, keepdims=True)
    half = 0.5 * th
    # sin(th/2)/th, with its series near 0
    k = np.where(th > 1e-8, np.sin(half) / np.where(th > 1e-8, th, 1.0), 0.5 - th**2 / 48.0)
    return np.concatenate([np.cos(half), k * wa], axis=-1)


def quat_normalize(q: ArrayLike) -> np.ndarray:
    """Unit quaternions ``(..., 4)``: ``q / |q|``, the norm taken after dividing by the
    largest entry (so neither entries of 1e300, whose squares overflow, nor of 1e-200
    lose the direction); an exact zero becomes the identity ``(1, 0, 0, 0)`` (as in
    MuJoCo), NaN stays NaN."""
    qa = np.array(q, dtype=np.float64)
    big = np.max(np.abs(qa), axis=-1, keepdims=True)
    zero = big[..., 0] == 0.0
    qa /= np.where(zero[..., None], 1.0, big)
    qa /= np.where(zero[..., None], 1.0, np.linalg.norm(qa, axis=-1, keepdims=True))
    qa[zero] = (1.0, 0.0, 0.0, 0.0)
    return qa


def quat_log(q: ArrayLike) -> np.ndarray:
    """Rotation vector ``(..., 3)`` [rad] of a quaternion (normalised first), the angle
    in [0, pi] (``q`` and ``-q`` give the same)."""
    qa = quat_normalize(q)
    qa = np.where(qa[..., :1] < 0.0, -qa, qa)
    v = qa[..., 1:]
    s = np.linalg.norm(v, axis=-1, keepdims=True)
    th = 2.0 * np.arctan2(s, qa[..., :1])
    small = 2.0 / np.maximum(qa[..., :1], 1e-300)
    k = np.where(s > 1e-12, th / np.where(s > 1e-12, s, 1.0), small)
    return np.asarray(k * v)


def _so3_left_jacobian(w: np.ndarray) -> np.ndarray:
    """Left Jacobian V(w) of SO(3) with series expansion near 0; ``(..., 3, 3)``."""
    th = np.linalg.norm(w, axis=-1)[..., None, None]
    W = np.zeros((*w.shape[:-1], 3, 3))
    W[..., 0, 1], W[..., 0, 2] = -w[..., 2], w[..., 1]
    W[..., 1, 0], W[..., 1, 2] = w[..., 2], -w[..., 0]
    W[..., 2, 0], W[..., 2, 1] = -w[..., 1], w[..., 0]
    small = th < 1e-4
    ths = np.where(small, 1.0, th)
    a = np.where(small, 0.5 - th**2 / 24.0, (1.0 - np.cos(ths)) / ths**2)
    b = np.where(small, 1.0 / 6.0 - th**2 / 120.0, (ths - np.sin(ths)) / ths**3)
    return np.eye(3) + a * W + b * (W @ W)


def se3_exp(xi: ArrayLike) -> np.ndarray:
    """SE(3) exponential of a twist ``xi = (v, w)`` -> 4x4 pose."""
    xi = as_array(xi, "xi", (6,))
    v, w = xi[..., :3], xi[..., 3:]
    T = _eye(xi.shape[:-1], 4)
    T[..., :3, :3] = axis_angle_to_matrix(w)
    T[..., :3, 3] = np.einsum("...ij,...j->...i", _so3_left_jacobian(w), v)
    return T


def se3_log(T: ArrayLike) -> np.ndarray:
    """SE(3) logarithm of a pose -> twist ``(v, w)`` with ``se3_exp(se3_log(T)) == T``."""
    T = as_array(T, "T", (4, 4))
    w = matrix_to_axis_angle(T[..., :3, :3])
    V = _so3_left_jacobian(w)
    v = np.linalg.solve(V, T[..., :3, 3][..., None])[..., 0]
    return np.concatenate([v, w], axis=-1)


def pose_error(T_target: ArrayLike, T_current: ArrayLike) -> np.ndarray:
    """Error every solver drives to zero: ``(p_t - p_c, log(R_t R_c^T))`` in the world frame.

    The first three entries are metres, the last three an axis-angle vector in
    radians (its norm is the rotation angle between the two orientations).
    Shapes ``(..., 4, 4)`` broadcast together; result ``(..., 6)``.
    """
    Tt = as_array(T_target, "T_target", (4, 4))
    Tc = as_array(T_current, "T_current", (4, 4))
    Tt, Tc = np.broadcast_arrays(Tt, Tc)
    batch = Tt.shape[:-2]
    Rt = np.ascontiguousarray(Tt[..., :3, :3].reshape(-1, 3, 3))
    Rc = np.ascontiguousarray(Tc[..., :3, :3].reshape(-1, 3, 3))
    rot = _kernels.rotation_error_batch(Rt, Rc).reshape(*batch, 3)
    return np.concatenate([Tt[..., :3, 3] - Tc[..., :3, 3], rot], axis=-1)


def orthonormalize(T: ArrayLike, tol: float = 1e-4) -> np.ndarray:
    """The nearest rigid transform to a nearly rigid ``T``: rotation projected onto SO(3).

    ``T`` is ``(..., 4, 4)`` (homogeneous pose) or ``(..., 3, 3)`` (a rotation
    matrix, not a 2D transform). The rotation block ``R`` is replaced by the
    nearest proper rotation in the Frobenius norm, ``U V^T`` from the SVD
    ``R = U S V^T`` (the orthogonal factor of the polar decomposition); the
    translation is kept and a 4x4's last row is set to exactly ``[0, 0, 0, 1]``.
    Meant for poses that lost digits on the way (printed with 6 decimals, read
    from a text file): those are off by about 1e-6.

    Raises :class:`~kinetree.errors.NotRigidError` when the input is farther off
    than ``tol``: ``max |R^T R - I|`` (largest entry) above ``tol``, ``det(R) <= 0``
    (a reflection is not a rotation, however orthonormal), or a last row more than
    ``tol`` from ``[0, 0, 0, 1]``. The message gives both numbers of the worst item.
    """
    tol = float(tol)
    if not (np.isfinite(tol) and tol >= 0.0):
        raise InvalidValueError(f"tol must be finite and >= 0, got {tol!r}")
    a = as_array(T, "T")
    if a.ndim < 2 or a.shape[-1] != a.shape[-2] or a.shape[-1] not in (3, 4):
        raise ShapeError(f"T must be (..., 4, 4) or (..., 3, 3), got {a.shape}")
    homogeneous = a.shape[-1] == 4
    R = a[..., :3, :3]
    batch = a.shape[:-2]

    def locate(bad: np.ndarray, score: np.ndarray) -> tuple[str, tuple[int, ...]]:
        idx = np.unravel_index(int(np.argmax(np.where(bad, score, -np.inf))), batch or (1,))
        if not batch:
            return "", ()
        count = f"{int(bad.sum())} of {bad.size} matrices are not rigid; worst at index "
        return count + f"{tuple(int(i) for i in idx)}: ", tuple(int(i) for i in idx)

    if homogeneous:
        want = np.array([0.0, 0.0, 0.0, 1.0])
        row_err = np.max(np.abs(a[..., 3, :] - want), axis=-1)
        bad_row = row_err > tol
        if np.any(bad_row):
            prefix, i = locate(bad_row, row_err)
            raise NotRigidError(
                f"{prefix}last row must be [0, 0, 0, 1] (within {tol:g}), "
                f"got {a[i][3].tolist()} (off by {float(row_err[i]):.3g})"
            )
    RtR = np.einsum("...ji,...jk->...ik", R, R)
    orth_err = np.max(np.abs(RtR - np.eye(3)), axis=(-2, -1))
    det = np.linalg.det(R)
    bad = (orth_err > tol) | ~(det > 0.0)
    if np.any(bad):
        prefix, i = locate(bad, orth_err + (det <= 0.0))
        raise NotRigidError(
            f"{prefix}rotation part is not a rotation within tol={tol:g}: max |R^T R - I| = "
            f"{float(orth_err[i]):.3g}, det(R) = {float(det[i]):.6g} (want 0 and 1)"
        )
    U, _, Vt = np.linalg.svd(R)
    out = a.copy()
    out[..., :3, :3] = U @ Vt
    if homogeneous:
        out[..., 3, :] = (0.0, 0.0, 0.0, 1.0)
    return out


# --- angle sequences (Euler, Tait-Bryan: BVH channels) and slerp ---------------------

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
    return decompose(quaternion_to_matrix(qa), _order_axes(order), hint)


def euler_to_quat(angles: ArrayLike, order: str = "zxy") -> np.ndarray:
    """Unit quaternions ``(..., 4)`` (w, x, y, z, ``w >= 0``) of angles ``(..., 3)`` [rad]
    about the intrinsic axes ``order``: BVH rotation channels as a ball joint's ``q``."""
    a = as_array(angles, "angles", (3,))
    return matrix_to_quaternion(sequence_matrix(a, _order_axes(order)))


def slerp(qa: ArrayLike, qb: ArrayLike, u: ArrayLike) -> np.ndarray:
    """Spherical linear interpolation of unit quaternions ``(..., 4)`` at ``u`` (...) in [0, 1].

    Along the shorter arc (``qb`` is negated when ``qa . qb < 0``), so the rotation
    angle from ``qa`` grows linearly in ``u``: the geodesic on SO(3). Near-equal
    quaternions fall back to normalised linear interpolation. Quaternions of another
    length are normalised first; a zero quaternion, one that is not four numbers, NaN
    or inf, and a fraction outside [0, 1] raise :class:`~kinetree.errors.KinetreeError`.
    """
    a = as_array(qa, "qa (quaternions w, x, y, z)", (4,))
    b = as_array(qb, "qb (quaternions w, x, y, z)", (4,))
    t = as_array(u, "u (the fraction from qa to qb)")
    for name, x in (("qa", a), ("qb", b)):
        if x.size and not np.all(np.max(np.abs(x), axis=-1) > 0.0):
            raise InvalidValueError(f"{name} must be non-zero quaternions (w, x, y, z)")
    if t.size and not (t.min() >= 0.0 and t.max() <= 1.0):
        raise InvalidValueError(
            f"u must be fractions in [0, 1] (0: qa, 1: qb), got values from {t.min():g} "
            f"to {t.max():g}"
        )
    a = quat_normalize(a)
    b = quat_normalize(b)
    t = t[..., None]
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
