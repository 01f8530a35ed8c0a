"""``kinetree bvh``: a BVH clip's info, joint positions, and editing it by targets."""

from __future__ import annotations

from typing import Annotated

import numpy as np
import typer

from ..errors import (
    InvalidValueError,
)
from ._app import (
    EPILOG,
    EXIT_FAILED,
    ActiveOpt,
    JsonOpt,
    app,
    bundled_clips,
    bvh_path,
    cli_errors,
    echo_json,
    fixed,
    output_path,
    table,
)

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
        help=f"A .bvh file, or a bundled clip's name ({', '.join(bundled_clips())}).",
        show_default=False,
    ),
]


@bvh_app.command("info", epilog=EPILOG)
@cli_errors
def bvh_info_cmd(path: BvhArg, as_json: JsonOpt = False) -> None:
    """Skeleton, channels and motion of a BVH file (End Sites counted apart from joints)."""
    from ..io.bvh import read_bvh

    clip = read_bvh(bvh_path(path))
    names = [j.name for j in clip.joints]
    n_end = sum(j.end_site for j in clip.joints)
    n_joints = len(clip.joints) - n_end
    if as_json:
        echo_json(
            {
                "file": clip.source or path,
                "joints": n_joints,
                "end_sites": n_end,
                "channels": clip.model.dof,
                "frames": clip.n_frames,
                "fps": clip.fps,
                "frame_time": clip.frame_time,
                "duration": clip.duration,
                "skeleton": [
                    {
                        "name": j.name,
                        "parent": names[j.parent] if j.parent >= 0 else None,
                        "end_site": j.end_site,
                        "channels": list(j.channels),
                        "offset": list(j.offset),
                    }
                    for j in clip.joints
                ],
            }
        )
        return
    typer.echo(
        f"{path}: {n_joints} joints, {n_end} end sites, {clip.model.dof} channels, "
        f"{clip.n_frames} frames at {clip.fps:.3f} fps ({clip.duration:.2f} s)"
    )
    rows = [
        (
            j.name,
            names[j.parent] if j.parent >= 0 else "-",
            "(end site)" if j.end_site else " ".join(j.channels),
        )
        for j in clip.joints
    ]
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
    from ..io.bvh import read_bvh

    clip = read_bvh(bvh_path(path))
    if not 0 <= index < clip.n_frames:
        raise InvalidValueError(f"--index must be in [0, {clip.n_frames - 1}], got {index}")
    if frame is not None:
        clip.model.frame_index(frame)  # an unknown name lists the valid ones
    P = clip.slice(index, index + 1).joint_positions()[0]
    rows = [
        (n, *(fixed(v, 4) for v in p))
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
    from .. import anim
    from ..io.bvh import read_bvh, write_bvh

    clip = read_bvh(bvh_path(path))
    goal = clip.model.fk(clip.q, frame)[:, :3, 3] + np.array(offset)
    motion = anim.edit_by_targets(clip, {frame: goal}, active=active or None, pin=pin or None)
    ok = np.asarray(motion.metadata["success"], dtype=bool)
    out = output_path(output)
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
