"""A quadruped: four legs of three DoF (hip abduction, hip flexion, knee).

Dimensions and limits follow Unitree Go1's published description (hip offsets
+-0.1881 m forward/back and +-0.04675 m sideways, thigh offset 0.08 m, thigh and
calf 0.213 m; hip +-0.863 rad, thigh -0.686..4.501 rad, calf -2.818..-0.888 rad).
z-up, trunk 0.30 m above the ground, facing +x.
"""

from __future__ import annotations

from ..builder import ModelBuilder
from ..model import Model
from ..spatial import translation

__all__ = ["quadruped"]


def quadruped() -> Model:
    """12-DoF quadruped; feet frames ``FR_foot``, ``FL_foot``, ``RR_foot``, ``RL_foot``."""
    b = ModelBuilder("quadruped", root="trunk", root_origin=translation([0.0, 0.0, 0.30]))
    neutral = {}
    for leg, sx, sy in (("FR", 1, -1), ("FL", 1, 1), ("RR", -1, -1), ("RL", -1, 1)):
        b.add_joint(
            f"{leg}_hip",
            "trunk",
            f"{leg}_hip",
            axis="x",
            origin=translation([0.1881 * sx, 0.04675 * sy, 0.0]),
            limits=(-0.863, 0.863),
        )
        b.add_joint(
            f"{leg}_thigh",
            f"{leg}_hip",
            f"{leg}_thigh",
            axis="y",
            origin=translation([0.0, 0.08 * sy, 0.0]),
            limits=(-0.686, 4.501),
        )
        b.add_joint(
            f"{leg}_calf",
            f"{leg}_thigh",
            f"{leg}_calf",
            axis="y",
            origin=translation([0.0, 0.0, -0.213]),
            limits=(-2.818, -0.888),
        )
        b.add_frame(f"{leg}_foot", f"{leg}_calf", origin=translation([0.0, 0.0, -0.213]))
        b.add_preset(f"{leg}_leg", [f"{leg}_hip", f"{leg}_thigh", f"{leg}_calf"])
        neutral[f"{leg}_thigh"] = 0.8
        neutral[f"{leg}_calf"] = -1.5
    b.set_neutral(neutral)
    b.set_end_effectors("FR_foot", "FL_foot", "RR_foot", "RL_foot")
    return b.build()
