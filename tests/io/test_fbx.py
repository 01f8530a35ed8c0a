"""FBX reading (kinetree.io.fbx) checked against ufbx's own evaluation of the same files.

The oracle runs in a subprocess of its own (ufbx's binding may crash when its objects are
freed): it loads the file, evaluates the scene at the same times with skinning, and prints
every node's ``node_to_world`` and every skinned mesh's vertex positions. The files are
real exports from the ufbx project's test data (tests/data/SOURCES_FBX.md).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ufbx")

import kinetree
from kinetree.errors import FileFormatError, InvalidValueError, UnknownNameError
from kinetree.io.fbx import FBXWarning, load_fbx, read_fbx_clip
from kinetree.io.skin import deform

DATA = Path(__file__).resolve().parents[1] / "data" / "fbx"
SAUSAGE_BIN = DATA / "maya_game_sausage_7500_binary_wiggle.fbx"
SAUSAGE_ASCII = DATA / "maya_game_sausage_7500_ascii_wiggle.fbx"
KENNEY = DATA / "maya_kenney_character_7700_binary.fbx"

_ORACLE = textwrap.dedent(
    """
    import json, sys, os
    import ufbx
    path, times = sys.argv[1], json.loads(sys.argv[2])
    keep = []
    scene = ufbx.load_file(path); keep.append(scene)
    def mat(m):
        return [[m.c0.x, m.c1.x, m.c2.x, m.c3.x], [m.c0.y, m.c1.y, m.c2.y, m.c3.y],
                [m.c0.z, m.c1.z, m.c2.z, m.c3.z]]
    stacks = scene.anim_stacks; keep.append(stacks)
    stack = stacks[0]; keep.append(stack)
    anim = stack.anim; keep.append(anim)
    out = {"unit": scene.settings.unit_meters, "frames": []}
    for t in times:
        ev = ufbx.evaluate_scene(scene, anim, t, evaluate_skinning=True); keep.append(ev)
        nodes = ev.nodes; keep.append(nodes)
        frame = {"nodes": {}, "meshes": {}}
        for i in range(len(nodes)):
            n = nodes[i]; keep.append(n)
            frame["nodes"][n.name] = mat(n.node_to_world)
            mesh = n.mesh; keep.append(mesh)
            if mesh is not None and len(mesh.skin_deformers):
                pos = mesh.skinned_position; keep.append(pos)
                vals = pos.values; keep.append(vals)
                frame["meshes"][n.name] = [[v.x, v.y, v.z] for v in vals]
                frame["meshes"][n.name + "#local"] = bool(mesh.skinned_is_local)
                frame["meshes"][n.name + "#g2w"] = mat(n.geometry_to_world)
        out["frames"].append(frame)
    sys.stdout.write(json.dumps(out)); sys.stdout.flush(); os._exit(0)
    """
)


def _oracle(path: Path, times: np.ndarray) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", _ORACLE, str(path), json.dumps([float(t) for t in times])],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return json.loads(done.stdout)


def _polar(L: np.ndarray) -> np.ndarray:
    U, _, Vt = np.linalg.svd(L)
    return U @ Vt


@pytest.fixture(scope="module")
def sausage() -> kinetree.Clip:
    return read_fbx_clip(SAUSAGE_BIN, fps=24)


@pytest.mark.parametrize("path", [SAUSAGE_BIN, SAUSAGE_ASCII, KENNEY], ids=lambda p: p.stem)
def test_joint_world_poses_equal_ufbx(path: Path) -> None:
    """Every joint's world pose at sampled times equals ufbx's evaluated node_to_world
    (positions in metres by the file's unit; frames: the rotation part) to 1e-9."""
    times = np.array([0.0, 0.1234, 0.5, 0.77])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FBXWarning)
        clip = read_fbx_clip(path, times=times)
    ref = _oracle(path, times)
    unit = ref["unit"]
    W = clip.world_poses()
    size = np.ptp(W[..., :3, 3].reshape(-1, 3), axis=0).max()
    assert size > 0
    checked = 0
    for k in range(len(times)):
        nodes = ref["frames"][k]["nodes"]
        for j, name in enumerate(clip.joint_names):
            M = np.asarray(nodes[name])
            np.testing.assert_allclose(W[k, j, :3, 3], unit * M[:, 3], atol=1e-9 * size)
            np.testing.assert_allclose(W[k, j, :3, :3], _polar(M[:, :3]), atol=1e-9)
            checked += 1
    assert checked == len(times) * len(clip.joint_names) >= 16
    assert np.ptp(W[..., :3, 3], axis=0).max() > 1e-3 * size  # the take moves the joints


