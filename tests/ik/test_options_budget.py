"""``iteration_budget``: a cap on the iterations of one solve over all its attempts,
counted, not timed (the same answer on any machine, and a bound on a GPU batch's tail).
The capped answer is the best found, judged by FK like any other; problems that finish
within the budget are not touched by it."""

from __future__ import annotations

import numpy as np
import pytest

import kinetree
from kinetree import IKOptions, Position
from kinetree.errors import InvalidValueError


@pytest.fixture(scope="module")
def panda() -> kinetree.Model:
    return kinetree.load("panda")


def test_a_batch_keeps_the_budget_and_judges_the_rest_by_fk(panda: kinetree.Model) -> None:
    T = panda.fk(panda.random_configuration(60, rng=31))
    Q0 = panda.random_configuration(60, rng=32)
    free = panda.ik(T, q0=Q0, max_iter=30, restarts=20, time_budget=None)
    capped = panda.ik(T, q0=Q0, max_iter=30, restarts=20, time_budget=None, iteration_budget=9)
    assert np.all(capped.iterations <= 9)
    assert free.iterations.max() > 9  # some problems needed more: the cap did something
    within = free.iterations <= 9
    assert within.any() and not within.all()
    # Finished within the budget: the very same answer.
    np.testing.assert_array_equal(capped.q[within], free.q[within])
    np.testing.assert_array_equal(capped.success[within], free.success[within])
    # Cut short: success only where FK of the returned q is on target.
    pos = np.linalg.norm(panda.fk(capped.q)[:, :3, 3] - T[:, :3, 3], axis=1)
    assert np.all(pos[capped.success] <= 1e-6)
    assert np.all(capped.success <= free.success)
    for k in np.nonzero(~capped.success)[0]:
        assert str(capped.message[k]).startswith("not converged")
        assert capped.position_error[k, 0] == pytest.approx(pos[k], abs=1e-12)


def test_restarts_stop_at_the_budget(panda: kinetree.Model) -> None:
    """A target no configuration meets (not provably: the Panda's first joint turns the
    reach sphere's pivot) would spend every restart; the budget ends it."""
    far = Position([0.0, 0.0, 3.0])
    r = panda.ik(far, restarts=1000, time_budget=None, iteration_budget=75, clamp_target=False)
    assert not r.success
    assert r.iterations <= 75
    assert r.restarts >= 1  # it did restart, within the budget
    again = panda.ik(far, restarts=1000, time_budget=None, iteration_budget=75, clamp_target=False)
    np.testing.assert_array_equal(again.q, r.q)  # counted, not timed: the same answer


def test_single_pose_plan_and_general_path_agree(panda: kinetree.Model) -> None:
    T = panda.fk(panda.random_configuration(8, rng=33))
    opts = IKOptions(time_budget=None, iteration_budget=6, restarts=5)
    for t in T:
        one = panda.ik(t, options=opts)
        one = panda.ik(t, options=opts)  # the plan's path the second time
        batch = panda.ik(t[None], options=opts)
        assert one.iterations == batch.iterations[0] <= 6
        np.testing.assert_array_equal(one.q, batch.q[0])


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "10"])
def test_bad_budgets_are_refused(bad: object) -> None:
    with pytest.raises(InvalidValueError, match="iteration_budget"):
        IKOptions(iteration_budget=bad)


def test_methods_that_cannot_keep_it_say_so(panda: kinetree.Model) -> None:
    with pytest.raises(InvalidValueError, match=r"compiled methods only.*auto"):
        panda.ik(panda.fk(panda.neutral()), method="lbfgs", iteration_budget=10)
