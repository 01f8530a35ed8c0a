"""Feet on the ground: holds for planted feet, reach limits, the robot's sole height.

Helpers of :mod:`.retarget_targets`; every function works on whole clips (arrays with
frames first) and lengths in metres.
"""

from __future__ import annotations

import numpy as np

from ..geometry import Box, Capsule, Cylinder, Mesh, Sphere
from ..model import Model
from ..spatial import rot_z
from .contacts import contact_intervals

__all__ = ["bend_limb", "drop_to_reach", "hold_feet", "smooth_above", "sole_height",
           "untwisted_mean"]  # fmt: skip

#: How far a straight limb is bent in the first guess [rad].
BEND = 0.5


def _lowest_below(shape: object, T: np.ndarray) -> float | None:
    """Lowest world z [m] of one shape at the world pose ``T`` of its frame."""
    if isinstance(shape, Sphere):
        return float((T @ shape.origin)[2, 3] - shape.radius)
    W = T @ shape.origin  # type: ignore[attr-defined]
    if isinstance(shape, Box):
        c = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
        pts = c * np.asarray(shape.size) / 2.0
        return float(np.min(pts @ W[:3, :3].T[:, 2] + W[2, 3]))
    if isinstance(shape, (Cylinder, Capsule)):
        half = shape.length / 2.0
        ends = np.array([[0, 0, -half], [0, 0, half]]) @ W[:3, :3].T + W[:3, 3]
        return float(np.min(ends[:, 2]) - shape.radius)
    if isinstance(shape, Mesh) and shape.vertices is not None:
        v = np.asarray(shape.vertices)
        return float(np.min(v @ W[:3, :3].T[:, 2] + W[2, 3]))
    return None


def sole_height(robot: Model, q: np.ndarray, ankle: str) -> float:
    """How far the sole is below the ankle frame at ``q`` [m]: the lowest point of the
    collision (else visual) shapes on the ankle's frame and the frames below it, and of
    those frames' origins; 0 when there is none lower than the ankle."""
    k = robot.frame_index(ankle)
    names = robot.frame_names
    node_of = {n: robot.frame_index(n) for n in names}
    below = [n for n in names if k in robot.ancestors(node_of[n])]
    T = robot.fk_all(q)
    at = {n: i for i, n in enumerate(names)}
    z_ankle = float(T[at[ankle]][2, 3])
    lows: list[float] = [float(T[at[n]][2, 3]) for n in below]
    for n in below:
        shapes = robot.geometry.get(n, ())
        coll = [s for s in shapes if s.kind == "collision"] or list(shapes)
        for s in coll:
            z = _lowest_below(s, T[at[n]])
            if z is not None:
                lows.append(z)
    return max(0.0, z_ankle - min(lows))


def _smoothstep(u: np.ndarray) -> np.ndarray:
    u = np.clip(u, 0.0, 1.0)
    return u * u * (3.0 - 2.0 * u)


def hold_feet(T: np.ndarray, contact: np.ndarray, z: float, blend: int) -> np.ndarray:
    """Ankle target poses ``(n, 4, 4)`` held while in contact, blended into and out of
    each hold over ``blend`` frames, never below ``z``.

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
    out[:, 2, 3] = np.maximum(out[:, 2, 3], z)
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
        if idx.size != 1 or robot.quaternion_mask[idx[0]]:
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
