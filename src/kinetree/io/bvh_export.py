"""Deprecated: moved to :mod:`kinetree.anim.bvh_export` (it writes motions, an animation
job); this alias goes in the next release."""

from __future__ import annotations

import warnings

from ..anim.bvh_export import motion_to_bvh, write_motion_bvh

__all__ = ["motion_to_bvh", "write_motion_bvh"]

warnings.warn(
    "kinetree.io.bvh_export moved to kinetree.anim.bvh_export; the old path goes in the "
    "next release",
    DeprecationWarning,
    stacklevel=2,
)
