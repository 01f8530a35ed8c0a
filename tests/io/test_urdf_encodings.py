"""A URDF file is read in the encoding it states (its byte-order mark, else its XML
declaration), as every XML parser does: names with accents keep them."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import kinetree.io
from kinetree.errors import FileFormatError

_BODY = """<robot name="bras">
  <link name="épaule"/>
  <link name="coude"/>
  <joint name="rotation_à_gauche" type="revolute">
    <parent link="épaule"/><child link="coude"/>
    <origin xyz="0 0 0.3"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/>
  </joint>
</robot>
"""


def _names(path: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
    m = kinetree.io.load_urdf(path)
    return m.frame_names, m.joint_names


def _expected(data: bytes) -> tuple[set[str], set[str]]:
    """The link and joint names as the standard library's XML parser reads the bytes
    (it honours the mark and the declaration): the independent oracle."""
    root = ET.fromstring(data)
    return {el.get("name", "") for el in root.iter("link")}, {
        el.get("name", "") for el in root.iter("joint")
    }


@pytest.mark.parametrize(
    ("declaration", "codec", "bom"),
    [
        ('<?xml version="1.0" encoding="ISO-8859-1"?>\n', "latin-1", b""),
        ("<?xml version='1.0' encoding='windows-1252'?>\n", "cp1252", b""),
        ('<?xml version="1.0" encoding="UTF-16"?>\n', "utf-16-le", b"\xff\xfe"),
        ('<?xml version="1.0" encoding="UTF-16"?>\n', "utf-16-be", b"\xfe\xff"),
        ('<?xml version="1.0" encoding="UTF-8"?>\n', "utf-8", b"\xef\xbb\xbf"),
        ("", "utf-8", b""),
    ],
)
def test_declared_encoding_is_honoured(
    tmp_path: Path, declaration: str, codec: str, bom: bytes
) -> None:
    data = bom + (declaration + _BODY).encode(codec)
    path = tmp_path / "bras.urdf"
    path.write_bytes(data)
    links, joints = _expected(data)
    frames, joint_names = _names(path)
    assert links <= set(frames)
    assert "épaule" in frames
    assert set(joint_names) == joints == {"rotation_à_gauche"}
    assert not any("\ufffd" in n for n in (*frames, *joint_names))


def test_unknown_declared_encoding_is_named(tmp_path: Path) -> None:
    path = tmp_path / "odd.urdf"
    path.write_bytes(('<?xml version="1.0" encoding="klingon-8"?>\n' + _BODY).encode("latin-1"))
    with pytest.raises(FileFormatError, match="klingon-8"):
        kinetree.io.load_urdf(path)


def test_bytes_not_in_declared_encoding_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "lies.urdf"
    path.write_bytes(('<?xml version="1.0" encoding="US-ASCII"?>\n' + _BODY).encode("utf-8"))
    with pytest.raises(FileFormatError, match="US-ASCII"):
        kinetree.io.load_urdf(path)
