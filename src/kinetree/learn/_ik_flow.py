"""The conditional normalizing flow of learned robot IK, evaluated in numpy (no torch).

A flow maps a latent ``z ~ N(0, I)`` of width ``D`` to a normalized configuration ``x``
(the learned joints scaled to [-1, 1] by their limits, then ``D - d`` padding
coordinates that sampling drops), conditioned on pose features ``c`` (the frame's
position and, for a pose-conditioned flow, the first two columns of its rotation;
standardized). It is a stack of
affine couplings (RealNVP, Dinh et al. 2017): layer ``l`` keeps the coordinates
``keep[l]`` and moves ``change[l]``:

    density direction (training, x -> z):   y_change = x_change * exp(s) + t
    sampling direction (inference, z -> x): x_change = (y_change - t) * exp(-s)

with ``(s, t) = MLP_l(x_keep, c)``, ``s`` soft-clamped to ``(-CLAMP, CLAMP)`` by
``CLAMP * tanh(s / CLAMP)``. The MLP has two hidden ReLU layers; its first layer is
split into the rows that read ``x_keep`` (``W1k``) and those that read ``c``
(``W1c``), so the condition's share is computed once per pose, not once per sample.
``kinetree.learn._ik_train`` holds the same network in torch; both read the layout
:func:`weight_names` names, which is also the ``.npz`` file's.

Sampling runs in one compiled kernel (:func:`_sample_kernel`): a seeded solve draws a
few samples per target, where numpy's per-operation overhead (about 100 array
operations) would cost more than the solve. :meth:`Flow.sample_numpy` is the same
arithmetic in numpy, the reference the tests hold the kernel and torch to.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit

__all__ = ["CLAMP", "KINDS", "Flow", "n_features", "pose_features", "weight_names"]

#: Bound of the log-scale ``s`` of each coupling (soft clamp): a step scales a
#: coordinate by at most ``e**CLAMP``, which keeps training stable.
CLAMP = 2.0
#: What a flow can be conditioned on: the whole pose, or the position alone (a target
#: with no orientation, as for a planar arm's point).
KINDS = ("pose", "position")


def weight_names(layer: int) -> tuple[str, ...]:
    """The array names of coupling ``layer``'s MLP, in the ``.npz`` file and in torch."""
    return tuple(f"l{layer}_{n}" for n in ("W1k", "W1c", "b1", "W2", "b2", "W3", "b3"))


def n_features(kind: str) -> int:
    """Width of the features of a ``kind`` condition: 9 for a pose, 3 for a position."""
    return 9 if kind == "pose" else 3


def pose_features(T: np.ndarray, kind: str = "pose") -> np.ndarray:
    """Features ``(..., 9)`` of poses ``(..., 4, 4)``: position [m], then the rotation's
    first and second columns (a continuous encoding of the rotation, unlike angles);
    ``kind="position"``: the position alone ``(..., 3)``."""
    if kind == "position":
        return np.array(T[..., :3, 3])
    return np.concatenate([T[..., :3, 3], T[..., :3, 0], T[..., :3, 1]], axis=-1)


