"""MJCF through MuJoCo's compiler (kinetree.io.mjcf): FK and Jacobians equal MuJoCo's.

``tests/data/mjcf/features.xml`` (with ``parts/hand.xml`` included) holds every feature
the loader maps; the euler-sequence models are written here, one per ``eulerseq``.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import kinetree
from kinetree.errors import FileFormatError, KinetreeError, UnsupportedError
from kinetree.geometry import Box, Capsule, Cylinder, GeometryWarning, Mesh, Sphere
from kinetree.io import MJCFWarning, from_mujoco, load_mjcf

mujoco = pytest.importorskip("mujoco")

from mjcf_helpers import fk_errors, jacobian_errors, random_qpos  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data" / "mjcf"
FEATURES = DATA / "features.xml"
TOL = 1e-9
N_CONFIGS = 20


def _load_quiet(path_or_text: str | Path, **kwargs: object) -> kinetree.Model:
    """load_mjcf with the warnings the file is known to raise silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MJCFWarning)
        warnings.simplefilter("ignore", GeometryWarning)
        return load_mjcf(path_or_text, **kwargs)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def features() -> tuple[kinetree.Model, object, object]:
    model = _load_quiet(FEATURES)
    m = mujoco.MjModel.from_xml_path(str(FEATURES))
    return model, m, mujoco.MjData(m)


# --- kinematics equal MuJoCo's -------------------------------------------------------------


def test_features_fk_matches_mujoco(features) -> None:
    model, m, d = features
    rng = np.random.default_rng(0)
    assert set(model.metadata["bodies"]) | set(model.metadata["sites"]) <= set(model.frame_names)
    for _ in range(N_CONFIGS):
        q = random_qpos(m, rng)
        errors = fk_errors(model, m, d, q)
        worst = max(errors, key=errors.__getitem__)
        assert errors[worst] < TOL, (worst, errors[worst])
        # fk one frame at a time too (the per-frame path of the kernels)
        for i, f in enumerate(model.metadata["sites"]):
            np.testing.assert_allclose(model.fk(q, f)[:3, 3], d.site_xpos[i], atol=TOL)


def test_features_neutral_sizes_and_qpos_order(features) -> None:
    model, m, _ = features
    assert model.nq == m.nq == len(model.joint_names)
    assert model.nv == m.nv
    np.testing.assert_array_equal(model.q_neutral, m.qpos0)
    # knuckle_b's ref (10 deg) is outside its range (15, 60 deg): qpos0 all the same
    k = model.joint_names.index("knuckle_b")
    assert model.q_neutral[k] == pytest.approx(np.radians(10))
    assert model.limits[k] == pytest.approx(np.radians([15, 60]))
    joints = model.metadata["joints"]
    for j in range(m.njnt):
        assert model.q_slice(joints[j]).start == m.jnt_qposadr[j]
    assert model.joint_groups["wrist_ball"] == tuple(
        f"wrist_ball_{c}" for c in ("qw", "qx", "qy", "qz")
    )
    assert model.joint_groups["box_free"] == tuple(
        f"box_free_{c}" for c in ("x", "y", "z", "qw", "qx", "qy", "qz")
    )


def test_features_jacobian_matches_mujoco(features) -> None:
    model, m, d = features
    rng = np.random.default_rng(1)
    for _ in range(5):
        errors = jacobian_errors(model, m, d, random_qpos(m, rng))
        worst = max(errors, key=errors.__getitem__)
        assert errors[worst] < TOL, (worst, errors[worst])


def test_features_limits(features) -> None:
    model = features[0]
    lim = dict(zip(model.joint_names, model.limits.tolist()))
    assert lim["elbow"] == pytest.approx([np.radians(-100), np.radians(20)])
    assert lim["knuckle_a_side"] == pytest.approx([np.radians(-20), np.radians(20)])
    assert lim["shoulder_slide"] == pytest.approx([-0.1, 0.2])
    # unlimited hinge: no limits; a limited ball joint: (0, max angle) on the group
    assert lim["joint_10"] == [-np.inf, np.inf]
    assert model.ball_limits == {"wrist_ball": pytest.approx(np.radians(70))}


