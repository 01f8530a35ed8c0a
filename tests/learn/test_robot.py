"""Learned robot IK (``kinetree.learn.train_ik``): the learned distribution covers every
branch, numpy sampling equals torch's network, learned seeds and ``ik_many`` never give
up exactness or the limits, and bad input raises. Oracles: the 2R arm's closed-form
branches, forward kinematics, the torch module itself. Training is tiny (seconds)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import kinetree
from kinetree.errors import (
    FileFormatError,
    InvalidValueError,
    KinetreeError,
    ShapeError,
    UnknownNameError,
    UnsupportedError,
)
from kinetree.models.arms import planar_2r, planar_nr

torch = pytest.importorskip("torch")

from kinetree.learn import LearnedIK, load_ik, train_ik  # noqa: E402
from kinetree.learn._ik_flow import Flow  # noqa: E402
from kinetree.learn._ik_train import TorchFlow  # noqa: E402
from kinetree.learn.robot import _partitions  # noqa: E402

L1, L2 = 1.0, 0.8  # planar_2r's links [m]
SRC = Path(kinetree.__file__).resolve().parents[1]


def _branches(xy: np.ndarray) -> np.ndarray:
    """The 2R arm's two closed-form solutions (elbow up, elbow down) for the point ``xy``."""
    x, y = xy
    c2 = (x * x + y * y - L1 * L1 - L2 * L2) / (2 * L1 * L2)
    out = []
    for sign in (1.0, -1.0):
        q2 = sign * np.arccos(c2)
        q1 = np.arctan2(y, x) - np.arctan2(L2 * np.sin(q2), L1 + L2 * np.cos(q2))
        out.append([q1, q2])
    return (np.array(out) + np.pi) % (2 * np.pi) - np.pi


