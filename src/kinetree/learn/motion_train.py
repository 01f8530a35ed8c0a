"""Training a :class:`~.motion.MotionPrior` from BVH clips, with PyTorch (``kinetree[learn]``).

Data: each clip in the canonical body-part view (:class:`~._motion_body.MotionClip`),
with ``variants`` copies on bodies of other proportions (legs, hips, spine, neck,
shoulders and arms scaled independently by up to ``proportions``), and every one of
them mirrored left-right. A batch draws frames uniformly, a speed change per window
(``speed``: the window's steps stretched by a factor drawn log-uniformly), and what is
tracked the way callers track it: head and hands with the head's orientation (VR) for
30 % of the windows; pelvis pose, head and hands (four points) 15 %; the same with feet
(six points) 15 %; head pose, hands and feet 10 %; head and hands positions only 5 %;
each role at random for the rest (the head or the pelvis always). The future half of
the window is given for half of the windows (offline) and hidden for the others
(live), so one network serves both. Inputs get Gaussian noise (``noise`` body heights)
and the ankle level an error (``floor_noise``), as estimated levels have.

Network: a multilayer perceptron with ReLU, inputs scaled (not centred: a hidden input
stays zero), outputs standardised, trained with AdamW on the mean squared error (the
pelvis's nine outputs weighted ``pelvis_weight``), masked to the roles each skeleton
has. Deterministic: numpy's generator for the batches, torch's seeded, deterministic
algorithms, one thread.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._progress import progress
from ..errors import InvalidValueError
from ..io.bvh import BVHClip, read_bvh
from ._mlp import MLP
from ._motion_body import (
    ALL_ROLES,
    N_OUT,
    ROT_ROLES,
    TRACK_ROLES,
    MotionClip,
    gather,
    n_features,
    skeleton_frames,
    window_features,
    window_targets,
)
from .motion import RATE, MotionPrior
from .prior import layout_of
from .train import _torch

__all__ = ["FUTURE_STEPS", "PAST_STEPS", "motion_clips", "train_motion_prior"]

#: The shipped prior's window: frames back and ahead at :data:`~.motion.RATE`.
PAST_STEPS = (0, 1, 2, 4, 8, 12, 20, 30)
FUTURE_STEPS = (1, 2, 4, 8, 12, 20, 30)
_GROUPS = ("legs", "hips", "spine", "neck", "shoulders", "arms")
# tracked-role settings: (share, position flags, rotation flags) in TRACK_ROLES order
_SETTINGS = (
    (0.30, (0, 1, 1, 1, 0, 0), (0, 1)),
    (0.15, (1, 1, 1, 1, 0, 0), (1, 0)),
    (0.15, (1, 1, 1, 1, 1, 1), (1, 0)),
    (0.10, (0, 1, 1, 1, 1, 1), (0, 1)),
    (0.05, (0, 1, 1, 1, 0, 0), (0, 0)),
)


def motion_clips(clips: Iterable[BVHClip | str | os.PathLike[str]]) -> list[MotionClip]:
    """BVH clips (paths or :class:`~kinetree.io.bvh.BVHClip`) in the canonical view; clips
    of one skeleton (the same frames at the same rest places) share its body frames
    (:func:`~._motion_body.skeleton_frames`, from all their motion)."""
    loaded = []
    for clip in clips:
        c = clip if isinstance(clip, BVHClip) else read_bvh(clip)
        name = Path(clip).name if isinstance(clip, (str, os.PathLike)) else "clip"
        loaded.append((c, name, c.model.fk_all(c.q)))
    groups: dict[Any, list[int]] = {}
    for i, (c, _, _) in enumerate(loaded):
        rest = np.round(c.model.fk_all(c.model.neutral())[:, :3, 3], 3)
        groups.setdefault((c.model.frame_names, rest.tobytes()), []).append(i)
    out: list[MotionClip | None] = [None] * len(loaded)
    for members in groups.values():
        model = loaded[members[0]][0].model
        layout = layout_of(model)
        frames = skeleton_frames(model, [loaded[i][2][::4] for i in members], layout)
        for i in members:
            c, name, _ = loaded[i]
            out[i] = MotionClip.from_configurations(
                c.model, c.q, 1.0 / c.frame_time, layout_of(c.model), name=name, frames=frames
            )
    return [c for c in out if c is not None]


class _Pool:
    """Every training clip's frames in one set of arrays, with the clips' bounds."""

    def __init__(self, clips: Sequence[MotionClip]) -> None:
        self.pos = np.concatenate([c.pos for c in clips]).astype(np.float64)
        self.body = np.concatenate([c.body for c in clips])
        self.head = np.concatenate([c.head for c in clips])
        lens = np.array([len(c.pos) for c in clips])
        self.start = np.concatenate([[0], np.cumsum(lens)[:-1]])
        self.length = lens
        self.clip_of = np.repeat(np.arange(len(clips)), lens)
        self.fps = np.array([c.fps for c in clips])
        self.valid = np.stack([c.valid for c in clips])

    def batch(
        self, rng: np.random.Generator, n: int, steps: np.ndarray, n_past: int, opts: dict
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(x, y, mask)`` of ``n`` random windows (see the module docstring)."""
        g = rng.integers(0, len(self.pos), n)
        c = self.clip_of[g]
        t = g - self.start[c]
        lo, hi = np.log(1.0 / opts["speed"]), np.log(opts["speed"])
        speed = np.exp(rng.uniform(lo, hi, n))
        d = np.rint(steps[None, :] * (speed * self.fps[c] / RATE)[:, None]).astype(np.int64)
        idx = self.start[c][:, None] + np.clip(t[:, None] + d, 0, self.length[c][:, None] - 1)
        P, body, head = gather(self.pos, self.body, self.head, idx)
        pos_on, rot_on = _settings(rng, n)
        future_on = rng.random(n) < 0.5
        if opts["noise"] > 0:
            P = P + rng.normal(0.0, opts["noise"], P.shape)
        shift = rng.normal(0.0, opts["floor_noise"], n)
        P[..., 1] += shift[:, None, None]
        x, R, anchor = window_features(P, body, head, pos_on, rot_on, n_past, future_on)
        anchor[:, 1] -= shift  # the outputs are relative to the true anchor
        cur = idx[:, 0]
        y = window_targets(self.pos[cur], self.body[cur], R, anchor)
        mask = np.concatenate(
            [np.ones((n, 9), dtype=bool), np.repeat(self.valid[c][:, 1:], 3, axis=1)], axis=1
        )
        return x, y, mask


