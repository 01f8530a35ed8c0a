"""Reachability maps against reach known in closed form.

* A planar 2R arm (links l1, l2), position only: a point of the plane z = 0 is reachable
  iff |l1 - l2| <= r <= l1 + l2, and the best manipulability there is
  l1 l2 |sin t2| with cos t2 = (r^2 - l1^2 - l2^2) / (2 l1 l2) (both elbows alike).
* A planar 3R arm with orientations about z (tip heading phi): reachable iff the wrist
  point p - l3 (cos phi, sin phi) lies in the 2R annulus; the index is the fraction of
  headings for which it does.
Voxels within a small margin of a boundary are left out of the comparison.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import kinetree
from kinetree import workspace as ws
from kinetree.errors import FileFormatError, InvalidValueError, ShapeError, UnknownNameError

L1, L2, L3 = 1.0, 0.6, 0.3


@pytest.fixture(scope="module")
def map_2r():
    arm = kinetree.models.planar_2r(L1, L2)
    return ws.reachability(arm, resolution=0.1, orientations=0, restarts=4)


def test_2r_annulus_is_reached_and_nothing_else(map_2r):
    m = map_2r
    c = m.centers()
    r = np.hypot(c[..., 0], c[..., 1])
    plane = np.abs(c[..., 2]) < 1e-9
    inner, outer = abs(L1 - L2), L1 + L2
    clear = (np.abs(r - inner) > 0.02) & (np.abs(r - outer) > 0.02)
    expected = plane & (r > inner) & (r < outer)
    assert np.all((m.index > 0)[clear] == expected[clear])
    assert np.all((m.index == 0) | (m.index == 1))  # position only: 0 or 1
    assert m.index[expected & clear].size > 200
    np.testing.assert_allclose(m.center, 0.0, atol=1e-12)
    assert m.radius == pytest.approx(L1 + L2)
    assert not np.any(m.index[~m.inside])


def test_2r_manipulability_closed_form(map_2r):
    m = map_2r
    c = m.centers()
    r = np.hypot(c[..., 0], c[..., 1])
    ok = m.index > 0
    cos_t2 = np.clip((r[ok] ** 2 - L1**2 - L2**2) / (2 * L1 * L2), -1.0, 1.0)
    # At the solution's own elbow angle: exact; at the voxel's radius: to the IK tolerance
    # (d sin(t2)/dr grows without bound at the annulus' rims).
    w = m.manipulability[ok]
    np.testing.assert_allclose(w, L1 * L2 * np.abs(np.sin(m.q_best[ok][:, 1])), rtol=1e-9,
                               atol=1e-12)  # fmt: skip
    np.testing.assert_allclose(w, L1 * L2 * np.sqrt(1 - cos_t2**2), atol=2e-3)
    assert np.all(m.manipulability[~ok] == 0)
    # The stored best configuration reaches its voxel (FK is the oracle).
    arm = kinetree.models.planar_2r(L1, L2)
    tips = arm.fk(m.q_best[ok])[:, :3, 3]
    np.testing.assert_allclose(tips, c[ok], atol=1e-6)


def test_3r_index_with_headings():
    arm = kinetree.models.planar_3r(L1, L2, L3)
    phis = np.linspace(0, 2 * np.pi, 12, endpoint=False)
    R = Rotation.from_euler("z", phis[:, None]).as_matrix()
    # Only the plane z = 0 (box); 40 restarts: from the straight (singular) neutral pose
    # 6 restarts miss 1.6 % of these poses, 50 none (the index is a lower bound).
    plane_box = [[-2, 2], [-2, 2], [0, 0]]
    m = ws.reachability(arm, resolution=0.15, orientations=R, restarts=40, seed=3, box=plane_box)
    c = m.centers()
    plane = np.abs(c[..., 2]) < 1e-9
    xy = c[plane][:, :2]
    wrist = xy[:, None, :] - L3 * np.stack([np.cos(phis), np.sin(phis)], -1)[None]
    rw = np.linalg.norm(wrist, axis=-1)  # (voxels, headings)
    inner, outer = abs(L1 - L2), L1 + L2
    margin = np.minimum(np.abs(rw - inner), np.abs(rw - outer))
    clear = np.all(margin > 0.02, axis=1)
    expected = np.mean((rw > inner) & (rw < outer), axis=1)
    got = m.index[plane]
    np.testing.assert_allclose(got[clear], expected[clear], atol=1e-12)
    assert np.any((expected[clear] > 0) & (expected[clear] < 1))  # partial indices occur
    assert np.all(m.index[~plane] == 0) and not np.any(m.inside[~plane])
    assert np.all((m.index >= 0) & (m.index <= 1))


def test_panda_map_is_bounded_and_solutions_reach(tmp_path):
    panda = kinetree.load("panda")
    m = ws.reachability(panda, resolution=0.35, orientations=8, restarts=3)
    assert np.all((m.index >= 0) & (m.index <= 1))
    assert m.orientations.shape == (8, 3, 3)
    assert 0 < np.count_nonzero(m.index) < m.inside.sum()
    # Beyond the reach sphere: never reached.
    d = np.linalg.norm(m.centers() - m.center, axis=-1)
    assert np.all(m.index[d > m.radius] == 0)
    # Each best configuration puts the flange at its voxel with one tried orientation,
    # within the joint limits; its manipulability is sqrt(det(J J^T)) (numpy's det).
    ok = m.index > 0
    T = panda.fk(m.q_best[ok])
    np.testing.assert_allclose(T[:, :3, 3], m.centers()[ok], atol=1e-6)
    match = np.einsum("nij,kij->nk", T[:, :3, :3], m.orientations)  # trace(R^T R_k)
    assert np.all(match.max(axis=1) > 3 - 1e-9)
    assert np.all(panda.within_limits(m.q_best[ok], tol=1e-9))
    J = panda.jacobian(m.q_best[ok])
    np.testing.assert_allclose(
        m.manipulability[ok], np.sqrt(np.linalg.det(J @ J.transpose(0, 2, 1))), rtol=1e-8
    )
    # Save and load: the same map.
    path = m.save(tmp_path / "maps" / "panda.npz")
    back = ws.load(path)
    for name in ("index", "manipulability", "q_best", "inside", "origin", "orientations"):
        np.testing.assert_array_equal(getattr(back, name), getattr(m, name))
    assert (back.resolution, back.frame, back.model) == (0.35, "flange", "panda")
    assert back.settings["restarts"] == 3
    np.testing.assert_array_equal(back.index_at(m.centers()[ok]), m.index[ok])
    # Chunking does not change the map (problem p keeps seed + p).
    again = ws.reachability(panda, resolution=0.35, orientations=8, restarts=3, chunk_size=40)
    np.testing.assert_array_equal(again.index, m.index)
    np.testing.assert_array_equal(again.q_best, m.q_best)


def test_orientation_samples_spread_over_so3():
    R = ws.orientation_samples(50)
    assert R.shape == (50, 3, 3)
    np.testing.assert_allclose(R @ R.transpose(0, 2, 1), np.broadcast_to(np.eye(3), R.shape),
                               atol=1e-12)  # fmt: skip
    np.testing.assert_allclose(np.linalg.det(R), 1.0, atol=1e-12)
    # Nearest-neighbour angles (from scipy's quaternions: 2 acos |q_a . q_b|): no two
    # samples close together, and every random rotation near some sample.
    q = Rotation.from_matrix(R).as_quat()
    ang = 2 * np.arccos(np.clip(np.abs(q @ q.T), 0, 1))
    np.fill_diagonal(ang, np.inf)
    assert ang.min() > 0.6
    probe = Rotation.random(5000, random_state=0).as_quat()
    cover = np.max(np.min(2 * np.arccos(np.clip(np.abs(probe @ q.T), 0, 1)), axis=1))
    assert cover < 1.2


def test_manipulability_is_yoshikawa():
    J = np.random.default_rng(0).normal(size=(5, 6, 7))
    expected = np.sqrt(np.linalg.det(J @ J.transpose(0, 2, 1)))
    np.testing.assert_allclose(ws.manipulability(J), expected, rtol=1e-10)


def test_bad_input(tmp_path):
    arm = kinetree.models.planar_2r()
    with pytest.raises(InvalidValueError, match="resolution"):
        ws.reachability(arm, resolution=0.0)
    with pytest.raises(InvalidValueError, match="resolution"):
        ws.reachability(arm, resolution=float("nan"))
    with pytest.raises(UnknownNameError, match="hand"):
        ws.reachability(arm, "hand")
    with pytest.raises(ShapeError, match="orientations"):
        ws.reachability(arm, orientations=np.zeros((4, 2, 2)))
    with pytest.raises(InvalidValueError, match="rotation"):
        ws.reachability(arm, orientations=2 * np.eye(3)[None])
    with pytest.raises(InvalidValueError, match="orientations"):
        ws.orientation_samples(-3)
    with pytest.raises(InvalidValueError, match="voxels"):
        ws.reachability(arm, resolution=1e-4)
    with pytest.raises(InvalidValueError, match="tol"):
        ws.reachability(arm, tol=-1)
    bad = tmp_path / "bad.npz"
    np.savez(bad, index=np.zeros((2, 2, 2)))
    with pytest.raises(FileFormatError, match="reachability map"):
        ws.load(bad)


def test_figure(map_2r, tmp_path):
    pytest.importorskip("matplotlib")
    fig = ws.plot_reachability(map_2r, tmp_path / "fig" / "map.png")
    assert (tmp_path / "fig" / "map.png").stat().st_size > 10_000
    assert len(fig.axes) >= 5


def test_cli_reach_map(tmp_path):
    from typer.testing import CliRunner

    from kinetree.cli import app

    runner = CliRunner()
    out = tmp_path / "maps" / "arm.npz"
    r = runner.invoke(app, ["reach-map", "planar2r", "-r", "0.3", "-n", "0", "--restarts", "2",
                            "-o", str(out), "--json"])  # fmt: skip
    assert r.exit_code == 0, r.output
    m = ws.load(out)
    assert m.model == "planar2r" and m.resolution == 0.3 and len(m.orientations) == 0
    assert '"reachable_voxels"' in r.output and np.count_nonzero(m.index) > 10
    bad = runner.invoke(app, ["reach-map", "planar2r", "-r", "-1", "-o", str(out)])
    assert bad.exit_code == 2 and "resolution" in bad.output
    bad = runner.invoke(app, ["reach-map", "planar2r", "-o", str(tmp_path / "m.txt")])
    assert bad.exit_code == 2 and ".npz" in bad.output