def _wrapped(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.abs((a - b + np.pi) % (2 * np.pi) - np.pi)


@pytest.fixture(scope="module")
def arm() -> kinetree.Model:
    return planar_2r()


@pytest.fixture(scope="module")
def arm_ik(arm: kinetree.Model) -> LearnedIK:
    return train_ik(arm, conditions="position", samples=4000, steps=250, batch=256, hidden=32,
                    layers=6, seed=0)  # fmt: skip


@pytest.fixture(scope="module")
def panda() -> kinetree.Model:
    return kinetree.load("panda")


@pytest.fixture(scope="module")
def panda_ik(panda: kinetree.Model) -> LearnedIK:
    return train_ik(panda, samples=4000, steps=150, batch=256, hidden=32, layers=4, seed=0)


def _panda_targets(panda: kinetree.Model, n: int) -> tuple[np.ndarray, np.ndarray]:
    Q = panda.random_configuration(n, rng=np.random.default_rng(7))
    return Q, panda.fk(Q)


# --- the learned distribution ------------------------------------------------------------------


def test_2r_samples_cover_both_elbow_branches(arm: kinetree.Model, arm_ik: LearnedIK) -> None:
    """Each branch gets at least 10 % of the samples within 0.75 rad of it (uniform
    guessing: 5.7 %), both together at least 35 % (uniform: 11 %). Targets away from the
    wrap of the first joint at +-pi and from the folded arm, which the tiny training
    learns least (more training covers them too)."""
    for q_true in ([0.86, -1.45], [0.67, 1.44], [-1.26, -0.49], [1.18, -0.7], [-2.29, 1.39]):
        T = arm.fk(np.array(q_true))
        up, down = _branches(T[:2, 3])
        S = arm_ik.sample(T, 400, seed=1)
        near_up = (_wrapped(S, up).max(axis=1) < 0.75).mean()
        near_down = (_wrapped(S, down).max(axis=1) < 0.75).mean()
        assert near_up > 0.1 and near_down > 0.1 and near_up + near_down > 0.35, (
            q_true, near_up, near_down)  # fmt: skip


def test_2r_ik_many_with_seeds_finds_both_branches_exactly(
    arm: kinetree.Model, arm_ik: LearnedIK
) -> None:
    T = arm.fk(np.array([0.5, 1.2]))
    sols = arm.ik_many(kinetree.Position(T[:3, 3]), 4, seeds=arm_ik)
    assert len(sols) == 2  # the arm has exactly two
    P = arm.fk(sols)[:, :3, 3]
    assert np.abs(P - T[:3, 3]).max() < 1e-6
    up, down = _branches(T[:2, 3])
    for b in (up, down):
        assert np.min(_wrapped(sols, b).max(axis=1)) < 1e-4


def test_samples_within_the_sampling_range(panda: kinetree.Model, panda_ik: LearnedIK) -> None:
    _, P = _panda_targets(panda, 5)
    S = panda_ik.sample(P, 50, seed=3, temperature=2.0)
    assert S.shape == (5, 50, 7)
    assert np.all(S >= panda.limits[:, 0]) and np.all(S <= panda.limits[:, 1])
    assert np.array_equal(S, panda_ik.sample(P, 50, seed=3, temperature=2.0))  # seeded


# --- numpy inference against torch ----------------------------------------------------------------


@pytest.mark.parametrize(("width", "n_cond"), [(9, 9), (4, 3), (1, 3)])
def test_numpy_flow_equals_torch(width: int, n_cond: int) -> None:
    keep, change = _partitions(width, 5, np.random.default_rng(0))
    torch.manual_seed(0)
    net = TorchFlow(torch, keep, change, 16, n_cond).double()
    with torch.no_grad():
        for p in net.parameters():  # away from the identity the training starts at
            p.copy_(0.2 * torch.randn(p.shape, dtype=torch.float64))
    w = net.export()
    flow = Flow(tuple(keep), tuple(change),
                tuple(tuple(w[f"l{i}_{k}"] for k in ("W1k", "W1c", "b1", "W2", "b2", "W3", "b3"))
                      for i in range(5)),
                np.zeros(n_cond), np.ones(n_cond), width)  # fmt: skip
    rng = np.random.default_rng(1)
    z = rng.standard_normal((3, 7, width))
    c = rng.standard_normal((3, n_cond))
    x_np = flow.sample(z, c)  # the compiled kernel
    assert np.abs(x_np - flow.sample_numpy(z, c)).max() < 1e-9
    with torch.no_grad():
        ct = torch.as_tensor(np.repeat(c, 7, axis=0))
        x_t = net.inverse(torch.as_tensor(z.reshape(21, width)), ct).numpy().reshape(3, 7, width)
        z_back, logdet = net(torch.as_tensor(x_np.reshape(21, width)), ct)
    assert np.abs(x_np - x_t).max() < 1e-6
    assert np.abs(z_back.numpy() - z.reshape(21, width)).max() < 1e-6  # inverse of each other
    lp_t = -0.5 * (z_back.numpy() ** 2).sum(1) - 0.5 * width * np.log(2 * np.pi) + logdet.numpy()
    assert (
        np.abs(flow.log_density(x_np.reshape(21, width), np.repeat(c, 7, axis=0)) - lp_t).max()
        < 1e-6
    )


def test_save_load_round_trip(tmp_path, panda: kinetree.Model, panda_ik: LearnedIK) -> None:
    path = panda_ik.save(tmp_path / "panda_ik.npz")
    back = load_ik(path)
    _, P = _panda_targets(panda, 3)
    assert np.array_equal(back.sample(P, 20, seed=5), panda_ik.sample(P, 20, seed=5))
    assert back.frame == panda_ik.frame and back.joint_names == panda_ik.joint_names
    assert back.info == panda_ik.info


def test_solving_with_a_saved_model_needs_no_torch(tmp_path, panda_ik: LearnedIK) -> None:
    """Inference is numpy and numba: a fresh interpreter loads the file, samples and
    solves with seeds, and never imports torch."""
    path = panda_ik.save(tmp_path / "panda_ik.npz")
    code = (
        "import sys, numpy as np, kinetree\n"
        "from kinetree.learn import load_ik\n"
        f"learned = load_ik({str(path)!r})\n"
        "panda = kinetree.load('panda')\n"
        "T = panda.fk(panda.random_configuration(rng=3))\n"
        "r = panda.ik(T, seeds=learned, time_budget=None)\n"
        "assert r.success, r\n"
        "print('torch' in sys.modules)\n"
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), *filter(None, [env.get("PYTHONPATH")])])
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)  # fmt: skip
    assert out.stdout.strip() == "False"


