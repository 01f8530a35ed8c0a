"""BVH motion capture files: read a clip (skeleton + motion) and write it back.

Long because BVH is read and written here with every check a real file needs (channel
orders, End Sites, line numbers in errors, an iterative parser for deep files).

A BVH file has a ``HIERARCHY`` (joints with an ``OFFSET`` from their parent and a
list of ``CHANNELS``) and a ``MOTION`` section (one line of channel values per
frame). :func:`read_bvh` turns it into a :class:`BVHClip`: a :class:`Model` of the
skeleton and a ``(frames, dof)`` array ``q``. :func:`write_bvh` writes a clip back.

Model layout
------------
* The model root is a fixed frame ``"world"`` (``"_world"`` if a BVH joint is
  already called ``world``). Its pose is the identity, or the base rotation
  chosen by ``up=`` (see :func:`read_bvh`).
* Every BVH joint is a visible frame with the joint's name. Its pose relative to
  its parent joint is ``Trans(t) @ R``. ``R = C1 @ C2 @ ... @ Cn`` is its rotation
  channels in the order listed in the file (each ``Ci`` a rotation about the current
  x/y/z axis), so ``Zrotation Xrotation Yrotation`` is ``R = Rz(a) Rx(b) Ry(c)``.
  ``t`` is its translation along the parent's axes: by default
  (``positions="replace"``) a position channel *replaces* the OFFSET along its axis
  (the joint sits at the channel values in its parent's frame; an axis with no
  channel keeps the OFFSET), on the root and on every other joint, as Blender
  (``location = channel - rest head``), MotionBuilder, Holden's loader of
  deep-motion-editing, pybvh and PyMO (root) read files, and as the Bandai-Namco
  data set writes them (channel values = OFFSET at rest). The OFFSET is the rest
  translation. ``positions="add"`` reads ``t = OFFSET + p`` instead (three.js,
  PyMO's inner joints). Position channels translate the joint in its parent's frame
  wherever they stand in the channel list: a root listing its rotations before its
  positions moves like its position-first twin (:func:`node_order`).
* One channel is one DoF; a joint's DoFs are its position channels, then its
  rotation channels, each in file order: rotations are revolute DoFs named
  ``f"{joint}_{axis}"`` (``"Hips_z"``), positions prismatic DoFs named
  ``f"{joint}_{channel}"`` (``"Hips_Xposition"``). All DoFs of a joint are grouped
  under the joint's name, so ``model.joint_indices("Hips")`` selects them all.
  The nodes between the channels of one joint are hidden (``"Hips#z"``,
  ``"Hips#pos_x"``) and not in ``model.frame_names``. Limits: none. ``q`` of a
  prismatic DoF is the channel value itself; with ``positions="replace"`` its node
  keeps the OFFSET as origin and moves by ``q - OFFSET`` (the builder's ``offset=``,
  MuJoCo's ``ref``), and ``model.neutral()`` (the rest pose) holds the OFFSET there.
* An ``End Site`` is a fixed frame named ``f"{parent}_end"`` (a second End Site
  under the same joint: ``f"{parent}_end2"``, and so on).

Units: angles in the file are degrees, ``clip.q`` holds radians for rotation
DoFs. Offsets and position channels keep the file's length unit (times
``scale``); ``clip.q`` holds those lengths for prismatic DoFs.
"""

from __future__ import annotations

import dataclasses
import math
import operator
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..builder import MAX_ORIGIN_DISTANCE, ModelBuilder, short_float
from ..errors import FileFormatError, InvalidValueError, KinetreeError, ShapeError
from ..model import Model
from ._files import as_path, write_text
from .body_parts import find_body_parts

__all__ = [
    "CHANNEL_NAMES",
    "BVHClip",
    "BVHJoint",
    "dof_name",
    "node_order",
    "read_bvh",
    "write_bvh",
]

CHANNEL_NAMES = ("Xposition", "Yposition", "Zposition", "Xrotation", "Yrotation", "Zrotation")
_CANONICAL = {c.lower(): c for c in CHANNEL_NAMES}
# y-up -> z-up: +90 degrees about x (y goes to z, z goes to -y), exact.
_Y_TO_Z = np.array(
    [[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, -1.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]]
)
_FRAMES_RE = re.compile(r"^\s*Frames\s*:\s*(\S*)\s*$", re.IGNORECASE)
_FRAME_TIME_RE = re.compile(r"^\s*Frame\s+Time\s*:\s*(\S*)\s*$", re.IGNORECASE)
_NUMBER_FORMAT = "%.15g"
_FK_CHUNK = 4096


def _is_count(text: str) -> bool:
    return text.isascii() and text.isdigit()


def _is_rotation(channel: str) -> bool:
    return channel.endswith("rotation")


def dof_name(joint: str, channel: str) -> str:
    """Model DoF name of one BVH channel: ``"Hips_z"`` for a rotation, ``"Hips_Xposition"``."""
    if _is_rotation(channel):
        return f"{joint}_{channel[0].lower()}"
    return f"{joint}_{channel}"


# --- the clip --------------------------------------------------------------------------


