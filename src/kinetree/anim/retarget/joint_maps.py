"""Which source joint drives which robot frame: ready-made maps and a guess from names.

A :class:`RetargetMap` pairs joints of a source skeleton with frames of a robot, and
says which body part (role, :data:`kinetree.body_parts.ROLES`) each pair is: the
retargeting treats the pelvis, the chest, the feet and the limbs differently.

Ready-made maps are joined from two tables by role: :data:`SKELETON_MAPS` (joint names
of CMU's BVH conversions, Mixamo and kinetree's humanoid) and :data:`ROBOT_MAPS`
(frames of Unitree's G1 and H1, PAL's Talos and kinetree's humanoid). The names are
facts about those skeletons and robot descriptions (CMU's cgspeed BVH files, Mixamo's
``mixamorig`` rig, the URDFs of example-robot-data). :func:`guess_map` pairs what
:func:`~kinetree.body_parts.find_body_parts` finds on both sides and reports it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...body_parts import ROLES, describe, find_body_parts
from ...errors import InvalidValueError, UnknownNameError, UnsupportedError
from ...model import Model
from .robots import joint_centre

__all__ = [
    "LIMB_PARTS",
    "ROBOT_MAPS",
    "SKELETON_MAPS",
    "RetargetMap",
    "guess_map",
    "limb_roots",
    "make_map",
    "robot_parts",
]


def _sided(table: Mapping[str, str], left: str, right: str) -> dict[str, str]:
    """``{role: name}`` with ``{side}`` in names filled for both sides."""
    out: dict[str, str] = {}
    for role, name in table.items():
        if "{side}" in name:
            out[f"{role}_l"] = name.format(side=left)
            out[f"{role}_r"] = name.format(side=right)
        else:
            out[role] = name
    return out


_MIXAMO_LIKE = {
    "pelvis": "Hips",
    "neck": "Neck",
    "head": "Head",
    "clavicle": "{side}Shoulder",
    "shoulder": "{side}Arm",
    "elbow": "{side}ForeArm",
    "wrist": "{side}Hand",
    "hip": "{side}UpLeg",
    "knee": "{side}Leg",
    "ankle": "{side}Foot",
    "toe": "{side}ToeBase",
}
#: Source skeletons: role -> joint name. A name matches with or without an exporter's
#: prefix (``mixamorig:Hips`` is ``Hips``).
SKELETON_MAPS: dict[str, dict[str, str]] = {
    # CMU mocap, cgspeed's BVH conversion (the 2,500 clips of the CMU database).
    "cmu": _sided({**_MIXAMO_LIKE, "spine": "LowerBack", "chest": "Spine1"}, "Left", "Right"),
    # Mixamo's rig (also LAFAN1 and most game rigs follow it).
    "mixamo": _sided({**_MIXAMO_LIKE, "spine": "Spine", "chest": "Spine2"}, "Left", "Right"),
    # kinetree's built-in humanoid as a source (a Motion of it).
    "humanoid": _sided(
        {
            "pelvis": "pelvis",
            "spine": "abdomen",
            "chest": "chest",
            "neck": "neck",
            "head": "head",
            "clavicle": "clavicle_{side}",
            "shoulder": "upper_arm_{side}",
            "elbow": "forearm_{side}",
            "wrist": "palm_{side}",
            "hip": "thigh_{side}",
            "knee": "shin_{side}",
            "ankle": "ankle_{side}",
            "toe": "toe_{side}",
        },
        "l",
        "r",
    ),
}
#: Robots: role -> frame. Roles a robot lacks (a G1 has no clavicle) are absent.
ROBOT_MAPS: dict[str, dict[str, str]] = {
    # Unitree G1, 29 DoF (g1_29dof_rev_1_0.urdf): the hip is the pitch link, whose origin
    # is on the hip's first axis (fixed to the pelvis; the roll and yaw links swing).
    "g1": _sided(
        {
            "pelvis": "pelvis",
            "chest": "torso_link",
            "shoulder": "{side}_shoulder_roll_link",
            "elbow": "{side}_elbow_link",
            "wrist": "{side}_wrist_yaw_link",
            "hip": "{side}_hip_pitch_link",
            "knee": "{side}_knee_link",
            "ankle": "{side}_ankle_roll_link",
        },
        "left",
        "right",
    ),
    # Unitree H1 (h1.urdf).
    "h1": _sided(
        {
            "pelvis": "pelvis",
            "chest": "torso_link",
            "shoulder": "{side}_shoulder_roll_link",
            "elbow": "{side}_elbow_link",
            "hip": "{side}_hip_yaw_link",
            "knee": "{side}_knee_link",
            "ankle": "{side}_ankle_link",
        },
        "left",
        "right",
    ),
    # PAL Robotics' Talos (talos_reduced.urdf): numbered links.
    "talos": _sided(
        {
            "pelvis": "base_link",
            "chest": "torso_2_link",
            "head": "head_2_link",
            "shoulder": "arm_{side}_3_link",
            "elbow": "arm_{side}_4_link",
            "wrist": "arm_{side}_7_link",
            "hip": "leg_{side}_3_link",
            "knee": "leg_{side}_4_link",
            "ankle": "leg_{side}_6_link",
        },
        "left",
        "right",
    ),
    "humanoid": dict(SKELETON_MAPS["humanoid"]),
}


def _unprefixed(name: str) -> str:
    return name.rsplit(":", 1)[-1]


@dataclass(frozen=True)
class RetargetMap:
    """Source joints paired with robot frames.

    Attributes:
        pairs: source joint -> robot frame, in source order.
        roles: source joint -> role (:data:`~kinetree.body_parts.ROLES`) for the
            pairs that are a known body part; other pairs are followed as plain
            points.
        report: how the map was made (names of the tables, or what the guess paired
            and left out).
        offsets: ``{robot frame: (x, y, z)}`` [m, in that frame] where the body part's
            point is not the frame's origin: a shoulder or hip guessed from names sits
            at its joints' centre (:func:`limb_roots`); a ready-made table names the
            point itself and has none.
    """

    pairs: Mapping[str, str]
    roles: Mapping[str, str] = field(default_factory=dict)
    report: str = ""
    offsets: Mapping[str, tuple[float, float, float]] = field(default_factory=dict)

    def role(self, role: str) -> tuple[str, str] | None:
        """``(source joint, robot frame)`` of a role, or None."""
        for j, r in self.roles.items():
            if r == role:
                return j, self.pairs[j]
        return None

    def check(self, source: Model, robot: Model) -> None:
        """Raise :class:`~kinetree.errors.UnknownNameError` naming a source joint or robot
        frame of the map that the models lack, and what to do about it."""
        for j, f in self.pairs.items():
            if j not in source.frame_names:
                raise UnknownNameError(
                    f"the mapping names source joint {j!r}, which skeleton "
                    f"{source.name!r} does not have; its joints are: "
                    f"{', '.join(_shown(source.frame_names))}. Fix the mapping, or pass "
                    "mapping='auto' to pair joints by name"
                )
            if f not in robot.frame_names:
                raise UnknownNameError(
                    f"the mapping pairs {j!r} with robot frame {f!r}, which robot "
                    f"{robot.name!r} does not have; its frames are: "
                    f"{', '.join(_shown(robot.frame_names))}. Fix the mapping, or pass "
                    "mapping='auto' to pair frames by name"
                )
        if not self.pairs:
            raise InvalidValueError(
                f"the mapping pairs nothing: no joint of skeleton {source.name!r} was paired "
                f"with a frame of robot {robot.name!r}; give mapping={{source joint: robot "
                "frame}} (e.g. {'Hips': 'pelvis', 'LeftFoot': 'left_ankle_roll_link'}) or "
                "roles={role: source joint}"
            )
        if "pelvis" not in self.roles.values():
            raise InvalidValueError(
                "the mapping has no pelvis (the source's root joint paired with the robot's "
                f"base frame); it pairs: {', '.join(f'{j}->{f}' for j, f in self.pairs.items())}"
                ". Add the pair, e.g. {'Hips': 'pelvis'}"
            )


def _shown(names: tuple[str, ...], n: int = 40) -> list[str]:
    return [*names[:n], "..."] if len(names) > n else list(names)


def _resolve_names(table: Mapping[str, str], model: Model) -> dict[str, str]:
    """``{role: frame}`` of the table's names found in ``model`` (prefix- and, where no
    name matches exactly, case-insensitive)."""
    by_plain: dict[str, str] = {}
    for n in model.frame_names:
        by_plain.setdefault(_unprefixed(n), n)
    for n in model.frame_names:  # then in any letter case
        by_plain.setdefault(_unprefixed(n).lower(), n)
    return {
        r: by_plain.get(n, by_plain.get(n.lower(), ""))
        for r, n in table.items()
        if n in by_plain or n.lower() in by_plain
    }


def _robot_table(robot: Model) -> tuple[str, dict[str, str]] | None:
    """The ready-made robot table that fits ``robot`` best (most frames present)."""
    best: tuple[str, dict[str, str]] | None = None
    for name, table in ROBOT_MAPS.items():
        found = {r: f for r, f in table.items() if f in robot.frame_names}
        if len(found) == len(table) and (best is None or len(found) > len(best[1])):
            best = (name, found)
    return best


def _join(src: Mapping[str, str], dst: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    pairs = {src[r]: dst[r] for r in ROLES if r in src and r in dst}
    roles = {src[r]: r for r in ROLES if r in src and r in dst}
    return pairs, roles


def limb_roots(robot: Model, parts: Mapping[str, str]) -> dict[str, tuple[float, float, float]]:
    """``{robot frame: offset}`` [m, in the frame] that puts each shoulder and hip of
    ``parts`` (``{role: frame}``) at the centre of the joints between it and the body
    (the chest, a clavicle, the pelvis: :func:`~.robots.joint_centre`, at the neutral
    pose). Robots such as Fourier's GR1 and GR3 chain a shoulder or hip from three
    one-axis links whose origins run 7 to 14 cm down the limb; the name-found frame (the
    deepest of them) is then not where the limb turns. Offsets under 1 mm are left out."""
    q = robot.neutral()
    out: dict[str, tuple[float, float, float]] = {}
    for side in ("l", "r"):
        for role, body in (("shoulder", (f"clavicle_{side}", "chest")), ("hip", ("pelvis",))):
            frame = parts.get(f"{role}_{side}")
            parent = next((parts[b] for b in body if b in parts), None)
            if frame is None or parent is None:
                continue
            T = np.asarray(robot.fk(q, frame))
            local = T[:3, :3].T @ (joint_centre(robot, q, frame, parent) - T[:3, 3])
            if float(np.linalg.norm(local)) >= 1e-3:
                out[frame] = (float(local[0]), float(local[1]), float(local[2]))
    return out


#: The body parts whose absence leaves a limb of the robot still: each side's shoulder,
#: elbow, wrist, hip, knee and ankle.
LIMB_PARTS = tuple(
    f"{r}_{s}" for s in "lr" for r in ("shoulder", "elbow", "wrist", "hip", "knee", "ankle")
)


def robot_parts(robot: Model) -> tuple[str | None, dict[str, str]]:
    """``(table name or None, {role: frame})``: the robot's body parts, from the
    ready-made table that fits it or found by name; raises
    :class:`~kinetree.errors.UnsupportedError` when it has none (not a humanoid)."""
    table = _robot_table(robot)
    if table is not None:
        return table[0], table[1]
    dst = find_body_parts(robot)
    if "pelvis" not in dst or not any(r in dst for r in LIMB_PARTS):
        raise UnsupportedError(
            f"robot {robot.name!r} has no humanoid body parts (found by name: "
            f"{', '.join(dst) or 'none'}; a humanoid needs a pelvis and limbs); "
            f"retargeting drives a humanoid robot ({', '.join(ROBOT_MAPS)} are known by "
            "name), or give mapping={source joint: robot frame}"
        )
    return None, dst


def _source_parts(source: Model, roles: Mapping[str, str] | None) -> dict[str, str]:
    """The source's body parts; raises :class:`~kinetree.errors.InvalidValueError`
    when no name says a pelvis (nothing to drive the robot's base from)."""
    src = find_body_parts(source, roles=roles)
    if "pelvis" not in src:
        raise InvalidValueError(
            f"no body parts of skeleton {source.name!r} were recognised from its joint "
            f"names (found: {', '.join(src) or 'none'}; its joints: "
            f"{', '.join(_shown(source.frame_names, 12))}); name them with roles="
            "{'pelvis': ..., 'ankle_l': ...} or give mapping={source joint: robot frame}"
        )
    return src


def guess_map(
    source: Model, robot: Model, *, roles: Mapping[str, str] | None = None
) -> RetargetMap:
    """Pair the body parts found on both models by name and tree (see
    :func:`~kinetree.body_parts.find_body_parts`; ``roles``: the source's body parts
    the caller names, ``{role: joint}``); a ready-made robot table is used when one fits
    the robot. The report lists the pairs and the roles left out."""
    src = _source_parts(source, roles)
    table, dst = robot_parts(robot)
    pairs, role_of = _join(src, dst)
    offsets = limb_roots(robot, dst) if table is None else {}
    lines = [f"source {source.name!r}: found by name"]
    lines += [f"  {line}" for line in describe(src).splitlines()]
    how = f"the ready-made {table!r} table" if table is not None else "found by name"
    lines.append(f"robot {robot.name!r}: {how}")
    lines += [f"  {line}" for line in describe(dst).splitlines()]
    lines.append("paired:")
    lines += [f"  {role_of[j]}: {j} -> {f}" for j, f in pairs.items()]
    lines += [_offset_line(f, o) for f, o in offsets.items() if f in pairs.values()]
    left = [r for r in ROLES if (r in src) != (r in dst)]
    if left:
        lines.append(f"left out (found on one side only): {', '.join(left)}")
    return RetargetMap(pairs, role_of, "\n".join(lines), offsets)


def _offset_line(frame: str, offset: tuple[float, float, float]) -> str:
    mm = 1000.0 * float(np.linalg.norm(offset))
    return f"  {frame}: at its joints' centre, {mm:.0f} mm from the frame's origin"


def make_map(
    mapping: Any, source: Model, robot: Model, *, roles: Mapping[str, str] | None = None
) -> RetargetMap:
    """A :class:`RetargetMap` from what :func:`kinetree.retarget` takes as ``mapping``.

    ``None`` or ``"auto"``: :func:`guess_map`. A name of :data:`SKELETON_MAPS`
    (``"cmu"``, ``"mixamo"``, ``"humanoid"``): that skeleton's joints joined by role
    with the robot table of :data:`ROBOT_MAPS` that fits the robot (or the robot's
    parts found by name). A dict ``{source joint: robot frame}``: those pairs, their
    roles found on the source by name. A :class:`RetargetMap`: itself. The result is
    checked against both models (:meth:`RetargetMap.check`). ``roles``: the source's
    body parts the caller names, ``{role: joint}``, for the guess and a dict's roles
    (:func:`~kinetree.body_parts.find_body_parts`).
    """
    if isinstance(mapping, RetargetMap):
        out = mapping
    elif mapping is None or (isinstance(mapping, str) and mapping == "auto"):
        out = guess_map(source, robot, roles=roles)
    elif isinstance(mapping, str):
        if mapping not in SKELETON_MAPS:
            raise UnknownNameError(
                f"mapping {mapping!r} not found; ready-made maps are: "
                f"{', '.join(SKELETON_MAPS)}, 'auto' (a guess from names), or give a dict "
                "{source joint: robot frame}"
            )
        src = _resolve_names(SKELETON_MAPS[mapping], source)
        if "pelvis" not in src:
            raise UnknownNameError(
                f"mapping {mapping!r} expects joint {SKELETON_MAPS[mapping]['pelvis']!r}, "
                f"which skeleton {source.name!r} does not have (its joints: "
                f"{', '.join(_shown(source.frame_names, 12))}); try mapping='auto'"
            )
        table_name, dst = robot_parts(robot)
        pairs, roles_of = _join(src, dst)
        offsets = limb_roots(robot, dst) if table_name is None else {}
        robot_how = f"robot table {table_name!r}" if table_name else "robot parts by name"
        report = "\n".join(
            [
                f"skeleton table {mapping!r} joined with {robot_how}",
                *(_offset_line(f, o) for f, o in offsets.items()),
            ]
        )
        out = RetargetMap(pairs, roles_of, report, offsets)
    elif isinstance(mapping, Mapping):
        pairs = {}
        for j, f in mapping.items():
            if not isinstance(j, str) or not isinstance(f, str):
                raise InvalidValueError(
                    f"mapping entries must be source joint name -> robot frame name, got "
                    f"{j!r}: {f!r}"
                )
            pairs[j] = f
        parts = find_body_parts(source, roles=roles)
        out = RetargetMap(
            pairs,
            {j: r for r, j in parts.items() if j in pairs},
            "given pairs; roles found by name",
        )
    else:
        raise InvalidValueError(
            "mapping must be None/'auto', a ready-made map name "
            f"({', '.join(SKELETON_MAPS)}), a dict {{source joint: robot frame}} or a "
            f"RetargetMap, got {type(mapping).__name__}"
        )
    out.check(source, robot)
    return out
