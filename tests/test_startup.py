"""The tiered start (``kinetree._compile.interpret_first``): while an IK driver's machine
code is not in the disk cache, the first problems run the kernels' own Python source.

The oracle is the compiled driver: every problem solved interpreted must give exactly
the result the machine code gives (same ``q`` to the last bit, same errors, iterations,
restarts, history), because both run the same arithmetic in the same order. Tiering is
forced here with a background compile that never finishes (``_Never``), so no test
waits for or starts a real compile, except the two that check the detached compile
itself on a small kernel and the cold process end to end.
"""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import kinetree
from kinetree import _compile as C
from kinetree import _warmup as W
from kinetree.ik import Position
from kinetree.ik.kernel._drivers import driver
from kinetree.ik.method_table import INTERPRETABLE

SRC = Path(kinetree.__file__).resolve().parent.parent


class _Never:
    """A background compile that never ends (``poll`` like ``subprocess.Popen``)."""

    def __init__(self) -> None:
        self.waited = 0

    def poll(self) -> None:
        return None

    def wait(self) -> int:
        self.waited += 1
        return 0


def _kernels() -> list[Any]:
    return [driver(m, st) for m in sorted(INTERPRETABLE) for st in (False, True)]


@pytest.fixture
def tiered(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[], _Never]]:
    """``force()``: from now on every interpretable driver counts as still compiling.
    Before it, tiering is off (as in the whole suite): a reference solve compiles here
    and never starts a real background compile."""
    forced: list[int] = []
    seen = set(C._SEEN)

    def force() -> _Never:
        monkeypatch.setenv(C.TIERED_ENV, "1")
        # A process never sees a compiled driver become uncompiled: forget the plan of
        # the last single pose, which is made only once its driver has run.
        sys.modules["kinetree.ik._plans"].forget_plans()
        proc = _Never()
        for k in _kernels():
            C._SEEN.discard(id(k))
            C._TIERS[id(k)] = {"kernel": k, "proc": proc, "lock": Path("/nonexistent")}
            forced.append(id(k))
        return proc

    yield force
    for i in forced:
        C._TIERS.pop(i, None)
    C._SEEN.update(seen)


def _same(a: Any, b: Any) -> None:
    for name in ("q", "success", "position_error", "orientation_error", "iterations",
                 "restarts", "reachable", "history", "error_history"):  # fmt: skip
        x, y = getattr(a, name), getattr(b, name)
        if x is None or y is None:
            assert x is None and y is None, name
        else:
            np.testing.assert_array_equal(np.asarray(x), np.asarray(y), err_msg=name)


@pytest.fixture(scope="module")
def panda() -> kinetree.Model:
    return kinetree.load("panda")


@pytest.fixture(scope="module")
def targets(panda: kinetree.Model) -> np.ndarray:
    return panda.fk(panda.random_configuration(24, rng=11))


CASES: dict[str, Callable[[kinetree.Model, np.ndarray], Any]] = {
    "auto batch": lambda m, T: m.ik(T),
    "auto single": lambda m, T: m.ik(T[3]),
    "recorded": lambda m, T: m.ik(T[5], record=True),
    "position": lambda m, T: m.ik(Position(T[0][:3, 3])),
    "out of reach": lambda m, T: m.ik(Position([3.0, 0.0, 0.5])),
    "dls from q0": lambda m, T: m.ik(T[:6], method="dls", q0=m.random_configuration(6, rng=2)),
    "transpose": lambda m, T: m.ik(T[:3], method="transpose", max_iter=60),
    "ccd": lambda m, T: m.ik(Position(T[1][:3, 3]), method="ccd"),
    "no budget": lambda m, T: m.ik(T[:4], time_budget=None, restarts=3),
}