def _settings(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    u = rng.random(n)
    pos_on = rng.random((n, len(TRACK_ROLES))) < 0.5
    rot_on = rng.random((n, len(ROT_ROLES))) < 0.5
    edge = 0.0
    for share, p, r in _SETTINGS:
        use = (u >= edge) & (u < edge + share)
        pos_on[use] = np.array(p, dtype=bool)
        rot_on[use] = np.array(r, dtype=bool)
        edge += share
    neither = ~pos_on[:, 0] & ~pos_on[:, 1]
    pos_on[neither, 1] = True
    rot_on &= pos_on[:, :2]  # an orientation comes with its position
    return pos_on, rot_on


def _augmented(
    clips: Sequence[MotionClip], variants: int, proportions: float, rng: np.random.Generator
) -> list[MotionClip]:
    out = []
    for c in clips:
        copies = [c]
        for _ in range(variants):
            scale = {g: float(rng.uniform(1 - proportions, 1 + proportions)) for g in _GROUPS}
            copies.append(c.reproportioned(scale))
        out += copies + [k.mirrored() for k in copies]
    return out


def train_motion_prior(
    clips: Iterable[BVHClip | str | os.PathLike[str]],
    *,
    past_steps: Sequence[int] = PAST_STEPS,
    future_steps: Sequence[int] = FUTURE_STEPS,
    hidden: Sequence[int] = (512, 512, 512),
    steps: int = 6000,
    batch_size: int = 256,
    lr: float = 1e-3,
    seed: int = 0,
    variants: int = 3,
    proportions: float = 0.12,
    speed: float = 1.3,
    noise: float = 0.005,
    floor_noise: float = 0.02,
    weight_decay: float = 1e-4,
    pelvis_weight: float = 3.0,
    name: str = "motion prior",
    progress_bar: bool | None = None,
) -> MotionPrior:
    """Train a temporal prior on BVH ``clips`` (see the module docstring).

    Args:
        past_steps, future_steps: the window, in frames at :data:`~.motion.RATE`
            (``past_steps`` starts with 0, the current frame; ``future_steps`` may be
            empty: a causal prior).
        hidden: hidden layer widths.
        steps: AdamW steps of ``batch_size`` windows; ``lr`` cosine-annealed to zero.
        seed: the same clips, options and seed give the same weights.
        variants: copies of each clip on bodies of other proportions.
        proportions: the largest relative change of a body-part group's bones.
        speed: the largest speed change factor (and its inverse).
        noise, floor_noise: input position noise and ankle-level error [body heights].
        pelvis_weight: loss weight of the pelvis outputs.

    Raises :class:`~kinetree.errors.UnsupportedError` without torch or for a clip
    without the body parts, :class:`~kinetree.errors.InvalidValueError` for bad values.
    """
    torch = _torch()
    sources = list(clips)
    if not sources:
        raise InvalidValueError("train_motion_prior needs at least one clip")
    for what, v in (("steps", steps), ("batch_size", batch_size), ("variants", variants + 1)):
        if not isinstance(v, int) or v < 1:
            raise InvalidValueError(f"{what} must be a positive integer, got {v!r}")
    past, future = tuple(int(s) for s in past_steps), tuple(int(s) for s in future_steps)
    if not past or past[0] != 0 or any(s < 0 for s in past + future):
        raise InvalidValueError(
            f"past_steps must start with 0 and no step may be negative, got {past}, {future}"
        )
    if not (0 <= proportions < 0.5 and speed >= 1.0 and 0 < lr < 1):
        raise InvalidValueError("proportions in [0, 0.5), speed >= 1 and lr in (0, 1) please")
    rng = np.random.default_rng(seed)
    base = motion_clips(sources)
    pool = _Pool(_augmented(base, variants, proportions, rng))
    window = np.array([-s for s in past] + list(future))
    opts = {"speed": speed, "noise": noise, "floor_noise": floor_noise}
    n_in = n_features(len(window))

    # scalings from a sample of windows
    xs, ys, ms = pool.batch(rng, 20000, window, len(past), opts)
    in_std = xs.std(axis=0)
    in_std = np.where(in_std > 1e-8, in_std, 1.0)
    in_std[-(len(TRACK_ROLES) + len(ROT_ROLES) + 1) :] = 1.0  # flags stay 0/1
    cnt = np.maximum(ms.sum(axis=0), 1)
    out_mean = (ys * ms).sum(axis=0) / cnt
    out_std = np.sqrt((((ys - out_mean) * ms) ** 2).sum(axis=0) / cnt)
    out_std = np.where(out_std > 1e-8, out_std, 1.0)
    weight = np.ones(N_OUT)
    weight[:9] = pelvis_weight

    threads = torch.get_num_threads()
    was = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    try:
        torch.manual_seed(seed)
        sizes = [n_in, *hidden, N_OUT]
        layers: list[Any] = []
        for i in range(len(sizes) - 1):
            layers.append(torch.nn.Linear(sizes[i], sizes[i + 1]))
            if i < len(sizes) - 2:
                layers.append(torch.nn.ReLU())
        net = torch.nn.Sequential(*layers)
        opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=weight_decay)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps)
        w = torch.tensor(weight, dtype=torch.float32)
        loss_v, total, count = float("nan"), 0.0, 0
        with progress(steps, "learn", show=progress_bar) as tick:
            for step in range(steps):
                x, y, m = pool.batch(rng, batch_size, window, len(past), opts)
                xb = torch.tensor(x / in_std, dtype=torch.float32)
                yb = torch.tensor((y - out_mean) / out_std, dtype=torch.float32)
                mb = torch.tensor(m, dtype=torch.float32) * w
                loss = (((net(xb) - yb) ** 2) * mb).sum() / mb.sum()
                opt.zero_grad()
                loss.backward()
                opt.step()
                sched.step()
                total += float(loss.detach())
                count += 1
                if (step + 1) % 500 == 0 or step + 1 == steps:
                    loss_v, total, count = total / count, 0.0, 0
                tick(1)
    finally:
        torch.use_deterministic_algorithms(was)
        torch.set_num_threads(threads)
    linear = [mod for mod in net if isinstance(mod, torch.nn.Linear)]
    weights = [mod.weight.detach().numpy().T.astype(np.float32) for mod in linear]
    biases = [mod.bias.detach().numpy().astype(np.float32) for mod in linear]
    mlp = MLP.from_arrays(weights, biases, np.zeros(n_in), in_std, out_mean, out_std)
    meta = {
        "name": name,
        "clips": [c.name for c in base],
        "frames": int(sum(len(c.pos) for c in base)),
        "seconds_of_motion": round(float(sum(len(c.pos) / c.fps for c in base)), 1),
        "hidden": list(hidden),
        "steps": steps,
        "batch_size": batch_size,
        "lr": lr,
        "seed": seed,
        "variants": variants,
        "proportions": proportions,
        "speed": speed,
        "noise": noise,
        "floor_noise": floor_noise,
        "weight_decay": weight_decay,
        "pelvis_weight": pelvis_weight,
        "final_loss": round(loss_v, 6),
        "torch": str(torch.__version__),
        "roles": list(ALL_ROLES),
    }
    return MotionPrior(mlp, past, future, meta)
