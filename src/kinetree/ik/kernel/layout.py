"""Every packed array the IK kernels read or write, with each slot named.

Long because it is the one owner of every slot: the writer and the reader of each block
(the collision block included) sit side by side, so a slot moves in one place.

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
  ``R_*`` slots: status, iterations, restarts, history rows, reachable, clearance.

The model, the targets' structure and the config travel together as two buffers
(:func:`pack`): each argument crossing into compiled code costs about 0.1 us.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from ..._hints import rolled, shaped_view
from ..._qp import qp_iwork_size, qp_work_size
from ...collision.layout import LINK_SIZE, OBSTACLE_SIZE, OUT_SIZE, PAIR_SIZE, SPHERE_SIZE
from ...kinematics.layout import F_SIZE, I_SIZE
from ._swing_twist import SCRATCH as SWING_TWIST_SCRATCH

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
C_INV_LENGTH = 10  # 1 / the model's length scale: weighs position rows against rotation rows
C_HEAD = 11
# Blocks after the head, in order: lo, hi (limits, nq each), sample_lo, sample_hi
# (finite bounds for restarts, nq each; NaN: a restart keeps the start value), rest
# (nq), unit (nq: the model's length scale for a prismatic coordinate, 1 for an angle;
# a step counts a coordinate in these units), reach (T), swing-twist floats.
B_LO, B_HI, B_SAMPLE_LO, B_SAMPLE_HI, B_REST, B_UNIT = range(6)
N_Q_BLOCKS = 6

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
N_COLLISION = 10  # where the collision block starts in icfg (see below); 0: no collision check
N_UNITS = 11  # 1: an active coordinate's unit is not 1 (steps rescale its column)
N_SPARSE = 12  # where the target-columns block starts in icfg (see below); 0: none
N_TOTAL_ITER = 13  # iterations over all attempts (iteration_budget); 0: no such cap
N_HEAD = 14
# Blocks after the head, in order: active (na, indices into the motion), active_q (na,
# the coordinate each active DoF moves one-to-one, -1 for a quaternion's angular DoF),
# dof_node (nv, the node each DoF drives), pivot (T, a node no active joint moves, -1:
# no reach check), balls (1 + BALL_SIZE per active quaternion joint: their count, then
# the BA_* slots), swing-twist ints (see kinetree.ik.kernel._swing_twist).
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
R_MIN_DISTANCE = 5  # signed clearance [m] at the returned q (collision checks only; else 0)
R_SIZE = 6

ST_OK = 0  # every target within tolerance
ST_NOT_CONVERGED = 1  # budget spent; the best configuration is returned
ST_NONFINITE = 2  # NaN or inf in a target or q0
ST_NOT_RIGID = 3  # a target rotation is not a rotation (beyond RIGID_TOL)
ST_TOO_FAR = 4  # a target coordinate beyond MAX_COORDINATE
ST_IN_COLLISION = 5  # on target, but closer than the margin to an obstacle or itself
#: Statuses that mean bad input (the solve raises for them).
BAD_INPUT = (ST_NONFINITE, ST_NOT_RIGID, ST_TOO_FAR)

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
    target_columns: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``(cfg, icfg)`` from named scalars (``{C_TOL_P: 1e-6, ...}``, ``{N_MAX_ITER: 30}``)
    and the blocks in the order :func:`read_config` reads them.

    ``target_columns`` (optional, several targets): for each target the active columns
    that move it, as ``T + 1`` offsets into the block, then the column indices
    (:func:`target_columns_block`); icfg[N_SPARSE] says where it starts."""
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
    if target_columns is not None:
        icfg[N_SPARSE] = icfg.shape[0]
        icfg = np.concatenate([icfg, target_columns]).astype(np.int64)
    return cfg, icfg


def target_columns_block(columns: list[np.ndarray]) -> np.ndarray:
    """The ``target_columns`` block of :func:`write_config` from one array of active
    column indices per target (increasing).

    Layout: ``T + 1`` offsets into the block, then each target's columns; from offset
    ``T`` on, the same for every pair of targets ``u <= t`` (pair ``t (t + 1) / 2 + u``,
    :func:`pair_index`): ``T (T + 1) / 2 + 1`` offsets, then the columns that move both
    (the only ones where a product of their rows can be non-zero)."""
    T = len(columns)
    offsets = np.cumsum([T + 1] + [c.size for c in columns])
    pairs = [np.intersect1d(columns[t], columns[u]) for t in range(T) for u in range(t + 1)]
    pair_offsets = offsets[-1] + np.cumsum([len(pairs) + 1] + [c.size for c in pairs])
    return np.concatenate([offsets, *columns, pair_offsets, *pairs]).astype(np.int64)


