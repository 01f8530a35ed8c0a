"""How fast the viewer follows a dragged target: target message in, new configuration out.

Starts a :class:`kinetree.viewer.Viewer` on the Panda (with its meshes when
example-robot-data is installed) and connects to it as a page would
(:class:`kinetree.viewer.client.WireClient`: viser's websocket protocol, no browser).
Two measurements, both along a circle of 10 cm radius in front of the flange:

- **lock-step**: send a gizmo pose, wait for the flange's new pose from the server,
  send the next. Updates/s = poses / total time; the latency percentiles cover the
  websocket both ways, the IK solve, FK and the scene messages.
- **streamed at 60 Hz** (a browser sends about that while dragging): for ``--seconds``,
  count the robot updates that come back. The viewer solves only the newest pose, so
  it should keep up at 60/s when a solve and its messages take under 16 ms.

Usage::

    .venv/bin/python benchmarks/viewer_rate.py            # 300 poses, then 5 s at 60 Hz
    .venv/bin/python benchmarks/viewer_rate.py --n 1000 --no-meshes
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

import kinetree
from kinetree.viewer import Viewer
from kinetree.viewer.client import WireClient


def _circle(T0: np.ndarray, k: int, n: int, radius: float = 0.1) -> np.ndarray:
    T = T0.copy()
    a = 2 * np.pi * k / n
    T[:3, 3] += radius * np.array([np.cos(a) - 1.0, np.sin(a), 0.5 * np.sin(2 * a)])
    return T


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=300, help="lock-step poses (default 300)")
    parser.add_argument("--seconds", type=float, default=5.0, help="streamed drag length [s]")
    parser.add_argument("--no-meshes", action="store_true", help="skeleton only")
    parser.add_argument("--method", default="dls", help="IK method (default dls)")
    args = parser.parse_args()

    panda = kinetree.load("panda")
    t0 = time.perf_counter()
    with Viewer(panda, port=0, meshes=not args.no_meshes) as viewer:
        start = time.perf_counter() - t0
        viewer.set_options(method=args.method)
        frame = "flange"
        node = viewer.frame_node(frame)
        gizmo = viewer.gizmo_name(frame)
        T0 = panda.fk(viewer.q, frame)
        # Warm-up: the first solve of a method compiles (cached on disk after).
        viewer.set_target(frame, _circle(T0, 1, 8))
        viewer.show(panda.neutral())
        with WireClient(viewer.url) as page:
            page.wait_for(lambda m: m["type"] == "ReplayDoneMessage")

            def moved(m: dict[str, object]) -> bool:
                return m["type"] == "SetPositionMessage" and m["name"] == node

            latencies = []
            t_start = time.perf_counter()
            for k in range(1, args.n + 1):
                t = time.perf_counter()
                page.drag(gizmo, _circle(T0, k, args.n))
                page.wait_for(moved)
                latencies.append(time.perf_counter() - t)
            lockstep = args.n / (time.perf_counter() - t_start)
            result = viewer.result

            # Streamed: poses at 60 Hz, count the updates that come back.
            period = 1.0 / 60.0
            sent = received = 0
            t_start = time.perf_counter()
            next_send = t_start
            while time.perf_counter() - t_start < args.seconds:
                now = time.perf_counter()
                if now >= next_send:
                    sent += 1
                    page.drag(gizmo, _circle(T0, sent, 240))
                    next_send += period
                left = max(0.0, next_send - time.perf_counter())
                received += sum(moved(m) for m in page.receive(left))
            streamed = received / (time.perf_counter() - t_start)
            sent_rate = sent / args.seconds

    lat = np.array(latencies) * 1e3
    print(f"kinetree viewer rate: Panda ({'skeleton' if args.no_meshes else 'meshes'}),"
          f" method {args.method}, {platform.machine()} with {os.cpu_count()} cores")  # fmt: skip
    print(f"  viewer start: {start:.2f} s; last solve: {result!r}")
    print(f"  lock-step: {lockstep:.0f} updates/s over {args.n} poses; latency median "
          f"{np.median(lat):.2f} ms, p95 {np.percentile(lat, 95):.2f} ms, "
          f"max {lat.max():.2f} ms")  # fmt: skip
    print(f"  streamed: {sent_rate:.0f} poses/s sent, {streamed:.1f} robot updates/s back")


if __name__ == "__main__":
    main()
