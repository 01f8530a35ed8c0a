"""Collision-constrained IK and its QP: closed forms and KKT conditions as oracles.

The arm's links carry spheres (which the collision model keeps as they are), so every
distance has a closed form from FK: centre to obstacle minus radius. Each success is
checked against it, never against the kernels' own numbers.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linprog

import kinetree
from kinetree import geometry as geo
from kinetree._qp import (
    QP_INFEASIBLE,
    QP_NOT_CONVEX,
    QP_SOLVED,
    qp_iwork_size,
    qp_solve,
    qp_work_size,
)
from kinetree.errors import InvalidValueError, KinetreeError
from kinetree.spatial import translation

MARGIN = 0.02
#: (frame, centre in the frame [m], radius [m]) of every collision sphere.
SPHERES = [
    ("l2", (0.08, 0, 0), 0.04),
    ("l2", (0.2, 0, 0), 0.04),
    ("l2", (0.32, 0, 0), 0.04),
    ("l3", (0.08, 0, 0), 0.035),
    ("l3", (0.2, 0, 0), 0.035),
    ("l4", (0.06, 0, 0), 0.03),
]


@pytest.fixture(autouse=True)
def _sphere_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("KINETREE_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "kt-cache"))


@pytest.fixture(scope="module")
def arm() -> kinetree.Model:
    return sphere_arm()


def sphere_arm() -> kinetree.Model:
    """A four-joint arm whose links are the collision spheres ``SPHERES``."""
    b = kinetree.ModelBuilder("sphere_arm", root="base")
    b.add_joint("j1", "base", "l1", axis="z", limits=(-2.9, 2.9))
    b.add_joint("j2", "l1", "l2", axis="y", origin=translation([0, 0, 0.3]), limits=(-2, 2))
    b.add_joint("j3", "l2", "l3", axis="y", origin=translation([0.4, 0, 0]), limits=(-2.5, 2.5))
    b.add_joint("j4", "l3", "l4", axis="y", origin=translation([0.3, 0, 0]), limits=(-2, 2))
    b.add_frame("tip", "l4", translation([0.1, 0, 0]))
    for frame, c, r in SPHERES:
        b.add_geometry(frame, geo.Sphere(radius=r, kind="collision", origin=translation(c)))
    return b.build()


def _world():
    return [
        kinetree.Sphere(radius=0.08, center=(0.35, 0.25, 0.45), name="ball"),
        kinetree.Box(size=(0.1, 0.1, 0.6), pose=translation([0.4, -0.2, 0.3]), name="post"),
        kinetree.HalfSpace(normal=(0, 0, 1), offset=0.05, name="floor"),
    ]


def _box_distance(box: kinetree.Box, p: np.ndarray) -> float:
    loc = box.pose[:3, :3].T @ (p - box.pose[:3, 3])
    h = 0.5 * np.array(box.size)
    out = np.linalg.norm(loc - np.clip(loc, -h, h))
    return float(out if out > 0 else -np.min(h - np.abs(loc)))


def _clearance(model: kinetree.Model, q: np.ndarray, world, self_pairs=()) -> float:
    """Closed-form smallest distance of the arm's spheres to ``world`` (and between the
    spheres of the link pairs ``self_pairs``)."""
    centres = []
    for frame, c, r in SPHERES:
        T = model.fk(q, frame)
        centres.append((frame, T[:3, :3] @ np.array(c) + T[:3, 3], r))
    d = np.inf
    for _, p, r in centres:
        for ob in world:
            if isinstance(ob, kinetree.Sphere):
                d = min(d, float(np.linalg.norm(p - ob.center)) - ob.radius - r)
            elif isinstance(ob, kinetree.HalfSpace):
                d = min(d, float(ob.normal @ p) - ob.offset - r)
            else:
                d = min(d, _box_distance(ob, p) - r)
    for a, b in self_pairs:
        for fa, pa, ra in centres:
            for fb, pb, rb in centres:
                if fa == a and fb == b:
                    d = min(d, float(np.linalg.norm(pa - pb)) - ra - rb)
    return d


def _targets(model: kinetree.Model, n: int, world, seed: int = 0) -> np.ndarray:
    """Tip positions of random configurations that clear ``world`` by 2 * MARGIN."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        q = model.random_configuration(rng=rng)
        if _clearance(model, q, world) > 2 * MARGIN:
            out.append(model.fk(q, "tip")[:3, 3])
    return np.array(out)