def test_skinned_mesh_equals_ufbx_skinning() -> None:
    """The skin deformed by linear blend skinning (kinetree.io.skin.deform) at the clip's
    frames equals ufbx's own skinned vertex positions, in metres."""
    times = np.array([0.0, 0.3, 0.6])
    clip = read_fbx_clip(KENNEY, times=times)
    (skin,) = clip.model.skins
    assert skin.n_vertices > 500 and skin.n_faces > 1000 and len(skin.joint_names) > 20
    ref = _oracle(KENNEY, times)
    unit = ref["unit"]
    for k in range(len(times)):
        meshes = ref["frames"][k]["meshes"]
        P = np.asarray(meshes[skin.name])
        if not meshes[skin.name + "#local"]:
            pass  # world positions already
        else:
            G = np.asarray(meshes[skin.name + "#g2w"])
            P = P @ G[:, :3].T + G[:, 3]
        V = deform(skin, clip.model, clip.q[k])
        size = np.ptp(V, axis=0).max()
        # ufbx stores skinned positions as float32 in part: 1e-6 of the mesh size
        np.testing.assert_allclose(V, unit * P, atol=1e-6 * size)


def test_binary_and_ascii_exports_agree(sausage: kinetree.Clip) -> None:
    other = read_fbx_clip(SAUSAGE_ASCII, fps=24)
    assert other.joint_names == sausage.joint_names == ("joint1", "joint2", "joint3", "joint4")
    np.testing.assert_allclose(other.world_poses(), sausage.world_poses(), atol=1e-6)


def test_units_axes_and_takes(sausage: kinetree.Clip) -> None:
    assert sausage.name == "wiggle" and sausage.format == "fbx"
    assert sausage.fps == pytest.approx(24.0)
    by_index = read_fbx_clip(SAUSAGE_BIN, 0, fps=24)
    np.testing.assert_array_equal(by_index.q, sausage.q)
    with pytest.raises(UnknownNameError, match="'wiggle'"):
        read_fbx_clip(SAUSAGE_BIN, "walk")
    with pytest.raises(UnknownNameError):
        read_fbx_clip(SAUSAGE_BIN, 3)
    # Maya writes centimetres: the joints 1 unit apart are 0.01 m apart here
    W = sausage.world_poses()[0]
    assert np.linalg.norm(W[1, :3, 3] - W[0, :3, 3]) == pytest.approx(0.01, rel=1e-9)
    # up="z" turns the Y-up file: every position (x, y, z) goes to (x, -z, y)
    up = read_fbx_clip(SAUSAGE_BIN, fps=24, up="z", scale=2.0)
    Wz = up.world_poses()
    Wy = sausage.world_poses()
    np.testing.assert_allclose(Wz[..., 0, 3], 2 * Wy[..., 0, 3], atol=1e-12)
    np.testing.assert_allclose(Wz[..., 1, 3], -2 * Wy[..., 2, 3], atol=1e-12)
    np.testing.assert_allclose(Wz[..., 2, 3], 2 * Wy[..., 1, 3], atol=1e-12)
    with pytest.raises(InvalidValueError, match="up"):
        read_fbx_clip(SAUSAGE_BIN, up="x")


