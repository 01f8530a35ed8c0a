"""Targets given relative to a base frame: ``model.ik(T, "tool0", base="base_link")``.

TRAC-IK and MoveIt solve a chain from a base link to a tip link, and their targets are
poses of the tip in the base link's frame. kinetree solves in the world frame; a target
relative to ``base`` becomes a world target through the base's pose at ``q0``::

    T_world_target = T_world_base(q0) @ T_base_target

That is exact only while the solve does not move the base: then ``T_world_base`` is the
same at ``q0`` and at the solution. So, with ``base=``:

* without ``active=``, the joints that move a target frame and not the base move (the
  chain from ``base`` to ``frame``, as TRAC-IK's chain; within the model's
  ``default_active`` joints where it has them);
* with ``active=``, an active joint that moves the base is refused: the target would be
  a relative pose between two moving frames, which the solver does not take.

Per-axis masks and weights name world axes; with a base turned against the world they
would name other axes than the caller's, so they must then be uniform.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from .._validate import as_array
from ..errors import InvalidValueError, UnsupportedError
from ..model import JointType, Model
from .options import IKOptions
from .targets import Direction, Orientation, Pose, Position

__all__ = ["coordinates_moving", "relative_to_base"]


def coordinates_moving(model: Model, frame: str) -> np.ndarray:
    """Boolean mask over ``q``: the coordinates whose change moves ``frame`` in the world
    (its ancestors' joints; a mimic joint's source; a coupled coordinate's source)."""
    mask = np.zeros(model.nq, dtype=bool)
    for k in model.ancestors(model.frame_index(frame)):
        if not model.moves(int(k)):
            continue
        qi = int(model.q_index[k])
        width = 4 if model.joint_type[k] == JointType.BALL else 1
        mask[qi : qi + width] = True
    for joint, source, _, _ in model.couplings:
        if mask[joint] and source >= 0:
            mask[source] = True
    return mask


def _uniform(x: Any) -> bool:
    if x is None:
        return True
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        return True  # the encoder reports it
    return bool(a.size == 0 or np.all(a == a.reshape(-1)[0]))


def _in_world(target: Any, T_world_base: np.ndarray, base: str) -> Any:
    """One target moved from the ``base`` frame into the world."""
    R = T_world_base[..., :3, :3]
    p = T_world_base[..., :3, 3]
    turned = not np.allclose(R, np.eye(3), rtol=0.0, atol=1e-12)

    def refuse_axes(what: str) -> None:
        raise UnsupportedError(
            f"{what} name world axes, and base {base!r} is turned against the world: "
            "give them uniform (the same for x, y, z) or the target in world coordinates"
        )

    if isinstance(target, (np.ndarray, list, tuple)):
        T = as_array(target, "target pose", (4, 4), finite=False)
        return T_world_base @ T
    if isinstance(target, Pose):
        if turned and not all(
            _uniform(x)
            for x in (
                target.position_mask,
                target.orientation_mask,
                target.position_weight,
                target.orientation_weight,
            )
        ):
            refuse_axes("per-axis masks and weights of a Pose")
        T = as_array(target.T, "target pose", (4, 4), finite=False)
        return dataclasses.replace(target, T=T_world_base @ T)
    if isinstance(target, Position):
        if turned and not (_uniform(target.mask) and _uniform(target.weight)):
            refuse_axes("per-axis masks and weights of a Position")
        xyz = as_array(target.xyz, "target position", (3,))
        return dataclasses.replace(target, xyz=np.einsum("...ij,...j->...i", R, xyz) + p)
    if isinstance(target, Orientation):
        if turned and not (_uniform(target.mask) and _uniform(target.weight)):
            refuse_axes("per-axis masks and weights of an Orientation")
        return dataclasses.replace(target, R=R @ as_array(target.R, "target orientation", (3, 3)))
    if isinstance(target, Direction):
        d = as_array(target.direction, "target direction", (3,))
        return dataclasses.replace(target, direction=np.einsum("...ij,...j->...i", R, d))
    return target  # not a target: the encoder names the valid kinds


def _refuse_carried_base(model: Model, frames: list[str], base: str) -> None:
    """Raise when ``base`` hangs below one of the moved ``frames`` (or is one): the joints
    between them move the base and not the frame, so the target would be given in a
    frame the solve moves, which ``base=`` does not take."""
    node_base = model.frame_index(base)
    for f in frames:
        node = model.frame_index(f)
        if node in model.ancestors(node_base).tolist():
            above = [
                model.node_names[int(k)]
                for k in model.ancestors(node)
                if int(k) != node and not model.hidden[int(k)]
            ]
            where = "is" if node == node_base else f"hangs below {f!r} in the tree"
            raise UnsupportedError(
                f"base {base!r} {where}: the joints between them move the base and not "
                f"{f!r}, so the target would be a pose in a frame that the solve moves, which "
                "base= does not take (it moves the joints from the base out to the frame). "
                f"base= must be a frame that {f!r} does not carry: one of its ancestors "
                f"({', '.join(above) or 'none'}) or a frame on another branch"
            )


def relative_to_base(
    model: Model, target: Any, frame: str | None, base: Any, q0: Any, opts: IKOptions
) -> tuple[Any, str | None, IKOptions]:
    """``(target, frame, opts)`` with every target moved from ``base`` into the world and
    ``opts.active`` set to the joints between ``base`` and the targets' frames (see the
    module docstring). Raises for an unknown base, an active joint that moves it, or
    targets that nothing moves relative to it."""
    if not isinstance(base, str):
        raise InvalidValueError(f"base must be a frame name, got {base!r}")
    model.frame_index(base)  # an unknown base lists the frames
    if isinstance(target, dict):
        frames = list(target)
    else:
        if frame is not None and not isinstance(frame, str):
            raise InvalidValueError(f"frame must be a frame name, got {frame!r}")
        frames = [frame if frame is not None else model.end_effectors[0]]
    for f in frames:
        model.frame_index(f)
    moves_base = coordinates_moving(model, base)
    if opts.active is not None:
        both = model.active_mask(opts.active) & moves_base
        if np.any(both):
            names = ", ".join(model.joint_names[i] for i in np.nonzero(both)[0])
            raise UnsupportedError(
                f"base {base!r} moves with the active joints {names}: a target relative to "
                "a base that the solve moves is a relative pose between two moving frames, "
                "which the solver does not take; leave those joints out of active= (without "
                "active=, base= moves only the joints between the base and the frame)"
            )
    else:
        moves_frames = np.zeros(model.nq, dtype=bool)
        for f in frames:
            moves_frames |= coordinates_moving(model, f)
        chain = moves_frames & ~moves_base & model.active_mask(None)
        if not np.any(chain):
            _refuse_carried_base(model, frames, base)
            raise InvalidValueError(
                f"no joint moves {', '.join(map(repr, frames))} relative to base {base!r}; "
                f"frames are: {', '.join(model.frame_names)}"
            )
        chain_names = tuple(model.joint_names[i] for i in np.nonzero(chain)[0])
        opts = dataclasses.replace(opts, active=chain_names)
    q = model.q_neutral if q0 is None else as_array(q0, "q0", (model.nq,))
    T_world_base = model.fk(q, base)
    if isinstance(target, dict):
        target = {f: _in_world(t, T_world_base, base) for f, t in target.items()}
    else:
        target = _in_world(target, T_world_base, base)
    return target, frame, opts