@dataclass(frozen=True)
class BVHJoint:
    """One joint (or End Site) of a BVH hierarchy, as read from the file.

    ``parent``: index into :attr:`BVHClip.joints` (-1 for the root). ``offset``:
    the OFFSET in the file's length unit times the ``scale`` given to
    :func:`read_bvh`: the joint's translation from its parent at rest (where it has
    position channels, they replace it; see the module docstring). ``channels``:
    channel names in file order (empty for End Sites). ``end_site``: whether this is
    an End Site (named ``f"{parent}_end"``).
    """

    name: str
    parent: int
    offset: tuple[float, float, float]
    channels: tuple[str, ...] = ()
    end_site: bool = False


@dataclass(frozen=True, eq=False)
class BVHClip:
    """A BVH motion: the skeleton as a :class:`Model` and one configuration per frame.

    ``model``: the skeleton (see the module docstring for its layout).
    ``q``: ``(n_frames, model.nq)``, radians for rotation channels and the file's
    length unit (times ``scale``) for position channels.
    ``frame_time``: seconds between frames. ``joints``: the hierarchy in file
    order, End Sites included (what :func:`write_bvh` writes).
    ``frame_time_text``: the ``Frame Time`` exactly as the file wrote it; written
    back unchanged while it still parses to ``frame_time``.
    ``source``, ``scale``, ``up``: where the clip came from and the options it was
    read with.
    """

    model: Model
    q: np.ndarray
    frame_time: float
    joints: tuple[BVHJoint, ...]
    frame_time_text: str | None = None
    source: str | None = None
    scale: float = 1.0
    up: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.model, Model):
            raise InvalidValueError(
                f"BVHClip: model must be a kinetree Model, got {type(self.model).__name__}"
            )
        object.__setattr__(self, "joints", _checked_joints(self.joints))
        q = _numeric(self.q, "q", f"(n_frames, {self.model.nq})")
        if q.ndim != 2 or q.shape[1] != self.model.nq:
            raise ShapeError(f"q must have shape (n_frames, {self.model.nq}), got {q.shape}")
        if q.shape[0] < 1:
            raise InvalidValueError("a BVH clip needs at least one frame")
        if not np.all(np.isfinite(q)):
            raise InvalidValueError("q contains NaN or inf")
        q.setflags(write=False)
        object.__setattr__(self, "q", q)
        try:
            ft = float(self.frame_time)
        except (TypeError, ValueError, OverflowError):
            ft = math.nan
        if not (math.isfinite(ft) and ft > 0.0):
            raise InvalidValueError(
                f"frame_time must be a positive number of seconds, got {self.frame_time!r}"
            )
        object.__setattr__(self, "frame_time", ft)
        self._columns  # noqa: B018 - checks that every channel is a DoF of the model

    # --- sizes and names ---------------------------------------------------------------

    @property
    def n_frames(self) -> int:
        """Number of frames."""
        return int(self.q.shape[0])

    @property
    def fps(self) -> float:
        """Frames per second, ``1 / frame_time``."""
        return 1.0 / self.frame_time

    @property
    def duration(self) -> float:
        """Length of the clip in seconds, ``n_frames * frame_time``."""
        return self.n_frames * self.frame_time

    @property
    def n_joints(self) -> int:
        """Number of joints (ROOT and JOINT entries), End Sites not counted."""
        return sum(not j.end_site for j in self.joints)

    @property
    def n_end_sites(self) -> int:
        """Number of End Sites; ``n_joints + n_end_sites == len(joint_names)``."""
        return sum(j.end_site for j in self.joints)

    @property
    def joint_names(self) -> tuple[str, ...]:
        """Joint names in file order, End Sites as ``f"{parent}_end"``; all are model frames."""
        return tuple(j.name for j in self.joints)

    @property
    def channels(self) -> tuple[tuple[str, str], ...]:
        """``(joint, channel)`` for every column of a MOTION line, in file order."""
        return tuple((j.name, c) for j in self.joints for c in j.channels)

    @cached_property
    def _columns(self) -> np.ndarray:
        index = {n: i for i, n in enumerate(self.model.joint_names)}
        cols = []
        for joint, channel in self.channels:
            name = dof_name(joint, channel)
            if name not in index:
                raise InvalidValueError(
                    f"channel {channel} of joint {joint!r}: the model has no DoF {name!r}"
                )
            cols.append(index[name])
        if sorted(cols) != list(range(self.model.nq)):
            raise InvalidValueError(
                f"the clip's {len(cols)} channels do not match the model's {self.model.nq} DoFs"
            )
        return np.array(cols, dtype=np.int64)

    @cached_property
    def _rotation_columns(self) -> np.ndarray:
        return np.array([_is_rotation(c) for _, c in self.channels], dtype=bool)

    # --- values ------------------------------------------------------------------------

    def channel_values(self) -> np.ndarray:
        """The MOTION table ``(n_frames, n_channels)``: degrees, and lengths in file units
        (times ``scale``), columns ordered as :attr:`channels`."""
        vals = self.q[:, self._columns].copy()
        rot = self._rotation_columns
        vals[:, rot] = np.rad2deg(vals[:, rot])
        return vals

    def joint_positions(self) -> np.ndarray:
        """World positions ``(n_frames, n_joints, 3)`` of :attr:`joint_names` in every frame.

        Lengths are in the file's unit times ``scale``; the base rotation of
        ``up=`` is applied.
        """
        index = {n: i for i, n in enumerate(self.model.frame_names)}
        sel = np.array([index[n] for n in self.joint_names], dtype=np.int64)
        out = np.empty((self.n_frames, len(sel), 3))
        for start in range(0, self.n_frames, _FK_CHUNK):
            stop = min(start + _FK_CHUNK, self.n_frames)
            T = self.model.fk_all(self.q[start:stop])
            out[start:stop] = T[:, sel][..., :3, 3]
        return out

    # --- derived clips -----------------------------------------------------------------

    def with_q(self, q: ArrayLike) -> BVHClip:
        """The same skeleton and timing with other configurations ``(n_frames, dof)``."""
        qa = _numeric(q, "q", f"(n_frames, {self.model.nq})")
        if qa.ndim == 1:
            qa = qa[None, :]
        return dataclasses.replace(self, q=qa)

    def slice(self, start: int | None = None, stop: int | None = None, step: int = 1) -> BVHClip:
        """Frames ``start:stop:step`` (Python slice rules) as a new clip.

        With ``step > 1`` the frame time is multiplied by ``step``.
        """
        for what, value in (("start", start), ("stop", stop), ("step", step)):
            if value is not None and not _is_int(value):
                raise InvalidValueError(
                    f"slice: {what} must be an integer{' or None' * (what != 'step')}, "
                    f"got {value!r}"
                )
        if step < 1:
            raise InvalidValueError(f"step must be a positive integer, got {step}")
        q = self.q[start:stop:step]
        if q.shape[0] == 0:
            raise InvalidValueError(
                f"frames {start}:{stop}:{step} of a {self.n_frames}-frame clip is empty"
            )
        if step == 1:
            return dataclasses.replace(self, q=q)
        return dataclasses.replace(
            self, q=q, frame_time=self.frame_time * step, frame_time_text=None
        )

    def __repr__(self) -> str:
        return (
            f"BVHClip({self.model.name!r}, joints={len(self.joints)}, dof={self.model.nq}, "
            f"n_frames={self.n_frames}, frame_time={self.frame_time!r})"
        )


