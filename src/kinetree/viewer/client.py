"""A browser stand-in: speaks viser's websocket protocol to drive a viewer from Python.

:class:`WireClient` connects to a running :class:`~kinetree.viewer.Viewer` as a page
would, decodes the scene messages the server sends, and sends what a page sends when
a gizmo is dragged. The tests use it to check the whole path (message in, IK, scene
update out) without a browser, and ``benchmarks/viewer_rate.py`` to time it.

Wire format (viser 1.1): the client sends msgpack dictionaries with a ``"type"`` key;
the server sends a 16-byte header (two little-endian uint64: the decompressed and
compressed sizes), a zstd-compressed msgpack ``{"messages": [...]}`` and raw binary
buffers (mesh arrays), which this client skips.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..spatial import matrix_to_quaternion

__all__ = ["WireClient"]


class WireClient:
    """A websocket connection to a viewer at ``url`` (``http://host:port``).

    Every message received is kept in :attr:`messages` (dictionaries with a ``"type"``
    key, binary payloads left out).
    """

    def __init__(self, url: str, timeout: float = 30.0) -> None:
        import viser
        import zstandard
        from websockets.sync.client import connect

        ws_url = url.replace("http://", "ws://", 1).replace("https://", "wss://", 1)
        self._ws = connect(
            ws_url,
            subprotocols=[f"viser-v{viser.__version__}"],  # type: ignore[list-item]
            open_timeout=timeout,
            max_size=None,
        )
        self._zstd = zstandard.ZstdDecompressor()
        self.messages: list[dict[str, Any]] = []
        self._cursor = 0  # messages before it were looked at by wait_for

    def close(self) -> None:
        """Close the connection."""
        self._ws.close()

    def __enter__(self) -> WireClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _decode(self, raw: bytes) -> list[dict[str, Any]]:
        import msgspec

        size = int.from_bytes(raw[0:8], "little")
        compressed = int.from_bytes(raw[8:16], "little")
        inner = self._zstd.decompress(raw[16 : 16 + compressed], max_output_size=size)
        return list(msgspec.msgpack.decode(inner).get("messages", ()))

    def receive(self, timeout: float) -> list[dict[str, Any]]:
        """The messages of the next frame from the server ([] after ``timeout`` [s])."""
        try:
            raw = self._ws.recv(timeout=timeout)
        except TimeoutError:
            return []
        if not isinstance(raw, bytes):
            return []
        out = self._decode(raw)
        self.messages.extend(out)
        return out

    def wait_for(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 30.0
    ) -> dict[str, Any]:
        """The next message, in arrival order, that satisfies ``predicate`` (messages
        before it count as looked at); receive more while there is none. TimeoutError
        after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            while self._cursor < len(self.messages):
                m = self.messages[self._cursor]
                self._cursor += 1
                if predicate(m):
                    return m
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no matching message from the viewer")
            self.receive(left)

    def send(self, message: dict[str, Any]) -> None:
        """Send one message (a dictionary with a ``"type"`` key) as a page would."""
        import msgspec

        self._ws.send(msgspec.msgpack.encode(message))

    def drag(self, gizmo: str, pose: ArrayLike) -> None:
        """Send what a page sends while gizmo ``gizmo`` (its scene name) is dragged to
        the 4x4 ``pose`` [m]."""
        T = np.asarray(pose, dtype=float)
        message = {
            "type": "TransformControlsUpdateMessage",
            "name": gizmo,
            "wxyz": [float(x) for x in matrix_to_quaternion(T[:3, :3])],
            "position": [float(x) for x in T[:3, 3]],
            "owner": "",
        }
        self.send(message)
