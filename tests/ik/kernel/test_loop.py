"""The IK core: packed layouts read back slot by slot, option validation, the option
cache, and the IK defects of the hardening issue (each test fails on the old core)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import kinetree
from kinetree import IKOptions, Model, ModelBuilder, Pose, Position
from kinetree.errors import (
    InvalidValueError,
    KinetreeError,
    ModelStructureError,
    NotRigidError,
    ShapeError,
    UnknownNameError,
    UnsupportedError,
)
from kinetree.ik import Direction
from kinetree.ik import options as O
from kinetree.ik import problem as P
from kinetree.ik.kernel import layout as L
from kinetree.kinematics import layout as ML
from kinetree.kinematics import packed
from kinetree.spatial import pose_error, translation


@pytest.fixture(scope="module")
def panda() -> Model:
    return kinetree.load("panda")


@pytest.fixture(scope="module")
def T(panda: Model) -> np.ndarray:
    return panda.fk(panda.random_configuration(rng=11))


# --- layouts -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["panda", "ur5", "humanoid", "zxx_arm", "panda_urdf"])
def test_packed_model_reads_back_field_by_field(name: str) -> None:
    m = kinetree.load(name)
    fdata, idata = packed(m)
    assert fdata.shape == (m.n_nodes, ML.F_SIZE) and idata.shape == (m.n_nodes, ML.I_SIZE)
    assert not fdata.flags.writeable and not idata.flags.writeable
    for i in range(m.n_nodes):
        origin = fdata[i, ML.F_ORIGIN : ML.F_ORIGIN + 12].reshape(3, 4)
        np.testing.assert_array_equal(origin, m.origin[i, :3, :])
        np.testing.assert_array_equal(fdata[i, ML.F_AXIS : ML.F_AXIS + 3], m.axis[i])
        assert fdata[i, ML.F_MIMIC_SCALE] == m.q_scale[i]
        assert fdata[i, ML.F_MIMIC_OFFSET] == m.q_offset[i]
        assert idata[i, ML.I_PARENT] == m.parent[i]
        assert idata[i, ML.I_TYPE] == m.joint_type[i]
        assert idata[i, ML.I_Q_INDEX] == m.q_index[i]
        code = idata[i, ML.I_AXIS_CODE]
        if code:
            want = np.zeros(3)
            want[abs(code) - 1] = np.sign(code)
            np.testing.assert_array_equal(m.axis[i], want)
    assert packed(m) is packed(m)  # built once per model, outside the model


def test_config_written_is_read_back_by_the_kernel_reader() -> None:
    rng = np.random.default_rng(0)
    nq, nv, T, na = 9, 8, 2, 5  # one quaternion joint: nq = nv + 1
    scalars = {k: float(k) + 0.5 for k in range(L.C_HEAD)}
    ints = {L.N_MAX_ITER: 7, L.N_RESTARTS: 3, L.N_LIMITS: 1, L.N_PINV_FORM: 1, L.N_RECORD: 9,
            L.N_CLAMP: 1, L.N_STALL: 4, L.N_NQ: nq, L.N_NV: nv}  # fmt: skip
    blocks = tuple(rng.random(nq) for _ in range(L.N_Q_BLOCKS))
    reach, st_f = rng.random(T), rng.random(6)
    active, dof_node, pivot = np.array([0, 2, 3, 4, 7]), np.arange(nv) + 10, np.array([-1, 3])
    active_q = np.array([0, -1, -1, -1, 8])
    balls = np.array([[4, 2, 1, 0]])  # node 4, qw at q[2], angular DoF from active[1]
    st_i = np.array([1, 5, 6, 7, 0, 1, 2, 1])
    cfg, icfg = L.write_config(scalars, ints, blocks, reach, st_f, active, active_q, dof_node,
                               pivot, balls, st_i)  # fmt: skip
    cf = L.read_config(cfg, icfg, T)
    fields = ["tol_p", "tol_r", "step", "damping", "lambda_min", "budget", "rest_gain", "cutoff",
              "task_step", "max_joint_step"]  # fmt: skip
    for slot, fname in zip(
        [L.C_TOL_P, L.C_TOL_R, L.C_STEP, L.C_DAMPING, L.C_LAMBDA_MIN, L.C_BUDGET, L.C_REST_GAIN,
         L.C_CUTOFF, L.C_TASK_STEP, L.C_MAX_JOINT_STEP], fields,
    ):  # fmt: skip
        assert getattr(cf, fname) == scalars[slot], fname
    assert (cf.max_iter, cf.restarts, cf.limits, cf.pinv_form, cf.record, cf.na, cf.clamp,
            cf.stall) == (7, 3, True, 1, 9, na, True, 4)  # fmt: skip
    for arr, fname in zip(blocks, ["lo", "hi", "sample_lo", "sample_hi", "rest"]):
        np.testing.assert_array_equal(getattr(cf, fname), arr)
    np.testing.assert_array_equal(cf.reach, reach)
    np.testing.assert_array_equal(cf.st_f, st_f)
    np.testing.assert_array_equal(cf.active, active)
    np.testing.assert_array_equal(cf.active_q, active_q)
    np.testing.assert_array_equal(cf.balls, balls)
    np.testing.assert_array_equal(cf.balls[0, [L.BA_NODE, L.BA_Q, L.BA_KK, L.BA_KEEP]],
                                  [4, 2, 1, 0])  # fmt: skip
    np.testing.assert_array_equal(cf.dof_node, dof_node)
    np.testing.assert_array_equal(cf.pivot, pivot)
    np.testing.assert_array_equal(cf.st_i, st_i)


def test_pack_unpack_round_trip(panda: Model) -> None:
    tpl = P.cached_template(panda, ("flange",), (0,), np.tile([1.0], (1, L.TARGET_SIZE)),
                            IKOptions())  # fmt: skip
    fdata, idata = packed(panda)
    parts = L.unpack(tpl.ibuf, tpl.fbuf)
    want = (fdata, idata, tpl.nodes, tpl.tgt_i, tpl.rows)
    for got, exp in zip(parts[:5], want):
        np.testing.assert_array_equal(got, exp)
    cf = L.read_config(parts[5], parts[6], 1)
    np.testing.assert_array_equal(cf.lo, panda.limits[:, 0])
    np.testing.assert_array_equal(cf.active, np.arange(panda.dof))


def test_scratch_views_are_disjoint_and_fill_the_buffer() -> None:
    n, nq, nv, m, na, T = 9, 7, 7, 6, 7, 1
    size = L.scratch_size(n, nq, nv, m, na, T)
    ws = np.zeros(size)
    w = L.carve(ws, n, nq, nv, m, na, T)
    for k, arr in enumerate(w):
        arr[...] = k + 1  # writes through the view
    counts = np.bincount(ws.astype(np.int64), minlength=len(w) + 1)
    assert counts[0] == 0  # every float belongs to some view
    for k, arr in enumerate(w):
        assert counts[k + 1] == arr.size, L.Work._fields[k]


def test_result_rows_are_read_by_name(panda: Model, T: np.ndarray) -> None:
    r = panda.ik(T)
    assert r.success and r.position_error.shape == (1,)
    out = np.zeros((2, L.result_size(7, 2)))
    out[1, L.info_offset(7, 2) + L.R_ITERATIONS] = 5
    out[1, 7 + 2 + 1] = 0.25  # second target's orientation error
    v = L.read_result(out, 7, 2)
    assert v["iterations"][1] == 5 and v["orientation_error"][1, 1] == 0.25


# --- options ------------------------------------------------------------------------------------

BAD_OPTIONS = [
    ("tol", -1.0), ("tol", 0.0), ("tol", 1e-320), ("tol", (1e-6, 2e-6, 3e-6)), ("tol", "a"),
    ("max_iter", -1), ("max_iter", 2**63), ("max_iter", 1.5), ("restarts", True),
    ("time_budget", 0.0), ("time_budget", float("nan")), ("step", 0.0), ("damping", -1.0),
    ("lambda_min", "x"), ("cutoff", float("inf")), ("max_joint_step", 0.0), ("stall_iter", -1),
    ("normalized_step", 0.0), ("pinv_form", "qr"), ("rest", "foo"), ("rest", [np.nan] * 7),
    ("rest_gain", 0.0), ("respect_limits", "no"), ("clamp_target", 1), ("record", "yes"),
    ("pin", 5), ("active", 5), ("seed", -1), ("seed", 2**64), ("seed", 1.5), ("rng", "a"),
    ("rng", -1),
]  # fmt: skip


@pytest.mark.parametrize(("name", "value"), BAD_OPTIONS, ids=lambda v: repr(v)[:20])
def test_each_bad_option_is_named(panda: Model, T: np.ndarray, name: str, value: object) -> None:
    with pytest.raises(InvalidValueError) as info:
        panda.ik(T, **{name: value})
    assert name in str(info.value)
    with pytest.raises(InvalidValueError):
        IKOptions(**{name: value})  # type: ignore[arg-type]


def test_unknown_option_and_method_list_the_valid_ones(panda: Model, T: np.ndarray) -> None:
    with pytest.raises(InvalidValueError, match=r"valid options are: .*max_iter"):
        panda.ik(T, tolerance=1e-3)
    with pytest.raises(UnknownNameError, match="valid methods are: auto"):
        panda.ik(T, method="newton")


def test_tolerance_floor_is_documented(panda: Model, T: np.ndarray) -> None:
    with pytest.raises(InvalidValueError, match=f"at least {O.MIN_TOLERANCE:g}"):
        panda.ik(T, tol=1e-320)
    assert panda.ik(T, tol=O.MIN_TOLERANCE, restarts=50).success


def test_options_object_is_the_cache_key(panda: Model, T: np.ndarray) -> None:
    names = ["joint1", "joint2", "joint4"]
    a = O.resolve({"active": list(names), "tol": [1e-6, 1e-6]})
    b = O.resolve({"active": tuple(names), "tol": (1e-6, 1e-6)})
    assert a == b and hash(a) == hash(b) and a.active == tuple(names)
    assert O.resolve({"active": list(names), "tol": [1e-6, 1e-6]}) is a  # remembered
    q0 = panda.neutral()
    r1 = panda.ik(Position(T[:3, 3]), active=list(names), q0=q0)
    r2 = panda.ik(Position(T[:3, 3]), active=tuple(names), q0=q0)
    np.testing.assert_array_equal(r1.q, r2.q)
    # Same template object for list and tuple: one layout, built once.
    tpl_list = P.cached_template(panda, ("flange",), (0,), np.ones((1, L.TARGET_SIZE)), a)
    tpl_tuple = P.cached_template(panda, ("flange",), (0,), np.ones((1, L.TARGET_SIZE)), b)
    assert tpl_list is tpl_tuple


def test_options_object_and_keywords_agree(panda: Model, T: np.ndarray) -> None:
    opts = IKOptions(method="dls", tol=1e-8, seed=3)
    r1 = panda.ik(T, options=opts)
    r2 = panda.ik(T, method="dls", tol=1e-8, seed=3)
    np.testing.assert_array_equal(r1.q, r2.q)
    r3 = panda.ik(T, options=opts, max_iter=5)  # keywords override fields
    assert r3.iterations <= 5
    with pytest.raises(InvalidValueError, match="IKOptions"):
        panda.ik(T, options={"method": "dls"})
    assert dataclasses.replace(opts, seed=4).layout_key() == opts.layout_key()


# --- hardening: no false success, honest errors -------------------------------------------------


def _nan_model() -> Model:
    """A hand-built model whose FK is NaN (the builder would refuse it)."""
    good = kinetree.load("planar2r")
    origin = np.array(good.origin)
    origin[1, 0, 3] = np.nan
    return dataclasses.replace(good, origin=origin)


def test_nan_fk_is_never_a_success() -> None:
    m = _nan_model()
    for method in ("auto", "dls", "ccd", "pinv"):
        r = m.ik(Position([0.5, 0.5, 0.0]), method=method, restarts=1)
        assert not r.success, method
        assert not np.any(np.isnan(r.q)) and not np.any(np.isnan(r.position_error))
        assert np.all(np.isinf(r.position_error)), r.position_error


def test_errors_are_those_of_fk_at_the_returned_q(panda: Model) -> None:
    far = translation([0.5, 0.0, 3.0])  # out of reach: the closest configuration
    r = panda.ik(far, tol=1e-6)
    assert not r.success and not r.reachable
    got = pose_error(far, panda.fk(r.q))
    assert r.position_error[0] == pytest.approx(np.linalg.norm(got[:3]), rel=1e-12)
    assert r.orientation_error[0] == pytest.approx(np.linalg.norm(got[3:]), rel=1e-9, abs=1e-12)


def test_huge_targets_are_refused_and_far_ones_measured(panda: Model) -> None:
    with pytest.raises(InvalidValueError, match="beyond 1e"):
        panda.ik(translation([1e200, 0.0, 0.0]))
    r = panda.ik(Position([1e10, 0.0, 0.0]))
    assert not r.success and np.isfinite(r.position_error[0])
    assert r.position_error[0] == pytest.approx(1e10, rel=1e-6)


def test_huge_direction_is_normalised_without_overflow() -> None:
    m = kinetree.load("humanoid")
    r = m.ik(Direction([1e300, 1e300, 0.0], axis=[0.0, 0.0, 1.0]), "head", active="above_hips")
    fk_axis = m.fk(r.q, "head")[:3, 2]
    want = np.array([1.0, 1.0, 0.0]) / np.sqrt(2.0)
    angle = np.arccos(np.clip(fk_axis @ want, -1.0, 1.0))
    assert r.orientation_error[0] == pytest.approx(angle, abs=1e-9)
    if r.success:
        assert angle < 1e-6


def test_analytic_failure_reports_the_true_orientation_error() -> None:
    ur5 = kinetree.load("ur5")
    far = translation([3.0, 0.0, 0.0])
    r = ur5.ik(far, method="analytic")
    assert not r.success
    e = pose_error(far, ur5.fk(r.q))
    assert r.orientation_error[0] == pytest.approx(np.linalg.norm(e[3:]), abs=1e-12)
    assert r.position_error[0] == pytest.approx(np.linalg.norm(e[:3]), abs=1e-12)


def test_bad_batches_and_names_are_kinetree_errors(panda: Model, T: np.ndarray) -> None:
    with pytest.raises(InvalidValueError, match="empty"):
        panda.ik(np.zeros((0, 4, 4)))
    with pytest.raises(InvalidValueError, match="empty"):
        panda.ik(Position(np.zeros((0, 3))))
    with pytest.raises(InvalidValueError, match="broadcast"):
        panda.ik({"flange": Position(np.zeros((2, 3)) + T[:3, 3]),
                  "link4": Position(np.zeros((3, 3)) + 0.3)})  # fmt: skip
    for bad in ("a", [1.0, 2.0, 3.0], None):
        with pytest.raises(InvalidValueError, match="weight"):
            panda.ik(Direction([1.0, 0.0, 0.0], weight=bad))  # type: ignore[arg-type]
    with pytest.raises(InvalidValueError, match="frame"):
        panda.ik(T, 5)  # type: ignore[arg-type]


def test_record_with_a_huge_budget_is_capped(panda: Model, T: np.ndarray) -> None:
    r = panda.ik(T, record=True, max_iter=10**9, restarts=10**9, method="dls")
    assert r.success and r.history is not None
    assert 1 <= r.history.shape[0] <= O.MAX_HISTORY


def test_tiny_uniform_weights_still_solve(panda: Model) -> None:
    Q = panda.random_configuration(100, rng=21)
    Ts = panda.fk(Q)
    solved = 0
    for Ti, qi in zip(Ts, Q):
        tgt = Pose(Ti, position_weight=1e-6, orientation_weight=1e-6)
        r = panda.ik(tgt, q0=qi + 0.05)  # a trivial target: near its solution
        solved += bool(r.success)
    assert solved >= 99


def test_near_rigid_poses_are_accepted_and_far_ones_explained(panda: Model) -> None:
    Ts = panda.fk(panda.random_configuration(50, rng=5))
    rounded = np.round(Ts, 6)  # what `kinetree fk` prints
    r = panda.ik(rounded)
    assert r.success.mean() >= 0.98
    bad = Ts[0].copy()
    bad[:3, :3] *= 1.01
    with pytest.raises(NotRigidError, match="orthonormalize"):
        panda.ik(bad)


def test_scratch_that_would_not_fit_is_refused_up_front(
    panda: Model, T: np.ndarray, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(P, "MAX_SCRATCH_BYTES", 1000)
    with pytest.raises(UnsupportedError, match="error rows times the active DoF"):
        P.template(panda, ("flange",), (0,), np.ones((1, 6)), np.zeros((1, 3)),
                   IKOptions())  # fmt: skip


def test_read_only_inputs_compile_no_second_kernel(panda: Model, T: np.ndarray) -> None:
    from kinetree.ik.kernel._drivers import driver

    panda.ik(T)
    kernel = driver("dls", False)
    before = len(kernel.signatures)
    q0 = panda.neutral()
    q0.setflags(write=False)
    Tr = T.copy()
    Tr.setflags(write=False)
    panda.ik(Tr, q0=q0)
    panda.ik(np.stack([Tr, Tr]), q0=q0)
    panda.ik(Position(Tr[:3, 3]), q0=q0)
    assert len(kernel.signatures) == before == 1


def test_hand_built_cycle_is_refused_not_hung() -> None:
    good = kinetree.load("planar2r")
    parent = np.array(good.parent)
    parent[0] = parent.size - 1  # the root's parent is a descendant: a cycle
    with pytest.raises(ModelStructureError, match="topological"):
        dataclasses.replace(good, parent=parent)


def test_swing_twist_angles_checks_q() -> None:
    m = kinetree.load("humanoid")
    group = next(iter(m.swing_twist))
    with pytest.raises(KinetreeError):
        m.swing_twist_angles(np.zeros(3), group)
    with pytest.raises(ShapeError):
        m.swing_twist_angles(np.zeros((2, m.dof)), group)
    sw, tw = m.swing_twist_angles(m.neutral(), group)
    assert np.isfinite(sw) and np.isfinite(tw)


def test_reach_with_a_method_that_records_nothing_is_refused() -> None:
    from kinetree import anim

    m = kinetree.load("planar3r")
    with pytest.raises(UnsupportedError, match="record"):
        anim.reach(m, [0.9, 1.3, 0.0], method="fabrik")


def test_fabrik_sub_solves_keep_swing_twist_limits() -> None:
    m = kinetree.load("humanoid")
    hand = m.fk(m.neutral(), "hand_r")[:3, 3]
    r = m.ik(
        Position(np.add(hand, [0.1, -0.1, 0.2])), "hand_r", method="fabrik", active="right_arm"
    )
    for group, (_, swing, tlo, thi) in m.swing_twist.items():
        if group in m.presets.get("right_arm", ()) or any(
            j in m.presets.get("right_arm", ()) for j in m.joint_groups[group]
        ):
            sw, tw = m.swing_twist_angles(r.q, group)
            assert sw <= swing + 1e-9 and tlo - 1e-9 <= tw <= thi + 1e-9


def test_builder_still_builds_chains() -> None:
    b = ModelBuilder("chain", root="base")
    b.add_joint("j0", "base", "l0", axis="z")
    b.add_joint("j1", "l0", "l1", axis="y", origin=translation([0.0, 0.0, 0.3]))
    m = b.build()
    assert m.nq == m.nv == 2
    np.testing.assert_array_equal(m.qv.dof_node, [1, 2])


def test_view_returning_layout_readers_are_inlined() -> None:
    """The range driver runs without numba's reference counting where its loop does, and
    numba compiles a non-inlined callee with the flags of the caller that first needs it
    (``nrt`` is inherited) and reuses that machine code for every later caller. A reader
    that returns views compiled so would hand a counted caller uncounted references:
    freed twice, the scratch corrupts the heap (seen: a Panda solve, then a humanoid's
    swing-twist solve). Inlined, each caller counts its own views."""
    for fn in (L.read_config, L.carve, L.read_collision, L.carve_collision, L.unpack):
        assert fn.targetoptions.get("inline") == "always", fn.__name__


def test_threads_solving_different_models_never_mix_their_plans(panda: Model) -> None:
    """Options, templates and single-pose plans are remembered for the last call, matched
    by model and options and replaced whole: two threads solving different robots with
    different tolerances at once each get their own (``q`` of their robot, their
    tolerance honoured)."""
    import sys
    import threading

    ur5 = kinetree.load("ur5")
    work = [(panda, panda.fk(panda.random_configuration(40, rng=1)), 1e-10),
            (ur5, ur5.fk(ur5.random_configuration(40, rng=2)), 1e-2)]  # fmt: skip
    for m, Ts, tol in work:
        m.ik(Ts[0], time_budget=None, tol=tol)  # compiled, plans made
    bad: list[str] = []

    def run(m: Model, Ts: np.ndarray, tol: float) -> None:
        for _ in range(5):
            for T in Ts:
                r = m.ik(T, time_budget=None, tol=tol)  # options differ per thread too
                if r.q.shape != (m.nq,) or (
                    r.success and not (r.position_error[0] <= tol and r.orientation_error[0] <= tol)
                ):
                    bad.append(m.name)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=run, args=w) for w in work]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert not bad