def _is_int(value: object) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return False
    try:
        operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        return False
    return True


def _numeric(x: object, what: str, shape: str) -> np.ndarray:
    """``x`` as a new float64 array; a non-numeric value raises naming ``what``."""
    if x is None or isinstance(x, (str, bytes)):
        raise InvalidValueError(f"{what} must be a numeric array {shape}, got {x!r}")
    try:
        return np.array(x, dtype=np.float64)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InvalidValueError(
            f"{what} must be a numeric array {shape}, got {type(x).__name__}: {exc}"
        ) from None


def _checked_joints(joints: object) -> tuple[BVHJoint, ...]:
    """The hierarchy as a tuple, checked: file order, one root first, End Sites as leaves."""
    if isinstance(joints, (str, bytes)) or not isinstance(joints, Iterable):
        raise InvalidValueError(
            f"joints must be a sequence of BVHJoint, got {type(joints).__name__}"
        )
    out = tuple(joints)
    if not out:
        raise InvalidValueError("joints must hold at least the root joint, got none")
    for i, j in enumerate(out):
        if not isinstance(j, BVHJoint):
            raise InvalidValueError(
                f"joints must be a sequence of BVHJoint; joints[{i}] is {type(j).__name__}"
            )
        where = f"joints[{i}] ({j.name!r})"
        if not isinstance(j.name, str):
            raise InvalidValueError(f"joints[{i}]: name must be a string, got {j.name!r}")
        if not _is_int(j.parent):
            raise InvalidValueError(f"{where}: parent must be an integer index, got {j.parent!r}")
        if i == 0 and j.parent != -1:
            raise InvalidValueError(f"{where}: the first joint is the root, its parent must be -1")
        if i > 0 and j.parent == -1:
            raise InvalidValueError(f"{where}: only joints[0] may be a root (parent -1)")
        if i > 0 and not 0 <= j.parent < i:
            raise InvalidValueError(
                f"{where}: parent must index a joint before it (0..{i - 1}), got {j.parent!r}"
            )
        if i > 0 and out[j.parent].end_site:
            raise InvalidValueError(
                f"{where}: its parent joints[{j.parent}] is an End Site, which has no children"
            )
        off = j.offset
        if (
            isinstance(off, (str, bytes))
            or not isinstance(off, Sequence)
            or len(off) != 3
            or not all(isinstance(v, (int, float, np.number)) and math.isfinite(v) for v in off)
        ):
            raise InvalidValueError(f"{where}: offset must be 3 finite numbers, got {off!r}")
        chans = j.channels
        if (
            not isinstance(chans, tuple)
            or any(c not in CHANNEL_NAMES for c in chans)
            or len(set(chans)) != len(chans)
        ):
            raise InvalidValueError(
                f"{where}: channels must be a tuple of distinct names from "
                f"{', '.join(CHANNEL_NAMES)}, got {chans!r}"
            )
        if j.end_site and chans:
            raise InvalidValueError(f"{where}: an End Site has no channels, got {chans!r}")
    return out


# --- reading ---------------------------------------------------------------------------