EULER_MODEL = """<mujoco model="euler_{seq}">
  <compiler angle="{angle}" eulerseq="{seq}"/>
  <worldbody>
    <body name="a" pos="0.1 0.2 0.3" euler="{e1}">
      <joint name="j1" axis="0.3 -0.2 1" pos="0.05 0 0.02" range="-{r} {r}"/>
      <geom type="sphere" size="0.05"/>
      <site name="s1" pos="0 0.1 0" euler="{e2}"/>
      <body name="b" pos="0.3 0 0" euler="{e2}">
        <joint name="j2" type="slide" axis="1 1 0"/>
        <joint name="j3" axis="1 0 0" ref="{ref}"/>
        <geom type="box" size="0.02 0.03 0.04"/>
        <site name="s2" pos="0.1 0 0" euler="{e1}"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


@pytest.mark.parametrize("angle", ["degree", "radian"])
@pytest.mark.parametrize("seq", ["xyz", "zyx", "XYZ", "ZYX", "zxz", "XYX", "yXz"])
def test_euler_sequences_match_mujoco(seq: str, angle: str) -> None:
    """Intrinsic (lower case), extrinsic (upper case) and mixed sequences, both units."""
    deg = angle == "degree"
    e1, e2 = (30.0, -50.0, 70.0), (100.0, 20.0, -35.0)
    fmt = lambda e: " ".join(str(v if deg else np.radians(v)) for v in e)  # noqa: E731
    text = EULER_MODEL.format(
        seq=seq, angle=angle, e1=fmt(e1), e2=fmt(e2), r=90 if deg else np.pi / 2,
        ref=25 if deg else np.radians(25),
    )  # fmt: skip
    model = _load_quiet(text)
    m = mujoco.MjModel.from_xml_string(text)
    d = mujoco.MjData(m)
    assert model.name == f"euler_{seq}"
    rng = np.random.default_rng(2)
    for _ in range(5):
        errors = fk_errors(model, m, d, random_qpos(m, rng))
        assert max(errors.values()) < TOL, errors


def test_from_mujoco_takes_a_compiled_model() -> None:
    m = mujoco.MjModel.from_xml_string(EULER_MODEL.format(
        seq="xyz", angle="radian", e1="0.1 0.2 0.3", e2="0 0 1", r=1, ref=0.5
    ))  # fmt: skip
    model = from_mujoco(m, name="mine")
    assert model.name == "mine"
    assert model.metadata["source"] == "<MjModel>"
    assert model.q_neutral.tolist() == [0.0, 0.0, 0.5]


# --- names ---------------------------------------------------------------------------------


def test_names(features) -> None:
    model, m, _ = features
    meta = model.metadata
    assert model.node_names[0] == "world" and meta["bodies"][0] == "world"
    # unnamed bodies, joints and sites get MuJoCo's id; a site named like a body gets "_site"
    assert meta["bodies"][8] == "body_8" and meta["bodies"][13] == "body_13"
    assert meta["joints"][10] == "joint_10" and meta["joints"][15] == "joint_15"
    sites = dict(enumerate(meta["sites"]))
    base_site = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, "base")
    lid_site = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, "lid")
    assert sites[base_site] == "base_site" and sites[lid_site] == "lid_site"
    unnamed = [k for k in range(m.nsite) if mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_SITE, k)
               is None]  # fmt: skip
    assert [sites[k] for k in unnamed] == [f"site_{k}" for k in unnamed]
    # inner nodes (joints with anchors, several joints in a body) are never body or site
    # names; they are hidden nodes (the joint's frame at its anchor) named body#joint
    inner = [n for n, h in zip(model.node_names, model.hidden) if "#" in n and h]
    assert {"upper#shoulder_pitch", "upper#shoulder_roll", "fore#elbow",
            "finger_a#knuckle_a", "ball_link#wrist_ball", "body_8#joint_10",
            "lid#lid_hinge"} <= set(inner)  # fmt: skip
    assert not any("#" in f for f in model.frame_names)
    assert not set(inner) & (set(meta["bodies"]) | set(meta["sites"]))
    assert meta["mocap_bodies"] == ("target",)
    assert meta["format"] == "mjcf" and meta["source"] == str(FEATURES)
    assert model.name == "features"
    assert model.end_effectors  # the tips of the longest chains


def test_name_clash_with_generated_name() -> None:
    text = """<mujoco><worldbody>
      <body name="body_2" pos="0 0 1"><joint name="joint_1"/><geom size="0.1"/></body>
      <body><joint/><geom size="0.1"/><site name="body_2"/><site name="body_2_site"/></body>
    </worldbody></mujoco>"""
    model = _load_quiet(text)
    assert model.metadata["bodies"] == ("world", "body_2", "body_2_2")
    assert model.metadata["joints"] == ("joint_1", "joint_1_2")
    assert model.metadata["sites"] == ("body_2_site_2", "body_2_site")


# --- geometry ------------------------------------------------------------------------------


def test_geometry(features) -> None:
    model, m, d = features
    geo = model.geometry
    base = geo["base"]
    kinds = sorted((type(g).__name__, g.kind) for g in base)
    # the colliding box is drawn too (group 0); the mesh has no contacts: visual only
    assert kinds == [("Box", "collision"), ("Box", "visual"), ("Mesh", "visual")]
    box = next(g for g in base if isinstance(g, Box))
    assert box.size == pytest.approx((0.2, 0.16, 0.1))
    assert any(isinstance(g, Capsule) for g in geo["upper"])
    assert any(isinstance(g, Cylinder) for g in geo["fore"])
    assert any(isinstance(g, Sphere) for g in geo["body_8"])
    ellipsoid = next(g for g in geo["ball_link"] if isinstance(g, Mesh))
    assert ellipsoid.path == "" and np.abs(ellipsoid.vertices).max(axis=0) == pytest.approx(
        [0.05, 0.03, 0.02]
    )
    assert "world" not in geo  # the floor plane is skipped
    # the mesh's vertices, placed by FK and the shape's origin, are where MuJoCo has them
    q = random_qpos(m, np.random.default_rng(3))
    d.qpos[:] = q
    mujoco.mj_kinematics(m, d)
    g = int(np.nonzero(m.geom_type == mujoco.mjtGeom.mjGEOM_MESH)[0][0])
    mesh = next(s for s in base if isinstance(s, Mesh))
    v0, nv = m.mesh_vertadr[0], m.mesh_vertnum[0]
    want = d.geom_xpos[g] + m.mesh_vert[v0 : v0 + nv] @ d.geom_xmat[g].reshape(3, 3).T
    T = model.fk(q, "base") @ mesh.origin
    got = mesh.vertices @ T[:3, :3].T + T[:3, 3]
    np.testing.assert_allclose(got, want, atol=1e-6)  # MuJoCo stores vertices as float32


def test_meshes_false_keeps_no_vertices() -> None:
    model = _load_quiet(FEATURES, meshes=False)
    mesh = next(g for g in model.geometry["base"] if isinstance(g, Mesh))
    assert mesh.vertices is None and mesh.faces is None


def test_warnings() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = load_mjcf(FEATURES)
    assert {w.category for w in caught} == {MJCFWarning, GeometryWarning}
    texts = " | ".join(str(w.message) for w in caught)
    # The linear joint equality is an IK coupling now: no warning for it.
    assert "joint_equalities" not in texts and "1 tendon(s) (elbow_tendon)" in texts
    assert "1 plane geom(s) (floor)" in texts
    assert model.metadata["joint_equalities"] == [
        {"joint": "knuckle_b", "source": "knuckle_a", "polycoef": (0.0, 0.5, 0.0, 0.0, 0.0),
         "active": True, "coupled": True}
    ]  # fmt: skip
    j, s = model.joint_names.index("knuckle_b"), model.joint_names.index("knuckle_a")
    (coupling,) = model.couplings
    y0, x0 = model.q_neutral[j], model.q_neutral[s]  # qpos0: y - y0 = 0.5 (x - x0)
    assert coupling[:3] == (j, s, 0.5) and coupling[3] == pytest.approx(y0 - 0.5 * x0)


def test_mujoco_stays_silent(tmp_path: Path, monkeypatch, capfd) -> None:
    """MuJoCo's compiler warnings become MJCFWarning: nothing printed, no MUJOCO_LOG.TXT."""
    monkeypatch.chdir(tmp_path)
    text = """<mujoco model="m"><compiler settotalmass="2"/><worldbody>
      <body><joint/><geom size="0.1"/></body></worldbody></mujoco>"""
    with pytest.warns(MJCFWarning, match="MuJoCo's compiler warned: .*settotalmass"):
        load_mjcf(text)
    with pytest.raises(FileFormatError, match="unknown default class name 'nope'"):
        load_mjcf('<mujoco><worldbody><body><geom class="nope" size="1"/></body></worldbody>'
                  "</mujoco>")  # fmt: skip
    out, err = capfd.readouterr()
    assert out == "" and err == ""
    assert not (tmp_path / "MUJOCO_LOG.TXT").exists()


