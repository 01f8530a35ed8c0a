"""The browser viewer, driven from Python without a browser.

Each test starts a :class:`kinetree.viewer.Viewer` on a free port (port 0) and talks to
it over HTTP and over viser's websocket (:class:`kinetree.viewer.client.WireClient`
sends what a page sends when a gizmo is dragged). Checked: the page is served, a
dragged target moves the model and the error is reported, sliders follow within the
limits, clips play, the port and the address are what was asked for, traversal gets
404, and bad input fails with a kinetree error (a missing mesh: a warning).
"""

from __future__ import annotations

import http.client
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
import warnings
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("viser")

import kinetree
from kinetree.geometry import GeometryWarning
from kinetree.viewer import LOOPBACK, PortInUseError, Viewer
from kinetree.viewer.client import WireClient

TESTS = Path(__file__).resolve().parents[1]
SHAPES = TESTS / "data" / "kt_geom_pkg" / "urdf" / "shapes.urdf"
README = TESTS.parent / "README.md"


@pytest.fixture
def panda() -> Iterator[Viewer]:
    with Viewer("panda", port=0, meshes=False) as v:
        yield v


def _shifted(T: np.ndarray, dx: float, dy: float, dz: float) -> np.ndarray:
    out = np.array(T, dtype=float)
    out[:3, 3] += [dx, dy, dz]
    return out


def _run_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kinetree", *args], capture_output=True, text=True,
        timeout=timeout, check=False,
    )  # fmt: skip


# --- serving and driving ---------------------------------------------------------------


def test_the_page_is_served_on_loopback(panda: Viewer) -> None:
    assert panda.host == LOOPBACK and panda.url == f"http://127.0.0.1:{panda.port}"
    with urllib.request.urlopen(panda.url, timeout=30) as response:
        assert response.status == 200
        page = response.read().decode("utf-8", errors="replace")
    assert "<html" in page.lower() and "<script" in page.lower()


def test_a_target_set_from_python_moves_the_model_and_reports_the_error(panda: Viewer) -> None:
    q0 = panda.q
    goal = _shifted(panda.model.fk(q0, "flange"), 0.05, -0.04, 0.03)
    result = panda.set_target("flange", goal)
    assert result is not None and result.success
    assert np.abs(panda.q - q0).max() > 1e-3  # the model moved
    np.testing.assert_allclose(panda.model.fk(panda.q, "flange"), goal, atol=1e-5)
    assert "IK reached" in panda.status and "position error" in panda.status
    assert np.all(panda.model.within_limits(panda.q))


def test_a_dragged_gizmo_over_the_websocket_moves_the_model(panda: Viewer) -> None:
    """The path a browser takes: a drag message in, IK, new frame poses out."""
    q0 = panda.q
    goal = _shifted(panda.model.fk(q0, "flange"), -0.06, 0.05, -0.02)
    with WireClient(panda.url) as page:
        page.wait_for(lambda m: m["type"] == "ReplayDoneMessage")
        names = {m.get("name") for m in page.messages}
        assert panda.gizmo_name("flange") in names  # the gizmo was sent to the page
        page.drag(panda.gizmo_name("flange"), goal)
        moved = page.wait_for(
            lambda m: m["type"] == "SetPositionMessage" and m["name"].startswith("/robot/f")
        )
    assert moved["name"].startswith("/robot/f")
    deadline = time.monotonic() + 30
    while "IK" not in panda.status and time.monotonic() < deadline:
        time.sleep(0.02)
    assert "IK reached" in panda.status, panda.status
    np.testing.assert_allclose(panda.model.fk(panda.q, "flange"), goal, atol=1e-5)


