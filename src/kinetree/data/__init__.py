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

import os
from importlib import resources
from pathlib import Path

from ..errors import InvalidValueError, unknown_name

__all__ = ["FILES", "clip_path", "names", "path"]

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


def clip_path(clip: str | os.PathLike[str]) -> Path:
    """A BVH clip given as a path, or as the name of a bundled clip (``"cmu_walk"``): what
    the command line and :func:`kinetree.retarget` both accept. An existing path wins
    over a name; anything else raises :class:`~kinetree.errors.InvalidValueError`
    listing the bundled clips (a path with a folder or a suffix is returned as it is, for
    the reader to say that it does not exist)."""
    p = Path(clip)
    if p.exists():
        return p
    if isinstance(clip, str):
        try:
            bundled = path(clip)
        except KeyError:
            bundled = None
        if bundled is not None and bundled.suffix == ".bvh":
            return bundled
    if p.suffix or len(p.parts) > 1:
        return p  # a file name: the reader says it does not exist
    clips = [n for n in names() if FILES[n].endswith(".bvh")]
    raise InvalidValueError(
        f"{str(clip)!r} is not a file, nor a bundled clip; bundled clips are: {', '.join(clips)}"
    )
