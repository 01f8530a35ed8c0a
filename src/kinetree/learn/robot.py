"""Learned IK for robots: a conditional distribution of configurations given a pose,
learned from the model's own forward kinematics (IKFlow, Ames et al. 2022).

    learned = kinetree.learn.train_ik(panda, "panda_hand", seed=0)   # torch, minutes
    learned.save("panda_ik.npz"); learned = kinetree.learn.load_ik("panda_ik.npz")
    Q = learned.sample(T, 16)                          # (16, 7) configurations, numpy
    model.ik(T, seeds=learned)                         # learned starts, then random restarts
    model.ik_many(T, 50, seeds=learned)                # distinct exact branches

Why a normalizing flow: IK of a redundant arm has a continuum of solutions per pose, and
of any arm several separate branches (elbow up and down, wrist flips). A regression
network averages branches into a configuration that solves none of them; a flow trained
by maximum likelihood must put probability on every configuration of the training data,
so every branch that FK samples reach gets samples (mode covering), and sampling is one
pass through the network, cheap enough to seed every solve. A mixture density network
would also cover branches but needs a number of components chosen per robot; a
diffusion model needs tens of network passes per sample.

The flow is trained with PyTorch (``kinetree[learn]``); sampling is numpy
(:mod:`._ik_flow`), so solving with a trained model needs no torch.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from .._cache import PerModel
from .._progress import progress
from ..errors import FileFormatError, InvalidValueError, ShapeError, UnsupportedError
from ..model import Model
from ._ik_flow import KINDS, Flow, pose_features, weight_names

__all__ = ["LearnedIK", "load_ik", "train_ik"]

#: Version of the ``.npz`` layout written by :meth:`LearnedIK.save`.
FORMAT_VERSION = 1
#: Most samples one :meth:`LearnedIK.sample` call draws per pose.
MAX_SAMPLES = 1_000_000


class LearnedIK:
    """A trained conditional flow: configurations of ``joint_names`` given the pose of
    ``frame`` (both in the model's root frame).

    Attributes:
        frame: the frame whose pose conditions the samples.
        conditions: ``"pose"`` (position and orientation) or ``"position"``.
        joint_names: the learned coordinates, in the order of a sample's columns.
        lower, upper: their sampling range [rad or m] (the limits; 2 pi or 2 m spans
            for unlimited joints); samples are clipped into it.
        info: how it was trained: samples, steps, seed, training seconds, final
            training and held-out negative log-likelihood (nats per coordinate).
    """

    def __init__(
        self,
        flow: Flow,
        frame: str,
        joint_names: tuple[str, ...],
        lower: np.ndarray,
        upper: np.ndarray,
        info: dict[str, Any],
    ) -> None:
        self.flow = flow
        self.frame = frame
        self.joint_names = joint_names
        self.lower = lower
        self.upper = upper
        self.info = info
        self._mid = 0.5 * (lower + upper)
        self._half = 0.5 * (upper - lower)
        #: The latents of the last ``configurations`` call by (n, seed, temperature): a loop
        #: passes the same seed every call, and drawing costs more than the flow.
        self._latents: tuple[int, int, float, np.ndarray] = (0, -1, 1.0, np.empty((1, 0, 0)))
        self._columns: PerModel[np.ndarray] = PerModel()

    @property
    def conditions(self) -> str:
        """What the samples are conditioned on: ``"pose"`` or ``"position"``."""
        return self.flow.kind

    def __repr__(self) -> str:
        return (
            f"LearnedIK(frame={self.frame!r}, conditions={self.conditions!r}, "
            f"joints={len(self.joint_names)}, layers={len(self.flow.keep)}, "
            f"held_out_nll={self.info.get('held_out_nll')})"
        )

    # --- sampling ---------------------------------------------------------------------

    def sample(
        self, T: Any, n: int, *, seed: int | np.random.Generator = 0, temperature: float = 1.0
    ) -> np.ndarray:
        """``n`` configurations of the learned joints for each pose: ``(..., n, d)``
        [rad or m] for poses ``(..., 4, 4)``, within :attr:`lower`/:attr:`upper` (a
        position-conditioned flow reads only the poses' translation).

        ``temperature`` scales the latent's standard deviation (below 1: fewer, more
        typical samples; 1: the learned distribution)."""
        P = _poses(T)
        n = _count("n", n, 1, MAX_SAMPLES)
        t = float(temperature) if isinstance(temperature, (int, float)) else np.nan
        if isinstance(temperature, bool) or not (np.isfinite(t) and t >= 0):
            raise InvalidValueError(
                f"temperature must be a finite number >= 0, got {temperature!r}"
            )
        batch = P.shape[:-2]
        Pb = P.reshape(-1, 4, 4)
        z = t * np.random.default_rng(seed).standard_normal((len(Pb), n, self.flow.width))
        return self._map(z, Pb).reshape(*batch, n, len(self.joint_names))

    def _map(self, z: np.ndarray, Pb: np.ndarray) -> np.ndarray:
        """Configurations ``(B, K, d)`` of latents ``z`` ``(B, K, width)`` given poses ``Pb``
        ``(B, 4, 4)``: the flow, then its [-1, 1] coordinates back to joint units, clipped."""
        x = self.flow.sample(z, self.flow.condition(Pb))[..., : len(self.joint_names)]
        q = self._mid + self._half * x
        return np.clip(q, self.lower, self.upper)

    def configurations(
        self,
        model: Model,
        T: np.ndarray,
        n: int,
        q0: np.ndarray,
        seed: int,
        temperature: float = 1.0,
        rank: bool = True,
    ) -> np.ndarray:
        """``n`` full configurations ``(n, nq)`` for the pose ``T`` (4, 4): ``q0`` with the
        learned joints sampled (latent std ``temperature``), ordered by how close their
        ``frame`` lands to ``T`` (closest first; ``rank=False``: in draw order, no FK).
        The seed source of ``Model.ik(seeds=...)`` and ``ik_many``; the caller has checked
        ``T``."""
        cols = self.columns(model)
        n_last, seed_last, t_last, z = self._latents
        if n_last != n or seed_last != seed or t_last != temperature:
            z = temperature * np.random.default_rng(seed).standard_normal((1, n, self.flow.width))
            self._latents = (n, seed, temperature, z)
        T = np.asarray(T, dtype=np.float64)
        x = self.flow.sample(z, self.flow.condition(T[None]))[0, :, : len(cols)]
        q = self._mid + self._half * x
        np.minimum(q, self.upper, out=q)
        np.maximum(q, self.lower, out=q)
        Q = np.empty((n, len(q0)))
        Q[:] = q0
        Q[:, cols] = q
        if not rank:
            return Q
        # Rank in the flow's own feature space: position and rotation, standardized.
        kind = self.flow.kind
        f = pose_features(model.fk(Q, self.frame), kind)
        f -= pose_features(T, kind)
        f /= self.flow.c_std
        return Q[np.argsort(np.einsum("ij,ij->i", f, f), kind="stable")]

    def columns(self, model: Model) -> np.ndarray:
        """Indices into ``model``'s ``q`` of the learned joints; raises when ``model`` lacks
        the frame or a joint (a flow trained on another robot)."""
        cols = self._columns.get(model)
        if cols is None:
            if not isinstance(model, Model):
                raise InvalidValueError(
                    f"model must be a kinetree.Model, got {type(model).__name__}"
                )
            model.frame_index(self.frame)  # UnknownNameError listing the frames
            missing = [j for j in self.joint_names if j not in model.joint_names]
            if missing:
                raise InvalidValueError(
                    f"this learned IK was trained on joints the model {model.name!r} lacks: "
                    f"{', '.join(missing)}; the model's joints are: {', '.join(model.joint_names)}"
                )
            chain = self.info.get("chain")  # absent in files written before it was kept
            if chain is not None and chain != chain_digest(model, self.frame, self.joint_names):
                raise InvalidValueError(
                    f"this learned IK was trained on the model {self.info.get('model')!r}, whose "
                    f"chain to {self.frame!r} is not {model.name!r}'s (other link lengths, "
                    "axes or joints, with the same names): its samples would start far from "
                    "the target; learn seeds for this model (kinetree.learn.train_ik)"
                )
            cols = np.array([model.joint_names.index(j) for j in self.joint_names])
            self._columns.put(model, cols)
        return cols

    # --- files ------------------------------------------------------------------------

    def save(self, path: str | Path) -> Path:
        """Write the weights and metadata to ``path`` (``.npz``, no pickles); returns it."""
        path = Path(path)
        arrays: dict[str, np.ndarray] = {
            "c_mean": self.flow.c_mean,
            "c_std": self.flow.c_std,
            "lower": self.lower,
            "upper": self.upper,
        }
        for layer, (k, c, w) in enumerate(zip(self.flow.keep, self.flow.change, self.flow.weights)):
            arrays[f"l{layer}_keep"], arrays[f"l{layer}_change"] = k, c
            arrays.update(zip(weight_names(layer), w))
        meta = {
            "format": "kinetree-learned-ik",
            "version": FORMAT_VERSION,
            "frame": self.frame,
            "joint_names": list(self.joint_names),
            "width": self.flow.width,
            "layers": len(self.flow.keep),
            "conditions": self.flow.kind,
            "info": self.info,
        }
        arrays["meta"] = np.array(json.dumps(meta))
        with path.open("wb") as fh:
            np.savez_compressed(fh, **arrays)  # type: ignore[arg-type]
        return path


def load_ik(path: str | Path) -> LearnedIK:
    """A :class:`LearnedIK` saved by :meth:`LearnedIK.save` (numpy only, no torch)."""
    try:
        with np.load(Path(path), allow_pickle=False) as z:
            data = {k: z[k] for k in z.files}
        meta = json.loads(str(data["meta"]))
        if meta.get("format") != "kinetree-learned-ik" or meta.get("version") != FORMAT_VERSION:
            raise FileFormatError(
                f"{path}: not a kinetree learned-IK file of version {FORMAT_VERSION}"
            )
        layers = int(meta["layers"])
        keep = tuple(data[f"l{i}_keep"].astype(np.int64) for i in range(layers))
        change = tuple(data[f"l{i}_change"].astype(np.int64) for i in range(layers))
        weights = tuple(
            tuple(data[n].astype(np.float64) for n in weight_names(i)) for i in range(layers)
        )
        kind = str(meta["conditions"])
        if kind not in KINDS:
            raise FileFormatError(f"{path}: unknown condition {kind!r}; known: {', '.join(KINDS)}")
        flow = Flow(keep, change, weights, data["c_mean"], data["c_std"], int(meta["width"]), kind)
        return LearnedIK(
            flow,
            str(meta["frame"]),
            tuple(meta["joint_names"]),
            data["lower"],
            data["upper"],
            dict(meta["info"]),
        )
    except FileFormatError:
        raise
    except (OSError, KeyError, ValueError, TypeError) as e:
        raise FileFormatError(f"{path}: cannot read a learned-IK file ({e})") from None


# --- training -------------------------------------------------------------------------------


def train_ik(
    model: Model,
    frame: str | None = None,
    *,
    active: str | list[str] | tuple[str, ...] | None = None,
    conditions: str = "pose",
    samples: int = 200_000,
    steps: int = 4000,
    batch: int = 512,
    hidden: int = 64,
    layers: int = 8,
    pad: int = 2,
    lr: float = 2e-3,
    noise: float = 0.01,
    seed: int = 0,
    progress_bar: bool | None = None,
) -> LearnedIK:
    """Learn configurations of ``active`` given the pose of ``frame`` from FK samples.

    ``samples`` configurations are drawn uniformly within the limits (other joints at
    the neutral configuration), posed by FK, and a conditional normalizing flow (see the
    module docstring) is fitted to them by maximum likelihood with PyTorch; the result
    samples with numpy. Deterministic for a ``seed`` (on the same torch build and
    thread count).

    Args:
        frame: the conditioning frame (default: the first end effector).
        active: the learned joints (names, groups or presets); default: every joint that
            moves ``frame``.
        conditions: ``"pose"`` (position and orientation of ``frame``) or
            ``"position"`` (its position alone: targets without orientation).
        samples: FK samples (10 % are held out to report the held-out likelihood).
        steps, batch, lr: Adam steps, rows per step, peak learning rate (cosine decay).
        hidden, layers: width of each coupling's two hidden layers, number of couplings.
        pad: latent coordinates beyond the learned joints (room for the flow to separate
            branches; dropped when sampling).
        noise: std of the Gaussian noise added to the normalized configurations while
            training (the solutions of one pose lie on a manifold: without it their
            density is not finite).
        progress_bar: a bar on stderr (None: on a terminal; see ``kinetree._progress``).
    """
    if not isinstance(model, Model):
        raise InvalidValueError(f"model must be a kinetree.Model, got {type(model).__name__}")
    name = frame if frame is not None else model.end_effectors[0]
    model.frame_index(name)
    cols = _learned_columns(model, name, active)
    if not isinstance(conditions, str) or conditions not in KINDS:
        raise InvalidValueError(f"conditions must be one of {', '.join(KINDS)}, got {conditions!r}")
    samples = _count("samples", samples, 100, 100_000_000)
    steps = _count("steps", steps, 1, 10**8)
    batch = _count("batch", batch, 1, 10**6)
    hidden = _count("hidden", hidden, 1, 4096)
    layers = _count("layers", layers, 1, 256)
    pad = _count("pad", pad, 0, 64)
    seed = _count("seed", seed, 0, 2**63 - 1)
    for key, v in (("lr", lr), ("noise", noise)):
        if (
            isinstance(v, bool)
            or not isinstance(v, (int, float))
            or not (np.isfinite(v) and v >= 0)
        ):
            raise InvalidValueError(f"{key} must be a finite number >= 0, got {v!r}")
    if lr == 0:
        raise InvalidValueError("lr must be > 0")
    from ._ik_train import fit, import_torch

    import_torch()  # the install hint before any sampling
    t0 = time.perf_counter()
    lo_all, hi_all = model.sampling_bounds()
    lower, upper = lo_all[cols], hi_all[cols]
    rng = np.random.default_rng(seed)
    Q = np.repeat(model.q_neutral.reshape(1, -1), samples, axis=0)
    Q[:, cols] = lower + (upper - lower) * rng.random((samples, len(cols)))
    C_raw = pose_features(model.fk(Q, name), conditions)
    c_mean, c_std = C_raw.mean(axis=0), np.maximum(C_raw.std(axis=0), 1e-6)
    width = len(cols) + pad
    X = np.zeros((samples, width))
    X[:, : len(cols)] = 2.0 * (Q[:, cols] - lower) / (upper - lower) - 1.0
    keep, change = _partitions(width, layers, rng)
    with progress(steps, "train-ik", show=progress_bar) as tick:
        weights, summary = fit(
            X,
            (C_raw - c_mean) / c_std,
            keep,
            change,
            hidden=hidden,
            steps=steps,
            batch=batch,
            lr=float(lr),
            noise=float(noise),
            seed=seed,
            tick=tick,
        )
    flow = Flow(
        tuple(keep),
        tuple(change),
        tuple(tuple(weights[n] for n in weight_names(i)) for i in range(layers)),
        c_mean,
        c_std,
        width,
        conditions,
    )
    info: dict[str, Any] = {
        "samples": samples,
        "steps": steps,
        "batch": batch,
        "hidden": hidden,
        "layers": layers,
        "pad": pad,
        "lr": float(lr),
        "noise": float(noise),
        "seed": seed,
        "seconds": round(time.perf_counter() - t0, 2),
        **summary,
    }
    names = tuple(model.joint_names[c] for c in cols)
    info["model"] = model.name
    info["chain"] = chain_digest(model, name, names)
    return LearnedIK(flow, name, names, lower, upper, info)


def chain_digest(model: Model, frame: str, joint_names: tuple[str, ...]) -> str:
    """A fingerprint of what a flow of ``joint_names`` given ``frame``'s pose learned of
    ``model``: every node from the first one a learned coordinate moves down to
    ``frame`` (its origin to 1e-9 of the model's unit, axis, joint type, coordinate name,
    mimic scale and offset). Two models agree on it when the same configurations put
    ``frame`` at the same pose relative to that node."""
    path = model.ancestors(model.frame_index(frame))
    learned = {model.joint_names.index(j) for j in joint_names if j in model.joint_names}
    first = next((i for i, k in enumerate(path) if model.q_index[k] in learned), 0)
    h = hashlib.sha1()
    for k in path[first:].tolist():
        qi = int(model.q_index[k])
        h.update((np.round(model.origin[k], 9) + 0.0).tobytes())  # + 0.0: no -0.0
        h.update((np.round(model.axis[k], 9) + 0.0).tobytes())
        h.update(np.array([model.joint_type[k], model.q_scale[k], model.q_offset[k]]).tobytes())
        h.update((model.joint_names[qi] if qi >= 0 else "").encode() + b"\0")
    return h.hexdigest()[:16]


def _learned_columns(model: Model, frame: str, active: Any) -> np.ndarray:
    """The coordinates to learn: ``active``'s, or those of the joints moving ``frame``."""
    if active is None:
        names = model.chain(frame)
        if not names:
            raise InvalidValueError(f"frame {frame!r} is not moved by any joint: nothing to learn")
        cols = model.joint_indices(list(names))
    else:
        cols = np.nonzero(model.active_mask(active))[0]
        if cols.size == 0:
            raise InvalidValueError("active= names no joint: nothing to learn")
    if np.any(model.qv.quaternion_mask[cols]):
        raise UnsupportedError(
            "learned IK samples one-number coordinates (revolute, prismatic); leave the "
            "quaternion (ball or free) joints out of active="
        )
    return cols


def _partitions(
    width: int, layers: int, rng: np.random.Generator
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per coupling, the coordinates it keeps and those it moves: a random split into
    halves, the next layer moving the other half (every coordinate moves once per pair)."""
    keep, change = [], []
    perm = rng.permutation(width)
    for layer in range(layers):
        if layer % 2 == 0:
            perm = rng.permutation(width)
        half = width // 2 if width > 1 else 0
        a, b = np.sort(perm[:half]), np.sort(perm[half:])
        k, c = (a, b) if layer % 2 == 0 else (b, a)
        if c.size == 0:  # width 1 on an odd layer: move the one coordinate
            k, c = c, k
        keep.append(k.astype(np.int64))
        change.append(c.astype(np.int64))
    return keep, change


def _poses(T: Any) -> np.ndarray:
    """``T`` as finite float64 poses ``(..., 4, 4)``."""
    try:
        P = np.asarray(T, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidValueError(f"T must be a 4x4 pose or a batch of them, got {T!r}") from None
    if P.ndim < 2 or P.shape[-2:] != (4, 4):
        raise ShapeError(f"T must have shape (..., 4, 4), got {P.shape}")
    if not np.all(np.isfinite(P)):
        raise InvalidValueError("T contains NaN or inf")
    return P


def _count(name: str, v: Any, lo: int, hi: int) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not lo <= v <= hi:
        raise InvalidValueError(f"{name} must be an integer in [{lo}, {hi}], got {v!r}")
    return int(v)
