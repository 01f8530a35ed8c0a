"""The whole clip solved at once: targets met, accelerations small, soles above the floor.

:func:`refine_clip` takes a motion ``q (n, nq)`` that per-frame IK made (each frame
alone, so what the targets leave free, and the compromise between targets the robot
cannot all meet, may differ from one frame to the next: one-frame spikes, shaking
feet) and improves every frame together by Gauss-Newton steps on

    sum_t |W (x_t(q_t) - x*_t)|^2 + lam sum_t |a_t|^2 + w_floor sum_t min(0, h_t(q_t))^2

* ``x_t - x*_t``: the retarget's IK targets of frame ``t`` (positions [m] and
  orientations [rad], each with its weight ``W``, as :func:`kinetree.retarget` builds
  them);
* ``a_t``: the joint acceleration, the second difference of the configuration over
  frames in the tangent space (:meth:`~kinetree.Model.difference`) [rad or m per
  frame^2]; ``lam = smoothness * fps^4`` makes the weight a physical one (the same
  motion at 30 or 120 frames/s costs the same) [s^4];
* ``h_t``: the height of each foot's sole (its lowest point, :mod:`.feet`) above the
  ground ``z = 0`` [m]; the term is on only where a sole is below.

What the targets fix is met (their weight is many times the smoothness cost of the
accelerations needed), what they leave free follows the smoothest path: smoothness in
the null space of the targets, over the whole clip rather than frame by frame.

Each step solves one linear system over all frames, ``(n nv) x (n nv)`` with a band of
``2 nv`` (the second difference couples a frame with the two either side), by banded
Cholesky (:func:`scipy.linalg.solveh_banded`, on one thread): ``O(n nv^3)``, linear in
the clip's length. Joint limits hold after every step (each coordinate clipped into its range,
swing-twist cones by :func:`kinetree.anim.anatomy.clamp`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from scipy.linalg import solveh_banded
from threadpoolctl import threadpool_limits

from ...model import Model
from ...spatial import matrix_to_quaternion, quat_log
from ..anatomy import clamp
from .feet import smooth_above, sole_floor
from .targets import RobotTargets

__all__ = ["SMOOTHNESS", "ClipSolveOptions", "lift_to_floor", "refine_clip"]

#: Weight of the joint accelerations [s^4]: a joint accelerating at 1 rad/s^2 for one
#: second costs as much as a target missed by ``sqrt(SMOOTHNESS)`` [m] (at weight 1)
#: for one second.
SMOOTHNESS = 5e-7


@dataclass(frozen=True)
class ClipSolveOptions:
    """Settings of :func:`refine_clip`.

    Attributes:
        smoothness: weight of the accelerations [s^4] (module docstring).
        iterations: Gauss-Newton steps over the whole clip.
        floor_weight: weight of a sole below the ground [1/m].
        damping: Levenberg damping of every step [1 / (rad or m)^2]: what the
            targets and the floor leave free (a second difference is blind to motions
            linear in time) moves only as far as the accelerations ask; at 1e-6 one step
            moved a free base half a metre, beyond the linearisation.
        base_weight: the base's translation acceleration weighs this much more than a
            joint's (a metre of the pelvis against a radian of a joint): the pelvis is
            what a viewer follows, and on 30 frames/s runs its path shook at 1
            (1.3-1.7x its target's mean second difference, 1.0-1.2x at 10).
        collision_weight: weight of two links nearer than the margin [1/m].
        max_step: the largest change of a coordinate in one step [rad or m]; a frame's
            step is scaled down to it (the linearisation's reach).
    """

    smoothness: float = SMOOTHNESS
    iterations: int = 3
    floor_weight: float = 30.0
    damping: float = 1e-2
    base_weight: float = 10.0
    collision_weight: float = 30.0
    max_step: float = np.inf


def _rotation_error(R: np.ndarray, R_target: np.ndarray) -> np.ndarray:
    """World-frame rotation vectors ``(n, 3)`` [rad] of ``R R_target^T``."""
    return np.asarray(quat_log(matrix_to_quaternion(R @ np.swapaxes(R_target, -1, -2))))


class _Band:
    """The symmetric banded matrix of one step, in LAPACK's lower form: ``ab[i, j] =
    H[j + i, j]``, unknowns ordered frame by frame (``nv`` per frame)."""

    def __init__(self, n: int, nv: int):
        self.n, self.nv = n, nv
        self.ab = np.zeros((2 * nv + 1, n * nv))

    def add_blocks(self, H: np.ndarray) -> None:
        """Add the per-frame blocks ``H (n, nv, nv)`` on the diagonal."""
        nv = self.nv
        for i in range(nv):  # the i-th subdiagonal of every block: H[t, c + i, c]
            self.ab[i].reshape(self.n, nv)[:, : nv - i] += np.diagonal(H, -i, 1, 2)

    def add_second_difference(self, w: np.ndarray) -> None:
        """Add ``D^T diag(w) D`` for the second difference ``D`` over frames, ``w (nv,)``
        per coordinate (each coordinate alone)."""
        n, nv = self.n, self.nv
        if n < 3:
            return
        d0 = np.zeros(n)
        d1 = np.zeros(n)
        d2 = np.zeros(n)
        for k in range(1, n - 1):  # the row (1, -2, 1) at frames k-1, k, k+1
            d0[k - 1] += 1.0
            d0[k] += 4.0
            d0[k + 1] += 1.0
            d1[k - 1] += -2.0
            d1[k] += -2.0
            d2[k - 1] += 1.0
        self.ab[0] += (d0[:, None] * w[None, :]).ravel()
        self.ab[nv] += (d1[:, None] * w[None, :]).ravel()
        self.ab[2 * nv] += (d2[:, None] * w[None, :]).ravel()

    def solve(self, b: np.ndarray) -> np.ndarray:
        """``x`` with ``H x = b`` (both ``(n nv,)``), by banded Cholesky on one thread:
        on a busy machine OpenBLAS's threads wait on each other (a 523-frame clip's
        solve took 4-19 s with two threads on two busy cores, 0.17 s with one)."""
        with threadpool_limits(limits=1, user_api="blas"):
            return np.asarray(solveh_banded(self.ab, b, lower=True, check_finite=False))


def _second_difference_grad(a: np.ndarray, n: int) -> np.ndarray:
    """``D^T a`` for the accelerations ``a (n - 2, nv)``."""
    g = np.zeros((n, a.shape[1]))
    g[:-2] += a
    g[1:-1] -= 2.0 * a
    g[2:] += a
    return g


#: Pairs closer than the margin plus this [m] enter a step (a pair just outside may be
#: pushed in by the step).
COLLISION_BUFFER = 0.01


def _point_rows(robot: Model, q: np.ndarray, frames: list[str], points: np.ndarray) -> np.ndarray:
    """Linear Jacobians ``(n, 3, nv)`` of the world points ``points (n, 3)`` carried by
    the frames ``frames`` (one per configuration ``q (n, nq)``)."""
    out = np.zeros((len(q), 3, robot.nv))
    names = np.array(frames)
    for f in set(frames):
        k = np.flatnonzero(names == f)
        T = np.asarray(robot.fk(q[k], f))
        J = np.asarray(robot.jacobian(q[k], f))
        arm = points[k] - T[:, :3, 3]  # from the frame's origin to the point [m]
        # v_point = v_origin + w x arm = v_origin - arm x w
        out[k] = J[:, :3] + np.cross(J[:, 3:], arm[:, :, None], axisa=1, axisb=1, axisc=1)
    return out


def _add_collision_rows(
    robot: Model,
    q: np.ndarray,
    H: np.ndarray,
    g: np.ndarray,
    collision: tuple[float, tuple[tuple[str, str], ...]],
    weight: float,
) -> None:
    """Add, for every pair of the robot's links nearer than the margin in a frame (on
    the collision spheres, :mod:`kinetree.collision`), the hinge ``weight (d - margin)``
    on their signed distance ``d`` [m], linearised: ``d' = n . (v_a - v_b)`` at the
    witness points, ``n`` from B towards A."""
    from ...collision.layout import (
        OUT_DISTANCE,
        OUT_NODE_A,
        OUT_NODE_B,
        OUT_NORMAL,
        OUT_POINT_A,
        OUT_POINT_B,
    )
    from ...collision.robot import collision_model

    margin, ignore = collision
    goal = margin + 0.5 * COLLISION_BUFFER
    rows, _ = collision_model(robot).pair_distances(
        q, (), True, cutoff=margin + COLLISION_BUFFER, ignore=ignore
    )
    # Pairs within the buffer enter with their curvature (a pair pushed out to the goal
    # is held there instead of dropped and pulled back in); those under it also pull.
    frame, pair = np.nonzero(rows[:, :, OUT_DISTANCE] < margin + COLLISION_BUFFER)
    if frame.size == 0:
        return
    hit = rows[frame, pair]
    names = robot.node_names
    link_a = [names[int(k)] for k in hit[:, OUT_NODE_A]]
    link_b = [names[int(k)] for k in hit[:, OUT_NODE_B]]
    Ja = _point_rows(robot, q[frame], link_a, hit[:, OUT_POINT_A : OUT_POINT_A + 3])
    Jb = _point_rows(robot, q[frame], link_b, hit[:, OUT_POINT_B : OUT_POINT_B + 3])
    normal = hit[:, OUT_NORMAL : OUT_NORMAL + 3]
    row = weight * np.einsum("nk,nkj->nj", normal, Ja - Jb)
    res = weight * np.minimum(0.0, hit[:, OUT_DISTANCE] - goal)
    np.add.at(H, frame, row[:, :, None] * row[:, None, :])
    np.add.at(g, frame, row * res[:, None])


def refine_clip(
    robot: Model,
    q: np.ndarray,
    targets: RobotTargets,
    fps: float,
    options: ClipSolveOptions | None = None,
    *,
    fixed: np.ndarray | None = None,
    soles: Mapping[str, tuple[np.ndarray, np.ndarray]] | None = None,
    collision: tuple[float, tuple[tuple[str, str], ...]] | None = None,
) -> np.ndarray:
    """The motion ``q (n, nq)`` improved over the whole clip (module docstring).

    Args:
        robot: the robot (with its floating base).
        q: the per-frame solution to start from, ``(n, nq)``.
        targets: the retarget's targets (:func:`~.targets.build_targets`).
        fps: frames per second of the clip [1/s].
        options: :class:`ClipSolveOptions` (default: its defaults).
        fixed: ``(nv,)`` bool, tangent coordinates left where they are (none).
        soles: ``{ankle frame: (points, radii)}`` kept above the ground (default: the
            targets' soles).
        collision: ``(margin [m], ignore)``: the robot's own links kept ``margin`` apart
            (the closest pair of each frame on the collision spheres, :meth:`Model.distance`,
            less the pairs ``ignore``), one more term like the floor's.

    Returns:
        ``(n, nq)``, within the joint limits wherever ``q`` was.
    """
    o = options or ClipSolveOptions()
    n, nv = len(q), robot.nv
    if n < 3 or o.iterations <= 0:
        return q
    soles = targets.soles if soles is None else soles
    lam = o.smoothness * float(fps) ** 4
    w_acc = np.full(nv, lam)
    base = robot.floating_base
    if base is not None:
        vb = robot.qv.v_of_coordinates(robot.joint_indices(base))
        w_acc[vb[:3]] *= o.base_weight
    free = np.ones(nv, dtype=bool) if fixed is None else ~np.asarray(fixed, dtype=bool)
    lo, hi = robot.limits[:, 0], robot.limits[:, 1]
    simple = ~robot.qv.quaternion_mask
    out = robot.normalize(np.asarray(q, dtype=np.float64).copy())
    for _ in range(o.iterations):
        rows: list[np.ndarray] = []  # (n, k, nv) weighted Jacobian rows
        res: list[np.ndarray] = []  # (n, k) weighted residuals
        for t, frame in enumerate(targets.frames):
            wp, wr = (float(w) for w in targets.weights[t])
            T = np.asarray(robot.fk(out, frame))
            J = np.asarray(robot.jacobian(out, frame))
            T_target = targets.poses[:, t]
            if wp > 0:
                rows.append(wp * J[:, :3])
                res.append(wp * (T[:, :3, 3] - T_target[:, :3, 3]))
            if wr > 0:
                rows.append(wr * J[:, 3:])
                res.append(wr * _rotation_error(T[:, :3, :3], T_target[:, :3, :3]))
        H = np.zeros((n, nv, nv))
        g = np.zeros((n, nv))
        if rows:
            A, b = np.concatenate(rows, axis=1), np.concatenate(res, axis=1)
            At = np.swapaxes(A, 1, 2)
            with threadpool_limits(limits=1, user_api="blas"):
                H += At @ A
                g += (At @ b[:, :, None])[:, :, 0]
        for frame, (points, radii) in soles.items():
            T = np.asarray(robot.fk(out, frame))
            R = T[:, :3, :3]
            height = T[:, 2, 3] - sole_floor(R, points, radii)  # the sole's height [m]
            below = np.flatnonzero(height < 0.0)
            if below.size == 0:
                continue
            # The lowest point, from the ankle [m, world]: the foot's point lowest along
            # the world's down, less its radius.
            up = R[below, 2, :]
            k = np.argmin(up @ points.T - radii[None, :], axis=1)
            arm = np.einsum("nij,nj->ni", R[below], points[k])
            arm[:, 2] -= radii[k]
            J = np.asarray(robot.jacobian(out[below], frame))
            # z velocity of that point: v_z + (w x arm)_z
            row = J[:, 2] + arm[:, 1, None] * J[:, 3] - arm[:, 0, None] * J[:, 4]
            row *= o.floor_weight
            H[below] += row[:, :, None] * row[:, None, :]
            g[below] += row * (o.floor_weight * height[below])[:, None]
        if collision is not None:
            _add_collision_rows(robot, out, H, g, collision, o.collision_weight)
        vel = robot.difference(out[:-1], out[1:])  # (n - 1, nv) per frame
        acc = vel[1:] - vel[:-1]
        g += _second_difference_grad(acc * w_acc, n)
        H[:, np.arange(nv), np.arange(nv)] += o.damping
        if not free.all():
            fix = np.flatnonzero(~free)
            H[:, fix, :] = 0.0
            H[:, :, fix] = 0.0
            H[:, fix, fix] = 1.0
            g[:, fix] = 0.0
        band = _Band(n, nv)
        band.add_blocks(H)
        band.add_second_difference(np.where(free, w_acc, 0.0))
        step = band.solve(-g.ravel()).reshape(n, nv)
        if not np.all(np.isfinite(step)):
            break
        big = np.abs(step).max(axis=1)
        step *= np.minimum(1.0, o.max_step / np.maximum(big, 1e-12))[:, None]
        new = robot.integrate(out, step)
        new[:, simple] = np.clip(new[:, simple], lo[simple], hi[simple])
        if robot.swing_twist:  # cones too: back toward the last step's, within them
            new = clamp(robot, new, inside=out)
        out = new
    return out


def sole_heights(
    robot: Model, q: np.ndarray, soles: Mapping[str, tuple[np.ndarray, np.ndarray]]
) -> np.ndarray:
    """``(n,)``: the lowest sole's height above the ground ``z = 0`` per frame [m]
    (``inf`` without soles)."""
    low = np.full(len(q), np.inf)
    for frame, (points, radii) in soles.items():
        T = np.asarray(robot.fk(q, frame))
        low = np.minimum(low, T[:, 2, 3] - sole_floor(T[:, :3, :3], points, radii))
    return low


def lift_to_floor(
    robot: Model,
    q: np.ndarray,
    soles: Mapping[str, tuple[np.ndarray, np.ndarray]],
    reach: int,
) -> np.ndarray:
    """``q`` with the floating base raised where a sole is below the ground, by a curve
    at or above each frame's depth (:func:`~.feet.smooth_above` over ``reach`` frames
    each side, so the lift eases in and out instead of jumping): no sole below the
    ground in any frame. The last word on the floor, where the targets and the joint
    limits together keep a foot under it (an ankle at its stop cannot tilt a sole flat).
    Only the base's height changes, so joint limits and speeds are as they were."""
    base = robot.floating_base
    if base is None or not soles or len(q) == 0:
        return q
    depth = np.maximum(0.0, -sole_heights(robot, q, soles))
    if not np.any(depth > 0):
        return q
    lift = smooth_above(depth, max(1, reach))
    out = q.copy()
    z = robot.q_slice(base).start + 2
    out[:, z] += lift
    return out
