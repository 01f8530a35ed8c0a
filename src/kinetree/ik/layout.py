"""Every packed array the IK kernels read or write, with each slot named.

The compiled solver sees plain arrays only. This module is their one owner: the
Python writers (:func:`write_config`, :func:`pack`, :func:`read_result`) and the
compiled readers (:func:`unpack`, :func:`read_config`, :func:`carve`) sit side by
side, so a slot is renamed or moved in one place. Module-level integers are
compile-time constants in numba, so the names cost nothing in the kernels.

Sizes: ``nq`` numbers in a configuration ``q``, ``nv`` in a motion (a step, a
Jacobian column); they are equal today and kept apart so that joints whose
configuration has more numbers than their motion (quaternions) fit. ``T`` targets,
``m`` weighted error rows, ``na`` active DoF, ``n`` model nodes.

Arrays of one solve:

* **target row** (float64, :data:`TARGET_SIZE`), one per target: what to reach.
* **target ints** ``tgt_i`` (T, 2): ``[TI_NODE]`` frame node, ``[TI_KIND]``
  :data:`KIND_FRAME` or :data:`KIND_DIRECTION`.
* **rows** (m, 2): ``(target, component)`` of each weighted error row; components
  0-2 are position x, y, z and 3-5 rotation x, y, z (world axes).
* **config** ``cfg`` (float64) and ``icfg`` (int64): the scalar settings ``C_*`` and
  ``N_*`` below, followed by per-DoF and per-target blocks (see :func:`write_config`).
* **result row** (float64, :func:`result_size`): ``q`` (nq), the position error of
  each target (T) [m], the orientation error of each target (T) [rad], then the
  ``R_*`` slots: status, iterations, restarts, history rows, reachable.

The model, the targets' structure and the config travel together as two buffers
(:func:`pack`): each argument crossing into compiled code costs about 0.1 us.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from ..kinematics.layout import F_SIZE, I_SIZE

# --- target row ------------------------------------------------------------------------------
T_POS = 0  # 3: target point [m]; for a direction target, the world direction (unit)
T_ROT = 3  # 9: target rotation, row-major (identity when orientation is not asked)
T_W_POS = 12  # 3: weights of the x, y, z position error rows (0: masked out)
T_W_ROT = 15  # 3: weights of the x, y, z rotation error rows (0: masked out)
T_POINT = 18  # 3: point offset in the frame [m]; for a direction target, the frame's axis
TARGET_SIZE = 21

KIND_FRAME = 0  # position, orientation or pose of a frame
KIND_DIRECTION = 1  # point a frame's axis along a world direction

TI_NODE = 0
TI_KIND = 1

# --- config: float scalars, then blocks -------------------------------------------------------
C_TOL_P = 0  # position tolerance [m]
C_TOL_R = 1  # rotation tolerance [rad]
C_STEP = 2  # step size alpha (scales each step)
C_DAMPING = 3  # damped least squares: lambda = damping * |e|^2 / 2 + lambda_min
C_LAMBDA_MIN = 4  # smallest damping
C_BUDGET = 5  # wall-clock budget per problem [s]; <= 0: none
C_REST_GAIN = 6  # null-space gain toward the rest pose
C_CUTOFF = 7  # relative singular value cut-off (pinv, sdls)
C_TASK_STEP = 8  # seed 001's normalised step: |e| clipped to this length; <= 0: off
C_MAX_JOINT_STEP = 9  # largest change of one joint per iteration [rad or m]
C_HEAD = 10
# Blocks after the head, in order: lo, hi (limits, nq each), sample_lo, sample_hi
# (finite bounds for restarts, nq each; NaN: a restart keeps the start value), rest
# (nq), reach (T), swing-twist floats.
B_LO, B_HI, B_SAMPLE_LO, B_SAMPLE_HI, B_REST = range(5)
N_Q_BLOCKS = 5

# --- config: int scalars, then blocks ---------------------------------------------------------
N_MAX_ITER = 0  # iterations per attempt
N_RESTARTS = 1  # random restarts after the first attempt
N_LIMITS = 2  # 1: keep every iterate within the joint limits
N_PINV_FORM = 3  # pinv: 0 SVD, 1 J^T (J J^T)^-1
N_RECORD = 4  # history capacity (rows); 0: no history
N_ACTIVE = 5  # number of active DoF (na)
N_CLAMP = 6  # 1: aim unreachable position targets at the nearest reachable point
N_STALL = 7  # restart after this many iterations without 1 % progress
N_NQ = 8
N_NV = 9
N_HEAD = 10
# Blocks after the head, in order: active (na, indices into the motion), active_q (na,
# the coordinate each active DoF moves one-to-one, -1 for a quaternion's angular DoF),
# dof_node (nv, the node each DoF drives), pivot (T, a node no active joint moves, -1:
# no reach check), balls (1 + BALL_SIZE per active quaternion joint: their count, then
# the BA_* slots), swing-twist ints (see kinetree.ik._swing_twist).
BA_NODE = 0  # the ball node
BA_Q = 1  # its first coordinate (qw) in q
BA_KK = 2  # where its three angular DoF start in the active list
BA_KEEP = 3  # 1: restarts keep its start rotation (a free joint's), 0: draw one
BALL_SIZE = 4

# --- result row -------------------------------------------------------------------------------
R_STATUS = 0
R_ITERATIONS = 1
R_RESTARTS = 2
R_HISTORY = 3  # rows of history written
R_REACHABLE = 4  # 0: a target is provably out of reach
R_SIZE = 5

ST_OK = 0  # every target within tolerance
ST_NOT_CONVERGED = 1  # budget spent; the best configuration is returned
ST_NONFINITE = 2  # NaN or inf in a target or q0
ST_NOT_RIGID = 3  # a target rotation is not a rotation (beyond RIGID_TOL)
ST_TOO_FAR = 4  # a target coordinate beyond MAX_COORDINATE

#: Largest deviation of a target rotation from orthonormal that is accepted (and
#: projected onto the nearest rotation): ``max |R^T R - I|`` entry. Poses printed with
#: six decimals are within it.
RIGID_TOL = 1e-5
#: Largest target coordinate accepted [model units]: beyond it squares overflow.
MAX_COORDINATE = 1e12

# --- buffer header (pack / unpack) -----------------------------------------------------------
H_NODES = 0  # model nodes n
H_NEEDED = 1  # nodes FK visits
H_TARGETS = 2  # T
H_ROWS = 3  # m
H_ICFG = 4  # length of icfg
H_SIZE = 5


def result_size(nq: int, T: int) -> int:
    """Length of the result row of one solve."""
    return nq + 2 * T + R_SIZE


def info_offset(nq: int, T: int) -> int:
    """Index of ``R_STATUS`` in a result row (compiled twin: :func:`info_index`)."""
    return nq + 2 * T


info_index = njit(cache=True)(info_offset)


def write_config(
    scalars: dict[int, float],
    ints: dict[int, int],
    q_blocks: tuple[np.ndarray, ...],
    reach: np.ndarray,
    swing_twist_f: np.ndarray,
    active: np.ndarray,
    active_q: np.ndarray,
    dof_node: np.ndarray,
    pivot: np.ndarray,
    balls: np.ndarray,
    swing_twist_i: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """``(cfg, icfg)`` from named scalars (``{C_TOL_P: 1e-6, ...}``, ``{N_MAX_ITER: 30}``)
    and the blocks in the order :func:`read_config` reads them."""
    cfg = np.zeros(C_HEAD)
    for k, v in scalars.items():
        cfg[k] = v
    cfg = np.concatenate([cfg, *q_blocks, reach, swing_twist_f])
    icfg = np.zeros(N_HEAD, dtype=np.int64)
    for k, v in ints.items():
        icfg[k] = v
    icfg[N_ACTIVE] = active.size
    icfg = np.concatenate(
        [icfg, active, active_q, dof_node, pivot, [balls.shape[0]], balls.ravel(), swing_twist_i]
    ).astype(np.int64)
    return cfg, icfg


Config = namedtuple(
    "Config",
    "tol_p tol_r step damping lambda_min budget rest_gain cutoff task_step max_joint_step "
    "max_iter restarts limits pinv_form record na clamp stall "
    "lo hi sample_lo sample_hi rest reach st_f active active_q dof_node pivot balls st_i",
)
Config.__doc__ = "The settings of one solve, read from ``(cfg, icfg)`` (see the module doc)."


@njit(cache=True)
def read_config(cfg: np.ndarray, icfg: np.ndarray, T: int) -> Config:
    """The :class:`Config` view of ``(cfg, icfg)`` for ``T`` targets."""
    nq = icfg[N_NQ]
    nv = icfg[N_NV]
    na = icfg[N_ACTIVE]
    o = C_HEAD
    lo = cfg[o : o + nq]
    hi = cfg[o + nq : o + 2 * nq]
    sample_lo = cfg[o + 2 * nq : o + 3 * nq]
    sample_hi = cfg[o + 3 * nq : o + 4 * nq]
    rest = cfg[o + 4 * nq : o + 5 * nq]
    o += N_Q_BLOCKS * nq
    reach = cfg[o : o + T]
    st_f = cfg[o + T :]
    i = N_HEAD
    active = icfg[i : i + na]
    active_q = icfg[i + na : i + 2 * na]
    i += 2 * na
    dof_node = icfg[i : i + nv]
    pivot = icfg[i + nv : i + nv + T]
    i += nv + T
    nb = icfg[i]
    balls = icfg[i + 1 : i + 1 + BALL_SIZE * nb].reshape((nb, BALL_SIZE))
    st_i = icfg[i + 1 + BALL_SIZE * nb :]
    return Config(
        cfg[C_TOL_P], cfg[C_TOL_R], cfg[C_STEP], cfg[C_DAMPING], cfg[C_LAMBDA_MIN],
        cfg[C_BUDGET], cfg[C_REST_GAIN], cfg[C_CUTOFF], cfg[C_TASK_STEP],
        cfg[C_MAX_JOINT_STEP],
        icfg[N_MAX_ITER], icfg[N_RESTARTS], icfg[N_LIMITS] != 0, icfg[N_PINV_FORM],
        icfg[N_RECORD], na, icfg[N_CLAMP] != 0, icfg[N_STALL],
        lo, hi, sample_lo, sample_hi, rest, reach, st_f, active, active_q, dof_node, pivot,
        balls, st_i,
    )  # fmt: skip


def pack(
    fdata: np.ndarray,
    idata: np.ndarray,
    nodes: np.ndarray,
    tgt_i: np.ndarray,
    rows: np.ndarray,
    cfg: np.ndarray,
    icfg: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The model and a template as one int and one float buffer (read-only)."""
    head = np.zeros(H_SIZE, dtype=np.int64)
    head[H_NODES] = fdata.shape[0]
    head[H_NEEDED] = nodes.shape[0]
    head[H_TARGETS] = tgt_i.shape[0]
    head[H_ROWS] = rows.shape[0]
    head[H_ICFG] = icfg.shape[0]
    ibuf = np.concatenate([head, idata.ravel(), nodes, tgt_i.ravel(), rows.ravel(), icfg])
    fbuf = np.concatenate([fdata.ravel(), cfg])
    ibuf = ibuf.astype(np.int64)
    fbuf = fbuf.astype(np.float64)
    for a in (ibuf, fbuf):
        a.setflags(write=False)
    return ibuf, fbuf


