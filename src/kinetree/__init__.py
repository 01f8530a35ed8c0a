"""kinetree: forward and inverse kinematics for robot arms and animated characters."""

from __future__ import annotations

from .builder import ModelBuilder as ModelBuilder
from .errors import (
    FileFormatError as FileFormatError,
    InvalidValueError as InvalidValueError,
    KinetreeError as KinetreeError,
    ModelStructureError as ModelStructureError,
    NotRigidError as NotRigidError,
    ShapeError as ShapeError,
    UnknownNameError as UnknownNameError,
    UnsupportedError as UnsupportedError,
)
from . import models as models, spatial as spatial
from .io import load as load
from .model import Model as Model

__version__ = "0.1.0"

__all__ = [
    "BVHClip",
    "FileFormatError",
    "InvalidValueError",
    "KinetreeError",
    "Model",
    "ModelBuilder",
    "ModelStructureError",
    "NotRigidError",
    "ShapeError",
    "UnknownNameError",
    "UnsupportedError",
    "load",
    "read_bvh",
    "write_bvh",
]

from .io.bvh import BVHClip as BVHClip
from .io.bvh import read_bvh as read_bvh
from .io.bvh import write_bvh as write_bvh
