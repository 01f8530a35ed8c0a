"""Skeletons as the usual tools write them: Mixamo names with a prefix, centimetres,
Y-up; Blender-style Z-up files; the CMU conversions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import kinetree
from kinetree import Position

DATA = Path(__file__).resolve().parents[1] / "data" / "bvh"


def test_mixamo_names_units_and_up_axis() -> None:
    raw = kinetree.read_bvh(DATA / "mixamo_style.bvh")
    clip = kinetree.read_bvh(DATA / "mixamo_style.bvh", scale=0.01, up="z")
    assert clip.joint_names[0] == "mixamorig:Hips"
    assert "mixamorig:Head_end" in clip.model.frame_names
    P_raw, P = raw.joint_positions(), clip.joint_positions()
    # centimetres to metres, and Y-up (file) to Z-up: (x, y, z) -> (x, -z, y)
    np.testing.assert_allclose(P[..., 0], 0.01 * P_raw[..., 0], atol=1e-12)
    np.testing.assert_allclose(P[..., 1], -0.01 * P_raw[..., 2], atol=1e-12)
    np.testing.assert_allclose(P[..., 2], 0.01 * P_raw[..., 1], atol=1e-12)
    head = clip.joint_names.index("mixamorig:Head")
    hips = clip.joint_names.index("mixamorig:Hips")
    assert np.all(P[:, head, 2] > P[:, hips, 2])


def test_prefixed_names_work_everywhere() -> None:
    clip = kinetree.read_bvh(DATA / "mixamo_style.bvh", scale=0.01, up="z")
    m = clip.model
    goal = clip.joint_positions()[0, 3] + [0.05, 0.0, -0.02]
    r = m.ik(Position(goal), "mixamorig:Head_end", active=["mixamorig:Spine", "mixamorig:Head"],
             q0=clip.q[0])  # fmt: skip
    assert r.success
    np.testing.assert_allclose(m.fk(r.q, "mixamorig:Head_end")[:3, 3], goal, atol=1e-6)
    with pytest.raises(kinetree.UnknownNameError, match="mixamorig:Spine"):
        m.ik(Position(goal), "Head_end")


def test_blender_style_z_up_file_keeps_its_axes() -> None:
    # bvh_test1.bvh is a Z-up skeleton with XZY channels (as Blender can export).
    clip = kinetree.read_bvh(DATA / "bvh_test1.bvh")
    P = clip.joint_positions()
    assert np.median(P[:, -1, 2] - P[:, 0, 2]) != 0.0
    up = np.argmax(np.ptp(P[0], axis=0))  # the skeleton is tallest along z
    assert up == 2


def test_cmu_walk_in_metres_z_up_stands_on_the_floor() -> None:
    # The CMU conversions keep the ASF length unit: 1 unit = 1/0.45 inch.
    unit = 0.0254 / 0.45
    clip = kinetree.read_bvh(DATA / "cmu_12_01_walk.bvh", scale=unit, up="z")
    P = clip.joint_positions()[1:]  # frame 0 is a T-pose
    height = P[..., 2].max(axis=1) - P[..., 2].min(axis=1)
    assert 1.2 < np.median(height) < 2.0  # a person, in metres
