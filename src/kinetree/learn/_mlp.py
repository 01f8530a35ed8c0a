"""The prior's network evaluated without torch: a multilayer perceptron in numpy.

``y = W_L^T relu(... relu(W_1^T ((x - mean) / std) + b_1) ...) + b_L``, then
``y * out_std + out_mean``. The weights are the ones torch trained (``W`` stored as
``(in, out)``), in float64, so the numbers equal torch's evaluation of the same weights in
float64 (a test holds them to 1e-6). A small network (a few hundred thousand
multiply-adds) is one BLAS call per layer; no kernel compilation is needed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from ..errors import FileFormatError

__all__ = ["MLP"]


@dataclass(frozen=True)
class MLP:
    """Weights ``(in, out)`` and biases ``(out,)`` per layer, with input and output scaling."""

    weights: tuple[np.ndarray, ...]
    biases: tuple[np.ndarray, ...]
    in_mean: np.ndarray
    in_std: np.ndarray
    out_mean: np.ndarray
    out_std: np.ndarray

    @classmethod
    def from_arrays(
        cls,
        weights: Sequence[np.ndarray],
        biases: Sequence[np.ndarray],
        in_mean: np.ndarray,
        in_std: np.ndarray,
        out_mean: np.ndarray,
        out_std: np.ndarray,
    ) -> MLP:
        f = lambda a: np.ascontiguousarray(a, dtype=np.float64)  # noqa: E731
        return cls(
            tuple(f(w) for w in weights),
            tuple(f(b) for b in biases),
            f(in_mean),
            f(in_std),
            f(out_mean),
            f(out_std),
        )

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """Outputs ``(..., n_out)`` of inputs ``(..., n_in)``."""
        h = (np.asarray(x, dtype=np.float64) - self.in_mean) / self.in_std
        last = len(self.weights) - 1
        for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            h = h @ w + b
            if i < last:
                h = np.maximum(h, 0.0)
        return h * self.out_std + self.out_mean

    def arrays(self) -> dict[str, np.ndarray]:
        """The arrays to save (``W0, b0, W1, ...``, the scalings)."""
        out = {"in_mean": self.in_mean, "in_std": self.in_std}
        out |= {"out_mean": self.out_mean, "out_std": self.out_std}
        for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            out[f"W{i}"] = w
            out[f"b{i}"] = b
        return out

    @classmethod
    def from_saved(cls, arrays: dict[str, np.ndarray]) -> MLP:
        n = sum(1 for k in arrays if k.startswith("W") and k[1:].isdigit())
        return cls.from_arrays(
            [arrays[f"W{i}"] for i in range(n)],
            [arrays[f"b{i}"] for i in range(n)],
            arrays["in_mean"],
            arrays["in_std"],
            arrays["out_mean"],
            arrays["out_std"],
        )


T = TypeVar("T")


def read_saved(path: Path, what: str) -> tuple[MLP, dict[str, Any]]:
    """The network and the metadata of a model saved as ``.npz`` (``what`` names its kind
    in the :class:`~kinetree.errors.FileFormatError` a file that is not one raises)."""
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        meta = json.loads(str(arrays.pop("meta")))
        return MLP.from_saved(arrays), meta
    except (OSError, ValueError, KeyError) as exc:
        why = "it holds pickled Python objects" if "allow_pickle" in str(exc) else exc
        raise FileFormatError(f"{path}: not a kinetree {what} ({why})") from None


def cached(cache: dict[Path, tuple[float, T]], path: Path, build: Callable[[Path], T]) -> T:
    """``build(path)``, kept in ``cache`` until the file's modification time changes."""
    path = path.resolve()
    mtime = path.stat().st_mtime
    hit = cache.get(path)
    if hit is not None and hit[0] == mtime:
        return hit[1]
    value = build(path)
    cache[path] = (mtime, value)
    return value
