"""Anatomical joint limits for skeletons read from files, from their body parts.

Long because the ranges, the body frame they are read in, the measure of bending and
the projection into the ranges share one reading of the skeleton; split, they would drift.

A BVH skeleton's joints turn freely about three axes: nothing keeps an elbow from
bending backwards or a knee sideways, and sparse IK (or a learned prior) happily does
both. :func:`anatomical` gives such a skeleton the ranges a human body has, as
**swing-twist limits** (:attr:`kinetree.Model.swing_twist`), which every IK method of
kinetree keeps (``respect_limits=True``, the default):

* **Hinges** (elbows, knees): the limit's axis is the joint's *flexion axis*, so its
  twist is the flexion angle and gets a one-sided range (no bending backwards beyond
  :data:`HYPEREXTENSION` [rad]); the swing (the flexion axis tilting: the forearm's
  pronation, the shin's rotation, a little carrying angle) gets a bound.
* **Ball joints** (shoulders, hips, wrists, ankles, clavicles, the spine, the neck and
  head, the pelvis-side hip bones): the axis is the bone, the swing a cone about its
  rest direction and the twist a range about it.

Everything is read from the skeleton's rest pose (``model.neutral()``) and its body
parts (:func:`kinetree.io.body_parts.find_body_parts`): the body frame (left: hip_r ->
hip_l, up: pelvis -> head, forward = left x up), each bone's rest direction, and each
hinge's flexion axis: ``bone x forward`` for an elbow (the forearm bends forward from a
T-pose or arms-down rest), ``forward x bone`` for a knee (the shin bends back). A rest
pose whose elbow or knee is already bent is allowed for: the range is of the
anatomical angle, not of the joint's value.

Only joints of three rotation axes (``joint_groups`` of three revolute DoF, which is
what BVH, Daz and Mixamo skeletons load as) get limits; a robot's joints keep their own.
:func:`bend_angles` measures the signed flexion of elbows and knees of a motion (negative:
hyperextended), the number the tracking benchmark counts.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit
from numpy.typing import ArrayLike

from .._validate import as_array, check_model
from ..errors import ShapeError, UnsupportedError
from ..model import JointType, Model

__all__ = [
    "HINGES",
    "HYPEREXTENSION",
    "RANGES",
    "BodyFrame",
    "JointRange",
    "anatomical",
    "anatomical_ranges",
    "bend_angles",
    "body_frame",
    "clamp",
]

#: How far an elbow or knee may bend backwards past straight [rad] (5 degrees).
HYPEREXTENSION = math.radians(5.0)


@dataclass(frozen=True)
class JointRange:
    """The range of one body part's joint [rad].

    Attributes:
        swing: largest swing of the limit's axis away from its rest direction.
        twist: (min, max) rotation about the axis. For a hinge, the anatomical flexion
            angle (0: straight, positive: bent the way the body bends).
        hinge: True for elbows and knees (axis: the flexion axis), False for ball
            joints (axis: the bone).
    """

    swing: float
    twist: tuple[float, float]
    hinge: bool = False


def _deg(swing: float, lo: float, hi: float, hinge: bool = False) -> JointRange:
    return JointRange(math.radians(swing), (math.radians(lo), math.radians(hi)), hinge)


#: Ranges per role (both sides share one entry, without the ``_l``/``_r``); the spine
#: entry serves every joint between the pelvis and the neck, ``hip_bone`` the joints
#: between the pelvis and a hip (CMU's ``LHipJoint``), ``neck`` every joint between
#: chest and head. Generous human ranges: they forbid what a body cannot do, not what
#: it rarely does.
RANGES: Mapping[str, JointRange] = {
    "elbow": _deg(50.0, -math.degrees(HYPEREXTENSION), 155.0, hinge=True),
    "knee": _deg(30.0, -math.degrees(HYPEREXTENSION), 160.0, hinge=True),
    "shoulder": _deg(165.0, -180.0, 180.0),
    "clavicle": _deg(40.0, -40.0, 40.0),
    "wrist": _deg(95.0, -100.0, 100.0),
    "hip": _deg(130.0, -75.0, 75.0),
    "ankle": _deg(80.0, -45.0, 45.0),
    "toe": _deg(75.0, -20.0, 20.0),
    "spine": _deg(45.0, -45.0, 45.0),
    "neck": _deg(60.0, -80.0, 80.0),
    "head": _deg(60.0, -80.0, 80.0),
    "hip_bone": _deg(30.0, -30.0, 30.0),
}
#: The hinge roles, each with its parent role (the bone before it) and child role.
HINGES: Mapping[str, tuple[str, str]] = {
    "elbow": ("shoulder", "wrist"),
    "knee": ("hip", "ankle"),
}


@dataclass(frozen=True)
class BodyFrame:
    """The body's axes at the rest pose, in world coordinates (unit vectors).

    Attributes:
        left: from the right hip (or shoulder) to the left one, made perpendicular to up.
        up: from the pelvis to the top of the torso (the head, or the farthest of neck,
            chest and the shoulders' midpoint).
        forward: ``left x up``: where the body faces.
        height: ankle-to-head length along the bones at rest [model length unit].
    """

    left: np.ndarray
    up: np.ndarray
    forward: np.ndarray
    height: float


def _parts(model: Model, roles: Mapping[str, str] | None) -> dict[str, str]:
    from ..io.body_parts import find_body_parts

    if roles is not None:
        names = set(model.frame_names)
        bad = [f for f in roles.values() if f not in names]
        if bad:
            from ..errors import unknown_name

            raise unknown_name("frame", bad[0], model.frame_names)
        return dict(roles)
    return find_body_parts(model)


def body_frame(model: Model, roles: Mapping[str, str] | None = None) -> BodyFrame:
    """The :class:`BodyFrame` of ``model`` at ``model.neutral()``; ``roles`` overrides
    :func:`~kinetree.io.body_parts.find_body_parts` (``{role: frame}``). Raises
    :class:`~kinetree.errors.UnsupportedError` naming the roles that are missing
    (pelvis, head, and both hips or both shoulders)."""
    check_model(model)
    parts = _parts(model, roles)
    pairs = [(f"{r}_l", f"{r}_r") for r in ("hip", "shoulder")]
    pair = next(((a, b) for a, b in pairs if a in parts and b in parts), None)
    if "pelvis" not in parts or "head" not in parts or pair is None:
        need = [r for r in ("pelvis", "head") if r not in parts]
        if pair is None:
            need.append("hip_l and hip_r (or shoulder_l and shoulder_r)")
        raise UnsupportedError(
            f"skeleton {model.name!r} lacks the body parts {', '.join(need)}; found "
            f"{sorted(parts) or 'none'} (give roles={{role: frame}} to name them)"
        )
    p = _rest_positions(model)
    up = _top(p, parts) - p[parts["pelvis"]]
    up = up / max(float(np.linalg.norm(up)), 1e-12)
    left = p[parts[pair[0]]] - p[parts[pair[1]]]
    left = left - up * float(left @ up)
    left = left / max(float(np.linalg.norm(left)), 1e-12)
    forward = np.cross(left, up)
    return BodyFrame(left, up, forward, _height(p, parts))


def _top(p: Mapping[str, np.ndarray], parts: Mapping[str, str]) -> np.ndarray:
    """The top of the torso at rest: of the head, neck, chest and the shoulders' midpoint,
    the one farthest from the pelvis (a robot's head frame may sit at its pelvis)."""
    pelvis = p[parts["pelvis"]]
    tops = [p[parts[r]] for r in ("head", "neck", "chest") if r in parts]
    if "shoulder_l" in parts and "shoulder_r" in parts:
        tops.append(0.5 * (p[parts["shoulder_l"]] + p[parts["shoulder_r"]]))
    return max(tops, key=lambda x: float(np.linalg.norm(x - pelvis)))


def _height(p: Mapping[str, np.ndarray], parts: Mapping[str, str]) -> float:
    """Ankle-to-head length along the bones at rest (legs averaged where both exist)."""

    def dist(a: str, b: str) -> float:
        return float(np.linalg.norm(p[parts[a]] - p[parts[b]]))

    legs = [
        dist(f"hip_{s}", f"knee_{s}") + dist(f"knee_{s}", f"ankle_{s}")
        for s in ("l", "r")
        if all(f"{r}_{s}" in parts for r in ("hip", "knee", "ankle"))
    ]
    torso = float(np.linalg.norm(_top(p, parts) - p[parts["pelvis"]]))
    if legs and "hip_l" in parts and "hip_r" in parts:
        mid = 0.5 * (p[parts["hip_l"]] + p[parts["hip_r"]])
        torso += float(np.linalg.norm(mid - p[parts["pelvis"]]))
    return float(np.mean(legs)) + torso if legs else 2.0 * torso


def _rest_positions(model: Model) -> dict[str, np.ndarray]:
    T = model.fk_all(model.neutral())
    return {n: T[i, :3, 3] for i, n in enumerate(model.frame_names)}


def _three_axis_group(model: Model, frame: str) -> str | None:
    """The three-revolute joint group that turns ``frame``, or None."""
    node = model.frame_index(frame)
    name = model.node_joint[node]
    joints = model.joint_groups.get(name)
    if joints is None or len(joints) != 3:
        return None
    _, nodes = model.group_nodes(name)
    if len(nodes) != 3 or any(model.joint_type[n] != JointType.REVOLUTE for n in nodes):
        return None
    return name


def _group_frame(model: Model, group: str) -> str:
    """The frame at the end of a joint group (its child link)."""
    _, nodes = model.group_nodes(group)
    last = int(nodes[-1])
    # The group's last revolute node may carry hidden children; the visible child
    # frame is the node itself (BVH) or its first non-hidden descendant.
    return model.node_names[last]


def _role_of_frames(model: Model, parts: Mapping[str, str]) -> dict[str, str]:
    """``{group: range key}`` for every three-axis joint a role or a spine/neck/hip
    bone joint sits at."""
    out: dict[str, str] = {}
    for role, frame in parts.items():
        key = role[:-2] if role[-2:] in ("_l", "_r") else role
        if key == "pelvis" or (key not in RANGES and key not in ("chest",)):
            continue
        group = _three_axis_group(model, frame)
        if group is not None:
            out[group] = "spine" if key == "chest" else key
    pelvis = parts.get("pelvis")
    if pelvis is None:
        return out
    # Joints between named roles: the spine between pelvis and neck (or chest), the neck
    # between chest and head, a hip bone between pelvis and hip.
    spans = [("spine", parts.get("neck") or parts.get("chest") or parts.get("head"))]
    spans += [("neck", parts.get("head"))]
    spans += [("hip_bone", parts.get(f"hip_{s}")) for s in ("l", "r")]
    for key, tip in spans:
        if tip is None:
            continue
        for frame in _between(model, tip, pelvis):
            group = _three_axis_group(model, frame)
            if group is None or group in out:
                continue
            if (
                key == "neck"
                and "chest" in parts
                and frame not in _between(model, tip, parts["chest"])
            ):
                continue
            out[group] = key
    return out


def _between(model: Model, tip: str, base: str) -> list[str]:
    """The visible frames strictly between ``base`` and ``tip`` (tip's ancestors below
    base); empty when ``base`` is not an ancestor of ``tip``."""
    node = model.parent[model.frame_index(tip)]
    stop = model.frame_index(base)
    out: list[str] = []
    while node >= 0 and node != stop:
        if not model.hidden[node]:
            out.append(model.node_names[node])
        node = model.parent[node]
    return out if node == stop else []


def anatomical_ranges(
    model: Model, roles: Mapping[str, str] | None = None
) -> dict[str, tuple[np.ndarray, float, float, float]]:
    """The swing-twist limits :func:`anatomical` gives ``model``: ``{joint group:
    (axis in the group's child frame, swing max, twist min, twist max)}`` [rad]."""
    check_model(model)
    parts = _parts(model, roles)
    frame = body_frame(model, parts)
    q0 = model.neutral()
    T = model.fk_all(q0)
    index = {n: i for i, n in enumerate(model.frame_names)}
    children = _first_children(model, parts)
    out: dict[str, tuple[np.ndarray, float, float, float]] = {}
    for group, key in _role_of_frames(model, parts).items():
        r = RANGES[key]
        f = _group_frame(model, group)
        R_world_child = T[index[f], :3, :3]
        child = children.get(f)
        if child is None:
            continue
        bone = T[index[child], :3, 3] - T[index[f], :3, 3]
        n = float(np.linalg.norm(bone))
        if n < 1e-9:
            continue
        bone /= n
        lo, hi = r.twist
        if r.hinge:
            role = next(k for k, v in parts.items() if v == f)
            parent_role = HINGES[key][0] + role[-2:]
            if parent_role not in parts:
                continue
            upper = T[index[f], :3, 3] - T[index[parts[parent_role]], :3, 3]
            upper /= max(float(np.linalg.norm(upper)), 1e-12)
            axis = (
                np.cross(upper, frame.forward) if key == "elbow" else np.cross(frame.forward, upper)
            )
            if float(np.linalg.norm(axis)) < 0.3:
                continue  # the bone points forward at rest: no flexion axis from it
            axis /= float(np.linalg.norm(axis))
            rest_bend = math.atan2(float(np.cross(upper, bone) @ axis), float(upper @ bone))
            lo, hi = max(lo - rest_bend, -math.pi), min(hi - rest_bend, math.pi)
        else:
            axis = bone
        out[group] = (R_world_child.T @ axis, r.swing, lo, hi)
    return out


def _first_children(model: Model, parts: Mapping[str, str]) -> dict[str, str]:
    """For each frame, the frame its bone points to: the role next along the limb where
    there is one, else its first child that is not hidden (an End Site counts)."""
    chains = (
        ("clavicle", "shoulder", "elbow", "wrist"),
        ("hip", "knee", "ankle", "toe"),
    )
    out: dict[str, str] = {}
    for chain in chains:
        for s in ("_l", "_r"):
            for a, b in itertools.pairwise(chain):
                if a + s in parts and b + s in parts:
                    out[parts[a + s]] = parts[b + s]
    kids = model.children
    for node in range(model.n_nodes):
        name = model.node_names[node]
        if model.hidden[node] or name in out:
            continue
        visible = _visible_children(model, kids, node)
        if visible:
            # Toward the head along the spine; else the first child.
            out[name] = model.node_names[visible[0]]
            head = parts.get("head")
            if head is not None:
                for k in visible:
                    kname = model.node_names[k]
                    if kname == head or kname in _between(model, head, name):
                        out[name] = kname
    return out


def _visible_children(model: Model, kids: tuple[tuple[int, ...], ...], node: int) -> list[int]:
    """The nearest visible descendants of ``node`` (hidden inner nodes of multi-axis
    joints passed through)."""
    out: list[int] = []
    stack = list(kids[node])
    while stack:
        k = stack.pop(0)
        if model.hidden[k]:
            stack[:0] = kids[k]
        else:
            out.append(k)
    return out


def anatomical(model: Model, roles: Mapping[str, str] | None = None) -> Model:
    """A copy of ``model`` with human joint ranges as swing-twist limits (see the module
    docstring); joints that already carry swing-twist limits keep theirs. ``roles``:
    ``{role: frame}`` instead of :func:`~kinetree.io.body_parts.find_body_parts`.
    Raises :class:`~kinetree.errors.UnsupportedError` for a model without pelvis, head
    and hips (or shoulders)."""
    limits = anatomical_ranges(model, roles)
    merged = {**limits, **dict(model.swing_twist)}
    return dataclasses.replace(model, swing_twist=merged)


def bend_angles(
    model: Model, q: ArrayLike, roles: Mapping[str, str] | None = None
) -> dict[str, np.ndarray]:
    """Signed flexion ``{role: (n_frames,)}`` [rad] of each elbow and knee of
    configurations ``q`` ``(n_frames, nq)`` (or ``(nq,)``), measured on FK: the angle
    between the bone before the joint and the bone after it, about the flexion axis the
    bone before carries from the rest pose (positive: bent the way bodies bend;
    negative: hyperextended)."""
    check_model(model)
    qa = as_array(q, "q")
    if qa.ndim == 1:
        qa = qa[None]
    if qa.ndim != 2 or qa.shape[1] != model.nq:
        raise ShapeError(f"q must have shape (n_frames, {model.nq}), got {qa.shape}")
    parts = _parts(model, roles)
    frame = body_frame(model, parts)
    index = {n: i for i, n in enumerate(model.frame_names)}
    T_rest = model.fk_all(model.neutral())
    T = model.fk_all(qa)
    out: dict[str, np.ndarray] = {}
    for key, (before, after) in HINGES.items():
        for s in ("_l", "_r"):
            names = [before + s, key + s, after + s]
            if not all(n in parts for n in names):
                continue
            a, b, c = (index[parts[n]] for n in names)
            upper_rest = T_rest[b, :3, 3] - T_rest[a, :3, 3]
            upper_rest /= max(float(np.linalg.norm(upper_rest)), 1e-12)
            if key == "elbow":
                axis = np.cross(upper_rest, frame.forward)
            else:
                axis = np.cross(frame.forward, upper_rest)
            if float(np.linalg.norm(axis)) < 0.3:
                continue
            axis /= float(np.linalg.norm(axis))
            axis_local = T_rest[a, :3, :3].T @ axis  # carried by the bone before
            axis_world = T[:, a, :3, :3] @ axis_local
            upper = T[:, b, :3, 3] - T[:, a, :3, 3]
            lower = T[:, c, :3, 3] - T[:, b, :3, 3]
            sin = np.einsum("ij,ij->i", np.cross(upper, lower), axis_world)
            cos = np.einsum("ij,ij->i", upper, lower)
            out[key + s] = np.arctan2(sin, cos)
    return out


def _clamp_layout(model: Model) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """The swing-twist limited ball joints of ``model``, batched by axis sequence:
    ``(dofs (G, 3), axes (3, 3), bone axes (G, 3), limits (G, 3): swing, twist lo, hi)``."""
    from .rotations import ball_joints

    balls = ball_joints(model)
    by_axes: dict[bytes, list[tuple[Any, ...]]] = {}
    for group, (b, sw_max, tw_lo, tw_hi) in model.swing_twist.items():
        ball = balls.get(group)
        if ball is not None:
            key = np.round(ball.axes, 12).tobytes()
            by_axes.setdefault(key, []).append((ball, b, sw_max, tw_lo, tw_hi))
    out = []
    for rows in by_axes.values():
        dofs = np.array([r[0].dofs for r in rows], dtype=np.int64)
        bones = np.array([np.asarray(r[1], dtype=np.float64) for r in rows])
        lims = np.array([r[2:] for r in rows], dtype=np.float64)
        out.append((dofs, rows[0][0].axes, bones, lims))
    return out


@njit(cache=True)
def _outside(a: np.ndarray, axes: np.ndarray, b: np.ndarray, lim: np.ndarray) -> bool:
    """Whether joint angles ``a`` (3,) about ``axes`` (3, 3) leave the swing-twist range
    ``lim`` (swing max, twist min, twist max) about bone axis ``b`` (3,)."""
    w, x, y, z = 1.0, 0.0, 0.0, 0.0
    for k in range(3):
        c, s = math.cos(0.5 * a[k]), math.sin(0.5 * a[k])
        bw, bx, by, bz = c, s * axes[k, 0], s * axes[k, 1], s * axes[k, 2]
        w, x, y, z = (
            w * bw - x * bx - y * by - z * bz,
            w * bx + x * bw + y * bz - z * by,
            w * by - x * bz + y * bw + z * bx,
            w * bz + x * by - y * bx + z * bw,
        )
    p = x * b[0] + y * b[1] + z * b[2]
    twist = 2.0 * math.atan2(p, w)
    if twist > math.pi:
        twist -= 2.0 * math.pi
    elif twist <= -math.pi:
        twist += 2.0 * math.pi
    n = math.sqrt(w * w + p * p)
    # The swing is q * conj(twist); its scalar part is (w^2 + p^2) / n = n.
    swing = 2.0 * math.acos(min(1.0, n)) if n > 0.0 else math.pi
    return swing > lim[0] + 1e-9 or twist < lim[1] - 1e-9 or twist > lim[2] + 1e-9


@njit(cache=True)
def _clamp_rows(
    flat: np.ndarray,
    good: np.ndarray,
    dofs: np.ndarray,
    axes: np.ndarray,
    bones: np.ndarray,
    lims: np.ndarray,
) -> None:
    """Each joint of ``flat`` (n, nq) out of its range moved back along its angles toward
    ``good`` (n, nq) until within (bisection)."""
    a = np.empty(3)
    a0 = np.empty(3)
    a1 = np.empty(3)
    for i in range(flat.shape[0]):
        for g in range(dofs.shape[0]):
            for k in range(3):
                a[k] = flat[i, dofs[g, k]]
            if not _outside(a, axes, bones[g], lims[g]):
                continue
            for k in range(3):
                a0[k] = good[i, dofs[g, k]]
                a1[k] = a[k]
            lo, hi = 0.0, 1.0
            for _ in range(16):
                mid = 0.5 * (lo + hi)
                for k in range(3):
                    a[k] = a0[k] + mid * (a1[k] - a0[k])
                if _outside(a, axes, bones[g], lims[g]):
                    hi = mid
                else:
                    lo = mid
            for k in range(3):
                flat[i, dofs[g, k]] = a0[k] + lo * (a1[k] - a0[k])


_CLAMP: dict[int, tuple[Model, list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]]] = {}


def clamp(model: Model, q: ArrayLike, inside: ArrayLike | None = None) -> np.ndarray:
    """``q`` ``(..., nq)`` with every swing-twist limited ball joint of ``model`` moved
    into its range; joints within their ranges are unchanged (a start for IK must
    already be within the limits it keeps).

    A joint out of range is moved back along the straight line of its angles toward
    ``inside`` (configurations of ``q``'s shape within the ranges, e.g. the last solved
    frame; default: the joints' zero angles, the rest pose) until it is within
    (bisection to 2^-16 of the way)."""
    check_model(model)
    out = np.array(as_array(q, "q", (model.nq,)), dtype=np.float64)
    flat = out.reshape(-1, model.nq)
    if inside is None:
        good = np.zeros_like(flat)
    else:
        good = np.ascontiguousarray(
            np.broadcast_to(np.asarray(inside, dtype=np.float64).reshape(-1, model.nq), flat.shape)
        )
    hit = _CLAMP.get(id(model))
    if hit is None or hit[0] is not model:
        hit = _CLAMP[id(model)] = (model, _clamp_layout(model))
    for dofs, axes, bones, lims in hit[1]:
        _clamp_rows(flat, good, dofs, np.ascontiguousarray(axes), bones, lims)
    return out.reshape(np.shape(out))
