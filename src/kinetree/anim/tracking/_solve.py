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
from typing import Any

import numpy as np

from ...ik.result import IKResult
from ...ik.targets import Position
from ...model import Model
from ..anatomy import clamp
from ._skeleton import Ground, Skeleton

__all__ = ["RESTARTS", "FrameSolver", "target_errors"]

#: Random restarts of the last attempt at a frame that the reference and the last frame
#: did not solve.
RESTARTS = 8


def target_errors(
    model: Model, q: np.ndarray, targets: dict[str, Any], index: dict[str, int]
) -> tuple[np.ndarray, np.ndarray]:
    """``(position errors, orientation errors)`` [length unit, rad] of ``targets`` at ``q``
    by FK (orientation 0 for position targets)."""
    T = model.fk_all(q)
    pos = np.empty(len(targets))
    rot = np.zeros(len(targets))
    for k, (frame, t) in enumerate(targets.items()):
        M = T[index[frame]]
        if isinstance(t, Position):
            pos[k] = float(np.linalg.norm(M[:3, 3] - np.asarray(t.xyz)))
        else:
            pos[k] = float(np.linalg.norm(M[:3, 3] - t[:3, 3]))
            c = 0.5 * (float(np.trace(t[:3, :3].T @ M[:3, :3])) - 1.0)
            rot[k] = float(np.arccos(np.clip(c, -1.0, 1.0)))
    return pos, rot


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

    def solve(
        self,
        targets: dict[str, Any],
        q_ref: np.ndarray,
        pins: dict[str, Position],
        inside: np.ndarray | None = None,
    ) -> tuple[IKResult, bool]:
        """``(result, pins kept)`` for one frame from ``q_ref``; ``inside``: a
        configuration within the joint ranges near it (the last solved frame), toward
        which ``q_ref`` is moved where it is out of range."""
        m = self.model
        opts = self.options
        if m.swing_twist:
            q_ref = clamp(m, q_ref, inside)  # a start must be within the ranges the solve keeps
        r = m.ik({**targets, **pins} if pins else targets, q0=q_ref, **opts)
        kept = bool(pins)
        if pins and not np.all(r.success):
            plain = m.ik(targets, q0=q_ref, **opts)
            r, kept = plain, False
        if not np.all(r.success):
            # From the last solved frame (the same basin, no pull of a bad reference),
            # then with a few restarts near the reference.
            for start, extra in ((inside, {}), (q_ref, {"restarts": RESTARTS})):
                if start is None:
                    continue
                again = m.ik(targets, q0=start, **{**opts, **extra})
                if np.all(again.success):
                    r = again
                    break
        if not np.all(r.success):
            r = self._by_priority(targets, q_ref, r)
        if self.ground is not None:
            r = self._above_ground(targets, pins if kept else {}, r)
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
        self, targets: dict[str, Any], pins: dict[str, Position], r: IKResult
    ) -> IKResult:
        g = self.ground
        assert g is not None
        T = self.model.fk_all(r.q)
        tol = 1e-4 * self.sk.height
        rows: dict[str, Position] = {}
        mask = np.zeros(3)
        mask[g.up] = 1.0
        for ix in self.sk.soles.values():
            for i in ix:
                frame = self.model.frame_names[i]
                if frame in targets or T[i, g.up, 3] >= g.height - tol:
                    continue
                p = T[i, :3, 3].copy()
                p[g.up] = g.height
                rows[frame] = Position(p, mask=mask)
        if not rows:
            return r
        again = self.model.ik({**targets, **pins, **rows}, q0=r.q, **self.options)
        if np.all(again.success) or not np.all(r.success):
            return again
        return r
