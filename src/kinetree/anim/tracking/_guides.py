"""Posture guides: where a learned prior says the body is, frame by frame.

A guide only suggests a configuration; the tracker blends it into its posture reference
and the IK meets the targets from there, so a guide never decides success.

* :class:`MotionGuide`: a temporal motion prior (``kinetree.learn.motion``: a window of
  past frames, and offline future ones too), through its bound stream / offline call.
* :class:`PoseGuide`: the per-frame pose prior (:class:`kinetree.learn.PosePrior`), fit
  to the skeleton from the previous frame's pelvis when the pelvis is not tracked.
* ``None``: no learning; the tracker's own prediction is the reference.

:func:`guide_for` reads ``prior=`` into one of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ...errors import InvalidValueError
from ...ik.targets import Position
from ...model import Model

__all__ = ["MotionGuide", "PoseGuide", "guide_for"]


def _plain(targets: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """Targets as arrays: 4x4 poses and 3-vectors."""
    return {f: (np.asarray(t.xyz) if isinstance(t, Position) else t) for f, t in targets.items()}


class PoseGuide:
    """The per-frame pose prior as a guide."""

    name = "pose prior"

    def __init__(self, model: Model, prior: Any) -> None:
        self.model = model
        self.prior = prior

    def reset(self) -> None:
        """Nothing to forget: the fit looks at one frame."""

    def step(self, targets: Mapping[str, Any], q_hint: np.ndarray) -> np.ndarray:
        from ...learn import fit_pose

        return fit_pose(self.model, self.prior, dict(targets), q_hint)


class MotionGuide:
    """A temporal motion prior (``BoundMotionPrior``) as a guide."""

    name = "motion prior"

    def __init__(self, bound: Any, fps: float) -> None:
        self.bound = bound
        self.fps = fps
        self.stream = bound.stream(fps)

    def reset(self) -> None:
        self.stream.reset()

    def step(self, targets: Mapping[str, Any], q_hint: np.ndarray) -> np.ndarray:
        return np.asarray(self.stream.step(_plain(targets)), dtype=np.float64)

    def offline(self, tracks: Mapping[str, np.ndarray]) -> np.ndarray:
        return np.asarray(self.bound.offline(dict(tracks), self.fps), dtype=np.float64)


def _motion_prior(name: str) -> Any:
    """``kinetree.learn.motion.load_motion_prior(name)``, or None where this kinetree has
    no temporal prior."""
    try:
        from ...learn import motion
    except ImportError:
        return None
    load = getattr(motion, "load_motion_prior", None)
    return None if load is None else load(name)


def guide_for(
    prior: Any, model: Model, roles: Mapping[str, str] | None, fps: float
) -> PoseGuide | MotionGuide | None:
    """The guide of ``prior=``: None; ``"human"`` (the temporal prior where kinetree has
    one, else the per-frame pose prior); a ``.npz`` path or a
    :class:`~kinetree.learn.PosePrior`; or an object with ``bind(model, roles=...)`` (a
    motion prior). Raises :class:`~kinetree.errors.UnknownNameError` for an unknown name."""
    if prior is None:
        return None
    if hasattr(prior, "bind"):
        return MotionGuide(prior.bind(model, roles=roles), fps)
    if isinstance(prior, str) and prior == "human":
        mp = _motion_prior(prior)
        if mp is not None:
            return MotionGuide(mp.bind(model, roles=roles), fps)
    from ...learn import PosePrior, load_prior

    if not isinstance(prior, (str, PosePrior)) and not hasattr(prior, "__fspath__"):
        raise InvalidValueError(
            "prior must be None, 'human', a .npz path, a PosePrior or a motion prior "
            f"(an object with bind(model, roles=...)), got {type(prior).__name__}"
        )
    return PoseGuide(model, load_prior(prior))
