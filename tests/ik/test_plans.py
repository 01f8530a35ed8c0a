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
PL = importlib.import_module("kinetree.ik._plans")  # the plans the dispatcher picks


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


def test_equal_scalars_of_another_type_are_validated_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Non-integral floats, strings and names are answered by equality (a new list of the
    same names, a float computed again); an int, a bool or an integral float only by
    identity, since 5 and 5.0, 1 and True compare equal but validate differently."""
    names = ["panda_joint1", "panda_joint2"]
    a = O.resolve({"active": names, "tol": 1e-6, "time_budget": 0.005})

    def no_freeze(value: object) -> object:
        raise AssertionError("resolved again")

    monkeypatch.setattr(O, "_freeze", no_freeze)
    tb = float("0.005")  # equal, another object
    assert O.resolve({"active": list(names), "tol": 1e-6, "time_budget": tb}) is a
    monkeypatch.undo()
    O.resolve({"max_iter": 5, "tol": 1e-6})
    with pytest.raises(kinetree.errors.InvalidValueError, match="max_iter"):
        O.resolve({"max_iter": 5.0, "tol": 1e-6})
    O.resolve({"respect_limits": True})
    with pytest.raises(kinetree.errors.InvalidValueError):
        O.resolve({"respect_limits": 1})


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
    for rel, dispatcher in (("ik/methods/fabrik.py", "..solve"),
                            ("ik/methods/scipy_solvers.py", "..solve"),
                            ("ik/methods/seeded.py", "..solve"),
                            ("gpu/api.py", "..ik.solve")):  # fmt: skip
        assert dispatcher not in _imports(SRC / rel), rel
    assert ".solve" not in _imports(SRC / "ik" / "_run.py")


def test_clock_and_random_generator_have_their_own_modules() -> None:
    from kinetree.ik.kernel import _clock, _random, _target_rows, _tasks

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
    from kinetree.ik.methods.analytic import ik_zxx_arm

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
        from kinetree.ik.methods.analytic import ik_seed003  # the old name warns when read

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


def test_single_pose_plan_follows_q0_changed_in_place(panda: Model) -> None:
    """The plan keeps the last ``q0`` and its view: an array refilled between calls (a
    control loop's buffer) is read afresh, and every answer is the general path's (a
    batch of one through the same driver)."""
    opts = IKOptions(tol=1e-6, time_budget=None, restarts=0, max_iter=50)
    Q = panda.random_configuration(6, rng=21)
    T = panda.fk(panda.random_configuration(6, rng=22))
    q0 = Q[0].copy()
    panda.ik(T[0], q0=q0, options=opts)  # the plan
    for k in range(6):
        q0[:] = Q[k]  # same object, new content
        one = panda.ik(T[k], q0=q0, options=opts)
        batch = panda.ik(T[k][None], q0=Q[k], options=opts)
        np.testing.assert_array_equal(one.q, batch.q[0])
        assert one.iterations == batch.iterations[0]
        assert bool(one.success) == bool(batch.success[0])
        err = np.linalg.norm(panda.fk(one.q)[:3, 3] - T[k][:3, 3])
        assert (err <= 1e-6) == bool(one.success)
    # a view of another array, a read-only array, a list: the same answers
    q_ro = Q[3].copy()
    q_ro.flags.writeable = False
    big = np.zeros((2, panda.nq))
    big[1] = Q[3]
    want = panda.ik(T[3], q0=Q[3].copy(), options=opts).q
    for q in (q_ro, big[1], list(Q[3]), big[:, ::1][1]):
        np.testing.assert_array_equal(panda.ik(T[3], q0=q, options=opts).q, want)


def test_single_pose_plan_checks_what_it_skips(panda: Model) -> None:
    """With a plan in place, bad input still raises: complex, non-finite and non-rigid
    poses, a q0 of the wrong size, unknown options."""
    T = panda.fk(panda.neutral() + 0.1)
    panda.ik(T, time_budget=None)
    panda.ik(T, time_budget=None)
    with pytest.raises(kinetree.errors.InvalidValueError, match="complex"):
        panda.ik(T.astype(complex), time_budget=None)
    bad = T.copy()
    bad[0, 3] = np.nan
    with pytest.raises(kinetree.errors.InvalidValueError, match="NaN"):
        panda.ik(bad, time_budget=None)
    bad = T.copy()
    bad[:3, :3] *= 2.0
    with pytest.raises(kinetree.errors.NotRigidError):
        panda.ik(bad, time_budget=None)
    with pytest.raises(kinetree.errors.KinetreeError):
        panda.ik(T, q0=np.zeros(panda.nq + 1), time_budget=None)
    with pytest.raises(kinetree.errors.InvalidValueError, match="unknown IK option"):
        panda.ik(T, time_budget=None, dampening=0.1)


def test_direct_entry_only_for_compiled_argument_types() -> None:
    """``_compile.entry`` hands out an overload's machine code only for argument types it
    was compiled for; anything else gets the dispatcher back."""
    from numba import njit

    from kinetree._compile import entry

    @njit
    def add(a: np.ndarray, k: int) -> float:
        return float(a[0] + k)

    x = np.ones(3)
    add(x, 1)
    direct = entry(add, (x, 1))
    assert direct is not add and direct(x, 2) == 3.0
    assert entry(add, (np.ones(3, np.float32), 1)) is add  # never compiled for float32
    assert entry(len, (x,)) is len  # not a numba function


# --- whole-body dicts: rows laid out once per (model, frames, options) ------------------


def _general(target: dict[str, Pose]) -> dict[str, Pose]:
    """The same targets, each with explicit unit weights: the same rows, built by the
    general assembly (``encode_plain`` refuses weighted poses)."""
    return {f: Pose(p.T, position_weight=1.0, orientation_weight=1.0) for f, p in target.items()}


def _whole_body_targets(model: Model, n: int, seed: int) -> list[dict[str, Pose]]:
    """Poses of the first four end effectors at configurations near neutral."""
    gen = np.random.default_rng(seed)
    lo, hi = model.limits[:, 0], model.limits[:, 1]
    out = []
    for _ in range(n):
        q = np.clip(model.neutral() + gen.uniform(-0.3, 0.3, model.nq), lo, hi)
        out.append({f: Pose(model.fk(q, f)) for f in model.end_effectors[:4]})
    return out


def test_whole_body_dict_plan_bit_identical_to_general_path(
    humanoid: Model, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Four 6D effectors through the plan (first call, repeated, keywords with a ``rest=``
    array and ``time_budget=``) give bit for bit the q of the general assembly, without
    building a Problem, and FK of that q reaches every target."""
    rest = humanoid.neutral().copy()
    kw = {"rest": rest, "time_budget": 30.0, "tol": 1e-6}
    opts = IKOptions(rest=tuple(rest), time_budget=30.0, tol=1e-6)
    targets = _whole_body_targets(humanoid, 6, 3)
    generals = [humanoid.ik(_general(t), options=opts) for t in targets]

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("general assembly used")

    monkeypatch.setattr(S, "build_problem", refused)
    solved = 0
    for target, general in zip(targets, generals, strict=True):
        runs = [humanoid.ik(target, options=opts), humanoid.ik(dict(target), options=opts)]
        runs += [humanoid.ik(target, **kw), humanoid.ik(target, **kw)]
        for r in runs:
            np.testing.assert_array_equal(r.q, general.q)
            assert (r.success, r.iterations) == (general.success, general.iterations)
        if general.success:
            solved += 1
            for f, p in target.items():
                assert np.abs(humanoid.fk(general.q, f) - np.asarray(p.T)).max() <= 1e-5
    assert solved >= 5


def test_dict_plan_follows_kind_and_shape_changes(humanoid: Model) -> None:
    """The same frames again with a position where a pose was, a masked pose, a pose that
    is not rigid or has NaN: each answered as the general path answers it."""
    target = _whole_body_targets(humanoid, 1, 5)[0]
    opts = IKOptions(tol=1e-6)
    humanoid.ik(target, options=opts)  # the plan for four poses
    frames = list(target)
    mixed = dict(target)
    mixed[frames[2]] = Position(np.asarray(target[frames[2]].T)[:3, 3].copy())
    general = run_problem(P.build_problem(humanoid, mixed, None, opts), 0.0)
    np.testing.assert_array_equal(humanoid.ik(mixed, options=opts).q, general.q)
    masked = dict(target)
    masked[frames[0]] = Pose(target[frames[0]].T, orientation_mask=[1, 1, 0])
    general = run_problem(P.build_problem(humanoid, masked, None, opts), 0.0)
    np.testing.assert_array_equal(humanoid.ik(masked, options=opts).q, general.q)
    bad = np.array(target[frames[1]].T, dtype=float)
    bad[3, 0] = 0.5
    with pytest.raises(kinetree.errors.NotRigidError):
        humanoid.ik({**target, frames[1]: Pose(bad)}, options=opts)
    bad = np.array(target[frames[1]].T, dtype=float)
    bad[0, 3] = np.nan
    with pytest.raises(kinetree.errors.InvalidValueError, match="NaN"):
        humanoid.ik({**target, frames[1]: Pose(bad)}, options=opts)
    import pickle

    unpickled = {f: Pose(pickle.loads(pickle.dumps(np.asarray(p.T)))) for f, p in target.items()}
    assert unpickled[frames[0]].T.dtype is not np.dtype(np.float64)  # equal, another object
    general = run_problem(P.build_problem(humanoid, target, None, opts), 0.0)
    np.testing.assert_array_equal(humanoid.ik(unpickled, options=opts).q, general.q)
    np.testing.assert_array_equal(  # the plan still answers afterwards
        humanoid.ik(target, options=opts).q, humanoid.ik(_general(target), options=opts).q
    )


def test_dict_plan_shared_by_threads(humanoid: Model) -> None:
    """The plan's rows and scratch serve the thread that made it; other threads fill
    their own, and every answer is the one a lone call gives."""
    from concurrent.futures import ThreadPoolExecutor

    opts = IKOptions(tol=1e-6, time_budget=None)
    targets = _whole_body_targets(humanoid, 12, 7)
    alone = [humanoid.ik(t, options=opts).q for t in targets]
    with ThreadPoolExecutor(4) as pool:
        shared = list(pool.map(lambda t: humanoid.ik(t, options=opts).q, targets * 3))
    for k, q in enumerate(shared):
        np.testing.assert_array_equal(q, alone[k % len(targets)])


def test_keyword_array_answered_by_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    """``rest=`` an array, passed again as the same object with the same content, is
    answered without freezing its bytes into a key again; changed in place, it is not."""
    rest = np.zeros(7)
    kw = {"rest": rest, "time_budget": 0.005, "tol": 1e-6}
    a = O.resolve(kw)

    def no_freeze(value: object) -> object:
        raise AssertionError("resolved again")

    monkeypatch.setattr(O, "_freeze", no_freeze)
    assert O.resolve(dict(kw)) is a
    monkeypatch.undo()
    rest[2] = 0.25
    assert O.resolve(kw).rest[2] == 0.25


def test_same_objects_under_other_names_resolve_apart() -> None:
    """The identity shortcut pairs each value with its own name: the same two objects
    swapped between two options are other options."""
    small, large = 1e-3, 0.25
    a = O.resolve({"tol": small, "rest_gain": large})
    b = O.resolve({"rest_gain": small, "tol": large})
    assert (a.tol, a.rest_gain) == ((small, small), large)  # tol: (position, rotation)
    assert (b.tol, b.rest_gain) == ((large, large), small)


def test_dict_plan_writes_poses_into_its_rows(
    humanoid: Model, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once a plan for these frames exists, new poses are written straight into its rows
    (no per-target row encoding), with the general assembly's answer."""
    targets = _whole_body_targets(humanoid, 4, 11)
    opts = IKOptions(tol=1e-6)
    generals = [run_problem(P.build_problem(humanoid, t, None, opts), 0.0) for t in targets]
    humanoid.ik(targets[0], options=opts)  # the plan

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("rows encoded one by one")

    monkeypatch.setattr(S, "encode_plain", refused)
    monkeypatch.setattr(PL, "encode_plain", refused)
    for target, general in zip(targets, generals, strict=True):
        r = humanoid.ik(target, options=opts)
        np.testing.assert_array_equal(r.q, general.q)
        assert r.success == general.success


def test_dict_plan_result_read_as_the_general_path_reads_it(humanoid: Model) -> None:
    """A solved dict's result is built straight from the driver's row (no general
    reading): every field but the time equals the general assembly's, unsolved ones too."""
    opts = IKOptions(tol=1e-6)
    targets = _whole_body_targets(humanoid, 4, 13)
    far = dict(targets[0])
    f0 = next(iter(far))
    T = np.array(far[f0].T, dtype=float)
    T[:3, 3] += 50.0  # out of reach: not solved
    far[f0] = Pose(T)
    humanoid.ik(targets[0], options=opts)  # the plan
    solved = 0
    for target in [*targets, far]:
        general = run_problem(P.build_problem(humanoid, target, None, opts), 0.0)
        r = humanoid.ik(target, options=opts)
        np.testing.assert_array_equal(r.q, general.q)
        np.testing.assert_array_equal(r.position_error, general.position_error)
        np.testing.assert_array_equal(r.orientation_error, general.orientation_error)
        for name in ("success", "iterations", "restarts", "message", "reachable", "frames"):
            assert getattr(r, name) == getattr(general, name), name
        assert r.method == general.method
        solved += r.success
    assert solved >= 3


def test_repeated_whole_body_dict_goes_straight_to_its_plan(
    humanoid: Model, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same model, options and frames again: the plan of the dict before answers
    without the dispatcher's general checks (its batch-size search over every target's
    fields cost more than the solve), with the general assembly's answer."""
    opts = IKOptions(tol=1e-6, time_budget=None)
    targets = _whole_body_targets(humanoid, 5, 17)
    generals = [run_problem(P.build_problem(humanoid, t, None, opts), 0.0) for t in targets]
    humanoid.ik(targets[0], options=opts)  # the plan
    humanoid.ik(targets[0], tol=1e-6, time_budget=None)  # and one for these keywords

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("general path used")

    monkeypatch.setattr(S, "_solve", refused)
    q0 = humanoid.neutral()
    for target, general in zip(targets, generals, strict=True):
        runs = [
            humanoid.ik(target, options=opts),
            humanoid.ik(target, tol=1e-6, time_budget=None),
            humanoid.ik(target, options=opts, q0=q0),
            humanoid.ik(target, options=opts, q0=q0[None][0]),  # a view
        ]
        for r in runs:
            np.testing.assert_array_equal(r.q, general.q)
            assert (r.success, r.iterations) == (general.success, general.iterations)
    monkeypatch.undo()
    # ``kinetree.ik.solve`` takes the plan before the batch check too.
    monkeypatch.setattr(S, "_check_batch_memory", refused)
    r = S.solve(humanoid, targets[1], options=opts)
    np.testing.assert_array_equal(r.q, generals[1].q)


def test_repeated_dict_leaves_what_it_cannot_answer_to_the_general_path(
    humanoid: Model,
) -> None:
    """A batch of starts, a list ``q0``, pinned frames and other frames are the general
    path's, with its answers and its errors, after a plan for the same options exists."""
    opts = IKOptions(tol=1e-6, time_budget=None)
    target = _whole_body_targets(humanoid, 1, 19)[0]
    general = run_problem(P.build_problem(humanoid, target, None, opts), 0.0)
    humanoid.ik(target, options=opts)  # the plan
    q0 = humanoid.neutral()
    listed = humanoid.ik(target, options=opts, q0=q0.tolist())
    np.testing.assert_array_equal(listed.q, general.q)
    with pytest.raises(kinetree.errors.KinetreeError):
        humanoid.ik(target, options=opts, q0=np.broadcast_to(q0, (10**9, humanoid.nq)))
    frames = list(target)
    fewer = {f: target[f] for f in frames[:3]}
    np.testing.assert_array_equal(
        humanoid.ik(fewer, options=opts).q,
        run_problem(P.build_problem(humanoid, fewer, None, opts), 0.0).q,
    )
    pinned = IKOptions(tol=1e-6, pin=(frames[3],))
    for _ in range(2):  # the second call too: the pinned frame joins the dict
        with pytest.raises(kinetree.errors.InvalidValueError, match="pinned"):
            humanoid.ik(target, options=pinned)
