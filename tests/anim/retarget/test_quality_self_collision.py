"""``kinetree.retarget(..., self_collision=True)`` leaves no two links of the robot
overlapping, judged by closed-form sphere distances computed here (not by the counter
or the kernels under test), and keeps the joint limits."""

from __future__ import annotations

import dataclasses
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest

import kinetree
import kinetree.geometry as geo
from ik_helpers import SWING
from kinetree.anim import load_robot, self_collision_frames
from kinetree.anim.retarget.quality import rest_overlaps

CMU = Path(__file__).resolve().parents[2] / "data" / "bvh" / "cmu_12_01_walk.bvh"


def _humanoid_with_spheres() -> kinetree.Model:
    """The built-in humanoid with collision spheres on thighs, shins, forearms and hands
    (the hands big enough to hit the thighs as the arms swing in the CMU walk)."""
    h = load_robot("humanoid")
    T = h.fk_all(h.neutral())
    at = {f: i for i, f in enumerate(h.frame_names)}

    def along(a: str, b: str, t: float) -> np.ndarray:
        p = np.linalg.inv(T[at[a]]) @ np.append(T[at[b]][:3, 3], 1.0)
        o = np.eye(4)
        o[:3, 3] = t * p[:3]
        return o

    shapes: dict[str, tuple[geo.Geometry, ...]] = {}
    for s in "lr":
        ball = [(f"thigh_{s}", f"shin_{s}", 0.3, 0.08), (f"thigh_{s}", f"shin_{s}", 0.7, 0.07),
                (f"shin_{s}", f"ankle_{s}", 0.1, 0.06), (f"shin_{s}", f"ankle_{s}", 0.6, 0.05),
                (f"forearm_{s}", f"palm_{s}", 0.5, 0.045)]  # fmt: skip
        for a, b, t, r in ball:
            sphere = geo.Sphere(origin=along(a, b, t), kind="collision", radius=r)
            shapes[a] = (*shapes.get(a, ()), sphere)
        shapes[f"hand_{s}"] = (geo.Sphere(kind="collision", radius=0.10),)
    return dataclasses.replace(h, geometry=shapes)


def _clearance(model: kinetree.Model, q: np.ndarray, pairs: list[tuple[str, str]]) -> np.ndarray:
    """Per frame, the smallest |c_a - c_b| - r_a - r_b over the sphere shapes of ``pairs``
    of links, the centres placed by FK; closed form, no kinetree.collision."""
    T = model.fk_all(q)
    at = {f: i for i, f in enumerate(model.frame_names)}
    out = np.full(len(q), np.inf)
    for a, b in pairs:
        for sa in model.geometry[a]:
            for sb in model.geometry[b]:
                assert isinstance(sa, geo.Sphere) and isinstance(sb, geo.Sphere)
                ca = (T[:, at[a]] @ sa.origin)[:, :3, 3]
                cb = (T[:, at[b]] @ sb.origin)[:, :3, 3]
                d = np.linalg.norm(ca - cb, axis=1) - sa.radius - sb.radius
                out = np.minimum(out, d)
    return out


def test_no_link_overlaps_the_hand_thigh_walk() -> None:
    robot = _humanoid_with_spheres()
    links = list(robot.geometry)
    # every pair of links not joined in the tree (thigh-shin and forearm-hand are)
    joined = {("thigh_l", "shin_l"), ("thigh_r", "shin_r")}
    pairs = [(a, b) for a, b in combinations(links, 2) if (a, b) not in joined]
    clip = kinetree.read_bvh(CMU).slice(0, 120)
    plain = kinetree.retarget(clip, robot, "cmu")
    assert (_clearance(robot, plain.q, pairs) < -0.01).sum() > 20  # the hands hit the thighs
    m = kinetree.retarget(clip, robot, "cmu", self_collision=True)
    d = _clearance(robot, m.q, pairs)
    assert d.min() >= 0.0, (d.min(), np.flatnonzero(d < 0))
    assert np.all(robot.within_limits(m.q, tol=1e-9)) and m.metadata["quality"]["within_limits"]
    assert self_collision_frames(m)["count"] == 0
    assert m.metadata["retarget"]["self_collision"]
    # the feet stay planted while the hands move out of the way
    for feet in m.metadata["quality"]["feet"].values():
        assert feet["slide_median"] <= 0.0015 and feet["dip_max"] <= 0.01


