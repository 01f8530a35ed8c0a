"""Checks at the public edge: shapes, finiteness, rigidity. Raise, never assert."""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import InvalidValueError, NotRigidError, ShapeError


def as_array(
    x: Any, name: str, trailing: tuple[int, ...] = (), *, finite: bool = True
) -> np.ndarray:
    """``x`` as a float64 array whose last dimensions are ``trailing``.

    Raises :class:`ShapeError` for a wrong shape and :class:`InvalidValueError`
    for NaN/inf (when ``finite``).
    """
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidValueError(f"{name} must be numeric, got {type(x).__name__}: {exc}") from None
    k = len(trailing)
    if a.ndim < k or (k and a.shape[a.ndim - k :] != trailing):
        want = "(..., " + ", ".join(map(str, trailing)) + ")" if k else "any"
        raise ShapeError(f"{name} must have shape {want}, got {a.shape}")
    if finite and not np.all(np.isfinite(a)):
        raise InvalidValueError(f"{name} contains NaN or inf")
    return a


def check_rigid(T: np.ndarray, name: str, tol: float = 1e-6) -> None:
    """Raise :class:`NotRigidError` unless every ``T[..., :, :]`` is a rigid transform."""
    n = T.shape[-1]
    R = T[..., : n - 1, : n - 1]
    bottom = T[..., n - 1, :]
    want = np.zeros(n)
    want[-1] = 1.0
    if not np.allclose(bottom, want, atol=tol, rtol=0.0):
        raise NotRigidError(f"{name}: last row of a homogeneous transform must be {want.tolist()}")
    RtR = np.einsum("...ji,...jk->...ik", R, R)
    if not np.allclose(RtR, np.eye(n - 1), atol=tol, rtol=0.0):
        raise NotRigidError(f"{name}: rotation part is not orthonormal (|R^T R - I| > {tol})")
    if np.any(np.linalg.det(R) < 0.0):
        raise NotRigidError(f"{name}: rotation part is a reflection (det(R) < 0)")


def check_positive(value: float, name: str, *, allow_zero: bool = False) -> float:
    """``value`` as float, raising :class:`InvalidValueError` unless > 0 (or >= 0)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InvalidValueError(f"{name} must be a number, got {value!r}") from None
    if not np.isfinite(v) or v < 0.0 or (v == 0.0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise InvalidValueError(f"{name} must be finite and {bound}, got {value!r}")
    return v
