"""Checks at the public edge (``kinetree._validate``): entries that are not numbers are
named with their place, not reported as NaN."""

from __future__ import annotations

import numpy as np
import pytest

import kinetree
from kinetree.errors import InvalidValueError


def test_none_entries_are_named_where_they_are() -> None:
    panda = kinetree.load("panda")
    with pytest.raises(InvalidValueError, match=r"q\[0\] is None, not a number"):
        panda.fk([None] * 7)
    with pytest.raises(InvalidValueError, match=r"q0\[3\] is None, not a number"):
        panda.ik(panda.fk(panda.neutral()), q0=[0.0, 0.0, 0.0, None, 0.0, 0.0, 0.0])
    with pytest.raises(InvalidValueError, match=r"q\[1, 2\] is 'x', not a number"):
        panda.fk(np.array([[0.0] * 7, [0, 0, "x", 0, 0, 0, 0]], dtype=object))
