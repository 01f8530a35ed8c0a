"""xacro loading (kinetree.io.xacro.load_xacro): includes, packages, args, errors.

The fixture arm (tests/data/xacro/pkgs/fake_description/urdf/arm.urdf.xacro) is
built from a macro reached through ``$(find fake_description)`` and properties
reached through a relative include; its upper link length is the xacro arg
``upper_length``. tests/data/xacro/arm_expanded.urdf is the same arm expanded by
hand: the oracle for FK.
"""

from __future__ import annotations

import os
import shutil
import sys
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest

import kinetree
from kinetree import (
    FileFormatError,
    InvalidValueError,
    KinetreeError,
    UnknownNameError,
    UnsupportedError,
)
from kinetree.io import load_urdf
from kinetree.kinematics import fk_all

pytest.importorskip("xacrodoc")

from kinetree.io.xacro import load_xacro

DATA = Path(__file__).resolve().parents[1] / "data" / "xacro"
PKGS = DATA / "pkgs"
PKG = PKGS / "fake_description"
ARM = PKG / "urdf" / "arm.urdf.xacro"
EXPANDED = DATA / "arm_expanded.urdf"
PACKAGES = {"fake_description": PKG}
TOL = 1e-12


def random_q(model: kinetree.Model, n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    lo, hi = model.limits[:, 0], model.limits[:, 1]
    return lo + (hi - lo) * rng.random((n, model.dof))


def assert_same_fk(a: kinetree.Model, b: kinetree.Model, n: int = 50) -> None:
    assert a.frame_names == b.frame_names
    assert a.joint_names == b.joint_names
    q = random_q(a, n)
    np.testing.assert_allclose(fk_all(a, q), fk_all(b, q), rtol=0, atol=TOL)


# --- loading -------------------------------------------------------------------------------


def test_arm_loads_through_relative_and_find_includes() -> None:
    model = load_xacro(ARM, package_dirs=PACKAGES)
    assert model.name == "fake_arm"
    assert model.joint_names == ("shoulder_joint", "elbow_joint", "wrist_joint")
    assert set(model.frame_names) >= {"base", "shoulder", "elbow", "wrist", "tool"}
    np.testing.assert_allclose(model.limits, [[-0.75 * np.pi, 0.75 * np.pi]] * 3, atol=TOL)
    assert model.metadata["source"] == str(ARM)
    assert model.metadata["xacro_args"] == {}


def test_fk_equals_hand_expanded_urdf() -> None:
    assert_same_fk(load_xacro(ARM, package_dirs=PACKAGES), load_urdf(EXPANDED))


def test_args_override_the_default_link_length() -> None:
    model = load_xacro(ARM, args={"upper_length": 0.7}, package_dirs=PACKAGES)
    assert model.metadata["xacro_args"] == {"upper_length": "0.7"}
    text = EXPANDED.read_text().replace('xyz="0 0 0.4"', 'xyz="0 0 0.7"')
    assert_same_fk(model, load_urdf(text))
    # Elbow frame at the zero pose: 0.3 up to the shoulder, 0.7 up to the elbow.
    elbow = model.frame_names.index("elbow")
    np.testing.assert_allclose(
        fk_all(model, np.zeros(model.dof))[elbow, :3, 3], [0, 0, 1.0], atol=TOL
    )
    default = load_xacro(ARM, args={"upper_length": "0.4"}, package_dirs=PACKAGES)
    assert_same_fk(default, load_urdf(EXPANDED))


def test_package_dirs_as_a_list_of_folders() -> None:
    assert_same_fk(load_xacro(ARM, package_dirs=[PKGS]), load_urdf(EXPANDED))


def test_package_named_by_its_package_xml(tmp_path: Path) -> None:
    folder = tmp_path / "src" / "renamed_folder"
    shutil.copytree(PKG, folder)
    (folder / "package.xml").write_text(
        '<?xml version="1.0"?><package format="3"><name>fake_description</name></package>'
    )
    model = load_xacro(folder / "urdf" / "arm.urdf.xacro", package_dirs=[tmp_path / "src"])
    assert_same_fk(model, load_urdf(EXPANDED))


def test_the_files_own_package_is_found_without_package_dirs(tmp_path: Path) -> None:
    folder = tmp_path / "fake_description"
    shutil.copytree(PKG, folder)
    (folder / "package.xml").write_text(
        '<?xml version="1.0"?><package format="3"><name>fake_description</name></package>'
    )
    assert_same_fk(load_xacro(folder / "urdf" / "arm.urdf.xacro"), load_urdf(EXPANDED))


def test_relative_includes_do_not_depend_on_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert_same_fk(load_xacro(ARM.resolve(), package_dirs=PACKAGES), load_urdf(EXPANDED))
    monkeypatch.chdir(PKG)
    model = load_xacro(os.path.join("urdf", "arm.urdf.xacro"), package_dirs=PACKAGES)
    assert_same_fk(model, load_urdf(EXPANDED))


def test_package_uri_in_an_include() -> None:
    model = load_xacro(DATA / "package_include.urdf.xacro", package_dirs=PACKAGES)
    assert model.joint_names == ("shoulder_joint",)


def test_package_dirs_do_not_leak_between_calls(tmp_path: Path) -> None:
    other = tmp_path / "fake_description"
    shutil.copytree(PKG, other)
    macros = other / "urdf" / "macros.xacro"
    macros.write_text(macros.read_text().replace('xyz="0 0 ${length}"', 'xyz="0 0 ${2 * length}"'))
    first = load_xacro(ARM, package_dirs=PACKAGES)
    second = load_xacro(ARM, package_dirs={"fake_description": other})
    assert_same_fk(first, load_urdf(EXPANDED))
    doubled = EXPANDED.read_text()
    for length, twice in (("0.3", "0.6"), ("0.4", "0.8"), ("0.35", "0.7")):
        doubled = doubled.replace(f'xyz="0 0 {length}"', f'xyz="0 0 {twice}"')
    assert_same_fk(second, load_urdf(doubled))
    with pytest.raises(UnknownNameError, match="fake_description"):
        load_xacro(ARM)  # the package given to the calls above is forgotten


# --- errors --------------------------------------------------------------------------------


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.urdf.xacro"
    with pytest.raises(FileFormatError, match=r"xacro file .*nope\.urdf\.xacro.* does not exist"):
        load_xacro(path)


def test_missing_include_names_both_files() -> None:
    path = DATA / "missing_include.urdf.xacro"
    with pytest.raises(FileFormatError) as info:
        load_xacro(path)
    assert str(path) in str(info.value)
    assert "no_such_file.xacro" in str(info.value)


def test_unknown_package_lists_the_known_ones() -> None:
    path = DATA / "unknown_package.urdf.xacro"
    with pytest.raises(UnknownNameError) as info:
        load_xacro(path, package_dirs=PACKAGES)
    message = str(info.value)
    assert str(path) in message
    assert "'no_such_package' not found" in message
    assert "known packages are: fake_description" in message


def test_find_without_package_dirs_says_how_to_give_them() -> None:
    with pytest.raises(UnknownNameError, match="package_dirs="):
        load_xacro(ARM)


def test_undeclared_arg_lists_the_declared_ones() -> None:
    with pytest.raises(UnknownNameError, match=r"'upper_lenght'.*declared args are: upper_length"):
        load_xacro(ARM, args={"upper_lenght": 0.7}, package_dirs=PACKAGES)


def test_arg_value_that_breaks_the_urdf() -> None:
    with pytest.raises(FileFormatError) as info:
        load_xacro(ARM, args={"upper_length": "abc"}, package_dirs=PACKAGES)
    message = str(info.value)
    assert str(ARM) in message and "upper_length" in message and "abc" in message


def test_arg_value_that_breaks_an_expression() -> None:
    # ${upper_length} is used in an expression only through the macro's origin; a
    # value such as '1 +' is rejected by xacro's evaluator or by the URDF check.
    with pytest.raises(FileFormatError, match=str(ARM).replace("\\", "\\\\")):
        load_xacro(ARM, args={"upper_length": "${1 +}"}, package_dirs=PACKAGES)


@pytest.mark.parametrize("args", [[("upper_length", 1)], "upper_length:=1", 3])
def test_args_must_be_a_mapping(args: object) -> None:
    with pytest.raises(InvalidValueError, match="args must be a mapping"):
        load_xacro(ARM, args=args, package_dirs=PACKAGES)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [None, [0.5], {"x": 1}])
