"""Collision-aware IK with ``device="cuda"``, in numba's CUDA simulator, against the CPU.

The scene is ``benchmarks/collision_ik.py``'s: the Panda of example-robot-data (its
collision meshes and SRDF) on a table, with a pillar and a ball, self-collision on. The
GPU kernel runs the CPU's collision variant of the loop (the QP step with distance rows,
the clear restarts, the final clearance), so it must return the CPU's answers to the last
bit; every success is re-checked clear on the exact meshes by coal, and on target by FK.
Few targets and a coarse sphere model: the simulator runs each thread as Python.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from test_gpu_api import cuda  # noqa: F401  (the simulator fixture)

import kinetree
from kinetree.errors import InvalidValueError, KinetreeError

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
# The collision-aware IK tests' robot (tests/ik/kernel/test_collide.py).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ik" / "kernel"))
import collision_ik as bench

pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")

#: The fields that must agree bit for bit.
FIELDS = ("q", "position_error", "orientation_error", "iterations", "restarts", "success",
          "reachable", "min_distance", "message")  # fmt: skip


@pytest.fixture(scope="module")
def scene(tmp_path_factory):  # type: ignore[no-untyped-def]
    """``(model, frame, q0, options, checker, Q, P)``: the scene, the ready pose, the
    collision options, coal's checker, and configurations clear by 1 cm on the meshes
    with their hand poses."""
    pytest.importorskip("coal")
    robots = bench.robots_dir()
    if robots is None or not robots.is_dir():
        pytest.skip("example-robot-data is not installed")
    d = robots / "panda_description"
    model = kinetree.load(d / "urdf" / "panda.urdf", srdf=d / "srdf" / "panda.srdf")
    with pytest.MonkeyPatch.context() as mp:  # the sphere fit's disk cache, kept apart
        mp.setenv("KINETREE_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "kt-cache"))
        cm = kinetree.collision.collision_model(model, max_spheres=8, max_overshoot=0.01)
    world = bench.scene()
    checker = bench.ExactChecker(model, cm, world)
    frame = model.end_effectors[0]
    Q, P = bench.targets(model, checker, 14, frame, seed=3)
    q0 = model.q_neutral.copy()
    q0[:7] = bench.READY
    opts = {"obstacles": world, "self_collision": True, "margin": bench.MARGIN,
            "ignore": bench.IGNORE, "collision_model": cm, "time_budget": None,
            "seed": 7}  # fmt: skip
    return model, frame, q0, opts, checker, Q, P


def _same(gpu: kinetree.ik.IKResult, cpu: kinetree.ik.IKResult) -> None:
    for name in FIELDS:
        np.testing.assert_array_equal(getattr(gpu, name), getattr(cpu, name), err_msg=name)


def test_collision_batch_is_the_cpu_answer_and_every_success_is_clear(cuda, scene):  # noqa: F811
    """Same targets, seeds and options: the same q, errors, iterations, restarts,
    clearances and messages; each success on target by FK and clear on the exact meshes
    (coal), not only on the spheres the solver sees."""
    model, frame, q0, opts, checker, _, P = scene
    # The target that takes the most restarts (so that the clear random starts run too;
    # the CPU is fast) and five others: six problems on the simulator's four threads, so
    # that a thread reuses its scratch for a second one. Problem k draws from seed + k.
    restarts = model.ik(P, frame, q0=q0, **opts).restarts
    pick = [int(np.argmax(restarts)), *[k for k in range(6) if k != np.argmax(restarts)][:5]]
    P = P[pick]
    cpu = model.ik(P, frame, q0=q0, **opts)
    gpu = model.ik(P, frame, q0=q0, device="cuda", **opts)
    _same(gpu, cpu)
    assert cpu.restarts.max() >= 1 and cpu.success.sum() >= 3, (cpu.restarts, cpu.success)
    tol = 1e-6
    for q, ok, T, d in zip(gpu.q, gpu.success, P, gpu.min_distance, strict=True):
        if not ok:
            continue
        assert d >= bench.MARGIN
        assert checker.clearance(q) > 0.0
        Tq = model.fk(q, frame)
        assert np.linalg.norm(Tq[:3, 3] - T[:3, 3]) <= tol
        R = Tq[:3, :3].T @ T[:3, :3]
        assert np.arccos(np.clip((np.trace(R) - 1.0) / 2.0, -1.0, 1.0)) <= tol


def test_on_target_but_in_collision_is_reported_as_on_the_cpu(cuda, scene):  # noqa: F811
    """A start on target that no step can clear by a 30 cm margin: not a success, the
    status "in collision" with the closest pair named (a single solve) or in the message
    array (a batch), and the clearance below the margin; GPU arrays in, GPU arrays out
    carry the clearances too."""
    model, frame, _, opts, _, Q, P = scene
    tight = dict(opts, margin=0.3, restarts=0, max_iter=3)
    cpu = model.ik(P[0], frame, q0=Q[0], **tight)
    gpu = model.ik(P[0], frame, q0=Q[0], device="cuda", **tight)
    _same(gpu, cpu)
    assert not gpu.success and gpu.min_distance < 0.3
    assert gpu.message.startswith("in collision: on target, but panda_")
    cpu = model.ik(P[:2], frame, q0=Q[:2], **tight)
    gpu = model.ik(P[:2], frame, q0=Q[:2], device="cuda", **tight)
    _same(gpu, cpu)
    assert list(gpu.message) == ["in collision"] * 2
    dev = model.ik(cuda.to_device(P[:2]), frame, q0=cuda.to_device(Q[:2]), device="cuda",
                   **tight)  # fmt: skip
    np.testing.assert_array_equal(dev.min_distance.copy_to_host(), cpu.min_distance)
    np.testing.assert_array_equal(dev.success.copy_to_host(), cpu.success)
    np.testing.assert_array_equal(dev.q.copy_to_host(), cpu.q)
    assert "min_distance" in dev.message
    # without collision checks a GPU result has no clearance, as on the CPU
    assert model.ik(P[0], frame, q0=Q[0], device="cuda", max_iter=3).min_distance is None


def test_a_moved_world_keeps_its_kernel_and_meshes_run_too(cuda, scene):  # noqa: F811
    """The obstacles are the kernel's arguments, not its constants: the ball and the pillar
    moved make another template but the same kernel, with the CPU's answers for the new
    scene; point clouds and triangle meshes (their points in the same arguments) too."""
    from kinetree.gpu import _kernels as K
    from kinetree.gpu.api import _pose_template
    from kinetree.ik.options import resolve
    from kinetree.spatial import translation

    model, frame, q0, opts, _, _, P = scene
    table = opts["obstacles"][0]
    moved = [table, kinetree.Cylinder(radius=0.05, length=1.0, name="pillar",
                                      pose=translation([0.5, -0.1, 0.5])),
             kinetree.Sphere(radius=0.1, center=(0.35, 0.3, 0.3), name="ball")]  # fmt: skip
    keys = set()
    for world in (opts["obstacles"], moved):
        tpl = _pose_template(model, frame, resolve({**opts, "obstacles": world}))
        keys.add(K.ik_key("dls", tpl.ibuf, tpl.fbuf, (4, 4)))
    assert len(keys) == 1
    o = dict(opts, obstacles=moved)
    _same(model.ik(P[:2], frame, q0=q0, device="cuda", **o), model.ik(P[:2], frame, q0=q0, **o))
    assert keys <= set(K._IK_KERNELS)
    # a tetrahedron and a few balls near the hand's path, in the world's data table
    tetra = kinetree.TriangleMesh(
        vertices=np.array([[0.0, 0, 0], [0.1, 0, 0], [0, 0.1, 0], [0, 0, 0.1]]),
        faces=np.array([[0, 1, 2], [0, 1, 3], [0, 2, 3], [1, 2, 3]]),
        pose=translation([0.3, 0.35, 0.25]), name="tetra",
    )  # fmt: skip
    cloud = kinetree.PointCloud(points=np.array([[0.6, 0.0, 0.5], [0.6, 0.05, 0.55]]),
                                radius=0.03, name="cloud")  # fmt: skip
    o = dict(opts, obstacles=[table, tetra, cloud])
    cpu = model.ik(P[:2], frame, q0=q0, **o)
    _same(model.ik(P[:2], frame, q0=q0, device="cuda", **o), cpu)
    assert cpu.success.any()
    # a cloud of another size (a sensor's next frame) keeps the kernel too; another
    # number of obstacles (other pairs) does not
    bigger = kinetree.PointCloud(points=np.tile(cloud.points, (5, 1)) + 0.01, radius=0.03)
    keys = set()
    for world in ([table, tetra, cloud], [table, tetra, bigger], [table, tetra]):
        tpl = _pose_template(model, frame, resolve({**opts, "obstacles": world}))
        keys.add(K.ik_key("dls", tpl.ibuf, tpl.fbuf, (4, 4)))
    assert len(keys) == 2
    o = dict(opts, obstacles=[table, tetra, bigger])
    _same(model.ik(P[:2], frame, q0=q0, device="cuda", **o), model.ik(P[:2], frame, q0=q0, **o))
    # encoded target rows (a Position target), not raw poses, through the same kernel
    target = kinetree.ik.Position(P[:2, :3, 3])
    cpu = model.ik(target, frame, q0=q0, **o)
    _same(model.ik(target, frame, q0=q0, device="cuda", **o), cpu)
    assert cpu.success.all()


def test_no_pair_left_to_check_solves_without_writing_past_the_scratch(
    cuda,  # noqa: F811
    monkeypatch,
    tmp_path,
):
    """Every pair ignored: the collision variant still takes its QP step, whose scratch
    was sized for pairs only (on main the CPU wrote past it and the process died of heap
    corruption). Clearance inf, on target, the GPU's answer the CPU's. The arm of
    test_collision_ik, whose links are spheres: no example-robot-data needed."""
    from test_collide import sphere_arm

    monkeypatch.setenv("KINETREE_CACHE_DIR", str(tmp_path))
    arm = sphere_arm()
    ball = kinetree.Sphere(radius=0.05, center=(2.0, 0.0, 0.0), name="ball")
    opts = {"obstacles": [ball], "self_collision": False, "time_budget": None,
            "ignore": [(f, "ball") for f in ("l2", "l3", "l4")]}  # fmt: skip
    P = arm.fk(arm.random_configuration(3, rng=2), "tip")[:, :3, 3]
    target = kinetree.ik.Position(P)
    cpu = arm.ik(target, "tip", **opts)
    assert np.all(cpu.min_distance == np.inf) and cpu.success.all()
    np.testing.assert_allclose(arm.fk(cpu.q, "tip")[:, :3, 3], P, atol=1e-6)
    _same(arm.ik(target, "tip", device="cuda", **opts), cpu)


def test_bad_collision_input_raises_naming_the_choices(cuda, scene):  # noqa: F811
    """What cannot keep margins, or has nothing to keep them with, raises as on the CPU,
    naming what does run."""
    model, frame, q0, opts, _, _, P = scene
    with pytest.raises(InvalidValueError, match="auto, dls"):
        model.ik(P[0], frame, q0=q0, device="cuda", method="transpose", **opts)
    with pytest.raises(InvalidValueError, match="Box, Sphere, Capsule, Cylinder"):
        model.ik(P[0], frame, q0=q0, device="cuda", obstacles=[np.eye(4)])
    with pytest.raises(KinetreeError, match="no collision geometry"):
        kinetree.load("panda").ik(np.eye(4), device="cuda", self_collision=True)
