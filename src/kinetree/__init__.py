"""kinetree: forward and inverse kinematics for robot arms and animated characters.

import kinetree
panda = kinetree.load("panda")
T = panda.fk(panda.neutral())          # 4x4 pose of the flange
result = panda.ik(T @ kinetree.spatial.translation([0.05, 0, 0]))
result.success, result.q

Every name below is imported on first use (:mod:`kinetree._lazy`): ``import kinetree``
costs a few milliseconds, and loading the Panda and solving never imports the collision,
animation or file-format modules it does not use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import _compile as _compile  # first: it clears a stale kernel cache
from ._lazy import attach as _attach
from .errors import FileFormatError as FileFormatError
from .errors import InvalidValueError as InvalidValueError
from .errors import KinetreeError as KinetreeError
from .errors import ModelStructureError as ModelStructureError
from .errors import NotRigidError as NotRigidError
from .errors import ShapeError as ShapeError
from .errors import UnknownNameError as UnknownNameError
from .errors import UnsupportedError as UnsupportedError

if TYPE_CHECKING:
    from . import anim as anim
    from . import collision as collision
    from . import data as data
    from . import kinematics as kinematics
    from . import learn as learn
    from . import models as models
    from . import spatial as spatial
    from ._warmup import warmup as warmup
    from .anim.retarget.human_to_robot import retarget_robot as retarget
    from .builder import ModelBuilder as ModelBuilder
    from .collision.world import HalfSpace as HalfSpace
    from .collision.world import PointCloud as PointCloud
    from .collision.world import TriangleMesh as TriangleMesh
    from .geometry import Box as Box
    from .geometry import Capsule as Capsule
    from .geometry import Cylinder as Cylinder
    from .geometry import Sphere as Sphere
    from .ik.options import IKOptions as IKOptions
    from .ik.result import IKResult as IKResult
    from .ik.targets import Direction as Direction
    from .ik.targets import Orientation as Orientation
    from .ik.targets import Pose as Pose
    from .ik.targets import Position as Position
    from .io.bvh import BVHClip as BVHClip
    from .io.bvh import read_bvh as read_bvh
    from .io.bvh import write_bvh as write_bvh
    from .io.clip import Clip as Clip
    from .io.skin import Skin as Skin
    from .loading import load as load
    from .loading import read_clip as read_clip
    from .loading import write_clip as write_clip
    from .model import JointType as JointType
    from .model import Model as Model

__version__ = "0.1.0"

#: Public name -> where it lives (imported on first access).
_LAZY = {
    "anim": ".anim",
    "collision": ".collision",
    "data": ".data",
    "kinematics": ".kinematics",
    "learn": ".learn",
    "models": ".models",
    "spatial": ".spatial",
    "warmup": "._warmup:warmup",
    "retarget": ".anim.retarget.human_to_robot:retarget_robot",
    "ModelBuilder": ".builder:ModelBuilder",
    "Box": ".geometry:Box",
    "Capsule": ".geometry:Capsule",
    "Cylinder": ".geometry:Cylinder",
    "Sphere": ".geometry:Sphere",
    "HalfSpace": ".collision.world:HalfSpace",
    "PointCloud": ".collision.world:PointCloud",
    "TriangleMesh": ".collision.world:TriangleMesh",
    "IKOptions": ".ik.options:IKOptions",
    "IKResult": ".ik.result:IKResult",
    "Direction": ".ik.targets:Direction",
    "Orientation": ".ik.targets:Orientation",
    "Pose": ".ik.targets:Pose",
    "Position": ".ik.targets:Position",
    "load": ".loading:load",
    "BVHClip": ".io.bvh:BVHClip",
    "read_bvh": ".io.bvh:read_bvh",
    "write_bvh": ".io.bvh:write_bvh",
    "Clip": ".io.clip:Clip",
    "Skin": ".io.skin:Skin",
    "read_clip": ".loading:read_clip",
    "write_clip": ".loading:write_clip",
    "JointType": ".model:JointType",
    "Model": ".model:Model",
}
if not TYPE_CHECKING:  # type checkers read the imports above, and flag unknown names
    __getattr__, __dir__ = _attach(__name__, _LAZY)

__all__ = [
    "BVHClip",
    "Box",
    "Capsule",
    "Clip",
    "Cylinder",
    "Direction",
    "FileFormatError",
    "HalfSpace",
    "IKOptions",
    "IKResult",
    "InvalidValueError",
    "JointType",
    "KinetreeError",
    "Model",
    "ModelBuilder",
    "ModelStructureError",
    "NotRigidError",
    "Orientation",
    "PointCloud",
    "Pose",
    "Position",
    "ShapeError",
    "Skin",
    "Sphere",
    "TriangleMesh",
    "UnknownNameError",
    "UnsupportedError",
    "anim",
    "collision",
    "data",
    "kinematics",
    "learn",
    "load",
    "models",
    "read_bvh",
    "read_clip",
    "retarget",
    "spatial",
    "warmup",
    "write_bvh",
    "write_clip",
]
