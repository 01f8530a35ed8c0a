"""A frame's position, orientation or pose."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..._validate import as_array, check_rigid
from ...errors import InvalidValueError
from ...model import Model
from ...spatial import matrix_to_axis_angle
from .task import Task, check_cost, check_gain

__all__ = ["FrameTask", "inverse_left_jacobian"]


def inverse_left_jacobian(phi: np.ndarray) -> np.ndarray:
    """``J_l^{-1}(phi)`` (3, 3) of SO(3): ``d log(exp(w dt) exp(phi)) / d(w dt)``."""
    theta = float(np.linalg.norm(phi))
    K = np.array([[0.0, -phi[2], phi[1]], [phi[2], 0.0, -phi[0]], [-phi[1], phi[0], 0.0]])
    if theta < 1e-6:
        return np.eye(3) - 0.5 * K + K @ K / 12.0
    coef = 1.0 / theta**2 - (1.0 + np.cos(theta)) / (2.0 * theta * np.sin(theta))
    return np.eye(3) - 0.5 * K + coef * (K @ K)


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
            [check_cost(position_cost, "position_cost", 3),
             check_cost(orientation_cost, "orientation_cost", 3)]
        )  # fmt: skip
        self.gain = check_gain(gain)
        self.lm_damping = self._check_lm(lm_damping)
        self.target: np.ndarray | None = None
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

    def _pose(self, model: Model, q: np.ndarray) -> np.ndarray:
        if self.target is None:
            raise InvalidValueError(f"FrameTask on {self.frame!r} has no target; set_target()")
        return model.fk(q, self.frame)

    def error(self, model: Model, q: np.ndarray) -> np.ndarray:
        T = self._pose(model, q)
        target = self.target if self.target is not None else T
        e = np.empty(6)
        e[:3] = T[:3, 3] - target[:3, 3]
        e[3:] = matrix_to_axis_angle(T[:3, :3] @ target[:3, :3].T)
        return e

    def jacobian(self, model: Model, q: np.ndarray) -> np.ndarray:
        J = model.jacobian(q, self.frame).copy()
        e = self.error(model, q)
        J[3:] = inverse_left_jacobian(e[3:]) @ J[3:]
        return J
