"""The one exception family of kinetree.

Every error raised on bad input derives from :class:`KinetreeError`, so a caller
can catch the whole family with one ``except``. Messages name the problem and,
where the problem is a name, list the valid choices. :func:`unknown_name` builds the
message of an unknown name, for kinetree's modules and for code that extends it.
"""

from collections.abc import Iterable as _Iterable

__all__ = [
    "FileFormatError",
    "InvalidValueError",
    "KinetreeError",
    "ModelStructureError",
    "NotRigidError",
    "ShapeError",
    "UnknownNameError",
    "UnsupportedError",
    "unknown_name",
]


class KinetreeError(Exception):
    """Root of every error kinetree raises on purpose."""


class ShapeError(KinetreeError, ValueError):
    """An array has the wrong shape."""


class InvalidValueError(KinetreeError, ValueError):
    """A value is out of its valid domain: NaN/inf, a negative tolerance, ..."""


class NotRigidError(InvalidValueError):
    """A 4x4 matrix is not a rigid transform (rotation not orthonormal, bad last row)."""


class UnknownNameError(KinetreeError, KeyError):
    """A frame, joint, model, method or preset name that does not exist."""

    def __str__(self) -> str:  # KeyError quotes its message; show it plainly.
        return str(self.args[0]) if self.args else ""


class ModelStructureError(KinetreeError, ValueError):
    """A kinematic tree that is not a tree: cycles, several roots, missing parents."""


class UnsupportedError(KinetreeError, ValueError):
    """Input that is well formed but asks for something kinetree does not do."""


class FileFormatError(KinetreeError, ValueError):
    """A file that cannot be read: unreadable, malformed, or inconsistent."""


def unknown_name(
    kind: str, name: object, valid: _Iterable[str], also: str | None = None
) -> UnknownNameError:
    """Build the standard "kind 'x' not found; valid kinds are: a, b, c" error; ``also``
    adds what else is taken ("or the path of a .npz file")."""
    choices = list(valid)
    shown = ", ".join(choices[:60]) + (", ..." if len(choices) > 60 else "")
    tail = f" ({also})" if also else ""
    return UnknownNameError(f"{kind} {name!r} not found; valid {kind}s are: {shown}{tail}")
