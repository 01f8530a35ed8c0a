"""Warnings that point at the caller's line, not at kinetree's own."""

from __future__ import annotations

import sys
import warnings

__all__ = ["warn_outside"]


def warn_outside(message: str, category: type[Warning]) -> None:
    """``warnings.warn`` with the stack level of the first frame outside kinetree: the
    user's ``kinetree.load(...)`` line, however deep inside kinetree the warning starts."""
    level = 2  # stacklevel 2 is the frame below: warn_outside's caller
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").split(".")[0] == "kinetree":
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    warnings.warn(message, category, stacklevel=level)
