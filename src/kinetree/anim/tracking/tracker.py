"""Live tracking: one frame of targets in, one configuration out, causal.

:class:`Tracker` keeps the last two configurations, a filtered posture, and the pins of
planted feet: constant memory, and frame ``t`` depends on frames up to ``t`` only.

Each :meth:`Tracker.update`:

1. **Predict** from the last two frames (constant velocity, damped by
   :data:`PREDICT`), in the tangent space of the configuration (quaternions too).
2. **Place** the body where the targets say when the pelvis is not tracked: the
   floating base moves by the step of the head (or the first target) from where the
   prediction puts it, so the body walks with a headset instead of leaning (a crouch
   then bends the legs where a ground keeps the soles up). Without a temporal prior
   the base is first turned and moved toward the upright body under the head; a
   temporal prior places the pelvis itself, and only the shift is applied.
3. **Guide**: the prior's configuration for these targets (``prior=``), blended into
   the prediction by :data:`GUIDE_BLEND` per frame (1: taken whole; the temporal
   prior's guesses are as smooth as the capture on the held-out clips, and a filter
   only lags behind them: the joint error from three 6D points doubled at 0.35);
   without a prior, a pull of :data:`REST_BLEND` per frame toward the skeleton's
   neutral limbs keeps the null space from drifting.
4. **Solve** from that reference (:class:`~._solve.FrameSolver`): the targets met by the
   library's IK, limbs first so the trunk keeps the reference's posture, within the
   anatomical ranges, planted feet pinned, hands best effort when out of reach, soles
   above the ground. A common frame costs one or two compiled IK calls and one FK.
5. **Contacts**: an untracked foot that is low and slow is planted (pinned where it
   is) until its reference position has moved :data:`RELEASE` body heights away or the
   pin cannot be kept.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..._validate import check_model, check_positive
from ...errors import InvalidValueError
from ...ik.result import IKResult
from ...ik.targets import Position
from ...model import Model
from ..anatomy import anatomical
from ._guides import MotionGuide, PoseGuide, guide_for
from ._skeleton import Ground, Skeleton, read_ground, skeleton
from ._solve import FrameSolver, target_errors
from ._tracks import read_targets

__all__ = [
    "GUIDE_BLEND",
    "PLANT_HEIGHT",
    "PLANT_SPEED",
    "PREDICT",
    "RELEASE",
    "REST_BLEND",
    "UPRIGHT_BLEND",
    "Tracker",
]


def _rotation(axis: np.ndarray, angle: float) -> np.ndarray:
    """Rotation matrix of ``angle`` [rad] about the unit ``axis``."""
    K = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]])
    return np.eye(3) + np.sin(angle) * K + (1.0 - np.cos(angle)) * (K @ K)


#: Share of the last frame's velocity carried into the prediction (1: constant velocity).
PREDICT = 0.8
#: Share of the upright body under the head blended into the base per frame (no pelvis
#: target).
UPRIGHT_BLEND = 0.3
#: Share of the guide's configuration blended into the reference per frame.
GUIDE_BLEND = 1.0
#: Share of the neutral limbs blended into the reference per frame without a guide.
REST_BLEND = 0.02
#: A foot is planted below this speed [body heights / s] ...
PLANT_SPEED = 0.2
#: ... and within this height [body heights] of the lowest it has been (or the ground).
PLANT_HEIGHT = 0.04
#: A planted foot is released when its reference is this far from the pin [body heights].
RELEASE = 0.12

#: Defaults of the per-frame IK (each overridable through ``**ik_options``): a short
#: budget (a frame that cannot be met is reported, not searched for long).
IK_DEFAULTS: dict[str, Any] = {"restarts": 0, "time_budget": None}


def check_rate(fps: Any) -> float:
    """``fps`` as a positive float; :class:`~kinetree.errors.InvalidValueError` if not."""
    return check_positive(fps, "fps")


class Tracker:
    """Live, causal tracking of a body from sparse targets; see the module docstring.

    Args:
        model: a skeleton or humanoid with body parts
            (:func:`~kinetree.io.body_parts.find_body_parts`, or ``roles=``).
        fps: frames per second of the stream [1/s], > 0.
        prior: ``"human"`` (the learned prior), None (no learning), a ``.npz`` path, a
            :class:`~kinetree.learn.PosePrior` or a motion prior (``bind(model)``).
        roles: ``{role: frame}`` replacing or adding to the found body parts.
        ground: the floor: a height along the body's up axis, ``(height, "y")``, or
            None (no floor).
        anatomy: keep human joint ranges (:func:`kinetree.anim.anatomy.anatomical`);
            False: the model's own limits only.
        **ik_options: options of every ``model.ik`` call (``tol``, ``method``, ...).

    Raises :class:`~kinetree.errors.KinetreeError` subclasses for a bad model, rate,
    prior, roles or ground, before any solve.
    """

    def __init__(
        self,
        model: Model,
        *,
        fps: float,
        prior: Any = "human",
        roles: Mapping[str, str] | None = None,
        ground: Any = None,
        anatomy: bool = True,
        **ik_options: Any,
    ) -> None:
        check_model(model)
        self.fps = check_rate(fps)
        for bad in ("q0", "rest", "prior"):
            if bad in ik_options:
                raise InvalidValueError(
                    f"{bad}= is set by the tracker (the posture reference); give prior= or "
                    "leave it out"
                )
        self.sk: Skeleton = skeleton(model, roles)
        self.ground: Ground | None = read_ground(ground, self.sk.up_axis)
        self.model = model
        solve_model = anatomical(model, self.sk.parts) if anatomy else model
        self.solve_model = solve_model
        options = {**IK_DEFAULTS, **ik_options}
        self.solver = FrameSolver(self.sk, solve_model, options, self.ground)
        self.guide: PoseGuide | MotionGuide | None = guide_for(prior, model, roles, self.fps)
        pelvis = self.sk.parts["pelvis"]
        self._base_q = np.zeros(model.nq, dtype=bool)
        for name in model.chain(pelvis):
            self._base_q[model.q_slice(name)] = True
        self._base_joints = model.chain(pelvis)
        T_rest = model.fk_all(model.neutral())
        i_pelvis, i_head = self.sk.index[pelvis], self.sk.index[self.sk.parts["head"]]
        self._rest_rot = (T_rest[i_pelvis, :3, :3], T_rest[i_head, :3, :3])
        self._head_offset = T_rest[i_head, :3, 3] - T_rest[i_pelvis, :3, 3]
        self._quats = len(model.qv.ball_nodes) > 0
        self._frames = set(model.frame_names)
        self._pelvis, self._head = pelvis, self.sk.parts.get("head")
        parts = self.sk.parts
        self._ankles = {s: parts[f"ankle_{s}"] for s in "lr" if f"ankle_{s}" in parts}
        self._upright_options: dict[str, Any] = {
            "active": self._base_joints,
            "method": "dls",
            "max_iter": 20,
            "time_budget": None,
            "restarts": 0,
        }
        self.reset()

    # --- state -------------------------------------------------------------------

    def reset(self) -> None:
        """Forget the stream: the next frame starts from the neutral pose."""
        self.q_prev: np.ndarray | None = None
        self.q_prev2: np.ndarray | None = None
        #: the guide's configuration of the last frame (None without a guide)
        self.guide_q: np.ndarray | None = None
        self.pins: dict[str, np.ndarray] = {}
        self._foot_prev: dict[str, np.ndarray] = {}
        self._foot_low: dict[str, float] = {}
        if self.guide is not None:
            self.guide.reset()

    # --- tangent-space helpers ---------------------------------------------------

    def _diff(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return b - a if not self._quats else self.model.difference(a, b)

    def _step(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        return q + v if not self._quats else self.model.integrate(q, v)

    def _blend(self, a: np.ndarray, b: np.ndarray, w: float) -> np.ndarray:
        return self._step(a, w * self._diff(a, b))

    # --- one frame -----------------------------------------------------------------

    def reference(self, targets: dict[str, Any]) -> np.ndarray:
        """The posture reference of this frame (steps 1-3 of the module docstring)."""
        m = self.model
        first = self.q_prev is None
        if self.q_prev is None:
            q = m.neutral()
        elif self.q_prev2 is None:
            q = self.q_prev.copy()
        else:
            q = self._step(self.q_prev, PREDICT * self._diff(self.q_prev2, self.q_prev))
        guide = self.guide
        if isinstance(guide, MotionGuide):
            # The temporal prior places the whole body, the pelvis too: the base is only
            # shifted so the anchor meets its target (no upright guess over its pelvis).
            g = self.guide_q = guide.step(targets, q)
            q = self._blend(q, g, 1.0 if first else GUIDE_BLEND)
            return self._place(q, targets, upright=False)
        q = self._place(q, targets)
        if guide is not None:
            g = self.guide_q = guide.step(targets, q)
            q = self._blend(q, g, 1.0 if first else GUIDE_BLEND)
            return self._place(q, targets)
        rest = np.where(self._base_q, q, m.q_neutral)
        return self._blend(q, rest, 1.0 if first else REST_BLEND)

    def _place(self, q: np.ndarray, targets: dict[str, Any], upright: bool = True) -> np.ndarray:
        """Without a pelvis target: move the floating base toward the upright body under
        the head (:data:`UPRIGHT_BLEND` per frame, in full on the first frame; where
        ``upright``), then so the anchor target's frame (the head, else the first
        target) sits at its target."""
        sk = self.sk
        if self._pelvis in targets or sk.base_cols.size == 0:
            return q
        head = self._head
        if upright and head in targets:
            up = self._upright(q, targets[head])
            w = 1.0 if self.q_prev is None else UPRIGHT_BLEND
            q = self._blend(q, up, w)
        anchor = head if head in targets else next(iter(targets))
        t = targets[anchor]
        p_target = t.xyz if type(t) is Position else t[:3, 3]
        p_now = self.model.fk(q, anchor)[:3, 3]
        return sk.shift_base(q, p_target - p_now)

    def _upright(self, q: np.ndarray, head_target: Any) -> np.ndarray:
        """``q`` with its base turned and moved so the pelvis stands upright under the
        head target, facing where the head faces (a position-only head: where the pelvis
        faces now), at the rest pose's head-to-pelvis offset."""
        m, sk, body = self.model, self.sk, self.sk.body
        pelvis = sk.parts["pelvis"]
        R_pelvis_rest, R_head_rest = self._rest_rot
        if isinstance(head_target, Position):
            p_head = np.asarray(head_target.xyz)
            fwd = m.fk(q, pelvis)[:3, :3] @ (R_pelvis_rest.T @ body.forward)
        else:
            p_head = head_target[:3, 3]
            fwd = head_target[:3, :3] @ (R_head_rest.T @ body.forward)
        fwd = fwd - body.up * float(fwd @ body.up)
        n = float(np.linalg.norm(fwd))
        if n < 1e-6:
            return q
        fwd /= n
        angle = np.arctan2(float(np.cross(body.forward, fwd) @ body.up), float(body.forward @ fwd))
        R_yaw = _rotation(body.up, angle)
        T_des = np.eye(4)
        T_des[:3, :3] = R_yaw @ R_pelvis_rest
        T_des[:3, 3] = p_head - R_yaw @ self._head_offset
        r = m.ik(T_des, pelvis, q0=q, **self._upright_options)
        return np.asarray(r.q, dtype=np.float64)

    def update(self, targets: Mapping[str, Any]) -> IKResult:
        """The configuration for one frame's ``{frame: target}`` (4x4 poses, 3-vectors,
        plain :class:`~kinetree.ik.Pose`/:class:`~kinetree.ik.Position`). The result's
        errors and ``frames`` are the caller's targets', measured by FK; ``success``
        says whether every one is met. Raises
        :class:`~kinetree.errors.KinetreeError` for bad targets before any solve."""
        t0 = time.perf_counter()
        tg = read_targets(self.model, targets, self._frames)
        q_ref = self.reference(tg)
        pins = {}
        for s, p in self.pins.items():
            ankle = self._ankles[s]
            if ankle not in tg:
                pins[ankle] = Position(p.copy())
        r, kept, T_all = self.solver.solve(tg, q_ref, pins, self.q_prev)
        q = np.asarray(r.q, dtype=np.float64)
        self._contacts(tg, q_ref, T_all, kept)
        self.q_prev2, self.q_prev = self.q_prev, q
        pos, rot = target_errors(T_all, tg, self.sk.index)
        return dataclasses.replace(
            r,
            q=q,
            position_error=pos,
            orientation_error=rot,
            frames=tuple(tg),
            elapsed=time.perf_counter() - t0,
        )

    def _contacts(
        self, targets: dict[str, Any], q_ref: np.ndarray, T_all: np.ndarray, kept: bool
    ) -> None:
        sk = self.sk
        H = sk.height
        up = self.ground.up if self.ground is not None else sk.up_axis
        if not kept:
            self.pins.clear()
        T_ref: np.ndarray | None = None
        for s, ankle in self._ankles.items():
            if ankle in targets:
                continue
            p = T_all[sk.index[ankle], :3, 3].copy()
            prev = self._foot_prev.get(s)
            self._foot_prev[s] = p
            low = min(self._foot_low.get(s, np.inf), float(p[up]))
            self._foot_low[s] = low
            floor = low
            if s in self.pins:
                if T_ref is None:
                    T_ref = self.model.fk_all(q_ref)
                ref = T_ref[sk.index[ankle], :3, 3]
                away = ref - self.pins[s]
                away[up] = 0.0
                if float(np.linalg.norm(away)) > RELEASE * H:
                    del self.pins[s]
                continue
            if prev is None:
                continue
            speed = float(np.linalg.norm(p - prev)) * self.fps
            if speed < PLANT_SPEED * H and float(p[up]) - floor < PLANT_HEIGHT * H:
                self.pins[s] = p
