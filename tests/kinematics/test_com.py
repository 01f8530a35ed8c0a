"""Centre of mass, its Jacobian and manipulability: against Pinocchio and MuJoCo (when
installed), closed forms and finite differences; masses and speed limits from URDF,
MJCF and the builder."""

from __future__ import annotations

import importlib.resources

import numpy as np
import pytest

import kinetree
from kinetree import ModelBuilder
from kinetree.diffik.mass import manipulability_gradient
from kinetree.errors import InvalidValueError, KinetreeError, UnknownNameError, UnsupportedError
from kinetree.spatial import translation
from robot_data import example_robot_data

URDF = """<robot name="masses">
  <link name="base"><inertial><mass value="2.0"/><origin xyz="0 0 0.1"/></inertial></link>
  <link name="upper"><inertial><mass value="1.5"/><origin xyz="0.2 0 0"/></inertial></link>
  <link name="lower"><inertial><mass value="0.5"/><origin xyz="0.15 0 0"/></inertial></link>
  <link name="tip"/>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" velocity="2.5" effort="1"/></joint>
  <joint name="elbow" type="revolute"><parent link="upper"/><child link="lower"/>
    <origin xyz="0.4 0 0"/><axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1"/></joint>
  <joint name="tool" type="fixed"><parent link="lower"/><child link="tip"/>
    <origin xyz="0.3 0 0"/></joint>
</robot>"""


def _with_balls() -> kinetree.Model:
    """A floating torso with a ball shoulder, a hinge elbow and masses on every link."""
    b = ModelBuilder("balls", root="torso")
    b.add_joint("shoulder", "torso", "arm", type="ball", origin=translation([0, 0.2, 0.3]))
    b.add_joint("elbow", "arm", "forearm", axis="y", origin=translation([0, 0, -0.3]))
    b.add_frame("hand", "forearm", translation([0, 0, -0.25]))
    for link, mass, com in (("torso", 10.0, (0, 0, 0.1)), ("arm", 2.0, (0.01, 0, -0.15)),
                            ("forearm", 1.0, (0, 0.02, -0.12))):  # fmt: skip
        b.set_inertial(link, mass, com)
    return b.build().with_floating_base()


def test_urdf_masses_give_the_closed_form_centre(tmp_path):
    path = tmp_path / "masses.urdf"
    path.write_text(URDF)
    model = kinetree.load(path)
    assert model.total_mass == pytest.approx(4.0)
    assert model.inertials["upper"] == (1.5, (0.2, 0.0, 0.0))
    assert model.max_velocity.tolist() == [2.5, np.inf]  # elbow: no velocity given
    for a, b in ((0.3, -0.7), (1.2, 2.0)):
        c_upper = 0.2 * np.array([np.cos(a), np.sin(a), 0])
        elbow = 0.4 * np.array([np.cos(a), np.sin(a), 0])
        c_lower = elbow + 0.15 * np.array([np.cos(a + b), np.sin(a + b), 0])
        want = (2.0 * np.array([0, 0, 0.1]) + 1.5 * c_upper + 0.5 * c_lower) / 4.0
        np.testing.assert_allclose(model.com([a, b]), want, atol=1e-14)
    assert model.com(np.zeros((4, 3, 2))).shape == (4, 3, 3)


def test_com_jacobian_matches_finite_differences_with_quaternions(rng):
    model = _with_balls()
    for q in model.random_configuration(5, rng=rng):
        J = model.com_jacobian(q)
        h = 1e-6
        fd = np.stack(
            [(model.com(model.integrate(q, h * e)) - model.com(model.integrate(q, -h * e)))
             / (2 * h) for e in np.eye(model.nv)], axis=1,
        )  # fmt: skip
        np.testing.assert_allclose(J, fd, atol=1e-8)
    Q = model.random_configuration(6, rng=rng)
    np.testing.assert_allclose(model.com_jacobian(Q)[2], model.com_jacobian(Q[2]), atol=1e-15)