class _Parser:
    """Descent over whitespace tokens, each with its 1-based line number.

    Nested joints are parsed with an explicit stack, not recursion, so a deep
    hierarchy (thousands of levels) loads.
    """

    def __init__(self, source: str, lines: list[str]):
        self.source = source
        self.lines = lines
        self.tokens: list[tuple[str, int]] = []
        self.pos = 0
        self.joints: list[BVHJoint] = []
        self.defined: dict[str, int] = {}  # joint name -> line
        self.row_lines: list[int] = []  # line of each motion line

    # tokens ---------------------------------------------------------------------------

    def error(self, line: int, message: str) -> FileFormatError:
        return FileFormatError(f"BVH file {self.source!r}, line {line}: {message}")

    def eof_line(self) -> int:
        """The last line with any text on it (1 for an empty file)."""
        k = len(self.lines)
        while k > 1 and not self.lines[k - 1].strip():
            k -= 1
        return max(k, 1)

    def tokenize(self, stop: int) -> None:
        for k in range(stop):
            for tok in self.lines[k].replace("{", " { ").replace("}", " } ").split():
                self.tokens.append((tok, k + 1))

    def peek(self) -> tuple[str | None, int]:
        if self.pos < len(self.tokens):
            return self.tokens[self.pos]
        return None, self.eof_line()

    def next(self, expected: str) -> tuple[str, int]:
        tok, line = self.peek()
        if tok is None:
            raise self.error(line, f"expected {expected}, found end of file")
        self.pos += 1
        return tok, line

    def expect(self, word: str, expected: str | None = None) -> int:
        tok, line = self.peek()
        if tok != word:
            found = "end of file" if tok is None else repr(tok)
            raise self.error(line, f"expected {expected or repr(word)}, found {found}")
        self.pos += 1
        return line

    def number(self, what: str) -> float:
        tok, line = self.next(f"a number ({what})")
        try:
            v = float(tok)
        except ValueError:
            raise self.error(line, f"expected a number ({what}), found {tok!r}") from None
        if not math.isfinite(v):
            raise self.error(line, f"expected a finite number ({what}), found {tok!r}")
        return v

    def name(self, keyword: str, keyword_line: int) -> tuple[str, int]:
        """The joint name: the rest of the keyword's line up to a '{' (may contain spaces)."""
        parts: list[str] = []
        while True:
            tok, line = self.peek()
            if tok is None or line != keyword_line or tok == "{":
                break
            parts.append(tok)
            self.pos += 1
        if not parts:
            raise self.error(keyword_line, f"expected a joint name after {keyword}")
        return " ".join(parts), keyword_line

    # grammar --------------------------------------------------------------------------

    def hierarchy(self) -> None:
        self.expect("HIERARCHY")
        line = self.expect("ROOT", "'ROOT' (the first joint of the hierarchy)")
        name, name_line = self.name("ROOT", line)
        self.joint(name, -1, name_line)
        tok, line = self.peek()
        if tok != "MOTION":
            found = "end of file" if tok is None else repr(tok)
            extra = " (only one ROOT per file is supported)" if tok == "ROOT" else ""
            raise self.error(
                line,
                f"expected 'MOTION' after the hierarchy (ROOT {name!r} closed at line "
                f"{self.tokens[self.pos - 1][1]}), found {found}{extra}",
            )
        self.pos += 1
        tok, line = self.peek()
        if tok is not None:
            raise self.error(line, f"expected a new line after 'MOTION', found {tok!r}")

    def add(self, joint: BVHJoint, line: int) -> int:
        if joint.name in self.defined:
            what = "End Site name" if joint.end_site else "joint name"
            raise self.error(
                line,
                f"duplicated {what} {joint.name!r} (first defined at line "
                f"{self.defined[joint.name]}); every joint needs a unique name",
            )
        self.defined[joint.name] = line
        self.joints.append(joint)
        return len(self.joints) - 1

    def offset(self, owner: str) -> tuple[float, float, float]:
        self.expect("OFFSET", f"'OFFSET' of {owner}")
        what = f"OFFSET of {owner}"
        return (self.number(what), self.number(what), self.number(what))

    def channels(self, name: str) -> tuple[str, ...]:
        if self.peek()[0] != "CHANNELS":
            return ()
        self.pos += 1
        tok, line = self.next(f"the channel count of joint {name!r}")
        if not _is_count(tok):
            raise self.error(line, f"expected the channel count of joint {name!r}, found {tok!r}")
        out: list[str] = []
        for _ in range(int(tok)):
            ch, ch_line = self.next(f"a channel name of joint {name!r}")
            canon = _CANONICAL.get(ch.lower())
            if canon is None:
                raise self.error(
                    ch_line,
                    f"expected a channel name ({', '.join(CHANNEL_NAMES)}) for joint "
                    f"{name!r}, found {ch!r}",
                )
            if canon in out:
                raise self.error(ch_line, f"channel {canon} appears twice on joint {name!r}")
            out.append(canon)
        return tuple(out)

    def joint(self, name: str, parent: int, name_line: int) -> None:
        """The joint ``name`` and everything nested in it, up to its closing brace.

        Iterative (an explicit stack of open joints), so nesting depth is limited by
        memory only, not by Python's recursion limit.
        """
        # One entry per open joint: [name, index in self.joints, line of '{', End Sites].
        stack: list[list[Any]] = []

        def open_joint(name: str, parent: int, name_line: int) -> None:
            open_line = self.expect("{", f"'{{' opening joint {name!r}")
            offset = self.offset(f"joint {name!r}")
            channels = self.channels(name)
            me = self.add(BVHJoint(name, parent, offset, channels), name_line)
            stack.append([name, me, open_line, 0])

        open_joint(name, parent, name_line)
        while stack:
            top = stack[-1]
            name, me, open_line = top[0], top[1], top[2]
            tok, line = self.peek()
            if tok == "JOINT":
                self.pos += 1
                child, child_line = self.name("JOINT", line)
                open_joint(child, me, child_line)
            elif tok == "End":
                self.pos += 1
                self.expect("Site", "'Site' after 'End'")
                top[3] += 1
                n_end = top[3]
                end_name = f"{name}_end" if n_end == 1 else f"{name}_end{n_end}"
                self.expect("{", "'{' opening the End Site")
                end_offset = self.offset(f"the End Site of {name!r}")
                self.expect("}", f"'}}' closing the End Site of {name!r}")
                self.add(BVHJoint(end_name, me, end_offset, (), True), line)
            elif tok == "}":
                self.pos += 1
                stack.pop()
            else:
                found = "end of file" if tok is None else repr(tok)
                raise self.error(
                    line,
                    f"expected JOINT, End Site or '}}' closing joint {name!r} "
                    f"(opened at line {open_line}), found {found}",
                )

    def motion(self, start: int, n_channels: int) -> tuple[np.ndarray, str, float]:
        """Parse from the line after MOTION; returns (values, frame time text, frame time)."""
        k = start

        def next_line(expected: str) -> tuple[str, int]:
            nonlocal k
            while k < len(self.lines) and not self.lines[k].strip():
                k += 1
            if k >= len(self.lines):
                raise self.error(self.eof_line(), f"expected {expected}, found end of file")
            k += 1
            return self.lines[k - 1], k

        text, frames_line = next_line("'Frames: <count>'")
        m = _FRAMES_RE.match(text)
        if m is None or not _is_count(m.group(1)):
            raise self.error(frames_line, f"expected 'Frames: <count>', found {text.strip()!r}")
        n_frames = int(m.group(1))
        if n_frames == 0:
            raise self.error(
                frames_line, "the file has no frames ('Frames: 0'); a clip needs at least one"
            )
        text, ft_line = next_line("'Frame Time: <seconds>'")
        m = _FRAME_TIME_RE.match(text)
        ft_text = "" if m is None else m.group(1)
        try:
            frame_time = float(ft_text)
        except ValueError:
            frame_time = math.nan
        if m is None or not (math.isfinite(frame_time) and frame_time > 0.0):
            raise self.error(
                ft_line,
                f"expected 'Frame Time: <seconds>' with a positive number, found {text.strip()!r}",
            )
        rows: list[list[str]] = []
        row_lines = self.row_lines
        for j in range(k, len(self.lines)):
            toks = self.lines[j].split()
            if not toks:
                continue
            if len(rows) == n_frames:
                raise self.error(
                    j + 1,
                    f"expected end of file after {n_frames} motion line{'s' * (n_frames != 1)} "
                    f"('Frames: {n_frames}' "
                    f"at line {frames_line}), found another motion line",
                )
            if len(toks) != n_channels:
                raise self.error(
                    j + 1,
                    f"expected {n_channels} numbers (one per channel) on motion line "
                    f"{len(rows) + 1}, found {len(toks)}",
                )
            rows.append(toks)
            row_lines.append(j + 1)
        if len(rows) != n_frames:
            where = f" (lines {row_lines[0]}-{row_lines[-1]})" if rows else ""
            raise self.error(
                frames_line,
                f"expected {n_frames} motion lines after 'Frames: {n_frames}', found "
                f"{len(rows)}{where} before the end of file",
            )
        try:
            values = np.array([t for r in rows for t in r], dtype=np.float64)
        except ValueError:
            values = None
        if values is None or not np.all(np.isfinite(values)):
            for r, line in zip(rows, row_lines):
                for t in r:
                    try:
                        ok = math.isfinite(float(t))
                    except ValueError:
                        ok = False
                    if not ok:
                        raise self.error(line, f"expected a finite number, found {t!r}")
        assert values is not None
        return values.reshape(n_frames, n_channels), ft_text, frame_time


