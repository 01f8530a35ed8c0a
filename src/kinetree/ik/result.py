"""The outcome of an IK solve: always returned, success or not, never NaN."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["IKResult"]


@dataclass(slots=True)
class IKResult:
    """Result of :func:`kinetree.ik.solve`.

    For a batch of targets every array field gains the batch's leading
    dimensions and ``message`` becomes an array of strings.

    Attributes:
        q: joint configuration (..., dof) [rad or m]; the best one found.
        success: every target within tolerance, checked through FK of ``q``.
        position_error: per target (..., n_targets) [m], over the masked axes.
        orientation_error: per target (..., n_targets) [rad].
        iterations: total iterations over all attempts.
        restarts: random restarts used.
        elapsed: wall time of the whole call [s].
        message: why it stopped.
        reachable: False where a target is provably outside the workspace
            (farther from the first active joint than the chain can stretch).
        history: iterates (k, dof) when ``record=True`` (single solves), else None.
        error_history: (k, 2) max position [m] and orientation [rad] error per iterate.
        frames: the frame of each target, in the order of the error columns.
        method: the method that produced ``q``.
    """

    q: np.ndarray
    success: np.ndarray | bool
    position_error: np.ndarray
    orientation_error: np.ndarray
    iterations: np.ndarray | int
    restarts: np.ndarray | int
    elapsed: float
    message: np.ndarray | str
    reachable: np.ndarray | bool
    history: np.ndarray | None = None
    error_history: np.ndarray | None = None
    frames: tuple[str, ...] = field(default_factory=tuple)
    method: str = ""

    def __bool__(self) -> bool:
        return bool(np.all(self.success))

    def __repr__(self) -> str:
        if np.ndim(self.success) == 0:
            return (
                f"IKResult(success={bool(self.success)}, method={self.method!r}, "
                f"position_error={np.max(self.position_error, initial=0.0):.3g} m, "
                f"orientation_error={np.max(self.orientation_error, initial=0.0):.3g} rad, "
                f"iterations={int(self.iterations)}, restarts={int(self.restarts)}, "
                f"elapsed={self.elapsed * 1e3:.3f} ms, message={self.message!r})"
            )
        s = np.asarray(self.success)
        return (
            f"IKResult(batch={s.shape}, solved={int(s.sum())}/{s.size}, method={self.method!r}, "
            f"elapsed={self.elapsed * 1e3:.1f} ms)"
        )
