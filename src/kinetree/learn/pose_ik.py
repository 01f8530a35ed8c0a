"""``model.ik(targets, prior="human")``: IK that starts from, and prefers, a learned pose.

:meth:`PosePrior.start <kinetree.learn.PosePrior.start>` is steps 1 and 2 (the prior
side of :class:`kinetree.ik.IKPrior`); step 3 is :func:`kinetree.ik.solve`'s
(:mod:`kinetree.ik.methods.prior`). Three steps, each a public call:

1. **Predict** (:meth:`PosePrior.predict`): the pelvis pose target and the positions of
   whichever of head, hands and feet have targets give every role's position.
2. **Fit**: the pelvis pose target alone, then one damped-least-squares IK from there
   over the pelvis pose and every role's predicted position at once (about twenty position
   targets: an over-determined, well-conditioned least-squares problem whose best
   configuration is this skeleton's version of the predicted pose; it is not expected to
   meet them all).
3. **Solve**: the ordinary ``model.ik`` of the caller's targets and options from the fit
   (``q0``), with the fit as ``rest``: the targets are met by the normal solver, to its
   tolerance, within the joint limits, and the prior's pose lives in the null space.
   Should the pull keep a target from being met, the same solve runs again without it
   (from the fit still), and its result is taken if it meets them.

The prior never decides success: the result is the final solve's, judged on FK.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InvalidValueError, UnsupportedError
from ..ik.result import IKResult
from ..ik.targets import Pose, Position
from ..model import Model
from ._body import INPUT_ROLES, BodyLayout
from .prior import PosePrior, layout_of

__all__ = [
    "FIT_DAMPING",
    "FIT_ITERATIONS",
    "check_finite",
    "fit_placed",
    "fit_pose",
    "solve_with_prior",
]

#: Iterations of the fit (step 2), and its DLS damping per squared body height.
FIT_ITERATIONS = 40
FIT_DAMPING = 0.1


def _pose_matrix(frame: str, t: Any) -> np.ndarray | None:
    """The 4x4 of a pose target, None for other kinds."""
    if isinstance(t, Pose):
        T = np.asarray(t.T, dtype=np.float64)
    elif isinstance(t, np.ndarray) and t.shape[-2:] == (4, 4):
        T = np.asarray(t, dtype=np.float64)
    else:
        return None
    if T.shape != (4, 4):
        raise UnsupportedError(
            f"prior= solves one problem at a time; the target of {frame!r} has shape {T.shape}"
        )
    return T


def _position(frame: str, t: Any) -> np.ndarray | None:
    """The world position a target asks of ``frame``'s origin, None if it asks none."""
    T = _pose_matrix(frame, t)
    if T is not None:
        return T[:3, 3]
    if isinstance(t, Position) and t.point is None and t.mask is None:
        p = np.asarray(t.xyz, dtype=np.float64)
        if p.shape != (3,):
            raise UnsupportedError(
                f"prior= solves one problem at a time; the target of {frame!r} has shape {p.shape}"
            )
        return p
    return None


def check_finite(targets: dict[str, Any]) -> None:
    """Raise :class:`~kinetree.errors.InvalidValueError` naming the frame of a target
    with NaN or inf values."""
    for frame, t in targets.items():
        for name in ("T", "xyz", "R", "direction"):
            v = getattr(t, name, None)
            if v is not None and not np.all(np.isfinite(np.asarray(v, dtype=np.float64))):
                raise InvalidValueError(f"target of frame {frame!r} has NaN or inf values")
        if isinstance(t, np.ndarray) and not np.all(np.isfinite(t)):
            raise InvalidValueError(f"target of frame {frame!r} has NaN or inf values")


def fit_pose(model: Model, prior: PosePrior, targets: dict[str, Any], q0: Any = None) -> np.ndarray:
    """Steps 1 and 2 of the module docstring: this skeleton's configuration ``(nq,)`` of
    the prior's pose for ``targets`` (``{frame: target}``)."""
    layout = layout_of(model)
    q_start = model.neutral() if q0 is None else np.asarray(q0, dtype=np.float64)
    pelvis = layout.parts["pelvis"]
    T_pelvis = _pose_matrix(pelvis, targets[pelvis]) if pelvis in targets else None
    if T_pelvis is None:
        T_pelvis = model.fk(q_start, pelvis)
    given = {}
    for role in INPUT_ROLES:
        frame = layout.parts[role]
        if frame in targets:
            p = _position(frame, targets[frame])
            if p is not None:
                given[role] = p
    placed = prior.predict(model, T_pelvis, given)
    return fit_placed(model, T_pelvis, placed, q_start)


def fit_placed(
    model: Model,
    T_pelvis: np.ndarray,
    placed: dict[str, np.ndarray],
    q_start: np.ndarray,
    iterations: int = FIT_ITERATIONS,
    layout: BodyLayout | None = None,
) -> np.ndarray:
    """Step 2 of the module docstring: the configuration ``(nq,)`` of ``model`` nearest
    (least squares, from ``q_start``) the pelvis pose ``T_pelvis`` (4x4, world) and
    the world positions ``placed`` (``{role: (3,)}``, :meth:`~._body.BodyLayout.placed`),
    in ``iterations`` damped-least-squares steps (``layout``: the body parts, default
    :func:`~.prior.layout_of`)."""
    layout = layout_of(model) if layout is None else layout
    pelvis = layout.parts["pelvis"]
    moves = bool(model.chain(pelvis))  # a fixed pelvis (a humanoid robot's) is no target
    # A Pose (not a bare 4x4) takes the IK's shortest path: a guide is fitted each frame.
    fit_targets: dict[str, Any] = {pelvis: Pose(T_pelvis)} if moves else {}
    for role, p in placed.items():
        if role != "pelvis":  # the hips too: their own joints (LHipJoint) stay put
            fit_targets[layout.parts[role]] = Position(p)
    # Damping in units of the body (DLS damps by |error|^2, which in a file's
    # centimetres would stall the root's translation), the root placed first.
    opts: dict[str, Any] = {"method": "dls", "max_iter": iterations, "time_budget": None}
    opts["damping"] = FIT_DAMPING / layout.height**2
    if moves:
        root = model.ik(
            {pelvis: fit_targets[pelvis]}, q0=q_start, max_joint_step=layout.height, **opts
        )
        q_start = root.q
    fit = model.ik(fit_targets, q0=q_start, **opts)
    return np.asarray(fit.q, dtype=np.float64)


def solve_with_prior(
    model: Model, target: Any, frame: str | None = None, *, prior: Any, **options: Any
) -> IKResult:
    """``model.ik(target, frame, prior=prior, **options)`` (:func:`kinetree.ik.solve`
    with ``prior=``); see the module docstring.

    ``prior``: a shipped prior's name (``"human"``), a ``.npz`` path or a
    :class:`PosePrior`. ``rest=`` may not be given with it (the prior is the rest pose);
    ``q0`` is where the fit starts. Raises :class:`~kinetree.errors.UnknownNameError`
    for an unknown prior, :class:`~kinetree.errors.UnsupportedError` for a skeleton
    without the body parts the prior reads (naming them) or batched targets, and
    :class:`~kinetree.errors.InvalidValueError` for NaN targets.
    """
    from ..ik import solve

    return solve(model, target, frame, prior=prior, **options)
