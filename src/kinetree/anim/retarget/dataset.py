"""Retarget a data set: a folder of clips onto one robot, in parallel on every core.

:func:`retarget_folder` hands the clips to worker processes (one per core by default,
each with one IK thread so they do not fight over cores), writes one output per clip,
and returns a :class:`DatasetRun`: one :class:`ClipOutcome` per clip with its time and
quality numbers, or the error that stopped it. A clip that fails is listed and the rest
finish. :meth:`DatasetRun.table` is the summary as a Markdown table.

On a cluster, pass ``executor=``: anything with ``submit(fn, *args)`` returning futures
with ``.result()`` (a ``dask.distributed.Client``, a ``concurrent.futures`` executor), or
a mapping function ``map(fn, items) -> results in order`` (``kinetree.distributed.map``
with its client bound). Each task is :func:`retarget_job` on one :class:`Job`; a worker
loads the robot once and keeps it for the clips that follow.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import InvalidValueError
from ...model import Model
from .saving import FORMATS, save_motion

__all__ = ["ClipOutcome", "DatasetRun", "Job", "clips_in", "retarget_folder", "retarget_job"]


@dataclass(frozen=True)
class ClipOutcome:
    """What became of one clip.

    Attributes:
        source: the clip's path.
        output: the file written, or None when the clip failed.
        frames: frames retargeted (0 when it failed).
        seconds: time the retarget took [s] (reading and writing included).
        error: why it failed (``"<ErrorType>: message"``), or None.
        quality: the :func:`~.quality.retarget_quality` numbers, or None.
    """

    source: str
    output: str | None
    frames: int
    seconds: float
    error: str | None = None
    quality: Mapping[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class DatasetRun:
    """A data-set run: every clip's outcome, the wall time [s] and the worker count."""

    outcomes: tuple[ClipOutcome, ...]
    seconds: float
    workers: int
    robot: str = ""
    settings: Mapping[str, Any] = field(default_factory=dict)

    @property
    def failed(self) -> tuple[ClipOutcome, ...]:
        return tuple(o for o in self.outcomes if not o.ok)

    @property
    def frames(self) -> int:
        return sum(o.frames for o in self.outcomes)

    def table(self) -> str:
        """The summary: one Markdown row per clip, then the totals and the failures."""
        head = (
            "| clip | frames | time [s] | frames/s | limits | slide median L / R [mm/frame] "
            "| slide max L / R [mm] | dip max [mm] | distance ratio | status |"
        )
        rows = [head, "|" + "---|" * 10]
        for o in self.outcomes:
            name = Path(o.source).name
            if not o.ok or o.quality is None:
                rows.append(
                    f"| {name} | - | {o.seconds:.2f} | - | - | - | - | - | - | failed: {o.error} |"
                )
                continue
            q = o.quality
            feet = list(q["feet"].values())
            med = " / ".join(f"{1e3 * f['slide_median']:.2f}" for f in feet) or "-"
            top = " / ".join(f"{1e3 * f['slide_max']:.1f}" for f in feet) or "-"
            dip = max((f["dip_max"] for f in feet), default=0.0)
            warned = len(q.get("warnings", ()))
            status = "ok" if not warned else f"ok, {warned} warning{'s' * (warned > 1)}"
            rows.append(
                f"| {name} | {o.frames} | {o.seconds:.2f} | {o.frames / max(o.seconds, 1e-9):.0f}"
                f" | {'yes' if q['within_limits'] else 'NO'} | {med} | {top} | {1e3 * dip:.1f} "
                f"| {q['distance_ratio']:.3f} | {status} |"
            )
        ok = len(self.outcomes) - len(self.failed)
        rows.append("")
        rows.append(
            f"{ok}/{len(self.outcomes)} clips, {self.frames} frames in {self.seconds:.1f} s on "
            f"{self.workers} worker(s) ({self.frames / max(self.seconds, 1e-9):.0f} frames/s "
            "overall, process start and robot loading included)"
        )
        for o in self.failed:
            rows.append(f"- failed: {o.source}: {o.error}")
        return "\n".join(rows)


