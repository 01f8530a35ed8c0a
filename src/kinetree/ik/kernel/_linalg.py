"""Small dense linear algebra of the solver loop: damped least-squares solves.

``dq = J^T (J J^T + lam I)^-1 e`` on the smaller side of ``J``, through an
``L D L^T`` factorisation written out so that the compiler sees the loop bounds:
unrolled for six rows (one pose target) and three (one position target), plain
loops for any other size. Sums run several rows at a time (independent additions
pipeline; one dot product alone waits on each addition), in the same order per
entry as one at a time. Several targets' Gram matrix runs over the columns both
rows' targets move (``layout.target_columns_block``), and the damped least-squares
step keeps it across its active-set re-solves (:func:`keeps_gram`).

Nothing allocates. No BLAS or LAPACK: a BLAS path for large systems was dropped (it
doubled the compile time and allocated inside the loop), and at a humanoid's 24 rows
numba's ``np.linalg.cholesky`` factors no faster than :func:`cholesky_solve` factors
and solves (measured: 1.2 us for the factor alone against 1.4 us).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..._hints import rolled
from ...kinematics._kernels import inlined, no_refcount


@njit(cache=True, inline="always")
def cholesky_solve(A: np.ndarray, n: int, b: np.ndarray, x: np.ndarray) -> bool:
    """Solve ``A x = b`` for the SPD leading ``n x n`` block of ``A`` by ``L D L^T``.

    Reads the lower triangle; overwrites ``A`` with ``L`` (strict lower), ``L D``
    (strict upper, row k holds ``L[i, k] D[k]``) and ``1 / D`` (diagonal). No square
    roots, one division per column. False if ``A`` is not positive definite.

    The entries below the diagonal are computed four rows at a time: four independent
    dot products (one alone is a chain of dependent additions), each summed in the same
    order as alone, so the factor is the same to the bit.
    """
    for j in range(n):
        d = A[j, j]
        for k in range(j):
            d -= A[j, k] * A[k, j]
        if not d > 0.0 or d == np.inf:
            return False
        inv = 1.0 / d
        A[j, j] = inv
        i = j + 1
        while i + 3 < n:
            s0 = A[i, j]
            s1 = A[i + 1, j]
            s2 = A[i + 2, j]
            s3 = A[i + 3, j]
            for k in range(j):
                c = A[k, j]
                s0 -= A[i, k] * c
                s1 -= A[i + 1, k] * c
                s2 -= A[i + 2, k] * c
                s3 -= A[i + 3, k] * c
            A[j, i] = s0
            A[i, j] = s0 * inv
            A[j, i + 1] = s1
            A[i + 1, j] = s1 * inv
            A[j, i + 2] = s2
            A[i + 2, j] = s2 * inv
            A[j, i + 3] = s3
            A[i + 3, j] = s3 * inv
            i += 4
        while i < n:
            s = A[i, j]
            for k in range(j):
                s -= A[i, k] * A[k, j]
            A[j, i] = s
            A[i, j] = s * inv
            i += 1
    for i in range(n):
        s = b[i]
        for k in range(i):
            s -= A[i, k] * x[k]
        x[i] = s
    for i in range(n):
        x[i] *= A[i, i]
    for i in range(n - 1, -1, -1):
        s = x[i]
        for k in range(i + 1, n):
            s -= A[k, i] * x[k]
        x[i] = s
    return True


@njit(cache=True, inline="always")
def gram_rows(J: np.ndarray, A: np.ndarray, rows: np.ndarray, tcols: np.ndarray) -> None:
    """``A = J J^T`` (lower triangle; the upper one is scratch) by row dot products.

    With ``tcols`` (``Config.tcols``, laid out by ``layout.target_columns_block``;
    empty: none) the product of two rows runs over the columns that move both their
    targets only. The terms left out are exact zeros (a joint that does not move a
    target has a zero column there), so ``A`` is the same to the bit; on a humanoid
    with four effectors a hand's rows meet a foot's on the floating base's six columns
    only. Rows are taken four at a time (four independent sums: the additions of one
    dot product wait for each other, those of four do not)."""
    m, na = J.shape
    if tcols.shape[0] == 0:
        for i in range(m):
            j = 0
            while j + 3 <= i:
                s0 = s1 = s2 = s3 = 0.0
                for k in range(na):
                    x = J[i, k]
                    s0 += x * J[j, k]
                    s1 += x * J[j + 1, k]
                    s2 += x * J[j + 2, k]
                    s3 += x * J[j + 3, k]
                A[i, j] = s0
                A[i, j + 1] = s1
                A[i, j + 2] = s2
                A[i, j + 3] = s3
                j += 4
            for jj in range(j, i + 1):
                s = 0.0
                for k in range(na):
                    s += J[i, k] * J[jj, k]
                A[i, jj] = s
        return
    T = tcols[0] - 1
    pairs = tcols[T]
    for i in range(m):
        t = rows[i, 0]
        j = 0
        while j <= i:
            # The run of rows j.. of one target u: their products with row i share the
            # columns of the pair (t, u).
            u = rows[j, 0]
            end = j + 1
            while end <= i and rows[end, 0] == u:
                end += 1
            p = t * (t + 1) // 2 + u if u <= t else u * (u + 1) // 2 + t
            a = tcols[pairs + p]
            b = tcols[pairs + p + 1]
            while j + 3 < end:
                s0 = s1 = s2 = s3 = 0.0
                for c in range(a, b):
                    k = tcols[c]
                    x = J[i, k]
                    s0 += x * J[j, k]
                    s1 += x * J[j + 1, k]
                    s2 += x * J[j + 2, k]
                    s3 += x * J[j + 3, k]
                A[i, j] = s0
                A[i, j + 1] = s1
                A[i, j + 2] = s2
                A[i, j + 3] = s3
                j += 4
            while j < end:
                s = 0.0
                for c in range(a, b):
                    k = tcols[c]
                    s += J[i, k] * J[j, k]
                A[i, j] = s
                j += 1


@no_refcount
def damped_solve(
    J: np.ndarray,
    e: np.ndarray,
    lam: float,
    dq: np.ndarray,
    A: np.ndarray,
    y: np.ndarray,
    rows: np.ndarray,
    tcols: np.ndarray,
) -> bool:
    """``dq = J^T (J J^T + lam I)^-1 e`` (= ``(J^T J + lam I)^-1 J^T e``), smaller side.

    ``A`` (>= min(m, na) square) and ``y`` (>= min(m, na)) are scratch space: the
    system is solved on its smaller side. ``rows`` and ``tcols``: see :func:`gram_rows`.
    """
    m, na = J.shape
    # Six rows (one 6D pose target) and three (one position) go through the unrolled
    # damped_solve6 and damped_solve3 instead.
    if m <= na:
        gram_rows(J, A, rows, tcols)
        for i in range(m):
            A[i, i] += lam
        if not cholesky_solve(A, m, e, y):
            return False
        for k in range(na):
            dq[k] = 0.0
        for i in range(m):
            yi = y[i]
            for k in range(na):
                dq[k] += J[i, k] * yi
    else:
        g = y
        for k in range(na):
            g[k] = 0.0
        for i in range(m):
            ei = e[i]
            for k in range(na):
                g[k] += J[i, k] * ei
        for a in range(na):
            for b in range(a + 1):
                A[a, b] = 0.0
        for i in range(m):
            for a in range(na):
                jia = J[i, a]
                for b in range(a + 1):
                    A[a, b] += jia * J[i, b]
        for a in range(na):
            A[a, a] += lam
        if not cholesky_solve(A, na, g, dq):
            return False
    return True


@inlined
def damped_solve6(
    J: np.ndarray, e: np.ndarray, lam: float, dq: np.ndarray, A: np.ndarray, y: np.ndarray
) -> bool:
    """:func:`damped_solve` for exactly six rows (one 6D pose target), with the loop
    bounds known to the compiler so it unrolls them: about 3x faster on 6 x 7."""
    # The loops over the columns stay loops on a GPU (``rolled``): unrolled, NVVM held two
    # columns' loads beside the 21 sums, the IK kernel's peak (130 registers; 126 rolled).
    na = rolled(J.shape[1])
    a00 = a10 = a11 = a20 = a21 = a22 = a30 = a31 = a32 = a33 = 0.0
    a40 = a41 = a42 = a43 = a44 = a50 = a51 = a52 = a53 = a54 = a55 = 0.0
    for k in range(na):
        j0 = J[0, k]
        j1 = J[1, k]
        j2 = J[2, k]
        j3 = J[3, k]
        j4 = J[4, k]
        j5 = J[5, k]
        a00 += j0 * j0
        a10 += j1 * j0
        a11 += j1 * j1
        a20 += j2 * j0
        a21 += j2 * j1
        a22 += j2 * j2
        a30 += j3 * j0
        a31 += j3 * j1
        a32 += j3 * j2
        a33 += j3 * j3
        a40 += j4 * j0
        a41 += j4 * j1
        a42 += j4 * j2
        a43 += j4 * j3
        a44 += j4 * j4
        a50 += j5 * j0
        a51 += j5 * j1
        a52 += j5 * j2
        a53 += j5 * j3
        a54 += j5 * j4
        a55 += j5 * j5
    A[0, 0] = a00 + lam
    A[1, 0] = a10
    A[1, 1] = a11 + lam
    A[2, 0] = a20
    A[2, 1] = a21
    A[2, 2] = a22 + lam
    A[3, 0] = a30
    A[3, 1] = a31
    A[3, 2] = a32
    A[3, 3] = a33 + lam
    A[4, 0] = a40
    A[4, 1] = a41
    A[4, 2] = a42
    A[4, 3] = a43
    A[4, 4] = a44 + lam
    A[5, 0] = a50
    A[5, 1] = a51
    A[5, 2] = a52
    A[5, 3] = a53
    A[5, 4] = a54
    A[5, 5] = a55 + lam
    if not cholesky_solve(A, 6, e, y):
        return False
    y0, y1, y2, y3, y4, y5 = y[0], y[1], y[2], y[3], y[4], y[5]
    for k in range(na):
        dq[k] = (
            J[0, k] * y0 + J[1, k] * y1 + J[2, k] * y2 + J[3, k] * y3 + J[4, k] * y4 + J[5, k] * y5
        )
    return True


@no_refcount
def damped_solve3(
    J: np.ndarray, e: np.ndarray, lam: float, dq: np.ndarray, A: np.ndarray, y: np.ndarray
) -> bool:
    """:func:`damped_solve` for exactly three rows (one position target), unrolled."""
    na = J.shape[1]
    a00 = a10 = a11 = a20 = a21 = a22 = 0.0
    for k in range(na):
        j0 = J[0, k]
        j1 = J[1, k]
        j2 = J[2, k]
        a00 += j0 * j0
        a10 += j1 * j0
        a11 += j1 * j1
        a20 += j2 * j0
        a21 += j2 * j1
        a22 += j2 * j2
    A[0, 0] = a00 + lam
    A[1, 0] = a10
    A[1, 1] = a11 + lam
    A[2, 0] = a20
    A[2, 1] = a21
    A[2, 2] = a22 + lam
    if not cholesky_solve(A, 3, e, y):
        return False
    y0, y1, y2 = y[0], y[1], y[2]
    for k in range(na):
        dq[k] = J[0, k] * y0 + J[1, k] * y1 + J[2, k] * y2
    return True


@njit(cache=True, inline="always")
def keeps_gram(m: int, na: int) -> bool:
    """Whether :func:`dls_solve` keeps the Gram matrix ``J J^T`` of an ``m x na`` system
    between solves (the rows' side, and no unrolled route): a re-solve after pinning
    joints then downdates it (:func:`downdate_gram`) instead of forming it again."""
    return m <= na and m != 6 and m != 3


@njit(cache=True, inline="always")
def downdate_gram(J: np.ndarray, G: np.ndarray, kk: int) -> None:
    """``G -= J[:, kk] J[:, kk]^T`` (lower triangle): the Gram matrix once column ``kk``
    of ``J`` is zeroed. Rows where the column is zero are skipped (most of them, where
    each target moves with its own limb)."""
    m = J.shape[0]
    for i in range(m):
        x = J[i, kk]
        if x == 0.0:
            continue
        for j in range(i + 1):
            G[i, j] -= x * J[j, kk]


@no_refcount
def gram_solve(
    J: np.ndarray,
    e: np.ndarray,
    lam: float,
    dq: np.ndarray,
    A: np.ndarray,
    y: np.ndarray,
    G: np.ndarray,
) -> bool:
    """:func:`damped_solve` on the rows' side from a Gram matrix ``G = J J^T`` at hand
    (lower triangle, kept by :func:`dls_solve`)."""
    m, na = J.shape
    for i in range(m):
        for j in range(i + 1):
            A[i, j] = G[i, j]
        A[i, i] += lam
    if not cholesky_solve(A, m, e, y):
        return False
    for k in range(na):
        dq[k] = 0.0
    for i in range(m):
        yi = y[i]
        for k in range(na):
            dq[k] += J[i, k] * yi
    return True


@inlined
def dls_solve(
    J: np.ndarray,
    e: np.ndarray,
    lam: float,
    dq: np.ndarray,
    A: np.ndarray,
    y: np.ndarray,
    rows: np.ndarray,
    tcols: np.ndarray,
    G: np.ndarray,
    fresh: bool,
) -> None:
    """The damped least-squares step, by the fastest route for the system's size; a
    system that is not positive definite is retried once by the same route with more
    damping (``lam + 1e-3``), and a step that still fails (a non-finite ``J`` or ``e``)
    is zero.

    Where :func:`keeps_gram`, ``G`` (``min(m, na)`` square) holds ``J J^T``: formed when
    ``fresh``, else taken as it is (kept up to date by the caller, :func:`downdate_gram`).

    The retry is the second pass of one loop, not a second call: each route is compiled
    in once (on the GPU, a retry through the general solver nearly doubled the dls
    kernel's instructions)."""
    m, na = J.shape
    if fresh and keeps_gram(m, na):
        gram_rows(J, G, rows, tcols)
    mu = lam
    for _attempt in range(2):
        if m == 6 and na >= 6:
            ok = damped_solve6(J, e, mu, dq, A, y)
        elif m == 3 and na >= 3:
            ok = damped_solve3(J, e, mu, dq, A, y)
        elif keeps_gram(m, na):
            ok = gram_solve(J, e, mu, dq, A, y, G)
        else:
            ok = damped_solve(J, e, mu, dq, A, y, rows, tcols)
        if ok:
            return
        mu = lam + 1e-3
    for k in range(na):
        dq[k] = 0.0
