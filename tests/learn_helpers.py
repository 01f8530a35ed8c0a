"""Shared helpers for the learned-model tests (tests/learn/)."""

from __future__ import annotations

from typing import Any

import numpy as np


def torch_reference(mlp: Any, x: np.ndarray) -> np.ndarray:
    """What torch computes for ``mlp`` (a shipped numpy network: ``weights``, ``biases``,
    ReLU between layers, inputs scaled by ``in_std``, outputs by ``out_std`` and
    ``out_mean``) at inputs ``x`` (n, inputs): the oracle of the numpy inference."""
    import torch

    layers: list[Any] = []
    for i, (w, b) in enumerate(zip(mlp.weights, mlp.biases, strict=True)):
        lin = torch.nn.Linear(*w.shape, dtype=torch.float64)
        with torch.no_grad():
            lin.weight.copy_(torch.tensor(w.T))
            lin.bias.copy_(torch.tensor(b))
        layers += [lin] if i == len(mlp.weights) - 1 else [lin, torch.nn.ReLU()]
    net = torch.nn.Sequential(*layers)
    with torch.no_grad():
        return net(torch.tensor(x / mlp.in_std)).numpy() * mlp.out_std + mlp.out_mean
