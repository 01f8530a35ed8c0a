"""Motion in the body-part view: what the temporal prior (:mod:`.motion`) reads and predicts.

Everything is measured in body heights (``H`` of :mod:`._body`) in a **canonical world**:
the model's world turned so that its up is ``+y``, with heights counted from the
**ankle level** (where a standing person's ankles are: the floor plus the ankle's
height above it). A frame holds, per role of :data:`ALL_ROLES`, its position, and the
rotations of the body frame (fixed to the pelvis, :mod:`._body`) and of the head
(normalised the same way: the body frame as the head carries it, so a head looking
straight ahead in an upright body has the body frame's rotation).

Features of one window (:func:`window_features`) are taken in the **heading frame** of
its current frame: origin at the *anchor* (the head when it is tracked, else the
pelvis, else the middle of the hands or feet), its horizontal axes turned by the
heading (the yaw of the tracked head, else of the tracked pelvis, else of the line
between the hands or the feet). Horizontal coordinates are relative to the anchor,
heights are above the ankle level (the context that tells a crouch from a stand);
the outputs (:func:`window_targets`) are the pelvis position relative to the anchor,
the body frame's rotation (its first two columns) in the heading frame, and every
output role relative to the pelvis in the body frame (as the per-frame prior's).
The same numpy code makes the training batches and the run-time inputs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ._body import OUTPUT_ROLES, BodyLayout, _parent_present, _swap

__all__ = [
    "ALL_ROLES",
    "N_OUT",
    "ROT_ROLES",
    "TRACK_ROLES",
    "MotionClip",
    "canonical_rotation",
    "n_features",
    "skeleton_frames",
    "window_features",
    "window_targets",
]

#: Roles whose positions the temporal prior can be given.
TRACK_ROLES = ("pelvis", "head", "wrist_l", "wrist_r", "ankle_l", "ankle_r")
#: Roles whose orientations it can be given (the pelvis's body frame, the head's).
ROT_ROLES = ("pelvis", "head")
#: Every role a clip stores: the pelvis then the per-frame prior's outputs.
ALL_ROLES = ("pelvis", *OUTPUT_ROLES)
_TRACK_IDX = np.array([ALL_ROLES.index(r) for r in TRACK_ROLES])
_PER_FRAME = 3 * len(TRACK_ROLES) + 6 * len(ROT_ROLES)
#: Outputs: pelvis position (3), body rotation (6), roles relative to the pelvis.
N_OUT = 3 + 6 + 3 * len(OUTPUT_ROLES)
_MIRROR = np.array([-1.0, 1.0, 1.0])


_ALL_SWAP = np.array([ALL_ROLES.index(_swap(r)) for r in ALL_ROLES])
_TRACK_SWAP = np.array([TRACK_ROLES.index(_swap(r)) for r in TRACK_ROLES])


def n_features(n_window: int) -> int:
    """Length of the input vector of a window of ``n_window`` frames."""
    return n_window * _PER_FRAME + len(TRACK_ROLES) + len(ROT_ROLES) + 1


def canonical_rotation(up: np.ndarray) -> np.ndarray:
    """A rotation (3x3) taking the world's ``up`` to ``+y`` (rows: new x, y, z axes)."""
    y = np.asarray(up, dtype=np.float64) / np.linalg.norm(up)
    a = np.array([1.0, 0.0, 0.0]) if abs(y[0]) < 0.9 else np.array([0.0, 0.0, 1.0])
    x = a - y * (a @ y)
    x /= np.linalg.norm(x)
    return np.stack([x, y, np.cross(x, y)])


