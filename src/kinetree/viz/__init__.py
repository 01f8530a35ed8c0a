"""Pictures and animations of kinetree models (needs ``pip install kinetree[viz]``).

* :func:`draw` - a stick figure of one configuration (3D, or 2D for planar models
  or with ``plane=``), with optional targets and frame triads.
* :func:`draw_many` - several configurations overlaid on one axes.
* :func:`side_by_side` - one panel per configuration, on a common scale.
* :func:`animate` - a motion as a GIF (pillow) or MP4 (ffmpeg).
* :func:`animate_side_by_side` - several motions (a source skeleton beside the robot
  it drives) as one GIF, each panel's camera following its figure.
* :func:`plot_convergence` - error against iteration for several IK methods.
* :func:`save_figure` - save a figure, creating parent folders.

matplotlib is imported only when a function is called, with the Agg canvas and
without pyplot, so nothing here opens a window or touches global state.
"""

from __future__ import annotations

from .animate import MOVIE_SUFFIXES, animate
from .compare import animate_side_by_side
from .plot import PLANES, draw, draw_many, plot_convergence, save_figure, side_by_side

__all__ = [
    "MOVIE_SUFFIXES",
    "PLANES",
    "animate",
    "animate_side_by_side",
    "draw",
    "draw_many",
    "plot_convergence",
    "save_figure",
    "side_by_side",
]
