"""Clip playback for the viewer: a motion on a timeline, and an optional reference beside it.

:class:`ClipPlayer` owns the timeline controls (play/pause, frame, speed, loop, clock)
and a thread that advances the clip in real time: the frame shown is ``position``,
which grows by ``fps * speed`` per second and wraps when looping. It shows frames
through the ``show`` callback (the viewer's own, which moves the model, the gizmos and
the sliders) while holding the viewer's lock.

A *reference* is another motion (another model: the source of a retargeting, say)
drawn as a grey skeleton ``offset`` away, showing the frame at the same time.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ._figure import RobotFigure
from ._panel import Timeline, build_timeline

__all__ = ["PLAYBACK_HZ", "ClipPlayer", "as_motion"]

#: Fastest clip refresh [1/s].
PLAYBACK_HZ = 60.0
_REFERENCE_COLOR = (150, 150, 150)


def as_motion(motion: Any, what: str) -> Any:
    """``motion`` as a :class:`~kinetree.anim.Motion` (a BVH clip is converted)."""
    from ..anim import Motion
    from ..errors import InvalidValueError
    from ..io.bvh import BVHClip

    if isinstance(motion, BVHClip):
        return Motion.from_clip(motion)
    if isinstance(motion, Motion):
        return motion
    raise InvalidValueError(f"{what} must be a Motion or a BVHClip, got {type(motion).__name__}")


class ClipPlayer:
    """Plays one motion at a time; see the module docstring."""

    def __init__(
        self,
        *,
        gui: Any,
        scene: Any,
        lock: threading.RLock,
        show: Callable[[np.ndarray], None],
        touch: Callable[[], None],
        closed: threading.Event,
    ) -> None:
        self._gui = gui
        self._scene = scene
        self._lock = lock
        self._show = show
        self._touch = touch
        self._closed = closed
        self.motion: Any = None
        self.timeline: Timeline | None = None
        #: Whether the clip advances (set False to pause, e.g. when a gizmo is grabbed).
        self.playing = False
        self._position = 0.0
        self._reference: tuple[Any, RobotFigure, np.ndarray] | None = None
        self._thread: threading.Thread | None = None

    @property
    def frame(self) -> int | None:
        """The frame shown (None without a clip)."""
        return None if self.motion is None else int(self._position)

    def load(
        self,
        motion: Any,
        *,
        speed: float,
        loop: bool,
        paused: bool,
        reference: tuple[Any, np.ndarray] | None,
    ) -> None:
        """Show ``motion``'s first frame and play it (unless ``paused``).

        ``reference``: (another motion, its 3-vector offset) to draw beside.
        """
        with self._lock:
            self.motion = motion
            if reference is not None:
                self._set_reference(*reference)
            tl = self.timeline
            if tl is None:
                tl = self.timeline = build_timeline(self._gui, motion.n_frames, motion.fps)
                self._wire(tl)
            else:
                tl.frame.max = max(motion.n_frames - 1, 1)
            tl.speed.value = float(np.clip(speed, tl.speed.min, tl.speed.max))
            tl.loop.value = loop
            self._position = 0.0
            self._show_frame(0)
            self.playing = not paused
            tl.play.label = "Pause" if self.playing else "Play"
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._run, name="kinetree-viewer-clip", daemon=True
            )
            self._thread.start()

    def _set_reference(self, ref: Any, offset: np.ndarray) -> None:
        if self._reference is not None:
            self._reference[1].remove()
        figure = RobotFigure(
            self._scene,
            ref.model,
            ref.q[0],
            prefix="/reference",
            meshes=False,
            bone_color=_REFERENCE_COLOR,
        )
        O = np.eye(4)
        O[:3, 3] = offset
        self._reference = (ref, figure, O)

    def _wire(self, tl: Timeline) -> None:
        @tl.play.on_click
        def _(_: Any) -> None:
            if self.playing:
                self.pause()
            else:
                self.resume()

        @tl.frame.on_update
        def _(event: Any) -> None:
            value = float(event.target.value)
            # A person scrubbing, not the player itself; NaN or inf from the socket: no frame.
            if event.client is not None and math.isfinite(value):
                self.seek(int(value))

    def pause(self) -> None:
        """Stop advancing."""
        self.playing = False
        if self.timeline is not None:
            self.timeline.play.label = "Play"
        self._touch()

    def resume(self) -> None:
        """Advance from the frame shown."""
        self.playing = True
        if self.timeline is not None:
            self.timeline.play.label = "Pause"

    def seek(self, frame: int) -> None:
        """Show ``frame`` (checked by the caller)."""
        with self._lock:
            self._position = float(frame)
            self._show_frame(int(frame))
        self._touch()

    def _show_frame(self, i: int) -> None:
        mo = self.motion
        self._show(np.asarray(mo.q[i]))
        if self._reference is not None:
            ref, figure, O = self._reference
            j = min(round(i / mo.fps * ref.fps), ref.n_frames - 1)
            figure.update(O @ np.asarray(ref.model.fk_all(ref.q[j])))
        tl = self.timeline
        if tl is not None:
            tl.frame.value = i
            tl.clock.content = f"frame {i + 1} / {mo.n_frames}, t = {i / mo.fps:.2f} s"

    def _run(self) -> None:
        last = time.perf_counter()
        shown = -1
        while not self._closed.is_set():
            now = time.perf_counter()
            dt, last = now - last, now
            mo, tl = self.motion, self.timeline
            if self.playing and mo is not None and tl is not None:
                with self._lock:
                    pos = self._position + dt * mo.fps * float(tl.speed.value)
                    if pos >= mo.n_frames:
                        if tl.loop.value:
                            pos %= mo.n_frames
                        else:
                            pos = mo.n_frames - 1.0
                            self.playing = False
                            tl.play.label = "Play"
                    self._position = pos
                    if int(pos) != shown:
                        shown = int(pos)
                        self._show_frame(shown)
            else:
                shown = -1
            self._closed.wait(max(0.0, 1.0 / PLAYBACK_HZ - (time.perf_counter() - now)))

    def join(self) -> None:
        """Wait for the thread to end (after ``closed`` is set)."""
        if self._thread is not None:
            self._thread.join(timeout=5.0)
