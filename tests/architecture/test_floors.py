"""Files on the right floor, one name per meaning, and the old names kept for one release.

``load`` lives above ``io`` and ``models`` (:mod:`kinetree.loading`, one suffix table);
``bvh_export`` is animation; the command line is a package without an import circle;
``kinetree.anim.retarget`` (editing a clip by targets) is now ``edit_by_targets``; the
retargeting files are :mod:`kinetree.anim.retarget`; rotations belong to
:mod:`kinetree.spatial`. Every old import path still works, with a DeprecationWarning.
"""

from __future__ import annotations

import ast
import importlib
import re
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import kinetree
import kinetree._deprecated
import kinetree.anim
import kinetree.loading
from kinetree.errors import UnsupportedError

SRC = Path(kinetree.__file__).resolve().parent


def _modules(package: str) -> list[Path]:
    return sorted((SRC / package).rglob("*.py"))


def _submodules(folder: Path) -> set[str]:
    return {p.stem for p in folder.glob("*.py")} | {
        p.name for p in folder.iterdir() if (p / "__init__.py").exists()
    }


@pytest.mark.parametrize("package", ["io", "anim", "cli", "spatial"])
def test_no_module_imports_from_its_own_package_init(package: str) -> None:
    # "from . import name" must name a module, never something the __init__ defines.
    bad = []
    for path in _modules(package):
        if path.name == "__init__.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module is None:
                names = {a.name for a in node.names} - _submodules(path.parent)
                bad += [f"{path.relative_to(SRC)}: from . import {n}" for n in sorted(names)]
    assert not bad, bad


def test_cli_is_a_package_without_a_circle() -> None:
    folder = SRC / "cli"
    assert not (SRC / "cli.py").exists() and (folder / "__init__.py").exists()
    for path in _modules("cli"):
        text = path.read_text(encoding="utf-8")
        assert len(text.splitlines()) <= 500 or "long because" in text.lower(), path.name
        if path.name == "__init__.py":
            continue
        own = set()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                own |= {node.module} if node.module else {a.name for a in node.names}
        # The commands import the shared app; the app imports no command.
        assert own == (set() if path.stem == "_app" else {"_app"}), (path.name, own)
    from kinetree.cli import app, main

    names = {c.name for c in app.registered_commands} | {g.name for g in app.registered_groups}
    assert {"models", "info", "fk", "ik", "view", "bvh", "reach-map", "retarget", "learn"} <= names
    assert callable(main)


def test_load_lives_above_io_and_its_old_name_warns() -> None:
    assert kinetree.load is kinetree.loading.load
    with pytest.warns(DeprecationWarning, match=r"kinetree\.io\.load moved to kinetree\.loading"):
        old = kinetree.io.load
    assert old is kinetree.loading.load
    with pytest.warns(DeprecationWarning, match="kinetree.anim.bvh_export"):
        write = kinetree.io.write_motion_bvh
    from kinetree.anim.bvh_export import write_motion_bvh

    assert write is write_motion_bvh


def test_old_bvh_export_path_warns_and_is_the_same_code() -> None:
    sys.modules.pop("kinetree.io.bvh_export", None)
    with pytest.warns(DeprecationWarning, match="moved to kinetree.anim.bvh_export"):
        old = importlib.import_module("kinetree.io.bvh_export")
    from kinetree.anim import bvh_export

    assert old.motion_to_bvh is bvh_export.motion_to_bvh
    assert old.write_motion_bvh is bvh_export.write_motion_bvh


def test_the_suffix_table_drives_load_and_its_message(monkeypatch, tmp_path: Path) -> None:
    odd = tmp_path / "robot.odd"
    odd.write_text("anything")
    with pytest.raises(UnsupportedError, match=r"supported files: \.urdf, \.xacro, \.bvh, \.xml"):
        kinetree.load(odd)
    made = kinetree.load("panda")
    fmt = kinetree.loading.FileFormat("Odd", lambda p, args, dirs, fb: made)
    last = re.escape(list(kinetree.loading.FORMATS)[-1])  # the row before the new one
    monkeypatch.setitem(kinetree.loading.FORMATS, ".odd", fmt)
    assert kinetree.load(odd) is made
    with pytest.raises(UnsupportedError, match=rf"{last}, \.odd;.*Odd \(\.odd\)"):
        kinetree.load(tmp_path / "robot.other")
    fixed_only = kinetree.loading.FileFormat("Odd", fmt.read, floating_base="no base")
    monkeypatch.setitem(kinetree.loading.FORMATS, ".odd", fixed_only)
    with pytest.raises(UnsupportedError, match=r"the Odd file .* cannot take it: no base"):
        kinetree.load(odd, floating_base=True)


