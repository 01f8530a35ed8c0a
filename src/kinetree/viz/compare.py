"""Several motions side by side in one GIF: a source skeleton beside the robot it drives.

Each panel draws its motion's stick figure with :func:`kinetree.viz.draw` (the public
drawing, nothing private), frame after frame, under a camera that follows the figure
across the floor (a walk leaves the picture otherwise): a fixed ``span`` [m] square
around the figure's centre, the full height of the motion, the same view angle in
every panel. Frames are joined into a looping GIF by pillow.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..errors import InvalidValueError, UnsupportedError

if TYPE_CHECKING:
    from ..anim.motion import Motion

__all__ = ["animate_side_by_side"]


def animate_side_by_side(
    motions: Sequence[Motion],
    path: str | os.PathLike[str],
    *,
    titles: Sequence[str] | None = None,
    fps: float = 30.0,
    span: float = 1.4,
    dpi: float = 70.0,
    max_frames: int | None = None,
) -> Path:
    """Write the motions side by side, one panel each, as a looping GIF at ``path``.

    Args:
        motions: :class:`~kinetree.anim.Motion` objects at the same frame rate (the
            shortest sets the length), their models z up.
        path: a ``.gif`` file (folders created).
        titles: one per panel (default: the motions' names).
        fps: frames per second of the GIF; the motions are sampled down to it.
        span: width and depth of each panel's view [m], centred on the figure.
        dpi: resolution (each panel is 4 x 4.5 inches).
        max_frames: at most this many GIF frames (evenly sampled); None: all.

    Returns the path. Raises :class:`~kinetree.errors.UnsupportedError` without
    matplotlib/pillow or for another suffix.
    """
    from .plot import draw

    out = Path(path)
    if out.suffix.lower() != ".gif":
        raise UnsupportedError(f"animate_side_by_side writes .gif files, not {str(out)!r}")
    if not motions:
        raise InvalidValueError("animate_side_by_side needs at least one motion")
    if titles is not None and len(titles) != len(motions):
        raise InvalidValueError(f"titles: one per motion ({len(motions)}), got {len(titles)}")
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        from PIL import Image
    except ImportError:
        raise UnsupportedError(
            "animate_side_by_side needs matplotlib and pillow: pip install 'kinetree[viz]'"
        ) from None
    n = min(m.n_frames for m in motions)
    step = max(1, round(motions[0].fps / fps))
    frames = np.arange(0, n, step)
    if max_frames is not None and len(frames) > max_frames:
        frames = frames[np.linspace(0, len(frames) - 1, max_frames).round().astype(int)]
    P = [m.model.fk_all(m.q[:n])[..., :3, 3] for m in motions]  # (n, frames, 3) each
    heights = [(float(p[..., 2].min()), float(p[..., 2].max())) for p in P]
    fig = Figure(figsize=(4.0 * len(motions), 4.5), dpi=dpi)
    FigureCanvasAgg(fig)
    fig.subplots_adjust(left=0.0, right=1.0, bottom=0.02, top=0.92, wspace=0.0)
    axes = [fig.add_subplot(1, len(motions), i + 1, projection="3d") for i in range(len(motions))]
    images = []
    for k in frames:
        for i, (m, ax) in enumerate(zip(motions, axes)):
            ax.cla()
            draw(m.model, m.q[k], ax, color=f"C{i}", meshes=False)
            centre = P[i][k].mean(axis=0)
            lo, hi = heights[i]
            ax.set_xlim(centre[0] - span / 2, centre[0] + span / 2)
            ax.set_ylim(centre[1] - span / 2, centre[1] + span / 2)
            ax.set_zlim(min(lo, 0.0), hi + 0.05 * span)
            ax.set_box_aspect((span, span, hi + 0.05 * span - min(lo, 0.0)), zoom=1.15)
            ax.view_init(elev=12.0, azim=-60.0)
            ax.set_title(titles[i] if titles is not None else m.name, fontsize=10)
        fig.text(0.01, 0.97, f"t = {k / motions[0].fps:.2f} s", fontsize=8, color="0.3")
        fig.canvas.draw()
        rgba = np.asarray(fig.canvas.buffer_rgba())  # type: ignore[attr-defined]
        images.append(Image.fromarray(np.ascontiguousarray(rgba[..., :3])).quantize(256))
        fig.texts.clear()
    out.parent.mkdir(parents=True, exist_ok=True)
    duration = round(1000.0 * step / motions[0].fps)
    images[0].save(out, save_all=True, append_images=images[1:], duration=duration, loop=0)
    return out
