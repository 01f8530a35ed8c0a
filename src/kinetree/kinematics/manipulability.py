"""Yoshikawa's manipulability, of a Jacobian and of a model's frame, with its gradient.

Convention (one for every caller: :meth:`kinetree.Model.manipulability`, the
manipulability task of :mod:`kinetree.diffik`, the reachability maps of
:mod:`kinetree.workspace`): the manipulability of a Jacobian ``J`` (m, n) is the product
of its ``min(m, n)`` singular values,

    w(J) = prod_k sigma_k(J) = sqrt(det(J J^T))   when n >= m,
                             = sqrt(det(J^T J))   when n < m.

For ``n >= m`` this is T. Yoshikawa's measure ("Manipulability of robotic mechanisms",
IJRR 4(2), 1985): the volume of the velocity ellipsoid. With fewer DoF than task rows
(a 2-joint planar arm's three position rows), ``det(J J^T)`` is zero at every
configuration and says nothing; ``sqrt(det(J^T J))`` is the ``n``-dimensional volume of
the same ellipsoid (flat, in the directions the robot can move), and it is zero exactly
where the robot loses a direction (rank below ``n``). For a square ``J`` both read
``|det J|``.

Gradient along each DoF: with the world-frame Jacobian's columns ``[v_j; w_j]`` (linear
velocity at the frame point, angular velocity), moving DoF ``i`` changes column ``j``
by ``[w_i x v_j; w_i x w_j]`` when ``i``'s node is ``j``'s or an ancestor of it, and by
``[w_j x v_i; 0]`` otherwise (``i`` downstream moves only the point). Then
``dw/dv_i = sum_k (prod_{l != k} sigma_l) u_k^T (dJ/dv_i) v_k`` from the thin SVD
``J = U S V^T`` (both shapes), which stays finite at singularities.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._validate import as_array
from ..errors import InvalidValueError
from ..model import Model
from .frames import jacobian

__all__ = ["ROWS", "jacobian_manipulability", "manipulability", "manipulability_gradient"]

#: The Jacobian rows a manipulability reads: all six, position (linear) or orientation.
ROWS = {"all": slice(0, 6), "position": slice(0, 3), "orientation": slice(3, 6)}


def jacobian_manipulability(J: ArrayLike) -> np.ndarray:
    """The manipulability ``(...,)`` of Jacobians ``(..., m, n)``: the product of their
    ``min(m, n)`` singular values (see the module docstring for the convention)."""
    Ja = np.asarray(J, dtype=np.float64)
    if Ja.ndim < 2:
        raise InvalidValueError(f"J must have shape (..., m, n), got {Ja.shape}")
    s = np.linalg.svd(Ja, compute_uv=False)
    out: np.ndarray = np.prod(s, axis=-1)
    return out


def _rows(rows: str) -> slice:
    if rows not in ROWS:
        raise InvalidValueError(f"rows {rows!r} is not one of: {', '.join(ROWS)}")
    return ROWS[rows]


def manipulability(
    model: Model, q: ArrayLike, frame: str | None = None, rows: str = "all"
) -> np.ndarray:
    """The manipulability ``(...,)`` of ``frame``'s geometric Jacobian ``rows`` ("all",
    "position" or "orientation") at ``q`` (..., nq): :func:`jacobian_manipulability`,
    zero at a singularity."""
    sl = _rows(rows)
    return jacobian_manipulability(jacobian(model, q, frame)[..., sl, :])


def _path_is_plain(model: Model, node: int) -> bool:
    """Whether every DoF on the path to ``node`` drives exactly one node there (no
    mimic joints or couplings): the condition of the closed-form derivative."""
    path = model.ancestors(node)
    moving = [k for k in path.tolist() if model.moves(k)]
    cols = [int(model.qv.v_index[k]) for k in moving]
    return (
        len(set(cols)) == len(cols)
        and all(
            model.q_scale[k] == 1.0 and model.qv.dof_node[model.qv.v_index[k]] == k for k in moving
        )
        and not model.couplings
    )


def manipulability_gradient(
    model: Model, q: ArrayLike, frame: str | None = None, rows: str = "all"
) -> tuple[float, np.ndarray]:
    """``(w, dw/dv)``: the manipulability at one configuration ``q`` (nq,) and its
    derivative along each DoF (nv,) (see the module docstring). Models with mimic
    joints or couplings on the frame's path take central finite differences instead."""
    sl = _rows(rows)
    qa = as_array(q, "q", (model.nq,))
    if qa.shape != (model.nq,):
        raise InvalidValueError(f"q must have shape ({model.nq},), got {qa.shape}")
    node = model.frame_index(frame)
    nv = model.nv
    J6 = jacobian(model, qa, frame)
    U, s, Vt = np.linalg.svd(J6[sl], full_matrices=False)
    w = float(np.prod(s))
    if not _path_is_plain(model, node):
        h = 1e-6
        steps = np.concatenate([np.eye(nv) * h, -np.eye(nv) * h])
        wq = manipulability(model, model.integrate(qa, steps), frame, rows)
        return w, (wq[:nv] - wq[nv:]) / (2 * h)
    order = np.full(nv, -1, dtype=np.int64)  # the node of each column (-1: off the path)
    for k in model.ancestors(node).tolist():
        if model.moves(k):
            v0 = int(model.qv.v_index[k])
            order[v0 : v0 + (3 if model.qv.dof_type[v0] == 3 else 1)] = k
    lin, ang = J6[:3], J6[3:]
    dJ = np.zeros((nv, 6, nv))  # dJ[i] = dJ / dv_i
    for i in range(nv):
        if order[i] < 0:
            continue
        for j in range(nv):
            if order[j] < 0:
                continue
            if order[i] <= order[j]:
                dJ[i, :3, j] = np.cross(ang[:, i], lin[:, j])
                dJ[i, 3:, j] = np.cross(ang[:, i], ang[:, j])
            else:
                dJ[i, :3, j] = np.cross(ang[:, j], lin[:, i])
    # prod_{l != k} sigma_l without dividing by a zero sigma.
    others = np.array([np.prod(np.delete(s, k)) for k in range(len(s))])
    proj = np.einsum("rk,irc,kc->ik", U, dJ[:, sl, :], Vt)  # u_k^T dJ_i v_k
    return w, proj @ others
