"""Models learned from data: the seed's neural-network IK.

* A **human pose prior** (:class:`PosePrior`): trained on motion capture per body part,
  so one prior serves skeletons with different joint names and bone lengths;
  ``model.ik(targets, prior="human")`` starts from and prefers its pose while the normal
  solver meets the targets (:func:`solve_with_prior`).
* Training needs PyTorch (``pip install kinetree[learn]``); inference is numpy from the
  exported ``.npz`` weights, so solving needs no torch.
"""

from ._body import INPUT_ROLES as INPUT_ROLES
from ._body import OUTPUT_ROLES as OUTPUT_ROLES
from .pose_ik import fit_pose as fit_pose
from .pose_ik import solve_with_prior as solve_with_prior
from .prior import SHIPPED as SHIPPED
from .prior import PosePrior as PosePrior
from .prior import load_prior as load_prior
from .train import train_pose_prior as train_pose_prior

__all__ = [
    "INPUT_ROLES",
    "OUTPUT_ROLES",
    "SHIPPED",
    "PosePrior",
    "fit_pose",
    "load_prior",
    "solve_with_prior",
    "train_pose_prior",
]
