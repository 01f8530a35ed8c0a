"""One frame of tracking: the targets met from a posture reference, with priorities,
planted feet and the ground.

:class:`FrameSolver` runs ``model.ik`` (the library's solver, its tolerance, limits and
swing-twist ranges) from the reference configuration ``q_ref``: the damped least-squares
steps then find a configuration meeting the targets near the reference, so the
reference decides what the targets leave free (the null space) and the targets decide
the rest. In order:

1. **limbs first**: every target plus the pins of planted feet, moving only the joints
   private to one target's chain (an arm for a hand, the neck for the head, a leg for
   a foot; the floating base for the pelvis): the trunk stays at the reference's
   posture. Least-squares steps over the whole body spread a hand's correction over
   the spine and the base, which moves every joint; the guide's trunk is better than
   that (the joint error from three 6D points falls by about a third);
2. the whole body from there, where the limbs alone cannot meet the targets (the
   common frame ends here: one or two compiled calls);
3. if that fails, on from where it stopped with :data:`LONGER_ITERATIONS` (a stretched
   leg reaching its ankle target converges slowly), then each unmet target's own
   joints alone with restarts (pelvis, head, hands, feet: :meth:`FrameSolver._limbs`),
   then without the pins (a foot that can no longer stay is released);
4. if that fails, from the last solved frame, then with :data:`RESTARTS` restarts;
5. if that fails, by priority: pelvis, head and feet exact first, then each hand best
   effort with its arm's joints only, so an unreachable hand never drags the head;
6. with a ground, a sole point below it gets a row holding it at the ground height
   (the up axis only), and the frame is solved again from there.

Success is judged on FK of the returned configuration against the caller's targets.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from ...ik.options import IKOptions
from ...ik.result import IKResult
from ...ik.targets import Pose, Position
from ...model import Model
from ..anatomy import clamp
from ._skeleton import Ground, Skeleton

__all__ = [
    "LIMB_ITERATIONS",
    "LONGER_ITERATIONS",
    "RESTARTS",
    "FrameSolver",
    "ik_targets",
    "target_errors",
]

#: Random restarts of the last attempt at a frame that the reference and the last frame
#: did not solve.
RESTARTS = 8
#: Iterations of the second attempt at a frame, from where the first stopped.
LONGER_ITERATIONS = 300
#: Solve each frame first with the joints private to each target's chain (limbs, neck),
#: then, where that fails, with the whole body from there.
LIMBS_FIRST = True
#: Iterations per attempt of a limb solved alone.
LIMB_ITERATIONS = 100


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
        self._local: dict[tuple[str, ...], dict[str, Any] | None] = {}
        #: per hand and foot frame, the options of an IK moving that limb only
        self.limb_options: dict[str, dict[str, Any]] = {}
        pelvis = parts["pelvis"]
        limbs = dict(self.arm_joints)
        head = parts.get("head")
        if head is not None:
            limbs[head] = model.chain(head, pelvis)
        limbs[pelvis] = model.chain(pelvis)
        for s in ("l", "r"):
            ankle = parts.get(f"ankle_{s}")
            if ankle is not None:
                limbs[ankle] = model.chain(ankle, pelvis)
        for frame, joints in limbs.items():
            if joints:
                self.limb_options[frame] = {
                    **self.options,
                    "active": joints,
                    "restarts": RESTARTS,
                    "max_iter": LIMB_ITERATIONS,
                }
        #: position [length unit] and rotation [rad] tolerance of the per-target errors
        tol = IKOptions(**{k: v for k, v in self.options.items() if k == "tol"}).tol
        self.tol = (tol[0] * model.length_scale, tol[1])
        #: the options of a second attempt that goes on from the first's end
        self.longer = {**self.options, "max_iter": LONGER_ITERATIONS}
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
        goal = {**plain, **pins} if pins else plain
        r = None
        if LIMBS_FIRST:
            local = self._local_options(tuple(goal))
            if local is not None:
                first = m.ik(goal, q0=q_ref, **local)
                r = first if first.success else m.ik(goal, q0=first.q, **opts)
        if r is None:
            r = m.ik(goal, q0=q_ref, **opts)
        kept = bool(pins)
        if not r.success:
            r, kept = self._again(plain, q_ref, pins, inside, r)
        T_all = m.fk_all(r.q)
        if self.ground is not None:
            r, T_all = self._above_ground(plain, pins if kept else {}, r, T_all)
        return r, kept, T_all

    def _local_options(self, frames: tuple[str, ...]) -> dict[str, Any] | None:
        """The options of an IK moving only the joints private to one target's chain
        (a hand's arm, the head's neck, a foot's leg: none that moves two targets), so
        the trunk stays where the reference puts it when the limbs can meet their
        targets; None when that leaves every joint active (one target)."""
        hit = self._local.get(frames)
        if hit is not None or frames in self._local:
            return hit
        m = self.model
        count: dict[str, int] = {}
        for f in frames:
            for j in m.chain(f):
                count[j] = count.get(j, 0) + 1
        # A target with no joint of its own (the pelvis: the root's joints move every
        # target) brings its whole chain.
        joints = {j for j, c in count.items() if c == 1}
        for f in frames:
            chain = m.chain(f)
            if not any(j in joints for j in chain):
                joints.update(chain)
        active = tuple(j for j in count if j in joints)
        out = None if len(active) == len(count) else {**self.options, "active": active}
        self._local[frames] = out
        return out

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
        # Near a stretched limb (a straight knee reaching its ankle target) the steps
        # shrink: go on from where the first call stopped, with a longer budget.
        goal = {**plain, **pins} if pins else plain
        r = m.ik(goal, q0=r.q, **self.longer)
        if not r.success:
            r = self._limbs(goal, r)
        if pins and not r.success:
            r, kept = m.ik(plain, q0=r.q, **self.longer), False
            if not r.success:
                r = self._limbs(plain, r)
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

    def _limbs(self, goal: dict[str, Any], r: IKResult) -> IKResult:
        """Each pelvis, head, hand or foot target that ``r`` leaves unmet solved again
        with its own joints only (the pelvis: the floating base; the head: the spine and
        neck above the pelvis; with :data:`RESTARTS` restarts: a stretched leg or a bent
        spine stuck at a joint range), the rest of the body as it is, then every target
        from there. Pelvis first, then head, then hands and feet; once one has moved,
        every later one is solved again too (it moved with it)."""
        m = self.model
        pos = np.asarray(r.position_error)
        rot = np.asarray(r.orientation_error)
        unmet = {f for k, f in enumerate(goal) if pos[k] > self.tol[0] or rot[k] > self.tol[1]}
        q = r.q
        moved = False
        parts = self.sk.parts
        trunk = [parts.get("pelvis"), parts.get("head")]
        order = sorted(goal, key=lambda f: trunk.index(f) if f in trunk else len(trunk))
        for frame in order:
            opts = self.limb_options.get(frame)
            if opts is None or not (frame in unmet or moved):
                continue
            q = m.ik({frame: goal[frame]}, q0=q, **opts).q
            moved = True
        if not moved:
            return r
        again = m.ik(goal, q0=q, **self.options)
        return again if again.success else r

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
