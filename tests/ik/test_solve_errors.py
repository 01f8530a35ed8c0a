"""Bad input to Model.ik / Model.ik_all raises a specific KinetreeError naming the problem.

Never NaN in a result, never a bare AssertionError, KeyError or TypeError.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from ik_helpers import ik, model
from kinetree import Direction, Orientation, Pose, Position
from kinetree.errors import (
    InvalidValueError,
    KinetreeError,
    NotRigidError,
    ShapeError,
    UnknownNameError,
    UnsupportedError,
)
from kinetree.ik import METHODS
from kinetree.ik.method_table import COMPILED, TABLE

#: The compiled and scipy methods, from the method table.
NUMERIC_METHODS = tuple(r.name for r in TABLE if r.kind == COMPILED or r.scipy is not None)


@pytest.fixture(scope="module")
def panda():
    return model("panda")


@pytest.fixture(scope="module")
def T(panda):
    T = panda.fk(panda.neutral())
    T[:3, 3] += [0.05, 0.02, -0.03]
    return T


def _raises(exc, fn, *match):
    """``fn()`` raises exactly ``exc`` (a KinetreeError) whose message contains ``match``."""
    with pytest.raises(KinetreeError) as info:
        fn()
    assert isinstance(info.value, exc), f"{type(info.value).__name__}: {info.value}"
    msg = str(info.value)
    for m in match:
        assert m in msg, msg
    return msg


# --- NaN / inf ----------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # scipy on a bad target; see below
@pytest.mark.parametrize("method", NUMERIC_METHODS)
@pytest.mark.parametrize("where", [(0, 3), (1, 1), (2, 0)])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nonfinite_pose(panda, T, method, where, bad) -> None:
    Tb = T.copy()
    Tb[where] = bad
    _raises(InvalidValueError, lambda: panda.ik(Tb, method=method), "NaN or inf")
    _raises(InvalidValueError, lambda: panda.ik(Pose(Tb), method=method), "NaN or inf")


def test_nonfinite_pose_in_a_batch_names_the_item(panda, T) -> None:
    batch = np.stack([T, T, T])
    batch[2, 0, 3] = np.nan
    _raises(InvalidValueError, lambda: panda.ik(batch), "NaN or inf", "(2,)")
    nested = np.stack([T] * 4).reshape(2, 2, 4, 4)
    nested[1, 0, 1, 1] = np.inf
    _raises(InvalidValueError, lambda: panda.ik(nested), "NaN or inf", "(1, 0)")


def test_nonfinite_pose_last_row(panda, T) -> None:
    Tb = T.copy()
    Tb[3, 0] = np.nan
    _raises(InvalidValueError, lambda: panda.ik(Tb))


@pytest.mark.parametrize("last_row", [[np.nan, 0, 0, 1], [0, 0, 0, 5], [0.1, 0, 0, 1]])
def test_pose_object_bad_last_row(panda, T, last_row) -> None:
    Tb = T.copy()
    Tb[3] = last_row
    with pytest.raises(InvalidValueError):  # NotRigidError is one
        panda.ik(Pose(Tb))


@pytest.mark.parametrize("method", ["auto", "dls", "ccd", "fabrik", "bfgs", "analytic"])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nonfinite_position(method, bad) -> None:
    m = model("planar2r")
    _raises(InvalidValueError, lambda: m.ik(Position([bad, 0.5, 0.0]), method=method), "NaN or inf")
    batch = np.array([[1.0, 0.5, 0.0], [0.5, bad, 0.0]])
    if method not in ("fabrik", "analytic"):
        _raises(InvalidValueError, lambda: m.ik(Position(batch), method=method), "NaN or inf")


def test_nonfinite_direction_and_orientation(panda) -> None:
    _raises(InvalidValueError, lambda: panda.ik(Direction([np.nan, 0, 1])), "NaN or inf")
    _raises(InvalidValueError, lambda: panda.ik(Direction([1, 0, 0], axis=[0, np.inf, 1])))
    R = np.eye(3)
    R[0, 0] = np.nan
    _raises(InvalidValueError, lambda: panda.ik(Orientation(R)), "NaN or inf")


@pytest.mark.parametrize("method", [*NUMERIC_METHODS, "fabrik"])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nonfinite_q0(panda, T, method, bad) -> None:
    q0 = panda.neutral()
    q0[2] = bad
    target = Position(T[:3, 3]) if method == "fabrik" else T
    _raises(InvalidValueError, lambda: panda.ik(target, q0=q0, method=method), "NaN or inf", "q0")
    if method != "fabrik":
        q0s = np.stack([panda.neutral(), q0])
        _raises(
            InvalidValueError,
            lambda: panda.ik(np.stack([T, T]), q0=q0s, method=method),
            "NaN or inf",
        )
    _raises(InvalidValueError, lambda: panda.ik(Position(T[:3, 3]), q0=q0, method=method))


def test_nonfinite_q0_analytic() -> None:
    m = model("ur5")
    T = m.fk(m.neutral())
    _raises(
        InvalidValueError, lambda: m.ik(T, q0=np.full(6, np.nan), method="analytic"), "NaN or inf"
    )


# --- not rigid ------------------------------------------------------------------------------


def _scaled(T):
    S = T.copy()
    S[:3, :3] *= 1.1
    return S


def _sheared(T):
    S = T.copy()
    S[0, 1] += 0.2
    return S


def _reflected(T):
    S = T.copy()
    S[:3, 0] *= -1.0  # orthonormal, det -1
    return S


def _last_row(T):
    S = T.copy()
    S[3, 0] = 0.1
    return S


def _last_one(T):
    S = T.copy()
    S[3, 3] = 2.0
    return S


NOT_RIGID = [_scaled, _sheared, _reflected, _last_row, _last_one]


def _not_rigid_cases():
    # Regression: a bad last row was once checked only on the fast pose path.
    for make in NOT_RIGID:
        for method in NUMERIC_METHODS:
            yield pytest.param(make, method, id=f"{make.__name__[1:]}-{method}")


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # scipy on a bad target; see below
@pytest.mark.parametrize(("make", "method"), list(_not_rigid_cases()))
def test_not_rigid_pose(panda, T, make, method) -> None:
    bad = make(T)
    _raises(NotRigidError, lambda: panda.ik(bad, method=method), "rigid")
    _raises(NotRigidError, lambda: panda.ik(np.stack([T, bad]), method=method), "(1,)")


@pytest.mark.parametrize(
    "options", [dict(record=True), dict(rest=np.zeros(7)), dict(method="dls", record=True)]
)
def test_bad_last_row_with_other_options(panda, T, options) -> None:
    with pytest.raises(NotRigidError):
        panda.ik(_last_row(T), **options)


@pytest.mark.parametrize("method", ["bfgs", "cg"])
def test_scipy_methods_check_targets_before_solving(panda, T, method) -> None:
    Tn = T.copy()
    Tn[0, 3] = np.inf
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a RuntimeWarning would escape as an exception
        msg = _raises(InvalidValueError, lambda: panda.ik(Tn, method=method), "NaN or inf")
    assert "batch item" not in msg
    msg = _raises(NotRigidError, lambda: panda.ik(_scaled(T), method=method))
    assert "batch item" not in msg


@pytest.mark.parametrize("make", [_scaled, _sheared, _reflected])
def test_not_rigid_pose_object(panda, T, make) -> None:
    _raises(NotRigidError, lambda: panda.ik(Pose(make(T))))
    _raises(NotRigidError, lambda: panda.ik({"flange": Pose(make(T))}))
    _raises(NotRigidError, lambda: panda.ik(Orientation(make(T)[:3, :3])))


@pytest.mark.parametrize("make", NOT_RIGID)
def test_not_rigid_closed_form(make) -> None:
    m = model("ur5")
    T = m.fk(np.array([0.3, -1.0, 1.2, -0.5, 0.8, 0.2]))
    _raises(NotRigidError, lambda: m.ik_all(make(T)))
    _raises(NotRigidError, lambda: m.ik(make(T), method="analytic"))


def test_not_rigid_record(panda, T) -> None:
    _raises(NotRigidError, lambda: panda.ik(_reflected(T), record=True))


# --- shapes ---------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(3, 3), (3, 4), (4, 3), (4,), (2, 3, 3)])
def test_wrong_pose_shape(panda, T, shape) -> None:
    bad = np.zeros(shape)
    _raises(ShapeError, lambda: panda.ik(bad), "(..., 4, 4)", str(shape))
    _raises(ShapeError, lambda: panda.ik(Pose(bad)), str(shape))


@pytest.mark.parametrize("xyz", [[1.0, 2.0], [1.0, 2.0, 3.0, 4.0], np.zeros((2, 4))])
def test_wrong_position_shape(panda, xyz) -> None:
    _raises(ShapeError, lambda: panda.ik(Position(xyz)), "(..., 3)")


@pytest.mark.parametrize("method", [*NUMERIC_METHODS, "fabrik"])
@pytest.mark.parametrize("q0", [np.zeros(6), np.zeros(8), np.zeros((7, 1)), 0.5])
def test_wrong_q0_length(panda, T, method, q0) -> None:
    target = Position(T[:3, 3]) if method == "fabrik" else T
    _raises(ShapeError, lambda: panda.ik(target, q0=q0, method=method), "q0", "7")


def test_q0_batch_mismatch(panda, T) -> None:
    targets = np.stack([T, T, T])
    msg = _raises(InvalidValueError, lambda: panda.ik(targets, q0=np.zeros((2, 7))), "q0")
    assert "(3,)" in msg or "(3, 7)" in msg
    _raises(InvalidValueError, lambda: panda.ik(T, q0=np.zeros((2, 7))), "q0")


def test_non_numeric_q0(panda, T) -> None:
    _raises(InvalidValueError, lambda: panda.ik(T, q0="neutral"), "q0")


# --- names ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "method",
    [
        *NUMERIC_METHODS,
        "analytic",
    ],
)
def test_unknown_frame_lists_frames(method) -> None:
    m = model("ur5")
    msg = _raises(
        UnknownNameError, lambda: m.ik(m.fk(m.neutral()), frame="gripper", method=method), "gripper"
    )
    for f in m.frame_names:
        assert f in msg


def test_unknown_frame_in_a_dict(panda, T) -> None:
    msg = _raises(UnknownNameError, lambda: panda.ik({"tool": Pose(T)}), "tool")
    assert "flange" in msg and "link3" in msg


def test_unknown_method_lists_methods(panda, T) -> None:
    for target in (T, Position(T[:3, 3]), np.stack([T, T])):
        msg = _raises(UnknownNameError, lambda t=target: panda.ik(t, method="newton"), "newton")
        for name in METHODS:
            assert name in msg


def test_unknown_active_lists_joints_and_presets(T) -> None:
    p = model("panda")
    msg = _raises(UnknownNameError, lambda: p.ik(T, active=["joint1", "joint9"]), "joint9")
    assert all(j in msg for j in p.joint_names)
    h = model("humanoid")
    target = Position(h.fk(h.neutral(), "hand_r")[:3, 3])
    msg = _raises(
        UnknownNameError, lambda: h.ik(target, frame="hand_r", active="right_hand"), "right_hand"
    )
    assert "right_arm" in msg and "shoulder_r" in msg


@pytest.mark.parametrize("method", [*NUMERIC_METHODS, "analytic"])
def test_unknown_option(method) -> None:
    m = model("ur5")
    T = m.fk(m.neutral())
    msg = _raises(InvalidValueError, lambda: m.ik(T, method=method, maxiter=5), "maxiter")
    assert "max_iter" in msg  # the valid options are listed
    _raises(
        InvalidValueError,
        lambda: m.ik(Position(T[:3, 3]), method=method, tolerance=1e-3),
        "tolerance",
    )


def test_ik_all_takes_no_options() -> None:
    m = model("ur5")
    _raises(InvalidValueError, lambda: m.ik_all(m.fk(m.neutral()), method="dls"), "method")


# --- numeric options ---------------------------------------------------------------------------


BAD_OPTIONS = [
    ("tol", -1e-6, "tol"),
    ("tol", 0.0, "tol"),
    ("tol", np.nan, "tol"),
    ("tol", (1e-6, -1.0), "rotation tolerance"),
    ("tol", (-1e-6, 1e-6), "position tolerance"),
    ("tol", (1e-6, 1e-6, 1e-6), "pair"),
    ("max_iter", -1, "max_iter"),
    ("max_iter", 2.5, "max_iter"),
    ("restarts", -3, "restarts"),
    ("stall_iter", -1, "stall_iter"),
    ("time_budget", -1.0, "time_budget"),
    ("step", 0.0, "step"),
    ("damping", -0.1, "damping"),
    ("seed", -1, "seed"),
    ("pinv_form", "qr", "pinv_form"),
]


@pytest.mark.parametrize(("name", "value", "word"), BAD_OPTIONS)
@pytest.mark.parametrize("method", ["auto", "dls", "fabrik", "bfgs"])
def test_bad_option_values(panda, T, method, name, value, word) -> None:
    target = Position(T[:3, 3]) if method == "fabrik" else T
    _raises(InvalidValueError, lambda: panda.ik(target, method=method, **{name: value}), word)


@pytest.mark.parametrize("value", [-1e-6, (1e-6, -1.0)])
def test_bad_tolerance_position_target(panda, T, value) -> None:
    _raises(
        InvalidValueError,
        lambda: panda.ik(Position(T[:3, 3]), tol=value),
        "tolerance" if isinstance(value, tuple) else "tol",
    )


@pytest.mark.parametrize(
    ("name", "value"), [("tol", -1e-6), ("tol", (1e-6, -1.0)), ("max_iter", -1)]
)
def test_bad_option_values_analytic(name, value) -> None:
    m = model("ur5")
    with pytest.raises(InvalidValueError, match=name):
        m.ik(m.fk(m.neutral()), method="analytic", **{name: value})


@pytest.mark.parametrize("method", ["auto", "dls", "bfgs"])
def test_record_with_a_batch(panda, T, method) -> None:
    targets = np.stack([T, T])
    _raises(UnsupportedError, lambda: panda.ik(targets, record=True, method=method), "record")
    _raises(
        UnsupportedError,
        lambda: panda.ik(Position(targets[:, :3, 3]), record=True, method=method),
        "record",
    )


def test_rest_shape(panda, T) -> None:
    _raises(ShapeError, lambda: panda.ik(T, rest=np.zeros(3)), "rest")
    _raises(InvalidValueError, lambda: panda.ik(T, rest="zeros"), "rest")


# --- other requests that cannot be served ------------------------------------------------------


def test_unsupported_targets_and_methods(panda, T) -> None:
    _raises(InvalidValueError, lambda: panda.ik("flange"), "not understood")
    _raises(InvalidValueError, lambda: panda.ik(None), "not understood")
    _raises(InvalidValueError, lambda: panda.ik({}), "empty")
    _raises(InvalidValueError, lambda: panda.ik({"flange": Pose(T)}, frame="flange"), "frame")
    _raises(InvalidValueError, lambda: panda.ik(T, active=[]), "no active joints")
    _raises(InvalidValueError, lambda: panda.ik(Direction([0, 0, 0])), "non-zero")
    _raises(UnsupportedError, lambda: panda.ik(T, method="fabrik"), "fabrik")
    _raises(
        UnsupportedError,
        lambda: panda.ik(Position(np.stack([T[:3, 3]] * 2)), method="fabrik"),
        "fabrik",
    )
    _raises(UnsupportedError, lambda: panda.ik(T, method="analytic"), "panda")
    _raises(UnsupportedError, lambda: panda.ik_all(T), "panda")
    ur5 = model("ur5")
    Tu = ur5.fk(ur5.neutral())
    _raises(UnsupportedError, lambda: ur5.ik(Tu, frame="link3", method="analytic"), "link3")
    _raises(InvalidValueError, lambda: ur5.ik(np.stack([Tu, Tu]), method="analytic"), "one")
    _raises(ShapeError, lambda: ur5.ik_all(Tu[:3, 3]), "4x4")


@pytest.mark.parametrize(
    "target",
    [Orientation(np.eye(3)), Direction([1.0, 0.0, 0.0]), {"flange": Position([0.3, 0.1, 0.4])}],
    ids=["orientation", "direction", "dict"],
)
def test_analytic_with_other_targets(target) -> None:
    m = model("ur5")
    with pytest.raises(KinetreeError):
        m.ik(target, method="analytic")


def test_errors_are_not_bare_python_errors(panda, T) -> None:
    """The whole family is catchable as KinetreeError and as the matching builtin."""
    with pytest.raises(ValueError):
        panda.ik(_scaled(T))
    with pytest.raises(KeyError):  # UnknownNameError is a KeyError too
        panda.ik(T, frame="nope")


def test_valid_input_after_errors_still_solves(panda, T) -> None:
    """Failed calls leave no state behind (template caches, compiled kernels)."""
    for bad in (lambda: panda.ik(_scaled(T)), lambda: panda.ik(T, tol=-1)):
        with pytest.raises(KinetreeError):
            bad()
    res = ik(panda, T)
    assert res.success
