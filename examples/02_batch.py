"""A batch of 1000 pose targets solved in one call, on all cores: success rate and time.

The targets are the FK of uniform random configurations within the joint limits,
so every one is reachable. The first call compiles the batch kernel (once per
machine; numba caches it), so it is timed apart.
"""

from __future__ import annotations

import time

import numpy as np

import kinetree

N = 1000


def main() -> None:
    panda = kinetree.load("panda")
    Q_true = panda.random_configuration(N, rng=1)
    T_targets = panda.fk(Q_true)  # (N, 4, 4)

    t0 = time.perf_counter()
    panda.ik(T_targets[:2], tol=1e-6, seed=0)  # warm-up: compiles on the first run
    print(f"warm-up (2 targets, includes any compilation): {time.perf_counter() - t0:.2f} s")

    t0 = time.perf_counter()
    batch = panda.ik(T_targets, tol=1e-6, seed=0)
    elapsed = time.perf_counter() - t0

    success = np.asarray(batch.success)
    pos_err = np.asarray(batch.position_error)[:, 0]
    rot_err = np.asarray(batch.orientation_error)[:, 0]
    print(f"{N} Panda pose targets: {success.mean():.1%} solved in {elapsed * 1e3:.1f} ms "
          f"({N / elapsed:,.0f} solves/s, {elapsed / N * 1e6:.1f} us each)")  # fmt: skip
    print(f"position error [m]: median {np.median(pos_err):.1e}, max {pos_err.max():.1e}")
    print(f"rotation error [rad]: median {np.median(rot_err):.1e}, max {rot_err.max():.1e}")
    print(f"iterations: median {np.median(batch.iterations):.0f}, "
          f"restarts used on {int(np.count_nonzero(batch.restarts))} targets")  # fmt: skip

    # The solver's own success flag, checked against FK.
    reached = np.linalg.norm(panda.fk(batch.q)[:, :3, 3] - T_targets[:, :3, 3], axis=-1)
    assert np.all(reached[success] < 1e-5)
    if success.mean() < 0.99:
        raise SystemExit(f"only {success.mean():.1%} solved")


if __name__ == "__main__":
    main()
