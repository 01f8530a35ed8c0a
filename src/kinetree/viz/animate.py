"""Animations of a motion: a GIF (pillow) or an MP4 (ffmpeg) of the stick figure.

The camera is fixed for the whole motion (limits cover every frame), so the
picture does not jump. Rendering is blitted: the axes, panes, grid, labels and
static targets are drawn once; each frame restores that background and draws
only the moving artists (created once, moved with ``set_data``/``set_data_3d``).
Frames go to pillow (GIF) or are piped raw to ``ffmpeg`` (MP4, H.264).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InvalidValueError, ShapeError, UnsupportedError
from .meshes import visual_parts
from .plot import (
    _TARGET_STYLE,
    _check_frames,
    _check_qs,
    _draw_on,
    _label_axes,
    _make_axes,
    _new_figure,
    _parse_targets,
    _plot,
    _require_matplotlib,
    _resolve_plane,
    _set_line,
    _view,
)

if TYPE_CHECKING:
    from ..model import Model

__all__ = ["MOVIE_SUFFIXES", "animate"]

MOVIE_SUFFIXES = (".gif", ".mp4")


def _check_suffix(path: Path) -> str | None:
    """Validate the output type before any rendering; return ffmpeg's path for .mp4."""
    suffix = path.suffix.lower()
    if suffix == ".gif":
        return None
    if suffix == ".mp4":
        ffmpeg = shutil.which("ffmpeg")
        if ffmpeg is None:
            raise UnsupportedError("ffmpeg not found on PATH; install ffmpeg or write a .gif")
        return ffmpeg
    raise UnsupportedError(
        f"cannot write a movie to {str(path)!r}: suffix {suffix or '(none)'!r} is not "
        f"supported; supported: {', '.join(MOVIE_SUFFIXES)}"
    )


def _write_gif(frames: Iterator[np.ndarray], path: Path, fps: int) -> None:
    """Quantize RGBA frames to 256 colours each (median cut: exact white stays white)
    and write a looping GIF."""
    from PIL import Image

    images = [
        Image.fromarray(np.ascontiguousarray(f[..., :3])).quantize(
            256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE
        )
        for f in frames
    ]
    images[0].save(
        path, save_all=True, append_images=images[1:], duration=round(1000 / fps), loop=0
    )


def _write_mp4(frames: Iterator[np.ndarray], path: Path, fps: int, ffmpeg: str) -> None:
    """Pipe raw RGBA frames to ffmpeg: H.264 (yuv420p) when available, else MPEG-4."""
    listing = subprocess.run(
        [ffmpeg, "-hide_banner", "-encoders"], capture_output=True, text=True, check=False
    ).stdout
    codec = ["-c:v", "libx264", "-pix_fmt", "yuv420p"]
    if "libx264" not in listing:
        codec = ["-c:v", "mpeg4", "-q:v", "3", "-pix_fmt", "yuv420p"]
    proc: subprocess.Popen[bytes] | None = None
    try:
        for f in frames:
            h, w = f.shape[0] - f.shape[0] % 2, f.shape[1] - f.shape[1] % 2
            if proc is None:
                cmd = [
                    ffmpeg,
                    "-y",
                    "-loglevel",
                    "error",
                    "-f",
                    "rawvideo",
                    "-pix_fmt",
                    "rgba",
                    "-s",
                    f"{w}x{h}",
                    "-r",
                    str(fps),
                    "-i",
                    "-",
                    "-an",
                    *codec,
                    "-movflags",
                    "+faststart",
                    str(path),
                ]
                proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stderr=subprocess.PIPE)
            assert proc.stdin is not None
            proc.stdin.write(np.ascontiguousarray(f[:h, :w]).tobytes())
    finally:
        if proc is not None:
            _, err = proc.communicate()
            if proc.returncode != 0:
                raise UnsupportedError(
                    f"ffmpeg failed (exit {proc.returncode}) writing {str(path)!r}: "
                    f"{err.decode(errors='replace').strip()[-500:]}"
                )