@pytest.mark.parametrize("case", list(CASES))
def test_interpreted_solves_equal_the_machine_code(
    case: str, panda: kinetree.Model, targets: np.ndarray, tiered: Callable[[], _Never]
) -> None:
    solve = CASES[case]
    compiled = solve(panda, targets)
    tiered()
    before = C.INTERPRETED_PROBLEMS[0]
    interpreted = solve(panda, targets)
    # At least the first problem ran interpreted (one past INTERPRET_CAP hands the rest on).
    assert 1 <= C.INTERPRETED_PROBLEMS[0] - before <= np.size(compiled.success)
    _same(compiled, interpreted)


def test_swing_twist_driver_interpreted_equals_compiled(tiered: Callable[[], _Never]) -> None:
    m = kinetree.load("humanoid")  # cones and twist ranges at the shoulders and hips
    hand = m.fk(m.random_configuration(3, rng=4), "hand_r")
    compiled = m.ik(hand, "hand_r", restarts=2)
    tiered()
    before = C.INTERPRETED_PROBLEMS[0]
    _same(compiled, m.ik(hand, "hand_r", restarts=2))
    assert C.INTERPRETED_PROBLEMS[0] - before == 3


def test_a_slow_problem_waits_for_the_machine_code(
    panda: kinetree.Model, targets: np.ndarray, tiered: Callable[[], _Never],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    compiled = panda.ik(targets[:4])
    proc = tiered()
    monkeypatch.setattr(C, "INTERPRET_CAP", -1.0)  # every problem is past its deadline
    _same(compiled, panda.ik(targets[:4]))
    assert proc.waited == 1  # it waited for the compile, then ran compiled


def test_short_budgets_and_the_switch_off_run_compiled(
    panda: kinetree.Model, targets: np.ndarray, tiered: Callable[[], _Never],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    panda.ik(targets[:3], time_budget=0.001)
    tiered()
    before = C.INTERPRETED_PROBLEMS[0]
    panda.ik(targets[:3], time_budget=0.001)  # a budget the interpreter could not keep
    monkeypatch.setenv(C.TIERED_ENV, "0")
    panda.ik(targets[:3])
    assert C.INTERPRETED_PROBLEMS[0] == before


def test_a_cached_driver_starts_no_background_compile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kernel = driver("dls", False)
    index = C._index_path(kernel)
    assert index is not None and index.name.endswith(".nbi")  # numba's index of it
    cached = tmp_path / index.name
    cached.write_bytes(b"")  # the index as a warm cache holds it
    monkeypatch.setattr(C, "_index_path", lambda k: cached if k is kernel else None)
    monkeypatch.setenv(C.TIERED_ENV, "1")
    monkeypatch.delitem(C._TIERS, id(kernel), raising=False)

    def refuse(*a: Any, **k: Any) -> None:
        raise AssertionError("no process may be started when the cache holds the driver")

    monkeypatch.setattr(subprocess, "Popen", refuse)
    assert C.interpret_first(kernel, ("m", "f", None), (None,) * 8, 5, 0.0) == 0


def test_math_twin_follows_numba_where_python_raises() -> None:
    assert np.isnan(C._MATH.sqrt(-1e-300))
    assert np.isnan(C._MATH.acos(1.0 + 1e-15))
    assert C._MATH.exp(1000.0) == np.inf
    assert C._MATH.sqrt(4.0) == 2.0 and C._MATH.atan2(1.0, 1.0) == np.arctan2(1.0, 1.0)


def _env(cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["NUMBA_CACHE_DIR"] = str(cache)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), *filter(None, [env.get("PYTHONPATH")])])
    env[C.TIERED_ENV] = "1"
    return env


def test_the_detached_compile_fills_the_cache_and_drops_its_lock(tmp_path: Path) -> None:
    from numba import typeof

    from kinetree.ik.kernel import _random

    lock = tmp_path / "rand01.compiling"
    lock.write_text(str(os.getpid()))
    sig = (typeof(np.zeros(1, np.uint64)),)
    payload = pickle.dumps(((_random.__name__, "rand01", None), sig, str(lock)))
    subprocess.run(
        [sys.executable, "-c", "from kinetree._compile import _compile_child as c; c()"],
        input=payload, env=_env(tmp_path), check=True, timeout=300,
    )  # fmt: skip
    assert not lock.exists()
    assert list(tmp_path.rglob("_random.rand01-*.nbi")) and list(tmp_path.rglob("*.nbc"))


