"""One clip type for every character format: a skeleton and one configuration per time.

:func:`kinetree.read_clip` gives a :class:`Clip` for a BVH, glTF, USD or FBX file;
:func:`kinetree.write_clip` writes a clip, a :class:`~kinetree.anim.Motion` or a BVH clip
by the suffix of the path. The format modules sample their curves at the clip's times
(:func:`sample_times` says which); this module holds what they share: the clip, the
choice of times, and the skeleton a writer derives from any model
(:func:`frame_tree`, :func:`local_poses`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from .._validate import as_array, check_model
from ..errors import InvalidValueError, ShapeError, UnsupportedError, unknown_name
from ..model import Model

if TYPE_CHECKING:
    from ..anim.motion import Motion
    from .bvh import BVHClip

__all__ = [
    "MAX_SAMPLES",
    "CharacterFileWarning",
    "Clip",
    "frame_tree",
    "local_poses",
    "sample_times",
    "visible_joints",
]

#: The most sample times a clip may have (fps= times the duration, or times=), checked
#: before anything is allocated: 10 hours at 120 fps.
MAX_SAMPLES = 4_320_000
#: Frame rate given to a one-frame clip whose file states none [1/s].
DEFAULT_FPS = 30.0
#: Times closer than this [s] are one frame (key times written as float32).
_SAME_TIME = 1e-7


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class Clip:
    """A skeleton's motion as read from (or written to) a character file.

    Attributes:
        model: the skeleton as a :class:`Model` (with its skinned meshes in
            :attr:`Model.skins` when the file had them).
        q: ``(n_frames, model.nq)`` configurations [rad, model length unit; quaternions
            w first]; read-only.
        times: ``(n_frames,)`` the time of each frame [s], strictly increasing (the
            file's own key times, or the ``fps=`` / ``times=`` asked of
            :func:`kinetree.read_clip`).
        fps: frames per second [1/s]: ``1 / frame_time`` where the times are evenly
            spaced, else the mean rate over the clip.
        name: the animation's name (glTF animation name or ``animation_<i>``, USD
            SkelAnimation path, FBX take, BVH file stem).
        joint_names: the file's joints in file order (frames of ``model``).
        source: the file read, if any; ``format``: ``"bvh"``, ``"gltf"``, ``"usd"`` or
            ``"fbx"`` ("" for a clip made here).
        bvh: the BVH clip this came from (its channel layout, for writing BVH back).
        keys: the key values a glTF file held, ``(joint, "translation" | "rotation") ->
            (key times [s], values)``, as read (rotations unnormalised), so that writing
            the clip back to glTF gives the file's float32 data bit for bit; a writer uses
            them only where they give this clip's poses to 1e-12 (else it writes the poses).
    """

    model: Model
    q: np.ndarray
    times: np.ndarray
    fps: float = 0.0
    name: str = ""
    joint_names: tuple[str, ...] = ()
    source: str | None = None
    format: str = ""
    bvh: BVHClip | None = None
    keys: Mapping[tuple[str, str], tuple[np.ndarray, np.ndarray]] | None = None

    def __post_init__(self) -> None:
        check_model(self.model)
        q = as_array(self.q, "q")
        if q.ndim == 1:
            q = q[None, :]
        if q.ndim != 2 or q.shape[1] != self.model.nq or q.shape[0] < 1:
            raise ShapeError(
                f"Clip: q must have shape (n_frames >= 1, {self.model.nq}), got {q.shape}"
            )
        if not np.all(np.isfinite(q)):
            raise InvalidValueError("Clip: q contains NaN or inf")
        t = as_array(self.times, "times")
        if t.shape != (q.shape[0],):
            raise ShapeError(f"Clip: times must have shape ({q.shape[0]},), got {t.shape}")
        if not np.all(np.isfinite(t)) or np.any(np.diff(t) <= 0.0):
            raise InvalidValueError("Clip: times must be finite and strictly increasing [s]")
        fps = float(self.fps) if self.fps else 0.0
        if fps == 0.0:
            span = float(t[-1] - t[0])
            fps = (len(t) - 1) / span if len(t) > 1 else DEFAULT_FPS
        if not (math.isfinite(fps) and fps > 0.0):
            raise InvalidValueError(f"Clip: fps must be a positive number, got {self.fps!r}")
        object.__setattr__(self, "q", _frozen(q.copy()))
        object.__setattr__(self, "times", _frozen(t.copy()))
        object.__setattr__(self, "fps", fps)
        names = tuple(self.joint_names) if self.joint_names else visible_joints(self.model)
        unknown = set(names) - set(self.model.frame_names)
        if unknown:
            raise InvalidValueError(
                f"Clip: joint_names must be frames of the model; {sorted(unknown)[0]!r} is not"
            )
        object.__setattr__(self, "joint_names", names)

    # --- sizes ---------------------------------------------------------------------------

    def __len__(self) -> int:
        return int(self.q.shape[0])

    @property
    def n_frames(self) -> int:
        """Number of frames."""
        return int(self.q.shape[0])

    @property
    def frame_time(self) -> float:
        """Seconds between frames, ``1 / fps``."""
        return 1.0 / self.fps

    @property
    def duration(self) -> float:
        """``times[-1] - times[0]`` [s] (0 for one frame)."""
        return float(self.times[-1] - self.times[0])

    @property
    def evenly_spaced(self) -> bool:
        """Whether the frames are ``1 / fps`` apart (within 1e-3 of a frame: key times
        stored as float32, as glTF and USD files hold them, are not exact)."""
        if self.n_frames < 2:
            return True
        dt = np.diff(self.times)
        return bool(np.max(np.abs(dt * self.fps - 1.0)) < 1e-3)

    def __repr__(self) -> str:
        return (
            f"Clip({self.name!r}, model={self.model.name!r}, joints={len(self.joint_names)}, "
            f"n_frames={self.n_frames}, fps={self.fps:g}, format={self.format!r})"
        )

    # --- values --------------------------------------------------------------------------

    def world_poses(self, joints: Sequence[str] | None = None) -> np.ndarray:
        """World poses ``(n_frames, n_joints, 4, 4)`` of ``joints`` (default:
        :attr:`joint_names`) in every frame [model length unit]."""
        names = self.joint_names if joints is None else tuple(joints)
        index = {n: i for i, n in enumerate(self.model.frame_names)}
        for n in names:
            if n not in index:
                raise unknown_name("frame", n, self.model.frame_names)
        cols = np.array([index[n] for n in names], dtype=np.int64)
        return np.asarray(self.model.fk_all(self.q))[:, cols]

    # --- conversions ---------------------------------------------------------------------

    def to_motion(self) -> Motion:
        """This clip as a :class:`~kinetree.anim.Motion` (evenly spaced frames only: read
        the file with ``fps=`` to resample one that is not)."""
        from ..anim.motion import Motion

        if not self.evenly_spaced:
            raise UnsupportedError(
                f"clip {self.name!r} has unevenly spaced frames (the file's key times); "
                "a Motion plays at one frame rate: read it with read_clip(path, fps=...)"
            )
        return Motion(model=self.model, q=self.q, fps=self.fps, name=self.name, clip=self.bvh)

    @classmethod
    def from_motion(cls, motion: Motion) -> Clip:
        """The clip of a :class:`~kinetree.anim.Motion`: frames at ``k / fps`` [s]."""
        from ..anim.motion import Motion

        if not isinstance(motion, Motion):
            raise InvalidValueError(f"from_motion needs a Motion, got {type(motion).__name__}")
        template = motion.clip
        bvh = (
            template
            if template is not None and template.model.joint_names == motion.model.joint_names
            else None
        )
        return cls(
            model=motion.model,
            q=motion.q,
            times=motion.times,
            fps=motion.fps,
            name=motion.name,
            bvh=bvh,
        )

    @classmethod
    def from_bvh(cls, clip: BVHClip, name: str | None = None) -> Clip:
        """The clip of a :class:`~kinetree.io.bvh.BVHClip` (kept for writing BVH back)."""
        from .bvh import BVHClip

        if not isinstance(clip, BVHClip):
            raise InvalidValueError(f"from_bvh needs a BVHClip, got {type(clip).__name__}")
        return cls(
            model=clip.model,
            q=clip.q,
            times=np.arange(clip.n_frames) * clip.frame_time,
            fps=clip.fps,
            name=clip.model.name if name is None else name,
            joint_names=clip.joint_names,
            source=clip.source,
            format="bvh",
            bvh=clip,
        )


def visible_joints(model: Model) -> tuple[str, ...]:
    """The model's frames but its root: what a writer makes joints of."""
    root = model.node_names[0]
    return tuple(n for n in model.frame_names if n != root)


