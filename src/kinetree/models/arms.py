"""Small arms from the seed documents, with lengths as parameters.

The seeds give these arms symbolically; the default lengths here are our choice
(round numbers in metres) and every factory takes its own.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..builder import ModelBuilder
from ..model import Model
from ..spatial import translation

__all__ = [
    "planar_2r",
    "planar_3r",
    "planar_nr",
    "six_axis",
    "three_axis",
    "zxx_arm",
]

PI = float(np.pi)


def planar_nr(lengths: Sequence[float], name: str | None = None) -> Model:
    """Planar arm in the xy-plane: revolute joints about z, links along x.

    Tip position: ``x = sum_i L_i cos(t_1 + ... + t_i)``, ``y = sum_i L_i sin(...)``
    (seed 003, 2-DoF section). Limits [-pi, pi].
    """
    b = ModelBuilder(name or f"planar{len(lengths)}r", root="base")
    prev = "base"
    for i, _ in enumerate(lengths, start=1):
        origin = None if i == 1 else translation([lengths[i - 2], 0.0, 0.0])
        b.add_joint(f"joint{i}", prev, f"link{i}", axis="z", origin=origin, limits=(-PI, PI))
        prev = f"link{i}"
    b.add_frame("tip", prev, origin=translation([lengths[-1], 0.0, 0.0]))
    b.set_end_effectors("tip")
    b.metadata["lengths"] = tuple(float(x) for x in lengths)
    return b.build()


def planar_2r(l1: float = 1.0, l2: float = 0.8) -> Model:
    """Seed 003's 2-DoF planar arm: ``x = L1 cos t1 + L2 cos(t1 + t2)``, same with sin for y."""
    return planar_nr([l1, l2], name="planar2r")


def planar_3r(l1: float = 1.0, l2: float = 0.8, l3: float = 0.5) -> Model:
    """Planar 3R arm (the 2R arm plus a wrist link)."""
    return planar_nr([l1, l2, l3], name="planar3r")


def _axis_chain(name: str, axes: Sequence[str], lengths: Sequence[float]) -> Model:
    """Seed 001's n-axis arm: ``p = R_a1(t1) L(l1) R_a2(t2) L(l2) ... (0,0,0,1)``, links along z."""
    b = ModelBuilder(name, root="base")
    prev = "base"
    for i, ax in enumerate(axes, start=1):
        origin = None if i == 1 else translation([0.0, 0.0, lengths[i - 2]])
        b.add_joint(f"joint{i}", prev, f"link{i}", axis=ax, origin=origin, limits=(-PI, PI))
        prev = f"link{i}"
    b.add_frame("tip", prev, origin=translation([0.0, 0.0, lengths[-1]]))
    b.set_end_effectors("tip")
    return b.build()


def three_axis(l1: float = 0.4, l2: float = 0.3, l3: float = 0.2) -> Model:
    """Seed 001's three-axis arm: rotations about x, y, x with links ``(0, 0, l_i)``.

    ``p4 = Rx(t1) L(l1) Ry(t2) L(l2) Rx(t3) L(l3) (0, 0, 0, 1)``.
    """
    return _axis_chain("three_axis", ["x", "y", "x"], [l1, l2, l3])


def six_axis(lengths: Sequence[float] = (0.3, 0.3, 0.25, 0.1, 0.1, 0.08)) -> Model:
    """Seed 001's n-axis formula with six joints: axes z, y, y, z, y, z, links along z."""
    return _axis_chain("six_axis", ["z", "y", "y", "z", "y", "z"], lengths)


def zxx_arm(
    L1: float = 0.10,
    L2: float = 0.05,
    L3: float = 0.20,
    L4: float = 0.15,
    base: Sequence[float] = (0.0, 0.0, 0.0),
) -> Model:
    """The 3-DoF manipulator of seed 003: z, then x, then x rotations.

    ``p = T(x_r, y_r, z_r) Rz(t1) Tz(L1) Tx(L2) Rx(t2) Ty(L3) Rx(t3) (0, L4, 0, 1)``, so

        x_e = x_r + L2 cos t1 - L3 sin t1 cos t2 - L4 sin t1 cos(t2 + t3)
        y_e = y_r + L2 sin t1 + L3 cos t1 cos t2 + L4 cos t1 cos(t2 + t3)
        z_e = z_r + L1 + L3 sin t2 + L4 sin(t2 + t3)

    Limits: t1, t2 in [-pi, pi] and, as the seed imposes, 0 <= t3 <= pi.
    """
    b = ModelBuilder("zxx_arm", root="base")
    b.add_joint("joint1", "base", "link1", axis="z", origin=translation(base), limits=(-PI, PI))
    b.add_joint(
        "joint2", "link1", "link2", axis="x", origin=translation([L2, 0.0, L1]), limits=(-PI, PI)
    )
    b.add_joint(
        "joint3", "link2", "link3", axis="x", origin=translation([0.0, L3, 0.0]), limits=(0.0, PI)
    )
    b.add_frame("tip", "link3", origin=translation([0.0, L4, 0.0]))
    b.set_end_effectors("tip")
    b.metadata["zxx_arm"] = {"L": (L1, L2, L3, L4), "base": tuple(float(v) for v in base)}
    return b.build()