def test_ik_and_counter_check_the_same_pairs(tmp_path: Path) -> None:
    robot = _humanoid_with_spheres()
    q = robot.neutral()
    # Nothing overlaps at the neutral pose here, so nothing is left out; a pair made to
    # overlap there is left out by both.
    assert rest_overlaps(robot) == ()
    shapes = dict(robot.geometry)
    shapes["hand_l"] = (geo.Sphere(kind="collision", radius=0.6),)
    big = dataclasses.replace(robot, geometry=shapes)
    # The automatic pairs judge that overlap as set-up tools do: "Default" (in contact
    # at the neutral pose), so nothing enabled overlaps there.
    cm = kinetree.collision.collision_model(big)
    default = [p for p, why in cm.disabled.items() if why == "Default"]
    assert default and all("hand_l" in p for p in default)
    assert rest_overlaps(big) == ()
    # Pairs given (only the adjacent ones disabled): the overlap is enabled, left out by both.
    adjacent = {p: "Adjacent" for p in kinetree.collision.adjacent_pairs(big, cm.spheres.links)}
    left = rest_overlaps(big, disabled=adjacent)
    assert left and all("hand_l" in p for p in left)
    motion = kinetree.anim.Motion(model=big, q=q[None], fps=30.0)
    assert set(self_collision_frames(motion, disabled=adjacent)["ignored"]) == set(left)


def test_the_walk_on_the_g1() -> None:
    from robot_data import example_robot_data

    example_robot_data()  # skips when the package is absent
    g1 = load_robot("g1")
    clip = kinetree.read_bvh(CMU).slice(0, 150)
    m = kinetree.retarget(clip, g1, "cmu", self_collision=True)
    assert m.metadata["quality"]["within_limits"]
    assert self_collision_frames(m)["count"] == 0
    # the spheres in the world, pair by pair in closed form, over the pairs the counter checks
    cm = kinetree.collision.collision_model(g1)
    skip = set(rest_overlaps(g1))
    c, r = cm.spheres.world(g1, m.q)
    off = cm.spheres.offsets
    worst = np.inf
    for a, b in cm.self_pairs:
        la, lb = cm.spheres.links[a], cm.spheres.links[b]
        if (la, lb) in skip or (lb, la) in skip:
            continue
        ca, cb = c[:, off[a] : off[a + 1]], c[:, off[b] : off[b + 1]]
        d = np.linalg.norm(ca[:, :, None] - cb[:, None], axis=3)
        d -= r[off[a] : off[a + 1], None] + r[None, off[b] : off[b + 1]]
        worst = min(worst, float(d.min()))
    assert worst >= 0.0


def test_collision_ik_leaves_a_collision_deeper_than_one_step(tmp_path: Path) -> None:
    # l2's sphere sits at angle j1 + j2 on a 0.5 m circle; the base's at angle pi. The
    # target turns l2 to pi - 0.1 (centres 2 * 0.5 * sin(0.05) apart: 150 mm inside), and
    # the start is on it. Clearing 5 mm takes a turn of 0.42 rad, more than one step
    # (0.3 rad per joint... but the two joints share it); the clear configurations are
    # off target, so the solve must keep a clear iterate over the start.
    path = tmp_path / "swing.urdf"
    path.write_text(SWING.format(x=-0.5))
    model = kinetree.load(path)
    a = np.pi - 0.1
    R = np.array([[np.cos(a), -np.sin(a), 0], [np.sin(a), np.cos(a), 0], [0, 0, 1]])
    target = kinetree.ik.targets.Orientation(R)
    q0 = np.array([a, 0.0])
    cm = kinetree.collision.collision_model(model, disabled={})
    res = model.ik({"l2": target}, q0=q0, method="dls", restarts=0, max_iter=30,
                   self_collision=True, margin=0.005, collision_model=cm)  # fmt: skip
    th = float(res.q[0] + res.q[1])
    d = 2 * 0.5 * abs(np.sin((th - np.pi) / 2)) - 0.2  # closed form: centres on the circle
    assert d >= 0.0, d
    assert not res.success
    assert float(res.min_distance) == pytest.approx(d, abs=1e-9)