def test_massless_bodies_load_with_a_warning() -> None:
    """MuJoCo refuses moving bodies without mass (a simulation concern): kinetree compiles
    them with tiny mass bounds, which change no pose, and says so."""
    text = """<mujoco model="bare"><worldbody>
      <body name="a" pos="0 0 1" euler="0.3 0.2 0.1"><joint name="j" pos="0.1 0 0"/>
        <body name="b" pos="0.5 0 0"><joint name="k" type="ball"/><site name="tip"/></body>
      </body></worldbody></mujoco>"""
    with pytest.raises(ValueError, match="mass and inertia"):
        mujoco.MjModel.from_xml_string(text)
    with pytest.warns(MJCFWarning, match="would not simulate"):
        model = load_mjcf(text)
    spec = mujoco.MjSpec.from_string(text)
    spec.compiler.boundmass, spec.compiler.boundinertia = 1.0, 1.0
    m = spec.compile()
    d = mujoco.MjData(m)
    q = random_qpos(m, np.random.default_rng(4))
    assert max(fk_errors(model, m, d, q).values()) < TOL


# --- errors and kinetree.load --------------------------------------------------------------


def test_compile_error_names_file_and_says_what(tmp_path: Path) -> None:
    p = tmp_path / "bad.xml"
    p.write_text('<mujoco><worldbody><body><joint type="free"/><joint/><geom size="1"/>'
                 "</body></worldbody></mujoco>")  # fmt: skip
    with pytest.raises(FileFormatError, match=r"bad\.xml.*MuJoCo.*free joint|bad\.xml.*dof"):
        kinetree.load(p)
    with pytest.raises(FileFormatError, match="does not exist"):
        kinetree.load(tmp_path / "missing.xml")
    with pytest.raises(FileFormatError, match="does not exist"):
        load_mjcf(tmp_path / "missing.xml")
    p.write_text("<mujoco><worldbody>")
    with pytest.raises(FileFormatError, match=r"bad\.xml"):
        load_mjcf(p)


