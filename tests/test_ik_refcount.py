"""The allocation-free drivers run without numba's reference counting, swing-twist
limits included, and still keep those limits."""

from __future__ import annotations

import numpy as np

import kinetree
from kinetree import Pose
from kinetree.ik import _linalg, _manifold, _steps, _swing_twist
from kinetree.ik._drivers import driver
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


def test_the_kernels_of_an_iteration_are_inlined() -> None:
    # Called, each passed its arrays as a dozen words apiece and numba emitted it as a
    # function of its own: inlined, a Panda solve's kernel took 16 % less time
    # (docs/design.md, the loop). solve_one stays a call (inlined, iterations slowed).
    from kinetree.ik import _loop, _tasks
    from kinetree.spatial import _kernels as spatial

    for fn in (
        _kernels.fk_nodes, _kernels.node_transform, _kernels.jacobian_add,
        _tasks.task_errors, _tasks.badness, _tasks.assemble, _tasks.target_point,
        spatial.log3, _linalg.dls_solve, _linalg.damped_solve6, _linalg.cholesky_solve,
    ):  # fmt: skip
        assert fn.targetoptions.get("inline") == "always", fn.py_func.__name__
    assert _loop.solve_one.targetoptions.get("inline") != "always"


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
