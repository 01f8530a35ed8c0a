"""Any model's motion written as BVH and read back: world poses of every frame survive.

Oracle: FK of the source model at each configuration against FK of the skeleton
``read_bvh`` builds from the written file.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import kinetree
from kinetree.anim.bvh_export import motion_to_bvh, write_motion_bvh
from kinetree.spatial import quat_exp


def _biped() -> kinetree.Model:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return kinetree.load(kinetree.data.path("biped"))


def _round_trip(model: kinetree.Model, Q: np.ndarray, tmp_path: Path, order: str = "zxy") -> None:
    path = tmp_path / "motion.bvh"
    write_motion_bvh(path, model, Q, frame_time=1 / 60, order=order)
    clip = kinetree.read_bvh(path)
    assert clip.n_frames == len(Q) and clip.frame_time == pytest.approx(1 / 60)
    want = model.fk_all(Q)
    got = clip.model.fk_all(clip.q)
    names = list(clip.model.frame_names)
    for i, f in enumerate(model.frame_names):
        k = names.index(f.replace(" ", "_"))
        np.testing.assert_allclose(got[:, k], want[:, i], atol=1e-9)


def test_free_base_and_ball_joints_round_trip(tmp_path: Path) -> None:
    model = _biped()
    rng = np.random.default_rng(0)
    Q = model.random_configuration(40, rng)
    Q[:, :3] = rng.uniform(-1, 1, (40, 3))
    _round_trip(model, Q, tmp_path)
    _round_trip(model, Q[:5], tmp_path, order="xyz")


def test_urdf_arm_with_rotated_joint_origins_round_trips(tmp_path: Path) -> None:
    panda = kinetree.load("panda")
    _round_trip(panda, panda.random_configuration(20, rng=1), tmp_path)


def test_angles_are_unwrapped_over_a_turn(tmp_path: Path) -> None:
    model = _biped()
    Q = np.repeat(model.neutral()[None], 50, axis=0)
    s = model.q_slice("shoulder_r")
    Q[:, s] = quat_exp(np.outer(np.linspace(0, 2.4, 50), [0.0, 0.0, 1.0]))
    text = motion_to_bvh(model, Q)
    rows = np.array([[float(v) for v in r.split()] for r in text.split("Frame Time:")[1]
                     .splitlines()[1:]])  # fmt: skip
    assert np.abs(np.diff(rows, axis=0)).max() < 10.0  # degrees per frame: no jumps
    _round_trip(model, Q, tmp_path)


def test_bad_input() -> None:
    model = _biped()
    with pytest.raises(kinetree.InvalidValueError, match="order"):
        motion_to_bvh(model, model.neutral(), order="xxz")
    with pytest.raises(kinetree.KinetreeError, match="frame_time"):
        motion_to_bvh(model, model.neutral(), frame_time=0.0)
    with pytest.raises(kinetree.KinetreeError):
        motion_to_bvh(model, np.zeros((2, 3)))
