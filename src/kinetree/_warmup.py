"""Compile the common kernels ahead of use: ``kinetree.warmup()`` and ``kinetree warmup``
(run by the Makefile's set-up, so that neither ``make demo`` nor ``make test`` waits at a
first call). The kernels compile for argument types, not for models, so small stand-in
models serve: the Panda for FK, Jacobians and the IK drivers, the built-in humanoid for
the driver of ball joints with cone limits, a two-link arm of spheres for collisions,
collision-aware IK and the one-step differential IK.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from typing import Any

from ._compile import TIERED_ENV

__all__ = ["warmup"]


def warmup(methods: tuple[str, ...] = ("auto",), verbose: bool = True, jobs: int = 1) -> float:
    """Compile the kernels of FK, Jacobians and IK with ``methods`` (a tuple of
    :data:`kinetree.ik.METHODS`; default the ``auto`` method) ahead of use; returns
    the seconds it took.

    ``jobs=2`` compiles the bodies' kernels (whole-body driver, collisions, the
    commands') in a second process while this one compiles the arm's: the compiler runs
    on one core, so two cores take about half the time."""
    if jobs < 1:
        from .errors import InvalidValueError

        raise InvalidValueError(f"jobs must be at least 1, got {jobs}")
    t0 = time.perf_counter()
    # Compile here and now: the tiered start would hand the solves to the interpreter.
    tiered = os.environ.get(TIERED_ENV)
    os.environ[TIERED_ENV] = "0"
    try:
        if jobs > 1 and "auto" in methods:
            _warm_beside(methods, verbose)
        else:
            _warm(methods, verbose)
    finally:
        if tiered is None:
            os.environ.pop(TIERED_ENV, None)
        else:
            os.environ[TIERED_ENV] = tiered
    return time.perf_counter() - t0


def _warm_beside(methods: tuple[str, ...], verbose: bool) -> None:
    """The arm's kernels here, the bodies' in a child process at the same time."""
    from .errors import KinetreeError

    child = subprocess.Popen(
        [sys.executable, "-m", "kinetree._warmup", "bodies", "1" if verbose else "0"],
        env=dict(os.environ, **{TIERED_ENV: "0"}),
    )
    try:
        _warm(methods, verbose, bodies=False)
    except BaseException:
        child.terminate()
        child.wait()
        raise
    if child.wait() != 0:
        raise KinetreeError(f"kinetree warmup: the bodies' compile exited {child.returncode}")


def _warm_bodies(verbose: bool) -> None:
    """The kernels of bodies and commands (the second process's half of :func:`_warm`:
    about as long as the arm's and the collisions' together)."""
    from .loading import load

    _warm_whole_body(verbose)
    _warm_commands(load("panda"), verbose)


def _warm(methods: tuple[str, ...], verbose: bool, bodies: bool = True) -> None:
    import numpy as np

    from .ik.method_table import KERNEL_METHODS
    from .ik.targets import Position
    from .loading import load

    model = load("panda")
    Q = model.random_configuration(300, rng=0)
    T = model.fk(Q)  # batch and row kernels
    model.fk(Q[0])
    model.fk_all(Q[:2])
    model.jacobian(Q[:2])
    for method in methods:
        if verbose:
            print(f"kinetree warmup: {method} ...", file=sys.stderr, flush=True)
        model.ik(T[0], method=method)
        if method in KERNEL_METHODS:
            model.ik(Position(T[1][:3, 3]), method=method)
    if "auto" in methods:
        model.ik(T[:20])
        model.ik(T[0], q0=np.asarray(Q[1]), restarts=0)
        if bodies:
            _warm_bodies(verbose)
        _warm_collision(verbose)


def _warm_commands(model: Any, verbose: bool) -> None:
    """What the commands run besides a plain solve: the recorded step-by-step reach
    (``kinetree animate``), a reachability map's solves and manipulability (``kinetree
    reach-map``), a clip edited by targets (``kinetree bvh retarget``) and a clip
    retargeted onto a robot (``kinetree retarget``, ``kinetree.anim.retarget_robot``)."""
    from . import anim, data, workspace
    from .io.bvh import read_bvh

    if verbose:
        print("kinetree warmup: commands (animate, reach-map, retarget) ...", file=sys.stderr)
    goal = model.fk(model.random_configuration(rng=2))[:3, 3]
    anim.reach(model, goal, method="pinv", step=0.5, max_iter=4)
    workspace.reachability(model, resolution=0.5, orientations=2, restarts=1)
    clip = read_bvh(data.path("cmu_walk")).slice(0, 4)
    foot = clip.model.end_effectors[0]
    T = clip.model.fk(clip.q, foot)
    anim.edit_by_targets(clip, {foot: T[:, :3, 3] + 0.5})
    anim.retarget_robot(clip, "humanoid", iterations=(3, 2))


def _warm_whole_body(verbose: bool) -> None:
    """The driver of bodies whose ball joints have cone limits (BVH characters, the
    built-in humanoid: the swing-twist projection) on several effectors at once."""
    from .ik.targets import Pose
    from .models import humanoid

    if verbose:
        print("kinetree warmup: whole bodies (ball joints) ...", file=sys.stderr, flush=True)
    body = humanoid()
    q = body.random_configuration(rng=0)
    body.ik({f: Pose(body.fk(q, f)) for f in body.end_effectors[:4]}, max_iter=5)


def _warm_collision(verbose: bool) -> None:
    """Compile the collision distances, the collision-aware IK driver and the one-step
    differential IK on a two-link arm made of spheres (the kernels do not depend on
    the model)."""
    from . import diffik
    from .builder import ModelBuilder
    from .collision.world import Sphere
    from .geometry import Sphere as SphereShape
    from .ik.targets import Position
    from .spatial import translation

    if verbose:
        print("kinetree warmup: collisions, one-step IK ...", file=sys.stderr, flush=True)
    b = ModelBuilder("warmup_arm", root="base")
    b.add_joint("j1", "base", "l1", axis="z", limits=(-2.9, 2.9))
    b.add_joint("j2", "l1", "l2", axis="y", origin=translation([0, 0, 0.3]), limits=(-2, 2))
    b.add_frame("tip", "l2", translation([0.4, 0, 0]))
    for frame in ("l1", "l2"):
        b.add_geometry(
            frame, SphereShape(radius=0.05, kind="collision", origin=translation([0.1, 0, 0]))
        )
    arm = b.build()
    ball = Sphere(radius=0.05, center=(0.0, 0.5, 0.3))
    q = arm.neutral()
    arm.distance(q, obstacles=[ball])
    goal = Position(arm.fk(arm.random_configuration(rng=1), "tip")[:3, 3])
    arm.ik(goal, "tip", obstacles=[ball])
    limits = [diffik.ConfigurationLimit(), diffik.CollisionAvoidanceLimit([ball], margin=0.01)]
    task = diffik.FrameTask("tip", arm.fk(q, "tip"), position_cost=1.0, orientation_cost=0.0)
    diffik.solve_step(arm, q, [task, diffik.PostureTask(cost=1e-3)], dt=0.01, limits=limits)


if __name__ == "__main__":  # the second process of ``warmup(jobs=2)``
    if sys.argv[1:2] == ["bodies"]:
        _warm_bodies(verbose=sys.argv[2:3] == ["1"])
