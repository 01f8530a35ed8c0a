"""``Model.with_floating_base`` and ``load(builtin, floating_base=True)``.

Oracle: the fixed-base model's FK, moved by the base pose the free joint's seven
coordinates describe (position in the old root's placement frame, then the rotation).
"""

from __future__ import annotations

import numpy as np
import pytest

import kinetree
from kinetree.spatial import quat_exp, quaternion_to_matrix


@pytest.mark.parametrize("name", ["panda", "humanoid", "ur5"])
def test_fk_is_the_fixed_models_moved_by_the_base(name: str) -> None:
    fixed = kinetree.load(name)
    free = kinetree.load(name, floating_base=True)
    assert (free.nq, free.nv) == (fixed.nq + 7, fixed.nv + 6)
    assert free.end_effectors == fixed.end_effectors
    assert free.q_slice("root_joint") == slice(0, 7) and free.frame_names[0] == "world"
    rng = np.random.default_rng(0)
    place = fixed.origin[0]  # where the old root sat: the free joint's frame
    for _ in range(5):
        q = fixed.random_configuration(rng=rng)
        p, w = rng.uniform(-1, 1, 3), rng.uniform(-1, 1, 3)
        base = np.eye(4)
        base[:3, :3] = quaternion_to_matrix(quat_exp(w))
        base[:3, 3] = p
        qf = np.concatenate([p, quat_exp(w), q])
        want = place @ base @ np.linalg.inv(place) @ fixed.fk_all(q)
        got = free.fk_all(qf)
        names = list(free.frame_names)
        for i, f in enumerate(fixed.frame_names):
            np.testing.assert_allclose(got[names.index(f)], want[i], atol=1e-12)
    np.testing.assert_allclose(free.neutral()[7:], fixed.neutral())


def test_whole_body_ik_on_the_built_in_humanoid() -> None:
    h = kinetree.load("humanoid", floating_base=True)
    rng = np.random.default_rng(3)
    solved = 0
    for _ in range(10):
        qt = h.random_configuration(rng=rng)
        qt[:3] = rng.uniform(-0.3, 0.3, 3)
        qt[3:7] = quat_exp(rng.uniform(-0.3, 0.3, 3))
        tg = {f: h.fk(qt, f) for f in ("hand_r", "hand_l", "foot_r", "foot_l")}
        # a count of restarts, not a wall clock: the same on a loaded machine
        r = h.ik(tg, time_budget=None, restarts=300)
        solved += bool(r.success)
        if r.success:
            for f, T in tg.items():
                np.testing.assert_allclose(h.fk(r.q, f)[:3, 3], T[:3, 3], atol=1e-6)
    assert solved >= 9


def test_names_that_are_taken_are_refused() -> None:
    free = kinetree.load("panda", floating_base=True)
    with pytest.raises(kinetree.InvalidValueError, match="already"):
        free.with_floating_base()
    twice = free.with_floating_base(joint="base2", root="ground")
    assert twice.nq == free.nq + 7
