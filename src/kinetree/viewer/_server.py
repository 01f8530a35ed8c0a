"""Starting the viser server safely: loopback by default, the port asked for or an error.

viser itself binds ``0.0.0.0`` unless told otherwise, moves to the next port when the
one asked for is taken, and lets any connected page open a public share tunnel. The
viewer wants the opposite on each point:

- it binds ``127.0.0.1`` unless the caller names another host;
- a port in use is an error naming the port (:class:`PortInUseError`), checked before
  the server starts and again on the port it actually bound;
- the share button is hidden and the server drops share requests.

What the server sends over HTTP is viser's own built page and scripts (its
``client/build`` folder); meshes travel over the websocket, never by URL. viser
answers a path with a ``..`` segment (also percent-encoded) or outside that folder
with 404; ``tests/viewer/test_viewer.py`` checks it.
"""

from __future__ import annotations

import contextlib
import errno
import io
import ipaddress
import socket
from typing import Any

from .._warnings import warn_outside
from ..errors import InvalidValueError, KinetreeError, UnsupportedError

__all__ = ["LOOPBACK", "PortInUseError", "is_loopback", "start_server"]

#: The address the viewer binds unless told otherwise.
LOOPBACK = "127.0.0.1"


class PortInUseError(KinetreeError, OSError):
    """The viewer's port is taken by another program."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or ``localhost``) only reaches this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _require_viser() -> Any:
    try:
        import viser
    except ImportError:
        raise UnsupportedError(
            "the viewer needs viser; install kinetree[viewer] (pip install 'kinetree[viewer]')"
        ) from None
    return viser


def _check_port(host: str, port: int) -> None:
    """Raise :class:`PortInUseError` when ``port`` cannot be bound on ``host``, and
    :class:`InvalidValueError` naming ``host`` when it is no address of this machine
    (checked for port 0 too: viser waits forever for a server that failed to bind)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        # As the server will (asyncio sets it): a port in TIME_WAIT is free to use.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except socket.gaierror as exc:
            raise InvalidValueError(
                f"cannot listen on host {host!r}: {exc.strerror or exc} (give an address of "
                f"this machine, such as {LOOPBACK!r}, or 0.0.0.0 for every interface)"
            ) from None
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise _in_use(host, port) from None
            where = f"host {host!r}" + (f" port {port}" if port else "")
            raise InvalidValueError(
                f"cannot listen on {where}: {exc.strerror or exc} (give an address of this "
                f"machine, such as {LOOPBACK!r}, or 0.0.0.0 for every interface)"
            ) from None


def _in_use(host: str, port: int) -> PortInUseError:
    return PortInUseError(
        f"port {port} on {host} is in use; choose another with --port (port=... in "
        "Python), or 0 for any free port"
    )


def _refuse_share(server: Any) -> None:
    """Hide the share button and drop share-tunnel requests (a tunnel would publish the
    viewer on the internet, whatever host it binds)."""
    server.gui.configure_theme(show_share_button=False)
    from viser import _messages

    ws = server._websock_server  # viser has no public switch for this
    for message in (_messages.ShareUrlRequest, _messages.ShareUrlDisconnect):
        with contextlib.suppress(AssertionError, KeyError, AttributeError):
            ws.unregister_handler(message)


def start_server(host: str = LOOPBACK, port: int = 8080, *, label: str | None = None) -> Any:
    """A running ``viser.ViserServer`` on exactly ``host:port`` (port 0: any free port).

    Raises :class:`PortInUseError` when the port is taken, :class:`InvalidValueError` for
    a port outside 0..65535 or a host that cannot be bound, and
    :class:`~kinetree.errors.UnsupportedError` without viser. Warns when ``host`` is not
    a loopback address: anyone who can reach it can see and move the model.
    """
    viser = _require_viser()
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise InvalidValueError(f"port must be an integer in 0..65535, got {port!r}")
    if not isinstance(host, str) or not host:
        raise InvalidValueError(f"host must be an address such as {LOOPBACK!r}, got {host!r}")
    _check_port(host, port)
    if not is_loopback(host):
        warn_outside(
            f"the viewer listens on {host}: anyone who can reach this machine can see and "
            "move the model",
            UserWarning,
        )
    # viser prints a banner with its own URLs; the caller prints the one that matters.
    with contextlib.redirect_stdout(io.StringIO()):
        server = viser.ViserServer(host=host, port=port, label=label, verbose=False)
    if port != 0 and server.get_port() != port:  # taken between the check and the bind
        with contextlib.redirect_stdout(io.StringIO()):
            server.stop()
        raise _in_use(host, port)
    _refuse_share(server)
    return server
