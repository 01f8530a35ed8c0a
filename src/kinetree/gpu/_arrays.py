"""The CUDA runtime check and arrays in and out of the GPU.

Inputs are numpy arrays (copied to the GPU and results copied back: numpy in, numpy
out) or GPU arrays: anything with ``__cuda_array_interface__`` (numba, CuPy, PyTorch,
JAX where it exposes it) is used in place, and DLPack capsules of CUDA memory are
imported through CuPy or PyTorch. Results of a GPU input stay on the GPU and come back
as the input's kind (a ``torch.Tensor`` for a tensor, a ``cupy.ndarray`` for a CuPy
array; otherwise a numba device array, which itself exposes
``__cuda_array_interface__``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InvalidValueError, KinetreeError, ShapeError

__all__ = [
    "DEVICES",
    "as_device",
    "check_device",
    "cuda_runtime",
    "like_input",
    "refuse_host_tensor",
]

#: The values of ``device=``.
DEVICES = ("cpu", "cuda")

_KDL_CUDA = (2, 3, 13)  # DLPack device types: CUDA, CUDA host, CUDA managed


def check_device(device: Any) -> str:
    """``device`` as ``"cpu"`` or ``"cuda"``; anything else is an error naming both."""
    if isinstance(device, str):
        d = device.lower()
        if d.startswith("cuda:") and d[5:].isdigit():
            d = "cuda"
        if d in DEVICES:
            return d
    raise InvalidValueError(
        f"unknown device {device!r}; devices are: {', '.join(map(repr, DEVICES))}"
    )


def cuda_runtime() -> Any:
    """numba's ``cuda`` module, ready to run kernels; a :class:`KinetreeError` that says
    what is missing when it is not (numba-cuda, a driver, a GPU)."""
    if not hasattr(np, "row_stack"):
        # numpy 2.5 removed this alias of vstack, which older numba-cuda releases still
        # call; the alias restores what they expect.
        vars(np)["row_stack"] = np.vstack
    try:
        from numba import cuda
    except ImportError as exc:  # pragma: no cover - numba without its CUDA target
        raise KinetreeError(
            f"device='cuda' needs numba-cuda (pip install 'kinetree[gpu]'): {exc}"
        ) from None
    from ._translate import simulator

    if simulator():
        return cuda
    try:
        import numba_cuda  # noqa: F401
    except ImportError:
        raise KinetreeError(
            "device='cuda' needs the numba-cuda package (pip install 'kinetree[gpu]'); "
            "numba's own CUDA target is deprecated and not used"
        ) from None
    try:
        ok = cuda.is_available()
        why = "" if ok else "; ".join(_detect_problem(cuda))
    except Exception as exc:  # the driver's own error, whatever its type
        ok, why = False, str(exc)
    if not ok:
        raise KinetreeError(
            "device='cuda' found no usable CUDA GPU: "
            + (why or "no NVIDIA driver or GPU on this machine")
            + " (NUMBA_ENABLE_CUDASIM=1 runs numba's CUDA simulator instead, slowly)"
        )
    return cuda


def _detect_problem(cuda: Any) -> list[str]:
    try:
        from numba.cuda.cudadrv.driver import driver

        driver.ensure_initialized()
    except Exception as exc:
        return [str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__]
    return []


def _is_sim_array(x: Any) -> bool:
    from ._translate import simulator

    if not simulator():
        return False
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

    return isinstance(x, FakeCUDAArray)


def is_gpu_array(x: Any) -> bool:
    """Whether ``x`` lives in GPU memory (``__cuda_array_interface__`` or a CUDA DLPack)."""
    if hasattr(x, "__cuda_array_interface__") or _is_sim_array(x):
        return True
    dev = getattr(x, "__dlpack_device__", None)
    if dev is None or isinstance(x, np.ndarray):
        return False
    try:
        return int(dev()[0]) in _KDL_CUDA
    except Exception:
        return False


def refuse_host_tensor(x: Any, name: str, device: str) -> None:
    """Raise for a tensor of an array library that lives in host memory (a CPU
    ``torch.Tensor``, a DLPack CPU array) given with a GPU ``device``: kinetree reads GPU
    arrays in place and numpy arrays by copying, not other libraries' host arrays."""
    if x is None or isinstance(x, np.ndarray) or is_gpu_array(x):
        return
    if getattr(x, "__dlpack_device__", None) is None:
        return  # lists, numpy scalars, targets: read as they are
    kind = f"{type(x).__module__.split('.')[0]}.{type(x).__name__}"
    raise InvalidValueError(
        f"{name} is a CPU tensor ({kind}), and device={device!r} takes GPU arrays or numpy "
        "arrays: move it to the GPU (tensor.cuda()) or give a numpy array (tensor.numpy()), "
        "or solve on device='cpu'"
    )


def as_device(cuda: Any, x: Any, name: str, trailing: tuple[int, ...]) -> Any:
    """The GPU array ``x`` as a numba device array (no copy), checked: float64, at least
    ``trailing`` as its last dimensions, C-contiguous."""
    if _is_sim_array(x):
        d = x
    elif hasattr(x, "__cuda_array_interface__"):
        d = cuda.as_cuda_array(x)
    else:
        d = cuda.as_cuda_array(_from_dlpack(x, name))
    if d.dtype != np.float64:
        raise InvalidValueError(
            f"{name} on the GPU must be float64 (kinetree solves in fp64), got {d.dtype}"
        )
    k = len(trailing)
    if d.ndim < k or tuple(d.shape[d.ndim - k :]) != trailing:
        want = "(..., " + ", ".join(map(str, trailing)) + ")"
        raise ShapeError(f"{name} on the GPU must have shape {want}, got {tuple(d.shape)}")
    if not d.is_c_contiguous():
        raise InvalidValueError(
            f"{name} on the GPU must be C-contiguous (a strided view would be copied on the "
            "host); make it contiguous on the GPU first"
        )
    return d


def _from_dlpack(x: Any, name: str) -> Any:
    try:
        import cupy

        return cupy.from_dlpack(x)
    except ImportError:
        pass
    try:
        import torch

        return torch.from_dlpack(x)
    except ImportError:
        raise KinetreeError(
            f"{name} is a DLPack GPU array without __cuda_array_interface__; reading it "
            "needs CuPy or PyTorch"
        ) from None


def like_input(x: Any, d: Any) -> Any:
    """The device array ``d`` as the kind of GPU array ``x`` is (no copy)."""
    mod = type(x).__module__.split(".")[0]
    if mod == "torch":
        import torch

        return torch.as_tensor(d, device=x.device)
    if mod == "cupy":
        import cupy

        return cupy.asarray(d)
    return d
