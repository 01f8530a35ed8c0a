"""Bad arguments at the public edge, and requests too large for memory (issue 22).

Each row of :data:`REFUSED` is one check: the call raises a
:class:`~kinetree.KinetreeError` subclass whose message names the argument (where there
were NaN tracebacks, plain ``TypeError``s, silently ignored keywords or values accepted
before). The memory guards are tested with :data:`kinetree._validate.MAX_BYTES` lowered,
so the sizes asked for stay small even if a guard were missing: no test here builds a
large array (the report's own sizes, 10**9 frames and the like, would fill the machine
were a guard ever lost), and :mod:`tracemalloc` shows that a refusal builds nothing first.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import kinetree
import kinetree.diffik as dk
import kinetree.distributed as kd
import kinetree.workspace as ws
from kinetree import _validate
from kinetree import geometry as geo
from kinetree.anim import Motion, interpolate, write_motion_bvh
from kinetree.errors import (
    FileFormatError,
    InvalidValueError,
    KinetreeError,
    ShapeError,
    UnknownNameError,
    UnsupportedError,
)

DATA = Path(kinetree.__file__).resolve().parent / "data"
CMU = DATA / "cmu_12_01_walk.bvh"
PANDA_URDF = Path(kinetree.__file__).resolve().parent / "models" / "data" / "panda.urdf"
NOWHERE = "tcp://127.0.0.1:9"  # never reached: the arguments are refused first


@cache
def panda() -> kinetree.Model:
    return kinetree.load("panda")


@cache
def planar() -> kinetree.Model:
    return kinetree.load("planar2r")


@cache
def floating() -> kinetree.Model:
    """The Panda on a free base: a quaternion at ``q[3:7]``."""
    return panda().with_floating_base()


@cache
def two_link() -> kinetree.Model:
    """Two links, a collision sphere on the second: distances to measure."""
    b = kinetree.ModelBuilder("two", root="base")
    b.add_joint("j1", "base", "l1", axis="z", limits=(-3, 3))
    b.add_joint("j2", "l1", "l2", axis="y", origin=kinetree.spatial.translation([0, 0, 0.5]),
                limits=(-3, 3))  # fmt: skip
    b.add_geometry("l2", geo.Sphere(radius=0.05, kind="collision"))
    return b.build()


@cache
def walk() -> kinetree.BVHClip:
    return kinetree.read_bvh(CMU).slice(0, 12)


def _pose() -> np.ndarray:
    return panda().fk(panda().neutral())


def _nan_quat() -> np.ndarray:
    q = floating().neutral()
    q[3:7] = np.nan
    return q


def _frame_task() -> Any:
    return dk.FrameTask(panda().end_effectors[0], _pose())


def _diffik(**kw: Any) -> Any:
    return dk.solve(panda(), panda().neutral(), [_frame_task()], **kw)


def _no_suffix(tmp: Path) -> Path:
    p = tmp / "robot"
    p.write_text(PANDA_URDF.read_text())
    return p


#: (what, call (given a temporary folder), error class, pattern of the message)
REFUSED: list[tuple[str, Callable[[Path], Any], type[KinetreeError], str]] = [
    # obstacles and distances
    ("HalfSpace offset of two numbers", lambda t: kinetree.HalfSpace((0, 0, 1), [1, 2]),
     ShapeError, "HalfSpace offset must be one number"),
    ("obstacle name=5", lambda t: kinetree.Sphere(0.1, (2, 0, 0), name=5),
     InvalidValueError, "Sphere name must be a str"),
    ("obstacles=np.zeros(3)", lambda t: two_link().distance(two_link().neutral(), np.zeros(3)),
     InvalidValueError, r"obstacles must be .*ndarray of shape \(3,\)"),
    ("in_collision margin=-1",
     lambda t: two_link().in_collision(two_link().neutral(), [kinetree.Sphere(0.1)], margin=-1),
     InvalidValueError, "margin"),
    ("distance with an unknown keyword", lambda t: two_link().distance(two_link().neutral(), foo=1),
     UnknownNameError, "distance has no keyword 'foo'.*max_spheres"),
    ("in_collision with an unknown keyword",
     lambda t: two_link().in_collision(two_link().neutral(), maxspheres=3),
     UnknownNameError, "in_collision has no keyword 'maxspheres'"),
    # keywords of batches, maps and diffik
    ("kd.ik with an unknown keyword", lambda t: kd.ik(panda(), _pose(), client=NOWHERE, tole=1),
     UnknownNameError, "no keyword 'tole'.*tol"),
    ("reachability with an unknown keyword", lambda t: ws.reachability(panda(), resolutoin=0.1),
     UnknownNameError, "reachability has no keyword 'resolutoin'"),
    ("diffik.solve with an option the built-in solver ignores",
     lambda t: _diffik(verbose=True), InvalidValueError, "solver 'kinetree' takes no options"),
    ("diffik.solve_step with an option the built-in solver ignores",
     lambda t: dk.solve_step(panda(), panda().neutral(), [_frame_task()], 0.1, eps=1e-9),
     InvalidValueError, "solver 'kinetree' takes no options"),
    ("diffik.solve max_steps='x'", lambda t: _diffik(max_steps="x"), InvalidValueError,
     "max_steps"),
    ("diffik.solve max_steps=inf", lambda t: _diffik(max_steps=float("inf")), InvalidValueError,
     "max_steps"),
    ("diffik.solve goals=[1]", lambda t: _diffik(goals=[1]), InvalidValueError, "goals"),
    ("DampingTask(nan)", lambda t: dk.DampingTask(float("nan")), InvalidValueError, "cost"),
    ("VelocityLimit('a')", lambda t: dk.VelocityLimit("a"), InvalidValueError, "max_velocity"),
    ("VelocityLimit(-1)", lambda t: dk.VelocityLimit(-1.0), InvalidValueError, "max_velocity"),
    # retargeting
    ("retarget up=5", lambda t: kinetree.retarget(walk(), "humanoid", up=5),
     InvalidValueError, "up must be"),
    ("retarget iterations=5", lambda t: kinetree.retarget(walk(), "humanoid", iterations=5),
     InvalidValueError, "iterations"),
    ("retarget self_collision='yes'",
     lambda t: kinetree.retarget(walk(), "humanoid", self_collision="yes"),
     InvalidValueError, "self_collision"),
    ("retarget source_scale='cm'",
     lambda t: kinetree.retarget(walk(), "humanoid", source_scale="cm"),
     InvalidValueError, "source_scale"),
    ("retarget max_joint_speed='fast'",
     lambda t: kinetree.retarget(walk(), "humanoid", max_joint_speed="fast"),
     InvalidValueError, "max_joint_speed"),
    ("retarget contacts='no'", lambda t: kinetree.retarget(walk(), "humanoid", contacts="no"),
     InvalidValueError, "contacts"),
    # motions
    ("Motion fps='a'", lambda t: Motion(panda(), np.zeros((2, 7)), fps="a"),
     InvalidValueError, "fps"),
    ("Motion(None, Q)", lambda t: Motion(None, np.zeros((2, 7))),  # type: ignore[arg-type]
     InvalidValueError, "model must be a kinetree.Model"),
    ("write_motion_bvh(path, None, Q)",
     lambda t: write_motion_bvh(t / "m.bvh", None, np.zeros((2, 7))),  # type: ignore[arg-type]
     InvalidValueError, "model must be a kinetree.Model"),
    # configurations
    ("random_configuration(-1)", lambda t: panda().random_configuration(-1),
     InvalidValueError, "n .*integer"),
    ("random_configuration((2, 3))", lambda t: panda().random_configuration((2, 3)),
     InvalidValueError, "n .*integer"),
    ("random_configuration(1.5)", lambda t: panda().random_configuration(1.5),
     InvalidValueError, "n .*integer"),
    ("random_configuration(rng='x')", lambda t: panda().random_configuration(2, rng="x"),
     InvalidValueError, "rng"),
    ("within_limits of a wrong shape", lambda t: panda().within_limits(np.zeros(3)),
     ShapeError, r"q must have shape \(\.\.\., 7\)"),
    ("integrate of wrong shapes", lambda t: panda().integrate(np.zeros(7), np.zeros(2)),
     ShapeError, r"v must have shape \(\.\.\., 7\)"),
    ("integrate of batches that do not broadcast",
     lambda t: panda().integrate(np.zeros((2, 7)), np.zeros((3, 7))), ShapeError, "broadcast"),
    ("difference of a wrong shape", lambda t: panda().difference(np.zeros(3), np.zeros(7)),
     ShapeError, "q0 must have shape"),
    ("within_limits with a NaN quaternion", lambda t: floating().within_limits(_nan_quat()),
     InvalidValueError, "NaN"),
    ("integrate with a NaN quaternion",
     lambda t: floating().integrate(_nan_quat(), np.zeros(floating().nv)),
     InvalidValueError, "NaN"),
    ("difference with a NaN quaternion",
     lambda t: floating().difference(floating().neutral(), _nan_quat()),
     InvalidValueError, "NaN"),
    ("with_floating_base(joint=5)", lambda t: panda().with_floating_base(joint=5),
     InvalidValueError, "joint must be a name"),
    # complex numbers (their imaginary part was dropped with a warning)
    ("fk of complex q", lambda t: panda().fk(panda().neutral() + 1j), InvalidValueError,
     "complex"),
    ("ik of a complex pose", lambda t: panda().ik(_pose() + 0j), InvalidValueError, "complex"),
    ("ik of a batch of complex poses", lambda t: panda().ik(np.stack([_pose()] * 2) + 0j),
     InvalidValueError, "complex"),
    # IK options
    ("IKOptions(cutoff=0)", lambda t: kinetree.IKOptions(cutoff=0), InvalidValueError, "cutoff"),
    ("kd.ik progress='x'", lambda t: kd.ik(panda(), _pose(), client=NOWHERE, progress="x"),
     InvalidValueError, "progress"),
    ("reachability progress='x'",
     lambda t: ws.reachability(planar(), resolution=0.5, orientations=0, progress="x"),
     InvalidValueError, "progress"),
    ("kd.map progress='x'", lambda t: kd.map(str, [1], client=NOWHERE, progress="x"),
     InvalidValueError, "progress"),
    ("kd.ik of an Orientation",
     lambda t: kd.ik(panda(), kinetree.Orientation(np.eye(3)), client=NOWHERE),
     UnsupportedError, "model.ik"),
    # files
    ("rmap.save(folder)",
     lambda t: ws.reachability(planar(), resolution=0.5, orientations=0).save(t),
     InvalidValueError, "is a folder"),
    ("load('.')", lambda t: kinetree.load("."), FileFormatError, "is a folder"),
    ("load of a file without a suffix", lambda t: kinetree.load(_no_suffix(t)),
     UnsupportedError, "no suffix.*looks like URDF"),
    ("load(bvh, floating_base=True)", lambda t: kinetree.load(CMU, floating_base=True),
     UnsupportedError, "BVH skeleton's root joint already moves freely"),
    ("args= on a URDF", lambda t: kinetree.load(PANDA_URDF, args={"arm_id": "fr3"}),
     InvalidValueError, "args= are xacro arguments"),
    ("package_dirs=5 on a built-in model", lambda t: kinetree.load("panda", package_dirs=5),
     InvalidValueError, "package_dirs"),
    ("floating_base='yes'", lambda t: kinetree.load("panda", floating_base="yes"),
     InvalidValueError, "floating_base"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("call", "error", "pattern"),
    [pytest.param(c, e, p, id=what) for what, c, e, p in REFUSED],
)
def test_bad_input_is_refused_naming_it(
    call: Callable[[Path], Any], error: type[KinetreeError], pattern: str, tmp_path: Path
) -> None:
    with pytest.raises(error, match=pattern):
        call(tmp_path)


def test_an_mjcf_without_joints_says_so(tmp_path: Path) -> None:
    pytest.importorskip("mujoco")
    path = tmp_path / "statue.xml"
    path.write_text(
        '<mujoco><worldbody><body name="a" pos="0 0 1"><geom type="sphere" size="0.1"/>'
        '<body name="b" pos="0 0 0.5"><site name="tip"/></body></body></worldbody></mujoco>'
    )
    model = kinetree.load(path)
    with pytest.raises(UnsupportedError, match=r"no joint that IK could move.*0 degrees"):
        model.ik(model.fk(model.neutral(), "tip"), "tip")


def test_an_empty_active_names_active() -> None:
    """A model with joints and ``active=[]``: the message names ``active`` and its value
    (a model with no joints at all says that instead, above)."""
    with pytest.raises(InvalidValueError, match=r"active=\[\] selects no joint"):
        panda().ik(_pose(), active=[])


# --- numpy numbers are numbers ------------------------------------------------------------


def test_retarget_takes_numpy_counts_and_lengths() -> None:
    """``iterations`` of numpy ints and a numpy float height give the motion Python's give."""
    clip = walk()
    plain = kinetree.retarget(clip, "humanoid", "cmu", iterations=(2, 1), contact_height=0.05)
    numpy = kinetree.retarget(
        clip, "humanoid", "cmu", iterations=(np.int64(2), np.int32(1)),
        contact_height=np.float32(0.05),
    )  # fmt: skip
    np.testing.assert_allclose(numpy.q, plain.q, atol=1e-9)