def test_successes_keep_the_margin_by_closed_form(arm):
    world = _world()
    P = _targets(arm, 24, world)
    solved = 0
    for p in P:
        r = arm.ik(kinetree.Position(p), "tip", obstacles=world, margin=MARGIN)
        assert np.all(np.isfinite(r.q)) and np.isfinite(r.min_distance)
        if r.success:
            solved += 1
            assert _clearance(arm, r.q, world) >= MARGIN - 1e-12
            assert np.linalg.norm(arm.fk(r.q, "tip")[:3, 3] - p) <= 1e-6
            lo, hi = arm.limits.T
            assert np.all(r.q >= lo) and np.all(r.q <= hi)
        # min_distance is the closed-form clearance (spheres are kept exactly).
        assert r.min_distance == pytest.approx(_clearance(arm, r.q, world), abs=1e-9)
    assert solved >= 20


def test_plain_ik_collides_where_constrained_ik_does_not(arm):
    """Starts near configurations whose links sit in the obstacles (their tip clear):
    plain IK stays in the obstacles, collision-aware IK from the same starts leaves."""
    world = _world()
    rng = np.random.default_rng(3)
    Q0, P = [], []
    while len(P) < 16:
        q = arm.random_configuration(rng=rng)
        tip = arm.fk(q, "tip")[:3, 3]
        if _clearance(arm, q, world) < -0.02 and tip[2] > 0.2:
            Q0.append(q + rng.normal(0, 0.05, 4))
            P.append(tip)
    plain = arm.ik(kinetree.Position(np.array(P)), "tip", q0=np.array(Q0))
    hits = [_clearance(arm, q, world) < MARGIN for q, ok in zip(plain.q, plain.success) if ok]
    safe = arm.ik(kinetree.Position(np.array(P)), "tip", q0=np.array(Q0), obstacles=world,
                  margin=MARGIN)  # fmt: skip
    for q, ok in zip(safe.q, safe.success):
        if ok:
            assert _clearance(arm, q, world) >= MARGIN - 1e-12
    assert sum(hits) >= 8  # the scene does block plain solutions (the test can fail)
    assert safe.success.sum() >= 4


def test_batched_results_equal_single_solves(arm):
    world = _world()
    P = _targets(arm, 10, world, seed=2)
    batch = arm.ik(kinetree.Position(P), "tip", obstacles=world, margin=MARGIN)
    for k, p in enumerate(P):
        one = arm.ik(kinetree.Position(p), "tip", obstacles=world, margin=MARGIN, seed=k)
        np.testing.assert_array_equal(one.q, batch.q[k])
        assert one.success == batch.success[k]
        assert one.min_distance == batch.min_distance[k]


def test_self_collision_pairs_keep_the_margin(arm):
    """l2 and l4 are not adjacent: a folded arm brings them together."""
    cm = kinetree.collision.collision_model(
        arm, disabled={("l2", "l3"): "Adjacent", ("l3", "l4"): "Adjacent"}
    )
    assert cm.self_pairs  # (l2, l4) is checked
    rng = np.random.default_rng(5)
    checked = 0
    for _ in range(12):
        q = arm.random_configuration(rng=rng)
        q[2] = rng.uniform(2.0, 2.5)  # fold l3 back over l2
        r = arm.ik(
            kinetree.Position(arm.fk(q, "tip")[:3, 3]), "tip", self_collision=True,
            margin=MARGIN, collision_model=cm,
        )  # fmt: skip
        if r.success:
            checked += 1
            assert _clearance(arm, r.q, [], [("l2", "l4")]) >= MARGIN - 1e-12
        assert r.min_distance == pytest.approx(_clearance(arm, r.q, [], [("l2", "l4")]), abs=1e-9)
    assert checked >= 6


