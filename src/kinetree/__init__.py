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
]
