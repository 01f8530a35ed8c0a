"""Training a :class:`~.prior.PosePrior` from BVH clips, with PyTorch (``kinetree[learn]``).

Data: every ``every``-th frame of each clip in the body-part view of :mod:`._body`
(inputs: head, hands and feet relative to the pelvis in the body frame, in body heights,
and the world up; outputs: every role), doubled by the left-right mirror image. Each
batch hides inputs the way IK calls give them: all five (six-point setting: pelvis
pose, head, hands, feet) for 40 % of the samples, the feet hidden (four-point setting)
for 40 %, each input hidden with probability 0.3 for the rest; a hidden input is zero
with its presence flag 0.

Network: a multilayer perceptron with ReLU, inputs scaled by their standard deviation
(not centred: a hidden input stays zero), outputs standardised, trained with Adam on the
mean squared error over the roles each skeleton has. Deterministic for a seed
(``torch.use_deterministic_algorithms`` and one thread while training, one generator for
shuffling and hiding).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._progress import progress
from ..errors import InvalidValueError, UnsupportedError
from ..io.bvh import BVHClip, read_bvh
from ._body import INPUT_ROLES, N_INPUTS, OUTPUT_ROLES, BodyLayout, mirror_inputs, mirror_outputs
from ._mlp import MLP
from .prior import PosePrior

__all__ = ["clip_frames", "train_pose_prior"]


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        raise UnsupportedError(
            "training a pose prior needs PyTorch: pip install 'kinetree[learn]' (inference "
            "does not)"
        ) from None
    return torch


def clip_frames(clip: BVHClip | str | os.PathLike[str], every: int = 4) -> tuple[np.ndarray, ...]:
    """``(inputs, outputs, valid)`` of every ``every``-th frame of a clip (a path or a
    :class:`~kinetree.io.bvh.BVHClip`): arrays ``(n, N_INPUTS)``, ``(n, 3 * n_roles)``
    and ``(n, n_roles)``."""
    c = clip if isinstance(clip, BVHClip) else read_bvh(clip)
    layout = BodyLayout.of(c.model)
    q = c.q[::every]
    x, y = layout.frames(c.model, q)
    return x, y, np.broadcast_to(layout.valid, (len(q), len(OUTPUT_ROLES))).copy()


def _hide(x: Any, gen: Any, torch: Any) -> Any:
    """Hide inputs as IK calls give them (see the module docstring)."""
    n, k = x.shape[0], len(INPUT_ROLES)
    u = torch.rand(n, generator=gen)
    keep = torch.ones(n, k)
    feet = torch.tensor([INPUT_ROLES.index(r) for r in ("ankle_l", "ankle_r")])
    four = (u >= 0.4) & (u < 0.8)
    keep[four.nonzero(as_tuple=True)[0][:, None], feet] = 0.0
    rand = u >= 0.8
    keep[rand] = (torch.rand(int(rand.sum()), k, generator=gen) >= 0.3).float()
    pos = x[:, : 3 * k].reshape(n, k, 3) * keep[:, :, None]
    return torch.cat([pos.reshape(n, 3 * k), x[:, 3 * k : 3 * k + 3], keep], dim=1)


def train_pose_prior(
    clips: Iterable[BVHClip | str | os.PathLike[str]],
    *,
    every: int = 4,
    hidden: Sequence[int] = (256, 256, 256),
    epochs: int = 60,
    batch_size: int = 256,
    lr: float = 1e-3,
    seed: int = 0,
    noise: float = 0.0,
    weight_decay: float = 0.0,
    name: str = "prior",
    progress_bar: bool | None = None,
    variants: int = 0,
    proportions: float = 0.12,
) -> PosePrior:
    """Train a pose prior on ``clips`` (BVH paths or clips of any skeleton whose body parts
    :func:`~kinetree.io.body_parts.find_body_parts` recognises; see the module docstring).

    Args:
        every: use every ``every``-th frame of each clip.
        hidden: widths of the hidden layers.
        epochs: passes over the frames (and their mirror images).
        batch_size: frames per Adam step.
        lr: Adam's learning rate (cosine-annealed to zero).
        seed: the same clips, options and seed give the same weights.
        noise: standard deviation of Gaussian noise added to the given input positions
            in each batch [body heights] (0: none).
        weight_decay: AdamW's decoupled weight decay (0: plain Adam).
        name: stored in the prior's metadata.
        progress_bar: a bar on stderr (None: on a terminal).
        variants: copies of each clip on bodies of other proportions (each group of
            bones: legs, hips, spine, neck, shoulders, arms, scaled by a factor drawn
            within ``1 +- proportions``, seeded by ``seed``); 0: none. With copies, the
            clips are read as the temporal prior reads them
            (:func:`~.motion_train.motion_clips`: a skeleton whose rest pose does not
            stand gets its body frame from its motion).

    Raises :class:`~kinetree.errors.UnsupportedError` without torch or for a clip whose
    skeleton lacks the roles the prior reads, :class:`~kinetree.errors.InvalidValueError`
    for no clips or bad numbers.
    """
    torch = _torch()
    sources = list(clips)
    if not sources:
        raise InvalidValueError("train_pose_prior needs at least one clip")
    for what, v in (("every", every), ("epochs", epochs), ("batch_size", batch_size)):
        if not isinstance(v, int) or v < 1:
            raise InvalidValueError(f"{what} must be a positive integer, got {v!r}")
    if not (isinstance(lr, (int, float)) and 0 < lr < 1):
        raise InvalidValueError(f"lr must be in (0, 1), got {lr!r}")
    for what, f in (("noise", noise), ("weight_decay", weight_decay)):
        if not (isinstance(f, (int, float)) and 0 <= f < 1):
            raise InvalidValueError(f"{what} must be in [0, 1), got {f!r}")
    if variants:
        parts = _varied_frames(sources, every, variants, proportions, seed)
    else:
        parts = [clip_frames(c, every) for c in sources]
    x = np.concatenate([p[0] for p in parts])
    y = np.concatenate([p[1] for p in parts])
    valid = np.concatenate([p[2] for p in parts])
    ym, vm = mirror_outputs(y, valid)
    x, y, valid = (
        np.concatenate([x, mirror_inputs(x)]),
        np.concatenate([y, ym]),
        np.concatenate([valid, vm]),
    )
    opts = {"epochs": epochs, "batch_size": batch_size, "lr": lr, "seed": seed}
    opts |= {"noise": noise, "weight_decay": weight_decay}
    if variants:
        opts |= {"variants": variants, "proportions": proportions}
    mlp, loss = _fit(torch, x, y, valid, hidden, opts, progress_bar)
    meta = {
        "name": name,
        "clips": [_label(c) for c in sources],
        "frames": int(len(x) // 2),
        "every": every,
        "hidden": list(hidden),
        **opts,
        "final_loss": loss,
        "torch": str(torch.__version__),
    }
    return PosePrior(mlp, meta)


def _varied_frames(
    sources: Sequence[Any], every: int, variants: int, proportions: float, seed: int
) -> list[tuple[np.ndarray, ...]]:
    """:func:`clip_frames` of each clip and of ``variants`` re-proportioned copies."""
    from ._motion_body import ALL_ROLES
    from .motion_train import _GROUPS, motion_clips

    rng = np.random.default_rng(seed)
    k = len(INPUT_ROLES)
    inputs = [ALL_ROLES.index(r) for r in INPUT_ROLES]
    out: list[tuple[np.ndarray, ...]] = []
    for clip in motion_clips(sources):
        copies = [clip]
        for _ in range(variants):
            scale = {g: float(rng.uniform(1 - proportions, 1 + proportions)) for g in _GROUPS}
            copies.append(clip.reproportioned(scale))
        for c in copies:
            pos, body = c.pos[::every], c.body[::every]
            rel = np.einsum("nji,nrj->nri", body, pos - pos[:, :1])
            up = body[:, 1, :]  # the world's up (canonical +y) seen from the body frame
            x = np.concatenate(
                [rel[:, inputs].reshape(len(pos), 3 * k), up, np.ones((len(pos), k))], axis=1
            )
            y = rel[:, 1:].reshape(len(pos), -1)
            out.append((x, y, np.broadcast_to(c.valid[1:], (len(pos), len(OUTPUT_ROLES))).copy()))
    return out


def _label(c: Any) -> str:
    return Path(c).name if isinstance(c, (str, os.PathLike)) else str(getattr(c, "name", "clip"))


def _fit(
    torch: Any,
    x: np.ndarray,
    y: np.ndarray,
    valid: np.ndarray,
    hidden: Sequence[int],
    opts: dict[str, Any],
    show: bool | None,
) -> tuple[MLP, float]:
    epochs, batch_size, seed = opts["epochs"], opts["batch_size"], opts["seed"]
    in_std = x.std(axis=0)
    in_std[3 * len(INPUT_ROLES) + 3 :] = 1.0  # presence flags stay 0/1
    in_std = np.where(in_std > 1e-8, in_std, 1.0)
    mask3 = np.repeat(valid, 3, axis=1)
    cnt = np.maximum(mask3.sum(axis=0), 1)
    out_mean = (y * mask3).sum(axis=0) / cnt
    out_std = np.sqrt((((y - out_mean) * mask3) ** 2).sum(axis=0) / cnt)
    out_std = np.where(out_std > 1e-8, out_std, 1.0)
    was_deterministic = torch.are_deterministic_algorithms_enabled()
    threads = torch.get_num_threads()
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)  # the same bits whatever the machine's core count
    try:
        gen = torch.Generator().manual_seed(seed)
        torch.manual_seed(seed)
        sizes = [N_INPUTS, *hidden, y.shape[1]]
        layers: list[Any] = []
        for i in range(len(sizes) - 1):
            layers.append(torch.nn.Linear(sizes[i], sizes[i + 1]))
            if i < len(sizes) - 2:
                layers.append(torch.nn.ReLU())
        net = torch.nn.Sequential(*layers)
        xt = torch.tensor(x / in_std, dtype=torch.float32)
        yt = torch.tensor((y - out_mean) / out_std, dtype=torch.float32)
        mt = torch.tensor(mask3, dtype=torch.float32)
        n = len(xt)
        steps = epochs * ((n + batch_size - 1) // batch_size)
        opt = torch.optim.AdamW(net.parameters(), lr=opts["lr"], weight_decay=opts["weight_decay"])
        noise = opts["noise"] / torch.tensor(in_std[: 3 * len(INPUT_ROLES)], dtype=torch.float32)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps)
        loss_v = float("nan")
        with progress(epochs, "learn", show=show) as tick:
            for _ in range(epochs):
                order = torch.randperm(n, generator=gen)
                total, count = 0.0, 0
                for start in range(0, n, batch_size):
                    idx = order[start : start + batch_size]
                    xb = xt[idx]
                    if opts["noise"] > 0:
                        k = 3 * len(INPUT_ROLES)
                        jitter = torch.randn(len(idx), k, generator=gen) * noise
                        xb = torch.cat([xb[:, :k] + jitter, xb[:, k:]], dim=1)
                    xb = _hide(xb, gen, torch)
                    err = (net(xb) - yt[idx]) ** 2 * mt[idx]
                    loss = err.sum() / mt[idx].sum()
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                    sched.step()
                    total += float(loss.detach()) * len(idx)
                    count += len(idx)
                loss_v = total / count
                tick(1)
    finally:
        torch.use_deterministic_algorithms(was_deterministic)
        torch.set_num_threads(threads)
    linear = [m for m in net if isinstance(m, torch.nn.Linear)]
    # float32 weights, kept exactly (they were trained in float32)
    weights = [m.weight.detach().numpy().T.astype(np.float32) for m in linear]
    biases = [m.bias.detach().numpy().astype(np.float32) for m in linear]
    zero = np.zeros(N_INPUTS)
    mlp = MLP.from_arrays(weights, biases, zero, in_std, out_mean, out_std)
    return mlp, round(loss_v, 6)