def test_edit_by_targets_and_its_old_name() -> None:
    model = kinetree.load("panda")
    q = model.random_configuration(4, rng=0)
    src = kinetree.anim.Motion(model, q, fps=10.0)
    p = model.fk(q, "flange")[:, :3, 3] + np.array([0.0, 0.0, 0.02])
    new = kinetree.anim.edit_by_targets(src, {"flange": p}, max_iter=50)
    with pytest.warns(DeprecationWarning, match="kinetree.anim.edit_by_targets"):
        old = kinetree.anim.retarget(src, {"flange": p}, max_iter=50)
    np.testing.assert_array_equal(old.q, new.q)
    # The edit reaches its targets (FK of the result, not the solver's word).
    reached = model.fk(new.q, "flange")[:, :3, 3]
    ok = np.asarray(new.metadata["success"])
    assert ok.any()
    np.testing.assert_allclose(reached[ok], p[ok], atol=1e-3)
    assert kinetree.retarget is kinetree.anim.retarget.retarget_robot  # human -> robot


#: Old module name -> new one, from kinetree's table of deprecations; the nine retargeting
#: files.
OLD_PATHS = {
    old.rpartition(".")[2]: new.rpartition(".")[2]
    for old, (new, _) in kinetree._deprecated.MOVED.items()
    if new.startswith("kinetree.anim.retarget.") and ":" not in new
}


@pytest.mark.parametrize("old", sorted(OLD_PATHS))
def test_old_retargeting_module_paths(old: str) -> None:
    assert len(OLD_PATHS) == 9 and "robot_retarget" in OLD_PATHS
    new = importlib.import_module(f"kinetree.anim.retarget.{OLD_PATHS[old]}")
    if sys.modules.get(f"kinetree.anim.{old}") is new:  # imported by an earlier test
        del sys.modules[f"kinetree.anim.{old}"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(f"kinetree.anim.{old}")
        names = [n for n in new.__all__ if n != "__all__"]
        values = [getattr(module, n) for n in names]
    assert any(issubclass(w.category, DeprecationWarning) for w in caught)
    assert values == [getattr(new, n) for n in names]
    # The function kinetree.anim.retarget_quality stays the function after the import.
    from kinetree.anim.retarget.quality import retarget_quality

    assert kinetree.anim.retarget_quality is retarget_quality


def test_spatial_owns_the_rotations() -> None:
    from kinetree import spatial
    from kinetree.anim import rotations

    moved = ("axis_rotation", "decompose", "decompose_all", "euler_to_quat", "pick_nearest",
             "quat_to_euler", "sequence_matrix", "slerp")  # fmt: skip
    for name in moved:
        f = getattr(spatial, name)
        assert getattr(rotations, name) is f and f.__module__.startswith("kinetree.spatial")
    own = {
        n for n, v in vars(rotations).items() if getattr(v, "__module__", "") == rotations.__name__
    }
    assert own == {"BallJoint", "ball_joints"}
    # Round trip against scipy, an independent implementation.
    from scipy.spatial.transform import Rotation

    angles = np.random.default_rng(1).uniform(-1.2, 1.2, (20, 3))
    q = spatial.euler_to_quat(angles, "zxy")
    R = Rotation.from_euler("ZXY", angles).as_matrix()
    np.testing.assert_allclose(spatial.quaternion_to_matrix(q), R, atol=1e-12)
    np.testing.assert_allclose(spatial.quat_to_euler(q, "zxy"), angles, atol=1e-10)
    half = spatial.slerp(q[:-1], q[1:], 0.5)
    a, b = (
        Rotation.from_quat(q[:-1], scalar_first=True),
        Rotation.from_quat(q[1:], scalar_first=True),
    )
    mid = a * Rotation.from_rotvec(0.5 * (a.inv() * b).as_rotvec())
    np.testing.assert_allclose(spatial.quaternion_to_matrix(half), mid.as_matrix(), atol=1e-12)
