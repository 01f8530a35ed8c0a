"""The ``kinetree`` command: ``models``, ``info``, ``fk``, ``ik``, ``animate``, ``bvh``.

Thin by design: each command loads a model through :func:`kinetree.load` and
calls the public API; the only logic here is parsing and printing. Every
:class:`~kinetree.errors.KinetreeError` is caught at this edge (the
:func:`cli_errors` decorator) and printed as ``error: <message>`` with exit
code 2, the same code the argument parser uses for usage errors.

Adding a command (ik, animate, bvh, ...)::

    @app.command("ik")
    @cli_errors
    def ik_cmd(model: ModelArg, ...) -> None:
        m = load(model)
        ...
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from typing import Annotated, ParamSpec, TypeVar

import numpy as np
import typer

from . import __version__
from . import models as _models
from .errors import KinetreeError, ShapeError
from .io import load
from .model import Model
from .spatial import matrix_to_rpy

__all__ = ["app", "cli_errors", "main"]

app = typer.Typer(
    name="kinetree",
    help="Forward and inverse kinematics for robot arms and animated characters.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)

EXIT_USAGE = 2  # bad input: a KinetreeError, or a usage error from the parser

P = ParamSpec("P")
R = TypeVar("R")

ModelArg = Annotated[
    str,
    typer.Argument(
        metavar="NAME|FILE",
        help="A built-in model (see `kinetree models`) or a .urdf/.bvh file.",
        show_default=False,
    ),
]


def main() -> None:
    """Entry point of the ``kinetree`` console script."""
    app()


def cli_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Turn a :class:`KinetreeError` into ``error: <message>`` on stderr and exit code 2."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except KinetreeError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(EXIT_USAGE) from None

    return wrapper


def _version(value: bool) -> None:
    if value:
        typer.echo(f"kinetree {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """Forward and inverse kinematics for robot arms and animated characters."""


# --- formatting helpers --------------------------------------------------------------------------


def table(headers: Sequence[str], rows: Sequence[Sequence[object]], indent: str = "  ") -> str:
    """Left-aligned text table with a dashed rule under the header."""
    cells = [[str(c) for c in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        widths = [max(w, len(c)) for w, c in zip(widths, row)]

    def line(values: Sequence[str]) -> str:
        return (indent + "  ".join(v.ljust(w) for v, w in zip(values, widths))).rstrip()

    out = [line(headers), line(["-" * w for w in widths])]
    out += [line(row) for row in cells]
    return "\n".join(out)


def _fmt(x: float, digits: int = 6) -> str:
    """A number in fixed point, without a "-0.000000" for round-off below the last digit."""
    s = f"{x:.{digits}f}"
    return s[1:] if s.startswith("-") and float(s) == 0.0 else s


def _axis_label(a: np.ndarray) -> str:
    for k, name in enumerate("xyz"):
        for sign, s in ((1.0, "+"), (-1.0, "-")):
            if np.array_equal(a, sign * np.eye(3)[k]):
                return s + name
    return "(" + ", ".join(f"{v:.4g}" for v in a) + ")"


def _description(name: str) -> str:
    """First paragraph of a built-in model's factory docstring, on one line."""
    # kinetree.models has no public "describe" yet; the registry maps names to factories.
    factory = getattr(_models, "_REGISTRY", {}).get(name)
    doc = (getattr(factory, "__doc__", None) or "").strip()
    first = " ".join(doc.split("\n\n", 1)[0].split()).replace("``", "")
    first = re.sub(r":\w+:`~?([^`]*)`", r"\1", first)  # Sphinx roles -> their text
    return first if len(first) <= 78 else first[:75].rstrip() + "..."


def _dof_nodes(model: Model) -> list[int]:
    """For each DoF, the node of the joint that owns it (not a joint mimicking it)."""
    own = [-1] * model.dof
    for k in range(model.n_nodes):
        qi = int(model.q_index[k])
        if qi < 0 or model.joint_type[k] == 0 or own[qi] >= 0:
            continue
        dof_name, joint = model.joint_names[qi], model.node_joint[k]
        if joint == dof_name or dof_name in model.joint_groups.get(joint, ()):
            own[qi] = k
    return own


