"""The ``kinetree`` command: ``models``, ``info``, ``fk``, ``ik``, ``animate``, ``view``, ``bvh``.

Long because every command lives here: one file keeps the flags, help texts and exit
codes of all commands consistent (each command is a short function).

Thin by design: each command loads a model through :func:`kinetree.load` and
calls the public API; the only logic here is parsing and printing. Every
:class:`~kinetree.errors.KinetreeError` is caught at this edge (the
:func:`cli_errors` decorator) and printed as ``error: <message>`` on stderr.

Exit codes (also in every ``--help`` and the README):

====  ==========================================================================
code  meaning
====  ==========================================================================
0     success
1     the solve failed: ``ik`` did not reach the target within ``--tol``;
      ``bvh retarget`` missed the target on at least one frame (the file is
      still written, the frames that missed are listed)
2     bad input or usage: unknown option, command, model, frame, method or file;
      wrong number of values; a number that does not parse; a pose that is not
      rigid (within 1e-4)
====  ==========================================================================

Conventions shared by every command:

- ``--frame/-f`` is always a frame *name* (``bvh fk`` picks a motion frame with
  ``--index/-n``); ``--active/-a`` is repeatable (a preset, a group or a joint).
- A BVH argument (and a model argument) also takes the name of a file shipped
  with kinetree (:mod:`kinetree.data`): ``kinetree bvh info cmu_walk``.
- Joint values print with full precision (``repr``: they read back exactly);
  ``--json`` prints machine-readable output in SI units (rad, m) whatever
  ``--deg`` says.
- Negative numbers are values, not options: ``kinetree fk panda 0 -45 ...``;
  an unknown option (``--degs``) is reported as such, with suggestions.
- Pose input (``ik --pose``) is projected onto the nearest rigid transform
  (:func:`kinetree.spatial.orthonormalize`), so a pose printed by ``fk`` with 6
  decimals is accepted; one off by more than 1e-4 is refused (exit 2).
- An output file's missing parent folders are created, and a line says so.

Adding a command::

    @app.command("name", epilog=EPILOG)
    @cli_errors
    def name_cmd(model: ModelArg, ...) -> None:
        m = _load(model)
        ...
"""

from __future__ import annotations

import functools
import gc
import json
import re
import typing
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Annotated, Any, ParamSpec, TypeVar

import numpy as np
import typer
from typer.core import TyperCommand

from . import __version__
from . import data as _data
from . import models as _models
from .errors import (
    InvalidValueError,
    KinetreeError,
    NotRigidError,
    ShapeError,
    UnknownNameError,
)
from .ik import METHODS
from .io import load
from .model import JointType, Model
from .spatial import matrix_to_rpy, orthonormalize

__all__ = ["EXIT_FAILED", "EXIT_OK", "EXIT_USAGE", "app", "cli_errors", "main"]

EXIT_OK = 0  # success
EXIT_FAILED = 1  # ik did not converge; bvh retarget missed the target on some frame
EXIT_USAGE = 2  # bad input: a KinetreeError, or a usage error from the parser

# "\b" keeps click from re-wrapping the paragraph that follows it.
EPILOG = (
    "\b\nExit codes: 0 ok; 1 solve failed (ik not converged, or bvh retarget"
    "\nmissed a frame); 2 bad input or usage."
)

#: Widest line any command prints in its tables.
WIDTH = 80

P = ParamSpec("P")
R = TypeVar("R")

app = typer.Typer(
    name="kinetree",
    help="Forward and inverse kinematics for robot arms and animated characters.",
    epilog=EPILOG,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
    # Plain click help: "[m]" stays "[m]" (rich markup ate it) and no boxes.
    rich_markup_mode=None,
)

ModelArg = Annotated[
    str,
    typer.Argument(
        metavar="MODEL",
        help="A built-in model (see `kinetree models`), a .urdf, .xacro, MJCF .xml or .bvh "
        f"file, or a bundled file's name ({', '.join(_data.names())}).",
        show_default=False,
    ),
]


