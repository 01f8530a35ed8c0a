"""Where a frame can go: reachability and capability maps.

* :func:`reachability` - a voxel grid over the frame's reach; per voxel the fraction of
  a set of orientations IK can reach (the reachability index) and the best Yoshikawa
  manipulability there. Runs on this machine's cores, on a GPU (``device="cuda"``) or
  on a Dask cluster (``client=``).
* :class:`ReachabilityMap` - the result: ``.index``, ``.manipulability``, ``.save()``;
  :func:`load` reads one back.
* :func:`orientation_samples` - rotations spread evenly over SO(3) (super-Fibonacci).
* :func:`plot_reachability` - slices and a 3D view (needs ``kinetree[viz]``).

A *capability map* in the sense of Zacharias et al. is the same computation with the
orientations one task needs (``orientations=`` your own rotations).
"""

from __future__ import annotations

from ..kinematics.manipulability import jacobian_manipulability as manipulability
from ._figure import plot_reachability as plot_reachability
from ._map import ReachabilityMap as ReachabilityMap
from ._map import load as load
from ._orientations import orientation_samples as orientation_samples
from ._reach import reachability as reachability

__all__ = [
    "ReachabilityMap",
    "load",
    "manipulability",
    "orientation_samples",
    "plot_reachability",
    "reachability",
]
