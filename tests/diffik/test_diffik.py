"""kinetree.diffik: task Jacobians against finite differences, limits that hold (speed,
joint range, collision distance against closed forms), strict priorities, convergence,
the qpsolvers backends, and bad input."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import kinetree
from kinetree import ModelBuilder
from kinetree import diffik as dk
from kinetree import geometry as geo
from kinetree.diffik.limits.collision import BUFFER
from kinetree.errors import InvalidValueError, KinetreeError, ShapeError, UnknownNameError
from kinetree.spatial import rot_x, translation


@pytest.fixture(autouse=True)
def _sphere_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("KINETREE_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "kt-cache"))


@pytest.fixture(scope="module")
def panda() -> kinetree.Model:
    return kinetree.load("panda")


def _q0(model: kinetree.Model) -> np.ndarray:
    return np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])


def _target(panda: kinetree.Model, shift=(0.15, 0.2, -0.1), turn: float = 0.4) -> np.ndarray:
    T = panda.fk(_q0(panda), "flange") @ rot_x(turn)
    T[:3, 3] += shift
    return T


def _balls() -> kinetree.Model:
    b = ModelBuilder("balls", root="torso")
    b.add_joint("shoulder", "torso", "arm", type="ball", origin=translation([0, 0.2, 0.3]))
    b.add_joint("elbow", "arm", "forearm", axis="y", origin=translation([0, 0, -0.3]),
                limits=(-2.5, 2.5))  # fmt: skip
    b.add_frame("hand", "forearm", translation([0, 0, -0.25]))
    for link, mass in (("torso", 10.0), ("arm", 2.0), ("forearm", 1.0)):
        b.set_inertial(link, mass, (0.01, 0.02, -0.1))
    return b.build().with_floating_base()


def _fd_task_jacobian(task, model, q, h=1e-6):
    def err(step):
        return task.error(model, model.integrate(q, step))

    return np.stack([(err(h * e) - err(-h * e)) / (2 * h) for e in np.eye(model.nv)], axis=1)


def test_task_jacobians_match_finite_differences(panda, rng):
    model = _balls()
    q = model.random_configuration(rng=rng)
    far = model.fk(model.random_configuration(rng=rng), "hand")
    tasks = [
        dk.FrameTask("hand", far),  # far from the target: the log's full Jacobian matters
        dk.ComTask([0.1, 0.0, 0.5]),
        dk.ManipulabilityTask("hand", minimum=10.0, rows="position"),
        dk.ManipulabilityTask("hand"),
    ]
    for task in tasks:
        np.testing.assert_allclose(task.jacobian(model, q), _fd_task_jacobian(task, model, q),
                                   atol=1e-7)  # fmt: skip
    qp = panda.random_configuration(rng=rng)
    post = dk.PostureTask(_q0(panda))
    np.testing.assert_allclose(post.jacobian(panda, qp), _fd_task_jacobian(post, panda, qp),
                               atol=1e-8)  # fmt: skip
    ft = dk.FrameTask("flange", _target(panda, turn=2.5))
    np.testing.assert_allclose(ft.jacobian(panda, qp), _fd_task_jacobian(ft, panda, qp), atol=1e-7)


def test_build_qp_matrices_are_the_tasks_sums(panda):
    q = _q0(panda)
    frame = dk.FrameTask("flange", _target(panda), position_cost=2.0, orientation_cost=0.5)
    post = dk.PostureTask(q, cost=0.1)
    qp = dk.build_qp(panda, q, [frame, post], 0.01,
                     [dk.ConfigurationLimit(), dk.VelocityLimit(1.5)], damping=1e-6)  # fmt: skip
    J = frame.jacobian(panda, q)
    W = np.diag([2.0] * 3 + [0.5] * 3) ** 2  # costs are per unit of error: squared here
    np.testing.assert_allclose(qp.H, J.T @ W @ J + 0.01 * np.eye(7) + 1e-6 * np.eye(7), atol=1e-12)
    np.testing.assert_allclose(qp.c, J.T @ W @ frame.error(panda, q), atol=1e-12)
    np.testing.assert_allclose(qp.ub, np.minimum(0.95 * (panda.limits[:, 1] - q), 0.015))
    np.testing.assert_allclose(qp.lb, np.maximum(0.95 * (panda.limits[:, 0] - q), -0.015))
    # Unconstrained, the step is the weighted least-squares one.
    free = dk.build_qp(panda, q, [frame, post], 0.01)
    v = dk.solve_step(panda, q, [frame, post], 0.01)
    np.testing.assert_allclose(v * 0.01, np.linalg.solve(free.H, -free.c), atol=1e-9)


@pytest.mark.parametrize("solver", ["daqp", "quadprog", "proxqp"])
def test_qpsolvers_backends_give_the_same_step(panda, solver):
    qpsolvers = pytest.importorskip("qpsolvers")
    if solver not in qpsolvers.available_solvers:
        pytest.skip(f"{solver} is not installed")
    q = _q0(panda)
    tasks = [dk.FrameTask("flange", _target(panda)), dk.PostureTask(q, cost=1e-2)]
    limits = [dk.ConfigurationLimit(), dk.VelocityLimit(0.5)]
    ours = dk.solve_step(panda, q, tasks, 0.05, limits)
    # proxqp's default tolerance is 1e-5 (it then oversteps a bound by 1e-4): tighten it.
    options = {"eps_abs": 1e-10, "eps_rel": 0.0} if solver == "proxqp" else {}
    theirs = dk.solve_step(panda, q, tasks, 0.05, limits, solver=solver, **options)
    assert np.abs(ours).max() == pytest.approx(0.5)  # speed-bound: constraints are active
    np.testing.assert_allclose(ours, theirs, atol=1e-5)


def test_velocity_limits_are_never_exceeded(panda, rng):
    v_max = np.array([2.0, 1.0, 1.5, 0.5, 3.0, 1.0, 0.7])
    limits = [dk.ConfigurationLimit(), dk.VelocityLimit(v_max)]
    for _ in range(3):
        q = panda.random_configuration(rng=rng)
        task = dk.FrameTask("flange", panda.fk(panda.random_configuration(rng=rng), "flange"))
        for dt in (0.002, 0.01, 0.05):
            for _ in range(15):
                v = dk.solve_step(panda, q, [task, dk.PostureTask(q, cost=1e-3)], dt, limits)
                assert np.all(np.abs(v) <= v_max * (1 + 1e-9))
                q = panda.integrate(q, v * dt)
                assert panda.within_limits(q, 1e-12)
    # The URDF's own speed limits by default (as a mapping: one joint changed).
    lim = dk.VelocityLimit({"joint4": 0.1})
    assert lim.vector(panda).tolist() == [np.inf] * 3 + [0.1] + [np.inf] * 3


def test_joint_outside_its_range_returns_at_full_speed(panda):
    q = _q0(panda)
    q[3] = panda.limits[3, 0] - 0.2  # 0.2 rad beyond the lower limit
    v = dk.solve_step(panda, q, [dk.PostureTask(q, cost=1e-3)], 0.01,
                      [dk.ConfigurationLimit(), dk.VelocityLimit(1.0)])  # fmt: skip
    assert v[3] == pytest.approx(1.0)


def _gantry() -> kinetree.Model:
    """Three slides carrying a ball of radius 0.05 m: the ball's centre is q."""
    b = ModelBuilder("gantry", root="base")
    b.add_joint("x", "base", "cx", type="prismatic", axis="x", limits=(-2, 2))
    b.add_joint("y", "cx", "cy", type="prismatic", axis="y", limits=(-2, 2))
    b.add_joint("z", "cy", "ball", type="prismatic", axis="z", limits=(-2, 2))
    b.add_geometry("ball", geo.Sphere(radius=0.05, kind="collision"))
    return b.build()


