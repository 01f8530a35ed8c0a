"""File formats -> Model. Each loader turns one format into a :class:`Model` and nothing else.

Choosing a loader by a file's suffix (or a built-in model by name) is one floor up, in
:func:`kinetree.load` (:mod:`kinetree.loading`); writing a motion as BVH is animation
(:mod:`kinetree.anim.bvh_export`). Their old names here are deprecated aliases.
"""

from __future__ import annotations

import importlib
import warnings
from typing import TYPE_CHECKING, Any

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
#: Names that moved up a floor: old name -> new place (deprecated aliases, one release).
_MOVED = {
    "load": "kinetree.loading:load",
    "write_motion_bvh": "kinetree.anim.bvh_export:write_motion_bvh",
}

if not TYPE_CHECKING:  # type checkers read the imports above, and flag unknown names
    _lazy_getattr, __dir__ = _attach(__name__, _LAZY)

    def __getattr__(name: str) -> Any:
        if name in _MOVED:
            module_name, _, attr = _MOVED[name].partition(":")
            warnings.warn(
                f"kinetree.io.{name} moved to {module_name}.{attr}; the old name goes in "
                "the next release",
                DeprecationWarning,
                stacklevel=2,
            )
            return getattr(importlib.import_module(module_name), attr)
        return _lazy_getattr(name)


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