def _read_lines(path: Path) -> list[str]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise FileFormatError(
            f"cannot read BVH file {str(path)!r}: {exc.strerror or exc}"
        ) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    # Line ends as written: CR LF (Windows), LF, or a lone CR (classic Mac OS exporters).
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _check_lengths(
    parser: _Parser, joints: Sequence[BVHJoint], values: np.ndarray, rot: np.ndarray, units: str
) -> None:
    """Refuse an OFFSET or a position channel value (already scaled) past MAX_ORIGIN_DISTANCE.

    Each is finite, but several near the float range sum to inf in forward
    kinematics; the builder holds every origin to the same bound.
    """
    most = f"kinetree accepts at most {short_float(MAX_ORIGIN_DISTANCE)} ({units})"
    for j in joints:
        dist = math.hypot(*j.offset)
        if dist > MAX_ORIGIN_DISTANCE:
            what = f"the End Site {j.name!r}" if j.end_site else f"joint {j.name!r}"
            raise parser.error(
                parser.defined[j.name],
                f"OFFSET of {what} is {short_float(dist)} ({units}) from its parent; {most}",
            )
    far = np.abs(values) > MAX_ORIGIN_DISTANCE
    far[:, rot] = False
    if np.any(far):
        frame, col = (int(k[0]) for k in np.nonzero(far))
        joint, channel = [(j.name, c) for j in joints for c in j.channels][col]
        raise parser.error(
            parser.row_lines[frame],
            f"{channel} of joint {joint!r} in frame {frame + 1} is "
            f"{short_float(float(values[frame, col]))} ({units}); {most}",
        )


