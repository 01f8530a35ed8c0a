"""The viewer in a real browser: headless Chromium draws the Panda and a CMU walk.

Opt-in, not part of ``make test``: ``make test-browser`` installs Debian's chromium
when it is missing, playwright (which drives that chromium) and the viewer and meshes
extras, then runs this with ``KINETREE_BROWSER=1``. WebGL runs on SwiftShader (the CPU).

Each test opens the viewer's page, waits until the scene has been drawn, saves a
screenshot into ``docs/figures`` (the README shows them) and checks that the 3D view
is not blank: its pixels vary, and the robot's own colours are there (the Panda's
dark joint caps and the gizmo's axis colours; the walk's blue bones; a skinned glTF
character's grey body, not its stick figure, and its arm moved after a hand is dragged).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

if os.environ.get("KINETREE_BROWSER") != "1":
    pytest.skip(
        "browser tests are opt-in: make test-browser (sets KINETREE_BROWSER=1)",
        allow_module_level=True,
    )

sync_playwright = pytest.importorskip("playwright.sync_api").sync_playwright
Image = pytest.importorskip("PIL.Image")

import kinetree  # noqa: E402
from kinetree.viewer import Viewer  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
FIGURES = REPO / "docs" / "figures"
WALK = REPO.parent / "shared" / "data" / "bvh" / "cmu_12_01_walk.bvh"
if not WALK.exists():  # the same file, kept with the tests
    WALK = REPO / "tests" / "data" / "bvh" / "cmu_12_01_walk.bvh"
WIDTH, HEIGHT = 1200, 760
PANEL = 340  # the side panel's width on the right [px]
# Hide viser's "software WebGL" notice: it is about this headless set-up, not the page.
HIDE_NOTICES = "[class*='Notification'] { display: none !important; }"


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("no chromium on PATH (make test-browser installs it)")
    with sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=chromium,
            args=["--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--no-sandbox"],
        )
        yield b
        b.close()


#: Seconds a viewer's IK solve may take here: the first compiles the kernels (minutes on a
#: loaded 2-core machine with a cold cache), and SwiftShader shares the CPU.
SOLVE_TIMEOUT = 900.0


@pytest.fixture(scope="module", autouse=True)
def compiled_kernels() -> None:
    """Compile the IK kernels before any page opens (not inside a viewer's solve)."""
    panda = kinetree.load("panda")
    panda.ik(panda.fk(panda.neutral(), "flange"), "flange", max_iter=5)


def _scene(shot: np.ndarray) -> np.ndarray:
    """The 3D view of a screenshot: left of the panel."""
    return shot[:, : WIDTH - PANEL - 20, :3].astype(float)


def _shoot(
    browser: object,
    url: str,
    path: Path,
    drawn: Callable[[np.ndarray], bool],
    timeout: float = 300.0,
) -> np.ndarray:
    """Open ``url``, wait until ``drawn(screenshot)`` holds, save the picture to ``path``."""
    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})  # type: ignore[attr-defined]
    # SwiftShader draws on the CPU: on a busy machine one frame (and so one screenshot)
    # can take longer than playwright's 30 s default.
    page.set_default_timeout(1000 * timeout)
    try:
        page.goto(url)
        page.add_style_tag(content=HIDE_NOTICES)
        deadline = time.monotonic() + timeout
        shot = None
        while time.monotonic() < deadline:
            page.wait_for_timeout(1000)
            page.screenshot(path=str(path))
            with Image.open(path) as im:
                shot = np.asarray(im.convert("RGB"))
            if drawn(shot):
                page.wait_for_timeout(1500)  # let late parts (meshes) arrive too
                page.screenshot(path=str(path))
                with Image.open(path) as im:
                    return np.asarray(im.convert("RGB"))
        raise AssertionError(f"the scene was not drawn within {timeout} s; see {path}")
    finally:
        page.close()


def _near(scene: np.ndarray, rgb: tuple[int, int, int], tol: float) -> int:
    """Pixels within ``tol`` of colour ``rgb``."""
    return int(np.sum(np.linalg.norm(scene - np.array(rgb, dtype=float), axis=-1) < tol))


def _dark(scene: np.ndarray) -> int:
    """Dark grey pixels (the Panda's joint caps): all channels low and alike."""
    return int(np.sum((scene.max(axis=-1) < 90) & (np.ptp(scene, axis=-1) < 25)))


