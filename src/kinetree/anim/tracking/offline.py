"""Offline tracking: a whole clip at once, looking ahead and behind.

:func:`track` runs in passes:

1. the live :class:`~.tracker.Tracker` over the clip (causal; every target met);
2. :data:`PASSES` times: the motion smoothed in time (a Gaussian of
   :data:`SMOOTH_SECONDS`, zero phase, in the tangent space of the configuration; with a
   temporal prior its offline guess blended in on the first pass), the planted intervals
   of untracked feet found on it (:func:`kinetree.anim.detect_contacts`) and each pinned
   at its median position, and every frame solved again from the smoothed configuration
   (:class:`~._solve.FrameSolver`): the targets are met exactly again, and what they
   leave free keeps the smooth motion.

The result is a :class:`~kinetree.anim.Motion` of the caller's model with, in
``metadata``: ``success`` (T,), ``position_error`` and ``orientation_error`` (T,
n_targets) [length unit, rad] measured by FK, ``frames`` (the targets' order),
``contacts`` ``{side: (T,) bool}`` and ``foot_skate`` ``{side: mean horizontal speed
while planted}`` [length unit / s] of the untracked feet, ``prior`` and ``anatomy``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..._validate import check_model
from ...ik.targets import Position
from ...model import Model
from ..contacts import detect_contacts
from ..motion import Motion
from ._guides import MotionGuide
from ._skeleton import Skeleton
from ._solve import target_errors
from ._tracks import read_tracks
from .tracker import Tracker, check_rate

__all__ = ["PASSES", "SMOOTH_SECONDS", "foot_skate", "smooth", "track"]

#: Smoothing-and-solving passes after the live pass.
PASSES = 2
#: Standard deviation of the Gaussian smoothing in time [s].
SMOOTH_SECONDS = 0.04


def smooth(model: Model, q: np.ndarray, sigma_frames: float) -> np.ndarray:
    """``q`` ``(T, nq)`` smoothed by a Gaussian of ``sigma_frames`` frames, zero phase,
    in the tangent space around each frame (the ends held)."""
    n = q.shape[0]
    if sigma_frames <= 0.0 or n < 3:
        return q.copy()
    radius = max(1, int(np.ceil(3.0 * sigma_frames)))
    offsets = np.arange(-radius, radius + 1)
    w = np.exp(-0.5 * (offsets / sigma_frames) ** 2)
    w /= w.sum()
    idx = np.arange(n)
    quats = len(model.qv.ball_nodes) > 0
    acc = np.zeros((n, model.nv))
    for k, wk in zip(offsets, w):
        other = q[np.clip(idx + k, 0, n - 1)]
        acc += wk * (model.difference(q, other) if quats else other - q)
    return np.asarray(model.integrate(q, acc), dtype=np.float64) if quats else q + acc


def _contacts(sk: Skeleton, q: np.ndarray, fps: float, untracked: list[str]) -> dict[str, Any]:
    """``{side: (T,) bool}`` planted frames of each untracked ankle on motion ``q``."""
    m = sk.model
    T_all = m.fk_all(q)
    unit = m.length_scale
    out = {}
    for s in untracked:
        path = T_all[:, sk.index[sk.parts[f"ankle_{s}"]], :3, 3]
        out[s] = detect_contacts(
            path,
            fps,
            up=sk.up_axis,
            max_height=0.05 * unit,
            max_speed=0.35 * unit,
            max_rise=0.015 * unit,
        )
    return out


def foot_skate(
    sk: Skeleton, q: np.ndarray, fps: float, contacts: Mapping[str, np.ndarray]
) -> dict[str, float]:
    """Mean horizontal speed [length unit / s] of each foot over its planted frames."""
    T_all = sk.model.fk_all(q)
    out = {}
    for s, c in contacts.items():
        path = T_all[:, sk.index[sk.parts[f"ankle_{s}"]], :3, 3].copy()
        path[:, sk.up_axis] = 0.0
        v = np.linalg.norm(np.diff(path, axis=0), axis=1) * fps
        both = np.asarray(c[1:]) & np.asarray(c[:-1])
        out[s] = float(v[both].mean()) if both.any() else 0.0
    return out


def _pins(
    sk: Skeleton, ref: np.ndarray, contacts: Mapping[str, np.ndarray]
) -> list[dict[str, Position]]:
    """Per frame, ``{ankle frame: Position}`` holding each planted foot at its interval's
    median position on ``ref``."""
    from ..contacts import contact_intervals

    n = ref.shape[0]
    out: list[dict[str, Position]] = [{} for _ in range(n)]
    if not contacts:
        return out
    T_all = sk.model.fk_all(ref)
    for s, c in contacts.items():
        ankle = sk.parts[f"ankle_{s}"]
        path = T_all[:, sk.index[ankle], :3, 3]
        for a, b in contact_intervals(c):
            p = np.median(path[a:b], axis=0)
            for t in range(a, b):
                out[t][ankle] = Position(p.copy())
    return out


def track(
    model: Model,
    tracks: Mapping[str, Any],
    *,
    fps: float,
    prior: Any = "human",
    roles: Mapping[str, str] | None = None,
    ground: Any = None,
    anatomy: bool = True,
    **ik_options: Any,
) -> Motion:
    """A whole clip from sparse tracks; see the module docstring.

    Args:
        model: a skeleton or humanoid with body parts (or ``roles=``).
        tracks: ``{frame: (T, 4, 4) poses | (T, 3) positions | batched Pose/Position}``,
            every track the same length T; any subset of the body parts (head and two
            hands as poses, no pelvis, is a first-class setting).
        fps: frames per second of the tracks [1/s], > 0.
        prior, roles, ground, anatomy, ik_options: as :class:`~.tracker.Tracker`.

    Raises :class:`~kinetree.errors.KinetreeError` subclasses naming the problem (an
    unknown frame, tracks of different lengths, a track of the wrong shape, NaN, a
    non-positive ``fps``, a skeleton without body parts) before any solve.
    """
    check_model(model)
    rate = check_rate(fps)
    tr = read_tracks(model, tracks)
    tracker = Tracker(
        model, fps=rate, prior=prior, roles=roles, ground=ground, anatomy=anatomy, **ik_options
    )
    sk = tracker.sk
    n = tr.n_frames
    frames = [tr.at(t) for t in range(n)]
    q = np.empty((n, model.nq))
    for t in range(n):
        q[t] = tracker.update(frames[t]).q
    guess = tracker.guide.offline(tr.raw()) if isinstance(tracker.guide, MotionGuide) else None
    untracked = [
        s
        for s in ("l", "r")
        if f"ankle_{s}" in sk.parts and sk.parts[f"ankle_{s}"] not in tr.frames
    ]
    sigma = SMOOTH_SECONDS * rate
    success = np.zeros(n, dtype=bool)
    contacts: dict[str, Any] = {}
    for k in range(PASSES):
        base = q if guess is None or k > 0 else tracker._blend(q, guess, 0.5)
        ref = smooth(model, base, sigma)
        contacts = _contacts(sk, ref, rate, untracked)
        pins = _pins(sk, ref, contacts)
        for t in range(n):
            r, _, _ = tracker.solver.solve(frames[t], ref[t], pins[t], q[t])
            q[t] = r.q
            success[t] = bool(np.all(r.success))
    pos = np.empty((n, len(tr.frames)))
    rot = np.empty((n, len(tr.frames)))
    T_all = model.fk_all(q)
    for t in range(n):
        pos[t], rot[t] = target_errors(T_all[t], frames[t], sk.index)
    contacts = _contacts(sk, q, rate, untracked)
    metadata = {
        "success": success,
        "position_error": pos,
        "orientation_error": rot,
        "frames": tr.frames,
        "contacts": contacts,
        "foot_skate": foot_skate(sk, q, rate, contacts),
        "prior": None if tracker.guide is None else tracker.guide.name,
        "anatomy": anatomy,
    }
    return Motion(model, q, fps=rate, name="track", metadata=metadata)
