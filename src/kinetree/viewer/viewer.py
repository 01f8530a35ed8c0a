"""The browser viewer: a model with its meshes, gizmos that solve IK live, sliders, clips.

Long because the viewer is one object with many controls (targets, IK options, pins,
sliders, display toggles, clips) that share one state; the drawing, the side panel,
the server set-up, the IK thread and the clip player live in their own modules.

Threads: viser runs its server and calls GUI callbacks on threads of its own; the
:class:`~kinetree.viewer._live.LiveSolver` thread runs IK; a playback thread runs a
clip. ``self._lock`` guards the configuration and every change to the scene. A
gizmo's callback runs on viser's event loop and only records the pose and wakes the
solver (it never waits for ``self._lock``, which the solver holds while it sends).
"""

from __future__ import annotations

import contextlib
import html
import io
import os
import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._validate import as_array
from ..errors import InvalidValueError, KinetreeError, ShapeError
from ..ik import IKResult, Position
from ..loading import load
from ..model import Model
from ..models import with_meshes
from ..spatial import matrix_to_quaternion, quaternion_to_matrix
from ._clip import ClipPlayer, as_motion
from ._drag import solve_drag
from ._figure import RobotFigure, model_size
from ._live import LiveSolver
from ._panel import (
    ACTIVE_ALL,
    ACTIVE_CHAINS,
    Panel,
    build_panel,
    copy_block,
    poses_code,
    q_code,
)
from ._server import LOOPBACK, start_server

__all__ = ["Viewer"]

_AXES = ("x", "y", "z")
#: Slider refresh while IK runs [s]: the robot moves on every solve, the panel at most
#: this often.
_SLIDER_PERIOD = 1.0 / 15.0


def _pose(wxyz: ArrayLike, position: ArrayLike) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = quaternion_to_matrix(np.asarray(wxyz, dtype=float))
    T[:3, 3] = np.asarray(position, dtype=float)
    return T


def _up_axis(model: Model, up: str | None) -> str:
    if up is not None:
        if up not in _AXES:
            raise InvalidValueError(f"up must be one of {', '.join(_AXES)}, got {up!r}")
        return up
    meta = model.metadata.get("up")
    if meta in _AXES:
        return str(meta)
    return "y" if model.metadata.get("format") == "bvh" else "z"  # BVH files are y-up


def _nice(x: float) -> float:
    """The 1-2-5 number nearest below ``x``."""
    e = 10.0 ** np.floor(np.log10(x))
    return float(max(m * e for m in (1.0, 2.0, 5.0) if m * e <= x * (1 + 1e-9)))


