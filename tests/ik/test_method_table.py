"""The table of IK methods (kinetree.ik.method_table): the one place methods are listed.

Checks that what the rest of the package does follows the table (defaults, validation,
drivers, the docs' table), and that no other module writes method names as a list.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from kinetree import IKOptions
from kinetree.errors import InvalidValueError, UnknownNameError
from kinetree.ik import method_table as T
from kinetree.ik.kernel import _steps

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "kinetree"


def test_every_compiled_row_names_kernel_functions() -> None:
    for row in T.TABLE:
        if row.kind == T.COMPILED:
            assert callable(getattr(_steps, str(row.update))), row
            assert row.rule is None or callable(getattr(_steps, row.rule)), row
            assert row.driver in T.ROWS, row
        else:
            assert row.update is None and row.rule is None, row


@pytest.mark.parametrize("row", T.TABLE, ids=lambda r: r.name)
def test_options_take_each_rows_defaults(row: T.MethodRow) -> None:
    opts = IKOptions(method=row.name)
    assert opts.iterations == row.max_iter
    assert opts.kernel_method == row.driver


def test_an_unknown_method_is_refused_naming_every_row() -> None:
    with pytest.raises(UnknownNameError) as err:
        IKOptions(method="no_such_method")
    for name in T.METHODS:
        assert repr(name)[1:-1] in str(err.value)


def test_only_the_collision_rows_take_obstacles() -> None:
    from kinetree.collision.world import Sphere

    ball = Sphere(radius=0.1, center=(0.0, 0.0, 2.0), name="ball")
    for row in T.TABLE:
        if row.collision:
            assert IKOptions(method=row.name, obstacles=[ball]).collision
        else:
            with pytest.raises(InvalidValueError, match="cannot keep collision margins"):
                IKOptions(method=row.name, obstacles=[ball])


def _docs_rows() -> list[list[str]]:
    text = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    block = text.split("<!-- method table:")[1].split("<!-- end of method table -->")[0]
    lines = [ln for ln in block.splitlines() if ln.startswith("| `")]
    return [[c.strip() for c in ln.strip("|").split("|")] for ln in lines]


def test_the_docs_table_is_the_method_table() -> None:
    def yes(flag: bool) -> str:
        return "yes" if flag else "no"

    expected = []
    for r in T.TABLE:
        step = r.rule or r.update or (f"scipy `{r.scipy}`" if r.scipy else "")
        step = f"`{step}`" if step and not step.startswith("scipy") else step
        flags = [yes(r.allocates), yes(r.collision), yes(r.name in T.GPU_METHODS)]
        expected.append([f"`{r.name}`", r.kind, step, str(r.max_iter), *flags])
    assert _docs_rows() == expected


def _name_lists(path: Path) -> list[tuple[int, list[str]]]:
    """Every list, tuple or set literal of two or more strings that are all method names."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            values = [e.value for e in node.elts if isinstance(e, ast.Constant)]
            if len(values) == len(node.elts) >= 2 and all(
                isinstance(v, str) and v in T.ROWS for v in values
            ):
                found.append((node.lineno, values))
    return found


def test_no_source_module_but_the_table_lists_method_names() -> None:
    files = [*SRC.rglob("*.py"), *(ROOT / "benchmarks").rglob("*.py")]
    table = SRC / "ik" / "method_table.py"
    hits = {
        str(f.relative_to(ROOT)): lists for f in files if f != table and (lists := _name_lists(f))
    }
    assert hits == {}


def test_no_test_restates_a_set_the_table_derives() -> None:
    derived = {
        frozenset(T.METHODS),
        frozenset(T.KERNEL_METHODS),
        frozenset(T.GPU_METHODS),
        frozenset(T.COLLISION_METHODS),
        frozenset(T.INTERPRETABLE),
        frozenset(r.name for r in T.TABLE if r.kind != T.CLOSED_FORM),
        frozenset(r.name for r in T.TABLE if r.scipy is not None),
    }
    hits = {
        str(f.relative_to(ROOT)): [(line, v) for line, v in lists if frozenset(v) in derived]
        for f in (ROOT / "tests").rglob("*.py")
        if (lists := _name_lists(f))
    }
    assert {k: v for k, v in hits.items() if v} == {}


def test_the_method_names_are_words() -> None:
    assert all(re.fullmatch(r"[a-z][a-z0-9_]*", name) for name in T.METHODS)
