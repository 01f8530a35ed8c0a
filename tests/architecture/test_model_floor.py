"""``model.py`` sits on the model floor: at import time it reads only the floors below it
(and its own), and its convenience methods reach the floors above through public modules.

The one documented upward reach is the lazy facade: ``Model.fk/ik/distance/...`` import
their layer inside the method, on first call. Imports under ``if TYPE_CHECKING:`` are
for the type checker only and never run.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import kinetree
from kinetree.ik.kernel.swing_twist_layout import swing_twist_layout

MODEL = Path(kinetree.__file__).parent / "model.py"
#: What model.py may import when it is imported: the floors below it and beside it.
BELOW = {"_validate", "errors", "spatial", "geometry", "builder", "_warnings", "_deprecated"}


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING"
    )


def _module_level_imports(tree: ast.Module) -> list[ast.ImportFrom | ast.Import]:
    """Imports that run when the module is imported: the module body, and inside
    ``if``/``try`` blocks there, except ``if TYPE_CHECKING:``."""
    out: list[ast.ImportFrom | ast.Import] = []
    todo: list[ast.stmt] = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            out.append(node)
        elif isinstance(node, ast.If) and not _is_type_checking(node):
            todo += node.body + node.orelse
        elif isinstance(node, ast.Try):
            todo += node.body + node.orelse + node.finalbody
            for h in node.handlers:
                todo += h.body
    return out


def _kinetree_module(node: ast.ImportFrom | ast.Import) -> list[str]:
    """The kinetree module paths (below the package) an import names, e.g. ``ik.solve``."""
    if isinstance(node, ast.ImportFrom):
        if node.level == 1:
            return [node.module or ""]
        if node.level == 0 and (node.module or "").startswith("kinetree"):
            return [(node.module or "").removeprefix("kinetree").lstrip(".")]
        return []
    return [a.name.removeprefix("kinetree.") for a in node.names if a.name.startswith("kinetree")]


def test_model_imports_nothing_from_a_higher_floor_at_import_time() -> None:
    tree = ast.parse(MODEL.read_text())
    upward = []
    for node in _module_level_imports(tree):
        for mod in _kinetree_module(node):
            if mod.split(".")[0] not in BELOW:
                upward.append(f"line {node.lineno}: {mod}")
    assert not upward, f"model.py imports from higher floors at import time: {upward}"


def test_the_lazy_facade_reaches_only_public_modules_and_names() -> None:
    tree = ast.parse(MODEL.read_text())
    private = []
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef):
            continue
        for node in ast.walk(fn):
            if not isinstance(node, ast.ImportFrom):
                continue
            for mod in _kinetree_module(node):
                names = [a.name for a in node.names]
                if any(part.startswith("_") for part in mod.split(".")) or any(
                    n.startswith("_") for n in names
                ):
                    private.append(f"line {node.lineno}: {mod} {names}")
    assert not private, f"Model methods import private modules or names: {private}"


def test_the_checks_see_a_violation() -> None:
    # The same checks on a file that breaks both rules (a test that cannot fail is none).
    bad = ast.parse(
        "from .ik.solve import solve\ndef f():\n    from .ik._swing_twist import swing_twist\n"
    )
    mods = [m for n in _module_level_imports(bad) for m in _kinetree_module(n)]
    assert mods == ["ik.solve"] and mods[0].split(".")[0] not in BELOW
    inner = [n for n in ast.walk(bad.body[1]) if isinstance(n, ast.ImportFrom)]
    assert _kinetree_module(inner[0]) == ["ik._swing_twist"]


def test_swing_twist_layout_moved_to_ik_with_a_deprecated_alias() -> None:
    model = kinetree.load("humanoid")
    active = np.ones(model.nq, dtype=bool)
    ints, floats = swing_twist_layout(model, active)
    assert ints[0] == len(model.swing_twist) > 0  # every group has an active DoF
    assert floats.size == 6 * ints[0]
    with pytest.warns(DeprecationWarning, match=r"kernel\.swing_twist_layout"):
        old = model.swing_twist_layout(active)
    np.testing.assert_array_equal(old[0], ints)
    np.testing.assert_array_equal(old[1], floats)
    active[model.joint_indices(next(iter(model.swing_twist)))] = False
    assert swing_twist_layout(model, active)[0][0] == ints[0] - 1


def test_the_facade_calls_only_names_its_packages_export() -> None:
    """Issue 33: each lazy import of a ``Model`` method is ``from .<package> import
    <name>`` with ``<name>`` in that package's ``__all__`` (the deprecated members aside),
    so the facade only delegates to public faces, never to a module inside a package."""
    import importlib

    tree = ast.parse(MODEL.read_text())
    model_class = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Model")
    reached = []
    for fn in ast.walk(model_class):
        if not isinstance(fn, ast.FunctionDef) or fn.name == "__getattr__":
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                reached += [(node.lineno, node.module or "", a.name) for a in node.names]
    assert reached
    bad = []
    for line, module, name in reached:
        package = importlib.import_module(f"kinetree.{module}")
        if "." in module or name not in getattr(package, "__all__", ()):
            bad.append(f"line {line}: from .{module} import {name}")
    assert bad == []
