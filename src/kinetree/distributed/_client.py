"""Which Dask cluster a job runs on: a client given, a scheduler address, or the embedded one.

:func:`get_client` is the one door: ``None`` gives the process's embedded
:class:`distributed.LocalCluster` (made on first use, closed at exit), a
:class:`distributed.Client` is used as it is, and a string is a scheduler address
(``"tcp://10.0.0.5:8786"``) connected with a short timeout, so an address that does not
answer raises :class:`ClusterUnreachableError` naming it instead of hanging.
"""

from __future__ import annotations

import atexit
import threading
from typing import TYPE_CHECKING, Any

from ..errors import InvalidValueError, KinetreeError, UnsupportedError

if TYPE_CHECKING:
    from distributed import Client

__all__ = [
    "CONNECT_TIMEOUT",
    "ClusterUnreachableError",
    "close_local",
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
    try:
        return Client(client, timeout=timeout)
    except (OSError, TimeoutError) as exc:
        raise ClusterUnreachableError(
            f"the Dask scheduler at {client!r} did not answer within {timeout:g} s ({exc}); "
            "start one with `dask scheduler` and workers with `dask worker ADDRESS`, or "
            "pass client=None for the embedded local cluster"
        ) from None
    except Exception as exc:  # a bad scheme, or something that is no Dask scheduler
        raise ClusterUnreachableError(
            f"no Dask scheduler at {client!r}: {type(exc).__name__}: {exc}"
        ) from None
