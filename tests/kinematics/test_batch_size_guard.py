"""``fk``, ``fk_all``, ``jacobian`` and ``ik`` refuse a batch too large to build up front,
as ``random_configuration`` does: a broadcast view is small until copied, so it is
counted as the arrays it would become (10^12 rows: numpy's own allocation would fail
at once rather than after seconds of work, so the old behaviour shows quickly)."""

from __future__ import annotations

import numpy as np
import pytest

import kinetree
from kinetree.errors import InvalidValueError
from kinetree.ik import Pose, Position

HUGE = 10**12


@pytest.fixture(scope="module")
def panda() -> kinetree.Model:
    return kinetree.load("panda")


@pytest.mark.parametrize(
    "call",
    [
        lambda m, q, T: m.fk(np.broadcast_to(q, (HUGE, m.nq))),
        lambda m, q, T: m.fk(np.broadcast_to(q, (HUGE, m.nq)), base="link2"),
        lambda m, q, T: m.fk_all(np.broadcast_to(q, (HUGE, m.nq))),
        lambda m, q, T: m.jacobian(np.broadcast_to(q, (HUGE, m.nq))),
        lambda m, q, T: m.ik(np.broadcast_to(T, (HUGE, 4, 4))),
        lambda m, q, T: m.ik(Pose(np.broadcast_to(T, (HUGE, 4, 4)))),
        lambda m, q, T: m.ik(Position(np.broadcast_to(T[:3, 3], (HUGE, 3)))),
        lambda m, q, T: m.ik({"flange": np.broadcast_to(T, (HUGE, 4, 4))}),
        lambda m, q, T: m.ik(np.broadcast_to(T, (2, 4, 4)), q0=np.broadcast_to(q, (HUGE, 2, 7))),
    ],
    ids=[
        "fk",
        "fk-base",
        "fk_all",
        "jacobian",
        "ik-poses",
        "ik-Pose",
        "ik-Position",
        "ik-dict",
        "ik-q0",
    ],
)
def test_huge_batches_are_refused_up_front(panda: kinetree.Model, call) -> None:  # type: ignore[no-untyped-def]
    q = panda.neutral()
    with pytest.raises(InvalidValueError, match="GiB of memory"):
        call(panda, q, panda.fk(q))


def test_ordinary_batches_still_run(panda: kinetree.Model) -> None:
    Q = panda.random_configuration(2000, rng=0)
    T = panda.fk(np.broadcast_to(Q[0], (3000, panda.nq)))
    np.testing.assert_allclose(T, np.broadcast_to(panda.fk(Q[0]), (3000, 4, 4)))
    assert panda.jacobian(Q).shape == (2000, 6, panda.nv)
    assert panda.fk_all(Q[:10]).shape == (10, len(panda.frame_names), 4, 4)
    r = panda.ik(panda.fk(Q[:4]), q0=Q[:4])
    assert np.all(r.success)