# --- quaternions whose squared norm overflows ----------------------------------------------


def test_a_quaternion_with_entries_of_1e300_is_its_direction() -> None:
    m = floating()
    big, unit = m.neutral(), m.neutral()
    big[3:7] = [1e300, 1e300, 0.0, 0.0]
    unit[3:7] = [np.sqrt(0.5), np.sqrt(0.5), 0.0, 0.0]
    np.testing.assert_allclose(m.normalize(big), unit, atol=1e-15)
    np.testing.assert_allclose(m.fk(big), m.fk(unit), atol=1e-12)
    tiny = m.neutral()
    tiny[3:7] = [1e-200, 1e-200, 0.0, 0.0]
    np.testing.assert_allclose(m.fk(tiny), m.fk(unit), atol=1e-12)
    np.testing.assert_allclose(kinetree.spatial.quat_normalize([0.0, 0.0, 0.0, 0.0]),
                               [1.0, 0.0, 0.0, 0.0])  # fmt: skip


@pytest.mark.parametrize("method", ["dls", "pinv", "auto"])
def test_ik_from_an_overflowing_quaternion_claims_nothing_false(method: str) -> None:
    """Once the start's quaternion was scaled to zero and a solve claimed success there."""
    m = floating()
    q0 = m.neutral()
    q0[3:7] = [1e300, 1e300, 0.0, 0.0]
    goal = m.fk(m.random_configuration(rng=3))
    r = m.ik(goal, q0=q0, method=method, time_budget=None)
    quat = np.asarray(r.q)[3:7]
    assert np.all(np.isfinite(r.q))
    assert np.linalg.norm(quat) == pytest.approx(1.0, abs=1e-9)
    if r.success:  # a claimed success is checked by FK
        np.testing.assert_allclose(m.fk(r.q), goal, atol=1e-5)
    # the same solve from the start's direction agrees
    q1 = q0.copy()
    q1[3:7] = [np.sqrt(0.5), np.sqrt(0.5), 0.0, 0.0]
    r1 = m.ik(goal, q0=q1, method=method, time_budget=None)
    np.testing.assert_allclose(r.q, r1.q, atol=1e-9)


