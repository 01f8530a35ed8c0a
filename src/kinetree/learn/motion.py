"""The temporal human prior: whole-body poses from a window of sparse trackers.

Long because the prior, its binding to a skeleton and its two ways of running (offline
and streamed) share one window and one fit, and are read together.

A :class:`MotionPrior` is a network (:class:`~._mlp.MLP`, numpy at run time) that reads a
window of frames of whichever of pelvis, head, hands and feet are tracked (positions,
and the pelvis's and head's orientations when given) and guesses the current frame's
whole body: the pelvis's position and orientation (also when the pelvis is not tracked:
head and two hands, the VR setting, are enough) and every body part relative to it,
legs included when the feet are not tracked. It sees bodies per body part
(:mod:`._motion_body`, :mod:`._body`), so one prior serves every skeleton whose body
parts :func:`~kinetree.io.body_parts.find_body_parts` recognises.

* :meth:`MotionPrior.bind` ties it to a skeleton: :class:`BoundMotionPrior`.
* :meth:`BoundMotionPrior.offline` guesses a whole clip (the window reaches
  :attr:`MotionPrior.future` frames ahead).
* :meth:`BoundMotionPrior.stream` gives a :class:`MotionPriorStream`, causal and of
  constant memory: :meth:`MotionPriorStream.step` per frame.

Each guess is mapped to the skeleton's configuration by the per-frame prior's fit
(:func:`~.pose_ik.fit_placed`), warm-started from the previous frame. The guess only
guides: a tracker meets the targets with IK (:mod:`kinetree.anim`).

Window frames are counted at :data:`RATE` frames per second: :attr:`MotionPrior.past`
frames of 1/30 s back, whatever the tracks' rate (frames are picked by time).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import FileFormatError, InvalidValueError, ShapeError, unknown_name
from ..model import Model
from ._body import BodyLayout
from ._mlp import MLP, cached, read_saved
from ._motion_body import (
    N_OUT,
    ROT_ROLES,
    TRACK_ROLES,
    canonical_rotation,
    decode,
    n_features,
    window_features,
)
from .pose_ik import FIT_ITERATIONS, fit_placed
from .prior import layout_of

__all__ = [
    "MOTION_SHIPPED",
    "RATE",
    "BoundMotionPrior",
    "MotionPrior",
    "MotionPriorStream",
    "load_motion_prior",
]

#: Frames per second the window's steps are counted in.
RATE = 30.0
#: Ankle height above the floor [body heights] when ``floor=`` is given.
ANKLE_HEIGHT = 0.04
#: A standing head's height above the ankles [body heights] (the training captures'
#: median of their 98th percentile) and the pelvis's above straight legs.
STAND_HEAD = 1.04
STAND_PELVIS = 0.02
#: Fit iterations per frame after the first (warm-started from the previous frame).
WARM_ITERATIONS = 12
_DATA = Path(__file__).parent / "data"
#: Temporal priors shipped with kinetree: name -> file (see ``learn/data/README.md``).
MOTION_SHIPPED = {"human": _DATA / "human_motion.npz"}
FORMAT_VERSION = 1


@dataclass(frozen=True, eq=False)
class MotionPrior:
    """A trained temporal prior (see the module docstring).

    Attributes:
        mlp: the network (:func:`~._motion_body.n_features` inputs, ``N_OUT`` outputs).
        past_steps: window frames back from the current one (0 first), at :data:`RATE`.
        future_steps: window frames ahead (offline only), at :data:`RATE`.
        meta: what it was trained on.
    """

    mlp: MLP
    past_steps: tuple[int, ...]
    future_steps: tuple[int, ...]
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def past(self) -> int:
        """Frames (at :data:`RATE`) the window reaches back."""
        return int(max(self.past_steps))

    @property
    def future(self) -> int:
        """Frames (at :data:`RATE`) the window reaches ahead (offline only; 0: causal)."""
        return int(max(self.future_steps, default=0))

    @property
    def name(self) -> str:
        return str(self.meta.get("name", "motion prior"))

    def bind(
        self, model: Model, *, roles: Any = None, floor: float | None = None
    ) -> BoundMotionPrior:
        """This prior on ``model``'s skeleton.

        Args:
            roles: passed to :func:`~kinetree.io.body_parts.find_body_parts` (None: the
                skeleton's names decide).
            floor: the ground's height along the skeleton's up [the model's length
                unit]; None: estimated from the tracks (the feet's lowest, or the
                head's highest minus a standing head height).

        Raises :class:`~kinetree.errors.UnsupportedError` (a ``KinetreeError``) for a
        skeleton without the body parts the prior needs, naming what it found.
        """
        layout = layout_of(model) if roles is None else BodyLayout.of(model, roles=roles)
        if floor is not None and not np.isfinite(floor):
            raise InvalidValueError(f"floor must be a finite height, got {floor!r}")
        return BoundMotionPrior(self, model, layout, floor)

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the prior to ``path`` (``.npz``); returns the path written."""
        out = Path(path)
        if out.suffix != ".npz":
            out = out.with_suffix(".npz")
        meta = {
            **self.meta,
            "format": FORMAT_VERSION,
            "past_steps": list(self.past_steps),
            "future_steps": list(self.future_steps),
        }
        arrays: dict[str, Any] = dict(self.mlp.arrays())
        for k in arrays:
            if k[0] in "Wb" and np.array_equal(arrays[k].astype(np.float32), arrays[k]):
                arrays[k] = arrays[k].astype(np.float32)
        arrays["meta"] = np.array(json.dumps(meta, sort_keys=True))
        np.savez_compressed(out, **arrays)
        return out

    def __repr__(self) -> str:
        sizes = [w.shape[1] for w in self.mlp.weights[:-1]]
        return f"MotionPrior({self.name!r}, hidden={sizes}, past={self.past}, future={self.future})"


def load_motion_prior(name: str | os.PathLike[str] | MotionPrior = "human") -> MotionPrior:
    """A :class:`MotionPrior` by shipped name (``"human"``) or ``.npz`` path.

    Raises :class:`~kinetree.errors.UnknownNameError` (listing the shipped names) for
    a name that is neither, :class:`~kinetree.errors.FileFormatError` for a file that
    is not a temporal prior."""
    if isinstance(name, MotionPrior):
        return name
    if not isinstance(name, (str, os.PathLike)):
        raise InvalidValueError(
            f"a motion prior is a name ({', '.join(MOTION_SHIPPED)}) or a .npz path, "
            f"got {type(name).__name__}"
        )
    key = os.fspath(name)
    path = MOTION_SHIPPED.get(key) if isinstance(name, str) else None
    if path is None:
        path = Path(key)
        if not path.is_file():
            raise unknown_name("motion prior", key, [*MOTION_SHIPPED, "(or a .npz path)"])
    return _load(path)


_CACHE: dict[Path, tuple[float, MotionPrior]] = {}


def _load(path: Path) -> MotionPrior:
    return cached(_CACHE, path, _read)


def _read(path: Path) -> MotionPrior:
    mlp, meta = read_saved(path, "motion prior")
    try:
        past = tuple(int(s) for s in meta["past_steps"])
        future = tuple(int(s) for s in meta["future_steps"])
    except (ValueError, KeyError, TypeError) as exc:
        raise FileFormatError(f"{path}: not a kinetree motion prior ({exc})") from None
    n_in = n_features(len(past) + len(future))
    if mlp.weights[0].shape[0] != n_in or mlp.weights[-1].shape[1] != N_OUT:
        raise FileFormatError(
            f"{path}: a network of {mlp.weights[0].shape[0]} inputs and "
            f"{mlp.weights[-1].shape[1]} outputs; its window needs {n_in} and {N_OUT}"
        )
    return MotionPrior(mlp, past, future, meta)


@dataclass(frozen=True)
class _Frames:
    """Tracks of frames in the canonical view: ``P (T, 6, 3)``, rotations ``(T, 3, 3)``
    (body, head), what is given, and the world heights (for the ankle level)."""

    P: np.ndarray
    body: np.ndarray
    head: np.ndarray
    pos_on: np.ndarray
    rot_on: np.ndarray


class BoundMotionPrior:
    """A :class:`MotionPrior` on one skeleton (:meth:`MotionPrior.bind`)."""

    def __init__(
        self, prior: MotionPrior, model: Model, layout: BodyLayout, floor: float | None
    ) -> None:
        self.prior = prior
        self.model = model
        self.layout = layout
        self.floor = floor
        self._C = canonical_rotation(layout.up_world)
        T0 = model.fk_all(model.neutral())
        kp, kh = layout.node["pelvis"], layout.node["head"]
        self._R_head_body = T0[kh, :3, :3].T @ T0[kp, :3, :3] @ layout.R_pelvis_body
        #: the head's and the pelvis's heights above the ankles standing [body heights]:
        #: the captures' (2nd percentile of the lower ankle to the 98th of the head),
        #: and this skeleton's legs plus its pelvis above its hips (rest lengths; the
        #: rest pose's legs may point anywhere)
        self.stand_head = STAND_HEAD
        legs = np.mean(
            [
                layout.rest_length.get(f"knee_{s}", 0.0) + layout.rest_length.get(f"ankle_{s}", 0.0)
                for s in "lr"
            ]
        )
        hips = 0.5 * (T0[layout.node["hip_l"], :3, 3] + T0[layout.node["hip_r"], :3, 3])
        R_wb0 = T0[kp, :3, :3] @ layout.R_pelvis_body
        above = float((R_wb0.T @ (T0[kp, :3, 3] - hips))[1])
        self.stand_pelvis = (float(legs) + above) / layout.height + STAND_PELVIS
        self._role_of = {f: r for r, f in layout.parts.items() if r in TRACK_ROLES}

    # --- tracks in -------------------------------------------------------------------

    def _read(self, tracks: Mapping[str, Any], single: bool) -> tuple[_Frames, int]:
        if not isinstance(tracks, Mapping):
            raise InvalidValueError(
                f"tracks must map frame names to arrays, got {type(tracks).__name__}"
            )
        names = set(self.model.frame_names)
        n: int | None = None
        given: dict[str, tuple[np.ndarray, bool]] = {}
        for frame, a in tracks.items():
            if frame not in names:
                raise unknown_name("frame", frame, self.model.frame_names)
            arr = np.asarray(getattr(a, "T", a) if not isinstance(a, np.ndarray) else a)
            if not isinstance(a, np.ndarray) and hasattr(a, "xyz") and not hasattr(a, "R"):
                arr = np.asarray(a.xyz)
            arr = np.asarray(arr, dtype=np.float64)
            if single:
                arr = arr[None]
            if arr.ndim == 3 and arr.shape[1:] == (4, 4):
                pose = True
            elif arr.ndim == 2 and arr.shape[1] == 3:
                pose = False
            else:
                want = "(4, 4) or (3,)" if single else "(T, 4, 4) or (T, 3)"
                shape = arr.shape[1:] if single else arr.shape
                raise ShapeError(f"track of {frame!r} has shape {shape}; expected {want}")
            if not np.all(np.isfinite(arr)):
                raise InvalidValueError(f"track of {frame!r} has NaN or inf values")
            if n is None:
                n = len(arr)
            elif len(arr) != n:
                raise ShapeError(
                    f"tracks have different lengths: {frame!r} has {len(arr)} frames, others {n}"
                )
            if frame in self._role_of:
                given[self._role_of[frame]] = (arr, pose)
        if n is None or n == 0:
            raise InvalidValueError("no tracks given (or tracks of no frames)")
        return self._canonical(given, n), n

    def _canonical(self, given: dict[str, tuple[np.ndarray, bool]], n: int) -> _Frames:
        C, H = self._C, self.layout.height
        P = np.zeros((n, len(TRACK_ROLES), 3))
        body = np.broadcast_to(np.eye(3), (n, 3, 3)).copy()
        head = body.copy()
        pos_on = np.zeros(len(TRACK_ROLES), dtype=bool)
        rot_on = np.zeros(len(ROT_ROLES), dtype=bool)
        for i, role in enumerate(TRACK_ROLES):
            if role not in given:
                continue
            arr, pose = given[role]
            p = arr[:, :3, 3] if pose else arr
            P[:, i] = p @ C.T / H
            pos_on[i] = True
            if pose and role == "pelvis":
                body = C @ arr[:, :3, :3] @ self.layout.R_pelvis_body
                rot_on[0] = True
            elif pose and role == "head":
                head = C @ arr[:, :3, :3] @ self._R_head_body
                rot_on[1] = True
        return _Frames(P, body, head, pos_on, rot_on)

    def _level(self, fr: _Frames, causal: bool) -> np.ndarray:
        """The ankle level per frame [canonical height, body heights]."""
        n = len(fr.P)
        if self.floor is not None:
            up = self._C[1] @ (self.layout.up_world * self.floor) / self.layout.height
            return np.full(n, up + ANKLE_HEIGHT)
        ti = {r: i for i, r in enumerate(TRACK_ROLES)}
        feet = [ti["ankle_l"], ti["ankle_r"]]
        if fr.pos_on[feet].any():
            low = fr.P[:, feet][:, fr.pos_on[feet], 1].min(axis=1)
            if causal:
                return np.minimum.accumulate(low)
            return np.full(n, float(np.percentile(low, 2)))
        for role in ("head", "pelvis"):
            if fr.pos_on[ti[role]]:
                top = fr.P[:, ti[role], 1]
                stand = self.stand_head if role == "head" else self.stand_pelvis
                if causal:
                    return np.maximum.accumulate(top) - stand
                return np.full(n, float(np.percentile(top, 98)) - stand)
        low = fr.P[:, fr.pos_on, 1].min(axis=1) if fr.pos_on.any() else np.zeros(n)
        return np.minimum.accumulate(low) if causal else np.full(n, float(low.min()))

    # --- guesses ---------------------------------------------------------------------

    def _window_index(self, n: int, fps: float) -> np.ndarray:
        """``(n, K)`` frame indices of every frame's window (clamped at the ends)."""
        scale = fps / RATE
        steps = [-round(s * scale) for s in self.prior.past_steps]
        steps += [round(s * scale) for s in self.prior.future_steps]
        idx = np.arange(n)[:, None] + np.array(steps, dtype=np.int64)[None]
        return np.clip(idx, 0, n - 1)

    def _predict(self, fr: _Frames, idx: np.ndarray, level: np.ndarray, future: bool) -> tuple:
        n = len(idx)
        P = fr.P[idx].copy()
        P[..., 1] -= level[idx[:, 0]][:, None, None]
        pos_on = np.broadcast_to(fr.pos_on, (n, len(TRACK_ROLES)))
        rot_on = np.broadcast_to(fr.rot_on, (n, len(ROT_ROLES)))
        x, R, anchor = window_features(
            P,
            fr.body[idx],
            fr.head[idx],
            pos_on,
            rot_on,
            len(self.prior.past_steps),
            np.full(n, future),
        )
        y = self.prior.mlp(x)
        pelvis, body, roles = decode(y, R, anchor)
        pelvis[:, 1] += level[idx[:, 0]]
        return pelvis, body, roles

    def _world(self, pelvis: np.ndarray, body: np.ndarray, fr: _Frames, t: int) -> np.ndarray:
        """The pelvis pose (4x4, world) of a guess; tracked pelvis parts kept."""
        C, H = self._C, self.layout.height
        T = np.eye(4)
        T[:3, :3] = C.T @ body @ self.layout.R_pelvis_body.T
        T[:3, 3] = C.T @ pelvis * H
        if fr.rot_on[0]:
            T[:3, :3] = C.T @ fr.body[t] @ self.layout.R_pelvis_body.T
        if fr.pos_on[0]:
            T[:3, 3] = C.T @ fr.P[t, 0] * H
        return T

    def guess_parts(
        self, tracks: Mapping[str, Any], fps: float
    ) -> tuple[np.ndarray, list[dict[str, np.ndarray]]]:
        """The raw guesses of :meth:`offline` before the fit: pelvis poses ``(T, 4, 4)``
        and per frame ``{role: world position}`` (tracked roles on their tracks)."""
        fr, n = self._read(tracks, single=False)
        _check_fps(fps)
        future = self.prior.future > 0
        level = self._level(fr, causal=not future)
        pelvis, body, roles = self._predict(fr, self._window_index(n, fps), level, future)
        poses, placed = [], []
        for t in range(n):
            T = self._world(pelvis[t], body[t], fr, t)
            poses.append(T)
            placed.append(self.layout.placed(T, roles[t], self._given(fr, t)))
        return np.stack(poses), placed

    def _given(self, fr: _Frames, t: int) -> dict[str, np.ndarray]:
        C, H = self._C, self.layout.height
        return {
            r: C.T @ fr.P[t, i] * H
            for i, r in enumerate(TRACK_ROLES)
            if fr.pos_on[i] and r != "pelvis"
        }

    def offline(self, tracks: Mapping[str, Any], fps: float) -> np.ndarray:
        """Whole-body configurations ``(T, nq)`` guessed for every frame of a clip.

        ``tracks``: ``{frame name: (T, 4, 4) poses or (T, 3) positions}`` in the
        model's world and length unit, every track of the same ``T``; frames that are
        not tracked body parts (pelvis, head, hands, feet) are read and ignored.
        ``fps``: the tracks' frames per second. With a causal prior (``future == 0``)
        frame ``t`` is exactly what a :meth:`stream` gives at its step ``t``.
        """
        if self.prior.future == 0:  # nothing to look ahead at: the live guesses, exactly
            self._read(tracks, single=False)
            live = self.stream(fps)
            n = len(next(iter(tracks.values())))
            return np.stack([live.step({k: v[t] for k, v in tracks.items()}) for t in range(n)])
        poses, placed = self.guess_parts(tracks, fps)
        out = np.empty((len(poses), self.model.nq))
        q = self.model.neutral()
        for t in range(len(poses)):
            q = self._fit(poses[t], placed[t], q, first=t == 0)
            out[t] = q
        return out

    def _fit(self, T: np.ndarray, placed: dict[str, np.ndarray], q: np.ndarray, first: bool):
        iters = FIT_ITERATIONS if first else WARM_ITERATIONS
        return fit_placed(self.model, T, placed, q, iters, layout=self.layout)

    def stream(self, fps: float) -> MotionPriorStream:
        """A causal, constant-memory guesser for live frames at ``fps`` frames/s."""
        _check_fps(fps)
        return MotionPriorStream(self, float(fps))

    def __repr__(self) -> str:
        return f"BoundMotionPrior({self.prior.name!r}, model={self.model.name!r})"


def _check_fps(fps: float) -> None:
    if not (isinstance(fps, (int, float)) and np.isfinite(fps) and fps > 0):
        raise InvalidValueError(f"fps must be a positive number of frames per second, got {fps!r}")


class MotionPriorStream:
    """Live guesses, one frame at a time (:meth:`BoundMotionPrior.stream`): frame ``t``
    depends on frames up to ``t`` only; memory is the window's frames."""

    def __init__(self, bound: BoundMotionPrior, fps: float) -> None:
        self.bound = bound
        self.fps = fps
        self._steps = np.array([round(s * fps / RATE) for s in bound.prior.past_steps])
        self._size = int(self._steps.max()) + 1
        self.reset()

    def reset(self) -> None:
        """Forget every frame seen (a new take)."""
        self._buf: list[_Frames] = []
        self._extreme: float | None = None
        self._q = self.bound.model.neutral()
        self._t = 0
        #: the last step's raw guess before the fit: the pelvis pose (4x4, world) and
        #: ``{role: world position}`` (as :meth:`BoundMotionPrior.guess_parts`)
        self.guess: tuple[np.ndarray, dict[str, np.ndarray]] | None = None

    def step(self, targets: Mapping[str, Any]) -> np.ndarray:
        """The guessed configuration ``(nq,)`` for this frame's ``targets``
        (``{frame: (4, 4) pose or (3,) position}``, as one frame of
        :meth:`BoundMotionPrior.offline`'s tracks)."""
        b = self.bound
        fr, _ = b._read(targets, single=True)
        if self._buf and (
            not np.array_equal(fr.pos_on, self._buf[-1].pos_on)
            or not np.array_equal(fr.rot_on, self._buf[-1].rot_on)
        ):
            self._buf = []  # other roles tracked from here: a new window
            self._extreme = None
        self._buf.append(fr)
        if len(self._buf) > self._size:
            self._buf.pop(0)
        # the ankle level, causally: the running extreme of one frame's estimate
        one = b._level(fr, causal=True)[0]
        if b.floor is None:
            feet = fr.pos_on[4:].any()
            head_or_pelvis = fr.pos_on[:2].any()
            if self._extreme is None:
                self._extreme = one
            elif feet or not head_or_pelvis:
                self._extreme = min(self._extreme, one)
            else:
                self._extreme = max(self._extreme, one)
            one = self._extreme
        m = len(self._buf)
        cat = _Frames(
            np.concatenate([f.P for f in self._buf]),
            np.concatenate([f.body for f in self._buf]),
            np.concatenate([f.head for f in self._buf]),
            fr.pos_on,
            fr.rot_on,
        )
        idx = np.clip(m - 1 - self._steps, 0, m - 1)
        full = np.concatenate([idx, np.zeros(len(b.prior.future_steps), dtype=np.int64) + m - 1])
        level = np.full(m, one)
        pelvis, body, roles = b._predict(cat, full[None], level, future=False)
        T = b._world(pelvis[0], body[0], cat, m - 1)
        placed = b.layout.placed(T, roles[0], b._given(cat, m - 1))
        self.guess = (T, placed)
        self._q = b._fit(T, placed, self._q, first=self._t == 0)
        self._t += 1
        return self._q.copy()