# --- times ---------------------------------------------------------------------------------


def sample_times(
    native: ArrayLike,
    fps: float | None = None,
    times: ArrayLike | None = None,
) -> np.ndarray:
    """The times [s] a reader samples a clip at.

    ``native``: the file's key times (sorted or not, repeats allowed; at least one).
    ``times``: exactly these (finite, strictly increasing). ``fps``: evenly spaced from
    the first key time to the last, ``1 / fps`` apart (the last frame at or before the
    last key). Neither: the native key times, with times closer than 1e-7 s merged.
    Raises :class:`~kinetree.errors.InvalidValueError` for both at once, a bad value, or
    more than :data:`MAX_SAMPLES` times (before allocating them).
    """
    if fps is not None and times is not None:
        raise InvalidValueError("give fps= (resample evenly) or times= (exact times), not both")
    if times is not None:
        t = as_array(times, "times")
        if t.ndim == 0:
            t = t[None]
        if t.ndim != 1 or t.size < 1:
            raise ShapeError(f"times must be a 1-D array of seconds, got shape {t.shape}")
        if t.size > MAX_SAMPLES:
            raise InvalidValueError(f"times: {t.size} samples is more than {MAX_SAMPLES}")
        if not np.all(np.isfinite(t)) or np.any(np.diff(t) <= 0.0):
            raise InvalidValueError("times must be finite and strictly increasing [s]")
        return t
    k = np.asarray(native, dtype=np.float64).ravel()
    if k.size == 0:
        return np.zeros(1)
    k = np.unique(k)
    if fps is not None:
        try:
            rate = float(fps)
        except (TypeError, ValueError, OverflowError):
            rate = math.nan
        if not (math.isfinite(rate) and rate > 0.0):
            raise InvalidValueError(f"fps must be a positive number [1/s], got {fps!r}")
        span = float(k[-1] - k[0])
        n = math.floor(span * rate + 1e-9) + 1
        if n > MAX_SAMPLES:
            raise InvalidValueError(
                f"fps={rate:g} over {span:g} s gives {n} frames, more than {MAX_SAMPLES}"
            )
        return k[0] + np.arange(n) / rate
    keep = np.concatenate([[True], np.diff(k) > _SAME_TIME])
    return k[keep]


