"""The per-call path of ``Model.ik``: keyword options remembered once per distinct set
(content, not just identity, decides), plain pose dicts straight to the driver with the
same answer as the general assembly, and the module that runs templates standing apart
from the dispatcher."""

from __future__ import annotations

import ast
import importlib
import warnings
from pathlib import Path

import numpy as np
import pytest

import kinetree
from kinetree import IKOptions, Model, Pose, Position
from kinetree.ik import options as O
from kinetree.ik import problem as P
from kinetree.ik._run import run_problem

SRC = Path(kinetree.__file__).resolve().parent
S = importlib.import_module("kinetree.ik.solve")  # the module, not ik.solve()


@pytest.fixture(scope="module")
def panda() -> Model:
    return kinetree.load("panda")


@pytest.fixture(scope="module")
def humanoid() -> Model:
    return kinetree.load("humanoid")


def test_keyword_lists_resolved_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same list object again is answered without freezing it into a key again."""
    names = ["panda_joint1", "panda_joint2", "panda_joint3"]
    kw = {"active": names, "tol": 1e-6, "time_budget": 0.005}
    a = O.resolve(kw)

    def no_freeze(value: object) -> object:
        raise AssertionError("resolved again")

    monkeypatch.setattr(O, "_freeze", no_freeze)
    assert O.resolve(kw) is a
    assert O.resolve(dict(kw)) is a  # a new dict of the same objects
    monkeypatch.undo()
    names[1] = "panda_joint5"  # changed in place: never answered from the old content
    b = O.resolve(kw)
    assert b.active == ("panda_joint1", "panda_joint5", "panda_joint3") != a.active
    names.append("panda_joint7")
    assert O.resolve(kw).active == tuple(names)


def test_keyword_arrays_compared_by_content() -> None:
    rest = np.zeros(7)
    a = O.resolve({"rest": rest, "rest_gain": 0.1})
    assert O.resolve({"rest": rest, "rest_gain": 0.1}) is a
    rest[3] = 0.5  # in place: the next call must see it
    b = O.resolve({"rest": rest, "rest_gain": 0.1})
    assert b is not a and b.rest[3] == 0.5 and a.rest[3] == 0.0


def test_numbers_of_different_types_stay_apart() -> None:
    """1, 1.0 and True compare equal but validate differently: a remembered list of one
    must not answer for a list of another."""
    a = O.resolve({"tol": [1e-6, 1e-6]})
    seq = [1e-6, 1e-6]
    assert O.resolve({"tol": seq}) == a
    with pytest.raises(kinetree.errors.InvalidValueError):
        O.resolve({"max_iter": [True]})


def test_keywords_and_prebuilt_options_solve_alike(panda: Model) -> None:
    names = list(panda.joint_names)
    opts = IKOptions(active=names, tol=1e-6, time_budget=0.005)
    Q = panda.random_configuration(5, rng=4)
    for T in panda.fk(Q):
        r1 = panda.ik(T, options=opts)
        r2 = panda.ik(T, active=names, tol=1e-6, time_budget=0.005)
        np.testing.assert_array_equal(r1.q, r2.q)
        assert r1.success and r2.success
        err = np.linalg.norm(panda.fk(r2.q)[:3, 3] - T[:3, 3])
        assert err <= 1e-6


def test_plain_pose_dict_skips_the_general_assembly(
    humanoid: Model, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dict of plain poses and positions gets the answer of the general assembly
    (the same template and rows), without building a Problem."""
    frames = list(humanoid.end_effectors[:4])
    q_goal = humanoid.random_configuration(rng=2)
    target = {f: Pose(humanoid.fk(q_goal, f)) for f in frames[:3]}
    target[frames[3]] = Position(humanoid.fk(q_goal, frames[3])[:3, 3])
    opts = IKOptions(tol=1e-6)
    general = run_problem(P.build_problem(humanoid, target, None, opts), 0.0)

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("general assembly used")

    monkeypatch.setattr(S, "build_problem", refused)
    fast = humanoid.ik(target, options=opts)
    again = humanoid.ik(dict(target), options=opts)  # the remembered template
    for r in (fast, again):
        np.testing.assert_array_equal(r.q, general.q)
        assert r.success == general.success and r.frames == tuple(frames)
        assert r.iterations == general.iterations
    assert fast.success
    for f, t in target.items():  # FK of the answer reaches every target
        M = humanoid.fk(fast.q, f)
        if isinstance(t, Pose):
            assert np.abs(M - t.T).max() <= 1e-5
        else:
            assert np.linalg.norm(M[:3, 3] - t.xyz) <= 1e-6