def _arm() -> kinetree.Model:
    """A planar three-link arm with a ball of radius 0.04 m at its tip."""
    b = ModelBuilder("arm", root="base")
    b.add_joint("j1", "base", "l1", axis="z", limits=(-3, 3))
    b.add_joint("j2", "l1", "l2", axis="z", origin=translation([0.4, 0, 0]), limits=(-3, 3))
    b.add_joint("j3", "l2", "l3", axis="z", origin=translation([0.35, 0, 0]), limits=(-3, 3))
    b.add_frame("tip", "l3", translation([0.25, 0, 0]))
    b.add_geometry("l3", geo.Sphere(radius=0.04, kind="collision",
                                    origin=translation([0.25, 0, 0])))  # fmt: skip
    return b.build()


@pytest.mark.parametrize("kind", ["gantry", "arm"])
def test_collision_limit_keeps_the_margin_while_tracking_into_an_obstacle(kind):
    """The target lies inside an obstacle sphere; the ball's distance to it (closed
    form: |c - centre| - r_obstacle - r_ball) never drops below the margin, and the
    ball ends as close as the margin lets it."""
    margin = 0.01
    if kind == "gantry":
        model, frame, r_ball = _gantry(), "ball", 0.05
        q = np.array([-0.6, 0.02, 0.0])
        centre, radius = np.array([0.0, 0.0, 0.0]), 0.2
        goal = np.array([0.3, 0.0, 0.0])
    else:
        model, frame, r_ball = _arm(), "tip", 0.04
        q = np.array([0.9, -0.5, -0.4])
        centre, radius = np.array([0.75, 0.0, 0.0]), 0.12
        goal = centre
    ob = kinetree.Sphere(radius=radius, center=centre)
    limit = dk.CollisionAvoidanceLimit([ob], self_collision=False, margin=margin,
                                       detection_distance=0.3, gain=0.5)  # fmt: skip
    task = dk.FrameTask(frame, goal, orientation_cost=0.0)
    closest = np.inf
    for _ in range(300):
        v = dk.solve_step(model, q, [task], 0.05, [limit, dk.VelocityLimit(1.0)], damping=1e-6)
        q = model.integrate(q, v * 0.05)
        d = np.linalg.norm(model.fk(q, frame)[:3, 3] - centre) - radius - r_ball
        closest = min(closest, d)
        assert d >= margin - 1e-6 * (kind == "arm")
    assert closest == pytest.approx(margin + BUFFER, abs=1e-3)  # the rows keep the buffer
    assert limit.min_distance(model, q) == pytest.approx(d, abs=1e-12)  # the spheres are exact


