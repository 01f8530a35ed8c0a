"""A model's collision set-up, and the distance queries over batches of configurations.

:class:`CollisionModel` ties a model to its spheres (:mod:`.spheres`) and to the link
pairs it checks against each other (:mod:`.pairs`); :meth:`CollisionModel.tables` packs
those and a list of obstacles into the arrays of :mod:`.layout` that the kernels read,
which is also what an IK loop calls once per problem. :meth:`Model.distance` and
:meth:`Model.in_collision` use :func:`collision_model` with its defaults.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .. import geometry as geo
from .._cache import PerModel
from .._compile import notice
from .._threads import run_chunks
from .._validate import as_array, check_keywords, check_positive
from ..errors import UnknownNameError, UnsupportedError, unknown_name
from ..kinematics import needed_nodes, packed
from ..model import Model
from . import _kernels
from .layout import (
    OUT_DISTANCE,
    OUT_NORMAL,
    OUT_POINT_A,
    OUT_POINT_B,
    OUT_SIZE,
    pack_obstacle_rows,
    pack_pairs,
)
from .pairs import (
    METADATA_KEY,
    Pairs,
    adjacent_pairs,
    moved_nodes,
    moves_between,
    pair_key,
    read_srdf,
)
from .spheres import RobotSpheres, robot_spheres
from .world import Obstacle, obstacle_rows, obstacle_tuple

__all__ = [
    "CollisionModel",
    "CollisionTables",
    "DistanceResult",
    "collision_model",
    "find_disabled_pairs",
]

ObstacleLike = Obstacle | geo.Geometry


@dataclass(frozen=True, eq=False)
class CollisionTables:
    """Everything the kernels read for one scene (layouts in :mod:`kinetree.collision.layout`).

    ``pair_names[i]`` names the two members of ``pairs[i]``: (link, obstacle name) or
    (link, link). ``nodes`` are the model nodes FK must visit (``fk_nodes``' argument).
    """

    spheres: np.ndarray
    links: np.ndarray
    obstacles: np.ndarray
    obstacle_data: np.ndarray
    pairs: np.ndarray
    pair_names: tuple[tuple[str, str], ...]
    nodes: np.ndarray
    #: Pairs left out because no moving coordinate changes their relative pose (see
    #: :meth:`CollisionModel.tables`' ``moving``): (link, obstacle name or link).
    left_out: tuple[tuple[str, str], ...] = ()

    @property
    def scene(
        self,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(nodes, spheres, links, obstacles, obstacle_data, pairs)``: what every
        collision kernel reads after ``(q, fdata, idata)``, in its order."""
        return self.nodes, self.spheres, self.links, self.obstacles, self.obstacle_data, self.pairs


@dataclass(frozen=True, eq=False)
class DistanceResult:
    """The closest pair per configuration (shapes: the batch dimensions of ``q``).

    ``distance`` [m] signed (negative: penetration; inf with nothing to check);
    ``pair`` index into ``pair_names`` (-1: none); ``point_a`` on the robot link,
    ``point_b`` on the other member, ``normal`` unit from B towards A, all (..., 3)
    in the world frame [m].
    """

    distance: np.ndarray
    pair: np.ndarray
    point_a: np.ndarray
    point_b: np.ndarray
    normal: np.ndarray
    pair_names: tuple[tuple[str, str], ...]

    @property
    def closest(self) -> Any:
        """Names of the closest pair: a ``(a, b)`` tuple for one configuration, a nested
        list of them for a batch (None where there was nothing to check)."""
        flat = self.pair.reshape(-1).tolist()
        names = [self.pair_names[i] if i >= 0 else None for i in flat]
        if self.pair.ndim == 0:
            return names[0]
        grid = np.empty(len(names), dtype=object)
        grid[:] = names
        return grid.reshape(self.pair.shape).tolist()

    def __float__(self) -> float:
        return float(self.distance)


@dataclass(frozen=True, eq=False)
class CollisionModel:
    """A model's spheres and the link pairs checked against each other (``self_pairs``,
    indices into ``spheres.links``); ``disabled`` the pairs skipped, with reasons."""

    model: Model
    spheres: RobotSpheres
    disabled: Mapping[tuple[str, str], str]
    self_pairs: tuple[tuple[int, int], ...]
    #: Packed scenes by the identity of their (immutable) obstacles, which it keeps alive.
    _scenes: dict[tuple[object, ...], tuple[object, CollisionTables]] = field(
        default_factory=dict, repr=False
    )

    def tables(
        self,
        obstacles: Iterable[ObstacleLike] | ObstacleLike = (),
        self_collision: bool = True,
        ignore: Iterable[tuple[str, str]] = (),
        moving: np.ndarray | None = None,
    ) -> CollisionTables:
        """Pack ``obstacles`` and the pairs to check: every link against every obstacle,
        then (``self_collision``) the enabled link pairs; pairs named in ``ignore``
        (link, obstacle name or link) are left out. ``moving`` (nq bools, the coordinates
        a solver moves; None: all) leaves out the pairs whose relative pose none of them
        changes (two fingers on a hand that IK does not open, a base link on the table),
        named in ``left_out``: no step can change their distance, so checking them could
        only fail every solve. Cached per scene: obstacles are immutable, so the same
        obstacle objects pack to the same tables."""
        obs = obstacle_tuple(obstacles)
        ign = tuple(tuple(p) for p in ignore)
        mov = None if moving is None else np.asarray(moving, dtype=bool).reshape(self.model.nq)
        key = (
            tuple(id(o) for o in obs),
            bool(self_collision),
            ign,
            None if mov is None else mov.tobytes(),
        )
        hit = self._scenes.get(key)
        if hit is not None:
            return hit[1]
        tables = self._pack(obs, self_collision, ign, mov)
        if len(self._scenes) >= 64:
            self._scenes.clear()
        self._scenes[key] = (obs, tables)
        return tables

    def _pack(
        self,
        obstacles: tuple[ObstacleLike, ...],
        self_collision: bool,
        ignore: tuple[tuple[str, ...], ...],
        moving: np.ndarray | None = None,
    ) -> CollisionTables:
        rows, names = obstacle_rows(obstacles)
        skip = {pair_key(a, b) for a, b in ignore}
        links = self.spheres.links
        valid = set(links) | set(names)
        for a, b in skip:
            for n in (a, b):
                if n not in valid:
                    msg = str(unknown_name("name", n, sorted(valid)))
                    raise UnknownNameError(
                        f"ignore: {msg} (links with collision geometry and obstacles)"
                    )
        ob_pairs = [
            (i, o)
            for i in range(len(links))
            for o in range(len(rows))
            if pair_key(links[i], names[o]) not in skip
        ]
        self_pairs = [
            (a, b)
            for a, b in self.self_pairs
            if self_collision and pair_key(links[a], links[b]) not in skip
        ]
        left_out: list[tuple[str, str]] = []
        if moving is not None:
            sphere_nodes = self.spheres.nodes
            moved = moved_nodes(self.model, moving)
            # A link against the world: fixed when nothing on its path from the root moves.
            still = [
                not moved[self.model.ancestors(int(sphere_nodes[i]))].any()
                for i in range(len(links))
            ]
            left_out += [(links[a], names[o]) for a, o in ob_pairs if still[a]]
            ob_pairs = [(a, o) for a, o in ob_pairs if not still[a]]
            rigid = [
                not moves_between(self.model, moved, int(sphere_nodes[a]), int(sphere_nodes[b]))
                for a, b in self_pairs
            ]
            left_out += [(links[a], links[b]) for (a, b), r in zip(self_pairs, rigid) if r]
            self_pairs = [p for p, r in zip(self_pairs, rigid) if not r]
        obstacles_table, data = pack_obstacle_rows(rows)
        pair_names = tuple((links[a], names[o]) for a, o in ob_pairs) + tuple(
            (links[a], links[b]) for a, b in self_pairs
        )
        nodes = needed_nodes(self.model, tuple(self.spheres.nodes.tolist()))
        return CollisionTables(
            self.spheres.spheres,
            self.spheres.link_table,
            obstacles_table,
            data,
            pack_pairs(ob_pairs, self_pairs),
            pair_names,
            nodes,
            tuple(left_out),
        )

    def _batch(self, q: ArrayLike) -> tuple[np.ndarray, tuple[int, ...]]:
        qa = as_array(q, "q", (self.model.nq,))
        batch = qa.shape[:-1]
        Q = qa.reshape(int(np.prod(batch, dtype=np.int64)), self.model.nq)
        return np.require(Q, np.float64, ("C", "W")), batch

    def _closest(
        self, q: ArrayLike, t: CollisionTables, stop_below: float
    ) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
        Q, batch = self._batch(q)
        fdata, idata = packed(self.model)
        N = Q.shape[0]
        out = np.empty((N, OUT_SIZE))
        arg = np.empty(N, dtype=np.int64)
        with notice(_kernels.distance_rows):
            run_chunks(
                lambda a, b: _kernels.distance_rows(
                    Q,
                    fdata,
                    idata,
                    *t.scene,
                    stop_below,
                    out,
                    arg,
                    a,
                    b,
                ),
                N,
                512,
            )
        return out, arg, batch

    def distance(
        self,
        q: ArrayLike,
        obstacles: Iterable[ObstacleLike] | ObstacleLike = (),
        self_collision: bool = True,
        ignore: Iterable[tuple[str, str]] = (),
    ) -> DistanceResult:
        """Signed minimum distance [m] over every checked pair at ``q`` (..., nq), and the
        closest pair; batched over the leading dimensions of ``q``, on every core."""
        t = self.tables(obstacles, self_collision, ignore)
        out, arg, batch = self._closest(q, t, -np.inf)
        none = arg < 0
        out[none, OUT_DISTANCE] = np.inf
        d = out[:, OUT_DISTANCE].reshape(batch)
        return DistanceResult(
            d,
            arg.reshape(batch),
            out[:, OUT_POINT_A : OUT_POINT_A + 3].reshape(*batch, 3),
            out[:, OUT_POINT_B : OUT_POINT_B + 3].reshape(*batch, 3),
            out[:, OUT_NORMAL : OUT_NORMAL + 3].reshape(*batch, 3),
            t.pair_names,
        )

    def in_collision(
        self,
        q: ArrayLike,
        obstacles: Iterable[ObstacleLike] | ObstacleLike = (),
        self_collision: bool = True,
        margin: float = 0.0,
        ignore: Iterable[tuple[str, str]] = (),
    ) -> Any:
        """Whether some checked pair is closer than ``margin`` [m] (0: touching or
        penetrating) at ``q``: a bool, or a bool array of ``q``'s batch shape. The search
        stops at the first such pair."""
        m = check_positive(margin, "margin [m]", allow_zero=True)
        t = self.tables(obstacles, self_collision, ignore)
        out, arg, batch = self._closest(q, t, m)
        hit = (arg >= 0) & (out[:, OUT_DISTANCE] < m)
        return bool(hit[0]) if batch == () else hit.reshape(batch)

    def pair_distances(
        self,
        q: ArrayLike,
        obstacles: Iterable[ObstacleLike] | ObstacleLike = (),
        self_collision: bool = True,
        cutoff: float = np.inf,
        ignore: Iterable[tuple[str, str]] = (),
    ) -> tuple[np.ndarray, tuple[tuple[str, str], ...]]:
        """Every pair's row (layout ``OUT_*``) at ``q``: ``(..., n_pairs, OUT_SIZE)``, and
        the pair names. Pairs farther than ``cutoff`` [m] hold a lower bound."""
        t = self.tables(obstacles, self_collision, ignore)
        Q, batch = self._batch(q)
        fdata, idata = packed(self.model)
        out = np.empty((Q.shape[0], t.pairs.shape[0], OUT_SIZE))
        cut = float(cutoff)
        with notice(_kernels.pair_rows):
            run_chunks(
                lambda a, b: _kernels.pair_rows(
                    Q,
                    fdata,
                    idata,
                    *t.scene,
                    cut,
                    out,
                    a,
                    b,
                ),
                Q.shape[0],
                256,
            )
        return out.reshape(*batch, t.pairs.shape[0], OUT_SIZE), t.pair_names


def _all_pairs(links: tuple[str, ...]) -> list[tuple[int, int]]:
    return [(a, b) for a in range(len(links)) for b in range(a + 1, len(links))]


def find_disabled_pairs(
    model: Model,
    samples: int = 10_000,
    rng: np.random.Generator | int | None = 0,
    *,
    spheres: RobotSpheres | None = None,
    never: bool = True,
    default: bool = True,
) -> Pairs:
    """Link pairs to skip in self-collision checks, found the way robot set-up tools do:
    ``"Adjacent"`` (joined in the tree), ``"Always"`` (in contact at every one of
    ``samples`` random configurations within the limits) and, with ``never``,
    ``"Never"`` (in contact at none of them; a rare collision can hide from the samples,
    so more samples are safer) and, with ``default``, ``"Default"`` (in contact at
    ``model.neutral()``, which MoveIt's set-up assistant also skips: penetrating there
    deeper than twice the spheres' ``max_overshoot``, so that a pair merely close at
    neutral, which the spheres make touch, stays checked). Contact is judged on the spheres
    (``spheres``, default :func:`robot_spheres` of the model), which hold the exact
    geometry: a pair never in contact on the spheres never was on the meshes at those
    samples either.
    """
    n = int(check_positive(samples, "samples"))
    sp = spheres if spheres is not None else robot_spheres(model)
    links = sp.links
    out: Pairs = {k: "Adjacent" for k in adjacent_pairs(model, links)}
    candidates = [(a, b) for a, b in _all_pairs(links) if pair_key(links[a], links[b]) not in out]
    if not candidates:
        return out
    cm = CollisionModel(model, sp, dict(out), tuple(candidates))
    Q = model.random_configuration(n, rng=rng)
    rows, names = cm.pair_distances(Q, (), True, cutoff=0.0)
    touching = rows[..., OUT_DISTANCE] < 0.0  # (n, pairs)
    at_neutral, _ = cm.pair_distances(model.neutral(), (), True, cutoff=0.0)
    # In contact at neutral on the exact geometry, as far as the spheres can tell: deeper
    # than the two links' spheres may reach beyond it (a pair merely close there, which the
    # spheres' overshoot makes touch, stays checked).
    deep = -2.0 * sp.max_overshoot
    for k, (a, b) in enumerate(names):
        if default and at_neutral[k, OUT_DISTANCE] < deep:
            out[pair_key(a, b)] = "Default"
        elif np.all(touching[:, k]):
            out[pair_key(a, b)] = "Always"
        elif never and not np.any(touching[:, k]):
            out[pair_key(a, b)] = "Never"
    return out


_CACHE: PerModel[CollisionModel] = PerModel()


def _meshed_hint(model: Model) -> str:
    """Where a built-in robot without shapes (the DH-built Panda and UR arms) finds its
    meshed twin, or nothing for other models."""
    from ..models.descriptions import DESCRIPTIONS, description_file

    desc = DESCRIPTIONS.get(model.name)
    if desc is None:
        return ""
    found = description_file(model.name)
    where = (
        f"installed: {found}"
        if found is not None
        else f"pip install 'kinetree[meshes]' ({desc.distribution}) first"
    )
    return (
        f". The built-in {model.name!r} is built from its DH table, without shapes; the "
        f"same robot with {desc.distribution}'s meshes has them: "
        f"kinetree.models.with_meshes(model)[0] ({where})"
    )


def collision_model(
    model: Model,
    max_spheres: int = 16,
    max_overshoot: float = 0.01,
    *,
    disabled: Mapping[tuple[str, str], str] | str | os.PathLike[str] | None = None,
    samples: int = 10_000,
    skip_missing: bool = False,
) -> CollisionModel:
    """The collision set-up of ``model`` (cached per model and arguments).

    Spheres: :func:`robot_spheres` with ``max_spheres`` and ``max_overshoot`` [m].
    Self-collision pairs skipped: ``disabled`` (a mapping, or the path of an SRDF file),
    else the model's SRDF pairs (``kinetree.load(urdf, srdf=...)``), else
    :func:`find_disabled_pairs` with ``samples`` (seeded: the same pairs every time).
    Raises :class:`UnsupportedError` when the model has no collision geometry.
    """
    key: tuple[object, ...] = (max_spheres, max_overshoot, samples, skip_missing)
    cacheable = disabled is None or isinstance(disabled, (str, os.PathLike))
    if isinstance(disabled, (str, os.PathLike)):
        key += (os.fspath(disabled),)
    kept = _CACHE.get(model, key) if cacheable else None
    if kept is not None:
        return kept
    sp = robot_spheres(model, max_spheres, max_overshoot, skip_missing=skip_missing)
    if not sp.links:
        raise UnsupportedError(
            f"model {model.name!r} has no collision geometry (no <collision> shapes were "
            f"loaded), so there is nothing to measure distances from{_meshed_hint(model)}"
        )
    if isinstance(disabled, (str, os.PathLike)):
        pairs: Pairs = read_srdf(disabled, model)
    elif disabled is not None:
        pairs = {}
        for (a, b), reason in disabled.items():
            for name in (a, b):
                if name not in model.frame_names:
                    raise unknown_name("link", name, model.frame_names)
            pairs[pair_key(a, b)] = str(reason)
    elif METADATA_KEY in model.metadata:
        pairs = dict(model.metadata[METADATA_KEY])
    else:
        pairs = find_disabled_pairs(model, samples, 0, spheres=sp)
    links = sp.links
    enabled = tuple(
        (a, b) for a, b in _all_pairs(links) if pair_key(links[a], links[b]) not in pairs
    )
    cm = CollisionModel(model, sp, pairs, enabled)
    if cacheable:
        _CACHE.put(model, cm, key)
    return cm


def distance_query(
    model: Model,
    q: ArrayLike,
    obstacles: Any,
    self_collision: bool,
    options: Mapping[str, Any],
    margin: float | None,
) -> Any:
    """:meth:`Model.distance` (``margin`` None) and :meth:`Model.in_collision`."""
    opts = dict(options)
    if opts:
        own = [p for p in inspect.signature(collision_model).parameters if p != "model"]
        check_keywords(opts, ["ignore", *own], "distance" if margin is None else "in_collision")
    ignore = opts.pop("ignore", ())
    cm = collision_model(model, **opts)
    if margin is None:
        return cm.distance(q, obstacles, self_collision, ignore)
    return cm.in_collision(q, obstacles, self_collision, margin, ignore)
