"""``import kinetree`` is cheap and complete: its public names (and those of the lazy
subpackages) are imported on first use (:mod:`kinetree._lazy`), yet every one of them
resolves, ``dir()`` and ``from kinetree import *`` list them, and type checkers see the
same names as the running code. Loading a built-in arm and importing what ``Model.fk``
and ``Model.ik`` import pulls in no animation, collision-query or file-format module.
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

import kinetree

SRC = Path(kinetree.__file__).resolve().parents[1]
LAZY_PACKAGES = ("kinetree", "kinetree.collision", "kinetree.io", "kinetree.models")

#: Modules no part of the plain load-and-solve path needs (optional extras, other jobs).
NOT_ON_SOLVE_PATH = (
    "kinetree.anim",
    "kinetree.collision.pairs",
    "kinetree.collision.robot",
    "kinetree.collision.spheres",
    "kinetree.collision.world",
    "kinetree.data",
    "kinetree.diffik",
    "kinetree.distributed",
    "kinetree.gpu",
    "kinetree.io.bvh",
    "kinetree.io.bvh_export",
    "kinetree.io.mjcf",
    "kinetree.io.srdf",
    "kinetree.io.urdf",
    "kinetree.learn",
    "kinetree.models.descriptions",
    "kinetree.viewer",
    "kinetree.viz",
    "kinetree.workspace",
    "matplotlib",
    "scipy.optimize",
    "scipy.spatial",
    "torch",
    "trimesh",
    "yourdfpy",
)


def _modules_after(code: str) -> set[str]:
    """``sys.modules`` of a fresh interpreter (this kinetree first on its path) after ``code``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), *filter(None, [env.get("PYTHONPATH")])])
    script = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_import_kinetree_imports_only_its_start_up_modules() -> None:
    loaded = _modules_after("import kinetree")
    own = {m for m in loaded if m == "kinetree" or m.startswith("kinetree.")}
    assert own == {"kinetree", "kinetree._compile", "kinetree._lazy", "kinetree.errors"}
    heavy = {"numpy", "numba", "scipy", "yaml", "trimesh", "yourdfpy", "matplotlib"}
    assert not heavy & loaded, sorted(heavy & loaded)


def test_load_and_solve_path_skips_unneeded_modules() -> None:
    # What Model.fk and Model.ik import on first call, without running a kernel (a cold
    # numba cache would compile here).
    code = (
        "import kinetree\n"
        "m = kinetree.load('panda')\n"
        "import kinetree.kinematics, kinetree.ik.solve\n"
        "assert m.nq == 7"
    )
    loaded = _modules_after(code)
    assert {"kinetree.model", "kinetree.kinematics", "kinetree.ik.solve"} <= loaded
    unexpected = [m for m in NOT_ON_SOLVE_PATH if m in loaded]
    assert not unexpected, unexpected


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_every_public_name_resolves(package: str) -> None:
    module = importlib.import_module(package)
    missing = [name for name in module.__all__ if not hasattr(module, name)]
    assert not missing
    assert set(module.__all__) <= set(dir(module))
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        module.no_such_name  # noqa: B018


def test_star_import_binds_every_name() -> None:
    scope: dict[str, object] = {}
    exec("from kinetree import *", scope)
    assert set(kinetree.__all__) <= set(scope)
    assert scope["Box"] is kinetree.collision.world.Box
    assert scope["load"] is kinetree.io.load


def _type_checking_imports(package: str) -> dict[str, str]:
    """``{alias: ".module:attr" or ".module"}`` of the ``if TYPE_CHECKING:`` imports in the
    ``__init__.py`` of ``package``, written as the lazy tables write them."""
    path = SRC / package.replace(".", "/") / "__init__.py"
    found: dict[str, str] = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if not (isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"):
            continue
        for imp in node.body:
            assert isinstance(imp, ast.ImportFrom)
            dots = "." * imp.level
            for alias in imp.names:
                where = f"{dots}{imp.module}:{alias.name}" if imp.module else dots + alias.name
                found[alias.asname or alias.name] = where
    return found


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_type_checkers_see_what_runs(package: str) -> None:
    module = importlib.import_module(package)
    table: dict[str, str] = module._LAZY
    seen = _type_checking_imports(package)
    assert {name: seen.get(name) for name in table} == table
    # Every lazy name is public, and every public name is bound or lazy.
    assert set(table) <= set(module.__all__)
    unbound = {n for n in module.__all__ if n not in table and n not in vars(module)}
    assert not unbound


def _resolve(package: str, target: str) -> object:
    module_name, _, attr = target.partition(":")
    module = importlib.import_module(module_name, package)
    return getattr(module, attr) if attr else module


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_a_submodule_import_does_not_shadow_a_name(package: str) -> None:
    # Importing a submodule binds it on its package; a lazy name spelled like a
    # submodule would then read as the module instead of the function or class.
    code = f"import importlib, {package} as p\n"
    code += "for t in p._LAZY.values(): importlib.import_module(t.partition(':')[0], p.__name__)\n"
    code += "print({n: type(getattr(p, n)).__name__ for n in p.__all__})"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), *filter(None, [env.get("PYTHONPATH")])])
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    kinds = ast.literal_eval(out.stdout.strip().splitlines()[-1])
    module = importlib.import_module(package)
    for name, target in module._LAZY.items():
        want = _resolve(package, target)
        assert (kinds[name] == "module") == isinstance(want, types.ModuleType), name
