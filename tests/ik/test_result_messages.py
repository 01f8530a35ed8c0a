"""A failed solve's message says what to try next (issue 32, friction): an explicit method
has no restarts, and its "not converged" names ``method='auto'`` and ``restarts=``; the
advice holds (the same target solved by following it)."""

from __future__ import annotations

import numpy as np

import kinetree


def test_an_explicit_method_that_fails_suggests_auto_or_restarts() -> None:
    panda = kinetree.load("panda")
    q_true = panda.random_configuration(rng=5)
    T = panda.fk(q_true)
    stuck = panda.ik(T, method="dls", max_iter=2)
    assert not stuck.success and stuck.restarts == 0
    assert "method='auto'" in stuck.message and "restarts=" in stuck.message
    assert stuck.message.startswith("not converged")
    followed = panda.ik(T, method="auto")
    assert followed.success
    np.testing.assert_allclose(panda.fk(followed.q), T, atol=1e-5)
    restarted = panda.ik(T, method="dls", max_iter=2, restarts=2)
    if not restarted.success:  # restarts were tried: nothing to suggest about them
        assert "method='auto'" not in restarted.message
        assert "2 restarts" in restarted.message
