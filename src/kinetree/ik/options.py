"""Every IK option in one frozen, typed object, validated once and used as a cache key.

Long because it keeps every option's validation beside its field and default, and the
keyword memo (:func:`resolve`) beside the fields it freezes: split, the two would drift.

``Model.ik(target, frame, **options)`` stays the friendly entry point: keyword
options become an :class:`IKOptions` through :func:`resolve`, which remembers the
conversion, so a list given as ``active=[...]`` costs what a tuple costs.
"""

from __future__ import annotations

import dataclasses
import math
import operator
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from .. import _validate
from ..errors import InvalidValueError, UnknownNameError, UnsupportedError
from .method_table import COLLISION_METHODS, DEFAULT_MAX_ITER, KERNEL_METHODS, METHODS, ROWS

if TYPE_CHECKING:
    from ..model import Model

__all__ = [
    "DEFAULT_OPTIONS",
    "KERNEL_METHODS",
    "METHODS",
    "MIN_TOLERANCE",
    "OPTION_NAMES",
    "IKOptions",
    "IKPrior",
    "resolve",
]

#: Smallest tolerance accepted [m or rad]: below it the error of FK in float64 itself
#: (about 1e-15 of the model's size) would decide success.
MIN_TOLERANCE = 1e-12
#: Largest ``max_iter`` and ``restarts`` accepted.
MAX_COUNT = _validate.MAX_COUNT
#: Most iterates kept by ``record=True`` (the first ones are kept).
MAX_HISTORY = 100_000
#: Collision-aware steps: pairs closer than ``margin + COLLISION_INFLUENCE`` [m] become
#: rows of the step's QP (and are measured exactly every iteration).
COLLISION_INFLUENCE = 0.1
#: The QP keeps ``margin + COLLISION_BUFFER`` [m], so the curvature a linearised row
#: misses over one step does not cost the margin.
COLLISION_BUFFER = 1e-3
#: Largest change of one joint per collision-aware iteration [rad or m] (also bounded by
#: ``max_joint_step``): a step stays short enough for its rows to describe it.
COLLISION_MAX_STEP = 0.3
#: Random configurations drawn per restart of a collision-aware solve (the first clear
#: one is kept, else the clearest).
COLLISION_SEEDS = 8

_COMPARED: tuple[dataclasses.Field[Any], ...] = ()  # set below the class


def _bool(name: str, v: Any) -> bool:
    return bool(_validate.check_bool(v, name))


def _count(name: str, v: Any, lo: int = 0) -> int:
    return _validate.check_count(v, name, lo)


def _number(name: str, v: Any, *, zero: bool = False, unit: str = "") -> float:
    try:
        if isinstance(v, complex | np.complexfloating):
            raise TypeError  # float() of a numpy complex drops the imaginary part
        x = float(v)
    except (TypeError, ValueError, OverflowError):
        raise InvalidValueError(f"{name} must be a number{unit}, got {v!r}") from None
    if isinstance(v, bool) or not math.isfinite(x) or x < 0.0 or (x == 0.0 and not zero):
        bound = ">= 0" if zero else "> 0"
        raise InvalidValueError(f"{name} must be finite and {bound}{unit}, got {v!r}")
    return x


def _tolerance(v: Any) -> tuple[float, float]:
    pair = v if isinstance(v, (tuple, list, np.ndarray)) else (v, v)
    if len(pair) != 2:
        raise InvalidValueError(
            f"tol must be one number or a pair (position [m], rotation [rad]), got {v!r}"
        )
    out = []
    for name, x in zip(("position tolerance", "rotation tolerance"), pair):
        t = _number(f"tol ({name})", x)
        if t < MIN_TOLERANCE:
            raise InvalidValueError(
                f"tol ({name}) must be at least {MIN_TOLERANCE:g} (float64 FK is not more "
                f"exact than that), got {x!r}"
            )
        out.append(t)
    return out[0], out[1]