@dataclass
class MotionClip:
    """One clip in the canonical body-part view (see the module docstring).

    Attributes:
        pos: ``(T, len(ALL_ROLES), 3)`` role positions [body heights]; zero where absent.
        body: ``(T, 3, 3)`` world rotation of the body frame.
        head: ``(T, 3, 3)`` the head's normalised rotation.
        valid: ``(len(ALL_ROLES),)`` which roles the skeleton has.
        fps: frames per second.
        name: a label.
    """

    pos: np.ndarray
    body: np.ndarray
    head: np.ndarray
    valid: np.ndarray
    fps: float
    name: str = "clip"

    def mirrored(self) -> MotionClip:
        """The left-right mirror image (x negated, sides swapped)."""
        M = np.diag(_MIRROR)
        return MotionClip(
            self.pos[:, _ALL_SWAP] * _MIRROR,
            M @ self.body @ M,
            M @ self.head @ M,
            self.valid[_ALL_SWAP],
            self.fps,
            self.name + "~m",
        )

    def reproportioned(self, scale: dict[str, float]) -> MotionClip:
        """The same motion on a body with other proportions: each bone (a role and its
        nearest present parent role) scaled by ``scale[group]`` (``legs``, ``hips``,
        ``spine``, ``neck``, ``shoulders``, ``arms``; missing: 1), the pelvis's path by
        the legs' factor, and everything measured in the new body's height."""
        group = {
            "spine": "spine",
            "chest": "spine",
            "neck": "neck",
            "head": "neck",
            "clavicle": "shoulders",
            "shoulder": "shoulders",
            "elbow": "arms",
            "wrist": "arms",
            "hip": "hips",
            "knee": "legs",
            "ankle": "legs",
            "toe": "legs",
        }
        present = {r: r for r, v in zip(ALL_ROLES, self.valid, strict=True) if v}
        pos = np.zeros_like(self.pos)
        pos[:, 0] = self.pos[:, 0] * scale.get("legs", 1.0)
        # fractions of the height: legs, hips-to-pelvis, and the torso with the head
        p0 = self.pos[0]
        idx = {r: i for i, r in enumerate(ALL_ROLES)}
        for role in ALL_ROLES[1:]:
            if role not in present:
                continue
            parent = _parent_present(role, present)
            assert parent is not None
            s = scale.get(group[role.partition("_")[0]], 1.0)
            bone = self.pos[:, idx[role]] - self.pos[:, idx[parent]]
            pos[:, idx[role]] = pos[:, idx[parent]] + s * bone

        def length(a: str, b: str, P: np.ndarray) -> float:
            return (
                float(np.linalg.norm(P[idx[a]] - P[idx[b]]))
                if a in present and b in present
                else 0.0
            )

        def height(P: np.ndarray) -> float:
            legs = np.mean(
                [
                    length(f"knee_{s}", f"hip_{s}", P) + length(f"ankle_{s}", f"knee_{s}", P)
                    for s in "lr"
                ]
            )
            torso = (("spine", "pelvis"), ("chest", "spine"), ("neck", "chest"), ("head", "neck"))
            return float(legs) + sum(length(r, p, P) for r, p in torso)

        ratio = height(pos[0]) / max(height(p0), 1e-9)
        return MotionClip(pos / ratio, self.body, self.head, self.valid, self.fps, self.name + "~p")

    @classmethod
    def from_configurations(
        cls,
        model: Any,
        q: np.ndarray,
        fps: float,
        layout: BodyLayout,
        *,
        name: str = "clip",
        frames: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
    ) -> MotionClip:
        """A captured clip: configurations ``q`` ``(T, nq)`` of ``model`` (a
        :class:`~kinetree.Model`), its ``layout``; the ankle level is the clip's 2nd
        percentile of the lower ankle's height. ``frames``: ``(up, R_pelvis_body,
        R_head_body)`` (default: :func:`skeleton_frames` of this clip alone)."""
        T = model.fk_all(q)
        up, R_pelvis_body, head_fix = (
            skeleton_frames(model, [T], layout) if frames is None else frames
        )
        C = canonical_rotation(up)
        H = layout.height
        pos = np.zeros((len(q), len(ALL_ROLES), 3))
        valid = np.zeros(len(ALL_ROLES), dtype=bool)
        for i, role in enumerate(ALL_ROLES):
            if role in layout.node:
                pos[:, i] = T[:, layout.node[role], :3, 3] @ C.T / H
                valid[i] = True
        ankles = [ALL_ROLES.index(r) for r in ("ankle_l", "ankle_r")]
        level = float(np.percentile(pos[:, ankles, 1].min(axis=1), 2))
        pos[:, :, 1] -= level
        pos[:, ~valid] = 0.0
        body = C @ T[:, layout.node["pelvis"], :3, :3] @ R_pelvis_body
        head = C @ T[:, layout.node["head"], :3, :3] @ head_fix
        return cls(pos, body, head, valid, float(fps), name)


def _upright(v: np.ndarray) -> bool:
    return bool(np.max(np.abs(v)) / np.linalg.norm(v) > np.cos(np.radians(15.0)))