def test_panda_centre_of_mass_matches_pinocchio(rng):
    pin = pytest.importorskip("pinocchio")
    path = example_robot_data() / "panda_description/urdf/panda.urdf"
    model = kinetree.io.load_urdf(path, meshes=False)
    pm = pin.buildModelFromUrdf(str(path))
    pd = pm.createData()
    # Pinocchio leaves out the mass of the root link (fixed to its universe).
    m_root, c_root = model.inertials["panda_link0"]
    assert model.total_mass - m_root == pytest.approx(pin.computeTotalMass(pm), abs=1e-12)
    M = model.total_mass
    for q in model.random_configuration(10, rng=rng):
        qp = np.r_[q, q[7]]  # the second finger mimics the first in the URDF
        c = pin.centerOfMass(pm, pd, qp)
        Jc = pin.jacobianCenterOfMass(pm, pd, qp)
        ours = (model.com(q) * M - m_root * np.array(c_root)) / (M - m_root)
        np.testing.assert_allclose(ours, c, atol=1e-12)
        J = np.c_[Jc[:, :7], Jc[:, 7] + Jc[:, 8]]
        np.testing.assert_allclose(model.com_jacobian(q) * M / (M - m_root), J, atol=1e-12)
    assert model.max_velocity[:7].tolist() == [2.175] * 4 + [2.61] * 3


def test_mjcf_centre_of_mass_matches_mujoco(rng):
    mujoco = pytest.importorskip("mujoco")
    from mjcf_helpers import random_qpos

    path = importlib.resources.files("kinetree") / "data" / "biped.xml"
    with importlib.resources.as_file(path) as p:
        model = kinetree.load(p)
        m = mujoco.MjModel.from_xml_path(str(p))
    d = mujoco.MjData(m)
    assert model.total_mass == pytest.approx(float(m.body_mass.sum()), rel=1e-12)
    assert np.all(np.isinf(model.max_velocity))  # MJCF has no speed limits
    jacp = np.zeros((3, m.nv))
    for _ in range(5):
        qpos = random_qpos(m, rng)
        d.qpos[:] = qpos
        mujoco.mj_forward(m, d)
        np.testing.assert_allclose(model.com(qpos), d.subtree_com[0], atol=1e-10)
        mujoco.mj_jacSubtreeCom(m, d, jacp, 0)
        np.testing.assert_allclose(model.com_jacobian(qpos), jacp, atol=1e-10)


@pytest.mark.parametrize("rows", ["all", "position", "orientation"])
def test_manipulability_is_the_determinant_and_its_gradient_matches_fd(rows, rng):
    sl = {"all": slice(0, 6), "position": slice(0, 3), "orientation": slice(3, 6)}[rows]
    for model, frame in ((kinetree.load("panda"), "flange"), (_with_balls(), "hand")):
        for q in model.random_configuration(4, rng=rng):
            J = model.jacobian(q, frame)[sl]
            w_det = np.sqrt(max(np.linalg.det(J @ J.T), 0.0))
            assert model.manipulability(q, frame, rows) == pytest.approx(w_det, abs=1e-12)
            _, g = manipulability_gradient(model, q, frame, rows)
            h = 1e-6
            fd = [(model.manipulability(model.integrate(q, h * e), frame, rows)
                   - model.manipulability(model.integrate(q, -h * e), frame, rows)) / (2 * h)
                  for e in np.eye(model.nv)]  # fmt: skip
            np.testing.assert_allclose(g, fd, atol=1e-7 * (1 + np.abs(g).max()))


