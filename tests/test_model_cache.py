"""kinetree._cache.PerModel: values per model and key, bounded, dropped with the model."""

import gc

import pytest

import kinetree
from kinetree._cache import PerModel


def test_builds_once_and_keeps_per_key():
    cache: PerModel[list[int]] = PerModel()
    model = kinetree.load("panda")
    calls = []

    def build():
        calls.append(1)
        return [len(calls)]

    first = cache.get_or_build(model, build, key="a")
    assert cache.get_or_build(model, build, key="a") is first
    assert cache.get_or_build(model, build, key="b") is not first
    assert len(calls) == 2
    assert cache.get(model, "c") is None


def test_oldest_key_goes_first_when_full():
    cache: PerModel[int] = PerModel(limit=3)
    model = kinetree.load("panda")
    for k in range(5):
        cache.put(model, k, key=k)
    assert [cache.get(model, k) for k in range(5)] == [None, None, 2, 3, 4]
    cache.put(model, 30, key=3)  # replacing a key does not evict another
    assert [cache.get(model, k) for k in range(5)] == [None, None, 2, 30, 4]


def test_values_are_dropped_with_the_model():
    cache: PerModel[int] = PerModel()
    model = kinetree.load("planar2r").with_floating_base()  # a model nothing else keeps
    cache.put(model, 1)
    assert len(cache) == 1
    del model
    gc.collect()
    assert len(cache) == 0


def test_limit_must_be_positive():
    with pytest.raises(ValueError, match="at least 1"):
        PerModel(limit=0)