@njit(cache=True, inline="always")
def pair_index(t: int, u: int) -> int:
    """Where the pair of targets ``t``, ``u`` sits in :func:`target_columns_block`."""
    if u > t:
        t, u = u, t
    return t * (t + 1) // 2 + u


Config = namedtuple(
    "Config",
    "tol_p tol_r step damping lambda_min budget rest_gain cutoff task_step max_joint_step "
    "inv_length max_iter restarts limits pinv_form record na clamp stall units total_iter "
    "lo hi sample_lo sample_hi rest unit reach st_f active active_q dof_node pivot balls st_i "
    "tcols",
)
Config.__doc__ = "The settings of one solve, read from ``(cfg, icfg)`` (see the module doc)."


@njit(cache=True, inline="always")
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
    unit = cfg[o + 5 * nq : o + 6 * nq]
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
    balls = shaped_view(icfg, i + 1, (nb, BALL_SIZE))
    st_i = icfg[i + 1 + BALL_SIZE * nb :]
    sp = icfg[N_SPARSE]
    tcols = icfg[sp:] if sp > 0 else icfg[:0]
    return Config(
        cfg[C_TOL_P],
        cfg[C_TOL_R],
        cfg[C_STEP],
        cfg[C_DAMPING],
        cfg[C_LAMBDA_MIN],
        cfg[C_BUDGET],
        cfg[C_REST_GAIN],
        cfg[C_CUTOFF],
        cfg[C_TASK_STEP],
        cfg[C_MAX_JOINT_STEP],
        cfg[C_INV_LENGTH],
        icfg[N_MAX_ITER],
        icfg[N_RESTARTS],
        icfg[N_LIMITS] != 0,
        icfg[N_PINV_FORM],
        icfg[N_RECORD],
        na,
        icfg[N_CLAMP] != 0,
        icfg[N_STALL],
        icfg[N_UNITS] != 0,
        icfg[N_TOTAL_ITER],
        lo,
        hi,
        sample_lo,
        sample_hi,
        rest,
        unit,
        reach,
        st_f,
        active,
        active_q,
        dof_node,
        pivot,
        balls,
        st_i,
        tcols,
    )


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
    idata = shaped_view(ibuf, o, (n, I_SIZE))
    o += I_SIZE * n
    nodes = ibuf[o : o + nn]
    o += nn
    tgt_i = shaped_view(ibuf, o, (T, 2))
    o += 2 * T
    rows = shaped_view(ibuf, o, (m, 2))
    o += 2 * m
    icfg = ibuf[o : o + li]
    fdata = shaped_view(fbuf, 0, (n, F_SIZE))
    cfg = fbuf[F_SIZE * n :]
    return fdata, idata, nodes, tgt_i, rows, cfg, icfg


# --- scratch space of one solve ---------------------------------------------------------------

Work = namedtuple(
    "Work",
    "W J6 J e err6 errs dirs dq z nz pinned A y Jz p3 M33 w3 q best_q q_prev tgt G st",
)
Work.__doc__ = """Scratch arrays of one solve, carved from one float buffer (:func:`carve`):
``W`` (n, 3, 4) world transforms; ``J6`` (6, nv) one target's Jacobian; ``J`` (m, na)
and ``e`` (m) the weighted stacked system; ``err6`` (T, 6) errors, ``errs`` (T, 2)
their norms, ``dirs`` (T, 3) direction targets' current axes; ``dq``, ``z``, ``nz``,
``pinned`` (na) step, rest pull, its null-space part, joints pinned at a limit; ``A``
(s, s) and ``y`` (s) with s = min(m, na) linear-algebra scratch (systems are solved on
their smaller side); ``Jz`` (m); ``p3``, ``M33``, ``w3`` small vectors; ``q``,
``best_q``, ``q_prev`` (nq); ``tgt`` (T, TARGET_SIZE) the working copy of the targets
(clamped when out of reach); ``G`` (s, s) the Gram matrix ``J J^T`` kept between the
solves of one step (``ik._linalg.keeps_gram``); ``st`` the swing-twist projection's
scratch (``ik._swing_twist.SCRATCH``)."""