def _is_revolute(model: Model) -> np.ndarray:
    nodes = _dof_nodes(model)
    return np.array([k >= 0 and model.joint_type[k] == 1 for k in nodes], dtype=bool)


def _limit_text(value: float, revolute: bool) -> str:
    if not np.isfinite(value):
        return "-inf" if value < 0 else "inf"
    return f"{np.degrees(value):.1f} deg" if revolute else f"{value:.4f} m"


def _visible_parent(model: Model, k: int) -> str:
    p = int(model.parent[k])
    while p >= 0 and model.hidden[p]:
        p = int(model.parent[p])
    return model.node_names[p] if p >= 0 else "-"


# --- commands ------------------------------------------------------------------------------------


@app.command("models")
@cli_errors
def models_cmd() -> None:
    """List the built-in models."""
    rows = []
    for name in _models.available():
        m = _models.get(name)
        rows.append([name, m.dof, ", ".join(m.end_effectors), _description(name)])
    typer.echo(table(["name", "dof", "end effectors", "description"], rows, indent=""))


@app.command("info")
@cli_errors
def info_cmd(model: ModelArg) -> None:
    """Joints (type, axis, limits), frames, end effectors and presets of a model."""
    m = load(model)
    source = m.metadata.get("source", "built-in" if model in _models.available() else model)
    typer.echo(f"model: {m.name}")
    typer.echo(f"source: {source}")
    typer.echo(f"dof: {m.dof}   frames: {len(m.frame_names)}   units: {m.units}")

    nodes = _dof_nodes(m)
    group_of = {d: g for g, dofs in m.joint_groups.items() for d in dofs if g != d}
    rows = []
    for i, name in enumerate(m.joint_names):
        k = nodes[i]
        revolute = k >= 0 and m.joint_type[k] == 1
        kind = ("continuous" if m.continuous[i] else "revolute") if revolute else "prismatic"
        lo, hi = m.limits[i]
        rows.append(
            [
                i, name, group_of.get(name, ""), kind,
                _axis_label(m.axis[k]) if k >= 0 else "?",
                _limit_text(lo, revolute), _limit_text(hi, revolute),
            ]
        )  # fmt: skip
    typer.echo("\njoints:")
    typer.echo(table(["#", "joint", "group", "type", "axis", "lower", "upper"], rows))

    owners = set(nodes)
    mimic = [
        [m.node_joint[k], m.joint_names[m.q_index[k]], f"{m.q_scale[k]:g}", f"{m.q_offset[k]:g}"]
        for k in range(m.n_nodes)
        if m.q_index[k] >= 0 and m.joint_type[k] != 0 and k not in owners
    ]
    if mimic:
        typer.echo("\nmimic joints (value = multiplier * source + offset):")
        typer.echo(table(["joint", "source", "multiplier", "offset"], mimic))

    frame_rows = [
        [f, _visible_parent(m, k), m.node_joint[k] or "(root)", "*" if f in m.end_effectors else ""]
        for f in m.frame_names
        for k in [m.frame_index(f)]
    ]
    typer.echo("\nframes:")
    typer.echo(table(["frame", "parent", "joint", "end effector"], frame_rows))
    typer.echo(f"\nend effectors: {', '.join(m.end_effectors) or '(none)'}")

    if m.presets:
        preset_rows = [
            [p, int(m.active_mask(p).sum()), ", ".join(joints)] for p, joints in m.presets.items()
        ]
        typer.echo("\npresets:")
        typer.echo(table(["preset", "dof", "joints"], preset_rows))


