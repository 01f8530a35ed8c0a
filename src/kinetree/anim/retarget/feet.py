"""Feet on the ground: holds for planted feet, reach limits, the robot's sole height.

Helpers of :mod:`.targets`; every function works on whole clips (arrays with
frames first) and lengths in metres.
"""

from __future__ import annotations

import numpy as np

from ..._disk import digest, kept_arrays
from ...geometry import Box, Capsule, Cylinder, Mesh, Sphere
from ...model import Model
from ...spatial import rot_z
from ..contacts import contact_intervals

__all__ = [
    "bend_limb",
    "drop_to_reach",
    "hold_feet",
    "smooth_above",
    "sole_floor",
    "sole_height",
    "sole_points",
    "untwisted_mean",
]

#: How far a straight limb is bent in the first guess [rad].
BEND = 0.5


#: Hulls of the meshes seen last: ``id(mesh) -> (mesh, corners)`` (the mesh is kept, so
#: its id is not reused while it is here); a robot's feet are retargeted again and again.
_HULLS: dict[int, tuple[object, np.ndarray]] = {}
_HULLS_KEPT = 32


def _hull(mesh: Mesh) -> np.ndarray:
    """The corners ``(k, 3)`` of the convex hull of a mesh's vertices (all of them when
    the hull is flat): the lowest point in any orientation is one of them. Kept per mesh
    in memory and on disk (:mod:`kinetree._disk`): a first retarget then neither imports
    qhull nor runs it."""
    got = _HULLS.get(id(mesh))
    if got is not None and got[0] is mesh:
        return got[1]
    v = np.ascontiguousarray(mesh.vertices, dtype=np.float64).reshape(-1, 3)

    def corners() -> dict[str, np.ndarray]:
        from scipy.spatial import ConvexHull, QhullError

        try:
            return {"corners": v[ConvexHull(v).vertices]}
        except (QhullError, ValueError):
            return {"corners": v}

    if len(v) > 8:
        v = kept_arrays("hulls", digest("qhull-corners-v1", (v,)), corners)["corners"]
    if len(_HULLS) >= _HULLS_KEPT:
        _HULLS.pop(next(iter(_HULLS)))
    _HULLS[id(mesh)] = (mesh, v)
    return v


def _shape_points(shape: object) -> tuple[np.ndarray, np.ndarray] | None:
    """Points ``(k, 3)`` in the shape's frame and a radius ``(k,)`` [m] around each whose
    union's lowest point, in any orientation, is the shape's (a mesh by its vertices)."""
    if isinstance(shape, Sphere):
        return np.zeros((1, 3)), np.array([shape.radius])
    if isinstance(shape, Capsule):
        h = shape.length / 2.0
        return np.array([[0.0, 0, -h], [0, 0, h]]), np.full(2, shape.radius)
    if isinstance(shape, Cylinder):
        a = np.linspace(0.0, 2.0 * np.pi, 32, endpoint=False)
        rim = np.stack([shape.radius * np.cos(a), shape.radius * np.sin(a), np.zeros(32)], 1)
        h = shape.length / 2.0
        pts = np.concatenate([rim - np.array([0.0, 0.0, h]), rim + np.array([0.0, 0.0, h])])
        return pts, np.zeros(len(pts))
    if isinstance(shape, Box):
        c = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
        return c * np.asarray(shape.size) / 2.0, np.zeros(8)
    if isinstance(shape, Mesh) and shape.vertices is not None:
        v = _hull(shape)
        return v, np.zeros(len(v))
    return None


#: A foot's sole is taken over these many directions within :data:`SOLE_CONE` of straight
#: down (at the pose :func:`sole_points` is given): the points lowest along one of them.
SOLE_DIRECTIONS = 500
SOLE_CONE = np.radians(85.0)
_SOLES: dict[tuple[int, str], tuple[Model, bytes, tuple[np.ndarray, np.ndarray]]] = {}


