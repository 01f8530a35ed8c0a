"""kinetree.collision: distances against closed forms, containment of the spheres, the
pair tables, SRDF files and bad input.

Oracles are written here from the definitions (clipping to a box, sampling a segment,
trimesh's closest point on triangles), not from the kernels' formulas.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

import kinetree
from kinetree import geometry as geo
from kinetree.collision import _kernels, layout
from kinetree.collision.spheres import robot_spheres, shape_spheres


@pytest.fixture(autouse=True)
def _sphere_cache(tmp_path_factory, monkeypatch):
    """Fitted spheres go to a temporary folder, not the user's cache."""
    monkeypatch.setenv("KINETREE_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "kt-cache"))


def _pose(seed: int) -> np.ndarray:
    gen = np.random.default_rng(seed)
    T = np.eye(4)
    T[:3, :3] = Rotation.random(random_state=seed).as_matrix()
    T[:3, 3] = gen.uniform(-0.5, 0.5, 3)
    return T


def _query(ob: kinetree.collision.Obstacle, p: np.ndarray) -> tuple[float, np.ndarray]:
    """Signed distance and normal of the world point ``p`` to ``ob`` through the kernel."""
    rows, _ = kinetree.collision.world.obstacle_rows([ob])
    table, data = layout.pack_obstacle_rows(rows)
    sd, nx, ny, nz = _kernels.point_obstacle(table, data, 0, *map(float, p))
    return sd, np.array([nx, ny, nz])


def _oracle(ob: kinetree.collision.Obstacle, p: np.ndarray) -> float:
    if isinstance(ob, kinetree.Sphere):
        return float(np.linalg.norm(p - ob.center) - ob.radius)
    if isinstance(ob, kinetree.HalfSpace):
        return float(ob.normal @ p - ob.offset)
    T = ob.pose
    loc = T[:3, :3].T @ (p - T[:3, 3])
    if isinstance(ob, kinetree.Box):
        h = 0.5 * np.array(ob.size)
        out = np.linalg.norm(loc - np.clip(loc, -h, h))
        return float(out if out > 0 else -np.min(h - np.abs(loc)))
    if isinstance(ob, kinetree.Capsule):
        z = np.linspace(-0.5 * ob.length, 0.5 * ob.length, 200_001)
        seg = np.stack([np.zeros_like(z), np.zeros_like(z), z], axis=1)
        return float(np.min(np.linalg.norm(seg - loc, axis=1)) - ob.radius)
    if isinstance(ob, kinetree.Cylinder):
        rho, half = np.hypot(loc[0], loc[1]), 0.5 * ob.length
        dr, dz = rho - ob.radius, abs(loc[2]) - half
        if dr <= 0 and dz <= 0:
            return float(max(dr, dz))
        return float(np.hypot(max(dr, 0.0), max(dz, 0.0)))
    raise TypeError(ob)


def _shapes(seed: int, a: float, b: float, c: float) -> list[kinetree.collision.Obstacle]:
    T = _pose(seed)
    return [
        kinetree.Sphere(radius=a, center=T[:3, 3]),
        kinetree.Box(size=(2 * a, 2 * b, 2 * c), pose=T),
        kinetree.Capsule(radius=a, length=2 * b, pose=T),
        kinetree.Cylinder(radius=a, length=2 * c, pose=T),
        kinetree.HalfSpace(normal=T[:3, 2], offset=a),
    ]


@given(
    st.integers(0, 10_000),
    st.floats(0.01, 0.3),
    st.floats(0.01, 0.3),
    st.floats(0.01, 0.3),
    st.lists(st.floats(-0.8, 0.8), min_size=3, max_size=3),
)
def test_primitive_distances_match_closed_forms(seed, a, b, c, p):
    p = np.array(p)
    for ob in _shapes(seed, a, b, c):
        sd, n = _query(ob, p)
        assert sd == pytest.approx(
            _oracle(ob, p), abs=2e-6 if isinstance(ob, kinetree.Capsule) else 1e-12
        )
        assert np.linalg.norm(n) == pytest.approx(1.0, abs=1e-12)
        # The closest surface point is on the surface.
        assert _oracle(ob, p - sd * n) == pytest.approx(0.0, abs=2e-6)


def test_points_and_mesh_match_brute_force(rng):
    trimesh = pytest.importorskip("trimesh")
    pts = rng.uniform(-1, 1, (50, 3))
    cloud = kinetree.PointCloud(points=pts, radius=0.05)
    mesh = trimesh.creation.icosphere(subdivisions=1, radius=0.3)
    T = _pose(3)
    tm = kinetree.TriangleMesh(vertices=mesh.vertices, faces=mesh.faces, pose=T)
    world = trimesh.Trimesh(mesh.vertices @ T[:3, :3].T + T[:3, 3], mesh.faces)
    probes = rng.uniform(-1, 1, (40, 3))
    _, oracle_mesh, _ = trimesh.proximity.closest_point(world, probes)
    for p, dm in zip(probes, oracle_mesh):
        sd, _ = _query(cloud, p)
        assert sd == pytest.approx(np.min(np.linalg.norm(pts - p, axis=1)) - 0.05, abs=1e-12)
        sd, n = _query(tm, p)
        assert sd == pytest.approx(dm, abs=1e-9)
        assert np.linalg.norm(n) == pytest.approx(1.0)


def _two_link(geom_a: geo.Geometry, geom_b: geo.Geometry | None = None) -> kinetree.Model:
    b = kinetree.ModelBuilder("two", root="base")
    b.add_joint("j1", "base", "l1", axis="z", limits=(-3, 3))
    b.add_joint(
        "j2", "l1", "l2", axis="y", origin=kinetree.spatial.translation([0, 0, 0.5]), limits=(-3, 3)
    )
    b.add_frame("tip", "l2", kinetree.spatial.translation([0.4, 0, 0]))
    b.add_geometry("l2", geom_a)
    if geom_b is not None:
        b.add_geometry("base", geom_b)
    return b.build()


def test_model_distance_exact_for_sphere_geometry_and_witnesses(rng):
    ball = geo.Sphere(
        radius=0.05, kind="collision", origin=kinetree.spatial.translation([0.4, 0, 0])
    )
    model = _two_link(ball)
    box = kinetree.Box(size=(0.2, 0.3, 0.1), pose=_pose(7), name="crate")
    Q = model.random_configuration(30, rng=rng)
    res = model.distance(Q, obstacles=[box])
    centres = model.fk(Q, "tip")[:, :3, 3]
    want = [_oracle(box, c) - 0.05 for c in centres]
    np.testing.assert_allclose(res.distance, want, atol=1e-12)
    assert res.closest[0] == ("l2", "crate")
    gap = np.einsum("ni,ni->n", res.normal, res.point_a - res.point_b)
    np.testing.assert_allclose(gap, res.distance, atol=1e-12)
    assert model.in_collision(Q, obstacles=[box]).tolist() == (res.distance < 0).tolist()


def test_distance_gradient_is_normal_times_jacobian_difference():
    """d(q + h e_i) - d(q - h e_i) over 2h equals n^T J_p(point_a) e_i (obstacle fixed)."""
    ball = geo.Sphere(
        radius=0.05, kind="collision", origin=kinetree.spatial.translation([0.4, 0, 0])
    )
    model = _two_link(ball)
    ob = kinetree.Sphere(radius=0.1, center=(0.3, 0.2, 0.3))
    q = np.array([0.3, -0.4])
    res = model.distance(q, obstacles=ob)
    T = model.fk(q, "l2")
    local = T[:3, :3].T @ (res.point_a - T[:3, 3])
    J = model.jacobian(q, "l2", point=local)[:3]
    h = 1e-6
    fd = [
        (
            model.distance(q + h * e, obstacles=ob).distance
            - model.distance(q - h * e, obstacles=ob).distance
        )
        / (2 * h)
        for e in np.eye(2)
    ]
    np.testing.assert_allclose(res.normal @ J, fd, atol=1e-6)


def test_self_pair_distance_and_batch_shapes(rng):
    ball = geo.Sphere(
        radius=0.05, kind="collision", origin=kinetree.spatial.translation([0.4, 0, 0])
    )
    base = geo.Sphere(radius=0.1, kind="collision")
    model = _two_link(ball, base)
    cm = kinetree.collision.collision_model(model, disabled={})
    Q = model.random_configuration(6, rng=rng)
    Q = Q.reshape(2, 3, 2)
    res = cm.distance(Q)
    tips = model.fk(Q, "tip")[..., :3, 3]
    np.testing.assert_allclose(res.distance, np.linalg.norm(tips, axis=-1) - 0.15, atol=1e-12)
    assert res.distance.shape == (2, 3) and res.normal.shape == (2, 3, 3)
    assert res.closest[1][2] == ("base", "l2")
    rows, names = cm.pair_distances(Q[0, 0])
    assert names == (("base", "l2"),) and rows.shape == (1, layout.OUT_SIZE)
    assert layout.read_out_row(rows[0])["distance"] == pytest.approx(res.distance[0, 0])


def _volume_samples(shape: geo.Geometry, rng: np.random.Generator, n: int = 4000) -> np.ndarray:
    if isinstance(shape, geo.Box):
        return rng.uniform(-0.5, 0.5, (n, 3)) * np.array(shape.size)
    u = rng.uniform(-1, 1, (n, 3))
    if isinstance(shape, geo.Cylinder):
        u = u[np.hypot(u[:, 0], u[:, 1]) <= 1]
        return u * np.array([shape.radius, shape.radius, 0.5 * shape.length])
    if isinstance(shape, geo.Capsule):
        u = u[np.linalg.norm(u, axis=1) <= 1] * shape.radius
        u[:, 2] += rng.uniform(-0.5, 0.5, len(u)) * shape.length
        return u
    raise TypeError(shape)


@pytest.mark.parametrize(
    "shape",
    [
        geo.Box(size=(0.3, 0.1, 0.05), kind="collision"),
        geo.Cylinder(radius=0.06, length=0.3, kind="collision"),
        geo.Capsule(radius=0.04, length=0.25, kind="collision"),
    ],
    ids=["box", "cylinder", "capsule"],
)
def test_spheres_contain_primitives(shape, rng, tmp_path, monkeypatch):
    monkeypatch.setenv("KINETREE_CACHE_DIR", str(tmp_path))
    c, r = shape_spheres(shape, 12, 0.01)
    P = _volume_samples(shape, rng)
    inside = (np.linalg.norm(P[:, None] - c[None], axis=2) <= r[None] + 1e-12).any(axis=1)
    assert inside.all()


def test_spheres_contain_mesh_vertices_and_are_cached(rng, tmp_path, monkeypatch):
    trimesh = pytest.importorskip("trimesh")
    monkeypatch.setenv("KINETREE_CACHE_DIR", str(tmp_path))
    m = trimesh.creation.capsule(height=0.3, radius=0.05, count=[8, 8])
    mesh = geo.Mesh(
        path="x.stl",
        vertices=m.vertices * [1.0, 0.6, 1.0],
        faces=m.faces,
        kind="collision",
        origin=_pose(1),
    )
    c, r = shape_spheres(mesh, 10, 0.005)
    V = mesh.vertices @ mesh.origin[:3, :3].T + mesh.origin[:3, 3]
    # Every vertex, and points spread over every triangle, inside some sphere.
    w = rng.dirichlet(np.ones(3), size=(len(mesh.faces), 8))
    P = np.concatenate([V, np.einsum("fkj,fji->fki", w, V[mesh.faces]).reshape(-1, 3)])
    assert ((np.linalg.norm(P[:, None] - c[None], axis=2) <= r[None]).any(axis=1)).all()
    assert len(list(tmp_path.rglob("*.npz"))) == 1
    # A second fit (new process: memory cache emptied) reads the file back.
    from kinetree.collision import spheres

    spheres._MEMORY.clear()
    monkeypatch.setattr(spheres, "fit_mesh", lambda *a: pytest.fail("fitted again"))
    c2, r2 = shape_spheres(mesh, 10, 0.005)
    np.testing.assert_array_equal(c2, c)
    np.testing.assert_array_equal(r2, r)


def test_robot_spheres_plain_arrays():
    ball = geo.Sphere(
        radius=0.05, kind="collision", origin=kinetree.spatial.translation([0.4, 0, 0])
    )
    model = _two_link(ball, geo.Box(size=(0.1, 0.1, 0.1), kind="collision"))
    rs = robot_spheres(model)
    assert rs.links == ("base", "l2") and rs.frames[-1] == "l2"
    assert rs.centers.shape == (len(rs.radii), 3) and rs.offsets[-1] == len(rs.radii)
    c, _ = rs.world(model, model.neutral())
    assert c.shape == rs.centers.shape


SRDF = """<?xml version="1.0"?>
<robot name="two">
  <group name="arm"><joint name="j1"/></group>
  <disable_collisions link1="l2" link2="base" reason="Never"/>
</robot>
"""


def test_srdf_read_write_and_load(tmp_path):
    from kinetree.io.srdf import read_srdf, write_srdf

    model = _two_link(
        geo.Sphere(radius=0.05, kind="collision"), geo.Sphere(radius=0.1, kind="collision")
    )
    path = tmp_path / "two.srdf"
    path.write_text(SRDF)
    pairs = read_srdf(path, model)
    assert pairs == {("base", "l2"): "Never"}
    out = tmp_path / "out.srdf"
    write_srdf(out, pairs, "two")
    assert read_srdf(out, model) == pairs
    cm = kinetree.collision.collision_model(model, disabled=path)
    assert cm.self_pairs == ()
    urdf = tmp_path / "arm.urdf"
    urdf.write_text(
        '<robot name="a"><link name="base"/><link name="l2"/>'
        '<joint name="j" type="fixed"><parent link="base"/><child link="l2"/></joint></robot>'
    )
    loaded = kinetree.load(urdf, srdf=path)
    assert loaded.metadata["disable_collisions"] == pairs


def test_srdf_errors_name_the_problem(tmp_path):
    from kinetree.io.srdf import read_srdf

    model = _two_link(geo.Sphere(radius=0.05, kind="collision"))
    path = tmp_path / "bad.srdf"
    path.write_text('<robot name="x"><disable_collisions link1="l2" link2="hand"/></robot>')
    with pytest.raises(kinetree.UnknownNameError, match=r"'hand'.*base, l1, l2"):
        read_srdf(path, model)
    path.write_text('<robot name="x"><disable_collisions link1="l2"/></robot>')
    with pytest.raises(kinetree.FileFormatError, match="link1 and link2"):
        read_srdf(path, model)
    path.write_text("<robot")
    with pytest.raises(kinetree.FileFormatError, match="not readable XML"):
        read_srdf(path, model)
    with pytest.raises(kinetree.FileFormatError, match="does not exist"):
        read_srdf(tmp_path / "none.srdf", model)


def test_automatic_pairs():
    b = kinetree.ModelBuilder("chain", root="base")
    b.add_joint("j1", "base", "a", axis="z", limits=(-3, 3))
    b.add_joint(
        "j2",
        "a",
        "b",
        axis="y",
        origin=kinetree.spatial.translation([0, 0, 0.3]),
        limits=(-0.5, 0.5),
    )
    b.add_joint("fix", "b", "c", type="fixed", origin=kinetree.spatial.translation([0, 0, 0.05]))
    b.add_frame("far", "base", kinetree.spatial.translation([3, 0, 0]))
    # Slides along x from 2.95 (touching "far" at the neutral configuration) to 6.
    b.add_joint("slide", "base", "e", type="prismatic", axis="x", limits=(2.95, 6.0))
    sphere = geo.Sphere(radius=0.04, kind="collision")
    for link in ("base", "a", "b", "c", "far", "e"):
        b.add_geometry(link, sphere)
    model = b.build()
    pairs = kinetree.collision.find_disabled_pairs(model, samples=200, default=False)
    assert pairs[("a", "base")] == "Adjacent" and pairs[("a", "b")] == "Adjacent"
    assert pairs[("b", "c")] == "Adjacent"
    assert pairs[("base", "far")] == "Adjacent"  # far hangs off base
    assert pairs[("b", "far")] == "Never"
    # a and c: 0.35 apart along z, radius 0.04 each: never touch either.
    assert pairs[("a", "c")] == "Never"
    assert ("e", "far") not in pairs  # touching now and then
    with_default = kinetree.collision.find_disabled_pairs(model, samples=200)
    assert with_default[("e", "far")] == "Default"  # 30 mm deep at neutral
    cm = kinetree.collision.collision_model(model)  # judges as set-up tools do
    assert cm.disabled[("e", "far")] == "Default" and cm.self_pairs == ()


def test_bad_obstacles_raise_naming_the_field():
    with pytest.raises(kinetree.InvalidValueError, match="Box size"):
        kinetree.Box(size=(-1, 1, 1))
    with pytest.raises(kinetree.InvalidValueError, match="Box pose"):
        kinetree.Box(size=(1, 1, 1), pose=np.full((4, 4), np.nan))
    with pytest.raises(kinetree.NotRigidError, match="Cylinder pose"):
        kinetree.Cylinder(radius=1, length=1, pose=np.diag([2.0, 1, 1, 1]))
    with pytest.raises(kinetree.InvalidValueError, match="Sphere radius"):
        kinetree.Sphere(radius=float("nan"))
    with pytest.raises(kinetree.InvalidValueError, match="Sphere center"):
        kinetree.Sphere(radius=1, center=(0, np.nan, 0))
    with pytest.raises(kinetree.InvalidValueError, match="Capsule length"):
        kinetree.Capsule(radius=1, length=-2)
    with pytest.raises(kinetree.InvalidValueError, match="HalfSpace normal"):
        kinetree.HalfSpace(normal=(0, 0, 0))
    with pytest.raises(kinetree.ShapeError, match="PointCloud points"):
        kinetree.PointCloud(points=np.zeros((0, 3)))
    with pytest.raises(kinetree.InvalidValueError, match="TriangleMesh faces"):
        kinetree.TriangleMesh(vertices=np.zeros((3, 3)), faces=[[0, 1, 5]])
    with pytest.raises(kinetree.ShapeError, match="Box size"):
        kinetree.Box(size=(1, 1))


def test_bad_queries_raise():
    model = _two_link(geo.Sphere(radius=0.05, kind="collision"))
    with pytest.raises(kinetree.UnsupportedError, match="obstacle must be"):
        model.distance(model.neutral(), obstacles=["table"])
    with pytest.raises(kinetree.UnknownNameError, match="'table'"):
        model.distance(
            model.neutral(), obstacles=[kinetree.Sphere(radius=1)], ignore=[("l2", "table")]
        )
    with pytest.raises(kinetree.UnsupportedError, match="no collision geometry"):
        kinetree.load("planar2r").distance(np.zeros(2))
    with pytest.raises(kinetree.UnknownNameError, match="'hand'"):
        kinetree.collision.collision_model(model, disabled={("hand", "l2"): "x"})
    with pytest.raises(kinetree.InvalidValueError, match="max_spheres"):
        robot_spheres(model, max_spheres=0)
    mesh = geo.Mesh(path="package://x/y.stl", kind="collision")
    b = kinetree.ModelBuilder("m", root="base")
    b.add_geometry("base", mesh)
    with pytest.raises(kinetree.UnsupportedError, match=r"link 'base'.*y\.stl.*not found"):
        robot_spheres(b.build())


def test_distance_gradient_kernel_matches_finite_differences():
    """The IK row of a self pair and of an obstacle pair, against central differences."""
    from kinetree.kinematics import packed
    from kinetree.kinematics._kernels import fk_nodes

    ball = geo.Sphere(
        radius=0.05, kind="collision", origin=kinetree.spatial.translation([0.4, 0, 0])
    )
    base = geo.Sphere(
        radius=0.1, kind="collision", origin=kinetree.spatial.translation([0.1, 0, 0.2])
    )
    model = _two_link(ball, base)
    cm = kinetree.collision.collision_model(model, disabled={})
    ob = kinetree.Box(size=(0.2, 0.2, 0.2), pose=_pose(11))
    t = cm.tables([ob])
    fdata, idata = packed(model)
    q = np.array([0.4, 0.7])
    W = np.empty((model.n_nodes, 3, 4))
    fk_nodes(q, fdata, idata, t.nodes, W)
    out = np.empty((t.pairs.shape[0], layout.OUT_SIZE))
    C = np.empty((t.spheres.shape[0], 4))
    _kernels.pair_distances(W, t.spheres, t.links, t.obstacles, t.obstacle_data, t.pairs,
                            np.inf, C, out)  # fmt: skip
    h = 1e-6
    plus, _ = cm.pair_distances(q + h * np.eye(2), [ob])
    minus, _ = cm.pair_distances(q - h * np.eye(2), [ob])
    fd = (plus[..., layout.OUT_DISTANCE] - minus[..., layout.OUT_DISTANCE]).T / (2 * h)
    grad = np.empty(2)
    for p in range(len(out)):
        _kernels.distance_gradient(fdata, idata, W, out[p], np.empty((6, 2)), grad)
        np.testing.assert_allclose(grad, fd[p], atol=1e-6)


@pytest.mark.parametrize("module", ["kinetree.collision", "kinetree.collision.layout"])
def test_collision_all_names_exist(module):
    import importlib

    mod = importlib.import_module(module)
    namespace: dict[str, object] = {}
    exec(f"from {module} import *", namespace)
    for name in mod.__all__:
        assert name in namespace


def test_obstacles_on_the_dh_panda_point_to_the_meshed_panda() -> None:
    """Issue 32 (friction): the built-in Panda has no shapes; the refusal names the
    meshed Panda (example-robot-data's), and following it works."""
    from kinetree.errors import UnsupportedError
    from kinetree.models.descriptions import description_file, with_meshes

    panda = kinetree.load("panda")
    ball = kinetree.Sphere(0.1, center=(0.5, 0.5, 0.5))
    with pytest.raises(UnsupportedError, match=r"with_meshes\(model\)") as info:
        panda.ik(panda.fk(panda.neutral()), obstacles=[ball])
    assert "example-robot-data" in str(info.value)
    with pytest.raises(UnsupportedError, match="with_meshes"):
        panda.distance(panda.neutral(), obstacles=[ball])
    if description_file("panda") is None:
        pytest.skip("example-robot-data is not installed")
    meshed, note = with_meshes(panda)
    assert note is None
    d = meshed.distance(meshed.neutral(), obstacles=[ball], self_collision=False).distance
    assert 0.0 < d < float(np.linalg.norm(ball.center))  # a distance, from a real shape