def skeleton_frames(
    model: Any, motions: list[np.ndarray], layout: BodyLayout
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(up, R_pelvis_body, R_head_body)`` of a skeleton: from the rest pose (the
    layout) when it stands upright along a world axis; otherwise (a capture whose bind
    pose is bent) from its motions (``fk_all`` arrays ``(T, n, 4, 4)``): up is the
    world's ``+y`` (BVH's convention), and the body frame the mean, over the frames
    whose torso stands within 30 degrees of up, of the pelvis-relative frame with x
    along the hips (made horizontal) and y up; the head faces forward on average."""
    T0 = model.fk_all(model.neutral())
    kp, kh = layout.node["pelvis"], layout.node["head"]
    rest_up = T0[kh, :3, 3] - T0[kp, :3, 3]
    if _upright(rest_up):
        R_head_body = T0[kh, :3, :3].T @ T0[kp, :3, :3] @ layout.R_pelvis_body
        return layout.up_world, layout.R_pelvis_body, R_head_body
    T = np.concatenate(motions)
    up = np.array([0.0, 1.0, 0.0])
    d = T[:, kh, :3, 3] - T[:, kp, :3, 3]
    keep = d @ up > np.cos(np.radians(30.0)) * np.linalg.norm(d, axis=1)
    if keep.sum() >= 10:
        T = T[keep]
    left = T[:, layout.node["hip_l"], :3, 3] - T[:, layout.node["hip_r"], :3, 3]
    left = left - np.outer(left @ up, up)
    left /= np.linalg.norm(left, axis=1, keepdims=True)
    B = np.stack([left, np.broadcast_to(up, left.shape), np.cross(left, up)], axis=2)
    R_pb = _mean_rotation(np.swapaxes(T[:, kp, :3, :3], 1, 2) @ B)
    R_hb = _mean_rotation(np.swapaxes(T[:, kh, :3, :3], 1, 2) @ B)
    return up, R_pb, R_hb


def _mean_rotation(R: np.ndarray) -> np.ndarray:
    """The rotation nearest the mean of rotations ``(n, 3, 3)`` (chordal mean)."""
    U, _, Vt = np.linalg.svd(R.mean(axis=0))
    D = np.diag([1.0, 1.0, float(np.sign(np.linalg.det(U @ Vt)))])
    return np.asarray(U @ D @ Vt)


def _heading(
    P: np.ndarray, body: np.ndarray, head: np.ndarray, pos_on: np.ndarray, rot_on: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(R_heading (n, 3, 3), anchor (n, 3))`` of current frames (see the module
    docstring): ``P`` ``(n, len(TRACK_ROLES), 3)``, rotations ``(n, 3, 3)``, flags."""
    n = len(P)
    ti = {r: i for i, r in enumerate(TRACK_ROLES)}
    fwd = np.zeros((n, 3))
    fwd[:, 2] = 1.0
    up = np.array([0.0, 1.0, 0.0])

    def side(a: str, b: str) -> np.ndarray:
        return np.cross(P[:, ti[a]] - P[:, ti[b]], up)

    both = lambda a, b: pos_on[:, ti[a]] & pos_on[:, ti[b]]  # noqa: E731
    # lowest priority first; later rules overwrite
    for use, f in (
        (both("ankle_l", "ankle_r"), side("ankle_l", "ankle_r")),
        (both("wrist_l", "wrist_r"), side("wrist_l", "wrist_r")),
        (rot_on[:, 0], body[:, :, 2]),
        (rot_on[:, 1], head[:, :, 2]),
    ):
        fwd[use] = f[use]
    fwd[:, 1] = 0.0
    norm = np.linalg.norm(fwd, axis=1)
    fwd = np.where(norm[:, None] > 1e-6, fwd / np.maximum(norm, 1e-12)[:, None], [0.0, 0.0, 1.0])
    R = np.stack([np.cross(up, fwd), np.broadcast_to(up, fwd.shape), fwd], axis=2)
    anchor = np.zeros((n, 3))
    for use, a in (
        (both("ankle_l", "ankle_r"), 0.5 * (P[:, ti["ankle_l"]] + P[:, ti["ankle_r"]])),
        (both("wrist_l", "wrist_r"), 0.5 * (P[:, ti["wrist_l"]] + P[:, ti["wrist_r"]])),
        (pos_on[:, ti["pelvis"]], P[:, ti["pelvis"]]),
        (pos_on[:, ti["head"]], P[:, ti["head"]]),
    ):
        anchor[use] = a[use]
    return R, anchor


