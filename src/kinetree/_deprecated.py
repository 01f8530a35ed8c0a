"""Every deprecated name of kinetree in one table, :data:`MOVED`, and the helpers that
serve it: :func:`attributes` for names read from a module, :func:`module_paths` for
module paths that moved, :func:`warn` for the callables kept in place.

An entry is ``old dotted name -> (new name, version)``. The new name is a module
(``"kinetree.ik.methods.fabrik"``: the old path imports it) or ``"module:attribute"``
(the old name reads that attribute). Every old name warns (:class:`DeprecationWarning`,
naming the new place and the version the old name goes in) and works until that version;
``tests/architecture/test_deprecations.py`` fails once the package's version reaches an
entry's, so the entry and what serves it are removed then.

A moved module path is imported as the module at its new place, the same module object
(so patching it patches the real one): a finder on ``sys.meta_path`` answers the old
names of the table, and nothing else. Where the old path's parent package already holds
something else under the old name (``kinetree.anim.retarget_quality`` is a function),
importing a module would rebind that name, so the old path is a stand-in module put in
``sys.modules`` when the package is imported; it reads every attribute from the new
module, and warns then.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types
import warnings
from collections.abc import Callable
from importlib.machinery import ModuleSpec
from typing import Any

__all__ = [
    "MOVED",
    "NEXT_RELEASE",
    "QV_MOVED",
    "attributes",
    "callable_package",
    "message",
    "module_paths",
    "warn",
]

#: The release the entries below were announced to go in.
NEXT_RELEASE = "0.2.0"

_N = NEXT_RELEASE
_RETARGET = {
    "robot_retarget": "human_to_robot",
    "robots": "robots",
    "retarget_maps": "joint_maps",
    "retarget_quality": "quality",
    "retarget_source": "source",
    "retarget_targets": "targets",
    "retarget_feet": "feet",
    "retarget_io": "saving",
    "dataset": "dataset",
}
_QP = {
    "QP_INFEASIBLE": "QP_INFEASIBLE",
    "QP_MAX_ITER": "QP_MAX_ITERATIONS",
    "QP_NOT_CONVEX": "QP_NOT_CONVEX",
    "QP_OK": "QP_SOLVED",
    "qp_iwork_size": "qp_iwork_size",
    "qp_solve": "qp_solve",
    "qp_work_size": "qp_work_size",
}

#: The members of :class:`kinetree.Model` that moved behind ``Model.qv`` (issue 33).
QV_MOVED = (
    "ball_nodes",
    "quaternion_mask",
    "v_q",
    "q_v",
    "v_index",
    "v_names",
    "v_of_coordinates",
    "dof_node",
    "dof_type",
)


#: Old dotted name -> (new module, or ``"module:attribute"``; the version it goes in).
MOVED: dict[str, tuple[str, str]] = {
    # ik/ in three rooms (issue 33): the public modules' old paths.
    **{
        f"kinetree.ik.{name}": (f"kinetree.ik.methods.{name}", _N)
        for name in (
            "analytic",
            "analytic_6r",
            "analytic_adapter",
            "fabrik",
            "scipy_solvers",
            "seeded",
            "two_bone",
        )
    },
    "kinetree.ik.layout": ("kinetree.ik.kernel.layout", _N),
    "kinetree.ik.swing_twist_layout": ("kinetree.ik.kernel.swing_twist_layout", _N),
    # One QP below ik and diffik (issue 21).
    **{f"kinetree.ik.qp.{old}": (f"kinetree._qp:{new}", _N) for old, new in _QP.items()},
    # The floors (issue 21): load above io, writing motions in anim.
    "kinetree.io.load": ("kinetree.loading:load", _N),
    "kinetree.io.write_motion_bvh": ("kinetree.anim.bvh_export:write_motion_bvh", _N),
    "kinetree.io.bvh_export": ("kinetree.anim.bvh_export", _N),
    # The retargeting files as kinetree.anim.retarget.
    **{
        f"kinetree.anim.{old}": (f"kinetree.anim.retarget.{new}", _N)
        for old, new in _RETARGET.items()
    },
    # Names after seed documents.
    "kinetree.ik.analytic.ik_seed003": ("kinetree.ik.methods.analytic:ik_zxx_arm", _N),
    "kinetree.models.seed003_arm": ("kinetree.models.arms:zxx_arm", _N),
    "kinetree.models.get('seed003_arm')": ("kinetree.models.get('zxx_arm')", _N),
    # Callables kept in place, which warn through warn().
    "kinetree.Model.swing_twist_layout": (
        "kinetree.ik.kernel.swing_twist_layout:swing_twist_layout",
        _N,
    ),
    # Model's q/v maps behind one attribute, Model.qv (issue 33); served by Model.__getattr__.
    **{f"kinetree.Model.{name}": (f"kinetree.Model.qv.{name}", _N) for name in QV_MOVED},
    "kinetree.Model.v_indices": (
        "kinetree.Model.qv.v_of_coordinates(model.joint_indices(names))",
        _N,
    ),
    "kinetree.anim.retarget(clip, targets, ...)": ("kinetree.anim:edit_by_targets", _N),
    # One meaning per CLI letter: -t is a target position (ik, animate), -f a frame.
    "kinetree view --target/-t": ("kinetree view --frame/-f", _N),
}


def message(old: str) -> str:
    """The warning of ``old``: where it went, and when the old name goes."""
    new, version = MOVED[old]
    return f"{old} moved to {new.replace(':', '.')}; the old name goes in version {version}"


def warn(old: str, stacklevel: int = 3) -> None:
    """Warn that ``old`` (a key of :data:`MOVED`) moved; ``stacklevel`` 3 points at the
    caller of the function that calls this."""
    warnings.warn(message(old), DeprecationWarning, stacklevel=stacklevel)


def _resolve(new: str) -> Any:
    module_name, _, attr = new.partition(":")
    module = importlib.import_module(module_name)
    return getattr(module, attr) if attr else module


def _old_names(module_name: str) -> dict[str, str]:
    """``{name: old dotted name}`` of the entries read as attributes of ``module_name``:
    its own old names, those of old paths that import it, and its moved children."""
    prefixes = [module_name] + [
        old for old, (new, _) in MOVED.items() if new == module_name and ":" not in new
    ]
    out = {}
    for old in MOVED:
        parent, _, name = old.rpartition(".")
        if parent in prefixes and name.isidentifier():
            out[name] = old
    return out


def attributes(
    module_name: str, fallback: Callable[[str], Any] | None = None
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for the module ``module_name`` (PEP 562): an old name of
    the table warns and gives the new object (a moved child module is imported by its old
    path); any other name goes to ``fallback`` (a package's lazy attributes,
    :func:`kinetree._lazy.attach`), else raises :class:`AttributeError`."""

    def __getattr__(name: str) -> Any:
        old = _old_names(module_name).get(name)
        if old is None:
            if fallback is not None:
                return fallback(name)
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        new = MOVED[old][0]
        if ":" not in new:  # a module path: imported by its old name (which warns)
            return importlib.import_module(old)
        warn(old)
        return _resolve(new)

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[module_name])) | set(_old_names(module_name)))

    return __getattr__, __dir__


