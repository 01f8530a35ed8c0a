"""The progress bar: silent for short jobs and off a terminal, one redrawn line otherwise,
and the CPU IK batch ticks it with every problem exactly once."""

from __future__ import annotations

import importlib
import io
import threading

import numpy as np
import pytest

import kinetree
from kinetree import _progress


class FakeClock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_silent_before_delay_then_one_line():
    out, clock = io.StringIO(), FakeClock()
    bar = _progress.Progress(100, "ik", out, delay=2.0, clock=clock)
    clock.t = 1.9
    bar.tick(40)
    assert out.getvalue() == ""  # under 2 s: nothing
    clock.t = 2.5
    bar.tick(10)
    text = out.getvalue()
    assert text.startswith("\r") and "50/100" in text and "50%" in text and "left" in text
    clock.t = 2.55
    bar.tick(10)  # within 0.1 s of the last draw: not redrawn
    assert out.getvalue() == text
    clock.t = 3.0
    bar.tick(40)
    bar.close()
    assert out.getvalue().endswith("\n") and "100/100" in out.getvalue()


def test_short_job_prints_nothing():
    out = io.StringIO()
    with _progress.progress(10, "x", show=True, stream=out) as tick:
        tick(10)
    assert out.getvalue() == ""


def test_enabled_rules(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("KINETREE_PROGRESS", raising=False)
    assert not _progress.enabled(io.StringIO())
    assert _progress.enabled(Tty())
    assert _progress.enabled(io.StringIO(), True)
    monkeypatch.setenv("KINETREE_PROGRESS", "0")
    assert not _progress.enabled(Tty())
    monkeypatch.setenv("KINETREE_PROGRESS", "1")
    assert _progress.enabled(io.StringIO())
    with _progress.silenced():
        assert not _progress.enabled(Tty()) and not _progress.enabled(io.StringIO())
        assert _progress.enabled(io.StringIO(), True)  # asked for explicitly
    assert _progress.enabled(io.StringIO())


def test_ticks_from_threads_add_up():
    bar = _progress.Progress(8 * 1000, stream=io.StringIO(), delay=0.0)
    threads = [
        threading.Thread(target=lambda: [bar.tick(1) for _ in range(1000)]) for _ in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert bar.done == 8000


def test_cpu_batch_counts_every_problem(monkeypatch):
    panda = kinetree.load("panda")
    T = panda.fk(panda.random_configuration(300, 1))
    seen: list[int] = []
    totals: list[int] = []

    class Counting:  # stands in for _progress.progress: records the batch's ticks
        def __init__(self, total: int, label: str = "") -> None:
            totals.append(total)

        def __enter__(self):
            return seen.append

        def __exit__(self, *exc: object) -> bool:
            return False

    solve_mod = importlib.import_module("kinetree.ik._run")  # runs the batch (and shows its bar)

    real = solve_mod.progress
    monkeypatch.setattr(solve_mod, "progress", Counting)
    r = panda.ik(T, restarts=2, time_budget=None)
    assert totals == [300] and sum(seen) == 300 and len(seen) > 1  # chunked, all counted
    monkeypatch.setattr(solve_mod, "progress", real)
    again = panda.ik(T, restarts=2, time_budget=None)
    np.testing.assert_array_equal(r.q, again.q)  # the hook changes no result


@pytest.mark.parametrize("total", [0, -1])
def test_empty_job_is_a_no_op(total):
    with _progress.progress(total, show=True, stream=io.StringIO()) as tick:
        tick(5)
