"""The ``kinetree`` app, its exit codes, the options and helpers every command shares."""

from __future__ import annotations

import contextlib
import functools
import gc
import json
import os
import re
import textwrap
import typing
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Annotated, Any, ParamSpec, TypeVar

import numpy as np
import typer
from typer.core import TyperCommand

from .. import __version__
from .. import data as _data
from .. import models as _models
from ..errors import (
    InvalidValueError,
    KinetreeError,
    UnknownNameError,
)
from ..ik import METHODS
from ..loading import load
from ..model import Model

__all__ = [
    "EPILOG",
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_USAGE",
    "WIDTH",
    "ActiveOpt",
    "FrameOpt",
    "JsonOpt",
    "MethodOpt",
    "ModelArg",
    "NumbersCommand",
    "TargetOpt",
    "app",
    "bundled_clips",
    "bundled_file",
    "bvh_path",
    "check_output",
    "cli_errors",
    "echo_json",
    "fixed",
    "in_cli_words",
    "load_model",
    "main",
    "output_path",
    "parse_numbers",
    "table",
]

EXIT_OK = 0  # success
EXIT_FAILED = 1  # ik or animate did not reach the target; bvh retarget missed a frame
EXIT_USAGE = 2  # bad input: a KinetreeError, or a usage error from the parser

