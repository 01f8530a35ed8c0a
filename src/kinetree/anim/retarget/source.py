"""The source of a retarget in the robot's world: metres, z up, facing +x.

:func:`prepare_source` reads the world poses of the mapped source joints in every
frame and at rest, and converts them: the up axis (the one the rest pose's pelvis to
head points along, snapped to a coordinate axis: CMU and Mixamo files are Y-up)
becomes +z, the facing direction (``left x up``, ``left`` from the right to the left
hip) becomes +x, and lengths become metres. The unit is given, or guessed from the
standing height of the rest pose: of metres, centimetres, millimetres, inches and the
CMU conversions' unit (1/0.45 inch), the one that makes it closest to 1.6 m.

The rest pose is the source model's neutral one (a BVH file's zero rotations, every
joint at its OFFSET) when it stands (head and ankles on opposite sides of the
pelvis), else the first frame: the zero pose of a skeleton whose bones all lie along
their joint's x axis (the Bandai-Namco data set) is folded, spine and legs together.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ...body_parts import find_body_parts
from ...errors import InvalidValueError
from ...io.bvh import BVHClip
from ...model import JointType, Model
from ..motion import Motion

__all__ = ["UNITS", "SourceFrames", "prepare_source", "source_in_robot_world"]

#: Candidate length units of a source file [m per unit], for the guess.
UNITS: dict[str, float] = {
    "m": 1.0,
    "cm": 0.01,
    "mm": 0.001,
    "inch": 0.0254,
    "cmu": 0.0254 / 0.45,
}
_TYPICAL_HEIGHT = 1.6  # [m] the rest pose's pelvis-joint-to-head height, feet included


@dataclass(frozen=True)
class SourceFrames:
    """Poses of the mapped source joints, converted to the robot's world.

    Attributes:
        names: the joints, in source order.
        T: ``(n_frames, k, 4, 4)`` world poses [m], z up, facing +x.
        T_rest: ``(k, 4, 4)`` the same at rest (see the module).
        fps: frames per second [1/s].
        scale: metres per source length unit.
        unit: the unit's name (``"given"`` when ``scale`` was passed).
        R: ``(3, 3)`` the rotation from the source's axes to the robot world's.
    """

    names: tuple[str, ...]
    T: np.ndarray
    T_rest: np.ndarray
    fps: float
    scale: float
    unit: str
    R: np.ndarray

    def index(self, joint: str) -> int:
        return self.names.index(joint)


def _to_z(u: np.ndarray) -> np.ndarray:
    """The rotation taking the coordinate axis ``u`` (a signed unit axis) to +z."""
    a = int(np.argmax(np.abs(u)))
    s = float(np.sign(u[a]))
    if a == 2:
        return np.eye(3) if s > 0 else np.diag([1.0, -1.0, -1.0])
    if a == 1:  # +y -> +z is +90 deg about x
        c = s
        return np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -c], [0.0, c, 0.0]])
    c = s  # +x -> +z is -90 deg about y
    return np.array([[0.0, 0.0, -c], [0.0, 1.0, 0.0], [c, 0.0, 0.0]])


def _yaw_to_x(forward: np.ndarray) -> np.ndarray:
    """The rotation about z taking the horizontal part of ``forward`` to +x."""
    ang = -math.atan2(float(forward[1]), float(forward[0]))
    c, s = math.cos(ang), math.sin(ang)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _source_of(source: BVHClip | Motion) -> tuple[Model, np.ndarray, float, np.ndarray]:
    """``(model, q, fps, q_rest)`` of a clip or a motion."""
    # A BVH model's neutral configuration is its rest pose: rotations 0, every joint
    # with position channels at its OFFSET (see kinetree.io.bvh).
    if isinstance(source, (BVHClip, Motion)):
        return source.model, source.q, source.fps, source.model.neutral()
    raise InvalidValueError(
        f"the source must be a BVHClip (kinetree.read_bvh) or a Motion, got {type(source).__name__}"
    )


def _stands(model: Model, q: np.ndarray, by_role: Mapping[str, str]) -> bool:
    """Whether pose ``q`` stands: the head (or neck, chest) and each ankle lie on opposite
    sides of the pelvis, within 60 degrees of one line. True when those joints are not
    all known (nothing to tell from)."""

    def at(role: str) -> np.ndarray | None:
        j = by_role.get(role)
        return None if j is None else np.asarray(model.fk(q, j))[:3, 3]

    pelvis = at("pelvis")
    top = next((p for r in ("head", "neck", "chest") if (p := at(r)) is not None), None)
    feet = [p for r in ("ankle_l", "ankle_r") if (p := at(r)) is not None]
    if pelvis is None or top is None or not feet:
        return True
    up = top - pelvis
    for foot in feet:  # each: a mirrored pair can average to a line through the pelvis
        down = pelvis - foot
        size = float(np.linalg.norm(up) * np.linalg.norm(down))
        if not (size > 0.0 and float(up @ down) >= 0.5 * size):
            return False
    return True


def prepare_source(
    source: BVHClip | Motion,
    joints: Sequence[str],
    roles: Mapping[str, str],
    *,
    scale: float | None = None,
    up: str | None = None,
) -> SourceFrames:
    """World poses of ``joints`` of ``source``, in metres, z up, facing +x.

    Args:
        source: a BVH clip or a motion; with no frames it cannot be read at all
            (BVHClip and Motion refuse to be empty).
        joints: the source joints to read (frames of the source model).
        roles: joint -> role; the pelvis, head (or chest), hips (or shoulders or
            ankles) give the up and facing directions.
        scale: metres per source length unit; None: guessed (see the module).
        up: the source's up axis, ``"x"``, ``"y"``, ``"z"`` (or ``"-y"``...); None:
            from the rest pose.
    """
    model, q, fps, q_rest = _source_of(source)
    # Landmarks: the mapped joints' roles first, then any other body part the names give.
    by_role = {**find_body_parts(model), **{r: j for j, r in roles.items()}}
    if not _stands(model, q_rest, by_role):
        # A skeleton whose zero pose is folded (Bandai-Namco: every bone along its joint's
        # x, legs and spine alike) stands only in its frames: the first is its rest pose.
        q_rest = np.asarray(q[0], dtype=float)
    names = tuple(joints)
    T_all = np.stack([np.asarray(model.fk(q, j)) for j in names], axis=1)
    T0 = np.stack([np.asarray(model.fk(q_rest, j)) for j in names], axis=0)

    def rest(role: str) -> np.ndarray | None:
        j = by_role.get(role)
        return None if j is None else np.asarray(model.fk(q_rest, j))[:3, 3]

    pelvis = rest("pelvis")
    if pelvis is None:
        raise InvalidValueError("the source needs a mapped pelvis to find its axes")
    if up is not None:
        axes = {"x": 0, "y": 1, "z": 2}
        key = up.lstrip("+-")
        if key not in axes:
            raise InvalidValueError(f"up must be 'x', 'y' or 'z' (or '-y'...), got {up!r}")
        u = np.zeros(3)
        u[axes[key]] = -1.0 if up.startswith("-") else 1.0
    else:
        top = next(
            (rest(r) for r in ("head", "neck", "chest", "spine") if rest(r) is not None), None
        )
        if top is not None:
            u = top - pelvis
        else:
            feet = [p for p in (rest("ankle_l"), rest("ankle_r")) if p is not None]
            if not feet:
                raise InvalidValueError(
                    "cannot tell the source's up axis: map a head, chest or spine joint, or "
                    "an ankle, or pass up="
                )
            u = pelvis - np.mean(feet, axis=0)
    R_up = _to_z(u)
    left = None
    for a, b in (("hip_l", "hip_r"), ("shoulder_l", "shoulder_r"), ("ankle_l", "ankle_r")):
        pa, pb = rest(a), rest(b)
        if pa is not None and pb is not None:
            left = R_up @ (pa - pb)
            break
    forward = np.array([1.0, 0.0, 0.0]) if left is None else np.cross(left, [0.0, 0.0, 1.0])
    if np.linalg.norm(forward[:2]) < 1e-12:
        forward = np.array([1.0, 0.0, 0.0])
    R = _yaw_to_x(forward) @ R_up
    if scale is None:
        low = [
            float((R @ p)[2])
            for r in ("ankle_l", "ankle_r", "toe_l", "toe_r")
            if (p := rest(r)) is not None
        ]
        high = [float((R @ p)[2]) for r in ("head", "neck", "chest") if (p := rest(r)) is not None]
        if not low or not high:
            raise InvalidValueError(
                "cannot guess the source's length unit without a mapped head (or neck, chest) "
                "and an ankle; pass source_scale= (metres per unit)"
            )
        height = max(high) - min(low)
        if not height > 0:
            raise InvalidValueError(
                "the source's rest pose has its head below its feet; pass up= and source_scale="
            )
        unit, s = min(UNITS.items(), key=lambda kv: abs(math.log(height * kv[1] / _TYPICAL_HEIGHT)))
    else:
        s = float(scale)
        if not (math.isfinite(s) and s > 0):
            raise InvalidValueError(f"source_scale must be a positive number, got {scale!r}")
        unit = "given"
    A = np.eye(4)
    A[:3, :3] = R
    T = A @ T_all
    T[..., :3, 3] *= s
    Tr = A @ T0
    Tr[..., :3, 3] *= s
    return SourceFrames(names, T, Tr, float(fps), s, unit, R)


def source_in_robot_world(source: BVHClip | Motion, motion: Motion) -> Motion:
    """The source skeleton as :func:`kinetree.retarget` saw it, beside its result: in
    metres, z up, facing +x, its pelvis starting over the origin, its lowest point on
    the ground, the frames the retarget kept. For drawing the two side by side."""
    import dataclasses

    info = motion.metadata.get("retarget")
    if info is None:
        raise InvalidValueError("source_in_robot_world needs a motion made by kinetree.retarget")
    model, q, fps, _ = _source_of(source)
    s, R = float(info["source_scale"]), np.asarray(info["source_axes"])
    origin = model.origin.copy()
    origin[:, :3, 3] *= s
    prismatic = np.zeros(model.nq, dtype=bool)
    q_offset = model.q_offset.copy()  # a BVH position DoF slides by q - OFFSET: a length
    for k in range(model.n_nodes):
        if model.joint_type[k] == JointType.PRISMATIC and model.q_index[k] >= 0:
            prismatic[model.q_index[k]] = True
            q_offset[k] *= s
    q = np.where(prismatic, q * s, q)[len(info["dropped_frames"]) :]
    A = np.eye(4)
    A[:3, :3] = R
    A[:2, 3] = -np.asarray(info["source_pelvis"])[0, :2]
    origin[0] = A @ origin[0]
    neutral = np.where(prismatic, model.q_neutral * s, model.q_neutral)
    shown = dataclasses.replace(
        model,
        origin=origin,
        q_offset=q_offset,
        q_neutral=neutral,
        units="m",
        metadata={**model.metadata, "up": "z"},
    )
    low = shown.fk_all(q)[:, :, 2, 3].min(axis=1)
    origin = origin.copy()  # the model froze it
    origin[0, 2, 3] -= float(np.percentile(low, 2.0))
    shown = dataclasses.replace(shown, origin=origin)
    return Motion(model=shown, q=q, fps=fps, name=f"{model.name} (source)")
