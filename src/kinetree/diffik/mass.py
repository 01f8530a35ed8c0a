"""Centre of mass, its Jacobian, and Yoshikawa's manipulability with its gradient.

The centre of mass is ``c(q) = sum_k m_k T_world_k(q) c_k / sum_k m_k`` over the links
with an inertial (:attr:`kinetree.Model.inertials`), and its Jacobian the same weighted
sum of the positional Jacobians of the points ``c_k``.

Manipulability (T. Yoshikawa, "Manipulability of robotic mechanisms", IJRR 4(2), 1985)
is ``w(q) = sqrt(det(J J^T)) = prod_k sigma_k(J)`` for a frame's geometric Jacobian (all
six rows, or the three of position or orientation): the volume of the velocity
ellipsoid, zero at a singularity. Its gradient along each DoF uses the derivative of
the world-frame Jacobian: with columns ``[v_j; w_j]`` (linear velocity at the frame
point, angular velocity), moving DoF ``i`` changes column ``j`` by
``[w_i x v_j; w_i x w_j]`` when ``i``'s node is ``j``'s or an ancestor of it, and by
``[w_j x v_i; 0]`` otherwise (``i`` downstream moves only the point). Then
``dw/dv_i = sum_k (prod_{l != k} sigma_l) u_k^T (dJ/dv_i) v_k`` from the SVD
``J = U S V^T``, which stays finite at singularities.
"""

from __future__ import annotations

import weakref

import numpy as np
from numpy.typing import ArrayLike

from .._threads import run_chunks
from .._validate import as_array
from ..errors import InvalidValueError, UnsupportedError
from ..kinematics import needed_nodes, packed
from ..model import Model
from . import _kernels

__all__ = ["com", "com_jacobian", "manipulability", "manipulability_gradient"]

ROWS = {"all": slice(0, 6), "position": slice(0, 3), "orientation": slice(3, 6)}

_MASS: weakref.WeakKeyDictionary[Model, tuple[np.ndarray, ...]] = weakref.WeakKeyDictionary()


def _mass_layout(model: Model) -> tuple[np.ndarray, ...]:
    out = _MASS.get(model)
    if out is None:
        frames = [f for f, (m, _) in model.inertials.items() if m > 0.0]
        if not frames:
            raise UnsupportedError(
                f"model {model.name!r} has no link masses (no URDF <inertial> or MJCF body "
                "mass was loaded), so it has no centre of mass"
            )
        mass_nodes = np.array([model.frame_index(f) for f in frames], dtype=np.int64)
        masses = np.array([model.inertials[f][0] for f in frames])
        coms = np.array([model.inertials[f][1] for f in frames], dtype=np.float64)
        nodes = needed_nodes(model, tuple(mass_nodes.tolist()))
        out = _MASS[model] = (nodes, mass_nodes, masses / masses.sum(), coms)
    return out


def _com(model: Model, q: ArrayLike, with_jacobian: bool) -> tuple[np.ndarray, np.ndarray]:
    nodes, mass_nodes, masses, coms = _mass_layout(model)
    qa = as_array(q, "q", (model.nq,))
    batch = qa.shape[:-1]
    Q = np.require(qa.reshape(-1, model.nq), np.float64, ("C", "W"))
    fdata, idata = packed(model)
    N = Q.shape[0]
    out_c = np.empty((N, 3))
    out_J = np.empty((N, 3, model.nv if with_jacobian else 0))
    run_chunks(
        lambda a, b: _kernels.com_rows(Q, fdata, idata, nodes, mass_nodes, masses, coms,
                                       with_jacobian, out_c, out_J, a, b),
        N,
        512,
    )  # fmt: skip
    return out_c.reshape(*batch, 3), out_J.reshape(*batch, 3, -1)


def com(model: Model, q: ArrayLike) -> np.ndarray:
    """Centre of mass ``(..., 3)`` [m] in the world frame at ``q`` (..., nq). Raises
    :class:`~kinetree.errors.UnsupportedError` for a model without masses."""
    return _com(model, q, False)[0]


def com_jacobian(model: Model, q: ArrayLike) -> np.ndarray:
    """``(..., 3, nv)``: the centre of mass's velocity [m/s] per unit motion at ``q``."""
    return _com(model, q, True)[1]


def _rows(rows: str) -> slice:
    if rows not in ROWS:
        raise InvalidValueError(f"rows {rows!r} is not one of: {', '.join(ROWS)}")
    return ROWS[rows]


def manipulability(
    model: Model, q: ArrayLike, frame: str | None = None, rows: str = "all"
) -> np.ndarray:
    """Yoshikawa's ``sqrt(det(J J^T))`` (..., ) of ``frame``'s Jacobian ``rows`` at ``q``
    (the product of its singular values; with fewer DoF than rows, 0)."""
    sl = _rows(rows)
    J = model.jacobian(q, frame)[..., sl, :]
    if J.shape[-1] < J.shape[-2]:
        return np.zeros(J.shape[:-2])
    s = np.linalg.svd(J, compute_uv=False)
    out: np.ndarray = np.prod(s, axis=-1)
    return out


def _path_is_plain(model: Model, node: int) -> bool:
    """Whether every DoF on the path to ``node`` drives exactly one node there (no
    mimic joints or couplings): the condition of the closed-form derivative."""
    path = model.ancestors(node)
    moving = [k for k in path.tolist() if model.moves(k)]
    cols = [int(model.v_index[k]) for k in moving]
    return (
        len(set(cols)) == len(cols)
        and all(model.q_scale[k] == 1.0 and model.dof_node[model.v_index[k]] == k
                for k in moving)
        and not model.couplings
    )  # fmt: skip


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
    J6 = model.jacobian(qa, frame)
    J = J6[sl]
    if nv < J.shape[0]:
        return 0.0, np.zeros(nv)
    U, s, Vt = np.linalg.svd(J, full_matrices=False)
    w = float(np.prod(s))
    if not _path_is_plain(model, node):
        h = 1e-6
        steps = np.concatenate([np.eye(nv) * h, -np.eye(nv) * h])
        wq = manipulability(model, model.integrate(qa, steps), frame, rows)
        return w, (wq[:nv] - wq[nv:]) / (2 * h)
    order = np.full(nv, -1, dtype=np.int64)  # the node of each column (-1: off the path)
    for k in model.ancestors(node).tolist():
        if model.moves(k):
            v0 = int(model.v_index[k])
            order[v0 : v0 + (3 if model.dof_type[v0] == 3 else 1)] = k
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
    k_count = len(s)
    others = np.array([np.prod(np.delete(s, k)) for k in range(k_count)])
    proj = np.einsum("rk,irc,kc->ik", U, dJ[:, sl, :], Vt)  # u_k^T dJ_i v_k
    return w, proj @ others
