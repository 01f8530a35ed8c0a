"""MJCF closed chains (``<equality><connect>``/``<weld>``): kept on the model, kept by IK.

MuJoCo is the oracle: its ``efc_pos`` rows of an equality (``mj_forward``) are the
constraint's violation as MuJoCo defines it (a connect: the two anchors' world
difference [m]; a weld: that, then the axis part of the relative-turn quaternion).
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest

import kinetree
from kinetree.equality import Equality, violations
from kinetree.errors import UnsupportedError

mujoco = pytest.importorskip("mujoco")
from kinetree.io import MJCFWarning, load_mjcf  # noqa: E402

#: A four-bar linkage in the x-z plane: crank (0.2 m) from the world pivot, coupler
#: (0.5 m), rocker (0.4 m); the rocker's end is pinned to the world at (0.6, 0, 0.5).
FOUR_BAR = """<mujoco model="fourbar">
<worldbody>
 <body name="crank"><joint name="a" axis="0 1 0" range="-170 170"/>
  <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.01"/>
  <body name="coupler" pos="0.2 0 0"><joint name="b" axis="0 1 0" range="-170 170"/>
   <geom type="capsule" fromto="0 0 0 0 0 0.5" size="0.01"/>
   <site name="tip" pos="0 0 0.25"/>
   <body name="rocker" pos="0 0 0.5"><joint name="c" axis="0 1 0" range="-170 170"/>
    <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.01"/>
    <site name="rocker_end" pos="0.4 0 0"/>
   </body></body></body>
 <body name="ground" pos="0.4 0 0.5"/>
 <site name="far" pos="3 0 0.5"/>
</worldbody>
<equality>%s</equality>
</mujoco>"""
PIN = '<connect name="pin" body1="rocker" body2="ground" anchor="0.4 0 0"%s/>'

#: A 6-hinge arm whose hand is welded to a plate on three slides: moving the plate
#: drags the arm along, and the weld keeps the hand's pose on the plate.
WELDED = """<mujoco model="welded">
<worldbody>
 <body name="l1"><joint name="j1" axis="0 0 1"/><geom size="0.03"/>
  <body name="l2" pos="0 0 0.1"><joint name="j2" axis="0 1 0"/><geom size="0.03"/>
   <body name="l3" pos="0 0 0.4"><joint name="j3" axis="0 1 0"/><geom size="0.03"/>
    <body name="l4" pos="0.3 0 0"><joint name="j4" axis="1 0 0"/><geom size="0.03"/>
     <body name="l5" pos="0.1 0 0"><joint name="j5" axis="0 1 0"/><geom size="0.03"/>
      <body name="hand" pos="0.1 0 0"><joint name="j6" axis="1 0 0"/><geom size="0.03"/>
      </body></body></body></body></body></body>
 <body name="plate" pos="0.5 0 0.5" euler="0 0.3 0.2">
  <joint name="px" type="slide" axis="1 0 0"/><joint name="py" type="slide" axis="0 1 0"/>
  <joint name="pz" type="slide" axis="0 0 1"/><geom type="box" size="0.05 0.05 0.01"/>
 </body>
</worldbody>
<equality><weld name="grip" body1="hand" body2="plate"/></equality>
</mujoco>"""


def _mujoco(xml: str) -> tuple:
    m = mujoco.MjModel.from_xml_string(xml)
    return m, mujoco.MjData(m)


def _efc(m, d, q: np.ndarray) -> np.ndarray:
    """MuJoCo's equality rows at ``q`` (qpos)."""
    d.qpos[:] = q
    mujoco.mj_forward(m, d)
    return np.array(d.efc_pos[: d.ne])


def test_connect_is_kept_on_the_model_as_mujoco_defines_it():
    xml = FOUR_BAR % (PIN % "")
    with warnings.catch_warnings():
        warnings.simplefilter("error", MJCFWarning)  # no "ignored" warning any more
        model = load_mjcf(xml)
    (eq,) = model.equalities
    assert isinstance(eq, Equality)
    assert (eq.kind, eq.frame1, eq.frame2, eq.name, eq.active) == (
        "connect",
        "rocker",
        "ground",
        "pin",
        True,
    )
    m, d = _mujoco(xml)
    rng = np.random.default_rng(0)
    for _ in range(5):  # away from closure, the gap is MuJoCo's violation
        q = rng.uniform(-1.0, 1.0, 3)
        gap = violations(model, q)[0, 0]
        assert gap == pytest.approx(np.linalg.norm(_efc(m, d, q)), abs=1e-12)
        assert gap > 1e-3


