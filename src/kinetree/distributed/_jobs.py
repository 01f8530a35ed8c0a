"""Jobs on a Dask cluster: chunks with fixed ids, results assembled by id, exactly once.

A job is a list of chunks, chunk ``i`` covering items ``bounds[i]:bounds[i + 1]`` (the
ids depend only on the item count and the chunk size, never on timing). Each chunk is
one Dask task with the key ``kinetree-<label>-<job>-<i>``; the client collects the
tasks as they finish and stores chunk ``i``'s result in slot ``i``. Dask re-runs a task
whose worker is lost (its inputs travel inside the task, so nothing scattered is lost
with a worker), and a result can fill its slot once only, so every item's result
arrives exactly once and in the items' order, whatever the workers did.
"""

from __future__ import annotations

import hashlib
import logging
import pickle
import threading
import uuid
import warnings
from collections.abc import Callable, Sequence
from itertools import pairwise
from typing import Any, TypeVar

import numpy as np

from .._progress import progress as progress_bar
from .._progress import silenced
from .._validate import check_bool
from ..errors import InvalidValueError
from ._client import connected

__all__ = ["chunk_bounds", "map", "run_job", "shared"]

T = TypeVar("T")

#: Items per task of :func:`map` when not given.
MAP_CHUNK = 1


def chunk_bounds(n: int, chunk_size: int) -> np.ndarray:
    """Chunk ``i`` of ``n`` items covers ``bounds[i]:bounds[i + 1]``: every chunk has
    ``chunk_size`` items but the last."""
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int | np.integer):
        raise InvalidValueError(f"chunk_size must be a positive integer, got {chunk_size!r}")
    if chunk_size < 1:
        raise InvalidValueError(f"chunk_size must be >= 1, got {chunk_size}")
    return np.append(np.arange(0, n, int(chunk_size)), n).astype(np.int64)


def run_job(
    client: Any,
    func: Callable[..., Any],
    chunks: Sequence[tuple[Any, ...]],
    sizes: Sequence[int],
    label: str,
    show_progress: bool | None = None,
) -> list[Any]:
    """Run ``func(*chunks[i])`` for every ``i`` on ``client``'s cluster and return the
    results in chunk order. ``sizes[i]`` is chunk ``i``'s item count (the progress bar
    counts items). A task that raises cancels the job and re-raises on the client."""
    with connected(client) as c:
        return _run(c, func, chunks, sizes, label, show_progress)


def _run(
    c: Any,
    func: Callable[..., Any],
    chunks: Sequence[tuple[Any, ...]],
    sizes: Sequence[int],
    label: str,
    show_progress: bool | None,
) -> list[Any]:
    """:func:`run_job` on the client ``c``."""
    from distributed import as_completed

    job = uuid.uuid4().hex[:12]
    # One message submits every chunk; results come back in batches as they finish.
    _quiet_workers()
    with warnings.catch_warnings():
        # By design a task carries its inputs (nothing is lost with a worker), so the
        # graph is as large as the job's data: Dask's advice to load it otherwise is noise.
        warnings.filterwarnings("ignore", message="Sending large graph")
        futures = (
            c.map(
                func,
                *zip(*chunks),
                key=[f"kinetree-{label}-{job}-{i}" for i in range(len(chunks))],
                pure=False,
            )
            if chunks
            else []
        )
    slot = {f.key: i for i, f in enumerate(futures)}
    results: list[Any] = [None] * len(futures)
    filled = np.zeros(len(futures), dtype=bool)
    try:
        with progress_bar(int(sum(sizes)), label, show=show_progress) as tick:
            # On c's own loop: c need not be the process's default client (one made
            # from an address is not), which as_completed would otherwise look for.
            for batch in as_completed(futures, loop=c.loop).batches():
                for fut, value in zip(batch, c.gather(batch)):
                    i = slot[fut.key]
                    if filled[i]:  # Dask reports a key once; this keeps exactly-once explicit
                        continue
                    results[i] = value
                    filled[i] = True
                    tick(int(sizes[i]))
    finally:
        c.cancel(futures)  # what is done was read; what is not stops (an error above)
    missing = np.flatnonzero(~filled)
    if missing.size:  # pragma: no cover - as_completed returns every future or raises
        raise RuntimeError(f"chunks {missing.tolist()} of job {job} never returned")
    return results


