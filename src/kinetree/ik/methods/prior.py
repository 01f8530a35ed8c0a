"""``prior=``: IK that starts from, and prefers, a prior's pose.

1. **Start**: the prior (an :class:`~kinetree.ik.options.IKPrior`; a name or a path is
   read by :func:`kinetree.learn.load_prior`) gives one configuration for the targets.
2. **Solve**: the ordinary solve of the caller's targets and options from it (``q0``),
   with it as ``rest``: the targets are met by the normal solver, to its tolerance,
   within the joint limits, and the prior's pose lives in the null space. Should the pull
   keep a target from being met, the same solve runs again without it (from the start
   still), and its result is taken if it meets them.

The prior never decides success: the result is the final solve's, judged on FK. The
dispatcher is received (``solve``), never imported.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ...errors import InvalidValueError, UnsupportedError
from ...model import Model
from ..options import IKOptions, IKPrior
from ..result import IKResult

__all__ = ["prior_of", "solve_with_prior"]


def prior_of(prior: Any) -> IKPrior:
    """The :class:`IKPrior` of ``prior=``: a name or a path read by
    :func:`kinetree.learn.load_prior`, an :class:`IKPrior` as it is."""
    if isinstance(prior, (str, os.PathLike)):
        from ...learn import load_prior

        loaded: IKPrior = load_prior(prior)
        return loaded
    return prior


def _as_targets(target: Any, frame: str | None) -> dict[str, Any]:
    if isinstance(target, dict):
        return dict(target)
    if frame is None:
        raise UnsupportedError(
            "prior= reads targets by body part: pass a dict {frame: target} (the pelvis "
            "pose and any of head, hands, feet positions) or name the frame"
        )
    return {frame: target}


def solve_with_prior(
    model: Model,
    target: Any,
    frame: str | None,
    opts: IKOptions,
    q0: Any,
    t0: float,
    solve: Callable[..., IKResult],
) -> IKResult:
    """The module docstring's two steps for ``opts.prior``; ``solve`` is
    :func:`kinetree.ik.solve`."""
    prior = prior_of(opts.prior)
    targets = _as_targets(target, frame)
    start = prior.start(model, targets, None if q0 is None else np.asarray(q0, dtype=np.float64))
    q_start = np.asarray(start, dtype=np.float64)
    if q_start.shape != (model.nq,) or not np.all(np.isfinite(q_start)):
        raise InvalidValueError(
            f"the prior {type(prior).__name__}.start gave {q_start.shape} values with "
            f"non-finite ones or the wrong count; a start is one finite ({model.nq},) "
            f"configuration of {model.name!r}"
        )
    plain = dataclasses.replace(opts, prior=None)
    result = solve(
        model, targets, q0=q_start, options=dataclasses.replace(plain, rest=tuple(q_start.tolist()))
    )
    if not np.all(result.success):
        # The rest pull must never cost the targets: from the same start without it.
        retry = solve(model, targets, q0=q_start, options=plain)
        if np.all(retry.success):
            result = retry
    return dataclasses.replace(result, elapsed=time.perf_counter() - t0)
