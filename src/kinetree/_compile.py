"""Compilation on first use: a notice when it takes long, and a way to do it ahead.

numba compiles a kernel the first time it runs with a new type signature and caches
the machine code on disk, so only the first process on a machine pays. kinetree's
kernels compile per method, on their first use; :func:`notice` prints one line when
a first call has not returned within a second, and :func:`warmup` (also
``kinetree warmup``, run by the Makefile's set-up) compiles the common kernels ahead.
"""

from __future__ import annotations

import functools
import hashlib
import sys
import threading
import time
import types
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["compiled", "fresh_cache", "kernel_digest", "notice", "variant", "warmup"]

_SEEN: set[int] = set()
_PRINTED = False


def _kernel_sources(package: Path) -> list[Path]:
    """Every file whose text can end up in compiled code: those that use numba, and
    ``model.py`` (the joint type values the kernels branch on)."""
    files = [package / "model.py"]
    for f in sorted(package.rglob("*.py")):
        if "numba" in f.read_text(encoding="utf-8", errors="replace"):
            files.append(f)
    return files


@functools.cache
def kernel_digest() -> str:
    """A short digest of every kernel source file (read once per process): the stamp of
    :func:`fresh_cache`, and part of the IK drivers' names."""
    package = Path(__file__).resolve().parent
    h = hashlib.sha1()
    for f in _kernel_sources(package):
        h.update(f.relative_to(package).as_posix().encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


def fresh_cache() -> None:
    """Forget kinetree's cached machine code when any of its sources changed since the
    cache was written.

    numba invalidates a cached function when its own file changes, not when a function
    it calls or a constant it reads in another file does, so after an edit (or a
    checkout) a kernel could run stale machine code. A stamp with the digest of every
    kernel source file sits beside the cache (the package's ``__pycache__`` folders, or
    ``NUMBA_CACHE_DIR``); when it differs, kinetree's ``.nbi``/``.nbc`` files are
    deleted and rebuilt on first use. Costs a few milliseconds at import."""
    import os

    package = Path(__file__).resolve().parent
    env = os.environ.get("NUMBA_CACHE_DIR")
    if env:
        # numba mirrors the source folders under NUMBA_CACHE_DIR (drive/anchor dropped).
        root = Path(env) / package.relative_to(package.anchor)
    else:
        root = package
    stamp = root / "__pycache__" / "kinetree-sources.digest"
    digest = kernel_digest()
    try:
        if stamp.read_text() == digest:
            return
    except OSError:
        pass
    try:
        for pattern in ("*.nbi", "*.nbc"):
            for f in root.rglob(pattern):
                f.unlink(missing_ok=True)
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.write_text(digest)
    except OSError:  # a read-only install: numba keeps its cache elsewhere
        pass


def variant(kernel: Any, name: str, options: dict[str, Any] | None = None, **bindings: Any) -> Any:
    """A copy of the compiled function ``kernel`` named ``name`` whose global names are
    bound to ``bindings`` (the functions it calls, the constants it branches on).

    numba resolves globals when it compiles and prunes branches on constant globals, so
    a variant compiles only what its bindings reach: one source, specialised per use,
    without runtime dispatch. Its own name gives it its own entry in the disk cache."""
    from numba import njit

    py = kernel.py_func
    scope = dict(py.__globals__)
    scope.update(bindings)
    fn = types.FunctionType(py.__code__, scope, name, py.__defaults__, py.__closure__)
    fn.__qualname__ = name
    fn.__module__ = py.__module__
    fn.__doc__ = py.__doc__
    flags = {k: v for k, v in kernel.targetoptions.items() if k != "nopython"}
    flags.update(options or {})
    return njit(cache=True, **flags)(fn)


def compiled(kernel: Any) -> bool:
    """Whether ``kernel`` has already run in this process (no compile can be pending)."""
    return id(kernel) in _SEEN


@contextmanager
def notice(kernel: Any) -> Iterator[None]:
    """Around a call of a compiled ``kernel``: the first time in this process, print
    "compiling kinetree kernels ..." to stderr if the call takes over a second."""
    global _PRINTED
    first = id(kernel) not in _SEEN
    _SEEN.add(id(kernel))
    if not first or _PRINTED:
        yield
        return

    def say() -> None:
        global _PRINTED
        if not _PRINTED:
            _PRINTED = True
            print(
                "kinetree: compiling kernels, once (cached on disk; `kinetree warmup` "
                "does it ahead) ...",
                file=sys.stderr,
                flush=True,
            )

    timer = threading.Timer(1.0, say)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def warmup(methods: tuple[str, ...] = ("auto",), verbose: bool = True) -> float:
    """Compile the kernels of FK, Jacobians and IK with ``methods`` (a tuple of
    :data:`kinetree.ik.METHODS`; default the ``auto`` method) ahead of use; returns
    the seconds it took."""
    import numpy as np

    from .ik.targets import Position
    from .io import load

    t0 = time.perf_counter()
    model = load("panda")
    Q = model.random_configuration(300, rng=0)
    T = model.fk(Q)  # batch and row kernels
    model.fk(Q[0])
    model.fk_all(Q[:2])
    model.jacobian(Q[:2])
    for method in methods:
        if verbose:
            print(f"kinetree warmup: {method} ...", file=sys.stderr, flush=True)
        model.ik(T[0], method=method)
        if method in ("auto", "dls", "pinv", "transpose", "sdls", "ccd"):
            model.ik(Position(T[1][:3, 3]), method=method)
    if "auto" in methods:
        model.ik(T[:20])
        model.ik(T[0], q0=np.asarray(Q[1]), restarts=0)
    return time.perf_counter() - t0


# Before any kernel can load from the disk cache: kinetree/__init__ imports this first.
fresh_cache()