def test_training_is_deterministic(arm: kinetree.Model) -> None:
    a = train_ik(arm, conditions="position", samples=500, steps=20, batch=64, hidden=8, layers=2)
    b = train_ik(arm, conditions="position", samples=500, steps=20, batch=64, hidden=8, layers=2)
    T = arm.fk(np.array([0.3, 0.4]))
    assert np.array_equal(a.sample(T, 10), b.sample(T, 10))


# --- seeds in IK ----------------------------------------------------------------------------------


def test_learned_seeds_keep_exactness_and_limits(
    panda: kinetree.Model, panda_ik: LearnedIK
) -> None:
    _, P = _panda_targets(panda, 12)
    for T in P:
        r = panda.ik(T, seeds=panda_ik, time_budget=None)  # load-independent
        assert r.success
        assert np.all(np.isfinite(r.q)) and panda.within_limits(r.q)
        e = kinetree.spatial.pose_error(T, panda.fk(r.q))
        assert np.linalg.norm(e[:3]) <= 1e-6 and np.linalg.norm(e[3:]) <= 1e-6
    batch = panda.ik(P[:3], seeds=panda_ik, time_budget=None)  # one seeded solve per pose
    assert batch.success.all() and batch.q.shape == (3, 7)
    assert np.abs(panda.fk(batch.q) - P[:3]).max() < 1e-5


def test_unreachable_target_with_seeds_fails_honestly(
    panda: kinetree.Model, panda_ik: LearnedIK
) -> None:
    T = np.eye(4)
    T[:3, 3] = (3.0, 0.0, 0.5)  # far beyond the arm's reach
    r = panda.ik(T, seeds=panda_ik, time_budget=0.02)
    assert not r.success and np.all(np.isfinite(r.q)) and panda.within_limits(r.q)


def test_collision_aware_seeded_successes_keep_the_margin(tmp_path, monkeypatch) -> None:
    """With obstacles, the learned attempts are collision-aware solves too: every success
    keeps the margin by the closed-form sphere distances of ``test_collision_ik``."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ik" / "kernel"))
    from test_collide import MARGIN, _clearance, _targets, _world, sphere_arm

    monkeypatch.setenv("KINETREE_CACHE_DIR", str(tmp_path / "kt-cache"))
    arm = sphere_arm()
    learned = train_ik(arm, "tip", conditions="position", samples=3000, steps=100, batch=256,
                       hidden=16, layers=4)  # fmt: skip
    world = _world()
    solved = 0
    for p in _targets(arm, 8, world, seed=3):
        r = arm.ik(kinetree.Position(p), "tip", obstacles=world, margin=MARGIN, seeds=learned,
                   time_budget=None)  # fmt: skip
        assert np.all(np.isfinite(r.q)) and arm.within_limits(r.q)
        if r.success:
            solved += 1
            assert np.linalg.norm(arm.fk(r.q, "tip")[:3, 3] - p) <= 1e-6
            assert _clearance(arm, r.q, world) >= MARGIN - 1e-9
    assert solved >= 6


@pytest.mark.parametrize("learned", [True, False])
def test_ik_many_distinct_and_exact(
    panda: kinetree.Model, panda_ik: LearnedIK, learned: bool
) -> None:
    _, P = _panda_targets(panda, 1)
    sols = panda.ik_many(P[0], 10, seeds=panda_ik if learned else None)
    assert len(sols) == 10
    assert np.all(panda.within_limits(sols))
    e = kinetree.spatial.pose_error(P[0], panda.fk(sols))
    assert np.linalg.norm(e[:, :3], axis=1).max() <= 1e-6
    assert np.linalg.norm(e[:, 3:], axis=1).max() <= 1e-6
    gaps = np.abs(sols[:, None] - sols[None]).max(axis=2) + np.eye(10) * 9
    assert gaps.min() > 0.1


def test_ik_many_stops_when_the_branches_are_exhausted(
    arm: kinetree.Model, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A point the 2R arm reaches has exactly two solutions (the closed-form elbows):
    asked for 1000, ``ik_many`` returns both and stops once successes keep repeating
    them (3 k + 20 in a row): after one round, not after thousands of starts sized by
    ``n``."""
    import kinetree.ik.methods.seeded as seeded

    starts: list[int] = []
    solve_starts = seeded._solutions

    def counted(model, target, frame, S, attempt, pose, solve):  # type: ignore[no-untyped-def]
        starts.append(len(S))
        return solve_starts(model, target, frame, S, attempt, pose, solve)

    monkeypatch.setattr(seeded, "_solutions", counted)
    xy = np.array([1.1, 0.7])
    sols = arm.ik_many(kinetree.Position(np.array([*xy, 0.0])), 1000, seed=3)
    assert len(sols) == 2
    assert np.all(_wrapped(np.sort(sols[:, 0]), np.sort(_branches(xy)[:, 0])) < 1e-5)
    assert sum(starts) <= seeded.MAX_ROUND  # one round


