"""Old home of :mod:`kinetree.body_parts` (body-part anatomy is not a file format).

Everything here is :mod:`kinetree.body_parts`'s; import from there.
"""

from __future__ import annotations

from ..body_parts import (
    CENTRE_ROLES,
    LIMB_ROLES,
    ROLES,
    SIDES,
    describe,
    find_body_parts,
    name_tokens,
    side_of,
)

__all__ = [
    "CENTRE_ROLES",
    "LIMB_ROLES",
    "ROLES",
    "SIDES",
    "describe",
    "find_body_parts",
    "name_tokens",
    "side_of",
]
