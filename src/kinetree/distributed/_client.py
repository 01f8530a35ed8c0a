"""Which Dask cluster a job runs on: a client given, a scheduler address, or the embedded one.

:func:`get_client` is the one door: ``None`` gives the process's embedded
:class:`distributed.LocalCluster` (made on first use, closed at exit), a
:class:`distributed.Client` is used as it is, and a string is a scheduler address
(``"tcp://10.0.0.5:8786"``) connected with a short timeout, so an address that does not
answer raises :class:`ClusterUnreachableError` naming it instead of hanging.
"""

from __future__ import annotations

import atexit
import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..errors import InvalidValueError, KinetreeError, UnsupportedError

if TYPE_CHECKING:
    from distributed import Client

__all__ = [
    "CONNECT_TIMEOUT",
    "ClusterUnreachableError",
    "close_local",
    "connected",
    "get_client",
    "local_client",
    "require_dask",
]

#: Seconds to wait for a scheduler address to answer.
CONNECT_TIMEOUT = 5.0

_LOCAL: dict[str, Any] = {}
_LOCK = threading.Lock()


class ClusterUnreachableError(KinetreeError, ConnectionError):
    """A scheduler address that did not answer within the timeout."""


def require_dask() -> None:
    """Raise :class:`UnsupportedError` unless ``dask.distributed`` can be imported."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise UnsupportedError(
            "kinetree.distributed needs dask.distributed; install kinetree[distributed] "
            "(pip install 'kinetree[distributed]')"
        ) from None


def local_client(
    n_workers: int = 1, threads_per_worker: int = 1, processes: bool = False
) -> Client:
    """The embedded cluster of this process (made on the first call; later calls return it
    whatever they ask). Defaults: one worker with one task slot in this process; the
    task's batch uses every core through kinetree's own threads (``KINETREE_NUM_THREADS``).
    No dashboard is served."""
    require_dask()
    from distributed import Client, LocalCluster

    with _LOCK:
        client = _LOCAL.get("client")
        if client is None or client.status in ("closed", "closing"):
            cluster = LocalCluster(
                n_workers=n_workers,
                threads_per_worker=threads_per_worker,
                processes=processes,
                dashboard_address=None,
            )
            client = Client(cluster)
            _LOCAL.update(client=client, cluster=cluster)
        return client


def close_local() -> None:
    """Close the embedded cluster, if one was started (also done at interpreter exit)."""
    with _LOCK:
        client, cluster = _LOCAL.pop("client", None), _LOCAL.pop("cluster", None)
    if client is not None:
        client.close()
    if cluster is not None:
        cluster.close()


atexit.register(close_local)


def get_client(client: Any = None, timeout: float = CONNECT_TIMEOUT) -> Client:
    """A :class:`distributed.Client` for ``client``: None (the embedded cluster), a
    ``Client`` (returned as it is) or a scheduler address such as ``"tcp://host:8786"``
    (connected within ``timeout`` seconds, else :class:`ClusterUnreachableError`)."""
    require_dask()
    from distributed import Client

    if client is None:
        return local_client()
    if isinstance(client, Client):
        return client
    if not isinstance(client, str) or not client.strip():
        raise InvalidValueError(
            "client must be None (the embedded local cluster), a distributed.Client or a "
            f"scheduler address such as 'tcp://10.0.0.5:8786', got {client!r}"
        )
    deadline = time.monotonic() + timeout
    _probe(client, timeout)
    left = max(0.5, deadline - time.monotonic())
    # Built in two steps so that a failed client is closed here, now, and not later by the
    # garbage collector inside the next client's connection (where it deadlocked); not
    # the process's default client, which a failed one would otherwise stay.
    c = Client.__new__(Client)
    try:
        c.__init__(client, timeout=left, set_as_default=False)  # type: ignore[misc]
    except (OSError, TimeoutError) as exc:
        _close_quietly(c)
        raise ClusterUnreachableError(
            f"the Dask scheduler at {client!r} did not answer within {timeout:g} s ({exc}); "
            f"{_START_ONE}"
        ) from None
    except Exception as exc:  # a bad scheme, or something that is no Dask scheduler
        _close_quietly(c)
        raise ClusterUnreachableError(
            f"no Dask scheduler at {client!r}: {type(exc).__name__}: {exc}"
        ) from None
    return c


@contextlib.contextmanager
def connected(client: Any = None, timeout: float = CONNECT_TIMEOUT) -> Iterator[Client]:
    """:func:`get_client` for the length of one job: a client this makes from a
    scheduler address is closed when the job ends (one given, or the embedded one, is
    left open)."""
    c = get_client(client, timeout)
    try:
        yield c
    finally:
        if isinstance(client, str):
            _close_quietly(c)


_START_ONE = (
    "start one with `dask scheduler` and workers with `dask worker ADDRESS`, or pass "
    "client=None for the embedded local cluster"
)
#: The bytes every Dask comm sends first on a new connection (its handshake, msgpack).
_DASK_HANDSHAKE = b"pickle-protocol"


def _close_quietly(c: Any) -> None:
    """Close a client whose start failed (nothing it says matters any more)."""
    with contextlib.suppress(Exception):
        c.close(timeout=1)


def _probe(address: str, timeout: float) -> None:
    """Check within ``timeout`` seconds that a plain TCP ``address`` (``tcp://host:port``
    or ``host:port``) is a Dask scheduler, else raise :class:`ClusterUnreachableError`
    saying why: nothing listens, nothing answers, or it is not Dask (an HTTP server).

    A Dask server writes its handshake as soon as it accepts a connection, before it
    reads anything; Dask's own client waits for it without a time limit, so a listener
    that never speaks would hang it. Other schemes (``tls://``, ``inproc://``, ...) are
    left to Dask."""
    scheme, sep, rest = address.strip().partition("://")
    if not sep:
        scheme, rest = "tcp", scheme
    if scheme != "tcp":
        return
    host, colon, port_text = rest.rstrip("/").rpartition(":")
    if not colon or not port_text.isdigit():
        return  # no port: Dask picks its default, or explains the address
    host = host.strip("[]")
    deadline = time.monotonic() + timeout
    try:
        sock = socket.create_connection((host, int(port_text)), timeout=timeout)
    except TimeoutError:
        raise ClusterUnreachableError(
            f"the Dask scheduler at {address!r} did not answer within {timeout:g} s (no "
            f"connection); {_START_ONE}"
        ) from None
    except OSError as exc:
        raise ClusterUnreachableError(
            f"no Dask scheduler at {address!r}: cannot connect ({exc.strerror or exc}); "
            f"{_START_ONE}"
        ) from None
    with sock:
        got = _read_until(sock, deadline - min(1.0, timeout / 4))
        if _DASK_HANDSHAKE in got:
            return
        if not got:  # silent: an HTTP server waits for a request; ask it one
            with contextlib.suppress(OSError):
                sock.sendall(b"GET / HTTP/1.0\r\nHost: " + host.encode() + b"\r\n\r\n")
                got = _read_until(sock, deadline)
    if got.startswith(b"HTTP/"):
        raise ClusterUnreachableError(
            f"{address!r} is not a Dask scheduler: it answers HTTP (a dashboard? the "
            f"scheduler listens on port 8786 by default, its dashboard on 8787); {_START_ONE}"
        )
    if got:
        raise ClusterUnreachableError(
            f"{address!r} is not a Dask scheduler: it answered {got[:40]!r}, not Dask's "
            f"handshake; {_START_ONE}"
        )
    raise ClusterUnreachableError(
        f"{address!r} accepted a connection but sent no Dask handshake within {timeout:g} s: "
        f"not a Dask scheduler (or one too busy to answer); {_START_ONE}"
    )


def _read_until(sock: socket.socket, deadline: float) -> bytes:
    """What ``sock`` sends until it closes, ``deadline`` (``time.monotonic``) passes or a
    Dask handshake is complete enough to recognise."""
    got = b""
    while _DASK_HANDSHAKE not in got and len(got) < 4096:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        sock.settimeout(left)
        try:
            part = sock.recv(4096)
        except (TimeoutError, OSError):
            break
        if not part:
            break
        got += part
        if got.startswith(b"HTTP/") and b"\r\n" in got:
            break
    return got
