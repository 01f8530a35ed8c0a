"""Interop: humanoids loaded with ``floating_base=True`` against Pinocchio's free flyer.

Opt-in (``make test-interop``): needs example-robot-data and Pinocchio (``pip install
example-robot-data pin``) and runs only with ``KINETREE_INTEROP=1``; skips when either
package is absent.

For the Unitree G1 and PAL Talos URDFs of example-robot-data, ``kinetree.load(path,
floating_base=True)`` and ``pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())``
must put every link at the same pose (1e-9) at random base poses and joint values.

Conventions mapped here, by joint name (the two orders of ``q`` may differ):

- base: kinetree's ``root_joint`` coordinates are ``x y z qw qx qy qz``; Pinocchio's
  free flyer ``x y z qx qy qz qw`` (w last);
- a revolute joint is one number in both, except Pinocchio's ``continuous`` joints
  (``cos, sin``); a URDF mimic joint is a coordinate of its own in Pinocchio (built
  without ``mimic=True``), set here to ``multiplier * source + offset``;
- velocities: Pinocchio's free-flyer motion is (linear, angular) both in the base's own
  frame; kinetree's is the linear velocity in the parent (world) frame and the angular
  velocity in the base frame. So ``v_pin = M v_kinetree`` with ``M`` the base rotation's
  transpose on the three linear DoF, and the Jacobians compare as ``J_kt = J_pin M``.
"""

from __future__ import annotations

import os
import zlib
from pathlib import Path

import numpy as np
import pytest

if os.environ.get("KINETREE_INTEROP") != "1":
    pytest.skip(
        "interop tests are opt-in: pip install example-robot-data pin, set KINETREE_INTEROP=1",
        allow_module_level=True,
    )

import kinetree
from kinetree.model import JointType

pin = pytest.importorskip("pinocchio")

from robot_data import example_robot_data  # noqa: E402

TOL = 1e-9
N_CONFIGS = 20
ROBOTS = {
    "g1": "g1_description/urdf/g1_29dof_rev_1_0.urdf",
    "g1_with_hands": "g1_description/urdf/g1_29dof_with_hand_rev_1_0.urdf",
    "talos_reduced": "talos_data/robots/talos_reduced.urdf",
    "talos_full_v2": "talos_data/robots/talos_full_v2.urdf",
}


class Pair:
    """A robot loaded by both, and the maps between their configurations."""

    def __init__(self, path: Path):
        self.kt = kinetree.load(path, floating_base=True)
        self.pin = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
        self.data = self.pin.createData()
        self.base = self.kt.q_slice("root_joint")
        # (kinetree node, Pinocchio joint) for each one-coordinate URDF joint.
        self.nodes: list[tuple[int, object]] = []
        for k in range(self.kt.n_nodes):
            name = self.kt.node_joint[k]
            one = self.kt.joint_type[k] in (JointType.REVOLUTE, JointType.PRISMATIC)
            if not one or self.kt.q_index[k] < 0 or name == "root_joint":
                continue
            jid = self.pin.getJointId(name)
            assert jid < self.pin.njoints, f"{path.name}: Pinocchio has no joint {name!r}"
            self.nodes.append((k, self.pin.joints[jid]))
        assert len(self.nodes) + 1 == self.pin.njoints - 1, path.name  # every joint mapped

    def value(self, q: np.ndarray, k: int) -> float:
        """The angle [rad] or travel [m] of node ``k`` at kinetree's ``q``."""
        i = self.kt.q_index[k]
        return float(self.kt.q_scale[k] * q[i] + self.kt.q_offset[k])

    def q_pin(self, q: np.ndarray) -> np.ndarray:
        out = np.zeros(self.pin.nq)
        b = q[self.base]
        out[:7] = [b[0], b[1], b[2], b[4], b[5], b[6], b[3]]
        for k, joint in self.nodes:
            v = self.value(q, k)
            if joint.nq == 2:  # continuous: (cos, sin)
                out[joint.idx_q : joint.idx_q + 2] = (np.cos(v), np.sin(v))
            else:
                out[joint.idx_q] = v
        return out

    def motion_map(self, q: np.ndarray) -> np.ndarray:
        """``M`` (pin nv, kinetree nv) with ``v_pin = M v_kinetree`` at ``q``."""
        M = np.zeros((self.pin.nv, self.kt.nv))
        qw, qx, qy, qz = q[self.base][3:]
        R = pin.Quaternion(np.array([qx, qy, qz, qw])).toRotationMatrix()  # from coeffs()
        v0 = int(self.kt.qv.v_index[self.kt.qv.ball_nodes[0]]) - 3  # the base's first DoF
        M[0:3, v0 : v0 + 3] = R.T
        M[3:6, v0 + 3 : v0 + 6] = np.eye(3)
        for k, joint in self.nodes:
            M[joint.idx_v, self.kt.qv.v_index[k]] = self.kt.q_scale[k]
        return M

    def random_q(self, rng: np.random.Generator, n: int) -> np.ndarray:
        Q = self.kt.random_configuration(n, rng)
        quat = rng.normal(size=(n, 4))
        Q[:, self.base] = np.hstack(
            [rng.uniform(-2, 2, (n, 3)), quat / np.linalg.norm(quat, axis=1, keepdims=True)]
        )
        return Q


