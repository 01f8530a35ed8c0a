"""Denavit-Hartenberg tables -> Model, in the standard and the modified (Craig) convention.

Standard (distal) DH, joint i:  ``T = Rz(theta_i) Tz(d_i) Tx(a_i) Rx(alpha_i)``.
Modified (proximal, Craig) DH:  ``T = Rx(alpha_{i-1}) Tx(a_{i-1}) Rz(theta_i) Tz(d_i)``
(in a modified row, ``a`` and ``alpha`` are those of the previous link, as in
Craig's table). A revolute joint adds ``q`` to ``theta``, a prismatic joint adds
``q`` to ``d``. Lengths in metres, angles in radians.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from numbers import Real

import numpy as np
from numpy.typing import ArrayLike

from .._validate import as_array, check_rigid
from ..builder import MAX_ORIGIN_DISTANCE, ModelBuilder, short_float, shown
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


def _rows(rows: object) -> list[DHRow]:
    """The table as a list of :class:`DHRow`; anything else raises naming ``rows``."""
    want = (
        "rows must be a list (or other iterable) of DHRow, "
        "e.g. [DHRow(a=0.3, alpha=0.0, d=0.0, theta=0.0), ...]"
    )
    if isinstance(rows, DHRow):
        raise InvalidValueError(f"{want}; got a single DHRow (wrap it in a list: [row])")
    if isinstance(rows, (str, bytes, np.ndarray, Mapping)) or not isinstance(rows, Iterable):
        raise InvalidValueError(f"{want}; got {type(rows).__name__}")
    table = list(rows)
    if not table:
        raise InvalidValueError("a DH table needs at least one row")
    for i, row in enumerate(table, start=1):
        if not isinstance(row, DHRow):
            raise InvalidValueError(f"{want}; row {i} is a {type(row).__name__}: {row!r}")
    return table


def _transform(T: ArrayLike, what: str) -> np.ndarray:
    """A single 4x4 rigid transform named ``what`` in errors."""
    M = as_array(T, what, (4, 4))
    if M.ndim != 2:
        raise InvalidValueError(f"{what} must be one 4x4 transform, got shape {M.shape}")
    check_rigid(M, what, tol=1e-9)
    return M


def from_dh(
    rows: Iterable[DHRow],
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
    exposed as frame ``tool_name`` and the default end effector. ``base`` is the
    pose of ``link0``. Both are 4x4 rigid transforms.

    Raises :class:`~kinetree.errors.InvalidValueError` when ``rows`` is not an
    iterable of :class:`DHRow` (a numpy array or a list of lists is not), for a row
    value that is not a finite real number (a string such as ``'1.5'`` is not, nor
    is an int too large for a float), for ``a`` or ``d`` longer than 1e12 m
    (:data:`~kinetree.builder.MAX_ORIGIN_DISTANCE`), for limits that are not a
    pair of numbers or None, and for a ``base`` or ``tool`` that is not a
    4x4 rigid transform (:class:`~kinetree.errors.ShapeError` for the wrong shape).
    """
    if not isinstance(convention, str) or convention not in ("standard", "modified"):
        raise UnsupportedError(
            f"DH convention {convention!r} is not supported; use 'standard' or 'modified'"
        )
    table = _rows(rows)
    for what, value in (("name", name), ("tool_name", tool_name)):
        if not isinstance(value, str) or not value:
            raise InvalidValueError(f"from_dh: {what} must be a non-empty string, got {value!r}")
    if metadata is not None and not isinstance(metadata, Mapping):
        raise InvalidValueError(
            f"from_dh: metadata must be a dict or None, got {type(metadata).__name__}"
        )
    T_base = None if base is None else _transform(base, "base")
    T_tool_extra = None if tool is None else _transform(tool, "tool")
    b = ModelBuilder(name, root="link0", root_origin=T_base)
    carry = np.eye(4)  # fixed part of the previous row that belongs to this joint's origin
    for i, row in enumerate(table, start=1):
        if not isinstance(row.type, str) or row.type not in ("revolute", "prismatic"):
            raise UnsupportedError(
                f"DH row {i}: joint type {row.type!r} is not supported; use revolute or prismatic"
            )
        if row.name is not None and (not isinstance(row.name, str) or not row.name):
            raise InvalidValueError(
                f"DH row {i}: name must be a non-empty string or None, got {row.name!r}"
            )
        for field in ("a", "alpha", "d", "theta"):
            value = getattr(row, field)
            unit = "m" if field in ("a", "d") else "rad"
            if isinstance(value, (bool, np.bool_)) or not isinstance(
                value, (Real, np.integer, np.floating)
            ):
                raise InvalidValueError(
                    f"DH row {i}: {field} must be a number ({unit}), got {shown(value)}"
                )
            try:
                v = float(value)
            except OverflowError:
                raise InvalidValueError(
                    f"DH row {i}: {field} = {shown(value)} is too large for a float; "
                    f"{field} must be a finite number ({unit})"
                ) from None
            if not math.isfinite(v):
                raise InvalidValueError(
                    f"DH row {i} contains NaN or inf: {field} = {shown(value)}; "
                    f"{field} must be a finite number ({unit})"
                )
            if unit == "m" and abs(v) > MAX_ORIGIN_DISTANCE:
                raise InvalidValueError(
                    f"DH row {i}: {field} is {short_float(v)} m; kinetree accepts lengths of "
                    f"at most {short_float(MAX_ORIGIN_DISTANCE)} m (the farthest an origin may "
                    "lie from its parent)"
                )
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
            row.name or f"joint{i}",
            f"link{i - 1}",
            f"link{i}",
            type=row.type,
            axis="z",
            origin=carry @ pre,
            limits=row.limits,
        )
        carry = post
    T_tool = carry if T_tool_extra is None else carry @ T_tool_extra
    b.add_frame(tool_name, f"link{len(table)}", origin=T_tool)
    b.set_end_effectors(tool_name)
    b.metadata["dh_convention"] = convention
    b.metadata.update(dict(metadata or {}))
    return b.build()
