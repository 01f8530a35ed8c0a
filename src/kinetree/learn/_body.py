"""A skeleton seen per body part: the representation the pose prior reads and predicts.

One prior serves skeletons with different joint names, rest orientations and bone
lengths because it never sees them: it sees *roles* (:mod:`kinetree.io.body_parts`)
placed in a **body frame** and measured in **body heights**.

* Body frame, fixed to the pelvis: ``x`` to the body's left (hip_r -> hip_l), ``y`` up
  (pelvis -> head), ``z = x cross y`` forward, all taken at the skeleton's rest pose
  (``model.neutral()``, standing). Its orientation relative to the pelvis joint's own
  frame is a constant of the skeleton (``R_pelvis_body``), so a clip's pelvis rotation
  gives the body frame in every frame.
* Height ``H``: the length of the body along its bones, ankle to head: the mean of the
  two legs' ``hip -> knee -> ankle`` lengths, plus the distance from the hips' midpoint
  to the pelvis and from the pelvis to the head, at the rest pose (the file's unit;
  lengths only, so a rest pose whose legs point anywhere gives the same). Every
  position is divided by it.
* World up: the body's up at rest (pelvis -> head), in world coordinates: a rest pose
  whose torso stands (its legs may point anywhere).

A frame is then: the inputs (head, hands, feet positions relative to the pelvis in the
body frame, the world up seen from the body frame, and which inputs are given) and the
outputs (every role of :data:`OUTPUT_ROLES`, relative to the pelvis in the body frame;
missing roles masked out).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import UnsupportedError
from ..io.body_parts import describe, find_body_parts
from ..model import Model

__all__ = [
    "INPUT_ROLES",
    "N_INPUTS",
    "OUTPUT_ROLES",
    "BodyLayout",
    "mirror_inputs",
    "mirror_outputs",
]

#: Roles whose positions the prior reads (the sparse targets besides the pelvis pose).
INPUT_ROLES = ("head", "wrist_l", "wrist_r", "ankle_l", "ankle_r")
#: Roles the prior predicts, relative to the pelvis.
OUTPUT_ROLES = (
    "spine",
    "chest",
    "neck",
    "head",
    "clavicle_l",
    "shoulder_l",
    "elbow_l",
    "wrist_l",
    "hip_l",
    "knee_l",
    "ankle_l",
    "toe_l",
    "clavicle_r",
    "shoulder_r",
    "elbow_r",
    "wrist_r",
    "hip_r",
    "knee_r",
    "ankle_r",
    "toe_r",
)
#: Input vector: 3 per input role, the world up (3), then one presence flag per input role.
N_INPUTS = 3 * len(INPUT_ROLES) + 3 + len(INPUT_ROLES)
#: Roles a skeleton needs for the prior.
REQUIRED_ROLES = ("pelvis", "hip_l", "hip_r", *INPUT_ROLES)
#: Each output role's parent role (the bone the fit keeps at this skeleton's length).
PARENT_ROLE = {
    "spine": "pelvis",
    "chest": "spine",
    "neck": "chest",
    "head": "neck",
    "clavicle": "chest",
    "shoulder": "clavicle",
    "elbow": "shoulder",
    "wrist": "elbow",
    "hip": "pelvis",
    "knee": "hip",
    "ankle": "knee",
    "toe": "ankle",
}


def _swap(role: str) -> str:
    if role.endswith("_l"):
        return role[:-2] + "_r"
    if role.endswith("_r"):
        return role[:-2] + "_l"
    return role


_IN_SWAP = np.array([INPUT_ROLES.index(_swap(r)) for r in INPUT_ROLES])
_OUT_SWAP = np.array([OUTPUT_ROLES.index(_swap(r)) for r in OUTPUT_ROLES])


def mirror_inputs(x: np.ndarray) -> np.ndarray:
    """Inputs ``(n, N_INPUTS)`` of the left-right mirrored body (x negated, sides swapped)."""
    k = len(INPUT_ROLES)
    pos = x[:, : 3 * k].reshape(-1, k, 3)[:, _IN_SWAP] * np.array([-1.0, 1.0, 1.0])
    up = x[:, 3 * k : 3 * k + 3] * np.array([-1.0, 1.0, 1.0])
    flags = x[:, 3 * k + 3 :][:, _IN_SWAP]
    return np.concatenate([pos.reshape(-1, 3 * k), up, flags], axis=1)


def mirror_outputs(y: np.ndarray, valid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Outputs ``(n, 3 * len(OUTPUT_ROLES))`` and their mask of the mirrored body."""
    k = len(OUTPUT_ROLES)
    pos = y.reshape(-1, k, 3)[:, _OUT_SWAP] * np.array([-1.0, 1.0, 1.0])
    return pos.reshape(-1, 3 * k), valid[..., _OUT_SWAP]


