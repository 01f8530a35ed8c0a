"""Smooth motion between keyframe poses: slerp for ball joints, linear for the rest."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._validate import as_array, check_memory, check_positive
from ..errors import InvalidValueError, ShapeError
from ..model import Model
from ..spatial import (
    decompose_all,
    matrix_to_quaternion,
    quaternion_to_matrix,
    sequence_matrix,
    slerp,
)
from .motion import Motion
from .rotations import ball_joints

__all__ = ["EASES", "interpolate"]

#: Timing curves ``u -> u'`` on each segment (``u`` in [0, 1]).
EASES = ("linear", "smoothstep")


def _ease(u: np.ndarray, ease: str) -> np.ndarray:
    if ease == "linear":
        return u
    if ease == "smoothstep":  # 3u^2 - 2u^3: zero velocity at every keyframe
        return u * u * (3.0 - 2.0 * u)
    raise InvalidValueError(f"ease must be one of {', '.join(EASES)}; got {ease!r}")


def _segments(
    n_keys: int,
    times: ArrayLike | None,
    n_frames: int | Sequence[int] | None,
    fps: float,
    frame_bytes: int,
) -> tuple[np.ndarray, np.ndarray]:
    """``(seg, u)`` per output frame: segment index and position in it, in [0, 1]; a
    motion whose frames of ``frame_bytes`` each would not fit is refused first."""
    if n_keys == 1:
        return np.zeros(1, dtype=np.int64), np.zeros(1)
    n_seg = n_keys - 1
    if times is not None and n_frames is not None:
        raise InvalidValueError("give either times= or n_frames=, not both")
    if times is not None:
        t = as_array(times, "times")
        if t.shape != (n_keys,):
            raise ShapeError(f"times must have one entry per keyframe ({n_keys}), got {t.shape}")
        with np.errstate(over="ignore"):  # an overflowing span is inf: refused below
            if np.any(np.diff(t) <= 0.0):
                raise InvalidValueError("times must be strictly increasing")
            span = float((t[-1] - t[0]) * fps)
        _check_frames(
            span + 1.0, frame_bytes, f"times from {t[0]:g} s to {t[-1]:g} s at {fps:g} fps"
        )
        n = round(span) + 1
        ts = np.minimum(t[0] + np.arange(n) / fps, t[-1])
        ts[-1] = t[-1]
        seg = np.clip(np.searchsorted(t, ts, side="right") - 1, 0, n_seg - 1)
        u = np.clip((ts - t[seg]) / (t[seg + 1] - t[seg]), 0.0, 1.0)
        return seg, u
    if n_frames is None:
        n_frames = max(1, round(fps))
    counts = np.broadcast_to(np.asarray(n_frames), (n_seg,))
    if counts.dtype.kind not in "iu" or np.any(counts < 1):
        raise InvalidValueError(
            f"n_frames must be a positive integer (or one per segment), got {n_frames!r}"
        )
    _check_frames(sum(int(c) for c in counts) + 1, frame_bytes, f"n_frames={n_frames!r}")
    segs = [np.full(int(c), s, dtype=np.int64) for s, c in enumerate(counts)]
    us = [np.arange(int(c)) / int(c) for c in counts]
    seg = np.concatenate([*segs, [n_seg - 1]])
    u = np.concatenate([*us, [1.0]])
    return seg, u


def _check_frames(n: float, frame_bytes: int, why: str) -> None:
    shown = f"{int(n):,}" if n < 1e15 else f"{n:.3g}"
    check_memory(
        n * frame_bytes,
        f"a motion of {shown} frames ({why})",
        "ask for fewer frames (n_frames=, times= or fps=)",
    )


def interpolate(
    model: Model,
    keyframes: ArrayLike,
    times: ArrayLike | None = None,
    *,
    n_frames: int | Sequence[int] | None = None,
    fps: float = 30.0,
    ease: str = "linear",
    name: str = "interpolate",
) -> Motion:
    """A motion through ``keyframes`` ``(K, dof)``: slerp for ball joints, linear otherwise.

    Ball joints (:func:`~kinetree.anim.rotations.ball_joints`: a group of three
    revolute DoFs at one point, e.g. the humanoid's ``"shoulder_r"`` or a BVH
    joint's ``z, y, x`` rotation channels) are interpolated as rotations: the
    group's local rotation ``R = exp([n1] q1) exp([n2] q2) exp([n3] q3)`` at both
    keyframes becomes a quaternion, is slerped (the geodesic: the rotation angle
    from the first key grows linearly in the segment parameter), and is turned
    back into the group's angles by the closed-form decomposition of that axis
    sequence. Of the decomposition's branches (and 2 pi shifts) the one nearest the
    previous frame is taken, so the angles are continuous within a segment. Every
    other DoF (single-DoF joints, two-axis groups, prismatic DoFs such as a BVH
    root's position) is interpolated linearly. Keyframes are reproduced exactly.
    Ball-joint angles between keyframes are not clipped to the joint limits.

    Timing (one of):
        times: keyframe times ``(K,)`` [s], strictly increasing; frames are sampled
            every ``1 / fps`` s from ``times[0]``, and the last frame is the last
            keyframe (a keyframe between lands on a frame when its time is a
            multiple of ``1 / fps``).
        n_frames: frames per segment (one int for all, or ``K - 1`` ints): segment
            ``i`` has ``n_frames[i]`` frames starting at keyframe ``i``; the last
            keyframe is the final frame, so there are ``sum(n_frames) + 1`` frames
            and every keyframe is a frame. Default: ``round(fps)`` (1 s per
            segment).

    Args:
        model: the model.
        keyframes: configurations ``(K, dof)`` (or a list of ``(dof,)`` arrays), K >= 1.
        fps: frames per second [1/s].
        ease: timing within each segment: ``"linear"`` or ``"smoothstep"``
            (``3u^2 - 2u^3``: eases in and out of every keyframe).
        name: the motion's name.

    Returns:
        A :class:`Motion`; ``metadata["keyframe_index"]`` gives the frame of each
        keyframe hit exactly (``-1`` where a time falls between frames) and
        ``metadata["ball_joints"]`` the groups slerped.
    """
    fps = check_positive(fps, "fps")
    keys = as_array(keyframes, "keyframes", (model.nq,))
    if keys.ndim == 1:
        keys = keys[None, :]
    if keys.ndim != 2 or keys.shape[0] < 1:
        raise ShapeError(f"keyframes must have shape (K, {model.nq}), got {keys.shape}")
    K = keys.shape[0]
    # Per frame: the result and its two keyframes (nq each), the segment, u and its ease.
    seg, u = _segments(K, times, n_frames, fps, 8 * (3 * model.nq + 6))
    v = _ease(u, ease)
    if K == 1:
        q = keys.copy()
    else:
        a = keys[seg]
        b = keys[seg + 1]
        q = a + v[:, None] * (b - a)
    at_a = u == 0.0
    at_b = u == 1.0
    balls = ball_joints(model) if K > 1 else {}
    for ball in balls.values():
        _slerp_ball(q, keys, seg, v, at_a, at_b, ball.dofs, ball.axes)
    if K > 1:
        # Quaternion joints (ball, free): slerp on their own numbers.
        for k in model.qv.ball_nodes:
            s_ = int(model.q_index[k])
            qs = model.normalize(keys)[:, s_ : s_ + 4]
            q[:, s_ : s_ + 4] = slerp(qs[seg], qs[seg + 1], v)
    # Keyframes exactly (no rounding from a + 1 * (b - a)).
    q[at_a] = keys[seg[at_a]]
    if K > 1:
        q[at_b] = keys[seg[at_b] + 1]
    key_index = np.full(K, -1, dtype=np.int64)
    for i in range(q.shape[0]):
        k = int(seg[i]) + (1 if at_b[i] else 0) if K > 1 else 0
        if (at_a[i] or at_b[i]) and key_index[k] < 0:
            key_index[k] = i
    meta: dict[str, Any] = {"keyframe_index": key_index, "ball_joints": tuple(balls)}
    return Motion(model=model, q=q, fps=fps, name=name, metadata=meta)


def _slerp_ball(
    q: np.ndarray,
    keys: np.ndarray,
    seg: np.ndarray,
    v: np.ndarray,
    at_a: np.ndarray,
    at_b: np.ndarray,
    dofs: tuple[int, int, int],
    axes: np.ndarray,
) -> None:
    """Overwrite ``q[:, dofs]`` with the slerped rotation's angles, in place."""
    idx = list(dofs)
    ang = keys[:, idx]  # (K, 3)
    quats = matrix_to_quaternion(sequence_matrix(ang, axes))  # (K, 4)
    qs = slerp(quats[seg], quats[seg + 1], v)
    cand = decompose_all(quaternion_to_matrix(qs), axes)  # (n, 2, 3)
    out = q[:, idx]
    prev = ang[seg[0]]
    for i in range(q.shape[0]):
        if at_a[i]:
            prev = ang[seg[i]]
        elif at_b[i]:
            prev = ang[seg[i] + 1]
        else:
            c = cand[i]
            c = c - 2.0 * np.pi * np.round((c - prev) / (2.0 * np.pi))
            k = int(np.argmin(np.max(np.abs(c - prev), axis=1)))
            prev = c[k]
        out[i] = prev
    q[:, idx] = out
