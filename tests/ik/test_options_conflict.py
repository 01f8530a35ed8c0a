"""``options=`` with a keyword that sets the same field to another value raises, instead
of the keyword silently winning; a keyword for a field the options leave at its
default still applies (checked through the result)."""

from __future__ import annotations

import numpy as np
import pytest

import kinetree
from kinetree.errors import InvalidValueError
from kinetree.ik import IKOptions


def test_conflicting_keyword_is_refused() -> None:
    panda = kinetree.load("panda")
    T = panda.fk(panda.random_configuration(rng=0))
    with pytest.raises(
        InvalidValueError, match=r"method='dls' conflicts with options\.method='sdls'"
    ):
        panda.ik(T, options=IKOptions(method="sdls"), method="dls")
    with pytest.raises(InvalidValueError, match="max_iter"):
        panda.ik(T, options=IKOptions(max_iter=5), max_iter=50)


def test_keywords_that_agree_or_fill_in_apply() -> None:
    panda = kinetree.load("panda")
    T = panda.fk(panda.random_configuration(rng=0))
    r = panda.ik(T, options=IKOptions(method="dls"), method="dls", max_iter=0, restarts=0)
    assert r.method == "dls" and int(r.iterations) == 0
    r = panda.ik(T, options=IKOptions(method="dls"), seed=3)
    if r.success:
        np.testing.assert_allclose(panda.fk(r.q), T, atol=1e-5)
