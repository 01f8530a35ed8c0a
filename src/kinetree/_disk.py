"""Arrays computed once per machine: fitted spheres, mesh hulls.

What is slow to compute from a mesh (sphere fits, convex hulls) and depends only on its
bytes is kept in ``$KINETREE_CACHE_DIR/<kind>/<key>.npz`` (else under
``~/.cache/kinetree``), keyed by a hash of everything it depends on, and in memory for
the process. A read-only or missing home only means computing again; a damaged file is
computed again and replaced. Files are written whole (a temporary file, then renamed),
so processes sharing the folder never read half a file.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

__all__ = ["cache_root", "digest", "kept_arrays"]

_MEMORY: dict[tuple[str, str], dict[str, np.ndarray]] = {}
_MEMORY_KEPT = 4096


def cache_root() -> Path:
    """``$KINETREE_CACHE_DIR``, else ``~/.cache/kinetree``."""
    root = os.environ.get("KINETREE_CACHE_DIR")
    return Path(root) if root else Path.home() / ".cache" / "kinetree"


def digest(label: str, arrays: Iterable[np.ndarray]) -> str:
    """A key for ``label`` (what is computed, its version and settings) and the bytes,
    shapes and dtypes of ``arrays``."""
    h = hashlib.sha256(label.encode())
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(f"|{a.dtype.str}{a.shape}".encode())
        h.update(a.tobytes())
    return h.hexdigest()[:32]


def kept_arrays(
    kind: str, key: str, compute: Callable[[], dict[str, np.ndarray]], use_disk: bool = True
) -> dict[str, np.ndarray]:
    """The arrays ``compute()`` returns, kept in memory and (``use_disk``) in
    ``cache_root() / kind / f"{key}.npz"``; read from there when present."""
    mem = _MEMORY.get((kind, key))
    if mem is not None:
        return mem
    path = cache_root() / kind / f"{key}.npz"
    out: dict[str, np.ndarray] | None = None
    if use_disk:
        try:
            with np.load(path) as z:
                out = {name: np.array(z[name]) for name in z.files}
        except (OSError, KeyError, ValueError, EOFError):
            out = None
    if out is None:
        out = compute()
        if use_disk:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp = path.with_suffix(f".{os.getpid()}.tmp.npz")
                np.savez(tmp, **out)  # type: ignore[arg-type]  # numpy stubs type **kwds as bool
                os.replace(tmp, path)
            except OSError:  # a read-only home: compute again next time
                pass
    if len(_MEMORY) >= _MEMORY_KEPT:
        _MEMORY.pop(next(iter(_MEMORY)))
    _MEMORY[(kind, key)] = out
    return out
