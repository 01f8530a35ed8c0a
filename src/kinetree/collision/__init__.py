"""Collision: the robot as spheres that contain its geometry, the world's obstacles, and
signed distances between them as compiled kernels.

import kinetree
panda = kinetree.load("panda.urdf", srdf="panda.srdf")
table = kinetree.Box(size=(1.0, 1.0, 0.05), pose=kinetree.spatial.translation([0.5, 0, -0.03]))
ball = kinetree.Sphere(radius=0.1, center=(0.4, 0.2, 0.4))
panda.distance(q, obstacles=[table, ball]).distance   # signed [m], batched over q
panda.in_collision(q, obstacles=[table, ball])

Obstacles are the shapes of :mod:`kinetree.geometry` (``Box``, ``Sphere``, ``Capsule``,
``Cylinder``: one family with a link's shapes) and the world-only ones of :mod:`.world`.
Modules: :mod:`.world` (obstacles), :mod:`.spheres` (the robot approximation),
:mod:`.pairs` (SRDF and link pairs), :mod:`.robot` (the queries), :mod:`.layout` (the
packed tables) and ``_kernels`` (the compiled distances an IK loop calls).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import attach as _attach

if TYPE_CHECKING:
    from . import layout as layout
    from .pairs import adjacent_pairs as adjacent_pairs
    from .pairs import read_srdf as read_srdf
    from .pairs import with_disabled_pairs as with_disabled_pairs
    from .pairs import write_srdf as write_srdf
    from .report import CollisionWarning as CollisionWarning
    from .robot import CollisionModel as CollisionModel
    from .robot import CollisionTables as CollisionTables
    from .robot import DistanceResult as DistanceResult
    from .robot import collision_model as collision_model
    from .robot import distance_query as distance_query
    from .robot import find_disabled_pairs as find_disabled_pairs
    from .spheres import RobotSpheres as RobotSpheres
    from .spheres import robot_spheres as robot_spheres
    from .world import Box as Box
    from .world import Capsule as Capsule
    from .world import Cylinder as Cylinder
    from .world import HalfSpace as HalfSpace
    from .world import Obstacle as Obstacle
    from .world import PointCloud as PointCloud
    from .world import Sphere as Sphere
    from .world import TriangleMesh as TriangleMesh
    from .world import as_obstacle as as_obstacle

# Imported on first use (kinetree._lazy): the IK core reads only :mod:`.layout`.
_LAZY = {
    "layout": ".layout",
    "adjacent_pairs": ".pairs:adjacent_pairs",
    "read_srdf": ".pairs:read_srdf",
    "with_disabled_pairs": ".pairs:with_disabled_pairs",
    "write_srdf": ".pairs:write_srdf",
    "CollisionModel": ".robot:CollisionModel",
    "CollisionTables": ".robot:CollisionTables",
    "CollisionWarning": ".report:CollisionWarning",
    "DistanceResult": ".robot:DistanceResult",
    "collision_model": ".robot:collision_model",
    "distance_query": ".robot:distance_query",
    "find_disabled_pairs": ".robot:find_disabled_pairs",
    "RobotSpheres": ".spheres:RobotSpheres",
    "robot_spheres": ".spheres:robot_spheres",
    "Box": ".world:Box",
    "Capsule": ".world:Capsule",
    "Cylinder": ".world:Cylinder",
    "HalfSpace": ".world:HalfSpace",
    "Obstacle": ".world:Obstacle",
    "PointCloud": ".world:PointCloud",
    "Sphere": ".world:Sphere",
    "TriangleMesh": ".world:TriangleMesh",
    "as_obstacle": ".world:as_obstacle",
}
if not TYPE_CHECKING:  # type checkers read the imports above, and flag unknown names
    __getattr__, __dir__ = _attach(__name__, _LAZY)

__all__ = [
    "Box",
    "Capsule",
    "CollisionModel",
    "CollisionTables",
    "CollisionWarning",
    "Cylinder",
    "DistanceResult",
    "HalfSpace",
    "Obstacle",
    "PointCloud",
    "RobotSpheres",
    "Sphere",
    "TriangleMesh",
    "adjacent_pairs",
    "as_obstacle",
    "collision_model",
    "distance_query",
    "find_disabled_pairs",
    "layout",
    "read_srdf",
    "robot_spheres",
    "with_disabled_pairs",
    "write_srdf",
]
