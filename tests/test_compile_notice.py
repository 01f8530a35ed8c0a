"""The "compiling kernels" notice appears only when numba compiles, not whenever a first
call runs long (a big batch whose machine code came from the disk cache)."""

from __future__ import annotations

import time

import numba
import pytest

from kinetree import _compile


@pytest.fixture
def fresh_notice(monkeypatch):
    """A process where nothing was printed yet and no kernel was seen (a kernel is known
    by its id, which a later function may reuse once this test's is freed), with a short
    delay."""
    monkeypatch.setattr(_compile, "_PRINTED", False)
    monkeypatch.setattr(_compile, "_SEEN", set())
    monkeypatch.setattr(_compile, "NOTICE_DELAY", 0.2, raising=False)


def test_long_first_call_without_compile_says_nothing(fresh_notice, capfd):
    @numba.njit(cache=False)
    def add(a, b):
        return a + b

    add(1.0, 2.0)  # compiled before the call the notice watches
    with _compile.notice(add):
        add(3.0, 4.0)
        time.sleep(1.3)  # a long batch (past the 1 s the notice once waited), no compile
    assert "compiling" not in capfd.readouterr().err


def test_a_compile_is_announced(fresh_notice, capfd):
    @numba.njit(cache=False)
    def mul(a, b):
        return a * b

    with _compile.notice(mul):
        mul(3.0, 4.0)  # compiles now
        time.sleep(0.5)
    assert "kinetree: compiling kernels" in capfd.readouterr().err
