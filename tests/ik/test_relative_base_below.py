"""``base=`` below the moved frame: refused with the reason (the base must not hang below
the frame), not "no joint moves ..."; a base on another branch still solves."""

from __future__ import annotations

import numpy as np
import pytest

import kinetree
from kinetree.errors import KinetreeError, UnsupportedError
from kinetree.ik import Position


def test_base_below_the_frame_is_refused_with_the_reason() -> None:
    h = kinetree.load("humanoid")
    with pytest.raises(UnsupportedError) as info:
        h.ik(Position([0.1, 0.0, 0.2]), "chest", base="hand_r")
    msg = str(info.value)
    assert "hangs below 'chest'" in msg
    assert "no joint moves" not in msg
    # the ancestors it offers are the frames above chest
    assert "pelvis" in msg and "abdomen" in msg


def test_base_equal_to_the_frame_is_refused() -> None:
    h = kinetree.load("humanoid")
    with pytest.raises(KinetreeError, match="'hand_r' is:"):
        h.ik(Position([0.1, 0.0, 0.2]), "hand_r", base="hand_r")


def test_base_on_another_branch_solves() -> None:
    h = kinetree.load("humanoid")
    q0 = h.neutral()
    T_world_base = h.fk(q0, "hand_l")
    goal_world = h.fk(q0, "hand_r")[:3, 3] + np.array([0.05, 0.0, 0.05])
    p_base = np.linalg.solve(T_world_base, np.append(goal_world, 1.0))[:3]
    r = h.ik(Position(p_base), "hand_r", base="hand_l", q0=q0)
    assert r.success
    np.testing.assert_allclose(h.fk(r.q, "hand_r", base="hand_l")[:3, 3], p_base, atol=1e-5)
