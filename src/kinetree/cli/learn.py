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
    variants: Annotated[int, typer.Option(help="Re-proportioned copies per clip (0: none).")] = 0,
    proportions: Annotated[
        float, typer.Option(help="Largest relative change of a bone group, with --variants.")
    ] = 0.12,
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
        variants=variants,
        proportions=proportions,
    )
    path = prior.save(output)
    typer.echo(
        f"{path}: {prior.meta['frames']} frames of {len(prior.meta['clips'])} clips, "
        f"loss {prior.meta['final_loss']}"
    )


@learn_app.command("motion-prior", epilog=EPILOG)
@cli_errors
def motion_prior_cmd(
    sources: Annotated[
        list[str], typer.Argument(metavar="SRC...", help="BVH clips or folders of them.")
    ],
    output: Annotated[
        str, typer.Option("-o", "--output", metavar="OUT", help="The .npz to write.")
    ],
    steps: Annotated[int, typer.Option(help="Training steps (batches).")] = 6000,
    batch_size: Annotated[int, typer.Option(help="Windows per step.")] = 256,
    hidden: Annotated[
        str, typer.Option(help="Hidden layer widths, comma-separated.")
    ] = "512,512,512",
    past: Annotated[
        str, typer.Option(help="Window frames back (at 30 fps), comma-separated, 0 first.")
    ] = "0,1,2,4,8,12,20,30",
    future: Annotated[
        str, typer.Option(help="Window frames ahead (at 30 fps); '' for a causal prior.")
    ] = "1,2,4,8,12,20,30",
    variants: Annotated[int, typer.Option(help="Re-proportioned copies per clip.")] = 3,
    noise: Annotated[float, typer.Option(help="Input noise [body heights].")] = 0.005,
    weight_decay: Annotated[float, typer.Option(help="AdamW weight decay.")] = 1e-4,
    seed: Annotated[int, typer.Option(help="Same clips and seed, same weights.")] = 0,
    name: Annotated[str, typer.Option(help="The prior's name in its metadata.")] = "prior",
) -> None:
    """Train a temporal prior (whole bodies from a window of sparse trackers) on BVH clips
    and save it; load it with ``kinetree.learn.motion.load_motion_prior(OUT)``."""
    from ..learn.motion_train import train_motion_prior

    def ints(text: str, what: str) -> tuple[int, ...]:
        try:
            return tuple(int(w) for w in text.split(",") if w.strip())
        except ValueError:
            raise InvalidValueError(f"--{what} {text!r}: comma-separated integers") from None

    prior = train_motion_prior(
        _clips(sources),
        past_steps=ints(past, "past"),
        future_steps=ints(future, "future"),
        hidden=ints(hidden, "hidden"),
        steps=steps,
        batch_size=batch_size,
        variants=variants,
        noise=noise,
        weight_decay=weight_decay,
        seed=seed,
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