def test_nan_from_the_page_is_ignored_without_a_traceback(
    panda: Viewer, capfd: pytest.CaptureFixture[str]
) -> None:
    """A drag or a slider value of NaN (a page, or a script on the socket) leaves the model
    where it is and says so in the status; nothing is printed (a drag printed a traceback
    per message, a slider took the model to NaN)."""
    q0 = panda.q
    slider = panda._panel.sliders[0]
    with WireClient(panda.url) as page:
        page.wait_for(lambda m: m["type"] == "ReplayDoneMessage")
        page.send({"type": "TransformControlsUpdateMessage", "name": panda.gizmo_name("flange"),
                   "wxyz": [float("nan"), 0.0, 0.0, 0.0], "position": [0.3, 0.0, 0.5],
                   "owner": ""})  # fmt: skip
        deadline = time.monotonic() + 30
        while "ignored a gizmo pose" not in panda.status and time.monotonic() < deadline:
            time.sleep(0.02)
        assert "ignored a gizmo pose with NaN or inf for flange" in panda.status, panda.status
    # A slider moved to NaN: the event as viser hands it to the slider's callback.
    slider.value = float("nan")
    panda._on_slider(SimpleNamespace(client=object(), target=slider), 0)
    assert "ignored a value that is NaN" in panda.status, panda.status
    time.sleep(0.3)  # a traceback, if any, would be printed by now
    np.testing.assert_array_equal(panda.q, q0)
    assert "Traceback" not in capfd.readouterr().err


def test_sliders_follow_ik_within_the_limits(panda: Viewer) -> None:
    far = _shifted(panda.model.fk(panda.q, "flange"), 3.0, 0.0, 0.0)  # out of reach
    result = panda.set_target("flange", far)
    assert result is not None and not result.success
    assert "not reached" in panda.status
    time.sleep(0.6)  # sliders are exact once things are still
    values = panda.joint_sliders()
    assert list(values) == list(panda.model.joint_names)
    np.testing.assert_allclose(list(values.values()), panda.q, atol=1e-9)
    lo, hi = panda.model.limits.T
    assert np.all(panda.q >= lo - 1e-9) and np.all(panda.q <= hi + 1e-9)


def test_panel_options_position_mode_and_a_method_that_refuses(panda: Viewer) -> None:
    goal = _shifted(panda.model.fk(panda.q, "flange"), 0.0, 0.1, 0.0)
    panda.set_options(mode="position", method="fabrik")
    result = panda.set_target("flange", goal[:3, 3])
    assert result is not None and result.success and result.method == "fabrik"
    panda.set_options(mode="pose")  # fabrik solves positions only: the readout says so
    assert panda.set_target("flange", goal) is None
    assert "IK error" in panda.status and "fabrik" in panda.status
    with pytest.raises(kinetree.InvalidValueError, match="method 'nope' is not offered"):
        panda.set_options(method="nope")


def test_show_snaps_the_gizmos_and_the_python_code_reproduces_the_pose(panda: Viewer) -> None:
    q = panda.model.random_configuration(rng=3)
    panda.show(q)
    np.testing.assert_allclose(panda.q, q)
    code = panda.python_code()
    scope: dict[str, object] = {}
    exec(code, scope)
    np.testing.assert_allclose(scope["q"], q, rtol=0, atol=0)  # full precision
    poses = scope["poses"]
    assert isinstance(poses, dict)
    np.testing.assert_allclose(poses["flange"], panda.model.fk(q, "flange"), atol=1e-8)
    with pytest.raises(kinetree.ShapeError):
        panda.show(np.zeros(3))


def test_pins_and_presets_on_the_humanoid() -> None:
    with Viewer("humanoid", port=0, targets=["hand_r"]) as v:
        feet = {f: v.model.fk(v.q, f) for f in ("foot_l", "foot_r")}
        v.set_options(pins=["foot_l", "foot_r"], mode="position")
        goal = v.model.fk(v.q, "hand_r")[:3, 3] + [0.25, -0.1, -0.3]
        result = v.set_target("hand_r", goal)
        assert result is not None and set(result.frames) == {"hand_r", "foot_l", "foot_r"}
        for f, T in feet.items():  # pinned: where they were
            np.testing.assert_allclose(v.model.fk(v.q, f), T, atol=1e-5)
        assert np.linalg.norm(v.model.fk(v.q, "hand_r")[:3, 3] - goal) < 1e-4
        # A preset: only the arm moves; the pinned feet, which it cannot move, are left out.
        v.show(v.model.neutral())
        v.set_options(active="right_arm")
        result = v.set_target("hand_r", goal - [0.2, 0.0, 0.0])
        assert result is not None and result.frames == ("hand_r",)
        moved = np.abs(v.q - v.model.neutral()) > 1e-12
        assert moved.any() and not np.any(moved & ~v.model.active_mask("right_arm"))


