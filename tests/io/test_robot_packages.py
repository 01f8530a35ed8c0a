"""Robots by name (``kinetree.io.robot_packages``): one registry and one finder of
example-robot-data, read by ``kinetree.load`` and by retargeting alike."""

from __future__ import annotations

from pathlib import Path

import pytest

import kinetree
from kinetree.errors import FileFormatError
from kinetree.io import robot_packages

URDF = """<robot name="tiny">
  <link name="pelvis"/><link name="thigh"/>
  <joint name="hip" type="revolute"><parent link="pelvis"/><child link="thigh"/>
    <origin xyz="0 0 -0.3"/><axis xyz="0 1 0"/><limit lower="-1" upper="1"/></joint>
</robot>"""


def test_robots_by_name_come_from_one_registry_and_one_finder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``load("g1")`` reads the file retargeting's ``"g1"`` reads, found by the one finder
    of example-robot-data (here pointed at a folder holding a tiny stand-in)."""
    from kinetree.anim.retarget.robots import load_robot

    rel = robot_packages.ROBOT_FILES["g1"]
    (tmp_path / rel).parent.mkdir(parents=True)
    (tmp_path / rel).write_text(URDF)
    monkeypatch.setattr(robot_packages, "example_robot_data", lambda: tmp_path)
    model = kinetree.load("g1")
    assert model.name == "tiny" and model.joint_names == ("hip",)
    free = kinetree.load("g1", floating_base=True)
    robot = load_robot("g1")
    assert robot.joint_names == free.joint_names and robot.floating_base == "root_joint"


def test_a_robot_by_name_without_its_package_says_how_to_get_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(robot_packages, "example_robot_data", lambda: None)
    with pytest.raises(FileFormatError, match="pip install example-robot-data"):
        kinetree.load("talos")


def test_unknown_names_list_the_registry() -> None:
    with pytest.raises(kinetree.UnknownNameError, match="g1, h1, talos"):
        kinetree.load("no_such_robot")
