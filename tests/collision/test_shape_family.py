"""One shape family: ``kinetree.Box`` (an obstacle) and ``kinetree.geometry.Box`` (a
link's shape) are one class with a pose, and so are Sphere, Capsule and Cylinder."""

from __future__ import annotations

import numpy as np
import pytest

import kinetree
from kinetree import geometry
from kinetree.collision.world import as_obstacle, obstacle_rows
from kinetree.spatial import rot_x, translation


@pytest.mark.parametrize("name", ["Box", "Sphere", "Capsule", "Cylinder"])
def test_one_class_per_name(name: str) -> None:
    assert getattr(kinetree, name) is getattr(geometry, name)
    assert getattr(kinetree.collision, name) is getattr(geometry, name)


def test_pose_and_origin_are_one_matrix() -> None:
    T = translation([0.1, 0.2, 0.3]) @ rot_x(0.4)
    shapes = [kinetree.Box((1, 2, 3), T), kinetree.Capsule(0.1, 0.5, T),
              kinetree.Cylinder(0.1, 0.5, pose=T), geometry.Box((1, 1, 1), origin=T)]  # fmt: skip
    for shape in shapes:
        np.testing.assert_array_equal(shape.pose, T)
        assert shape.pose is shape.origin
    ball = kinetree.Sphere(0.2, (1.0, 2.0, 3.0))
    np.testing.assert_array_equal(ball.center, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(ball.pose, translation([1.0, 2.0, 3.0]))
    with pytest.raises(kinetree.InvalidValueError, match="not both"):
        kinetree.Box((1, 1, 1), T, origin=T)
    with pytest.raises(kinetree.InvalidValueError, match="not both"):
        kinetree.Sphere(0.1, (0, 0, 0), pose=T)


def test_a_links_shape_is_an_obstacle_where_it_is_placed() -> None:
    # A collision shape of a link, placed in the world at the link's pose, is the same
    # obstacle as one built there directly (its distance rows are equal).
    link_shape = geometry.Capsule(radius=0.04, length=0.25, kind="collision",
                                  origin=translation([0, 0, 0.1]))  # fmt: skip
    T_world_link = translation([0.5, -0.2, 0.3]) @ rot_x(0.3)
    placed = as_obstacle(link_shape, T_world_link)
    built = kinetree.Capsule(0.04, 0.25, T_world_link @ translation([0, 0, 0.1]))
    (row_a,), _ = obstacle_rows([placed])
    (row_b,), _ = obstacle_rows([built])
    assert row_a[0] == row_b[0] and row_a[3] == row_b[3]
    np.testing.assert_allclose(row_a[1], row_b[1], atol=1e-15)
    np.testing.assert_array_equal(row_a[2], row_b[2])
    assert as_obstacle(built) is built  # a primitive needs no copy