def node_order(channels: Sequence[str]) -> tuple[str, ...]:
    """The order in which a joint's channels act, parent side first: the position
    channels (in file order; translations commute), then the rotation channels in file
    order. So ``Zrotation Xrotation Yrotation Xposition Yposition Zposition`` moves
    the joint like ``Xposition Yposition Zposition Zrotation Xrotation Yrotation``."""
    return tuple(c for c in channels if not _is_rotation(c)) + tuple(
        c for c in channels if _is_rotation(c)
    )


#: The size a skeleton of unknown unit is taken to have [m]: a standing human's height.
FIGURE_SIZE = 1.7


def _length_scale(joints: Sequence[BVHJoint]) -> float:
    """The file's length units per metre, guessed: BVH does not state its unit, so the
    skeleton's rest pose (its largest extent along an axis, End Sites included) is
    taken to be :data:`FIGURE_SIZE` metres. It only sets how IK weighs position errors
    against rotation errors (``Model.length_scale``); no length is changed."""
    pos = np.zeros((len(joints), 3))
    for k, j in enumerate(joints):
        pos[k] = np.asarray(j.offset, dtype=np.float64) + (pos[j.parent] if j.parent >= 0 else 0.0)
    size = float(np.max(np.ptp(pos, axis=0))) if len(joints) > 1 else 0.0
    return size / FIGURE_SIZE if math.isfinite(size) and size > 0.0 else 1.0


def _scaled(v: tuple[float, float, float], s: float) -> tuple[float, float, float]:
    return (v[0] * s, v[1] * s, v[2] * s)


def _build_model(
    name: str,
    joints: Sequence[BVHJoint],
    up: str | None,
    units: str,
    metadata: dict[str, object],
    replace: bool = True,
) -> Model:
    names = {j.name for j in joints}
    root = "world"
    while root in names:
        root = "_" + root
    b = ModelBuilder(name, root=root, root_origin=_Y_TO_Z if up == "z" else None)
    b.units = units
    b.metadata.update(metadata)
    hidden: set[str] = set()
    owner: dict[str, str] = {}
    groups: dict[str, tuple[str, ...]] = {}
    rest: dict[str, float] = {}
    for j in joints:
        parent = root if j.parent < 0 else joints[j.parent].name
        origin = np.eye(4)  # Trans(OFFSET)
        origin[:3, 3] = j.offset
        if j.end_site:
            b.add_frame(j.name, parent, origin=origin)
            continue
        if not j.channels:
            b.add_joint(j.name, parent, j.name, type="fixed", origin=origin)
            continue
        prev = parent
        dofs: list[str] = []
        # Position channels translate the joint in its parent's frame wherever the file
        # lists them (pybvh, Blender, MotionBuilder): their nodes come first.
        chain = node_order(j.channels)
        for k, ch in enumerate(chain):
            axis = ch[0].lower()
            rot = _is_rotation(ch)
            last = k == len(chain) - 1
            link = j.name if last else (f"{j.name}#{axis}" if rot else f"{j.name}#pos_{axis}")
            dof = dof_name(j.name, ch)
            # "replace": the node starts at the OFFSET and slides by q - OFFSET, so the
            # joint sits at the channel value along this axis and q stays that value.
            ref = j.offset["xyz".index(axis)] if replace and not rot else 0.0
            b.add_joint(
                dof,
                prev,
                link,
                type="revolute" if rot else "prismatic",
                axis=axis,
                origin=origin if k == 0 else None,
                offset=-ref,
            )
            if ref != 0.0:
                rest[dof] = ref
            dofs.append(dof)
            owner[link] = j.name
            if not last:
                hidden.add(link)
            prev = link
        groups[j.name] = tuple(dofs)
    b.set_neutral(rest)  # the rest pose: every joint at its OFFSET
    model = b.build()
    # The builder makes one group per DoF and shows every link; a BVH joint is one
    # multi-DoF joint whose inner links are hidden, as add_ball_joint would make it.
    model = dataclasses.replace(
        model,
        hidden=np.array([n in hidden for n in model.node_names], dtype=bool),
        node_joint=tuple(owner.get(n, nj) for n, nj in zip(model.node_names, model.node_joint)),
        joint_groups=groups,
    )
    presets = _presets(model, joints)
    inner_positions = any(not _is_rotation(c) for j in joints if j.parent >= 0 for c in j.channels)
    return dataclasses.replace(
        model,
        presets=presets,
        default_active=("rotations",) if inner_positions and "rotations" in presets else None,
    )


