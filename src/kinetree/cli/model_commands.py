"""The model commands: ``models``, ``info``, ``fk``, ``ik``, ``warmup``, ``animate``.

Long because the six commands share their argument checks and output formatting.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import numpy as np
import typer

from .. import models as _models
from ..errors import (
    InvalidValueError,
    NotRigidError,
    ShapeError,
)
from ..ik.method_table import CLOSED_FORM, TABLE
from ..model import JointType, Model
from ..spatial import matrix_to_rpy, orthonormalize
from ._app import (
    EPILOG,
    EXIT_FAILED,
    WIDTH,
    ActiveOpt,
    FrameOpt,
    JsonOpt,
    MethodOpt,
    ModelArg,
    NumbersCommand,
    TargetOpt,
    app,
    cli_errors,
    echo_json,
    fixed,
    load_model,
    output_path,
    parse_numbers,
    table,
)

if TYPE_CHECKING:
    from ..ik import Pose, Position


@app.command("models", epilog=EPILOG)
@cli_errors
def models_cmd(as_json: JsonOpt = False) -> None:
    """List the built-in models (each with a one-line description below it)."""
    names = _models.available()
    built = [_models.get(name) for name in names]
    if as_json:
        echo_json(
            [
                {
                    "name": n,
                    "dof": m.nv,
                    "end_effectors": list(m.end_effectors),
                    "description": _description(n, width=10_000),
                }
                for n, m in zip(names, built)
            ]
        )
        return
    rows = [[n, m.nv, ", ".join(m.end_effectors)] for n, m in zip(names, built)]
    lines = table(["name", "dof", "end effectors"], rows, indent="").splitlines()
    out = lines[:2]
    for name, line in zip(names, lines[2:]):
        out += [line, "    " + _description(name, width=WIDTH - 4)]
    typer.echo("\n".join(out))


@app.command("info", epilog=EPILOG)
@cli_errors
def info_cmd(model: ModelArg, as_json: JsonOpt = False) -> None:
    """Joints (type, axis, limits), frames, end effectors and presets of a model."""
    m = load_model(model)
    source = m.metadata.get("source", "built-in" if model in _models.available() else model)
    # The node each coordinate drives itself (not through a mimic).
    nodes = m.qv.dof_node[m.qv.q_v].tolist()
    group_of = {d: g for g, dofs in m.joint_groups.items() for d in dofs if g != d}
    joints = []
    for i, name in enumerate(m.joint_names):
        k = nodes[i]
        revolute = bool(k >= 0 and m.joint_type[k] == JointType.REVOLUTE)
        kind = ("continuous" if m.continuous[i] else "revolute") if revolute else "prismatic"
        lo, hi = m.limits[i]
        axis = m.axis[k] if k >= 0 else None
        if m.qv.quaternion_mask[i]:
            kind = "quaternion"
            axis = None
        joints.append((i, name, group_of.get(name, ""), kind, axis, float(lo), float(hi)))
    owners = set(nodes)
    mimic = [
        (m.node_joint[k], m.joint_names[m.q_index[k]], float(m.q_scale[k]), float(m.q_offset[k]))
        for k in range(m.n_nodes)
        if m.moves(k) and k not in owners
    ]
    frames = [
        (f, _visible_parent(m, k), m.node_joint[k] or "", f in m.end_effectors)
        for f in m.frame_names
        for k in [m.frame_index(f)]
    ]
    presets = [(p, int(m.active_mask(p).sum()), list(js)) for p, js in m.presets.items()]

    if as_json:
        echo_json(
            {
                "model": m.name,
                "source": str(source),
                "dof": m.nv,
                "units": m.units,
                "joints": [
                    {
                        "index": i,
                        "name": n,
                        "group": g or None,
                        "type": t,
                        "axis": None if a is None else a.tolist(),
                        "lower": _finite_or_none(lo),
                        "upper": _finite_or_none(hi),
                    }
                    for i, n, g, t, a, lo, hi in joints
                ],
                "mimic": [
                    {"joint": j, "source": s, "multiplier": mul, "offset": off}
                    for j, s, mul, off in mimic
                ],
                "frames": [
                    {
                        "name": f,
                        "parent": None if p == "-" else p,
                        "joint": j or None,
                        "end_effector": ee,
                    }
                    for f, p, j, ee in frames
                ],
                "end_effectors": list(m.end_effectors),
                "presets": {p: {"dof": d, "joints": js} for p, d, js in presets},
            }
        )
        return

    typer.echo(f"model: {m.name}")
    typer.echo(f"source: {source}")
    typer.echo(f"dof: {m.nv}   nq: {m.nq}   frames: {len(m.frame_names)}   units: {m.units}")
    rows = [
        [
            i,
            n,
            g,
            t,
            ("-" if t == "quaternion" else "?") if a is None else _axis_label(a),
            _limit_text(lo, None if t == "quaternion" else t != "prismatic"),
            _cone_text(m, n, g) if t == "quaternion" else _limit_text(hi, t != "prismatic"),
        ]
        for i, n, g, t, a, lo, hi in joints
    ]
    typer.echo("\njoints:")
    typer.echo(table(["#", "joint", "group", "type", "axis", "lower", "upper"], rows))
    if mimic:
        typer.echo("\nmimic joints (value = multiplier * source + offset):")
        mimic_rows = [[j, s, f"{mul:g}", f"{off:g}"] for j, s, mul, off in mimic]
        typer.echo(table(["joint", "source", "multiplier", "offset"], mimic_rows))
    frame_rows = [[f, p, j or "(root)", "*" if ee else ""] for f, p, j, ee in frames]
    typer.echo("\nframes:")
    typer.echo(table(["frame", "parent", "joint", "end effector"], frame_rows))
    effectors = f"end effectors: {', '.join(m.end_effectors) or '(none)'}"
    typer.echo("\n" + textwrap.fill(effectors, WIDTH, subsequent_indent="  "))
    if presets:
        typer.echo("\npresets:")
        typer.echo(
            table(["preset", "dof", "joints"], [(p, d, ", ".join(js)) for p, d, js in presets])
        )


@app.command("fk", cls=NumbersCommand, epilog=EPILOG)
@cli_errors
def fk_cmd(
    model: ModelArg,
    q: Annotated[
        list[float] | None,
        typer.Argument(
            metavar="Q...",
            help="One value per DoF, in joint order (see `kinetree info`): rad or m "
            "(degrees with --deg). Negative values need no quoting.",
            show_default=False,
        ),
    ] = None,
    deg: Annotated[
        bool, typer.Option("--deg", help="Revolute values are in degrees (prismatic stay in m).")
    ] = False,
    frame: Annotated[
        str | None,
        typer.Option(
            "--frame", "-f", metavar="NAME", help="Frame to report (default: first end effector)."
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Forward kinematics: the pose of a frame at the configuration Q."""
    m = load_model(model)
    values = _joint_values(m, q or [], deg)
    name = frame if frame is not None else m.end_effectors[0]
    T = m.fk(values, name)
    rpy = matrix_to_rpy(T[:3, :3])
    outside = [j for j, v, (lo, hi) in zip(m.joint_names, values, m.limits) if not lo <= v <= hi]
    if as_json:
        echo_json(
            {
                "model": m.name,
                "frame": name,
                "base": m.node_names[0],
                "q": values.tolist(),
                "pose": T.tolist(),
                "position": T[:3, 3].tolist(),
                "rpy": rpy.tolist(),
                "outside_limits": outside,
            }
        )
        return

    typer.echo(f"{m.name}: frame {name!r} in {m.node_names[0]!r}")
    typer.echo("q [rad, m]: " + "  ".join(_full(v) for v in values))
    if outside:
        typer.echo(f"note: outside the joint limits: {', '.join(outside)}")
    typer.echo("pose:")
    for row in T:
        typer.echo("  " + "  ".join(f"{fixed(v, 6):>10}" for v in row))
    typer.echo("position [m]:  " + "  ".join(fixed(v, 6) for v in T[:3, 3]))
    typer.echo("rpy [rad]:     " + "  ".join(fixed(v, 6) for v in rpy))
    typer.echo("rpy [deg]:     " + "  ".join(fixed(v, 3) for v in np.degrees(rpy)))