def test_a_clip_plays_seeks_and_pauses() -> None:
    clip = kinetree.read_bvh(kinetree.data.path("cmu_walk"))
    with Viewer(clip.model, port=0, targets=[]) as v:
        assert v.note is not None and "skeleton" in v.note  # no meshes for a BVH figure
        v.play(clip, paused=True)
        v.seek(100)
        assert v.frame == 100
        np.testing.assert_allclose(v.q, clip.q[100])
        v.resume()
        time.sleep(0.5)
        v.pause()
        assert v.frame is not None and v.frame > 100  # 120 fps: about 60 frames later
        shown = v.frame
        time.sleep(0.3)
        assert v.frame == shown
        with pytest.raises(kinetree.InvalidValueError, match="frame must be in"):
            v.seek(clip.n_frames)
        with pytest.raises(kinetree.InvalidValueError, match="not of the viewer's"):
            v.play(kinetree.anim.Motion(kinetree.load("panda"), kinetree.load("panda").neutral()))
        # Another model's clip beside it, in step: here the same walk, slowed to half.
        slow = kinetree.anim.Motion.from_clip(clip).with_q(clip.q, fps=clip.fps / 2)
        v.play(clip, paused=True, reference=slow, offset=[60.0, 0.0, 0.0])
        v.seek(200)
        np.testing.assert_allclose(v.q, clip.q[200])


# --- security ----------------------------------------------------------------------------


def _get(port: int, path: str) -> tuple[int, bytes]:
    """GET ``path`` exactly as written (http.client does not normalise it)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def test_path_traversal_gets_404(panda: Viewer) -> None:
    secret = Path(kinetree.__file__)  # a file outside the served folder
    attempts = [
        "/../../../../../../etc/passwd",
        "/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
        "/..%2f..%2f..%2f..%2fetc%2fpasswd",
        "/assets/../../../_viser.py",
        "/..\\..\\..\\_viser.py",
        "//etc/passwd",
        "/" + str(secret),
        "/%2F" + str(secret).lstrip("/"),
    ]
    for path in attempts:
        status, body = _get(panda.port, path)
        assert status == 404, (path, status)
        assert b"root:" not in body and b"kinetree" not in body
    assert _get(panda.port, "/")[0] == 200


def test_no_share_tunnel(panda: Viewer) -> None:
    """viser's share button would publish the viewer on the internet: hidden, and a
    request for it is dropped (the viewer still answers afterwards)."""
    with WireClient(panda.url) as page:
        theme = page.wait_for(lambda m: m["type"] == "ThemeConfigurationMessage")
        assert theme["show_share_button"] is False
        page.wait_for(lambda m: m["type"] == "ReplayDoneMessage")
        page.send({"type": "ShareUrlRequest"})
        page.drag(panda.gizmo_name("flange"), _shifted(panda.model.fk(panda.q), 0.02, 0, 0))
        page.wait_for(lambda m: m["type"] == "SetPositionMessage")
        assert not [m for m in page.messages if "Share" in str(m.get("type"))]


def _outside_address() -> str | None:
    """An address of this machine that is not loopback, if it has one."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # TEST-NET: no packet is sent for UDP connect
            address = s.getsockname()[0]
        except OSError:
            return None
    return None if address.startswith("127.") or address == "0.0.0.0" else address


def test_only_loopback_is_served_by_default(panda: Viewer) -> None:
    address = _outside_address()
    if address is None:
        pytest.skip("this machine has no address besides loopback")
    with pytest.raises(OSError), socket.create_connection((address, panda.port), timeout=5):
        pass
    with socket.create_connection(("127.0.0.1", panda.port), timeout=5):
        pass