def clips_in(sources: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> list[Path]:
    """The ``.bvh`` files of a folder (recursively, sorted), or the given files."""
    if isinstance(sources, (str, os.PathLike)):
        p = Path(sources)
        if p.is_dir():
            return sorted(q for q in p.rglob("*") if q.suffix.lower() == ".bvh")
        return [p]
    return [Path(s) for s in sources]


# One robot per worker process, loaded once by the initializer.
_WORKER: dict[str, Any] = {}


def _init_worker(robot: Any, mapping: Any, options: Mapping[str, Any]) -> None:
    """A worker process: one IK thread (the processes share the cores), its robot."""
    os.environ["KINETREE_NUM_THREADS"] = "1"
    _load(robot, mapping, options)


def _load(robot: Any, mapping: Any, options: Mapping[str, Any]) -> None:
    from .robots import load_robot

    _WORKER["robot"] = load_robot(robot)
    _WORKER["mapping"] = mapping
    _WORKER["options"] = dict(options)


def _one(source: str, output: str) -> ClipOutcome:
    from .human_to_robot import retarget_robot

    t0 = time.perf_counter()
    try:
        m = retarget_robot(source, _WORKER["robot"], _WORKER["mapping"], **_WORKER["options"])
        save_motion(m, output)
    except Exception as exc:  # a data set lists every failure and goes on
        return ClipOutcome(
            source, None, 0, time.perf_counter() - t0, f"{type(exc).__name__}: {exc}"
        )
    return ClipOutcome(
        source, output, m.n_frames, time.perf_counter() - t0, None, m.metadata["quality"]
    )


@dataclass(frozen=True)
class Job:
    """One clip of a data set, as sent to a worker: the clip and output paths, the robot
    (a name, a file or a :class:`Model`), the mapping and the options of
    :func:`kinetree.retarget`."""

    source: str
    output: str
    robot: Any
    mapping: Any = None
    options: Mapping[str, Any] = field(default_factory=dict)


def _robot_key(robot: Any) -> Any:
    return ("model", id(robot)) if isinstance(robot, Model) else ("spec", os.fspath(robot))


def retarget_job(job: Job) -> ClipOutcome:
    """Retarget one clip where this runs (a worker process of any executor): loads the
    robot once per process, writes the output, and returns a :class:`ClipOutcome`
    (failures included: it does not raise)."""
    t0 = time.perf_counter()
    try:
        key = _robot_key(job.robot)
        if _WORKER.get("key") != key:
            _WORKER["robot"] = job.robot if isinstance(job.robot, Model) else _loaded(job.robot)
            _WORKER["key"] = key
        _WORKER["mapping"] = job.mapping
        _WORKER["options"] = dict(job.options)
    except Exception as exc:  # a robot that does not load fails its clips, listed
        return ClipOutcome(
            job.source, None, 0, time.perf_counter() - t0, f"{type(exc).__name__}: {exc}"
        )
    return _one(job.source, job.output)


def _loaded(robot: Any) -> Model:
    from .robots import load_robot

    return load_robot(robot)


def _run_on(executor: Any, jobs: list[Job]) -> list[ClipOutcome]:
    """The jobs on an executor with ``submit`` (futures with ``result``) or on a mapping
    function; results in the order of ``jobs``."""
    submit = getattr(executor, "submit", None)
    if callable(submit):
        futures = [submit(retarget_job, job) for job in jobs]
        return [f.result() for f in futures]
    if callable(executor):
        return list(executor(retarget_job, jobs))
    raise InvalidValueError(
        "executor must have submit(fn, *args) returning futures with .result() (a Dask "
        "Client, a concurrent.futures executor) or be a function map(fn, items), got "
        f"{type(executor).__name__}"
    )


def _outputs(clips: Sequence[Path], out_dir: Path, suffix: str) -> list[Path]:
    """One output per clip: the clip's stem, numbered when two clips share it."""
    seen: dict[str, int] = {}
    out = []
    for c in clips:
        k = seen.get(c.stem, 0)
        seen[c.stem] = k + 1
        out.append(out_dir / (f"{c.stem}{suffix}" if k == 0 else f"{c.stem}_{k}{suffix}"))
    return out


def retarget_folder(
    sources: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    robot: str | os.PathLike[str] | Model,
    out_dir: str | os.PathLike[str],
    *,
    mapping: Any = None,
    fmt: str = ".npz",
    workers: int | None = None,
    executor: Any = None,
    **options: Any,
) -> DatasetRun:
    """Retarget every clip of ``sources`` onto ``robot``, one output file per clip.

    Args:
        sources: a folder (its ``.bvh`` files, recursively) or a list of clip files.
        robot: as :func:`kinetree.retarget` takes it (a Model is sent to each worker).
        out_dir: where the outputs go (created); ``<clip stem><fmt>``.
        mapping: as :func:`kinetree.retarget` takes it (default: a guess per clip).
        fmt: ``".npz"``, ``".csv"`` or ``".bvh"``.
        workers: worker processes (default: the cores this process may use); 1 runs in
            this process. Ignored with ``executor``.
        executor: run the clips there instead: a ``dask.distributed.Client`` or any
            object with ``submit`` returning futures with ``.result()``, or a function
            ``map(fn, items)`` returning results in order (for example
            ``functools.partial(kinetree.distributed.map, client=client)``).
        options: more keyword options of :func:`kinetree.retarget`.
    """
    suffix = fmt if fmt.startswith(".") else f".{fmt}"
    if suffix not in FORMATS:
        raise InvalidValueError(f"fmt must be one of {', '.join(FORMATS)}, got {fmt!r}")
    clips = clips_in(sources)
    if not clips:
        raise InvalidValueError(f"no .bvh clips in {sources!r}")
    if workers is None:
        workers = max(1, len(os.sched_getaffinity(0)))
    if not isinstance(workers, int) or workers < 1:
        raise InvalidValueError(f"workers must be a positive integer, got {workers!r}")
    workers = min(workers, len(clips))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    targets = _outputs(clips, out, suffix)
    t0 = time.perf_counter()
    name = robot.name if isinstance(robot, Model) else str(robot)
    if executor is not None:
        todo = [Job(str(c), str(t), robot, mapping, dict(options)) for c, t in zip(clips, targets)]
        outcomes = _run_on(executor, todo)
        n = _workers_of(executor)
        return DatasetRun(tuple(outcomes), time.perf_counter() - t0, n, name, dict(options))
    jobs = [(str(c), str(t)) for c, t in zip(clips, targets)]
    if workers == 1:  # here, each clip's IK on every core
        saved = dict(_WORKER)
        try:
            _load(robot, mapping, options)
            outcomes = [_one(*job) for job in jobs]
        finally:
            _WORKER.clear()
            _WORKER.update(saved)
    else:
        ctx = multiprocessing.get_context("spawn")  # no fork of a process with threads
        with ProcessPoolExecutor(
            workers, mp_context=ctx, initializer=_init_worker, initargs=(robot, mapping, options)
        ) as pool:
            outcomes = list(pool.map(_one, *zip(*jobs)))
    return DatasetRun(tuple(outcomes), time.perf_counter() - t0, workers, name, dict(options))


def _workers_of(executor: Any) -> int:
    """How many workers an executor has, where it says (0: unknown)."""
    info = getattr(executor, "scheduler_info", None)
    if callable(info):
        try:
            return len(info().get("workers", {}))
        except Exception:  # a client that cannot tell
            return 0
    n = getattr(executor, "_max_workers", None)
    return int(n) if isinstance(n, int) else 0
