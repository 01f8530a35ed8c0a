"""Meshes for the built-in robots, from robot description packages installed beside kinetree.

The built-in Panda and UR arms are built from published DH tables, so they carry no
geometry. When a description package with the same robot is installed
(``pip install 'kinetree[meshes]'`` installs example-robot-data), :func:`with_meshes`
returns the model with that package's visual and collision shapes attached to its
frames; otherwise the model is returned as it is, with a note saying what to install.

How a URDF link is attached to a built-in frame, without trusting names: both models
are put in the same random configurations (the description's joints listed in the
built-in's joint order), the description's poses are taken relative to its *anchor*
link (the one that coincides with the built-in's base), and a link goes to the first
built-in frame whose relative pose to it stays constant (to 1e-6 m) over all samples.
That constant pose becomes the shape's origin, so a link whose kinematics does not
match (another zero position, a flipped axis) is left out with a warning instead of
being drawn in the wrong place.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._warnings import warn_outside
from ..geometry import Geometry, GeometryWarning, Mesh
from ..model import Model

__all__ = ["DESCRIPTIONS", "Description", "description_file", "has_meshes", "with_meshes"]

#: Samples and tolerance of the attachment test.
_SAMPLES = 8
_TOLERANCE = 1e-6  # [m] and [rad-ish] (entries of the 4x4 relative pose)


@dataclass(frozen=True)
class Description:
    """Where a built-in robot's meshes are.

    Attributes:
        distribution: the PyPI distribution that installs the package.
        file: the URDF, relative to example-robot-data's robots folder.
        anchor: the URDF link at the built-in model's base frame.
        joints: the URDF joints, in the order of the built-in model's ``q``.
    """

    distribution: str
    file: str
    anchor: str
    joints: tuple[str, ...]


_PANDA = Description(
    "example-robot-data",
    "panda_description/urdf/panda.urdf",
    "panda_link0",
    tuple(f"panda_joint{i}" for i in range(1, 8)),
)
_UR_JOINTS = (
    "shoulder_pan_joint",
    "shoulder_lift_joint",
    "elbow_joint",
    "wrist_1_joint",
    "wrist_2_joint",
    "wrist_3_joint",
)

#: Built-in model name -> where its meshes are (models absent here have none).
DESCRIPTIONS: dict[str, Description] = {
    "panda": _PANDA,
    "panda_urdf": _PANDA,
    # The UR URDFs' ``base`` link is the DH base frame (base_link is turned by pi).
    **{
        name: Description(
            "example-robot-data", f"ur_description/urdf/{name}_robot.urdf", "base", _UR_JOINTS
        )
        for name in ("ur3", "ur5", "ur10")
    },
}


def description_file(name: str) -> Path | None:
    """The installed URDF with the meshes of built-in model ``name``; None when the model
    has no known description or its package is not installed (found by
    :func:`kinetree.io.robot_packages.example_robot_data`, the one finder)."""
    from ..io.robot_packages import example_robot_data

    desc = DESCRIPTIONS.get(name)
    robots = example_robot_data() if desc is not None else None
    if desc is None or robots is None:
        return None
    path = robots / desc.file
    return path if path.is_file() else None


def has_meshes(model: Model) -> bool:
    """Whether ``model`` has a visual mesh with triangles (or any visual primitive)."""
    return any(
        g.kind == "visual" and (not isinstance(g, Mesh) or g.vertices is not None)
        for shapes in model.geometry.values()
        for g in shapes
    )


@functools.lru_cache(maxsize=8)
def _load_description(path: Path) -> Model:
    from ..io.urdf import load_urdf

    # yourdfpy logs about encodings and unresolved tags; the model loads regardless.
    logger = logging.getLogger("yourdfpy")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        return load_urdf(path)
    finally:
        logger.setLevel(level)


def _attach(model: Model, source: Model, desc: Description) -> dict[str, tuple[Geometry, ...]]:
    """The source's shapes as shapes of ``model``'s frames (see the module docstring)."""
    rng = np.random.default_rng(0)
    Q = model.random_configuration(_SAMPLES, rng)
    Qs = np.tile(source.neutral(), (_SAMPLES, 1))
    for k, joint in enumerate(desc.joints):
        Qs[:, source.q_slice(joint)] = Q[:, k : k + 1]
    H = model.fk_all(Q)  # (S, n_frames, 4, 4)
    U = source.fk_all(Qs)
    anchor = source.frame_names.index(desc.anchor)
    U = np.linalg.inv(U[:, anchor])[:, None] @ U
    out: dict[str, list[Geometry]] = {}
    for j, link in enumerate(source.frame_names):
        shapes = source.geometry.get(link)
        if not shapes:
            continue
        D = np.linalg.inv(H) @ U[:, j : j + 1]  # (S, n_frames, 4, 4)
        spread = np.max(np.abs(D - D[:1]), axis=(0, 2, 3))
        i = int(np.argmin(spread))
        if spread[i] > _TOLERANCE:
            warn_outside(
                f"{model.name}: link {link!r} of {desc.file} follows no frame of the model "
                f"(closest {model.frame_names[i]!r}, off by {spread[i]:.3g}); its shapes "
                "are left out",
                GeometryWarning,
            )
            continue
        offset = D[0, i]
        frame = model.frame_names[i]
        for g in shapes:
            moved = dataclasses.replace(g, origin=offset @ g.origin)
            out.setdefault(frame, []).append(moved)
    return {k: tuple(v) for k, v in out.items()}


def with_meshes(model: Model) -> tuple[Model, str | None]:
    """``model`` with the meshes of its description package, and a note when it has none.

    A model that already has visual shapes (a URDF with its meshes) comes back as it
    is, with no note. A built-in robot whose description package is installed comes
    back with that package's shapes on its frames. Any other model comes back as it is,
    with a note for a person: what to install, or that it is drawn as a skeleton.
    """
    if has_meshes(model):
        return model, None
    desc = DESCRIPTIONS.get(model.name)
    if desc is None:
        return model, f"{model.name} has no meshes: drawn as a skeleton"
    path = description_file(model.name)
    if path is None:
        return model, (
            f"{model.name}: drawn as a skeleton; pip install 'kinetree[meshes]' "
            f"({desc.distribution}) for its meshes"
        )
    source = _load_description(path)
    if len(desc.joints) != model.nq or desc.anchor not in source.frame_names:
        return model, f"{model.name}: {path.name} does not fit the model; drawn as a skeleton"
    geometry = _attach(model, source, desc)
    if not geometry:
        return model, f"{model.name}: no link of {path.name} fits the model; drawn as a skeleton"
    return dataclasses.replace(model, geometry=geometry), None
