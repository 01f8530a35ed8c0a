"""FK, Jacobians and IK batches on an NVIDIA GPU (``device="cuda"``).

``Model.fk(q, device="cuda")``, ``Model.jacobian(q, device="cuda")`` and
``Model.ik(targets, device="cuda", ...)`` run the CPU kernels' own source compiled for
a GPU thread with numba-cuda (the ``kinetree[gpu]`` extra): one thread per problem,
fp64, scratch in local memory, restarts inside the kernel; collision-aware IK
(``obstacles=``, ``self_collision=``) as on the CPU; reachability maps end to end
(:func:`reach_voxels`, for ``workspace.reachability(..., device="cuda")``). Design
notes and the benchmark: ``docs/gpu.md``. Without numba-cuda or a CUDA driver, ``device="cuda"``
raises a :class:`~kinetree.errors.KinetreeError` saying what is missing; numba's CUDA
simulator (``NUMBA_ENABLE_CUDASIM=1``) runs the same code on the CPU, slowly (the
tests use it).
"""

from ._arrays import DEVICES as DEVICES
from ._arrays import check_device as check_device
from ._arrays import is_gpu_array as is_gpu_array
from ._kernels import GPU_METHODS as GPU_METHODS
from ._reach import CHUNK as REACH_CHUNK
from ._reach import reach_voxels as reach_voxels
from .api import fk as fk
from .api import ik as ik
from .api import jacobian as jacobian

__all__ = [
    "DEVICES",
    "GPU_METHODS",
    "REACH_CHUNK",
    "check_device",
    "fk",
    "ik",
    "is_gpu_array",
    "jacobian",
    "reach_voxels",
]
