"""Checks at the public edge: shapes, finiteness, rigidity, counts, flags, keywords and
the memory a request would take. Raise, never assert."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from .errors import InvalidValueError, NotRigidError, ShapeError, UnknownNameError

#: The most memory [bytes] one request may build before it is refused up front
#: (:func:`check_memory`): 4 GiB, far above any sensible use of the functions that check
#: it, and below what would push an ordinary machine into swapping or the OOM killer.
MAX_BYTES = 4 * 1024**3
#: The largest count (iterations, restarts, frames, samples) :func:`check_count` accepts.
MAX_COUNT = 10**9


def as_array(
    x: Any, name: str, trailing: tuple[int, ...] = (), *, finite: bool = True
) -> np.ndarray:
    """``x`` as a float64 array whose last dimensions are ``trailing``.

    Raises :class:`ShapeError` for a wrong shape and :class:`InvalidValueError`
    for NaN/inf (when ``finite``).
    """
    try:
        a = x if type(x) is np.ndarray else np.asarray(x)
        if a.dtype.kind == "c":  # the imaginary part would be dropped with a warning
            raise InvalidValueError(f"{name} must be real numbers, got complex values")
        if a.dtype.kind == "O":  # numpy would read None as NaN: say what and where
            _refuse_non_numbers(a, name)
        a = np.asarray(a, dtype=np.float64)
    except (TypeError, ValueError, OverflowError) as exc:  # Overflow: an int past 1.8e308
        if isinstance(exc, InvalidValueError):
            raise
        raise InvalidValueError(f"{name} must be numeric, got {type(x).__name__}: {exc}") from None
    k = len(trailing)
    if a.ndim < k or (k and a.shape[a.ndim - k :] != trailing):
        want = "(..., " + ", ".join(map(str, trailing)) + ")" if k else "any"
        raise ShapeError(f"{name} must have shape {want}, got {a.shape}")
    if finite and not np.all(np.isfinite(a)):
        raise InvalidValueError(f"{name} contains NaN or inf")
    return a


def _refuse_non_numbers(a: np.ndarray, name: str) -> None:
    """Raise naming the first entry of the object array ``a`` that is None, a string or
    another non-number (numpy would turn None into NaN and report NaN)."""
    for idx in np.ndindex(a.shape):
        v = a[idx]
        if v is None or isinstance(v, (str, bytes)):
            where = f"[{', '.join(map(str, idx))}]" if idx else ""
            what = "None" if v is None else repr(v)
            raise InvalidValueError(f"{name}{where} is {what}, not a number")


def _within(a: np.ndarray, b: np.ndarray, tol: float) -> bool:
    """``|a - b| <= tol`` everywhere (False where NaN): ``np.allclose(a, b, atol=tol, rtol=0)``
    for finite ``b``, without its per-call overhead (one check per joint of a large model)."""
    d = np.abs(a - b)
    return bool(d.size == 0 or d.max() <= tol)


def _problem_4x4(T: np.ndarray, tol: float) -> str | None:
    """What is wrong with one 4x4 ``T`` (None: rigid): :func:`check_rigid`'s checks in
    plain Python floats, about 20 times faster than numpy on so small a matrix."""
    r0, r1, r2, bottom = T.tolist()
    if not all(abs(v - w) <= tol for v, w in zip(bottom, (0.0, 0.0, 0.0, 1.0))):
        return "bottom"
    cols = list(zip(r0[:3], r1[:3], r2[:3]))
    for i in range(3):
        for k in range(i, 3):
            a, b = cols[i], cols[k]
            dot = a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
            if not abs(dot - (1.0 if i == k else 0.0)) <= tol:
                return "orthonormal"
    (a, b, c), (d, e, f), (g, h, i_) = r0[:3], r1[:3], r2[:3]
    if a * (e * i_ - f * h) - b * (d * i_ - f * g) + c * (d * h - e * g) < 0.0:
        return "reflection"
    return None


def check_rigid(T: np.ndarray, name: str, tol: float = 1e-6) -> None:
    """Raise :class:`NotRigidError` unless every ``T[..., :, :]`` is a rigid transform."""
    if T.shape == (4, 4):
        problem = _problem_4x4(T, tol)
        if problem is None:
            return
        # Fall through: the array checks below raise with the message for ``problem``.
    n = T.shape[-1]
    R = T[..., : n - 1, : n - 1]
    bottom = T[..., n - 1, :]
    want = np.zeros(n)
    want[-1] = 1.0
    if not _within(bottom, want, tol):
        raise NotRigidError(f"{name}: last row of a homogeneous transform must be {want.tolist()}")
    RtR = R.T @ R if R.ndim == 2 else np.einsum("...ji,...jk->...ik", R, R)
    if not _within(RtR, np.eye(n - 1), tol):
        raise NotRigidError(f"{name}: rotation part is not orthonormal (|R^T R - I| > {tol})")
    if np.any(np.linalg.det(R) < 0.0):
        raise NotRigidError(f"{name}: rotation part is a reflection (det(R) < 0)")


def check_positive(value: float, name: str, *, allow_zero: bool = False) -> float:
    """``value`` as float, raising :class:`InvalidValueError` unless > 0 (or >= 0)."""
    try:
        if isinstance(value, bool | complex | np.complexfloating | str):
            raise TypeError
        v = float(value)
    except (TypeError, ValueError, OverflowError):
        raise InvalidValueError(f"{name} must be a number, got {value!r}") from None
    if not np.isfinite(v) or v < 0.0 or (v == 0.0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise InvalidValueError(f"{name} must be finite and {bound}, got {value!r}")
    return v


def check_count(value: Any, name: str, lo: int = 0) -> int:
    """``value`` as an int in ``[lo, MAX_COUNT]``: a Python or numpy integer, not a bool,
    a float or a string (:class:`InvalidValueError` naming ``name`` otherwise)."""
    if (
        isinstance(value, bool | np.bool_)
        or not isinstance(value, int | np.integer)
        or not lo <= value <= MAX_COUNT
    ):
        raise InvalidValueError(f"{name} must be an integer in [{lo}, {MAX_COUNT}], got {value!r}")
    return int(value)


def check_bool(value: Any, name: str, *, none: bool = False) -> bool | None:
    """``value`` as a bool (True/False, numpy's too; None as well with ``none``), raising
    :class:`InvalidValueError` for anything else: a string such as ``"yes"`` or ``"x"``
    is truthy, so it would turn a switch on without saying."""
    if value is None and none:
        return None
    if isinstance(value, bool | np.bool_):
        return bool(value)
    choices = "True, False or None" if none else "True or False"
    raise InvalidValueError(f"{name} must be {choices}, got {value!r}")


def check_memory(n_bytes: float, what: str, fix: str) -> None:
    """Refuse a request whose arrays would take more than :data:`MAX_BYTES`, before any is
    built: :class:`InvalidValueError` "``what`` needs N GiB ...; ``fix``". ``n_bytes`` is
    the caller's estimate (a Python int or float: it never overflows)."""
    if not n_bytes <= MAX_BYTES:  # also refuses NaN
        raise InvalidValueError(
            f"{what} needs {float(n_bytes) / 1024**3:,.3g} GiB of memory, more than the "
            f"{MAX_BYTES / 1024**3:g} GiB kinetree builds for one request; {fix}"
        )


def check_keywords(given: Mapping[str, Any], valid: Iterable[str], where: str) -> None:
    """Raise :class:`~kinetree.errors.UnknownNameError` for a keyword of ``given`` that is
    not in ``valid`` (a typo would otherwise be a bare ``TypeError`` or go unnoticed),
    listing the valid ones; ``where`` names the function."""
    names = list(valid)
    for key in given:
        if key not in names:
            raise UnknownNameError(
                f"{where} has no keyword {key!r}; its keywords are: {', '.join(sorted(names))}"
            )


def check_model(model: Any, name: str = "model") -> None:
    """Raise :class:`InvalidValueError` unless ``model`` is a :class:`~kinetree.Model`
    (None or a name where a model is needed would fail later, on a missing attribute)."""
    from .model import Model  # here: the model module imports this one

    if not isinstance(model, Model):
        raise InvalidValueError(
            f"{name} must be a kinetree.Model (kinetree.load(...)), got {type(model).__name__}"
        )