def scratch_size(n: int, nq: int, nv: int, m: int, na: int, T: int) -> int:
    """Floats of scratch :func:`carve` needs (compiled twin: :func:`scratch_len`)."""
    s = min(m, na)
    return (n * 12 + 6 * nv + m * na + m + T * 6 + T * 2 + T * 3 + 4 * na + s * s + s + m
            + 3 + 9 + 3 + 3 * nq + T * TARGET_SIZE + s * s + SWING_TWIST_SCRATCH)  # fmt: skip


scratch_len = njit(cache=True)(scratch_size)


@njit(cache=True, inline="always")
def scratch_floats(
    size: int, na: int, nv: int, nq: int, cfg: np.ndarray, icfg: np.ndarray, collision: bool
) -> int:
    """Where the ints start in a driver's scratch (compiled, per call): ``size`` floats of
    :func:`carve` plus, when ``collision``, those of :func:`carve_collision`."""
    if not collision:
        return size
    o = icfg[N_COLLISION]
    nf, _ = collision_scratch_len(icfg[o + CI_SPHERES], icfg[o + CI_PAIRS], nv, nq, na)
    return size + nf


# The int64 scratch of a driver call (``iws``): the clock buffer, the random state (one
# uint64, as its bits), then the collision block's ints.
IW_CLOCK = 0
IW_RNG = 2
IW_SIZE = 3


def driver_scratch_len(ibuf: np.ndarray, fbuf: np.ndarray, nq: int) -> int:
    """Length of the one float64 scratch buffer a driver call (``ik._loop.solve_range``)
    needs for :func:`pack`'s buffers: :func:`carve`'s floats and, with a collision block,
    :func:`carve_collision`'s, then the ints (``IW_*``, the collision block's), each in
    one float's 8 bytes (read here in Python, once per template; the kernel finds where
    the ints start with :func:`scratch_floats`)."""
    fdata, _, _, tgt_i, rows, cfg, icfg = unpack.py_func(ibuf, fbuf)
    T = tgt_i.shape[0]
    cf = read_config.py_func(cfg, icfg, T)
    nv = cf.dof_node.shape[0]
    floats = scratch_size(fdata.shape[0], nq, nv, rows.shape[0], cf.na, T)
    ints = IW_SIZE
    if icfg[N_COLLISION] != 0:
        ck = read_collision.py_func(cfg, icfg)
        nf, ni = collision_scratch_size(ck.spheres.shape[0], ck.pairs.shape[0], nv, nq, cf.na)
        floats += nf
        ints += ni
    return int(floats + ints)


@njit(cache=True, inline="always")
def carve(ws: np.ndarray, n: int, nq: int, nv: int, m: int, na: int, T: int) -> Work:
    """The :class:`Work` views of the scratch buffer ``ws`` (see :func:`scratch_size`)."""
    s = min(m, na)
    # The per-target views' length, through ``rolled``: on a GPU the loops over targets
    # stay loops (unrolled over a whole body's four targets, the G1 kernel spilled).
    Tv = rolled(T)
    o = 0
    W = shaped_view(ws, o, (n, 3, 4))
    o += n * 12
    J6 = shaped_view(ws, o, (6, nv))
    o += 6 * nv
    J = shaped_view(ws, o, (m, na))
    o += m * na
    e = ws[o : o + m]
    o += m
    err6 = shaped_view(ws, o, (Tv, 6))
    o += T * 6
    errs = shaped_view(ws, o, (Tv, 2))
    o += T * 2
    dirs = shaped_view(ws, o, (Tv, 3))
    o += T * 3
    dq = ws[o : o + na]
    o += na
    z = ws[o : o + na]
    o += na
    nz = ws[o : o + na]
    o += na
    pinned = ws[o : o + na]
    o += na
    A = shaped_view(ws, o, (s, s))
    o += s * s
    y = ws[o : o + s]
    o += s
    Jz = ws[o : o + m]
    o += m
    p3 = ws[o : o + 3]
    o += 3
    M33 = shaped_view(ws, o, (3, 3))
    o += 9
    w3 = ws[o : o + 3]
    o += 3
    q = ws[o : o + nq]
    o += nq
    best_q = ws[o : o + nq]
    o += nq
    q_prev = ws[o : o + nq]
    o += nq
    tgt = shaped_view(ws, o, (Tv, TARGET_SIZE))
    o += T * TARGET_SIZE
    G = shaped_view(ws, o, (s, s))
    o += s * s
    st = ws[o : o + SWING_TWIST_SCRATCH]
    return Work(
        W,
        J6,
        J,
        e,
        err6,
        errs,
        dirs,
        dq,
        z,
        nz,
        pinned,
        A,
        y,
        Jz,
        p3,
        M33,
        w3,
        q,
        best_q,
        q_prev,
        tgt,
        G,
        st,
    )


