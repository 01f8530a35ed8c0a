"""Tracks and per-frame targets, checked at the public edge before any solve.

A *track* is one frame's targets over a clip: ``(T, 4, 4)`` poses, ``(T, 3)``
positions, or a batched :class:`~kinetree.ik.Pose` / :class:`~kinetree.ik.Position`
holding them. :func:`read_tracks` turns a ``{frame: track}`` mapping into
:class:`Tracks` (one float64 array per frame, kinds named, lengths equal, finite, poses
rigid); :func:`read_targets` does the same for one frame of a stream.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...errors import InvalidValueError, NotRigidError, ShapeError, unknown_name
from ...ik.targets import Pose, Position
from ...model import Model

__all__ = ["POSE", "POSITION", "Tracks", "read_targets", "read_tracks"]

#: Track kinds.
POSE = "pose"
POSITION = "position"
_LAST_ROW = np.array([0.0, 0.0, 0.0, 1.0])


@dataclass(frozen=True)
class Tracks:
    """Checked tracks: ``frames[i]`` follows ``arrays[i]`` (``(T, 4, 4)`` for kind
    :data:`POSE`, ``(T, 3)`` for :data:`POSITION`)."""

    frames: tuple[str, ...]
    kinds: tuple[str, ...]
    arrays: tuple[np.ndarray, ...]
    n_frames: int

    def at(self, t: int) -> dict[str, Any]:
        """Frame ``t``'s targets as ``model.ik`` takes them: 4x4 arrays and
        :class:`~kinetree.ik.Position`."""
        return {
            f: (a[t] if k == POSE else Position(a[t]))
            for f, k, a in zip(self.frames, self.kinds, self.arrays)
        }

    def positions(self) -> dict[str, np.ndarray]:
        """``{frame: (T, 3)}``: every track's positions."""
        return {
            f: (a[:, :3, 3] if k == POSE else a)
            for f, k, a in zip(self.frames, self.kinds, self.arrays)
        }

    def raw(self) -> dict[str, np.ndarray]:
        """``{frame: (T, 4, 4) or (T, 3)}``."""
        return dict(zip(self.frames, self.arrays))


def _unwrap(frame: str, track: Any) -> Any:
    if isinstance(track, Pose):
        plain = all(
            getattr(track, n) is None
            for n in (
                "position_mask",
                "orientation_mask",
                "position_weight",
                "orientation_weight",
                "point",
            )
        )
        if not plain:
            raise InvalidValueError(
                f"track of frame {frame!r}: masks, weights and points are not supported in "
                "tracks; give the plain poses"
            )
        return track.T
    if isinstance(track, Position):
        if track.mask is not None or track.weight is not None or track.point is not None:
            raise InvalidValueError(
                f"track of frame {frame!r}: masks, weights and points are not supported in "
                "tracks; give the plain positions"
            )
        return track.xyz
    return track


def _array(frame: str, track: Any, batched: bool) -> tuple[str, np.ndarray]:
    raw = _unwrap(frame, track)
    try:
        a = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidValueError(
            f"track of frame {frame!r} is not numeric (got {type(raw).__name__}); give a "
            "(T, 4, 4) pose or (T, 3) position array"
        ) from None
    lead = 1 if batched else 0
    if a.ndim == lead + 2 and a.shape[-2:] == (4, 4):
        kind = POSE
    elif a.ndim == lead + 1 and a.shape[-1] == 3:
        kind = POSITION
    else:
        want = "(T, 4, 4) poses or (T, 3) positions" if batched else "a 4x4 pose or a 3-vector"
        raise ShapeError(f"track of frame {frame!r} has shape {a.shape}; expected {want}")
    bad = ~np.isfinite(a.reshape(a.shape[0] if batched else 1, -1)).all(axis=1)
    if bad.any():
        where = f" at frame {int(np.argmax(bad))}" if batched else ""
        raise InvalidValueError(f"track of frame {frame!r} has NaN or inf values{where}")
    if kind == POSE:
        rows = a[..., 3, :].reshape(-1, 4)
        off = ~np.all(np.abs(rows - _LAST_ROW) < 1e-9, axis=1)
        if off.any():
            where = f" at frame {int(np.argmax(off))}" if batched else ""
            raise NotRigidError(
                f"pose of frame {frame!r}{where} is not a rigid transform: its last row must "
                "be [0, 0, 0, 1]"
            )
    return kind, np.ascontiguousarray(a)


def _check_frame(model: Model, frame: Any) -> str:
    if not isinstance(frame, str):
        raise InvalidValueError(f"tracks are keyed by frame name; got key {frame!r}")
    if frame not in model.frame_names:
        raise unknown_name("frame", frame, model.frame_names)
    return frame


def read_tracks(model: Model, tracks: Any) -> Tracks:
    """Check ``tracks`` (``{frame: track}``) against ``model``; see the module docstring.

    Raises :class:`~kinetree.errors.UnknownNameError` for a frame the model lacks,
    :class:`~kinetree.errors.ShapeError` for a track of the wrong shape or tracks of
    different lengths, :class:`~kinetree.errors.InvalidValueError` for NaN/inf or an
    empty mapping, :class:`~kinetree.errors.NotRigidError` for a pose that is not rigid.
    """
    if not isinstance(tracks, Mapping) or not tracks:
        raise InvalidValueError(
            "tracks must be a non-empty mapping {frame: (T, 4, 4) or (T, 3) array}, got "
            f"{type(tracks).__name__ if not isinstance(tracks, Mapping) else 'an empty one'}"
        )
    frames, kinds, arrays = [], [], []
    for frame in tracks:
        frames.append(_check_frame(model, frame))
    lengths = {}
    for frame in frames:
        track = tracks[frame]
        raw = _unwrap(frame, track)
        shape = np.shape(raw)
        if not shape:
            raise ShapeError(f"track of frame {frame!r} is a scalar; expected (T, 4, 4) or (T, 3)")
        lengths[frame] = shape[0]
    if len(set(lengths.values())) > 1:
        listed = ", ".join(f"{f}: {n}" for f, n in lengths.items())
        raise ShapeError(f"tracks must all have the same number of frames; got {listed}")
    n = next(iter(lengths.values()))
    if n == 0:
        raise InvalidValueError("tracks have no frames")
    for frame in frames:
        kind, a = _array(frame, tracks[frame], batched=True)
        kinds.append(kind)
        arrays.append(a)
    return Tracks(tuple(frames), tuple(kinds), tuple(arrays), int(n))


def read_targets(model: Model, targets: Any, known: set[str] | None = None) -> dict[str, Any]:
    """One frame's ``{frame: target}`` (4x4 poses, 3-vectors, plain ``Pose`` or
    ``Position``) checked as :func:`read_tracks` checks tracks, as ``model.ik`` targets.
    ``known``: frames already checked (skips the name lookup)."""
    if not isinstance(targets, Mapping) or not targets:
        raise InvalidValueError(
            "targets must be a non-empty mapping {frame: 4x4 pose or 3-vector}, got "
            f"{type(targets).__name__ if not isinstance(targets, Mapping) else 'an empty one'}"
        )
    out: dict[str, Any] = {}
    for frame, target in targets.items():
        if known is None or frame not in known:
            _check_frame(model, frame)
        kind, a = _array(frame, target, batched=False)
        out[frame] = a if kind == POSE else Position(a)
    return out
