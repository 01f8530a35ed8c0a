"""``kinetree view --host`` and ``Viewer(host=...)`` with an address this machine cannot
listen on: an error naming the address (exit 2), never a server that waits forever.

Each call runs in a thread joined with a bound, so a regression fails instead of hanging."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

pytest.importorskip("viser")

import kinetree
from kinetree.errors import KinetreeError

BOUND = 60.0  # [s] a call still running after this hangs (the first loads the model)

#: 192.0.2.1 is in TEST-NET-1 (RFC 5737, never a host's address); ".invalid" never
#: resolves (RFC 2606).
HOSTS = ["192.0.2.1", "no-such-host.invalid"]


def bounded(fn: Callable[[], Any]) -> tuple[Any, BaseException | None]:
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # handed to the test
            box["error"] = exc

    th = threading.Thread(target=target, daemon=True)
    th.start()
    th.join(BOUND)
    if th.is_alive():
        pytest.fail(f"the call did not return within {BOUND} s (it hangs)")
    return box.get("value"), box.get("error")


@pytest.mark.parametrize("port", [0, 18431])
@pytest.mark.parametrize("host", HOSTS)
def test_cli_view_unbindable_host_is_an_error(host, port):
    from typer.testing import CliRunner

    from kinetree.cli import app

    result, err = bounded(
        lambda: CliRunner().invoke(
            app, ["view", "panda", "--host", host, "--port", str(port), "--timeout", "2"]
        )
    )
    assert err is None, err
    assert result.exit_code == 2, result.output
    assert f"cannot listen on host {host!r}" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("host", HOSTS)
def test_viewer_unbindable_host_raises(host):
    from kinetree.viewer import Viewer

    panda = kinetree.load("panda")
    _, err = bounded(lambda: Viewer(panda, host=host, port=0))
    assert isinstance(err, KinetreeError), err
    assert repr(host) in str(err)


def test_view_old_target_letter_warns_through_the_deprecation_table():
    """Issue 32: ``-t`` is a target position in ``ik``; in ``view`` it named frames. The
    frame option is ``--frame/-f``; the old spelling still works and warns with the one
    table's message (so it goes when the version does)."""
    from typer.testing import CliRunner

    from kinetree import _deprecated
    from kinetree.cli import app

    frame = kinetree.load("panda").end_effectors[0]
    args = ["view", "panda", "--port", "0", "--timeout", "0.5", "--no-meshes"]
    result, err = bounded(lambda: CliRunner().invoke(app, [*args, "-t", frame]))
    assert err is None, err
    assert result.exit_code == 0, result.output
    assert _deprecated.message("kinetree view --target/-t") in result.output
    assert "--frame/-f" in result.output
    new, _ = bounded(lambda: CliRunner().invoke(app, [*args, "-f", frame]))
    assert new.exit_code == 0, new.output
    assert "deprecated" not in new.output and "moved to" not in new.output
