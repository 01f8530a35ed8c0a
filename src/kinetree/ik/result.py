"""The outcome of an IK solve: always returned, success or not, never NaN.

Every method builds its result here: :func:`one_result` for one solve (also the
compiled path's per-call result) and :func:`make_result` for flat per-problem arrays,
so results read the same whatever produced them and their messages share one
vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .kernel.layout import ST_NONFINITE, ST_NOT_RIGID, ST_TOO_FAR

__all__ = [
    "IKResult",
    "converged",
    "is_bad_input",
    "make_result",
    "message",
    "one_result",
    "with_clearance",
]


@dataclass(slots=True)
class IKResult:
    """Result of :func:`kinetree.ik.solve`.

    For a batch of targets every array field gains the batch's leading
    dimensions and ``message`` becomes an array of strings.

    Attributes:
        q: joint configuration (..., nq) [rad or m]; the best one found.
        success: every target within tolerance, judged on FK of ``q`` (and within the
            joint limits when they are respected).
        position_error: per target (..., n_targets) [m], over the masked axes, measured
            by FK of ``q``.
        orientation_error: per target (..., n_targets) [rad], measured by FK of ``q``.
        iterations: total iterations over all attempts.
        restarts: random restarts used.
        elapsed: wall time of the whole call [s].
        message: why it stopped.
        reachable: False where a target is provably outside the workspace
            (farther from the first active joint than the chain can stretch).
        history: iterates (k, nq) when ``record=True`` (single solves), else None.
        error_history: (k, 2) max position [m] and orientation [rad] error per iterate.
        frames: the frame of each target, in the order of the error columns.
        method: the method that produced ``q``.
        min_distance: with collision checks (``obstacles=``, ``self_collision=``), the
            signed clearance [m] of ``q``: the smallest distance over every checked pair
            of the spheres that contain the links (negative: penetration; inf when no
            pair is checked), by the full closest-pair search. ``success`` then also
            means ``min_distance >= margin``. None without collision checks.
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
    min_distance: np.ndarray | float | None = None

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


# The message vocabulary: one phrase per outcome.
CONVERGED = "converged"
OUT_OF_REACH = (
    "target out of reach: farther from the first active joint than the chain can stretch; "
    "returned the closest configuration found"
)
NOT_CONVERGED = (
    "not converged: iteration or time budget spent (the target may be blocked by joint "
    "limits or inactive joints); returned the best configuration found"
)
#: What a failed solve without restarts adds (an explicit method has none by default).
NO_RESTARTS = (
    "no restarts: method='auto' restarts from random starts, or give restarts=N to try "
    "N more starts with this method"
)
IN_COLLISION = (
    "in collision: on target, but closer than the margin to an obstacle or to itself "
    "(see min_distance); returned the best configuration found"
)


def is_bad_input(status: Any) -> Any:
    """Whether a kernel status (``layout.ST_*``: an int, or an array of them, elementwise)
    means bad input, for which the solve raises (``layout.BAD_INPUT``) instead of
    returning a result. Plain comparisons, so the GPU's kernels compile it too."""
    return (status == ST_NONFINITE) | (status == ST_NOT_RIGID) | (status == ST_TOO_FAR)


def converged(iterations: int, restarts: int) -> str:
    """The message of a solve that converged."""
    if restarts:
        return f"{CONVERGED} in {iterations} iterations after {restarts} restarts"
    if 0 <= iterations < len(_CONVERGED_IN):
        return _CONVERGED_IN[iterations]
    return f"{CONVERGED} in {iterations} iterations"


#: The messages of the usual first-attempt convergences, made once (formatting one
#: costs a quarter of a microsecond per solve).
_CONVERGED_IN = [f"{CONVERGED} in {i} iterations" for i in range(256)]


def message(success: bool, reachable: bool, iterations: int = 0, restarts: int = 0) -> str:
    """The message of one solve."""
    if success:
        return converged(iterations, restarts)
    if not reachable:
        return OUT_OF_REACH
    if restarts:
        return f"{NOT_CONVERGED} ({iterations} iterations, {restarts} restarts)"
    return f"{NOT_CONVERGED} ({iterations} iterations, {NO_RESTARTS})"