def _target(
    target: tuple[float, float, float] | None,
    rpy: tuple[float, float, float] | None,
    pose: str | None,
    deg: bool,
) -> tuple[Pose | Position, np.ndarray]:
    """A Position, or a Pose (``--rpy`` or ``--pose``), and the target point."""
    from ..ik import Pose, Position
    from ..spatial import from_rotation_translation, rpy_to_matrix

    if pose is not None:
        if target is not None or rpy is not None:
            raise InvalidValueError("give either --pose, or --target (with --rpy); not both")
        v = parse_numbers(pose, "--pose")
        if v.size not in (12, 16):
            raise ShapeError(
                "--pose takes the 4x4 matrix row by row: 16 numbers (or 12, the first "
                f"three rows); got {v.size}"
            )
        T = np.vstack([v.reshape(-1, 4)[:3], [0.0, 0.0, 0.0, 1.0]]) if v.size == 12 else v
        try:
            T = orthonormalize(T.reshape(4, 4), tol=1e-4)
        except NotRigidError as exc:
            raise NotRigidError(f"--pose is not a rigid transform: {exc}") from None
        return Pose(T), T[:3, 3]
    if target is None:
        raise InvalidValueError("give a target: --target X Y Z (and --rpy), or --pose")
    p = np.array(target, dtype=float)
    if rpy is None:
        return Position(p), p
    angles = np.radians(rpy) if deg else np.array(rpy, dtype=float)
    return Pose(from_rotation_translation(rpy_to_matrix(angles), p)), p