_PAIRS: dict[str, Pair] = {}


def pair(robot: str) -> Pair:
    if robot not in _PAIRS:
        path = example_robot_data() / ROBOTS[robot]
        if not path.is_file():
            pytest.skip(f"example-robot-data has no {ROBOTS[robot]}")
        _PAIRS[robot] = Pair(path)
    return _PAIRS[robot]


@pytest.mark.parametrize("robot", list(ROBOTS))
def test_loads_with_a_free_base(robot: str) -> None:
    p = pair(robot)
    assert p.kt.frame_names[0] == "world"
    assert p.base == slice(0, 7)
    assert p.pin.nv == 6 + len(p.nodes)  # mimic joints are DoF of their own in Pinocchio
    assert p.kt.nv == 6 + len({int(p.kt.qv.v_index[k]) for k, _ in p.nodes})
    assert p.kt.nq == 7 + len({int(p.kt.q_index[k]) for k, _ in p.nodes})
    assert len(p.kt.end_effectors) == 4, p.kt.end_effectors


@pytest.mark.parametrize("robot", list(ROBOTS))
def test_fk_of_every_link_matches_pinocchio(robot: str) -> None:
    p = pair(robot)
    rng = np.random.default_rng(zlib.crc32(robot.encode()))
    Q = p.random_q(rng, N_CONFIGS)
    poses = p.kt.fk_all(Q)
    ids = [p.pin.getFrameId(name, pin.FrameType.BODY) for name in p.kt.frame_names[1:]]
    assert all(i < p.pin.nframes for i in ids), robot
    worst = 0.0
    for q, frames in zip(Q, poses):
        pin.framesForwardKinematics(p.pin, p.data, p.q_pin(q))
        np.testing.assert_allclose(frames[0], np.eye(4), atol=0)  # world = universe
        for name, fid, T in zip(p.kt.frame_names[1:], ids, frames[1:]):
            err = float(np.max(np.abs(T - p.data.oMf[fid].homogeneous)))
            worst = max(worst, err)
            assert err <= TOL, f"{robot}: link {name!r} differs by {err:.3g}"
    assert worst <= TOL


@pytest.mark.parametrize("robot", ["g1", "talos_reduced"])
def test_jacobians_match_pinocchio_through_the_velocity_map(robot: str) -> None:
    p = pair(robot)
    rng = np.random.default_rng(zlib.crc32(robot.encode()) + 1)
    Q = p.random_q(rng, 5)
    for q in Q:
        qp = p.q_pin(q)
        pin.computeJointJacobians(p.pin, p.data, qp)
        pin.updateFramePlacements(p.pin, p.data)
        M = p.motion_map(q)
        for name in p.kt.end_effectors:
            fid = p.pin.getFrameId(name, pin.FrameType.BODY)
            J_pin = pin.getFrameJacobian(p.pin, p.data, fid, pin.LOCAL_WORLD_ALIGNED)
            np.testing.assert_allclose(
                p.kt.jacobian(q, name), J_pin @ M, atol=TOL, err_msg=f"{robot}: {name}"
            )