@app.command(
    "fk",
    # Let "-0.5" through as a joint value instead of an unknown option.
    context_settings={"ignore_unknown_options": True},
)
@cli_errors
def fk_cmd(
    model: ModelArg,
    q: Annotated[
        list[float] | None,
        typer.Argument(
            metavar="Q...",
            help="One value per DoF, in joint order (see `kinetree info`): rad or m.",
            show_default=False,
        ),
    ] = None,
    deg: Annotated[
        bool, typer.Option("--deg", help="Revolute values are in degrees (prismatic stay in m).")
    ] = False,
    frame: Annotated[
        str | None,
        typer.Option("--frame", "-f", help="Frame to report (default: first end effector)."),
    ] = None,
) -> None:
    """Forward kinematics: the pose of a frame at the configuration Q."""
    m = load(model)
    values = np.array(q or [], dtype=float)
    if values.shape[0] != m.dof:
        raise ShapeError(
            f"{m.name} takes {m.dof} joint values ({', '.join(m.joint_names)}); "
            f"got {values.shape[0]}"
        )
    if deg:
        values = np.where(_is_revolute(m), np.radians(values), values)
    name = frame if frame is not None else m.end_effectors[0]
    T = m.fk(values, name)

    typer.echo(f"{m.name}: frame {name!r} in {m.node_names[0]!r}")
    typer.echo("q [rad, m]: " + "  ".join(_fmt(v, 6) for v in values))
    outside = [j for j, v, (lo, hi) in zip(m.joint_names, values, m.limits) if not lo <= v <= hi]
    if outside:
        typer.echo(f"note: outside the joint limits: {', '.join(outside)}")
    typer.echo("pose:")
    for row in T:
        typer.echo("  " + "  ".join(f"{_fmt(v, 6):>10}" for v in row))
    rpy = matrix_to_rpy(T[:3, :3])
    typer.echo("position [m]:  " + "  ".join(_fmt(v, 6) for v in T[:3, 3]))
    typer.echo("rpy [rad]:     " + "  ".join(_fmt(v, 6) for v in rpy))
    typer.echo("rpy [deg]:     " + "  ".join(_fmt(v, 3) for v in np.degrees(rpy)))


Vec3 = tuple[float, float, float]


def _target(m: Model, target: Vec3, rpy: Vec3 | None, deg: bool) -> tuple[object, np.ndarray]:
    """A Position (or a Pose when ``rpy`` is given) and the target point."""
    from .ik import Pose, Position
    from .spatial import from_rotation_translation, rpy_to_matrix

    p = np.array(target, dtype=float)
    if rpy is None:
        return Position(p), p
    angles = np.radians(rpy) if deg else np.array(rpy, dtype=float)
    return Pose(from_rotation_translation(rpy_to_matrix(angles), p)), p


TargetOpt = Annotated[
    tuple[float, float, float],
    typer.Option("--target", "-t", help="Target position x y z [m].", show_default=False),
]
RpyOpt = Annotated[
    tuple[float, float, float] | None,
    typer.Option("--rpy", help="Also a target orientation: roll pitch yaw [rad, --deg]."),
]
FrameOpt = Annotated[
    str | None, typer.Option("--frame", "-f", help="Frame to move (default: first end effector).")
]
ActiveOpt = Annotated[
    str | None,
    typer.Option("--active", "-a", help="Joints that may move: a preset, a group or a joint."),
]
MethodOpt = Annotated[str, typer.Option("--method", "-m", help="IK method (see the docs).")]


@app.command("ik", context_settings={"ignore_unknown_options": True})
@cli_errors
def ik_cmd(
    model: ModelArg,
    target: TargetOpt,
    rpy: RpyOpt = None,
    frame: FrameOpt = None,
    active: ActiveOpt = None,
    method: MethodOpt = "auto",
    tol: Annotated[float, typer.Option("--tol", help="Tolerance [m and rad].")] = 1e-6,
    deg: Annotated[bool, typer.Option("--deg", help="Angles in and out in degrees.")] = False,
) -> None:
    """Inverse kinematics: a configuration that brings FRAME to the target."""
    m = load(model)
    tgt, _ = _target(m, target, rpy, deg)
    r = m.ik(tgt, frame, method=method, active=active, tol=tol, rest="neutral")
    q = np.where(_is_revolute(m), np.degrees(r.q), r.q) if deg else r.q
    typer.echo(f"{m.name}: {r.message}")
    typer.echo(
        f"success: {r.success}  position error: {r.position_error[0]:.3g} m  "
        f"orientation error: {r.orientation_error[0]:.3g} rad  ({r.elapsed * 1e3:.2f} ms)"
    )
    unit = "deg, m" if deg else "rad, m"
    typer.echo(table(["joint", f"q [{unit}]"], [(n, _fmt(v)) for n, v in zip(m.joint_names, q)]))
    if not r.success:
        raise typer.Exit(1)


