"""``kinetree view``: a model or a BVH clip in the browser (the ``viewer`` extra)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .. import _deprecated
from .. import data as _data
from .. import models as _models
from ._app import (
    EPILOG,
    app,
    bundled_file,
    cli_errors,
    load_model,
)


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
    gizmos: Annotated[
        list[str] | None,
        typer.Option(
            "--frame",
            "-f",
            metavar="NAME",
            help="Frame with an IK gizmo; repeat for several (default: the end effectors).",
        ),
    ] = None,
    old_gizmos: Annotated[
        list[str] | None,
        typer.Option(
            "--target",
            "-t",
            metavar="FRAME",
            hidden=True,
            help="Old spelling of --frame/-f (kinetree._deprecated.MOVED).",
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

    from ..io.bvh import read_bvh
    from ..viewer import Viewer

    targets = [*(gizmos or []), *(old_gizmos or [])]
    bundled = None if model in _models.available() else bundled_file(model)
    source = str(bundled) if bundled is not None else model
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clip = read_bvh(source) if Path(source).suffix.lower() == ".bvh" else None
        m = clip.model if clip is not None else load_model(model)
        viewer = Viewer(
            m,
            host=host,
            port=port,
            targets=targets or None,
            frames=frames,
            collision=collision,
            spheres=spheres,
            meshes=meshes,
        )
    for w in caught:
        typer.echo(f"warning: {w.message}", err=True)
    if old_gizmos:  # -t is a target position in `ik` and `animate`; here it named frames
        typer.echo(f"warning: {_deprecated.message('kinetree view --target/-t')}", err=True)
    with viewer:
        if clip is not None:
            viewer.play(clip)
        typer.echo(f"kinetree view: {m.name} at {viewer.url} (Ctrl+C to stop)")
        if viewer.note:
            typer.echo(f"note: {viewer.note}")
        viewer.wait(timeout)
