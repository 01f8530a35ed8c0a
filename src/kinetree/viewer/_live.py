"""One background thread that runs the viewer's IK: the latest request wins.

A dragged gizmo sends a pose on every mouse move, faster than some solves finish.
Requests are not queued: :meth:`LiveSolver.submit` replaces the pending one, and the
thread solves whatever is pending when it gets free, so the robot follows the mouse
with at most one solve of lag and never replays stale poses. Each request gets a
ticket; :meth:`LiveSolver.wait` blocks until a ticket (or a later one, which
superseded it) is done.

The same thread calls ``quiet()`` once things have been still for ``quiet_s``
seconds after a solve or a :meth:`LiveSolver.touch` (the viewer then refreshes the
slower parts of its panel, which would only lag a drag if refreshed on every solve).
"""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

__all__ = ["LiveSolver"]


class LiveSolver:
    """Runs ``solve(request)`` on a thread for the newest submitted request, and
    ``quiet()`` after ``quiet_s`` [s] without activity."""

    def __init__(
        self, solve: Callable[[Any], None], quiet: Callable[[], None], quiet_s: float = 0.25
    ) -> None:
        self._solve = solve
        self._quiet = quiet
        self._quiet_s = quiet_s
        self._dirty = False
        self._cond = threading.Condition()
        self._pending: Any = None
        self._has_pending = False
        self._submitted = 0
        self._done = 0
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name="kinetree-viewer-ik", daemon=True)
        self._thread.start()

    def submit(self, request: Any) -> int:
        """Queue ``request`` in place of any pending one; return its ticket."""
        with self._cond:
            self._submitted += 1
            self._pending = request
            self._has_pending = True
            self._cond.notify_all()
            return self._submitted

    def touch(self) -> None:
        """Note activity that was not a solve (a slider moved): ``quiet()`` will follow."""
        with self._cond:
            self._dirty = True
            self._cond.notify_all()

    def wait(self, ticket: int, timeout: float | None = None) -> bool:
        """Block until ``ticket`` is solved or superseded; False on timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while self._done < ticket and not self._stopped:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._cond.wait(left)
            return self._done >= ticket

    def stop(self) -> None:
        """End the thread (after the solve in progress)."""
        with self._cond:
            self._stopped = True
            self._cond.notify_all()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=5.0)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._has_pending and not self._stopped:
                    if self._dirty:
                        if not self._cond.wait(self._quiet_s):  # still for quiet_s
                            break
                    else:
                        self._cond.wait()
                if self._stopped:
                    return
                if not self._has_pending:  # quiet after activity
                    self._dirty = False
                    request, ticket = None, None
                else:
                    request, ticket = self._pending, self._submitted
                    self._pending, self._has_pending = None, False
                    self._dirty = True
            try:
                if ticket is None:
                    self._quiet()
                else:
                    self._solve(request)
            except Exception:  # a bug must not end the thread: the viewer stays usable
                traceback.print_exc()
            finally:
                if ticket is not None:
                    with self._cond:
                        self._done = ticket
                        self._cond.notify_all()