def test_collision_limit_needs_collision_geometry():
    model = kinetree.models.panda()  # the built-in Panda: no collision geometry
    with pytest.raises(KinetreeError, match="no collision geometry"):
        dk.solve_step(model, _q0(model), [dk.PostureTask()], 0.01,
                      [dk.CollisionAvoidanceLimit([kinetree.Sphere(radius=0.1)])])  # fmt: skip


def test_priorities_leave_the_primary_task_unchanged(panda, rng):
    for _ in range(5):
        q = panda.random_configuration(rng=rng)
        primary = dk.FrameTask("flange", _target(panda), orientation_cost=0.0)
        limits = [dk.ConfigurationLimit(), dk.VelocityLimit(2.0)]
        alone = dk.step.step_delta(panda, q, [[primary]], 0.01, limits)
        secondary = [dk.PostureTask(panda.random_configuration(rng=rng), cost=1.0),
                     dk.ManipulabilityTask("flange", cost=0.1)]  # fmt: skip
        both = dk.step.step_delta(panda, q, [[primary], secondary], 0.01, limits)
        J = primary.jacobian(panda, q)[:3]
        assert np.abs(J @ (both - alone)).max() <= 1e-9
        assert np.abs(both - alone).max() > 1e-6  # the secondary task did move the arm
        # Weighted instead: the primary task's motion changes.
        weighted = dk.step.step_delta(panda, q, [primary, *secondary], 0.01, limits)
        assert np.abs(J @ (weighted - alone)).max() > 1e-6


def test_priorities_when_the_first_level_meets_a_bound(panda):
    """Regression (the README's example): once the first level's step sat on a speed
    bound, the lower level's bound rows had a slack of -1e-17 and read as infeasible."""
    q = panda.neutral()
    hand = dk.FrameTask("flange", panda.fk(q) @ translation([0.05, 0, 0.1]))
    limits = [dk.ConfigurationLimit(), dk.VelocityLimit(2.0)]
    for _ in range(100):
        v = dk.solve_step(panda, q, [[hand], [dk.PostureTask(q, cost=0.1)]], 0.01, limits)
        q = panda.integrate(q, v * 0.01)
        assert panda.within_limits(q)
    assert hand.error_norm(panda, q) < 1e-9