def test_a_cold_process_solves_interpreted_while_a_child_compiles(tmp_path: Path) -> None:
    """End to end, with an empty cache: the first solve and a small batch return at once
    (interpreted), a detached process holds the driver's lock; it is stopped here."""
    script = textwrap.dedent(
        """
        import sys
        import kinetree
        from kinetree import _compile as C
        from kinetree.ik.kernel._drivers import driver
        m = kinetree.load("panda")
        T = m.fk(m.random_configuration(5, rng=0))
        r, rb = m.ik(T[0]), m.ik(T[1:])
        k = driver("dls", False)
        print(bool(r.success), bool(rb.success.all()), len(k.signatures), C._TIERS[id(k)]["lock"])
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], env=_env(tmp_path), capture_output=True, text=True,
        timeout=300, check=True,
    )  # fmt: skip
    ok, ok_batch, n_signatures, lock = done.stdout.split()
    assert (ok, ok_batch, n_signatures) == ("True", "True", "0")  # solved, nothing compiled
    assert "compiling kernels in the background" in done.stderr
    pid = int(Path(lock).read_text())  # the detached compile, still running
    assert C._alive(pid)
    os.kill(pid, signal.SIGTERM)  # not needed here: 20 s of CPU spared


def test_options_remembered_by_identity_only_for_the_same_scalars() -> None:
    from kinetree.ik.options import IKOptions, resolve

    tol = 1e-3
    a = resolve({"tol": tol, "method": "dls"})
    assert resolve({"tol": tol, "method": "dls"}) is a  # the same objects: remembered
    assert resolve({"tol": 1e-4, "method": "dls"}).tol == (1e-4, 1e-4)
    assert resolve({"tol": tol}) == IKOptions(tol=tol)  # another set of names
    active = ["panda_joint1", "panda_joint2"]
    b = resolve({"active": active})
    active.append("panda_joint3")  # a mutable value is never answered by identity
    assert resolve({"active": active}).active == tuple(active) != b.active


def test_warmup_compiles_in_its_own_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """``kinetree warmup`` must leave machine code behind, not interpreted answers."""
    seen = []
    monkeypatch.setenv(C.TIERED_ENV, "1")
    monkeypatch.setattr(W, "_warm", lambda methods, verbose: seen.append(os.environ[C.TIERED_ENV]))
    W.warmup(("auto",), verbose=False)
    assert seen == ["0"] and os.environ[C.TIERED_ENV] == "1"


def test_warmup_covers_the_whole_body_driver(monkeypatch: pytest.MonkeyPatch) -> None:
    """A body with cone-limited ball joints (BVH characters, the humanoid) solves with
    the swing-twist driver: ``kinetree warmup`` leaves it compiled too, so the first
    whole-body solve of a process loads it instead of compiling it."""
    monkeypatch.setenv(C.TIERED_ENV, "0")
    W._warm_whole_body(verbose=False)
    assert C.compiled(driver("dls", True))
    body = kinetree.models.humanoid()
    q = body.neutral()
    targets = {f: kinetree.Pose(body.fk(q, f)) for f in body.end_effectors[:4]}
    r = body.ik(targets, q0=q, max_iter=0)  # starts on target: solved by FK alone
    assert r.success and np.all(r.position_error <= 1e-6)


def test_warmup_in_two_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    """``kinetree warmup --jobs 2`` (the Makefile's): this process compiles the arm's
    kernels without the bodies', a second process compiles the bodies' and must end
    cleanly; ``jobs < 1`` is refused."""
    seen = []
    monkeypatch.setattr(W, "_warm", lambda methods, verbose, bodies=True: seen.append(bodies))
    W.warmup(("auto",), verbose=False, jobs=2)
    assert seen == [False]
    with pytest.raises(kinetree.errors.InvalidValueError, match="jobs"):
        W.warmup(("auto",), verbose=False, jobs=0)
