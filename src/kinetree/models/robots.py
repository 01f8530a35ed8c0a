"""Industrial arms from their published kinematic parameters and joint limits."""

from __future__ import annotations

from importlib import resources

import numpy as np

from ..io.dh import DHRow, from_dh
from ..model import Model

__all__ = ["iiwa14", "panda", "panda_urdf", "ur3", "ur5", "ur10"]

PI = float(np.pi)
HALF = PI / 2


def panda() -> Model:
    """Franka Emika Panda, modified (Craig) DH, flange 0.107 m after joint 7.

    Parameters and limits: Franka Control Interface documentation, "Robot and
    interface specifications" (DH table and joint position limits q_min/q_max).
    """
    lim = [
        (-2.8973, 2.8973), (-1.7628, 1.7628), (-2.8973, 2.8973), (-3.0718, -0.0698),
        (-2.8973, 2.8973), (-0.0175, 3.7525), (-2.8973, 2.8973),
    ]  # fmt: skip
    rows = [
        DHRow(a=0.0, alpha=0.0, d=0.333, limits=lim[0]),
        DHRow(a=0.0, alpha=-HALF, d=0.0, limits=lim[1]),
        DHRow(a=0.0, alpha=HALF, d=0.316, limits=lim[2]),
        DHRow(a=0.0825, alpha=HALF, d=0.0, limits=lim[3]),
        DHRow(a=-0.0825, alpha=-HALF, d=0.384, limits=lim[4]),
        DHRow(a=0.0, alpha=HALF, d=0.0, limits=lim[5]),
        DHRow(a=0.088, alpha=HALF, d=0.0, limits=lim[6]),
    ]
    flange = np.eye(4)
    flange[2, 3] = 0.107
    m = from_dh(rows, "modified", name="panda", tool=flange)
    return m.with_options(q_neutral=[0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])


def panda_urdf() -> Model:
    """The Panda from the URDF shipped with kinetree (frames ``panda_link0..8``).

    Joint origins follow franka_description's panda arm (the same published
    kinematics as :func:`panda`); meshes are referenced but not shipped.
    """
    from ..io.urdf import load_urdf  # imported here: the other arms need no URDF parser

    path = resources.files("kinetree.models") / "data" / "panda.urdf"
    with resources.as_file(path) as p:
        m = load_urdf(p, name="panda_urdf", meshes=False)  # the meshes are not shipped
    return m.with_options(
        end_effectors=["panda_link8"],
        q_neutral=[0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785],
    )


def _ur(name: str, d1: float, a2: float, a3: float, d4: float, d5: float, d6: float) -> Model:
    lim = (-2 * PI, 2 * PI)
    rows = [
        DHRow(a=0.0, alpha=HALF, d=d1, limits=lim),
        DHRow(a=a2, alpha=0.0, d=0.0, limits=lim),
        DHRow(a=a3, alpha=0.0, d=0.0, limits=lim),
        DHRow(a=0.0, alpha=HALF, d=d4, limits=lim),
        DHRow(a=0.0, alpha=-HALF, d=d5, limits=lim),
        DHRow(a=0.0, alpha=0.0, d=d6, limits=lim),
    ]
    ur_dh = {"d1": d1, "a2": a2, "a3": a3, "d4": d4, "d5": d5, "d6": d6}
    m = from_dh(rows, "standard", name=name, metadata={"ur_dh": ur_dh})
    return m.with_options(q_neutral=[0.0, -HALF, HALF, -HALF, -HALF, 0.0])


def ur5() -> Model:
    """Universal Robots UR5, standard DH; every joint +-360 degrees.

    Parameters: Universal Robots, "DH parameters for calculations of kinematics
    and dynamics" (UR5: d1=0.089159, a2=-0.425, a3=-0.39225, d4=0.10915,
    d5=0.09465, d6=0.0823 m).
    """
    return _ur("ur5", 0.089159, -0.425, -0.39225, 0.10915, 0.09465, 0.0823)


def ur3() -> Model:
    """Universal Robots UR3, standard DH (same source as :func:`ur5`)."""
    return _ur("ur3", 0.1519, -0.24365, -0.21325, 0.11235, 0.08535, 0.0819)


def ur10() -> Model:
    """Universal Robots UR10, standard DH (same source as :func:`ur5`)."""
    return _ur("ur10", 0.1273, -0.612, -0.5723, 0.163941, 0.1157, 0.0922)


def iiwa14() -> Model:
    """KUKA LBR iiwa 14 R820, standard DH, media-flange-less flange at 0.126 m.

    Link lengths 0.36 / 0.42 / 0.40 / 0.126 m and axis ranges +-170, +-120,
    +-170, +-120, +-170, +-120, +-175 degrees from KUKA's LBR iiwa
    specification; DH frame assignment with alternating +-90 degree twists as
    commonly published for the LBR family.
    """
    deg = PI / 180.0
    rng = [170, 120, 170, 120, 170, 120, 175]
    alphas = [-HALF, HALF, HALF, -HALF, -HALF, HALF, 0.0]
    ds = [0.36, 0.0, 0.42, 0.0, 0.40, 0.0, 0.126]
    rows = [
        DHRow(a=0.0, alpha=al, d=d, limits=(-r * deg, r * deg)) for al, d, r in zip(alphas, ds, rng)
    ]
    m = from_dh(rows, "standard", name="iiwa14")
    return m.with_options(q_neutral=[0.0, 0.5, 0.0, -1.2, 0.0, 0.8, 0.0])
