"""Any model's motion as BVH: robots, MJCF humanoids, models with quaternion joints.

:func:`write_bvh` writes a clip read from BVH with its own hierarchy and channels. A
motion of any other model (a free-base humanoid from MJCF, a URDF arm, a retargeted
robot) has no such layout, and its joints need not be BVH's: a ball or free joint is a
quaternion, a URDF joint origin carries a fixed rotation BVH offsets cannot hold. This
module writes such a motion by what BVH *can* hold: every visible frame becomes a BVH
joint whose pose relative to its parent joint is measured by FK, frame by frame:

- its rotation relative to the parent joint as three Euler channels (``order``,
  intrinsic, BVH's usual ``Zrotation Xrotation Yrotation`` by default), unwrapped from
  frame to frame so the curves have no 360 degree jumps;
- its translation as the OFFSET where it never changes, else as position channels
  (listed first, OFFSET 0) where it does (prismatic and free joints, the root); with
  OFFSET 0 both readings of :func:`~kinetree.io.bvh.read_bvh`'s ``positions=`` agree.

Reading the file back with :func:`~kinetree.io.bvh.read_bvh` gives every frame's world
pose again (to the 15 significant digits written). Lengths stay in the model's unit
(m); angles are written in degrees.
"""

from __future__ import annotations

import os
import re

import numpy as np
from numpy.typing import ArrayLike

from .._validate import as_array, check_model, check_positive
from ..errors import InvalidValueError, ShapeError
from ..io._files import as_path, write_text
from ..model import Model
from ..spatial import decompose, decompose_all, pick_nearest

__all__ = ["motion_to_bvh", "write_motion_bvh"]

_AXES = {"x": (1.0, 0.0, 0.0), "y": (0.0, 1.0, 0.0), "z": (0.0, 0.0, 1.0)}
_FORMAT = "%.15g"
#: A translation that moves by less than this over the motion [model units] is an OFFSET.
_STILL = 1e-12


def _bvh_names(names: list[str]) -> list[str]:
    """Frame names as BVH joint names: whitespace and braces replaced, kept unique."""
    out: list[str] = []
    seen: set[str] = set()
    for n in names:
        base = re.sub(r"[\s{}]+", "_", n).strip("_") or "joint"
        name, k = base, 1
        while name in seen:
            k += 1
            name = f"{base}_{k}"
        seen.add(name)
        out.append(name)
    return out


def motion_to_bvh(
    model: Model, q: ArrayLike, frame_time: float = 1.0 / 30.0, order: str = "zxy"
) -> str:
    """The BVH text of configurations ``q`` ``(n_frames, nq)`` of ``model``.

    ``frame_time`` [s] between frames; ``order``: the three rotation channels'
    axes, applied in turn (intrinsic). See the module docstring for the layout.
    """
    check_model(model)
    ft = check_positive(frame_time, "frame_time")
    if not isinstance(order, str) or sorted(order.lower()) != ["x", "y", "z"]:
        raise InvalidValueError(
            f"order must name x, y and z once each in the order applied, such as 'zxy' "
            f"(BVH's usual) or 'xyz'; got {order!r}"
        )
    order = order.lower()
    Q = as_array(q, "q", (model.nq,))
    if Q.ndim == 1:
        Q = Q[None, :]
    if Q.ndim != 2 or Q.shape[0] == 0:
        raise ShapeError(f"q must have shape (n_frames, {model.nq}) with n_frames >= 1")
    frames = list(model.frame_names)
    node = [model.frame_index(f) for f in frames]
    visible = {k: i for i, k in enumerate(node)}
    parent = []
    for k in node:
        p = int(model.parent[k])
        while p >= 0 and p not in visible:
            p = int(model.parent[p])
        parent.append(visible[p] if p >= 0 else -1)
    W = model.fk_all(Q)  # (F, n_frames_of_model, 4, 4), in frame_names order
    local = np.empty_like(W)
    for i, p in enumerate(parent):
        if p < 0:
            local[:, i] = W[:, i]
        else:
            Rp = W[:, p, :3, :3]
            local[:, i, :3, :3] = np.swapaxes(Rp, -1, -2) @ W[:, i, :3, :3]
            d = W[:, i, :3, 3] - W[:, p, :3, 3]
            local[:, i, :3, 3] = np.einsum("fji,fj->fi", Rp, d)
    axes = np.array([_AXES[c] for c in order])
    channels_rot = [f"{c.upper()}rotation" for c in order]
    names = _bvh_names(frames)
    columns: list[np.ndarray] = []
    joint_lines: list[tuple[int, str, np.ndarray, list[str]]] = []
    for i in range(len(frames)):
        t = local[:, i, :3, 3]
        moving = parent[i] < 0 or float(np.ptp(t, axis=0).max()) > _STILL
        offset = np.zeros(3) if moving else t[0]
        chans = (["Xposition", "Yposition", "Zposition"] if moving else []) + channels_rot
        if moving:
            columns.extend(t.T)
        angles = _unwrapped_angles(local[:, i, :3, :3], axes)
        columns.extend(np.degrees(angles).T)
        joint_lines.append((i, names[i], offset, chans))
    text = _hierarchy(joint_lines, parent)
    vals = np.stack(columns, axis=1)
    row = " ".join([_FORMAT] * vals.shape[1])
    motion = [row % tuple(r) for r in vals.tolist()]
    return (
        "\n".join([*text, "MOTION", f"Frames: {Q.shape[0]}", f"Frame Time: {ft!r}", *motion]) + "\n"
    )


