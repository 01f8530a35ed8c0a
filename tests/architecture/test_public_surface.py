"""What a user sees of kinetree's objects: the names a module offers, the repr of shapes."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

import kinetree.errors
from kinetree.geometry import Box, Capsule, Mesh, Sphere


def test_errors_offers_exactly_what_it_lists():
    public = {n for n in dir(kinetree.errors) if not n.startswith("_")}
    assert public == set(kinetree.errors.__all__)
    ns: dict[str, object] = {}
    exec("from kinetree.errors import *", ns)
    assert set(ns) - {"__builtins__"} == set(kinetree.errors.__all__)
    for name in kinetree.errors.__all__:
        obj = getattr(kinetree.errors, name)
        assert name == "unknown_name" or issubclass(obj, kinetree.errors.KinetreeError)


def test_mesh_repr_is_short_and_reads_nothing(tmp_path: Path):
    big = Mesh(path="big.stl", vertices=np.zeros((200_000, 3)), faces=np.zeros((100_000, 3), int))
    assert len(repr(big)) < 120, repr(big)
    assert "200,000 vertices" in repr(big) and "100,000 faces" in repr(big)
    broken = tmp_path / "broken.stl"
    broken.write_bytes(b"not a mesh")
    lazy = Mesh(path="package://x/broken.stl", file=broken, lazy=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # reading the file would warn: it is not a mesh
        text = repr(lazy)
    assert "not read yet" in text and "package://x/broken.stl" in text
    assert lazy.__dict__["_unread"]


def test_primitive_reprs_name_their_sizes_and_place():
    T = np.eye(4)
    T[:3, 3] = (0.5, 0.0, 1.25)
    assert (
        repr(Box((0.1, 0.2, 0.3), T))
        == "Box(size=(0.1, 0.2, 0.3), at=(0.5, 0, 1.25), kind='visual')"
    )
    assert repr(Sphere(0.05, kind="collision")) == "Sphere(radius=0.05, kind='collision')"
    R = np.diag([1.0, -1.0, -1.0, 1.0])
    assert repr(Capsule(0.02, 0.3, R, name="arm")) == (
        "Capsule(radius=0.02, length=0.3, rotated, kind='visual', name='arm')"
    )
