"""Limits of the one-step differential IK: linear inequalities on the step (a file each)."""

from __future__ import annotations

from .collision import CollisionAvoidanceLimit as CollisionAvoidanceLimit
from .configuration import ConfigurationLimit as ConfigurationLimit
from .limit import Limit as Limit
from .velocity import VelocityLimit as VelocityLimit

__all__ = ["CollisionAvoidanceLimit", "ConfigurationLimit", "Limit", "VelocityLimit"]
