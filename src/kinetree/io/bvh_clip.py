"""BVH as a :class:`~kinetree.io.clip.Clip`: what :func:`kinetree.read_clip` and
:func:`kinetree.write_clip` do with ``.bvh`` files.

A BVH file holds one take, sampled at its ``Frame Time``; its curves are the channel
values, so sampling it at other times (``fps=``, ``times=``) interpolates every channel
linearly between the two frames around each time (clamped at the ends), as animation
packages play BVH. Writing keeps the clip's own hierarchy and channels when it came from
BVH, and writes any other model's frames (:func:`kinetree.anim.write_motion_bvh`).
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InvalidValueError, UnknownNameError, UnsupportedError
from ._files import as_path
from .bvh import read_bvh, write_bvh
from .clip import Clip, sample_times

__all__ = ["read_bvh_clip", "write_bvh_clip"]


def read_bvh_clip(
    path: str | os.PathLike[str],
    animation: str | int | None = None,
    *,
    fps: float | None = None,
    times: ArrayLike | None = None,
    **options: Any,
) -> Clip:
    """The take of the BVH file ``path`` as a clip (``options``: those of
    :func:`~kinetree.io.bvh.read_bvh`: ``scale``, ``up``, ``positions``).

    ``animation``: None, 0 or the file's stem (a BVH file has one take); ``fps`` /
    ``times`` [s]: resample (see the module docstring), else the file's frames at
    ``k * frame_time``.
    """
    p = as_path(path, "read_clip needs the path of a .bvh file (str or os.PathLike)")
    bvh = read_bvh(p, **options)
    name = p.stem or "bvh"
    if animation not in (None, 0, name):
        raise UnknownNameError(
            f"animation {animation!r} not found in BVH file {str(p)!r}; a BVH file has one "
            f"take: 0 or {name!r}"
        )
    clip = Clip.from_bvh(bvh, name)
    if fps is None and times is None:
        return clip
    t = sample_times(clip.times, fps, times)
    q = _interpolate(clip.times, clip.q, t)
    frame_time = 1.0 / float(fps) if fps is not None else bvh.frame_time
    template = dataclasses.replace(bvh.with_q(q), frame_time=frame_time, frame_time_text=None)
    return dataclasses.replace(clip, q=q, times=t, fps=float(fps or 0.0), bvh=template)


def _interpolate(t0: np.ndarray, q0: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Every column of ``q0`` (at times ``t0``) linearly interpolated at ``t`` (clamped)."""
    if len(t0) == 1:
        return np.repeat(q0, len(t), axis=0)
    k = np.clip(np.searchsorted(t0, t, side="right") - 1, 0, len(t0) - 2)
    u = np.clip((t - t0[k]) / (t0[k + 1] - t0[k]), 0.0, 1.0)[:, None]
    return (1.0 - u) * q0[k] + u * q0[k + 1]


def write_bvh_clip(path: str | os.PathLike[str], clip: Clip) -> None:
    """Write ``clip`` as BVH at ``path``: with its own BVH layout when it came from a BVH
    file (same DoFs), else every frame of its model as a BVH joint
    (:func:`~kinetree.anim.bvh_export.write_motion_bvh`). BVH has one frame time: a
    clip with unevenly spaced frames raises :class:`~kinetree.errors.UnsupportedError`
    (read it with ``fps=`` first)."""
    p = as_path(path, "write_clip needs the path of the .bvh file (str or os.PathLike)")
    if not isinstance(clip, Clip):
        raise InvalidValueError(f"write_bvh_clip needs a Clip, got {type(clip).__name__}")
    if not clip.evenly_spaced:
        raise UnsupportedError(
            f"clip {clip.name!r} has unevenly spaced frames; BVH has one Frame Time: "
            "resample it (read_clip(path, fps=...)) before writing BVH"
        )
    bvh = clip.bvh
    if bvh is not None and bvh.model.joint_names == clip.model.joint_names:
        out = bvh.with_q(clip.q)
        if not np.isclose(out.frame_time, clip.frame_time, rtol=1e-12, atol=0.0):
            out = dataclasses.replace(out, frame_time=clip.frame_time, frame_time_text=None)
        write_bvh(p, out)
        return
    from ..anim.bvh_export import write_motion_bvh

    write_motion_bvh(p, clip.model, clip.q, clip.frame_time)
