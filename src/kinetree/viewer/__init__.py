"""A browser viewer for kinetree models (needs ``pip install 'kinetree[viewer]'``).

``Viewer(model)`` serves the model on ``http://127.0.0.1:8080`` through viser: its
meshes (a built-in robot's come from ``kinetree[meshes]``) or its skeleton, gizmos on
the end effectors that solve IK live as they are dragged, joint sliders, a timeline
for clips, and the configuration as Python code. ``kinetree view MODEL`` does the same
from the command line.

Importing this package does not import viser; creating a :class:`Viewer` does.
"""

from __future__ import annotations

from ._server import LOOPBACK as LOOPBACK
from ._server import PortInUseError as PortInUseError
from .viewer import Viewer as Viewer

__all__ = ["LOOPBACK", "PortInUseError", "Viewer"]