def test_a_port_in_use_is_a_clear_error() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(PortInUseError, match=f"port {port} on 127.0.0.1 is in use"):
            Viewer("planar2r", port=port)
        r = _run_cli("view", "planar2r", "--port", str(port), "--timeout", "1")
    assert r.returncode == 2
    assert f"error: port {port} on 127.0.0.1 is in use" in r.stderr
    assert "Traceback" not in r.stderr
    with pytest.raises(kinetree.InvalidValueError, match="port must be"):
        Viewer("planar2r", port=70000)


# --- bad input ---------------------------------------------------------------------------


def test_a_missing_mesh_warns_and_draws_that_link_as_a_skeleton() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GeometryWarning)  # the loader's own warning
        model = kinetree.load(SHAPES)
    with pytest.warns(GeometryWarning, match=r"gone\.stl' of link 'fore'.*skeleton"):
        v = Viewer(model, port=0)
    with v:
        assert v.has_meshes  # the other shapes are drawn
        assert v.skeleton_frames == ("fore",)


def test_unreadable_files_are_loader_errors_without_a_traceback(tmp_path: Path) -> None:
    bad_urdf = tmp_path / "bad.urdf"
    bad_urdf.write_text("<robot name='x'><link name='a'>")
    bad_bvh = tmp_path / "bad.bvh"
    bad_bvh.write_text("HIERARCHY\nROOT Hips\n{\n")
    for args in (["view", str(bad_urdf)], ["view", str(bad_bvh)], ["view", "no_such.urdf"],
                 ["view", "panda", "--target", "no_such_frame"]):  # fmt: skip
        r = _run_cli(*args, "--port", "0", "--timeout", "1")
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert r.stderr.startswith("error: ") and "Traceback" not in r.stderr, r.stderr
    with pytest.raises(kinetree.KinetreeError):
        Viewer(bad_urdf, port=0)


def test_the_view_command_serves_bundled_files_and_stops() -> None:
    r = _run_cli("view", "cmu_walk", "--port", "0", "--timeout", "0.5")
    assert r.returncode == 0, r.stderr
    assert re.search(r"kinetree view: cmu_12_01_walk at http://127\.0\.0\.1:\d+", r.stdout)
    assert "Traceback" not in r.stderr
    r = _run_cli("view", "biped", "--port", "0", "--timeout", "0.5")  # MJCF, a free base
    assert r.returncode == 0 and "kinetree view: biped at" in r.stdout, r.stderr


def _readme_view_commands() -> list[str]:
    """``kinetree view`` lines of the README (in a fence the README test does not run)."""
    text = README.read_text()
    return [line.split("#")[0].strip() for line in text.splitlines()
            if line.strip().startswith("kinetree view ")]  # fmt: skip


@pytest.mark.skipif(os.name != "posix", reason="the README's commands are POSIX shell lines")
def test_the_readme_view_commands_start() -> None:
    commands = _readme_view_commands()
    assert commands, "the README shows no `kinetree view` command"
    for command in commands:
        args = command.split()[1:]
        r = _run_cli(*args, "--port", "0", "--timeout", "0.3")
        assert r.returncode == 0, (command, r.stderr)


def test_collision_spheres_are_drawn_where_the_queries_put_them(tmp_path: Path) -> None:
    from kinetree import ModelBuilder
    from kinetree import geometry as geo
    from kinetree.collision import robot_spheres
    from kinetree.spatial import translation

    b = ModelBuilder("ball_arm", root="base")
    b.add_joint("j1", "base", "l1", axis="z", limits=(-3, 3))
    b.add_joint("j2", "l1", "l2", axis="y", origin=translation([0, 0, 0.3]), limits=(-2, 2))
    b.add_geometry("l2", geo.Sphere(radius=0.05, kind="collision", origin=translation([0.2, 0, 0])))
    model = b.build()
    q = np.array([0.4, -0.7])
    os.environ["KINETREE_CACHE_DIR"] = str(tmp_path)
    try:
        with Viewer(model, q=q, port=0, meshes=False, spheres=True) as v:
            fig = v._figure
            assert fig.sphere_error is None and len(fig.sphere_handles) >= 1
            rs = robot_spheres(model)
            centers, radii = rs.world(model, q)
            for h, frame, c_world, r in zip(
                fig.sphere_handles, rs.frames, centers, radii, strict=True
            ):
                T = model.fk(q, frame)  # the handle sits in its link's frame
                np.testing.assert_allclose(T[:3, :3] @ h.position + T[:3, 3], c_world, atol=1e-9)
                assert h.radius == pytest.approx(r)
                assert h.visible
            fig.set_visible(spheres=False)
            assert not any(h.visible for h in fig.sphere_handles)
    finally:
        os.environ.pop("KINETREE_CACHE_DIR", None)
    with Viewer("planar2r", port=0, meshes=False, spheres=True) as v:  # no collision geometry
        assert v._figure.sphere_handles == [] and "collision geometry" in str(
            v._figure.sphere_error
        )


