"""A picture of a reachability map: three slices through the reach sphere's centre and a
3D view of the reachable voxels (matplotlib's object API, no pyplot, as in kinetree.viz).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import UnsupportedError
from ._map import ReachabilityMap

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["plot_reachability"]

_PLANES = (("xz", 1), ("yz", 0), ("xy", 2))  # plane, the axis it cuts
_NAMES = "xyz"


def plot_reachability(
    rmap: ReachabilityMap,
    path: str | os.PathLike[str] | None = None,
    *,
    max_points: int = 6000,
    title: str | None = None,
) -> Figure:
    """Slices of the reachability index through the sphere's centre (x-z, y-z, x-y), the
    best manipulability on the x-z slice, and a 3D scatter of the voxels with a non-zero
    index in the half y <= centre (at most ``max_points``, thinned evenly), coloured by
    index. Saved to ``path``
    when given (folders created)."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise UnsupportedError(
            "plot_reachability needs matplotlib; install kinetree[viz] "
            "(pip install 'kinetree[viz]')"
        ) from None
    fig = Figure(figsize=(14.0, 8.5), layout="constrained")
    FigureCanvasAgg(fig)
    axes_xyz = rmap.axes()
    mid = rmap.voxel(rmap.center)
    h = rmap.resolution / 2
    image: Any = None
    for col, (plane, cut) in enumerate(_PLANES):
        ax = fig.add_subplot(2, 3, col + 1)
        u, v = (d for d in range(3) if d != cut)
        sl = np.take(rmap.index, int(np.clip(mid[cut], 0, rmap.shape[cut] - 1)), axis=cut)
        ext = (axes_xyz[u][0] - h, axes_xyz[u][-1] + h, axes_xyz[v][0] - h, axes_xyz[v][-1] + h)
        image = ax.imshow(
            sl.T,
            origin="lower",
            extent=ext,
            vmin=0.0,
            vmax=1.0,
            cmap="viridis",
            interpolation="nearest",
        )
        ax.set_title(f"index, {plane} slice at {_NAMES[cut]} = {rmap.center[cut]:.3f} m")
        ax.set_xlabel(f"{_NAMES[u]} [m]")
        ax.set_ylabel(f"{_NAMES[v]} [m]")
    fig.colorbar(image, ax=fig.axes[2], shrink=0.8, label="reachability index")
    ax = fig.add_subplot(2, 3, 4)
    sl = np.take(rmap.manipulability, int(np.clip(mid[1], 0, rmap.shape[1] - 1)), axis=1)
    ext = (axes_xyz[0][0] - h, axes_xyz[0][-1] + h, axes_xyz[2][0] - h, axes_xyz[2][-1] + h)
    mim = ax.imshow(
        np.ma.masked_equal(sl.T, 0.0),
        origin="lower",
        extent=ext,
        cmap="magma",
        interpolation="nearest",
    )
    ax.set_title("best manipulability, xz slice")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("z [m]")
    fig.colorbar(mim, ax=ax, shrink=0.8, label="sqrt(det(J J^T))")
    ax3 = fig.add_subplot(2, 3, (5, 6), projection="3d")
    # Cut away the half y > centre, so the inside of the reach shows.
    shown = (rmap.index > 0) & (rmap.centers()[..., 1] <= rmap.center[1] + 1e-9)
    pts = rmap.centers()[shown]
    val = rmap.index[shown]
    if len(pts) > max_points:
        keep = np.linspace(0, len(pts) - 1, max_points).astype(np.int64)
        pts, val = pts[keep], val[keep]
    if len(pts):
        sc = ax3.scatter(pts[:, 0], pts[:, 1], pts[:, 2], c=val, s=4, cmap="viridis",
                         vmin=0.0, vmax=1.0, alpha=0.6, depthshade=False)  # fmt: skip
        fig.colorbar(sc, ax=ax3, shrink=0.6, label="reachability index")
    r = rmap.radius
    for d, setter in enumerate((ax3.set_xlim, ax3.set_ylim, ax3.set_zlim)):
        setter(rmap.center[d] - r, rmap.center[d] + r)
    ax3.set_box_aspect((1, 1, 1))
    ax3.view_init(elev=20, azim=70)  # looking at the cut face
    ax3.set_xlabel("x [m]")
    ax3.set_ylabel("y [m]")
    ax3.set_zlabel("z [m]")
    ax3.set_title(f"voxels with index > 0, cut at y = {rmap.center[1]:.3f} m")
    fig.suptitle(title if title is not None else rmap.summary(), fontsize=10)
    if path is not None:
        from ..viz import save_figure

        save_figure(fig, path)
    return fig
