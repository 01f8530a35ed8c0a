"""File formats -> Model. Each loader turns one format into a :class:`Model` and nothing else.

Choosing a loader by a file's suffix (or a built-in model by name) is one floor up, in
:func:`kinetree.load` (:mod:`kinetree.loading`); writing a motion as BVH is animation
(:mod:`kinetree.anim.bvh_export`). Their old names here are deprecated aliases.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _deprecated
from .._lazy import attach as _attach

if TYPE_CHECKING:
    from .bvh import BVHClip as BVHClip
    from .bvh import read_bvh as read_bvh
    from .bvh import write_bvh as write_bvh
    from .clip import Clip as Clip
    from .dh import DHRow as DHRow
    from .dh import from_dh as from_dh
    from .mjcf import MJCFWarning as MJCFWarning
    from .mjcf import from_mujoco as from_mujoco
    from .mjcf import load_mjcf as load_mjcf
    from .skin import Skin as Skin
    from .skin import deform as deform
    from .urdf import load_urdf as load_urdf

# Each format's module is imported when it is first used (kinetree._lazy).
_LAZY = {
    "BVHClip": ".bvh:BVHClip",
    "read_bvh": ".bvh:read_bvh",
    "write_bvh": ".bvh:write_bvh",
    "Clip": ".clip:Clip",
    "Skin": ".skin:Skin",
    "deform": ".skin:deform",
    "DHRow": ".dh:DHRow",
    "from_dh": ".dh:from_dh",
    "MJCFWarning": ".mjcf:MJCFWarning",
    "from_mujoco": ".mjcf:from_mujoco",
    "load_mjcf": ".mjcf:load_mjcf",
    "load_urdf": ".urdf:load_urdf",
}

if not TYPE_CHECKING:  # type checkers read the imports above, and flag unknown names
    # Names that moved up a floor are served from kinetree._deprecated's table.
    _lazy_getattr, _lazy_dir = _attach(__name__, _LAZY)
    __getattr__, _old_dir = _deprecated.attributes(__name__, _lazy_getattr)

    def __dir__() -> list[str]:
        return sorted(set(_lazy_dir()) | set(_old_dir()))


__all__ = [
    "BVHClip",
    "Clip",
    "DHRow",
    "MJCFWarning",
    "Skin",
    "deform",
    "from_dh",
    "from_mujoco",
    "load_mjcf",
    "load_urdf",
    "read_bvh",
    "write_bvh",
]

_deprecated.module_paths(__name__)
