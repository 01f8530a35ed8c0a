"""A warning from a public call names the caller's line, not kinetree's: every warning
goes through :func:`kinetree._warnings.warn_outside` (or the deprecation table's
``warn``), which counts the frames up to the first outside kinetree, instead of a fixed
``stacklevel`` that is right for one call path only."""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import pytest

import kinetree
from kinetree.io.urdf import URDFWarning, load_urdf

SRC = Path(kinetree.__file__).resolve().parent
ARM = """<robot name="arm">
  <link name="base"/><link name="tip"/>
  <joint name="j" type="revolute"><parent link="base"/><child link="tip"/>
    <axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>"""


def test_no_warning_has_a_fixed_stack_level() -> None:
    fixed = []
    for path in SRC.rglob("*.py"):
        if path.name in ("_warnings.py", "_deprecated.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("warnings.warn"):
                fixed.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert fixed == [], "use kinetree._warnings.warn_outside"


@pytest.mark.parametrize(
    "text",
    ["\n \n<?xml version='1.0'?>\n" + ARM, ARM + "\ntrailing text"],
    ids=["space-before-declaration", "text-after-robot"],
)
@pytest.mark.parametrize("how", ["load", "load_urdf"])
def test_a_file_warning_names_the_callers_line(tmp_path: Path, text: str, how: str) -> None:
    path = tmp_path / "arm.urdf"
    path.write_text(text)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if how == "load":
            kinetree.load(path)
        else:
            load_urdf(path)
    mine = [w for w in caught if issubclass(w.category, URDFWarning)]
    assert mine, [str(w.message) for w in caught]
    assert {w.filename for w in mine} == {__file__}


def test_a_deprecated_member_names_the_callers_line() -> None:
    model = kinetree.load("zxx_arm")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.v_q  # noqa: B018
    assert [w.filename for w in caught] == [__file__]
