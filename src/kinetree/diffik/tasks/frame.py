"""A frame's position, orientation or pose."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..._validate import as_array, check_rigid
from ...errors import InvalidValueError, ShapeError
from ...kinematics import needed_nodes, packed
from ...model import Model
from .._kernels import frame_error_jacobian
from .task import Task, check_cost, check_gain

__all__ = ["FrameTask"]


class FrameTask(Task):
    """Bring ``frame`` to the pose ``target`` (4x4, world frame).

    Error (6,): ``[p - p_target; log(R R_target^T)]`` in world axes [m, rad]; Jacobian:
    the geometric Jacobian's rows, the angular ones through the inverse left Jacobian
    of SO(3), so the error falls exactly at rate ``gain`` to first order even far from
    the target. ``position_cost`` [cost / m] and ``orientation_cost`` [cost / rad]: a
    number or one per world axis; 0 leaves that part free (a position task is
    ``orientation_cost=0``).
    """

    goal = True

    def __init__(
        self,
        frame: str,
        target: ArrayLike | None = None,
        position_cost: ArrayLike = 1.0,
        orientation_cost: ArrayLike = 1.0,
        gain: float = 1.0,
        lm_damping: float = 0.0,
    ) -> None:
        if not isinstance(frame, str) or not frame:
            raise InvalidValueError(f"frame must be a frame name, got {frame!r}")
        self.frame = frame
        self.cost = np.concatenate(
            [
                check_cost(position_cost, "position_cost", 3),
                check_cost(orientation_cost, "orientation_cost", 3),
            ]
        )
        self.gain = check_gain(gain)
        self.lm_damping = self._check_lm(lm_damping)
        self.target: np.ndarray | None = None
        self._scratch: tuple | None = None
        if target is not None:
            self.set_target(target)

    def set_target(self, target: ArrayLike) -> None:
        """Set the target pose (4x4) [m]; a 3-vector sets a position (identity rotation:
        use ``orientation_cost=0`` with it)."""
        T = as_array(target, "target")
        if T.shape == (3,):
            T4 = np.eye(4)
            T4[:3, 3] = T
            T = T4
        if T.shape != (4, 4):
            raise InvalidValueError(f"target must be a 4x4 pose or a 3-vector, got {T.shape}")
        check_rigid(T, "target")
        self.target = T.copy()

    def set_target_from_configuration(self, model: Model, q: ArrayLike) -> None:
        """Aim at the frame's pose at ``q``."""
        self.target = model.fk(q, self.frame)

    def _compute(self, model: Model, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(e, J)`` from one compiled call (:func:`kinetree.diffik._kernels.
        frame_error_jacobian`); scratch kept per model."""
        if self.target is None:
            raise InvalidValueError(f"FrameTask on {self.frame!r} has no target; set_target()")
        if self._scratch is None or self._scratch[0] is not model:
            node = model.frame_index(self.frame)
            self._scratch = (
                model,
                node,
                needed_nodes(model, (node,)),
                np.empty((model.n_nodes, 3, 4)),
                np.empty((3, 3)),
            )
        _, node, nodes, W, M = self._scratch
        fdata, idata = packed(model)
        e = np.empty(6)
        J = np.empty((6, model.nv))
        qa = np.require(np.asarray(q, dtype=np.float64), np.float64, ("C", "W"))
        if qa.shape != (model.nq,):
            raise ShapeError(f"q must have shape ({model.nq},), got {qa.shape}")
        frame_error_jacobian(qa, fdata, idata, nodes, node, self.target, W, M, e, J)
        return e, J

    def error(self, model: Model, q: np.ndarray) -> np.ndarray:
        return self._compute(model, q)[0]

    def jacobian(self, model: Model, q: np.ndarray) -> np.ndarray:
        return self._compute(model, q)[1]

    def objective(self, model: Model, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        e, J = self._compute(model, q)
        return self.terms(model, e, J)
