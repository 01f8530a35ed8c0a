"""glTF's own rules, implemented apart from kinetree: raw accessors and node world matrices.

The test's oracle for :mod:`kinetree.io.gltf`: it decodes accessors from pygltflib's JSON
and buffers by the specification (byte offsets, strides, little-endian components),
samples animation channels (LINEAR with slerp for rotations, STEP, CUBICSPLINE) and
multiplies node matrices up the tree, scale included, as a renderer would.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import numpy as np
import pygltflib

_DTYPES = {5120: "<i1", 5121: "<u1", 5122: "<i2", 5123: "<u2", 5125: "<u4", 5126: "<f4"}
_N = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT4": 16}


class Gltf:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.doc = pygltflib.GLTF2().load(str(path))
        self.parent = {c: i for i, n in enumerate(self.doc.nodes) for c in (n.children or [])}

    def buffer(self, i: int) -> bytes:
        uri = self.doc.buffers[i].uri
        if uri is None:
            return self.doc.binary_blob()
        if uri.startswith("data:"):
            return base64.b64decode(uri.split(",", 1)[1])
        return (self.path.parent / uri).read_bytes()

    def accessor(self, i: int) -> np.ndarray:
        a = self.doc.accessors[i]
        v = self.doc.bufferViews[a.bufferView]
        data = self.buffer(v.buffer)
        dt = np.dtype(_DTYPES[a.componentType])
        n = _N[a.type]
        stride = v.byteStride or dt.itemsize * n
        start = (v.byteOffset or 0) + (a.byteOffset or 0)
        rows = [
            np.frombuffer(data, dtype=dt, count=n, offset=start + k * stride)
            for k in range(a.count)
        ]
        return np.array(rows, dtype=np.float64)

    def channels(self, k: int) -> dict[tuple[int, str], tuple[np.ndarray, np.ndarray, str]]:
        anim = self.doc.animations[k]
        out = {}
        for ch in anim.channels:
            s = anim.samplers[ch.sampler]
            out[(ch.target.node, ch.target.path)] = (
                self.accessor(s.input)[:, 0],
                self.accessor(s.output),
                s.interpolation or "LINEAR",
            )
        return out

    def local(self, i: int, chans: dict[Any, Any], t: float) -> np.ndarray:
        node = self.doc.nodes[i]
        if node.matrix is not None and (i, "rotation") not in chans:
            return np.array(node.matrix, dtype=np.float64).reshape(4, 4).T
        T = np.array(node.translation or [0.0, 0.0, 0.0])
        R = np.array(node.rotation or [0.0, 0.0, 0.0, 1.0])
        S = np.array(node.scale or [1.0, 1.0, 1.0])
        if (i, "translation") in chans:
            T = sample(*chans[(i, "translation")], t, False)
        if (i, "rotation") in chans:
            R = sample(*chans[(i, "rotation")], t, True)
        if (i, "scale") in chans:
            S = sample(*chans[(i, "scale")], t, False)
        M = np.eye(4)
        M[:3, :3] = quat_matrix(R) @ np.diag(S)
        M[:3, 3] = T
        return M

    def world(self, i: int, chans: dict[Any, Any], t: float) -> np.ndarray:
        M = self.local(i, chans, t)
        while i in self.parent:
            i = self.parent[i]
            M = self.local(i, chans, t) @ M
        return M


def quat_matrix(q: np.ndarray) -> np.ndarray:
    x, y, z, w = q / np.linalg.norm(q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def sample(times: np.ndarray, values: np.ndarray, interp: str, t: float, rot: bool) -> np.ndarray:
    """One channel at time ``t`` by the glTF 2.0 specification (Appendix C)."""
    cubic = interp == "CUBICSPLINE"
    v = values.reshape(len(times), 3, -1) if cubic else values[:, None, :]
    mid = 1 if cubic else 0
    if t <= times[0]:
        out = v[0, mid]
    elif t >= times[-1]:
        out = v[-1, mid]
    else:
        k = int(np.searchsorted(times, t, side="right") - 1)
        td = times[k + 1] - times[k]
        u = (t - times[k]) / td
        a, b = v[k, mid], v[k + 1, mid]
        if interp == "STEP":
            out = a
        elif cubic:
            out = (
                (2 * u**3 - 3 * u**2 + 1) * a
                + td * (u**3 - 2 * u**2 + u) * v[k, 2]
                + (-2 * u**3 + 3 * u**2) * b
                + td * (u**3 - u**2) * v[k + 1, 0]
            )
        elif rot:
            # keys are unit quaternions by the specification: read a stored key as its unit
            # quaternion (a writer's rounding leaves the length off by up to 1e-4)
            a, b = a / np.linalg.norm(a), b / np.linalg.norm(b)
            d = float(np.dot(a, b))
            if d < 0.0:
                b, d = -b, -d
            if d > 1.0 - 1e-12:
                out = a + u * (b - a)
            else:
                th = np.arccos(d)
                out = (np.sin((1 - u) * th) * a + np.sin(u * th) * b) / np.sin(th)
        else:
            out = (1 - u) * a + u * b
    return out / np.linalg.norm(out) if rot else out