def one_result(
    q: np.ndarray,
    success: bool,
    position_error: np.ndarray,
    orientation_error: np.ndarray,
    iterations: int,
    restarts: int,
    reachable: bool,
    elapsed: float,
    frames: tuple[str, ...],
    method: str,
    history: np.ndarray | None = None,
    error_history: np.ndarray | None = None,
) -> IKResult:
    """The :class:`IKResult` of one solve (errors already finite or inf, never NaN).

    The compiled path calls it positionally and it builds the result positionally: on
    Python 3.11 keyword arguments to a 13-field dataclass cost 2.4 us against 0.8 us,
    a sixth of a whole Panda solve (measured, ``docs/benchmarks.md``)."""
    return IKResult(
        q,
        success,
        position_error,
        orientation_error,
        iterations,
        restarts,
        elapsed,
        message(success, reachable, iterations, restarts),
        reachable,
        history,
        error_history,
        frames,
        method,
    )


def with_clearance(
    result: IKResult, min_distance: float, in_collision: bool, template: Any = None
) -> IKResult:
    """Add the clearance [m] of a collision-aware single solve to ``result`` (in place);
    ``in_collision``: on target but closer than the margin (the message says so, and
    names the closest pair and its depth or gap when the solve's ``template`` is given)."""
    result.min_distance = min_distance
    if in_collision:
        result.message = IN_COLLISION
        if template is not None and template.collision is not None:
            from ..collision.report import closest_pair

            a, b, d = closest_pair(template.model, template.collision, result.q)
            if a:
                how = f"{-d * 1e3:.1f} mm deep" if d < 0 else f"{d * 1e3:.1f} mm apart"
                margin = template.options.margin * 1e3
                result.message = (
                    f"in collision: on target, but {a} and {b} are {how} (margin "
                    f"{margin:g} mm; on the spheres that contain the links); returned the "
                    "best configuration found"
                )
    return result


def make_result(
    *,
    q: np.ndarray,
    success: np.ndarray,
    position_error: np.ndarray,
    orientation_error: np.ndarray,
    iterations: np.ndarray,
    restarts: np.ndarray,
    reachable: np.ndarray,
    batch: tuple[int, ...],
    elapsed: float,
    frames: tuple[str, ...],
    method: str,
    history: np.ndarray | None = None,
    error_history: np.ndarray | None = None,
    min_distance: np.ndarray | None = None,
    in_collision: np.ndarray | None = None,
) -> IKResult:
    """An :class:`IKResult` from flat per-problem arrays (``B = prod(batch)`` rows, or
    one row with ``batch == ()``). Errors that are NaN are reported as inf and such a
    problem is never a success. ``min_distance``: the clearances of a collision-aware
    solve; ``in_collision``: where the solve ended on target but too close."""
    nq = q.shape[-1]
    T = position_error.shape[-1]
    pe = np.where(np.isnan(position_error), np.inf, position_error)
    oe = np.where(np.isnan(orientation_error), np.inf, orientation_error)
    ok = np.asarray(success, dtype=bool) & np.all(np.isfinite(pe) & np.isfinite(oe), axis=-1)
    its = np.asarray(iterations).astype(np.int64)
    rs = np.asarray(restarts).astype(np.int64)
    reach = np.asarray(reachable, dtype=bool)
    if not batch:
        s, r, i, n = (
            bool(ok.reshape(-1)[0]),
            bool(reach.reshape(-1)[0]),
            int(its.flat[0]),
            int(rs.flat[0]),
        )
        hit = in_collision is not None and bool(np.asarray(in_collision).reshape(-1)[0])
        return IKResult(
            q=q.reshape(nq),
            success=s,
            position_error=pe.reshape(T),
            orientation_error=oe.reshape(T),
            iterations=i,
            restarts=n,
            elapsed=elapsed,
            message=IN_COLLISION if hit else message(s, r, i, n),
            reachable=r,
            history=history,
            error_history=error_history,
            frames=frames,
            method=method,
            min_distance=None if min_distance is None else float(np.reshape(min_distance, -1)[0]),
        )
    ok = ok.reshape(batch)
    reach = reach.reshape(batch)
    msg = np.where(ok, CONVERGED, np.where(reach, "not converged", "target out of reach"))
    if in_collision is not None:
        msg = np.where(np.asarray(in_collision).reshape(batch), "in collision", msg)
    return IKResult(
        q=q.reshape(*batch, nq),
        success=ok,
        position_error=pe.reshape(*batch, T),
        orientation_error=oe.reshape(*batch, T),
        iterations=its.reshape(batch),
        restarts=rs.reshape(batch),
        elapsed=elapsed,
        message=msg,
        reachable=reach,
        frames=frames,
        method=method,
        min_distance=None if min_distance is None else np.array(min_distance).reshape(batch),
    )
