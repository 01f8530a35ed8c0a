"""The restarts' random numbers (splitmix64 in ``kinetree.ik.kernel._random``) are the same bits
compiled and run as Python with numpy integers (as numba's CUDA simulator runs them), and
the Python run raises no overflow warning. The oracle is splitmix64 in Python integers."""

from __future__ import annotations

import ast
import os
import subprocess
import sys

import numpy as np

from kinetree.ik.kernel._random import rand01

MASK = (1 << 64) - 1
SEED = 0xDEADBEEF12345678
N = 2000


def _reference(seed: int, n: int) -> list[float]:
    out, s = [], seed
    for _ in range(n):
        s = (s + 0x9E3779B97F4A7C15) & MASK
        z = s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        z ^= z >> 31
        out.append((z >> 11) * (1.0 / 9007199254740992.0))
    return out


def test_compiled_draws_are_splitmix64() -> None:
    state = np.array([SEED], dtype=np.uint64)
    assert [rand01(state) for _ in range(N)] == _reference(SEED, N)


def test_python_draws_are_the_same_bits_without_warnings() -> None:
    code = (
        "import numpy as np\n"
        "from kinetree.ik.kernel._random import rand01\n"
        f"s = np.array([{SEED}], dtype=np.uint64)\n"
        f"print(repr([rand01(s) for _ in range({N})]))\n"
    )
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert ast.literal_eval(done.stdout) == _reference(SEED, N)
