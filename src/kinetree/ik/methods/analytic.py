r"""Closed-form inverse kinematics: every branch, for the arms that have one.

Long because it holds three closed-form families (2R, the z-x-x arm, the UR family with
its eight branches), each with its recognition from the model and its FK check.

Three families are solved exactly; :func:`solve_all` picks the solver from the
model, keeps the branches within the joint limits that reproduce the target
through the model's own forward kinematics, and never returns NaN (an
unreachable target gives an empty ``(0, dof)`` array). Lengths in metres,
angles in radians; returned angles lie in ``(-pi, pi]`` unless a joint's limits
force another representative.

Planar 2R arm (``x = l1 c1 + l2 c12``, ``y = l1 s1 + l2 s12``)
    Squaring and adding eliminates ``t1``:
    ``x^2 + y^2 = l1^2 + l2^2 + 2 l1 l2 cos t2``, so
    ``cos t2 = (x^2 + y^2 - l1^2 - l2^2) / (2 l1 l2)`` and ``t2 = +-acos(.)``.
    Written as complex numbers, ``x + i y = e^{i t1} (l1 + l2 e^{i t2})``, hence
    ``t1 = atan2(y, x) - atan2(l2 sin t2, l1 + l2 cos t2)`` for each ``t2``.

Seed-003 3-DoF arm
    ``p = T(base) Rz(t1) Tz(L1) Tx(L2) Rx(t2) Ty(L3) Rx(t3) (0, L4, 0, 1)``.
    With ``(dx, dy, dz) = p - base - (0, 0, L1)`` and the in-plane reach
    ``rho = L3 cos t2 + L4 cos(t2 + t3)``::

        (dx, dy) = Rz(t1) (L2, rho)                        (the shoulder offset L2)
        (rho, dz) = (L3 c2 + L4 c23, L3 s2 + L4 s23)        (a planar 2R arm L3, L4)

    The first line gives ``rho^2 = dx^2 + dy^2 - L2^2`` (two signs: shoulder
    left/right) and ``t1 = atan2(dy, dx) - atan2(rho, L2)``. Adding ``dz^2``
    gives ``dx^2 + dy^2 + dz^2 = L2^2 + L3^2 + L4^2 + 2 L3 L4 cos t3``, so
    ``cos t3 = (dx^2 + dy^2 + dz^2 - L2^2 - L3^2 - L4^2) / (2 L3 L4)`` (the
    seed prints ``2 L2 L3`` in the denominator, and drops the square of
    ``sin t2`` in ``L3^2 sin^2 t2`` on the way), ``t3 = +-acos(.)``, and
    ``t2 = atan2(dz, rho) - atan2(L4 sin t3, L3 + L4 cos t3)``. Two signs of
    ``rho`` times two of ``t3``: up to four solutions.

UR family (standard DH, ``alpha = (pi/2, 0, 0, pi/2, -pi/2, 0)``,
``a = (0, a2, a3, 0, 0, 0)``, ``d = (d1, 0, 0, d4, d5, d6)``), target ``T = [R | p]``
    Joints 2, 3, 4 turn about parallel axes, all along
    ``z1 = (sin q1, -cos q1, 0)``; along that axis only ``d4`` (and the tool
    offset ``d6 z6``) displace the chain.

    * q1: the wrist centre ``p5 = p - d6 z6`` satisfies ``p5 . z1 = d4``, i.e.
      ``|p5_xy| sin(q1 - atan2(p5y, p5x)) = d4``: two branches.
    * q5, q6: ``z1`` seen from the flange, ``(u, v, w) = R^T z1``, equals
      ``(s5 c6, -s5 s6, c5)``. Its last entry is the tool-position equation
      ``p . z1 = d4 + d6 (z6 . z1) = d4 + d6 cos q5``; its first two give
      ``|s5| = hypot(u, v)``, so ``q5 = atan2(+-hypot(u, v), w)`` (two branches;
      better conditioned near ``q5 = 0`` than ``+-acos``) and
      ``q6 = atan2(-v / s5, u / s5)``. When ``s5 ~ 0`` (wrist singularity:
      joints 2, 3, 4 and 6 parallel) q6 is free and is set to ``q6_default``
      (0); the other joints absorb it.
    * ``T14 = T1^-1 T (T5 T6)^-1 = Rz(q2) Tx(a2) Rz(q3) Tx(a3) Rz(q4) Tz(d4) Rx(pi/2)``:
      its origin ``(x, y)`` is a planar 2R problem in ``a2, a3`` (q3 two
      branches, then q2), and ``q2 + q3 + q4 = atan2(T14[1, 0], T14[0, 0])``.

    Two times two times two: up to eight solutions.

Boundaries and tolerances
    Reachability and the merging of two branches into one are decided on
    distances, not on the raw ``acos`` argument: a target at most
    ``CLIP_TOL`` (1e-9) times the arm's size outside the workspace is clipped
    onto its boundary; within ``MERGE_TOL`` (1e-12) times the size of a
    boundary the two branches are returned as one. ``1 +- cos t2`` are
    computed as products of differences, so the elbow angle stays accurate
    near a stretched or folded arm. All angles come from ``atan2``, so no NaN
    can arise.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ... import _deprecated
from ..._cache import PerModel
from ..._validate import as_array, check_rigid
from ...errors import InvalidValueError, ShapeError, UnsupportedError
from ...model import JointType, Model
from .analytic_6r import Screw6R, describe_6r, ik_screw_6r

__all__ = [
    "SUPPORTED_KINDS",
    "ik_planar_2r",
    "ik_ur",
    "ik_zxx_arm",
    "solve_all",
    "supports",
    "wrap_angle",
]

SUPPORTED_KINDS = (
    "planar 2R arm, z-x-x 3-DoF arm, UR3/UR5/UR10 (UR family), and any serial 6R arm "
    "with axes 2 || 3 and either axes 4, 5, 6 meeting in a point (spherical wrist) or "
    "axes 2 || 3 || 4 with axes 5, 6 meeting (UR family, from its geometry)"
)

TWO_PI = 2.0 * math.pi
CLIP_TOL = 1e-9  # x arm size [m]: a target this far outside the workspace is rounding noise
MERGE_TOL = 1e-12  # x arm size [m]: this close to a workspace boundary, two branches are one
SINGULAR_TOL = 1e-10  # |sin q5| below this: UR wrist singularity
DEDUP_TOL = 1e-9  # [rad] two solutions closer than this are one
FK_TOL = 1e-9  # [m] and [-]: a kept solution reproduces the target this well
LIMIT_TOL = 1e-10  # [rad] a value this far outside a limit is clipped onto it


# --- small helpers --------------------------------------------------------------------


def wrap_angle(a: ArrayLike) -> np.ndarray:
    """Angles [rad] wrapped into ``(-pi, pi]`` (elementwise)."""
    w = math.pi - np.mod(math.pi - np.asarray(a, dtype=np.float64), TWO_PI)
    return np.where(w <= -math.pi, w + TWO_PI, w)


def _leg(r: float, h: float, scale: float) -> list[float]:
    """Both ``k = +-sqrt(r^2 - h^2)``: the free leg of a right triangle [m].

    ``r >= 0`` is the hypotenuse and ``h`` the fixed leg. Tolerances are
    distances relative to ``scale`` (the arm's size): empty when
    ``r < |h| - CLIP_TOL * scale`` (unreachable), ``[0.0]`` when
    ``r - |h| <= MERGE_TOL * scale`` (the two branches are one).
    """
    gap = r - abs(h)
    if not math.isfinite(gap) or gap < -CLIP_TOL * scale:
        return []
    if gap <= MERGE_TOL * scale:
        return [0.0]
    k = math.sqrt(gap * (r + abs(h)))
    return [k, -k]


def _rows(solutions: list[list[float]], dof: int) -> np.ndarray:
    """Solutions as an ``(n, dof)`` array wrapped into (-pi, pi], duplicates removed."""
    if not solutions:
        return np.zeros((0, dof))
    out = wrap_angle(np.array(solutions, dtype=np.float64).reshape(-1, dof))
    return _dedup(out, np.ones(dof, dtype=bool))


def _dedup(Q: np.ndarray, revolute: np.ndarray) -> np.ndarray:
    """Drop rows within ``DEDUP_TOL`` of an earlier row (angles compared modulo 2 pi)."""
    if Q.shape[0] < 2:
        return Q
    D = Q[:, None, :] - Q[None, :, :]
    D = np.where(revolute, wrap_angle(D), D)
    close = np.max(np.abs(D), axis=2) <= DEDUP_TOL
    kept: list[int] = []
    for i in range(Q.shape[0]):
        if not any(close[i, j] for j in kept):
            kept.append(i)
    return Q[kept]


def _nonzero(value: float, name: str) -> float:
    v = float(value)
    if not math.isfinite(v) or v == 0.0:
        raise InvalidValueError(f"{name} must be finite and nonzero, got {value!r}")
    return v


def _finite(value: float, name: str) -> float:
    v = float(value)
    if not math.isfinite(v):
        raise InvalidValueError(f"{name} must be finite, got {value!r}")
    return v


def _planar_2r_angles(a1: float, a2: float, x: float, y: float) -> list[tuple[float, float]]:
    """Both ``(t1, t2)`` of ``x + i y = e^{i t1} (a1 + a2 e^{i t2})`` (lengths may be negative).

    ``cos t2 = (r^2 - a1^2 - a2^2) / (2 a1 a2)`` with ``r = |(x, y)|``. Whether
    the target is reachable, on the boundary (one solution) or inside (two) is
    decided on ``r`` against the radii ``|a1 + a2|`` (``t2 = 0``) and
    ``|a1 - a2|`` (``t2 = pi``), with the tolerances of :func:`_leg`, so a
    clipped ``acos`` argument never moves the tip by more than
    ``CLIP_TOL * (|a1| + |a2|)``.
    """
    r = math.hypot(x, y)
    scale = abs(a1) + abs(a2)
    r_fold = abs(a1 - a2)
    r_stretch = abs(a1 + a2)
    if not math.isfinite(r) or r > max(r_fold, r_stretch) + CLIP_TOL * scale:
        return []
    if r < min(r_fold, r_stretch) - CLIP_TOL * scale:
        return []
    if abs(r - r_stretch) <= MERGE_TOL * scale:
        pairs = [(1.0, 0.0, 2.0)]
    elif abs(r - r_fold) <= MERGE_TOL * scale:
        pairs = [(-1.0, 0.0, 0.0)]
    else:
        # 1 + c and 1 - c as products, free of cancellation near either boundary
        den = 2.0 * a1 * a2
        one_plus_c = (r - r_fold) * (r + r_fold) / den
        one_minus_c = (r_stretch - r) * (r_stretch + r) / den
        c = min(max(0.5 * (one_plus_c - one_minus_c), -1.0), 1.0)
        sn = math.sqrt(max(one_plus_c * one_minus_c, 0.0))
        pairs = [(c, sn, one_plus_c), (c, -sn, one_plus_c)]
    out = []
    for c, sn, opc in pairs:
        t2 = math.atan2(sn, c)
        # a1 + a2 cos t2, also written to avoid cancellation when folded
        near = a1 - a2 + a2 * opc if c < 0.0 else a1 + a2 * c
        t1 = math.atan2(y, x) - math.atan2(a2 * sn, near)
        out.append((t1, t2))
    return out


# --- the three solvers ----------------------------------------------------------------


def ik_planar_2r(l1: float, l2: float, x: float, y: float) -> np.ndarray:
    """All ``(t1, t2)`` [rad] placing the tip of a planar 2R arm at ``(x, y)`` [m].

    ``l1``, ``l2``: link lengths [m]. Returns ``(n, 2)``: ``n = 2`` (elbow
    branches ``t2 = +-acos``) inside the workspace, 1 on its boundary (arm
    stretched or folded), 0 when unreachable. Angles in ``(-pi, pi]``; no limits
    are applied.
    """
    a1 = _nonzero(l1, "l1")
    a2 = _nonzero(l2, "l2")
    px, py = _finite(x, "x"), _finite(y, "y")
    return _rows([list(s) for s in _planar_2r_angles(a1, a2, px, py)], 2)


def ik_zxx_arm(
    L1: float, L2: float, L3: float, L4: float, base: ArrayLike, p: ArrayLike
) -> np.ndarray:
    """All ``(t1, t2, t3)`` [rad] placing the tip of the z-x-x arm
    (:func:`kinetree.models.zxx_arm`) at ``p`` [m].

    The arm: ``T(base) Rz(t1) Tz(L1) Tx(L2) Rx(t2) Ty(L3) Rx(t3) (0, L4, 0, 1)``,
    lengths [m], ``base = (x_r, y_r, z_r)`` [m]. Returns ``(n, 3)`` with up to
    four rows (shoulder ``rho = +-sqrt(dx^2 + dy^2 - L2^2)`` times elbow
    ``t3 = +-acos``), angles in ``(-pi, pi]``, no joint limits applied (the
    seed's ``0 <= t3 <= pi`` is the model's limit, applied by :func:`solve_all`).
    """
    l1 = _finite(L1, "L1")
    l2 = _finite(L2, "L2")
    l3 = _nonzero(L3, "L3")
    l4 = _nonzero(L4, "L4")
    b = as_array(base, "base", (3,))
    pt = as_array(p, "p", (3,))
    if b.ndim != 1 or pt.ndim != 1:
        raise ShapeError("base and p must each be one 3-vector")
    dx, dy, dz = (pt - b - np.array([0.0, 0.0, l1])).tolist()
    sols: list[list[float]] = []
    for rho in _leg(math.hypot(dx, dy), l2, abs(l2) + abs(l3) + abs(l4)):
        t1 = math.atan2(dy, dx) - math.atan2(rho, l2)
        for t2, t3 in _planar_2r_angles(l3, l4, rho, dz):
            sols.append([t1, t2, t3])
    return _rows(sols, 3)


def _dh(theta: float, d: float, a: float, alpha: float) -> np.ndarray:
    """Standard DH link transform ``Rz(theta) Tz(d) Tx(a) Rx(alpha)``."""
    ct, st = math.cos(theta), math.sin(theta)
    ca, sa = math.cos(alpha), math.sin(alpha)
    return np.array(
        [
            [ct, -st * ca, st * sa, a * ct],
            [st, ct * ca, -ct * sa, a * st],
            [0.0, sa, ca, d],
            [0.0, 0.0, 0.0, 1.0],
        ]
    )


_UR_ALPHA = (math.pi / 2, 0.0, 0.0, math.pi / 2, -math.pi / 2, 0.0)


def _ur_fk(params: Sequence[float], q: np.ndarray) -> np.ndarray:
    """Flange pose of a UR arm with DH ``params = (d1, a2, a3, d4, d5, d6)`` at ``q``."""
    d1, a2, a3, d4, d5, d6 = params
    a = (0.0, a2, a3, 0.0, 0.0, 0.0)
    d = (d1, 0.0, 0.0, d4, d5, d6)
    T = np.eye(4)
    for i in range(6):
        T = T @ _dh(float(q[i]), d[i], a[i], _UR_ALPHA[i])
    return T


def _inv(T: np.ndarray) -> np.ndarray:
    out = np.eye(4)
    out[:3, :3] = T[:3, :3].T
    out[:3, 3] = -T[:3, :3].T @ T[:3, 3]
    return out


def ik_ur(
    d1: float,
    a2: float,
    a3: float,
    d4: float,
    d5: float,
    d6: float,
    T: ArrayLike,
    *,
    q6_default: float = 0.0,
) -> np.ndarray:
    """All joint vectors [rad] putting a UR-family flange at pose ``T`` (4x4, base frame).

    DH parameters [m] as in :func:`kinetree.models.ur5` (standard DH). Returns
    ``(n, 6)`` with up to eight rows (shoulder, wrist and elbow branches), angles
    in ``(-pi, pi]``, no joint limits applied. ``T`` must be rigid
    (:class:`~kinetree.errors.NotRigidError` otherwise). At a wrist singularity
    (``sin q5 ~ 0``) joint 6 is redundant with joints 2-4 and is set to
    ``q6_default`` [rad]. An unreachable pose gives ``(0, 6)``.
    """
    p_d1 = _finite(d1, "d1")
    p_a2 = _nonzero(a2, "a2")
    p_a3 = _nonzero(a3, "a3")
    p_d4 = _finite(d4, "d4")
    p_d5 = _finite(d5, "d5")
    p_d6 = _finite(d6, "d6")
    q6_free = _finite(q6_default, "q6_default")
    Tt = as_array(T, "T", (4, 4))
    if Tt.ndim != 2:
        raise ShapeError(f"T must be one 4x4 pose, got shape {Tt.shape}")
    check_rigid(Tt, "T")
    R = Tt[:3, :3]
    p5 = Tt[:3, 3] - p_d6 * R[:, 2]  # wrist centre (origin of frame 5)
    r5 = math.hypot(p5[0], p5[1])
    phi = math.atan2(p5[1], p5[0])

    # in base coordinates turned by -q1 the wrist centre is (k, -d4, .), k = +-sqrt(r5^2 - d4^2)
    scale = sum(abs(v) for v in (p_d1, p_a2, p_a3, p_d4, p_d5, p_d6))
    q1_list = [phi + math.atan2(p_d4, k) for k in _leg(r5, p_d4, scale)]

    sols: list[list[float]] = []
    for q1 in q1_list:
        s1, c1 = math.sin(q1), math.cos(q1)
        z1 = np.array([s1, -c1, 0.0])  # common axis of joints 2, 3, 4
        u = float(R[:, 0] @ z1)
        v = float(R[:, 1] @ z1)
        w = float(R[:, 2] @ z1)  # (u, v, w): z1 in flange coordinates, a unit vector
        s5_abs = math.hypot(u, v)
        if s5_abs < SINGULAR_TOL:  # wrist singularity: q6 is free
            wrist = [(math.atan2(0.0, w), q6_free)]
        else:
            wrist = [(math.atan2(s5, w), math.atan2(-v / s5, u / s5)) for s5 in (s5_abs, -s5_abs)]
        for q5, q6 in wrist:
            T1 = _dh(q1, p_d1, 0.0, _UR_ALPHA[0])
            T56 = _dh(q5, p_d5, 0.0, _UR_ALPHA[4]) @ _dh(q6, p_d6, 0.0, 0.0)
            T14 = _inv(T1) @ Tt @ _inv(T56)
            q234 = math.atan2(T14[1, 0], T14[0, 0])
            for q2, q3 in _planar_2r_angles(p_a2, p_a3, T14[0, 3], T14[1, 3]):
                sols.append([q1, q2, q3, q234 - q2 - q3, q5, q6])
    return _rows(sols, 6)


# --- model dispatch -------------------------------------------------------------------

_PROBE = np.array(
    [[math.sin(1.7 * (j + 1) * (k + 1)) * 2.5 for j in range(6)] for k in range(3)]
)  # fixed test configurations [rad] for the geometry check


def _detect(model: Model) -> tuple[str, Any] | None:
    """``(kind, parameters)`` from the model's metadata and name, or None."""
    md = model.metadata
    try:
        if "ur_dh" in md and model.dof == 6:
            ur = md["ur_dh"]
            return "ur", tuple(float(ur[k]) for k in ("d1", "a2", "a3", "d4", "d5", "d6"))
        arm = md.get("zxx_arm", md.get("seed003"))  # the old key: models saved before
        if arm is not None and model.dof == 3:
            s = arm
            L = tuple(float(v) for v in s["L"])
            base = tuple(float(v) for v in s.get("base", (0.0, 0.0, 0.0)))
            if len(L) != 4 or len(base) != 3:
                return None
            return "zxx_arm", (L, base)
        if model.dof == 2:
            lengths = md.get("lengths")
            if lengths is not None and len(lengths) == 2:
                return "planar2r", tuple(float(v) for v in lengths)
            if model.name == "planar2r":
                # lengths from the geometry: at q = (0, pi/2) the tip is at (l1, l2, 0)
                tip = model.fk(np.array([0.0, math.pi / 2]))[:3, 3]
                return "planar2r", (float(tip[0]), float(tip[1]))
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    return None


def _analytic_fk(kind: str, params: Any, q: np.ndarray) -> np.ndarray:
    """Position (planar, z-x-x) or flange pose (UR) from the closed-form FK."""
    if kind == "planar2r":
        l1, l2 = params
        return np.array(
            [
                l1 * math.cos(q[0]) + l2 * math.cos(q[0] + q[1]),
                l1 * math.sin(q[0]) + l2 * math.sin(q[0] + q[1]),
                0.0,
            ]
        )
    if kind == "zxx_arm":
        (L1, L2, L3, L4), base = params
        t1, t2, t3 = q
        rho = L3 * math.cos(t2) + L4 * math.cos(t2 + t3)
        return np.array(
            [
                base[0] + L2 * math.cos(t1) - rho * math.sin(t1),
                base[1] + L2 * math.sin(t1) + rho * math.cos(t1),
                base[2] + L1 + L3 * math.sin(t2) + L4 * math.sin(t2 + t3),
            ]
        )
    return _ur_fk(params, q)


def _geometry_matches(model: Model, kind: str, params: Any) -> bool:
    """Whether the model's FK of its default end effector equals the closed form."""
    Q = _PROBE[:, : model.nq]
    T_model = model.fk(Q)
    for q, Tm in zip(Q, T_model):
        want = _analytic_fk(kind, params, q)
        got = Tm if want.shape == (4, 4) else Tm[:3, 3]
        if not np.allclose(got, want, rtol=0.0, atol=1e-9):
            return False
    return True


_IDENTIFIED: PerModel[tuple[tuple[str, Any] | None, str]] = PerModel()


def _identify_why(model: Model) -> tuple[tuple[str, Any] | None, str]:
    """``(kind, parameters)`` of a supported model (or None) and, if None, what is
    missing for a 6R closed form; remembered per model.

    The built-in metadata comes first; failing that, a 6R arm is recognised from
    its axes (:func:`kinetree.ik.methods.analytic_6r.describe_6r`), for any file.
    """
    cached = _IDENTIFIED.get(model)
    if cached is not None:
        return cached
    found = _detect(model)
    if found is not None and not _geometry_matches(model, *found):
        found = None
    why = ""
    if found is None:
        arm, why = describe_6r(model)
        if arm is not None:
            found = ("screw6r", arm)
    _IDENTIFIED.put(model, (found, why))
    return found, why


def _identify(model: Model) -> tuple[str, Any] | None:
    """``(kind, parameters)`` of a supported model, or None; remembered per model."""
    return _identify_why(model)[0]


def supports(model: Model) -> bool:
    """Whether :func:`solve_all` has a closed-form solver for ``model``'s end effector."""
    return _identify(model) is not None


def _revolute_mask(model: Model) -> np.ndarray:
    return np.asarray(model.qv.dof_type == JointType.REVOLUTE)


def _into_limits(
    q: np.ndarray, lo: np.ndarray, hi: np.ndarray, revolute: np.ndarray
) -> np.ndarray | None:
    """``q`` moved into ``[lo, hi]`` by multiples of 2 pi (revolute joints), or None.

    Revolute angles start from their representative in (-pi, pi] and move by the
    smallest number of turns that fits; values within ``LIMIT_TOL`` of a limit
    are clipped onto it.
    """
    out = q.copy()
    for j in range(q.shape[0]):
        a = float(out[j])
        if revolute[j]:
            a = math.remainder(a, TWO_PI)  # into [-pi, pi]
            if a == -math.pi:
                a = math.pi
            if not lo[j] - LIMIT_TOL <= a <= hi[j] + LIMIT_TOL:
                k_lo = math.ceil((lo[j] - LIMIT_TOL - a) / TWO_PI) if np.isfinite(lo[j]) else -1
                k_hi = math.floor((hi[j] + LIMIT_TOL - a) / TWO_PI) if np.isfinite(hi[j]) else 1
                if k_lo > k_hi:
                    return None
                k = min(range(k_lo, k_hi + 1), key=lambda n: (abs(n), n))
                a += k * TWO_PI
        if not lo[j] - LIMIT_TOL <= a <= hi[j] + LIMIT_TOL:
            return None
        out[j] = min(max(a, lo[j]), hi[j])
    return out


def _target(T_target: ArrayLike, kind: str) -> np.ndarray:
    """The target as a 4x4 pose (UR) or a 3-vector position [m] (planar, z-x-x)."""
    a = as_array(T_target, "T_target")
    if a.shape == (4, 4):
        check_rigid(a, "T_target")
        return a if kind in ("ur", "screw6r") else a[:3, 3].copy()
    if kind in ("ur", "screw6r"):
        raise ShapeError(f"a 6R arm needs a 4x4 flange pose as target, got shape {a.shape}")
    if a.shape == (3,):
        return a
    if a.shape == (2,) and kind == "planar2r":
        return np.array([a[0], a[1], 0.0])
    want = "(4, 4), (3,) or (2,)" if kind == "planar2r" else "(4, 4) or (3,)"
    raise ShapeError(f"T_target must have shape {want}, got {a.shape}")


def _body(model: Model, node: int) -> int:
    """The node whose joint last moves ``node``: itself or its nearest moving ancestor
    (-1: nothing moves it). Frames with the same body keep their relative pose."""
    k = node
    while k >= 0 and not model.moves(k):
        k = int(model.parent[k])
    return k


def _as_flange_target(model: Model, kind: str, frame: str, target: np.ndarray) -> np.ndarray:
    """The default end effector's target that puts ``frame`` at ``target``.

    ``frame`` must be rigidly attached to the end effector (moved by the same joint,
    through fixed joints only): then ``T_flange_frame`` is one constant, read by FK at
    the neutral pose, and ``T_flange = T_target T_flange_frame^-1``. The position-only
    kinds (planar, z-x-x) accept such a frame only at the end effector's origin.
    """
    ee = model.end_effectors[0]
    if _body(model, model.frame_index(frame)) != _body(model, model.frame_index(ee)):
        raise UnsupportedError(
            f"closed-form IK solves the default end effector {ee!r} of {model.name!r} and "
            f"frames rigidly attached to it; frame {frame!r} moves relative to {ee!r} "
            "(use a numeric method)"
        )
    q = model.q_neutral
    T_flange_frame = _inv(model.fk(q, ee)) @ model.fk(q, frame)
    if kind in ("ur", "screw6r"):
        out: np.ndarray = target @ _inv(T_flange_frame)
        return out
    if np.linalg.norm(T_flange_frame[:3, 3]) > FK_TOL:
        raise UnsupportedError(
            f"the closed form of {model.name!r} places a point, not an orientation: frame "
            f"{frame!r} sits {np.linalg.norm(T_flange_frame[:3, 3]):.4g} m from {ee!r}, "
            "so its position alone does not fix the end effector's (use a numeric method)"
        )
    return target


def solve_all(model: Model, T_target: ArrayLike, frame: str | None = None) -> np.ndarray:
    """Every closed-form IK solution ``(n, dof)`` [rad] of ``model`` for ``T_target``.

    Supported models: a planar 2R arm (:func:`kinetree.models.planar_2r`), the
    z-x-x 3-DoF arm (:func:`kinetree.models.zxx_arm`) and the UR family
    (:func:`kinetree.models.ur3`, ``ur5``, ``ur10``); other models raise
    :class:`~kinetree.errors.UnsupportedError`. ``frame`` is the default end
    effector (None or ``model.end_effectors[0]``) or any frame rigidly attached to it
    (a tool frame such as ``tool0`` on the flange link); the 6R arms take any such
    offset, the position-only arms one at the end effector's origin.

    ``T_target``: a 4x4 pose in the base frame [m]; the planar and z-x-x arms
    use only its position and also accept a 3-vector (planar: x, y; its z is
    ignored). UR arms need the full pose.

    Returned rows are within ``model.limits`` (revolute angles shifted by whole
    turns where the limits allow, preferring the representative in
    ``(-pi, pi]``), reproduce the target through ``model.fk`` to 1e-9
    (position in m; the pose's entries for UR), are unique to 1e-9 and sorted
    lexicographically. Unreachable targets give an empty ``(0, dof)`` array.
    """
    if frame is not None:
        model.frame_index(frame)  # an unknown frame is an UnknownNameError listing frames
    from ..targets import Pose, Position

    if isinstance(T_target, Pose):
        T_target = T_target.T
    elif isinstance(T_target, Position):
        T_target = T_target.xyz
    found, why = _identify_why(model)
    if found is None:
        because = f" (as a 6R arm: {why})" if why else ""
        raise UnsupportedError(
            f"no closed-form IK for model {model.name!r}{because}; "
            f"supported kinds: {SUPPORTED_KINDS}"
        )
    kind, params = found
    target = _target(T_target, kind)
    if frame is not None and frame != model.end_effectors[0]:
        target = _as_flange_target(model, kind, frame, target)

    raw: np.ndarray
    check: Callable[[np.ndarray], np.ndarray]
    if kind == "planar2r":
        raw = ik_planar_2r(params[0], params[1], target[0], target[1])

        def check(T: np.ndarray) -> np.ndarray:
            return np.max(np.abs(T[:, :2, 3] - target[:2]), axis=1) <= FK_TOL

    elif kind == "zxx_arm":
        (L1, L2, L3, L4), base = params
        raw = ik_zxx_arm(L1, L2, L3, L4, base, target)

        def check(T: np.ndarray) -> np.ndarray:
            return np.max(np.abs(T[:, :3, 3] - target), axis=1) <= FK_TOL

    else:
        if kind == "screw6r":
            arm: Screw6R = params
            raw = ik_screw_6r(arm, target)
        else:
            d1, a2, a3, d4, d5, d6 = params
            raw = ik_ur(d1, a2, a3, d4, d5, d6, target)

        def check(T: np.ndarray) -> np.ndarray:
            return np.max(np.abs(T[:, :3, :] - target[:3, :]), axis=(1, 2)) <= FK_TOL

    lo, hi = model.limits[:, 0], model.limits[:, 1]
    revolute = _revolute_mask(model)
    fitted = [f for f in (_into_limits(q, lo, hi, revolute) for q in raw) if f is not None]
    if not fitted:
        return np.zeros((0, model.nq))
    Q = np.array(fitted)
    Q = Q[check(model.fk(Q)) & np.all(np.isfinite(Q), axis=1)]
    Q = _dedup(Q, revolute)
    if Q.shape[0] > 1:
        Q = Q[np.lexsort(Q.T[::-1])]
    return Q


# Old names (ik_seed003) are served from kinetree._deprecated's table.
__getattr__, __dir__ = _deprecated.attributes(__name__)