@dataclass(frozen=True, eq=False)
class Flow:
    """A conditional affine-coupling flow's weights (float64), ready to sample.

    Attributes:
        keep, change: per layer, the indices (into the ``width`` coordinates) the
            coupling reads and the ones it moves.
        weights: per layer, ``(W1k, W1c, b1, W2, b2, W3, b3)``; ``W3``'s first
            ``len(change)`` columns give ``s``, the rest ``t``.
        c_mean, c_std: standardization of the pose features.
        width: ``D``, the latent width (learned joints plus padding).
        kind: the condition, one of :data:`KINDS`.
    """

    keep: tuple[np.ndarray, ...]
    change: tuple[np.ndarray, ...]
    weights: tuple[tuple[np.ndarray, ...], ...]
    c_mean: np.ndarray
    c_std: np.ndarray
    width: int
    kind: str = "pose"

    def __post_init__(self) -> None:
        # The kernel's packed copy: every layer padded to the widest keep/change.
        L = len(self.keep)
        H = self.weights[0][2].shape[0] if L else 1
        C = len(self.c_mean)
        nk = max((len(k) for k in self.keep), default=1) or 1
        nc = max((len(c) for c in self.change), default=1) or 1
        keep = np.zeros((L, nk), np.int64)
        change = np.zeros((L, nc), np.int64)
        W1k, W1c = np.zeros((L, nk, H)), np.zeros((L, C, H))
        b1, W2, b2 = np.zeros((L, H)), np.zeros((L, H, H)), np.zeros((L, H))
        W3, b3 = np.zeros((L, H, 2 * nc)), np.zeros((L, 2 * nc))
        for i, (k, c, w) in enumerate(zip(self.keep, self.change, self.weights)):
            keep[i, : len(k)], change[i, : len(c)] = k, c
            W1k[i, : len(k)], W1c[i], b1[i], W2[i], b2[i] = w[0], w[1], w[2], w[3], w[4]
            W3[i, :, : 2 * len(c)], b3[i, : 2 * len(c)] = w[5], w[6]
        counts = np.array(
            [[len(k), len(c)] for k, c in zip(self.keep, self.change)], np.int64
        ).reshape(L, 2)
        object.__setattr__(self, "_packed", (keep, change, counts, W1k, W1c, b1, W2, b2, W3, b3))

    def condition(self, T: np.ndarray) -> np.ndarray:
        """Standardized features ``(B, 9 or 3)`` of poses ``(B, 4, 4)``."""
        return (pose_features(T, self.kind) - self.c_mean) / self.c_std

    def sample(self, z: np.ndarray, c: np.ndarray) -> np.ndarray:
        """Normalized configurations ``x`` ``(B, K, width)`` from latents ``z``
        ``(B, K, width)`` under conditions ``c`` ``(B, 9 or 3)`` (all K samples of row b share
        ``c[b]``); compiled."""
        out = np.empty(z.shape)
        kernel: Any = _sample_kernel
        packed = self._packed  # type: ignore[attr-defined]
        kernel(
            np.ascontiguousarray(z, dtype=np.float64),
            np.ascontiguousarray(c, dtype=np.float64),
            *packed,
            out,
        )
        return out

    def sample_numpy(self, z: np.ndarray, c: np.ndarray) -> np.ndarray:
        """:meth:`sample` in numpy array operations (the reference of the kernel)."""
        B, K, D = z.shape
        x = np.array(z, dtype=np.float64).reshape(B * K, D)
        for keep, change, (W1k, W1c, b1, W2, b2, W3, b3) in zip(
            reversed(self.keep), reversed(self.change), reversed(self.weights)
        ):
            hc = c @ W1c + b1  # (B, H): the condition's share, once per pose
            h = (x[:, keep] @ W1k).reshape(B, K, -1)
            h += hc[:, None, :]
            h = np.maximum(h.reshape(B * K, -1), 0.0)
            h = np.maximum(h @ W2 + b2, 0.0)
            out = h @ W3 + b3
            n = len(change)
            s = CLAMP * np.tanh(out[:, :n] / CLAMP)
            x[:, change] = (x[:, change] - out[:, n:]) * np.exp(-s)
        return x.reshape(B, K, D)

    def log_density(self, x: np.ndarray, c: np.ndarray) -> np.ndarray:
        """``log p(x | c)`` ``(B,)`` of normalized configurations ``x`` ``(B, width)``
        (the density direction; tests compare it with torch's)."""
        x = np.array(x, dtype=np.float64)
        logdet = np.zeros(len(x))
        for keep, change, (W1k, W1c, b1, W2, b2, W3, b3) in zip(
            self.keep, self.change, self.weights
        ):
            h = np.maximum(x[:, keep] @ W1k + c @ W1c + b1, 0.0)
            h = np.maximum(h @ W2 + b2, 0.0)
            out = h @ W3 + b3
            n = len(change)
            s = CLAMP * np.tanh(out[:, :n] / CLAMP)
            x[:, change] = x[:, change] * np.exp(s) + out[:, n:]
            logdet += s.sum(axis=1)
        return -0.5 * (x * x).sum(axis=1) - 0.5 * self.width * np.log(2 * np.pi) + logdet


@njit(cache=True)
def _sample_kernel(z, c, keep, change, counts, W1k, W1c, b1, W2, b2, W3, b3, out):
    """:meth:`Flow.sample` for every row ``b`` and sample ``k``: the couplings inverted
    from the last to the first, one sample at a time (no temporaries per layer)."""
    B, K, _ = z.shape
    L, H = b1.shape
    C = c.shape[1]
    hc = np.empty(H)
    h1 = np.empty(H)
    h2 = np.empty(H)
    o = np.empty(W3.shape[2])
    out[:] = z
    for b in range(B):
        for layer in range(L - 1, -1, -1):
            for j in range(H):  # the condition's share, once per pose and layer
                hc[j] = b1[layer, j]
            for i in range(C):
                ci = c[b, i]
                for j in range(H):
                    hc[j] += ci * W1c[layer, i, j]
            nk, nc = counts[layer, 0], counts[layer, 1]
            for k in range(K):
                x = out[b, k]
                for j in range(H):
                    h1[j] = hc[j]
                for i in range(nk):
                    xi = x[keep[layer, i]]
                    for j in range(H):
                        h1[j] += xi * W1k[layer, i, j]
                for j in range(H):
                    h2[j] = b2[layer, j]
                for i in range(H):
                    hi = h1[i]
                    if hi > 0.0:  # ReLU: a zero unit adds nothing
                        for j in range(H):
                            h2[j] += hi * W2[layer, i, j]
                for j in range(2 * nc):
                    o[j] = b3[layer, j]
                for i in range(H):
                    hi = h2[i]
                    if hi > 0.0:
                        for j in range(2 * nc):
                            o[j] += hi * W3[layer, i, j]
                for m in range(nc):
                    s = CLAMP * math.tanh(o[m] / CLAMP)
                    idx = change[layer, m]
                    x[idx] = (x[idx] - o[nc + m]) * math.exp(-s)