@njit(cache=True, inline="always")
def unpack(ibuf: np.ndarray, fbuf: np.ndarray) -> tuple[np.ndarray, ...]:
    """Views ``(fdata, idata, nodes, tgt_i, rows, cfg, icfg)`` into :func:`pack`'s buffers."""
    n = ibuf[H_NODES]
    nn = ibuf[H_NEEDED]
    T = ibuf[H_TARGETS]
    m = ibuf[H_ROWS]
    li = ibuf[H_ICFG]
    o = H_SIZE
    idata = ibuf[o : o + I_SIZE * n].reshape((n, I_SIZE))
    o += I_SIZE * n
    nodes = ibuf[o : o + nn]
    o += nn
    tgt_i = ibuf[o : o + 2 * T].reshape((T, 2))
    o += 2 * T
    rows = ibuf[o : o + 2 * m].reshape((m, 2))
    o += 2 * m
    icfg = ibuf[o : o + li]
    fdata = fbuf[: F_SIZE * n].reshape((n, F_SIZE))
    cfg = fbuf[F_SIZE * n :]
    return fdata, idata, nodes, tgt_i, rows, cfg, icfg


# --- scratch space of one solve ---------------------------------------------------------------

Work = namedtuple(
    "Work",
    "W J6 J e err6 errs dirs dq z nz pinned A y Jz p3 M33 w3 q best_q q_prev tgt",
)
Work.__doc__ = """Scratch arrays of one solve, carved from one float buffer (:func:`carve`):
``W`` (n, 3, 4) world transforms; ``J6`` (6, nv) one target's Jacobian; ``J`` (m, na)
and ``e`` (m) the weighted stacked system; ``err6`` (T, 6) errors, ``errs`` (T, 2)
their norms, ``dirs`` (T, 3) direction targets' current axes; ``dq``, ``z``, ``nz``,
``pinned`` (na) step, rest pull, its null-space part, joints pinned at a limit; ``A``
(s, s) and ``y`` (s) with s = min(m, na) linear-algebra scratch (systems are solved on
their smaller side); ``Jz`` (m); ``p3``, ``M33``, ``w3`` small vectors; ``q``,
``best_q``, ``q_prev`` (nq); ``tgt`` (T, TARGET_SIZE) the working copy of the targets
(clamped when out of reach)."""


