"""Centre of mass and manipulability, as :mod:`kinetree.diffik` uses them.

They are kinematics and live in :mod:`kinetree.kinematics.mass` and
:mod:`kinetree.kinematics.manipulability` (which documents the manipulability
convention); this module re-exports them for diffik's tasks and older imports.
"""

from __future__ import annotations

from ..kinematics.manipulability import ROWS as ROWS
from ..kinematics.manipulability import manipulability as manipulability
from ..kinematics.manipulability import manipulability_gradient as manipulability_gradient
from ..kinematics.mass import com as com
from ..kinematics.mass import com_jacobian as com_jacobian

__all__ = ["ROWS", "com", "com_jacobian", "manipulability", "manipulability_gradient"]