def read_result(out: np.ndarray, nq: int, T: int) -> dict[str, np.ndarray]:
    """Named views of result rows ``(..., result_size)``: ``q``, ``position_error``,
    ``orientation_error``, ``status``, ``iterations``, ``restarts``, ``history``,
    ``reachable``, ``min_distance``."""
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
        "min_distance": out[..., i + R_MIN_DISTANCE],
    }


# --- the collision block (collision-aware solves only) -----------------------------------------
# When ``icfg[N_COLLISION]`` is not 0, icfg holds from there the CI_* ints and the pairs
# table (n_pairs, PAIR_SIZE), and cfg holds from ``CI_FLOATS`` the CF_* floats and the
# spheres, links, obstacles and obstacle data tables of ``kinetree.collision.layout``,
# each raveled. The blocks sit after the swing-twist blocks (whose readers stop at their
# own counts), so solves without collision checks read the same arrays as before.
CI_PAIRS = 0  # number of pairs
CI_SPHERES = 1  # number of robot spheres
CI_LINKS = 2  # number of links with spheres
CI_OBSTACLES = 3  # number of obstacles
CI_DATA = 4  # rows of obstacle data (never 0)
CI_FLOATS = 5  # where the float block starts in cfg
CI_SEEDS = 6  # random starts drawn per restart; the clearest is kept
CI_SIZE = 7

CF_MARGIN = 0  # the clearance every pair must keep [m]
CF_CUTOFF = 1  # pairs closer than this are measured exactly each iteration [m]
CF_INFLUENCE = 2  # pairs closer than this become rows of the step's QP [m]
CF_BUFFER = 3  # the QP keeps margin + buffer, so a step's curvature keeps the margin [m]
CF_MAX_STEP = 4  # largest change of one joint per iteration with collision rows [rad or m]
CF_SIZE = 5

Collision = namedtuple(
    "Collision",
    "margin cutoff influence buffer max_step seeds spheres links obstacles data pairs",
)
Collision.__doc__ = """The collision block of one solve, read by :func:`read_collision`: the
CF_* scalars, ``seeds``, and the tables of :mod:`kinetree.collision.layout`."""


