"""Running a compiled IK template: the method's driver over a batch, and its result.

:func:`run` takes a :class:`~.problem.Template` and target rows (or raw 4x4 poses), calls
the method's compiled driver (:mod:`._drivers`) once for a single solve or a small batch
and over chunks on every core for a large one, and reads the result rows into an
:class:`~.result.IKResult`; a status that means bad input raises here
(:func:`raise_status`). The dispatcher (:mod:`.solve`), ``fabrik``, the scipy methods and
the GPU twin (:mod:`kinetree.gpu.api`) all run templates through this module.
"""

from __future__ import annotations

import time

import numpy as np

from .._compile import compiled, interpret_first, notice
from .._progress import progress
from .._threads import n_threads, run_chunks
from ..errors import InvalidValueError, NotRigidError
from . import method_table
from .kernel import cached_driver, driver
from .kernel import layout as L
from .options import IKOptions
from .problem import Problem, Template, apply_couplings
from .result import IKResult, is_bad_input, make_result, one_result, with_clearance

__all__ = ["raise_status", "run", "run_problem", "single_result", "writable"]

#: Batches at least this large run on every core.
PARALLEL_MIN = 8
#: Methods whose first problems may run interpreted while their driver compiles
#: (``_compile.interpret_first``): those without an SVD, whose Python twin does the same
#: arithmetic as the machine code (an interpreted SVD would be numpy's LAPACK, not the
#: compiled one's): the method table's non-allocating rows.
INTERPRETABLE = method_table.INTERPRETABLE


def run_problem(prob: Problem, t0: float) -> IKResult:
    """Run the compiled solver on an assembled problem (any targets, batched or not)."""
    tpl = prob.template
    B = int(np.prod(prob.batch)) if prob.batch else 1
    targets = np.require(
        prob.tgt_f.reshape(B, tpl.n_targets, L.TARGET_SIZE), np.float64, ("C", "W")
    )
    q0 = np.array(prob.q0, dtype=np.float64).reshape(-1, tpl.model.nq)  # (B or 1, nq)
    return run(tpl, targets, q0, prob.batch, tpl.options, t0)


