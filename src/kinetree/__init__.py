"""kinetree: forward and inverse kinematics for robot arms and animated characters.

import kinetree
panda = kinetree.load("panda")
T = panda.fk(panda.neutral())          # 4x4 pose of the flange
result = panda.ik(T @ kinetree.spatial.translation([0.05, 0, 0]))
result.success, result.q
"""

from __future__ import annotations

from . import _compile as _compile  # first: it clears a stale kernel cache
from . import anim as anim
from . import collision as collision
from . import data as data
from . import kinematics as kinematics
from . import models as models
from . import spatial as spatial
from ._warmup import warmup as warmup
from .anim.robot_retarget import retarget_robot as retarget
from .builder import ModelBuilder as ModelBuilder
from .collision import Box as Box
from .collision import Capsule as Capsule
from .collision import Cylinder as Cylinder
from .collision import HalfSpace as HalfSpace
from .collision import PointCloud as PointCloud
from .collision import Sphere as Sphere
from .collision import TriangleMesh as TriangleMesh
from .errors import FileFormatError as FileFormatError
from .errors import InvalidValueError as InvalidValueError
from .errors import KinetreeError as KinetreeError
from .errors import ModelStructureError as ModelStructureError
from .errors import NotRigidError as NotRigidError
from .errors import ShapeError as ShapeError
from .errors import UnknownNameError as UnknownNameError
from .errors import UnsupportedError as UnsupportedError
from .ik import Direction as Direction
from .ik import IKOptions as IKOptions
from .ik import IKResult as IKResult
from .ik import Orientation as Orientation
from .ik import Pose as Pose
from .ik import Position as Position
from .io import load as load
from .io.bvh import BVHClip as BVHClip
from .io.bvh import read_bvh as read_bvh
from .io.bvh import write_bvh as write_bvh
from .model import JointType as JointType
from .model import Model as Model

__version__ = "0.1.0"

__all__ = [
    "BVHClip",
    "Box",
    "Capsule",
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
    "Sphere",
    "TriangleMesh",
    "UnknownNameError",
    "UnsupportedError",
    "anim",
    "collision",
    "data",
    "kinematics",
    "load",
    "models",
    "read_bvh",
    "retarget",
    "spatial",
    "warmup",
    "write_bvh",
]