@pytest.mark.parametrize("cells", [200_000, 7])
def test_ik_many_uniqueness_test_equals_the_one_by_one_rule(
    arm: kinetree.Model, monkeypatch: pytest.MonkeyPatch, cells: int
) -> None:
    """The vectorized, chunked distance test of ``ik_many`` keeps exactly the rows a plain
    loop keeps: each row farther than ``md`` (largest coordinate difference, angles
    modulo 2 pi) from every row kept before it, in order."""
    import kinetree.ik.methods.seeded as seeded

    monkeypatch.setattr(seeded, "DISTANCE_CELLS", cells)
    rng = np.random.default_rng(2)
    found = list(rng.uniform(-np.pi, np.pi, (300, arm.nq)) * np.array([1.0, 0.2]))
    wrap = np.array([True, False])
    md = 0.3
    expect: list[np.ndarray] = []
    repeats = 0
    for q in found:
        d = [np.abs(np.array([_wrapped(q[0], e[0]), q[1] - e[1]])).max() for e in expect]
        if all(x > md for x in d):
            expect.append(q)
            repeats = 0
        else:
            repeats += 1
    table = np.empty((len(found), arm.nq))
    k, reps = seeded._keep(arm, table, 0, found[:100], md, wrap, 0)
    k, reps = seeded._keep(arm, table, k, found[100:], md, wrap, reps)
    assert k == len(expect) and reps == repeats
    assert np.array_equal(table[:k], np.array(expect))


# --- bad input ------------------------------------------------------------------------------------


def test_bad_training_input(arm: kinetree.Model, panda: kinetree.Model) -> None:
    with pytest.raises(UnknownNameError, match="frame 'nope' not found"):
        train_ik(arm, "nope")
    with pytest.raises(InvalidValueError, match="samples"):
        train_ik(arm, samples=10)
    with pytest.raises(InvalidValueError, match="conditions"):
        train_ik(arm, conditions="velocity")
    with pytest.raises(InvalidValueError, match="lr"):
        train_ik(arm, lr=float("nan"))
    with pytest.raises(InvalidValueError, match="model"):
        train_ik("panda")  # type: ignore[arg-type]
    with pytest.raises(InvalidValueError, match="not moved by any joint"):
        train_ik(panda, "link0")


