"""Which link pairs self-collision checks visit: the tree's adjacency, and which pairs a
set of moving coordinates can move apart at all (the SRDF reader
and writer are :mod:`kinetree.io.srdf`; automatic discovery is
:func:`kinetree.collision.find_disabled_pairs`)."""

from __future__ import annotations

import numpy as np

from ..io.srdf import METADATA_KEY, Pairs, pair_key, read_srdf, with_disabled_pairs, write_srdf
from ..model import Model

__all__ = [
    "METADATA_KEY",
    "Pairs",
    "adjacent_pairs",
    "moved_nodes",
    "moves_between",
    "pair_key",
    "read_srdf",
    "with_disabled_pairs",
    "write_srdf",
]


def adjacent_pairs(model: Model, links: tuple[str, ...]) -> list[tuple[str, str]]:
    """Pairs of ``links`` joined in the tree: a link and its nearest ancestor among
    ``links`` (frames in between, without geometry, are looked through)."""
    node_of = {model.frame_index(f): f for f in links}
    out = []
    for f in links:
        k = int(model.parent[model.frame_index(f)])
        while k >= 0 and k not in node_of:
            k = int(model.parent[k])
        if k >= 0:
            out.append(pair_key(node_of[k], f))
    return out


def moved_nodes(model: Model, moving: np.ndarray) -> np.ndarray:
    """Per node, whether its own joint turns or slides when the coordinates ``moving``
    (nq bools) change, a coordinate tied to a moving one (a coupling) included."""
    coord = np.asarray(moving, dtype=bool).copy()
    for j, src, _, _ in model.couplings:
        if src >= 0 and coord[src]:
            coord[j] = True
    out = np.zeros(model.n_nodes, dtype=bool)
    for k in range(model.n_nodes):
        if model.moves(k):
            out[k] = bool(coord[model.q_index[k]])
    return out


def moves_between(model: Model, moved: np.ndarray, a: int, b: int) -> bool:
    """Whether a moved node lies on the tree path between nodes ``a`` and ``b`` (their
    common ancestor's own joint moves both alike and does not count)."""
    pa, pb = model.ancestors(a), model.ancestors(b)
    n = 0
    while n < min(len(pa), len(pb)) and pa[n] == pb[n]:
        n += 1
    return bool(moved[pa[n:]].any() or moved[pb[n:]].any())