def test_unit_node_scaled_by_100_is_baked() -> None:
    """Kenney's character hangs from a node scaled by 100 in a centimetre file: the rigid
    skeleton stands at human size (about 1.5 to 2.5 m in Maya units of 1 cm x 100)."""
    model = load_fbx(KENNEY)
    assert "Hips" in model.frame_names
    T = model.fk_all(model.neutral())
    height = np.ptp(T[:, :3, 3], axis=0).max()
    assert 0.5 < height < 5.0
    (skin,) = model.skins
    # the bind mesh is as tall as the skeleton (both in metres)
    assert np.ptp(skin.vertices, axis=0).max() == pytest.approx(height, rel=0.3)


def test_segment_scale_compensation_is_baked(sausage: kinetree.Clip) -> None:
    """The sausage's joints use Maya's segment scale compensation (ufbx inherit mode
    'ignore parent scale'); test_joint_world_poses_equal_ufbx checks their poses, this
    that the clip's model is the plain rigid chain of ball joints."""
    m = sausage.model
    assert m.nq == 7 + 3 * 4  # a free root (7 coordinates), three ball joints (4 each)
    assert [m.q_slice(n).stop - m.q_slice(n).start for n in sausage.joint_names] == [7, 4, 4, 4]


def test_bad_files_raise_file_format_error(tmp_path: Path) -> None:
    data = SAUSAGE_BIN.read_bytes()
    cut = tmp_path / "truncated.fbx"
    cut.write_bytes(data[: len(data) // 3])
    empty = tmp_path / "empty.fbx"
    empty.write_bytes(b"")
    junk = tmp_path / "junk.fbx"
    junk.write_bytes(b"this is not an FBX file\n" * 40)
    for bad in (cut, empty, junk, tmp_path / "missing.fbx"):
        with pytest.raises(FileFormatError):
            read_fbx_clip(bad)


def test_nan_in_curves_raises(tmp_path: Path) -> None:
    """Key values written as NaN in the ASCII take: FileFormatError naming NaN."""
    lines = SAUSAGE_ASCII.read_text(encoding="utf-8", errors="replace").splitlines()
    for i in range(len(lines) - 1):
        if "KeyValueFloat: *" in lines[i]:
            values = lines[i + 1].split(",")
            values[5] = "nan"
            lines[i + 1] = ",".join(values)
    bad = tmp_path / "nan.fbx"
    bad.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(FileFormatError, match="NaN"):
        read_fbx_clip(bad, fps=24)


def test_through_load_and_read_clip() -> None:
    """The FORMATS row: kinetree.load and kinetree.read_clip reach the FBX reader, with
    its options (up, scale) and no others."""
    clip = kinetree.read_clip(SAUSAGE_BIN, "wiggle", fps=24, scale=2.0)
    direct = read_fbx_clip(SAUSAGE_BIN, fps=24, scale=2.0)
    np.testing.assert_array_equal(clip.q, direct.q)
    model = kinetree.load(SAUSAGE_BIN)
    assert model.metadata["format"] == "fbx" and len(model.skins) == 1
    with pytest.raises(InvalidValueError, match="skeleton"):
        kinetree.read_clip(SAUSAGE_BIN, skeleton="joint1")


def test_a_crash_of_the_reader_is_a_file_format_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """ufbx's binding may end its process with a segmentation fault: the reader's child
    process dying by a signal is a FileFormatError saying so, not the caller's death."""
    real = subprocess.run

    def killed(args, **kwargs):  # the child, made to die by SIGSEGV before reading
        code = "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"
        return real([sys.executable, "-c", code], **kwargs)

    monkeypatch.setattr("kinetree.io._child.subprocess.run", killed)
    with pytest.raises(FileFormatError, match="crashed"):
        read_fbx_clip(SAUSAGE_BIN)