class _KinetreeTaskFailure(logging.Filter):
    """Drops a worker's "Compute Failed" block for a kinetree task: the error is raised on
    the client, where it belongs; the block repeats it, with the task's repr, first."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not str(record.msg).startswith("Compute Failed"):
            return True
        args = record.args if isinstance(record.args, tuple) else ()
        return not (args and str(args[0]).startswith("kinetree-"))


_FILTER = _KinetreeTaskFailure()


def _quiet_workers() -> None:
    """Install the filter on the worker logger of this process (embedded clusters' workers
    log here; a remote worker's log stays its own)."""
    log = logging.getLogger("distributed.worker")
    if _FILTER not in log.filters:
        log.addFilter(_FILTER)


# --- shared objects: one copy per worker process -------------------------------------------------

_SHARED: dict[str, Any] = {}
_SHARED_LOCK = threading.Lock()


class shared:
    """A picklable handle that gives every task on one worker process the same object.

    A model travels inside each task (a few kB: nothing is lost when a worker is), but a
    fresh copy per task would miss the caches kinetree keys by model identity (packed
    layouts, IK templates). The handle carries the object's pickle and its digest; a
    worker unpickles it once and hands that one object to every later task.
    """

    __slots__ = ("blob", "digest")

    def __init__(self, obj: Any) -> None:
        self.blob = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
        self.digest = hashlib.sha1(self.blob).hexdigest()

    def get(self) -> Any:
        """The object, unpickled once per process."""
        obj = _SHARED.get(self.digest)
        if obj is None:
            with _SHARED_LOCK:
                obj = _SHARED.get(self.digest)
                if obj is None:
                    if len(_SHARED) >= 32:
                        _SHARED.clear()
                    obj = _SHARED[self.digest] = pickle.loads(self.blob)
        return obj

    def __getstate__(self) -> tuple[bytes, str]:
        return self.blob, self.digest

    def __setstate__(self, state: tuple[bytes, str]) -> None:
        self.blob, self.digest = state


# --- map: any function over any items ------------------------------------------------------------


def _map_chunk(func: Callable[[Any], Any], items: list[Any]) -> list[Any]:
    with silenced():  # the client draws the job's bar
        return [func(x) for x in items]


def map(
    func: Callable[[Any], T],
    items: Sequence[Any],
    client: Any = None,
    *,
    chunk_size: int = MAP_CHUNK,
    progress: bool | None = None,
    label: str = "map",
) -> list[T]:
    """``[func(x) for x in items]`` on a Dask cluster: ordered, each result exactly once.

    Args:
        func: a picklable function of one item (cloudpickle: lambdas and closures too);
            it runs on the workers, so the files it reads must be there.
        items: a sequence (its items travel inside the tasks: pass paths, not big data).
        client: None (the embedded local cluster), a ``distributed.Client`` or a
            scheduler address ``"tcp://host:8786"``.
        chunk_size: items per task (a task should run >= 0.1 s to keep the scheduler's
            ~1 ms per task small; 1 suits clips, scenes, files).
        progress: a bar on stderr after 2 s; None: only on a terminal.
        label: the bar's label and the tasks' key prefix.

    Returns:
        The results in the items' order. A worker lost mid-job has its chunks re-run
        elsewhere; an exception in ``func`` cancels the job and is raised here.
    """
    check_bool(progress, "progress", none=True)
    items = list(items)
    bounds = chunk_bounds(len(items), chunk_size)
    chunks = [(func, items[a:b]) for a, b in pairwise(bounds)]
    sizes = np.diff(bounds).tolist()
    parts = run_job(client, _map_chunk, chunks, sizes, label, progress)
    return [r for part in parts for r in part]
