"""Training of the learned-IK flow with PyTorch (the ``learn`` extra); the only module of
learned robot IK that imports torch.

The network is :mod:`._ik_flow`'s, written again with torch layers of the same names
and shapes; :func:`fit` trains it by maximum likelihood on (configuration, pose) pairs
and hands back the weights as float64 numpy arrays for :class:`._ik_flow.Flow`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import UnsupportedError
from ._ik_flow import CLAMP, weight_names

__all__ = ["TorchFlow", "fit", "import_torch"]


def import_torch() -> Any:
    """``torch``, or an :class:`UnsupportedError` saying how to install it."""
    try:
        import torch
    except ImportError:
        raise UnsupportedError(
            "training learned IK needs PyTorch: pip install 'kinetree[learn]' (the CPU wheel "
            "is enough); using a trained one (kinetree.learn.load_ik) does not"
        ) from None
    return torch


def _module(
    torch: Any, keep: list[np.ndarray], change: list[np.ndarray], hidden: int, n_cond: int
) -> Any:
    """A ``torch.nn.Module`` of the flow. For speed it holds each coupling at full width
    with a 0/1 mask (``x * m`` in, ``s`` and ``t`` for every coordinate out, masked by
    ``1 - m``): the coordinates a coupling keeps get zero ``s`` and ``t``, the rows of
    ``W1k`` that read moved coordinates see zeros. :meth:`export` slices out
    :mod:`._ik_flow`'s compact layout."""
    nn = torch.nn
    D = sum(len(k) for k in keep[:1]) + sum(len(c) for c in change[:1])

    class _TorchFlow(nn.Module):  # type: ignore[name-defined]
        def __init__(self) -> None:
            super().__init__()
            masks = torch.zeros((len(keep), D))
            for layer, k in enumerate(keep):
                masks[layer, torch.as_tensor(k, dtype=torch.long)] = 1.0
            self.register_buffer("masks", masks)
            self.first = nn.ModuleList(nn.Linear(D + n_cond, hidden) for _ in keep)
            self.second = nn.ModuleList(nn.Linear(hidden, hidden) for _ in keep)
            self.last = nn.ModuleList(nn.Linear(hidden, 2 * D) for _ in keep)
            for lin in self.last:  # every coupling starts as the identity
                nn.init.zeros_(lin.weight)
                nn.init.zeros_(lin.bias)

        def coupling(self, layer: int, x: Any, c: Any) -> tuple[Any, Any, Any]:
            """Mask, log-scale ``s`` and shift ``t`` of coupling ``layer`` at ``x``."""
            m = self.masks[layer]
            h = torch.relu(self.first[layer](torch.cat([x * m, c], dim=1)))
            h = torch.relu(self.second[layer](h))
            out = self.last[layer](h)
            s = CLAMP * torch.tanh(out[:, :D] / CLAMP) * (1.0 - m)
            return m, s, out[:, D:] * (1.0 - m)

        def forward(self, x: Any, c: Any) -> tuple[Any, Any]:
            """Latents ``z`` and ``log |det dz/dx|`` of configurations ``x``."""
            logdet = torch.zeros(x.shape[0], dtype=x.dtype)
            for layer in range(len(keep)):
                _, s, t = self.coupling(layer, x, c)
                x = x * torch.exp(s) + t
                logdet = logdet + s.sum(dim=1)
            return x, logdet

        def inverse(self, z: Any, c: Any) -> Any:
            """Configurations ``x`` of latents ``z`` (the sampling direction)."""
            x = z
            for layer in reversed(range(len(keep))):
                _, s, t = self.coupling(layer, x, c)
                x = (x - t) * torch.exp(-s)
            return x

        def export(self) -> dict[str, np.ndarray]:
            """Float64 weights in :mod:`._ik_flow`'s layout, by :func:`weight_names`."""
            out: dict[str, np.ndarray] = {}
            for layer, (k, ch) in enumerate(zip(keep, change)):
                W1 = self.first[layer].weight.detach().double().numpy().T  # (D + n_cond, H)
                W3 = self.last[layer].weight.detach().double().numpy().T  # (H, 2 D)
                b3 = self.last[layer].bias.detach().double().numpy()
                cols = np.concatenate([ch, D + ch])
                arrays = (
                    W1[k],
                    W1[D:],
                    self.first[layer].bias.detach().double().numpy(),
                    self.second[layer].weight.detach().double().numpy().T,
                    self.second[layer].bias.detach().double().numpy(),
                    W3[:, cols],
                    b3[cols],
                )
                for name, a in zip(weight_names(layer), arrays):
                    out[name] = np.ascontiguousarray(a)
            return out

    return _TorchFlow()