def window_features(
    P: np.ndarray,
    body: np.ndarray,
    head: np.ndarray,
    pos_on: np.ndarray,
    rot_on: np.ndarray,
    n_past: int,
    future_on: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Inputs of windows, and their heading frames.

    Args:
        P: ``(n, K, len(TRACK_ROLES), 3)`` tracked positions (canonical, body heights,
            heights above the ankle level), window frame 0 the current one, then the
            past (``n_past - 1`` older frames), then the future.
        body, head: ``(n, K, 3, 3)`` rotations of the body frame and the head.
        pos_on, rot_on: ``(n, len(TRACK_ROLES))`` and ``(n, len(ROT_ROLES))`` booleans:
            what is given.
        n_past: window frames up to and including the current one.
        future_on: ``(n,)`` booleans: whether the future frames are given.

    Returns ``(x (n, n_features(K)), R_heading (n, 3, 3), anchor (n, 3))``.
    """
    n, K = P.shape[:2]
    R, anchor = _heading(P[:, 0], body[:, 0], head[:, 0], pos_on, rot_on)
    a = anchor.copy()
    a[:, 1] = 0.0  # heights stay above the ankle level
    rel = np.einsum("nji,nkrj->nkri", R, P - a[:, None, None, :])
    rel *= pos_on[:, None, :, None]
    rots = []
    for i, Rr in enumerate((body, head)):
        local = np.einsum("nji,nkjl->nkil", R, Rr)[..., :2]  # (n, K, 3, 2)
        rots.append(local.reshape(n, K, 6) * rot_on[:, None, i, None])
    frame = np.concatenate([rel.reshape(n, K, -1), *rots], axis=2)
    frame[:, n_past:] *= future_on[:, None, None]
    flags = np.concatenate([pos_on, rot_on, future_on[:, None]], axis=1).astype(np.float64)
    return np.concatenate([frame.reshape(n, -1), flags], axis=1), R, anchor


def window_targets(
    pos: np.ndarray, body: np.ndarray, R: np.ndarray, anchor: np.ndarray
) -> np.ndarray:
    """Outputs ``(n, N_OUT)`` of current frames: ``pos`` ``(n, len(ALL_ROLES), 3)``,
    ``body`` ``(n, 3, 3)``, heading frames from :func:`window_features`."""
    pel = np.einsum("nji,nj->ni", R, pos[:, 0] - anchor)
    rot = np.einsum("nji,njl->nil", R, body)[..., :2].reshape(len(pos), 6)
    roles = np.einsum("nji,nrj->nri", body, pos[:, 1:] - pos[:, :1])
    return np.concatenate([pel, rot, roles.reshape(len(pos), -1)], axis=1)


def decode(
    y: np.ndarray, R: np.ndarray, anchor: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(pelvis (n, 3), body (n, 3, 3), roles (n, 3 * len(OUTPUT_ROLES)))`` of network
    outputs ``y`` ``(n, N_OUT)``: the pelvis and the body frame in the canonical world,
    the roles as the per-frame prior's outputs (body frame, body heights)."""
    pelvis = np.einsum("nij,nj->ni", R, y[:, :3]) + anchor
    a = y[:, 3:9].reshape(-1, 3, 2)
    x = a[:, :, 0] / np.maximum(np.linalg.norm(a[:, :, 0], axis=1, keepdims=True), 1e-12)
    b = a[:, :, 1] - x * np.sum(x * a[:, :, 1], axis=1, keepdims=True)
    b = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-12)
    local = np.stack([x, b, np.cross(x, b)], axis=2)
    return pelvis, R @ local, y[:, 9:]


def gather(clip_pos: np.ndarray, clip_body: np.ndarray, clip_head: np.ndarray, idx: np.ndarray):
    """Window arrays of a clip's frames ``idx`` ``(n, K)``: tracked positions
    ``(n, K, len(TRACK_ROLES), 3)`` and the two rotations ``(n, K, 3, 3)``."""
    return clip_pos[idx][:, :, _TRACK_IDX], clip_body[idx], clip_head[idx]


def mirror_track_flags(flags: np.ndarray) -> np.ndarray:
    """Position flags ``(n, len(TRACK_ROLES))`` of the mirrored body."""
    return flags[:, _TRACK_SWAP]
