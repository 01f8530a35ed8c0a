"""Where installed robot description packages keep their URDF files (skip when absent)."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest


def example_robot_data() -> Path:
    """The robots folder of example-robot-data (a cmeel wheel with no Python module)."""
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("example-robot-data is not installed")
    robots = Path(str(dist.locate_file("cmeel.prefix/share/example-robot-data/robots")))
    if not robots.is_dir():
        pytest.skip(f"example-robot-data has no robots folder at {robots}")
    return robots


def pybullet_data() -> Path:
    module = pytest.importorskip("pybullet_data")
    return Path(module.getDataPath())