TorchFlow = _module  # the factory: TorchFlow(torch, keep, change, hidden, n_cond)


def nll(flow: Any, x: Any, c: Any) -> Any:
    """Mean negative log-likelihood per coordinate of ``x`` given ``c`` (nats)."""
    z, logdet = flow(x, c)
    D = x.shape[1]
    return (0.5 * (z * z).sum(dim=1) - logdet).mean() / D + 0.5 * math.log(2 * math.pi)


def fit(
    X: np.ndarray,
    C: np.ndarray,
    keep: list[np.ndarray],
    change: list[np.ndarray],
    *,
    hidden: int,
    steps: int,
    batch: int,
    lr: float,
    noise: float,
    seed: int,
    tick: Callable[[int], None],
) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """Train the flow on normalized configurations ``X`` ``(N, D)`` and conditions ``C``
    ``(N, 9 or 3)``; returns the float64 weights by name and a summary (final training and
    held-out negative log-likelihood per coordinate, nats).

    The last 10 % of the rows are held out. Each step draws ``batch`` rows and adds
    Gaussian noise of std ``noise`` to them (a configuration given a pose lies on a
    manifold of the redundancy's dimension: without the noise its density is not
    finite). Adam with a cosine-decayed learning rate and gradient clipping.
    """
    torch = import_torch()
    threads = torch.get_num_threads()
    # One thread: the network is small, so its operations are too short to share, and
    # threads that wait on a busy machine cost far more than they save (a step took 40x
    # longer with two threads on a shared 2-core VM). The sums then also run in one order.
    torch.set_num_threads(1)
    try:
        return _fit(
            torch,
            X,
            C,
            keep,
            change,
            hidden=hidden,
            steps=steps,
            batch=batch,
            lr=lr,
            noise=noise,
            seed=seed,
            tick=tick,
        )
    finally:
        torch.set_num_threads(threads)


def _fit(
    torch: Any,
    X: np.ndarray,
    C: np.ndarray,
    keep: list[np.ndarray],
    change: list[np.ndarray],
    *,
    hidden: int,
    steps: int,
    batch: int,
    lr: float,
    noise: float,
    seed: int,
    tick: Callable[[int], None],
) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """:func:`fit` with torch imported and its threads set."""
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    n_val = max(1, len(X) // 10)
    Xt = torch.as_tensor(X[:-n_val], dtype=torch.float32)
    Ct = torch.as_tensor(C[:-n_val], dtype=torch.float32)
    Xv = torch.as_tensor(X[-n_val:], dtype=torch.float32)
    Cv = torch.as_tensor(C[-n_val:], dtype=torch.float32)
    flow = _module(torch, keep, change, hidden, C.shape[1])
    opt = torch.optim.Adam(flow.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda i: 0.02 + 0.98 * 0.5 * (1 + math.cos(math.pi * min(i, steps) / steps))
    )
    loss = torch.zeros(())
    for _ in range(steps):
        idx = torch.randint(0, len(Xt), (batch,), generator=gen)
        xb = Xt[idx] + noise * torch.randn((batch, Xt.shape[1]), generator=gen)
        loss = nll(flow, xb, Ct[idx])
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(flow.parameters(), 1.0)
        opt.step()
        sched.step()
        tick(1)
    with torch.no_grad():
        xv = Xv + noise * torch.randn(Xv.shape, generator=gen)
        held_out = float(nll(flow, xv, Cv))
    return flow.export(), {"train_nll": float(loss.detach()), "held_out_nll": held_out}
