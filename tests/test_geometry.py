"""Visual and collision shapes of URDF links: parsing, mesh paths, meshes read or not."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest

import kinetree
import kinetree.geometry as geometry_module
from kinetree.builder import ModelBuilder
from kinetree.errors import InvalidValueError, UnknownNameError
from kinetree.geometry import Box, Capsule, Cylinder, GeometryWarning, Mesh, Sphere
from kinetree.io import load_urdf
from kinetree.io.urdf import resolve_mesh_path
from robot_data import example_robot_data

PKG = Path(__file__).parent / "data" / "kt_geom_pkg"
SHAPES = PKG / "urdf" / "shapes.urdf"


def load_shapes(**kwargs: object) -> kinetree.Model:
    with pytest.warns(
        GeometryWarning,
        match=r"1 of 3 meshes not found \('package://kt_missing_pkg/meshes/gone.stl'",
    ):
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
        assert m.geometry["fore"][0].vertices is None  # read (and failed) on first use
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


def _arm_with_missing_meshes(n_links: int) -> str:
    """URDF text of an arm whose every link names a visual and a collision mesh that no
    folder holds."""
    links, joints = [], []
    for i in range(n_links):
        mesh = f'<geometry><mesh filename="package://kt_nowhere/meshes/link{i}.dae"/></geometry>'
        links.append(
            f'<link name="l{i}"><visual>{mesh}</visual><collision>{mesh}</collision></link>'
        )
        if i:
            joints.append(
                f'<joint name="j{i}" type="revolute"><parent link="l{i - 1}"/>'
                f'<child link="l{i}"/><axis xyz="0 0 1"/>'
                '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'
            )
    return f'<robot name="arm">{"".join(links + joints)}</robot>'


def test_missing_meshes_are_one_short_warning_at_the_callers_line(tmp_path: Path) -> None:
    """Seven links without their meshes: one warning for the file (not one of 400
    characters per mesh), pointing at the line that loads it."""
    urdf = tmp_path / "arm.urdf"
    urdf.write_text(_arm_with_missing_meshes(7))
    for load in (kinetree.load, load_urdf):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            m = load(urdf)
        geometry = [w for w in caught if issubclass(w.category, GeometryWarning)]
        assert len(geometry) == 1, [str(w.message) for w in geometry]
        message = str(geometry[0].message)
        assert "14 of 14 meshes not found" in message and "package_dirs=" in message
        assert "link0.dae" in message and len(message) < 600
        assert geometry[0].filename == __file__
        assert m.dof == 6


def test_meshes_are_read_when_first_used(monkeypatch: pytest.MonkeyPatch) -> None:
    """Loading reads no mesh file; the first use of a mesh's vertices reads it, once."""
    reads: list[Path] = []
    real = geometry_module.read_mesh

    def counting(file: Path, scale: tuple[float, float, float]) -> tuple[np.ndarray, np.ndarray]:
        reads.append(file)
        return real(file, scale)

    monkeypatch.setattr(geometry_module, "read_mesh", counting)
    robots = example_robot_data()
    m = load_urdf(robots / "ur_description" / "urdf" / "ur5_robot.urdf")
    assert reads == []
    mesh = next(g for g in m.geometry["forearm_link"] if isinstance(g, Mesh))
    vertices = mesh.vertices
    assert vertices is not None and len(reads) == 1
    assert mesh.faces is not None and mesh.vertices is vertices and len(reads) == 1
    assert np.array_equal(vertices, real(mesh.file, mesh.scale)[0])  # type: ignore[arg-type]