def test_urdf_named_xml_points_to_load_urdf(tmp_path: Path) -> None:
    p = tmp_path / "arm.xml"
    p.write_text('<robot name="r"><link name="a"/></robot>')
    with pytest.raises(UnsupportedError, match="load_urdf"):
        kinetree.load(p)
    with pytest.raises(UnsupportedError, match="load_urdf"):
        load_mjcf(p)


def test_without_mujoco_says_how_to_install(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "mujoco", None)  # import mujoco raises ImportError
    with pytest.raises(UnsupportedError, match=r"pip install kinetree\[mjcf\]"):
        kinetree.load(FEATURES)


@pytest.mark.parametrize("suffix", [".xml", ".mjcf", ".XML"])
def test_load_reads_mjcf_suffixes(suffix: str, tmp_path: Path) -> None:
    p = tmp_path / f"arm{suffix}"
    p.write_text(EULER_MODEL.format(seq="xyz", angle="radian", e1="0 0 0", e2="0 0 0", r=1,
                                    ref=0))  # fmt: skip
    model = kinetree.load(p)
    assert model.joint_names == ("j1", "j2", "j3")
    assert model.metadata["source"] == str(p)


def test_errors_are_kinetree_errors() -> None:
    for bad in (None, 3, b"<mujoco/>"):
        with pytest.raises(KinetreeError):
            load_mjcf(bad)  # type: ignore[arg-type]
    with pytest.raises(KinetreeError):
        load_mjcf(FEATURES, name="")


