"""``python -m kinetree``: the same command line as the ``kinetree`` script."""

from __future__ import annotations

from .cli import main

if __name__ == "__main__":
    main()