def _unwrapped_angles(R: np.ndarray, axes: np.ndarray) -> np.ndarray:
    """Euler angles ``(F, 3)`` [rad] of rotations ``R`` (F, 3, 3), each frame's branch and
    multiple of 2 pi chosen nearest the previous frame's angles."""
    out = np.empty((R.shape[0], 3))
    both = decompose_all(R, axes)  # (F, 2, 3)
    out[0] = decompose(R[0], axes)
    for f in range(1, R.shape[0]):
        out[f] = pick_nearest(both[f], out[f - 1])
    return out


def _hierarchy(
    joints: list[tuple[int, str, np.ndarray, list[str]]], parent: list[int]
) -> list[str]:
    kids: list[list[int]] = [[] for _ in joints]
    roots: list[int] = []
    for i, p in enumerate(parent):
        (roots if p < 0 else kids[p]).append(i)
    if len(roots) != 1:  # pragma: no cover - a model has one root frame
        raise InvalidValueError(f"a BVH file has one root; the model's frames have {len(roots)}")
    out = ["HIERARCHY"]
    todo: list[tuple[int, int]] = [(roots[0], 0)]
    while todo:
        i, depth = todo.pop()
        ind = "\t" * depth
        if i < 0:
            out.append(f"{ind}}}")
            continue
        _, name, offset, chans = joints[i]
        out.append(f"{ind}{'ROOT' if parent[i] < 0 else 'JOINT'} {name}")
        out.append(f"{ind}{{")
        out.append(f"{ind}\tOFFSET {' '.join(_FORMAT % v for v in offset)}")
        out.append(f"{ind}\tCHANNELS {len(chans)} {' '.join(chans)}")
        todo.append((-1, depth))
        todo.extend((c, depth + 1) for c in reversed(kids[i]))
    return out


def write_motion_bvh(
    path: str | os.PathLike[str],
    model: Model,
    q: ArrayLike,
    frame_time: float = 1.0 / 30.0,
    order: str = "zxy",
) -> None:
    """Write :func:`motion_to_bvh` of ``model`` at ``q`` (n_frames, nq) to ``path``; a
    missing folder or a failed write raises :class:`~kinetree.errors.FileFormatError`."""
    p = as_path(path, "write_motion_bvh needs the path of the .bvh file (str or os.PathLike)")
    write_text(p, motion_to_bvh(model, q, frame_time, order), "BVH")
