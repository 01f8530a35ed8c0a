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

Supported: one position target on a chain of revolute joints.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from ..errors import UnsupportedError
from ..kinematics import needed_nodes, packed
from ..kinematics._kernels import fk_rows
from ..model import JointType, Model
from . import layout as L
from .options import IKOptions
from .problem import Problem, Template, require_finite_q0, template
from .result import IKResult
from .solve import run

__all__ = ["fabrik_points", "solve_fabrik"]


def fabrik_points(
    points: np.ndarray, target: np.ndarray, tol: float = 1e-9, max_iter: int = 100
) -> tuple[np.ndarray, int]:
    """Move chain ``points`` (n, 3) [m] so the last reaches ``target``; the first stays.

    Returns the new points and the iterations used. An unreachable target leaves
    the chain stretched straight toward it.
    """
    p = np.array(points, dtype=np.float64)
    lengths = np.linalg.norm(np.diff(p, axis=0), axis=1)
    root = p[0].copy()
    if np.linalg.norm(target - root) >= lengths.sum():
        d = (target - root) / max(np.linalg.norm(target - root), 1e-300)
        p[1:] = root + np.cumsum(lengths)[:, None] * d
        return p, 1
    it = 0
    while it < max_iter and np.linalg.norm(p[-1] - target) > tol:
        it += 1
        p[-1] = target
        for i in range(len(p) - 2, -1, -1):
            d = p[i] - p[i + 1]
            p[i] = p[i + 1] + d * (lengths[i] / max(np.linalg.norm(d), 1e-300))
        p[0] = root
        for i in range(1, len(p)):
            d = p[i] - p[i - 1]
            p[i] = p[i - 1] + d * (lengths[i - 1] / max(np.linalg.norm(d), 1e-300))
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
        return _node_pose(model, qv, k)[:3, 3]

    def tip(qv: np.ndarray) -> np.ndarray:
        T = _node_pose(model, qv, node)
        return T[:3, :3] @ point + T[:3, 3]

    pts = np.array([node_pos(q, k) for k in group_nodes] + [tip(q)])
    new_pts, fab_iters = fabrik_points(pts, target, tol=0.1 * opts.tol[0],
                                       max_iter=opts.iterations)  # fmt: skip
    # Map back, root to tip: each joint group puts the next point where FABRIK put it,
    # by a short DLS solve on that group's DoF alone. The sub-solves keep the caller's
    # options (limits, swing-twist cones) but no restarts, budget, record or reach check.
    sub_opts = dataclasses.replace(
        opts, method="dls", max_iter=30, restarts=0, time_budget=None, record=False,
        clamp_target=False, pin=(), rest=None,
    )  # fmt: skip
    for g, dofs in enumerate(groups):
        nxt = group_nodes[g + 1] if g + 1 < len(groups) else node
        sub = _group_template(tpl, nxt, dofs, sub_opts, point if nxt == node else None)
        row = tf.copy()
        row[0, L.T_POS : L.T_POS + 3] = new_pts[g + 1]
        if nxt != node:
            row[0, L.T_POINT : L.T_POINT + 3] = 0.0
        res = run(sub, row.reshape(1, 1, L.TARGET_SIZE), q.reshape(1, -1).copy(), (), sub_opts,
                  time.perf_counter())  # fmt: skip
        q = np.asarray(res.q, dtype=float).copy()
    # Polish on the full chain (a few DLS iterations) and report through FK.
    pol_opts = dataclasses.replace(sub_opts, max_iter=20, clamp_target=opts.clamp_target,
                                   rest=opts.rest)  # fmt: skip
    pol = template(model, tpl.frames, (L.KIND_FRAME,), tpl.weights, point.reshape(1, 3),
                   dataclasses.replace(pol_opts, active=opts.active))  # fmt: skip
    res = run(pol, np.ascontiguousarray(tf.reshape(1, 1, L.TARGET_SIZE)), q.reshape(1, -1),
              (), pol_opts, t0)  # fmt: skip
    res.iterations = int(res.iterations) + fab_iters
    res.method = "fabrik"
    return res


def _group_template(
    tpl: Template, node: int, dofs: list[int], opts: IKOptions, point: np.ndarray | None
) -> Template:
    """A template moving only ``dofs`` to put ``node`` (plus ``point``) at a position."""
    model = tpl.model
    names = tuple(model.joint_names[d] for d in dofs)
    pt = np.zeros((1, 3)) if point is None else point.reshape(1, 3)
    return template(model, (model.node_names[node],), (L.KIND_FRAME,),
                    np.array([[1.0, 1.0, 1.0, 0.0, 0.0, 0.0]]), pt,
                    dataclasses.replace(opts, active=names), nodes=(node,))  # fmt: skip


def _node_pose(model: Model, q: np.ndarray, k: int) -> np.ndarray:
    """World pose (4x4) of any node, hidden inner ball-joint nodes included."""
    fdata, idata = packed(model)
    out = np.empty((1, 1, 4, 4))
    nodes = needed_nodes(model, (k,))  # read-only, as every FK call passes them
    fk_rows(np.require(q.reshape(1, -1), np.float64, ("C", "W")), fdata, idata, nodes,
            np.array([k], dtype=np.int64), out, 0, 1)  # fmt: skip
    return out[0, 0]
