"""The CPU kernels' own source, compiled for a CUDA thread.

kinetree's per-problem IK loop (``ik.kernel.solve_one`` and everything it calls) and the
FK/Jacobian recurrences are written allocation-free with numba's ``@njit``. numba-cuda
cannot call a CPU dispatcher from device code, but it compiles the same Python source:
:func:`device` takes an ``@njit`` function's ``py_func``, rebinds every global name that
refers to another ``@njit`` function to that function's device version (recursively, and
once per function; :func:`kinetree._compile.rebind`), and wraps the result in
``cuda.jit(device=True)`` with the same ``inline`` choice. Extra ``bindings`` play the
role of :func:`kinetree._compile.variant`'s (the method's step rule, the swing-twist
switch).

What cannot compile for CUDA is swapped at this one place, by identity of the CPU function:

* ``ik.kernel.monotonic`` (``clock_gettime`` through ``ctypes``) becomes a read of the
  GPU's nanosecond ``%globaltimer`` (a three-line CUDA C function linked in), so the
  per-problem ``time_budget`` means the same on both targets;
* the name ``np`` is a copy of the numpy namespace whose ``isfinite`` is a device
  function (numba-cuda has no ``isfinite`` ufunc loop for scalars);
* :func:`kinetree._hints.shaped_view` (a slice and a ``reshape``) becomes an intrinsic
  that builds the view itself: numba-cuda's ``reshape`` hands the new shape to an
  external helper by address, after which the compiler no longer knows it (measured on
  the Panda's IK kernel: 246 registers with the reshape, 130 with the intrinsic; see
  docs/gpu.md); :func:`kinetree._hints.rolled` (the identity) becomes an empty ``mov``
  whose result the optimizer cannot see through, so a loop bounded by it stays a loop
  (126 registers, no spills).

Under numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``) the same rebinding runs the
source as Python, with ``time.monotonic`` as the clock, and the name ``math`` is a copy
of the math module whose ``hypot`` is the C library's: compiled code calls that one
(numba lowers ``math.hypot`` to libm's), Python's own differs from it in the last bit
for about 0.2 % of arguments, and the QP's Givens rotations take it (``kinetree._qp``).
Every other ``math`` function the kernels call is the C library's in Python too.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math
import time
import types
from typing import Any

import numpy as np
from numba.core.registry import CPUDispatcher

from .._compile import rebind
from .._hints import rolled as cpu_rolled
from .._hints import shaped_view as cpu_shaped_view
from ..ik.kernel import monotonic as cpu_monotonic

__all__ = ["device", "kernel", "simulator"]

_MEMO: dict[tuple[Any, ...], Any] = {}
_SHARED: dict[str, Any] = {}

#: CUDA C for the clock: the GPU's global nanosecond timer, in seconds (numba's ABI:
#: an int status and a pointer to the return value).
CLOCK_SOURCE = """
extern "C" __device__ int kinetree_gpu_seconds(double* out) {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    *out = (double)t * 1e-9;
    return 0;
}
"""


def simulator() -> bool:
    """Whether numba's CUDA target is its simulator (``NUMBA_ENABLE_CUDASIM=1`` when
    ``numba.cuda`` was first imported in this process)."""
    from numba import cuda

    return str(getattr(cuda.jit, "__module__", "")).startswith("numba.cuda.simulator")


def _global_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _global_names(c)
    return names


def _numpy_shim() -> types.ModuleType:
    """numpy's namespace with ``isfinite`` as a device function."""
    shim = _SHARED.get("np")
    if shim is None:
        from numba import cuda

        shim = types.ModuleType("kinetree_gpu_numpy")
        shim.__dict__.update(np.__dict__)

        def isfinite(x: float) -> bool:
            return math.isfinite(x)

        shim.isfinite = cuda.jit(device=True, inline="always")(isfinite)  # type: ignore[attr-defined]
        _SHARED["np"] = shim
    return shim


