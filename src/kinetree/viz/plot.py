"""Static pictures: stick figures of a model, panels of several poses, convergence plots.

Long because each kind of picture (stick figure, panels, reach cases, convergence) needs
its own layout code; they share the frame-drawing helpers at the top.

The viz layer is thin: it asks the model for frame poses (:meth:`Model.fk_all`) and
draws them; it adds no kinematics. Everything here uses matplotlib's object API
(:class:`matplotlib.figure.Figure`, never ``pyplot``), so no window opens and no
global state changes. matplotlib is optional (``pip install kinetree[viz]``).

Conventions
-----------
* A *stick figure* joins every frame to its nearest frame ancestor (hidden nodes,
  the inner nodes of ball joints, sit at their joint's point and are skipped).
  The tree is cut into chains (root to leaf, a new chain at every branch), one
  line per chain, so a chain's line data ends at its leaf frame.
* 3D axes by default, with the model's ``metadata["up"]`` axis (``"x"``, ``"y"``
  or ``"z"``, default ``"z"``) drawn vertically. ``plane="xy"|"xz"|"yz"`` draws a
  2D projection in world coordinates instead; planar models (every frame at z = 0,
  every revolute axis along z) get ``plane="xy"`` automatically.
* One scale on every axis, so lengths look right: 2D limits are a square around
  everything drawn; 3D limits are a box around it (no side shorter than 0.4 of the
  longest) with a matching box aspect, so a standing human fills a tall box
  rather than a mostly empty cube.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..drawing import Parts, frame_parents
from ..errors import InvalidValueError, ShapeError, UnsupportedError
from ..model import JointType
from .meshes import DEFAULT_MAX_FACES, MeshLayer, visual_parts

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from ..model import Model

__all__ = ["draw", "draw_many", "plot_convergence", "save_figure", "side_by_side"]

PLANES = ("xy", "xz", "yz")
_AXIS = {"x": 0, "y": 1, "z": 2}
# Display order (horizontal, depth, vertical) of world axes for each "up" axis;
# cyclic permutations, so the picture keeps its handedness.
_UP_ORDER = {"z": (0, 1, 2), "y": (2, 0, 1), "x": (1, 2, 0)}
_TRIAD_COLORS = ("tab:red", "tab:green", "tab:blue")
# Targets: a red cross drawn under the joint markers, so a reached target shows the
# end effector's dot at the cross's centre.
_TARGET_STYLE: dict[str, Any] = {
    "ls": "",
    "marker": "X",
    "ms": 11.0,
    "color": "crimson",
    "mew": 0.0,
    "alpha": 0.9,
    "zorder": 2.5,
}
_SKELETONS_ATTR = "_kinetree_skeletons"
_BOUNDS_ATTR = "_kinetree_bounds"


# --- optional dependency ------------------------------------------------------------


def _require_matplotlib() -> None:
    """Raise :class:`UnsupportedError` unless matplotlib (and pillow) can be imported."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise UnsupportedError(
            "kinetree.viz needs matplotlib; install kinetree[viz] (pip install 'kinetree[viz]')"
        ) from None


