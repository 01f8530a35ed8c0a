"""The allocation-free drivers run without numba's reference counting, swing-twist
limits included, and still keep those limits."""

from __future__ import annotations

from typing import Any

import numpy as np

import kinetree
from kinetree import Pose
from kinetree.ik.kernel import _linalg, _manifold, _steps, _swing_twist
from kinetree.ik.kernel._drivers import driver
from kinetree.kinematics import _kernels

HANDS_AND_FEET = ("hand_r", "hand_l", "foot_r", "foot_l")


def test_swing_twist_drivers_run_without_reference_counting() -> None:
    # numba refuses to compile an allocation under _nrt=False: the flag is the proof.
    for swing_twist in (False, True):
        assert driver("dls", swing_twist).targetoptions.get("_nrt") is False
    assert driver("pinv", True).targetoptions.get("_nrt") is not False  # its SVD allocates


def test_the_loops_helpers_never_inherit_reference_counting() -> None:
    # A helper takes the flags of whichever caller compiles it first (an allocating FK
    # batch, an SVD driver): set on the helper itself, the driver's code has no
    # NRT_incref/NRT_decref wherever it was first compiled.
    helpers = [
        _kernels.node_transform, _kernels.fk_nodes, _kernels.jacobian_add,
        _linalg.damped_solve, _linalg.damped_solve6, _linalg.damped_solve3, _linalg.dls_solve,
        _steps.nullspace_rest, _steps.transpose_solve, _steps.ccd_sweep,
        _swing_twist.project_all, _swing_twist.project_group, _swing_twist.feasible,
        _manifold.quat_step, _manifold.clamp_angle, _manifold.random_rotation,
    ]  # fmt: skip
    for fn in helpers:
        assert fn.targetoptions.get("_nrt") is False, fn.py_func.__name__


def test_the_kernels_of_an_iteration_are_inlined_into_the_default_driver_only() -> None:
    # Called, each passed its arrays as a dozen words apiece and numba emitted it as a
    # function of its own: inlined, a Panda solve's kernel took 16 % less time
    # (docs/design.md, the loop). Inlined into every caller, the cold warmup took twice
    # as long: only the default method's driver inlines them, the others call them.
    from kinetree import _compile
    from kinetree.ik.kernel import _loop, _tasks
    from kinetree.spatial import _kernels as spatial

    for fn in (
        _kernels.fk_nodes, _kernels.node_transform, _kernels.jacobian_add,
        _tasks.task_errors, _tasks.badness, _tasks.assemble, _tasks.target_point,
        spatial.log3, _linalg.dls_solve, _linalg.damped_solve6,
    ):  # fmt: skip
        assert fn.targetoptions.get("inline") is _compile.inline_hot, fn.py_func.__name__
    assert _loop.solve_one.targetoptions.get("inline") != "always"
    hot = driver("dls", False).py_func.__globals__["solve_one"].py_func.__qualname__
    cold = driver("dls", False, True).py_func.__globals__["solve_one"].py_func.__qualname__
    assert hot in _compile.HOT_CALLERS and cold not in _compile.HOT_CALLERS


def _caller_of_badness(name: str) -> object:
    from numba import njit

    from kinetree import _compile
    from kinetree.ik.kernel import _tasks

    def caller(errs: np.ndarray) -> float:
        return badness(errs, 1e-6, 1e-6)  # type: ignore[name-defined]  # noqa: F821

    fn = _compile.rebind(caller, name, badness=_tasks.badness)
    return njit(fn)  # no cache: the test compiles it


def _calls_to(fn: Any, callee: Any) -> int:
    """Calls to ``callee`` left in ``fn``'s typed numba IR (0 where it was inlined)."""
    ann = next(iter(fn.overloads.values())).type_annotation
    n = 0
    for expr in ann.calltypes:
        if getattr(expr, "op", None) != "call":
            continue
        t = ann.typemap.get(expr.func.name)
        if getattr(getattr(t, "dispatcher", None), "py_func", None) is callee.py_func:
            n += 1
    return n


def test_a_hot_caller_inlines_the_kernel_and_another_calls_it() -> None:
    # What numba made of the choice, in the typed IR: no call to badness left in the
    # caller named hot (its statements are there instead), one call in the other; both
    # compute the same.
    from kinetree import _compile
    from kinetree.ik.kernel import _tasks

    name = "kinetree_test_hot_caller"
    _compile.HOT_CALLERS.add(name)
    try:
        hot = _caller_of_badness(name)
        cold = _caller_of_badness("kinetree_test_cold_caller")
        errs = np.array([[2e-6, 0.0], [0.0, 5e-7]])
        assert hot(errs) == cold(errs) == _tasks.badness(errs, 1e-6, 1e-6)  # type: ignore[operator]
        assert abs(hot(errs) - 2.0) < 1e-12  # type: ignore[operator]
    finally:
        _compile.HOT_CALLERS.discard(name)
    assert _calls_to(hot, _tasks.badness) == 0
    assert _calls_to(cold, _tasks.badness) == 1


def test_a_whole_body_solve_with_swing_twist_limits_keeps_them() -> None:
    m = kinetree.load("humanoid")
    assert m.swing_twist  # the built-in humanoid has cones on its ball joints
    rng = np.random.default_rng(7)
    qs = m.random_configuration(4, rng=rng)
    for q in qs:
        targets = {f: Pose(m.fk(q, f)) for f in HANDS_AND_FEET}
        r = m.ik(targets, time_budget=None, restarts=4)
        for group, (_, swing_max, twist_lo, twist_hi) in m.swing_twist.items():
            swing, twist = m.swing_twist_angles(r.q, group)
            assert swing <= swing_max + 1e-9
            assert twist_lo - 1e-9 <= twist <= twist_hi + 1e-9
        if r.success:  # success is judged by FK, independently here
            for f, t in targets.items():
                assert np.allclose(m.fk(r.q, f), t.T, atol=1e-5)