def _simulated_math() -> types.ModuleType:
    """The math module with the C library's ``hypot`` (see the module doc); Python's own
    where no C math library is found."""
    shim = _SHARED.get("math")
    if shim is None:
        shim = types.ModuleType("kinetree_simulated_math")
        shim.__dict__.update(math.__dict__)
        name = ctypes.util.find_library("m")
        if name is not None:
            hypot = ctypes.CDLL(name).hypot
            hypot.restype = ctypes.c_double
            hypot.argtypes = [ctypes.c_double, ctypes.c_double]
            shim.hypot = hypot  # type: ignore[attr-defined]
        _SHARED["math"] = shim
    return shim


def _clock() -> Any:
    """The device replacement of ``_clock.monotonic(buf)`` [s]."""
    clock = _SHARED.get("clock")
    if clock is None:
        from numba import cuda, float64

        if simulator():

            def monotonic(buf: np.ndarray) -> float:
                return time.monotonic()

        else:
            source: Any = cuda.CUSource(CLOCK_SOURCE)  # type: ignore[attr-defined]
            seconds = cuda.declare_device("kinetree_gpu_seconds", float64(), link=[source])

            def monotonic(buf: np.ndarray) -> float:
                return seconds()

        clock = _SHARED["clock"] = cuda.jit(device=True, inline="always")(monotonic)
    return clock


def _codegen_parts() -> tuple[Any, Any, Any, Any, Any]:
    """What the device intrinsics are written with: ``(types, cgutils, arrayobj,
    impl_ret_borrowed, intrinsic)``, numba-cuda's own copies where it has them (0.2x and
    later keep a type system of their own), numba's before it did (the GPU hosts may run
    an older numba-cuda than the one pip installs here). One set or the other, never
    mixed."""
    import importlib

    modules = (
        ("numba.cuda.types", "numba.cuda.cgutils", "numba.cuda.np.arrayobj",
         "numba.cuda.core.imputils", "numba.cuda.extending"),
        ("numba.core.types", "numba.core.cgutils", "numba.np.arrayobj",
         "numba.core.imputils", "numba.core.extending"),
    )  # fmt: skip
    for names in modules:
        try:
            nbt, cgutils, arrayobj, imputils, extending = map(importlib.import_module, names)
            return nbt, cgutils, arrayobj, imputils.impl_ret_borrowed, extending.intrinsic
        except (ImportError, AttributeError):
            continue
    raise ImportError("numba-cuda's code-generation modules were not found")


def _shaped_view() -> Any:
    """The device replacement of :func:`kinetree._hints.shaped_view`: an intrinsic that
    makes the view from the buffer's pointer, the offset and the shape's tuple, with
    C-order strides, all as values the compiler sees (no call, nothing in memory)."""
    fn = _SHARED.get("shaped_view")
    if fn is None:
        nbt, cgutils, arrayobj, impl_ret_borrowed, intrinsic = _codegen_parts()

        def typer(typingctx: Any, buf: Any, offset: Any, shape: Any) -> Any:
            ok = (
                isinstance(buf, nbt.Array)
                and buf.ndim == 1
                and buf.layout == "C"
                and isinstance(offset, nbt.Integer)
                and isinstance(shape, nbt.BaseTuple)
                and all(isinstance(t, nbt.Integer) for t in shape.types)
            )
            if not ok:
                return None
            nd = len(shape.types)
            view = buf.copy(ndim=nd, layout="C")

            def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
                ary = arrayobj.make_array(sig.args[0])(context, builder, args[0])
                off = context.cast(builder, args[1], sig.args[1], nbt.intp)
                dims = [
                    context.cast(builder, builder.extract_value(args[2], i), t, nbt.intp)
                    for i, t in enumerate(shape.types)
                ]
                strides = [ary.itemsize] * nd
                for i in range(nd - 2, -1, -1):
                    strides[i] = builder.mul(strides[i + 1], dims[i + 1])
                out = arrayobj.make_array(view)(context, builder)
                arrayobj.populate_array(
                    out,
                    data=cgutils.gep_inbounds(builder, ary.data, off),
                    shape=dims,
                    strides=strides,
                    itemsize=ary.itemsize,
                    meminfo=ary.meminfo,
                    parent=ary.parent,
                )
                return impl_ret_borrowed(context, builder, view, out._getvalue())

            return view(buf, offset, shape), codegen

        typer.__name__ = "shaped_view"
        fn = _SHARED["shaped_view"] = intrinsic(typer)
    return fn


