"""Shared helpers for the IK tests (tests/test_ik*.py).

Every IK call of those tests goes through :func:`ik`, which checks the result
before handing it back: no NaN or inf anywhere, consistent shapes, and joint
limits respected whenever ``respect_limits`` is left on. Checks against the
target go through kinetree's forward kinematics (``model.fk``) and scipy's
rotation log, independently of the solver's own bookkeeping.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.spatial.transform import Rotation

import kinetree
import kinetree.models as M

#: Frames of the humanoid that the humanoid tests move or hold.
HUMANOID_EFFECTORS = ("hand_r", "hand_l", "foot_r", "foot_l", "head")


def check_result(model: kinetree.Model, res: kinetree.IKResult, **options: Any) -> None:
    """Assert the invariants every IKResult must satisfy (see the module docstring)."""
    assert isinstance(res, kinetree.IKResult)
    q = np.asarray(res.q)
    assert q.dtype == np.float64
    assert q.shape[-1] == model.dof
    batch = q.shape[:-1]
    assert np.all(np.isfinite(q)), f"NaN/inf in q: {q}"
    for name in ("position_error", "orientation_error"):
        a = np.asarray(getattr(res, name))
        assert a.shape[:-1] == batch, (name, a.shape, batch)
        assert a.shape[-1] == len(res.frames)
        assert np.all(np.isfinite(a)), f"NaN/inf in {name}: {a}"
        assert np.all(a >= 0.0)
    for name in ("success", "reachable", "iterations", "restarts", "message"):
        assert np.shape(getattr(res, name)) == batch, (name, np.shape(getattr(res, name)), batch)
    assert np.all(np.asarray(res.iterations) >= 0)
    assert np.all(np.asarray(res.restarts) >= 0)
    assert np.isfinite(res.elapsed) and res.elapsed >= 0.0
    if res.history is not None:
        assert res.error_history is not None
        assert res.history.shape == (res.error_history.shape[0], model.dof)
        assert res.error_history.shape[1] == 2
        assert np.all(np.isfinite(res.history))
        assert np.all(np.isfinite(res.error_history))
    if options.get("respect_limits", True):
        assert np.all(model.within_limits(q)), f"limits violated: {q[~model.within_limits(q)]}"
    # success means every error is within the tolerance the solver was given
    tol = options.get("tol", 1e-6)
    tp, tr = (tol, tol) if np.ndim(tol) == 0 else tol
    ok = np.asarray(res.success)
    if np.any(ok):
        pe = np.asarray(res.position_error)[ok]
        oe = np.asarray(res.orientation_error)[ok]
        assert np.all(pe <= tp) and np.all(oe <= tr)


def ik(model: kinetree.Model, target: Any, frame: str | None = None, **options: Any):
    """``model.ik`` followed by :func:`check_result`."""
    res = model.ik(target, frame, **options)
    check_result(model, res, **options)
    return res


def random_q(model: kinetree.Model, n: int, seed: int) -> np.ndarray:
    """``n`` uniform configurations within the limits (fixed seed)."""
    return model.random_configuration(n, np.random.default_rng(seed))


def reachable_positions(model: kinetree.Model, n: int, seed: int, frame: str | None = None):
    """``(q, xyz)``: random configurations and the positions FK puts ``frame`` at."""
    q = random_q(model, n, seed)
    return q, model.fk(q, frame)[..., :3, 3]


def reachable_poses(model: kinetree.Model, n: int, seed: int, frame: str | None = None):
    """``(q, T)``: random configurations and their FK poses ``(n, 4, 4)``."""
    q = random_q(model, n, seed)
    return q, model.fk(q, frame)


def position_errors(model: kinetree.Model, q: np.ndarray, xyz: np.ndarray, frame=None):
    """|p(q) - xyz| through FK, over any batch."""
    return np.linalg.norm(model.fk(q, frame)[..., :3, 3] - xyz, axis=-1)


def rotation_angles(R_a: np.ndarray, R_b: np.ndarray) -> np.ndarray:
    """Angle [rad] of ``R_a^T R_b`` via scipy (not kinetree's log)."""
    R = np.einsum("...ji,...jk->...ik", R_a, R_b)
    return Rotation.from_matrix(R.reshape(-1, 3, 3)).magnitude().reshape(R.shape[:-2])


def pose_errors(model: kinetree.Model, q: np.ndarray, T: np.ndarray, frame=None):
    """``(position error [m], rotation angle [rad])`` of FK(q) against poses ``T``."""
    F = model.fk(q, frame)
    pe = np.linalg.norm(F[..., :3, 3] - T[..., :3, 3], axis=-1)
    return pe, rotation_angles(T[..., :3, :3], F[..., :3, :3])


def model(name: str) -> kinetree.Model:
    """A shared built-in model."""
    return M.get(name)


# A base sphere off to -x and a sphere on a link two revolute joints away, swung about
# z on a 0.5 m arm: they overlap where the arm points within 2 asin(0.2) of -x.
SWING = """<robot name="swing">
  <link name="base"><collision><origin xyz="{x} 0 0"/><geometry><sphere radius="0.1"/>
  </geometry></collision></link>
  <link name="l1"/>
  <link name="l2"><collision><origin xyz="0.5 0 0"/><geometry><sphere radius="0.1"/>
  </geometry></collision></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>
    <limit lower="-10" upper="10" effort="1" velocity="1"/></joint>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>"""