def _new_figure(
    figsize: tuple[float, float], plane: str | None = "", *, fixed: bool = False
) -> Figure:
    """A pyplot-free figure with an Agg canvas attached.

    2D figures use constrained layout unless ``fixed``; 3D panels (``plane`` None)
    always get fixed margins, as constrained layout misjudges their axis labels.
    """
    _require_matplotlib()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if plane is None:
        fig = Figure(figsize=figsize)
        fig.subplots_adjust(left=0.0, right=0.94, bottom=0.03, top=0.94, wspace=0.15)
    elif fixed:
        fig = Figure(figsize=figsize)
        fig.subplots_adjust(left=0.13, right=0.96, bottom=0.1, top=0.9)
    else:
        fig = Figure(figsize=figsize, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


# --- validation -------------------------------------------------------------------


def _check_q(model: Model, q: Any, name: str = "q") -> np.ndarray:
    """``q`` as a float ``(dof,)`` array or :class:`ShapeError`."""
    try:
        a = np.asarray(q, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidValueError(f"{name} must be numeric: {exc}") from None
    if a.shape != (model.nq,):
        raise ShapeError(
            f"{name} must have shape ({model.nq},) for model {model.name!r}, got {a.shape}"
        )
    if not np.all(np.isfinite(a)):
        raise InvalidValueError(f"{name} contains NaN or inf")
    return a


def _check_qs(model: Model, qs: Any, name: str = "qs") -> np.ndarray:
    """``qs`` as a float ``(n, dof)`` array (n >= 1) or :class:`ShapeError`."""
    try:
        a = np.asarray(qs, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidValueError(f"{name} must be numeric: {exc}") from None
    if a.ndim != 2 or a.shape[1] != model.nq or a.shape[0] == 0:
        raise ShapeError(
            f"{name} must have shape (n_frames, {model.nq}) for model {model.name!r} "
            f"(one configuration per row, at least one row), got {a.shape}"
        )
    if not np.all(np.isfinite(a)):
        raise InvalidValueError(f"{name} contains NaN or inf")
    return a


def _parse_targets(targets: Any) -> list[np.ndarray]:
    """Targets as a list of ``(3,)`` points and ``(4, 4)`` poses.

    Accepts None, one point, one pose, an ``(k, 3)`` or ``(k, 4, 4)`` array, or a
    sequence mixing points and poses.
    """
    if targets is None:
        return []
    try:
        a = np.asarray(targets, dtype=np.float64)
    except (TypeError, ValueError):
        a = None  # ragged: a mixed sequence of points and poses
    if a is not None:
        if a.shape in ((3,), (4, 4)):
            out = [a]
        elif a.ndim == 2 and a.shape[1] == 3:
            out = list(a)
        elif a.ndim == 3 and a.shape[1:] == (4, 4):
            out = list(a)
        elif a.ndim == 1 and a.size == 0:
            out = []
        else:
            raise ShapeError(
                "targets must be a 3-vector, a 4x4 pose, or a list of them "
                f"((k, 3) or (k, 4, 4)), got an array of shape {a.shape}"
            )
    else:
        out = []
        for t in targets:
            out.extend(_parse_targets(t))
    for t in out:
        if not np.all(np.isfinite(t)):
            raise InvalidValueError("targets contain NaN or inf")
    return out


def _check_frames(model: Model, frames: str | Sequence[str] | None) -> list[int]:
    """Frame-name list -> indices into ``frame_names`` (unknown names raise)."""
    if frames is None:
        return []
    if isinstance(frames, str):
        frames = [frames]
    lookup = {n: i for i, n in enumerate(model.frame_names)}
    out = []
    for f in frames:
        model.frame_index(f)  # raises UnknownNameError listing the valid frames
        out.append(lookup[f])
    return out


# --- model structure (drawing only: which frames to join) --------------------------


def _chains(model: Model) -> list[list[int]]:
    """The frame tree cut into polylines: each starts at a root or a branch point and
    follows first children down to a leaf. Every parent-child segment is in one chain."""
    parents = frame_parents(model)
    kids: list[list[int]] = [[] for _ in parents]
    for f, p in enumerate(parents):
        if p >= 0:
            kids[p].append(f)
    chains: list[list[int]] = []
    starts: list[tuple[int | None, int]] = [(None, f) for f, p in enumerate(parents) if p < 0]
    while starts:
        prev, f = starts.pop(0)
        chain = [f] if prev is None else [prev, f]
        while kids[f]:
            for other in kids[f][1:]:
                starts.append((f, other))
            f = kids[f][0]
            chain.append(f)
        chains.append(chain)
    return chains


def _is_planar(model: Model, tol: float = 1e-9) -> bool:
    """Whether the model moves in the world xy plane: every frame at z = 0 in the
    neutral pose, every revolute axis along z and every prismatic axis in the plane."""
    if np.any(model.hidden & (model.joint_type != JointType.FIXED)):
        return False  # ball joints are three-dimensional
    T = model.fk_all(model.neutral())
    if np.any(np.abs(T[:, 2, 3]) > tol):
        return False
    frame_nodes = np.flatnonzero(~np.asarray(model.hidden, dtype=bool))
    for f, node in enumerate(frame_nodes):
        jt = int(model.joint_type[node])
        if jt == JointType.FIXED:
            continue
        world_axis = T[f, :3, :3] @ model.axis[node]
        if jt == JointType.REVOLUTE and abs(abs(world_axis[2]) - 1.0) > tol:
            return False
        if jt == JointType.PRISMATIC and abs(world_axis[2]) > tol:
            return False
    return True


def _resolve_plane(model: Model, plane: str | None, ax: Any = None) -> str | None:
    """The 2D plane to draw in, or None for 3D."""
    if plane is not None:
        if plane not in PLANES:
            raise UnsupportedError(f"plane {plane!r} is not supported; use one of {PLANES}")
        if ax is not None and getattr(ax, "name", "") == "3d":
            raise UnsupportedError(f"plane={plane!r} needs 2D axes, but ax is 3D")
        return plane
    if ax is not None:
        if getattr(ax, "name", "") == "3d":
            return None
        if _is_planar(model):
            return "xy"
        raise UnsupportedError(
            f"model {model.name!r} is not planar; pass plane= one of {PLANES} to draw it "
            "on 2D axes, or pass 3D axes"
        )
    return "xy" if _is_planar(model) else None


def _up(model: Model) -> str:
    up = str(model.metadata.get("up", "z")).lower()
    return up if up in _UP_ORDER else "z"


def _view(model: Model, P: np.ndarray, plane: str | None) -> np.ndarray:
    """World points ``(..., 3)`` -> display coordinates ``(..., 2)`` or ``(..., 3)``."""
    if plane is not None:
        return P[..., [_AXIS[plane[0]], _AXIS[plane[1]]]]
    return P[..., list(_UP_ORDER[_up(model)])]


def _axis_labels(model: Model, plane: str | None) -> list[str]:
    names = "xyz"
    order = [_AXIS[c] for c in plane] if plane is not None else _UP_ORDER[_up(model)]
    return [f"{names[i]} [{model.units}]" for i in order]


# --- axes setup ---------------------------------------------------------------------


def _make_axes(fig: Figure, plane: str | None, *args: Any) -> Axes:
    if plane is None:
        ax = fig.add_subplot(*args, projection="3d")
        ax.view_init(elev=18.0, azim=-50.0)
    else:
        ax = fig.add_subplot(*args)
    return ax


def _label_axes(ax: Axes, model: Model, plane: str | None) -> None:
    labels = _axis_labels(model, plane)
    ax.set_xlabel(labels[0])
    ax.set_ylabel(labels[1])
    if plane is None:
        from matplotlib.ticker import MaxNLocator

        ax.set_zlabel(labels[2])  # type: ignore[attr-defined]
        for axis, nbins in zip((ax.xaxis, ax.yaxis, ax.zaxis), (4, 4, 5)):  # type: ignore[attr-defined]
            axis.set_major_locator(MaxNLocator(nbins))
        ax.tick_params(labelsize=7)
    else:
        ax.tick_params(labelsize=8)
        ax.grid(True, alpha=0.3)


def _include(ax: Axes, points: np.ndarray) -> None:
    """Grow the axes' record of drawn display-space points by ``points`` (k, dim)."""
    points = np.asarray(points, dtype=np.float64).reshape(-1, points.shape[-1])
    points = points[np.all(np.isfinite(points), axis=1)]
    if points.size == 0:
        return
    lo, hi = points.min(axis=0), points.max(axis=0)
    old = getattr(ax, _BOUNDS_ATTR, None)
    if old is not None and old[0].shape == lo.shape:
        lo, hi = np.minimum(lo, old[0]), np.maximum(hi, old[1])
    setattr(ax, _BOUNDS_ATTR, (lo, hi))


def _apply_cube(ax: Axes, margin: float = 0.08, min_fraction: float = 0.4) -> None:
    """Set limits with one scale on every axis around everything recorded.

    2D: a square. 3D: a box whose sides follow the drawn extent (each side at least
    ``min_fraction`` of the longest) with a matching box aspect, so lengths are
    true and a standing figure fills a tall box instead of a mostly empty cube.
    """
    bounds = getattr(ax, _BOUNDS_ATTR, None)
    if bounds is None:
        return
    lo, hi = bounds
    center = (lo + hi) / 2.0
    longest = float(np.max(hi - lo))
    longest = longest * (1.0 + margin) if longest > 0 else 1.0
    if lo.shape[0] == 3:
        sides = np.maximum((hi - lo) + margin * longest, min_fraction * longest)
    else:
        sides = np.full(2, longest)
    ax.set_xlim(center[0] - sides[0] / 2, center[0] + sides[0] / 2)
    ax.set_ylim(center[1] - sides[1] / 2, center[1] + sides[1] / 2)
    if lo.shape[0] == 3:
        ax.set_zlim(center[2] - sides[2] / 2, center[2] + sides[2] / 2)  # type: ignore[attr-defined]
        ax.set_box_aspect(tuple(sides / longest), zoom=0.86)  # type: ignore[arg-type, call-arg]
    else:
        ax.set_aspect("equal", adjustable="box")


def _scale(ax: Axes) -> float:
    """A length for triads and markers: a fraction of the drawn extent."""
    bounds = getattr(ax, _BOUNDS_ATTR, None)
    if bounds is None:
        return 0.1
    extent = float(np.max(bounds[1] - bounds[0]))
    return 0.08 * extent if extent > 0 else 0.1


def _set_line(line: Any, V: np.ndarray) -> None:
    """Set a 2D or 3D line's data from display points ``(k, 2|3)``."""
    if V.shape[-1] == 3:
        line.set_data_3d(V[:, 0], V[:, 1], V[:, 2])
    else:
        line.set_data(V[:, 0], V[:, 1])


def _plot(ax: Axes, V: np.ndarray, *args: Any, **kwargs: Any) -> Any:
    """``ax.plot`` for display points ``(k, 2|3)``; returns the line."""
    cols = [V[:, i] for i in range(V.shape[-1])]
    (line,) = ax.plot(*cols, *args, **kwargs)
    return line


def _triad_segments(model: Model, T: np.ndarray, length: float, plane: str | None) -> list:
    """Display-space ``(2, dim)`` segments of the x, y, z axes of pose ``T``."""
    o = T[:3, 3]
    return [_view(model, np.stack([o, o + length * T[:3, k]]), plane) for k in range(3)]


# --- the stick figure -------------------------------------------------------------


class _Skeleton:
    """The artists of one drawn configuration, updatable in place (for animation)."""

    def __init__(
        self,
        ax: Axes,
        model: Model,
        T: np.ndarray,
        *,
        plane: str | None,
        color: Any,
        label: str | None,
        show_joints: bool,
        frames: list[int],
        triad_length: float,
        linewidth: float = 2.5,
        mesh: MeshLayer | None = None,
    ) -> None:
        self.model = model
        self.plane = plane
        self.mesh = mesh
        # With meshes, lines only for the bones of links whose mesh is missing.
        self.chains = _chains(model) if mesh is None else [list(b) for b in mesh.patch_bones]
        if mesh is not None:
            show_joints = False
        self.frames = frames
        self.triad_length = triad_length
        self.show_joints = show_joints
        V = _view(model, T[:, :3, 3], plane)
        self.lines = [
            _plot(
                ax,
                V[chain],
                "-",
                color=color,
                lw=linewidth,
                solid_capstyle="round",
                label=label if i == 0 else None,
            )
            for i, chain in enumerate(self.chains)
        ]
        self.joints: Any = None
        self.root: Any = None
        self.root_ids: list[int] = []
        if show_joints:
            self.joints = _plot(
                ax, V, "o", ls="", ms=4.0, mfc="white", mec=color, mew=1.2, zorder=3
            )
            parents = frame_parents(model)
            roots = [c[0] for c in self.chains if parents[c[0]] < 0]
            self.root_ids = roots
            self.root = _plot(ax, V[roots], "s", ls="", ms=7.0, color="0.2", zorder=3)
        self.triads = [
            [_plot(ax, seg, "-", color=c, lw=1.5) for seg, c in zip(segs, _TRIAD_COLORS)]
            for segs in (_triad_segments(model, T[f], triad_length, plane) for f in self.frames)
        ]

    @property
    def artists(self) -> list[Any]:
        """Every artist that moves with the configuration."""
        out = [*self.lines, *(line for triad in self.triads for line in triad)]
        if self.mesh is not None:
            out.insert(0, self.mesh.collection)
        return out + [a for a in (self.joints, self.root) if a is not None]

    def update(self, T: np.ndarray) -> None:
        """Move the artists to frame poses ``T`` (n_frames, 4, 4)."""
        V = _view(self.model, T[:, :3, 3], self.plane)
        if self.mesh is not None:
            self.mesh.update(T)
        for line, chain in zip(self.lines, self.chains):
            _set_line(line, V[chain])
        if self.joints is not None:
            _set_line(self.joints, V)
        if self.root is not None:
            _set_line(self.root, V[self.root_ids])
        for f, lines in zip(self.frames, self.triads):
            segs = _triad_segments(self.model, T[f], self.triad_length, self.plane)
            for line, seg in zip(lines, segs):
                _set_line(line, seg)


def _draw_targets(
    ax: Axes, model: Model, targets: list[np.ndarray], plane: str | None, length: float
) -> None:
    points = np.array([t if t.shape == (3,) else t[:3, 3] for t in targets])
    if points.size == 0:
        return
    _plot(
        ax,
        _view(model, points, plane),
        **_TARGET_STYLE,
        label="target" if len(targets) == 1 else "targets",
    )
    for t in targets:
        if t.shape == (4, 4):
            for seg, c in zip(_triad_segments(model, t, 1.5 * length, plane), _TRIAD_COLORS):
                _plot(ax, seg, "--", color=c, lw=1.2)


def _next_color(ax: Axes) -> str:
    return f"C{len(getattr(ax, _SKELETONS_ATTR, [])) % 10}"


def _draw_on(
    ax: Axes,
    model: Model,
    T: np.ndarray,
    plane: str | None,
    *,
    targets: list[np.ndarray],
    frames: list[int],
    color: Any,
    label: str | None,
    show_joints: bool,
    extra_points: np.ndarray | None = None,
    parts: Parts | None = None,
    max_faces: int = DEFAULT_MAX_FACES,
) -> _Skeleton:
    """Draw one configuration (poses ``T``) on ``ax``; update limits; return the artists.

    ``parts``: visual meshes to draw instead of the stick figure (3D only).
    """
    V = _view(model, T[:, :3, 3], plane)
    _include(ax, V)
    mesh = None
    if parts is not None and plane is None:
        mesh = MeshLayer(ax, model, parts, T, lambda P: _view(model, P, None), max_faces=max_faces)
        _include(ax, mesh.points)
    if targets:
        tp = np.array([t if t.shape == (3,) else t[:3, 3] for t in targets])
        _include(ax, _view(model, tp, plane))
    if extra_points is not None:
        _include(ax, extra_points)
    length = _scale(ax)
    # Keep the triads' tips inside the limits too.
    poses = [(T[f], length) for f in frames] + [(t, 1.5 * length) for t in targets if t.ndim == 2]
    for pose, size in poses:
        _include(ax, np.concatenate(_triad_segments(model, pose, size, plane)))
    if color is None:
        color = _next_color(ax)
    skel = _Skeleton(
        ax,
        model,
        T,
        plane=plane,
        color=color,
        label=label,
        show_joints=show_joints,
        frames=frames,
        triad_length=length,
        mesh=mesh,
    )
    setattr(ax, _SKELETONS_ATTR, [*getattr(ax, _SKELETONS_ATTR, []), skel])
    _draw_targets(ax, model, targets, plane, length)
    _apply_cube(ax)
    return skel


def draw(
    model: Model,
    q: Any,
    ax: Axes | None = None,
    *,
    targets: Any = None,
    frames: str | Sequence[str] | None = None,
    color: Any = None,
    label: str | None = None,
    plane: str | None = None,
    show_joints: bool = True,
    meshes: bool | None = None,
    max_faces: int = DEFAULT_MAX_FACES,
) -> Axes:
    """Draw ``model`` at configuration ``q`` (a stick figure, or its meshes); return the axes.

    Args:
        model: the model.
        q: configuration, shape ``(model.nq,)``.
        ax: axes to draw on (3D axes for a 3D picture, 2D axes with ``plane`` or a
            planar model); a new 6x6-inch figure when None (``ax.figure`` to save it,
            see :func:`save_figure`). Drawing several times on one axes overlays the
            poses, each in the next colour of the cycle, with limits covering all.
        targets: points (3-vectors) and/or poses (4x4) drawn as red crosses; poses
            also get a dashed x/y/z triad (red/green/blue).
        frames: frame names whose x/y/z axes are drawn as a small triad.
        color: line colour (default: the next ``C0``, ``C1``, ... on these axes).
        label: legend label for this pose (a legend is added when given).
        plane: ``"xy"``, ``"xz"`` or ``"yz"`` for a 2D projection in world
            coordinates; default 3D, or ``"xy"`` for planar models.
        show_joints: mark every frame with a dot and the root with a square.
        meshes: None: draw the model's visual meshes when it has some (a URDF loaded
            with them); True: also a built-in robot's, from its description package
            (``kinetree[meshes]``); False: the stick figure. 3D pictures only; a link
            whose mesh is missing is drawn as sticks.
        max_faces: triangles in the picture at most (meshes are thinned to fit).

    Raises:
        ShapeError: ``q`` is not ``(dof,)``.
        UnsupportedError: matplotlib is missing, or ``plane`` does not fit ``ax``.
        UnknownNameError: a name in ``frames`` is not a frame.
    """
    _require_matplotlib()
    qv = _check_q(model, q)
    frame_ids = _check_frames(model, frames)
    tlist = _parse_targets(targets)
    plane = _resolve_plane(model, plane, ax)
    if ax is None:
        fig = _new_figure((6.0, 6.0), plane)
        ax = _make_axes(fig, plane)
    if not getattr(ax, _SKELETONS_ATTR, None):
        _label_axes(ax, model, plane)
    parts = visual_parts(model, meshes) if plane is None else None
    _draw_on(
        ax,
        model,
        model.fk_all(qv),
        plane,
        targets=tlist,
        frames=frame_ids,
        color=color,
        label=label,
        show_joints=show_joints,
        parts=parts,
        max_faces=max_faces,
    )
    if label is not None:
        ax.legend(loc="upper left", fontsize="small", framealpha=0.8)
    return ax


def draw_many(
    model: Model,
    qs: Any,
    labels: Sequence[str] | None = None,
    *,
    ax: Axes | None = None,
    title: str | None = None,
    targets: Any = None,
    frames: str | Sequence[str] | None = None,
    plane: str | None = None,
    path: str | os.PathLike[str] | None = None,
) -> Axes:
    """Overlay several configurations ``qs`` (n, dof) on one axes, one colour each.

    ``labels`` (one per configuration) name them in a legend; ``targets`` and
    ``frames`` as in :func:`draw` (targets drawn once). Saves the figure to ``path``
    when given. Returns the axes.
    """
    _require_matplotlib()
    Q = _check_qs(model, qs)
    if labels is not None and len(labels) != len(Q):
        raise ShapeError(
            f"labels must have one entry per configuration ({len(Q)}), got {len(labels)}"
        )
    tlist = _parse_targets(targets)
    plane = _resolve_plane(model, plane, ax)
    if ax is None:
        ax = _make_axes(_new_figure((6.0, 6.0), plane), plane)
    for i, qv in enumerate(Q):
        draw(
            model,
            qv,
            ax,
            targets=tlist if i == len(Q) - 1 else None,
            frames=frames,
            label=None if labels is None else labels[i],
            plane=plane,
            meshes=False,
        )
    if title:
        ax.set_title(title)
    if path is not None:
        fig = ax.get_figure()
        assert fig is not None
        save_figure(fig, path)  # type: ignore[arg-type]
    return ax


def side_by_side(
    model: Model,
    configurations: Sequence[Any],
    titles: Sequence[str] | None = None,
    targets: Sequence[Any] | None = None,
    path: str | os.PathLike[str] | None = None,
    *,
    frames: str | Sequence[str] | None = None,
    plane: str | None = None,
    suptitle: str | None = None,
    panel_size: float = 4.0,
    meshes: bool | None = None,
) -> Figure:
    """One figure with one panel per configuration, all on the same scale.

    Args:
        model: the model.
        configurations: a sequence of ``(dof,)`` configurations (or an (n, dof) array).
        titles: one title per panel.
        targets: one entry per panel: None, a point, a pose, or a list of them.
        path: save the figure there (parent folders are created).
        frames: frame names to draw triads for, in every panel.
        plane: 2D projection as in :func:`draw`.
        suptitle: a title over all panels.
        panel_size: inches per panel.
        meshes: draw meshes, as in :func:`draw`.

    Returns:
        The figure (e.g. "the humanoid's three reach cases side by side").
    """
    _require_matplotlib()
    Q = _check_qs(model, np.asarray(configurations, dtype=np.float64), "configurations")
    n = len(Q)
    if titles is not None and len(titles) != n:
        raise ShapeError(f"titles must have one entry per configuration ({n}), got {len(titles)}")
    if targets is not None and len(targets) != n:
        raise ShapeError(
            f"targets must have one entry per configuration ({n}; None for no target), "
            f"got {len(targets)}"
        )
    per_panel = [_parse_targets(None if targets is None else targets[i]) for i in range(n)]
    frame_ids = _check_frames(model, frames)
    plane = _resolve_plane(model, plane)
    Ts = model.fk_all(Q)
    # One scale for all panels: every panel's limits cover every pose and target.
    shared = [_view(model, Ts[..., :3, 3].reshape(-1, 3), plane)]
    shared += [
        _view(model, np.array([t if t.shape == (3,) else t[:3, 3] for t in tl]), plane)
        for tl in per_panel
        if tl
    ]
    all_points = np.concatenate(shared, axis=0)
    height = panel_size + (0.4 if suptitle else 0.0)
    if plane is None:
        # 3D axes are square; tall content (a standing human) leaves their sides
        # empty, so let neighbouring panels overlap by that much.
        ext = np.ptp(all_points, axis=0)
        step = float(np.clip(1.9 * max(ext[0], ext[1]) / max(ext[2], 1e-9), 0.55, 1.0))
        side = 0.91 * panel_size
        fig = _new_figure((side * (1.0 + (n - 1) * step) / 0.94, height), plane)
        fig.subplots_adjust(wspace=step - 1.0 if n > 1 else 0.0)
    else:
        fig = _new_figure((panel_size * n, height), plane)
    parts = visual_parts(model, meshes) if plane is None else None
    for i in range(n):
        ax = _make_axes(fig, plane, 1, n, i + 1)
        _label_axes(ax, model, plane)
        _draw_on(
            ax,
            model,
            Ts[i],
            plane,
            targets=per_panel[i],
            frames=frame_ids,
            color="C0",
            label=None,
            show_joints=True,
            extra_points=all_points,
            parts=parts,
        )
        if titles is not None:
            ax.set_title(titles[i], fontsize=11)
    # Triads can widen one panel's bounds; give every panel the union.
    bounds = [getattr(ax, _BOUNDS_ATTR) for ax in fig.axes]
    union = (np.min([b[0] for b in bounds], axis=0), np.max([b[1] for b in bounds], axis=0))
    for ax in fig.axes:
        setattr(ax, _BOUNDS_ATTR, union)
        _apply_cube(ax)
    if suptitle:
        fig.suptitle(suptitle, fontsize=13)
        if plane is None:
            fig.subplots_adjust(top=1.0 - 0.4 / (panel_size + 0.4))
    if path is not None:
        save_figure(fig, path)
    return fig


# --- saving and other plots -----------------------------------------------------------


def save_figure(
    fig: Figure, path: str | os.PathLike[str], *, dpi: float = 120, tight: bool = True
) -> Path:
    """Save ``fig`` to ``path`` (format from the suffix), creating parent folders.

    ``tight`` trims empty margins (3D axes leave a lot around their box).
    Returns the path.
    """
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    if tight:
        fig.savefig(p, dpi=dpi, bbox_inches="tight", pad_inches=0.15)
    else:
        fig.savefig(p, dpi=dpi)
    return p


def plot_convergence(
    histories: Mapping[str, Any],
    path: str | os.PathLike[str] | None = None,
    *,
    ylabel: str = "error",
    log: bool = True,
    title: str | None = None,
    floor: float = 1e-16,
) -> Figure:
    """Error against iteration for several methods on one plot.

    Args:
        histories: method name -> 1D sequence of per-iteration error norms
            (entry ``k`` is the error after ``k`` iterations).
        path: save the figure there when given.
        ylabel: y-axis label.
        log: logarithmic y axis; values below ``floor`` (exact zeros) are drawn
            at ``floor``.
        title: plot title.
        floor: the smallest value shown on a log axis.

    Returns:
        The figure.
    """
    _require_matplotlib()
    if not histories:
        raise InvalidValueError("histories is empty; pass {method name: errors per iteration}")
    fig = _new_figure((6.4, 4.2))
    ax = fig.add_subplot()
    for i, (name, values) in enumerate(histories.items()):
        v = np.asarray(values, dtype=np.float64)
        if v.ndim != 1:
            raise ShapeError(
                f"history {name!r} must be 1D (one error per iteration), got shape {v.shape}"
            )
        if log:
            v = np.where(np.isnan(v), v, np.maximum(np.abs(v), floor))
        marker = "o" if len(v) <= 40 else None
        ax.plot(
            np.arange(len(v)), v, marker=marker, ms=3.5, lw=1.6, color=f"C{i % 10}", label=str(name)
        )
    if log:
        ax.set_yscale("log")
    ax.set_xlabel("iteration")
    ax.set_ylabel(ylabel)
    ax.grid(True, which="major", alpha=0.35)
    ax.grid(True, which="minor", alpha=0.12)
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(fontsize="small")
    if title:
        ax.set_title(title)
    if path is not None:
        save_figure(fig, path)
    return fig