def test_enum_values_are_mujocos() -> None:
    from kinetree.io import mjcf

    assert (mjcf._FREE, mjcf._BALL, mjcf._SLIDE, mjcf._HINGE) == tuple(
        int(getattr(mujoco.mjtJoint, f"mjJNT_{t}")) for t in ("FREE", "BALL", "SLIDE", "HINGE")
    )
    for k, name in enumerate(("PLANE", "HFIELD", "SPHERE", "CAPSULE", "ELLIPSOID", "CYLINDER",
                              "BOX", "MESH", "SDF")):  # fmt: skip
        assert int(getattr(mujoco.mjtGeom, f"mjGEOM_{name}")) == k
    assert int(mujoco.mjtEq.mjEQ_JOINT) == mjcf._EQ_JOINT
    for k, name in enumerate(mjcf._EQ_NAMES):
        assert int(getattr(mujoco.mjtEq, f"mjEQ_{name.upper()}")) == k


# --- the command line ----------------------------------------------------------------------


def test_cli_info_on_mjcf() -> None:
    from typer.testing import CliRunner

    from kinetree.cli import app

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = CliRunner().invoke(app, ["info", str(FEATURES)])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "model: features" in out and f"source: {FEATURES}" in out
    for name in ("shoulder_pitch", "wrist_ball", "box_free", "finger_a_tip", "lid_site"):
        assert name in out


def test_bundled_biped_matches_mujoco_and_stands_on_its_feet() -> None:
    """The README's MJCF humanoid: FK equal to MuJoCo's, hands and feet as the default
    end effectors (a free base is not a limb), and IK with both feet planted."""
    path = kinetree.data.path("biped")
    model = _load_quiet(path)
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    assert (model.nq, model.nv) == (m.nq, m.nv) == (29, 24)
    assert model.end_effectors == ("hand_r", "hand_l", "foot_r", "foot_l")
    rng = np.random.default_rng(3)
    for _ in range(5):
        errors = fk_errors(model, m, d, random_qpos(m, rng))
        assert max(errors.values()) < TOL
    stand = {f: model.fk(model.neutral(), f) for f in ("foot_l", "foot_r")}
    r = model.ik({**stand, "hand_r": kinetree.Position([0.35, -0.3, 1.2])})
    assert r.success
    for f, T in stand.items():
        np.testing.assert_allclose(model.fk(r.q, f), T, atol=2e-6)
    assert model.within_limits(r.q, tol=1e-9)


