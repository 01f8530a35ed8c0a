"""Which link pairs self-collision checks visit: the tree's adjacency (the SRDF reader
and writer are :mod:`kinetree.io.srdf`; automatic discovery is
:func:`kinetree.collision.find_disabled_pairs`)."""

from __future__ import annotations

from ..io.srdf import METADATA_KEY, Pairs, pair_key, read_srdf, with_disabled_pairs, write_srdf
from ..model import Model

__all__ = [
    "METADATA_KEY",
    "Pairs",
    "adjacent_pairs",
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