def test_ik_keeps_a_four_bar_closed():
    xml = FOUR_BAR % (PIN % "")
    model = load_mjcf(xml)
    m, d = _mujoco(xml)
    tip0 = model.fk(model.neutral(), "tip")[:3, 3]
    for dx in (0.05, -0.05, 0.1):  # the tip moves on a curve: ask for its x only
        r = model.ik(kinetree.Position(tip0 + np.array([dx, 0.0, 0.0]), mask=[1, 0, 0]), "tip")
        assert r.success, r.message
        assert abs(model.fk(r.q, "tip")[0, 3] - tip0[0] - dx) <= 1e-6
        assert np.max(np.abs(_efc(m, d, r.q))) <= 1e-6
    # The same target on the open tree breaks the linkage.
    open_tree = dataclasses.replace(model, equalities=())
    r = open_tree.ik(kinetree.Position(tip0 + np.array([0.1, 0.0, 0.0]), mask=[1, 0, 0]), "tip")
    assert r.success and np.max(np.abs(_efc(m, d, r.q))) > 1e-3


def test_ik_keeps_a_weld():
    model = load_mjcf(WELDED)
    (eq,) = model.equalities
    assert eq.kind == "weld"
    m, d = _mujoco(WELDED)
    q0 = model.neutral()
    assert np.max(np.abs(_efc(m, d, q0))) < 1e-12  # MuJoCo welds it as it stands
    plate0 = model.fk(q0, "plate")[:3, 3]
    for shift in ([0.05, 0.0, 0.0], [0.0, 0.04, -0.03], [-0.05, 0.02, 0.05]):
        goal = plate0 + shift
        r = model.ik(kinetree.Position(goal), "plate")
        assert r.success, r.message
        assert np.linalg.norm(model.fk(r.q, "plate")[:3, 3] - goal) <= 1e-6
        assert np.max(np.abs(_efc(m, d, r.q))) <= 1e-6  # position and turn rows
        assert np.max(violations(model, r.q)) <= 1e-6


def test_inactive_equalities_are_recorded_and_ignored():
    xml = FOUR_BAR % (PIN % ' active="false"')
    model = load_mjcf(xml)
    (eq,) = model.equalities
    assert not eq.active
    tip0 = model.fk(model.neutral(), "tip")[:3, 3]
    target = kinetree.Position(tip0 + np.array([0.1, 0.0, 0.0]), mask=[1, 0, 0])
    r = model.ik(target, "tip", method="pinv")  # no refusal: nothing to keep
    assert r.success
    assert violations(model, r.q)[0, 0] > 1e-3  # the loop was not kept


def test_a_loop_that_cannot_close_is_a_failure():
    # Sites meet where they are: the rocker's end cannot reach a point 3 m away.
    xml = FOUR_BAR % '<connect name="far" site1="rocker_end" site2="far"/>'
    model = load_mjcf(xml)
    tip0 = model.fk(model.neutral(), "tip")[:3, 3]
    r = model.ik(kinetree.Position(tip0), "tip", restarts=2)
    assert not r.success
    assert np.all(np.isfinite(r.q))
    assert "closed chains stay open" in r.message
    assert violations(model, r.q)[0, 0] > 1.0


@pytest.mark.parametrize("method", ["pinv", "fabrik", "lbfgs", "analytic"])
def test_methods_that_cannot_keep_them_refuse(method):
    model = load_mjcf(FOUR_BAR % (PIN % ""))
    tip = model.fk(model.neutral(), "tip")
    with pytest.raises(UnsupportedError, match="closed chains"):
        model.ik(kinetree.Position(tip[:3, 3]), "tip", method=method)


def test_closed_forms_and_the_gpu_refuse_them():
    model = load_mjcf(FOUR_BAR % (PIN % ""))
    tip = model.fk(model.neutral(), "tip")
    with pytest.raises(UnsupportedError, match="closed chains"):
        model.ik_all(tip, "tip")
    with pytest.raises(UnsupportedError, match="closed chains"):
        model.ik(tip, "tip", device="cuda")


def test_a_batch_and_a_direction_keep_the_loop():
    xml = FOUR_BAR % (PIN % "")
    model = load_mjcf(xml)
    m, d = _mujoco(xml)
    tip0 = model.fk(model.neutral(), "tip")[:3, 3]
    xyz = np.array([tip0 + np.array([dx, 0.0, 0.0]) for dx in (0.03, 0.1, -0.05)])
    r = model.ik(kinetree.Position(xyz, mask=[1, 0, 0]), "tip")
    assert r.success.shape == (3,) and np.all(r.success)
    for q in r.q:
        assert np.max(np.abs(_efc(m, d, q))) <= 1e-6
    z_goal = model.fk(r.q[1], "coupler")[:3, 2]  # a turn of the coupler the linkage reaches
    r = model.ik(kinetree.Direction(z_goal, axis=[0, 0, 1]), "coupler")
    assert r.success, r.message
    assert model.fk(r.q, "coupler")[:3, 2] @ z_goal == pytest.approx(1.0, abs=1e-9)
    assert np.max(np.abs(_efc(m, d, r.q))) <= 1e-6