def main() -> None:
    """Entry point of the ``kinetree`` console script (and ``python -m kinetree``)."""
    try:
        app(prog_name="kinetree")
    finally:
        # The process ends here: leave numba's ~100,000 objects (typing tables, loaded
        # kernels) to the operating system instead of collecting them one by one at
        # exit, which costs about 0.3 s (docs/benchmarks.md, "Start-up").
        gc.freeze()


#: Keyword arguments of the Python API that its messages name, and the flag that sets
#: each on the command line.
FLAG_OF = {
    "source_scale": "--scale", "up": "--up", "smooth": "--smooth",
    "max_joint_speed": "--max-speed", "self_collision": "--self-collision", "mapping": "--map",
    "client": "--scheduler", "resolution": "--resolution", "orientations": "--orientations",
    "restarts": "--restarts", "seed": "--seed", "device": "--device", "tol": "--tol",
    "method": "--method", "q0": "--q0", "frame": "--frame", "active": "--active",
}  # fmt: skip
_LOCAL_CLUSTER = re.compile(r"pass client=None for the embedded local cluster")


def in_cli_words(message: str, flags: Iterable[str]) -> str:
    """``message`` with the Python API's keyword arguments (``source_scale=``,
    ``client=None``) named by the flags that set them, where the command has them."""
    have = set(flags)
    if "--scheduler" in have:
        message = _LOCAL_CLUSTER.sub("leave out --scheduler to run on this machine", message)
    for name, flag in FLAG_OF.items():
        if flag not in have:
            continue
        message = re.sub(rf"(?<![\w.-]){name}=(?!\w)", flag, message)  # "pass up="
        message = re.sub(rf"(?<![\w.-]){name}=(None\b)?", f"{flag} ", message)  # "client=x"
        if "_" in name:  # an unmistakable name: also where it stands alone
            message = re.sub(rf"(?<![\w.-]){name}\b", flag, message)
    return message


def cli_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Turn a :class:`KinetreeError` into ``error: <message>`` on stderr and exit code 2,
    the message in the command's words (:func:`in_cli_words`)."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except KinetreeError as exc:
            typer.echo(f"error: {in_cli_words(str(exc), _flags_of(func))}", err=True)
            raise typer.Exit(EXIT_USAGE) from None

    return wrapper


def _flags_of(func: Callable[..., Any]) -> list[str]:
    """The flags a command declares (``--scale``, ``-o``), read from its annotations."""
    try:
        hints = typing.get_type_hints(func, include_extras=True)
    except Exception:  # an annotation that does not resolve: no translation
        return []
    out: list[str] = []
    for hint in hints.values():
        for meta in getattr(hint, "__metadata__", ()):
            # typer.Option("--scale", ...) in Annotated: the first name sits in `default`
            names = (getattr(meta, "default", None), *(getattr(meta, "param_decls", None) or ()))
            out += [d for d in names if isinstance(d, str) and d.startswith("-")]
    return out


class NumbersCommand(TyperCommand):
    """A command whose positional arguments may be negative numbers (``fk panda 0 -45``).

    Click reads any token starting with ``-`` as an option. Instead of ignoring
    unknown options (which turned a typo such as ``--degs`` into "invalid value
    for Q"), the arguments are reordered before parsing: options with their
    values first, then ``--``, then the positional arguments, where a token that
    looks like a negative number and is not an option's value counts as
    positional. A real unknown option still reaches click, which says
    "No such option: --degs" and suggests ``--deg``.
    """

    _NEGATIVE = re.compile(r"-(\d|\.\d|inf|nan)", re.IGNORECASE)

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        consumes: dict[str, int] = {}
        for param in self.get_params(ctx):
            if getattr(param, "param_type_name", "") != "option":
                continue
            n = 0 if getattr(param, "is_flag", False) or getattr(param, "count", False) else 1
            n *= max(1, int(getattr(param, "nargs", 1)))
            for name in (*param.opts, *param.secondary_opts):
                consumes[name] = n
        options: list[str] = []
        positional: list[str] = []
        i = 0
        while i < len(args):
            a = args[i]
            if a == "--":
                positional += args[i + 1 :]
                break
            if a in consumes:
                n = consumes[a]
                options += args[i : i + 1 + n]
                i += 1 + n
                continue
            if a.startswith("-") and len(a) > 1 and not self._NEGATIVE.match(a):
                options.append(a)  # an option with an attached value, or an unknown one
            else:
                positional.append(a)
            i += 1
        return super().parse_args(ctx, [*options, "--", *positional] if positional else options)


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