def _stretched_arm() -> kinetree.Model:
    """Three joints holding a 0.9 m arm straight up at q = 0 (its neutral pose): a
    singularity that damped least squares cannot leave towards the base."""
    from kinetree.spatial import translation

    b = kinetree.ModelBuilder("stretched", root="base")
    b.add_joint("j1", "base", "l1", axis="z", limits=(-2.9, 2.9))
    b.add_joint("j2", "l1", "l2", axis="y", origin=translation([0, 0, 0.3]), limits=(-2.5, 2.5))
    b.add_joint("j3", "l2", "l3", axis="y", origin=translation([0, 0, 0.3]), limits=(-2.5, 2.5))
    b.add_frame("tip", "l3", translation([0, 0, 0.3]))
    return b.build()


def test_a_drag_from_a_stretched_pose_gets_out() -> None:
    """Regression: from a neutral pose held straight, the live solve (damped least
    squares, no restarts) stalled ("IK not reached") where Model.ik reaches."""
    model = _stretched_arm()
    with Viewer(model, port=0, meshes=False, targets=["tip"]) as v:
        v.set_options(mode="position")
        goal = np.array([0.0, 0.0, 0.65])  # straight below the tip: the arm must bend
        assert model.ik(kinetree.ik.Position(goal), "tip").success  # reachable
        result = v.set_target("tip", goal)
        assert result is not None and result.success, v.status
        np.testing.assert_allclose(model.fk(v.q, "tip")[:3, 3], goal, atol=1e-5)
        assert "IK reached from a bent start" in v.status
        assert np.all(model.within_limits(v.q))


# --- skinned meshes -------------------------------------------------------------------


def test_a_skinned_character_is_drawn_as_its_mesh_deforming_with_the_pose() -> None:
    """A character with a skin (an FBX export of the ufbx test data) is a viser skinned
    mesh, not a stick figure; after the pose changes, the mesh the browser draws (its
    bones applied to the bind vertices) is kinetree.io.skin.deform at the new pose.
    (Dragging a hand in a real browser: tests/browser.)"""
    pytest.importorskip("ufbx")
    from kinetree.io.skin import deform

    model = kinetree.load(TESTS / "data" / "fbx" / "maya_game_sausage_7500_binary_wiggle.fbx")
    (skin,) = model.skins
    with Viewer(model, port=0, targets=["joint4"]) as v:
        fig = v._figure
        assert fig.has_meshes and not fig.show_skeleton
        assert v.note is None  # no "drawn as a skeleton" note beside the skinned mesh
        (handle,) = fig.skin_handles
        assert len(handle.bones) == len(skin.joint_names) == 3
        assert handle.name == "/robot_skin0"
        before = fig.skin_vertices()
        np.testing.assert_allclose(before, deform(skin, model, v.q), atol=1e-9)
        q = v.q.copy()
        sl = model.q_slice("joint2")
        q[sl] = [np.cos(0.3), 0.0, 0.0, np.sin(0.3)]  # joint2 turned by 0.6 rad about z
        v.show(q)
        after = fig.skin_vertices()
        np.testing.assert_allclose(after, deform(skin, model, q), atol=1e-9)
        moved = np.linalg.norm(after - before, axis=1)
        assert moved.max() > 0.005  # the vertices bound past joint2 swung
        assert moved.min() < 1e-9  # those bound to joint1 alone stayed
        fig.set_visible(meshes=False)
        assert not handle.visible
