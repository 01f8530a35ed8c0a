"""``PostureTask`` checks its cost when built, as the other tasks do (not at the first
step)."""

from __future__ import annotations

import numpy as np
import pytest

import kinetree
from kinetree import diffik as dk
from kinetree.errors import InvalidValueError, ShapeError


@pytest.mark.parametrize(
    ("cost", "error"),
    [
        (-1.0, InvalidValueError),
        ([1.0, -2.0], InvalidValueError),
        (np.nan, InvalidValueError),
        (np.ones((2, 2)), ShapeError),
    ],
)
def test_bad_cost_is_refused_when_built(cost, error) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(error, match="cost"):
        dk.PostureTask(cost=cost)


def test_a_cost_per_dof_is_checked_against_the_model() -> None:
    panda = kinetree.load("panda")
    task = dk.PostureTask(cost=[1.0, 2.0])  # two numbers: fine until the model is known
    with pytest.raises(ShapeError, match="cost"):
        dk.solve_step(panda, panda.neutral(), [task], dt=0.01)
    ok = dk.PostureTask(cost=np.full(panda.nv, 1e-3))
    v = dk.solve_step(panda, panda.neutral(), [ok], dt=0.01)
    np.testing.assert_allclose(v, 0.0, atol=1e-12)  # at its target: no motion