# --- input helpers -------------------------------------------------------------------------------


def _clips() -> list[str]:
    """Short names of the bundled BVH clips."""
    return [n for n in _data.names() if _data.FILES[n].endswith(".bvh")]


def _bundled(arg: str) -> Path | None:
    """The bundled file ``arg`` names, when ``arg`` is not an existing path."""
    if Path(arg).exists():
        return None
    try:
        return _data.path(arg)
    except KinetreeError:
        return None


def _load(model: str) -> Model:
    """A built-in model, a file, or a bundled file by name."""
    if model in _models.available():
        return load(model)
    bundled = _bundled(model)
    try:
        return load(str(bundled) if bundled is not None else model)
    except UnknownNameError as exc:
        raise UnknownNameError(f"{exc}; bundled files: {', '.join(_data.names())}") from None


def _bvh_path(arg: str) -> str:
    """``arg`` as a BVH path: an existing file, or a bundled file's name."""
    bundled = _bundled(arg)
    if bundled is not None and bundled.suffix == ".bvh":
        return str(bundled)
    if not Path(arg).exists():
        raise InvalidValueError(
            f"file {arg!r} does not exist; bundled clips are: {', '.join(_clips())}"
        )
    return arg


def _numbers(text: str, option: str) -> np.ndarray:
    """Numbers separated by spaces, commas or brackets: ``"1, -2 3"`` or ``"[[1, 0], ...]"``."""
    tokens = [t for t in re.split(r"[\s,;\[\]()]+", text) if t]
    try:
        return np.array([float(t) for t in tokens], dtype=float)
    except ValueError:
        bad = next(t for t in tokens if not _is_float(t))
        raise InvalidValueError(f"{option}: {bad!r} is not a number") from None


def _is_float(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def _joint_values(m: Model, values: Sequence[float], deg: bool, what: str = "") -> np.ndarray:
    """One value per DoF [rad, m]; revolute ones converted from degrees with ``deg``."""
    q = np.array(values, dtype=float)
    if q.shape != (m.nq,):
        raise ShapeError(
            f"{what}{m.name} takes {m.nq} joint values ({', '.join(m.joint_names)}); got {q.size}"
        )
    return np.where(_is_revolute(m), np.radians(q), q) if deg else q


def _output(path: str) -> Path:
    """``path`` with its missing parent folders created (and a line saying so)."""
    out = Path(path)
    parent = out.parent
    if parent.exists() and not parent.is_dir():
        raise InvalidValueError(f"cannot write {path!r}: {str(parent)!r} is a file, not a folder")
    if not parent.exists():
        parent.mkdir(parents=True)
        typer.echo(f"created folder {parent}")
    return out


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


def _full(x: float) -> str:
    """Every digit: the shortest text that reads back as exactly ``x``."""
    return repr(float(x))


def _json(obj: object) -> None:
    typer.echo(json.dumps(obj, allow_nan=False))


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
    return np.asarray((model.dof_type[model.q_v] == JointType.REVOLUTE) & ~model.quaternion_mask)


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


# --- shared options ------------------------------------------------------------------------------

JsonOpt = Annotated[
    bool, typer.Option("--json", help="Machine-readable output (JSON, SI units: rad and m).")
]
FrameOpt = Annotated[
    str | None,
    typer.Option(
        "--frame", "-f", metavar="NAME", help="Frame to move (default: first end effector)."
    ),
]
ActiveOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--active",
        "-a",
        metavar="NAME",
        help="Joints that may move: a preset, a group or a joint; repeat for several "
        "(default: all).",
    ),
]


