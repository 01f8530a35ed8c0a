"""A human skeleton for reaching and full-body IK, standing in a neutral pose.

World is z-up, the figure faces +x, its left is +y, units metres. The root is
the ``pelvis`` (fixed in the world: the seed's "everything above the hips"
keeps it still). Segment lengths follow the body-segment proportions of a
1.75 m adult in Winter, *Biomechanics and Motor Control of Human Movement*
(segment length as a fraction of height); joint ranges follow the American
Academy of Orthopaedic Surgeons' normal ranges of motion (rounded).

Sign conventions at zero (arms hanging, legs straight): rotation about +y tilts
a downward segment backwards, so flexion of shoulder and hip is negative about
y; elbows flex about -y, knees about +y.
"""

from __future__ import annotations

import numpy as np

from ..builder import ModelBuilder
from ..model import Model
from ..spatial import translation

__all__ = ["humanoid"]

D = np.pi / 180.0


def _t(x: float, y: float, z: float) -> np.ndarray:
    return translation([x, y, z])


def humanoid() -> Model:
    """37-DoF humanoid: spine, chest, neck (3 each); per side clavicle (2), shoulder (3),
    elbow (1), wrist (2), hip (3), knee (1), ankle (2).

    Frames for IK: ``hand_r``, ``hand_l``, ``foot_r``, ``foot_l``, ``head``.
    Presets (seed 000, section 3.2): ``right_arm`` (shoulder, elbow, wrist),
    ``right_arm+spine`` (the arm, its clavicle and the upper spine ``chest``),
    ``above_hips`` (both spine joints, neck, both arms with clavicles), their left
    mirrors, ``right_leg``, ``left_leg``, ``legs``.
    """
    b = ModelBuilder("humanoid", root="pelvis", root_origin=_t(0.0, 0.0, 0.93))
    torso = [(-35 * D, 35 * D), (-45 * D, 30 * D), (-35 * D, 35 * D)]  # lateral, flex, twist
    b.add_ball_joint("spine", "pelvis", "abdomen", "xyz", origin=_t(0, 0, 0.10), limits=torso)
    b.add_ball_joint("chest", "abdomen", "chest", "xyz", origin=_t(0, 0, 0.20), limits=torso)
    neck = [(-40 * D, 40 * D), (-50 * D, 60 * D), (-70 * D, 70 * D)]
    b.add_ball_joint("neck", "chest", "neck", "xyz", origin=_t(0, 0, 0.25), limits=neck)
    b.add_frame("head", "neck", origin=_t(0.02, 0, 0.12))
    b.add_frame("head_top", "neck", origin=_t(0.0, 0, 0.24))
    for side, s in (("r", -1.0), ("l", 1.0)):
        # Mirror: a limit (lo, hi) about x or z on the right is (-hi, -lo) on the left.
        def m(lo: float, hi: float, s: float = s) -> tuple[float, float]:
            return (lo, hi) if s < 0 else (-hi, -lo)

        b.add_ball_joint(
            f"clavicle_{side}", "chest", f"clavicle_{side}", "xz",
            origin=_t(0.0, 0.03 * s, 0.20),
            limits=[m(-30 * D, 10 * D), m(-20 * D, 20 * D)],
        )  # fmt: skip
        b.add_ball_joint(
            f"shoulder_{side}", f"clavicle_{side}", f"upper_arm_{side}", "xyz",
            origin=_t(0.0, 0.16 * s, 0.0),
            limits=[m(-170 * D, 30 * D), (-170 * D, 50 * D), m(-90 * D, 90 * D)],
            swing=150 * D, twist=(-80 * D, 80 * D), bone_axis="-z",
        )  # fmt: skip
        b.add_joint(
            f"elbow_{side}",
            f"upper_arm_{side}",
            f"forearm_{side}",
            axis="-y",
            origin=_t(0, 0, -0.29),
            limits=(0.0, 145 * D),
        )
        b.add_ball_joint(
            f"wrist_{side}",
            f"forearm_{side}",
            f"palm_{side}",
            "yx",
            origin=_t(0, 0, -0.25),
            limits=[(-70 * D, 80 * D), m(-30 * D, 20 * D)],
        )
        b.add_frame(f"hand_{side}", f"palm_{side}", origin=_t(0, 0, -0.09))
        b.add_ball_joint(
            f"hip_{side}", "pelvis", f"thigh_{side}", "xyz",
            origin=_t(0.0, 0.09 * s, -0.05),
            limits=[m(-45 * D, 20 * D), (-120 * D, 30 * D), m(-45 * D, 40 * D)],
            swing=110 * D, twist=(-40 * D, 40 * D), bone_axis="-z",
        )  # fmt: skip
        b.add_joint(
            f"knee_{side}",
            f"thigh_{side}",
            f"shin_{side}",
            axis="y",
            origin=_t(0, 0, -0.40),
            limits=(0.0, 140 * D),
        )
        b.add_ball_joint(
            f"ankle_{side}",
            f"shin_{side}",
            f"ankle_{side}",
            "yx",
            origin=_t(0, 0, -0.40),
            limits=[(-20 * D, 50 * D), m(-20 * D, 30 * D)],
        )
        b.add_frame(f"foot_{side}", f"ankle_{side}", origin=_t(0.04, 0, -0.08))
        b.add_frame(f"toe_{side}", f"ankle_{side}", origin=_t(0.18, 0, -0.08))
    b.set_end_effectors("hand_r", "hand_l", "foot_r", "foot_l", "head")
    for side in ("r", "l"):
        name = "right" if side == "r" else "left"
        arm = [f"shoulder_{side}", f"elbow_{side}", f"wrist_{side}"]
        b.add_preset(f"{name}_arm", arm)
        b.add_preset(f"{name}_arm+spine", [*arm, f"clavicle_{side}", "chest"])
        b.add_preset(f"{name}_leg", [f"hip_{side}", f"knee_{side}", f"ankle_{side}"])
    arms = [f"{j}_{s}" for s in ("r", "l") for j in ("clavicle", "shoulder", "elbow", "wrist")]
    b.add_preset("above_hips", ["spine", "chest", "neck", *arms])
    b.add_preset("legs", [f"{j}_{s}" for s in ("r", "l") for j in ("hip", "knee", "ankle")])
    b.set_neutral(
        {
            "elbow_r": 15 * D, "elbow_l": 15 * D, "knee_r": 5 * D, "knee_l": 5 * D,
            "hip_r_y": -3 * D, "hip_l_y": -3 * D, "ankle_r_y": -2 * D, "ankle_l_y": -2 * D,
            "shoulder_r_x": -8 * D, "shoulder_l_x": 8 * D,
        }
    )  # fmt: skip
    b.metadata["up"] = "z"
    b.metadata["forward"] = "x"
    return b.build()
