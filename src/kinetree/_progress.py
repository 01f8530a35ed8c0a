"""A progress bar on stderr for long jobs: big IK batches, Dask jobs, reachability maps.

It stays silent for the first :data:`DELAY` seconds (a job that ends sooner prints
nothing), then redraws one line at most :data:`REFRESH` times a second::

    kinetree ik  [##############..........]  58% 580,000/1,000,000  12.1 s, ~8.8 s left

It draws only on a terminal, unless asked: ``KINETREE_PROGRESS=1`` (or ``progress=True``
where a function takes it) forces it on, ``KINETREE_PROGRESS=0`` (``progress=False``)
off. :func:`progress` hands out a ``tick(n)`` callable, safe to call from several
threads (the batch kernels' threads call it after each chunk); when the bar is off,
``tick`` is a no-op and costs one Python call.

Own code, not ``tqdm``: it is one line of output, and tqdm would be a new core
dependency of every install for it (the bar is used by the core CPU batch).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

__all__ = ["DELAY", "REFRESH", "Progress", "enabled", "progress", "silenced"]

#: Seconds before a bar appears (shorter jobs print nothing).
DELAY = 2.0
#: Most redraws per second.
REFRESH = 10.0
_WIDTH = 24
_LOCAL = threading.local()  # .silent: bars of this thread are off (a Dask task's inner batch)


def enabled(stream: TextIO, want: bool | None = None) -> bool:
    """Whether to draw on ``stream``: ``want`` if given, else ``KINETREE_PROGRESS``
    (``1``/``0``) if set, else whether ``stream`` is a terminal."""
    if want is not None:
        return bool(want)
    if getattr(_LOCAL, "silent", False):
        return False
    env = os.environ.get("KINETREE_PROGRESS", "").strip().lower()
    if env in ("1", "true", "yes", "on"):
        return True
    if env in ("0", "false", "no", "off"):
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if isatty is not None else False
    except ValueError:  # a closed stream
        return False


class Progress:
    """Counts finished items of a job of ``total`` and draws a bar once it runs long.

    Args:
        total: items in the job.
        label: shown before the bar (``"ik"``, ``"reach-map"``).
        stream: where to draw (default ``sys.stderr``).
        delay: seconds before the first draw.
        clock: a ``time.monotonic``-like function (tests pass a fake one).
    """

    def __init__(
        self,
        total: int,
        label: str = "",
        stream: TextIO | None = None,
        delay: float = DELAY,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total = max(0, int(total))
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.delay = delay
        self.clock = clock
        self.done = 0
        self.start = clock()
        self.drawn = False
        self._next_draw = self.start + delay
        self._lock = threading.Lock()

    def tick(self, n: int = 1) -> None:
        """``n`` more items finished; redraw if it is time to."""
        with self._lock:
            self.done += n
            now = self.clock()
            if now < self._next_draw:
                return
            self._next_draw = now + 1.0 / REFRESH
            self._draw(now)

    def close(self) -> None:
        """Draw the final state (only if a bar was shown) and end its line."""
        with self._lock:
            if self.drawn:
                self._draw(self.clock())
                self.stream.write("\n")
                self.stream.flush()

    def line(self, now: float) -> str:
        """The bar's text at time ``now``."""
        done, total = min(self.done, self.total), self.total
        frac = done / total if total else 1.0
        fill = round(frac * _WIDTH)
        elapsed = now - self.start
        text = (
            f"kinetree {self.label}  [{'#' * fill}{'.' * (_WIDTH - fill)}] {frac:4.0%} "
            f"{done:,}/{total:,}  {elapsed:.1f} s"
        )
        if 0 < done < total:
            text += f", ~{elapsed * (total - done) / done:.1f} s left"
        return text

    def _draw(self, now: float) -> None:
        self.stream.write("\r" + self.line(now) + "\x1b[K")
        self.stream.flush()
        self.drawn = True


def _no_tick(n: int = 1) -> None:
    """The tick of a bar that is off."""


@contextmanager
def progress(
    total: int,
    label: str = "",
    *,
    show: bool | None = None,
    stream: TextIO | None = None,
    delay: float = DELAY,
) -> Iterator[Callable[[int], None]]:
    """``with progress(n, "ik") as tick: ... tick(k) ...``: a bar for a job of ``n``
    items, drawn after ``delay`` seconds when :func:`enabled` (``show`` overrides);
    else ``tick`` does nothing."""
    out = stream if stream is not None else sys.stderr
    if total <= 0 or not enabled(out, show):
        yield _no_tick
        return
    bar = Progress(total, label, out, delay)
    try:
        yield bar.tick
    finally:
        bar.close()


@contextmanager
def silenced() -> Iterator[None]:
    """No bar from this thread inside the block, unless one is asked for explicitly (the
    batches a Dask task runs: the client draws the job's bar)."""
    before = getattr(_LOCAL, "silent", False)
    _LOCAL.silent = True
    try:
        yield
    finally:
        _LOCAL.silent = before