@dataclass(frozen=True)
class BodyLayout:
    """The body-part view of one skeleton (see the module docstring).

    Attributes:
        parts: ``{role: frame}`` of :func:`~kinetree.io.body_parts.find_body_parts`.
        node: ``{role: frame index}`` into ``model.fk_all`` rows.
        R_pelvis_body: rotation from the body frame to the pelvis frame (3x3).
        up_world: the world up direction (unit 3-vector).
        height: ankle-to-head length along the bones [the model's length unit].
        rest_length: ``{role: rest distance to its parent role}`` [length unit].
        valid: which of :data:`OUTPUT_ROLES` the skeleton has ``(len(OUTPUT_ROLES),)``.
        rigid: ``{role: position in the pelvis frame}`` of the hips and of the roles no
            joint moves relative to the pelvis (CMU's LowerBack): they are placed by the
            pelvis pose, never predicted.
    """

    parts: dict[str, str]
    node: dict[str, int]
    R_pelvis_body: np.ndarray
    up_world: np.ndarray
    height: float
    rest_length: dict[str, float]
    valid: np.ndarray
    rigid: dict[str, np.ndarray]

    @classmethod
    def of(cls, model: Model, roles: Any = None) -> BodyLayout:
        """Read the layout of ``model``; :class:`~kinetree.errors.UnsupportedError` when
        it lacks a role the prior needs (listing what was found). ``roles``: passed to
        :func:`~kinetree.io.body_parts.find_body_parts` (None: its default)."""
        finder: Any = find_body_parts  # roles=: io.body_parts' own override of names
        parts = finder(model) if roles is None else finder(model, roles=roles)
        missing = [r for r in REQUIRED_ROLES if r not in parts]
        if missing:
            raise UnsupportedError(
                f"model {model.name!r} has no recognisable {', '.join(missing)} for the pose "
                f"prior, which needs {', '.join(REQUIRED_ROLES)}; body parts found:\n"
                + describe(parts)
            )
        names = model.frame_names
        node = {r: names.index(f) for r, f in parts.items()}
        T0 = model.fk_all(model.neutral())
        p0 = {r: T0[k, :3, 3] for r, k in node.items()}
        up = p0["head"] - p0["pelvis"]
        left = p0["hip_l"] - p0["hip_r"]
        left = left - up * (left @ up) / (up @ up)
        if np.linalg.norm(up) < 1e-12 or np.linalg.norm(left) < 1e-12:
            raise UnsupportedError(
                f"model {model.name!r}: the rest pose has its head at its pelvis or its hips "
                "at one point; the pose prior needs a standing rest pose"
            )
        x = left / np.linalg.norm(left)
        y = up / np.linalg.norm(up)
        R_world_body = np.stack([x, y, np.cross(x, y)], axis=1)
        R_pelvis_body = T0[node["pelvis"], :3, :3].T @ R_world_body
        height = _height(p0)
        if not height > 0.0:
            raise UnsupportedError(f"model {model.name!r}: the body has zero height")
        rest_length = {}
        for role in OUTPUT_ROLES:
            parent = _parent_present(role, parts)
            if role in parts and parent is not None:
                rest_length[role] = float(np.linalg.norm(p0[role] - p0[parent]))
        valid = np.array([r in parts for r in OUTPUT_ROLES])
        rigid = _rigid_roles(model, node, T0, height)
        return cls(parts, node, R_pelvis_body, y, height, rest_length, valid, rigid)

    def body_frames(self, T_world_pelvis: np.ndarray) -> np.ndarray:
        """World rotation of the body frame ``(..., 3, 3)`` from pelvis poses ``(..., 4, 4)``."""
        return T_world_pelvis[..., :3, :3] @ self.R_pelvis_body

    def frames(self, model: Model, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Inputs ``(n, N_INPUTS)`` (every input given) and outputs ``(n, 3 * len(OUTPUT_ROLES))``
        of configurations ``q`` ``(n, nq)``."""
        T = model.fk_all(q)
        p = T[..., :3, 3]
        R_wb = self.body_frames(T[:, self.node["pelvis"]])
        origin = p[:, self.node["pelvis"]]

        def local(role: str) -> np.ndarray:
            if role not in self.node:
                return np.zeros((len(q), 3))
            d = p[:, self.node[role]] - origin
            return np.einsum("nji,nj->ni", R_wb, d) / self.height

        pos = {r: local(r) for r in set(INPUT_ROLES) | set(OUTPUT_ROLES)}
        up = np.einsum("nji,j->ni", R_wb, self.up_world)
        x = np.concatenate(
            [*(pos[r] for r in INPUT_ROLES), up, np.ones((len(q), len(INPUT_ROLES)))], axis=1
        )
        y = np.concatenate([pos[r] for r in OUTPUT_ROLES], axis=1)
        return x, y

    def inputs(self, T_world_pelvis: np.ndarray, p_world: dict[str, np.ndarray]) -> np.ndarray:
        """The input vector ``(N_INPUTS,)`` of one problem: the pelvis pose and the world
        positions of whichever :data:`INPUT_ROLES` have targets (``p_world``)."""
        R_wb = self.body_frames(T_world_pelvis)
        origin = T_world_pelvis[:3, 3]
        out = np.zeros(N_INPUTS)
        k = len(INPUT_ROLES)
        for i, role in enumerate(INPUT_ROLES):
            if role in p_world:
                out[3 * i : 3 * i + 3] = R_wb.T @ (p_world[role] - origin) / self.height
                out[3 * k + 3 + i] = 1.0
        out[3 * k : 3 * k + 3] = R_wb.T @ self.up_world
        return out

    def placed(
        self, T_world_pelvis: np.ndarray, y: np.ndarray, p_world: dict[str, np.ndarray]
    ) -> dict[str, np.ndarray]:
        """World positions of this skeleton's output roles from a prediction ``y``: each
        bone keeps its predicted direction and this skeleton's rest length (a bone of
        length zero, such as CMU's LowerBack at the Hips, stays of length zero);
        roles with a target (``p_world``) sit on it."""
        R_wb = self.body_frames(T_world_pelvis)
        pred = {
            r: T_world_pelvis[:3, 3] + self.height * (R_wb @ y[3 * i : 3 * i + 3])
            for i, r in enumerate(OUTPUT_ROLES)
        }
        pred["pelvis"] = T_world_pelvis[:3, 3]
        out: dict[str, np.ndarray] = {"pelvis": pred["pelvis"]}
        for role in OUTPUT_ROLES:  # parents come first in OUTPUT_ROLES
            if role not in self.parts:
                continue
            if role in self.rigid:
                out[role] = T_world_pelvis[:3, :3] @ self.rigid[role] + T_world_pelvis[:3, 3]
                continue
            parent = _parent_present(role, self.parts)
            assert parent is not None  # pelvis is always present
            d = pred[role] - pred[parent]
            n = float(np.linalg.norm(d))
            length = self.rest_length.get(role, 0.0)
            if length < 1e-6 * self.height:
                d = 0.0 * d  # a joint at its parent's place (CMU's LowerBack at the Hips)
            elif n > 1e-12:
                d = d * (length / n)
            out[role] = out[parent] + d
        out.update(p_world)
        return out


def _rigid_roles(
    model: Model, node: dict[str, int], T0: np.ndarray, height: float
) -> dict[str, np.ndarray]:
    """Roles whose position in the pelvis frame no joint changes (tried at random
    configurations), and the hips, with their rest position: a hip's own joint
    (CMU's LHipJoint, Daz's lButtock) does not move in captures."""
    k_pelvis = node["pelvis"]

    def local(T: np.ndarray, k: int) -> np.ndarray:
        return T[k_pelvis, :3, :3].T @ (T[k, :3, 3] - T[k_pelvis, :3, 3])

    samples = model.fk_all(model.random_configuration(3, rng=0))
    out = {}
    for role, k in node.items():
        if role == "pelvis":
            continue
        p = local(T0, k)
        if role in ("hip_l", "hip_r") or all(
            np.linalg.norm(local(T, k) - p) < 1e-9 * height for T in samples
        ):
            out[role] = p
    return out


def _height(p0: dict[str, np.ndarray]) -> float:
    """Ankle-to-head length along the bones at rest (see the module docstring)."""

    def dist(a: str, b: str) -> float:
        return float(np.linalg.norm(p0[a] - p0[b])) if a in p0 and b in p0 else 0.0

    legs = []
    for s in "lr":
        if f"knee_{s}" in p0:
            legs.append(dist(f"hip_{s}", f"knee_{s}") + dist(f"knee_{s}", f"ankle_{s}"))
        else:
            legs.append(dist(f"hip_{s}", f"ankle_{s}"))
    mid = 0.5 * (p0["hip_l"] + p0["hip_r"])
    return float(np.mean(legs) + np.linalg.norm(p0["pelvis"] - mid) + dist("pelvis", "head"))


def _parent_present(role: str, parts: dict[str, str]) -> str | None:
    """The nearest ancestor role of ``role`` that the skeleton has."""
    base, _, side = role.partition("_")
    parent = PARENT_ROLE.get(base)
    while parent is not None:
        name = (
            parent if parent in ("pelvis", "spine", "chest", "neck", "head") else f"{parent}_{side}"
        )
        if name in parts:
            return name
        parent = PARENT_ROLE.get(parent)
    return None
