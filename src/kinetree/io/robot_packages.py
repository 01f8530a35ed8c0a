"""Robots by name from installed description packages: one finder, one registry.

example-robot-data (``pip install example-robot-data``, a cmeel wheel) installs URDFs of
many robots under ``cmeel.prefix/share/example-robot-data/robots``. Everything that looks
for it asks :func:`example_robot_data` (the built-in models' meshes, ``package://`` paths
in URDF files, retargeting's robots), and :data:`ROBOT_FILES` names the robots that
:func:`kinetree.load` and :func:`kinetree.retarget` take by name (:func:`robot_file`).
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
import sys
from pathlib import Path

from ..errors import FileFormatError

__all__ = ["ROBOT_FILES", "example_robot_data", "robot_file"]

#: Where example-robot-data's wheel puts its robots, relative to the distribution.
SHARE = "cmeel.prefix/share/example-robot-data/robots"
#: Robots taken by name from example-robot-data: name -> file under its robots folder.
ROBOT_FILES = {
    "g1": "g1_description/urdf/g1_29dof_rev_1_0.urdf",
    "h1": "h1_description/urdf/h1.urdf",
    "talos": "talos_data/robots/talos_reduced.urdf",
}


@functools.lru_cache(maxsize=1)
def example_robot_data() -> Path | None:
    """The robots folder of the installed example-robot-data, or None when absent: the
    distribution's share folder (its wheel), else ``sys.prefix/share/...``, else the
    ``example_robot_data`` module's own ``robots`` folder (a source install)."""
    candidates = []
    try:
        dist = importlib.metadata.distribution("example-robot-data")
        candidates.append(Path(str(dist.locate_file(SHARE))))
    except importlib.metadata.PackageNotFoundError:
        pass
    candidates.append(Path(sys.prefix) / "share" / "example-robot-data" / "robots")
    try:
        spec = importlib.util.find_spec("example_robot_data")
    except (ImportError, ValueError):
        spec = None
    for loc in (spec.submodule_search_locations or []) if spec else []:
        candidates.append(Path(loc) / "robots")
    return next((c for c in candidates if c.is_dir()), None)


def robot_file(name: str) -> Path:
    """The URDF of robot ``name`` (a key of :data:`ROBOT_FILES`) in example-robot-data.

    Raises :class:`~kinetree.errors.FileFormatError` saying how to get it when the
    package (or the file in it) is not installed."""
    root = example_robot_data()
    path = None if root is None else root / ROBOT_FILES[name]
    if path is None or not path.is_file():
        raise FileFormatError(
            f"robot {name!r} comes from the example-robot-data package"
            + (" (not installed)" if root is None else f", which has no {ROBOT_FILES[name]}")
            + "; `pip install example-robot-data`, or pass the robot's URDF file"
        )
    return path
