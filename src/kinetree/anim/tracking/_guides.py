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

import importlib
from collections.abc import Mapping
from typing import Any

import numpy as np

from ...errors import InvalidValueError
from ...ik.targets import Position
from ...model import Model

__all__ = ["FIT_ITERATIONS", "MotionGuide", "PoseGuide", "guide_for"]

#: Iterations of the pose guide's fit per frame (from the previous frame's fit; four
#: times as many on the first frame).
FIT_ITERATIONS = 6


def _plain(targets: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """Targets as arrays: 4x4 poses and 3-vectors."""
    return {f: (np.asarray(t.xyz) if isinstance(t, Position) else t) for f, t in targets.items()}


class PoseGuide:
    """The per-frame pose prior as a guide: its prediction for the frame's targets, fit
    to the skeleton (:func:`kinetree.learn.fit_pose`'s two steps) warm-started from the
    previous frame's fit, so a few iterations (:data:`FIT_ITERATIONS`) suffice."""

    name = "pose prior"

    def __init__(self, model: Model, prior: Any) -> None:
        from ...learn.prior import layout_of

        self.model = model
        self.prior = prior
        self.layout = layout_of(model)
        self.pelvis = self.layout.parts["pelvis"]
        self.moves = bool(model.chain(self.pelvis))
        self.damping = 0.1 / self.layout.height**2
        self.fit: np.ndarray | None = None

    def reset(self) -> None:
        self.fit = None

    def step(self, targets: Mapping[str, Any], q_hint: np.ndarray) -> np.ndarray:
        from ...learn import INPUT_ROLES

        parts = self.layout.parts
        t = targets.get(self.pelvis)
        if isinstance(t, np.ndarray):
            T_pelvis = t
        else:
            T_pelvis = self.model.fk(q_hint, self.pelvis)
            if isinstance(t, Position):
                T_pelvis = T_pelvis.copy()
                T_pelvis[:3, 3] = t.xyz
        given = {}
        for role in INPUT_ROLES:
            g = targets.get(parts[role])
            if g is not None:
                given[role] = np.asarray(g.xyz) if isinstance(g, Position) else g[:3, 3]
        placed = self.prior.predict(self.model, T_pelvis, given)
        fit_targets: dict[str, Any] = {self.pelvis: T_pelvis} if self.moves else {}
        for role, p in placed.items():
            if role != "pelvis":
                fit_targets[parts[role]] = Position(p)
        first = self.fit is None
        q0 = q_hint if first else self.fit
        fit = self.model.ik(
            fit_targets,
            q0=q0,
            method="dls",
            max_iter=4 * FIT_ITERATIONS if first else FIT_ITERATIONS,
            time_budget=None,
            damping=self.damping,
            max_joint_step=self.layout.height,
        )
        self.fit = np.asarray(fit.q, dtype=np.float64)
        return self.fit


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
        motion = importlib.import_module("kinetree.learn.motion")
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