def _presets(model: Model, joints: Sequence[BVHJoint]) -> dict[str, tuple[str, ...]]:
    """The rotation DoFs of every joint (``"rotations"``) and of the body parts that
    standard joint names give (:func:`~kinetree.io.body_parts.find_body_parts`):
    ``right_arm`` (shoulder, elbow, wrist), ``right_arm+spine`` (the arm, its clavicle
    and the chest it hangs from), ``above_hips`` (the spine and everything on it),
    ``right_leg`` (hip, knee, ankle), their left mirrors and ``legs``. Rotations only,
    so bone lengths stay; a preset named like a joint or a channel is left out."""
    rot = {
        j.name: tuple(dof_name(j.name, c) for c in j.channels if _is_rotation(c))
        for j in joints
        if not j.end_site
    }
    names = [j.name for j in joints if not j.end_site]
    parts = find_body_parts(model, names)
    kids: dict[str, list[str]] = {n: [] for n in names}
    for j in joints:
        if j.parent >= 0 and not j.end_site:
            kids[joints[j.parent].name].append(j.name)

    def dofs(*roles: str) -> tuple[str, ...]:
        return tuple(d for r in roles if r in parts for d in rot[parts[r]])

    out: dict[str, tuple[str, ...]] = {"rotations": tuple(d for n in names for d in rot[n])}
    for side, word in (("r", "right"), ("l", "left")):
        if f"shoulder_{side}" in parts and f"elbow_{side}" in parts:
            arm = dofs(f"shoulder_{side}", f"elbow_{side}", f"wrist_{side}")
            out[f"{word}_arm"] = arm
            out[f"{word}_arm+spine"] = arm + dofs(f"clavicle_{side}", "chest")
        if f"hip_{side}" in parts and f"knee_{side}" in parts:
            out[f"{word}_leg"] = dofs(f"hip_{side}", f"knee_{side}", f"ankle_{side}")
    if "right_leg" in out and "left_leg" in out:
        out["legs"] = out["right_leg"] + out["left_leg"]
    if "spine" in parts:
        todo, above = [parts["spine"]], []
        while todo:
            n = todo.pop()
            above.append(n)
            todo.extend(reversed(kids[n]))
        out["above_hips"] = tuple(d for n in names if n in above for d in rot[n])
    taken = set(model.joint_names) | set(model.joint_groups)
    return {k: v for k, v in out.items() if v and k not in taken}


def read_bvh(
    path: str | os.PathLike[str],
    *,
    scale: float = 1.0,
    up: str | None = None,
    positions: str = "replace",
) -> BVHClip:
    """Read a BVH file into a :class:`BVHClip` (skeleton model + motion).

    ``scale`` multiplies every OFFSET and position channel (``scale=0.01`` turns
    centimetres into metres); lengths in the clip are the file's unit times
    ``scale``. Angles are read as degrees and stored in ``clip.q`` as radians.

    ``up``: ``None`` keeps the file's axes. ``"z"`` converts a Y-up file to Z-up by
    giving the model root (``"world"``) a base rotation of +90 degrees about x
    (y goes to +z, z to -y); the channel values are unchanged, so the
    rotation shows in :meth:`BVHClip.joint_positions` and FK only. BVH has no
    place for that rotation, so :func:`write_bvh` writes the file's original axes.

    ``positions``: how a joint's position channels combine with its OFFSET.
    ``"replace"`` (default; Blender, MotionBuilder, the Bandai-Namco data set): the
    channel value *is* the joint's translation along that axis in its parent's
    frame, the OFFSET being the rest translation. ``"add"``: the joint sits at
    OFFSET + channel value (three.js; files whose channels hold displacements from
    the rest pose). The two agree wherever a joint with position channels has a
    zero OFFSET (most roots, and every file kinetree writes from a model). Either
    way ``clip.q`` holds the channel values, so :func:`write_bvh` writes the file
    back unchanged; read it back with the same ``positions``.

    Raises :class:`~kinetree.errors.FileFormatError`, naming the file and the
    line, for an unreadable or malformed file: unbalanced braces, a missing
    OFFSET or MOTION section, unknown or repeated channel names, duplicated joint
    names, non-numeric values, ``Frames: 0``, a frame count that differs from the
    number of motion lines, or a motion line whose length differs from the
    number of channels, and for an OFFSET or position value that lies more than
    1e12 (the file's unit times ``scale``) from its parent
    (:data:`~kinetree.builder.MAX_ORIGIN_DISTANCE`: the builder's bound on every
    origin). Nothing is returned unless the whole file is valid.
    :class:`~kinetree.errors.InvalidValueError` for a ``path`` that is not a
    ``str`` or ``os.PathLike`` (None, bytes). Hierarchies of any depth load (the
    parser keeps its own stack).
    """
    try:
        scale_f = float(scale)
    except (TypeError, ValueError, OverflowError):
        raise InvalidValueError(f"scale must be a positive number, got {scale!r}") from None
    if not (math.isfinite(scale_f) and scale_f > 0.0):
        raise InvalidValueError(f"scale must be a positive number, got {scale!r}")
    if positions not in ("replace", "add"):
        raise InvalidValueError(
            "positions must be 'replace' (a position channel is the joint's translation, "
            f"the OFFSET its rest value) or 'add' (OFFSET + channel), got {positions!r}"
        )
    if up not in (None, "z"):
        raise InvalidValueError(
            f"up must be None (keep the file's axes) or 'z' (Y-up file to Z-up), got {up!r}"
        )
    p = as_path(path, "read_bvh needs the path of a .bvh file (str or os.PathLike)")
    source = str(p)
    lines = _read_lines(p)
    parser = _Parser(source, lines)
    # The hierarchy is every line up to and including the first that starts with MOTION.
    motion_at = next(
        (k for k, ln in enumerate(lines) if ln.split()[:1] == ["MOTION"]), len(lines) - 1
    )
    parser.tokenize(motion_at + 1)
    parser.hierarchy()
    joints = parser.joints
    n_channels = sum(len(j.channels) for j in joints)
    if n_channels == 0:
        raise parser.error(
            parser.defined[joints[0].name], "expected CHANNELS on at least one joint, found none"
        )
    values, ft_text, frame_time = parser.motion(motion_at + 1, n_channels)

    # Multiplying by scale 1.0 is exact, so there is no special case for it.
    joints = [dataclasses.replace(j, offset=_scaled(j.offset, scale_f)) for j in joints]
    rot = np.array([_is_rotation(c) for j in joints for c in j.channels], dtype=bool)
    values[:, rot] = np.deg2rad(values[:, rot])
    values[:, ~rot] *= scale_f
    units = "file units" if scale_f == 1.0 else f"file units x {scale_f!r}"
    _check_lengths(parser, joints, values, rot, units)
    metadata: dict[str, object] = {
        "source": source,
        "format": "bvh",
        "scale": scale_f,
        "up": up,
        "positions": positions,
        "length_scale": _length_scale(joints),
    }
    try:
        model = _build_model(
            p.stem or "bvh", joints, up, units, metadata, replace=positions == "replace"
        )
    except KinetreeError as exc:
        raise FileFormatError(f"BVH file {source!r}: cannot build the skeleton: {exc}") from None
    dof_of = {n: i for i, n in enumerate(model.joint_names)}
    cols = [dof_of[dof_name(j.name, c)] for j in joints for c in j.channels]
    q = np.empty_like(values)
    q[:, cols] = values
    return BVHClip(
        model=model,
        q=q,
        frame_time=frame_time,
        joints=tuple(joints),
        frame_time_text=ft_text,
        source=source,
        scale=scale_f,
        up=up,
    )


