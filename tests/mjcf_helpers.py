"""Shared by the MJCF tests: random ``qpos`` and kinetree-vs-MuJoCo FK and Jacobian errors."""

from __future__ import annotations

from typing import Any

import numpy as np

# MuJoCo's mjtJoint values.
FREE, BALL, SLIDE, HINGE = 0, 1, 2, 3


def random_qpos(m: Any, rng: np.random.Generator) -> np.ndarray:
    """A random ``qpos`` of MuJoCo model ``m``: hinge and slide uniform in their range (or
    [-pi, pi] when unlimited), random unit quaternions for ball and free joints, free
    positions uniform in [-1, 1] m."""
    q = np.array(m.qpos0, dtype=float)
    for j in range(m.njnt):
        a, t = int(m.jnt_qposadr[j]), int(m.jnt_type[j])
        if t in (HINGE, SLIDE):
            lo, hi = m.jnt_range[j] if m.jnt_limited[j] else (-np.pi, np.pi)
            q[a] = rng.uniform(lo, hi)
        elif t == BALL:
            v = rng.normal(size=4)
            q[a : a + 4] = v / np.linalg.norm(v)
        else:
            q[a : a + 3] = rng.uniform(-1.0, 1.0, 3)
            v = rng.normal(size=4)
            q[a + 3 : a + 7] = v / np.linalg.norm(v)
    return q


def fk_errors(model: Any, m: Any, d: Any, q: np.ndarray) -> dict[str, float]:
    """Largest |kinetree - MuJoCo| over position [m] and rotation-matrix entries, for every
    body (``xpos``/``xmat``) and site (``site_xpos``/``site_xmat``), by frame name."""
    import mujoco

    d.qpos[:] = q
    mujoco.mj_kinematics(m, d)
    frames = list(model.metadata["bodies"]) + list(model.metadata["sites"])
    index = {f: i for i, f in enumerate(model.frame_names)}
    T = model.fk_all(q)
    want_p = np.concatenate([d.xpos, d.site_xpos]) if m.nsite else np.array(d.xpos)
    want_R = np.concatenate([d.xmat, d.site_xmat]) if m.nsite else np.array(d.xmat)
    out = {}
    for k, f in enumerate(frames):
        Tk = T[index[f]]
        out[f] = max(
            float(np.abs(Tk[:3, 3] - want_p[k]).max()),
            float(np.abs(Tk[:3, :3] - want_R[k].reshape(3, 3)).max()),
        )
    return out


def jacobian_errors(model: Any, m: Any, d: Any, q: np.ndarray) -> dict[str, float]:
    """Largest |kinetree - MuJoCo| of the body Jacobians (``mj_jacBody``: rows jacp then
    jacr, one column per DoF) of every body, by frame name."""
    import mujoco

    d.qpos[:] = q
    mujoco.mj_kinematics(m, d)
    mujoco.mj_comPos(m, d)
    out = {}
    jacp, jacr = np.zeros((3, m.nv)), np.zeros((3, m.nv))
    for i, f in enumerate(model.metadata["bodies"]):
        mujoco.mj_jacBody(m, d, jacp, jacr, i)
        J = model.jacobian(q, f)
        out[f] = float(np.abs(J - np.vstack([jacp, jacr])).max())
    return out
