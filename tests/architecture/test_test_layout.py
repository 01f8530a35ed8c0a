"""The tests mirror the package: each folder of ``tests/`` is a package of
``src/kinetree`` (or a kind of check: ``architecture``, ``interop``, ``browser``), and
the test files keep distinct names, since pytest imports them by file name (the
``prepend`` import mode: no ``__init__.py`` in ``tests/``)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import kinetree

TESTS = Path(__file__).resolve().parents[1]
SRC = Path(kinetree.__file__).resolve().parent
#: Folders of tests/ that are no package of kinetree.
KINDS = {"architecture", "interop", "browser", "data"}


def _test_files() -> list[Path]:
    return [p for p in TESTS.rglob("test_*.py") if "data" not in p.relative_to(TESTS).parts]


def test_no_two_test_files_share_a_name() -> None:
    twice = [n for n, k in Counter(p.name for p in _test_files()).items() if k > 1]
    assert twice == []


def test_each_test_folder_mirrors_a_package() -> None:
    strays = []
    for folder in TESTS.rglob("*"):
        rel = folder.relative_to(TESTS)
        if not folder.is_dir() or rel.parts[0] in KINDS or "__pycache__" in rel.parts:
            continue
        if not (SRC / rel).is_dir():
            strays.append(str(rel))
    assert strays == []


def test_few_test_files_left_at_the_top() -> None:
    top = sorted(p.name for p in TESTS.glob("test_*.py"))
    assert len(top) <= 20, top
