"""Where installed robot description packages keep their URDF files (skip when absent)."""

from __future__ import annotations

from pathlib import Path

import pytest


def example_robot_data() -> Path:
    """The robots folder of example-robot-data, found as the library finds it (skip the
    test when it is not installed)."""
    from kinetree.io.robot_packages import example_robot_data as find

    robots = find()
    if robots is None:
        pytest.skip("example-robot-data is not installed")
    return robots


def pybullet_data() -> Path:
    module = pytest.importorskip("pybullet_data")
    return Path(module.getDataPath())
