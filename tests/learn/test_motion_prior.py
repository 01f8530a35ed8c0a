"""The temporal human prior (kinetree.learn.motion): numpy inference equals torch's, a
training run repeats for a seed, guesses are finite, of the right shapes and causal
live, the pelvis is guessed from head and hands better than a neutral body on a subject
no prior trained on, and bad input is refused by name."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import kinetree
from kinetree.errors import KinetreeError, UnknownNameError
from kinetree.learn.motion import load_motion_prior
from kinetree.learn.prior import layout_of

DATA = Path(__file__).parent.parent / "data"
#: CMU subject 12: in no prior's training data (src/kinetree/learn/data/README.md).
HELD_OUT = DATA / "bvh" / "cmu_12_01_walk.bvh"
#: A short clip for tiny training runs (Xia et al.'s jump).
TINY = DATA / "mocap" / "xia_neutral_16_000_jump.bvh"


@cache
def _walk() -> tuple[kinetree.Model, np.ndarray]:
    """The held-out walk at 30 fps (every 4th of its 120 fps frames), 3 s."""
    clip = kinetree.read_bvh(HELD_OUT)
    return clip.model, clip.q[::4][:90]


def _tracks(model: kinetree.Model, q: np.ndarray, roles: tuple[str, ...]) -> dict[str, Any]:
    """Pose tracks of ``roles`` (FK of the capture), keyed by frame name."""
    layout = layout_of(model)
    T = model.fk_all(q)
    return {layout.parts[r]: T[:, layout.node[r]] for r in roles}


VR = ("head", "wrist_l", "wrist_r")


@cache
def _tiny(seed: int = 0, future: tuple[int, ...] = ()) -> Any:
    pytest.importorskip("torch")
    from kinetree.learn.motion_train import train_motion_prior

    return train_motion_prior(
        [TINY],
        past_steps=(0, 1, 4),
        future_steps=future,
        hidden=(16, 16),
        steps=4,
        batch_size=32,
        variants=1,
        seed=seed,
        progress_bar=False,
    )


def test_numpy_inference_equals_torch() -> None:
    pytest.importorskip("torch")
    from learn_helpers import torch_reference

    mlp = load_motion_prior("human").mlp
    x = np.random.default_rng(0).normal(size=(32, mlp.weights[0].shape[0]))
    y_torch = torch_reference(mlp, x)
    np.testing.assert_allclose(mlp(x), y_torch, rtol=0, atol=1e-6)


def test_training_repeats_for_a_seed(tmp_path: Path) -> None:
    a, b, c = _tiny(0), _tiny.__wrapped__(0), _tiny(1)
    for wa, wb in zip(a.mlp.weights, b.mlp.weights, strict=True):
        np.testing.assert_array_equal(wa, wb)
    assert not all(
        np.array_equal(wa, wc) for wa, wc in zip(a.mlp.weights, c.mlp.weights, strict=True)
    )
    pa, pb = a.save(tmp_path / "a.npz"), b.save(tmp_path / "b.npz")
    assert pa.read_bytes() == pb.read_bytes()  # the file, bit for bit
    loaded = load_motion_prior(pa)
    assert (loaded.past, loaded.future) == (4, 0)


def test_offline_and_stream_guesses_are_whole_bodies() -> None:
    model, q = _walk()
    bound = load_motion_prior("human").bind(model)
    tracks = _tracks(model, q[:12], VR)
    off = bound.offline(tracks, fps=30.0)
    assert off.shape == (12, model.nq) and np.all(np.isfinite(off))
    stream = bound.stream(fps=30.0)
    live = np.stack([stream.step({k: v[t] for k, v in tracks.items()}) for t in range(12)])
    assert live.shape == (12, model.nq) and np.all(np.isfinite(live))


def test_stream_is_causal() -> None:
    """Frames after t change nothing at t: two takes equal up to t, then different."""
    model, q = _walk()
    bound = load_motion_prior("human").bind(model)
    a = _tracks(model, q[:10], VR)
    b = _tracks(model, np.concatenate([q[:6], q[40:44]]), VR)
    out = []
    for tracks in (a, b):
        s = bound.stream(fps=30.0)
        out.append(np.stack([s.step({k: v[t] for k, v in tracks.items()}) for t in range(10)]))
    np.testing.assert_array_equal(out[0][:6], out[1][:6])
    assert not np.allclose(out[0][6:], out[1][6:])


def test_causal_prior_offline_equals_stream() -> None:
    """A prior without future frames guesses offline exactly what it guesses live; the
    configurations are the same fit of the same guesses."""
    model, q = _walk()
    bound = _tiny(0).bind(model)
    tracks = _tracks(model, q[:8], VR)
    poses, placed = bound.guess_parts(tracks, fps=30.0)
    s = bound.stream(fps=30.0)
    live = []
    for t in range(8):
        live.append(s.step({k: v[t] for k, v in tracks.items()}))
        assert s.guess is not None
        np.testing.assert_allclose(s.guess[0], poses[t], rtol=0, atol=1e-9)
        for role, p in placed[t].items():
            np.testing.assert_allclose(s.guess[1][role], p, rtol=0, atol=1e-9)
    np.testing.assert_array_equal(bound.offline(tracks, fps=30.0), np.stack(live))
    s.reset()
    np.testing.assert_array_equal(s.step({k: v[0] for k, v in tracks.items()}), live[0])


def _positions(model: kinetree.Model, q: np.ndarray) -> np.ndarray:
    layout = layout_of(model)
    return model.fk_all(q)[:, list(layout.node.values())][..., :3, 3]


def test_vr_guess_beats_a_neutral_body_on_a_held_out_subject() -> None:
    """Head and two hands as poses, no pelvis: the guessed bodies (pelvis included)
    are nearer the capture (mean joint error) than the neutral body moved so that its
    head is on the tracked head."""
    model, q = _walk()
    q = q[::3]
    guess = load_motion_prior("human").bind(model).offline(_tracks(model, q, VR), fps=10.0)
    layout = layout_of(model)
    truth = _positions(model, q)
    rest = model.fk_all(model.neutral())[list(layout.node.values()), :3, 3]
    k = list(layout.node).index("head")
    neutral = rest[None] + (truth[:, k] - rest[k])[:, None]
    err_guess = np.linalg.norm(_positions(model, guess) - truth, axis=-1).mean()
    err_neutral = np.linalg.norm(neutral - truth, axis=-1).mean()
    assert err_guess < 0.85 * err_neutral, (err_guess, err_neutral)


def test_skeleton_without_body_parts_is_refused() -> None:
    with pytest.raises(KinetreeError, match="pelvis"):
        load_motion_prior("human").bind(kinetree.load("panda"))


def test_bad_tracks_are_refused_by_name() -> None:
    model, q = _walk()
    bound = load_motion_prior("human").bind(model)
    tracks = _tracks(model, q[:5], VR)
    head = layout_of(model).parts["head"]
    with pytest.raises(KinetreeError, match="different lengths"):
        bound.offline({**tracks, head: tracks[head][:4]}, fps=30.0)
    bad = tracks[head].copy()
    bad[2, 0, 3] = np.nan
    with pytest.raises(KinetreeError, match=head):
        bound.offline({**tracks, head: bad}, fps=30.0)
    with pytest.raises(UnknownNameError, match="nose"):
        bound.offline({**tracks, "nose": tracks[head]}, fps=30.0)
    with pytest.raises(KinetreeError, match="fps"):
        bound.offline(tracks, fps=0.0)
    with pytest.raises(KinetreeError, match="shape"):
        bound.offline({**tracks, head: tracks[head][:, :3]}, fps=30.0)
    with pytest.raises(UnknownNameError, match="human"):
        load_motion_prior("humna")
