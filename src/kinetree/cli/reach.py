"""``kinetree reach-map``: a reachability map of a frame, saved as ``.npz`` (and a figure).

Registered on :data:`kinetree.cli.app` (``kinetree.cli`` imports this module). Thin: it calls
:func:`kinetree.workspace.reachability` (on a Dask cluster with ``--scheduler``).
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..errors import InvalidValueError
from ..loading import load
from ._app import (
    EPILOG,
    ActiveOpt,
    FrameOpt,
    JsonOpt,
    ModelArg,
    app,
    cli_errors,
)

if TYPE_CHECKING:
    from ..workspace import ReachabilityMap

__all__ = ["reach_map_cmd"]


@app.command("reach-map", epilog=EPILOG)
@cli_errors
def reach_map_cmd(
    model: ModelArg,
    output: Annotated[
        str,
        typer.Option("-o", "--output", metavar="FILE", help="The map (.npz); folders created."),
    ],
    frame: FrameOpt = None,
    resolution: Annotated[
        float, typer.Option("--resolution", "-r", metavar="M", help="Voxel edge [m].")
    ] = 0.05,
    orientations: Annotated[
        int,
        typer.Option(
            "--orientations",
            "-n",
            metavar="N",
            help="Orientations tried per voxel, spread over SO(3); 0: position only.",
        ),
    ] = 50,
    restarts: Annotated[
        int, typer.Option("--restarts", metavar="N", help="IK restarts per (voxel, orientation).")
    ] = 10,
    seed: Annotated[int, typer.Option("--seed", metavar="S", help="Seed of the restarts.")] = 0,
    active: ActiveOpt = None,
    figure: Annotated[
        str | None,
        typer.Option("--figure", metavar="FILE", help="Also draw slices and a 3D view (.png)."),
    ] = None,
    scheduler: Annotated[
        str | None,
        typer.Option(
            "--scheduler",
            metavar="ADDR",
            help="A Dask scheduler (tcp://host:8786), or 'local' for an embedded local "
            "cluster; default: this machine's cores, no Dask.",
        ),
    ] = None,
    device: Annotated[
        str | None, typer.Option("--device", metavar="DEV", help="'cuda': solve on the GPU.")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Map where FRAME can reach: per voxel, the fraction of orientations IK solves (the
    reachability index) and the best manipulability; a bar shows progress after 2 s."""
    from .. import workspace

    if Path(output).suffix != ".npz":
        raise InvalidValueError(f"-o {output!r}: the map is written as a .npz file")
    m = load(model)
    with contextlib.ExitStack() as stack:
        client: object = None
        if scheduler is not None:
            from .. import distributed

            wanted = distributed.local_client() if scheduler == "local" else scheduler
            client = stack.enter_context(distributed.connected(wanted))
        rmap = workspace.reachability(
            m,
            frame,
            resolution,
            orientations,
            restarts=restarts,
            seed=seed,
            active=active or None,
            client=client,
            device=device,
        )
    path = rmap.save(output)
    fig_path = None
    if figure is not None:
        workspace.plot_reachability(rmap, figure)
        fig_path = figure
    if as_json:
        typer.echo(json.dumps({"map": str(path), "figure": fig_path, **_numbers(rmap)}))
        return
    typer.echo(rmap.summary())
    typer.echo(f"wrote {path}" + (f" and {fig_path}" if fig_path else ""))


def _numbers(rmap: ReachabilityMap) -> dict[str, object]:
    reach = rmap.index > 0
    return {
        "model": rmap.model,
        "frame": rmap.frame,
        "shape": list(rmap.shape),
        "resolution": rmap.resolution,
        "orientations": len(rmap.orientations),
        "reachable_voxels": int(reach.sum()),
        "reachable_volume": rmap.reachable_volume,
        "reachable_size": rmap.reachable_size,  # [m^dims]: an area for a planar arm
        "reachable_dims": rmap.reachable_dims,
        "mean_index": float(rmap.index[reach].mean()) if reach.any() else 0.0,
        "elapsed": rmap.settings.get("elapsed"),
    }
