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
from ..kinematics._kernels import fk_batch_serial
from ..model import Model
from . import _kernels as K
from .problem import Problem, require_finite_q0
from .result import IKResult

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
    from . import run

    require_finite_q0(prob)
    tpl = prob.template
    model = tpl.model
    if tpl.tgt_i.shape[0] != 1 or tpl.tgt_i[0, 1] != 0 or np.any(tpl.weights[0, 3:] > 0):
        raise UnsupportedError(
            "fabrik solves one Position target; use dls, sdls or ccd for orientations "
            "and several effectors"
        )
    if prob.batch:
        raise UnsupportedError("fabrik solves one target at a time; use dls for batches")
    node = int(tpl.tgt_i[0, 0])
    path = model.ancestors(node)
    groups: list[list[int]] = []  # active DoF per joint point, root to tip
    group_nodes: list[int] = []
    for k in path:
        qi = int(model.q_index[k])
        if model.joint_type[k] == 0 or qi < 0 or not tpl.active[qi]:
            continue
        if model.joint_type[k] == 2:
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
    q = np.array(prob.q0, dtype=np.float64)
    cfg, icfg = tpl.cfg, tpl.icfg
    if icfg[K.I_LIMITS]:
        act = tpl.active
        lo = cfg[K.NF : K.NF + model.dof]
        hi = cfg[K.NF + model.dof : K.NF + 2 * model.dof]
        q[act] = np.clip(q[act], lo[act], hi[act])
    tf = prob.tgt_f
    target = tf[0, 0:3]

    def node_pos(qv: np.ndarray, k: int) -> np.ndarray:
        return _node_pose(model, qv, k)[:3, 3]

    def tip(qv: np.ndarray) -> np.ndarray:
        T = _node_pose(model, qv, node)
        return T[:3, :3] @ tf[0, 18:21] + T[:3, 3]

    pts = np.array([node_pos(q, k) for k in group_nodes] + [tip(q)])
    new_pts, fab_iters = fabrik_points(
        pts, target, tol=0.1 * cfg[K.F_TOL_P], max_iter=int(icfg[K.I_MAX_ITER])
    )
    # Map back, root to tip: each joint group puts the next point where FABRIK put it.
    for g, dofs in enumerate(groups):
        nxt = group_nodes[g + 1] if g + 1 < len(groups) else node
        sub_icfg = icfg.copy()
        sub_icfg[K.I_NA] = len(dofs)
        sub_icfg[K.NI : K.NI + model.dof] = 0
        sub_icfg[K.NI : K.NI + len(dofs)] = dofs
        sub_icfg[K.I_METHOD] = K.DLS
        sub_icfg[K.I_MAX_ITER] = 30
        sub_icfg[K.I_RESTARTS] = 0
        sub_icfg[K.I_RECORD] = 0
        sub_icfg[K.NI + 2 * model.dof :] = -1  # no reach check for the sub-steps
        sub_tf = tf.copy()
        sub_tf[0, 0:3] = new_pts[g + 1]
        if nxt != node:
            sub_tf[0, 18:21] = 0.0
        sub_tgt_i = tpl.tgt_i.copy()
        sub_tgt_i[0, 0] = nxt
        sub = dataclasses.replace(tpl, icfg=sub_icfg, tgt_i=sub_tgt_i, record=False,
                                  nodes=model.ancestors(nxt))  # fmt: skip
        q = np.asarray(run(Problem(sub, sub_tf, q, ()), time.perf_counter()).q, dtype=float).copy()
    # Polish on the full chain (a few DLS iterations) and report through FK.
    pol_icfg = icfg.copy()
    pol_icfg[K.I_METHOD] = K.DLS
    pol_icfg[K.I_MAX_ITER] = 20
    pol_icfg[K.I_RECORD] = 0
    pol = dataclasses.replace(tpl, icfg=pol_icfg, record=False)
    res = run(Problem(pol, prob.tgt_f, q, ()), t0)
    res.iterations = int(res.iterations) + fab_iters
    res.method = "fabrik"
    return res


def _node_pose(model: Model, q: np.ndarray, k: int) -> np.ndarray:
    """World pose (4x4) of any node, hidden inner ball-joint nodes included."""
    fdata, idata = model.packed
    out = fk_batch_serial(
        q.reshape(1, -1), fdata, idata, model.ancestors(k), np.array([k], dtype=np.int64)
    )
    return out[0, 0]
