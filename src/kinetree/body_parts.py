"""Body parts of a skeleton or a humanoid robot, found from frame names and the tree.

A *role* names a place on a human body: the ``pelvis``, the ``spine`` (first joint
above the pelvis), the ``chest`` (where both arms hang), the ``neck``, the ``head``,
and on each side (suffix ``_l`` or ``_r``) the ``clavicle``, ``shoulder``, ``elbow``,
``wrist``, ``hip``, ``knee``, ``ankle`` and ``toe``. A role sits where the body
articulates: the ``shoulder`` of a BVH skeleton is the joint whose rotation swings
the upper arm (CMU's and Mixamo's ``LeftArm``), its ``elbow`` the one at the elbow
(``LeftForeArm``), its ``wrist`` ``LeftHand``.

:func:`find_body_parts` reads them from names first (the conventions of CMU's BVH
conversions, Daz-style ``lShldr``/``lThigh``/``lShin``, Reallusion's ``CC_Base_L_Upperarm``,
Mixamo, Bandai-Namco's data set, 3ds Max Biped, kinetree's humanoid and robot URDFs such as
Unitree's G1: ``left_knee_link``, SMPL's ``L_Knee``, the Acclaim bones of CMU's and
HDM05's ASF files: ``lfemur``), in any letter case (``leftupleg`` and ``LEFTUPLEG`` are
``LeftUpLeg``: a word run together is split into the words it is made of), then checks
each limb against
the tree: a knee must lie below its hip, an ankle below its knee, and so on; a name
that breaks the order is dropped. The centre roles come from the tree where names do
not say: the chest is the last frame both shoulders hang from, the pelvis the last
both hips hang from, the spine the first frame on the way from pelvis to chest.

Where a skeleton has both an ``ankle`` and a ``foot`` below it (SMPL's ``L_Ankle`` and
``L_Foot``, the ball of the foot), the ankle is the ankle and the foot its ``toe``.
Names no rule reads are given by the caller: ``find_body_parts(model, roles={"wrist_l":
"hand_left_tip", ...})`` takes those roles as they are and finds the rest.

This module lives beside the skeleton builder (:mod:`kinetree.builder`); the old path
``kinetree.io.body_parts`` still imports it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from .errors import InvalidValueError, UnknownNameError
from .model import Model

__all__ = [
    "CENTRE_ROLES",
    "LIMB_ROLES",
    "ROLES",
    "SIDES",
    "describe",
    "find_body_parts",
    "name_tokens",
    "side_of",
]

#: The two sides, as role suffixes.
SIDES = ("l", "r")
#: Roles of one side, from the body outwards (add ``_l`` or ``_r``).
LIMB_ROLES = ("clavicle", "shoulder", "elbow", "wrist", "hip", "knee", "ankle", "toe")
#: Every role: the centre line, then each side's limbs.
CENTRE_ROLES = ("pelvis", "spine", "chest", "neck", "head")
ROLES = (*CENTRE_ROLES, *(f"{r}_{s}" for s in SIDES for r in LIMB_ROLES))

# Words that say nothing about the body part (prefixes of exporters, link suffixes,
# the axis of one of several co-located robot joints).
_NOISE = frozenset(
    "link joint jnt bone body frame mixamorig bip bip01 bip001 def pitch roll yaw "
    "x y z end site mesh cc base".split()
)
_LEFT = frozenset(("left", "l", "lft"))
_RIGHT = frozenset(("right", "r", "rgt"))
# Limb role -> the part names that mean it, best first. Within one part name the
# deepest matching frame of a side is taken (the last of a robot's co-located links).
_LIMB_WORDS: dict[str, tuple[str, ...]] = {
    "wrist": ("wrist", "hand", "palm"),
    "elbow": ("forearm", "lowerarm", "elbow", "lowarm"),
    "shoulder": ("upperarm", "arm", "uparm", "shldr", "shoulder"),
    "clavicle": ("clavicle", "collar", "shoulder"),
    "hip": ("upleg", "upperleg", "thigh", "femur", "hip"),
    "knee": ("lowerleg", "leg", "calf", "shin", "shank", "tibia", "knee", "lowleg"),
    "ankle": ("ankle", "foot"),
    "toe": ("toebase", "toe", "toes", "ball", "foot"),
}
# Acclaim (ASF) arm bones: the humerus swings at the shoulder, the radius at the elbow.
_LIMB_WORDS["shoulder"] = (*_LIMB_WORDS["shoulder"], "humerus")
_LIMB_WORDS["elbow"] = (*_LIMB_WORDS["elbow"], "radius")
# Words a name run together in one letter case is split into (``lefthipjoint``): the
# side words, the noise, every part word and the pieces of the compound ones.
_WORDS = frozenset(
    {w for words in _LIMB_WORDS.values() for w in words}
    | _NOISE
    | _LEFT
    | _RIGHT
    | set(
        "hips pelvis spine chest neck head root torso back lower upper up low fore arm leg "
        "toe base thorax abdomen finger index middle ring pinky thumb end hand".split()
    )
)
# Each side's chains, parent role first: every role must hang below the one before.
_CHAINS = (("clavicle", "shoulder", "elbow", "wrist"), ("hip", "knee", "ankle", "toe"))
_TOKEN = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def _split(word: str) -> tuple[str, ...]:
    """A lower-case word as the fewest known words it is made of (``"leftupleg"`` ->
    ``("left", "upleg")``), or itself when it is known or no split covers it."""
    if word in _WORDS or word.isdigit():
        return (word,)
    n = len(word)
    best: list[tuple[str, ...] | None] = [None] * (n + 1)
    best[0] = ()
    for end in range(1, n + 1):
        for start in range(end):
            head = best[start]
            piece = word[start:end]
            if head is not None and piece in _WORDS:
                cand = (*head, piece)
                if best[end] is None or len(cand) < len(best[end] or ()):
                    best[end] = cand
    return best[n] or (word,)


def name_tokens(name: str) -> tuple[str, ...]:
    """Lower-case words of a joint or frame name: an exporter's prefix (up to the last
    ``:``) dropped, split at non-letters and at camel-case humps, and a word run together
    (a name in one letter case) split into the known words it is made of.

    ``"mixamorig:LeftUpLeg"`` -> ``("left", "up", "leg")``, ``"LHipJoint"`` ->
    ``("l", "hip", "joint")``, ``"UpperArm_L"`` -> ``("upper", "arm", "l")``,
    ``"leftupleg"`` and ``"LEFTUPLEG"`` -> ``("left", "upleg")``.
    """
    base = name.rsplit(":", 1)[-1]
    out: list[str] = []
    for t in _TOKEN.findall(base):
        out.extend(_split(t.lower()))
    return tuple(out)


def side_of(name: str) -> str | None:
    """``"l"``, ``"r"`` or None: the side a name says (``Left``, ``L``, ``_l``...)."""
    toks = set(name_tokens(name))
    left, right = bool(toks & _LEFT), bool(toks & _RIGHT)
    if left == right:
        return None
    return "l" if left else "r"


def _part(name: str) -> str:
    """The body-part word of a name: its tokens without side, noise and numbers."""
    skip = _NOISE | _LEFT | _RIGHT
    return "".join(t for t in name_tokens(name) if t not in skip and not t.isdigit())


class _Tree:
    """The visible frames of a model as a tree (a frame's parent: its nearest visible
    ancestor), with depths and ancestor tests."""

    def __init__(self, model: Model, frames: Sequence[str] | None):
        names = model.frame_names if frames is None else tuple(frames)
        node_of = {n: model.frame_index(n) for n in names}
        visible = set(node_of.values())
        self.names = names
        self.parent: dict[str, str | None] = {}
        self.depth: dict[str, int] = {}
        by_node = {k: n for n, k in node_of.items()}
        for n, k in node_of.items():
            path = [int(a) for a in model.ancestors(k)[:-1] if int(a) in visible]
            self.parent[n] = by_node[path[-1]] if path else None
            self.depth[n] = len(path)

    def ancestors(self, name: str) -> list[str]:
        """From the frame's parent up to the root."""
        out = []
        p = self.parent[name]
        while p is not None:
            out.append(p)
            p = self.parent[p]
        return out

    def below(self, child: str, parent: str) -> bool:
        return parent in self.ancestors(child)

    def common(self, a: str, b: str) -> str | None:
        """The deepest frame both hang from (the frames themselves included)."""
        up = [a, *self.ancestors(a)]
        seen = set([b, *self.ancestors(b)])
        return next((n for n in up if n in seen), None)


