"""Scheduler addresses that are no Dask scheduler (loopback only): a clear
``ClusterUnreachableError`` within the timeout, never a hang, and a good address still
connects after a failed one. Also: Dask's own noise (large-graph warnings, "Compute
Failed" blocks) stays out of kinetree's jobs.

Each call runs in a thread joined with a bound, so a regression fails instead of hanging."""

from __future__ import annotations

import http.server
import socket
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

pytest.importorskip("distributed")

from kinetree import distributed as kd

TIMEOUT = 1.0  # [s] the connect timeout the tests pass
BOUND = 8.0  # [s] a call still running after this hangs


def bounded(fn: Callable[[], Any]) -> tuple[Any, BaseException | None, float]:
    """``fn()`` in a daemon thread: (result, exception, seconds); fails past BOUND."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # handed to the test
            box["error"] = exc

    t0 = time.monotonic()
    th = threading.Thread(target=target, daemon=True)
    th.start()
    th.join(BOUND)
    if th.is_alive():
        pytest.fail(f"the call did not return within {BOUND} s (it hangs)")
    return box.get("value"), box.get("error"), time.monotonic() - t0


@pytest.fixture
def silent() -> Iterator[str]:
    """A listener that accepts connections and never says anything."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(8)
    yield f"tcp://127.0.0.1:{s.getsockname()[1]}"
    s.close()


class _Quiet(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def http_server() -> Iterator[str]:
    httpd = http.server.HTTPServer(("127.0.0.1", 0), _Quiet)
    th = threading.Thread(target=httpd.serve_forever, daemon=True)
    th.start()
    yield f"tcp://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    """A real scheduler on loopback TCP (in this process, no worker needed)."""
    from distributed import LocalCluster

    cluster = LocalCluster(n_workers=0, processes=False, dashboard_address=None,
                           protocol="tcp://", host="127.0.0.1")  # fmt: skip
    yield cluster.scheduler_address
    cluster.close()


def test_silent_listener_is_unreachable_within_the_timeout(silent):
    _, err, seconds = bounded(lambda: kd.get_client(silent, timeout=TIMEOUT))
    assert isinstance(err, kd.ClusterUnreachableError), err
    assert "not a Dask scheduler" in str(err) and silent in str(err)
    assert seconds < TIMEOUT + 1.0


def test_http_server_is_named_as_not_dask(http_server):
    _, err, seconds = bounded(lambda: kd.get_client(http_server, timeout=TIMEOUT))
    assert isinstance(err, kd.ClusterUnreachableError), err
    assert "not a Dask scheduler" in str(err) and "HTTP" in str(err)
    assert seconds < TIMEOUT + 1.0


def test_a_good_address_connects_after_failed_ones(silent, http_server, scheduler):
    for bad in (silent, http_server, "tcp://127.0.0.1:9"):
        _, err, _ = bounded(lambda bad=bad: kd.get_client(bad, timeout=TIMEOUT))
        assert isinstance(err, kd.ClusterUnreachableError), err
    import gc

    def connect() -> Any:
        gc.collect()  # a failed client left to the collector closed itself in the next one
        return kd.get_client(scheduler, timeout=5.0)

    c, err, _ = bounded(connect)
    assert err is None, err
    try:
        assert c.scheduler_info()["address"] == scheduler
    finally:
        c.close()


def test_cli_reach_map_scheduler_not_dask(silent, tmp_path):
    from typer.testing import CliRunner

    from kinetree.cli import app

    def call() -> Any:
        return CliRunner().invoke(app, ["reach-map", "panda", "-o", str(tmp_path / "m.npz"),
                                        "--scheduler", silent])  # fmt: skip

    result, err, _ = bounded(call)
    assert err is None, err
    assert result.exit_code != 0
    assert "not a Dask scheduler" in result.output


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                           dashboard_address=None)  # fmt: skip
    c = Client(cluster)
    yield c
    c.close()
    cluster.close()


def test_no_dask_noise_before_a_task_error(client):
    import logging

    class Keep(logging.Handler):
        def __init__(self) -> None:
            super().__init__()
            self.seen: list[str] = []

        def emit(self, record: logging.LogRecord) -> None:
            self.seen.append(record.getMessage())

    def boom(x: int) -> int:
        if x == 2:
            raise ValueError("item two")
        return x

    keep = Keep()
    log = logging.getLogger("distributed.worker")  # what prints to stderr
    log.addHandler(keep)
    try:
        with pytest.raises(ValueError, match="item two"):
            kd.map(boom, range(4), client=client)
        time.sleep(0.2)  # the worker logs from its own thread
        assert not [m for m in keep.seen if "Compute Failed" in m]
        log.error("Compute Failed\nKey: %s", "user-task")  # not kinetree's: still logged
        assert [m for m in keep.seen if "user-task" in m]
    finally:
        log.removeHandler(keep)


def test_no_large_graph_warning(client):
    import dask

    items = [np.zeros(2000) for _ in range(4)]  # 64 kB of inputs, over the threshold below
    with dask.config.set({"distributed.admin.large-graph-warning-threshold": "1kB"}):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = kd.map(lambda a: float(a.sum()), items, client=client)
    assert out == [0.0] * 4
    assert not [w for w in caught if "large graph" in str(w.message)]