def scratch_size(n: int, nq: int, nv: int, m: int, na: int, T: int) -> int:
    """Floats of scratch :func:`carve` needs (compiled twin: :func:`scratch_len`)."""
    s = min(m, na)
    return (n * 12 + 6 * nv + m * na + m + T * 6 + T * 2 + T * 3 + 4 * na + s * s + s + m
            + 3 + 9 + 3 + 3 * nq + T * TARGET_SIZE)  # fmt: skip


scratch_len = njit(cache=True)(scratch_size)


@njit(cache=True)
def carve(ws: np.ndarray, n: int, nq: int, nv: int, m: int, na: int, T: int) -> Work:
    """The :class:`Work` views of the scratch buffer ``ws`` (see :func:`scratch_size`)."""
    s = min(m, na)
    o = 0
    W = ws[o : o + n * 12].reshape((n, 3, 4))
    o += n * 12
    J6 = ws[o : o + 6 * nv].reshape((6, nv))
    o += 6 * nv
    J = ws[o : o + m * na].reshape((m, na))
    o += m * na
    e = ws[o : o + m]
    o += m
    err6 = ws[o : o + T * 6].reshape((T, 6))
    o += T * 6
    errs = ws[o : o + T * 2].reshape((T, 2))
    o += T * 2
    dirs = ws[o : o + T * 3].reshape((T, 3))
    o += T * 3
    dq = ws[o : o + na]
    o += na
    z = ws[o : o + na]
    o += na
    nz = ws[o : o + na]
    o += na
    pinned = ws[o : o + na]
    o += na
    A = ws[o : o + s * s].reshape((s, s))
    o += s * s
    y = ws[o : o + s]
    o += s
    Jz = ws[o : o + m]
    o += m
    p3 = ws[o : o + 3]
    o += 3
    M33 = ws[o : o + 9].reshape((3, 3))
    o += 9
    w3 = ws[o : o + 3]
    o += 3
    q = ws[o : o + nq]
    o += nq
    best_q = ws[o : o + nq]
    o += nq
    q_prev = ws[o : o + nq]
    o += nq
    tgt = ws[o : o + T * TARGET_SIZE].reshape((T, TARGET_SIZE))
    return Work(W, J6, J, e, err6, errs, dirs, dq, z, nz, pinned, A, y, Jz, p3, M33, w3, q,
                best_q, q_prev, tgt)  # fmt: skip


def read_result(out: np.ndarray, nq: int, T: int) -> dict[str, np.ndarray]:
    """Named views of result rows ``(..., result_size)``: ``q``, ``position_error``,
    ``orientation_error``, ``status``, ``iterations``, ``restarts``, ``history``,
    ``reachable``."""
    i = info_offset(nq, T)
    return {
        "q": out[..., :nq],
        "position_error": out[..., nq : nq + T],
        "orientation_error": out[..., nq + T : nq + 2 * T],
        "status": out[..., i + R_STATUS],
        "iterations": out[..., i + R_ITERATIONS],
        "restarts": out[..., i + R_RESTARTS],
        "history": out[..., i + R_HISTORY],
        "reachable": out[..., i + R_REACHABLE],
    }
