"""Centre of mass and its Jacobian.

The centre of mass is ``c(q) = sum_k m_k T_world_k(q) c_k / sum_k m_k`` over the links
with an inertial (:attr:`kinetree.Model.inertials`), and its Jacobian the same weighted
sum of the positional Jacobians of the points ``c_k`` (compiled in
:mod:`kinetree.kinematics._mass_kernels`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._cache import PerModel
from .._threads import run_chunks
from .._validate import as_array
from ..errors import UnsupportedError
from ..model import Model
from . import _mass_kernels
from .frames import needed_nodes
from .layout import packed

__all__ = ["com", "com_jacobian"]

_MASS: PerModel[tuple[np.ndarray, ...]] = PerModel()


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
        out = _MASS.put(model, (nodes, mass_nodes, masses / masses.sum(), coms))
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
        lambda a, b: _mass_kernels.com_rows(
            Q, fdata, idata, nodes, mass_nodes, masses, coms, with_jacobian, out_c, out_J, a, b
        ),
        N,
        512,
    )
    return out_c.reshape(*batch, 3), out_J.reshape(*batch, 3, -1)


def com(model: Model, q: ArrayLike) -> np.ndarray:
    """Centre of mass ``(..., 3)`` [m] in the world frame at ``q`` (..., nq). Raises
    :class:`~kinetree.errors.UnsupportedError` for a model without masses."""
    return _com(model, q, False)[0]


def com_jacobian(model: Model, q: ArrayLike) -> np.ndarray:
    """``(..., 3, nv)``: the centre of mass's velocity [m/s] per unit motion at ``q``."""
    return _com(model, q, True)[1]
