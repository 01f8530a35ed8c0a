"""``kinetree warmup`` covers what the commands run besides a plain solve (a first
``animate``, ``reach-map``, ``bvh retarget`` or ``retarget`` compiled before)."""

from __future__ import annotations

from typing import Any

import pytest

import kinetree
from kinetree import _warmup, anim, workspace


def test_warmup_runs_each_commands_entry_point(monkeypatch: pytest.MonkeyPatch):
    called: list[str] = []

    def record(name: str) -> Any:
        def fake(*args: Any, **kwargs: Any) -> None:
            called.append(name)

        return fake

    # Each stands for the kernels behind one command; what they compile is theirs.
    monkeypatch.setattr(anim, "reach", record("animate"))
    monkeypatch.setattr(workspace, "reachability", record("reach-map"))
    monkeypatch.setattr(anim, "edit_by_targets", record("bvh retarget"))
    monkeypatch.setattr(anim, "retarget_robot", record("retarget"))
    _warmup._warm_commands(kinetree.load("panda"), verbose=False)
    assert called == ["animate", "reach-map", "bvh retarget", "retarget"]


def test_warmup_of_auto_includes_the_commands(monkeypatch: pytest.MonkeyPatch):
    seen: list[str] = []
    monkeypatch.setattr(_warmup, "_warm_commands", lambda model, verbose: seen.append(model.name))
    for name in ("_warm_whole_body", "_warm_collision"):
        monkeypatch.setattr(_warmup, name, lambda verbose: None)
    monkeypatch.setattr(kinetree.Model, "ik", lambda *a, **k: None)
    _warmup._warm(("auto",), verbose=False)
    assert seen == ["panda"]
