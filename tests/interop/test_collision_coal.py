"""Interop: the Panda of example-robot-data (its collision meshes) against coal's exact
distances.

Opt-in, not part of ``make test``: it needs ``pip install example-robot-data coal``
and runs only with ``KINETREE_INTEROP=1``. Checks that the spheres hold every vertex of
every Panda link, that the sphere distances never exceed coal's exact mesh distances
(the spheres contain the meshes) and stay within the fitted overshoot of them, and that
a sphere against a mesh obstacle matches coal to 1e-9.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

if os.environ.get("KINETREE_INTEROP") != "1":
    pytest.skip(
        "interop tests are opt-in: pip install example-robot-data coal, set KINETREE_INTEROP=1",
        allow_module_level=True,
    )

import kinetree
from kinetree import geometry as geo

coal = pytest.importorskip("coal")

from tests.robot_data import example_robot_data  # noqa: E402


@pytest.fixture(scope="module")
def panda() -> tuple[kinetree.Model, kinetree.collision.CollisionModel]:
    robots = example_robot_data()
    d = robots / "panda_description"
    model = kinetree.load(d / "urdf" / "panda.urdf", srdf=d / "srdf" / "panda.srdf")
    return model, kinetree.collision.collision_model(model)


def _coal_shape(g: geo.Geometry):  # type: ignore[no-untyped-def]
    if isinstance(g, geo.Mesh):
        b = coal.BVHModelOBBRSS()
        b.beginModel(len(g.faces), len(g.vertices))
        b.addVertices(np.asarray(g.vertices, dtype=float))
        b.addTriangles(np.asarray(g.faces, dtype=np.int32))
        b.endModel()
        return b
    if isinstance(g, geo.Box):
        return coal.Box(*g.size)
    raise TypeError(g)


def _tf(T: np.ndarray):  # type: ignore[no-untyped-def]
    return coal.Transform3s(np.ascontiguousarray(T[:3, :3]), np.ascontiguousarray(T[:3, 3]))


def _exact(model, T_all, a, b_shape, b_pose):  # type: ignore[no-untyped-def]
    """coal's distance between link ``a``'s collision shapes and one posed shape."""
    Ta = T_all[model.frame_names.index(a)]
    best = np.inf
    for g in model.geometry[a]:
        if g.kind != "collision":
            continue
        d = coal.distance(
            _coal_shape(g),
            _tf(Ta @ g.origin),
            b_shape,
            _tf(b_pose),
            coal.DistanceRequest(),
            coal.DistanceResult(),
        )
        best = min(best, d)
    return best


def test_spheres_hold_every_panda_vertex(panda):
    model, cm = panda
    rs = cm.spheres
    n = 0
    for frame, shapes in model.geometry.items():
        for g in shapes:
            if g.kind != "collision":
                continue
            if isinstance(g, geo.Mesh):
                V = g.vertices
            else:
                V = (
                    np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
                    * 0.5
                    * np.array(g.size)
                )
            V = V @ g.origin[:3, :3].T + g.origin[:3, 3]
            sel = np.array([f == frame for f in rs.frames])
            gap = np.linalg.norm(V[:, None] - rs.centers[sel][None], axis=2) - rs.radii[sel]
            assert np.all(gap.min(axis=1) <= 0.0), frame
            n += len(V)
    assert n > 5000


def test_sphere_distances_bound_coal_from_below(panda):
    model, cm = panda
    obstacles = [
        kinetree.Box(size=(0.6, 0.8, 0.04), pose=kinetree.spatial.translation([0.6, 0, 0.2])),
        kinetree.Sphere(radius=0.08, center=(0.4, 0.3, 0.5)),
    ]
    shapes = [
        (coal.Box(0.6, 0.8, 0.04), obstacles[0].pose),
        (coal.Sphere(0.08), kinetree.spatial.translation([0.4, 0.3, 0.5])),
    ]
    Q = model.random_configuration(25, rng=3)
    rows, names = cm.pair_distances(Q, obstacles, self_collision=False)
    T = model.fk_all(Q)
    worst = 0.0
    for i in range(len(Q)):
        for k, (link, ob) in enumerate(names):
            j = int(ob[-1])
            exact = _exact(model, T[i], link, *shapes[j])
            approx = rows[i, k, kinetree.collision.layout.OUT_DISTANCE]
            if exact > 0:
                assert approx <= exact + 1e-9, (link, ob)
                worst = max(worst, exact - approx)
    assert worst < 0.06  # the spheres reach at most a few cm past the meshes


def test_sphere_against_mesh_obstacle_matches_coal(panda, rng):
    model, _ = panda
    g = next(s for s in model.geometry["panda_link3"] if s.kind == "collision")
    pose = kinetree.spatial.translation([0.2, -0.1, 0.3])
    mesh = kinetree.TriangleMesh(vertices=g.vertices, faces=g.faces, pose=pose)
    rows, _ = kinetree.collision.world.obstacle_rows([mesh])
    table, data = kinetree.collision.layout.pack_obstacle_rows(rows)
    from kinetree.collision._kernels import point_obstacle

    for c in rng.uniform(-0.3, 0.6, (100, 3)):
        sd, *_ = point_obstacle(table, data, 0, *c)
        res = coal.DistanceResult()
        exact = coal.distance(
            _coal_shape(g),
            _tf(pose),
            coal.Sphere(0.02),
            _tf(kinetree.spatial.translation(c)),
            coal.DistanceRequest(),
            res,
        )
        if exact > 1e-6:  # coal reports penetration of a mesh differently; compare outside
            assert sd - 0.02 == pytest.approx(exact, abs=1e-9)
