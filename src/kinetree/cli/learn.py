"""``kinetree learn``: train a pose prior from BVH clips, show what a prior was trained on,
and learn a robot's IK seeds from its own FK samples.

Registered on :data:`kinetree.cli.app` (``kinetree.cli`` imports this module). Thin:
:func:`kinetree.learn.train_pose_prior`, :func:`kinetree.learn.load_prior` and
:func:`kinetree.learn.train_ik` do the work.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from ..errors import InvalidValueError
from ._app import (
    EPILOG,
    ModelArg,
    app,
    cli_errors,
    load_model,
)

__all__ = ["learn_app"]

learn_app = typer.Typer(
    help="Learned models: a human pose prior, a robot's IK seeds (need kinetree[learn]).",
    no_args_is_help=True,
)
app.add_typer(learn_app, name="learn")


def _clips(sources: list[str]) -> list[Path]:
    out: list[Path] = []
    for s in sources:
        p = Path(s)
        if p.is_dir():
            out += sorted(p.glob("*.bvh"))
        elif p.is_file():
            out.append(p)
        else:
            raise InvalidValueError(f"{s!r} is not a BVH file or a folder of them")
    if not out:
        raise InvalidValueError(f"no .bvh files in {', '.join(sources)}")
    return out


@learn_app.command("prior", epilog=EPILOG)
@cli_errors
def prior_cmd(
    sources: Annotated[
        list[str], typer.Argument(metavar="SRC...", help="BVH clips or folders of them.")
    ],
    output: Annotated[
        str, typer.Option("-o", "--output", metavar="OUT", help="The .npz to write.")
    ],
    every: Annotated[int, typer.Option(help="Use every Nth frame.")] = 4,
    epochs: Annotated[int, typer.Option(help="Passes over the frames.")] = 60,
    hidden: Annotated[
        str, typer.Option(help="Hidden layer widths, comma-separated.")
    ] = "256,256,256",
    seed: Annotated[int, typer.Option(help="Same clips and seed, same weights.")] = 0,
    noise: Annotated[float, typer.Option(help="Input noise [body heights].")] = 0.0,
    weight_decay: Annotated[float, typer.Option(help="AdamW weight decay.")] = 0.0,
    name: Annotated[str, typer.Option(help="The prior's name in its metadata.")] = "prior",
) -> None:
    """Train a pose prior on BVH clips (a progress bar on stderr) and save it."""
    from ..learn import train_pose_prior

    try:
        widths = tuple(int(w) for w in hidden.split(","))
    except ValueError:
        raise InvalidValueError(f"--hidden {hidden!r}: comma-separated integers") from None
    prior = train_pose_prior(
        _clips(sources),
        every=every,
        epochs=epochs,
        hidden=widths,
        seed=seed,
        noise=noise,
        weight_decay=weight_decay,
        name=name,
    )
    path = prior.save(output)
    typer.echo(
        f"{path}: {prior.meta['frames']} frames of {len(prior.meta['clips'])} clips, "
        f"loss {prior.meta['final_loss']}"
    )


@learn_app.command("info", epilog=EPILOG)
@cli_errors
def info_cmd(
    prior: Annotated[str, typer.Argument(metavar="PRIOR", help="A shipped name or a .npz.")],
) -> None:
    """What a prior was trained on (its metadata, as JSON)."""
    from ..learn import load_prior

    typer.echo(json.dumps(load_prior(prior).meta, indent=1, sort_keys=True))


@learn_app.command("ik", epilog=EPILOG)
@cli_errors
def ik_cmd(
    model: ModelArg,
    output: Annotated[
        str, typer.Option("-o", "--output", metavar="OUT", help="The .npz to write.")
    ],
    frame: Annotated[
        str | None, typer.Option(help="Frame to condition on (default: the first end effector).")
    ] = None,
    conditions: Annotated[str, typer.Option(help="'pose' or 'position'.")] = "pose",
    samples: Annotated[int, typer.Option(help="FK samples to learn from.")] = 200_000,
    steps: Annotated[int, typer.Option(help="Training steps.")] = 4000,
    seed: Annotated[int, typer.Option(help="Same model and seed, same weights.")] = 0,
) -> None:
    """Learn configurations given a frame's pose from the model's own FK samples (a
    conditional flow; a progress bar on stderr); use it as ``model.ik(T, seeds=...)`` or
    ``model.ik_many(T, n, seeds=...)`` after ``kinetree.learn.load_ik(OUT)``."""
    from ..learn import train_ik

    learned = train_ik(
        load_model(model), frame, conditions=conditions, samples=samples, steps=steps, seed=seed
    )
    path = learned.save(output)
    typer.echo(f"{path}: {samples} samples, {steps} steps, seed {seed}")
