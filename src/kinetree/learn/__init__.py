"""Models learned from data: the seed's neural-network IK.

* A **human pose prior** (:class:`PosePrior`): trained on motion capture per body part,
  so one prior serves skeletons with different joint names and bone lengths;
  ``model.ik(targets, prior="human")`` starts from and prefers its pose while the normal
  solver meets the targets (:func:`solve_with_prior`).
* **Learned IK seeds for robots** (:class:`LearnedIK`, :mod:`.robot`): a conditional
  normalizing flow of configurations given a pose, trained on the model's own FK
  samples; ``model.ik(T, seeds=learned)`` and ``model.ik_many(T, n)`` start from it.
* Training needs PyTorch (``pip install kinetree[learn]``); inference is numpy/numba from
  the exported ``.npz`` weights, so solving needs no torch.
"""

from ._body import INPUT_ROLES as INPUT_ROLES
from ._body import OUTPUT_ROLES as OUTPUT_ROLES
from .pose_ik import fit_pose as fit_pose
from .pose_ik import solve_with_prior as solve_with_prior
from .prior import SHIPPED as SHIPPED
from .prior import PosePrior as PosePrior
from .prior import load_prior as load_prior
from .robot import LearnedIK as LearnedIK
from .robot import load_ik as load_ik
from .robot import train_ik as train_ik
from .train import train_pose_prior as train_pose_prior

__all__ = [
    "INPUT_ROLES",
    "OUTPUT_ROLES",
    "SHIPPED",
    "LearnedIK",
    "PosePrior",
    "fit_pose",
    "load_ik",
    "load_prior",
    "solve_with_prior",
    "train_ik",
    "train_pose_prior",
]