def _down_cone(down: np.ndarray, n: int, cone: float) -> np.ndarray:
    """``n`` unit vectors spread evenly over the cap of half-angle ``cone`` about ``down``."""
    k = np.arange(n) + 0.5
    c = 1.0 - (1.0 - np.cos(cone)) * k / n  # cos of the angle from the axis, area-uniform
    phi = np.pi * (1.0 + 5.0**0.5) * k
    r = np.sqrt(1.0 - c * c)
    local = np.stack([r * np.cos(phi), r * np.sin(phi), c], axis=1)
    # A rotation taking +z to `down`.
    a = np.cross([0.0, 0.0, 1.0], down)
    s, cz = float(np.linalg.norm(a)), float(down[2])
    if s < 1e-12:
        return local if cz > 0 else local * np.array([1.0, -1.0, -1.0])
    a /= s
    K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    R = np.eye(3) + s * K + (1.0 - cz) * K @ K
    return np.asarray(local @ R.T)


def sole_points(robot: Model, q: np.ndarray, ankle: str) -> tuple[np.ndarray, np.ndarray]:
    """The foot's geometry as points ``(k, 3)`` in the ``ankle`` frame [m] with a radius
    ``(k,)`` [m] each: every collision and visual shape on the ankle's frame and the
    frames below it (toes), posed at ``q``, and those frames' origins; of these, the
    points that are lowest along some direction within :data:`SOLE_CONE` of the world's
    down at ``q`` (a foot is never turned further; tens of points stand for a mesh's
    thousands, to within half a millimetre: 0.07, 0.3, 0.4 mm on the G1, GR3 and Talos
    feet over 2,000 tilts up to 70 degrees). The sole is their lowest point:
    :func:`sole_floor`. Kept per robot, ankle and ``q`` for the next call."""
    q = np.asarray(q, dtype=np.float64)
    key = (id(robot), ankle)
    got = _SOLES.get(key)
    if got is not None and got[0] is robot and got[1] == q.tobytes():
        return got[2]
    k = robot.frame_index(ankle)
    names = robot.frame_names
    below = [n for n in names if k in robot.ancestors(robot.frame_index(n))]
    T = robot.fk_all(q)
    at = {n: i for i, n in enumerate(names)}
    T_ankle_inv = np.linalg.inv(T[at[ankle]])
    pts: list[np.ndarray] = []
    rad: list[np.ndarray] = []
    for n in below:
        T_local = T_ankle_inv @ T[at[n]]
        pts.append(T_local[None, :3, 3])
        rad.append(np.zeros(1))
        for shape in robot.geometry.get(n, ()):
            shape_points = _shape_points(shape)
            if shape_points is None:
                continue
            W = T_local @ shape.origin
            pts.append(shape_points[0] @ W[:3, :3].T + W[:3, 3])
            rad.append(shape_points[1])
    P, r = np.concatenate(pts), np.concatenate(rad)
    down = T_ankle_inv[:3, :3] @ np.array([0.0, 0.0, -1.0])
    D = _down_cone(down, SOLE_DIRECTIONS, SOLE_CONE)
    keep = np.unique(np.argmax(P @ D.T + r[:, None], axis=0))
    out = (np.ascontiguousarray(P[keep]), np.ascontiguousarray(r[keep]))
    if len(_SOLES) >= 16:
        _SOLES.pop(next(iter(_SOLES)))
    _SOLES[key] = (robot, q.tobytes(), out)
    return out


def sole_floor(R: np.ndarray, points: np.ndarray, radius: np.ndarray) -> np.ndarray:
    """How high ``(n,)`` [m] the ankle must be for the sole (``points``, ``radius`` of
    :func:`sole_points`) to touch the ground ``z = 0`` with the ankle turned by ``R``
    ``(n, 3, 3)``: minus the lowest point's height relative to the ankle."""
    up = R[:, 2, :]  # the world's z axis in the ankle frame, per frame
    z = up[:, 0, None] * points[:, 0] + up[:, 1, None] * points[:, 1]
    z += up[:, 2, None] * points[:, 2]
    z -= radius
    return np.asarray(-z.min(axis=1))


