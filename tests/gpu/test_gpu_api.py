"""``device="cuda"`` through numba's CUDA simulator, against the CPU path.

The simulator (``NUMBA_ENABLE_CUDASIM=1``) runs the GPU kernels as Python: the same
launch code, the same per-thread scratch and atomic work counter, and the IK core's own
source with the device rebinding of ``kinetree.gpu._translate``. It cannot show that the
code compiles for a real GPU (``python benchmarks/gpu.py --compile-only`` does that
without one) or how fast it runs; it shows that the GPU path computes what the CPU path
computes. Batches are a handful of problems: the simulator is slow.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import kinetree
from kinetree.errors import InvalidValueError, KinetreeError, ShapeError, UnsupportedError

# The simulator runs the restarts' splitmix64 in numpy uint64 scalars, which warn on the
# wrap-around that compiled code does silently (in the simulator's own threads, so
# np.errstate around the launch does not reach them).
pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")


@pytest.fixture(scope="module")
def cuda():
    """numba's CUDA module in simulator mode (or skip where numba.cuda is already loaded
    for a real GPU in this process)."""
    pytest.importorskip("numba_cuda")
    from kinetree.gpu._translate import simulator

    before = os.environ.get("NUMBA_ENABLE_CUDASIM")
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"  # read when numba.cuda is first imported
    from numba.core import config

    config.reload_config()  # numba (and numba-cuda's config with it) read it at import
    if "numba.cuda" in sys.modules and not simulator():
        pytest.skip("numba.cuda was imported without the simulator in this process")
    from numba import cuda as numba_cuda

    assert simulator() and numba_cuda.is_available()
    yield numba_cuda
    # numba.cuda stays the simulator in this process; subprocesses need not inherit it.
    if before is None:
        del os.environ["NUMBA_ENABLE_CUDASIM"]
    else:
        os.environ["NUMBA_ENABLE_CUDASIM"] = before


@pytest.fixture(scope="module")
def panda() -> kinetree.Model:
    return kinetree.load("panda")


def test_fk_and_jacobian_agree_with_cpu(cuda, panda):
    Q = panda.random_configuration(5, rng=11)
    np.testing.assert_allclose(panda.fk(Q, device="cuda"), panda.fk(Q), rtol=0, atol=1e-12)
    frame = panda.frame_names[3]
    np.testing.assert_allclose(
        panda.fk(Q[:2], frame, device="cuda"), panda.fk(Q[:2], frame), rtol=0, atol=1e-12
    )
    point = np.array([0.01, -0.02, 0.1])
    J_gpu = panda.jacobian(Q, point=point, device="cuda")
    np.testing.assert_allclose(J_gpu, panda.jacobian(Q, point=point), rtol=0, atol=1e-12)
    # batch shapes pass through, a single configuration too
    assert panda.fk(Q.reshape(5, 1, 7), device="cuda").shape == (5, 1, 4, 4)
    np.testing.assert_allclose(panda.fk(Q[0], device="cuda"), panda.fk(Q[0]), atol=1e-12)


def test_fk_on_a_prismatic_model(cuda):
    ur = kinetree.load("ur5")
    Q = ur.random_configuration(3, rng=3)
    np.testing.assert_allclose(ur.fk(Q, device="cuda"), ur.fk(Q), rtol=0, atol=1e-12)


def test_gpu_arrays_in_gpu_arrays_out(cuda, panda):
    Q = panda.random_configuration(4, rng=5)
    Qd = cuda.to_device(Q)
    P = panda.fk(Qd, device="cuda")
    assert not isinstance(P, np.ndarray) and hasattr(P, "copy_to_host")
    np.testing.assert_allclose(P.copy_to_host(), panda.fk(Q), rtol=0, atol=1e-12)
    J = panda.jacobian(Qd, device="cuda")
    np.testing.assert_allclose(J.copy_to_host(), panda.jacobian(Q), rtol=0, atol=1e-12)


def test_ik_poses_agree_with_cpu(cuda, panda):
    """Same seeds, same loop: same success, iterations and q; FK of q on target."""
    T = panda.fk(panda.random_configuration(4, rng=21))
    opts = {"restarts": 3, "time_budget": None, "tol": 1e-6}
    cpu = panda.ik(T, **opts)
    gpu = panda.ik(T, device="cuda", **opts)
    assert isinstance(gpu, kinetree.ik.IKResult)
    np.testing.assert_array_equal(gpu.success, cpu.success)
    np.testing.assert_array_equal(gpu.iterations, cpu.iterations)
    np.testing.assert_allclose(gpu.q, cpu.q, rtol=0, atol=1e-9)
    assert gpu.success.all()
    reached = panda.fk(gpu.q)
    assert np.abs(reached[:, :3, 3] - T[:, :3, 3]).max() < 1e-6
    lo, hi = panda.limits.T
    assert np.all(gpu.q >= lo - 1e-12) and np.all(gpu.q <= hi + 1e-12)


def test_iteration_budget_caps_the_gpu_batch_as_the_cpu(cuda, panda):
    """The tail policy's cap: iterations over all attempts, counted on the device as on
    the CPU (the same answers, each problem within the budget)."""
    T = panda.fk(panda.random_configuration(4, rng=41))
    Q0 = panda.random_configuration(4, rng=42)
    opts = {"restarts": 6, "time_budget": None, "iteration_budget": 7, "max_iter": 5}
    cpu = panda.ik(T, q0=Q0, **opts)
    gpu = panda.ik(T, q0=Q0, device="cuda", **opts)
    assert np.all(gpu.iterations <= 7)
    np.testing.assert_array_equal(gpu.iterations, cpu.iterations)
    np.testing.assert_array_equal(gpu.success, cpu.success)
    np.testing.assert_array_equal(gpu.q, cpu.q)
    assert not cpu.success.all()  # the cap cut some short: the test shows the cap


def test_ik_gpu_targets_stay_on_gpu(cuda, panda):
    T = panda.fk(panda.random_configuration(3, rng=8))
    q0 = np.asarray(panda.q_neutral)
    gpu = panda.ik(cuda.to_device(T), device="cuda", q0=cuda.to_device(q0), restarts=2,
                   time_budget=None)  # fmt: skip
    cpu = panda.ik(T, q0=q0, restarts=2, time_budget=None)
    assert hasattr(gpu.q, "copy_to_host")
    np.testing.assert_allclose(gpu.q.copy_to_host(), cpu.q, rtol=0, atol=1e-9)
    np.testing.assert_array_equal(gpu.success.copy_to_host(), cpu.success)
    np.testing.assert_allclose(
        gpu.position_error.copy_to_host(), cpu.position_error, rtol=0, atol=1e-12
    )


@pytest.mark.parametrize("method", ["ccd", "transpose"])
def test_ik_position_targets_other_rules(cuda, panda, method):
    """Encoded target rows (not raw poses) and the other update rules that run on the GPU."""
    P = panda.fk(panda.random_configuration(2, rng=4))[:, :3, 3]
    target = kinetree.ik.Position(P)
    opts = {"method": method, "max_iter": 40, "restarts": 1}
    cpu = panda.ik(target, **opts)
    gpu = panda.ik(target, device="cuda", **opts)
    np.testing.assert_allclose(gpu.q, cpu.q, rtol=0, atol=1e-9)
    np.testing.assert_array_equal(gpu.success, cpu.success)
    np.testing.assert_array_equal(gpu.iterations, cpu.iterations)
    np.testing.assert_allclose(gpu.position_error, cpu.position_error, rtol=0, atol=1e-12)


def test_bad_device_and_bad_gpu_arrays(cuda, panda):
    q = panda.q_neutral
    for bad in ("tpu", "gpu", 3):
        with pytest.raises(InvalidValueError, match="'cpu', 'cuda'"):
            panda.fk(q, device=bad)
    with pytest.raises(InvalidValueError, match="'cpu', 'cuda'"):
        panda.ik(panda.fk(q), device="tpu")
    with pytest.raises(InvalidValueError, match="float64"):
        panda.fk(cuda.to_device(np.zeros((2, 7), np.float32)), device="cuda")
    with pytest.raises(ShapeError, match=r"\(\.\.\., 7\)"):
        panda.fk(cuda.to_device(np.zeros((2, 6))), device="cuda")
    with pytest.raises(ShapeError, match=r"\(\.\.\., 4, 4\)"):
        panda.ik(cuda.to_device(np.zeros((2, 3, 4))), device="cuda")
    with pytest.raises(UnsupportedError, match="GPU methods are"):
        panda.ik(panda.fk(q), device="cuda", method="sdls")
    # collision-aware IK runs on the GPU too (tests/gpu/test_gpu_collision.py); this Panda has
    # no collision geometry to keep clear, and says so as the CPU does
    with pytest.raises(UnsupportedError, match="no collision geometry"):
        panda.ik(
            panda.fk(q), device="cuda", obstacles=[kinetree.Sphere(radius=0.1, center=(2.0, 0, 0))]
        )
    T = panda.fk(np.stack([q, q]))
    T[1, 0, 3] = np.nan
    with pytest.raises(InvalidValueError, match="NaN"):
        panda.ik(cuda.to_device(T), device="cuda", restarts=0)
    # device="cpu" is the CPU path, whatever the spelling
    np.testing.assert_array_equal(panda.fk(q, device="CPU"), panda.fk(q))


def test_without_cuda_the_error_says_what_is_missing():
    """No simulator, no driver here (or numba-cuda hidden): a KinetreeError, not a crash."""
    code = textwrap.dedent(
        """
        import sys
        if sys.argv[1] == "hide":
            sys.modules["numba_cuda"] = None
        import kinetree
        from kinetree.errors import KinetreeError
        m = kinetree.load("panda")
        try:
            m.fk(m.q_neutral, device="cuda")
        except KinetreeError as exc:
            print("ERROR", exc)
        else:
            print("RAN")
        """
    )
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    for mode, expect in (("hide", "numba-cuda"), ("plain", "no usable CUDA GPU")):
        run = subprocess.run([sys.executable, "-c", code, mode], env=env, capture_output=True,
                             text=True, timeout=120)  # fmt: skip
        out = run.stdout.strip()
        if mode == "plain" and out == "RAN":
            pytest.skip("this machine has a CUDA GPU")
        assert out.startswith("ERROR"), run.stdout + run.stderr
        assert expect in out
    assert issubclass(KinetreeError, Exception)


def test_ik_kernel_per_template_returns_the_cpu_answer_to_the_last_bit(cuda, panda):
    """The IK kernel is compiled with the template's buffers as constants (sizes, joint
    types, axes, options): it returns the CPU driver's results bit for bit, and options
    that change the template (a tolerance) make another kernel, not a stale answer."""
    from kinetree.gpu import _kernels as K
    from kinetree.gpu.api import _pose_template
    from kinetree.ik.options import resolve

    T = panda.fk(panda.random_configuration(3, rng=31))
    T[2, :3, 3] += 0.05  # off the sampled pose: more iterations, maybe a restart
    opts = {"restarts": 2, "time_budget": None, "seed": 5}
    keys = []
    for tol in (1e-6, 1e-3):
        cpu = panda.ik(T, tol=tol, **opts)
        gpu = panda.ik(T, device="cuda", tol=tol, **opts)
        for name in ("q", "position_error", "orientation_error", "iterations", "restarts",
                     "success", "reachable"):  # fmt: skip
            np.testing.assert_array_equal(getattr(gpu, name), getattr(cpu, name), err_msg=name)
        assert cpu.success.all()
        reached = panda.fk(gpu.q)
        assert np.abs(reached[:, :3, 3] - T[:, :3, 3]).max() <= tol
        tpl = _pose_template(panda, None, resolve({"tol": tol, **opts}))
        keys.append(K.ik_key("dls", tpl.ibuf, tpl.fbuf, (4, 4)))
        assert keys[-1] in K._IK_KERNELS
    assert keys[0] != keys[1]


def test_a_register_cap_is_another_kernel_and_a_bad_one_is_refused(cuda, panda, monkeypatch):
    """``KINETREE_GPU_MAX_REGISTERS`` caps the IK kernels' registers (for measuring on a
    GPU): a capped kernel is a kernel of its own (the simulator runs it as the CPU
    does), and a cap that is not a register count raises before anything is compiled."""
    from kinetree.gpu import _kernels as K
    from kinetree.gpu.api import _pose_template
    from kinetree.ik.options import resolve

    T = panda.fk(panda.random_configuration(2, rng=33))
    opts = {"restarts": 0, "time_budget": None}
    tpl = _pose_template(panda, None, resolve(opts))
    free = K.ik_key("dls", tpl.ibuf, tpl.fbuf, (4, 4))
    monkeypatch.setenv(K.REGISTERS_ENV, "128")
    assert K.max_registers() == 128
    capped = K.ik_key("dls", tpl.ibuf, tpl.fbuf, (4, 4))
    assert capped != free
    r = panda.ik(T, device="cuda", **opts)
    assert capped in K._IK_KERNELS
    np.testing.assert_array_equal(r.q, panda.ik(T, **opts).q)
    for bad in ("many", "16", "300", "12.5"):
        monkeypatch.setenv(K.REGISTERS_ENV, bad)
        with pytest.raises(InvalidValueError, match=f"{K.REGISTERS_ENV}.*32 to 255.*{bad!r}"):
            panda.ik(T, device="cuda", **opts)
    monkeypatch.delenv(K.REGISTERS_ENV)
    assert K.max_registers() is None


def test_small_host_batches_reuse_their_buffers(cuda, panda):
    """numpy in, numpy out: inputs cross in one copy and results in one, through buffers
    kept per batch size; a later call neither allocates new ones nor changes the arrays
    an earlier result handed out."""
    from kinetree.gpu import api

    T = panda.fk(panda.random_configuration(3, rng=41))
    q0 = panda.random_configuration(3, rng=42)
    opts = {"restarts": 0, "time_budget": None}
    cpu = panda.ik(T, q0=q0, **opts)
    first = panda.ik(T, device="cuda", q0=q0, **opts)
    held = {k: id(v) for k, v in api._STAGING.buffers.items()}
    second = panda.ik(T[::-1].copy(), device="cuda", q0=q0[::-1].copy(), **opts)
    assert {k: id(v) for k, v in api._STAGING.buffers.items()} == held
    np.testing.assert_array_equal(first.q, cpu.q)
    np.testing.assert_array_equal(second.q, cpu.q[::-1])
    np.testing.assert_array_equal(second.iterations, cpu.iterations[::-1])
    # the shared q0 and the neutral start (q0 kept on the GPU) take the same buffers' path
    np.testing.assert_array_equal(panda.ik(T, device="cuda", **opts).q, panda.ik(T, **opts).q)


def test_a_model_too_large_for_constant_memory_says_so(cuda):
    """The IK kernel compiles the model in as constants (64 KiB on a GPU): a 400-joint
    chain is refused with the reason and the way out, before anything is compiled."""
    joints = "".join(
        f'<link name="l{i + 1}"/><joint name="j{i}" type="revolute"><parent link="l{i}"/>'
        f'<child link="l{i + 1}"/><origin xyz="0 0 0.01"/><axis xyz="0 {i % 2} {1 - i % 2}"/>'
        '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'
        for i in range(400)
    )
    chain = kinetree.io.load_urdf(f'<robot name="long"><link name="l0"/>{joints}</robot>')
    with pytest.raises(UnsupportedError, match=r"constant memory.*CPU"):
        chain.ik(chain.fk(chain.q_neutral), device="cuda")


def test_a_cpu_tensor_with_a_gpu_device_is_named_as_one() -> None:
    """Issue 32: a CPU ``torch.Tensor`` with ``device="cuda"`` was "not understood"; it is
    named as a CPU tensor with what to do, before any GPU is looked for (so this runs
    without one), and on the CPU the message says to give ``tensor.numpy()``."""
    torch = pytest.importorskip("torch")
    panda = kinetree.load("panda")
    T = torch.tensor(panda.fk(panda.neutral()))
    with pytest.raises(kinetree.InvalidValueError, match=r"CPU tensor \(torch\.Tensor\)") as e:
        panda.ik(T, device="cuda")
    assert "tensor.cuda()" in str(e.value) and "tensor.numpy()" in str(e.value)
    with pytest.raises(kinetree.InvalidValueError, match="q0 is a CPU tensor"):
        kinetree.ik.solve(panda, T.numpy(), q0=torch.tensor(panda.neutral()), device="cuda")
    with pytest.raises(kinetree.InvalidValueError, match="q is a CPU tensor"):
        panda.fk(torch.tensor(panda.neutral()), device="cuda")
    with pytest.raises(kinetree.InvalidValueError, match=r"tensor\.numpy\(\)"):
        panda.ik(T)
    r = panda.ik(T.numpy())  # what the message says to do
    assert r.success
