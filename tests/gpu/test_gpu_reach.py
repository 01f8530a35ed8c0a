"""Reachability maps end to end on the GPU, in numba's CUDA simulator, against the CPU map.

``workspace.reachability(..., device="cuda")`` writes the targets, solves them, takes
each success's Jacobian and manipulability and reduces per voxel on the device
(:mod:`kinetree.gpu._reach`). The CPU map of the same arguments is the oracle for the
index, the manipulability and the best configurations; FK of each best configuration is
an independent one (it must reach its voxel's centre with one of the orientations).
Grids are coarse and orientations few: the simulator runs every kernel as Python.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_gpu_api import cuda  # noqa: F401  (the simulator fixture)

import kinetree
from kinetree import workspace as ws
from kinetree.errors import InvalidValueError, ShapeError, UnknownNameError, UnsupportedError
from kinetree.kinematics.manipulability import jacobian_manipulability

# Every test runs with numba's CUDA in simulator mode (the fixture of test_gpu.py); the
# simulator runs the restarts' splitmix64 in numpy uint64 scalars, which warn on the
# wrap-around (see test_gpu.py).
pytestmark = [
    pytest.mark.usefixtures("cuda"),
    pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning"),
]


@pytest.fixture(scope="module")
def panda() -> kinetree.Model:
    return kinetree.load("panda")


def assert_same_map(gpu: ws.ReachabilityMap, cpu: ws.ReachabilityMap, model, rows=slice(0, 6),
                    active=None) -> None:  # fmt: skip
    """The GPU map is the CPU map: the index exactly, the manipulability to round-off, the
    best configuration wherever the best is unique (a tie: the same manipulability)."""
    np.testing.assert_array_equal(gpu.inside, cpu.inside)
    np.testing.assert_array_equal(gpu.index, cpu.index)
    np.testing.assert_allclose(gpu.manipulability, cpu.manipulability, rtol=1e-9, atol=1e-15)
    differ = np.any(gpu.q_best != cpu.q_best, axis=-1)
    if differ.any():  # only where two orientations' manipulabilities tie
        cols = slice(None) if active is None else active
        J = model.jacobian(gpu.q_best[differ])[:, rows][:, :, cols]
        np.testing.assert_allclose(jacobian_manipulability(J), cpu.manipulability[differ],
                                   rtol=1e-9)  # fmt: skip
    assert gpu.settings["device"] == "cuda" and cpu.settings["device"] == "cpu"


def assert_bests_reach(m: ws.ReachabilityMap, model, frame: str, orientations: bool) -> None:
    """FK of every best configuration puts the frame at its voxel's centre (and, for a
    map with orientations, in one of them), within the joint limits."""
    ok = m.index > 0
    assert ok.any()
    T = model.fk(m.q_best[ok], frame)
    np.testing.assert_allclose(T[:, :3, 3], m.centers()[ok], atol=1e-6)
    if orientations:
        match = np.einsum("nij,kij->nk", T[:, :3, :3], m.orientations)  # trace(R^T R_k)
        assert np.all(match.max(axis=1) > 3 - 1e-9)
    assert np.all(model.within_limits(m.q_best[ok], tol=1e-9))
    # Voxels with nothing solved keep the neutral configuration and 0.
    np.testing.assert_array_equal(
        m.q_best[~ok], np.broadcast_to(model.neutral(), m.q_best[~ok].shape)
    )
    assert np.all(m.manipulability[~ok] == 0)


def test_panda_6d_map_is_the_cpu_map(panda, monkeypatch):
    kw = {"resolution": 0.45, "orientations": 3, "restarts": 2, "seed": 5}
    cpu = ws.reachability(panda, **kw)
    # Nothing of the map runs on the host: no host Jacobian, no numpy SVD.
    import kinetree.workspace._reach as host

    def no_host(*args, **kwargs):
        raise AssertionError("the device map computed manipulability on the host")

    monkeypatch.setattr(host, "jacobian_manipulability", no_host)
    gpu = ws.reachability(panda, device="cuda", **kw)
    assert_same_map(gpu, cpu, panda)
    assert_bests_reach(gpu, panda, "flange", orientations=True)
    idx = gpu.index[gpu.inside]
    assert np.any((idx > 0) & (idx < 1)) and np.any(idx == 0)  # partial indices occur


def test_position_only_and_chunks(panda):
    """Position only: encoded target rows, 3 Jacobian rows over 7 columns; chunks of
    any size give the same map (problem p keeps seed + p)."""
    kw = {"orientations": 0, "resolution": 0.4, "restarts": 1}
    cpu = ws.reachability(panda, **kw)
    gpu = ws.reachability(panda, device="cuda", chunk_size=7, **kw)
    assert_same_map(gpu, cpu, panda, rows=slice(0, 3))
    assert_bests_reach(gpu, panda, "flange", orientations=False)
    assert np.all((gpu.index == 0) | (gpu.index == 1))


def test_active_subset(panda):
    """Four active joints, position only: the manipulability of 3 rows over the 4 active
    columns; the other joints stay at the neutral configuration."""
    active = ["joint1", "joint2", "joint4", "joint6"]
    kw = {"resolution": 0.4, "orientations": 0, "restarts": 2, "active": active}
    cpu = ws.reachability(panda, **kw)
    gpu = ws.reachability(panda, device="cuda", **kw)
    cols = panda.qv.v_of_coordinates(np.flatnonzero(panda.active_mask(active)))
    assert_same_map(gpu, cpu, panda, rows=slice(0, 3), active=cols)
    assert_bests_reach(gpu, panda, "flange", orientations=False)
    ok = gpu.index > 0
    still = ~panda.active_mask(active)
    neutral = np.broadcast_to(panda.neutral()[still], (ok.sum(), 3))
    np.testing.assert_array_equal(gpu.q_best[ok][:, still], neutral)
    # Another active set is another map (the columns are the active ones).
    full = ws.reachability(panda, resolution=0.4, orientations=0, restarts=2)
    assert not np.array_equal(full.manipulability, gpu.manipulability)


def test_planar_arm_position_only():
    """A 2R arm: 3 position rows over 2 columns (sqrt(det(J^T J)) = l1 l2 |sin t2|)."""
    arm = kinetree.models.planar_2r(1.0, 0.6)
    plane = [[-2, 2], [-2, 2], [0, 0]]  # the arm's plane (the rest is out of reach)
    kw = {"orientations": 0, "resolution": 0.2, "restarts": 3, "box": plane}
    cpu = ws.reachability(arm, **kw)
    gpu = ws.reachability(arm, device="cuda", **kw)
    assert_same_map(gpu, cpu, arm, rows=slice(0, 3))
    assert_bests_reach(gpu, arm, "tip", orientations=False)
    ok = gpu.index > 0
    np.testing.assert_allclose(gpu.manipulability[ok], 0.6 * np.abs(np.sin(gpu.q_best[ok][:, 1])),
                               rtol=1e-9, atol=1e-12)  # fmt: skip


def test_bad_input_raises_as_on_the_host(panda):
    with pytest.raises(UnsupportedError, match="dls"):
        ws.reachability(panda, resolution=0.5, orientations=2, device="cuda", method="pinv")
    with pytest.raises(InvalidValueError, match="'cuda'"):
        ws.reachability(panda, resolution=0.5, orientations=2, device="tpu")
    with pytest.raises(InvalidValueError, match="record"):
        ws.reachability(panda, resolution=0.5, device="cuda", record=True)
    with pytest.raises(ShapeError, match="orientations"):
        ws.reachability(panda, resolution=0.5, orientations=np.zeros((2, 2, 2)), device="cuda")
    with pytest.raises(UnknownNameError, match="flange"):
        ws.reachability(panda, "hand", resolution=0.5, device="cuda")


def test_singular_value_product_is_numpys():
    """The device function (plain Python on numpy arrays here) against numpy's SVD:
    wide, square and tall Jacobians, badly conditioned and rank-deficient ones."""
    from kinetree.gpu._reach import singular_value_product

    gen = np.random.default_rng(4)
    for m, n in ((6, 7), (3, 7), (6, 6), (6, 4), (3, 2), (1, 5)):
        for scale in (1.0, 1e-4):
            J = gen.normal(size=(m, n))
            J[-1] *= scale  # a weak direction
            A = (J.T if m <= n else J).copy()
            w = singular_value_product(A)
            assert w == pytest.approx(float(jacobian_manipulability(J)), rel=1e-12)
    J = gen.normal(size=(6, 7))
    J[5] = J[0] - 2 * J[3]  # rank 5
    assert abs(singular_value_product(J.T.copy())) < 1e-14 * np.prod(np.linalg.norm(J, axis=1))
    assert singular_value_product(np.zeros((7, 6))) == 0.0
