"""``kinetree retarget``: human clips onto a humanoid robot, one clip or a whole folder.

Registered on :data:`kinetree.cli.app` (``kinetree.cli`` imports this module). Thin like
every command: :func:`kinetree.retarget`, :func:`kinetree.anim.retarget_folder` and
:func:`kinetree.anim.save_motion` do the work; this parses options and prints.
"""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path
from typing import Annotated, Any

import typer

from .. import data as _data
from ..errors import InvalidValueError, KinetreeError, UnsupportedError
from ._app import (
    EPILOG,
    EXIT_FAILED,
    app,
    cli_errors,
    table,
)

__all__ = ["retarget_cmd"]


def _source(arg: str) -> str:
    """A clip path, a folder, or the name of a bundled clip (``cmu_walk``)."""
    if Path(arg).exists():
        return arg
    try:
        p = _data.path(arg)
    except KinetreeError:
        p = None
    if p is not None and p.suffix == ".bvh":
        return str(p)
    clips = [n for n in _data.names() if _data.FILES[n].endswith(".bvh")]
    raise InvalidValueError(
        f"{arg!r} is not a file or folder; bundled clips are: {', '.join(clips)}"
    )


def _speed(text: str) -> Any:
    if text in ("urdf", "none"):
        return None if text == "none" else "urdf"
    try:
        v = float(text)
    except ValueError:
        v = math.nan
    if not (math.isfinite(v) and v > 0):
        raise InvalidValueError(
            f"--max-speed must be 'urdf', 'none' or a speed > 0 [rad/s], got {text!r}"
        )
    return v


def _mapping(text: str | None) -> Any:
    """``--map``: a ready-made name, ``auto``, or a JSON file ``{source joint: frame}``."""
    if text is None or not text.endswith(".json"):
        return text
    try:
        pairs = json.loads(Path(text).read_text())
    except (OSError, ValueError) as exc:
        raise InvalidValueError(f"--map {text!r}: cannot read a JSON mapping: {exc}") from None
    if not isinstance(pairs, dict):
        raise InvalidValueError(f"--map {text!r} must hold a JSON object {{source joint: frame}}")
    return pairs


def _mm(x: float) -> str:
    return f"{1e3 * x:.2f}"