def test_arg_values_must_be_scalars(value: object) -> None:
    with pytest.raises(InvalidValueError, match=r"args\['upper_length'\] must be a str"):
        load_xacro(ARM, args={"upper_length": value}, package_dirs=PACKAGES)  # type: ignore[dict-item]


def test_xacro_error_names_the_file() -> None:
    path = DATA / "undefined_macro.urdf.xacro"
    with pytest.raises(FileFormatError, match="no_such_macro") as info:
        load_xacro(path)
    assert str(path) in str(info.value)


def test_malformed_xml_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.urdf.xacro"
    path.write_text('<robot name="r"><link name="a">')
    with pytest.raises(FileFormatError, match="not well-formed XML") as info:
        load_xacro(path)
    assert str(path) in str(info.value)


def test_package_dirs_folder_must_exist(tmp_path: Path) -> None:
    with pytest.raises(FileFormatError, match="does not exist"):
        load_xacro(ARM, package_dirs={"fake_description": tmp_path / "missing"})
    with pytest.raises(FileFormatError, match="does not exist"):
        load_xacro(ARM, package_dirs=[tmp_path / "missing"])


@pytest.mark.parametrize("package_dirs", [str(PKGS), 3, {"": PKG}])
def test_package_dirs_type(package_dirs: object) -> None:
    with pytest.raises(InvalidValueError, match="package_dirs must be"):
        load_xacro(ARM, package_dirs=package_dirs)  # type: ignore[arg-type]


