"""A reader's work in a child process: bounded in time, and a crash there stays there.

The FBX reader (ufbx can end its process when its objects are freed) and the USD reader
(usd-core's text parser can take minutes on malformed text) run a foreign library on a
user's file through :func:`run_python`.
"""

from __future__ import annotations

import os
import subprocess
import sys


def run_python(args: list[str], timeout: float) -> subprocess.CompletedProcess[str] | None:
    """Run this Python with ``args`` (``-m module ...`` or ``-c code ...``) and this
    process's import path; its completed process (stdout, stderr as text), or None when
    it ran past ``timeout`` [s] (it is then stopped)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    try:
        return subprocess.run(
            [sys.executable, *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None


def last_line(done: subprocess.CompletedProcess[str], what: str) -> str:
    """The last line the child wrote to stderr (its error), or its exit status."""
    lines = done.stderr.strip().splitlines()
    return lines[-1] if lines else f"{what} ended with status {done.returncode}"
