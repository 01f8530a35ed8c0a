"""The skeleton every character format reads into: joints with rest transforms -> Model.

glTF nodes, USD Skeleton joints and FBX limb nodes all give the same thing: a tree of
joints, each with a rest translation, rotation and scale relative to its parent, and
above the top joints whatever transform the file puts there. :func:`build_rig` makes the
:class:`Model` (the layout described in :mod:`kinetree.io.gltf`: a free joint per top
joint, a ball joint per inner joint, a free one where the file moves its translation,
static scales baked into the offsets) and :func:`rig_q` the configurations of sampled
joint rotations and translations, so the readers differ only in how they read files.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..builder import ModelBuilder
from ..errors import FileFormatError, InvalidValueError, KinetreeError
from ..model import Model

__all__ = ["Y_TO_Z", "JointTree", "Rig", "build_rig", "check_up_scale", "rig_q"]

#: Y-up to Z-up: +90 degrees about x (y goes to z, z to -y), exact.
Y_TO_Z = np.array(
    [[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, -1.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]]
)


@dataclass
class JointTree:
    """Joints as a file gives them, parents first.

    ``t`` ``(n, 3)`` rest translations [file units], ``r`` ``(n, 4)`` rest rotations
    ``(x, y, z, w)``, ``s`` ``(n, 3)`` rest scales, each relative to the parent joint;
    ``above``: for a top joint, the world transform (scale included) of what holds it;
    ``moved``: whether a curve moves the joint's translation away from ``t``.
    """

    names: list[str]
    parent: list[int]
    t: np.ndarray
    r: np.ndarray
    s: np.ndarray
    above: list[np.ndarray | None]
    moved: list[bool]


@dataclass(frozen=True)
class Rig:
    """A model built from a :class:`JointTree`, with what posing it needs:
    ``offsets`` ``(n, 3)`` multiply each joint's file translation into the model's
    (the parent's scale, times ``scale``); ``k`` ``(n, 3)`` each joint frame's own
    accumulated file scale (for inverse bind matrices)."""

    model: Model
    tree: JointTree
    offsets: np.ndarray
    k: np.ndarray
    up: str | None
    scale: float

    @property
    def base(self) -> np.ndarray:
        """Model world <- file world: the up rotation times ``scale``."""
        B = Y_TO_Z.copy() if self.up == "z" else np.eye(4)
        return B @ np.diag([self.scale, self.scale, self.scale, 1.0])


def check_up_scale(up: object, scale: object, file_up: str = "y") -> float:
    """``scale`` as a positive float; ``up`` must be None or ``"z"``."""
    if up not in (None, "z"):
        raise InvalidValueError(
            f"up must be None (keep the file's {file_up.upper()}-up axes) or 'z' (Z-up), got {up!r}"
        )
    try:
        s = float(scale)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        s = math.nan
    if not (math.isfinite(s) and s > 0.0):
        raise InvalidValueError(f"scale must be a positive number, got {scale!r}")
    return s


def uniform(k: np.ndarray) -> np.ndarray:
    """A scale vector as the uniform scale nearest it (itself when uniform)."""
    if k[0] == k[1] == k[2]:
        return k.copy()
    return np.full(3, float(np.prod(np.abs(k))) ** (1.0 / 3.0))


def _root_name(names: Sequence[str]) -> str:
    root = "world"
    while root in names:
        root = "_" + root
    return root


def build_rig(
    name: str,
    tree: JointTree,
    up: str | None,
    scale: float,
    metadata: Mapping[str, object],
    where: str,
    rotate_up: bool = True,
) -> Rig:
    """The model of ``tree`` (see the module docstring); ``where`` names the file in
    errors. ``rotate_up``: whether ``up="z"`` turns the file (False: it is Z-up
    already)."""
    n = len(tree.names)
    k_acc = np.ones((n, 3))
    offsets = np.ones((n, 3))
    origins: list[np.ndarray] = []
    for i in range(n):
        p = tree.parent[i]
        if p < 0:
            held = tree.above[i]
            W = held if held is not None else np.eye(4)
            k = np.linalg.norm(W[:3, :3], axis=0)
            O = np.eye(4)
            O[:3, :3] = W[:3, :3] / np.where(k == 0.0, 1.0, k)
            O[:3, 3] = W[:3, 3] * scale
            origins.append(O)
            offsets[i] = k
        else:
            offsets[i] = k_acc[p]  # the parent's own scale, axis by axis: exact
            origins.append(np.eye(4))
        k_acc[i] = uniform(offsets[i]) * tree.s[i]
    offsets = offsets * scale
    base = Y_TO_Z if up == "z" and rotate_up else None
    root = _root_name(tree.names)
    b = ModelBuilder(name or "skeleton", root=root, root_origin=base)
    b.metadata.update(metadata)
    b.units = "m" if scale == 1.0 else f"m x {scale!r}"
    neutral: dict[str, float] = {}
    for i, joint in enumerate(tree.names):
        p = tree.parent[i]
        parent = root if p < 0 else tree.names[p]
        x, y, z, w = tree.r[i]
        quat = {"qw": w, "qx": x, "qy": y, "qz": z}
        t = tree.t[i] * offsets[i]
        if p < 0 or tree.moved[i]:
            b.add_joint(joint, parent, joint, type="free", origin=origins[i])
            neutral.update({f"{joint}_x": t[0], f"{joint}_y": t[1], f"{joint}_z": t[2]})
        else:
            origin = np.eye(4)
            origin[:3, 3] = t
            b.add_joint(joint, parent, joint, type="ball", origin=origin)
        neutral.update({f"{joint}_{c}": float(v) for c, v in quat.items()})
    b.set_neutral(neutral)
    try:
        model = b.build()
    except KinetreeError as exc:
        raise FileFormatError(f"{where}: cannot build the skeleton: {exc}") from None
    inner_free = any(m and tree.parent[i] >= 0 for i, m in enumerate(tree.moved))
    rotations = tuple(f"{j}_{c}" for j in tree.names for c in ("qw", "qx", "qy", "qz"))
    taken = set(model.joint_names) | set(model.joint_groups)
    presets = {"rotations": rotations} if "rotations" not in taken else {}
    model = dataclasses.replace(
        model,
        presets=presets,
        default_active=("rotations",) if inner_free and presets else None,
    )
    return Rig(model, tree, offsets, k_acc, up, scale)


def rig_q(
    rig: Rig,
    rotations: Mapping[int, np.ndarray],
    translations: Mapping[int, np.ndarray],
    n_frames: int,
) -> np.ndarray:
    """Configurations ``(n_frames, nq)``: joint ``i``'s rotation ``rotations[i]``
    ``(n_frames, 4)`` (x, y, z, w) and translation ``translations[i]`` ``(n_frames, 3)``
    [file units] where given, its rest values elsewhere."""
    model = rig.model
    q = np.tile(model.neutral(), (n_frames, 1))
    index = {n: i for i, n in enumerate(model.joint_names)}
    for i, joint in enumerate(rig.tree.names):
        rot = rotations.get(i)
        if rot is not None:
            for c, col in zip(("qx", "qy", "qz", "qw"), rot.T):
                q[:, index[f"{joint}_{c}"]] = col
        t = translations.get(i)
        if t is not None and f"{joint}_x" in index:
            t = t * rig.offsets[i]
            for c, col in zip("xyz", t.T):
                q[:, index[f"{joint}_{c}"]] = col
    return q