@app.command("retarget", epilog=EPILOG)
@cli_errors
def retarget_cmd(
    sources: Annotated[
        list[str],
        typer.Argument(
            metavar="SRC...",
            help="BVH clips, folders of them, or a bundled clip's name (cmu_walk).",
            show_default=False,
        ),
    ],
    robot: Annotated[
        str,
        typer.Option(
            "--robot",
            "-r",
            metavar="ROBOT",
            help="g1, talos, h1 (example-robot-data), humanoid, or a .urdf/.xml file.",
        ),
    ],
    output: Annotated[
        str,
        typer.Option(
            "-o",
            "--output",
            metavar="OUT",
            help="One clip: the file to write (.npz, .csv or .bvh). Several clips or a "
            "folder: the folder to write them to.",
        ),
    ],
    mapping: Annotated[
        str | None,
        typer.Option(
            "--map",
            "-m",
            metavar="MAP",
            help="cmu, mixamo, humanoid, auto (default: a guess from names), or a "
            "JSON file {source joint: robot frame}.",
        ),
    ] = None,
    fmt: Annotated[
        str, typer.Option("--format", metavar="EXT", help="Output type of a folder run.")
    ] = "npz",
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs",
            "-j",
            metavar="N",
            help="Worker processes of a folder run (default: every core).",
        ),
    ] = None,
    scheduler: Annotated[
        str | None,
        typer.Option(
            "--scheduler",
            metavar="ADDRESS",
            help="A folder run on this Dask scheduler (tcp://host:8786; needs dask.distributed) "
            "through kinetree.distributed.map, instead of local processes.",
        ),
    ] = None,
    self_collision: Annotated[
        bool,
        typer.Option(
            "--self-collision",
            help="Keep the robot's links apart in the IK (needs the constrained IK).",
        ),
    ] = False,
    scale: Annotated[
        float | None,
        typer.Option("--scale", metavar="M", help="Metres per source unit (default: guessed)."),
    ] = None,
    up: Annotated[
        str | None, typer.Option("--up", metavar="AXIS", help="Source up axis: x, y, z, -y...")
    ] = None,
    no_contacts: Annotated[
        bool, typer.Option("--no-contacts", help="Do not hold planted feet.")
    ] = False,
    max_speed: Annotated[
        str,
        typer.Option(
            "--max-speed",
            metavar="V",
            help="Joint speed cap: urdf (the robot file's velocity limits), none, or rad/s.",
        ),
    ] = "urdf",
    smooth: Annotated[
        float, typer.Option("--smooth", metavar="S", help="Smooth the targets, sigma [s].")
    ] = 0.0,
    gif: Annotated[
        str | None,
        typer.Option(
            "--gif",
            metavar="FILE",
            help="One clip: also write the source skeleton "
            "beside the robot as a GIF (needs kinetree[viz]).",
        ),
    ] = None,
    show_map: Annotated[
        bool, typer.Option("--show-map", help="Print how joints were paired.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the numbers as JSON.")] = False,
) -> None:
    """Retarget human motion (BVH) onto a humanoid robot with a floating base.

    Writes q per frame (the free base first: x y z qw qx qy qz) and prints the quality
    numbers: joint limits, foot sliding while planted [mm/frame], ground penetration
    [mm], distance walked against the source's scaled by leg length. A folder (or
    several clips) runs on every core, one output per clip, and prints a summary
    table; exit 1 when any clip failed (the others are written).
    """
    from ..anim import retarget_robot
    from ..anim.retarget.dataset import clips_in, retarget_folder
    from ..anim.retarget.saving import save_motion

    options: dict[str, Any] = {
        "source_scale": scale,
        "up": up,
        "contacts": not no_contacts,
        "max_joint_speed": _speed(max_speed),
        "smooth": smooth,
    }
    if self_collision:
        options["self_collision"] = True
    paths = [_source(s) for s in sources]
    clips = [c for p in paths for c in clips_in(p)]
    if len(paths) > 1 or Path(paths[0]).is_dir():
        if scheduler is not None:
            try:
                from ..distributed import map as cluster_map
            except ImportError as exc:
                raise UnsupportedError(
                    "--scheduler needs dask.distributed: pip install 'dask[distributed]'"
                ) from exc
            # ordered, each clip exactly once, a progress bar (kinetree.distributed.map)
            on_cluster = functools.partial(cluster_map, client=scheduler, label="retarget")
            run = retarget_folder(
                clips,
                robot,
                output,
                mapping=_mapping(mapping),
                fmt=fmt,
                executor=on_cluster,
                **options,
            )
        else:
            run = retarget_folder(
                clips, robot, output, mapping=_mapping(mapping), fmt=fmt, workers=jobs, **options
            )
        if as_json:
            typer.echo(
                json.dumps(
                    [
                        {
                            "source": o.source,
                            "output": o.output,
                            "frames": o.frames,
                            "seconds": o.seconds,
                            "error": o.error,
                        }
                        for o in run.outcomes
                    ],
                    indent=2,
                )
            )
        else:
            typer.echo(run.table())
        if run.failed:
            raise typer.Exit(EXIT_FAILED)
        return
    m = retarget_robot(paths[0], robot, _mapping(mapping), **options)
    out = save_motion(m, output)
    info, q = m.metadata["retarget"], m.metadata["quality"]
    if as_json:
        feet = {f: dict(v) for f, v in q["feet"].items()}
        typer.echo(
            json.dumps(
                {
                    "output": str(out),
                    "frames": m.n_frames,
                    "fps": m.fps,
                    "seconds": info["timing"]["total"],
                    "quality": {**q, "feet": feet},
                    "map": dict(info["map"].pairs),
                },
                indent=2,
            )
        )
    else:
        t, t_read = info["timing"]["total"], info["timing"]["source"]
        typer.echo(
            f"{m.n_frames} frames onto {m.model.name} in {t:.3f} s: {t_read:.3f} s reading "
            f"the clip and the robot, then {m.n_frames / max(t - t_read, 1e-9):.0f} frames/s; "
            f"source unit {info['source_unit']} ({info['source_scale']:.4g} m), "
            f"leg ratio {info['s_leg']:.3f}"
            + (", calibration frame 0 left out" if info["dropped_frames"] else "")
        )
        if show_map:
            typer.echo(info["map"].report)
        rows = [
            (f, v["planted_frames"], _mm(v["slide_median"]), _mm(v["slide_max"]), _mm(v["dip_max"]))
            for f, v in q["feet"].items()
        ]
        typer.echo(
            table(["foot", "planted", "slide median [mm]", "slide max [mm]", "dip max [mm]"], rows)
        )
        typer.echo(
            f"within limits: {'yes' if q['within_limits'] else 'NO'}; max joint speed "
            f"{q['max_joint_speed']:.1f} rad/s ({len(info['speed_capped_frames'])} frames "
            f"capped); walked {q['distance']:.2f} m vs {q['distance_source']:.2f} m scaled "
            f"source (ratio {q['distance_ratio']:.3f}); {q['spikes']} spikes"
        )
        for w in q["warnings"]:
            typer.echo(f"warning: {w}")
        typer.echo(f"wrote {out}")
    if gif is not None:
        from ..anim.retarget.source import source_in_robot_world
        from ..io.bvh import read_bvh
        from ..viz import animate_side_by_side

        src = source_in_robot_world(read_bvh(paths[0]), m)
        animate_side_by_side([src, m], gif, titles=[f"source: {src.model.name}", m.model.name])
        typer.echo(f"wrote {gif}")