# --- a skeleton from any model --------------------------------------------------------------


def frame_tree(model: Model, frames: Sequence[str] | None = None) -> list[int]:
    """For each of ``frames`` (default :func:`visible_joints`), the index in ``frames``
    of its nearest ancestor among them, or -1 (its parent is the model root or none of
    them): the skeleton a writer makes of any model."""
    check_model(model)
    names = list(visible_joints(model) if frames is None else frames)
    node = [model.frame_index(f) for f in names]
    where = {k: i for i, k in enumerate(node)}
    out = []
    for k in node:
        p = int(model.parent[k])
        while p >= 0 and p not in where:
            p = int(model.parent[p])
        out.append(where[p] if p >= 0 else -1)
    return out


def local_poses(
    model: Model, q: ArrayLike, frames: Sequence[str], parents: Sequence[int]
) -> np.ndarray:
    """``(n_frames, len(frames), 4, 4)``: each frame's pose relative to its parent in
    ``parents`` (:func:`frame_tree`; a root: its world pose), at every ``q``."""
    Q = np.atleast_2d(as_array(q, "q"))
    if Q.shape[-1] != model.nq:
        raise ShapeError(f"q must have shape (n_frames, {model.nq}), got {Q.shape}")
    index = {n: i for i, n in enumerate(model.frame_names)}
    cols = np.array([index[f] for f in frames], dtype=np.int64)
    W = np.asarray(model.fk_all(Q))[:, cols]
    local = W.copy()
    for i, p in enumerate(parents):
        if p < 0:
            continue
        Rp = W[:, p, :3, :3]
        local[:, i, :3, :3] = np.swapaxes(Rp, -1, -2) @ W[:, i, :3, :3]
        d = W[:, i, :3, 3] - W[:, p, :3, 3]
        local[:, i, :3, 3] = np.einsum("fji,fj->fi", Rp, d)
    return local


class CharacterFileWarning(UserWarning):
    """What a character file holds that a rigid skeleton cannot: an animated or shearing
    scale, a sheared matrix, a mesh that is not triangles. The message names the joints."""