# --- memory guards (item 9) ------------------------------------------------------------------

#: The limit the guards are tested with: 1 MiB, so every request below is small.
SMALL = 1024**2


def _refused_without_building(call: Callable[[], Any], pattern: str) -> None:
    with pytest.raises(InvalidValueError, match=pattern):
        call()  # once first: lazy imports and the cached models are not the request
    tracemalloc.start()
    try:
        with pytest.raises(InvalidValueError, match=pattern):
            call()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < SMALL, f"{peak:,} bytes built before the refusal"


@pytest.mark.parametrize(
    ("call", "pattern"),
    [
        pytest.param(lambda: interpolate(panda(), np.zeros((2, 7)), n_frames=100_000),
                     r"100,001 frames.*GiB", id="interpolate n_frames"),
        pytest.param(lambda: interpolate(panda(), np.zeros((3, 7)), n_frames=[5, 100_000]),
                     r"100,006 frames", id="interpolate n_frames per segment"),
        pytest.param(lambda: interpolate(panda(), np.zeros((2, 7)), times=[0.0, 5_000.0]),
                     r"150,001 frames \(times from 0 s to 5000 s", id="interpolate times"),
        pytest.param(lambda: interpolate(panda(), np.zeros((2, 7)), times=[-1e308, 1e308]),
                     r"inf frames", id="interpolate times whose span overflows"),
        pytest.param(lambda: ws.orientation_samples(10_000), "10,000 orientation samples",
                     id="orientation samples"),
        pytest.param(lambda: ws.reachability(planar(), resolution=1.0, orientations=10_000),
                     "10,000 orientation samples", id="reachability orientations"),
        pytest.param(lambda: ws.reachability(planar(), resolution=0.15, orientations=0),
                     "voxels.*coarser resolution", id="reachability resolution"),
        pytest.param(lambda: panda().random_configuration(10_000), "10,000 configurations",
                     id="random configurations"),
        pytest.param(lambda: kinetree.retarget(walk(), "humanoid", "cmu", smooth=5.0),
                     r"smooth=5\.0 s .*smooth less", id="retarget smooth"),
    ],
)  # fmt: skip
def test_requests_too_large_are_refused_before_anything_is_built(
    call: Callable[[], Any], pattern: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_validate, "MAX_BYTES", SMALL)
    _refused_without_building(call, pattern)


