"""One body's targets as another's (unfinished, not exported: on the G1 its hands are not
reached and its head frame sits at its pelvis; see the tracking report).

:class:`BodyMap` maps a target given on a source body part (a frame of the person's
skeleton, or of a tracking rig laid out like one) to the same body part of another body
(a humanoid robot), frame by frame and causally, so a :class:`~.tracker.Tracker` of the
robot can follow a person (teleoperation):

* positions are taken relative to the source's standing point (the rest pelvis over the
  rest soles), turned from the source's body axes (left, up, forward) into the target's,
  scaled by the ratio of their heights, and placed at the target's standing point;
* orientations keep their change from the source part's rest orientation, seen in the
  target's axes, applied to the target part's rest orientation.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..._validate import check_model
from ...errors import UnsupportedError
from ...ik.targets import Position
from ...model import Model
from ._skeleton import Skeleton, skeleton
from ._tracks import read_targets

__all__ = ["BodyMap"]


def _axes(sk: Skeleton) -> np.ndarray:
    """The body axes (left, up, forward) as the columns of a rotation."""
    return np.stack([sk.body.left, sk.body.up, sk.body.forward], axis=1)


def _standing_point(sk: Skeleton, T_rest: np.ndarray) -> np.ndarray:
    """The rest pelvis, lowered along the body's up to the lowest sole at rest."""
    p = T_rest[sk.index[sk.parts["pelvis"]], :3, 3].copy()
    soles = [i for ix in sk.soles.values() for i in ix]
    if soles:
        drop = min(float((T_rest[i, :3, 3] - p) @ sk.body.up) for i in soles)
        p = p + drop * sk.body.up
    return p


class BodyMap:
    """Maps targets of ``source``'s body parts to ``target``'s; see the module docstring.

    Args:
        source: the tracked body (a person's skeleton).
        target: the driven body (a robot or another skeleton).
        source_roles, target_roles: ``{role: frame}`` overriding the found body parts.

    Raises :class:`~kinetree.errors.UnsupportedError` for a body without pelvis, head
    and hips (or shoulders)."""

    def __init__(
        self,
        source: Model,
        target: Model,
        *,
        source_roles: Mapping[str, str] | None = None,
        target_roles: Mapping[str, str] | None = None,
    ) -> None:
        check_model(source)
        check_model(target, "target")
        self.source, self.target = source, target
        self.src, self.dst = skeleton(source, source_roles), skeleton(target, target_roles)
        Ts = source.fk_all(source.neutral())
        Td = target.fk_all(target.neutral())
        self.C = _axes(self.dst) @ _axes(self.src).T
        self.scale = self.dst.height / self.src.height
        self.origin_src = _standing_point(self.src, Ts)
        self.origin_dst = _standing_point(self.dst, Td)
        self.frame_of: dict[str, str] = {}
        self.rest: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for role, frame in self.src.parts.items():
            if role in self.dst.parts:
                out = self.dst.parts[role]
                self.frame_of[frame] = out
                self.rest[frame] = (
                    Ts[self.src.index[frame], :3, :3],
                    Td[self.dst.index[out], :3, :3],
                )
        self._known = set(source.frame_names)

    def __call__(self, targets: Mapping[str, Any]) -> dict[str, Any]:
        """``{target frame: 4x4 pose or Position}`` for one frame of ``{source frame:
        4x4 pose or 3-vector}``. Raises :class:`~kinetree.errors.UnsupportedError` for a
        source frame whose body part the target lacks."""
        tg = read_targets(self.source, targets, self._known)
        out: dict[str, Any] = {}
        for frame, t in tg.items():
            dst = self.frame_of.get(frame)
            if dst is None:
                raise UnsupportedError(
                    f"frame {frame!r} is not a body part both bodies have; mapped parts are: "
                    f"{', '.join(self.frame_of)}"
                )
            p = np.asarray(t.xyz) if isinstance(t, Position) else t[:3, 3]
            p_dst = self.origin_dst + self.scale * (self.C @ (p - self.origin_src))
            if isinstance(t, Position):
                out[dst] = Position(p_dst)
                continue
            R_src_rest, R_dst_rest = self.rest[frame]
            T = np.eye(4)
            T[:3, :3] = self.C @ (t[:3, :3] @ R_src_rest.T) @ self.C.T @ R_dst_rest
            T[:3, 3] = p_dst
            out[dst] = T
        return out
