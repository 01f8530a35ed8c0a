"""What kinetree needs from an FBX file, read by ufbx in a child process.

Run as ``python -m kinetree.io._fbx_scene REQUEST.json OUT.npz``; only
:mod:`kinetree.io.fbx` starts it. ufbx's Python binding (PyPI ``ufbx``) loads and evaluates
FBX files as the ufbx library defines them (binary 7.x and ASCII; curves, pivots, pre and
post rotations, inherit modes), but its wrapper objects free memory they share when one of
them is dropped, which can end the process with a segmentation fault. So the file is read
here, in a process of its own: every wrapper is held in one list until the process ends by
``os._exit`` (no teardown frees anything), and what leaves is plain arrays in an ``.npz``.
A crash here is a failed read in the parent (a :class:`~kinetree.errors.FileFormatError`),
never the caller's process.

The request (JSON): ``path``, ``animation`` (a take name, an index or null), ``times`` (the
seconds to sample, or null for the take's own key times), ``skins`` (whether to read the
skinned meshes). This module imports only numpy and ufbx.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import numpy as np

#: Every ufbx wrapper this process touched, alive until ``os._exit``.
_KEEP: list[Any] = []


def _k(x: Any) -> Any:
    _KEEP.append(x)
    return x


def _matrix(m: Any) -> np.ndarray:
    """A ufbx ``Matrix`` (four column Vec3s) as a 4x4 array."""
    out = np.eye(4)
    for j, c in enumerate((m.c0, m.c1, m.c2, m.c3)):
        out[:3, j] = (c.x, c.y, c.z)
    return out


def _items(lst: Any) -> list[Any]:
    seq = _k(lst)
    return [_k(seq[i]) for i in range(len(seq))]


def _skeleton(nodes: list[Any], bone_type: Any) -> list[int]:
    """``typed_id`` of every limb node (``main`` adds the skin clusters' bones and the
    ancestors of both)."""
    want: set[int] = set()
    for n in nodes:
        if n.attrib_type == bone_type or n.bone is not None:
            want.add(int(n.typed_id))
    return sorted(want)


def _stack_key_times(stack: Any) -> list[float]:
    times: set[float] = set()
    for layer in _items(stack.layers):
        for value in _items(layer.anim_values):
            for curve in _items(value.curves):
                if curve is None:
                    continue
                for key in _items(curve.keyframes):
                    times.add(float(key.time))
    return sorted(times)


def main(request_path: str, out_path: str) -> None:
    import ufbx

    with open(request_path, encoding="utf-8") as f:
        req = json.load(f)
    scene = _k(ufbx.load_file(req["path"]))
    settings = _k(scene.settings)
    axes = _k(settings.axes)
    out: dict[str, Any] = {
        "axes": np.array([int(axes.right), int(axes.up), int(axes.front)]),
        "unit_meters": float(settings.unit_meters),
        "file_fps": float(settings.frames_per_second),
    }
    nodes = _items(scene.nodes)
    bone_type = ufbx.ElementType.BONE
    index = {int(n.typed_id): i for i, n in enumerate(nodes)}
    want = set(_skeleton(nodes, bone_type))
    meshes = []
    if req.get("skins", True):
        for n in nodes:
            mesh = _k(n.mesh)
            if mesh is None:
                continue
            deformers = _items(mesh.skin_deformers)
            if not deformers:
                continue
            meshes.append((n, mesh, deformers[0]))
            for cl in _items(deformers[0].clusters):
                b = _k(cl.bone_node)
                if b is not None:
                    want.add(int(b.typed_id))
    # ancestors below the scene root, so that every joint hangs from the root
    for t in list(want):
        p = _k(nodes[index[t]].parent)
        while p is not None and not p.is_root:
            want.add(int(p.typed_id))
            p = _k(p.parent)
    # parents before children: order by depth, then file order
    order = sorted(want, key=lambda t: (int(nodes[index[t]].node_depth), index[t]))
    pos = {t: i for i, t in enumerate(order)}
    names, parents, inherit, limb = [], [], [], []
    rest = np.zeros((len(order), 4, 4))
    local_scale = np.zeros((len(order), 3))
    for i, t in enumerate(order):
        n = nodes[index[t]]
        names.append(str(n.name))
        p = _k(n.parent)
        parents.append(pos[int(p.typed_id)] if p is not None and not p.is_root else -1)
        inherit.append(int(n.inherit_mode))
        limb.append(bool(n.attrib_type == bone_type or n.bone is not None))
        rest[i] = _matrix(n.node_to_world)
        s = _k(n.local_transform).scale
        local_scale[i] = (s.x, s.y, s.z)
    out.update(
        names=np.array(json.dumps(names)),
        parents=np.array(parents, dtype=np.int64),
        inherit=np.array(inherit, dtype=np.int64),
        limb=np.array(limb, dtype=bool),
        rest=rest,
        local_scale=local_scale,
    )
    # takes
    stacks = _items(scene.anim_stacks)
    out["takes"] = np.array(json.dumps([str(s.name) for s in stacks]))
    sel = req.get("animation")
    stack = None
    if stacks:
        if sel is None:
            stack = stacks[0]
        elif isinstance(sel, int):
            stack = stacks[sel] if -len(stacks) <= sel < len(stacks) else None
        else:
            found = [s for s in stacks if str(s.name) == sel]
            stack = found[0] if found else None
    if stack is not None:
        begin, end = float(stack.time_begin), float(stack.time_end)
        keys = [t for t in _stack_key_times(stack) if begin - 1e-9 <= t <= end + 1e-9]
        out["take"] = np.array(str(stack.name))
        out["span"] = np.array([begin, end])
        out["key_times"] = np.array(sorted({begin, end, *keys}))
        times = req.get("times")
        if times is not None:
            anim = _k(stack.anim)
            world = np.zeros((len(times), len(order), 4, 4))
            for k, t in enumerate(times):
                evaluated = ufbx.evaluate_scene(scene, anim, float(t))
                enodes = evaluated.nodes
                for i, tid in enumerate(order):
                    world[k, i] = _matrix(enodes[index[tid]].node_to_world)
                del enodes, evaluated  # dropped whole: the binding frees them safely so
            out["world"] = world
            out["times"] = np.array(times, dtype=np.float64)
    # skinned meshes
    skins = []
    for n, mesh, deformer in meshes:
        skins.append(_read_skin(n, mesh, deformer, pos))
    out["skins"] = np.array(json.dumps([s[0] for s in skins]))
    for k, (_, arrays) in enumerate(skins):
        for key, a in arrays.items():
            out[f"skin{k}_{key}"] = a
    np.savez(out_path, **out)


def _read_skin(
    node: Any, mesh: Any, deformer: Any, pos: dict[int, int]
) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """One skinned mesh: geometry-space vertices, triangles, weights, clusters."""
    verts = _items(mesh.vertices)
    v = np.array([(p.x, p.y, p.z) for p in verts], dtype=np.float64).reshape(-1, 3)
    vi = _k(mesh.vertex_indices)
    vertex_of_index = np.array([int(vi[i]) for i in range(len(vi))], dtype=np.int64)
    tris = []
    for face in _items(mesh.faces):
        b, c = int(face.index_begin), int(face.num_indices)
        for j in range(1, c - 1):  # a fan; faces are convex polygons as modellers write them
            tris.append((b, b + j, b + j + 1))
    faces = vertex_of_index[np.array(tris, dtype=np.int64).reshape(-1, 3)]
    clusters = _items(deformer.clusters)
    bones, g2b = [], []
    for cl in clusters:
        b = _k(cl.bone_node)
        bones.append(pos[int(b.typed_id)] if b is not None else -1)
        g2b.append(_matrix(cl.geometry_to_bone))
    sverts = _items(deformer.vertices)
    sweights = _k(deformer.weights)
    k_max = max([int(sv.num_weights) for sv in sverts] + [1])
    joints = np.zeros((len(sverts), k_max), dtype=np.int64)
    weights = np.zeros((len(sverts), k_max))
    for i, sv in enumerate(sverts):
        b = int(sv.weight_begin)
        for j in range(int(sv.num_weights)):
            w = _k(sweights[b + j])
            joints[i, j] = int(w.cluster_index)
            weights[i, j] = float(w.weight)
    color = (0.8, 0.8, 0.8, 1.0)
    try:
        mats = _items(mesh.materials)
        if mats:
            c = _k(_k(_k(mats[0].fbx).diffuse_color).value_vec4)
            color = (float(c.x), float(c.y), float(c.z), 1.0)
    except Exception:
        pass
    meta = {"name": str(node.name), "color": color}
    arrays = {
        "vertices": v,
        "faces": faces,
        "bones": np.array(bones, dtype=np.int64),
        "geometry_to_bone": np.array(g2b).reshape(-1, 4, 4),
        "geometry_to_world": _matrix(node.geometry_to_world),
        "joints": joints,
        "weights": weights,
    }
    return meta, arrays


if __name__ == "__main__":
    try:
        main(sys.argv[1], sys.argv[2])
    except Exception as exc:
        sys.stderr.write(f"{type(exc).__name__}: {exc}\n")
        sys.stderr.flush()
        os._exit(3)
    sys.stdout.flush()
    os._exit(0)
