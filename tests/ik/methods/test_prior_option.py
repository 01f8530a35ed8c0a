"""``prior=`` is an :class:`~kinetree.ik.IKOptions` field (issue 33, one front door):
``kinetree.ik.solve`` and ``Model.ik`` take it alike and give the same result as the two
public steps it stands for (the prior's start, then a solve from it with it as the rest
pose); any object with ``start(model, targets, q0)`` is a prior; bad priors are refused
by name."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import kinetree
from kinetree.errors import InvalidValueError, UnsupportedError
from kinetree.ik import IKOptions, IKPrior, Position
from kinetree.learn import load_prior
from kinetree.learn.prior import layout_of

ROLES = ("head", "wrist_l", "wrist_r")


@pytest.fixture(scope="module")
def humanoid() -> kinetree.Model:
    return kinetree.load("humanoid")


def _targets(model: kinetree.Model, q: np.ndarray) -> dict[str, Any]:
    parts = layout_of(model).parts
    return {parts[r]: Position(model.fk(q, parts[r])[:3, 3]) for r in ROLES}


def test_prior_is_an_option_and_both_doors_give_the_two_steps_result(humanoid) -> None:
    tg = _targets(humanoid, humanoid.random_configuration(rng=1))
    by_model = humanoid.ik(tg, prior="human", method="dls")
    by_function = kinetree.ik.solve(humanoid, tg, prior="human", method="dls")
    by_options = kinetree.ik.solve(humanoid, tg, options=IKOptions(method="dls", prior="human"))
    # The two steps by hand, through public calls only: the oracle.
    start = load_prior("human").start(humanoid, tg, None)
    by_hand = humanoid.ik(tg, q0=start, rest=start, method="dls")
    if not by_hand.success:
        retry = humanoid.ik(tg, q0=start, method="dls")
        by_hand = retry if retry.success else by_hand
    for r in (by_model, by_function, by_options):
        np.testing.assert_array_equal(r.q, by_hand.q)
        assert r.success == by_hand.success
    assert by_model.success
    for frame, t in tg.items():  # FK, not the solver's word
        np.testing.assert_allclose(humanoid.fk(by_model.q, frame)[:3, 3], t.xyz, atol=1e-5)


class _Start:
    """A prior of our own: a fixed start, and a record of what it was asked."""

    def __init__(self, q: np.ndarray) -> None:
        self.q = q
        self.asked: list[tuple[Any, ...]] = []

    def start(self, model: kinetree.Model, targets: dict[str, Any], q0: Any) -> np.ndarray:
        self.asked.append((model, dict(targets), q0))
        return self.q


def test_a_protocol_conforming_prior_starts_and_is_preferred(humanoid) -> None:
    q_true = humanoid.random_configuration(rng=2)
    tg = _targets(humanoid, q_true)
    mine = _Start(q_true)
    assert isinstance(mine, IKPrior)
    r = kinetree.ik.solve(humanoid, tg, prior=mine, method="dls")
    ((model, asked, q0),) = mine.asked
    assert model is humanoid and q0 is None and set(asked) == set(tg)
    # The start meets the targets already: the solve stays there, exactly enough.
    assert r.success
    np.testing.assert_allclose(r.q, q_true, atol=1e-9)
    # From elsewhere, the rest pull leads to the start's pose in the targets' null space:
    # nearer to it than the plain solve from the same start with the neutral rest.
    other = humanoid.random_configuration(rng=3)
    pulled = humanoid.ik(tg, prior=_Start(other), method="dls")
    plain = humanoid.ik(tg, q0=other, rest="neutral", method="dls")
    assert pulled.success
    for frame, t in tg.items():
        np.testing.assert_allclose(humanoid.fk(pulled.q, frame)[:3, 3], t.xyz, atol=1e-5)
    assert np.linalg.norm(pulled.q - other) <= np.linalg.norm(plain.q - other) + 1e-9


def test_bad_priors_are_refused_by_name(humanoid) -> None:
    tg = _targets(humanoid, humanoid.neutral())
    with pytest.raises(InvalidValueError, match="IKPrior"):
        humanoid.ik(tg, prior=42)
    with pytest.raises(UnsupportedError, match="rest"):
        IKOptions(prior="human", rest="neutral")
    with pytest.raises(InvalidValueError, match="seeds"):
        kinetree.ik.solve(humanoid, tg, prior=_Start(humanoid.neutral()), seeds=_Seeds())
    with pytest.raises(InvalidValueError, match=rf"\({humanoid.nq},\)"):
        humanoid.ik(tg, prior=_Start(np.zeros(3)))
    with pytest.raises(InvalidValueError, match="configuration"):
        humanoid.ik(tg, prior=_Start(np.full(humanoid.nq, np.nan)))


class _Seeds:
    frame = "x"

    def configurations(self, *args: Any) -> np.ndarray:
        raise AssertionError("never asked")


def test_solve_takes_device_as_model_ik_does(humanoid) -> None:
    """``device=`` is a keyword of both doors; a GPU solve with ``base=`` is refused
    (world targets only) before any GPU is looked for."""
    with pytest.raises(UnsupportedError, match="base"):
        kinetree.ik.solve(humanoid, np.eye(4), base="pelvis", device="cuda")
    with pytest.raises(UnsupportedError, match="base"):
        humanoid.ik(np.eye(4), base="pelvis", device="cuda")


def test_a_gpu_solve_refuses_a_prior_rather_than_ignore_it(humanoid) -> None:
    tg = _targets(humanoid, humanoid.neutral())
    with pytest.raises(UnsupportedError, match="prior= and seeds= choose starts on the CPU"):
        humanoid.ik(tg, prior="human", device="cuda")