def test_path_type() -> None:
    with pytest.raises(InvalidValueError, match="load_xacro needs the path"):
        load_xacro(None)  # type: ignore[arg-type]


def test_urdf_options_are_passed_on() -> None:
    assert load_xacro(ARM, package_dirs=PACKAGES, name="renamed").name == "renamed"


def test_without_xacrodoc_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "xacrodoc", None)  # import xacrodoc -> ImportError
    with pytest.raises(UnsupportedError, match=r"pip install kinetree\[xacro\]"):
        load_xacro(ARM, package_dirs=PACKAGES)


def test_every_error_is_a_kinetree_error() -> None:
    for path in DATA.glob("*.urdf.xacro"):
        if path.name.startswith(("missing", "unknown", "undefined")):
            with pytest.raises(KinetreeError):
                load_xacro(path, package_dirs=PACKAGES)


# --- opt-in: the xacro files example-robot-data installs --------------------------------

DIST = "example-robot-data"

# File (relative to .../example-robot-data/robots/) -> (error type, message part, why).
EXPECTED_ERD_ERRORS: dict[str, tuple[type[KinetreeError], str, str]] = {
    "hector_description/robots/quadrotor_base.xacro": (
        FileFormatError,
        "hector_description/urdf/quadrotor_base.urdf.xacro",
        "its package:// include names urdf/quadrotor_base.urdf.xacro; the file ships in robots/",
    ),
    "hector_description/robots/quadrotor_base.urdf.xacro": (
        FileFormatError,
        "no 'name' attribute",
        "a file of macros only, included by quadrotor_base.xacro: no robot of its own",
    ),
}


def _erd_xacro_files() -> list[tuple[Path, str]]:
    if os.environ.get("KINETREE_INTEROP") != "1":
        return []
    try:
        files = metadata.distribution(DIST).files or []
    except metadata.PackageNotFoundError:
        return []
    out = []
    for f in files:
        parts = Path(str(f)).parts
        if f.name.endswith(".xacro") and "robots" in parts:
            out.append((Path(str(f.locate())), "/".join(parts[parts.index("robots") + 1 :])))
    return sorted(out)


@pytest.mark.skipif(
    os.environ.get("KINETREE_INTEROP") != "1",
    reason="opt-in: pip install example-robot-data, set KINETREE_INTEROP=1",
)
@pytest.mark.parametrize(
    ("path", "rel"), _erd_xacro_files() or [pytest.param(None, "", marks=pytest.mark.skip)]
)
def test_example_robot_data_xacro(path: Path, rel: str) -> None:
    share = path.parents[len(Path(rel).parts)]  # .../share/example-robot-data/robots
    packages = {DIST: share.parent}
    if rel in EXPECTED_ERD_ERRORS:
        kind, part, _why = EXPECTED_ERD_ERRORS[rel]
        with pytest.raises(kind, match=part) as info:
            load_xacro(path, package_dirs=packages)
        assert str(path) in str(info.value)
        return
    model = load_xacro(path, package_dirs=packages)
    pin = pytest.importorskip("pinocchio")
    import xacrodoc

    xacrodoc.packages.update_package_cache(packages)
    urdf = xacrodoc.XacroDoc.from_file(path, walk_up=False).to_urdf_string()
    pin_model = pin.buildModelFromXML(urdf)
    pin_data = pin_model.createData()
    for q in random_q(model, 10):
        q_pin = pin.neutral(pin_model)
        for name, value in zip(model.joint_names, q):
            joint = pin_model.joints[pin_model.getJointId(name)]
            q_pin[joint.idx_q] = value
        pin.framesForwardKinematics(pin_model, pin_data, q_pin)
        poses = fk_all(model, q)
        for i, frame in enumerate(model.frame_names):
            if pin_model.existFrame(frame):
                T = pin_data.oMf[pin_model.getFrameId(frame)].homogeneous
                np.testing.assert_allclose(poses[i], T, atol=1e-9)


def test_kinetree_load_dispatches_xacro() -> None:
    arm = DATA / "pkgs" / "fake_description" / "urdf" / "arm.urdf.xacro"
    m = kinetree.load(arm, package_dirs=[DATA / "pkgs"])
    ref = load_xacro(arm, package_dirs=[DATA / "pkgs"])
    q = m.random_configuration(rng=1)
    np.testing.assert_allclose(m.fk_all(q), ref.fk_all(q), rtol=0, atol=1e-15)


def test_bundled_xacro_arm_takes_its_reach_arg() -> None:
    """The README's xacro arm: the arg ``reach`` [m] sets the shoulder-to-wrist length."""
    path = kinetree.data.path("xacro_arm")
    for reach in (0.8, 0.9, 1.3):
        arm = kinetree.load(path, args={"reach": str(reach)})
        assert arm.joint_names == tuple(f"joint{k}" for k in range(1, 7))
        z = arm.fk(arm.neutral())[2, 3]
        assert z == pytest.approx(0.12 + 0.10 + reach + 0.06 + 0.06, abs=1e-12)
    assert {g.kind for g in arm.geometry["upper_arm"]} == {"visual", "collision"}
