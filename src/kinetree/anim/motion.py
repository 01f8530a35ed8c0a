"""A motion: one configuration per frame of a model, at a fixed frame rate."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from .._validate import as_array, check_model, check_positive
from ..errors import InvalidValueError, ShapeError, UnsupportedError
from ..model import Model

if TYPE_CHECKING:
    from ..io.bvh import BVHClip

__all__ = ["Motion", "to_clip"]


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class Motion:
    """Configurations ``q`` ``(n_frames, model.nq)`` of ``model`` played at ``fps``.

    Attributes:
        model: the model the configurations belong to.
        q: ``(n_frames, dof)`` joint values [rad for revolute, model length unit for
            prismatic DoFs]; read-only.
        fps: frames per second [1/s] (``frame_time = 1 / fps`` [s]).
        targets: optional per-frame target points ``(n_frames, k, 3)`` [model length
            unit], for drawing (``viz.animate(m.model, m.q, path, targets=m.targets)``).
        name: a label.
        metadata: what produced the motion (solver results, per-frame errors...);
            see :func:`~kinetree.anim.reach`, :func:`~kinetree.anim.retarget`.
        clip: the BVH clip the motion came from (if any), the template for
            :meth:`to_clip`.
    """

    model: Model
    q: np.ndarray
    fps: float = 30.0
    targets: np.ndarray | None = None
    name: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    clip: BVHClip | None = None

    def __post_init__(self) -> None:
        check_model(self.model)
        q = as_array(self.q, "q")
        if q.ndim == 1:
            q = q[None, :]
        if q.ndim != 2 or q.shape[1] != self.model.nq:
            raise ShapeError(f"q must have shape (n_frames, {self.model.nq}), got {q.shape}")
        if q.shape[0] < 1:
            raise InvalidValueError("a motion needs at least one frame")
        object.__setattr__(self, "q", _frozen(q.copy()))
        object.__setattr__(self, "fps", check_positive(self.fps, "fps [frames per second]"))
        if self.targets is not None:
            t = as_array(self.targets, "targets")
            if t.ndim == 2 and t.shape[1] == 3:
                t = np.broadcast_to(t, (q.shape[0], *t.shape))
            if t.ndim != 3 or t.shape[0] != q.shape[0] or t.shape[2] != 3:
                raise ShapeError(
                    f"targets must have shape (n_frames={q.shape[0]}, k, 3), got {t.shape}"
                )
            object.__setattr__(self, "targets", _frozen(t.copy()))

    # --- sizes -------------------------------------------------------------------------

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
        """Length in seconds, ``n_frames / fps`` (as :attr:`BVHClip.duration`)."""
        return self.n_frames / self.fps

    @property
    def times(self) -> np.ndarray:
        """Time of each frame ``(n_frames,)`` [s], the first at 0."""
        return np.arange(self.n_frames) / self.fps

    def __repr__(self) -> str:
        return (
            f"Motion({self.name!r}, model={self.model.name!r}, n_frames={self.n_frames}, "
            f"fps={self.fps:g})"
        )

    # --- kinematics --------------------------------------------------------------------

    def poses(self, frame: str | None = None) -> np.ndarray:
        """World poses ``(n_frames, 4, 4)`` of ``frame`` (default: first end effector)."""
        return np.asarray(self.model.fk(self.q, frame))

    def positions(self, frame: str | None = None) -> np.ndarray:
        """World positions ``(n_frames, 3)`` [model length unit] of ``frame``."""
        return self.poses(frame)[:, :3, 3].copy()

    def joint_steps(self) -> np.ndarray:
        """``|q[k+1] - q[k]|`` per DoF, ``(n_frames - 1, dof)`` [rad or length unit]."""
        return np.abs(np.diff(self.q, axis=0))

    def max_joint_step(self, joints: str | Iterable[str] | None = None) -> float:
        """Largest change of one DoF between consecutive frames [rad or length unit].

        ``joints``: joint, group or preset names to look at (default: every DoF).
        0 for a one-frame motion.
        """
        if self.n_frames < 2:
            return 0.0
        steps = self.joint_steps()
        if joints is not None:
            steps = steps[:, self.model.joint_indices(joints)]
        return float(np.max(steps, initial=0.0))

    # --- editing -----------------------------------------------------------------------

    def with_q(self, q: ArrayLike, **changes: Any) -> Motion:
        """The same model and timing with other configurations (targets dropped unless
        they still match the frame count, or given in ``changes``)."""
        qa = as_array(q, "q")
        if qa.ndim == 1:
            qa = qa[None, :]
        if "targets" not in changes:
            keep = self.targets is not None and self.targets.shape[0] == qa.shape[0]
            changes["targets"] = self.targets if keep else None
        return dataclasses.replace(self, q=qa, **changes)

    def slice(self, start: int | None = None, stop: int | None = None, step: int = 1) -> Motion:
        """Frames ``start:stop:step`` (Python slice rules); ``fps`` divided by ``step``."""
        if step < 1:
            raise InvalidValueError(f"step must be a positive integer, got {step}")
        q = self.q[start:stop:step]
        if q.shape[0] == 0:
            raise InvalidValueError(
                f"frames {start}:{stop}:{step} of a {self.n_frames}-frame motion is empty"
            )
        targets = None if self.targets is None else self.targets[start:stop:step]
        return dataclasses.replace(self, q=q, targets=targets, fps=self.fps / step)

    def concat(self, *others: Motion, drop_repeated: bool = False) -> Motion:
        """This motion followed by ``others`` (same model and fps).

        With ``drop_repeated``, a motion's first frame is left out when it equals the
        previous motion's last frame exactly (chaining ``reach``/``interpolate``
        results that start where the last one ended). Targets are kept when every
        part has them with the same number of points, else dropped. Metadata is
        that of this motion plus ``"parts"``: the frame count of each part.
        """
        qs = [self.q]
        tgts = [self.targets]
        for o in others:
            if not isinstance(o, Motion):
                raise InvalidValueError(f"can only concatenate Motions, got {type(o).__name__}")
            if o.model is not self.model and (
                o.model.joint_names != self.model.joint_names
                or o.model.frame_names != self.model.frame_names
            ):
                raise InvalidValueError(
                    f"cannot concatenate motions of different models "
                    f"({self.model.name!r} and {o.model.name!r})"
                )
            if not math.isclose(o.fps, self.fps, rel_tol=1e-9):
                raise InvalidValueError(
                    f"cannot concatenate motions at {self.fps:g} and {o.fps:g} fps; "
                    "resample one first"
                )
            start = 1 if drop_repeated and np.array_equal(o.q[0], qs[-1][-1]) else 0
            qs.append(o.q[start:])
            tgts.append(None if o.targets is None else o.targets[start:])
        targets = None
        if all(t is not None for t in tgts):
            ks = {t.shape[1] for t in tgts if t is not None}
            if len(ks) == 1:
                targets = np.concatenate([t for t in tgts if t is not None])
        meta = dict(self.metadata)
        meta["parts"] = [int(q.shape[0]) for q in qs]
        return dataclasses.replace(self, q=np.concatenate(qs), targets=targets, metadata=meta)

    # --- BVH ---------------------------------------------------------------------------

    @classmethod
    def from_clip(cls, clip: BVHClip, name: str | None = None) -> Motion:
        """The motion of a BVH clip: its model, ``q``, ``fps``; the clip is kept as the
        template for :meth:`to_clip`."""
        from ..io.bvh import BVHClip

        if not isinstance(clip, BVHClip):
            raise InvalidValueError(f"from_clip takes a BVHClip, got {type(clip).__name__}")
        if name is None:
            name = clip.model.name
        return cls(model=clip.model, q=clip.q, fps=clip.fps, name=name, clip=clip)

    def to_clip(self, template: BVHClip | None = None) -> BVHClip:
        """This motion as a BVH clip; see :func:`to_clip`."""
        return to_clip(self, template)


def to_clip(motion: Motion, clip_template: BVHClip | None = None) -> BVHClip:
    """``motion`` as a :class:`~kinetree.io.bvh.BVHClip` (write it with ``kinetree.write_bvh``).

    The template (default: the clip the motion came from, :attr:`Motion.clip`)
    gives the hierarchy and channel layout; it must have the motion's DoFs. The
    frame time is ``1 / motion.fps`` [s] (the template's text form is kept when it
    is the same).
    """
    template = clip_template if clip_template is not None else motion.clip
    if template is None:
        raise UnsupportedError(
            f"motion {motion.name!r} did not come from a BVH clip; pass clip_template="
        )
    if template.model.joint_names != motion.model.joint_names:
        raise InvalidValueError(
            "the template clip's DoFs differ from the motion's model "
            f"({template.model.nq} vs {motion.model.nq} DoFs)"
        )
    clip = template.with_q(motion.q)
    ft = motion.frame_time
    if not math.isclose(ft, template.frame_time, rel_tol=1e-12):
        clip = dataclasses.replace(clip, frame_time=ft, frame_time_text=None)
    return clip
