"""The viewer's side panel: IK options, readout, display toggles, joint sliders, Python code.

Only the controls are built here; :class:`~kinetree.viewer.Viewer` wires their callbacks.
Everything shown that comes from a file (frame and joint names) is escaped: a URDF can
name a link ``<script>``.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ik import METHODS
from ..model import JointType, Model

__all__ = [
    "ACTIVE_ALL",
    "ACTIVE_CHAINS",
    "MODES",
    "REST_CHOICES",
    "Panel",
    "Timeline",
    "build_panel",
    "build_timeline",
    "copy_block",
    "poses_code",
    "q_code",
    "slider_coordinates",
]

#: Target modes: the full pose of the gizmo, or its position only.
MODES = ("pose", "position")
#: ``active`` choices besides the model's presets.
ACTIVE_ALL = "all joints"
ACTIVE_CHAINS = "chains of the targets"
#: Rest pose choices: none, the model's neutral pose, the pose when chosen.
REST_CHOICES = ("off", "neutral", "current")
#: The method the viewer starts with: damped least squares tracks a dragged target
#: smoothly from the current configuration.
DEFAULT_METHOD = "dls"

_ACTIVE_HINT = (
    "Joints IK may move: all, the chains from the base to the targets' frames, or a preset"
)
_MODE_HINT = "Reach the gizmo's pose, or only its position"
_REST_HINT = (
    "Pull toward a rest pose in the null space of the targets: the neutral pose, or the "
    "pose when 'current' is chosen"
)
_RESTARTS_HINT = "Allow random restarts when a solve stalls (the arm may jump)"
_PIN_HINT = "Keep this frame where it is while IK solves"
_BUDGET_HINT = "Wall-clock budget of one solve: a drag solves again from where the last solve ended"
#: Time budget of one live solve [ms] (IKOptions.time_budget): a target that cannot be
#: reached costs at most this per drag event.
DEFAULT_BUDGET_MS = 50


@dataclass
class Panel:
    """Handles of the side panel's controls."""

    status: Any
    note: Any
    method: Any
    active: Any
    mode: Any
    restarts: Any
    budget: Any
    rest: Any
    pins: dict[str, Any]
    meshes: Any
    skeleton: Any
    frames: Any
    labels: Any
    collision: Any
    spheres: Any
    sliders: dict[int, Any]
    neutral: Any
    python: Any


@dataclass
class Timeline:
    """Handles of the clip controls."""

    folder: Any
    play: Any
    frame: Any
    speed: Any
    loop: Any
    clock: Any


_SPHERES_HINT = (
    "The spheres that contain the collision shapes: what model.distance and "
    "collision-aware IK measure (fitted on first show, then cached on disk)"
)


def slider_coordinates(model: Model) -> list[int]:
    """Indices of ``q`` that get a slider: every coordinate that is one number (the
    four numbers of a quaternion are left to IK and to :meth:`Viewer.show`)."""
    return [k for k in range(model.nq) if not model.qv.quaternion_mask[k]]


def _slider_range(model: Model, k: int, value: float, size: float) -> tuple[float, float, float]:
    """(min, max, step) of coordinate ``k``'s slider: its limits, or a window around
    ``value`` where a limit is infinite (a turn for angles, twice the model's size for
    lengths)."""
    lo, hi = (float(x) for x in model.limits[k])
    revolute = model.qv.dof_type[model.qv.q_v[k]] == JointType.REVOLUTE
    half = np.pi if revolute else 2.0 * size
    if not np.isfinite(lo):
        lo = min(value, 0.0) - half
    if not np.isfinite(hi):
        hi = max(value, 0.0) + half
    span = hi - lo
    step = 1e-3 if revolute else float(10 ** np.floor(np.log10(max(span, 1e-9) / 1000.0)))
    return lo, max(hi, lo + step), step


def _active_choices(model: Model) -> list[str]:
    return [ACTIVE_ALL, ACTIVE_CHAINS, *model.presets]