def test_check_memory_and_the_other_helpers() -> None:
    _validate.check_memory(_validate.MAX_BYTES, "exactly the limit", "")
    for n in (_validate.MAX_BYTES + 1, float("inf"), float("nan")):
        with pytest.raises(InvalidValueError, match=r"needs .* GiB"):
            _validate.check_memory(n, "too much", "ask for less")
    assert _validate.check_count(np.int64(3), "n") == 3
    for bad in (True, 1.0, "3", -1, _validate.MAX_COUNT + 1):
        with pytest.raises(InvalidValueError, match="n must be an integer"):
            _validate.check_count(bad, "n")
    assert _validate.check_bool(np.bool_(True), "flag") is True
    assert _validate.check_bool(None, "flag", none=True) is None
    with pytest.raises(InvalidValueError, match="flag must be True or False"):
        _validate.check_bool("yes", "flag")
    with pytest.raises(UnknownNameError, match="f has no keyword 'b'; its keywords are: a"):
        _validate.check_keywords({"b": 1}, ["a"], "f")


def test_none_entries_are_named_where_they_are() -> None:
    panda = kinetree.load("panda")
    with pytest.raises(InvalidValueError, match=r"q\[0\] is None, not a number"):
        panda.fk([None] * 7)
    with pytest.raises(InvalidValueError, match=r"q0\[3\] is None, not a number"):
        panda.ik(panda.fk(panda.neutral()), q0=[0.0, 0.0, 0.0, None, 0.0, 0.0, 0.0])
    with pytest.raises(InvalidValueError, match=r"q\[1, 2\] is 'x', not a number"):
        panda.fk(np.array([[0.0] * 7, [0, 0, "x", 0, 0, 0, 0]], dtype=object))
