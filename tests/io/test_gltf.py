"""glTF 2.0 characters (kinetree.io.gltf) against glTF's own rules.

The oracle (gltf_oracle.py) decodes accessors from pygltflib's raw JSON and buffers and
samples curves by the specification, independently of kinetree; real files are Khronos'
RiggedSimple and the glTF tutorial's SimpleSkin (tests/data/SOURCES.md); the
interpolation modes, matrices, several skins and the bad files are small files written
here.
"""

from __future__ import annotations

import base64
import json
import logging
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pygltflib")

from gltf_oracle import Gltf

import kinetree
from kinetree.errors import FileFormatError, KinetreeError, UnknownNameError
from kinetree.io.clip import CharacterFileWarning
from kinetree.io.gltf import load_gltf, read_gltf
from kinetree.io.skin import deform

DATA = Path(__file__).resolve().parents[1] / "data" / "gltf"
REAL = [DATA / "SimpleSkin.gltf", DATA / "RiggedSimple.gltf"]


def _size(clip: Any) -> float:
    p = clip.world_poses()[0, :, :3, 3]
    return max(float(np.max(np.ptp(p, axis=0))), 1.0)


def _compare_with_oracle(path: Path, clip: Any, animation: int = 0) -> tuple[float, float]:
    """Largest position error / size and rotation error of every joint at every frame."""
    g = Gltf(path)
    chans = g.channels(animation) if g.doc.animations else {}
    names = {(n.name or f"node_{i}"): i for i, n in enumerate(g.doc.nodes)}
    W = clip.world_poses()
    size = _size(clip)
    perr = rerr = 0.0
    for k, t in enumerate(clip.times):
        for j, name in enumerate(clip.joint_names):
            M = g.world(names[name], chans, float(t))
            R = M[:3, :3] / np.linalg.norm(M[:3, :3], axis=0)
            perr = max(perr, float(np.abs(M[:3, 3] - W[k, j, :3, 3]).max()) / size)
            rerr = max(rerr, float(np.abs(R - W[k, j, :3, :3]).max()))
    return perr, rerr


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.stem)
@pytest.mark.parametrize("fps", [None, 37.0])
def test_joint_world_transforms_equal_the_specification(path: Path, fps: float | None) -> None:
    clip = kinetree.read_clip(path, fps=fps)
    assert clip.format == "gltf" and clip.n_frames > 1
    perr, rerr = _compare_with_oracle(path, clip)
    assert perr < 1e-9 and rerr < 1e-9


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.stem)
def test_skinned_mesh_deforms_as_gltf_skinning(path: Path) -> None:
    clip = kinetree.read_clip(path)
    g = Gltf(path)
    chans = g.channels(0)
    gskin = g.doc.skins[0]
    ibm = g.accessor(gskin.inverseBindMatrices).reshape(-1, 4, 4).transpose(0, 2, 1)
    prim = g.doc.meshes[0].primitives[0]
    P = g.accessor(prim.attributes.POSITION)
    J = g.accessor(prim.attributes.JOINTS_0).astype(int)
    Wt = g.accessor(prim.attributes.WEIGHTS_0)
    (skin,) = clip.model.skins
    assert skin.n_vertices == len(P) and skin.n_faces * 3 == g.doc.accessors[prim.indices].count
    # RiggedSimple's bones carry a scale of 1 - 1.2e-7 (export noise) that rigid frames
    # do not hold: the mesh follows to that noise times its size.
    tol = 1e-12 if path.stem == "SimpleSkin" else 1e-6
    for k in range(0, clip.n_frames, max(1, clip.n_frames // 4)):
        t = float(clip.times[k])
        M = np.array([g.world(j, chans, t) @ ibm[a] for a, j in enumerate(gskin.joints)])
        ref = np.einsum("vs,vsij,vj->vi", Wt, M[J], np.c_[P, np.ones(len(P))])[:, :3]
        ref /= Wt.sum(axis=1, keepdims=True)
        got = deform(skin, clip.model, clip.q[k])
        assert np.abs(got - ref).max() < tol * _size(clip)


def test_names_rest_pose_and_load() -> None:
    model = kinetree.load(DATA / "RiggedSimple.gltf")
    assert model.frame_names == ("world", "node_2", "node_3")  # unnamed nodes
    assert model.metadata["format"] == "gltf" and model.length_scale == 1.0
    # The neutral configuration is the file's rest pose (the nodes' own TRS).
    clip = kinetree.read_clip(DATA / "RiggedSimple.gltf", times=[0.0])
    g = Gltf(DATA / "RiggedSimple.gltf")
    for name in ("node_2", "node_3"):
        M = g.world(int(name[-1]), {}, 0.0)
        T = model.fk(model.neutral(), name)
        assert np.allclose(T[:3, 3], M[:3, 3], atol=1e-12)
    assert clip.q.shape == (1, model.nq)


def test_up_and_scale_follow_the_bvh_conventions() -> None:
    base = kinetree.read_clip(DATA / "SimpleSkin.gltf")
    turned = kinetree.read_clip(DATA / "SimpleSkin.gltf", up="z", scale=100.0)
    Rx = np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]])
    p0 = base.world_poses()[..., :3, 3]
    p1 = turned.world_poses()[..., :3, 3]
    assert np.allclose(p1, 100.0 * p0 @ Rx.T, atol=1e-12)
    assert turned.model.length_scale == 100.0 and turned.model.metadata["up"] == "z"
    skin0, skin1 = base.model.skins[0], turned.model.skins[0]
    assert np.allclose(
        deform(skin1, turned.model, turned.q), 100.0 * deform(skin0, base.model, base.q) @ Rx.T
    )


