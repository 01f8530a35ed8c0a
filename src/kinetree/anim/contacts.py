"""Foot contacts of a motion: when a foot is planted, from its height and speed.

A frame is a contact of a foot when the foot point is low (within ``max_height`` of
its planted level: the ``level_percentile`` of its height over the clip) and slow
(speed below ``max_speed``), and, within one contact, no more than ``max_rise`` above
its lowest there (an ankle rising as the heel lifts is no longer planted). Runs
shorter than ``min_frames`` are dropped and gaps shorter than ``fill_frames`` between
two contacts are filled, so one noisy frame neither plants a swinging foot nor lifts
a planted one.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._validate import as_array
from ..errors import InvalidValueError, ShapeError

__all__ = ["contact_intervals", "detect_contacts", "point_speeds"]


def point_speeds(points: ArrayLike, fps: float) -> np.ndarray:
    """Speeds ``(n,)`` [length unit / s] of a point path ``(n, 3)``: central differences
    inside, one-sided at the ends; 0 for a one-frame path."""
    p = as_array(points, "points", (3,))
    if p.ndim != 2:
        raise ShapeError(f"points must have shape (n_frames, 3), got {p.shape}")
    n = p.shape[0]
    if n < 2:
        return np.zeros(n)
    v = np.gradient(p, axis=0) * float(fps)
    return np.asarray(np.linalg.norm(v, axis=1))


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """``[(start, stop), ...]`` of the True runs of a boolean array (stop exclusive)."""
    m = np.concatenate([[False], np.asarray(mask, dtype=bool), [False]])
    edges = np.flatnonzero(m[1:] != m[:-1])
    return [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2])]


def contact_intervals(contacts: ArrayLike) -> list[tuple[int, int]]:
    """The contact runs ``[(start, stop), ...]`` of a boolean array (stop exclusive)."""
    return _runs(np.asarray(contacts, dtype=bool))


def detect_contacts(
    points: ArrayLike,
    fps: float,
    *,
    up: int = 2,
    max_height: float = 0.05,
    max_speed: float = 0.35,
    level_percentile: float = 5.0,
    max_rise: float | None = 0.015,
    min_frames: int = 3,
    fill_frames: int = 3,
) -> np.ndarray:
    """Contact flags ``(n,)`` of one foot point path ``(n, 3)``.

    Args:
        points: the foot point (an ankle or a toe) in every frame [m, or any length
            unit with the thresholds in it].
        fps: frames per second [1/s].
        up: index of the vertical axis (2: z-up).
        max_height: how far above its planted level the point may be [m].
        max_speed: how fast it may move [m/s].
        level_percentile: the planted level is this percentile of the heights (a low
            one, robust to a few frames through the floor).
        max_rise: within one contact, how far the point may rise above its lowest in
            that contact [m] (a heel lifting off ends the contact of an ankle before
            its toe leaves the ground); None: no limit.
        min_frames: contact runs shorter than this are dropped.
        fill_frames: gaps between contacts shorter than this are filled.
    """
    p = as_array(points, "points", (3,))
    if p.ndim != 2 or p.shape[0] < 1:
        raise ShapeError(f"points must have shape (n_frames >= 1, 3), got {p.shape}")
    if up not in (0, 1, 2):
        raise InvalidValueError(f"up must be 0, 1 or 2 (the vertical axis), got {up!r}")
    for name, v in (("fps", fps), ("max_height", max_height), ("max_speed", max_speed)):
        if not (np.isfinite(v) and v > 0):
            raise InvalidValueError(f"{name} must be a positive number, got {v!r}")
    h = p[:, up]
    level = float(np.percentile(h, level_percentile))
    low = h - level <= max_height
    slow = point_speeds(p, fps) <= max_speed
    contact = low & slow
    if max_rise is not None:
        for a, b in _runs(contact):
            contact[a:b] = h[a:b] - h[a:b].min() <= max_rise
    for a, b in _runs(~contact):
        if 0 < a and b < len(contact) and b - a < fill_frames:
            contact[a:b] = True
    for a, b in _runs(contact):
        if b - a < min_frames:
            contact[a:b] = False
    return contact