def test_bad_use(tmp_path, arm: kinetree.Model, panda: kinetree.Model, panda_ik: LearnedIK,
                 arm_ik: LearnedIK) -> None:  # fmt: skip
    T = panda.fk(panda.neutral())
    with pytest.raises(InvalidValueError, match="seeds must be"):
        panda.ik(T, seeds=object())
    bad = T.copy()
    bad[0, 3] = np.nan
    with pytest.raises(InvalidValueError, match="NaN"):
        panda.ik(bad, seeds=panda_ik)
    with pytest.raises(InvalidValueError, match="NaN"):
        panda.ik_many(bad, 5)
    with pytest.raises(InvalidValueError, match="learned for frame"):
        panda.ik(T, "link7", seeds=panda_ik)
    with pytest.raises(UnknownNameError, match="frame 'flange' not found"):
        arm.ik(arm.fk(arm.neutral()), "flange", seeds=panda_ik)
    one_link = planar_nr([1.0])  # has the frame 'tip' but not the learned joint2
    with pytest.raises(InvalidValueError, match="lacks: joint2"):
        one_link.ik(kinetree.Position([1.0, 0.0, 0.0]), seeds=arm_ik)
    with pytest.raises(UnsupportedError, match="whole poses"):
        panda.ik(kinetree.Position(T[:3, 3]), seeds=panda_ik)
    with pytest.raises(InvalidValueError, match="n must be"):
        panda.ik_many(T, 0)
    with pytest.raises(InvalidValueError, match="min_distance"):
        panda.ik_many(T, 3, min_distance=-1.0)
    with pytest.raises(ShapeError):
        panda_ik.sample(np.eye(3), 4)
    with pytest.raises(InvalidValueError, match="n must be"):
        panda_ik.sample(T, 0)
    with pytest.raises(InvalidValueError, match="temperature"):
        arm_ik.sample(T, 2, temperature=-1.0)
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not a zip file")
    with pytest.raises(FileFormatError):
        load_ik(junk)
    with pytest.raises(KinetreeError):
        load_ik(tmp_path / "missing.npz")


def test_cli_learns_a_robots_ik_seeds(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from typer.testing import CliRunner

    from kinetree.cli import app
    from kinetree.learn import load_ik

    out = tmp_path / "seeds.npz"
    args = ["learn", "ik", "planar2r", "-o", str(out), "--conditions", "position"]
    r = CliRunner().invoke(app, [*args, "--samples", "2000", "--steps", "20"])
    assert r.exit_code == 0, r.output
    learned = load_ik(out)
    m = kinetree.load("planar2r")
    T = m.fk(m.random_configuration(rng=0))
    q = learned.sample(T, 4)
    assert q.shape == (4, m.nq) and np.all(np.isfinite(q))
    r = CliRunner().invoke(app, ["learn", "ik", "planar2r", "-o", str(out), "--conditions", "x"])
    assert r.exit_code == 2 and "position" in r.output


def test_seeds_of_one_model_are_refused_by_another_with_the_same_names(
    tmp_path, arm: kinetree.Model, arm_ik: LearnedIK
) -> None:
    """Issue 32: the frame's and joints' names agree, the link lengths do not: the flow's
    samples are of another arm, so the seeds are refused (saved and read back too); the
    same arm built again is accepted."""
    longer = planar_2r(l1=1.3)  # frame 'tip', joints joint1 and joint2, as the arm's
    target = kinetree.Position([1.5, 0.2, 0.0])
    for learned in (arm_ik, load_ik(arm_ik.save(tmp_path / "arm.npz"))):
        with pytest.raises(InvalidValueError, match="trained on the model 'planar2r'"):
            longer.ik(target, seeds=learned)
        with pytest.raises(InvalidValueError, match="learn seeds for this model"):
            longer.ik_many(target, 2, seeds=learned)
        again = planar_2r()
        r = again.ik(kinetree.Position([1.2, 0.5, 0.0]), seeds=learned)
        assert r.success
        np.testing.assert_allclose(again.fk(r.q, "tip")[:3, 3], [1.2, 0.5, 0.0], atol=1e-6)