def test_dicts_the_fast_path_leaves_to_the_general_one(humanoid: Model) -> None:
    f = humanoid.end_effectors[0]
    T = humanoid.fk(humanoid.neutral(), f)
    with pytest.raises(kinetree.errors.UnknownNameError, match="frame"):
        humanoid.ik({"no_such_frame": Pose(T)})
    with pytest.raises(kinetree.errors.InvalidValueError, match="frame names"):
        humanoid.ik({1: Pose(T)})
    with pytest.raises(kinetree.errors.InvalidValueError, match="dict"):
        humanoid.ik({f: Pose(T)}, f)
    weighted = humanoid.ik({f: Pose(T, position_weight=2.0)})
    assert weighted.success


def _imports(path: Path) -> set[str]:
    """Every module a file imports from (relative ones as written: ``.solve``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            out.add("." * node.level + (node.module or ""))
    return out


def test_template_runners_do_not_import_the_dispatcher() -> None:
    """``fabrik``, the scipy methods and the GPU twin run templates through ``ik._run``,
    not through the dispatcher that calls them (issue 21, item 3)."""
    for rel, dispatcher in (("ik/fabrik.py", ".solve"), ("ik/scipy_solvers.py", ".solve"),
                            ("gpu/api.py", "..ik.solve")):  # fmt: skip
        assert dispatcher not in _imports(SRC / rel), rel
    assert ".solve" not in _imports(SRC / "ik" / "_run.py")


def test_clock_and_random_generator_have_their_own_modules() -> None:
    from kinetree.ik import _clock, _random, _target_rows, _tasks

    # The old names stay importable (the loop still imports them from _tasks).
    assert _tasks.monotonic is _clock.monotonic and _tasks.rand01 is _random.rand01
    assert _tasks.check_targets is _target_rows.check_targets
    state = np.array([7], dtype=np.uint64)
    draws = [_random.rand01(state) for _ in range(1000)]
    assert all(0.0 <= d < 1.0 for d in draws) and 0.45 < np.mean(draws) < 0.55
    buf = np.zeros(2, dtype=np.int64)
    t0 = _clock.monotonic(buf)
    assert _clock.monotonic(buf) >= t0 > 0.0


def test_old_run_names_still_importable() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from kinetree.ik.solve import raise_status, run  # noqa: F401


def test_seed_document_names_retired_with_aliases() -> None:
    """The z-x-x arm is no longer named after its seed document; the old names load the
    same model with a DeprecationWarning for one release."""
    from kinetree import models
    from kinetree.ik.analytic import ik_seed003, ik_zxx_arm

    new = models.get("zxx_arm")
    assert "zxx_arm" in models.available() and "seed003_arm" not in models.available()
    models.get.cache_clear()
    with pytest.warns(DeprecationWarning, match="zxx_arm"):
        old = models.get("seed003_arm")
    with pytest.warns(DeprecationWarning, match="zxx_arm"):
        built = models.seed003_arm()
    q = np.array([0.3, -0.4, 1.1])
    for m in (old, built):
        np.testing.assert_array_equal(m.fk(q), new.fk(q))
    p = new.fk(q)[:3, 3]
    with pytest.warns(DeprecationWarning, match="ik_zxx_arm"):
        old_rows = ik_seed003(0.10, 0.05, 0.20, 0.15, (0, 0, 0), p)
    np.testing.assert_array_equal(old_rows, ik_zxx_arm(0.10, 0.05, 0.20, 0.15, (0, 0, 0), p))
    assert any(np.allclose(new.fk(r)[:3, 3], p, atol=1e-9) for r in new.ik_all(p))


def test_single_pose_plan_shared_by_threads(panda: Model) -> None:
    """The single-pose plan reuses its scratch in the thread that made it; other threads
    (the driver runs without the GIL) get their own, and every answer is the one a lone
    call gives."""
    from concurrent.futures import ThreadPoolExecutor

    opts = IKOptions(tol=1e-6, time_budget=None, restarts=3)
    T = panda.fk(panda.random_configuration(40, rng=9))
    panda.ik(T[0], options=opts)  # the plan, made here
    alone = [panda.ik(t, options=opts).q for t in T]
    with ThreadPoolExecutor(4) as pool:
        shared = list(pool.map(lambda t: panda.ik(t, options=opts).q, list(T) * 3))
    for k, q in enumerate(shared):
        np.testing.assert_array_equal(q, alone[k % len(T)])
