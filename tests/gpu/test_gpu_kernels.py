"""The GPU path shares the CPU path's parts instead of keeping copies: the IK template
cache, the step-rule table, one bad-input predicate and one way to rebind kernel code.

None of these needs the CUDA simulator: they check what the GPU code is built from.
"""

from __future__ import annotations

import ast
import math
from pathlib import Path

import numpy as np

import kinetree
from kinetree import _compile
from kinetree.ik.kernel import layout as L
from kinetree.ik.options import resolve
from kinetree.ik.problem import build_problem
from kinetree.ik.result import is_bad_input

SRC = Path(kinetree.__file__).resolve().parent


def test_the_gpu_pose_template_is_the_cpu_template():
    """One cache: the template ``device="cuda"`` compiles for a pose batch is the very
    object the CPU's problem builder returns for the same pose target and options."""
    from kinetree.gpu.api import _pose_template

    panda = kinetree.load("panda")
    T = panda.fk(panda.random_configuration(2, rng=1))
    for opts in (resolve({}), resolve({"tol": 1e-3, "method": "transpose"})):
        gpu = _pose_template(panda, None, opts)
        cpu = build_problem(panda, kinetree.ik.Pose(T), None, opts).template
        assert gpu is cpu
        frame = panda.frame_names[3]
        cpu = build_problem(panda, kinetree.ik.Pose(T), frame, opts).template
        assert _pose_template(panda, frame, opts) is cpu
    assert not hasattr(kinetree.gpu.api, "_POSE_TEMPLATES")


def test_gpu_kernels_take_the_cpu_step_rules():
    """The GPU's IK kernels bind the CPU drivers' rule table, not a copy of it."""
    from kinetree.gpu import _kernels as K
    from kinetree.ik.kernel import _drivers

    assert K.IK.RULES is _drivers.RULES
    for method in K.GPU_METHODS:
        kernel_method = resolve({"method": method}).kernel_method
        assert kernel_method == "ccd" or kernel_method in _drivers.RULES


def test_is_bad_input_names_exactly_the_statuses_that_raise():
    statuses = np.arange(0, 8)
    expected = np.isin(statuses, L.BAD_INPUT)
    np.testing.assert_array_equal(is_bad_input(statuses), expected)
    assert [bool(is_bad_input(int(s))) for s in statuses] == expected.tolist()
    # outcomes, not bad input: solved, not converged, in collision
    for s in (L.ST_OK, L.ST_NOT_CONVERGED, L.ST_IN_COLLISION):
        assert not is_bad_input(s)


def test_one_function_rebinds_kernel_code():
    """``types.FunctionType`` (a function from code and globals) is called in one place
    in the package: ``_compile.rebind``, which every variant, interpreted twin and GPU
    translation goes through."""
    calls = []
    for f in sorted(SRC.rglob("*.py")):
        tree = ast.parse(f.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef):
                for sub in ast.walk(node):
                    # Python's types.FunctionType, not llvmlite's ir.FunctionType (a
                    # function *type* of the IR that the device intrinsics emit)
                    if (isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute)
                            and sub.func.attr == "FunctionType"
                            and isinstance(sub.func.value, ast.Name)
                            and sub.func.value.id == "types"):  # fmt: skip
                        calls.append((f.relative_to(SRC).as_posix(), node.name))
    assert calls == [("_compile.py", "rebind")]


def scaled(x: float) -> float:
    return FACTOR * math.sqrt(x)


FACTOR = 2.0


def test_rebind_binds_globals_and_leaves_the_source_alone():
    fn = _compile.rebind(scaled, "scaled_by_ten", FACTOR=10.0)
    assert fn(4.0) == 20.0 and scaled(4.0) == 4.0
    assert fn.__name__ == fn.__qualname__ == "scaled_by_ten"
    assert fn.__module__ == scaled.__module__
    # a scope given whole is used as it is (the interpreted twins share one per module)
    scope = {"FACTOR": 3.0, "math": math}
    same = _compile.rebind(scaled, scope=scope)
    assert same.__globals__ is scope and same(4.0) == 6.0
    assert same.__name__ == "scaled"
    scope["FACTOR"] = 5.0
    assert same(4.0) == 10.0
