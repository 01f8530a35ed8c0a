"""The compiled kernels that exist twice for speed agree to the last bit.

Batch FK runs row by row for small batches and blocked (vectorised across
configurations) for large ones; batch IK drivers run serially or threaded. These
tests keep the copies from drifting.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import kinetree
from kinetree.kinematics import _kernels as K
from kinetree.kinematics import packed

BVH = Path(__file__).resolve().parents[1] / "data" / "bvh" / "rotation_first_root.bvh"
MIMIC_PRISMATIC = """<?xml version="1.0"?>
<robot name="slider">
  <link name="base"/><link name="carriage"/><link name="arm"/><link name="twin"/>
  <joint name="slide" type="prismatic">
    <parent link="base"/><child link="carriage"/><axis xyz="0.6 0 0.8"/>
    <limit lower="-0.5" upper="0.5" effort="1" velocity="1"/>
  </joint>
  <joint name="hinge" type="revolute">
    <parent link="carriage"/><child link="arm"/><origin xyz="0 0.1 0.2" rpy="0.3 0.2 0.1"/>
    <axis xyz="0.2 0.3 0.9"/><limit lower="-2" upper="2" effort="1" velocity="1"/>
  </joint>
  <joint name="twin_joint" type="revolute">
    <parent link="arm"/><child link="twin"/><origin xyz="0.3 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-4" upper="4" effort="1" velocity="1"/>
    <mimic joint="hinge" multiplier="-1.5" offset="0.2"/>
  </joint>
</robot>
"""


def _models() -> list[kinetree.Model]:
    out = [kinetree.load(n) for n in kinetree.models.available()]
    out.append(kinetree.read_bvh(BVH).model)
    out.append(kinetree.io.load_urdf(MIMIC_PRISMATIC))
    return out


@pytest.mark.parametrize("model", _models(), ids=lambda m: m.name)
def test_blocked_batch_fk_equals_row_by_row(model: kinetree.Model) -> None:
    fdata, idata = packed(model)
    Q = model.random_configuration(77, rng=3)  # not a multiple of the block size
    nodes = np.arange(model.n_nodes, dtype=np.int64)
    frames = np.arange(model.n_nodes, dtype=np.int64)
    a = np.empty((77, model.n_nodes, 4, 4))
    b = np.empty((77, model.n_nodes, 4, 4))
    K.fk_blocked(Q, fdata, idata, nodes, frames, a, 0, 77)
    K.fk_rows(Q, fdata, idata, nodes, frames, b, 0, 77)
    np.testing.assert_array_equal(a, b)
    # Blocks handed to different threads: any split at block boundaries gives the same.
    c = np.empty_like(a)
    K.fk_blocked(Q, fdata, idata, nodes, frames, c, 0, 32)
    K.fk_blocked(Q, fdata, idata, nodes, frames, c, 32, 77)
    np.testing.assert_array_equal(a, c)


def test_public_fk_is_the_same_for_small_and_large_batches() -> None:
    m = kinetree.load("panda")
    Q = m.random_configuration(K.PARALLEL_MIN + 5, rng=4)
    big = m.fk(Q)
    small = np.stack([m.fk(q) for q in Q])
    np.testing.assert_array_equal(big, small)


def test_batch_ik_serial_and_threaded_agree() -> None:
    m = kinetree.load("panda")
    Q = m.random_configuration(12, rng=5)
    T = m.fk(Q)
    threaded = m.ik(T, seed=7, time_budget=None)  # 12 >= the threading threshold
    one_by_one = [m.ik(T[i : i + 1], seed=7 + i, time_budget=None) for i in range(12)]
    np.testing.assert_array_equal(threaded.q, np.concatenate([r.q for r in one_by_one]))
