"""Tasks of the one-step differential IK: each an error and its Jacobian (a file each)."""

from __future__ import annotations

from .com import ComTask as ComTask
from .damping import DampingTask as DampingTask
from .frame import FrameTask as FrameTask
from .manipulability import ManipulabilityTask as ManipulabilityTask
from .posture import PostureTask as PostureTask
from .task import Task as Task

__all__ = ["ComTask", "DampingTask", "FrameTask", "ManipulabilityTask", "PostureTask", "Task"]