MethodOpt = Annotated[
    str,
    typer.Option(
        "--method", "-m", metavar="METHOD", help=f"IK method, one of: {', '.join(METHODS)}."
    ),
]
TargetOpt = Annotated[
    tuple[float, float, float] | None,
    typer.Option(
        "--target", "-t", metavar="X Y Z", help="Target position (m).", show_default=False
    ),
]


# --- commands ------------------------------------------------------------------------------------


@app.command("models", epilog=EPILOG)
@cli_errors
def models_cmd(as_json: JsonOpt = False) -> None:
    """List the built-in models (each with a one-line description below it)."""
    names = _models.available()
    built = [_models.get(name) for name in names]
    if as_json:
        _json(
            [
                {"name": n, "dof": m.nv, "end_effectors": list(m.end_effectors),
                 "description": _description(n, width=10_000)}
                for n, m in zip(names, built)
            ]
        )  # fmt: skip
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
    m = _load(model)
    source = m.metadata.get("source", "built-in" if model in _models.available() else model)
    # The node each coordinate drives itself (not through a mimic).
    nodes = m.dof_node[m.q_v].tolist()
    group_of = {d: g for g, dofs in m.joint_groups.items() for d in dofs if g != d}
    joints = []
    for i, name in enumerate(m.joint_names):
        k = nodes[i]
        revolute = bool(k >= 0 and m.joint_type[k] == JointType.REVOLUTE)
        kind = ("continuous" if m.continuous[i] else "revolute") if revolute else "prismatic"
        lo, hi = m.limits[i]
        axis = m.axis[k] if k >= 0 else None
        if m.quaternion_mask[i]:
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
        _json(
            {
                "model": m.name, "source": str(source), "dof": m.nv, "units": m.units,
                "joints": [
                    {"index": i, "name": n, "group": g or None, "type": t,
                     "axis": None if a is None else a.tolist(),
                     "lower": _finite_or_none(lo), "upper": _finite_or_none(hi)}
                    for i, n, g, t, a, lo, hi in joints
                ],
                "mimic": [
                    {"joint": j, "source": s, "multiplier": mul, "offset": off}
                    for j, s, mul, off in mimic
                ],
                "frames": [
                    {"name": f, "parent": None if p == "-" else p, "joint": j or None,
                     "end_effector": ee}
                    for f, p, j, ee in frames
                ],
                "end_effectors": list(m.end_effectors),
                "presets": {p: {"dof": d, "joints": js} for p, d, js in presets},
            }
        )  # fmt: skip
        return

    typer.echo(f"model: {m.name}")
    typer.echo(f"source: {source}")
    typer.echo(f"dof: {m.nv}   nq: {m.nq}   frames: {len(m.frame_names)}   units: {m.units}")
    rows = [
        [i, n, g, t, ("-" if t == "quaternion" else "?") if a is None else _axis_label(a),
         _limit_text(lo, None if t == "quaternion" else t != "prismatic"),
         _cone_text(m, n, g) if t == "quaternion"
         else _limit_text(hi, t != "prismatic")]
        for i, n, g, t, a, lo, hi in joints
    ]  # fmt: skip
    typer.echo("\njoints:")
    typer.echo(table(["#", "joint", "group", "type", "axis", "lower", "upper"], rows))
    if mimic:
        typer.echo("\nmimic joints (value = multiplier * source + offset):")
        mimic_rows = [[j, s, f"{mul:g}", f"{off:g}"] for j, s, mul, off in mimic]
        typer.echo(table(["joint", "source", "multiplier", "offset"], mimic_rows))
    frame_rows = [[f, p, j or "(root)", "*" if ee else ""] for f, p, j, ee in frames]
    typer.echo("\nframes:")
    typer.echo(table(["frame", "parent", "joint", "end effector"], frame_rows))
    typer.echo(f"\nend effectors: {', '.join(m.end_effectors) or '(none)'}")
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
    m = _load(model)
    values = _joint_values(m, q or [], deg)
    name = frame if frame is not None else m.end_effectors[0]
    T = m.fk(values, name)
    rpy = matrix_to_rpy(T[:3, :3])
    outside = [j for j, v, (lo, hi) in zip(m.joint_names, values, m.limits) if not lo <= v <= hi]
    if as_json:
        _json(
            {"model": m.name, "frame": name, "base": m.node_names[0], "q": values.tolist(),
             "pose": T.tolist(), "position": T[:3, 3].tolist(), "rpy": rpy.tolist(),
             "outside_limits": outside}
        )  # fmt: skip
        return

    typer.echo(f"{m.name}: frame {name!r} in {m.node_names[0]!r}")
    typer.echo("q [rad, m]: " + "  ".join(_full(v) for v in values))
    if outside:
        typer.echo(f"note: outside the joint limits: {', '.join(outside)}")
    typer.echo("pose:")
    for row in T:
        typer.echo("  " + "  ".join(f"{_fmt(v, 6):>10}" for v in row))
    typer.echo("position [m]:  " + "  ".join(_fmt(v, 6) for v in T[:3, 3]))
    typer.echo("rpy [rad]:     " + "  ".join(_fmt(v, 6) for v in rpy))
    typer.echo("rpy [deg]:     " + "  ".join(_fmt(v, 3) for v in np.degrees(rpy)))


