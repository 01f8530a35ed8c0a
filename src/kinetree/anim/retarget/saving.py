"""Writing a retargeted motion: ``.npz`` (everything), ``.csv`` (a table), ``.bvh``.

* ``.npz``: ``q`` ``(n_frames, nq)``, ``fps``, ``frame_time`` [s], ``joint_names``,
  ``robot`` (the model's name), ``contact/<frame>`` (bool per frame for each foot),
  ``quality`` and ``map`` (JSON text).
* ``.csv``: a header ``time,<joint names>`` then one line per frame, time [s] and
  every coordinate [rad, m, quaternion components] with 17 significant digits.
* ``.bvh``: the robot's motion as a BVH skeleton (:func:`kinetree.io.write_motion_bvh`),
  for animation tools.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import FileFormatError, UnsupportedError
from ...io._files import as_path
from ..motion import Motion

__all__ = ["FORMATS", "save_motion"]

#: File types :func:`save_motion` writes.
FORMATS = (".npz", ".csv", ".bvh")


def _jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, set)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, (np.floating, np.integer, np.bool_)):
        return x.item()
    return x


def save_motion(motion: Motion, path: str | os.PathLike[str]) -> Path:
    """Write ``motion`` to ``path`` by its suffix (:data:`FORMATS`); parent folders are
    created. Returns the path. Raises :class:`~kinetree.errors.UnsupportedError` for
    another suffix and :class:`~kinetree.errors.FileFormatError` when it cannot write."""
    p = as_path(path, "save_motion needs the path of the file to write (str or os.PathLike)")
    suffix = p.suffix.lower()
    if suffix not in FORMATS:
        raise UnsupportedError(
            f"cannot write a motion to {str(p)!r}: suffix {suffix or '(none)'!r} is not "
            f"supported; supported: {', '.join(FORMATS)}"
        )
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        if suffix == ".npz":
            info = motion.metadata.get("retarget", {})
            extra: dict[str, Any] = {
                f"contact/{f}": np.asarray(c, dtype=bool)
                for f, c in info.get("contacts", {}).items()
            }
            mp = info.get("map")
            np.savez_compressed(
                p,
                q=motion.q,
                fps=motion.fps,
                frame_time=motion.frame_time,
                joint_names=np.array(motion.model.joint_names),
                robot=motion.model.name,
                quality=json.dumps(_jsonable(motion.metadata.get("quality", {}))),
                map=json.dumps(dict(mp.pairs) if mp is not None else {}),
                **extra,
            )
        elif suffix == ".csv":
            table = np.column_stack([motion.times, motion.q])
            header = ",".join(["time", *motion.model.joint_names])
            np.savetxt(p, table, delimiter=",", header=header, comments="", fmt="%.17g")
        else:
            from ..bvh_export import write_motion_bvh

            write_motion_bvh(p, motion.model, motion.q, frame_time=motion.frame_time)
    except OSError as exc:
        raise FileFormatError(f"cannot write {str(p)!r}: {exc.strerror or exc}") from None
    return p