def _per_frame_targets(targets: Any, n: int) -> np.ndarray | None:
    """``targets`` as an ``(n, k, 3)`` per-frame array, or None if they are static."""
    if targets is None:
        return None
    try:
        a = np.asarray(targets, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    if a.ndim == 3 and a.shape[0] == n and a.shape[2] == 3:
        if not np.all(np.isfinite(a)):
            raise InvalidValueError("targets contain NaN or inf")
        return a
    if a.ndim == 3 and a.shape[2] == 3:
        raise ShapeError(f"per-frame targets must have shape (n_frames={n}, k, 3), got {a.shape}")
    return None


def animate(
    model: Model,
    qs: Any,
    path: str | os.PathLike[str],
    *,
    fps: int = 30,
    targets: Any = None,
    trail: str | None = None,
    plane: str | None = None,
    title: str | None = None,
    dpi: float = 80,
    frames: str | Sequence[str] | None = None,
    show_time: bool = True,
    meshes: bool | None = None,
    max_faces: int = 6000,
) -> Path:
    """Render the motion ``qs`` (n_frames, dof) to ``path`` and return the path.

    Args:
        model: the model.
        qs: one configuration per frame, shape ``(n_frames, model.nq)``.
        path: output file; ``.gif`` (pillow) or ``.mp4`` (needs ``ffmpeg`` on PATH).
            Parent folders are created.
        fps: frames per second (a positive integer).
        targets: static targets (a point, a pose, or a list of them, as in
            :func:`kinetree.viz.draw`), or per-frame points ``(n_frames, k, 3)``.
        trail: a frame name whose path so far is drawn as a thin line.
        plane: 2D projection (``"xy"``, ``"xz"``, ``"yz"``); default 3D, or ``"xy"``
            for planar models.
        title: text over the picture.
        dpi: resolution; the picture is 6x6 inches, so 80 dpi gives 480x480 pixels.
        frames: frame names whose x/y/z triads are drawn.
        show_time: print ``frame i/n, t = ... s`` in the corner.
        meshes: draw meshes, as in :func:`kinetree.viz.draw` (3D only).
        max_faces: triangles per frame at most (meshes are thinned to fit; each frame
            sorts and draws them all).

    Raises:
        ShapeError: ``qs`` is not 2D with ``model.nq`` columns.
        UnsupportedError: unknown suffix, ``.mp4`` without ffmpeg, or no matplotlib.
        UnknownNameError: ``trail`` or a name in ``frames`` is not a frame.
    """
    _require_matplotlib()
    Q = _check_qs(model, qs)
    n = len(Q)
    if not isinstance(fps, (int, np.integer)) or isinstance(fps, bool) or fps <= 0:
        raise InvalidValueError(f"fps must be a positive integer, got {fps!r}")
    fps = int(fps)
    if not np.isfinite(dpi) or dpi <= 0:
        raise InvalidValueError(f"dpi must be > 0, got {dpi!r}")
    out = Path(path)
    ffmpeg = _check_suffix(out)
    frame_ids = _check_frames(model, frames)
    trail_id = _check_frames(model, trail)[0] if trail is not None else None
    moving = _per_frame_targets(targets, n)
    static = [] if moving is not None else _parse_targets(targets)
    plane = _resolve_plane(model, plane)

    Ts = model.fk_all(Q)  # (n, n_frames, 4, 4)
    every = [Ts[..., :3, 3].reshape(-1, 3)]
    if moving is not None:
        every.append(moving.reshape(-1, 3))
    all_points = _view(model, np.concatenate(every, axis=0), plane)

    # Even pixel sizes (h264 needs them).
    side_px = 2 * round(6.0 * dpi / 2.0)
    fig = _new_figure((side_px / dpi, side_px / dpi), plane, fixed=True)
    fig.set_dpi(dpi)
    ax = _make_axes(fig, plane)
    _label_axes(ax, model, plane)
    parts = visual_parts(model, meshes) if plane is None else None
    skel = _draw_on(
        ax,
        model,
        Ts[0],
        plane,
        targets=static,
        frames=frame_ids,
        color="C0",
        label=None,
        show_joints=True,
        extra_points=all_points,
        parts=parts,
        max_faces=max_faces,
    )
    if title:
        ax.set_title(title)
    trail_line = None
    if trail_id is not None:
        trail_pts = _view(model, Ts[:, trail_id, :3, 3], plane)
        trail_line = _plot(ax, trail_pts[:1], "-", color="tab:orange", lw=1.2, alpha=0.85)
    target_line = None
    if moving is not None:
        target_line = _plot(ax, _view(model, moving[0], plane), **_TARGET_STYLE)
    clock = None
    if show_time:
        clock = fig.text(0.015, 0.985, "", fontsize=9, color="0.3", va="top", family="monospace")
    # Drawn in this order: the trail and targets under the figure, the clock last.
    moving_artists = [a for a in (trail_line, target_line, *skel.artists, clock) if a is not None]

    def render() -> Iterator[np.ndarray]:
        canvas = fig.canvas
        for a in moving_artists:
            a.set_animated(True)  # left out of full draws: drawn per frame below
        canvas.draw()  # the static background
        background = canvas.copy_from_bbox(fig.bbox)  # type: ignore[attr-defined]
        for i in range(n):
            skel.update(Ts[i])
            if trail_line is not None:
                _set_line(trail_line, trail_pts[: i + 1])
            if target_line is not None and moving is not None:
                _set_line(target_line, _view(model, moving[i], plane))
            if clock is not None:
                clock.set_text(f"frame {i + 1}/{n}   t = {i / fps:.2f} s")
            canvas.restore_region(background)  # type: ignore[attr-defined]
            for a in moving_artists:
                fig.draw_artist(a)
            yield np.asarray(canvas.buffer_rgba())  # type: ignore[attr-defined]

    out.parent.mkdir(parents=True, exist_ok=True)
    if ffmpeg is None:
        _write_gif(render(), out, fps)
    else:
        _write_mp4(render(), out, fps, ffmpeg)
    return out