def _target(
    target: tuple[float, float, float] | None,
    rpy: tuple[float, float, float] | None,
    pose: str | None,
    deg: bool,
) -> tuple[object, np.ndarray]:
    """A Position, or a Pose (``--rpy`` or ``--pose``), and the target point."""
    from .ik import Pose, Position
    from .spatial import from_rotation_translation, rpy_to_matrix

    if pose is not None:
        if target is not None or rpy is not None:
            raise InvalidValueError("give either --pose, or --target (with --rpy); not both")
        v = _numbers(pose, "--pose")
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
    m = _load(model)
    tgt, _ = _target(target, rpy, pose, deg)
    options: dict[str, Any] = {"method": method, "active": active or None, "tol": tol}
    if q0 is not None:
        options["q0"] = _joint_values(m, _numbers(q0, "--q0").tolist(), deg, "--q0: ")
    if seed is not None:
        options["seed"] = seed
    r = m.ik(tgt, frame, rest="neutral", **options)
    success = bool(r.success)
    if as_json:
        _json(
            {"model": m.name, "frame": frame or m.end_effectors[0], "success": success,
             "message": str(r.message), "position_error": float(r.position_error[0]),
             "orientation_error": float(r.orientation_error[0]),
             "iterations": int(r.iterations), "restarts": int(r.restarts),
             "elapsed": float(r.elapsed), "method": r.method,
             "joint_names": list(m.joint_names), "q": np.asarray(r.q).tolist()}
        )  # fmt: skip
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
) -> None:
    """Compile kinetree's kernels now (once per machine; cached on disk), so that the
    first FK and IK calls of later processes do not wait for the compiler."""
    from ._warmup import warmup
    from .ik import METHODS

    methods = tuple(m for m in METHODS if m != "analytic") if all_methods else ("auto",)
    seconds = warmup(methods)
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
    from . import anim, viz

    m = _load(model)
    if Path(output).suffix.lower() not in (".gif", ".mp4"):
        raise InvalidValueError(f"-o {output!r}: the animation must be a .gif or .mp4 file")
    p = np.array(target, dtype=float)
    motion = anim.reach(m, p, frame, method=method, step=step, active=active or None)
    out = _output(output)
    path = viz.animate(
        m, motion.q, out, fps=fps, targets=[p], trail=frame or m.end_effectors[0], meshes=meshes
    )
    result = motion.metadata["result"]
    typer.echo(f"{m.name}: {result.message}; {len(motion)} frames written to {path}")


