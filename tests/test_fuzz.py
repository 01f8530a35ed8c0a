"""Fuzz the loaders: a few hundred seeded, mutated URDF, BVH, MJCF, DH, glTF and USD
inputs.

Each case must load, or raise a ``KinetreeError``, within 5 s; a loaded model must
have finite FK, and an IK solve on it must not claim a success that FK contradicts
(the oracle is :func:`fuzz_inputs.check_case`). The cases are the same on every run
(seed :data:`SEED`); the long campaign is ``make fuzz`` (``benchmarks/fuzz.py``).
A failure lists the findings grouped by (kind, stage, exception type, message);
``python benchmarks/fuzz.py --replay KIND:SEED`` reruns one case and prints its input.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzz_inputs import (
    KIND_CYCLE,
    KINDS,
    TIMEOUT_S,
    Case,
    campaign,
    check_case,
    format_groups,
    group_findings,
    make_case,
    run_cases,
    seed_texts,
)

SEED = 1  # the long campaign uses seed 0, so the suite adds cases it does not run
N_CASES = 400
#: The character formats get their own cases (the loaders' 400 stay as they were).
FORMAT_KINDS = ("gltf", "usd")
N_FORMAT_CASES = 60
#: usd-core's text parser takes seconds to report errors in large malformed layers (5 s
#: for a 90 kB case on a loaded machine): their cases may take this long; a hang does not.
FORMAT_TIMEOUT_S = 20.0


def test_cases_are_reproducible() -> None:
    for kind in KINDS:
        a, b = make_case(kind, 12345), make_case(kind, 12345)
        assert a == b
        assert a.data, kind
    kinds = {c.kind for c in campaign(len(KIND_CYCLE), SEED)}
    assert kinds == set(KINDS)


def test_unmutated_seeds_load(tmp_path: Path) -> None:
    """The oracle passes every seed file as it is (so findings come from the mutations)."""
    for kind in ("urdf", "bvh"):
        for name, text in seed_texts(kind):
            rec = check_case(Case(kind, 0, text.encode(), "." + kind, name, ()), tmp_path)
            assert rec["outcome"] == "loaded", (name, rec)
    for kind, ext in (("gltf", ".gltf"), ("usd", ".usda")):  # the formats extra
        for name, text in seed_texts(kind):
            rec = check_case(Case(kind, 0, text.encode(), ext, name, ()), tmp_path)
            assert rec["outcome"] == "loaded", (name, rec)
    for name, text in seed_texts("mjcf"):  # through MuJoCo's compiler (the mjcf extra)
        rec = check_case(Case("mjcf", 0, text.encode(), ".xml", name, ()), tmp_path)
        assert rec["outcome"] == "loaded", (name, rec)


@pytest.mark.parametrize(
    ("kinds", "n", "timeout"),
    [
        (tuple(k for k in KINDS if k not in FORMAT_KINDS), N_CASES, TIMEOUT_S),
        (FORMAT_KINDS, N_FORMAT_CASES, FORMAT_TIMEOUT_S),
    ],
    ids=["loaders", "character-formats"],
)
def test_fuzz_loaders(kinds: tuple[str, ...], n: int, timeout: float) -> None:
    results = run_cases(campaign(n, SEED, kinds), jobs=2, timeout=timeout)
    assert len(results) == n
    groups = group_findings(results)
    if groups:
        bad = sum(len(recs) for _, recs in groups)
        pytest.fail(
            f"{bad} of {n} fuzz cases broke a promise, in {len(groups)} groups "
            "(count x kind, stage, type: message; rerun one with "
            "`python benchmarks/fuzz.py --replay KIND:SEED`):\n" + format_groups(groups),
            pytrace=False,
        )
