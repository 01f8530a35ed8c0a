"""Quaternion joints inside the compiled loop: stepping, limits, restarts, rest pull.

A ball node's rotation is four numbers of ``q`` (w, x, y, z) and three of a motion,
the angular velocity in the node's own frame. A step ``w`` turns the quaternion to
``quat * exp(w)``; nothing ever adds to a quaternion. These helpers work on one
quaternion in place at ``q[s:s + 4]`` and allocate nothing. The loop (``_loop``,
``_steps``) calls them rather than inlining them: they run only for quaternion joints,
and inlined copies would add to every driver's compile time.
"""

from __future__ import annotations

import math

import numpy as np

from ...kinematics._kernels import no_refcount
from ._random import rand01


@no_refcount
def normalize_quat(q: np.ndarray, s: int) -> None:
    """Scale ``q[s:s + 4]`` to unit length with ``w >= 0``; a zero quaternion becomes the
    identity, NaN stays NaN. A norm whose square would overflow (entries of 1e300) or
    underflow is taken after dividing by the largest entry, so the direction is kept
    (an overflowed norm once scaled the quaternion to zero)."""
    n2 = q[s] * q[s] + q[s + 1] * q[s + 1] + q[s + 2] * q[s + 2] + q[s + 3] * q[s + 3]
    if not 1e-300 <= n2 <= 1e300 and n2 == n2:
        m = max(abs(q[s]), abs(q[s + 1]), abs(q[s + 2]), abs(q[s + 3]))
        if m == 0.0:
            q[s] = 1.0
            q[s + 1] = 0.0
            q[s + 2] = 0.0
            q[s + 3] = 0.0
            return
        for c in range(4):
            q[s + c] /= m
        n2 = q[s] * q[s] + q[s + 1] * q[s + 1] + q[s + 2] * q[s + 2] + q[s + 3] * q[s + 3]
    inv = 1.0 / math.sqrt(n2)
    if q[s] < 0.0:
        inv = -inv
    for c in range(4):
        q[s + c] *= inv


@no_refcount
def quat_step(q: np.ndarray, s: int, wx: float, wy: float, wz: float) -> None:
    """``q[s:s + 4] <- q * exp(w)``: turn by the rotation vector ``w`` [rad] given in the
    joint's own frame, then renormalise."""
    th = math.sqrt(wx * wx + wy * wy + wz * wz)
    if th < 1e-8:
        c = 1.0 - th * th / 8.0
        k = 0.5 - th * th / 48.0
    else:
        c = math.cos(0.5 * th)
        k = math.sin(0.5 * th) / th
    bw, bx, by, bz = c, k * wx, k * wy, k * wz
    aw, ax, ay, az = q[s], q[s + 1], q[s + 2], q[s + 3]
    q[s] = aw * bw - ax * bx - ay * by - az * bz
    q[s + 1] = aw * bx + ax * bw + ay * bz - az * by
    q[s + 2] = aw * by - ax * bz + ay * bw + az * bx
    q[s + 3] = aw * bz + ax * by - ay * bx + az * bw
    normalize_quat(q, s)


@no_refcount
def clamp_angle(q: np.ndarray, s: int, limit: float) -> bool:
    """Bring a unit quaternion (``w >= 0``) within ``limit`` [rad] of the identity along
    its own axis (the ball joint's cone of rotations); True when it was outside."""
    if not limit < math.pi:
        return False
    vn = math.sqrt(q[s + 1] * q[s + 1] + q[s + 2] * q[s + 2] + q[s + 3] * q[s + 3])
    if 2.0 * math.atan2(vn, q[s]) <= limit:
        return False
    k = math.sin(0.5 * limit) / vn
    q[s] = math.cos(0.5 * limit)
    for c in range(1, 4):
        q[s + c] *= k
    return True


@no_refcount
def log_between(q: np.ndarray, s: int, r: np.ndarray, out: np.ndarray, o: int) -> None:
    """``out[o:o + 3]`` = the rotation vector [rad] that turns ``q[s:s+4]`` into
    ``r[s:s+4]``, in the joint's own frame: ``log(conj(q) * r)``, the short way round."""
    aw, ax, ay, az = q[s], -q[s + 1], -q[s + 2], -q[s + 3]
    bw, bx, by, bz = r[s], r[s + 1], r[s + 2], r[s + 3]
    w = aw * bw - ax * bx - ay * by - az * bz
    x = aw * bx + ax * bw + ay * bz - az * by
    y = aw * by - ax * bz + ay * bw + az * bx
    z = aw * bz + ax * by - ay * bx + az * bw
    if w < 0.0:
        w, x, y, z = -w, -x, -y, -z
    vn = math.sqrt(x * x + y * y + z * z)
    k = 2.0 * math.atan2(vn, w) / vn if vn > 1e-12 else 2.0 / max(w, 1e-300)
    out[o] = k * x
    out[o + 1] = k * y
    out[o + 2] = k * z


@no_refcount
def random_rotation(q: np.ndarray, s: int, limit: float, rng: np.ndarray) -> None:
    """A random unit quaternion into ``q[s:s + 4]``: uniform over all rotations without
    a limit, else a uniform axis turned by an angle uniform in [0, limit]."""
    if not limit < math.pi:
        u1, u2, u3 = rand01(rng), rand01(rng), rand01(rng)
        a, b = math.sqrt(1.0 - u1), math.sqrt(u1)
        q[s] = b * math.cos(2.0 * math.pi * u3)
        q[s + 1] = a * math.sin(2.0 * math.pi * u2)
        q[s + 2] = a * math.cos(2.0 * math.pi * u2)
        q[s + 3] = b * math.sin(2.0 * math.pi * u3)
    else:
        # Axis uniform on the sphere: z uniform in [-1, 1], longitude uniform.
        zc = 2.0 * rand01(rng) - 1.0
        lon = 2.0 * math.pi * rand01(rng)
        rxy = math.sqrt(max(0.0, 1.0 - zc * zc))
        half = 0.5 * limit * rand01(rng)
        sh = math.sin(half)
        q[s] = math.cos(half)
        q[s + 1] = sh * rxy * math.cos(lon)
        q[s + 2] = sh * rxy * math.sin(lon)
        q[s + 3] = sh * zc
    normalize_quat(q, s)
