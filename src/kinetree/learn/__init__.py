"""Models learned from data: learned IK seeds for robots (:mod:`.robot`).

Training needs PyTorch (``pip install 'kinetree[learn]'``); sampling a trained model is
numpy only.
"""

from __future__ import annotations

from .robot import LearnedIK as LearnedIK
from .robot import load_ik as load_ik
from .robot import train_ik as train_ik

__all__ = ["LearnedIK", "load_ik", "train_ik"]
