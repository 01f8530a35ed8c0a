"""``kinetree.anim.slerp`` checks its inputs: a fraction that is NaN or outside [0, 1], a
zero quaternion, vectors that are not four numbers are KinetreeErrors, not NaN or a
silent broadcast; quaternions of another length are normalised (scipy's slerp, an
independent implementation, is the oracle)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation, Slerp

from kinetree.anim import slerp
from kinetree.errors import KinetreeError

QA = np.array([1.0, 0.0, 0.0, 0.0])
QB = Rotation.from_rotvec([0.0, 0.0, 1.2]).as_quat(scalar_first=True)


@pytest.mark.parametrize(
    ("qa", "qb", "u", "what"),
    [
        (QA, QB, np.nan, "u"),
        (QA, QB, [0.2, np.inf], "u"),
        (QA, QB, 1.5, r"\[0, 1\]"),
        (QA, QB, -0.1, r"\[0, 1\]"),
        (np.zeros(4), QB, 0.5, "non-zero"),
        (QA, [[0.0, 0.0, 0.0, 0.0], QB], 0.5, "non-zero"),
        (np.ones(3), np.ones(3), 0.5, "qa"),
        (QA, QB[:3], 0.5, "qb"),
        (QA, [np.nan, 0.0, 0.0, 1.0], 0.5, "qb"),
        (QA, QB, "half", "u"),
    ],
)
def test_bad_inputs_are_refused(qa, qb, u, what) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(KinetreeError, match=what):
        slerp(qa, qb, u)


def test_good_inputs_match_scipy_and_are_normalised() -> None:
    u = np.linspace(0.0, 1.0, 7)
    ours = slerp(3.0 * QA, 0.5 * QB, u)  # not unit: normalised first
    ref = Slerp([0.0, 1.0], Rotation.from_quat(np.stack([QA, QB]), scalar_first=True))(u)
    ref_q = ref.as_quat(scalar_first=True)
    ref_q *= np.sign(ref_q[:, :1])
    np.testing.assert_allclose(ours * np.sign(ours[:, :1]), ref_q, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(ours, axis=-1), 1.0, atol=1e-15)