def build_panel(
    gui: Any,
    model: Model,
    q: np.ndarray,
    *,
    size: float,
    note: str | None,
    has_meshes: bool,
    pin_frames: list[str],
) -> Panel:
    """Add the side panel's controls to ``gui`` (a viser ``GuiApi``).

    The target mode starts as ``"pose"`` for a model with one end effector (an arm)
    and ``"position"`` for one with several (a figure, whose limbs rarely reach a full
    pose).
    """
    mode_default = "pose" if len(model.end_effectors) <= 1 else "position"
    status = gui.add_markdown("Drag a gizmo to solve IK.")
    note_md = gui.add_markdown(f"*{html.escape(note)}*" if note else "", visible=bool(note))
    with gui.add_folder("IK"):
        method = gui.add_dropdown(
            "Method", METHODS, initial_value=DEFAULT_METHOD, hint="kinetree.IKOptions.method"
        )
        active = gui.add_dropdown(
            "Active", _active_choices(model), initial_value=ACTIVE_ALL, hint=_ACTIVE_HINT
        )
        mode = gui.add_dropdown("Target", MODES, initial_value=mode_default, hint=_MODE_HINT)
        rest = gui.add_dropdown("Rest pose", REST_CHOICES, initial_value="off", hint=_REST_HINT)
        restarts = gui.add_checkbox("Random restarts", False, hint=_RESTARTS_HINT)
        budget = gui.add_number(
            "Budget [ms]", DEFAULT_BUDGET_MS, min=1, max=60_000, step=1, hint=_BUDGET_HINT
        )
    pins: dict[str, Any] = {}
    if pin_frames:
        with gui.add_folder("Pins", expand_by_default=False):
            for f in pin_frames:
                pins[f] = gui.add_checkbox(f"pin {f}", False, hint=_PIN_HINT)
    with gui.add_folder("Display"):
        meshes = gui.add_checkbox("Meshes", has_meshes, disabled=not has_meshes)
        skeleton = gui.add_checkbox("Skeleton", not has_meshes)
        frames = gui.add_checkbox("Frames", False)
        labels = gui.add_checkbox("Frame names", False)
        collision = gui.add_checkbox("Collision shapes", False)
        spheres = gui.add_checkbox("Collision spheres", False, hint=_SPHERES_HINT)
    sliders: dict[int, Any] = {}
    coords = slider_coordinates(model)
    with gui.add_folder("Joints", expand_by_default=len(coords) <= 12):
        neutral = gui.add_button("Neutral pose")
        for k in coords:
            lo, hi, step = _slider_range(model, k, float(q[k]), size)
            sliders[k] = gui.add_slider(
                model.joint_names[k], lo, hi, step, float(np.clip(q[k], lo, hi))
            )
    with gui.add_folder("Python", expand_by_default=False):
        python = gui.add_html("")
    return Panel(
        status=status,
        note=note_md,
        method=method,
        active=active,
        mode=mode,
        restarts=restarts,
        budget=budget,
        rest=rest,
        pins=pins,
        meshes=meshes,
        skeleton=skeleton,
        frames=frames,
        labels=labels,
        collision=collision,
        spheres=spheres,
        sliders=sliders,
        neutral=neutral,
        python=python,
    )


def build_timeline(gui: Any, n_frames: int, fps: float) -> Timeline:
    """Add the clip controls: play/pause, frame slider, speed, loop, clock."""
    folder = gui.add_folder("Clip", order=-1.0)
    with folder:
        play = gui.add_button("Pause")
        frame = gui.add_slider("Frame", 0, max(n_frames - 1, 1), 1, 0, disabled=n_frames < 2)
        speed = gui.add_slider("Speed", 0.1, 4.0, 0.1, 1.0)
        loop = gui.add_checkbox("Loop", True)
        clock = gui.add_markdown(f"0 / {n_frames} frames at {fps:.4g} fps")
    return Timeline(folder=folder, play=play, frame=frame, speed=speed, loop=loop, clock=clock)


_COPY_JS = (
    "var t=this.parentNode.querySelector('pre').innerText;"
    "if(navigator.clipboard){navigator.clipboard.writeText(t);}"
    "else{var a=document.createElement('textarea');a.value=t;document.body.appendChild(a);"
    "a.select();document.execCommand('copy');a.remove();}"
    "this.innerText='Copied';"
)


def copy_block(title: str, code: str) -> str:
    """HTML: a button that copies ``code`` to the clipboard, and the code."""
    return (
        '<div style="margin:4px 0 10px 0">'
        f'<button style="font-size:12px;padding:2px 8px;cursor:pointer" onclick="{_COPY_JS}">'
        f"Copy {html.escape(title)}</button>"
        '<pre style="font-size:11px;white-space:pre-wrap;word-break:break-all;'
        'max-height:220px;overflow:auto;margin:4px 0">'
        f"{html.escape(code)}</pre></div>"
    )


def q_code(model: Model, q: np.ndarray) -> str:
    """``q`` as a line of Python, every digit kept."""
    values = ", ".join(repr(float(x)) for x in q)
    return f"# {model.name}: {model.nq} coordinates [rad, {model.units}]\nq = np.array([{values}])"


def poses_code(model: Model, q: np.ndarray, frames: list[str]) -> str:
    """The world poses (4x4) of ``frames`` at ``q`` as a Python dictionary."""
    T = np.asarray(model.fk_all(q))
    index = {n: i for i, n in enumerate(model.frame_names)}
    lines = [f"# world poses (4x4) of {model.name}'s frames", "poses = {"]
    for f in frames:
        rows = ", ".join(
            "[" + ", ".join(repr(round(float(x), 9)) for x in row) + "]" for row in T[index[f]]
        )
        lines.append(f"    {f!r}: np.array([{rows}]),")
    lines.append("}")
    return "\n".join(lines)
