"""The human pose prior: a network from sparse body targets to a full body-part pose.

:class:`PosePrior` holds the weights (:class:`~._mlp.MLP`, evaluated in numpy: no torch
at inference) and what they were trained on. :meth:`PosePrior.predict` maps a pelvis
pose and the world positions of any of head, hands and feet to every role's position
(:mod:`._body`); :meth:`PosePrior.pose` turns that into a configuration of a given
skeleton (the *fit*: a least-squares IK over every role, see :func:`kinetree.learn.solve`).

Priors are ``.npz`` files: the arrays ``W0, b0, ...``, the input and output scalings,
and ``meta`` (a JSON string: name, version, training clips, seed). :func:`load_prior`
reads one by path or by the name of a shipped prior (:data:`SHIPPED`).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .._cache import PerModel
from ..errors import FileFormatError, InvalidValueError, unknown_name
from ..model import Model
from ._body import N_INPUTS, OUTPUT_ROLES, BodyLayout, mirror_inputs, mirror_outputs
from ._mlp import MLP, cached, read_saved

__all__ = ["FORMAT_VERSION", "SHIPPED", "PosePrior", "layout_of", "load_prior"]

#: Version of the ``.npz`` layout written by :meth:`PosePrior.save`.
FORMAT_VERSION = 1
_DATA = Path(__file__).parent / "data"
#: Priors shipped with kinetree: name -> file (see ``learn/data/README.md``).
SHIPPED = {"human": _DATA / "human.npz"}

_LAYOUTS: PerModel[BodyLayout] = PerModel()


def layout_of(model: Model) -> BodyLayout:
    """The body-part layout of ``model`` (cached per model)."""
    return _LAYOUTS.get_or_build(model, lambda: BodyLayout.of(model))


@dataclass(frozen=True, eq=False)
class PosePrior:
    """A trained pose prior; see the module docstring.

    Attributes:
        mlp: the network (inputs :data:`~._body.N_INPUTS`, outputs 3 per output role).
        meta: what it was trained on (``name``, ``clips``, ``seed``, ``epochs``, ...).
    """

    mlp: MLP
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return str(self.meta.get("name", "prior"))

    def predict(
        self, model: Model, T_world_pelvis: np.ndarray, p_world: dict[str, np.ndarray]
    ) -> dict[str, np.ndarray]:
        """World positions ``{role: (3,)}`` of ``model``'s roles for a pelvis pose (4x4)
        and the world positions of the given input roles (``{"head": p, "wrist_l": p,
        ...}``, the model's length unit); given roles keep their positions."""
        layout = layout_of(model)
        y = self.body_pose(layout.inputs(T_world_pelvis, p_world))
        return layout.placed(T_world_pelvis, y, p_world)

    def body_pose(self, x: np.ndarray) -> np.ndarray:
        """The network's outputs ``(3 * len(OUTPUT_ROLES),)`` (body frame, body heights)
        for one input vector ``(N_INPUTS,)`` (:meth:`~._body.BodyLayout.inputs`).

        The network is asked twice, about the body and about its left-right mirror
        image, and the two answers (the second mirrored back) are averaged: a body is
        symmetric, the network only nearly so (trained on both images, it errs
        differently on each), and the mean is the better guess on held-out subjects
        (``docs/characters.md``). The result is exactly mirror-symmetric."""
        x = np.asarray(x, dtype=np.float64)[None]
        y = self.mlp(x[0])
        y_mirror = self.mlp(mirror_inputs(x)[0])[None]
        back, _ = mirror_outputs(y_mirror, np.ones((1, len(OUTPUT_ROLES)), dtype=bool))
        return 0.5 * (y + back[0])

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the prior to ``path`` (``.npz``); returns the path written."""
        out = Path(path)
        if out.suffix != ".npz":
            out = out.with_suffix(".npz")
        meta = json.dumps({**self.meta, "format": FORMAT_VERSION}, sort_keys=True)
        arrays: dict[str, Any] = dict(self.mlp.arrays())
        for k in arrays:
            if k[0] in "Wb" and np.array_equal(arrays[k].astype(np.float32), arrays[k]):
                arrays[k] = arrays[k].astype(np.float32)  # trained in float32: lossless
        arrays["meta"] = np.array(meta)
        np.savez_compressed(out, **arrays)
        return out

    def start(self, model: Model, targets: dict[str, Any], q0: Any = None) -> np.ndarray:
        """``model``'s configuration ``(nq,)`` of this prior's pose for ``targets``
        (``{frame: target}``): what ``model.ik(targets, prior=self)`` starts from and
        prefers (:class:`kinetree.ik.IKPrior`; :func:`~.pose_ik.fit_pose`)."""
        from .pose_ik import check_finite, fit_pose

        check_finite(targets)
        return fit_pose(model, self, targets, q0)

    def __repr__(self) -> str:
        sizes = [w.shape[1] for w in self.mlp.weights[:-1]]
        return f"PosePrior({self.name!r}, hidden={sizes}, clips={len(self.meta.get('clips', []))})"


def load_prior(name_or_path: str | os.PathLike[str] | PosePrior) -> PosePrior:
    """A :class:`PosePrior` by shipped name (``"human"``) or ``.npz`` path; a
    :class:`PosePrior` is returned as is. Raises
    :class:`~kinetree.errors.UnknownNameError` (listing the shipped names) for a name
    that is neither, :class:`~kinetree.errors.FileFormatError` for a file that is not a
    prior."""
    if isinstance(name_or_path, PosePrior):
        return name_or_path
    if not isinstance(name_or_path, (str, os.PathLike)):
        raise InvalidValueError(
            f"prior must be a name ({', '.join(SHIPPED)}), a .npz path or a PosePrior, "
            f"got {type(name_or_path).__name__}"
        )
    key = os.fspath(name_or_path)
    path = SHIPPED.get(key) if isinstance(name_or_path, str) else None
    if path is None:
        path = Path(key)
        if not path.is_file():
            raise unknown_name("prior", key, SHIPPED, also="or the path of a .npz file")
    return _load(path)


_CACHE: dict[Path, tuple[float, PosePrior]] = {}


def _load(path: Path) -> PosePrior:
    return cached(_CACHE, path, _read)


def _read(path: Path) -> PosePrior:
    mlp, meta = read_saved(path, "pose prior")
    n_out = 3 * len(OUTPUT_ROLES)
    if mlp.weights[0].shape[0] != N_INPUTS or mlp.weights[-1].shape[1] != n_out:
        raise FileFormatError(
            f"{path}: a network of {mlp.weights[0].shape[0]} inputs and "
            f"{mlp.weights[-1].shape[1]} outputs; this kinetree reads priors of {N_INPUTS} "
            f"and {n_out}"
        )
    return PosePrior(mlp, meta)