# --- writing ---------------------------------------------------------------------------


def _fmt(x: float) -> str:
    return _NUMBER_FORMAT % x


def write_bvh(path: str | os.PathLike[str], clip: BVHClip) -> None:
    """Write ``clip`` as a BVH file at ``path``.

    The HIERARCHY keeps each joint's channel order; OFFSETs and positions are
    written in the clip's length unit (the file's unit times the ``scale`` it
    was read with) and angles in degrees, 15 significant digits. ``Frame Time``
    is written with the file's original digits while ``clip.frame_time`` is
    unchanged. The base rotation of ``read_bvh(..., up="z")`` is not written (BVH
    has no place for it): the file has the source file's axes, and reading it
    with the same ``up=`` gives back the same joint positions.

    The folder of ``path`` must exist (it is not created): a missing folder, or
    any other failure to write, raises :class:`~kinetree.errors.FileFormatError`
    naming it. A joint name that would not read back the same (empty, with
    braces, line breaks, tabs or stray spaces) raises
    :class:`~kinetree.errors.InvalidValueError` before anything is written.
    """
    p = as_path(path, "write_bvh needs the path of the .bvh file to write (str or os.PathLike)")
    if not isinstance(clip, BVHClip):
        raise InvalidValueError(f"write_bvh needs a BVHClip, got {type(clip).__name__}")
    for i, j in enumerate(clip.joints):
        if not j.end_site and not _writable_name(j.name):
            raise InvalidValueError(
                f"cannot write joints[{i}] name {j.name!r} to a BVH file: a joint name must be "
                "non-empty, without braces, line breaks, tabs, or leading, trailing or "
                "repeated spaces (it would not read back the same)"
            )
    kids: list[list[int]] = [[] for _ in clip.joints]
    roots: list[int] = []
    for i, j in enumerate(clip.joints):
        (roots if j.parent < 0 else kids[j.parent]).append(i)
    out = ["HIERARCHY"]
    # Depth first with an explicit stack (no recursion limit on deep skeletons):
    # (joint index, depth) opens a joint, (-1, depth) closes one.
    todo: list[tuple[int, int]] = [(r, 0) for r in reversed(roots)]
    while todo:
        i, depth = todo.pop()
        ind = "\t" * depth
        if i < 0:
            out.append(f"{ind}}}")
            continue
        j = clip.joints[i]
        if j.end_site:
            out.append(f"{ind}End Site")
        else:
            out.append(f"{ind}{'ROOT' if j.parent < 0 else 'JOINT'} {j.name}")
        out.append(f"{ind}{{")
        out.append(f"{ind}\tOFFSET {' '.join(_fmt(v) for v in j.offset)}")
        if not j.end_site:
            out.append(f"{ind}\tCHANNELS {len(j.channels)} {' '.join(j.channels)}".rstrip())
        todo.append((-1, depth))
        todo.extend((c, depth + 1) for c in reversed(kids[i]))
    ft = clip.frame_time_text
    if ft is None or not _parses_to(ft, clip.frame_time):
        ft = repr(clip.frame_time)
    out += ["MOTION", f"Frames: {clip.n_frames}", f"Frame Time: {ft}"]
    vals = clip.channel_values()
    row = " ".join([_NUMBER_FORMAT] * vals.shape[1])
    out.extend(row % tuple(r) for r in vals.tolist())
    write_text(p, "\n".join(out) + "\n", "BVH")


def _writable_name(name: str) -> bool:
    """Whether ``JOINT name`` reads back as ``name`` (the parser joins a line's words)."""
    return bool(name) and " ".join(name.split()) == name and not any(c in name for c in "{}")


def _parses_to(text: str, value: float) -> bool:
    try:
        return float(text) == value
    except ValueError:
        return False