def test_convergence_error_decreases_and_reaches_tolerance(panda):
    q0 = _q0(panda)
    task = dk.FrameTask("flange", _target(panda))
    res = dk.solve(panda, q0, [[task], [dk.PostureTask(q0)]], dt=1.0,
                   limits=[dk.ConfigurationLimit()], tolerance=1e-9, max_steps=50,
                   record=True)  # fmt: skip
    assert res.success and res.message == "converged"
    assert res.steps <= 20
    errs = [task.error_norm(panda, q) for q in res.history]
    assert all(b < a for a, b in itertools.pairwise(errs))
    T = panda.fk(res.q, "flange")
    np.testing.assert_allclose(T, task.target, atol=1e-8)
    # A speed limit stretches it over more steps, none of them too fast.
    slow = dk.solve(panda, q0, [task], dt=0.01, limits=[dk.VelocityLimit(1.0)],
                    tolerance=1e-6, max_steps=400, record=True)  # fmt: skip
    assert slow.success and slow.steps > 20
    assert np.abs(np.diff(slow.history, axis=0)).max() <= 0.01 + 1e-12


def test_full_solve_with_centre_of_mass_posture_and_manipulability():
    model = _balls()
    q0 = model.neutral()
    com = dk.ComTask(model.com(q0) + np.array([0.02, -0.03, -0.05]))
    hand = dk.FrameTask("hand", model.fk(q0, "hand") @ translation([0.05, 0.0, 0.1]),
                        orientation_cost=0.0)  # fmt: skip
    res = dk.solve(model, q0, [[hand, com], [dk.ManipulabilityTask("hand", 1e-3),
                                             dk.PostureTask(q0, 1e-2)]],
                   limits=[dk.ConfigurationLimit()], tolerance=1e-8, max_steps=100)  # fmt: skip
    assert res.success, res.message
    np.testing.assert_allclose(model.com(res.q), com.target, atol=1e-8)
    assert len(res.errors) == 2 and max(res.errors) <= 1e-8


def test_unreachable_target_is_an_honest_failure(panda):
    far = np.eye(4)
    far[:3, 3] = (3.0, 0.0, 0.5)  # 3 m away: out of reach
    res = dk.solve(panda, _q0(panda), [dk.FrameTask("flange", far, orientation_cost=0)],
                   limits=[dk.ConfigurationLimit()], max_steps=60)  # fmt: skip
    assert not res.success
    assert res.errors[0] > 1.0
    assert np.all(np.isfinite(res.q))
    # Contradicting limits: the solve stops and says so.
    q = _q0(panda)
    q[0] = 5.0
    bad = dk.solve(panda, q, [dk.FrameTask("flange", far)],
                   limits=[dk.ConfigurationLimit(), _Impossible()])  # fmt: skip
    assert not bad.success and "infeasible" in bad.message


class _Impossible(dk.Limit):
    def inequalities(self, model, q, dt):
        row = np.zeros((2, model.nv))
        row[0, 0], row[1, 0] = 1.0, -1.0
        return row, np.array([-1.0, -1.0])  # dq0 <= -1 and dq0 >= 1