@app.command("animate", context_settings={"ignore_unknown_options": True})
@cli_errors
def animate_cmd(
    model: ModelArg,
    target: TargetOpt,
    output: Annotated[str, typer.Option("-o", "--output", help="A .gif or .mp4 file.")],
    frame: FrameOpt = None,
    active: ActiveOpt = None,
    method: MethodOpt = "pinv",
    step: Annotated[float, typer.Option("--step", help="Seed 000's alpha per frame.")] = 0.1,
    fps: Annotated[int, typer.Option("--fps", help="Frames per second.")] = 20,
) -> None:
    """Animate the reach toward a target, one IK step per frame (seed 000's figure)."""
    from . import anim, viz

    m = load(model)
    p = np.array(target, dtype=float)
    motion = anim.reach(m, p, frame, method=method, step=step, active=active)
    path = viz.animate(m, motion.q, output, fps=fps, targets=[p], trail=frame or m.end_effectors[0])
    result = motion.metadata["result"]
    typer.echo(f"{m.name}: {result.message}; {len(motion)} frames written to {path}")


bvh_app = typer.Typer(help="BVH clips: info, joint positions, retargeting.", no_args_is_help=True)
app.add_typer(bvh_app, name="bvh")
BvhArg = Annotated[str, typer.Argument(metavar="FILE", help="A .bvh file.", show_default=False)]


@bvh_app.command("info")
@cli_errors
def bvh_info_cmd(path: BvhArg) -> None:
    """Skeleton, channels and motion of a BVH file."""
    from .io.bvh import read_bvh

    clip = read_bvh(path)
    typer.echo(
        f"{path}: {len(clip.joint_names)} joints, {clip.model.dof} channels, "
        f"{clip.n_frames} frames at {clip.fps:.3f} fps ({clip.duration:.2f} s)"
    )
    names = [j.name for j in clip.joints]
    rows = [
        (j.name, names[j.parent] if j.parent >= 0 else "-", " ".join(j.channels) or "(end site)")
        for j in clip.joints
    ]
    typer.echo(table(["joint", "parent", "channels"], rows))


@bvh_app.command("fk")
@cli_errors
def bvh_fk_cmd(
    path: BvhArg,
    frame_index: Annotated[int, typer.Option("--frame", "-n", help="Motion frame.")] = 0,
) -> None:
    """World positions of every joint at one motion frame (file units)."""
    from .io.bvh import read_bvh

    clip = read_bvh(path)
    if not 0 <= frame_index < clip.n_frames:
        raise ShapeError(f"--frame must be in [0, {clip.n_frames - 1}], got {frame_index}")
    P = clip.slice(frame_index, frame_index + 1).joint_positions()[0]
    rows = [(n, *(_fmt(v, 4) for v in p)) for n, p in zip(clip.joint_names, P)]
    typer.echo(table(["joint", "x", "y", "z"], rows))


@bvh_app.command("retarget", context_settings={"ignore_unknown_options": True})
@cli_errors
def bvh_retarget_cmd(
    path: BvhArg,
    joint: Annotated[str, typer.Option("--joint", "-j", help="Joint (frame) to move.")],
    offset: Annotated[
        tuple[float, float, float], typer.Option("--offset", help="World offset dx dy dz.")
    ],
    output: Annotated[str, typer.Option("-o", "--output", help="The .bvh file to write.")],
    active: Annotated[
        list[str] | None, typer.Option("--active", "-a", help="Joints that may move.")
    ] = None,
    pin: Annotated[
        list[str] | None, typer.Option("--pin", help="Frames kept where the clip has them.")
    ] = None,
) -> None:
    """Move one joint by a world offset on every frame (IK, warm-started), write a BVH."""
    from . import anim
    from .io.bvh import read_bvh, write_bvh

    clip = read_bvh(path)
    goal = clip.model.fk(clip.q, joint)[:, :3, 3] + np.array(offset)
    motion = anim.retarget(clip, {joint: goal}, active=active or None, pin=pin or None)
    ok = np.asarray(motion.metadata["success"])
    write_bvh(output, motion.to_clip())
    typer.echo(f"{int(ok.sum())}/{ok.size} frames on target; wrote {output}")


if __name__ == "__main__":  # pragma: no cover
    main()
