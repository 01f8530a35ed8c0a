"""The one table of deprecated names (kinetree._deprecated): every old name warns and
gives what its new name gives, and no entry outlives the version it was announced to go
in (this test fails once the package's version reaches an entry's: remove the entry and
what serves it then)."""

from __future__ import annotations

import ast
import importlib
import re
import sys
import warnings
from pathlib import Path

import pytest

import kinetree
from kinetree import _deprecated

SRC = Path(kinetree.__file__).resolve().parent


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


def test_every_entry_goes_in_a_version_still_to_come() -> None:
    now = _version(kinetree.__version__)
    overdue = {old: v for old, (_, v) in _deprecated.MOVED.items() if _version(v) <= now}
    assert overdue == {}, f"kinetree {kinetree.__version__}: remove these deprecated names"


def test_the_version_check_sees_an_overdue_entry() -> None:
    assert _version("0.2.0") <= _version("0.2.0") and _version("0.1.9") < _version("0.2.0")


def _served(old: str) -> bool:
    """An old dotted name read from a module (not a call kept in place, ``Model``'s
    method or a model name)."""
    return re.fullmatch(r"[\w.]+", old) is not None and not old.startswith("kinetree.Model.")


@pytest.mark.parametrize("old", [o for o in _deprecated.MOVED if _served(o)])
def test_each_old_name_warns_and_is_the_new_one(old: str) -> None:
    new = _deprecated.MOVED[old][0]
    module_name, _, attr = new.partition(":")
    expected = importlib.import_module(module_name)
    if attr:
        expected = getattr(expected, attr)
    held = sys.modules.get(old)
    with pytest.warns(DeprecationWarning, match=re.escape(_deprecated.message(old))):
        if attr:
            parent, _, name = old.rpartition(".")
            got = getattr(importlib.import_module(parent), name)
        elif held is not None and held is not expected:  # a stand-in: its names are read
            got = expected if held.__all__ == expected.__all__ else held
        else:
            sys.modules.pop(old, None)
            got = importlib.import_module(old)
    assert got is expected


def test_no_other_module_swaps_a_class_or_adds_a_finder() -> None:
    """Import-system tricks live in kinetree._deprecated only."""
    found = []
    for path in SRC.rglob("*.py"):
        if path.name == "_deprecated.py":
            continue
        text = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Attribute) and node.attr in ("meta_path", "path_hooks"):
                found.append(f"{path.relative_to(SRC)}: sys.{node.attr}")
            targets = node.targets if isinstance(node, ast.Assign) else []
            if any(isinstance(t, ast.Attribute) and t.attr == "__class__" for t in targets):
                found.append(f"{path.relative_to(SRC)}: __class__ assignment")
            if isinstance(node, ast.Call) and ast.unparse(node.func) == "warnings.warn":
                if "DeprecationWarning" in ast.unparse(node):
                    found.append(f"{path.relative_to(SRC)}: its own DeprecationWarning")
    assert found == []


def test_a_callable_kept_in_place_warns_through_the_table() -> None:
    model = kinetree.load("humanoid")
    import numpy as np

    with pytest.warns(DeprecationWarning, match=re.escape("kinetree.Model.swing_twist_layout")):
        model.swing_twist_layout(np.ones(model.nq, dtype=bool))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert callable(kinetree.anim.retarget)  # reading the old callable does not warn