def _names(name: str, v: Any) -> tuple[str, ...] | None:
    if v is None:
        return None
    if isinstance(v, str):
        return (v,)
    if isinstance(v, (list, tuple)) and all(isinstance(s, str) for s in v):
        return tuple(v)
    raise InvalidValueError(f"{name} must be a joint/frame name or a list of names, got {v!r}")


@runtime_checkable
class IKPrior(Protocol):
    """What ``prior=`` must offer (:class:`kinetree.learn.PosePrior` does): a start.

    With ``prior=p``, :func:`kinetree.ik.solve` asks ``p.start(model, targets, q0)`` for
    one configuration ``(nq,)`` of ``model`` that suits ``targets`` (``{frame:
    target}``; ``q0`` the caller's start or None), then solves the targets from it with
    it as the rest pose (``rest=``): the targets are met by the ordinary solver and the
    prior's pose fills the freedom they leave (:mod:`kinetree.ik.methods.prior`). A start
    never decides success: the result is judged on FK as every result is."""

    def start(self, model: Model, targets: dict[str, Any], q0: Any) -> np.ndarray:
        """The configuration ``(nq,)`` [rad or m] the solve starts from and prefers."""
        ...


@dataclass(frozen=True)
class IKOptions:
    """Options of :func:`kinetree.ik.solve` (``Model.ik``), each with its default and unit.

    Build one directly (``IKOptions(method="dls", tol=1e-8)``) or let ``Model.ik``
    build it from keyword arguments; every field is checked once, here, and a bad
    value raises :class:`~kinetree.errors.InvalidValueError` naming the option and its
    valid range. Instances are immutable and hashable: the cache key of a solve's
    compiled layout.

    Attributes:
        method: one of :data:`METHODS`. ``"auto"``: damped least squares with
            adaptive damping, the active set at limits, random restarts and a time
            budget.
        active: joint, group or preset names that may move; None: all.
        tol: (position [m], rotation [rad]); a single number sets both. At least
            :data:`MIN_TOLERANCE`.
        max_iter: iterations per attempt; None: 30 for auto, 200 pinv/dls, 2000
            transpose, 500 sdls/ccd.
        restarts: random restarts within the limits after the first attempt; None:
            200 for auto, else 0.
        time_budget: wall-clock budget per solve [s]; None: unlimited; ``"default"``:
            0.05 s for auto, unlimited for the other methods.
        step: scale of each step (alpha).
        damping: DLS damping, ``lambda = damping * |e|^2 / 2 + lambda_min``.
        lambda_min: smallest DLS damping.
        cutoff: relative singular value cut-off of pinv and sdls (> 0).
        max_joint_step: largest change of one joint per iteration [rad or m]: the
            per-step joint speed limit. Every iterate honours it (the step is scaled
            down to it, and a joint pinned at a limit moves at most that far towards
            it); collision-aware steps keep it as a bound of their QP (at most
            ``COLLISION_MAX_STEP``).
        stall_iter: restart after this many iterations without 1 % progress.
        normalized_step: seed 001's step: the task error is clipped to this length
            [m or rad] per iteration; None: off.
        pinv_form: ``"svd"`` (V S^-1 U^T) or ``"normal"`` (J^T (J J^T)^-1).
        rest: preferred configuration (``nq`` values) or ``"neutral"``, pulled in the
            null space of the task with ``rest_gain``; None: no pull.
        rest_gain: gain of that pull (per iteration, dimensionless).
        respect_limits: keep every iterate within the joint limits.
        clamp_target: aim an unreachable position at the nearest reachable point
            (seed 000, section 3.1); the result stays ``success=False`` and its errors
            are measured to the original target.
        record: keep the iterates (``result.history``; single solves; at most
            :data:`MAX_HISTORY` rows).
        pin: frame names that keep their pose at ``q0`` (feet planted while a hand
            reaches).
        seed: seed of the restarts (problem ``b`` of a batch uses ``seed + b``).
        rng: a ``numpy.random.Generator`` (or seed for one) that draws a new seed for
            each call; overrides ``seed``.
        obstacles: world obstacles (``kinetree.Box``, ``Sphere``, ``Capsule``,
            ``Cylinder``, ``HalfSpace``, ``PointCloud``, ``TriangleMesh`` or
            ``kinetree.geometry`` shapes) every link keeps ``margin`` from; a tuple.
        self_collision: keep the enabled link pairs (SRDF or found ones) ``margin``
            apart too; None: True when ``obstacles`` are given, else False. Collision
            checks are on when either asks for them (methods ``auto`` and ``dls``).
        margin: the clearance every checked pair keeps [m], >= 0, measured on the
            spheres that contain the links' collision geometry.
        ignore: pairs of names (link, obstacle name or link) left out of the checks.
        collision_model: the :class:`kinetree.collision.CollisionModel` to use (sphere
            coarseness, disabled pairs); None: ``kinetree.collision.collision_model(model)``.
        seeds: learned starts (a :class:`kinetree.learn.LearnedIK`, or any object with a
            ``frame`` name and ``configurations(model, T, n, q0, seed, temperature)``
            returning ``(n, nq)`` starts, best first): after one attempt from ``q0`` (when
            given), the solve tries a few learned samples for the target, then random
            restarts (:mod:`kinetree.ik.methods.seeded`). None: ``q0``, then random restarts.
        prior: a pose prior to start from and prefer: the name of a shipped one
            (``"human"``, :data:`kinetree.learn.SHIPPED`), the path of a saved one
            (``.npz``), or any object with ``start(model, targets, q0)`` (an
            :class:`IKPrior`, such as a :class:`kinetree.learn.PosePrior`). It sets the
            rest pose, so not with ``rest=``; not with ``seeds=`` (both choose starts).
        iteration_budget: iterations over all attempts of one solve (each problem of a
            batch has its own), the compiled methods only: the solve then returns the
            best configuration found, ``success`` judged on it as always (``False``
            with a "not converged" message unless it is on target). A budget counted
            in iterations, not seconds: the same answer on any machine, and a cap on
            the slowest problems of a GPU batch. None: no such cap (``max_iter`` per
            attempt, ``restarts`` and ``time_budget`` still apply).
    """

    method: str = "auto"
    active: tuple[str, ...] | None = None
    tol: tuple[float, float] = (1e-6, 1e-6)
    max_iter: int | None = None
    restarts: int | None = None
    time_budget: float | str | None = "default"
    step: float = 1.0
    damping: float = 0.1
    lambda_min: float = 1e-9
    cutoff: float = 1e-6
    max_joint_step: float = 2.0
    stall_iter: int = 4
    normalized_step: float | None = None
    pinv_form: str = "svd"
    rest: tuple[float, ...] | str | None = None
    rest_gain: float = 0.1
    respect_limits: bool = True
    clamp_target: bool = True
    record: bool = False
    pin: tuple[str, ...] = ()
    seed: int = 0
    rng: Any = field(default=None, compare=False)
    obstacles: tuple[Any, ...] = ()
    self_collision: bool | None = None
    margin: float = 0.005
    ignore: tuple[tuple[str, str], ...] = ()
    collision_model: Any = None
    seeds: Any = None
    iteration_budget: int | None = None
    prior: Any = None

    def __post_init__(self) -> None:
        s = object.__setattr__
        if not isinstance(self.method, str) or self.method not in METHODS:
            raise UnknownNameError(
                f"method {self.method!r} not found; valid methods are: {', '.join(METHODS)}"
            )
        s(self, "active", _names("active", self.active))
        s(self, "pin", _names("pin", self.pin) or ())
        s(self, "tol", _tolerance(self.tol))
        if self.max_iter is not None:
            s(self, "max_iter", _count("max_iter", self.max_iter))
        if self.restarts is not None:
            s(self, "restarts", _count("restarts", self.restarts))
        if self.iteration_budget is not None:
            s(self, "iteration_budget", _count("iteration_budget", self.iteration_budget, 1))
            if self.method not in KERNEL_METHODS:
                raise InvalidValueError(
                    f"iteration_budget is kept by the compiled methods only "
                    f"({', '.join(KERNEL_METHODS)}), not by method {self.method!r}"
                )
        if self.time_budget is not None and not (
            isinstance(self.time_budget, str) and self.time_budget == "default"
        ):
            s(self, "time_budget", _number("time_budget", self.time_budget, unit=" [s]"))
        for name in ("step", "max_joint_step"):
            s(self, name, _number(name, getattr(self, name)))
        for name in ("damping", "lambda_min"):
            s(self, name, _number(name, getattr(self, name), zero=True))
        # A cut-off of 0 keeps every singular value, however small: steps blow up.
        s(self, "cutoff", _number("cutoff", self.cutoff))
        s(self, "rest_gain", _number("rest_gain", self.rest_gain))
        s(self, "stall_iter", _count("stall_iter", self.stall_iter))
        if self.normalized_step is not None:
            s(self, "normalized_step", _number("normalized_step", self.normalized_step))
        if self.pinv_form not in ("svd", "normal"):
            raise InvalidValueError(f"pinv_form must be 'svd' or 'normal', got {self.pinv_form!r}")
        for name in ("respect_limits", "clamp_target", "record"):
            s(self, name, _bool(name, getattr(self, name)))
        if self.rest is not None and not (isinstance(self.rest, str) and self.rest == "neutral"):
            if isinstance(self.rest, str):
                raise InvalidValueError(
                    f"rest must be 'neutral' or a configuration, got {self.rest!r}"
                )
            try:
                r = np.asarray(self.rest, dtype=np.float64)
            except (TypeError, ValueError):
                raise InvalidValueError(
                    f"rest must be 'neutral' or a configuration, got {self.rest!r}"
                ) from None
            if r.ndim != 1 or not np.all(np.isfinite(r)):
                raise InvalidValueError(
                    f"rest must be one finite configuration (nq,), got shape {r.shape}"
                )
            s(self, "rest", tuple(r.tolist()))
        if (
            isinstance(self.seed, bool)
            or not isinstance(self.seed, (int, np.integer))
            or not (0 <= self.seed < 2**63 - 2**32)
        ):
            raise InvalidValueError(
                f"seed must be an integer in [0, 2**63 - 2**32), got {self.seed!r}"
            )
        s(self, "seed", int(self.seed))
        if self.rng is not None and not isinstance(self.rng, np.random.Generator):
            # A plain seed given as rng: the same restarts every call, like ``seed``.
            if (
                isinstance(self.rng, bool)
                or not isinstance(self.rng, (int, np.integer))
                or (self.rng < 0)
            ):
                raise InvalidValueError(
                    f"rng must be a numpy.random.Generator or an integer seed >= 0, got "
                    f"{self.rng!r}"
                )
            s(self, "seed", int(np.random.default_rng(int(self.rng)).integers(0, 2**62)))
            s(self, "rng", None)
        self._check_collision()
        if self.seeds is not None:
            if not (
                isinstance(getattr(self.seeds, "frame", None), str)
                and callable(getattr(self.seeds, "configurations", None))
            ):
                raise InvalidValueError(
                    "seeds must be a kinetree.learn.LearnedIK (kinetree.learn.train_ik or "
                    f"load_ik) or None, got {type(self.seeds).__name__}"
                )
            if self.method == "analytic":
                raise InvalidValueError(
                    "method 'analytic' takes no starts, so no seeds=; use another method"
                )
        if self.prior is not None:
            self._check_prior()
        # Hashed once: the options are the cache key of every solve.
        s(self, "_hash", hash(tuple(getattr(self, f.name) for f in _COMPARED)))

    def __hash__(self) -> int:
        return self._hash  # type: ignore[attr-defined]

    def _check_prior(self) -> None:
        """A prior is a name, a path or an :class:`IKPrior`, and leaves the start and the
        rest pose to itself."""
        if not isinstance(self.prior, (str, os.PathLike)) and not isinstance(self.prior, IKPrior):
            raise InvalidValueError(
                "prior must be a shipped prior's name ('human'), the path of a saved one "
                "(.npz), or an object with start(model, targets, q0) (kinetree.ik.IKPrior, "
                f"such as a kinetree.learn.PosePrior), got {type(self.prior).__name__}"
            )
        if self.rest is not None:
            raise UnsupportedError("prior= sets the rest pose; pass prior= or rest=, not both")
        if self.seeds is not None:
            raise InvalidValueError("prior= and seeds= both choose the starts; give one of them")
        if self.method == "analytic":
            raise InvalidValueError(
                "method 'analytic' takes no start, so no prior=; use another method"
            )

    def _check_collision(self) -> None:
        """Obstacles to a tuple of obstacles, the pairs to ignore to a tuple of name pairs,
        the margin checked; a method that cannot keep margins is refused."""
        s = object.__setattr__
        s(self, "margin", _number("margin", self.margin, zero=True, unit=" [m]"))
        if (
            self.obstacles == ()
            and self.self_collision is None
            and self.ignore == ()
            and self.collision_model is None
        ):
            return  # the common case: no collision checks, nothing to import
        from ..collision.robot import CollisionModel
        from ..collision.world import Obstacle, as_obstacle, obstacle_tuple
        from ..geometry import Geometry

        obs = self.obstacles
        obs = obstacle_tuple(() if obs is None else obs)
        for i, o in enumerate(obs):
            if not isinstance(o, (Obstacle, Geometry)):
                raise InvalidValueError(
                    f"obstacles[{i}] must be a kinetree.Box, Sphere, Capsule, Cylinder, "
                    f"HalfSpace, PointCloud, TriangleMesh or a kinetree.geometry shape, got "
                    f"{type(o).__name__}"
                )
        s(self, "obstacles", tuple(o if isinstance(o, Obstacle) else as_obstacle(o) for o in obs))
        if self.self_collision is not None:
            s(self, "self_collision", _bool("self_collision", self.self_collision))
        ign = self.ignore
        if isinstance(ign, (list, tuple)) and all(
            isinstance(p, (list, tuple)) and len(p) == 2 and all(isinstance(n, str) for n in p)
            for p in ign
        ):
            s(self, "ignore", tuple((str(a), str(b)) for a, b in ign))
        else:
            raise InvalidValueError(
                f"ignore must be a list of name pairs [(link, obstacle or link), ...], got {ign!r}"
            )
        if self.collision_model is not None and not isinstance(
            self.collision_model, CollisionModel
        ):
            raise InvalidValueError(
                "collision_model must be a kinetree.collision.CollisionModel (see "
                f"kinetree.collision.collision_model), got {type(self.collision_model).__name__}"
            )
        if self.collision and self.method not in COLLISION_METHODS:
            raise InvalidValueError(
                f"method {self.method!r} cannot keep collision margins; with obstacles= or "
                f"self_collision=True use one of: {', '.join(COLLISION_METHODS)}"
            )

    # --- derived values ----------------------------------------------------------------

    @property
    def collision(self) -> bool:
        """Whether the solve checks collisions (obstacles given, or self-collision asked)."""
        return bool(self.obstacles) or self.self_collision is True

    @property
    def self_pairs(self) -> bool:
        """Whether link pairs are checked against each other."""
        if self.self_collision is None:
            return bool(self.obstacles)
        return self.self_collision

    @property
    def kernel_method(self) -> str:
        """The compiled driver that runs this method (``auto`` and other methods: dls)."""
        return ROWS[self.method].driver

    @property
    def iterations(self) -> int:
        """``max_iter`` with the method's default filled in."""
        if self.max_iter is not None:
            return self.max_iter
        return DEFAULT_MAX_ITER[self.method]

    @property
    def attempts(self) -> int:
        """``restarts`` with the method's default filled in."""
        if self.restarts is not None:
            return self.restarts
        return 200 if self.method == "auto" else 0

    @property
    def budget(self) -> float:
        """``time_budget`` with the method's default filled in [s]; 0: unlimited."""
        if self.time_budget is None:
            return 0.0
        if isinstance(self.time_budget, str):  # "default"
            return 0.05 if self.method == "auto" else 0.0
        return float(self.time_budget)

    @property
    def history_rows(self) -> int:
        """Rows of history kept by ``record=True`` (0 without it)."""
        if not self.record:
            return 0
        return min(MAX_HISTORY, (self.iterations + 1) * (self.attempts + 1))

    def draw_seed(self) -> int:
        """The seed of one call: drawn from ``rng`` when given, else ``seed``."""
        if self.rng is not None:
            return int(self.rng.integers(0, 2**62))
        return self.seed

    def layout_key(self) -> IKOptions:
        """These options without the per-call ones (``seed``, ``rng``): what a cached
        layout depends on."""
        if self.seed == 0 and self.rng is None:
            return self
        return dataclasses.replace(self, seed=0, rng=None)


