"""kinetree.distributed on an embedded 2-worker LocalCluster (threads: no process start).

The oracle is the local batch: a job cut into chunks and run on the cluster returns the
same numbers, in the same order. The worker-loss test (processes) is in
test_distributed_failover.py.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("distributed")

import kinetree
from kinetree import distributed as kd
from kinetree.errors import InvalidValueError, KinetreeError, ShapeError


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    cluster = LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    )
    c = Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.fixture(scope="module")
def panda():
    return kinetree.load("panda")


@pytest.fixture(scope="module")
def poses(panda):
    return panda.fk(panda.random_configuration(600, 7))


def test_ik_identical_to_local_batch(client, panda, poses):
    local = panda.ik(poses, restarts=5, time_budget=None)
    # 7 chunks of 90 and one of 30: uneven on purpose; every problem keeps its seed.
    dist = kd.ik(panda, poses, client=client, chunk_size=90, restarts=5, time_budget=None)
    assert dist.q.shape == local.q.shape == (600, 7)
    np.testing.assert_array_equal(dist.q, local.q)
    np.testing.assert_array_equal(dist.success, local.success)
    np.testing.assert_array_equal(dist.iterations, local.iterations)
    np.testing.assert_array_equal(dist.restarts, local.restarts)
    np.testing.assert_array_equal(dist.position_error, local.position_error)
    assert 0.95 < local.success.mean() < 1.0  # failures, with their restarts, match too
    # FK of the answers reaches the targets: the oracle for IK.
    ok = dist.success
    reached = panda.fk(dist.q[ok])
    assert np.max(np.abs(reached[:, :3, 3] - poses[ok, :3, 3])) < 1e-6


def test_ik_batch_shape_seed_and_q0(client, panda, poses):
    P = poses[:60].reshape(3, 20, 4, 4)
    q0 = panda.random_configuration(60, 3).reshape(3, 20, 7)
    local = panda.ik(P, q0=q0, seed=11, restarts=3, time_budget=None)
    dist = kd.ik(panda, P, client=client, q0=q0, chunk_size=7, seed=11, restarts=3,
                 time_budget=None)  # fmt: skip
    assert dist.q.shape == (3, 20, 7) and dist.success.shape == (3, 20)
    np.testing.assert_array_equal(dist.q, local.q)
    np.testing.assert_array_equal(dist.message, local.message)


def test_ik_from_dask_array_and_positions(client, panda, poses):
    da = pytest.importorskip("dask.array")
    local = panda.ik(poses[:200], restarts=2, time_budget=None)
    lazy = da.from_array(poses[:200], chunks=(64, 4, 4))  # chunks unlike the job's
    dist = kd.ik(panda, lazy, client=client, chunk_size=50, restarts=2, time_budget=None)
    np.testing.assert_array_equal(dist.q, local.q)
    p = poses[:40, :3, 3]
    lp = panda.ik(kinetree.Position(p), restarts=2, time_budget=None)
    dp = kd.ik(panda, p, client=client, chunk_size=16, restarts=2, time_budget=None)
    np.testing.assert_array_equal(dp.q, lp.q)
    assert dp.success.all()


def test_one_pose_one_position_and_plain_targets_as_model_ik_takes_them(client, panda, poses):
    """One pose ``(4, 4)`` is a batch of shape ``()`` (it was refused with a ShapeError
    asking for ``(..., 4, 4)``), and a plain Position or Pose is its array."""
    local = panda.ik(poses[0], restarts=2, time_budget=None)
    dist = kd.ik(panda, poses[0], client=client, restarts=2, time_budget=None)
    assert dist.q.shape == (7,) and np.shape(dist.success) == () and dist.success == local.success
    np.testing.assert_array_equal(dist.q, local.q)
    np.testing.assert_allclose(panda.fk(dist.q), poses[0], atol=1e-5)
    p = poses[:5, :3, 3]
    local_p = panda.ik(kinetree.Position(p), restarts=2, time_budget=None)
    dist_p = kd.ik(panda, kinetree.Position(p), client=client, restarts=2, time_budget=None)
    np.testing.assert_array_equal(dist_p.q, local_p.q)
    dist_T = kd.ik(panda, kinetree.Pose(poses[:3]), client=client, restarts=2,
                   time_budget=None)  # fmt: skip
    np.testing.assert_array_equal(dist_T.q, panda.ik(poses[:3], restarts=2, time_budget=None).q)
    with pytest.raises(kinetree.UnsupportedError, match="Position with mask"):
        kd.ik(panda, kinetree.Position(p, mask=[1, 1, 0]), client=client)


def test_fk_identical(client, panda):
    Q = panda.random_configuration(1000, 5)
    np.testing.assert_array_equal(kd.fk(panda, Q, "link4", client=client, chunk_size=300),
                                  panda.fk(Q, "link4"))  # fmt: skip


def test_map_is_ordered_and_complete(client):
    items = list(range(23))
    assert kd.map(lambda x: x * x + 1, items, client=client, chunk_size=4) == [
        x * x + 1 for x in items
    ]
    assert kd.map(str, [], client=client) == []


def test_map_raises_the_task_error(client):
    def boom(x):
        if x == 5:
            raise ValueError("item five")
        return x

    with pytest.raises(ValueError, match="item five"):
        kd.map(boom, range(8), client=client)


def test_chunk_bounds():
    np.testing.assert_array_equal(kd.chunk_bounds(10, 4), [0, 4, 8, 10])
    np.testing.assert_array_equal(kd.chunk_bounds(8, 4), [0, 4, 8])
    for bad in (0, -1, 2.5, True):
        with pytest.raises(InvalidValueError, match="chunk_size"):
            kd.chunk_bounds(10, bad)


def test_bad_input(client, panda, poses):
    with pytest.raises(ShapeError, match="targets"):
        kd.ik(panda, np.zeros((5, 4)), client=client)
    with pytest.raises(InvalidValueError, match="empty"):
        kd.ik(panda, np.zeros((0, 4, 4)), client=client)
    with pytest.raises(ShapeError, match="q0"):
        kd.ik(panda, poses[:4], client=client, q0=np.zeros((3, 7)))
    with pytest.raises(KinetreeError, match="hand"):
        kd.ik(panda, poses[:4], "hand", client=client)
    with pytest.raises(InvalidValueError, match="tol"):
        kd.ik(panda, poses[:4], client=client, tol=-1.0)
    with pytest.raises(InvalidValueError, match="client"):
        kd.get_client(42)


def test_address_that_does_not_answer():
    with pytest.raises(kd.ClusterUnreachableError, match=r"127\.0\.0\.1:9"):
        kd.get_client("tcp://127.0.0.1:9", timeout=0.5)
    with pytest.raises(KinetreeError, match="nonsense"):
        kd.get_client("nonsense://x", timeout=0.5)


def test_model_handle_is_one_object_per_process(panda):
    h = kd.shared(panda)
    import pickle

    a = pickle.loads(pickle.dumps(h)).get()
    b = pickle.loads(pickle.dumps(h)).get()
    assert a is b and a is not panda
    assert len(h.blob) < 20_000  # the model travels cheaply with every task
    np.testing.assert_array_equal(a.fk(a.neutral()), panda.fk(panda.neutral()))