def test_min_distance_is_none_without_collision_checks(arm):
    r = arm.ik(kinetree.Position([0.3, 0.2, 0.4]), "tip")
    assert r.min_distance is None
    assert arm.ik(kinetree.Position([[0.3, 0.2, 0.4]]), "tip").min_distance is None


def test_a_target_inside_an_obstacle_is_never_a_success(arm):
    world = [kinetree.Sphere(radius=0.1, center=(0.4, 0.0, 0.4), name="ball")]
    r = arm.ik(kinetree.Position([0.4, 0.0, 0.4]), "tip", obstacles=world, margin=MARGIN,
               time_budget=0.05)  # fmt: skip
    assert not r.success
    assert r.min_distance == pytest.approx(_clearance(arm, r.q, world), abs=1e-9)
    plain = arm.ik(kinetree.Position([0.4, 0.0, 0.4]), "tip")
    assert plain.success  # reachable: only the obstacle forbids it


def test_bad_collision_options_raise_naming_them(arm):
    world = _world()
    p = kinetree.Position([0.3, 0.2, 0.4])
    with pytest.raises(InvalidValueError, match="margin"):
        arm.ik(p, "tip", obstacles=world, margin=-0.01)
    with pytest.raises(InvalidValueError, match="margin"):
        arm.ik(p, "tip", obstacles=world, margin=float("nan"))
    with pytest.raises(InvalidValueError, match=r"obstacles\[1\]"):
        arm.ik(p, "tip", obstacles=[world[0], "table"])
    with pytest.raises(InvalidValueError, match="pose"):
        kinetree.Box(size=(1, 1, 1), pose=np.full((4, 4), np.nan))
    with pytest.raises(KinetreeError, match="l9"):
        arm.ik(p, "tip", obstacles=world, ignore=[("l9", "ball")])
    with pytest.raises(InvalidValueError, match="ignore"):
        arm.ik(p, "tip", obstacles=world, ignore=["l2"])
    with pytest.raises(InvalidValueError, match="cannot keep collision margins"):
        arm.ik(p, "tip", obstacles=world, method="ccd")
    with pytest.raises(InvalidValueError, match="self_collision"):
        arm.ik(p, "tip", self_collision="yes")
    with pytest.raises(InvalidValueError, match="collision_model"):
        arm.ik(p, "tip", obstacles=world, collision_model="fine")
    planar = kinetree.load("planar2r")
    with pytest.raises(KinetreeError, match="collision geometry"):
        planar.ik(kinetree.Position([1.0, 0.5, 0.0]), obstacles=world)


# --- the QP --------------------------------------------------------------------------------------


def _random_qp(rng: np.random.Generator):
    n = int(rng.integers(1, 9))
    m = int(rng.integers(0, 12))
    meq = int(rng.integers(0, min(m, n) + 1)) if m else 0
    A = rng.normal(size=(n + 2, n))
    H = A.T @ A + 1e-3 * np.eye(n)
    g = rng.normal(size=n) * 3
    C = rng.normal(size=(m, n))
    b = rng.normal(size=m)
    lb = np.where(rng.random(n) < 0.7, -rng.random(n) * 2, -np.inf)
    ub = np.where(rng.random(n) < 0.7, rng.random(n) * 2, np.inf)
    return H, g, C, b, meq, lb, ub


def _solve(H, g, C, b, meq, lb, ub):
    n, m = g.size, b.size
    x = np.empty(n)
    st = qp_solve(H, g, C, b, meq, lb, ub, x, np.empty(qp_work_size(n, m)),
                  np.empty(qp_iwork_size(n, m), np.int64))  # fmt: skip
    return st, x


def _feasible(C, b, meq, lb, ub) -> bool:
    """scipy's LP: is there any x with the constraints?"""
    n = lb.size
    res = linprog(
        np.zeros(n), A_ub=-C[meq:] if C.shape[0] > meq else None,
        b_ub=-b[meq:] if C.shape[0] > meq else None, A_eq=C[:meq] if meq else None,
        b_eq=b[:meq] if meq else None, bounds=list(zip(lb, ub)), method="highs",
    )  # fmt: skip
    return res.status == 0