@app.command("view", epilog=EPILOG)
@cli_errors
def view_cmd(
    model: Annotated[
        str,
        typer.Argument(
            metavar="MODEL_OR_FILE",
            help="A built-in model, a .urdf, .xacro, MJCF .xml/.mjcf or .bvh file, or a "
            f"bundled file's name ({', '.join(_data.names())}); a BVH clip plays on a timeline.",
            show_default=False,
        ),
    ],
    host: Annotated[
        str,
        typer.Option(
            "--host", metavar="ADDRESS", help="Address to listen on (other machines: 0.0.0.0)."
        ),
    ] = "127.0.0.1",
    port: Annotated[
        int, typer.Option("--port", "-p", metavar="N", help="TCP port (0: any free port).")
    ] = 8080,
    targets: Annotated[
        list[str] | None,
        typer.Option(
            "--target",
            "-t",
            metavar="FRAME",
            help="Frame with an IK gizmo; repeat for several (default: the end effectors).",
        ),
    ] = None,
    frames: Annotated[bool, typer.Option("--frames", help="Show every frame's axes.")] = False,
    collision: Annotated[
        bool, typer.Option("--collision", help="Show the collision shapes.")
    ] = False,
    spheres: Annotated[
        bool,
        typer.Option(
            "--spheres", help="Show the collision spheres that distances and collision IK use."
        ),
    ] = False,
    meshes: Annotated[
        bool, typer.Option("--meshes/--no-meshes", help="Draw meshes, or only the skeleton.")
    ] = True,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout", metavar="SECONDS", help="Stop after this long (default: at Ctrl+C)."
        ),
    ] = None,
) -> None:
    """Open a model in the browser: meshes, IK gizmos, joint sliders, clip playback."""
    import warnings

    from .io.bvh import read_bvh
    from .viewer import Viewer

    bundled = None if model in _models.available() else _bundled(model)
    source = str(bundled) if bundled is not None else model
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clip = read_bvh(source) if Path(source).suffix.lower() == ".bvh" else None
        m = clip.model if clip is not None else _load(model)
        viewer = Viewer(
            m, host=host, port=port, targets=targets or None, frames=frames,
            collision=collision, spheres=spheres, meshes=meshes,
        )  # fmt: skip
    for w in caught:
        typer.echo(f"warning: {w.message}", err=True)
    with viewer:
        if clip is not None:
            viewer.play(clip)
        typer.echo(f"kinetree view: {m.name} at {viewer.url} (Ctrl+C to stop)")
        if viewer.note:
            typer.echo(f"note: {viewer.note}")
        viewer.wait(timeout)


