"""Triangles of shapes (kinetree.drawing), meshes for built-in robots
(kinetree.models.descriptions) and meshes in matplotlib pictures (kinetree.viz)."""

from __future__ import annotations

import re
import warnings
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

import kinetree
from kinetree import drawing
from kinetree.geometry import Box, Capsule, Cylinder, GeometryWarning, Mesh, Sphere
from kinetree.models import descriptions

SHAPES = Path(__file__).resolve().parent / "data" / "kt_geom_pkg" / "urdf" / "shapes.urdf"


def _volume(V: np.ndarray, F: np.ndarray) -> float:
    """Signed volume of a closed triangle mesh (divergence theorem)."""
    return float(np.einsum("ij,ij->i", V[F[:, 0]], np.cross(V[F[:, 1]], V[F[:, 2]])).sum() / 6)


@pytest.mark.parametrize(
    ("shape", "volume"),
    [
        (Box(size=(0.1, 0.2, 0.3)), 0.006),
        (Sphere(radius=0.5), 4 / 3 * np.pi * 0.125),
        (Cylinder(radius=0.2, length=0.5), np.pi * 0.04 * 0.5),
        (Capsule(radius=0.1, length=0.4), np.pi * 0.01 * 0.4 + 4 / 3 * np.pi * 0.001),
    ],
)
def test_primitives_are_closed_outward_surfaces_of_the_right_size(shape, volume) -> None:
    V, F = drawing.shape_triangles(shape, segments=64)
    assert F.min() >= 0 and F.max() < len(V)
    assert _volume(V, F) == pytest.approx(volume, rel=0.01)  # > 0: faces point outwards
    _, F8 = drawing.shape_triangles(shape, segments=8)
    assert len(F8) <= len(F)


def test_a_mesh_without_triangles_has_none_and_bad_segments_raise() -> None:
    assert drawing.shape_triangles(Mesh(path="package://x/y.stl")) is None
    with pytest.raises(kinetree.InvalidValueError, match="segments"):
        drawing.shape_triangles(Sphere(radius=1.0), segments=2)


def test_decimate_keeps_the_budget_and_the_extent() -> None:
    V, F = drawing.shape_triangles(Sphere(radius=1.0), segments=96)
    for budget in (2000, 300, 40):
        Vd, Fd = drawing.decimate(V, F, budget)
        assert 0 < len(Fd) <= budget
        assert Fd.max() < len(Vd)
        if budget >= 300:  # a sphere of 300 triangles still spans its diameter
            assert np.ptp(Vd, axis=0) == pytest.approx(np.ptp(V, axis=0), rel=0.02)
    assert len(drawing.decimate(V, F, len(F))[1]) == len(F)  # small enough: unchanged
    with pytest.raises(kinetree.InvalidValueError):
        drawing.decimate(V, F, 0)


def _shapes_model() -> kinetree.Model:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GeometryWarning)
        return kinetree.load(SHAPES)


def test_model_parts_apply_the_origin_and_list_missing_meshes() -> None:
    model = _shapes_model()
    parts = drawing.model_parts(model, "visual")
    assert parts.missing == (("fore", "package://kt_missing_pkg/meshes/gone.stl"),)
    box = next(p for p in parts.parts if p.label == "box")
    assert box.frame == "base" and box.color == drawing.DEFAULT_COLORS["visual"]
    # The box (0.2 x 0.1 x 0.1, turned 90 degrees about z, lifted 0.05) in base's frame.
    np.testing.assert_allclose(box.vertices.min(axis=0), [-0.05, -0.1, 0.0], atol=1e-12)
    np.testing.assert_allclose(box.vertices.max(axis=0), [0.05, 0.1, 0.1], atol=1e-12)
    collision = drawing.model_parts(model, "collision")
    assert {p.label for p in collision.parts} == {"cylinder", "capsule", "sphere"}
    assert drawing.model_parts(model, "visual", frames=["upper"]).frames == {"upper"}
    # The bones standing in for fore's missing mesh: fore is a leaf, so upper -> fore.
    names = model.frame_names
    bones = drawing.missing_bones(model, parts)
    assert [(names[a], names[b]) for a, b in bones] == [("upper", "fore")]
    with pytest.raises(kinetree.InvalidValueError, match="kind"):
        drawing.model_parts(model, "sound")


def test_bones_join_every_frame_to_its_frame_parent() -> None:
    model = kinetree.load("humanoid")
    bones = drawing.bones(model)
    parents = drawing.frame_parents(model)
    assert len(bones) == int(np.sum(parents >= 0))
    assert all(parents[c] == p for p, c in bones)


# --- built-in robots' meshes ----------------------------------------------------------------


