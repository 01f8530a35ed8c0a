"""Denavit-Hartenberg tables -> Model, in the standard and the modified (Craig) convention.

Standard (distal) DH, joint i:  ``T = Rz(theta_i) Tz(d_i) Tx(a_i) Rx(alpha_i)``.
Modified (proximal, Craig) DH:  ``T = Rx(alpha_{i-1}) Tx(a_{i-1}) Rz(theta_i) Tz(d_i)``
(in a modified row, ``a`` and ``alpha`` are those of the previous link, as in
Craig's table). A revolute joint adds ``q`` to ``theta``, a prismatic joint adds
``q`` to ``d``. Lengths in metres, angles in radians.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..builder import ModelBuilder
from ..errors import InvalidValueError, UnsupportedError
from ..model import Model
from ..spatial import rot_x, rot_z, translation

__all__ = ["DHRow", "from_dh"]


@dataclass(frozen=True)
class DHRow:
    """One DH row: ``a`` [m], ``alpha`` [rad], ``d`` [m], ``theta`` offset [rad]."""

    a: float = 0.0
    alpha: float = 0.0
    d: float = 0.0
    theta: float = 0.0
    type: str = "revolute"
    limits: tuple[float, float] | None = None
    name: str | None = None


def _tz(d: float) -> np.ndarray:
    return translation([0.0, 0.0, d])


def _tx(a: float) -> np.ndarray:
    return translation([a, 0.0, 0.0])


def from_dh(
    rows: Sequence[DHRow],
    convention: str = "standard",
    *,
    name: str = "dh_arm",
    base: ArrayLike | None = None,
    tool: ArrayLike | None = None,
    tool_name: str = "flange",
    metadata: dict[str, object] | None = None,
) -> Model:
    """Build a serial arm from DH rows.

    Links are ``link0`` (the base) to ``link{n}``; joints ``joint1..n`` unless a row
    names its own. In the modified convention ``link{i}`` is DH frame i. In the
    standard convention a joint's motion comes first in its row, so ``link{i}`` is the
    frame on joint i's axis after its rotation (``A_1 ... A_{i-1} Rz(theta_i)``), not
    DH frame i; only the tool frame equals the full product ``A_1 ... A_n``.

    ``tool`` is a fixed transform after the last joint frame (a flange or TCP),
    exposed as frame ``tool_name`` and the default end effector.
    """
    if convention not in ("standard", "modified"):
        raise UnsupportedError(
            f"DH convention {convention!r} is not supported; use 'standard' or 'modified'"
        )
    if not rows:
        raise InvalidValueError("a DH table needs at least one row")
    b = ModelBuilder(name, root="link0", root_origin=base)
    carry = np.eye(4)  # fixed part of the previous row that belongs to this joint's origin
    for i, row in enumerate(rows, start=1):
        if row.type not in ("revolute", "prismatic"):
            raise UnsupportedError(
                f"DH row {i}: joint type {row.type!r} is not supported; use revolute or prismatic"
            )
        vals = np.array([row.a, row.alpha, row.d, row.theta], dtype=float)
        if not np.all(np.isfinite(vals)):
            raise InvalidValueError(f"DH row {i} contains NaN or inf: {row}")
        if convention == "standard":
            if row.type == "revolute":
                pre = rot_z(row.theta)
                post = _tz(row.d) @ _tx(row.a) @ rot_x(row.alpha)
            else:
                pre = rot_z(row.theta) @ _tz(row.d)
                post = _tx(row.a) @ rot_x(row.alpha)
        else:
            pre = rot_x(row.alpha) @ _tx(row.a) @ rot_z(row.theta) @ _tz(row.d)
            post = np.eye(4)
        b.add_joint(
            row.name or f"joint{i}", f"link{i - 1}", f"link{i}", type=row.type, axis="z",
            origin=carry @ pre, limits=row.limits,
        )  # fmt: skip
        carry = post
    T_tool = carry if tool is None else carry @ np.asarray(tool, dtype=float)
    b.add_frame(tool_name, f"link{len(rows)}", origin=T_tool)
    b.set_end_effectors(tool_name)
    b.metadata["dh_convention"] = convention
    b.metadata.update(metadata or {})
    return b.build()