def write_collision(
    cfg: np.ndarray,
    icfg: np.ndarray,
    scalars: dict[int, float],
    seeds: int,
    spheres: np.ndarray,
    links: np.ndarray,
    obstacles: np.ndarray,
    data: np.ndarray,
    pairs: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """``(cfg, icfg)`` of :func:`write_config` with the collision block appended."""
    head_f = np.zeros(CF_SIZE)
    for k, v in scalars.items():
        head_f[k] = v
    head_i = np.zeros(CI_SIZE, dtype=np.int64)
    head_i[CI_PAIRS] = pairs.shape[0]
    head_i[CI_SPHERES] = spheres.shape[0]
    head_i[CI_LINKS] = links.shape[0]
    head_i[CI_OBSTACLES] = obstacles.shape[0]
    head_i[CI_DATA] = data.shape[0]
    head_i[CI_FLOATS] = cfg.shape[0]
    head_i[CI_SEEDS] = seeds
    icfg = icfg.copy()
    icfg[N_COLLISION] = icfg.shape[0]
    cfg = np.concatenate(
        [cfg, head_f, spheres.ravel(), links.ravel(), obstacles.ravel(), data.ravel()]
    )
    icfg = np.concatenate([icfg, head_i, pairs.ravel()]).astype(np.int64)
    return cfg, icfg


@njit(cache=True, inline="always")
def read_collision(cfg: np.ndarray, icfg: np.ndarray) -> Collision:
    """The :class:`Collision` view of ``(cfg, icfg)``; empty tables without a block."""
    o = icfg[N_COLLISION]
    if o == 0:
        z = cfg[:0]
        return Collision(
            0.0, 0.0, 0.0, 0.0, 0.0, 0, z.reshape((0, SPHERE_SIZE)), z.reshape((0, LINK_SIZE)),
            z.reshape((0, OBSTACLE_SIZE)), z.reshape((0, 3)),
            icfg[:0].reshape((0, PAIR_SIZE)),
        )  # fmt: skip
    npairs, ns, nl = icfg[o + CI_PAIRS], icfg[o + CI_SPHERES], icfg[o + CI_LINKS]
    no, nd, f = icfg[o + CI_OBSTACLES], icfg[o + CI_DATA], icfg[o + CI_FLOATS]
    pairs = shaped_view(icfg, o + CI_SIZE, (npairs, PAIR_SIZE))
    h = f
    f += CF_SIZE
    spheres = shaped_view(cfg, f, (ns, SPHERE_SIZE))
    f += ns * SPHERE_SIZE
    links = shaped_view(cfg, f, (nl, LINK_SIZE))
    f += nl * LINK_SIZE
    obstacles = shaped_view(cfg, f, (no, OBSTACLE_SIZE))
    f += no * OBSTACLE_SIZE
    data = shaped_view(cfg, f, (nd, 3))
    return Collision(
        cfg[h + CF_MARGIN],
        cfg[h + CF_CUTOFF],
        cfg[h + CF_INFLUENCE],
        cfg[h + CF_BUFFER],
        cfg[h + CF_MAX_STEP],
        icfg[o + CI_SEEDS],
        spheres,
        links,
        obstacles,
        data,
        pairs,
    )


CollisionWork = namedtuple(
    "CollisionWork",
    "C out grad G bq H g lb ub x qp best row bounds q_seed ready order qpi",
)
CollisionWork.__doc__ = """Scratch of the collision block, carved by :func:`carve_collision`:
``C`` (n_spheres, 4) world spheres; ``out`` (n_pairs, OUT_SIZE) pair rows; ``grad`` (nv)
one pair's distance gradient; ``G`` (n_pairs, na) and ``bq`` (n_pairs) the QP's
distance rows; ``H`` (na, na), ``g``, ``lb``, ``ub``, ``x`` (na) the QP; ``qp`` its
scratch; ``best``, ``row`` (OUT_SIZE) and ``bounds`` (n_pairs) the closest-pair search;
``q_seed`` (nq) the clearest random start so far; ints: ``ready`` (n_links), ``order``
(n_pairs), ``qpi`` the QP's integer scratch."""


def collision_scratch_size(ns: int, npairs: int, nv: int, nq: int, na: int) -> tuple[int, int]:
    """``(floats, ints)`` of scratch :func:`carve_collision` needs (compiled twin:
    :func:`collision_scratch_len`). Without pairs too: the step's QP and the link flags
    are used all the same."""
    floats = (
        ns * 4
        + npairs * OUT_SIZE
        + nv
        + npairs * na
        + npairs
        + na * na
        + 4 * na
        + qp_work_size(na, npairs)
        + 2 * OUT_SIZE
        + npairs
        + nq
    )
    return floats, ns + npairs + qp_iwork_size(na, npairs)


collision_scratch_len = njit(cache=True)(collision_scratch_size)


@njit(cache=True, inline="always")
def carve_collision(
    ws: np.ndarray, iws: np.ndarray, ns: int, nl: int, npairs: int, nv: int, nq: int, na: int
) -> CollisionWork:
    """The :class:`CollisionWork` views of ``ws`` and ``iws`` (see
    :func:`collision_scratch_size`)."""
    o = 0
    C = shaped_view(ws, o, (ns, 4))
    o += ns * 4
    out = shaped_view(ws, o, (npairs, OUT_SIZE))
    o += npairs * OUT_SIZE
    grad = ws[o : o + nv]
    o += nv
    G = shaped_view(ws, o, (npairs, na))
    o += npairs * na
    bq = ws[o : o + npairs]
    o += npairs
    H = shaped_view(ws, o, (na, na))
    o += na * na
    g = ws[o : o + na]
    lb = ws[o + na : o + 2 * na]
    ub = ws[o + 2 * na : o + 3 * na]
    x = ws[o + 3 * na : o + 4 * na]
    o += 4 * na
    qp = ws[o : o + 2 * na * na + 4 * na + 1]
    o += 2 * na * na + 4 * na + 1
    best = ws[o : o + OUT_SIZE]
    row = ws[o + OUT_SIZE : o + 2 * OUT_SIZE]
    o += 2 * OUT_SIZE
    bounds = ws[o : o + npairs]
    o += npairs
    q_seed = ws[o : o + nq]
    ready = iws[:nl]
    order = iws[ns : ns + npairs]
    qpi = iws[ns + npairs :]
    return CollisionWork(
        C, out, grad, G, bq, H, g, lb, ub, x, qp, best, row, bounds, q_seed, ready, order, qpi
    )
