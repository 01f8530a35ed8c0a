"""``kinetree._hints``: ``shaped_view``, the one way compiled code cuts a flat buffer into
a matrix, on the CPU (a slice and a reshape) and for a GPU (an intrinsic whose shape and
strides the compiler sees), and ``rolled``, a loop bound the GPU compiler may not unroll
by (the identity on the CPU); the GPU side checked in NVVM's own output, where NVVM is
installed."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from numba import njit

from kinetree._hints import rolled, shaped_view


@njit(cache=False)
def _views(buf: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    a = shaped_view(buf, 3, (6, 7))
    b = shaped_view(buf, 50, (2, 3, 4))
    c = shaped_view(buf, 0, (5,))
    return a, b, c


@pytest.mark.parametrize("compiled", [True, False])
def test_views_are_the_slices_reshaped_without_a_copy(compiled):
    buf = np.arange(80.0)
    fn = _views if compiled else _views.py_func
    a, b, c = fn(buf)
    np.testing.assert_array_equal(a, buf[3:45].reshape(6, 7))
    np.testing.assert_array_equal(b, buf[50:74].reshape(2, 3, 4))
    np.testing.assert_array_equal(c, buf[:5])
    assert a.flags.c_contiguous and b.flags.c_contiguous
    a[1, 2] = -1.0
    b[1, 2, 3] = -2.0
    assert buf[3 + 7 + 2] == -1.0 and buf[50 + 12 + 8 + 3] == -2.0


def test_rolled_is_the_identity():
    assert rolled(7) == 7 and rolled.py_func(7) == 7
    assert rolled(-3) == -3


def _cuda_home() -> str | None:
    home = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
    return home if (Path(home) / "nvvm").is_dir() else None


_PRELUDE = """
import os, sys
os.environ.setdefault("NUMBA_FORCE_CUDA_CC", "9.0")
from numba.cuda import cuda_paths
find = cuda_paths._get_nvrtc_path
def nvrtc_path():
    try:
        return find()
    except Exception:  # no NVRTC: only linking CUDA C needs it
        return cuda_paths._env_path_tuple("absent", None)
cuda_paths._get_nvrtc_path = nvrtc_path
from numba import cuda, float64
from kinetree._hints import rolled, shaped_view
from kinetree.gpu._translate import kernel
"""


def _ptx(source: str) -> str:
    """The PTX (sm_90) of the kernel the script ``source`` makes, compiled by NVVM in a
    process of its own (this one may hold numba's CUDA simulator)."""
    pytest.importorskip("numba_cuda")
    env = {**os.environ, "CUDA_HOME": str(_cuda_home())}
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    script = textwrap.dedent(_PRELUDE) + textwrap.dedent(source)
    script += "\nsys.stdout.write(cuda.compile_ptx(k.py_func, (float64[::1],), cc=(9, 0))[0])\n"
    r = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300
    )
    if r.returncode != 0 and "nvvm" in r.stderr.lower() and "not" in r.stderr.lower():
        pytest.skip(f"NVVM not usable here: {r.stderr.strip().splitlines()[-1]}")
    assert r.returncode == 0, r.stderr
    return r.stdout[r.stdout.index(".entry") :]


# A kernel that reads two views of a scratch filled with 0, 1, 2, ...: with the
# intrinsic the compiler knows every offset, shape and stride, so it folds the branch
# on the shape and both reads into the constants 12.0 (3 + 1*7 + 2) and 28.0
# (5 + 1*12 + 2*4 + 3).
_VIEWS = """
def source(out):
    ws = cuda.local.array(100, float64)
    for i in range(100):
        ws[i] = i
    J = shaped_view(ws, 3, (6, 7))
    W = shaped_view(ws, 5, (2, 3, 4))
    if J.shape[0] == 6 and W.strides[1] == 32:
        out[0] = J[1, 2]
        out[1] = W[1, 2, 3]
    else:
        out[0] = -1.0

k = kernel(source, "views_probe", cuda=cuda, float64=float64)
"""


@pytest.mark.skipif(_cuda_home() is None, reason="no CUDA toolkit with NVVM")
def test_the_device_view_is_known_to_the_compiler():
    body = _ptx(_VIEWS)
    assert "numba_attempt_nocopy_reshape" not in body
    for value in (12.0, 28.0):
        bits = struct.unpack("<q", struct.pack("<d", value))[0]
        assert f"{bits};" in body, f"{value} was not folded into a constant"
    assert "ld.local" not in body  # nothing read back: every view's address is known


# The same sum over a constant number of items, with and without ``rolled``: NVVM
# unrolls the plain loop (eight loads in a row) and keeps the rolled one a loop.
_ROLLED = """
N = 8
def source(out):
    s = 0.0
    for k in range({bound}):
        s += out[k] * out[k]
    out[0] = s

k = kernel(source, "rolled_probe", cuda=cuda, float64=float64)
"""


@pytest.mark.skipif(_cuda_home() is None, reason="no CUDA toolkit with NVVM")
@pytest.mark.parametrize("bound", ["N", "rolled(N)"])
def test_a_rolled_bound_keeps_the_loop_on_the_device(bound):
    body = _ptx(_ROLLED.format(bound=bound))
    loads = body.count("ld.global.f64")
    if bound == "N":
        assert loads == 8 and "bra" not in body
    else:
        assert loads < 8 and "bra" in body
