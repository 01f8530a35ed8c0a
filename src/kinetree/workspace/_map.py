"""The reachability map: a voxel grid of reachability indices and manipulabilities, saved
as ``.npz``.

Voxel ``(i, j, k)`` is centred at ``origin + resolution * (i, j, k)`` [m] (world frame).
Its **reachability index** is the fraction of the tried orientations for which IK put
the frame at the voxel centre with that orientation (Zacharias et al., "Capturing robot
workspace structure: representing robot capabilities", IROS 2007, use the same index);
its **manipulability** is the largest Yoshikawa measure ``sqrt(det(J J^T))`` over those
solutions (``J``: the frame's geometric Jacobian over the active joints, 6 rows, or
the 3 position rows for a position-only map; when ``J`` has fewer columns than rows,
the product of its singular values, ``sqrt(det(J^T J))``; one convention with
:func:`kinetree.kinematics.jacobian_manipulability`), 0 where nothing was solved.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..errors import FileFormatError, InvalidValueError, ShapeError
from ..io._files import as_path

__all__ = ["FORMAT", "ReachabilityMap", "load"]

#: The ``format`` entry of a saved map (bumped if the layout changes).
FORMAT = "kinetree.reachability/1"
#: The unit of :attr:`ReachabilityMap.reachable_size` by its dimensions.
_UNITS = {1: "m", 2: "m^2", 3: "m^3"}
_ARRAYS = ("index", "manipulability", "q_best", "inside", "origin", "center", "orientations")


@dataclass(frozen=True, eq=False)
class ReachabilityMap:
    """A voxel grid over a frame's reach; see the module docstring for the measures.

    Attributes:
        index: ``(nx, ny, nz)`` fraction of orientations solved, in [0, 1].
        manipulability: ``(nx, ny, nz)`` best Yoshikawa measure at a solution (0: none)
            [m^3 rad^3 for a 6-row Jacobian; m^3 for position only].
        q_best: ``(nx, ny, nz, nq)`` the solution with that manipulability (the model's
            neutral configuration where nothing was solved).
        inside: ``(nx, ny, nz)`` voxels whose centre lies within the reach sphere (the
            only ones solved; the others are out of reach by construction).
        origin: ``(3,)`` centre of voxel ``(0, 0, 0)`` [m].
        resolution: voxel edge [m].
        center: ``(3,)`` centre of the reach sphere: a point no active joint moves [m].
        radius: the sphere's radius: the chain's link lengths summed [m].
        orientations: ``(n, 3, 3)`` rotations tried per voxel (``(0, 3, 3)``: position
            only, the index is then 0 or 1).
        model: the model's name; frame: the frame mapped.
        settings: how it was made (IK options, seed, device, elapsed seconds, ...).
    """

    index: np.ndarray
    manipulability: np.ndarray
    q_best: np.ndarray
    inside: np.ndarray
    origin: np.ndarray
    resolution: float
    center: np.ndarray
    radius: float
    orientations: np.ndarray
    model: str
    frame: str
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def shape(self) -> tuple[int, int, int]:
        """Voxels along x, y, z."""
        nx, ny, nz = self.index.shape
        return nx, ny, nz

    def axes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Voxel centre coordinates along x, y and z [m]."""
        x, y, z = (
            self.origin[d] + self.resolution * np.arange(n) for d, n in enumerate(self.shape)
        )
        return x, y, z

    def centers(self) -> np.ndarray:
        """Voxel centres ``(nx, ny, nz, 3)`` [m]."""
        x, y, z = self.axes()
        return np.stack(np.meshgrid(x, y, z, indexing="ij"), axis=-1)

    def voxel(self, points: ArrayLike) -> np.ndarray:
        """Integer voxel indices ``(..., 3)`` of world points ``(..., 3)`` [m] (nearest
        centre; may lie outside the grid)."""
        p = np.asarray(points, dtype=np.float64)
        if p.shape[-1:] != (3,):
            raise ShapeError(f"points must have shape (..., 3), got {p.shape}")
        return np.rint((p - self.origin) / self.resolution).astype(np.int64)

    def index_at(self, points: ArrayLike) -> np.ndarray:
        """Reachability index at world points ``(..., 3)`` [m]: their voxel's, 0 outside
        the grid."""
        ijk = self.voxel(points)
        ok = np.all((ijk >= 0) & (ijk < np.array(self.index.shape)), axis=-1)
        out = np.zeros(ijk.shape[:-1])
        i, j, k = (np.where(ok, ijk[..., d], 0) for d in range(3))
        out[ok] = self.index[i, j, k][ok]
        return out

    @property
    def reachable_volume(self) -> float:
        """Volume of the voxels with a non-zero index [m^3]."""
        return float(np.count_nonzero(self.index > 0)) * self.resolution**3

    @property
    def reachable_dims(self) -> int:
        """In how many grid directions the reachable voxels spread: 3 for a spatial
        arm, 2 for a planar one (its reach is one layer of voxels: an area), 1 for a line
        (3 when fewer than two voxels are reachable)."""
        ijk = np.argwhere(self.index > 0)
        if len(ijk) < 2:
            return 3
        return int(np.count_nonzero(ijk.max(axis=0) > ijk.min(axis=0)))

    @property
    def reachable_size(self) -> float:
        """The reachable voxels' volume [m^3], or for a reach that spreads in fewer
        directions (:attr:`reachable_dims`), their area [m^2] or length [m]."""
        d = self.reachable_dims
        return float(np.count_nonzero(self.index > 0)) * self.resolution**d

    def summary(self) -> str:
        """One line: grid, reachable voxels, mean index over them, time taken."""
        n = int(np.count_nonzero(self.index > 0))
        mean = float(self.index[self.index > 0].mean()) if n else 0.0
        secs = self.settings.get("elapsed")
        took = f", {secs:.1f} s" if isinstance(secs, int | float) else ""
        return (
            f"{self.model}/{self.frame}: {'x'.join(map(str, self.shape))} voxels of "
            f"{self.resolution:g} m, {len(self.orientations) or 'position only, no'} orientations; "
            f"{n} reachable ({self.reachable_size:.3f} {_UNITS[self.reachable_dims]}), "
            f"mean index {mean:.3f}{took}"
        )

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the map to a compressed ``.npz`` (folders created); returns the path. A
        path without ``.npz`` gets it; an existing folder is refused (the map would land
        beside it, named after it)."""
        p = as_path(path, "save needs the path of the .npz file (str or os.PathLike)")
        if p.is_dir() or str(path).endswith(("/", os.sep)):
            raise InvalidValueError(
                f"{str(path)!r} is a folder; save needs a file name, such as "
                f"{str(p / 'reach.npz')!r}"
            )
        if p.suffix != ".npz":
            p = p.with_name(p.name + ".npz")
        p.parent.mkdir(parents=True, exist_ok=True)
        meta = {
            "format": FORMAT,
            "resolution": self.resolution,
            "radius": self.radius,
            "model": self.model,
            "frame": self.frame,
            "settings": self.settings,
        }
        np.savez_compressed(
            p, meta=np.array(json.dumps(meta)), **{k: getattr(self, k) for k in _ARRAYS}
        )
        return p


def load(path: str | os.PathLike[str]) -> ReachabilityMap:
    """Read a map written by :meth:`ReachabilityMap.save`."""
    try:
        with np.load(Path(path), allow_pickle=False) as f:
            meta = json.loads(str(f["meta"]))
            arrays = {k: np.array(f[k]) for k in _ARRAYS}
    except (OSError, ValueError, KeyError) as exc:
        # numpy's own advice (allow_pickle=True) would run code from the file: not ours
        why = "it holds pickled Python objects" if "allow_pickle" in str(exc) else exc
        raise FileFormatError(f"{path}: not a kinetree reachability map ({why})") from None
    if meta.get("format") != FORMAT:
        raise FileFormatError(f"{path}: format {meta.get('format')!r}, expected {FORMAT!r}")
    shape = arrays["index"].shape
    if len(shape) != 3 or any(arrays[k].shape != shape for k in ("manipulability", "inside")):
        raise FileFormatError(f"{path}: the grids' shapes disagree")
    return ReachabilityMap(
        resolution=float(meta["resolution"]),
        radius=float(meta["radius"]),
        model=str(meta["model"]),
        frame=str(meta["frame"]),
        settings=dict(meta["settings"]),
        **arrays,
    )