_COMPARED = tuple(f for f in dataclasses.fields(IKOptions) if f.compare)
_FIELDS = frozenset(f.name for f in dataclasses.fields(IKOptions))
#: The keyword names :class:`IKOptions` takes (what ``**options`` of the batch and map
#: functions may hold).
OPTION_NAMES = tuple(sorted(_FIELDS))
DEFAULT_OPTIONS = IKOptions()
_RESOLVED: dict[Any, IKOptions] = {}
#: Distinct keyword sets remembered (then forgotten all at once: a loop that builds new
#: option values every call must not grow memory).
RESOLVED_SIZE = 1024
_SCALARS = frozenset({float, int, bool, str, type(None)})
_MISSING = object()
#: The last keyword options and their IKOptions, as ``(options, values, copies, opts,
#: snap, loose)``:
#: a loop that passes the same objects again (``tol=1e-6`` is one constant object,
#: ``active=names`` one list) is answered by identity, plus, for each list, tuple or array
#: among the values, a comparison with the copy taken when it was resolved (it may have
#: been changed in place since). One tuple, read and replaced whole: a thread never
#: pairs its own values with the options another thread remembered meanwhile.
#: ``snap`` (None unless every value is a scalar or a sequence of names: the options
#: with each list of names copied) holds those copies in place, so that one comparison
#: checks them all; ``loose``: no value among them is an int, a bool or an integral
#: float (the only scalars that equal one of another type), so equality alone decides.
_LAST: list[tuple[Any, ...]] = [({}, (), (), DEFAULT_OPTIONS, None, False)]
_SEQUENCES = (list, tuple)
_STR = frozenset({str})