COUPLED = """<mujoco model="coupled">
  <compiler angle="radian"/>
  <worldbody>
    <body name="a" pos="0 0 0.1">
      <joint name="j1" axis="0 0 1" range="-3 3" ref="0.2"/>
      <geom size="0.05"/>
      <body name="b" pos="0.3 0 0">
        <joint name="j2" axis="0 1 0" range="-2 2"/>
        <geom size="0.05"/>
        <body name="c" pos="0.3 0 0">
          <joint name="j3" axis="0 1 0" range="-3 3" ref="-0.1"/>
          <geom size="0.05"/>
          <body name="d" pos="0.25 0 0">
            <joint name="j4" axis="1 0 0" range="-3 3"/>
            <geom size="0.05"/>
            <site name="tip" pos="0.1 0 0"/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
  <equality>
    <joint joint1="j3" joint2="j2" polycoef="0.1 -0.5 0 0 0"/>
    <joint joint1="j4" polycoef="0.3 0 0 0 0"/>
    <joint joint1="j1" joint2="j2" polycoef="0 1 0.2 0 0"/>
  </equality>
</mujoco>
"""


@pytest.mark.parametrize("method", ["auto", "dls", "ccd", "bfgs"])
def test_linear_joint_equalities_hold_in_every_ik_result(tmp_path: Path, method: str) -> None:
    """Active linear equalities are IK couplings: MuJoCo's relation
    ``y - y0 = c0 + c1 (x - x0)`` holds in the result, q stays qpos (FK equals MuJoCo's at
    the returned q), and the nonlinear one is reported as not enforced."""
    path = tmp_path / "coupled.xml"
    path.write_text(COUPLED)
    with pytest.warns(kinetree.io.mjcf.MJCFWarning, match="1 joint equality"):
        model = kinetree.load(path)
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    assert model.nq == m.nq == 4 and len(model.couplings) == 2
    eqs = model.metadata["joint_equalities"]
    assert [q["coupled"] for q in eqs] == [True, True, False]
    x0, y0 = m.qpos0[1], m.qpos0[2]
    rng = np.random.default_rng(0)
    solved = 0
    for _ in range(10):
        q = model.neutral()
        q[1] = rng.uniform(-1.5, 1.5)
        q[2] = y0 + 0.1 - 0.5 * (q[1] - x0)
        q[3] = m.qpos0[3] + 0.3
        q[0] = rng.uniform(-2, 2)
        target = kinetree.Position(model.fk(q, "tip")[:3, 3])
        r = model.ik(target, "tip", method=method)
        np.testing.assert_allclose(r.q[2] - y0, 0.1 - 0.5 * (r.q[1] - x0), atol=1e-12)
        np.testing.assert_allclose(r.q[3], m.qpos0[3] + 0.3, atol=1e-12)
        errors = fk_errors(model, m, d, r.q)
        assert max(errors.values()) < TOL
        if r.success:
            solved += 1
            assert np.linalg.norm(model.fk(r.q, "tip")[:3, 3] - target.xyz) <= 1e-6
    assert solved >= 8


def test_a_mesh_without_volume_loads_with_a_warning() -> None:
    """MuJoCo refuses a mesh whose volume it cannot take for an inertia ("mesh volume is
    too small"), which kinematics never read: kinetree loads the file, says so, and its FK
    is MuJoCo's for the same file with the mesh's inertia taken from its surface."""
    text = """<mujoco model="flat"><asset>
      <mesh name="sheet" vertex="0 0 0  1 0 0  0 1 0  0 0 1" face="0 1 2  0 2 1"/></asset>
      <worldbody><body name="a" pos="0 0 1"><joint name="j" axis="0 1 0"/>
        <geom type="mesh" mesh="sheet"/>
        <body name="b" pos="0.5 0 0"><joint name="k"/><geom size="0.1"/><site name="tip"/>
        </body></body></worldbody></mujoco>"""
    with pytest.raises(ValueError, match="mesh volume is too small"):
        mujoco.MjModel.from_xml_string(text)
    with pytest.warns(MJCFWarning, match="would not simulate"):
        model = load_mjcf(text)
    spec = mujoco.MjSpec.from_string(text)
    spec.meshes[0].inertia = mujoco.mjtMeshInertia.mjMESH_INERTIA_SHELL
    m = spec.compile()
    d = mujoco.MjData(m)
    for seed in range(3):
        q = random_qpos(m, np.random.default_rng(seed))
        assert max(fk_errors(model, m, d, q).values()) < TOL
