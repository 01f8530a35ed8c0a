"""Lazy package attributes (PEP 562): a package names what it offers, and each name's
module is imported on first access.

``import kinetree`` then costs only what it needs: ``kinetree.load("panda")`` and a solve
never import the collision, animation or file-format modules (nor what those import),
while ``kinetree.Box``, ``kinetree.anim`` and ``from kinetree import read_bvh`` work as
before. Type checkers read the same names from the ``if TYPE_CHECKING:`` imports beside
each table; ``tests/architecture/test_lazy_import.py`` checks that the two agree.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["attach"]


def attach(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for the package named ``package``.

    ``exports`` maps each public name to where it lives: ``".module"`` (a module,
    relative to the package, the name bound to the module itself) or
    ``".module:attr"`` (an attribute of that module). A resolved name is stored in the
    package's namespace, so later accesses are plain attribute reads.
    """

    def __getattr__(name: str) -> Any:
        target = exports.get(name)
        if target is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module_name, _, attr = target.partition(":")
        module = importlib.import_module(module_name, package)
        value = getattr(module, attr) if attr else module
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(exports))

    return __getattr__, __dir__