class _ModulePaths(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports each old module path of :data:`MOVED` as the module at its new place."""

    def __init__(self) -> None:
        self._specs: dict[str, ModuleSpec | None] = {}  # new name -> its own spec

    def find_spec(
        self, fullname: str, path: Any, target: types.ModuleType | None = None
    ) -> ModuleSpec | None:
        entry = MOVED.get(fullname)
        if entry is None or ":" in entry[0]:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: ModuleSpec) -> types.ModuleType:
        new = MOVED[spec.name][0]
        warn(spec.name, stacklevel=4)
        module = importlib.import_module(new)
        self._specs[new] = module.__spec__
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        """Nothing to run: the module at the new place is already imported. Give it back
        its own spec (the import machinery set the old name's)."""
        module.__spec__ = self._specs.get(module.__name__, module.__spec__)


_FINDER = _ModulePaths()


def _stand_in(old: str, new: str) -> types.ModuleType:
    """A plain module whose attributes are read from the module ``new`` (and warn)."""
    module = types.ModuleType(old, f"Deprecated: moved to {new}.")

    def __getattr__(name: str) -> Any:
        if name.startswith("__") and name != "__all__":
            # Tools that walk sys.modules (inspect.getmodule reads every __file__) must
            # neither import the new module nor see a warning meant for the old path.
            raise AttributeError(name)
        warn(old)
        return getattr(importlib.import_module(new), name)

    def __dir__() -> list[str]:
        return dir(importlib.import_module(new))

    module.__getattr__ = __getattr__  # type: ignore[method-assign]
    module.__dir__ = __dir__  # type: ignore[method-assign]
    return module


def module_paths(package: str) -> None:
    """Serve the old module paths below ``package`` (call it at the end of the package's
    ``__init__``): the finder on ``sys.meta_path`` (once), and stand-ins in
    ``sys.modules`` for old names the package uses for something else."""
    held_by = vars(sys.modules[package])
    for old, (new, _) in MOVED.items():
        parent, _, child = old.rpartition(".")
        if parent != package or ":" in new:
            continue
        held = held_by.get(child)
        if held is not None and not isinstance(held, types.ModuleType):
            sys.modules.setdefault(old, _stand_in(old, new))
    if _FINDER not in sys.meta_path:
        sys.meta_path.append(_FINDER)


class _CallablePackage:
    """A package under the old name of a function (``kinetree.anim.retarget``): calling
    it warns (``old``, a key of :data:`MOVED`) and calls the function at the new place;
    every attribute is read from and written to the package itself."""

    __slots__ = ("_module", "_old")

    def __init__(self, module: types.ModuleType, old: str) -> None:
        object.__setattr__(self, "_module", module)
        object.__setattr__(self, "_old", old)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        warn(self._old)
        return _resolve(MOVED[self._old][0])(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._module, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._module, name, value)

    def __delattr__(self, name: str) -> None:
        delattr(self._module, name)

    def __dir__(self) -> list[str]:
        return dir(self._module)

    def __repr__(self) -> str:
        return repr(self._module)


def callable_package(module: types.ModuleType, old: str) -> Any:
    """``module`` (a package), callable as the function it replaced (``old``)."""
    return _CallablePackage(module, old)
