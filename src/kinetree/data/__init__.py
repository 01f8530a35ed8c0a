"""Sample files shipped with kinetree, by short name: ``kinetree.data.path("cmu_walk")``.

The command line accepts these names wherever it takes a BVH file or a model
(``kinetree bvh info cmu_walk``, ``kinetree info biped``), so the README's examples
work from a fresh install. Sources and licences are in ``README.md`` next to the files.

======== ==================== =====================================================
name     file                 what
======== ==================== =====================================================
cmu_walk cmu_12_01_walk.bvh   CMU subject 12 trial 1: a walk, 31 joints, 524 frames
                              at 120 fps, ZYX channels, Y-up
                              (CMU Graphics Lab Motion Capture Database)
biped    biped.xml            a small MJCF humanoid: free torso, ball shoulders and
                              hips, hinge elbows, knees and ankles (written here)
xacro_arm arm.urdf.xacro      a six-joint arm in xacro, its reach the arg ``reach``
                              [m] (written here)
======== ==================== =====================================================
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from ..errors import unknown_name

__all__ = ["FILES", "names", "path"]

#: Short name -> file name inside this package.
FILES: dict[str, str] = {
    "cmu_walk": "cmu_12_01_walk.bvh",
    "biped": "biped.xml",
    "xacro_arm": "arm.urdf.xacro",
}


def names() -> list[str]:
    """The short names of the bundled files, sorted."""
    return sorted(FILES)


def path(name: str) -> Path:
    """Path of the bundled file ``name`` (a short name such as ``"cmu_walk"``).

    The file name itself (``"cmu_12_01_walk.bvh"``) and its stem are accepted
    too. Raises :class:`~kinetree.errors.UnknownNameError` listing the names for
    any other value.
    """
    file = FILES.get(name)
    if file is None:
        file = next((f for f in FILES.values() if name in (f, Path(f).stem)), None)
    if file is None:
        raise unknown_name("data file", name, names())
    # The package is installed as files (setuptools package-data), so this is a real path.
    return Path(str(resources.files(__name__) / file))
