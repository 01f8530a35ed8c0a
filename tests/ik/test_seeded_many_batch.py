"""``ik_many`` takes one target: a batch of poses is a KinetreeError naming it, not
numpy's "truth value of an array is ambiguous"."""

from __future__ import annotations

import numpy as np
import pytest

import kinetree
from kinetree.errors import InvalidValueError
from kinetree.ik import Pose, Position


@pytest.mark.parametrize("wrap", [lambda T: T, lambda T: Pose(T), lambda T: Position(T[:, :3, 3])])
def test_a_batch_of_targets_is_refused(wrap) -> None:  # type: ignore[no-untyped-def]
    panda = kinetree.load("panda")
    Ts = panda.fk(panda.random_configuration(2, rng=1))
    with pytest.raises(InvalidValueError, match="one target, not a batch"):
        panda.ik_many(wrap(Ts), 3)


def test_one_pose_still_gives_solutions_that_fk_confirms() -> None:
    panda = kinetree.load("panda")
    T = panda.fk(panda.random_configuration(rng=1))
    Q = panda.ik_many(T, 3, seed=0)
    assert len(Q) >= 1
    np.testing.assert_allclose(panda.fk(Q), np.broadcast_to(T, (len(Q), 4, 4)), atol=1e-5)
