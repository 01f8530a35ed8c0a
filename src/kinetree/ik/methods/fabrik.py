"""FABRIK: forward-and-backward reaching on the chain's joint points, then mapped back
to joint angles.

Aristidou and Lasenby (2011). The chain is seen as points (one per joint
location: the axes of a ball joint share a point) joined by rigid segments.
Each iteration drags the tip onto the target and fixes lengths walking back to
the root (backward pass), then re-anchors the root and walks forward. The
points are then turned into joint angles group by group, root to tip: each
joint group is solved (compiled DLS on its own DoF only) to put the next point
where FABRIK placed it, and a short DLS polish on the whole chain absorbs what
joint axes and limits could not follow. Success is checked through FK, as for
every method.

The points honour the chain's joints themselves: a knee or an elbow (one revolute
DoF) keeps its bone in the plane normal to its axis, and a ball joint with a
swing-twist cone keeps its bone within the cone, each carried along as the bones
above it turn (:func:`fabrik_points`); the mapping back and the polish then have
little left to do.

Supported: one position target on a chain of revolute joints.
"""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np

from ...errors import UnsupportedError
from ...kinematics import needed_nodes, packed
from ...kinematics._kernels import fk_rows
from ...model import JointType, Model
from .._run import run
from ..kernel import layout as L
from ..options import IKOptions
from ..problem import Problem, Template, require_finite_q0, template
from ..result import IKResult

__all__ = ["fabrik_points", "node_pose", "solve_fabrik"]