bvh_app = typer.Typer(
    help="BVH clips: info, joint positions, retargeting.",
    epilog=EPILOG,
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(bvh_app, name="bvh")
BvhArg = Annotated[
    str,
    typer.Argument(
        metavar="FILE",
        help=f"A .bvh file, or a bundled clip's name ({', '.join(_clips())}).",
        show_default=False,
    ),
]


@bvh_app.command("info", epilog=EPILOG)
@cli_errors
def bvh_info_cmd(path: BvhArg, as_json: JsonOpt = False) -> None:
    """Skeleton, channels and motion of a BVH file (End Sites counted apart from joints)."""
    from .io.bvh import read_bvh

    clip = read_bvh(_bvh_path(path))
    names = [j.name for j in clip.joints]
    n_end = sum(j.end_site for j in clip.joints)
    n_joints = len(clip.joints) - n_end
    if as_json:
        _json(
            {"file": clip.source or path, "joints": n_joints, "end_sites": n_end,
             "channels": clip.model.dof, "frames": clip.n_frames, "fps": clip.fps,
             "frame_time": clip.frame_time, "duration": clip.duration,
             "skeleton": [
                 {"name": j.name, "parent": names[j.parent] if j.parent >= 0 else None,
                  "end_site": j.end_site, "channels": list(j.channels),
                  "offset": list(j.offset)}
                 for j in clip.joints
             ]}
        )  # fmt: skip
        return
    typer.echo(
        f"{path}: {n_joints} joints, {n_end} end sites, {clip.model.dof} channels, "
        f"{clip.n_frames} frames at {clip.fps:.3f} fps ({clip.duration:.2f} s)"
    )
    rows = [
        (j.name, names[j.parent] if j.parent >= 0 else "-",
         "(end site)" if j.end_site else " ".join(j.channels))
        for j in clip.joints
    ]  # fmt: skip
    typer.echo(table(["joint", "parent", "channels"], rows))


@bvh_app.command("fk", epilog=EPILOG)
@cli_errors
def bvh_fk_cmd(
    path: BvhArg,
    index: Annotated[
        int, typer.Option("--index", "-n", metavar="N", help="Motion frame number (from 0).")
    ] = 0,
    frame: Annotated[
        str | None,
        typer.Option("--frame", "-f", metavar="NAME", help="Only this joint (default: all)."),
    ] = None,
) -> None:
    """World positions of the joints at one motion frame (file units)."""
    from .io.bvh import read_bvh

    clip = read_bvh(_bvh_path(path))
    if not 0 <= index < clip.n_frames:
        raise InvalidValueError(f"--index must be in [0, {clip.n_frames - 1}], got {index}")
    if frame is not None:
        clip.model.frame_index(frame)  # an unknown name lists the valid ones
    P = clip.slice(index, index + 1).joint_positions()[0]
    rows = [
        (n, *(_fmt(v, 4) for v in p))
        for n, p in zip(clip.joint_names, P)
        if frame is None or n == frame
    ]
    typer.echo(table(["joint", "x", "y", "z"], rows))


@bvh_app.command("retarget", epilog=EPILOG)
@cli_errors
def bvh_retarget_cmd(
    path: BvhArg,
    frame: Annotated[
        str,
        typer.Option("--frame", "-f", "--joint", "-j", metavar="NAME", help="Joint to move."),
    ],
    offset: Annotated[
        tuple[float, float, float],
        typer.Option(
            "--offset", metavar="DX DY DZ", help="World offset of that joint (file units)."
        ),
    ],
    output: Annotated[
        str,
        typer.Option(
            "-o", "--output", metavar="FILE", help="The .bvh file to write (folders created)."
        ),
    ],
    active: ActiveOpt = None,
    pin: Annotated[
        list[str] | None,
        typer.Option(
            "--pin", metavar="NAME", help="Frames kept where the clip has them; repeatable."
        ),
    ] = None,
) -> None:
    """Move one joint by a world offset on every frame (IK, warm-started), write a BVH.

    Exits with 1 when any frame misses its target; the file is written anyway.
    """
    from . import anim
    from .io.bvh import read_bvh, write_bvh

    clip = read_bvh(_bvh_path(path))
    goal = clip.model.fk(clip.q, frame)[:, :3, 3] + np.array(offset)
    motion = anim.retarget(clip, {frame: goal}, active=active or None, pin=pin or None)
    ok = np.asarray(motion.metadata["success"], dtype=bool)
    out = _output(output)
    write_bvh(out, motion.to_clip())
    typer.echo(f"{int(ok.sum())}/{ok.size} frames on target; wrote {output}")
    if not ok.all():
        missed = np.nonzero(~ok)[0]
        shown = ", ".join(str(k) for k in missed[:20]) + (", ..." if missed.size > 20 else "")
        worst = float(np.max(motion.metadata["position_error"][missed]))
        typer.echo(
            f"error: {missed.size} frame(s) missed the target (worst by {worst:.3g} file "
            f"units): {shown}",
            err=True,
        )
        raise typer.Exit(EXIT_FAILED)


# Commands kept in their own modules register themselves on ``app``.
from . import cli_learn as _cli_learn  # noqa: E402, F401
from . import cli_reach as _cli_reach  # noqa: E402, F401
from . import cli_retarget as _cli_retarget  # noqa: E402, F401

if __name__ == "__main__":  # pragma: no cover
    main()
