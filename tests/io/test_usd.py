"""USD characters (kinetree.io.usd) against usd-core's own evaluation.

The real file is OpenUSD's UsdSkel linear-blend-skinning test stage (reduced; see
tests/data/SOURCES.md). UsdSkel's ``ComputeJointWorldTransforms`` composes joint
transforms from float components in single precision, so it is held to 1e-6; the same
poses recomposed in double precision from the authored values that USD resolves at each
time (``Attribute.Get``) are held to 1e-9.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pxr")

from pxr import Usd, UsdGeom, UsdSkel, UsdValidation

import kinetree
from kinetree.errors import FileFormatError, KinetreeError, UnknownNameError
from kinetree.io.skin import deform
from kinetree.io.usd import load_usd, read_usd

DATA = Path(__file__).resolve().parents[1] / "data"
LBS = DATA / "usd" / "lbs.usda"


def _query(path: Path) -> tuple[Usd.Stage, UsdSkel.SkeletonQuery]:
    stage = Usd.Stage.Open(str(path))
    cache = UsdSkel.Cache()
    root = UsdSkel.Root(stage.GetPrimAtPath("/Root"))
    cache.Populate(root, Usd.TraverseInstanceProxies())
    skel = UsdSkel.Skeleton(stage.GetPrimAtPath("/Root/Skeleton"))
    return stage, cache.GetSkelQuery(skel)


def _m(g: object) -> np.ndarray:
    return np.array(g, dtype=np.float64).reshape(4, 4).T


def _quat(q: object) -> np.ndarray:
    w = q.GetReal()  # type: ignore[attr-defined]
    x, y, z = q.GetImaginary()  # type: ignore[attr-defined]
    n = np.sqrt(w * w + x * x + y * y + z * z)
    w, x, y, z = w / n, x / n, y / n, z / n
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def _size(clip: kinetree.Clip) -> float:
    p = clip.world_poses()[0, :, :3, 3]
    return max(float(np.max(np.ptp(p, axis=0))), 1.0)


@pytest.mark.parametrize("fps", [None, 50.0])
def test_joint_world_transforms_equal_usdskel(fps: float | None) -> None:
    clip = kinetree.read_clip(LBS, fps=fps)
    assert clip.joint_names == ("joint1", "joint1/joint2", "joint1/joint2/joint3")
    assert clip.fps == pytest.approx(24.0 if fps is None else fps)
    stage, query = _query(LBS)
    anim = stage.GetPrimAtPath("/Root/Skeleton/Animation")
    t_attr, r_attr = anim.GetAttribute("translations"), anim.GetAttribute("rotations")
    parents = list(query.GetTopology().GetParentIndices())
    W = clip.world_poses()
    size = _size(clip)
    single = double = 0.0
    for k, t in enumerate(clip.times):
        code = float(t) * stage.GetTimeCodesPerSecond()
        ref = query.ComputeJointWorldTransforms(UsdGeom.XformCache(code), False)
        trans, rots = t_attr.Get(code), r_attr.Get(code)
        world: list[np.ndarray] = []
        for j in range(len(ref)):
            single = max(single, float(np.abs(_m(ref[j]) - W[k, j]).max()) / size)
            L = np.eye(4)
            L[:3, :3] = _quat(rots[j])
            L[:3, 3] = tuple(trans[j])
            world.append(L if parents[j] < 0 else world[parents[j]] @ L)
            double = max(double, float(np.abs(world[j] - W[k, j]).max()) / size)
    assert single < 1e-6
    assert double < 1e-9


def test_skinned_mesh_deforms_as_usdskel_lbs() -> None:
    clip = kinetree.read_clip(LBS)
    (skin,) = clip.model.skins
    stage, query = _query(LBS)
    mesh = stage.GetPrimAtPath("/Root/Mesh")
    points = np.array(UsdGeom.Mesh(mesh).GetPointsAttr().Get(), dtype=np.float64)
    api = UsdSkel.BindingAPI(mesh)
    ji = np.array(api.GetJointIndicesPrimvar().Get()).reshape(len(points), -1)
    jw = np.array(api.GetJointWeightsPrimvar().Get()).reshape(len(points), -1)
    geom = _m(api.GetGeomBindTransformAttr().Get())
    bind = np.array(
        [_m(b) for b in UsdSkel.Skeleton(query.GetPrim()).GetBindTransformsAttr().Get()]
    )
    P = (geom @ np.c_[points, np.ones(len(points))].T).T
    assert skin.n_vertices == len(points) and skin.n_faces == 20  # ten quads, fanned
    for k in range(0, clip.n_frames, 7):
        code = float(clip.times[k]) * stage.GetTimeCodesPerSecond()
        J = np.array([_m(m) for m in query.ComputeJointWorldTransforms(UsdGeom.XformCache(code))])
        M = J @ np.linalg.inv(bind)
        ref = np.einsum("vs,vsij,vj->vi", jw, M[ji], P)[:, :3]
        assert np.abs(deform(skin, clip.model, clip.q[k]) - ref).max() < 1e-6


def _validate(path: Path) -> list[str]:
    validators = UsdValidation.ValidationRegistry().GetOrLoadAllValidators()
    errors = UsdValidation.ValidationContext(validators).Validate(Usd.Stage.Open(str(path)))
    return [e.GetMessage() for e in errors]


@pytest.mark.parametrize("suffix", [".usda", ".usdc", ".usdz"])
def test_usd_round_trip(tmp_path: Path, suffix: str) -> None:
    clip = kinetree.read_clip(LBS)
    out = tmp_path / f"back{suffix}"
    kinetree.write_clip(clip, out)
    assert _validate(out) == []
    back = kinetree.read_clip(out)
    assert back.joint_names == clip.joint_names
    assert np.abs(back.times - clip.times).max() < 1e-12
    assert np.abs(back.world_poses() - clip.world_poses()).max() < 1e-9 * _size(clip)
    s0, s1 = clip.model.skins[0], back.model.skins[0]
    assert np.abs(deform(s1, back.model, back.q) - deform(s0, clip.model, clip.q)).max() < 1e-9


def test_gltf_and_bvh_written_as_usd(tmp_path: Path) -> None:
    gltf = kinetree.read_clip(DATA / "gltf" / "RiggedSimple.gltf")
    kinetree.write_clip(gltf, tmp_path / "rigged.usda")
    assert _validate(tmp_path / "rigged.usda") == []
    back = kinetree.read_clip(tmp_path / "rigged.usda")
    # USD keeps the glTF joint names as leaves of its joint paths.
    assert back.joint_names == ("node_2", "node_2/node_3")
    # SkelAnimation stores float32 translations and rotations.
    assert np.abs(back.world_poses() - gltf.world_poses()).max() < 1e-6 * _size(gltf)
    walk = kinetree.read_bvh(DATA / "bvh" / "cmu_12_01_walk.bvh").slice(0, 60)
    bvh = kinetree.Clip.from_bvh(walk)
    kinetree.write_clip(bvh, tmp_path / "walk.usdc")
    walk = kinetree.read_clip(tmp_path / "walk.usdc")
    assert walk.model.length_scale == pytest.approx(bvh.model.length_scale)
    assert np.abs(walk.world_poses() - bvh.world_poses()).max() < 1e-6 * _size(bvh)


def test_units_and_axes() -> None:
    model = load_usd(LBS)
    assert model.metadata["up"] == "y" and model.metadata["meters_per_unit"] == 0.01
    assert model.length_scale == pytest.approx(100.0)  # the USD default: centimetres
    base = kinetree.read_clip(LBS)
    turned = kinetree.read_clip(LBS, up="z", scale=2.0)
    Rx = np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]])
    assert np.allclose(
        turned.world_poses()[..., :3, 3], 2.0 * base.world_poses()[..., :3, 3] @ Rx.T
    )
    assert kinetree.load(LBS).frame_names == ("world", *base.joint_names)


def test_animation_choice_and_several_skeletons(tmp_path: Path) -> None:
    assert read_usd(LBS, "Animation").n_frames == read_usd(LBS, 0).n_frames == 30
    with pytest.raises(UnknownNameError, match=r"its SkelAnimations are: /Root/Skeleton/Animation"):
        read_usd(LBS, "Walk")
    text = LBS.read_text()
    two = text.replace('def SkelRoot "Root"', 'def SkelRoot "Other"', 1).replace(
        "</Root/Skeleton>", "</Other/Skeleton>"
    )
    both = text + "\n" + two.split(")\n", 1)[1]
    path = tmp_path / "two.usda"
    path.write_text(both)
    with pytest.raises(KinetreeError, match=r"2 skeletons.*/Root/Skeleton.*/Other/Skeleton"):
        load_usd(path)
    assert load_usd(path, skeleton="/Other/Skeleton").metadata["skeleton"] == "/Other/Skeleton"


# --- bad files -----------------------------------------------------------------------------


def test_truncated_usdc(tmp_path: Path) -> None:
    full = tmp_path / "full.usdc"
    kinetree.write_clip(kinetree.read_clip(LBS), full)
    data = full.read_bytes()
    for cut in (len(data) // 2, 64, 0):
        p = tmp_path / f"cut{cut}.usdc"
        p.write_bytes(data[:cut])
        with pytest.raises(FileFormatError, match=r"cannot be opened|empty"):
            kinetree.read_clip(p)


def test_skin_with_a_missing_joint(tmp_path: Path) -> None:
    text = LBS.read_text().replace(
        "int[] primvars:skel:jointIndices = [0, 1, 2,",
        "int[] primvars:skel:jointIndices = [0, 1, 5,",
    )
    path = tmp_path / "missing.usda"
    path.write_text(text)
    with pytest.raises(FileFormatError, match=r"joint index is past|joint influences"):
        load_usd(path)


def test_nan_in_a_curve(tmp_path: Path) -> None:
    text = LBS.read_text().replace(
        "15: [(0, -1, 0), (1, 0, 0), (1, 0, 0)],", "15: [(nan, -1, 0), (1, 0, 0), (1, 0, 0)],"
    )
    path = tmp_path / "nan.usda"
    path.write_text(text)
    with pytest.raises(FileFormatError, match=r"NaN"):
        read_usd(path)


def test_skeleton_out_of_order(tmp_path: Path) -> None:
    joints = 'uniform token[] joints = ["joint1", "joint1/joint2", "joint1/joint2/joint3"]'
    swapped = 'uniform token[] joints = ["joint1/joint2", "joint1", "joint1/joint2/joint3"]'
    text = LBS.read_text().replace(joints, swapped, 1)  # the Skeleton's, not the animation's
    path = tmp_path / "order.usda"
    path.write_text(text)
    with pytest.raises(FileFormatError, match=r"skeleton '/Root/Skeleton'"):
        load_usd(path)


def test_no_skeleton(tmp_path: Path) -> None:
    path = tmp_path / "empty.usda"
    path.write_text('#usda 1.0\ndef Xform "Nothing"\n{\n}\n')
    with pytest.raises(FileFormatError, match=r"has no Skeleton prim"):
        load_usd(path)


def _repeated_bad_samples(tmp_path: Path, n: int) -> Path:
    """lbs.usda with one malformed rotation sample repeated ``n`` times: usd-core's parser
    needs time growing with the square of ``n`` to report it (4,000: seconds)."""
    bad = "                16: [(0.5, 0.5, 0.5, 0.5), (0.96703), (0.5, -0.5, -0.5, -0.5)],\n"
    lines = LBS.read_text().splitlines(keepends=True)
    at = next(i for i, ln in enumerate(lines) if "rotations.timeSamples" in ln) + 1
    p = tmp_path / "slow.usda"
    p.write_text("".join(lines[:at] + [bad] * n + lines[at:]))
    return p


def test_slow_malformed_text_is_refused_in_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    import kinetree.io.usd as usd

    slow = _repeated_bad_samples(tmp_path, 4000)
    assert slow.stat().st_size > usd.CHILD_PARSE_BYTES
    monkeypatch.setattr(usd, "PARSE_TIMEOUT_S", 0.5)
    monkeypatch.setattr(usd, "PARSE_SECONDS_PER_MB", 0.0)
    t0 = time.monotonic()
    with pytest.raises(FileFormatError, match=r"did not finish parsing .* within 0\.5 s"):
        kinetree.read_clip(slow)
    assert time.monotonic() - t0 < 30.0  # the child is stopped, not waited for


def test_text_parsed_in_a_child_reads_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import kinetree.io.usd as usd

    here = kinetree.read_clip(LBS)
    monkeypatch.setattr(usd, "CHILD_PARSE_BYTES", 0)  # every text layer through the child
    there = kinetree.read_clip(LBS)
    assert np.array_equal(there.q, here.q) and np.array_equal(there.times, here.times)
    broken = tmp_path / "broken.usda"
    broken.write_text(LBS.read_text().replace("def Skeleton", "def Skeleton {", 1))
    with pytest.raises(FileFormatError, match="cannot be opened"):
        kinetree.read_clip(broken)