def _turn(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The smallest rotation (3x3) taking unit vector ``u`` to unit vector ``v``."""
    w = np.cross(u, v)
    c = float(u @ v)
    if c < -1.0 + 1e-12:  # opposite: a half turn about any perpendicular
        a = np.cross(u, np.eye(3)[int(np.argmin(np.abs(u)))])
        a /= np.linalg.norm(a)
        return 2.0 * np.outer(a, a) - np.eye(3)
    K = np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])
    return np.eye(3) + K + K @ K / (1.0 + c)


def _constrain(
    d: np.ndarray,
    hinge: np.ndarray | None,
    cone: tuple[np.ndarray, float] | None,
    fallback: np.ndarray,
) -> np.ndarray:
    """Bone direction ``d`` (unit) moved onto its allowed set: the plane normal to the
    ``hinge`` axis, then the ``cone`` (axis, half angle) about its rest direction."""
    if hinge is not None:
        d = d - (d @ hinge) * hinge
        n = float(np.linalg.norm(d))
        d = d / n if n > 1e-12 else fallback
    if cone is not None:
        axis, limit = cone
        ang = math.acos(min(1.0, max(-1.0, float(d @ axis))))
        if ang > limit:
            side = d - (d @ axis) * axis
            n = float(np.linalg.norm(side))
            side = side / n if n > 1e-12 else _perp(axis)
            d = math.cos(limit) * axis + math.sin(limit) * side
            if hinge is not None:  # stay in the hinge's plane
                d = d - (d @ hinge) * hinge
                d /= max(float(np.linalg.norm(d)), 1e-300)
    return d


def _perp(u: np.ndarray) -> np.ndarray:
    a = np.cross(u, np.eye(3)[int(np.argmin(np.abs(u)))])
    return a / np.linalg.norm(a)


def fabrik_points(
    points: np.ndarray,
    target: np.ndarray,
    tol: float = 1e-9,
    max_iter: int = 100,
    *,
    hinges: dict[int, np.ndarray] | None = None,
    cones: dict[int, float | tuple[np.ndarray, float]] | None = None,
) -> tuple[np.ndarray, int]:
    """Move chain ``points`` (n, 3) [m] so the last reaches ``target``; the first stays.

    Constraints (joint ``i`` sits at ``points[i]`` and turns bone ``i``, from point ``i``
    to ``i + 1``), each carried along as the bone before it turns (by the smallest
    rotation that takes that bone's old direction to its new one):

    * ``hinges[i]``: a world axis (at the start) that bone ``i`` stays perpendicular to
      (a knee or an elbow: the bone turns in one plane);
    * ``cones[i]``: the largest angle [rad] bone ``i`` may make with its start
      direction, or ``(axis, angle)``: with a world axis (at the start) instead (a
      ball joint's swing-twist cone about its rest bone direction).

    Each iteration drags the tip onto the target walking back to the root, then walks
    forward from the root applying the constraints, so the returned points satisfy them
    exactly (the tip gets as near as they allow). Returns the new points and the
    iterations used. Without constraints an unreachable target leaves the chain
    stretched straight toward it.
    """
    p = np.array(points, dtype=np.float64)
    n = len(p)
    lengths = np.linalg.norm(np.diff(p, axis=0), axis=1)
    root = p[0].copy()
    hinges = (
        {}
        if hinges is None
        else {i: np.asarray(a, float) / np.linalg.norm(a) for i, a in hinges.items()}
    )
    cone_of: dict[int, tuple[np.ndarray, float]] = {}
    for i, c in (cones or {}).items():
        if isinstance(c, tuple):
            cone_of[i] = (np.asarray(c[0], float) / np.linalg.norm(c[0]), float(c[1]))
        else:
            cone_of[i] = (np.diff(p, axis=0)[i] / lengths[i], float(c))
    constrained = bool(hinges or cone_of)
    if not constrained and np.linalg.norm(target - root) >= lengths.sum():
        d = (target - root) / max(np.linalg.norm(target - root), 1e-300)
        p[1:] = root + np.cumsum(lengths)[:, None] * d
        return p, 1
    start_dirs = np.diff(p, axis=0) / np.maximum(lengths, 1e-300)[:, None]
    last = p.copy()
    it = 0
    while it < max_iter and np.linalg.norm(p[-1] - target) > tol:
        it += 1
        p[-1] = target
        for i in range(n - 2, -1, -1):
            d = p[i] - p[i + 1]
            p[i] = p[i + 1] + d * (lengths[i] / max(np.linalg.norm(d), 1e-300))
        p[0] = root
        turn = np.eye(3)  # how the bone before the current one turned from the start
        for i in range(1, n):
            d = p[i] - p[i - 1]
            d = d / max(np.linalg.norm(d), 1e-300)
            if constrained:
                b = i - 1
                hinge = turn @ hinges[b] if b in hinges else None
                cone = (turn @ cone_of[b][0], cone_of[b][1]) if b in cone_of else None
                d = _constrain(d, hinge, cone, turn @ start_dirs[b])
                turn = _turn(turn @ start_dirs[b], d) @ turn
            p[i] = p[i - 1] + d * lengths[i - 1]
        if constrained and np.allclose(p, last, atol=1e-15, rtol=0.0):
            break  # the constraints stop the tip short of the target
        last = p.copy()
    return p, it


def solve_fabrik(prob: Problem, t0: float) -> IKResult:
    """Run FABRIK on a single position target (see the module docstring)."""
    require_finite_q0(prob)
    tpl = prob.template
    model = tpl.model
    if (
        tpl.n_targets != 1
        or tpl.tgt_i[0, L.TI_KIND] != L.KIND_FRAME
        or np.any(tpl.weights[0, 3:] > 0)
    ):
        raise UnsupportedError(
            "fabrik solves one Position target; use dls, sdls or ccd for orientations "
            "and several effectors"
        )
    if prob.batch:
        raise UnsupportedError("fabrik solves one target at a time; use dls for batches")
    node = int(tpl.tgt_i[0, L.TI_NODE])
    path = model.ancestors(node)
    groups: list[list[int]] = []  # active DoF per joint point, root to tip
    group_nodes: list[int] = []
    for k in path:
        if not model.moves(k) or not tpl.active[model.q_index[k]]:
            continue
        qi = int(model.q_index[k])
        if model.joint_type[k] == JointType.PRISMATIC:
            raise UnsupportedError("fabrik needs revolute joints; this chain has a prismatic one")
        if (
            groups
            and np.allclose(model.origin[k][:3, 3], 0.0)
            and model.parent[k] == group_nodes[-1]
        ):
            groups[-1].append(qi)
            group_nodes[-1] = int(k)
        else:
            groups.append([qi])
            group_nodes.append(int(k))
    opts = tpl.options
    q = np.array(prob.q0, dtype=np.float64)
    if opts.respect_limits:
        act = tpl.active
        q[act] = np.clip(q[act], tpl.lo[act], tpl.hi[act])
    tf = prob.tgt_f
    target = tf[0, L.T_POS : L.T_POS + 3]
    point = tf[0, L.T_POINT : L.T_POINT + 3]

    def node_pos(qv: np.ndarray, k: int) -> np.ndarray:
        return node_pose(model, qv, k)[:3, 3]

    def tip(qv: np.ndarray) -> np.ndarray:
        T = node_pose(model, qv, node)
        return T[:3, :3] @ point + T[:3, 3]

    pts = np.array([node_pos(q, k) for k in group_nodes] + [tip(q)])
    hinges, cones = _constraints(model, q, groups, group_nodes, opts.respect_limits)
    new_pts, fab_iters = fabrik_points(
        pts, target, tol=0.1 * opts.tol[0], max_iter=opts.iterations, hinges=hinges, cones=cones
    )
    # Map back, root to tip: each joint group puts the next point where FABRIK put it,
    # by a short DLS solve on that group's DoF alone. The sub-solves keep the caller's
    # options (limits, swing-twist cones) but no restarts, budget, record or reach check.
    sub_opts = dataclasses.replace(
        opts,
        method="dls",
        max_iter=30,
        restarts=0,
        time_budget=None,
        record=False,
        clamp_target=False,
        pin=(),
        rest=None,
    )
    for g, dofs in enumerate(groups):
        nxt = group_nodes[g + 1] if g + 1 < len(groups) else node
        sub = _group_template(tpl, nxt, dofs, sub_opts, point if nxt == node else None)
        row = tf.copy()
        row[0, L.T_POS : L.T_POS + 3] = new_pts[g + 1]
        if nxt != node:
            row[0, L.T_POINT : L.T_POINT + 3] = 0.0
        res = run(
            sub,
            row.reshape(1, 1, L.TARGET_SIZE),
            q.reshape(1, -1).copy(),
            (),
            sub_opts,
            time.perf_counter(),
        )
        q = np.asarray(res.q, dtype=float).copy()
    # Polish on the full chain (a few DLS iterations) and report through FK.
    pol_opts = dataclasses.replace(
        sub_opts, max_iter=20, clamp_target=opts.clamp_target, rest=opts.rest
    )
    pol = template(
        model,
        tpl.frames,
        (L.KIND_FRAME,),
        tpl.weights,
        point.reshape(1, 3),
        dataclasses.replace(pol_opts, active=opts.active),
    )
    res = run(
        pol,
        np.ascontiguousarray(tf.reshape(1, 1, L.TARGET_SIZE)),
        q.reshape(1, -1),
        (),
        pol_opts,
        t0,
    )
    res.iterations = int(res.iterations) + fab_iters
    res.method = "fabrik"
    return res


def _constraints(
    model: Model, q: np.ndarray, groups: list[list[int]], group_nodes: list[int], limits: bool
) -> tuple[dict[int, np.ndarray], dict[int, float | tuple[np.ndarray, float]]]:
    """FABRIK's constraints from the model at ``q``: a joint point moved by one revolute
    DoF is a hinge (its world axis); a ball joint with a swing-twist cone keeps its bone
    within the swing angle of its rest direction (when limits are respected)."""
    hinges: dict[int, np.ndarray] = {}
    cones: dict[int, float | tuple[np.ndarray, float]] = {}
    by_dof = {int(model.q_index[k]): int(k) for k in range(model.n_nodes) if model.moves(k)}
    for g, dofs in enumerate(groups):
        last = group_nodes[g]
        if len(dofs) == 1 and model.joint_type[last] == JointType.REVOLUTE:
            hinges[g] = node_pose(model, q, last)[:3, :3] @ model.axis[last]
        group = model.node_joint[last]
        if limits and group in model.swing_twist:
            bone, swing = model.swing_twist[group][0], model.swing_twist[group][1]
            first = by_dof[dofs[0]]
            parent = node_pose(model, q, int(model.parent[first]))[:3, :3]
            cones[g] = (parent @ (model.origin[first][:3, :3] @ np.asarray(bone)), swing)
    return hinges, cones


def _group_template(
    tpl: Template, node: int, dofs: list[int], opts: IKOptions, point: np.ndarray | None
) -> Template:
    """A template moving only ``dofs`` to put ``node`` (plus ``point``) at a position."""
    model = tpl.model
    names = tuple(model.joint_names[d] for d in dofs)
    pt = np.zeros((1, 3)) if point is None else point.reshape(1, 3)
    return template(
        model,
        (model.node_names[node],),
        (L.KIND_FRAME,),
        np.array([[1.0, 1.0, 1.0, 0.0, 0.0, 0.0]]),
        pt,
        dataclasses.replace(opts, active=names),
        nodes=(node,),
    )


def node_pose(model: Model, q: np.ndarray, k: int) -> np.ndarray:
    """World pose (4x4) of any node, hidden inner ball-joint nodes included."""
    fdata, idata = packed(model)
    out = np.empty((1, 1, 4, 4))
    nodes = needed_nodes(model, (k,))  # read-only, as every FK call passes them
    fk_rows(
        np.require(q.reshape(1, -1), np.float64, ("C", "W")),
        fdata,
        idata,
        nodes,
        np.array([k], dtype=np.int64),
        out,
        0,
        1,
    )
    return out[0, 0]