def resolve(options: Mapping[str, Any]) -> IKOptions:
    """:class:`IKOptions` from keyword options (``q0`` and ``options=`` excluded by the
    caller); remembered per distinct set of values, so keywords cost about what a
    prebuilt :class:`IKOptions` costs (``benchmarks/percall.py``)."""
    if not options:
        return DEFAULT_OPTIONS
    last, values, copies, last_opts, snap, loose = _LAST[0]
    if snap is not None:
        # Scalars and names only: equal to the options remembered (each list of names
        # to the copy taken: it may have changed in place since), and, unless no value
        # could be mistaken for an equal one of another type (``loose``), the same
        # objects. One or two C calls.
        try:
            if options == snap and (loose or all(map(operator.is_, options.values(), values))):
                return last_opts
        except ValueError:  # an array among the values: not the options remembered
            pass
    else:
        # Equality first (one C call, identity shortcut per value), then identity
        # proper: 1, 1.0 and True are equal but validate differently.
        try:
            same = options == last and all(map(operator.is_, options.values(), values))
        except ValueError:  # arrays compared by value: not the same objects anyway
            same = False
        if same:
            for value, copy, of_names in copies:
                if value != copy if of_names else not _unchanged(value, copy):
                    break
            else:
                return last_opts
    try:
        key = tuple([(k, _freeze(v)) for k, v in options.items()])
        found = _RESOLVED.get(key)
    except TypeError:  # an unhashable value: validate without remembering
        key, found = None, None
    if found is not None:
        _remember(options, found)
        return found
    unknown = set(options) - _FIELDS
    if unknown:
        raise InvalidValueError(
            f"unknown IK option(s): {', '.join(sorted(unknown))}; valid options are: "
            f"{', '.join(sorted(_FIELDS | {'q0', 'options'}))}"
        )
    opts = IKOptions(**options)
    if key is not None and not isinstance(options.get("rng"), np.random.Generator):
        if len(_RESOLVED) >= RESOLVED_SIZE:
            _RESOLVED.clear()
        _RESOLVED[key] = opts
    _remember(options, opts)
    return opts