def _limbs(tree: _Tree, skip: set[str], given: Mapping[str, str]) -> dict[str, str]:
    found: dict[str, str] = {r: f for r, f in given.items() if r not in CENTRE_ROLES}
    word_of: dict[str, str] = {f: "" for f in found.values()}
    parts = {n: _part(n) for n in tree.names if n not in skip and n not in given.values()}
    sides = {n: side_of(n) for n in parts}
    for side in SIDES:
        for role, words in _LIMB_WORDS.items():
            if f"{role}_{side}" in found:
                continue
            sh = found.get(f"shoulder_{side}")
            if role == "clavicle" and (sh is None or word_of[sh] == "shoulder"):
                # A robot's shoulder links are its shoulder; a skeleton's "Shoulder" is
                # its clavicle only where an "Arm" below it is the shoulder.
                words = tuple(w for w in words if w != "shoulder")
            for word in words:
                hits = [n for n, p in parts.items() if p == word and sides[n] == side]
                hits = [n for n in hits if n not in found.values()]
                if role == "clavicle":
                    hits = [n for n in hits if sh is not None and tree.below(sh, n)]
                if hits:
                    found[f"{role}_{side}"] = max(hits, key=lambda n: tree.depth[n])
                    word_of[found[f"{role}_{side}"]] = word
                    break
    # Each limb in order: a role that does not hang below the one before is dropped,
    # and so is a limb with fewer than two roles left (numbered robot links such as
    # "arm_left_7_link" say "arm" without saying which part of it).
    for side in SIDES:
        for chain in _CHAINS:
            last: str | None = None
            kept: list[str] = []
            for role in chain:
                key = f"{role}_{side}"
                if key not in found:
                    continue
                if key not in given and last is not None and not tree.below(found[key], last):
                    del found[key]
                    continue
                last = found[key]
                kept.append(key)
            if len(kept) < 2:
                for key in kept:
                    if key not in given:
                        del found[key]
    return found


