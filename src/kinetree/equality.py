"""Closed kinematic chains: two frames of a tree held together (:class:`Equality`).

A kinematic tree cannot hold a loop (a four-bar linkage, Cassie's leg springs and rods, a
parallel gripper): a file that has one cuts it at one joint and declares the cut as an
equality constraint between the two frames that met there (MJCF's ``<equality><connect>``
and ``<weld>``). kinetree keeps each cut as an :class:`Equality` on
:attr:`kinetree.Model.equalities`; FK reads the tree as it is (it never enforces them), and
IK keeps the active ones as constraints of the highest priority
(:mod:`kinetree.ik.methods.closed_chains`).

Two kinds, as MuJoCo defines them:

- ``"connect"`` (a ball joint): the point ``point1`` [m] in ``frame1`` and the point
  ``point2`` [m] in ``frame2`` coincide in the world. Three rows.
- ``"weld"`` (a rigid joint): the points coincide, and the frames keep the relative turn
  ``rotation``: ``R_world_frame1 @ rotation == R_world_frame2``. Six rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import numpy as np
from numpy.typing import ArrayLike

from .errors import InvalidValueError

if TYPE_CHECKING:
    from .model import Model

__all__ = ["EQUALITY_KINDS", "Equality", "violations"]

#: The kinds of :class:`Equality`.
EQUALITY_KINDS = ("connect", "weld")


@dataclass(frozen=True, eq=False)
class Equality:
    """One closed chain: ``frame1`` and ``frame2`` held together (see the module doc).

    Attributes:
        kind: ``"connect"`` (the two points coincide) or ``"weld"`` (they coincide and
            the frames keep their relative turn).
        frame1, frame2: frame names of the model (``frame2`` may be the root, the world).
        point1: the point in ``frame1`` [m] (3 values).
        point2: the point in ``frame2`` [m] (3 values).
        rotation: for a weld, ``R_frame1_frame2`` (3x3), the turn of ``frame2`` seen from
            ``frame1`` that the weld keeps; the identity for a connect (unused).
        active: whether IK keeps it (MuJoCo's ``active``); an inactive one is recorded
            and ignored.
        name: its name in the file ("" when it had none).
    """

    kind: Literal["connect", "weld"]
    frame1: str
    frame2: str
    point1: np.ndarray = field(default_factory=lambda: np.zeros(3))
    point2: np.ndarray = field(default_factory=lambda: np.zeros(3))
    rotation: np.ndarray = field(default_factory=lambda: np.eye(3))
    active: bool = True
    name: str = ""

    def __post_init__(self) -> None:
        if self.kind not in EQUALITY_KINDS:
            raise InvalidValueError(
                f"equality kind must be one of {', '.join(EQUALITY_KINDS)}, got {self.kind!r}"
            )
        for attr, shape in (("point1", (3,)), ("point2", (3,)), ("rotation", (3, 3))):
            a = np.array(getattr(self, attr), dtype=np.float64)
            if a.shape != shape or not np.all(np.isfinite(a)):
                raise InvalidValueError(
                    f"equality {self.label}: {attr} must be {shape} finite numbers, got "
                    f"{getattr(self, attr)!r}"
                )
            a.setflags(write=False)
            object.__setattr__(self, attr, a)

    @property
    def label(self) -> str:
        """How messages name it: its name, else ``kind frame1-frame2``."""
        return repr(self.name) if self.name else f"{self.kind} {self.frame1}-{self.frame2}"

    @property
    def rows(self) -> int:
        """Number of scalar constraints: 3 for a connect, 6 for a weld."""
        return 3 if self.kind == "connect" else 6

    def __repr__(self) -> str:
        return (
            f"Equality({self.kind!r}, {self.frame1!r}, {self.frame2!r}, "
            f"point1={self.point1.tolist()}, point2={self.point2.tolist()}"
            f"{'' if self.active else ', active=False'}"
            f"{f', name={self.name!r}' if self.name else ''})"
        )


def violations(model: Model, q: ArrayLike) -> np.ndarray:
    """``(n, 2)``: for each of ``model.equalities`` (inactive ones too), its gap [m]
    (the distance between its two points) and, for a weld, its turn [rad] (the angle of
    ``R1 @ rotation @ R2^T``; 0 for a connect) at the configuration ``q`` (nq)."""
    out = np.zeros((len(model.equalities), 2))
    for i, eq in enumerate(model.equalities):
        T1 = model.fk(q, eq.frame1)
        T2 = model.fk(q, eq.frame2)
        p1 = T1[:3, :3] @ eq.point1 + T1[:3, 3]
        p2 = T2[:3, :3] @ eq.point2 + T2[:3, 3]
        out[i, 0] = np.linalg.norm(p1 - p2)
        if eq.kind == "weld":
            E = T1[:3, :3] @ eq.rotation @ T2[:3, :3].T
            s = 0.5 * np.linalg.norm([E[2, 1] - E[1, 2], E[0, 2] - E[2, 0], E[1, 0] - E[0, 1]])
            out[i, 1] = np.arctan2(s, (np.trace(E) - 1.0) / 2.0)
    return out