def _remember(options: Mapping[str, Any], opts: IKOptions) -> None:
    """Keep ``options`` for the identity check of :func:`resolve`: immutable scalars and
    tuples of them as they are, lists of them and small numeric arrays with a copy of
    their content."""
    copies: list[tuple[Any, Any, bool]] = []
    snap: dict[str, Any] | None = {}
    loose = True
    for k, v in options.items():
        t = type(v)
        if t in _SCALARS:
            if snap is not None:
                snap[k] = v
            # An int or bool, or a float equal to one (1, 1.0 and True compare equal
            # but validate differently), is answered by identity only.
            loose = loose and (t is str or v is None or (t is float and not v.is_integer()))
            continue
        if snap is not None:
            if t in _SEQUENCES and set(map(type, v)) <= _STR:
                snap[k] = list(v) if t is list else v
            else:
                snap = None
        if t in _SEQUENCES and set(map(type, v)) <= _SCALARS:
            if t is list:
                # Names compare by equality (one type); numbers element by element by
                # identity: 1, 1.0 and True compare equal but validate differently.
                copies.append((v, list(v), set(map(type, v)) <= _STR))
        elif t is np.ndarray and v.dtype.kind in "biuf" and v.size <= 4096:
            copies.append((v, (v.shape, v.dtype, v.tobytes()), False))
        else:
            return  # a generator, a callable, an object array: not remembered by identity
    _LAST[0] = (dict(options), tuple(options.values()), tuple(copies), opts, snap, loose)


def _unchanged(value: Any, copy: Any) -> bool:
    """Whether a remembered list of numbers or array still holds the content copied."""
    if type(value) is np.ndarray:  # copy: (shape, dtype, bytes)
        return bool(
            value.shape == copy[0]
            and (value.dtype is copy[1] or value.dtype == copy[1])  # `is`: 40 ns, == 170
            and value.tobytes() == copy[2]
        )
    return len(value) == len(copy) and all(map(operator.is_, value, copy))


def _freeze(value: Any) -> Any:
    """A hashable stand-in for an option value: lists become tuples, arrays their bytes;
    the type is kept (1, 1.0 and True validate differently)."""
    t = type(value)
    if t in _SCALARS:
        return (t, value)
    if t in _SEQUENCES:
        items = tuple(value)
        if set(map(type, items)) <= _STR:  # names (active=, pin=): the common case
            return ("names", items)
        return ("seq", tuple([_freeze(v) for v in items]))
    if isinstance(value, np.ndarray):
        return ("ndarray", value.shape, value.dtype.str, value.tobytes())
    if isinstance(value, (list, tuple)):
        return ("seq", tuple([_freeze(v) for v in value]))
    return (t, value)
