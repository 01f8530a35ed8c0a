"""Batches on all cores: compiled serial kernels that release the GIL, run over chunks
of the batch by a pool of Python threads.

Numba's ``parallel=True`` would do the same inside one function, but compiling a
parallel loop costs seconds more on a cold cache (7.5 s for the batch FK alone on a
2-core machine) and its threading layer would be a second copy of every kernel. Here
one ``nogil`` kernel serves a single item, a small batch and a large one. Chunks are
handed out dynamically, so a few slow problems (IK restarts) do not leave a thread idle.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

__all__ = ["n_threads", "run_chunks"]

_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def n_threads() -> int:
    """Threads used for batches: ``KINETREE_NUM_THREADS`` or the cores this process may use."""
    env = os.environ.get("KINETREE_NUM_THREADS", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _pool() -> ThreadPoolExecutor:
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=n_threads(), thread_name_prefix="kinetree")
        return _POOL


def run_chunks(kernel: Callable[[int, int], object], n: int, chunk: int) -> None:
    """Call ``kernel(start, stop)`` over ``range(n)`` in chunks of ``chunk`` items, on
    every thread when there is more than one chunk (``kernel`` must release the GIL).

    When a chunk raises (Ctrl-C arrives in the calling thread between two of its chunks),
    no thread starts another chunk: the call ends once the chunks under way are done (a
    chunk is a few milliseconds), not when the whole batch is."""
    threads = min(n_threads(), (n + chunk - 1) // chunk)
    if threads <= 1:
        kernel(0, n)
        return
    counter = itertools.count()
    stop = threading.Event()

    def worker() -> None:
        try:
            while not stop.is_set():
                start = next(counter) * chunk  # itertools.count is atomic under the GIL
                if start >= n:
                    return
                kernel(start, min(n, start + chunk))
        except BaseException:
            stop.set()
            raise

    futures = [_pool().submit(worker) for _ in range(threads - 1)]
    try:
        worker()
    finally:
        for f in futures:  # after an error: each ends its chunk under way, then stops
            f.exception()
    for f in futures:
        f.result()
