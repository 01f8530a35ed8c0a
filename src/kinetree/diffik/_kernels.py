"""Compiled centre of mass and its Jacobian over a batch of configurations, and the
linearised collision constraints of one step.

``mass_nodes`` (k,) are the nodes carrying mass, ``masses`` (k,) their masses [kg]
divided by the total, ``coms`` (k, 3) their centres in the node frame [m]; ``nodes``
the nodes FK must visit (ancestors included, sorted).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..collision._kernels import distance_gradient, pair_distances
from ..collision.layout import OUT_DISTANCE, OUT_EXACT
from ..kinematics._kernels import fk_nodes, jacobian_add


@njit(cache=True, nogil=True)
def com_rows(
    Q: np.ndarray, fdata: np.ndarray, idata: np.ndarray, nodes: np.ndarray,
    mass_nodes: np.ndarray, masses: np.ndarray, coms: np.ndarray, with_jacobian: bool,
    out_c: np.ndarray, out_J: np.ndarray, start: int, stop: int,
) -> None:  # fmt: skip
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


@njit(cache=True)
def collision_rows(
    q: np.ndarray, fdata: np.ndarray, idata: np.ndarray, nodes: np.ndarray,
    spheres: np.ndarray, links: np.ndarray, obstacles: np.ndarray, data: np.ndarray,
    pairs: np.ndarray, detection: float, margin: float, gain: float, W: np.ndarray,
    C: np.ndarray, out: np.ndarray, J: np.ndarray, grad: np.ndarray, G: np.ndarray,
    h: np.ndarray,
) -> int:  # fmt: skip
    """Linearised distance constraints at ``q``: for each pair closer than ``detection``
    [m], a row ``-grad . dq <= gain (d - margin)`` of ``G`` (n_pairs, nv) and ``h``
    (``grad`` the distance's derivative, :func:`kinetree.collision._kernels.
    distance_gradient`). Returns the number of rows written; ``out`` keeps every pair's
    distance row (layout ``OUT_*``)."""
    fk_nodes(q, fdata, idata, nodes, W)
    pair_distances(W, spheres, links, obstacles, data, pairs, detection, C, out)
    nv = G.shape[1]
    k = 0
    for p in range(pairs.shape[0]):
        if out[p, OUT_EXACT] == 0.0 or out[p, OUT_DISTANCE] >= detection:
            continue
        distance_gradient(fdata, idata, W, out[p], J, grad)
        for c in range(nv):
            G[k, c] = -grad[c]
        h[k] = gain * (out[p, OUT_DISTANCE] - margin)
        k += 1
    return k