def run(
    tpl: Template,
    targets: np.ndarray,
    q0: np.ndarray,
    batch: tuple[int, ...],
    opts: IKOptions,
    t0: float,
) -> IKResult:
    """Solve ``targets`` (B, T, TARGET_SIZE) rows or (B, 4, 4) raw poses from ``q0``
    ((1, nq) shared or (B, nq)) with the template's method; ``batch`` is the shape the
    result takes (``()`` for one solve)."""
    nq = tpl.model.nq
    T = tpl.n_targets
    # One compiled signature whatever the caller built: C-contiguous, writable float64.
    targets = writable(targets)
    q0 = writable(q0)
    B = targets.shape[0]
    out = np.empty((B, L.result_size(nq, T)))
    rows = opts.history_rows if not batch else 0
    if rows:
        hist_q = np.empty((rows, nq))
        hist_e = np.empty((rows, 2))
    else:
        hist_q, hist_e = NO_HISTORY_Q, NO_HISTORY_E
    seed = opts.draw_seed()
    method = tpl.options.kernel_method
    collide = tpl.collision is not None
    kernel = cached_driver(method, tpl.has_swing_twist, collide)
    ib, fb = tpl.ibuf, tpl.fbuf
    ns = tpl.scratch
    if B < PARALLEL_MIN and compiled(kernel):
        kernel(ib, fb, targets, q0, seed, out, hist_q, hist_e, np.zeros(ns), 0, B)
    else:
        first = 0  # problems solved before the machine code is ready (tiered start)
        if not collide and not compiled(kernel) and method in INTERPRETABLE:
            build = (driver.__module__, "driver", (method, tpl.has_swing_twist))
            args = (ib, fb, targets, q0, seed, out, hist_q, hist_e, np.zeros(ns))
            first = interpret_first(kernel, build, args, B, opts.budget)
        if first < B:
            with notice(kernel), progress(B - first, "ik") as tick:  # a bar on stderr after 2 s

                def part(a: int, b: int) -> None:
                    # Scratch per call: chunks run on several threads at once.
                    kernel(
                        ib,
                        fb,
                        targets,
                        q0,
                        seed,
                        out,
                        hist_q,
                        hist_e,
                        np.zeros(ns),
                        first + a,
                        first + b,
                    )
                    tick(b - a)

                if B - first < PARALLEL_MIN:
                    part(0, B - first)
                else:
                    run_chunks(part, B - first, max(4, min(64, B // (8 * n_threads()) or 1)))
    if tpl.model.couplings:
        apply_couplings(tpl.model, out[:, :nq])
        if rows:
            apply_couplings(tpl.model, hist_q)
    if not batch:
        return single_result(tpl, out[0], nq, T, hist_q, hist_e, rows, t0)
    return batch_result(tpl, out, batch, t0, collide)


#: The float64 dtype: numpy's built-in dtypes are singletons, and ``is`` costs 40 ns
#: where ``a.dtype == np.float64`` costs 170 (three such checks per single solve).
F64 = np.dtype(np.float64)
NO_HISTORY_Q = np.empty((0, 0))  # never written: the kernel records no row into them
NO_HISTORY_E = np.empty((0, 2))


def writable(a: np.ndarray) -> np.ndarray:
    """``a`` if it is C-contiguous, writable float64 (the kernels' one signature), else a
    copy that is."""
    f = a.flags
    if f.c_contiguous and f.writeable and a.dtype is F64:
        return a
    return np.require(a, np.float64, ("C", "W"))


def batch_result(
    tpl: Template, out: np.ndarray, batch: tuple[int, ...], t0: float, collide: bool = False
) -> IKResult:
    """The result of a batch read from the kernel's output rows ``out`` ``(B, R)`` on the
    host (the CPU's and the GPU's); raises for the first problem with bad input."""
    nq, T = tpl.model.nq, tpl.n_targets
    r = L.read_result(out, nq, T)
    _raise_bad_input(r["status"], batch)
    return make_result(
        q=r["q"],
        success=r["status"] == L.ST_OK,
        position_error=r["position_error"],
        orientation_error=r["orientation_error"],
        iterations=r["iterations"],
        restarts=r["restarts"],
        reachable=r["reachable"] != 0.0,
        batch=batch,
        elapsed=time.perf_counter() - t0,
        frames=tpl.frames,
        method=tpl.method,
        min_distance=r["min_distance"] if collide else None,
        in_collision=r["status"] == L.ST_IN_COLLISION if collide else None,
    )


def single_result(
    tpl: Template,
    row: np.ndarray,
    nq: int,
    T: int,
    hist_q: np.ndarray,
    hist_e: np.ndarray,
    rows: int,
    t0: float,
) -> IKResult:
    """The result of one solve, read from its row without array arithmetic (the per-call
    cost of control loops and animations). The kernel already reports a NaN error as inf."""
    i = L.info_offset(nq, T)
    status, iters, restarts, n, reach, clear = row[i : i + L.R_SIZE].tolist()
    if is_bad_input(status):
        raise_status(int(status))
    # Positional: keyword calls cost microseconds here (see one_result).
    result = one_result(
        row[:nq],
        status == L.ST_OK,
        row[nq : nq + T],
        row[nq + T : nq + 2 * T],
        int(iters),
        int(restarts),
        reach != 0.0,
        time.perf_counter() - t0,
        tpl.frames,
        tpl.method,
        hist_q[: int(n)].copy() if rows else None,
        hist_e[: int(n)].copy() if rows else None,
    )
    if tpl.collision is not None:
        with_clearance(result, clear, status == L.ST_IN_COLLISION, tpl)
    return result


def _raise_bad_input(status: np.ndarray, batch: tuple[int, ...]) -> None:
    """Raise for the first status that is bad input (:func:`.result.is_bad_input`)."""
    bad = is_bad_input(status)
    if not np.any(bad):
        return
    first = int(np.argmax(bad))
    where = ""
    if batch:
        where = f" (batch item {tuple(int(i) for i in np.unravel_index(first, batch))})"
    raise_status(int(status[first]), where)


def raise_status(status: int, where: str = "") -> None:
    """Raise the error of a kernel status code (see ``layout.ST_*``)."""
    if status == L.ST_NONFINITE:
        raise InvalidValueError(f"target or q0 contains NaN or inf{where}")
    if status == L.ST_TOO_FAR:
        raise InvalidValueError(
            f"a target coordinate is beyond {L.MAX_COORDINATE:g} (model units){where}"
        )
    if status == L.ST_NOT_RIGID:
        raise NotRigidError(
            f"target pose is not a rigid transform{where}: its rotation must be orthonormal "
            f"within {L.RIGID_TOL:g} (max |R^T R - I| entry) with det +1 and its last row "
            "[0, 0, 0, 1]; kinetree.spatial.orthonormalize projects a near-rigid pose"
        )
