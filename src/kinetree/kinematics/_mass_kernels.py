"""Compiled centre of mass and its Jacobian over a batch of configurations.

``mass_nodes`` (k,) are the nodes carrying mass, ``masses`` (k,) their masses [kg]
divided by the total, ``coms`` (k, 3) their centres in the node frame [m]; ``nodes``
the nodes FK must visit (ancestors included, sorted).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._kernels import fk_nodes, jacobian_add


@njit(cache=True, nogil=True)
def com_rows(
    Q: np.ndarray,
    fdata: np.ndarray,
    idata: np.ndarray,
    nodes: np.ndarray,
    mass_nodes: np.ndarray,
    masses: np.ndarray,
    coms: np.ndarray,
    with_jacobian: bool,
    out_c: np.ndarray,
    out_J: np.ndarray,
    start: int,
    stop: int,
) -> None:
    """Centre of mass ``out_c[b]`` (3,) [m] and, with ``with_jacobian``, its Jacobian
    ``out_J[b]`` (3, nv) for rows ``start..stop`` of ``Q``: the mass-weighted sum of
    each centre's world position and of the positional rows of its point Jacobian."""
    nv = out_J.shape[2]
    W = np.empty((fdata.shape[0], 3, 4))
    J = np.empty((6, nv))
    p = np.empty(3)
    for b in range(start, stop):
        fk_nodes(Q[b], fdata, idata, nodes, W)
        for r in range(3):
            out_c[b, r] = 0.0
            for c in range(nv):
                out_J[b, r, c] = 0.0
        for t in range(mass_nodes.shape[0]):
            k = mass_nodes[t]
            w = masses[t]
            for r in range(3):
                p[r] = (W[k, r, 0] * coms[t, 0] + W[k, r, 1] * coms[t, 1]
                        + W[k, r, 2] * coms[t, 2] + W[k, r, 3])  # fmt: skip
                out_c[b, r] += w * p[r]
            if not with_jacobian:
                continue
            for r in range(6):
                for c in range(nv):
                    J[r, c] = 0.0
            jacobian_add(fdata, idata, W, k, p, J)
            for r in range(3):
                for c in range(nv):
                    out_J[b, r, c] += w * J[r, c]
