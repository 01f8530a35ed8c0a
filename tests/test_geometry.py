"""Visual and collision shapes of URDF links: parsing, mesh paths, meshes read or not."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest

import kinetree
from kinetree.builder import ModelBuilder
from kinetree.errors import InvalidValueError, UnknownNameError
from kinetree.geometry import Box, Capsule, Cylinder, GeometryWarning, Mesh, Sphere
from kinetree.io import load_urdf
from kinetree.io.urdf import resolve_mesh_path
from robot_data import example_robot_data

PKG = Path(__file__).parent / "data" / "kt_geom_pkg"
SHAPES = PKG / "urdf" / "shapes.urdf"


def load_shapes(**kwargs: object) -> kinetree.Model:
    with pytest.warns(GeometryWarning, match="kt_missing_pkg/meshes/gone.stl' not found"):
        return load_urdf(SHAPES, **kwargs)  # type: ignore[arg-type]


def test_every_shape_is_read_with_its_pose_and_kind() -> None:
    m = load_shapes()
    base = m.geometry["base"]
    assert [type(g) for g in base] == [Box, Cylinder]
    box, cyl = base
    assert box.kind == "visual" and box.name == "base_box" and box.size == (0.2, 0.1, 0.1)
    expected = np.eye(4)
    expected[:3, :3] = [[0, -1, 0], [1, 0, 0], [0, 0, 1]]
    expected[2, 3] = 0.05
    np.testing.assert_allclose(box.origin, expected, atol=1e-12)
    assert cyl.kind == "collision" and (cyl.radius, cyl.length) == (0.05, 0.1)
    capsule = m.geometry["upper"][1]
    assert isinstance(capsule, Capsule) and (capsule.radius, capsule.length) == (0.03, 0.3)
    sphere = m.geometry["fore"][2]
    assert isinstance(sphere, Sphere) and sphere.radius == 0.04 and sphere.kind == "collision"
    assert m.joint_names == ("shoulder", "elbow")  # the kinematics is untouched


def test_package_uri_found_through_an_ancestor_named_like_the_package() -> None:
    mesh = load_shapes().geometry["upper"][0]
    assert isinstance(mesh, Mesh)
    assert mesh.path == "package://kt_geom_pkg/meshes/tetra.obj"
    assert mesh.file == PKG / "meshes" / "tetra.obj"
    assert mesh.scale == (2.0, 2.0, 2.0)
    assert mesh.vertices is not None and mesh.faces is not None
    assert mesh.vertices.shape == (4, 3) and mesh.faces.shape == (4, 3)
    np.testing.assert_allclose(mesh.vertices.max(axis=0), [2.0, 2.0, 2.0])  # scaled


def test_relative_path_and_missing_mesh() -> None:
    relative, missing, _ = load_shapes().geometry["fore"]
    assert isinstance(relative, Mesh) and relative.file == (PKG / "meshes" / "tetra.obj")
    assert relative.vertices is not None
    assert isinstance(missing, Mesh) and missing.file is None
    assert missing.vertices is None and missing.faces is None
    assert missing.path == "package://kt_missing_pkg/meshes/gone.stl"


def test_package_dirs_finds_a_package_elsewhere(tmp_path: Path) -> None:
    # The URDF alone in a temporary folder: only package_dirs can find the package.
    urdf = tmp_path / "shapes.urdf"
    shutil.copy(SHAPES, urdf)
    with pytest.warns(GeometryWarning):
        m = load_urdf(urdf)
    assert m.geometry["upper"][0].file is None  # type: ignore[union-attr]
    with pytest.warns(GeometryWarning, match="gone.stl"):
        m = kinetree.load(urdf, package_dirs=[PKG.parent])
    assert m.geometry["upper"][0].file == PKG / "meshes" / "tetra.obj"  # type: ignore[union-attr]
    # A package folder itself also works.
    assert resolve_mesh_path("package://kt_geom_pkg/meshes/tetra.obj", None, [PKG]) == (
        PKG / "meshes" / "tetra.obj"
    )
    uri = f"file://{PKG / 'meshes' / 'tetra.obj'}"
    assert resolve_mesh_path(uri, None, []) == PKG / "meshes" / "tetra.obj"


def test_ros_package_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    urdf = tmp_path / "shapes.urdf"
    shutil.copy(SHAPES, urdf)
    monkeypatch.setenv("ROS_PACKAGE_PATH", str(PKG.parent))
    with pytest.warns(GeometryWarning, match="gone.stl"):
        m = load_urdf(urdf)
    assert m.geometry["upper"][0].file == PKG / "meshes" / "tetra.obj"  # type: ignore[union-attr]


def test_meshes_false_keeps_paths_only() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing read, so nothing to warn about
        m = load_urdf(SHAPES, meshes=False)
    mesh = m.geometry["upper"][0]
    assert isinstance(mesh, Mesh) and mesh.file is not None and mesh.vertices is None


def test_unreadable_mesh_and_bad_shapes_warn_but_load(tmp_path: Path) -> None:
    (tmp_path / "broken.stl").write_bytes(b"\x00not a mesh")
    text = SHAPES.read_text().replace("../meshes/tetra.obj", str(tmp_path / "broken.stl"))
    text = text.replace('<sphere radius="0.04"/>', '<sphere radius="big"/>')
    text = text.replace('<box size="0.2 0.1 0.1"/>', '<plane normal="0 0 1"/>')
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m = load_urdf(text)
    messages = [str(w.message) for w in caught if issubclass(w.category, GeometryWarning)]
    assert any("broken.stl" in s and "could not be read" in s for s in messages), messages
    assert any("radius='big'" in s for s in messages)
    assert any("<plane> is not supported" in s for s in messages)
    assert m.dof == 2
    assert [type(g) for g in m.geometry["base"]] == [Cylinder]


def test_builder_add_geometry() -> None:
    b = ModelBuilder("g", root="base").add_joint("j", "base", "arm")
    b.add_geometry("arm", Sphere(0.1, kind="collision")).add_geometry("arm", Box((1, 2, 3)))
    m = b.build()
    assert [type(g) for g in m.geometry["arm"]] == [Sphere, Box]
    assert "base" not in m.geometry
    with pytest.raises(InvalidValueError, match=r"kinetree\.geometry shape"):
        b.add_geometry("arm", "sphere")  # type: ignore[arg-type]
    b.add_geometry("hand", Sphere(0.1))
    with pytest.raises(UnknownNameError, match="frame 'hand' not found"):
        b.build()
    assert ModelBuilder("e").build().geometry == {}


def test_shape_values_are_checked() -> None:
    with pytest.raises(InvalidValueError, match="Sphere radius"):
        Sphere(-1.0)
    with pytest.raises(InvalidValueError, match="kind"):
        Box((1, 1, 1), kind="visible")  # type: ignore[arg-type]
    with pytest.raises(InvalidValueError, match="4x4"):
        Cylinder(1.0, 1.0, origin=np.eye(3))
    with pytest.raises(InvalidValueError, match=r"vertices must have shape \(n, 3\)"):
        Mesh("a.stl", (1, 1, 1), np.zeros((3, 2)), None)


def test_example_robot_data_meshes_resolve() -> None:
    robots = example_robot_data()
    with warnings.catch_warnings():
        warnings.simplefilter("error", GeometryWarning)  # every mesh found and read
        m = load_urdf(robots / "ur_description" / "urdf" / "ur5_robot.urdf")
    meshes = [g for shapes in m.geometry.values() for g in shapes if isinstance(g, Mesh)]
    assert len(meshes) >= 12
    assert all(g.vertices is not None and len(g.vertices) > 0 for g in meshes)


def test_mesh_path_the_os_refuses_is_a_warning_not_a_crash() -> None:
    long_name = "package://pkg/" + "m" * 5000 + ".stl"
    text = (
        '<robot name="r"><link name="a"><visual><geometry>'
        f'<mesh filename="{long_name}"/></geometry></visual></link></robot>'
    )
    with pytest.warns(GeometryWarning, match="not found"):
        m = load_urdf(text)
    assert m.geometry["a"][0].vertices is None