def test_bad_input_raises_naming_it(panda):
    q = _q0(panda)
    ok = dk.FrameTask("flange", _target(panda))
    with pytest.raises(UnknownNameError, match=r"'hand'.*flange"):
        dk.solve_step(panda, q, [dk.FrameTask("hand", np.eye(4))], 0.01)
    with pytest.raises(InvalidValueError, match="dt"):
        dk.solve_step(panda, q, [ok], 0.0)
    with pytest.raises(ShapeError, match="q"):
        dk.solve_step(panda, q[:3], [ok], 0.01)
    with pytest.raises(InvalidValueError, match="NaN"):
        dk.solve_step(panda, np.full(7, np.nan), [ok], 0.01)
    with pytest.raises(InvalidValueError, match="tasks"):
        dk.solve_step(panda, q, [], 0.01)
    with pytest.raises(InvalidValueError, match="mixes"):
        dk.solve_step(panda, q, [ok, [ok]], 0.01)
    with pytest.raises(InvalidValueError, match="not a limit"):
        dk.solve_step(panda, q, [ok], 0.01, limits=["joint"])
    with pytest.raises(InvalidValueError, match="position_cost"):
        dk.FrameTask("flange", position_cost=-1.0)
    with pytest.raises(InvalidValueError, match="gain"):
        dk.FrameTask("flange", gain=1.5)
    with pytest.raises(KinetreeError, match="target"):
        dk.FrameTask("flange", target=np.full((4, 4), np.nan))
    with pytest.raises(InvalidValueError, match="no target"):
        dk.solve_step(panda, q, [dk.FrameTask("flange")], 0.01)
    with pytest.raises(ShapeError, match="max_velocity"):
        dk.solve_step(panda, q, [ok], 0.01, limits=[dk.VelocityLimit([1.0, 2.0])])
    with pytest.raises(InvalidValueError, match="max_velocity"):
        dk.solve_step(panda, q, [ok], 0.01, limits=[dk.VelocityLimit(-1.0)])
    with pytest.raises(InvalidValueError, match="detection_distance"):
        dk.CollisionAvoidanceLimit(margin=0.2, detection_distance=0.1)
    with pytest.raises(ShapeError, match="PostureTask"):
        dk.solve_step(panda, q, [dk.PostureTask(np.zeros(3))], 0.01)
    with pytest.raises(InvalidValueError, match="minimum"):
        dk.ManipulabilityTask("flange", minimum=-1.0)
    with pytest.raises(InvalidValueError, match="damping"):
        dk.solve_step(panda, q, [ok], 0.01, damping=-1.0)


def test_star_import_names_exist():
    namespace: dict[str, object] = {}
    exec("from kinetree.diffik import *", namespace)
    assert {"solve_step", "solve", "build_qp", "FrameTask", "CollisionAvoidanceLimit"} <= set(
        namespace
    )


@pytest.mark.parametrize(
    ("q0", "goal", "centre"),
    [
        ([-1.73567001, 1.36526912, -1.73323996], [0.68487275, -0.30263446, 0.0],
         [0.45144847, -0.51584417, 0.0]),
        ([0.12864189, 1.25297638, 1.98804117], [0.03781509, -0.73314351, 0.0],
         [0.12712857, -0.20465055, 0.0]),
    ],
)  # fmt: skip
def test_solve_keeps_the_collision_margin_over_long_steps(q0, goal, centre):
    """Regression: long steps of an arm swinging past a ball crossed the linearised rows
    (clearance -9.5 mm with a 10 mm margin). The clearance, in closed form on exact
    spheres, stays at the margin or above at every iterate."""
    model, frame, r_ball, radius, margin = _arm(), "tip", 0.04, 0.05, 0.01
    ob = kinetree.Sphere(radius=radius, center=centre)
    limit = dk.CollisionAvoidanceLimit([ob], self_collision=False, margin=margin,
                                       detection_distance=0.3)  # fmt: skip
    task = dk.FrameTask(frame, goal, orientation_cost=0.0)
    r = dk.solve(model, np.array(q0), [task], 1.0, [limit], record=True, max_steps=100)
    clear = [np.linalg.norm(model.fk(q, frame)[:3, 3] - centre) - radius - r_ball
             for q in r.history]  # fmt: skip
    assert min(clear) >= margin - 1e-9


def test_a_lower_level_never_spoils_the_first_over_iterations(panda):
    """Regression: with ``[[FrameTask], [PostureTask, ManipulabilityTask]]`` and long
    steps the null-space motion bent the frame off its target more than the first level
    made up (frame error 0.11 -> 2.15; 2/10 solved against 10/10 without the lower level).
    Judged by FK against the target."""
    rng = np.random.default_rng(0)
    for _ in range(4):
        q0 = panda.random_configuration(rng=rng)
        T = panda.fk(panda.random_configuration(rng=rng), "flange")
        lower = [
            dk.PostureTask(panda.neutral(), cost=1.0),
            dk.ManipulabilityTask("flange", cost=0.1),
        ]
        r = dk.solve(panda, q0, [[dk.FrameTask("flange", T)], lower], 1.0, max_steps=300)
        assert r.success, r.errors
        Tq = panda.fk(r.q, "flange")
        assert np.linalg.norm(Tq[:3, 3] - T[:3, 3]) <= 1e-5
        assert np.abs(Tq[:3, :3] - T[:3, :3]).max() <= 1e-5