@app.command("ik", epilog=EPILOG)
@cli_errors
def ik_cmd(
    model: ModelArg,
    target: TargetOpt = None,
    rpy: Annotated[
        tuple[float, float, float] | None,
        typer.Option(
            "--rpy",
            metavar="ROLL PITCH YAW",
            help="Also a target orientation (rad; degrees with --deg).",
        ),
    ] = None,
    pose: Annotated[
        str | None,
        typer.Option(
            "--pose",
            metavar="'T00 T01 ... T33'",
            help="Instead of --target/--rpy: the 4x4 target pose, row by row, 16 numbers "
            "(or 12) separated by spaces or commas, e.g. the 'pose:' lines `kinetree fk` "
            "prints (m). Projected onto the nearest rigid transform; refused when off by "
            "more than 1e-4.",
        ),
    ] = None,
    frame: FrameOpt = None,
    active: ActiveOpt = None,
    method: MethodOpt = "auto",
    tol: Annotated[
        float,
        typer.Option("--tol", metavar="TOL", help="Tolerance (m for position, rad for rotation)."),
    ] = 1e-6,
    q0: Annotated[
        str | None,
        typer.Option(
            "--q0",
            metavar="'Q1 Q2 ...'",
            help="Start configuration, one value per DoF separated by spaces or commas "
            "(rad, m; degrees with --deg). Default: the neutral pose.",
        ),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option(
            "--seed", min=0, metavar="N", help="Seed of the random restarts (reproducible runs)."
        ),
    ] = None,
    deg: Annotated[
        bool, typer.Option("--deg", help="Angles in and out in degrees (text output).")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Inverse kinematics: a configuration that brings FRAME to the target.

    Exits with 1 when the solve does not reach the target within --tol.
    """
    m = load_model(model)
    tgt, _ = _target(target, rpy, pose, deg)
    options: dict[str, Any] = {"method": method, "active": active or None, "tol": tol}
    if q0 is not None:
        options["q0"] = _joint_values(m, parse_numbers(q0, "--q0").tolist(), deg, "--q0: ")
    if seed is not None:
        options["seed"] = seed
    r = m.ik(tgt, frame, rest="neutral", **options)
    success = bool(r.success)
    if as_json:
        echo_json(
            {
                "model": m.name,
                "frame": frame or m.end_effectors[0],
                "success": success,
                "message": str(r.message),
                "position_error": float(r.position_error[0]),
                "orientation_error": float(r.orientation_error[0]),
                "iterations": int(r.iterations),
                "restarts": int(r.restarts),
                "elapsed": float(r.elapsed),
                "method": r.method,
                "joint_names": list(m.joint_names),
                "q": np.asarray(r.q).tolist(),
            }
        )
    else:
        q = np.where(_is_revolute(m), np.degrees(r.q), r.q) if deg else r.q
        typer.echo(f"{m.name}: {r.message}")
        typer.echo(
            f"success: {success}  position error: {r.position_error[0]:.3g} m  "
            f"orientation error: {r.orientation_error[0]:.3g} rad  ({r.elapsed * 1e3:.2f} ms)"
        )
        unit = "deg, m" if deg else "rad, m"
        rows = [(n, _full(v)) for n, v in zip(m.joint_names, q)]
        typer.echo(table(["joint", f"q [{unit}]"], rows))
    if not success:
        raise typer.Exit(EXIT_FAILED)


@app.command("warmup", epilog=EPILOG)
@cli_errors
def warmup_cmd(
    all_methods: Annotated[
        bool, typer.Option("--all", help="Every IK method, not only the default (auto).")
    ] = False,
    jobs: Annotated[
        int, typer.Option("--jobs", "-j", min=1, help="Processes compiling at once (one per core).")
    ] = 1,
) -> None:
    """Compile kinetree's kernels now (once per machine; cached on disk), so that the
    first FK and IK calls of later processes do not wait for the compiler."""
    from .._warmup import warmup

    methods = tuple(r.name for r in TABLE if r.kind != CLOSED_FORM) if all_methods else ("auto",)
    seconds = warmup(methods, jobs=jobs)
    typer.echo(f"kinetree kernels ready ({seconds:.1f} s)")


@app.command("animate", epilog=EPILOG)
@cli_errors
def animate_cmd(
    model: ModelArg,
    target: Annotated[
        tuple[float, float, float],
        typer.Option(
            "--target", "-t", metavar="X Y Z", help="Target position (m).", show_default=False
        ),
    ],
    output: Annotated[
        str,
        typer.Option(
            "-o",
            "--output",
            metavar="FILE",
            help="A .gif or .mp4 file; missing folders are created.",
        ),
    ],
    frame: FrameOpt = None,
    active: ActiveOpt = None,
    method: MethodOpt = "pinv",
    step: Annotated[
        float, typer.Option("--step", metavar="ALPHA", help="Seed 000's alpha per frame.")
    ] = 0.1,
    fps: Annotated[int, typer.Option("--fps", metavar="N", help="Frames per second.")] = 20,
    meshes: Annotated[
        bool,
        typer.Option(
            "--meshes/--no-meshes",
            help="Draw the robot's meshes when it has some (a built-in robot's need "
            "kinetree[meshes]), or only sticks.",
        ),
    ] = True,
) -> None:
    """Animate the reach toward a target, one IK step per frame (seed 000's figure)."""
    from .. import anim, viz

    m = load_model(model)
    if Path(output).suffix.lower() not in (".gif", ".mp4"):
        raise InvalidValueError(f"-o {output!r}: the animation must be a .gif or .mp4 file")
    p = np.array(target, dtype=float)
    motion = anim.reach(m, p, frame, method=method, step=step, active=active or None)
    out = output_path(output)
    path = viz.animate(
        m, motion.q, out, fps=fps, targets=[p], trail=frame or m.end_effectors[0], meshes=meshes
    )
    result = motion.metadata["result"]
    typer.echo(f"{m.name}: {result.message}; {len(motion)} frames written to {path}")
    if not bool(motion.metadata["success"]):
        typer.echo(f"error: the target was not reached: {result.message}", err=True)
        raise typer.Exit(EXIT_FAILED)


# --- helpers of these commands ---


def _joint_values(m: Model, values: Sequence[float], deg: bool, what: str = "") -> np.ndarray:
    """One value per DoF [rad, m]; revolute ones converted from degrees with ``deg``."""
    q = np.array(values, dtype=float)
    if q.shape != (m.nq,):
        raise ShapeError(
            f"{what}{m.name} takes {m.nq} joint values ({', '.join(m.joint_names)}); got {q.size}"
        )
    return np.where(_is_revolute(m), np.radians(q), q) if deg else q


def _finite_or_none(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


def _axis_label(a: np.ndarray) -> str:
    for k, name in enumerate("xyz"):
        for sign, s in ((1.0, "+"), (-1.0, "-")):
            if np.array_equal(a, sign * np.eye(3)[k]):
                return s + name
    return "(" + ", ".join(f"{v:.4g}" for v in a) + ")"


def _description(name: str, width: int = WIDTH) -> str:
    """First paragraph of a built-in model's factory docstring, on one line of ``width``."""
    # kinetree.models has no public "describe" yet; the registry maps names to factories.
    factory = getattr(_models, "_REGISTRY", {}).get(name)
    doc = (getattr(factory, "__doc__", None) or "").strip()
    first = " ".join(doc.split("\n\n", 1)[0].split()).replace("``", "")
    first = re.sub(r":\w+:`~?([^`]*)`", r"\1", first)  # Sphinx roles -> their text
    return first if len(first) <= width else first[: width - 3].rstrip() + "..."


def _is_revolute(model: Model) -> np.ndarray:
    """``(nq,)``: the coordinates that are angles (quaternion numbers are not)."""
    return np.asarray(
        (model.qv.dof_type[model.qv.q_v] == JointType.REVOLUTE) & ~model.qv.quaternion_mask
    )


def _limit_text(value: float, revolute: bool | None) -> str:
    """A limit in degrees (revolute), metres, or "-" (None: a quaternion's number)."""
    if revolute is None:
        return "-"
    if not np.isfinite(value):
        return "-inf" if value < 0 else "inf"
    return f"{np.degrees(value):.1f} deg" if revolute else f"{value:.4f} m"


def _cone_text(model: Model, coordinate: str, joint: str) -> str:
    """The upper-limit cell of a quaternion coordinate: on its ``qw`` row, the largest
    rotation angle of a limited ball joint."""
    lim = model.ball_limits.get(joint)
    if lim is None or not coordinate.endswith("_qw"):
        return "-"
    return f"angle <= {np.degrees(lim):.1f} deg"


def _visible_parent(model: Model, k: int) -> str:
    p = int(model.parent[k])
    while p >= 0 and model.hidden[p]:
        p = int(model.parent[p])
    return model.node_names[p] if p >= 0 else "-"


def _full(x: float) -> str:
    """Every digit: the shortest text that reads back as exactly ``x``."""
    return repr(float(x))