def test_manipulability_vanishes_at_a_singularity():
    b = ModelBuilder("arm", root="base")
    b.add_joint("yaw", "base", "l1", axis="z")
    b.add_joint("shoulder", "l1", "l2", axis="y", origin=translation([0, 0, 0.3]))
    b.add_joint("elbow", "l2", "l3", axis="y", origin=translation([0.4, 0, 0]))
    b.add_frame("tip", "l3", translation([0.3, 0, 0]))
    model = b.build()
    # Closed form: w = l1 l2 |sin(elbow)| (l1 cos(shoulder) + l2 cos(shoulder + elbow)).
    for s_, e in ((0.3, 0.9), (-0.5, 1.7)):
        want = 0.4 * 0.3 * abs(np.sin(e)) * abs(0.4 * np.cos(s_) + 0.3 * np.cos(s_ + e))
        assert model.manipulability([0.2, s_, e], "tip", "position") == pytest.approx(want)
    q = np.array([0.2, 0.4, 0.0])  # elbow straight
    assert model.manipulability(q, "tip", "position") < 1e-15
    _, g = manipulability_gradient(model, q, "tip", "position")
    assert np.all(np.isfinite(g)) and abs(g[2]) > 0.01  # bending the elbow helps


def test_manipulability_gradient_with_a_mimic_joint_uses_differences(rng):
    b = ModelBuilder("mimic", root="base")
    b.add_joint("a", "base", "l1", axis="z", limits=(-3, 3))
    b.add_joint("b", "l1", "l2", axis="y", origin=translation([0, 0, 0.3]), limits=(-3, 3))
    b.add_joint("c", "l2", "l3", axis="y", origin=translation([0.3, 0, 0]), mimic=("b", 0.5, 0))
    b.add_joint("d", "l3", "l4", axis="x", origin=translation([0.3, 0, 0]), limits=(-3, 3))
    b.add_frame("tip", "l4", translation([0.1, 0.05, 0]))
    model = b.build()
    q = model.random_configuration(rng=rng)
    _, g = manipulability_gradient(model, q, "tip", "position")
    h = 1e-5
    fd = [(model.manipulability(q + h * e, "tip", "position")
           - model.manipulability(q - h * e, "tip", "position")) / (2 * h)
          for e in np.eye(model.nv)]  # fmt: skip
    np.testing.assert_allclose(g, fd, atol=1e-6)


def test_bad_mass_and_speed_input_raise_naming_it():
    b = ModelBuilder("bad", root="base")
    b.add_joint("j", "base", "l", limits=(-1, 1))
    with pytest.raises(InvalidValueError, match=r"'l'.*mass"):
        b.set_inertial("l", -1.0)
    with pytest.raises(InvalidValueError, match="centre of mass"):
        b.set_inertial("l", 1.0, (0, np.nan, 0))
    with pytest.raises(InvalidValueError, match=r"'j'.*velocity limit"):
        b.set_velocity_limit("j", 0.0)
    b.set_inertial("nowhere", 1.0)
    with pytest.raises(UnknownNameError, match="nowhere"):
        b.build()
    b2 = ModelBuilder("ok", root="base")
    b2.add_joint("j", "base", "l", limits=(-1, 1))
    b2.set_velocity_limit("k", 1.0)
    with pytest.raises(UnknownNameError, match="'k'"):
        b2.build()
    massless = kinetree.load("panda")
    with pytest.raises(UnsupportedError, match="no link masses"):
        massless.com(massless.neutral())
    with pytest.raises(KinetreeError, match="rows"):
        massless.manipulability(massless.neutral(), "flange", rows="linear")


def test_urdf_bad_inertial_warns_and_loads(tmp_path):
    bad = URDF.replace('<mass value="1.5"/>', '<mass value="-3"/>').replace(
        'velocity="2.5"', 'velocity="-1"'
    )
    path = tmp_path / "bad.urdf"
    path.write_text(bad)
    with pytest.warns(UserWarning, match="upper"):
        model = kinetree.load(path)
    assert "upper" not in model.inertials
    assert np.all(np.isinf(model.max_velocity))


def test_fields_default_and_survive_derived_models():
    model = kinetree.load("panda")
    assert model.inertials == {} and model.velocity_limits == {}
    assert model.max_velocity.shape == (7,) and np.all(np.isinf(model.max_velocity))
    floating = _with_balls()
    assert floating.total_mass == pytest.approx(13.0)
    assert floating.max_velocity.shape == (floating.nv,)
    assert floating == floating and floating != _with_balls()  # identity equality