def _check_roles(model: Model, roles: Mapping[str, str] | None) -> dict[str, str]:
    """The caller's ``{role: frame}``, each role one of :data:`ROLES` and each frame one
    of the model's."""
    if roles is None:
        return {}
    if not isinstance(roles, Mapping):
        raise InvalidValueError(
            f"roles must be a dict {{role: frame name}}, got {type(roles).__name__}"
        )
    out: dict[str, str] = {}
    for role, frame in roles.items():
        if role not in ROLES:
            raise InvalidValueError(
                f"roles: {role!r} is not a body part; the body parts are: {', '.join(ROLES)}"
            )
        if not isinstance(frame, str) or frame not in model.frame_names:
            shown = ", ".join(model.frame_names[:40]) + (
                ", ..." if len(model.frame_names) > 40 else ""
            )
            raise UnknownNameError(
                f"roles: {role!r} names frame {frame!r}, which {model.name!r} does not "
                f"have; its frames are: {shown}"
            )
        out[role] = frame
    taken = [f for f in out.values()]
    twice = sorted({f for f in taken if taken.count(f) > 1})
    if twice:
        raise InvalidValueError(
            f"roles: frame {twice[0]!r} is given for more than one body part "
            f"({', '.join(r for r, f in out.items() if f == twice[0])})"
        )
    return out


def find_body_parts(
    model: Model,
    frames: Sequence[str] | None = None,
    *,
    roles: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """``{role: frame}`` for every role of :data:`ROLES` found in ``model``.

    ``frames``: the frames to consider (default: all; a BVH skeleton's End Sites,
    ``*_end``, are always left out). ``roles``: ``{role: frame}`` the caller gives (for
    names no rule reads); they are taken as they are, and the other roles are found
    around them. Roles the names and the tree do not give are absent; nothing is
    guessed from geometry. See the module docstring.

    Raises:
        InvalidValueError: a key of ``roles`` is not one of :data:`ROLES`, or one frame
            is given two roles.
        UnknownNameError: a frame of ``roles`` is not one of the model's.
    """
    given = _check_roles(model, roles)
    if frames is not None:
        frames = [*frames, *(f for f in given.values() if f not in frames)]
    tree = _Tree(model, frames)
    skip = {n for n in tree.names if n.endswith("_end") or re.search(r"_end\d+$", n)}
    found = _limbs(tree, skip, given)
    parts = {n: _part(n) for n in tree.names if n not in skip and n not in given.values()}
    both = [(found.get(f"{r}_l"), found.get(f"{r}_r")) for r in ("shoulder", "clavicle")]
    arms = next(((a, b) for a, b in both if a is not None and b is not None), None)
    if "chest" in given:
        found["chest"] = given["chest"]
    elif arms is not None:
        chest = tree.common(arms[0], arms[1])
        if chest is not None and chest not in (arms[0], arms[1]):
            found["chest"] = chest
    hips = (found.get("hip_l"), found.get("hip_r"))
    pelvis: str | None = given.get("pelvis")
    chest = found.get("chest")
    if pelvis is None:
        if hips[0] is not None and hips[1] is not None:
            pelvis = tree.common(hips[0], hips[1])
        if pelvis is None or pelvis in hips:
            pelvis = next((n for n, p in parts.items() if p in ("hips", "pelvis", "hip")), None)
        if pelvis is not None and chest is not None and not tree.below(chest, pelvis):
            # The legs hang from a pelvis bone beside the torso (Reallusion's
            # CC_Base_Pelvis under CC_Base_Hip): the pelvis is the last frame legs and
            # torso share.
            pelvis = tree.common(pelvis, chest)
    if pelvis is not None:
        found["pelvis"] = pelvis
    if "spine" in given:
        found["spine"] = given["spine"]
    elif pelvis is not None and chest is not None and tree.below(chest, pelvis):
        path = [chest, *tree.ancestors(chest)]
        found["spine"] = path[path.index(pelvis) - 1]
    top = chest if chest is not None else pelvis
    for role in ("neck", "head"):
        if role in given:
            found[role] = given[role]
            continue
        hits = [n for n, p in parts.items() if p == role and n not in found.values()]
        if top is not None:
            hits = [n for n in hits if tree.below(n, top)]
        if hits:
            found[role] = min(hits, key=lambda n: tree.depth[n])
    return {r: found[r] for r in ROLES if r in found}


def describe(parts: Mapping[str, str]) -> str:
    """One line per role: ``role: frame``, and the roles not found."""
    lines = [f"{r}: {parts[r]}" for r in ROLES if r in parts]
    missing = [r for r in ROLES if r not in parts]
    if missing:
        lines.append(f"not found: {', '.join(missing)}")
    return "\n".join(lines)