def _fake_description(tmp_path: Path, *, twist: str | None = None) -> Path:
    """kinetree's Panda URDF with a box per link instead of its (absent) meshes; with
    ``twist``, that joint's origin turned by 0.3 rad (kinematics that do not match)."""
    text = (resources.files("kinetree.models") / "data" / "panda.urdf").read_text()
    text = re.sub(r'<mesh filename="[^"]*"\s*/>', '<box size="0.05 0.06 0.07"/>', text)
    if twist is not None:
        text = re.sub(
            rf'(<joint name="{twist}".*?<origin[^>]*rpy=")([^"]*)"',
            lambda m: m.group(1) + " ".join(str(float(x) + 0.3 * (i == 2))
                                            for i, x in enumerate(m.group(2).split())) + '"',
            text, count=1, flags=re.S,
        )  # fmt: skip
    path = tmp_path / "panda_boxes.urdf"
    path.write_text(text)
    return path


def test_meshes_of_a_description_land_on_the_builtin_frames(tmp_path, monkeypatch) -> None:
    path = _fake_description(tmp_path)
    monkeypatch.setattr(descriptions, "description_file", lambda name: path)
    descriptions._load_description.cache_clear()
    panda = kinetree.load("panda")
    with_meshes, note = descriptions.with_meshes(panda)
    assert note is None and descriptions.has_meshes(with_meshes)
    assert not panda.geometry  # the built-in model itself is unchanged
    source = kinetree.load(path)
    q = panda.random_configuration(rng=7)
    qs = source.neutral()
    qs[:7] = q
    T_builtin = panda.fk_all(q)
    T_source = source.fk_all(qs)
    links = [f"panda_link{i}" for i in range(8)]
    for link in links:
        (shape,) = source.geometry[link]
        world = T_source[source.frame_names.index(link)] @ shape.origin
        # Exactly one shape of the built-in model sits at the same world pose.
        found = [
            T_builtin[panda.frame_names.index(f)] @ g.origin
            for f, gs in with_meshes.geometry.items()
            for g in gs
        ]
        assert min(np.abs(world - w).max() for w in found) < 1e-9, link


def test_a_link_that_follows_no_frame_is_left_out_with_a_warning(tmp_path, monkeypatch) -> None:
    path = _fake_description(tmp_path, twist="panda_joint4")
    monkeypatch.setattr(descriptions, "description_file", lambda name: path)
    descriptions._load_description.cache_clear()
    with pytest.warns(GeometryWarning, match="follows no frame of the model"):
        model, note = descriptions.with_meshes(kinetree.load("panda"))
    assert note is None
    n_shapes = sum(len(g) for g in model.geometry.values())
    assert 0 < n_shapes < 8  # links before joint 4 fit, the others do not


def test_no_description_means_a_note(monkeypatch) -> None:
    model, note = descriptions.with_meshes(kinetree.load("humanoid"))
    assert note == "humanoid has no meshes: drawn as a skeleton" and not model.geometry
    monkeypatch.setattr(descriptions, "description_file", lambda name: None)
    model, note = descriptions.with_meshes(kinetree.load("ur5"))
    assert note is not None and "pip install 'kinetree[meshes]'" in note


# --- meshes in matplotlib pictures --------------------------------------------------------------


def test_draw_with_meshes_draws_shaded_triangles_and_sticks_for_missing_ones(tmp_path) -> None:
    pytest.importorskip("matplotlib")
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection

    from kinetree import viz

    model = _shapes_model()
    q = np.array([0.4, -0.7])
    ax = viz.draw(model, q)  # meshes=None: the model's own
    (mesh,) = [c for c in ax.collections if isinstance(c, Poly3DCollection)]
    assert len(mesh.get_facecolor()) > 10
    lines = ax.get_lines()
    assert len(lines) == 1  # one bone, upper -> fore, for fore's missing mesh
    P = model.fk_all(q)[:, :3, 3]
    np.testing.assert_allclose(np.array(lines[0].get_data_3d()).T, P[[1, 2]], atol=1e-12)
    viz.save_figure(ax.figure, tmp_path / "shapes.png")
    assert (tmp_path / "shapes.png").stat().st_size > 1000
    ax = viz.draw(model, q, meshes=False)
    assert not [c for c in ax.collections if isinstance(c, Poly3DCollection)]
    ax = viz.draw(model, q, plane="xz")  # 2D: sticks
    assert not ax.collections or not isinstance(ax.collections[0], Poly3DCollection)


def test_animate_with_meshes(tmp_path) -> None:
    pytest.importorskip("matplotlib")
    Image = pytest.importorskip("PIL.Image")
    from kinetree import viz

    model = _shapes_model()
    Q = np.linspace([0.0, 0.0], [0.8, -1.2], 6)
    out = viz.animate(model, Q, tmp_path / "shapes.gif", fps=10, max_faces=500)
    with Image.open(out) as im:
        assert im.n_frames == 6
        frames = []
        for k in (0, 5):
            im.seek(k)
            frames.append(np.asarray(im.convert("RGB"), dtype=float))
    assert np.abs(frames[0] - frames[1]).mean() > 0.5  # the meshes moved
