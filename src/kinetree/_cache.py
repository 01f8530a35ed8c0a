"""Caches of what is derived from one model: packed arrays, templates, sphere sets.

A :class:`~kinetree.model.Model` is frozen, so whatever is computed from it (and from a
few hashable arguments) can be kept, but not on the model itself and not beyond its
life. :class:`PerModel` is the one place that does this: a weak mapping from model to a
small dictionary of values by key, each dictionary bounded (the oldest entry goes first),
dropped when the model is.

Concurrent threads may both build a missing value; the last one stored wins. Values must
therefore be equal whichever thread built them (they are: all are pure functions of the
model and the key), and callers must not mutate what they get back.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

__all__ = ["PerModel"]

V = TypeVar("V")

#: The key of a cache that keeps one value per model.
ONLY: Hashable = None


class PerModel(Generic[V]):
    """Values per model and key, dropped with the model.

    Args:
        limit: how many keys one model keeps; storing one more drops the oldest.
    """

    __slots__ = ("_by_model", "limit")

    def __init__(self, limit: int = 128) -> None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        self.limit = limit
        self._by_model: weakref.WeakKeyDictionary[Any, dict[Hashable, V]] = (
            weakref.WeakKeyDictionary()
        )

    def get(self, model: Any, key: Hashable = ONLY) -> V | None:
        """The value kept for ``model`` and ``key``, or None."""
        values = self._by_model.get(model)
        return None if values is None else values.get(key)

    def put(self, model: Any, value: V, key: Hashable = ONLY) -> V:
        """Keep ``value`` for ``model`` and ``key`` and return it."""
        values = self._by_model.get(model)
        if values is None:
            values = self._by_model[model] = {}
        values.pop(key, None)
        while len(values) >= self.limit:
            del values[next(iter(values))]
        values[key] = value
        return value

    def get_or_build(self, model: Any, build: Callable[[], V], key: Hashable = ONLY) -> V:
        """The value for ``model`` and ``key``, built by ``build()`` and kept if missing."""
        values = self._by_model.get(model)
        if values is not None:
            try:
                return values[key]
            except KeyError:
                pass
        return self.put(model, build(), key)

    def clear(self) -> None:
        """Forget every value of every model."""
        self._by_model.clear()

    def __len__(self) -> int:
        """How many models have values kept."""
        return len(self._by_model)