def _saturated(scene: np.ndarray, channel: int) -> int:
    """Pixels where ``channel`` clearly dominates (a gizmo's red, green or blue axis)."""
    others = np.delete(scene, channel, axis=-1).max(axis=-1)
    return int(np.sum(scene[..., channel] - others > 80))


def test_the_panda_with_its_meshes(browser: object) -> None:
    panda = kinetree.load("panda")
    with Viewer(panda, port=0) as v:
        assert v.has_meshes, v.note  # make test-browser installs kinetree[meshes]
        goal = panda.fk(v.q, "flange")
        goal[:3, 3] += [0.12, 0.15, -0.1]
        result = v.set_target("flange", goal, timeout=SOLVE_TIMEOUT)
        assert result is not None and result.success, v.status
        out = FIGURES / "viewer_panda.png"
        shot = _shoot(browser, v.url, out, lambda s: _dark(_scene(s)) > 500)
    scene = _scene(shot)
    assert scene.std() > 10.0  # not a blank page
    assert _dark(scene) > 500  # the joint caps
    assert all(_saturated(scene, c) > 50 for c in range(3))  # the gizmo's three axes


def test_a_cmu_walk_from_bvh(browser: object) -> None:
    clip = kinetree.read_bvh(WALK)
    with Viewer(clip.model, port=0, targets=["RightHandIndex1_end", "LeftToeBase_end"]) as v:
        v.play(clip, paused=True)
        v.seek(240)
        out = FIGURES / "viewer_walk.png"
        shot = _shoot(browser, v.url, out, lambda s: _near(_scene(s), (30, 90, 200), 60) > 200)
    scene = _scene(shot)
    assert scene.std() > 10.0
    assert _near(scene, (30, 90, 200), 60) > 200  # the bones


KENNEY = REPO / "tests" / "data" / "fbx" / "maya_kenney_character_7700_binary.fbx"


def _body(scene: np.ndarray) -> int:
    """Pixels of the character's grey skin, lit: channels alike, neither dark nor white."""
    mean = scene.mean(axis=-1)
    return int(np.sum((np.ptp(scene, axis=-1) < 20) & (mean > 70) & (mean < 215)))


def test_a_skinned_gltf_character_deforms_when_its_hand_is_dragged(
    browser: object, tmp_path: Path
) -> None:
    """Kenney's character (FBX in the tests' data) written as glTF with its skinned mesh
    and loaded from the .glb: the page draws the body (many grey pixels, no blue stick
    figure); after the right hand's gizmo is dragged up, the arm is drawn elsewhere."""
    pytest.importorskip("ufbx")
    from kinetree.anim import Motion

    fbx_model = kinetree.load(KENNEY)
    glb = tmp_path / "kenney.glb"
    kinetree.write_clip(Motion(model=fbx_model, q=fbx_model.neutral()[None], fps=30.0), glb)
    model = kinetree.load(glb)
    assert model.skins, "the glTF file lost its skinned mesh"
    with Viewer(model, port=0, targets=["RightHand"]) as v:
        assert v.has_meshes and not v._figure.show_skeleton and v.note is None
        before = _shoot(
            browser, v.url, FIGURES / "viewer_character.png", lambda s: _body(_scene(s)) > 5000
        )
        goal = model.fk(v.q, "RightHand")
        size = float(np.ptp(model.fk_all(v.q)[:, :3, 3], axis=0).max())
        goal[:3, 3] += np.array([0.0, 0.25, 0.0]) * size  # the hand up a quarter of the body
        result = v.set_target("RightHand", goal[:3, 3], timeout=SOLVE_TIMEOUT)
        assert result is not None and result.success, v.status
        after = _shoot(
            browser,
            v.url,
            FIGURES / "viewer_character_dragged.png",
            lambda s: _body(_scene(s)) > 5000,
        )
    a, b = _scene(before), _scene(after)
    assert _body(a) > 5000 and _body(b) > 5000  # the body is drawn, both times
    assert _near(a, (30, 90, 200), 60) < 200  # no stick figure's blue bones
    changed = np.linalg.norm(a - b, axis=-1) > 40
    assert changed.sum() > 1500  # the arm (and what it uncovered) moved