def _rolled() -> Any:
    """The device replacement of :func:`kinetree._hints.rolled`: the integer passed
    through an empty ``mov.b64`` (inline PTX), which the optimizer cannot see through."""
    fn = _SHARED.get("rolled")
    if fn is None:
        from llvmlite import ir

        nbt, _, _, _, intrinsic = _codegen_parts()

        def typer(typingctx: Any, n: Any) -> Any:
            if not isinstance(n, nbt.Integer):
                return None

            def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
                v = context.cast(builder, args[0], sig.args[0], nbt.int64)
                word = ir.IntType(64)
                mov = ir.FunctionType(word, [word])
                return builder.asm(mov, "mov.b64 $0, $1;", "=l,l", [v], side_effect=False)

            return nbt.int64(n), codegen

        typer.__name__ = "rolled"
        fn = _SHARED["rolled"] = intrinsic(typer)
    return fn


def _replacement(value: Any) -> Any:
    if value is cpu_monotonic:
        return _clock()
    if value is cpu_rolled and not simulator():
        return _rolled()
    if value is cpu_shaped_view and not simulator():
        return _shaped_view()
    if isinstance(value, CPUDispatcher):
        return device(value)
    return None


def device(kernel: Any, name: str | None = None, **bindings: Any) -> Any:
    """The CUDA device function compiled from ``kernel`` (an ``@njit`` function or a
    plain Python function written to the same rules), with the globals ``bindings``
    replaced first; the ``@njit`` functions it calls become device functions too.
    Memoised: one device function per source and bindings."""
    py = getattr(kernel, "py_func", kernel)
    key = (py, name, tuple(sorted((k, id(v)) for k, v in bindings.items())))
    hit = _MEMO.get(key)
    if hit is not None:
        return hit
    from numba import cuda

    scope = {**py.__globals__, **bindings}
    for nm in _global_names(py.__code__):
        if nm not in scope:
            continue
        if nm == "np" and scope[nm] is np and not simulator():
            scope[nm] = _numpy_shim()
            continue
        if nm == "math" and scope[nm] is math and simulator():
            scope[nm] = _simulated_math()
            continue
        new = _replacement(scope[nm])
        if new is not None:
            scope[nm] = new
    fn = rebind(py, name, scope)
    options = getattr(kernel, "targetoptions", {})
    # The CPU's per-caller choice (``_compile.inline_hot``) is "inline" on the device:
    # every GPU kernel is a driver whose speed counts.
    inline = "never" if options.get("inline", "never") == "never" else "always"
    out = cuda.jit(device=True, inline=inline)(fn)
    _MEMO[key] = out
    return out


def kernel(
    source: Any, name: str, cache: bool = False, max_registers: int | None = None, **bindings: Any
) -> Any:
    """A CUDA kernel compiled from the plain function ``source`` with ``bindings``
    (compile-time constants such as local-array sizes, and device functions); ``cache``:
    numba-cuda's disk cache, under ``name`` (which must then say what the bindings are);
    ``max_registers``: a cap on registers per thread (None: the compiler's choice)."""
    from numba import cuda

    scope = {**source.__globals__, **bindings}
    for nm in _global_names(source.__code__):
        if nm in scope and nm not in bindings:
            new = _replacement(scope[nm])
            if new is not None:
                scope[nm] = new
    fn = rebind(source, name, scope)
    options: dict[str, Any] = {"cache": True} if cache else {}
    if max_registers is not None and not simulator():
        options["max_registers"] = max_registers
    return cuda.jit(fn, **options)