def sole_height(robot: Model, q: np.ndarray, ankle: str) -> float:
    """How far the sole is below the ankle frame at ``q`` [m] (the lowest point of
    :func:`sole_points`, with the ankle turned as at ``q``); 0 when none is lower."""
    pts, rad = sole_points(robot, q, ankle)
    R = np.asarray(robot.fk(q, ankle))[None, :3, :3]
    return max(0.0, float(sole_floor(R, pts, rad)[0]))


def _smoothstep(u: np.ndarray) -> np.ndarray:
    u = np.clip(u, 0.0, 1.0)
    return u * u * (3.0 - 2.0 * u)


def hold_feet(
    T: np.ndarray,
    contact: np.ndarray,
    z: float,
    blend: int,
    sole: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """Ankle target poses ``(n, 4, 4)`` held while in contact, blended into and out of
    each hold over ``blend`` frames, never below ``z`` nor, with ``sole`` (the foot's
    points and radii in the ankle frame, :func:`sole_points`), so low that the sole,
    turned as the target is, goes below the ground ``z = 0``.

    A hold keeps the horizontal position (the mean over the contact) and the heading
    (the mean yaw) still; its height is ``z`` plus what the free target rises above its
    lowest in the contact (a heel lifting before the toe leaves), and its tilt is the
    free target's. So a planted foot neither slides nor turns, and rolls onto its toe
    as the source's does."""
    out = T.copy()
    n = len(T)
    weight = np.zeros(n)
    held_xy = np.zeros((n, 2))
    held_yaw = np.zeros(n)
    rise = np.zeros(n)
    yaw_all = _yaw_angle(T)
    for a, b in contact_intervals(contact):
        xy = T[a:b, :2, 3].mean(axis=0)
        yaw = yaw_all[a:b]
        ang = float(np.arctan2(np.sin(yaw).mean(), np.cos(yaw).mean()))
        lo, hi = max(0, a - blend), min(n, b + blend)
        k = np.arange(lo, hi)
        w = np.ones(hi - lo)
        before, after = k < a, k >= b
        w[before] = _smoothstep((k[before] - lo + 1) / (a - lo + 1))
        w[after] = _smoothstep((hi - k[after]) / (hi - b + 1))
        better = w > weight[lo:hi]
        idx = k[better]
        weight[idx], held_xy[idx], held_yaw[idx] = w[better], xy, ang
        rise[idx] = T[idx, 2, 3] - T[a:b, 2, 3].min()
    k = np.flatnonzero(weight > 0)
    w = weight[k]
    out[k, :2, 3] = (1 - w)[:, None] * T[k, :2, 3] + w[:, None] * held_xy[k]
    out[k, 2, 3] = (1 - w) * T[k, 2, 3] + w * (z + rise[k])
    # Turn each target about the world z axis by the (blended) heading change.
    dyaw = np.angle(np.exp(1j * (held_yaw[k] - yaw_all[k]))) * w
    out[k, :3, :3] = rot_z(dyaw)[:, :3, :3] @ T[k, :3, :3]
    floor = np.full(n, z) if sole is None else np.maximum(z, sole_floor(out[:, :3, :3], *sole))
    out[:, 2, 3] = np.maximum(out[:, 2, 3], floor)
    return out


def drop_to_reach(hip: np.ndarray, foot: np.ndarray, reach: float) -> np.ndarray:
    """How far ``(n,)`` [m] the hips ``(n, 3)`` must come down (along -z) for the feet
    ``(n, 3)`` to be within ``reach`` of them: the smallest ``d >= 0`` with
    ``|foot - hip + d e_z| <= reach`` (0 where already within; where no drop will do,
    the one that brings the hip level with the foot's farthest reach below)."""
    v = foot - hip
    horizontal2 = v[:, 0] ** 2 + v[:, 1] ** 2
    # |v + d e_z|^2 = reach^2  ->  v_z + d = -sqrt(reach^2 - h^2) (the foot below the hip)
    below = np.sqrt(np.maximum(reach * reach - horizontal2, 0.0))
    return np.asarray(np.maximum(0.0, -below - v[:, 2]))


def smooth_above(x: np.ndarray, r: int) -> np.ndarray:
    """A smooth curve at or above ``x``: the running maximum over ``+-r`` frames, then a
    moving average over the same window (which cannot fall below ``x`` there)."""
    if not np.any(x > 0) or len(x) < 2:
        return x
    pad = np.concatenate([np.full(r, x[0]), x, np.full(r, x[-1])])
    win = np.lib.stride_tricks.sliding_window_view(pad, 2 * r + 1)
    m = win.max(axis=1)
    pad = np.concatenate([np.full(r, m[0]), m, np.full(r, m[-1])])
    avg = np.lib.stride_tricks.sliding_window_view(pad, 2 * r + 1).mean(axis=1)
    return np.asarray(np.maximum(avg, x))


def untwisted_mean(R: np.ndarray) -> np.ndarray:
    """The mean tilt of rotations ``(k, 3, 3)``: each with its heading about z taken
    out, then averaged (the rotation nearest the sum)."""
    ang = np.arctan2(R[:, 1, 0], R[:, 0, 0])
    tilt = rot_z(-ang)[:, :3, :3] @ R
    U, _, Vt = np.linalg.svd(tilt.sum(axis=0))
    M = U @ Vt
    if np.linalg.det(M) < 0:
        M = U @ np.diag([1.0, 1.0, -1.0]) @ Vt
    return np.asarray(M)


def _yaw_angle(T: np.ndarray) -> np.ndarray:
    """Heading [rad] of the x axis of poses ``(..., 4, 4)`` about z."""
    return np.asarray(np.arctan2(T[..., 1, 0], T[..., 0, 0]))


def bend_limb(robot: Model, q: np.ndarray, root: str, tip: str, away: float) -> None:
    """When the limb ``root`` -> ``tip`` is straight at ``q`` (its length is at a
    maximum: turning its knee either way shortens it), bend that joint in place by
    :data:`BEND` [rad] within its limits, the way that moves ``tip`` along ``away`` x
    (-1: a foot goes back as a knee bends, +1: a hand comes forward). A bent limb is
    left as it is."""
    moving = [j for j in robot.chain(tip) if j not in robot.chain(root)]

    def length(qq: np.ndarray) -> tuple[float, float]:
        pr, pt = robot.fk(qq, root)[:3, 3], robot.fk(qq, tip)[:3, 3]
        return float(np.linalg.norm(pt - pr)), float(pt[0])

    base, x0 = length(q)
    best: tuple[float, int, float] | None = None
    for name in moving:
        idx = robot.joint_indices(name)
        if idx.size != 1 or robot.qv.quaternion_mask[idx[0]]:
            continue
        k = int(idx[0])
        trials = []
        for step in (BEND, -BEND):
            trial = q.copy()
            trial[k] += step
            ln, x = length(trial)
            trials.append((base - ln, away * (x - x0), step))
        (s1, m1, v1), (s2, m2, v2) = trials
        # Both ways shorter (by at least a quarter of a straight limb's 1 - cos(BEND / 2)):
        # the limb is straight and this joint is its knee.
        straight = min(s1, s2) if s1 > 0 and s2 > 0 else 0.0
        if straight <= 0.25 * (1.0 - np.cos(BEND / 2.0)) * base:
            continue
        value = float(np.clip(q[k] + (v1 if m1 > m2 else v2), *robot.limits[k]))
        if abs(value - q[k]) >= 0.5 * BEND and (best is None or straight > best[0]):
            best = (straight, k, value)
    if best is not None:
        q[best[1]] = best[2]
