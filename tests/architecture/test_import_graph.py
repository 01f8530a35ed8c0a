"""The house as a whole: no import circle between files, no package reading back from its
own ``__init__``, no long file without its reason (issue 21).

The graph is built from the source with ``ast``: every module-level ``import`` of a
kinetree module (``if TYPE_CHECKING:`` blocks left out: they never run), resolved to the
file it loads. Imports inside functions are the lazy reaches (the ``Model`` facade's
methods, optional extras) and are left out by design; ``test_model_floor`` checks that the
facade's reach only public faces.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import kinetree

SRC = Path(kinetree.__file__).resolve().parent


def _modules() -> dict[str, tuple[Path, bool]]:
    out = {}
    for path in SRC.rglob("*.py"):
        parts = ["kinetree", *path.relative_to(SRC).with_suffix("").parts]
        is_package = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return out


def _run_at_import(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements of a module body that run when it is imported, blocks opened."""
    out: list[ast.stmt] = []
    for node in body:
        if isinstance(node, ast.If):
            if "TYPE_CHECKING" not in ast.unparse(node.test):
                out += _run_at_import(node.body)
            out += _run_at_import(node.orelse)
        elif isinstance(node, ast.Try):
            out += _run_at_import(node.body + node.orelse + node.finalbody)
            for handler in node.handlers:
                out += _run_at_import(handler.body)
        else:
            out.append(node)
    return out


def _graph(modules: dict[str, tuple[Path, bool]]) -> tuple[dict[str, set[str]], list[str]]:
    """Edges module -> modules it imports at import time, and the imports of a name that a
    module's own package ``__init__`` defines."""

    def owner(name: str) -> str:
        while name not in modules and "." in name:
            name = name.rsplit(".", 1)[0]
        return name

    edges: dict[str, set[str]] = {m: set() for m in modules}
    from_own_init = []
    for name, (path, is_package) in modules.items():
        here = name if is_package else name.rsplit(".", 1)[0]
        for node in _run_at_import(ast.parse(path.read_text(encoding="utf-8")).body):
            if isinstance(node, ast.Import):
                edges[name] |= {owner(a.name) for a in node.names if a.name.startswith("kinetree")}
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here.split(".")[: len(here.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                elif (node.module or "").startswith("kinetree"):
                    target = node.module or ""
                else:
                    continue
                for alias in node.names:
                    if f"{target}.{alias.name}" in modules:
                        edges[name].add(f"{target}.{alias.name}")
                        continue
                    edges[name].add(owner(target))
                    if owner(target) == here and not is_package:
                        from_own_init.append(f"{name}: {alias.name} from {here}")
    return edges, from_own_init


def _circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out = []
    for start in edges:
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in edges:
                    continue
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    group.append(m)
                    if m == node:
                        break
                if len(group) > 1:
                    out.append(sorted(group))
    return out


def test_no_import_circle_between_files() -> None:
    edges, _ = _graph(_modules())
    assert _circles(edges) == []


def test_no_module_imports_a_name_from_its_own_package_init() -> None:
    _, bad = _graph(_modules())
    assert bad == []


def test_no_file_over_500_lines_without_its_reason() -> None:
    long = [
        f"{path.relative_to(SRC)} ({n} lines)"
        for path, _ in _modules().values()
        if (n := len(text := path.read_text(encoding="utf-8").splitlines())) > 500
        and "long because" not in "\n".join(text[:5]).lower()
    ]
    assert long == []


@pytest.mark.parametrize(
    ("files", "circle", "own_init"),
    [
        ({"a": "from . import b\n", "b": "from .a import x\n"}, True, False),
        (
            {"a": "from .b import y\n", "b": "if TYPE_CHECKING:\n    from .a import x\n"},
            False,
            False,
        ),
        ({"a": "def f():\n    from .b import y\n", "b": "from .a import x\n"}, False, False),
        ({"__init__": "x = 1\n", "a": "from . import x\n"}, False, True),
    ],
)
def test_the_checks_see_a_violation(tmp_path, monkeypatch, files, circle, own_init) -> None:
    pkg = tmp_path / "kinetree"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(files.get("__init__", ""))
    for name, text in files.items():
        if name != "__init__":
            (pkg / f"{name}.py").write_text(text)
    monkeypatch.setattr(__import__(__name__), "SRC", pkg)
    edges, bad = _graph(_modules())
    assert bool(_circles(edges)) is circle
    assert bool(bad) is own_init
