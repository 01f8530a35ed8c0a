"""Messages in kinetree's words: the flag a command takes, no numpy advice to unpickle."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kinetree.cli._app import in_cli_words
from kinetree.errors import FileFormatError, UnknownNameError


def test_cli_words_keep_a_space_before_a_value():
    assert in_cli_words("no pairs; try mapping='auto'", ["--map"]) == "no pairs; try --map 'auto'"
    assert in_cli_words("pass up= or source_scale=, then", ["--up", "--scale"]) == (
        "pass --up or --scale, then"
    )


def test_object_arrays_are_refused_in_our_words(tmp_path: Path):
    from kinetree import workspace

    f = tmp_path / "objects.npz"
    np.savez(f, meta=np.array([{"a": 1}], dtype=object))
    with pytest.raises(FileFormatError) as info:
        workspace.load(f)
    assert "pickled Python objects" in str(info.value)
    assert "allow_pickle" not in str(info.value)


def test_unknown_prior_lists_names_then_what_else_is_taken():
    pytest.importorskip("torch")
    from kinetree import learn

    with pytest.raises(UnknownNameError) as info:
        learn.load_prior("no_such_prior")
    text = str(info.value)
    assert ", (or" not in text and text.endswith("(or the path of a .npz file)")