# --- files written here: every interpolation, matrices, several skins, bad files ---------


def _doc(
    times: list[float],
    channels: list[tuple[int, str, str, list[list[float]]]],
    nodes: list[dict[str, Any]] | None = None,
    skins: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A glTF document with one embedded buffer: ``channels`` are (node, path,
    interpolation, values), all on the key ``times``."""
    blob = bytearray()
    views: list[dict[str, Any]] = []
    accessors: list[dict[str, Any]] = []

    def add(arr: np.ndarray, type_: str) -> int:
        a = np.ascontiguousarray(arr, dtype="<f4")
        views.append({"buffer": 0, "byteOffset": len(blob), "byteLength": a.nbytes})
        blob.extend(a.tobytes())
        accessors.append(
            {
                "bufferView": len(views) - 1,
                "componentType": 5126,
                "count": a.shape[0],
                "type": type_,
            }
        )
        return len(accessors) - 1

    t_acc = add(np.array(times)[:, None], "SCALAR")
    samplers, chans = [], []
    for node, path, interp, values in channels:
        out = add(np.array(values), "VEC4" if path == "rotation" else "VEC3")
        accessors[t_acc].update({"min": [min(times)], "max": [max(times)]})
        samplers.append({"input": t_acc, "output": out, "interpolation": interp})
        chans.append({"sampler": len(samplers) - 1, "target": {"node": node, "path": path}})
    if nodes is None:
        nodes = [
            {"name": "hips", "children": [1], "translation": [0.0, 1.0, 0.0]},
            {
                "name": "spine",
                "children": [2],
                "translation": [0.0, 0.5, 0.0],
                "scale": [2.0, 2.0, 2.0],
            },
            {"matrix": [0, 0, -1, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0.1, 0.4, 0.0, 1]},
        ]
    doc = {
        "asset": {"version": "2.0"},
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": nodes,
        "skins": skins if skins is not None else [{"name": "body", "joints": [0, 1, 2]}],
        "animations": [{"name": "move", "samplers": samplers, "channels": chans}],
        "accessors": accessors,
        "bufferViews": views,
        "buffers": [
            {
                "byteLength": len(blob),
                "uri": "data:application/octet-stream;base64," + base64.b64encode(blob).decode(),
            }
        ],
    }
    return doc


def _write(tmp_path: Path, doc: dict[str, Any], name: str = "made.gltf") -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    return p


def _rotations(n: int, seed: int) -> list[list[float]]:
    q = np.random.default_rng(seed).normal(size=(n, 4))
    return (q / np.linalg.norm(q, axis=1, keepdims=True)).tolist()


@pytest.mark.parametrize("interp", ["LINEAR", "STEP", "CUBICSPLINE"])
def test_every_interpolation_and_matrix_nodes(tmp_path: Path, interp: str) -> None:
    times = [0.0, 0.4, 1.1, 2.0]
    rng = np.random.default_rng(3)
    per_key = 3 if interp == "CUBICSPLINE" else 1
    n = len(times) * per_key
    doc = _doc(
        times,
        [
            (0, "translation", interp, rng.normal(size=(n, 3)).tolist()),
            (0, "rotation", interp, _rotations(n, 1)),
            (1, "rotation", interp, _rotations(n, 2)),
        ],
    )
    path = _write(tmp_path, doc)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clip = read_gltf(path, fps=30.0)
    assert clip.joint_names == ("hips", "spine", "node_2")
    assert clip.name == "move"
    perr, rerr = _compare_with_oracle(path, clip)
    assert perr < 1e-9 and rerr < 1e-9
    native = read_gltf(path)
    assert np.allclose(native.times, times, atol=1e-7)


def test_animated_inner_translation_becomes_a_free_joint(tmp_path: Path) -> None:
    times = [0.0, 1.0]
    doc = _doc(times, [(1, "translation", "LINEAR", [[0.0, 0.5, 0.0], [0.3, 0.2, 0.1]])])
    path = _write(tmp_path, doc)
    clip = read_gltf(path, fps=10.0)
    assert "spine_x" in clip.model.joint_names
    assert clip.model.default_active == ("rotations",)
    perr, rerr = _compare_with_oracle(path, clip)
    assert perr < 1e-9 and rerr < 1e-9


def test_animated_scale_warns_naming_the_joint(tmp_path: Path) -> None:
    doc = _doc([0.0, 1.0], [(1, "scale", "LINEAR", [[2.0, 2.0, 2.0], [3.0, 3.0, 3.0]])])
    with pytest.warns(CharacterFileWarning, match=r"animated scale on joints spine"):
        read_gltf(_write(tmp_path, doc))


def test_several_skeletons_are_chosen_by_name(tmp_path: Path) -> None:
    nodes = [
        {"name": "a_root", "children": [1]},
        {"name": "a_tip", "translation": [0.0, 1.0, 0.0]},
        {"name": "b_root", "children": [3], "translation": [5.0, 0.0, 0.0]},
        {"name": "b_tip", "translation": [0.0, 2.0, 0.0]},
    ]
    doc = _doc(
        [0.0, 1.0],
        [(3, "rotation", "LINEAR", _rotations(2, 4))],
        nodes=nodes,
        skins=[{"name": "left", "joints": [0, 1]}, {"name": "right", "joints": [2, 3]}],
    )
    doc["scenes"] = [{"nodes": [0, 2]}]
    path = _write(tmp_path, doc)
    with pytest.raises(KinetreeError, match=r"2 skeletons.*left.*right"):
        load_gltf(path)
    right = kinetree.read_clip(path, skeleton="right")
    assert right.joint_names == ("b_root", "b_tip")
    perr, rerr = _compare_with_oracle(path, right)
    assert perr < 1e-9 and rerr < 1e-9
    with pytest.raises(UnknownNameError, match=r"its skins are: left, right"):
        load_gltf(path, skeleton="middle")


def test_a_skin_over_two_node_trees_is_one_skeleton(tmp_path: Path) -> None:
    """A skin whose joints hang from two top nodes (as write_clip writes a model with two
    top frames) is one skeleton with two top joints, read and written back."""
    nodes = [
        {"name": "a", "children": [1], "translation": [0.0, 1.0, 0.0]},
        {"name": "a_tip", "translation": [0.0, 0.5, 0.0]},
        {"name": "b", "translation": [1.0, 0.0, 0.0]},
    ]
    doc = _doc(
        [0.0, 1.0],
        [(2, "rotation", "LINEAR", _rotations(2, 8))],
        nodes=nodes,
        skins=[{"name": "both", "joints": [0, 1, 2]}],
    )
    doc["scenes"][0]["nodes"] = [0, 2]
    path = _write(tmp_path, doc)
    clip = kinetree.read_clip(path)
    assert set(clip.joint_names) == {"a", "a_tip", "b"}
    perr, rerr = _compare_with_oracle(path, clip)
    assert perr < 1e-9 and rerr < 1e-9
    kinetree.write_clip(clip, tmp_path / "back.glb")
    back = kinetree.read_clip(tmp_path / "back.glb")
    assert np.abs(back.world_poses(clip.joint_names) - clip.world_poses()).max() < 1e-12


def test_animation_by_name_or_index(tmp_path: Path) -> None:
    path = _write(tmp_path, _doc([0.0, 1.0], [(0, "rotation", "LINEAR", _rotations(2, 5))]))
    assert read_gltf(path, "move").name == read_gltf(path, 0).name == "move"
    with pytest.raises(UnknownNameError, match=r"its animations are: move"):
        read_gltf(path, "walk")
    with pytest.raises(UnknownNameError, match=r"out of range"):
        read_gltf(path, 3)


# --- round trips -------------------------------------------------------------------------


def _opens_cleanly(path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """pygltflib loads the file with no warning and no log message."""
    import pygltflib

    caplog.clear()
    with warnings.catch_warnings(), caplog.at_level(logging.DEBUG, logger="pygltflib"):
        warnings.simplefilter("error")
        doc = pygltflib.GLTF2().load(str(path))
    assert doc is not None and doc.asset.version == "2.0"
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []


#: Round trips are exact to this, relative to the skeleton's size (float64 beside float32).
EXACT = 1e-9
#: What a plain float32 reading of a written file gives.
FLOAT32 = 1e-6


def _float32_reading_agrees(path: Path, clip: Any) -> None:
    """The oracle reads only the float32 accessors (as every other reader): the poses
    agree with kinetree's exact reading to float32's precision."""
    perr, rerr = _compare_with_oracle(path, clip)
    assert perr < FLOAT32 and rerr < FLOAT32


def _animated(path: Path) -> dict[tuple[str, str], tuple[np.ndarray, np.ndarray]]:
    """(node name, path) -> (key times, values) as the raw float32 accessors hold them."""
    g = Gltf(path)
    names = [(n.name or f"node_{i}") for i, n in enumerate(g.doc.nodes)]
    return {(names[n], p): (t, v) for (n, p), (t, v, _) in g.channels(0).items()}


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.stem)
@pytest.mark.parametrize("suffix", [".glb", ".gltf"])
def test_gltf_round_trip(
    tmp_path: Path, path: Path, suffix: str, caplog: pytest.LogCaptureFixture
) -> None:
    clip = kinetree.read_clip(path)
    out = tmp_path / f"back{suffix}"
    kinetree.write_clip(clip, out)
    _opens_cleanly(out, caplog)
    back = kinetree.read_clip(out)
    assert back.joint_names == clip.joint_names
    assert np.abs(back.times - clip.times).max() <= 1e-12
    size = _size(clip)
    assert np.abs(back.world_poses() - clip.world_poses()).max() < EXACT * size
    (s0,), (s1,) = clip.model.skins, back.model.skins
    assert np.array_equal(s0.faces, s1.faces)
    assert s1.base_color == pytest.approx(s0.base_color, abs=1e-7)
    assert np.abs(deform(s1, back.model, back.q) - deform(s0, clip.model, clip.q)).max() < (
        EXACT * size
    )
    _float32_reading_agrees(out, back)
    # The float32 data read is written back bit for bit (a key channel of the file,
    # quaternions up to their sign).
    before, after = _animated(path), _animated(out)
    for key, (t, v) in before.items():
        if key not in after:  # a channel at its rest value throughout
            continue
        t1, v1 = after[key]
        assert np.array_equal(t1.astype(np.float32), t.astype(np.float32))
        v32, w32 = v.astype(np.float32), v1.astype(np.float32)
        same = np.all(w32 == v32, axis=1) | np.all(w32 == -v32, axis=1)
        assert same.all(), key


def test_bvh_to_gltf_to_bvh(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    walk = Path(__file__).resolve().parents[1] / "data/bvh/cmu_12_01_walk.bvh"
    bvh = kinetree.Clip.from_bvh(kinetree.read_bvh(walk).slice(0, 60))
    kinetree.write_clip(bvh.to_motion(), tmp_path / "walk.glb")
    _opens_cleanly(tmp_path / "walk.glb", caplog)
    # glTF is in metres: read it back in the BVH file's unit.
    g = kinetree.read_clip(tmp_path / "walk.glb", scale=bvh.model.length_scale)
    assert g.evenly_spaced and g.fps == pytest.approx(bvh.fps, rel=1e-12)
    kinetree.write_clip(g, tmp_path / "walk.bvh")
    back = kinetree.read_clip(tmp_path / "walk.bvh")
    size = _size(bvh)
    for c in (g, back):
        err = np.abs(c.world_poses(bvh.joint_names) - bvh.world_poses()).max()
        assert err < EXACT * size
    # Any other reader sees float32 data that agree to float32's precision.
    metres = kinetree.read_clip(tmp_path / "walk.glb")
    _float32_reading_agrees(tmp_path / "walk.glb", metres)


def test_edited_float32_data_is_read_not_the_stale_float64(tmp_path: Path) -> None:
    walk = Path(__file__).resolve().parents[1] / "data/bvh/cmu_12_01_walk.bvh"
    clip = kinetree.Clip.from_bvh(kinetree.read_bvh(walk).slice(0, 5))
    out = tmp_path / "walk.gltf"
    kinetree.write_clip(clip, out)
    doc = json.loads(out.read_text())
    exact = [a for a in doc["accessors"] if "kinetree_float64" in a.get("extras", {})]
    assert exact, "the writer stores float64 values beside float32 ones"
    # Edit the first animated translation's first key in the float32 data alone, as a
    # tool that knows nothing of the extras would.
    anim = doc["animations"][0]
    ch = next(c for c in anim["channels"] if c["target"]["path"] == "translation")
    acc = doc["accessors"][anim["samplers"][ch["sampler"]]["output"]]
    assert "kinetree_float64" in acc["extras"]
    view = doc["bufferViews"][acc["bufferView"]]
    uri = doc["buffers"][0]["uri"]
    head, body = uri.split(",", 1)
    blob = bytearray(base64.b64decode(body))
    start = view.get("byteOffset", 0) + acc.get("byteOffset", 0)
    x = np.frombuffer(blob, dtype="<f4", count=1, offset=start)[0]
    blob[start : start + 4] = np.float32(x + 0.25).tobytes()
    doc["buffers"][0]["uri"] = head + "," + base64.b64encode(bytes(blob)).decode()
    edited = _write(tmp_path, doc, "edited.gltf")
    unit = clip.model.length_scale
    a = kinetree.read_clip(out, scale=unit)
    b = kinetree.read_clip(edited, scale=unit)
    node = doc["nodes"][ch["target"]["node"]]["name"]
    j = a.joint_names.index(node)
    moved = b.world_poses()[0, j, :3, 3] - a.world_poses()[0, j, :3, 3]
    # The edit shows (0.25 m in the file's x), up to float32 rounding of the edit.
    assert np.linalg.norm(moved) == pytest.approx(0.25 * unit, rel=1e-6)
    # Frames the edit did not touch still read exactly.
    assert np.abs(b.world_poses()[1:] - a.world_poses()[1:]).max() < 1e-12 * _size(a)


# --- bad files ---------------------------------------------------------------------------


def _good(tmp_path: Path) -> dict[str, Any]:
    return _doc([0.0, 1.0], [(0, "rotation", "LINEAR", _rotations(2, 6))])


def test_truncated_glb(tmp_path: Path) -> None:
    clip = kinetree.read_clip(DATA / "RiggedSimple.gltf")
    full = tmp_path / "full.glb"
    kinetree.write_clip(clip, full)
    data = full.read_bytes()
    for cut in (len(data) // 2, 30, 0):
        p = tmp_path / f"cut{cut}.glb"
        p.write_bytes(data[:cut])
        with pytest.raises(FileFormatError, match=r"truncated|cannot be parsed|empty|past"):
            kinetree.read_clip(p)


def test_skin_with_a_missing_joint(tmp_path: Path) -> None:
    doc = _good(tmp_path)
    doc["skins"][0]["joints"] = [0, 1, 7]
    with pytest.raises(FileFormatError, match=r"joint 7, a node that does not exist"):
        load_gltf(_write(tmp_path, doc))


def test_nan_in_a_curve(tmp_path: Path) -> None:
    doc = _doc([0.0, 1.0], [(0, "translation", "LINEAR", [[0.0, 0.0, 0.0], [np.nan, 0, 0]])])
    with pytest.raises(FileFormatError, match=r"NaN"):
        load_gltf(_write(tmp_path, doc))


def test_unsupported_required_extension(tmp_path: Path) -> None:
    doc = _good(tmp_path)
    doc["extensionsUsed"] = doc["extensionsRequired"] = ["KHR_draco_mesh_compression"]
    with pytest.raises(
        FileFormatError, match=r"requires the extension 'KHR_draco_mesh_compression'"
    ):
        load_gltf(_write(tmp_path, doc))


def test_skeleton_loop(tmp_path: Path) -> None:
    doc = _good(tmp_path)
    doc["nodes"][2]["children"] = [0]
    with pytest.raises(FileFormatError, match=r"loop"):
        load_gltf(_write(tmp_path, doc))


def test_accessor_past_its_buffer(tmp_path: Path) -> None:
    doc = _good(tmp_path)
    doc["accessors"][1]["count"] = 1000
    with pytest.raises(FileFormatError, match=r"reads .* bytes of a"):
        read_gltf(_write(tmp_path, doc))


def test_missing_bin_file(tmp_path: Path) -> None:
    doc = _good(tmp_path)
    doc["buffers"][0]["uri"] = "gone.bin"
    with pytest.raises(FileFormatError, match=r"'gone.bin' cannot be read"):
        read_gltf(_write(tmp_path, doc))


def test_external_bin_file(tmp_path: Path) -> None:
    doc = _good(tmp_path)
    uri = doc["buffers"][0]["uri"]
    (tmp_path / "data.bin").write_bytes(base64.b64decode(uri.split(",", 1)[1]))
    doc["buffers"][0]["uri"] = "data.bin"
    embedded = read_gltf(_write(tmp_path, _good(tmp_path), "a.gltf"))
    external = read_gltf(_write(tmp_path, doc, "b.gltf"))
    assert np.array_equal(embedded.q, external.q)


# --- a full-size human character ---------------------------------------------------------

KENNEY = DATA / "kenney_character.glb"


def test_a_human_character_posed_with_the_human_prior_and_written_back(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Kenney's character (tests/data/SOURCES.md): its body parts are found by name, the
    right hand is moved by IK with the human prior filling in the rest, and the pose goes
    out as .glb (exact) and .usda (float32) and back with the skinned mesh."""
    from kinetree import Pose, Position
    from kinetree.anim import Motion
    from kinetree.io.body_parts import find_body_parts

    model = kinetree.load(KENNEY)
    (skin,) = model.skins
    assert skin.n_vertices > 500 and model.metadata["format"] == "gltf"
    # The rest pose is the file's, by glTF's rules (the oracle).
    g = Gltf(KENNEY)
    index = {n.name: i for i, n in enumerate(g.doc.nodes)}
    q0 = model.neutral()
    size = float(np.ptp(model.fk_all(q0)[:, :3, 3], axis=0).max())
    for name in ("Hips", "Head", "LeftHand", "RightFoot"):
        M = g.world(index[name], {}, 0.0)
        assert np.abs(model.fk(q0, name)[:3, 3] - M[:3, 3]).max() < 1e-9 * size
    parts = find_body_parts(model)
    assert {"pelvis", "head", "wrist_l", "wrist_r", "ankle_l", "ankle_r"} <= set(parts)
    targets: dict[str, Any] = {parts["pelvis"]: Pose(model.fk(q0, parts["pelvis"]))}
    for role in ("ankle_l", "ankle_r", "wrist_l"):
        targets[parts[role]] = Position(model.fk(q0, parts[role])[:3, 3])
    goal = model.fk(q0, parts["wrist_r"])[:3, 3] + np.array([0.0, 0.2, 0.1]) * size
    targets[parts["wrist_r"]] = Position(goal)
    result = model.ik(targets, prior="human")
    assert result.success
    q = result.q
    # Checked by FK, not by the solver's word.
    assert np.linalg.norm(model.fk(q, parts["wrist_r"])[:3, 3] - goal) < 1e-5 * size
    for role in ("ankle_l", "ankle_r", "wrist_l"):
        assert np.linalg.norm(
            model.fk(q, parts[role])[:3, 3] - model.fk(q0, parts[role])[:3, 3]
        ) < (1e-5 * size)
    posed = Motion(model=model, q=np.stack([q0, q]), fps=30.0, name="reach")
    clip = kinetree.Clip.from_motion(posed)
    kinetree.write_clip(posed, tmp_path / "reach.glb")
    _opens_cleanly(tmp_path / "reach.glb", caplog)
    back = kinetree.read_clip(tmp_path / "reach.glb")
    names = back.joint_names
    assert np.abs(back.world_poses() - clip.world_poses(names)).max() < EXACT * size
    assert np.abs(
        deform(back.model.skins[0], back.model, back.q) - deform(skin, model, clip.q)
    ).max() < (EXACT * size)
    pytest.importorskip("pxr")
    kinetree.write_clip(posed, tmp_path / "reach.usda")
    usd = kinetree.read_clip(tmp_path / "reach.usda")
    leaves = [n.rsplit("/", 1)[-1] for n in usd.joint_names]
    # SkelAnimation holds float3 translations and quatf rotations.
    assert np.abs(usd.world_poses() - clip.world_poses(leaves)).max() < FLOAT32 * size
    assert usd.model.skins and usd.model.skins[0].n_vertices == skin.n_vertices
