"""URDF files other tools accept load here too, with a URDFWarning where kinetree interprets."""

from __future__ import annotations

import logging
import warnings
from pathlib import Path

import numpy as np
import pytest

from kinetree.errors import KinetreeError, ModelStructureError
from kinetree.geometry import Capsule, GeometryWarning
from kinetree.io import load_urdf
from kinetree.io.urdf import URDFWarning
from robot_data import example_robot_data, pybullet_data

ARM = """<?xml version="1.0"?>
<robot name="arm">
  <link name="base"><collision><geometry>{shape}</geometry></collision></link>
  <link name="a"/><link name="b"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="a"/>
    <axis xyz="0 0 1"/><limit lower="{lower}" upper="{upper}" effort="1" velocity="1"/></joint>
  <joint name="j2" type="revolute"><parent link="a"/><child link="b"/>
    <origin xyz="{xyz}"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/>
    {mimic}</joint>
</robot>
"""


def arm(
    shape: str = '<box size="1 1 1"/>',
    lower: str = "-1",
    upper: str = "1",
    xyz: str = "0 0 1",
    mimic: str = "",
) -> str:
    return ARM.format(shape=shape, lower=lower, upper=upper, xyz=xyz, mimic=mimic)


def test_whitespace_before_xml_declaration(tmp_path: Path) -> None:
    p = tmp_path / "ws.urdf"
    p.write_text("\n  \n" + arm())
    with pytest.warns(URDFWarning, match="whitespace before the XML declaration"):
        m = load_urdf(p)
    assert m.dof == 2


def test_lower_above_upper_means_no_limit() -> None:
    with pytest.warns(URDFWarning, match=r"joint 'j1': <limit> lower=1 > upper=-1.*no limit"):
        m = load_urdf(arm(lower="1", upper="-1"))
    np.testing.assert_array_equal(m.limits[0], [-np.inf, np.inf])
    np.testing.assert_array_equal(m.limits[1], [-1.0, 1.0])


def test_unknown_shapes_skipped_capsule_read() -> None:
    with pytest.warns(GeometryWarning, match=r"link 'base'.*<plane> is not supported"):
        m = load_urdf(arm(shape='<plane normal="0 0 1"/>'))
    assert "base" not in m.geometry and m.dof == 2
    with pytest.warns(GeometryWarning, match="<cdf> is not supported"):
        load_urdf(arm(shape='<cdf filename="x.cdf"/>'))
    m = load_urdf(arm(shape='<capsule radius="0.1" length="0.5"/>'))
    assert isinstance(m.geometry["base"][0], Capsule)


def test_mimic_of_a_missing_joint() -> None:
    mimic = '<mimic joint="nowhere" multiplier="2"/>'
    with pytest.warns(URDFWarning, match=r"joint 'j2': <mimic joint='nowhere'> names no joint"):
        m = load_urdf(arm(mimic=mimic))
    assert m.joint_names == ("j1", "j2")  # independent
    with pytest.raises(ModelStructureError, match=r"<string>: joint 'j2'.*'nowhere'.*j1, j2"):
        load_urdf(arm(mimic=mimic), mimic="strict")
    m = load_urdf(arm(mimic='<mimic joint="j1" multiplier="2"/>'), mimic="strict")
    assert m.joint_names == ("j1",)


def test_numbers_as_pybullet_reads_them() -> None:
    with pytest.warns(URDFWarning, match=r"xyz='0, 0, 1'.*'0.0 0.0 1.0'"):
        m = load_urdf(arm(xyz="0, 0, 1"))
    np.testing.assert_allclose(m.origin[m.node_names.index("b")][:3, 3], [0, 0, 1])
    with pytest.warns(URDFWarning, match=r"lower='-1.57.'"):
        m = load_urdf(arm(lower="-1.57."))
    assert m.limits[0, 0] == -1.57
    with pytest.raises(KinetreeError, match=r"joint 'j2': <origin> attribute xyz='\$\(optenv"):
        load_urdf(arm(xyz="$(optenv X 0 0 1)"))


def test_no_parser_noise(
    capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        load_urdf(arm(lower="1", upper="-1", mimic='<mimic joint="nowhere"/>'))
    out, err = capfd.readouterr()
    assert out == "" and err == ""
    assert not [r for r in caplog.records if r.name.startswith("yourdfpy")]


def _survey(files: list[Path]) -> tuple[int, list[str]]:
    """(files loaded, messages of the refused); every refusal names its file."""
    loaded, refused = 0, []
    for f in files:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                load_urdf(f, meshes=False)
            loaded += 1
        except KinetreeError as exc:
            assert str(f) in str(exc), str(exc)
            refused.append(str(exc))
    return loaded, refused


def test_every_pybullet_data_urdf_loads_or_is_refused_by_name() -> None:
    files = sorted(pybullet_data().rglob("*.urdf"))
    loaded, refused = _survey(files)
    # Refused (pybullet_data 3.2.7): a xacro $(optenv ...) value and a deformable body
    # without links; the two files with spherical joints load (ball joints).
    assert loaded >= len(files) - 2, refused
    assert not any("spherical" in r for r in refused), refused


def test_every_example_robot_data_urdf_loads() -> None:
    files = sorted(example_robot_data().rglob("*.urdf"))
    loaded, refused = _survey(files)
    assert loaded >= len(files) - 1, refused  # one file defines no links
    pin = pytest.importorskip("pinocchio")
    for f in files:
        try:
            pin.buildModelFromUrdf(str(f))
        except Exception:
            continue
        assert not any(str(f) in r for r in refused), f"Pinocchio loads {f}, kinetree refuses"
