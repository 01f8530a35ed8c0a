"""kinetree._disk: arrays computed once per machine (sphere fits, mesh hulls)."""

import numpy as np
import pytest

from kinetree import _disk
from kinetree.geometry import Mesh


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("KINETREE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(_disk, "_MEMORY", {})
    return tmp_path


def test_computed_once_then_read_from_disk(cache, monkeypatch):
    calls = []

    def compute():
        calls.append(1)
        return {"a": np.arange(5.0), "b": np.eye(3)}

    key = _disk.digest("test-v1", (np.ones(4),))
    first = _disk.kept_arrays("things", key, compute)
    assert (cache / "things" / f"{key}.npz").is_file()
    monkeypatch.setattr(_disk, "_MEMORY", {})  # a new process
    again = _disk.kept_arrays("things", key, lambda: pytest.fail("computed again"))
    assert calls == [1]
    for name in ("a", "b"):
        np.testing.assert_array_equal(again[name], first[name])


def test_keys_differ_by_label_bytes_shape_and_dtype():
    a = np.zeros(4)
    keys = {
        _disk.digest("x", (a,)),
        _disk.digest("y", (a,)),
        _disk.digest("x", (a.reshape(2, 2),)),
        _disk.digest("x", (a.astype(np.float32),)),
        _disk.digest("x", (a + 1e-300,)),
    }
    assert len(keys) == 5


def test_damaged_file_is_computed_again(cache):
    key = _disk.digest("test-v1", (np.ones(2),))
    path = cache / "things" / f"{key}.npz"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not an npz file")
    out = _disk.kept_arrays("things", key, lambda: {"a": np.ones(2)})
    np.testing.assert_array_equal(out["a"], np.ones(2))
    with np.load(path) as z:  # replaced by a good one
        np.testing.assert_array_equal(z["a"], np.ones(2))


def test_unwritable_folder_still_computes(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the folder would be")
    monkeypatch.setenv("KINETREE_CACHE_DIR", str(blocker))
    monkeypatch.setattr(_disk, "_MEMORY", {})
    out = _disk.kept_arrays("things", "k", lambda: {"a": np.ones(3)})
    np.testing.assert_array_equal(out["a"], np.ones(3))


def test_foot_hull_corners_are_qhulls_and_kept(cache, monkeypatch):
    pytest.importorskip("scipy")
    from scipy.spatial import ConvexHull

    from kinetree.anim.retarget import feet

    rng = np.random.default_rng(3)
    v = rng.normal(size=(400, 3)) * [0.1, 0.05, 0.02]
    mesh = Mesh(path="foot.stl", vertices=v, faces=np.zeros((0, 3), np.int64), kind="collision")
    corners = feet._hull(mesh)
    np.testing.assert_array_equal(corners, v[ConvexHull(v).vertices])
    # Another process, another mesh object with the same vertices: read back, no qhull.
    monkeypatch.setattr(_disk, "_MEMORY", {})
    feet._HULLS.clear()
    monkeypatch.setattr("scipy.spatial.ConvexHull", lambda *a: pytest.fail("hull again"))
    same = Mesh(
        path="foot.stl", vertices=v.copy(), faces=np.zeros((0, 3), np.int64), kind="collision"
    )
    np.testing.assert_array_equal(feet._hull(same), corners)
