"""kinetree.viz: stick figures, panels, convergence plots and animations (Agg, no windows)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

pytest.importorskip("matplotlib")
Image = pytest.importorskip("PIL.Image")
ImageSequence = pytest.importorskip("PIL.ImageSequence")

import kinetree  # noqa: E402
from kinetree import viz  # noqa: E402
from kinetree.drawing import frame_parents  # noqa: E402
from kinetree.errors import ShapeError, UnknownNameError, UnsupportedError  # noqa: E402
from kinetree.viz.plot import _is_planar  # noqa: E402

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def assert_real_png(path):
    """The file is a PNG that PIL opens, with more than one colour in it."""
    assert path.exists() and path.stat().st_size > 0
    assert path.read_bytes()[:8] == PNG_MAGIC
    with Image.open(path) as im:
        im.verify()
    with Image.open(path) as im:
        w, h = im.size
        assert w > 100 and h > 100
        lo, hi = zip(*im.convert("RGB").getextrema())
        assert max(hi) - min(lo) > 100, "image is (nearly) one colour"


def gif_frames(path):
    with Image.open(path) as im:
        return sum(1 for _ in ImageSequence.Iterator(im))


def wave(model, n, rng=0):
    """A smooth motion from the neutral pose towards a random one and back."""
    q0 = model.neutral()
    q1 = model.random_configuration(rng=rng)
    s = np.sin(np.linspace(0.0, np.pi, n))[:, None]
    return q0 + s * (q1 - q0)


# --- draw ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", kinetree.models.available())
def test_draw_every_builtin_model(name, tmp_path):
    model = kinetree.load(name)
    ax = viz.draw(model, model.neutral(), frames=[model.end_effectors[0]], label=name)
    ax.set_title(name)
    path = viz.save_figure(ax.figure, tmp_path / "sub" / f"{name}.png")
    assert path == tmp_path / "sub" / f"{name}.png"
    assert_real_png(path)


def test_planar_models_draw_in_2d_and_others_in_3d():
    assert _is_planar(kinetree.load("planar2r"))
    assert _is_planar(kinetree.load("planar3r"))
    for name in ("panda", "humanoid", "ur5", "quadruped"):
        assert not _is_planar(kinetree.load(name))
    assert viz.draw(kinetree.load("planar2r"), [0.3, 0.4]).name != "3d"
    panda = kinetree.load("panda")
    assert viz.draw(panda, panda.neutral()).name == "3d"
    assert viz.draw(panda, panda.neutral(), plane="xz").name != "3d"


def test_2d_tip_is_where_fk_says():
    model = kinetree.load("planar2r")
    q = np.array([0.7, -1.1])
    ax = viz.draw(model, q, plane="xy")
    tip = model.fk(q, "tip")[:2, 3]
    ends = [np.array([line.get_xdata()[-1], line.get_ydata()[-1]]) for line in ax.get_lines()]
    assert any(np.allclose(end, tip, atol=1e-12) for end in ends)
    # The tip is inside the square limits.
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    assert x0 < tip[0] < x1 and y0 < tip[1] < y1
    assert np.isclose(x1 - x0, y1 - y0)


def test_3d_skeleton_ends_at_every_leaf_frame():
    model = kinetree.load("humanoid")
    q = model.random_configuration(rng=3)
    ax = viz.draw(model, q, show_joints=False)
    P = model.fk_all(q)[:, :3, 3]
    parents = frame_parents(model)
    leaves = [f for f in range(len(parents)) if f not in set(parents.tolist())]
    ends = np.array([np.array(line.get_data_3d())[:, -1] for line in ax.get_lines()])
    for f in leaves:
        assert np.min(np.linalg.norm(ends - P[f], axis=1)) < 1e-12, model.frame_names[f]
    # z is up: the head is above the feet in the picture.
    top = ax.get_zlim()
    assert top[0] <= 0.0 and top[1] >= P[:, 2].max()


def test_frame_parents_skip_hidden_ball_joint_nodes():
    model = kinetree.load("humanoid")
    parents = frame_parents(model)
    names = model.frame_names
    assert parents[names.index("pelvis")] == -1
    assert names[parents[names.index("upper_arm_r")]] == "clavicle_r"
    assert names[parents[names.index("thigh_l")]] == "pelvis"


def test_draw_targets_frames_and_overlay(tmp_path):
    model = kinetree.load("panda")
    q = model.neutral()
    pose = model.fk(q)
    ax = viz.draw(model, q, targets=[pose, [0.3, 0.2, 0.4]], frames="link4", label="first")
    viz.draw(model, model.random_configuration(rng=1), ax, label="second")
    colors = {line.get_color() for line in ax.get_lines()}
    assert "C0" in colors and "C1" in colors
    assert_real_png(viz.save_figure(ax.figure, tmp_path / "overlay.png"))


def test_draw_validation():
    model = kinetree.load("panda")
    with pytest.raises(ShapeError, match=r"\(7,\)"):
        viz.draw(model, np.zeros(6))
    with pytest.raises(ShapeError):
        viz.draw(model, np.zeros((2, 7)))
    with pytest.raises(UnknownNameError):
        viz.draw(model, model.neutral(), frames=["nope"])
    with pytest.raises(UnsupportedError, match="plane"):
        viz.draw(model, model.neutral(), plane="xw")
    with pytest.raises(ShapeError):
        viz.draw(model, model.neutral(), targets=[[1.0, 2.0]])


# --- panels and convergence ------------------------------------------------------------


def test_side_by_side_and_draw_many(tmp_path):
    model = kinetree.load("humanoid")
    qs = [model.neutral(), model.random_configuration(rng=1), model.random_configuration(rng=2)]
    targets = [model.fk(qs[0], "hand_r"), [0.4, -0.3, 1.2], None]
    fig = viz.side_by_side(
        model, qs, ["neutral", "one", "two"], targets, tmp_path / "side.png",
        suptitle="reach", frames=["hand_r"],
    )  # fmt: skip
    assert len(fig.axes) == 3
    limits = {(ax.get_xlim(), ax.get_ylim(), ax.get_zlim()) for ax in fig.axes}
    assert len(limits) == 1, "panels share one scale"
    assert_real_png(tmp_path / "side.png")
    with pytest.raises(ShapeError):
        viz.side_by_side(model, qs, ["only one title"])
    ax = viz.draw_many(model, qs, ["a", "b", "c"], title="three", path=tmp_path / "many.png")
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["a", "b", "c"]
    assert_real_png(tmp_path / "many.png")


def test_plot_convergence(tmp_path):
    histories = {
        "newton": np.array([1.0, 1e-2, 1e-6, 1e-13, 0.0]),
        "gradient": np.geomspace(1.0, 1e-4, 80),
    }
    fig = viz.plot_convergence(histories, tmp_path / "conv" / "c.png", title="convergence")
    assert_real_png(tmp_path / "conv" / "c.png")
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    assert min(line.get_ydata().min() for line in ax.get_lines()) > 0.0  # zeros clipped
    lin = viz.plot_convergence(histories, log=False, ylabel="residual")
    assert lin.axes[0].get_yscale() == "linear"
    with pytest.raises(ShapeError):
        viz.plot_convergence({"bad": np.zeros((2, 2))})


# --- animation -----------------------------------------------------------------------


def test_animate_planar2r_gif(tmp_path):
    model = kinetree.load("planar2r")
    qs = wave(model, 10)
    targets = model.fk(qs)[:, None, :3, 3]  # per frame, one target
    out = viz.animate(model, qs, tmp_path / "a" / "p.gif", fps=10, trail="tip", targets=targets)
    assert out == tmp_path / "a" / "p.gif"
    assert gif_frames(out) == 10
    with Image.open(out) as im:
        assert im.size == (480, 480)


def test_animate_humanoid_gif(tmp_path):
    model = kinetree.load("humanoid")
    qs = wave(model, 10, rng=5)
    target = model.fk(qs[5], "hand_r")
    out = viz.animate(model, qs, tmp_path / "h.gif", targets=[target], title="humanoid", dpi=60)
    assert gif_frames(out) == 10
    with Image.open(out) as im:
        im.seek(4)
        frame = im.convert("RGB")
        assert frame.size == (360, 360)
        lo, hi = zip(*frame.getextrema())
        assert max(hi) - min(lo) > 100


def test_animate_mp4_without_ffmpeg(tmp_path, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda *a, **k: None)
    model = kinetree.load("planar2r")
    with pytest.raises(UnsupportedError, match="ffmpeg not found on PATH"):
        viz.animate(model, wave(model, 3), tmp_path / "m.mp4")
    assert not (tmp_path / "m.mp4").exists()


@pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="ffmpeg not installed")
def test_animate_mp4_with_ffmpeg(tmp_path):
    model = kinetree.load("planar2r")
    out = viz.animate(model, wave(model, 8), tmp_path / "m.mp4")
    assert out.stat().st_size > 0


def test_animate_validation(tmp_path):
    model = kinetree.load("planar2r")
    with pytest.raises(UnsupportedError, match=r"\.gif, \.mp4"):
        viz.animate(model, wave(model, 3), tmp_path / "m.avi")
    with pytest.raises(ShapeError, match=r"\(n_frames, 2\)"):
        viz.animate(model, np.zeros(2), tmp_path / "m.gif")
    with pytest.raises(ShapeError):
        viz.animate(model, np.zeros((4, 3)), tmp_path / "m.gif")
    with pytest.raises(UnknownNameError):
        viz.animate(model, wave(model, 3), tmp_path / "m.gif", trail="nope")
    with pytest.raises(ShapeError):
        viz.animate(model, wave(model, 3), tmp_path / "m.gif", targets=np.zeros((5, 1, 3)))


def test_missing_matplotlib_is_a_clear_error(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    model = kinetree.load("planar2r")
    with pytest.raises(UnsupportedError, match=r"kinetree\[viz\]"):
        viz.draw(model, model.neutral())


def test_up_axis_from_metadata_is_drawn_vertically():
    import dataclasses

    panda = kinetree.load("panda")
    y_up = dataclasses.replace(panda, metadata={**panda.metadata, "up": "y"})
    q = panda.random_configuration(rng=2)
    ax = viz.draw(y_up, q, show_joints=False)
    P = panda.fk_all(q)[:, :3, 3]
    x, y, z = ax.get_lines()[0].get_data_3d()  # the Panda is one chain: every frame
    assert np.allclose(np.column_stack([x, y, z]), P[:, [2, 0, 1]])  # vertical = world y
    assert ax.get_zlabel().startswith("y")


def test_bvh_root_translation_is_not_drawn_as_a_bone() -> None:
    from pathlib import Path

    data = Path(__file__).resolve().parents[1] / "data"
    clip = kinetree.read_bvh(data / "bvh" / "rotation_first_root.bvh")
    parents = frame_parents(clip.model)
    names = clip.model.frame_names
    # Hips hangs from the world through position channels: no segment; Spine hangs from Hips.
    assert parents[names.index("Hips")] == -1
    assert names[parents[names.index("Spine")]] == "Hips"


# --- skinned meshes -------------------------------------------------------------------

FBX_DATA = __import__("pathlib").Path(__file__).resolve().parents[1] / "data" / "fbx"


def _skinned_clip():
    pytest.importorskip("ufbx")
    return kinetree.read_clip(FBX_DATA / "maya_game_sausage_7500_binary_wiggle.fbx", fps=12)


def test_a_skinned_mesh_is_drawn_deformed_where_linear_blend_skinning_puts_it():
    """The triangles drawn for a character's skin are kinetree.io.skin.deform's vertices
    at the drawn pose (in the picture's axes), and no stick figure is drawn."""
    from kinetree.io.skin import deform
    from kinetree.viz.plot import _view

    clip = _skinned_clip()
    model = clip.model
    (skin,) = model.skins
    q = clip.q[len(clip) // 2]
    ax = viz.draw(model, q, show_joints=False)
    (skel,) = ax._kinetree_skeletons
    layer = skel.mesh
    assert layer is not None and skel.lines == []
    want = _view(model, deform(skin, model, q)[skin.faces], None)
    np.testing.assert_allclose(layer.world, want, atol=1e-12)


def test_animate_a_skinned_character_gif_draws_the_mesh(tmp_path):
    """A GIF of the clip shows the mesh: many pixels of the skin's colour (grey), where
    the stick figure of the same four joints (meshes=False) has almost none."""
    clip = _skinned_clip()
    out = viz.animate(clip.model, clip.q[:6], tmp_path / "skin.gif", dpi=50)
    stick = viz.animate(clip.model, clip.q[:6], tmp_path / "stick.gif", dpi=50, meshes=False)
    assert gif_frames(out) == 6

    def grey_pixels(path):
        with Image.open(path) as im:
            im.seek(3)
            a = np.asarray(im.convert("RGB")).astype(int)
        spread = a.max(axis=-1) - a.min(axis=-1)
        return int(np.sum((spread < 12) & (a.mean(axis=-1) > 40) & (a.mean(axis=-1) < 200)))

    assert grey_pixels(out) > 2000
    assert grey_pixels(out) > 5 * grey_pixels(stick)  # the stick picture: axes and text
