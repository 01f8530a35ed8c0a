"""One clip type for every format (kinetree.read_clip / write_clip) and the Skin type."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import kinetree
from kinetree.errors import (
    FileFormatError,
    InvalidValueError,
    ShapeError,
    UnknownNameError,
    UnsupportedError,
)
from kinetree.io.clip import Clip, sample_times
from kinetree.io.skin import Skin, deform

DATA = Path(__file__).resolve().parents[1] / "data"
WALK = DATA / "bvh" / "cmu_12_01_walk.bvh"


def test_bvh_clip_is_read_bvh() -> None:
    bvh = kinetree.read_bvh(WALK)
    clip = kinetree.read_clip(WALK)
    assert clip.format == "bvh" and clip.name == "cmu_12_01_walk"
    assert np.array_equal(clip.q, bvh.q) and clip.fps == bvh.fps
    assert clip.joint_names == bvh.joint_names
    assert np.allclose(clip.times, np.arange(bvh.n_frames) * bvh.frame_time)
    assert np.allclose(clip.world_poses()[..., :3, 3], bvh.joint_positions())
    assert kinetree.read_clip(WALK, scale=0.01, up="z").model.metadata["up"] == "z"


def test_bvh_resampled_linearly_per_channel() -> None:
    bvh = kinetree.read_bvh(WALK)
    clip = kinetree.read_clip(WALK, times=[0.5 * bvh.frame_time, 3 * bvh.frame_time])
    assert np.allclose(clip.q[0], 0.5 * (bvh.q[0] + bvh.q[1]))
    assert np.allclose(clip.q[1], bvh.q[3])
    slow = kinetree.read_clip(WALK, fps=30.0)
    assert slow.fps == 30.0 and slow.n_frames == int(bvh.duration * 30.0 - 1e-9) + 1 - 0
    assert np.allclose(slow.q[1], bvh.q[4])  # 1/30 s is frame 4 at 120 fps


def test_write_clip_takes_clips_motions_and_bvh_clips(tmp_path: Path) -> None:
    bvh = kinetree.read_bvh(WALK)
    clip = kinetree.read_clip(WALK)
    for what, obj in (("clip", clip), ("motion", clip.to_motion()), ("bvh", bvh)):
        out = tmp_path / f"{what}.bvh"
        kinetree.write_clip(obj, out)
        assert np.allclose(kinetree.read_bvh(out).q, bvh.q, atol=1e-12)
    # A motion of a model with no BVH layout is written frame by frame.
    panda = kinetree.load("panda")
    q = np.tile(panda.neutral(), (3, 1))
    q[:, 0] = [0.0, 0.1, 0.2]
    motion = kinetree.anim.Motion(panda, q, fps=10.0)
    kinetree.write_clip(motion, tmp_path / "panda.bvh")
    back = kinetree.read_clip(tmp_path / "panda.bvh")
    frames = [f for f in panda.frame_names if f != panda.node_names[0]]
    world = np.asarray(panda.fk_all(q))[:, [panda.frame_names.index(f) for f in frames]]
    assert np.abs(back.world_poses(frames)[..., :3, 3] - world[..., :3, 3]).max() < 1e-9


def test_clip_errors_name_the_choices(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedError, match=r"clips are read as .bvh, .gltf, .glb, .usd"):
        kinetree.read_clip(DATA / "mjcf" / "features.xml")
    with pytest.raises(InvalidValueError, match="BVH files take no option 'skeleton'"):
        kinetree.read_clip(WALK, skeleton="x")
    with pytest.raises(UnknownNameError, match="a BVH file has one take"):
        kinetree.read_clip(WALK, animation="run")
    with pytest.raises(FileFormatError, match="does not exist"):
        kinetree.read_clip(tmp_path / "none.glb")
    with pytest.raises(InvalidValueError, match=r"fps= .* or times="):
        kinetree.read_clip(WALK, fps=30.0, times=[0.0])
    with pytest.raises(UnsupportedError, match=r"cannot write a clip as file type '\.npz'"):
        kinetree.write_clip(kinetree.read_clip(WALK), tmp_path / "x.npz")
    with pytest.raises(InvalidValueError, match=r"write_clip needs a Clip, a Motion or a BVHClip"):
        kinetree.write_clip("walk", tmp_path / "x.glb")  # type: ignore[arg-type]


def test_uneven_clips_refuse_one_frame_rate(tmp_path: Path) -> None:
    model = kinetree.read_clip(WALK).model
    clip = Clip(model, np.tile(model.neutral(), (3, 1)), times=[0.0, 0.1, 0.5])
    assert not clip.evenly_spaced
    with pytest.raises(UnsupportedError, match="unevenly spaced"):
        clip.to_motion()
    with pytest.raises(UnsupportedError, match="BVH has one Frame Time"):
        kinetree.write_clip(clip, tmp_path / "x.bvh")


def test_sample_times() -> None:
    assert np.array_equal(sample_times([0.5, 0.0, 0.5, 1.0]), [0.0, 0.5, 1.0])
    assert np.allclose(sample_times([0.0, 1.0], fps=4), [0, 0.25, 0.5, 0.75, 1.0])
    with pytest.raises(InvalidValueError, match="more than"):
        sample_times([0.0, 1e9], fps=1000.0)
    with pytest.raises(InvalidValueError, match="strictly increasing"):
        sample_times([0.0], times=[1.0, 0.5])


def test_load_names_the_dh_constructor_that_exists() -> None:
    """The unknown-suffix message offered ``kinetree.from_dh``, which does not exist."""
    with pytest.raises(UnsupportedError) as err:
        kinetree.load("robot.step")
    assert "kinetree.io.from_dh" in str(err.value)
    assert callable(kinetree.io.from_dh)
    assert ".glb" in str(err.value) and ".usdz" in str(err.value)


# --- Skin -----------------------------------------------------------------------------------


def _two_bone_skin() -> tuple[kinetree.Model, Skin]:
    model = kinetree.read_clip(WALK).model
    names = ("LeftUpLeg", "LeftLeg")
    W = model.fk_all(model.neutral())
    idx = [model.frame_names.index(n) for n in names]
    vertices = W[idx, :3, 3] + [[0.0, 1.0, 0.0], [0.0, -1.0, 0.0]]
    skin = Skin(
        vertices=vertices,
        faces=np.zeros((0, 3), int),
        joint_names=names,
        joints=[[0, 1], [1, 0]],
        weights=[[1.0, 0.0], [0.5, 0.5]],
        inverse_bind=np.linalg.inv(W[idx]),
    )
    return model, skin


def test_deform_is_linear_blend_skinning() -> None:
    model, skin = _two_bone_skin()
    assert np.allclose(deform(skin, model, model.neutral()), skin.vertices, atol=1e-12)
    q = model.neutral().copy()
    q[model.joint_names.index("LeftUpLeg_x")] = 0.7
    W = model.fk_all(q)
    M = [
        W[model.frame_names.index(n)] @ skin.inverse_bind[j] for j, n in enumerate(skin.joint_names)
    ]
    v = np.c_[skin.vertices, np.ones(2)]
    want = np.array([(M[0] @ v[0])[:3], 0.5 * (M[1] @ v[1])[:3] + 0.5 * (M[0] @ v[1])[:3]])
    assert np.allclose(deform(skin, model, q), want, atol=1e-12)
    assert deform(skin, model, np.tile(q, (4, 1))).shape == (4, 2, 3)


def test_skin_checks_its_arrays() -> None:
    model, skin = _two_bone_skin()
    ok = dict(
        vertices=skin.vertices,
        faces=np.zeros((0, 3), int),
        joint_names=skin.joint_names,
        joints=skin.joints,
        weights=skin.weights,
        inverse_bind=skin.inverse_bind,
    )
    for change, err, match in (
        ({"weights": [[0.5, 0.0], [0.5, 0.5]]}, InvalidValueError, "do not sum to 1"),
        ({"joints": [[0, 2], [1, 0]]}, InvalidValueError, "index joint_names 0..1"),
        ({"faces": [[0, 1, 5]]}, InvalidValueError, "faces index vertices"),
        ({"inverse_bind": np.eye(4)[None]}, ShapeError, "inverse_bind must have shape"),
        ({"vertices": [[np.nan, 0, 0], [0, 0, 0]]}, InvalidValueError, "NaN"),
        ({"joint_names": ("a", "a")}, InvalidValueError, "must not repeat"),
    ):
        with pytest.raises(err, match=match):
            Skin(**{**ok, **change})
    other = Skin(**{**ok, "joint_names": ("LeftUpLeg", "Nowhere")})
    with pytest.raises(UnknownNameError, match="'Nowhere'"):
        deform(other, model, model.neutral())
