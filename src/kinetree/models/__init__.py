"""Built-in models: ``kinetree.models.available()`` lists them, ``get(name)`` builds one.

Each factory's docstring says where its numbers come from. Factories with
parameters (link lengths) can be called directly: ``models.planar_2r(1.0, 0.5)``.
:func:`with_meshes` attaches the meshes of an installed description package
(``kinetree[meshes]``) to the built-in robots it describes.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING

from .. import _deprecated
from .._lazy import attach as _attach
from ..errors import unknown_name
from ..model import Model
from .arms import planar_2r, planar_3r, planar_nr, six_axis, three_axis, zxx_arm
from .humanoid import humanoid
from .quadruped import quadruped
from .robots import iiwa14, panda, panda_urdf, ur3, ur5, ur10

if TYPE_CHECKING:
    from .descriptions import has_meshes as has_meshes
    from .descriptions import with_meshes as with_meshes

# The mesh packages' lookup is imported on first use (kinetree._lazy).
_LAZY = {"has_meshes": ".descriptions:has_meshes", "with_meshes": ".descriptions:with_meshes"}
if not TYPE_CHECKING:  # type checkers read the imports above, and flag unknown names
    _lazy_getattr, _lazy_dir = _attach(__name__, _LAZY)
    # Old names are served from kinetree._deprecated's table.
    __getattr__, _old_dir = _deprecated.attributes(__name__, _lazy_getattr)

    def __dir__() -> list[str]:
        return sorted(set(_lazy_dir()) | set(_old_dir()))


__all__ = [
    "available",
    "get",
    "has_meshes",
    "humanoid",
    "iiwa14",
    "panda",
    "panda_urdf",
    "planar_2r",
    "planar_3r",
    "planar_nr",
    "quadruped",
    "six_axis",
    "three_axis",
    "ur3",
    "ur5",
    "ur10",
    "with_meshes",
    "zxx_arm",
]

_REGISTRY: dict[str, Callable[[], Model]] = {
    "planar2r": planar_2r,
    "planar3r": planar_3r,
    "three_axis": three_axis,
    "six_axis": six_axis,
    "zxx_arm": zxx_arm,
    "panda": panda,
    "panda_urdf": panda_urdf,
    "ur3": ur3,
    "ur5": ur5,
    "ur10": ur10,
    "iiwa14": iiwa14,
    "humanoid": humanoid,
    "quadruped": quadruped,
}

#: Old names of built-in models, still loaded for one release (with a DeprecationWarning).
RENAMED = {"seed003_arm": "zxx_arm"}


def available() -> tuple[str, ...]:
    """Names of the built-in models."""
    return tuple(_REGISTRY)


@cache
def get(name: str) -> Model:
    """The built-in model ``name`` (models are immutable, so one instance is shared)."""
    if name in RENAMED:
        _deprecated.warn(f"kinetree.models.get({name!r})")
        name = RENAMED[name]
    try:
        factory = _REGISTRY[name]
    except KeyError:
        raise unknown_name("model", name, _REGISTRY) from None
    return factory()
