"""The ``kinetree`` command: ``models``, ``info``, ``fk``, ``ik``, ``warmup``, ``animate``,
``view``, ``bvh``, ``reach-map``, ``retarget``, ``learn``.

One module per group of commands: :mod:`._app` (the app, exit codes, shared options and
helpers), :mod:`.model_commands` (``models``, ``info``, ``fk``, ``ik``, ``warmup``,
``animate``), :mod:`.view`, :mod:`.bvh`, :mod:`.reach`, :mod:`.retarget`, :mod:`.learn`.
Each command module imports :mod:`._app` only and registers its commands on ``app``;
this ``__init__`` imports them all, so ``kinetree.cli.app`` has every command.

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
      ``animate`` did not reach its target (the animation is still written);
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

Adding a command: in a module of this package (a new one is imported below)::

    from ._app import EPILOG, ModelArg, app, cli_errors, load_model

    @app.command("name", epilog=EPILOG)
    @cli_errors
    def name_cmd(model: ModelArg, ...) -> None:
        m = load_model(model)
        ...
"""

from __future__ import annotations

# Each command module registers its commands on ``app`` when imported, in the order
# ``kinetree --help`` lists them.
# isort: off
from . import model_commands as model_commands
from . import view as view
from . import reach as reach
from . import retarget as retarget
from . import bvh as bvh
from . import learn as learn

# isort: on
from ._app import EXIT_FAILED as EXIT_FAILED
from ._app import EXIT_OK as EXIT_OK
from ._app import EXIT_USAGE as EXIT_USAGE
from ._app import app as app
from ._app import cli_errors as cli_errors
from ._app import in_cli_words as in_cli_words
from ._app import main as main
from ._app import table as table

__all__ = [
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_USAGE",
    "app",
    "cli_errors",
    "in_cli_words",
    "main",
    "table",
]

if __name__ == "__main__":  # pragma: no cover
    main()
