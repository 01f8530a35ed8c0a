"""Retargeting on any executor (Dask's Client, concurrent.futures, a map function), the
self-collision count of a motion, and the self_collision option's pass-through."""

from __future__ import annotations

import dataclasses
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import kinetree
from ik_helpers import SWING
from kinetree.anim import Motion, self_collision_frames
from kinetree.anim.retarget.dataset import Job, retarget_folder, retarget_job
from kinetree.errors import InvalidValueError, UnsupportedError

DATA = Path(__file__).resolve().parents[2] / "data" / "bvh"
CMU = DATA / "cmu_12_01_walk.bvh"


def _swing(tmp_path: Path, x: float) -> tuple[Motion, np.ndarray]:
    path = tmp_path / "swing.urdf"
    path.write_text(SWING.format(x=x))
    model = kinetree.load(path)
    th = np.linspace(0.0, 2.0 * np.pi, 91)
    return Motion(model=model, q=np.stack([th, np.zeros_like(th)], axis=1), fps=30.0), th


def test_self_collision_frames_against_the_circle(tmp_path: Path) -> None:
    motion, th = _swing(tmp_path, -0.5)
    s = self_collision_frames(motion, disabled={})
    # centre distance on the circle: 2 r sin(|th - pi| / 2), r = 0.5; overlap below 0.2
    truth = np.flatnonzero(np.sin(np.abs(th - np.pi) / 2.0) < 0.2)
    assert truth.size > 0
    np.testing.assert_array_equal(s["frames"], truth)
    assert s["count"] == truth.size and s["pairs"] == {("base", "l2"): truth.size}
    assert s["min_distance"] == pytest.approx(-0.2, abs=1e-9)  # the spheres coincide at pi
    assert s["ignored"] == ()


def test_pairs_touching_at_the_neutral_pose_are_left_out(tmp_path: Path) -> None:
    motion, _ = _swing(tmp_path, 0.5)  # the spheres coincide at q = 0
    s = self_collision_frames(motion, disabled={})
    assert s["ignored"] == (("base", "l2"),) and s["count"] == 0
    strict = self_collision_frames(motion, disabled={}, at_rest_ok=False)
    assert strict["count"] > 0


def test_self_collision_option_needs_the_constrained_ik() -> None:
    from kinetree.ik.options import IKOptions

    clip = kinetree.read_bvh(CMU).slice(0, 20)
    with pytest.raises(InvalidValueError, match="self_collision must be"):
        kinetree.retarget(clip, "humanoid", "cmu", self_collision=-1.0)
    if "self_collision" in {f.name for f in dataclasses.fields(IKOptions)}:
        pytest.skip("the constrained IK is here: the option passes through")
    with pytest.raises(UnsupportedError, match=r"constrained IK.*self_collision_frames"):
        kinetree.retarget(clip, "humanoid", "cmu", self_collision=True)


@pytest.fixture(scope="module")
def clips(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("clips")
    short = kinetree.read_bvh(CMU).slice(0, 60)
    for k in range(3):
        kinetree.write_bvh(folder / f"walk{k}.bvh", short)
    (folder / "broken.bvh").write_text("HIERARCHY\nROOT Hips\n{\n")
    return folder


class _Eager:
    """The smallest executor: ``submit`` runs now and returns a done future."""

    class _Done:
        def __init__(self, value: object) -> None:
            self.value = value

        def result(self) -> object:
            return self.value

    def submit(self, fn, *args):  # type: ignore[no-untyped-def]
        return self._Done(fn(*args))


@pytest.mark.parametrize("kind", ["submit", "threads", "map"])
def test_folder_on_any_executor(clips: Path, tmp_path: Path, kind: str) -> None:
    ref = retarget_folder(clips, "humanoid", tmp_path / "ref", mapping="cmu", workers=1)
    if kind == "threads":
        with ThreadPoolExecutor(1) as pool:
            run = retarget_folder(clips, "humanoid", tmp_path / "out", mapping="cmu",
                                  executor=pool)  # fmt: skip
    else:
        ex = _Eager() if kind == "submit" else (lambda fn, items: map(fn, items))
        run = retarget_folder(clips, "humanoid", tmp_path / "out", mapping="cmu", executor=ex)
    assert [Path(o.source).name for o in run.outcomes] == [
        Path(o.source).name for o in ref.outcomes
    ]
    assert len(run.failed) == 1 and "broken.bvh" in run.failed[0].source
    for a, b in zip(ref.outcomes, run.outcomes):
        if a.ok:
            qa = np.load(a.output)["q"] if a.output else None
            qb = np.load(b.output)["q"] if b.output else None
            np.testing.assert_array_equal(qa, qb)  # the same work, wherever it ran
    assert "3/4 clips" in run.table()


def test_a_job_reports_a_robot_that_does_not_load(clips: Path, tmp_path: Path) -> None:
    out = retarget_job(Job(str(clips / "walk0.bvh"), str(tmp_path / "w.npz"), "robocop"))
    assert not out.ok and "robocop" in (out.error or "")


def test_bad_executor_is_named(clips: Path, tmp_path: Path) -> None:
    with pytest.raises(InvalidValueError, match="executor must have submit"):
        retarget_folder(clips, "humanoid", tmp_path / "out", executor=42)
