"""One frame of tracking: the targets met from a posture reference, with priorities,
planted feet and the ground.

:class:`FrameSolver` runs ``model.ik`` (the library's solver, its tolerance, limits and
swing-twist ranges) from the reference configuration ``q_ref``: the damped least-squares
steps then find the configuration meeting the targets nearest to the reference, so the
reference decides everything the targets leave free (the null space) and the targets
decide the rest. In order:

1. every target plus the pins of planted feet;
2. if that fails, without the pins (a foot that can no longer stay is released);
3. if that fails, from the last solved frame, then with :data:`RESTARTS` restarts;
4. if that fails, by priority: pelvis, head and feet exact first, then each hand best
   effort with its arm's joints only, so an unreachable hand never drags the head;
5. with a ground, a sole point below it gets a row holding it at the ground height
   (the up axis only), and the frame is solved again from there.

Success is judged on FK of the returned configuration against the caller's targets.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from ...ik.result import IKResult
from ...ik.targets import Pose, Position
from ...model import Model
from ..anatomy import clamp
from ._skeleton import Ground, Skeleton

__all__ = ["RESTARTS", "FrameSolver", "ik_targets", "target_errors"]

#: Random restarts of the last attempt at a frame that the reference and the last frame
#: did not solve.
RESTARTS = 8


def target_errors(
    T_all: np.ndarray, targets: dict[str, Any], index: dict[str, int]
) -> tuple[np.ndarray, np.ndarray]:
    """``(position errors, orientation errors)`` [length unit, rad] of ``targets`` on the
    frames' world poses ``T_all`` (``model.fk_all(q)``; orientation 0 for position
    targets)."""
    pos = np.empty(len(targets))
    rot = np.zeros(len(targets))
    for k, (frame, t) in enumerate(targets.items()):
        M = T_all[index[frame]]
        if type(t) is Position:
            d = M[:3, 3] - t.xyz
            pos[k] = math.sqrt(float(d @ d))
        else:
            d = M[:3, 3] - t[:3, 3]
            pos[k] = math.sqrt(float(d @ d))
            c = 0.5 * (float(np.vdot(t[:3, :3], M[:3, :3])) - 1.0)
            rot[k] = math.acos(min(1.0, max(-1.0, c)))
    return pos, rot


def ik_targets(targets: dict[str, Any]) -> dict[str, Any]:
    """The targets as ``model.ik``'s plain kinds (a 4x4 array as a
    :class:`~kinetree.ik.Pose`): the compiled drivers' shortest path."""
    return {f: (Pose(t) if type(t) is np.ndarray else t) for f, t in targets.items()}


class FrameSolver:
    """Solves one frame; see the module docstring.

    Args:
        sk: the skeleton.
        model: the model the IK runs on (``sk.model`` with anatomical limits, or as is).
        ik_options: ``model.ik`` options of the caller (``tol``, ``method``, ...).
        ground: the floor, or None.
    """

    def __init__(
        self, sk: Skeleton, model: Model, ik_options: dict[str, Any], ground: Ground | None
    ) -> None:
        self.sk = sk
        self.model = model
        self.options = dict(ik_options)
        self.ground = ground
        parts = sk.parts
        self.hands = {parts[r] for r in ("wrist_l", "wrist_r") if r in parts}
        self.arm_joints: dict[str, tuple[str, ...]] = {}
        for s in ("l", "r"):
            wrist = parts.get(f"wrist_{s}")
            top = parts.get(f"clavicle_{s}") or parts.get(f"shoulder_{s}")
            if wrist is None or top is None:
                continue
            k = int(model.parent[model.frame_index(top)])
            while k > 0 and model.hidden[k]:
                k = int(model.parent[k])
            self.arm_joints[wrist] = model.chain(wrist, model.node_names[k])
        #: every sole point's frame index, and the up axis as a position mask
        self.sole_index = np.array([i for ix in sk.soles.values() for i in ix], dtype=np.int64)
        self.up_mask = np.zeros(3)
        if ground is not None:
            self.up_mask[ground.up] = 1.0

    def solve(
        self,
        targets: dict[str, Any],
        q_ref: np.ndarray,
        pins: dict[str, Position],
        inside: np.ndarray | None = None,
    ) -> tuple[IKResult, bool, np.ndarray]:
        """``(result, pins kept, world poses of every frame at the result)`` for one
        frame from ``q_ref``; ``inside``: a configuration within the joint ranges near
        it (the last solved frame), toward which ``q_ref`` is moved where it is out of
        range. The common frame costs one compiled IK call and one FK."""
        m = self.model
        opts = self.options
        if m.swing_twist:
            q_ref = clamp(m, q_ref, inside)  # a start must be within the ranges the solve keeps
        plain = ik_targets(targets)
        r = m.ik({**plain, **pins} if pins else plain, q0=q_ref, **opts)
        kept = bool(pins)
        if not r.success:
            r, kept = self._again(plain, q_ref, pins, inside, r)
        T_all = m.fk_all(r.q)
        if self.ground is not None:
            r, T_all = self._above_ground(plain, pins if kept else {}, r, T_all)
        return r, kept, T_all

    def _again(
        self,
        plain: dict[str, Any],
        q_ref: np.ndarray,
        pins: dict[str, Position],
        inside: np.ndarray | None,
        r: IKResult,
    ) -> tuple[IKResult, bool]:
        """Steps 2-4 of the module docstring, for a frame the first call did not solve."""
        m = self.model
        opts = self.options
        kept = bool(pins)
        if pins:
            r, kept = m.ik(plain, q0=q_ref, **opts), False
        if not r.success:
            # From the last solved frame (the same basin, no pull of a bad reference),
            # then with a few restarts near the reference.
            for start, extra in ((inside, {}), (q_ref, {"restarts": RESTARTS})):
                if start is None:
                    continue
                again = m.ik(plain, q0=start, **{**opts, **extra})
                if again.success:
                    r = again
                    break
        if not r.success:
            r = self._by_priority(plain, q_ref, r)
        return r, kept

    def _by_priority(self, targets: dict[str, Any], q_ref: np.ndarray, r: IKResult) -> IKResult:
        hands = [f for f in targets if f in self.hands]
        exact = {f: t for f, t in targets.items() if f not in self.hands}
        if not hands or not exact:
            return r
        m = self.model
        first = m.ik(exact, q0=q_ref, **self.options)
        if not np.all(first.success):
            return r
        q = first.q
        for f in hands:
            joints = self.arm_joints.get(f)
            if joints is None:
                continue
            hand = m.ik({f: targets[f]}, q0=q, **{**self.options, "active": joints})
            q = hand.q
        return dataclasses.replace(
            first, q=q, success=False, message="a hand target is out of reach; met the others"
        )

    def _above_ground(
        self, plain: dict[str, Any], pins: dict[str, Position], r: IKResult, T: np.ndarray
    ) -> tuple[IKResult, np.ndarray]:
        g = self.ground
        assert g is not None
        low = T[self.sole_index, g.up, 3] < g.height - 1e-4 * self.sk.height
        if not low.any():
            return r, T
        rows: dict[str, Position] = {}
        for i in self.sole_index[low]:
            frame = self.model.frame_names[i]
            if frame in plain:
                continue
            p = T[i, :3, 3].copy()
            p[g.up] = g.height
            rows[frame] = Position(p, mask=self.up_mask)
        if not rows:
            return r, T
        again = self.model.ik({**plain, **pins, **rows}, q0=r.q, **self.options)
        if again.success or not r.success:
            return again, self.model.fk_all(again.q)
        return r, T