# "\b" keeps click from re-wrapping the paragraph that follows it.
EPILOG = (
    "\b\nExit codes: 0 ok; 1 solve failed (ik or animate did not reach the"
    "\ntarget, or bvh retarget missed a frame); 2 bad input or usage."
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
        # The process ends here: leave the compiler's ~100,000 objects (typing tables,
        # loaded kernels) to the operating system instead of collecting them one by one at
        # exit, which costs about 0.3 s (docs/benchmarks.md, "Start-up").
        gc.freeze()


#: Keyword arguments of the Python API that its messages name, and the flag that sets
#: each on the command line.
FLAG_OF = {
    "source_scale": "--scale",
    "up": "--up",
    "smooth": "--smooth",
    "max_joint_speed": "--max-speed",
    "self_collision": "--self-collision",
    "mapping": "--map",
    "client": "--scheduler",
    "resolution": "--resolution",
    "orientations": "--orientations",
    "restarts": "--restarts",
    "seed": "--seed",
    "device": "--device",
    "tol": "--tol",
    "method": "--method",
    "q0": "--q0",
    "frame": "--frame",
    "active": "--active",
}
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
        message = re.sub(rf"(?<![\w.-]){name}=(?=[\s,;:)]|$)", flag, message)  # "pass up="
        message = re.sub(rf"(?<![\w.-]){name}=(None\b)?", f"{flag} ", message)  # "client=x"
        if "_" in name:  # an unmistakable name: also where it stands alone
            message = re.sub(rf"(?<![\w.-]){name}\b", flag, message)
    return message


def cli_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Turn a :class:`KinetreeError` into ``error: <message>`` on stderr and exit code 2,
    the message in the command's words (:func:`in_cli_words`). The command's output
    (its ``-o``) is checked first (:func:`check_output`), and an ``OSError`` on the way
    to it while the command writes is the same kind of error: "cannot write ..."."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        outputs = [v for k, v in kwargs.items() if k in _outputs_of(func) and isinstance(v, str)]
        try:
            for out in outputs:
                check_output(out)
            return func(*args, **kwargs)
        except KinetreeError as exc:
            typer.echo(f"error: {in_cli_words(str(exc), _flags_of(func))}", err=True)
            raise typer.Exit(EXIT_USAGE) from None
        except OSError as exc:
            blocked = _output_in(exc, outputs)
            if blocked is None:
                raise
            typer.echo(f"error: cannot write {blocked!r}: {_reason(exc)}", err=True)
            raise typer.Exit(EXIT_USAGE) from None

    return wrapper


def check_output(path: str) -> None:
    """Refuse, before any work, an output ``path`` that cannot be written: one with a
    file where a folder must be (``-o existing.txt/out.npz``), under a folder this user
    may not write in, or in a folder that cannot be made (tried, then removed again:
    the command makes it when it writes)."""
    missing: list[Path] = []
    for parent in Path(path).parents:
        if not parent.exists():
            missing.append(parent)
            continue
        if not parent.is_dir():
            raise InvalidValueError(
                f"cannot write {path!r}: {str(parent)!r} is a file, not a folder"
            )
        if not os.access(parent, os.W_OK | os.X_OK):
            raise InvalidValueError(
                f"cannot write {path!r}: no permission to write in {str(parent)!r}"
            )
        break
    if missing:
        try:
            missing[0].mkdir(parents=True)
        except OSError as exc:
            raise InvalidValueError(f"cannot write {path!r}: {_reason(exc)}") from None
        for folder in missing:  # deepest first
            with contextlib.suppress(OSError):
                folder.rmdir()


def _outputs_of(func: Callable[..., Any]) -> set[str]:
    """The parameters of a command set by ``-o``/``--output``."""
    try:
        hints = typing.get_type_hints(func, include_extras=True)
    except Exception:  # an annotation that does not resolve: nothing checked ahead
        return set()
    return {name for name, hint in hints.items() if {"-o", "--output"} & set(_decls(hint))}


def _output_in(exc: OSError, outputs: Sequence[str]) -> str | None:
    """The output among ``outputs`` that the path of ``exc`` is, lies in or lies on the
    way to; None when the error is about some other file."""
    for name in (exc.filename, exc.filename2):
        if not isinstance(name, str | os.PathLike):
            continue
        failed = Path(os.fsdecode(name)).absolute()
        for out in outputs:
            p = Path(out).absolute()
            if failed == p or failed in p.parents or p in failed.parents:
                return out
    return None


def _reason(exc: OSError) -> str:
    """An OSError's reason, with the path it is about."""
    reason = exc.strerror or type(exc).__name__
    return f"{reason} ({os.fsdecode(exc.filename)!r})" if exc.filename is not None else reason


def _flags_of(func: Callable[..., Any]) -> list[str]:
    """The flags a command declares (``--scale``, ``-o``), read from its annotations."""
    try:
        hints = typing.get_type_hints(func, include_extras=True)
    except Exception:  # an annotation that does not resolve: no translation
        return []
    return [d for hint in hints.values() for d in _decls(hint)]


def _decls(hint: Any) -> list[str]:
    """The flags of one annotated parameter (``typer.Option("--scale", ...)``)."""
    out: list[str] = []
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


def bundled_clips() -> list[str]:
    """Short names of the bundled BVH clips."""
    return [n for n in _data.names() if _data.FILES[n].endswith(".bvh")]


def bundled_file(arg: str) -> Path | None:
    """The bundled file ``arg`` names, when ``arg`` is not an existing path."""
    if Path(arg).exists():
        return None
    try:
        return _data.path(arg)
    except KinetreeError:
        return None


def load_model(model: str) -> Model:
    """A built-in model, a file, or a bundled file by name."""
    if model in _models.available():
        return load(model)
    bundled = bundled_file(model)
    try:
        return load(str(bundled) if bundled is not None else model)
    except UnknownNameError as exc:
        raise UnknownNameError(f"{exc}; bundled files: {', '.join(_data.names())}") from None


def bvh_path(arg: str) -> str:
    """``arg`` as a BVH path: an existing file, or a bundled file's name."""
    bundled = bundled_file(arg)
    if bundled is not None and bundled.suffix == ".bvh":
        return str(bundled)
    if not Path(arg).exists():
        raise InvalidValueError(
            f"file {arg!r} does not exist; bundled clips are: {', '.join(bundled_clips())}"
        )
    return arg


def parse_numbers(text: str, option: str) -> np.ndarray:
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


def output_path(path: str) -> Path:
    """``path`` with its missing parent folders created (and a line saying so)."""
    check_output(path)
    out = Path(path)
    parent = out.parent
    if not parent.exists():
        try:
            parent.mkdir(parents=True)
        except OSError as exc:
            raise InvalidValueError(f"cannot write {path!r}: {_reason(exc)}") from None
        typer.echo(f"created folder {parent}")
    return out


# --- formatting helpers --------------------------------------------------------------------------


def table(headers: Sequence[str], rows: Sequence[Sequence[object]], indent: str = "  ") -> str:
    """Left-aligned text table with a dashed rule under the header, at most :data:`WIDTH`
    wide where it can be: a long last column (a preset's joints) wraps onto further
    lines under itself."""
    cells = [[str(c) for c in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        widths = [max(w, len(c)) for w, c in zip(widths, row)]
    start = len(indent) + sum(w + 2 for w in widths[:-1])
    widths[-1] = min(widths[-1], max(len(headers[-1]), 20, WIDTH - start))

    def line(values: Sequence[str]) -> str:
        return (indent + "  ".join(v.ljust(w) for v, w in zip(values, widths))).rstrip()

    out = [line(headers), line(["-" * w for w in widths])]
    for row in cells:
        first, *more = textwrap.wrap(row[-1], widths[-1], break_on_hyphens=False) or [""]
        out.append(line([*row[:-1], first]))
        out += [line([""] * (len(row) - 1) + [m]) for m in more]
    return "\n".join(out)


def fixed(x: float, digits: int = 6) -> str:
    """A number in fixed point, without a "-0.000000" for round-off below the last digit."""
    s = f"{x:.{digits}f}"
    return s[1:] if s.startswith("-") and float(s) == 0.0 else s


def echo_json(obj: object) -> None:
    typer.echo(json.dumps(obj, allow_nan=False))


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
