"""A real Dask cluster reached by its address: ``dask scheduler`` and ``dask worker``
processes on loopback, started here on free ports and stopped here by their process ids.

Jobs given the scheduler's address (a string, or the client ``get_client`` makes from it)
must equal the same batch solved locally, through the API (``kinetree.distributed.ik``,
``fk``, ``map``, ``kinetree.workspace.reachability``) and the command line
(``kinetree reach-map --scheduler ADDR``); a client made from an address is closed when
its job ends. Everything waits with a bound, so a regression fails instead of hanging.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("distributed")

import kinetree
from kinetree import distributed as kd

START_BOUND = 60.0  # [s] for the scheduler to write its address and the worker to join
STOP_BOUND = 5.0  # [s] for a process to end after SIGTERM (then SIGKILL)


def _env() -> dict[str, str]:
    """This process's environment, with the kinetree under test first on the workers' path."""
    env = dict(os.environ)
    src = str(Path(kinetree.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    env.setdefault("NUMBA_NUM_THREADS", "1")
    return env


def _die_with_parent() -> None:
    """In the child, before exec: on Linux, SIGTERM when the test process dies, so a
    killed test run leaves no scheduler or worker behind."""
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM))


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    """End each process by its id: SIGTERM, then SIGKILL past the bound."""
    for p in reversed(procs):
        if p.poll() is None:
            p.terminate()
    for p in reversed(procs):
        try:
            p.wait(STOP_BOUND)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(STOP_BOUND)


def _log_tail(path: Path) -> str:
    return path.read_text(errors="replace")[-3000:] if path.exists() else "(no log)"


@pytest.fixture(scope="module")
def address(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The address of a running ``dask scheduler`` with one ``dask worker`` attached."""
    tmp = tmp_path_factory.mktemp("dask")
    info = tmp / "scheduler.json"
    logs = {"scheduler": tmp / "scheduler.log", "worker": tmp / "worker.log"}
    procs: list[subprocess.Popen[bytes]] = []
    env = _env()

    def spawn(name: str, *args: str) -> None:
        with open(logs[name], "wb") as log:
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-m", "dask", name, *args],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    env=env,
                    cwd=tmp,
                    preexec_fn=_die_with_parent,
                )
            )

    try:
        # Port 0: the scheduler takes a free port and writes its address to the file.
        spawn("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
              "--scheduler-file", str(info))  # fmt: skip
        deadline = time.monotonic() + START_BOUND
        addr = ""
        while not addr:
            if procs[0].poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"dask scheduler did not start:\n{_log_tail(logs['scheduler'])}")
            time.sleep(0.1)
            try:
                addr = json.loads(info.read_text())["address"]
            except (OSError, ValueError, KeyError):
                addr = ""
        assert addr.startswith("tcp://127.0.0.1:"), addr
        spawn("worker", addr, "--host", "127.0.0.1", "--nthreads", "1", "--no-nanny",
              "--no-dashboard", "--name", "kinetree-test-worker")  # fmt: skip
        c = kd.get_client(addr, timeout=10.0)
        try:
            c.wait_for_workers(1, timeout=max(1.0, deadline - time.monotonic()))
        except TimeoutError:
            pytest.fail(f"dask worker did not join:\n{_log_tail(logs['worker'])}")
        finally:
            c.close()
        yield addr
    finally:
        _stop(procs)
        left = [p.pid for p in procs if p.poll() is None]
        assert not left, f"processes {left} still run"


def _clients_on(addr: str) -> int:
    """How many clients the scheduler at ``addr`` has, besides the one asking."""
    from distributed import Client

    with Client(addr, timeout=10, set_as_default=False) as c:
        n = c.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.clients))
    # The scheduler always holds its own "fire-and-forget" client entry.
    return int(n) - 2


def _settle(addr: str, want: int) -> int:
    """The scheduler's client count once it reaches ``want`` (a closed client's stream
    ends a moment later), or what it is after a few seconds."""
    deadline = time.monotonic() + 5.0
    n = _clients_on(addr)
    while n != want and time.monotonic() < deadline:
        time.sleep(0.1)
        n = _clients_on(addr)
    return n


@pytest.fixture(scope="module")
def panda() -> kinetree.Model:
    return kinetree.load("panda")


def test_map_by_address_and_by_a_client_made_from_it(address):
    before = _settle(address, 0)
    assert kd.map(str, [1, 2, 3], client=address) == ["1", "2", "3"]
    c = kd.get_client(address)
    try:
        out = kd.map(lambda x: x * x, list(range(7)), client=c, chunk_size=2)
        assert out == [x * x for x in range(7)]
        assert c.status == "running"  # a client given is the caller's: left open
    finally:
        c.close()
    assert _settle(address, before) == before


def test_ik_and_fk_by_address_equal_the_local_batch(address, panda):
    before = _settle(address, 0)
    q = panda.random_configuration(24, rng=7)
    T = panda.fk(q)
    local = panda.ik(T, seed=3)
    remote = kd.ik(panda, T, client=address, chunk_size=10, seed=3)
    np.testing.assert_array_equal(remote.q, local.q)
    np.testing.assert_array_equal(remote.success, local.success)
    assert remote.success.all()
    np.testing.assert_array_equal(kd.fk(panda, q, client=address, chunk_size=9), T)
    # Clients made here from the address are closed when their job ends.
    assert _settle(address, before) == before


def test_reachability_by_address_equals_the_local_map(address, panda):
    from kinetree import workspace

    kw = {"resolution": 0.25, "orientations": 0, "restarts": 1, "seed": 5}
    local = workspace.reachability(panda, **kw)
    remote = workspace.reachability(panda, client=address, chunk_size=200, **kw)
    assert remote.settings["where"] == "dask"
    np.testing.assert_array_equal(remote.index, local.index)
    np.testing.assert_array_equal(remote.q_best, local.q_best)
    assert local.index.max() > 0


def test_cli_reach_map_by_address_equals_the_local_map(address, tmp_path):
    from typer.testing import CliRunner

    from kinetree.cli import app

    args = ["reach-map", "panda", "-r", "0.25", "-n", "0", "--restarts", "1", "--json"]
    runs = {}
    for name, extra in (("local", []), ("remote", ["--scheduler", address])):
        out = tmp_path / f"{name}.npz"
        result = CliRunner().invoke(app, [*args, "-o", str(out), *extra])
        assert result.exit_code == 0, result.output
        assert "Traceback" not in result.output
        runs[name] = np.load(out)
    np.testing.assert_array_equal(runs["remote"]["index"], runs["local"]["index"])
    assert runs["local"]["index"].max() > 0
