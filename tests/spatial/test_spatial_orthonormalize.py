"""kinetree.spatial.orthonormalize: the nearest rigid transform, or NotRigidError."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from kinetree import data
from kinetree.errors import InvalidValueError, NotRigidError, ShapeError
from kinetree.spatial import from_rotation_translation, orthonormalize


def random_rotations(n: int, seed: int) -> np.ndarray:
    return Rotation.random(n, random_state=seed).as_matrix()


def perturbation(shape: tuple[int, ...], size: float, seed: int) -> np.ndarray:
    """Random matrices with Frobenius norm ``size`` each."""
    E = np.random.default_rng(seed).normal(size=shape)
    return size * E / np.linalg.norm(E, axis=(-2, -1), keepdims=True)


def orthonormality(R: np.ndarray) -> float:
    return float(np.abs(np.swapaxes(R, -1, -2) @ R - np.eye(3)).max())


def test_perturbed_rotations_round_trip() -> None:
    R = random_rotations(1000, 0)
    out = orthonormalize(R + perturbation(R.shape, 1e-7, 1))
    assert out.shape == R.shape
    assert np.abs(out - R).max() <= 1e-7
    assert orthonormality(out) <= 1e-14
    np.testing.assert_allclose(np.linalg.det(out), 1.0, atol=1e-14)


def test_perturbed_poses_round_trip_and_keep_translation() -> None:
    R = random_rotations(200, 2)
    p = np.random.default_rng(3).normal(size=(200, 3))
    T = from_rotation_translation(R, p).reshape(10, 20, 4, 4)
    noisy = T + perturbation(T.shape, 1e-7, 4) * np.r_[[1, 1, 1, 0]][:, None]
    noisy[..., 3, :3] += 1e-9  # a last row a hair off [0, 0, 0, 1] is set exactly
    out = orthonormalize(noisy)
    assert out.shape == (10, 20, 4, 4)
    assert np.abs(out[..., :3, :3] - T[..., :3, :3]).max() <= 1e-7
    np.testing.assert_array_equal(out[..., :3, 3], noisy[..., :3, 3])
    np.testing.assert_array_equal(out[..., 3, :], np.broadcast_to([0, 0, 0, 1.0], (10, 20, 4)))
    assert orthonormality(out[..., :3, :3]) <= 1e-14


def test_six_decimal_pose_is_accepted() -> None:
    T = from_rotation_translation(random_rotations(1, 5)[0], [0.3, -0.2, 0.5])
    rounded = np.round(T, 6)
    out = orthonormalize(rounded)
    assert orthonormality(out[:3, :3]) <= 1e-14
    assert np.abs(out - T).max() < 2e-6


def test_exact_rotations_are_unchanged() -> None:
    R = random_rotations(50, 6)
    np.testing.assert_allclose(orthonormalize(R), R, atol=1e-15)
    np.testing.assert_array_equal(orthonormalize(np.eye(4)), np.eye(4))


def test_input_is_not_modified() -> None:
    R = random_rotations(1, 7)[0] + 1e-6
    before = R.copy()
    orthonormalize(R)
    np.testing.assert_array_equal(R, before)


def test_reflection_refused_with_its_determinant() -> None:
    with pytest.raises(NotRigidError, match=r"det\(R\) = -1 "):
        orthonormalize(np.diag([1.0, 1.0, -1.0]))
    T = np.eye(4)
    T[:3, :3] = -random_rotations(1, 8)[0]
    with pytest.raises(NotRigidError, match=r"det\(R\) = -1 "):
        orthonormalize(T)


def test_far_off_refused_with_the_distance() -> None:
    R = np.eye(3)
    R[0, 1] = 0.01
    with pytest.raises(NotRigidError, match=r"max \|R\^T R - I\| = 0\.01, det\(R\) = 1 "):
        orthonormalize(R)
    with pytest.raises(NotRigidError, match=r"tol=0\.0001"):
        orthonormalize(R * 1.001)
    # A looser tolerance accepts it and still returns a proper rotation.
    out = orthonormalize(R, tol=0.05)
    assert orthonormality(out) <= 1e-14 and np.linalg.det(out) > 0


def test_batch_message_names_the_worst_item() -> None:
    R = np.broadcast_to(np.eye(3), (3, 4, 3, 3)).copy()
    R[1, 2, 0, 0] = 1.01
    R[2, 0, 0, 0] = 1.2
    with pytest.raises(NotRigidError, match=r"2 of 12 matrices .* worst at index \(2, 0\)"):
        orthonormalize(R)


def test_bad_last_row_refused() -> None:
    T = np.eye(4)
    T[3, 0] = 0.5
    with pytest.raises(NotRigidError, match=r"last row must be \[0, 0, 0, 1\].*off by 0\.5"):
        orthonormalize(T)


@pytest.mark.parametrize("bad", [np.eye(2), np.eye(5), np.zeros(3), np.ones((3, 4))])
def test_shapes_refused(bad: np.ndarray) -> None:
    with pytest.raises(ShapeError, match=r"\(\.\.\., 4, 4\) or \(\.\.\., 3, 3\)"):
        orthonormalize(bad)


def test_nan_and_bad_tol_refused() -> None:
    with pytest.raises(InvalidValueError, match="NaN"):
        orthonormalize(np.full((3, 3), np.nan))
    with pytest.raises(InvalidValueError, match="tol"):
        orthonormalize(np.eye(3), tol=-1.0)


def test_not_rigid_error_is_a_kinetree_error() -> None:
    from kinetree import KinetreeError

    assert issubclass(NotRigidError, KinetreeError)


def test_bundled_data_paths() -> None:
    p = data.path("cmu_walk")
    assert p.is_file() and p.name == "cmu_12_01_walk.bvh"
    assert data.path("cmu_12_01_walk.bvh") == p == data.path("cmu_12_01_walk")
    assert data.names() == ["biped", "cmu_walk", "xacro_arm"]
    with pytest.raises(
        KeyError, match="data file 'walk' not found; valid data files are: biped, cmu_walk"
    ):
        data.path("walk")
