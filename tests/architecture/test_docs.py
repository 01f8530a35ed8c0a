"""The docs name what is there: every benchmark script in benchmarks/README.md, every file
of ik/ in docs/design.md's table of the IK core."""

from __future__ import annotations

from pathlib import Path

import kinetree

ROOT = Path(__file__).resolve().parents[2]
SRC = Path(kinetree.__file__).resolve().parent


def test_the_benchmarks_readme_names_every_script() -> None:
    text = (ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8")
    missing = [p.name for p in (ROOT / "benchmarks").glob("*.py") if f"`{p.name}`" not in text]
    assert missing == []


def test_the_ik_core_table_names_every_file_of_ik() -> None:
    text = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    missing = [
        str(p.relative_to(SRC))
        for p in (SRC / "ik").rglob("*.py")
        if f"`{p.relative_to(SRC).as_posix()}`" not in text
    ]
    assert missing == []