class Viewer:
    """A model in the browser: meshes, IK gizmos, joint sliders, clip playback.

    ``Viewer(model)`` starts a web server (viser) on ``http://127.0.0.1:8080`` and
    returns; open :attr:`url` in a browser. Dragging a gizmo solves IK for every
    target at once, from the current configuration, with the options of the side
    panel. Scripts and notebooks drive it with :meth:`show`, :meth:`play`,
    :meth:`add_target` and :meth:`set_target`; :meth:`close` stops it (or use
    ``with Viewer(...) as v:``).

    Args:
        model: a :class:`~kinetree.model.Model`, a built-in name or a file
            (anything :func:`kinetree.load` takes).
        q: the first configuration ``(nq,)`` [rad, m]; default the neutral pose.
        host: address to listen on; ``127.0.0.1`` (this machine only) by default.
        port: TCP port; 0 picks a free one (see :attr:`port`).
        meshes: draw visual meshes (a built-in robot's come from its description
            package, ``kinetree[meshes]``); False: the skeleton only.
        targets: frames that get a gizmo; default the model's end effectors.
        frames: show every frame's axes.
        collision: show the collision shapes.
        spheres: show the collision spheres of :mod:`kinetree.collision` (what
            ``model.distance`` and collision-aware IK use).
        up: the world's up axis, ``"x"``, ``"y"`` or ``"z"``; default the model's
            (``metadata["up"]``), y for BVH, else z.
        title: the panel's title.

    Raises:
        PortInUseError: the port is taken.
        UnsupportedError: viser is not installed (``pip install 'kinetree[viewer]'``).
        KinetreeError: the model cannot be loaded, or an argument is invalid.
    """

    def __init__(
        self,
        model: Model | str | os.PathLike[str],
        *,
        q: ArrayLike | None = None,
        host: str = LOOPBACK,
        port: int = 8080,
        meshes: bool = True,
        targets: Sequence[str] | None = None,
        frames: bool = False,
        collision: bool = False,
        spheres: bool = False,
        up: str | None = None,
        title: str | None = None,
    ) -> None:
        m = model if isinstance(model, Model) else load(model)
        note = None
        if meshes and not m.skins:  # a character's skinned mesh is its body
            m, note = with_meshes(m)
        self.model: Model = m
        self._q = self._check_q(m.neutral() if q is None else q)
        self._up = _up_axis(m, up)
        names = list(m.end_effectors) if targets is None else list(targets)
        for f in names:
            m.frame_index(f)  # unknown frames raise before the server starts
        self._server = start_server(host, port, label=title or f"kinetree · {m.name}")
        self.host = host
        self.port: int = int(self._server.get_port())
        self._lock = threading.RLock()
        self._closed = threading.Event()
        self._target_T: dict[str, np.ndarray] = {}
        self._gizmos: dict[str, Any] = {}
        self._pins: dict[str, np.ndarray] = {}
        self._rest_q: np.ndarray | None = None
        self._result: IKResult | None = None
        self._status = ""
        self._slider_time = 0.0
        try:
            self._size = model_size(m, self._q)
            self._figure = RobotFigure(
                self._server.scene, m, self._q, meshes=meshes, size=self._size
            )
            self._set_scene()
            pin_frames = list(dict.fromkeys([*m.end_effectors, *names]))
            self._panel: Panel = build_panel(
                self._server.gui,
                m,
                self._q,
                size=self._size,
                note=note,
                has_meshes=self._figure.has_meshes,
                pin_frames=pin_frames,
            )
            self._wire_panel()
            self._figure.set_visible(frames=frames, collision=collision, spheres=spheres)
            self._panel.frames.value = frames
            self._panel.collision.value = collision
            self._panel.spheres.value = spheres
            self._solver = LiveSolver(self._solve, self._refresh_panel)
            self._clip = ClipPlayer(
                gui=self._server.gui,
                scene=self._server.scene,
                lock=self._lock,
                show=self._show_clip_frame,
                touch=self._solver.touch,
                closed=self._closed,
            )
            for f in names:
                self.add_target(f)
            self._refresh_panel()
        except BaseException:
            self._stop_server()
            raise

    # --- properties -------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The address to open in a browser."""
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::", "") else self.host
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.port}"

    @property
    def q(self) -> np.ndarray:
        """The configuration shown now ``(nq,)`` [rad, m] (a copy)."""
        with self._lock:
            return self._q.copy()

    @property
    def result(self) -> IKResult | None:
        """The last IK result (None before the first solve)."""
        return self._result

    @property
    def status(self) -> str:
        """The IK readout shown in the panel (markdown)."""
        return self._status

    @property
    def targets(self) -> tuple[str, ...]:
        """Frames that have a gizmo."""
        return tuple(self._target_T)

    @property
    def note(self) -> str | None:
        """Why the model is drawn as a skeleton, when it is (None otherwise)."""
        content = self._panel.note.content
        return html.unescape(content.strip("*")) if content else None

    @property
    def has_meshes(self) -> bool:
        """Whether the model is drawn with meshes."""
        return self._figure.has_meshes

    @property
    def skeleton_frames(self) -> tuple[str, ...]:
        """Frames drawn as a skeleton because a mesh of theirs could not be read."""
        return self._figure.skeleton_frames

    def joint_sliders(self) -> dict[str, float]:
        """The joint sliders' values by coordinate name [rad, m] (within their limits)."""
        with self._lock:
            return {
                self.model.joint_names[k]: float(s.value) for k, s in self._panel.sliders.items()
            }

    # --- scene ----------------------------------------------------------------------

    def _set_scene(self) -> None:
        scene = self._server.scene
        scene.set_up_direction("+" + self._up)
        self._floor = None
        self._frame_view(self._drawn(np.asarray(self.model.fk_all(self._q))[:, :3, 3]))

    def _drawn(self, P: np.ndarray) -> np.ndarray:
        """The points of ``P`` (..., n_frames, 3) that the skeleton draws (a BVH file's
        world frame, left at the origin while the figure walks, is not one), flattened."""
        pairs = self._figure.bones
        keep = np.unique(pairs) if len(pairs) else np.arange(P.shape[-2])
        return P[..., keep, :].reshape(-1, 3)

    def _frame_view(self, P: np.ndarray) -> None:
        """Put the floor grid under the points ``P`` (k, 3) and aim new pages' camera at
        them."""
        scene = self._server.scene
        up = _AXES.index(self._up)
        h1, h2 = (up + 1) % 3, (up + 2) % 3
        lo, hi = P.min(axis=0), P.max(axis=0)
        center = (lo + hi) / 2.0
        s = max(float(np.max(hi - lo)), self._size)
        floor = center.copy()
        floor[up] = lo[up]
        plane = {"z": "xy", "y": "zx", "x": "yz"}[self._up]
        cell = _nice(self._size / 10.0)
        if self._floor is not None:
            self._floor.remove()
        # A floor grid under everything, one tenth of the model's size per cell.
        self._floor = scene.add_grid(
            "/floor",
            width=2 * s + 2 * self._size,
            height=2 * s + 2 * self._size,
            plane=plane,
            cell_size=cell,
            section_size=5 * cell,
            position=floor,
            fade_distance=20 * (s + self._size),
        )
        # The camera: in front, to the right, a little above.
        d = np.zeros(3)
        d[h1], d[h2], d[up] = 1.0, -1.3, 0.6
        cam = self._server.initial_camera
        cam.look_at = tuple(center)
        distance = 1.8 * self._size + 0.5 * (s - self._size)
        cam.position = tuple(center + distance * d / np.linalg.norm(d))
        cam.up = tuple(np.eye(3)[up])

    def _check_q(self, q: ArrayLike) -> np.ndarray:
        qa = as_array(q, "q")
        if qa.shape != (self.model.nq,):
            raise ShapeError(
                f"q must have shape ({self.model.nq},) for model {self.model.name!r}, "
                f"got {qa.shape}"
            )
        return np.asarray(self.model.normalize(qa), dtype=float).copy()

    def _set_q(self, q: np.ndarray, *, snap_targets: bool) -> None:
        """Show configuration ``q`` (call with ``self._lock`` held)."""
        self._q = q.copy()
        T = np.asarray(self.model.fk_all(q))
        index = {n: i for i, n in enumerate(self.model.frame_names)}
        with self._server.atomic():
            self._figure.update(T)
            if snap_targets:
                for f, handle in self._gizmos.items():
                    Tf = T[index[f]]
                    self._target_T[f] = Tf.copy()
                    handle.wxyz = matrix_to_quaternion(Tf[:3, :3])
                    handle.position = Tf[:3, 3]
        now = time.perf_counter()
        if now - self._slider_time >= _SLIDER_PERIOD:
            self._sync_sliders()
        self._server.flush()

    def _sync_sliders(self) -> None:
        self._slider_time = time.perf_counter()
        for k, slider in self._panel.sliders.items():
            lo, hi = slider.min, slider.max
            slider.value = float(np.clip(self._q[k], lo, hi))

    # --- scripting ------------------------------------------------------------------

    def show(self, q: ArrayLike) -> None:
        """Show configuration ``q`` ``(nq,)`` [rad, m]; gizmos move to their frames.

        Quaternion coordinates are normalised. A clip that is playing pauses.
        """
        qa = self._check_q(q)
        self._clip.playing = False
        with self._lock:
            self._set_q(qa, snap_targets=True)
            self._sync_sliders()
        self._solver.touch()

    def add_target(self, frame: str | None = None) -> None:
        """Put a gizmo on ``frame`` (default the first end effector) at its pose now.

        Dragging it solves IK; a frame that has one already keeps it.
        """
        name = self._frame_name(frame)
        if name in self._gizmos:
            return
        with self._lock:
            T = np.asarray(self.model.fk(self._q, name))
            handle = self._server.scene.add_transform_controls(
                f"/targets/t{len(self._gizmos)}",
                scale=0.15 * self._size,
                line_width=3.0,
                depth_test=False,
                wxyz=matrix_to_quaternion(T[:3, :3]),
                position=T[:3, 3],
            )
            self._server.scene.add_label(f"{handle.name}/label", name, visible=True)
            self._target_T[name] = T.copy()
            self._gizmos[name] = handle

        @handle.on_update
        async def _(event: Any) -> None:
            # On viser's event loop: record and wake the solver, never block.
            if event.phase == "start":
                self._clip.playing = False
            wxyz, position = np.asarray(event.target.wxyz), np.asarray(event.target.position)
            if not (np.all(np.isfinite(wxyz)) and np.all(np.isfinite(position))):
                # A page (or a script on the socket) sent NaN or inf: keep the last pose.
                self._set_status(f"**IK:** ignored a gizmo pose with NaN or inf for {name}")
                return
            self._target_T[name] = _pose(wxyz, position)
            self._solver.submit(name)

    def _frame_name(self, frame: str | None) -> str:
        """``frame`` checked (an unknown name raises, listing the frames); None: the
        first end effector."""
        self.model.frame_index(frame)
        return frame if frame is not None else self.model.end_effectors[0]

    def frame_node(self, frame: str) -> str:
        """The scene name of the node that carries ``frame``'s meshes (its pose is the
        frame's world pose; a page receives it on every move)."""
        self.model.frame_index(frame)
        return str(self._figure.nodes[self.model.frame_names.index(frame)].name)

    def gizmo_name(self, frame: str) -> str:
        """The scene name of ``frame``'s gizmo (what a page's drag messages carry)."""
        handle = self._gizmos.get(frame)
        if handle is None:
            raise InvalidValueError(
                f"frame {frame!r} has no gizmo; frames with one: {', '.join(self._gizmos)}"
            )
        return str(handle.name)

    def remove_target(self, frame: str) -> None:
        """Take the gizmo off ``frame``."""
        with self._lock:
            handle = self._gizmos.pop(frame, None)
            self._target_T.pop(frame, None)
        if handle is not None:
            handle.remove()

    def set_target(
        self, frame: str, target: ArrayLike, *, wait: bool = True, timeout: float = 120.0
    ) -> IKResult | None:
        """Move ``frame``'s gizmo to ``target`` (a 4x4 pose or a point [m]) as a drag
        would, and solve IK.

        A frame without a gizmo gets one. With ``wait`` this returns the result of
        that solve (None when it raised: see :attr:`status`); else it returns None
        at once.
        """
        name = self._frame_name(frame)
        self.add_target(name)
        t = as_array(target, "target")
        with self._lock:
            T = self._target_T[name].copy()
            if t.shape == (3,):
                T[:3, 3] = t
            elif t.shape == (4, 4):
                T = t.copy()
            else:
                raise ShapeError(f"target must be a point (3,) or a pose (4, 4), got {t.shape}")
            self._target_T[name] = T
            handle = self._gizmos[name]
            handle.wxyz = matrix_to_quaternion(T[:3, :3])
            handle.position = T[:3, 3]
            self._result = None
        ticket = self._solver.submit(name)
        if not wait:
            return None
        self._solver.wait(ticket, timeout)
        return self._result

    def set_options(
        self,
        *,
        method: str | None = None,
        active: str | None = None,
        mode: str | None = None,
        rest: str | None = None,
        restarts: bool | None = None,
        budget_ms: float | None = None,
        pins: Sequence[str] | None = None,
    ) -> None:
        """Set the side panel's IK controls (None leaves one as it is).

        ``method``: an IK method; ``active``: ``"all joints"``, ``"chains of the
        targets"`` or a preset; ``mode``: ``"pose"`` or ``"position"``; ``rest``:
        ``"off"``, ``"neutral"`` or ``"current"``; ``budget_ms``: the time budget of
        one solve [ms] (1 to 60000; 50 by default); ``pins``: the frames to pin (the
        others are unpinned); each must be one the panel offers.
        """
        p = self._panel
        for handle, value, what in (
            (p.method, method, "method"),
            (p.active, active, "active"),
            (p.mode, mode, "mode"),
            (p.rest, rest, "rest"),
        ):
            if value is None:
                continue
            if value not in handle.options:
                raise InvalidValueError(
                    f"{what} {value!r} is not offered; choose one of {', '.join(handle.options)}"
                )
            handle.value = value
        if restarts is not None:
            p.restarts.value = bool(restarts)
        if budget_ms is not None:
            if not (np.isfinite(budget_ms) and 1 <= budget_ms <= 60_000):
                raise InvalidValueError(f"budget_ms must be in [1, 60000], got {budget_ms!r}")
            p.budget.value = float(budget_ms)
        if pins is not None:
            unknown = [f for f in pins if f not in p.pins]
            if unknown:
                raise InvalidValueError(
                    f"cannot pin {', '.join(unknown)}; pinnable frames: {', '.join(p.pins)}"
                )
            for f, box in p.pins.items():
                box.value = f in pins

    # --- IK ------------------------------------------------------------------------------

    def _ik_request(self) -> tuple[dict[str, Any], dict[str, Any], np.ndarray]:
        p = self._panel
        mode = p.mode.value
        # A pinned frame keeps its pose at pin time, whether it has a gizmo or not.
        targets: dict[str, Any] = {f: T.copy() for f, T in self._pins.items()}
        for f, T in list(self._target_T.items()):
            if f not in targets:
                targets[f] = T.copy() if mode == "pose" else Position(T[:3, 3].copy())
        options: dict[str, Any] = {
            "method": p.method.value,
            "time_budget": max(float(p.budget.value), 1.0) / 1e3,
        }
        active = p.active.value
        if active == ACTIVE_CHAINS:
            moving = {j for f in self._target_T for j in self.model.chain(f)}
            options["active"] = tuple(j for j in self.model.joint_names if j in moving)
        elif active != ACTIVE_ALL:
            options["active"] = active
        # Frames no active joint moves stay where they are anyway: not targets.
        mask = self.model.active_mask(options.get("active"))
        targets = {
            f: t
            for f, t in targets.items()
            if mask[self.model.joint_indices(self.model.chain(f))].any()
        }
        if not p.restarts.value:
            options["restarts"] = 0
        if p.rest.value == "neutral":
            options["rest"] = "neutral"
        elif p.rest.value == "current" and self._rest_q is not None:
            options["rest"] = tuple(self._rest_q)
        return targets, options, self._q.copy()

    def _solve(self, _request: Any) -> None:
        """One live solve (on the solver thread)."""
        with self._lock:
            if not self._target_T:
                return
            targets, options, q0 = self._ik_request()
        if not targets:
            frames = ", ".join(self._target_T)
            self._set_status(f"**IK:** no active joint moves {html.escape(frames)}")
            return
        try:
            r, how = solve_drag(self.model, targets, q0, options)
        except KinetreeError as exc:
            self._set_status(f"**IK error:** {html.escape(str(exc))}")
            return
        with self._lock:
            self._result = r
            self._set_q(np.asarray(r.q), snap_targets=False)
            self._set_status(self._readout(r, how))

    def _readout(self, r: IKResult, how: str = "") -> str:
        pe = float(np.max(r.position_error, initial=0.0))
        oe = float(np.degrees(np.max(r.orientation_error, initial=0.0)))
        head = "reached" if bool(r.success) else "not reached"
        if how:
            head += f" {how}"
        text = (
            f"**IK {head}** ({r.method}): position error {pe:.3g} {self.model.units}, "
            f"orientation error {oe:.3g}°; {int(r.iterations)} iterations, "
            f"{r.elapsed * 1e3:.2f} ms"
        )
        if not bool(r.success):
            text += f"  \n{html.escape(str(r.message))}"
        return text

    def _set_status(self, text: str) -> None:
        self._status = text
        self._panel.status.content = text

    # --- panel ---------------------------------------------------------------------------

    def _wire_panel(self) -> None:
        p = self._panel
        fig = self._figure

        @p.meshes.on_update
        def _(event: Any) -> None:
            fig.set_visible(meshes=bool(event.target.value))

        @p.skeleton.on_update
        def _(event: Any) -> None:
            with self._lock:
                fig.set_visible(skeleton=bool(event.target.value))

        @p.frames.on_update
        def _(event: Any) -> None:
            fig.set_visible(frames=bool(event.target.value))

        @p.labels.on_update
        def _(event: Any) -> None:
            fig.set_visible(labels=bool(event.target.value))

        @p.collision.on_update
        def _(event: Any) -> None:
            fig.set_visible(collision=bool(event.target.value))

        @p.spheres.on_update
        def _(event: Any) -> None:
            with self._lock:
                fig.set_visible(spheres=bool(event.target.value))
            if fig.sphere_error is not None:
                self._set_status(f"**No collision spheres:** {html.escape(fig.sphere_error)}")

        @p.rest.on_update
        def _(event: Any) -> None:
            if event.target.value == "current":
                self._rest_q = self.q

        for frame, box in p.pins.items():
            box.on_update(lambda event, frame=frame: self._pin(frame, bool(event.target.value)))

        for k, slider in p.sliders.items():
            slider.on_update(lambda event, k=k: self._on_slider(event, k))

        @p.neutral.on_click
        def _(_: Any) -> None:
            self.show(self.model.neutral())

    def _pin(self, frame: str, on: bool) -> None:
        with self._lock:
            if on:
                self._pins[frame] = np.asarray(self.model.fk(self._q, frame)).copy()
            else:
                self._pins.pop(frame, None)

    def _on_slider(self, event: Any, k: int) -> None:
        if event.client is None:  # set by the viewer itself (IK, playback)
            return
        value = float(event.target.value)
        if not np.isfinite(value):  # NaN or inf from the socket: no configuration
            self._set_status("**Slider:** ignored a value that is NaN or inf")
            return
        self._clip.playing = False
        with self._lock:
            q = self._q.copy()
            q[k] = value
            self._set_q(q, snap_targets=True)
        self._solver.touch()

    def _refresh_panel(self) -> None:
        """After things went still: sliders exact, Python code up to date."""
        with self._lock:
            self._sync_sliders()
            frames = self._code_frames()
            self._panel.python.content = copy_block("q", q_code(self.model, self._q)) + copy_block(
                "poses", poses_code(self.model, self._q, frames)
            )

    def python_code(self) -> str:
        """What the panel's copy buttons copy: ``q`` and the targets' and end effectors'
        poses as Python (numpy) code."""
        with self._lock:
            q, frames = self._q.copy(), self._code_frames()
        return "\n".join(
            ["import numpy as np", "", q_code(self.model, q), poses_code(self.model, q, frames)]
        )

    def _code_frames(self) -> list[str]:
        return list(dict.fromkeys([*self._target_T, *self.model.end_effectors]))

    # --- clips ---------------------------------------------------------------------------

    def play(
        self,
        motion: Any,
        *,
        speed: float = 1.0,
        loop: bool = True,
        paused: bool = False,
        reference: Any = None,
        offset: ArrayLike | None = None,
    ) -> None:
        """Play a clip: a :class:`~kinetree.anim.Motion` or a :class:`~kinetree.BVHClip`
        of this model, with a timeline in the panel (play/pause, frame, speed, loop).

        ``reference``: another motion or clip (another model, e.g. the source of a
        retargeting) drawn as a grey skeleton beside this one, ``offset`` [its length
        unit] away (default: one model size along the first horizontal axis), in step
        by time. ``speed`` multiplies the clip's frame rate.
        """
        mo = as_motion(motion, "motion")
        if mo.model.joint_names != self.model.joint_names:
            raise InvalidValueError(
                f"the motion is of model {mo.model.name!r} ({mo.model.nq} coordinates), not "
                f"of the viewer's {self.model.name!r} ({self.model.nq}); pass it as "
                "reference= to draw it beside"
            )
        if not (np.isfinite(speed) and speed > 0):
            raise InvalidValueError(f"speed must be > 0, got {speed!r}")
        ref = None
        if reference is not None:
            if offset is None:
                o = np.zeros(3)
                o[(_AXES.index(self._up) + 1) % 3] = self._size
            else:
                o = as_array(offset, "offset", (3,))
            ref = (as_motion(reference, "reference"), o)
        with self._lock:
            every = mo.q[:: max(1, mo.n_frames // 60)]
            self._frame_view(self._drawn(np.asarray(self.model.fk_all(every))[..., :3, 3]))
            self._clip.load(mo, speed=speed, loop=loop, paused=paused, reference=ref)

    def pause(self) -> None:
        """Pause the clip."""
        self._clip.pause()

    def resume(self) -> None:
        """Play the clip from where it is."""
        if self._clip.motion is None:
            raise InvalidValueError("no clip to play; call play(motion) first")
        self._clip.resume()

    def seek(self, frame: int) -> None:
        """Show clip frame ``frame`` (from 0); playing goes on from there."""
        mo = self._clip.motion
        if mo is None:
            raise InvalidValueError("no clip loaded; call play(motion) first")
        if not 0 <= int(frame) < mo.n_frames:
            raise InvalidValueError(f"frame must be in [0, {mo.n_frames - 1}], got {frame}")
        self._clip.seek(int(frame))

    @property
    def frame(self) -> int | None:
        """The clip frame shown (None without a clip)."""
        return self._clip.frame

    def _show_clip_frame(self, q: np.ndarray) -> None:
        self._set_q(q, snap_targets=True)

    # --- lifetime --------------------------------------------------------------------

    def wait(self, timeout: float | None = None) -> None:
        """Block until :meth:`close`, Ctrl+C, or ``timeout`` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with contextlib.suppress(KeyboardInterrupt):
            while not self._closed.is_set():
                left = 0.5 if deadline is None else min(0.5, deadline - time.monotonic())
                if left <= 0:
                    return
                self._closed.wait(left)

    def _stop_server(self) -> None:
        with contextlib.redirect_stdout(io.StringIO()):
            self._server.stop()

    def close(self) -> None:
        """Stop the server and the viewer's threads."""
        if self._closed.is_set():
            return
        self._closed.set()
        self._clip.playing = False
        self._solver.stop()
        self._clip.join()
        self._stop_server()

    def __enter__(self) -> Viewer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed.is_set() else self.url
        return f"Viewer({self.model.name!r}, {state}, targets={list(self._target_T)})"
