"""Old module paths of :mod:`kinetree.anim` that moved, kept importable for one release.

``import kinetree.anim.robot_retarget`` (and ``from kinetree.anim.retarget_maps import
...``) still work: a finder on ``sys.meta_path`` answers each old name with the module
at its new place, the same module object (so patching it patches the real one), and a
:class:`DeprecationWarning` naming the new place.

One exception: importing a module binds it on its parent package, so where the package
already has something else under the old name (``kinetree.anim.retarget_quality`` is a
function), the old path is a stand-in module put in ``sys.modules`` at once (an import
finds it there and binds nothing); it reads every attribute from the new module, and
warns then.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types
import warnings
from collections.abc import Mapping, Sequence
from importlib.machinery import ModuleSpec
from typing import Any

__all__ = ["MovedModules"]


class _StandIn(types.ModuleType):
    """A module whose attributes are read from the module named ``new``."""

    def __init__(self, old: str, new: str) -> None:
        super().__init__(old, f"Deprecated: moved to {new}.")
        self._kinetree_new_place = new

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name != "__all__":
            # Tools that walk sys.modules (inspect.getmodule reads every __file__) must
            # neither import the new module nor see a warning meant for the old path.
            raise AttributeError(name)
        _warn(self.__name__, self._kinetree_new_place)
        return getattr(importlib.import_module(self._kinetree_new_place), name)

    def __dir__(self) -> list[str]:
        return dir(importlib.import_module(self._kinetree_new_place))


class MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Import each old module name as the module at its new place (``moved``: full
    dotted names, old -> new)."""

    def __init__(self, moved: Mapping[str, str]) -> None:
        self.moved = dict(moved)
        self._specs: dict[str, ModuleSpec | None] = {}  # new name -> its own spec

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname not in self.moved:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: ModuleSpec) -> types.ModuleType:
        new = self.moved[spec.name]
        _warn(spec.name, new)
        module = importlib.import_module(new)
        self._specs[new] = module.__spec__
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        """Nothing to run: the module at the new place is already imported. Give it back
        its own spec (the import machinery set the old name's)."""
        module.__spec__ = self._specs.get(module.__name__, module.__spec__)

    def install(self) -> None:
        """Put this finder on ``sys.meta_path`` (once), and the stand-ins in ``sys.modules``
        for old names the parent package uses for something else."""
        for old, new in self.moved.items():
            parent, _, child = old.rpartition(".")
            held = vars(sys.modules[parent]).get(child) if parent in sys.modules else None
            if held is not None and not isinstance(held, types.ModuleType):
                sys.modules.setdefault(old, _StandIn(old, new))
        if not any(isinstance(f, MovedModules) and f.moved == self.moved for f in sys.meta_path):
            sys.meta_path.append(self)


def _warn(old: str, new: str) -> None:
    warnings.warn(
        f"{old} moved to {new}; the old path goes in the next release",
        DeprecationWarning,
        stacklevel=3,
    )