def test_qp_satisfies_kkt_or_reports_infeasible():
    """Convex QP: x optimal iff feasible with multipliers >= 0 on the active inequalities
    (stationarity solved by least squares over the active normals)."""
    rng = np.random.default_rng(0)
    n_ok = n_inf = 0
    for _ in range(400):
        H, g, C, b, meq, lb, ub = _random_qp(rng)
        st, x = _solve(H, g, C, b, meq, lb, ub)
        feasible = _feasible(C, b, meq, lb, ub)
        if st == QP_INFEASIBLE:
            assert not feasible
            n_inf += 1
            continue
        assert st == QP_SOLVED and feasible
        n_ok += 1
        n = g.size
        normals, rhs, eq = [], [], []
        for i in range(C.shape[0]):
            normals.append(C[i])
            rhs.append(b[i])
            eq.append(i < meq)
        for i in range(n):
            normals += [np.eye(n)[i], -np.eye(n)[i]]
            rhs += [lb[i], -ub[i]]
            eq += [False, False]
        N = np.array(normals)
        slack = N @ x - np.array(rhs)
        tol = 1e-8 * (1 + np.abs(np.array(rhs)))
        assert np.all(slack[np.isfinite(slack)] >= -tol[np.isfinite(slack)])
        assert np.all(np.abs(slack[: C.shape[0]][:meq]) <= tol[:meq])
        active = np.isfinite(slack) & (np.abs(slack) <= 1e-8 * (1 + np.abs(x).max()))
        grad = H @ x + g
        if not active.any():
            np.testing.assert_allclose(grad, 0, atol=1e-8)
            continue
        lam, *_ = np.linalg.lstsq(N[active].T, grad, rcond=None)
        np.testing.assert_allclose(N[active].T @ lam, grad, atol=1e-7 * (1 + np.abs(grad).max()))
        ineq = ~np.array(eq)[active]
        assert np.all(lam[ineq] >= -1e-7)
    assert n_ok > 100 and n_inf > 10


def test_qp_matches_qpsolvers():
    qpsolvers = pytest.importorskip("qpsolvers")
    if "quadprog" not in qpsolvers.available_solvers:
        pytest.skip("qpsolvers has no quadprog backend here")
    rng = np.random.default_rng(1)
    for _ in range(200):
        H, g, C, b, meq, lb, ub = _random_qp(rng)
        st, x = _solve(H, g, C, b, meq, lb, ub)
        big = 1e20
        ref = qpsolvers.solve_qp(
            H, g, -C[meq:] if C.shape[0] > meq else None,
            -b[meq:] if C.shape[0] > meq else None, C[:meq] if meq else None,
            b[:meq] if meq else None, np.maximum(lb, -big), np.minimum(ub, big),
            solver="quadprog",
        )  # fmt: skip
        if ref is None:
            assert st == QP_INFEASIBLE
        else:
            assert st == QP_SOLVED
            np.testing.assert_allclose(x, ref, atol=1e-6)


def test_qp_refuses_an_indefinite_objective():
    st, _ = _solve(np.diag([1.0, -1.0]), np.zeros(2), np.zeros((0, 2)), np.zeros(0), 0,
                   np.full(2, -np.inf), np.full(2, np.inf))  # fmt: skip
    assert st == QP_NOT_CONVEX


@pytest.mark.parametrize("collide", [False, True])
def test_max_joint_step_bounds_every_iteration(arm, collide):
    """``max_joint_step`` is the per-iteration joint speed bound: no joint moves more
    within an attempt (restarts off, so every history row follows an iteration)."""
    world = _world() if collide else []
    P = _targets(arm, 8, _world(), seed=4)
    for p in P:
        r = arm.ik(kinetree.Position(p), "tip", obstacles=world, margin=MARGIN, record=True,
                   max_joint_step=0.05, restarts=0, max_iter=400)  # fmt: skip
        steps = np.abs(np.diff(r.history, axis=0))
        assert steps.max() <= 0.05 + 1e-12
