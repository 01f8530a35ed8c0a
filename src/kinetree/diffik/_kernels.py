"""Compiled linearised collision constraints of one step, and frame errors with their
Jacobians (the centre of mass kernel is :mod:`kinetree.kinematics._mass_kernels`).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..collision._kernels import distance_gradient, pair_distances
from ..collision.layout import OUT_DISTANCE, OUT_EXACT
from ..kinematics._kernels import fk_nodes, jacobian_add
from ..spatial._kernels import log3


@njit(cache=True)
def collision_rows(
    q: np.ndarray,
    fdata: np.ndarray,
    idata: np.ndarray,
    nodes: np.ndarray,
    spheres: np.ndarray,
    links: np.ndarray,
    obstacles: np.ndarray,
    data: np.ndarray,
    pairs: np.ndarray,
    detection: float,
    margin: float,
    gain: float,
    W: np.ndarray,
    C: np.ndarray,
    out: np.ndarray,
    J: np.ndarray,
    grad: np.ndarray,
    G: np.ndarray,
    h: np.ndarray,
) -> int:
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


@njit(cache=True)
def frame_error_jacobian(
    q: np.ndarray,
    fdata: np.ndarray,
    idata: np.ndarray,
    nodes: np.ndarray,
    frame: int,
    target: np.ndarray,
    W: np.ndarray,
    M: np.ndarray,
    e: np.ndarray,
    J: np.ndarray,
) -> None:
    """A frame task's error ``e`` (6,) = ``[p - p_t; log(R R_t^T)]`` and Jacobian ``J``
    (6, nv): the geometric Jacobian with its angular rows multiplied by the inverse
    left Jacobian of SO(3) at ``e[3:]`` (``M`` (3, 3) scratch)."""
    fk_nodes(q, fdata, idata, nodes, W)
    nv = J.shape[1]
    for r in range(6):
        for c in range(nv):
            J[r, c] = 0.0
    p = W[frame, :, 3]
    jacobian_add(fdata, idata, W, frame, p, J)
    for r in range(3):
        e[r] = W[frame, r, 3] - target[r, 3]
        for c in range(3):
            M[r, c] = (
                W[frame, r, 0] * target[c, 0]
                + W[frame, r, 1] * target[c, 1]
                + W[frame, r, 2] * target[c, 2]
            )
    log3(M, e[3:])
    x, y, z = e[3], e[4], e[5]
    theta = math.sqrt(x * x + y * y + z * z)
    if theta < 1e-6:
        coef = 1.0 / 12.0
    else:
        coef = 1.0 / (theta * theta) - (1.0 + math.cos(theta)) / (2.0 * theta * math.sin(theta))
    # Jl^{-1} = I - K / 2 + coef K^2 with K the cross-product matrix of e[3:].
    K = ((0.0, -z, y), (z, 0.0, -x), (-y, x, 0.0))
    for r in range(3):
        for c in range(3):
            k2 = K[r][0] * K[0][c] + K[r][1] * K[1][c] + K[r][2] * K[2][c]
            M[r, c] = (1.0 if r == c else 0.0) - 0.5 * K[r][c] + coef * k2
    for c in range(nv):
        a0, a1, a2 = J[3, c], J[4, c], J[5, c]
        for r in range(3):
            J[3 + r, c] = M[r, 0] * a0 + M[r, 1] * a1 + M[r, 2] * a2
