"""Whole-body IK with ``device="cuda"``, in numba's CUDA simulator, against the CPU.

The robots are ``benchmarks/wholebody.py``'s: example-robot-data's G1 and Talos, each
with a free-flying base (seven coordinates: position and a unit quaternion), and four 6D
targets (both hands, both feet) at random configurations. A batch of whole-body targets
is a dict whose values are batched targets; it goes through the CPU's own encoding into
target rows and the same loop compiled for a GPU thread, so the GPU must return the
CPU's answers to the last bit (q, errors, iterations, restarts, success), and every
success must be on target by FK. Batches of three or four: the simulator runs each
thread as Python.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from test_gpu_api import cuda  # noqa: F401  (the simulator fixture)

import kinetree
from kinetree import Pose, Position
from kinetree.errors import InvalidValueError, ShapeError, UnsupportedError

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")

TOL = 1e-6
#: The fields that must agree bit for bit.
FIELDS = ("q", "position_error", "orientation_error", "iterations", "restarts", "success",
          "reachable")  # fmt: skip
#: No clock in the answers: the simulator runs far slower than the CPU.
OPTS = {"tol": TOL, "time_budget": None}


def _robot(name: str) -> kinetree.Model:
    from kinetree.anim.retarget.robots import load_robot
    from kinetree.io.robot_packages import example_robot_data

    if example_robot_data() is None:
        pytest.skip("example-robot-data is not installed")
    return load_robot(name)


def _batch(m: kinetree.Model, n: int, seed: int) -> dict[str, Pose]:
    """``benchmarks/wholebody.py``'s targets for ``n`` configurations, as one dict of
    batched poses ``{frame: Pose (n, 4, 4)}``."""
    import wholebody

    singles = wholebody.targets_for(m, n, seed)
    return {f: Pose(np.stack([np.asarray(t[f].T) for t in singles])) for f in singles[0]}


@pytest.fixture(scope="module")
def g1() -> kinetree.Model:
    return _robot("g1")


@pytest.fixture(scope="module")
def talos() -> kinetree.Model:
    return _robot("talos")


def _same(gpu: kinetree.ik.IKResult, cpu: kinetree.ik.IKResult) -> None:
    for name in FIELDS:
        np.testing.assert_array_equal(getattr(gpu, name), getattr(cpu, name), err_msg=name)


def _on_target(m: kinetree.Model, q: np.ndarray, targets: dict[str, Pose]) -> np.ndarray:
    """Per problem: every frame within TOL of its pose by FK (rotation angle from the
    relative rotation's trace)."""
    ok = np.ones(q.shape[0], dtype=bool)
    for f, t in targets.items():
        M, T = m.fk(q, f), np.asarray(t.T)
        R = np.swapaxes(M[:, :3, :3], -1, -2) @ T[:, :3, :3]
        angle = np.arccos(np.clip((np.trace(R, axis1=1, axis2=2) - 1.0) / 2.0, -1.0, 1.0))
        ok &= np.linalg.norm(M[:, :3, 3] - T[:, :3, 3], axis=1) <= TOL * (1 + 1e-9)
        ok &= angle <= 1.5 * TOL  # arccos near 1 loses digits: a little slack
    return ok


def _unit_base(m: kinetree.Model, q: np.ndarray) -> None:
    sl = m.q_slice(m.floating_base)
    norms = np.linalg.norm(q[..., sl.start + 3 : sl.stop], axis=-1)
    np.testing.assert_allclose(norms, 1.0, rtol=0, atol=1e-12)


def test_g1_batch_from_the_neutral_pose_is_the_cpu_answer(cuda, g1):  # noqa: F811
    """Four G1 whole-body problems (a dict of batched 6D targets) from the neutral pose:
    the CPU's answers bit for bit, restarts included; every success on all four targets
    by FK, the base's quaternion unit, the base moved (it is solved for, not kept)."""
    targets = _batch(g1, 4, 0)
    cpu = g1.ik(targets, **OPTS)
    gpu = g1.ik(targets, device="cuda", **OPTS)
    _same(gpu, cpu)
    assert gpu.q.shape == (4, g1.nq) and gpu.success.shape == (4,)
    assert cpu.success.all()
    assert cpu.restarts.max() >= 1, cpu.restarts  # the random restarts run on the GPU too
    assert _on_target(g1, gpu.q, targets).all()
    _unit_base(g1, gpu.q)
    sl = g1.q_slice(g1.floating_base)
    assert np.abs(gpu.q[:, sl] - g1.neutral()[sl]).max(axis=1).min() > 1e-3


def test_talos_q0_batch_with_unnormalised_base_quaternions(cuda, talos):  # noqa: F811
    """Per-problem starts whose base quaternions are not unit length (the loop normalises
    them) and whose joints are off the neutral pose: the CPU's answers, unit quaternions
    out, every success on target."""
    targets = _batch(talos, 4, 1)
    rng = np.random.default_rng(3)
    Q0 = np.repeat(talos.neutral()[None], 4, axis=0)
    sl = talos.q_slice(talos.floating_base)
    Q0[:, sl.start + 3 : sl.stop] = rng.normal(size=(4, 4)) * 2.0
    Q0[:, sl.stop :] += rng.normal(0.0, 0.1, (4, talos.nq - sl.stop))
    cpu = talos.ik(targets, q0=Q0, **OPTS)
    gpu = talos.ik(targets, q0=Q0, device="cuda", **OPTS)
    _same(gpu, cpu)
    assert cpu.restarts.max() >= 1, cpu.restarts  # this start needs restarts
    assert gpu.success.sum() >= 3
    assert _on_target(talos, gpu.q[gpu.success], {
        f: Pose(np.asarray(t.T)[gpu.success]) for f, t in targets.items()}).all()  # fmt: skip
    _unit_base(talos, gpu.q)


def test_mixed_position_masked_pose_and_pose_targets(cuda, g1):  # noqa: F811
    """A hand's position only, a foot's pose with its orientation free about world z,
    and two full poses: the same rows on both devices, the same answers; successes are
    on target in the components that count."""
    frames = list(g1.end_effectors[:4])
    full = _batch(g1, 3, 5)
    T0, T3 = np.asarray(full[frames[0]].T), np.asarray(full[frames[3]].T)
    targets = {
        frames[0]: Position(T0[:, :3, 3]),
        frames[1]: full[frames[1]],
        frames[2]: full[frames[2]],
        frames[3]: Pose(T3, orientation_mask=[True, True, False]),
    }
    cpu = g1.ik(targets, **OPTS)
    gpu = g1.ik(targets, device="cuda", **OPTS)
    _same(gpu, cpu)
    assert gpu.success.all()
    np.testing.assert_array_less(
        np.linalg.norm(g1.fk(gpu.q, frames[0])[:, :3, 3] - T0[:, :3, 3], axis=1), TOL * 1.001
    )
    assert _on_target(g1, gpu.q, {f: full[f] for f in frames[1:3]}).all()
    np.testing.assert_array_less(
        np.linalg.norm(g1.fk(gpu.q, frames[3])[:, :3, 3] - T3[:, :3, 3], axis=1), TOL * 1.001
    )


def test_one_whole_body_dict_gives_one_answer(cuda, talos):  # noqa: F811
    """An unbatched dict of four poses: one answer of shape (nq,), the CPU's."""
    import wholebody

    target = wholebody.targets_for(talos, 1, 2)[0]
    cpu = talos.ik(target, **OPTS)
    gpu = talos.ik(target, device="cuda", **OPTS)
    assert gpu.q.shape == (talos.nq,) and np.ndim(gpu.success) == 0
    _same(gpu, cpu)
    assert bool(gpu.success)
    assert _on_target(talos, gpu.q[None], {f: Pose(np.asarray(t.T)[None])
                                           for f, t in target.items()}).all()  # fmt: skip


def test_q0_on_the_gpu_is_used_in_place(cuda, talos):  # noqa: F811
    """Starts given as a GPU array, one per problem or one for all, with a dict of
    targets: read on the device, never through numpy (here an array whose host view
    raises, as a torch CUDA tensor's does); the CPU's answers from the same starts. A
    GPU q0 of another batch raises, naming the shapes."""
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

    class DeviceOnly(FakeCUDAArray):
        def __array__(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            raise TypeError("can't convert a CUDA array to numpy")

        def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
            if name.startswith("__array"):  # numpy's other ways in: none
                raise AttributeError(name)
            return super().__getattr__(name)

    targets = _batch(talos, 3, 4)
    rng = np.random.default_rng(9)
    Q0 = np.repeat(talos.neutral()[None], 3, axis=0)
    Q0[:, 7:] += rng.normal(0.0, 0.05, (3, talos.nq - 7))
    for q0 in (Q0, Q0[1]):
        cpu = talos.ik(targets, q0=q0, **OPTS)
        gpu = talos.ik(targets, q0=DeviceOnly(q0.copy()), device="cuda", **OPTS)
        _same(gpu, cpu)
        assert gpu.success.all()
    with pytest.raises(ShapeError, match=rf"q0 must have shape \({talos.nq},\)"):
        talos.ik(targets, q0=DeviceOnly(Q0[:2].copy()), device="cuda", **OPTS)


def test_bad_whole_body_input_raises_as_on_the_cpu(cuda, talos):  # noqa: F811
    """NaN in one problem's target or start, batches that do not broadcast, a method
    without a GPU kernel: the CPU's errors, naming the problem."""
    targets = _batch(talos, 3, 1)
    f0 = next(iter(targets))
    T = np.asarray(targets[f0].T).copy()
    T[2, 0, 3] = np.nan
    with pytest.raises(InvalidValueError, match=r"NaN.*batch item \(2,\)"):
        talos.ik({**targets, f0: Pose(T)}, device="cuda", **OPTS)
    Q0 = np.repeat(talos.neutral()[None], 3, axis=0)
    Q0[1, 10] = np.inf
    with pytest.raises(InvalidValueError, match="q0 contains NaN or inf"):
        talos.ik(targets, q0=Q0, device="cuda", **OPTS)
    with pytest.raises(InvalidValueError, match="do not broadcast"):
        talos.ik({**targets, f0: Pose(np.asarray(targets[f0].T)[:2])}, device="cuda", **OPTS)
    with pytest.raises(UnsupportedError, match="GPU methods are"):
        talos.ik(targets, device="cuda", method="sdls", **OPTS)


def test_swing_twist_limits_are_kept_as_on_the_cpu(cuda):  # noqa: F811
    """The built-in humanoid's shoulders and hips carry swing-twist limits (cones about
    each bone and a twist range): the device projects them as the CPU does after every
    step, so a batch of hands-and-feet problems is the CPU's answer to the last bit, every
    returned configuration keeps the limits, and every success is on target by FK."""
    human = kinetree.load("humanoid")
    assert human.swing_twist
    frames = ("hand_r", "hand_l", "foot_r", "foot_l")
    Q = human.random_configuration(3, rng=5)
    targets = {f: Pose(human.fk(Q, f)) for f in frames}
    opts = {**OPTS, "restarts": 2, "max_iter": 25}
    cpu = human.ik(targets, **opts)
    gpu = human.ik(targets, device="cuda", **opts)
    _same(gpu, cpu)
    for group, (_, swing_max, twist_lo, twist_hi) in human.swing_twist.items():
        for q in gpu.q:
            swing, twist = human.swing_twist_angles(q, group)
            assert swing <= swing_max + 1e-9
            assert twist_lo - 1e-9 <= twist <= twist_hi + 1e-9
    assert gpu.success.any()
    assert np.all(_on_target(human, gpu.q, targets)[gpu.success])
