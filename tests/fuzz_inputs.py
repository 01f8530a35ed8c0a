"""Seeded mutators, an oracle and a process pool for fuzzing kinetree's loaders.

Six kinds of input, each grown from real seeds:

* ``urdf``: ``src/kinetree/models/data/*.urdf`` and two hand-written URDFs (a
  branching arm with continuous, prismatic, fixed and mimic joints).
* ``bvh``: ``tests/data/bvh/*.bvh``, each cut to its first three frames.
* ``mjcf``: three hand-written MuJoCo files, half the cases written as ``case.xml``
  (compiled by MuJoCo: :mod:`kinetree.io.mjcf`), the others as ``case.urdf`` (MJCF
  text handed to the URDF loader).
* ``dh``: the DH tables of the built-in Panda, UR5 and iiwa, written as the
  Python source of one ``from_dh(...)`` call, so the saved input *is* the
  reproducer.
* ``gltf``: ``tests/data/gltf/*.gltf`` (JSON with an embedded buffer), a third of the
  cases wrapped in a GLB container (``case.glb``).
* ``usd``: ``tests/data/usd/*.usda`` (UsdSkel text), read through usd-core.
* ``fbx`` (only when named: each case starts a ufbx child process, so it runs as its own
  smaller campaign, ``benchmarks/fuzz.py --kinds fbx``): ``tests/data/fbx``'s two small
  sausage files, the ASCII one through the text mutations, the binary one through byte
  mutations of its records (lengths, counts, array encodings, numbers, truncation).

A case is rebuilt from ``(kind, seed)`` alone (:func:`make_case`). The oracle
(:func:`check_case`) loads it and, if it loads, checks FK at the neutral and at
three random configurations (all finite), a clip's own frames, a write/read round
trip (BVH; glTF and USD through :func:`kinetree.write_clip`), and one IK solve
(``max_iter=50, restarts=1``) whose claimed success is re-checked through FK. Allowed
outcomes: a model, or a ``KinetreeError``. :func:`run_cases` runs cases in worker
processes with a
per-case time limit, so a hang or a crash is a finding too.
"""

from __future__ import annotations

import base64
import json
import math
import multiprocessing as mp
import os
import random
import re
import shutil
import tempfile
import time
import traceback
import warnings
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BVH_DIR = ROOT / "tests" / "data" / "bvh"
GLTF_DIR = ROOT / "tests" / "data" / "gltf"
USD_DIR = ROOT / "tests" / "data" / "usd"
FBX_DIR = ROOT / "tests" / "data" / "fbx"
URDF_DIR = ROOT / "src" / "kinetree" / "models" / "data"

KINDS = ("urdf", "bvh", "mjcf", "dh", "gltf", "usd")
#: Case ``i`` of a campaign has kind ``KIND_CYCLE[i % 12]``: 3 urdf, 3 bvh, 3 dh, 1 mjcf,
#: 1 gltf, 1 usd.
KIND_CYCLE = (
    "urdf", "bvh", "dh", "gltf", "urdf", "bvh", "dh", "usd", "urdf", "bvh", "dh", "mjcf",
)  # fmt: skip
#: Kinds a campaign runs only when asked by name (:func:`campaign`), after the cycle's.
NAMED_KINDS = ("fbx",)
#: FBX seeds: small files (the kenney character, 742 KB, would make each case slow).
FBX_SEEDS = ("maya_game_sausage_7500_ascii_wiggle.fbx", "maya_game_sausage_7500_binary_wiggle.fbx")
TIMEOUT_S = 5.0  # a case running longer is a hang
IK_OPTIONS: dict[str, Any] = {"max_iter": 50, "restarts": 1}
IK_TOL = 1e-6  # kinetree's default tol [m] and [rad]
MAX_BYTES = 4_000_000  # mutations that grow an input stop near this size

# --- seeds --------------------------------------------------------------------------

_ARM_URDF = """<?xml version="1.0"?>
<robot name="gripper_arm">
  <link name="base"/>
  <link name="upper"/>
  <link name="fore"/>
  <link name="slider"/>
  <link name="hand"/>
  <link name="finger_l"/>
  <link name="finger_r"/>
  <joint name="shoulder" type="revolute">
    <parent link="base"/><child link="upper"/>
    <origin xyz="0 0 0.1" rpy="0 0 0"/>
    <axis xyz="0 0 1"/>
    <limit lower="-2.5" upper="2.5" effort="10" velocity="1"/>
  </joint>
  <joint name="elbow" type="continuous">
    <parent link="upper"/><child link="fore"/>
    <origin xyz="0.3 0 0" rpy="1.5708 0 0"/>
    <axis xyz="0 1 0"/>
  </joint>
  <joint name="extend" type="prismatic">
    <parent link="fore"/><child link="slider"/>
    <origin xyz="0.2 0 0"/>
    <axis xyz="1 0 0"/>
    <limit lower="0" upper="0.1" effort="10" velocity="1"/>
  </joint>
  <joint name="wrist" type="fixed">
    <parent link="slider"/><child link="hand"/>
    <origin xyz="0.05 0 0" rpy="0 0.3 0"/>
  </joint>
  <joint name="finger_l_joint" type="prismatic">
    <parent link="hand"/><child link="finger_l"/>
    <origin xyz="0 0.01 0.05"/>
    <axis xyz="0 1 0"/>
    <limit lower="0" upper="0.04" effort="1" velocity="1"/>
  </joint>
  <joint name="finger_r_joint" type="prismatic">
    <parent link="hand"/><child link="finger_r"/>
    <origin xyz="0 -0.01 0.05"/>
    <axis xyz="0 -1 0"/>
    <limit lower="0" upper="0.04" effort="1" velocity="1"/>
    <mimic joint="finger_l_joint" multiplier="1" offset="0"/>
  </joint>
</robot>
"""

_TWO_LINK_URDF = """<robot name="two_link">
  <link name="a"/>
  <link name="b"/>
  <link name="c"/>
  <joint name="j1" type="revolute">
    <parent link="a"/><child link="b"/>
    <origin xyz="0 0 0.5" rpy="0 1.5707963 0"/>
    <axis xyz="1 0 0"/>
    <limit lower="-1" upper="1"/>
  </joint>
  <joint name="j2" type="revolute">
    <parent link="b"/><child link="c"/>
    <origin xyz="0.4 0 0"/>
    <axis xyz="0 0.6 0.8"/>
    <limit lower="-3.14" upper="3.14"/>
    <mimic joint="j1" multiplier="-2" offset="0.1"/>
  </joint>
</robot>
"""

_MJCF_SEEDS = (
    """<mujoco model="arm">
  <compiler angle="radian"/>
  <worldbody>
    <body name="link1" pos="0 0 0.1">
      <joint name="j1" type="hinge" axis="0 0 1" range="-3 3"/>
      <geom type="capsule" size="0.05" fromto="0 0 0 0.3 0 0"/>
      <body name="link2" pos="0.3 0 0">
        <joint name="j2" type="hinge" axis="0 1 0"/>
        <body name="hand" pos="0.25 0 0"><site name="tip"/></body>
      </body>
    </body>
  </worldbody>
</mujoco>
""",
    """<?xml version="1.0" encoding="utf-8"?>
<mujoco model="slider">
  <compiler angle="degree"/>
  <default><joint damping="0.1"/></default>
  <worldbody>
    <body name="cart" pos="0 0 0" quat="1 0 0 0">
      <freejoint name="root"/>
      <body name="pole" pos="0 0 0.2" euler="0 90 0">
        <joint name="slide" type="slide" axis="1 0 0" range="-0.5 0.5"/>
        <joint name="hinge" type="hinge" axis="0 1 0" range="-90 90"/>
        <geom type="box" size="0.1 0.1 0.1"/>
      </body>
    </body>
  </worldbody>
  <actuator><motor joint="slide" gear="10"/></actuator>
</mujoco>
""",
    """<mujoco model="tree">
  <worldbody>
    <body name="torso">
      <joint name="ball" type="ball"/>
      <body name="left" pos="0.1 0 0"><joint name="l" axis="0 0 1"/></body>
      <body name="right" pos="-0.1 0 0"><joint name="r" axis="0 0 -1"/></body>
    </body>
  </worldbody>
  <equality><joint joint1="l" joint2="r" polycoef="0 1 0 0 0"/></equality>
</mujoco>
""",
)

#: DH tables as (field -> Python source) dicts: Panda (modified), UR5 and iiwa (standard).
_H = "1.5707963267948966"
_DH_SEEDS: tuple[tuple[str, tuple[dict[str, str], ...]], ...] = (
    (
        "'modified'",
        (
            {"d": "0.333", "limits": "(-2.8973, 2.8973)"},
            {"alpha": f"-{_H}", "limits": "(-1.7628, 1.7628)"},
            {"alpha": _H, "d": "0.316", "limits": "(-2.8973, 2.8973)"},
            {"a": "0.0825", "alpha": _H, "limits": "(-3.0718, -0.0698)"},
            {"a": "-0.0825", "alpha": f"-{_H}", "d": "0.384", "limits": "(-2.8973, 2.8973)"},
            {"alpha": _H, "limits": "(-0.0175, 3.7525)"},
            {"a": "0.088", "alpha": _H, "limits": "(-2.8973, 2.8973)"},
        ),
    ),
    (
        "'standard'",
        (
            {"alpha": _H, "d": "0.089159"},
            {"a": "-0.425"},
            {"a": "-0.39225"},
            {"alpha": _H, "d": "0.10915"},
            {"alpha": f"-{_H}", "d": "0.09465"},
            {"d": "0.0823", "name": "'wrist_3'"},
        ),
    ),
    (
        "'standard'",
        (
            {"alpha": f"-{_H}", "d": "0.36", "limits": "(-2.96, 2.96)"},
            {"alpha": _H, "limits": "(-2.09, 2.09)"},
            {"alpha": _H, "d": "0.42", "limits": "(-2.96, 2.96)"},
            {"alpha": f"-{_H}", "limits": "(-2.09, 2.09)"},
            {"alpha": f"-{_H}", "d": "0.4", "limits": "(-2.96, 2.96)"},
            {"alpha": _H, "limits": "(-2.09, 2.09)"},
            {"d": "0.126", "type": "'prismatic'", "limits": "(0.0, 0.1)"},
        ),
    ),
)


def _trim_bvh(text: str, frames: int = 3) -> str:
    """The hierarchy and the first ``frames`` motion lines (a small, valid seed)."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.strip().lower().startswith("frames:"):
            body = [ln for ln in lines[i + 2 :] if ln.strip()][:frames]
            head = [*lines[:i], f"Frames: {len(body)}", lines[i + 1]]
            return "\n".join(head + body) + "\n"
    return text


@cache
def seed_texts(kind: str) -> tuple[tuple[str, str], ...]:
    """``(name, text)`` of every seed of a file kind."""
    if kind == "urdf":
        shipped = tuple((p.name, p.read_text()) for p in sorted(URDF_DIR.glob("*.urdf")))
        return (*shipped, ("gripper_arm.urdf", _ARM_URDF), ("two_link.urdf", _TWO_LINK_URDF))
    if kind == "bvh":
        return tuple((p.name, _trim_bvh(p.read_text())) for p in sorted(BVH_DIR.glob("*.bvh")))
    if kind == "mjcf":
        return tuple((f"mjcf{i}.xml", t) for i, t in enumerate(_MJCF_SEEDS))
    if kind == "gltf":
        return tuple((p.name, p.read_text()) for p in sorted(GLTF_DIR.glob("*.gltf")))
    if kind == "usd":
        return tuple((p.name, p.read_text()) for p in sorted(USD_DIR.glob("*.usda")))
    raise ValueError(f"no text seeds for kind {kind!r}")


# --- cases ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One fuzz input: ``data`` is written to ``case{ext}`` (or, for ``dh``, evaluated)."""

    kind: str
    seed: int
    data: bytes
    ext: str
    origin: str  # the seed it grew from
    mutations: tuple[str, ...]

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.seed}"


def case_seed(base_seed: int, index: int) -> int:
    """Seed of case ``index`` in a campaign started with ``base_seed``."""
    return base_seed * 10_000_000 + index


def campaign(n: int, base_seed: int = 0, kinds: Iterable[str] | None = None) -> Iterator[Case]:
    """``n`` cases, the kinds interleaved (:data:`KIND_CYCLE`), deterministic in ``base_seed``."""
    wanted = set(KINDS if kinds is None else kinds)
    cycle = [k for k in KIND_CYCLE if k in wanted] + [k for k in NAMED_KINDS if k in wanted]
    for i in range(n):
        yield make_case(cycle[i % len(cycle)], case_seed(base_seed, i))


def make_case(kind: str, seed: int) -> Case:
    """Rebuild one case from its kind and seed (the same bytes on every machine)."""
    rng = random.Random(f"{kind}-{seed}")
    if kind == "dh":
        source, muts, origin = _dh_case(rng)
        return Case(kind, seed, source.encode(), ".py", origin, muts)
    if kind == "fbx":
        return _fbx_case(rng, seed)
    origin, text = rng.choice(seed_texts(kind))
    n_mut = rng.choice((1, 1, 1, 2, 2, 3, 4, 6))
    muts: list[str] = []
    if kind in ("urdf", "mjcf") and rng.random() < 0.6:
        text = _apply(rng, text, _XML_MUTATORS, rng.randint(1, n_mut), muts)
    if kind == "bvh" and rng.random() < 0.6:
        text = _apply(rng, text, _BVH_MUTATORS, rng.randint(1, n_mut), muts)
    if not muts or rng.random() < 0.5:
        text = _apply(rng, text, _TEXT_MUTATORS, rng.randint(1, n_mut), muts)
    data = text.encode("utf-8", "surrogatepass")
    if rng.random() < 0.08:
        name, fn = rng.choice(_BYTE_MUTATORS)
        data = fn(rng, data)
        muts.append(name)
    ext = {"urdf": ".urdf", "bvh": ".bvh", "mjcf": ".urdf", "gltf": ".gltf", "usd": ".usda"}[kind]
    if kind == "mjcf" and rng.random() < 0.5:
        ext = ".xml"
    if kind == "gltf" and rng.random() < 0.33:
        data, ext = _glb(data), ".glb"
    return Case(kind, seed, data[:MAX_BYTES], ext, origin, tuple(muts))


def _fbx_case(rng: random.Random, seed: int) -> Case:
    """An FBX case: the ASCII seed through the text mutations, the binary one through
    :data:`_FBX_MUTATORS` (and sometimes the generic byte mutators)."""
    origin = rng.choice(FBX_SEEDS)
    data = (FBX_DIR / origin).read_bytes()
    n_mut = rng.choice((1, 1, 1, 2, 2, 3, 4))
    muts: list[str] = []
    if b"Kaydara FBX Binary" in data[:32]:
        for _ in range(n_mut):
            name, fn = rng.choice(_FBX_MUTATORS)
            data = fn(rng, data)[:MAX_BYTES]
            muts.append(name)
    else:
        text = _apply(rng, data.decode("latin-1"), _TEXT_MUTATORS, n_mut, muts)
        data = text.encode("latin-1", "replace")
    if rng.random() < 0.08:
        name, fn = rng.choice(_BYTE_MUTATORS[:2])  # bit flips, invalid UTF-8
        data = fn(rng, data)
        muts.append(name)
    return Case("fbx", seed, data, ".fbx", origin, tuple(muts))


def _offsets_of(data: bytes, fmt: str) -> list[int]:
    """Offsets where a binary FBX property of type ``fmt`` (one of b'IiLDdFf') starts:
    its type code, the value right after it."""
    return [m.start() for m in re.finditer(re.escape(fmt.encode()), data)]


def f_int(rng: random.Random, data: bytes) -> bytes:
    """An int32 / int64 after its type code (a property, an array's count, length or
    encoding), or a record header's 4-byte field, set to an extreme value."""
    import struct

    code = rng.choice("IL")
    spots = _offsets_of(data, code) or [rng.randrange(max(len(data) - 9, 1))]
    i = rng.choice(spots) + 1
    size = 4 if code == "I" else 8
    value = rng.choice((0, 1, -1, 2**31 - 1, -(2**31), 2**30, 255, 65536, 7, 3))
    fmt = "<i" if size == 4 else "<q"
    return data[:i] + struct.pack(fmt, value) + data[i + size :]


def f_array(rng: random.Random, data: bytes) -> bytes:
    """An array property's header (count, encoding, compressed length) changed: a wrong
    count, an unknown encoding, a length past the file."""
    import struct

    spots = [m.start() for m in re.finditer(rb"[dfilb]", data)]
    if not spots:
        raise _Skip
    i = rng.choice(spots) + 1
    field_ = rng.randrange(3)
    value = rng.choice((0, 1, 2, 2**31 - 1, 2**32 - 1, 1 << 28, 12345))
    at = i + 4 * field_
    return data[:at] + struct.pack("<I", value) + data[at + 4 :]


def f_float(rng: random.Random, data: bytes) -> bytes:
    """A double property (a transform, a key value, a time) set to NaN, inf or huge."""
    import struct

    spots = _offsets_of(data, "D")
    if not spots:
        raise _Skip
    i = rng.choice(spots) + 1
    value = rng.choice((math.nan, math.inf, -math.inf, 1e308, -1e308, 5e-324, 0.0, 1e15))
    return data[:i] + struct.pack("<d", value) + data[i + 8 :]


def f_truncate(rng: random.Random, data: bytes) -> bytes:
    return data[: rng.randrange(len(data) + 1)]


def f_slice(rng: random.Random, data: bytes) -> bytes:
    """A byte range deleted, duplicated or moved (records out of place)."""
    i = rng.randrange(len(data) + 1)
    j = min(len(data), i + rng.choice((1, 4, 13, 100, 1000, 10000)))
    piece = data[i:j]
    how = rng.randrange(3)
    if how == 0:
        return data[:i] + data[j:]
    if how == 1:
        return data[:j] + piece * rng.choice((1, 2, 50)) + data[j:]
    k = rng.randrange(len(data) + 1)
    rest = data[:i] + data[j:]
    return rest[:k] + piece + rest[k:]


def f_bits(rng: random.Random, data: bytes) -> bytes:
    return b_bit_flip(rng, data)


def f_string(rng: random.Random, data: bytes) -> bytes:
    """A name, property type or take name replaced (its length field kept or not)."""
    import struct

    spots = _offsets_of(data, "S")
    if not spots:
        raise _Skip
    i = rng.choice(spots) + 1
    new = rng.choice((b"", b"x" * 5000, b"\x00\x01Model", b"Lcl Rotation", b"\xff\xfe"))
    (old,) = struct.unpack("<I", data[i : i + 4]) if i + 4 <= len(data) else (0,)
    if old > 1 << 20:
        raise _Skip
    return data[:i] + struct.pack("<I", len(new)) + new + data[i + 4 + old :]


def _fbx_safely(
    fn: Callable[[random.Random, bytes], bytes],
) -> Callable[[random.Random, bytes], bytes]:
    def mutate(rng: random.Random, data: bytes) -> bytes:
        try:
            return fn(rng, data)
        except (_Skip, ValueError, IndexError):
            return data

    return mutate


_FBX_MUTATORS = tuple(
    (name, _fbx_safely(fn))
    for name, fn in (
        ("fbx_int", f_int),
        ("fbx_array", f_array),
        ("fbx_float", f_float),
        ("fbx_truncate", f_truncate),
        ("fbx_slice", f_slice),
        ("fbx_bits", f_bits),
        ("fbx_string", f_string),
    )
)


def _glb(json_bytes: bytes) -> bytes:
    """A GLB container holding ``json_bytes`` as its JSON chunk (buffers stay data URIs)."""
    import struct

    body = json_bytes + b" " * (-len(json_bytes) % 4)
    header = struct.pack("<4sII", b"glTF", 2, 12 + 8 + len(body))
    return header + struct.pack("<I4s", len(body), b"JSON") + body


Mutator = Callable[[random.Random, str], str]


def _apply(
    rng: random.Random, text: str, table: tuple[tuple[str, Mutator], ...], n: int, log: list[str]
) -> str:
    for _ in range(n):
        name, fn = rng.choice(table)
        try:
            new = fn(rng, text)
        except (_Skip, RecursionError, ValueError, IndexError):  # nothing to mutate, or too deep
            continue
        if len(new) > MAX_BYTES:
            continue
        text = new
        log.append(name)
    return text


class _Skip(Exception):
    """A mutator found nothing to mutate."""


# --- values ---------------------------------------------------------------------------

#: Replacements for one number in a file.
EXTREME_NUMBERS = (
    "nan", "NaN", "-nan", "inf", "-inf", "Infinity", "-0", "-0.0", "0", "1e308", "-1e308",
    "1.8e308", "1e-320", "5e-324", "1e400", "-1e400", "99999999999999999999999999999",
    "-123456789012345678901234567890", "", " ", "abc", "1e", "0x1A", "1_000", "1,5", "--1",
    "+1", "1.2.3", ".", "e5", "1e-7", "3.141592653589793", "6.283185307179586", "1e15",
    "-1e15", "1e30", "١", "１", "2147483648", "-9223372036854775809",
)  # fmt: skip
_NUM_RE = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_JUNK_CHARS = (
    "\x00", "<", ">", '"', "'", "{", "}", "&", "\n", " ", "é", "\ufffd", "9", "-", ".", "e",
    "\t", "\r", "\u202e", "😀", "/", "=", "#", ";", "\\",
)  # fmt: skip


def _extreme(rng: random.Random) -> str:
    return rng.choice(EXTREME_NUMBERS)


def _vector(rng: random.Random) -> str:
    """A 1-4 element vector mixing ordinary and extreme numbers."""
    n = rng.choice((3, 3, 3, 1, 2, 4, 0))
    return " ".join(rng.choice((_extreme(rng), "0", "1", "-1", "0.5")) for _ in range(n))


# --- text mutators (any kind) ---------------------------------------------------------


def _pos(rng: random.Random, text: str) -> int:
    if not text:
        raise _Skip
    return rng.randrange(len(text))


def m_char_flip(rng: random.Random, text: str) -> str:
    i = _pos(rng, text)
    return text[:i] + rng.choice(_JUNK_CHARS) + text[i + 1 :]


def m_char_delete(rng: random.Random, text: str) -> str:
    i = _pos(rng, text)
    return text[:i] + text[i + rng.randint(1, 8) :]


def m_char_insert(rng: random.Random, text: str) -> str:
    i = _pos(rng, text)
    return text[:i] + rng.choice(_JUNK_CHARS) * rng.choice((1, 1, 2, 100)) + text[i:]


def _tokens(text: str) -> list[str]:
    return re.split(r"(\s+)", text)


def m_token_delete(rng: random.Random, text: str) -> str:
    toks = _tokens(text)
    i = rng.randrange(0, len(toks), 2)
    del toks[i]
    return "".join(toks)


def m_token_duplicate(rng: random.Random, text: str) -> str:
    toks = _tokens(text)
    i = rng.randrange(0, len(toks), 2)
    toks.insert(i, toks[i] + " ")
    return "".join(toks)


def m_token_swap(rng: random.Random, text: str) -> str:
    toks = _tokens(text)
    i, j = rng.randrange(0, len(toks), 2), rng.randrange(0, len(toks), 2)
    toks[i], toks[j] = toks[j], toks[i]
    return "".join(toks)


def m_number(rng: random.Random, text: str) -> str:
    hits = list(_NUM_RE.finditer(text))
    if not hits:
        raise _Skip
    m = rng.choice(hits)
    return text[: m.start()] + _extreme(rng) + text[m.end() :]


def m_numbers_window(rng: random.Random, text: str) -> str:
    """Replace every number in a random window (up to a few lines) by one extreme value."""
    i = _pos(rng, text)
    j = i + rng.choice((50, 200, 2000))
    value = _extreme(rng)
    return text[:i] + _NUM_RE.sub(lambda m: value, text[i:j]) + text[j:]


def m_line_delete(rng: random.Random, text: str) -> str:
    lines = text.splitlines(keepends=True)
    del lines[rng.randrange(len(lines))]
    return "".join(lines)


def m_line_duplicate(rng: random.Random, text: str) -> str:
    lines = text.splitlines(keepends=True)
    i = rng.randrange(len(lines))
    lines[i:i] = [lines[i]] * rng.choice((1, 1, 2, 10, 1000))
    return "".join(lines)


def m_line_swap(rng: random.Random, text: str) -> str:
    lines = text.splitlines(keepends=True)
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[i], lines[j] = lines[j], lines[i]
    return "".join(lines)


def m_truncate(rng: random.Random, text: str) -> str:
    return text[: rng.choice((0, 1, rng.randrange(len(text) + 1)))]


def m_leading_junk(rng: random.Random, text: str) -> str:
    return rng.choice((" ", "\n", "\t\n  ", "\ufeff", "\r\n", "\x00", "junk", "<!-- c -->")) + text


def m_blowup(rng: random.Random, text: str) -> str:
    """Repeat a random slice many times (large inputs, slow paths)."""
    i = _pos(rng, text)
    piece = text[i : i + rng.choice((1, 10, 80))]
    return text[:i] + piece * rng.choice((1000, 20000)) + text[i:]


def m_case_flip(rng: random.Random, text: str) -> str:
    i = _pos(rng, text)
    j = i + rng.choice((5, 40, 400))
    return text[:i] + text[i:j].swapcase() + text[j:]


_TEXT_MUTATORS: tuple[tuple[str, Mutator], ...] = (
    ("char_flip", m_char_flip),
    ("char_delete", m_char_delete),
    ("char_insert", m_char_insert),
    ("token_delete", m_token_delete),
    ("token_duplicate", m_token_duplicate),
    ("token_swap", m_token_swap),
    ("number", m_number),
    ("number", m_number),
    ("number", m_number),
    ("numbers_window", m_numbers_window),
    ("line_delete", m_line_delete),
    ("line_duplicate", m_line_duplicate),
    ("line_swap", m_line_swap),
    ("truncate", m_truncate),
    ("leading_junk", m_leading_junk),
    ("blowup", m_blowup),
    ("case_flip", m_case_flip),
)

# --- byte mutators --------------------------------------------------------------------


def b_bit_flip(rng: random.Random, data: bytes) -> bytes:
    if not data:
        return data
    b = bytearray(data)
    for _ in range(rng.choice((1, 1, 4, 32))):
        i = rng.randrange(len(b))
        b[i] ^= 1 << rng.randrange(8)
    return bytes(b)


def b_invalid_utf8(rng: random.Random, data: bytes) -> bytes:
    i = rng.randrange(len(data) + 1)
    return (
        data[:i]
        + rng.choice((b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\x80\x80", b"\xfe"))
        + data[i:]
    )


def b_utf16(rng: random.Random, data: bytes) -> bytes:
    return data.decode("utf-8", "replace").encode(rng.choice(("utf-16", "utf-16-le", "utf-32")))


def b_bom(rng: random.Random, data: bytes) -> bytes:
    return rng.choice((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")) + data


def b_latin1(rng: random.Random, data: bytes) -> bytes:
    return data.decode("utf-8", "replace").replace("a", "é").encode("latin-1", "replace")


_BYTE_MUTATORS = (
    ("bit_flip", b_bit_flip),
    ("invalid_utf8", b_invalid_utf8),
    ("utf16", b_utf16),
    ("bom", b_bom),
    ("latin1", b_latin1),
)

# --- XML mutators (URDF, MJCF) --------------------------------------------------------

_XML_TYPES = (
    "revolute", "continuous", "prismatic", "fixed", "floating", "planar", "ball", "hinge",
    "slide", "free", "", "REVOLUTE", " revolute", "spherical", "revolute\n",
)  # fmt: skip
_NAMEISH = ("name", "link", "joint", "joint1", "joint2", "class")
_STRANGE_NAMES = ("", " ", "a b", "world", "ü", "x" * 5000, "base", "../../etc", "{}", "0")


def _parse(text: str) -> ET.Element:
    try:
        return ET.fromstring(text)
    except ET.ParseError:
        raise _Skip from None


def _dump(root: ET.Element) -> str:
    return ET.tostring(root, encoding="unicode")


def _names(root: ET.Element) -> list[str]:
    return [v for e in root.iter() for k, v in e.attrib.items() if k in _NAMEISH]


def _elements(root: ET.Element) -> list[tuple[ET.Element, ET.Element]]:
    """(parent, child) pairs below the root."""
    return [(p, c) for p in root.iter() for c in p]


def x_attr_delete(rng: random.Random, text: str) -> str:
    root = _parse(text)
    els = [e for e in root.iter() if e.attrib]
    if not els:
        raise _Skip
    e = rng.choice(els)
    del e.attrib[rng.choice(list(e.attrib))]
    return _dump(root)


def x_attr_set(rng: random.Random, text: str) -> str:
    root = _parse(text)
    els = [e for e in root.iter() if e.attrib]
    if not els:
        raise _Skip
    e = rng.choice(els)
    key = rng.choice(list(e.attrib))
    if key == "type":
        e.set(key, rng.choice(_XML_TYPES))
    elif key in _NAMEISH:
        e.set(key, rng.choice((*_names(root), *_STRANGE_NAMES)))
    elif key in ("xyz", "rpy", "pos", "axis", "quat", "euler", "fromto", "size", "range"):
        e.set(key, _vector(rng))
    else:
        e.set(key, _extreme(rng))
    return _dump(root)


def x_attr_add(rng: random.Random, text: str) -> str:
    """Add an attribute a loader may read: limits, an axis, an origin, a type."""
    root = _parse(text)
    e = rng.choice(list(root.iter()))
    key = rng.choice(("lower", "upper", "xyz", "rpy", "type", "name", "multiplier", "offset"))
    e.set(key, _vector(rng) if key in ("xyz", "rpy") else _extreme(rng))
    return _dump(root)


def x_elem_delete(rng: random.Random, text: str) -> str:
    root = _parse(text)
    pairs = _elements(root)
    if not pairs:
        raise _Skip
    p, c = rng.choice(pairs)
    p.remove(c)
    return _dump(root)


def x_elem_duplicate(rng: random.Random, text: str) -> str:
    root = _parse(text)
    pairs = _elements(root)
    if not pairs:
        raise _Skip
    p, c = rng.choice(pairs)
    for _ in range(rng.choice((1, 1, 2, 50))):
        p.append(ET.fromstring(ET.tostring(c)))
    return _dump(root)


def x_elem_move(rng: random.Random, text: str) -> str:
    root = _parse(text)
    pairs = _elements(root)
    if not pairs:
        raise _Skip
    p, c = rng.choice(pairs)
    target = rng.choice(list(root.iter()))
    if target is c or c in list(target.iter()):
        raise _Skip
    p.remove(c)
    target.append(c)
    return _dump(root)


def x_add_joint(rng: random.Random, text: str) -> str:
    """A new joint between existing (or missing) links, often closing a cycle."""
    root = _parse(text)
    links = [e.get("name", "") for e in root.iter("link")] or ["base"]
    joints = [e.get("name", "") for e in root.iter("joint")] or ["j"]
    j = ET.SubElement(root, "joint", name=rng.choice((f"fz{rng.randrange(99)}", *joints)))
    j.set("type", rng.choice(_XML_TYPES))
    ET.SubElement(j, "parent", link=rng.choice((*links, "nowhere")))
    ET.SubElement(j, "child", link=rng.choice((*links, "nowhere")))
    if rng.random() < 0.7:
        ET.SubElement(j, "origin", xyz=_vector(rng), rpy=_vector(rng))
    if rng.random() < 0.7:
        ET.SubElement(j, "axis", xyz=_vector(rng))
    if rng.random() < 0.5:
        ET.SubElement(j, "limit", lower=_extreme(rng), upper=_extreme(rng))
    if rng.random() < 0.3:
        ET.SubElement(j, "mimic", joint=rng.choice(joints), multiplier=_extreme(rng))
    return _dump(root)


def x_add_mimic(rng: random.Random, text: str) -> str:
    """Make a joint follow another (or itself, or a fixed or missing joint)."""
    root = _parse(text)
    joints = list(root.iter("joint"))
    if not joints:
        raise _Skip
    names = [j.get("name", "") for j in joints]
    j = rng.choice(joints)
    attrs = {"joint": rng.choice((*names, "missing"))}
    if rng.random() < 0.7:
        attrs["multiplier"] = rng.choice((_extreme(rng), "1", "-1", "0"))
    if rng.random() < 0.7:
        attrs["offset"] = rng.choice((_extreme(rng), "0", "0.5"))
    ET.SubElement(j, "mimic", attrs)
    return _dump(root)


def x_swap_parent_child(rng: random.Random, text: str) -> str:
    root = _parse(text)
    joints = [j for j in root.iter("joint") if j.find("parent") is not None]
    if not joints:
        raise _Skip
    j = rng.choice(joints)
    p, c = j.find("parent"), j.find("child")
    if p is None or c is None:
        raise _Skip
    p.attrib, c.attrib = dict(c.attrib), dict(p.attrib)
    return _dump(root)


def x_deep_nesting(rng: random.Random, text: str) -> str:
    """Deeply nested elements: inside the root, or around it (text level, any depth)."""
    n = rng.choice((10, 100, 1000, 5000, 50000))
    tag = rng.choice(("link", "joint", "origin", "w", "robot", "body"))
    text = re.sub(r"^\s*<\?xml[^>]*\?>", "", text)
    if rng.random() < 0.5:
        return f"<{tag} name='n'>" * n + text + f"</{tag}>" * n
    starts = [m.start() for m in re.finditer(r"<(link|joint|body|origin)\b", text)]
    if not starts:
        raise _Skip
    i = rng.choice(starts)
    return text[:i] + f"<{tag} name='n'>" * n + f"</{tag}>" * n + text[i:]


def x_entities(rng: random.Random, text: str) -> str:
    """A DOCTYPE with entities (billion laughs in small), or an external entity."""
    body = re.sub(r"^\s*<\?xml[^>]*\?>", "", text)
    if rng.random() < 0.5:
        dtd = (
            '<!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
            '<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;">]>'
        )
        return dtd + body.replace('name="', 'name="&d;', 1)
    return '<!DOCTYPE r [<!ENTITY e SYSTEM "file:///etc/hostname">]>' + body.replace(
        'name="', 'name="&e;', 1
    )


_XML_MUTATORS: tuple[tuple[str, Mutator], ...] = (
    ("xml_attr_delete", x_attr_delete),
    ("xml_attr_set", x_attr_set),
    ("xml_attr_set", x_attr_set),
    ("xml_attr_set", x_attr_set),
    ("xml_attr_add", x_attr_add),
    ("xml_elem_delete", x_elem_delete),
    ("xml_elem_duplicate", x_elem_duplicate),
    ("xml_elem_move", x_elem_move),
    ("xml_add_joint", x_add_joint),
    ("xml_add_mimic", x_add_mimic),
    ("xml_swap_parent_child", x_swap_parent_child),
    ("xml_deep_nesting", x_deep_nesting),
    ("xml_entities", x_entities),
)

# --- BVH mutators ---------------------------------------------------------------------

_CHANNELS = (
    "Xrotation", "Yrotation", "Zrotation", "Xposition", "Yposition", "Zposition",
    "xrotation", "XROTATION", "Wrotation", "Xrot", "rotation", "Xrotation Xrotation", "",
)  # fmt: skip


def _sub_one(rng: random.Random, pattern: str, text: str, repl: Callable[[re.Match], str]) -> str:
    hits = list(re.finditer(pattern, text, flags=re.MULTILINE))
    if not hits:
        raise _Skip
    m = rng.choice(hits)
    return text[: m.start()] + repl(m) + text[m.end() :]


def v_channel_count(rng: random.Random, text: str) -> str:
    counts = ("0", "-1", "1", "2", "4", "7", "100", "x", "3.5", "99999999999", "")
    return _sub_one(rng, r"(CHANNELS\s+)(\S+)", text, lambda m: m.group(1) + rng.choice(counts))


def v_channel_name(rng: random.Random, text: str) -> str:
    return _sub_one(rng, r"[XYZ](rotation|position)", text, lambda m: rng.choice(_CHANNELS))


def v_frames(rng: random.Random, text: str) -> str:
    values = ("0", "-1", "1", "2", "4", "1000000000", "", "abc", "2.5", "٣", "99999999999999999999")
    return _sub_one(rng, r"(Frames:\s*)(\S*)", text, lambda m: m.group(1) + rng.choice(values))


def v_frame_time(rng: random.Random, text: str) -> str:
    values = ("0", "-0.0333", "nan", "inf", "1e-320", "1e308", "", "abc", "-0", "1e-30")
    return _sub_one(rng, r"(Frame Time:\s*)(\S*)", text, lambda m: m.group(1) + rng.choice(values))


def _motion_start(text: str) -> int:
    i = text.find("MOTION")
    if i < 0:
        raise _Skip
    return i


def v_motion_value(rng: random.Random, text: str) -> str:
    i = _motion_start(text)
    head, tail = text[:i], text[i:]
    lines = tail.splitlines(keepends=True)
    data = [k for k, ln in enumerate(lines) if k >= 3 and ln.strip()]
    if not data:
        raise _Skip
    k = rng.choice(data)
    toks = lines[k].split()
    v = _extreme(rng)
    if rng.random() < 0.3:
        toks = [v] * len(toks)
    else:
        toks[rng.randrange(len(toks))] = v
    lines[k] = " ".join(toks) + "\n"
    return head + "".join(lines)


def v_motion_lines(rng: random.Random, text: str) -> str:
    """Add, drop or cut a motion line (a frame count that no longer matches)."""
    i = _motion_start(text)
    lines = text[i:].splitlines(keepends=True)
    if len(lines) < 4:
        raise _Skip
    k = rng.randrange(3, len(lines))
    op = rng.randrange(3)
    if op == 0:
        lines.insert(k, lines[k])
    elif op == 1:
        del lines[k]
    else:
        toks = lines[k].split()
        lines[k] = " ".join(toks[: rng.randrange(len(toks) + 1)]) + "\n"
    return text[:i] + "".join(lines)


def _block_end(text: str, start: int) -> int:
    """Index just past the ``}`` closing the first ``{`` after ``start``."""
    i = text.find("{", start)
    if i < 0:
        raise _Skip
    depth = 0
    for k in range(i, len(text)):
        if text[k] == "{":
            depth += 1
        elif text[k] == "}":
            depth -= 1
            if depth == 0:
                return k + 1
    raise _Skip


def v_joint_block(rng: random.Random, text: str) -> str:
    """Delete or duplicate one JOINT or End Site block."""
    starts = [m.start() for m in re.finditer(r"\b(JOINT|End Site)\b", text)]
    if not starts:
        raise _Skip
    s = rng.choice(starts)
    e = _block_end(text, s)
    if rng.random() < 0.5:
        return text[:s] + text[e:]
    return text[:e] + "\n" + text[s:e] + text[e:]


def v_joint_name(rng: random.Random, text: str) -> str:
    names = re.findall(r"(?:JOINT|ROOT)\s+(\S+)", text)
    choices = (*names, "world", "_world", "End", "Site", "{", "x" * 3000, "é", "a#b", "a_end")
    return _sub_one(
        rng, r"((?:JOINT|ROOT)\s+)(\S+)", text, lambda m: m.group(1) + rng.choice(choices)
    )


def v_offset(rng: random.Random, text: str) -> str:
    return _sub_one(rng, r"(OFFSET)([^\n]*)", text, lambda m: m.group(1) + " " + _vector(rng))


def v_end_site_channels(rng: random.Random, text: str) -> str:
    return _sub_one(
        rng,
        r"End Site\s*\{",
        text,
        lambda m: m.group(0) + "\nCHANNELS 3 Xrotation Yrotation Zrotation",
    )


def v_deep_chain(rng: random.Random, text: str) -> str:
    """A chain of ``n`` nested joints under a random joint; motion lines padded to match."""
    n = rng.choice((30, 200, 990, 1100, 3000))
    nch = rng.choice((0, 1, 3))
    hits = list(re.finditer(r"CHANNELS[^\n]*\n", text))
    if not hits:
        raise _Skip
    at = rng.choice(hits).end()
    chans = " ".join(("Zrotation", "Xrotation", "Yrotation")[:nch])
    opening = "".join(f"JOINT d{k}\n{{\nOFFSET 0 1 0\nCHANNELS {nch} {chans}\n" for k in range(n))
    chain = opening + "End Site\n{\nOFFSET 0 1 0\n}\n" + "}\n" * n
    text = text[:at] + chain + text[at:]
    i = _motion_start(text)
    lines = text[i:].splitlines(keepends=True)
    pad = " 0" * (n * nch)
    for k in range(3, len(lines)):
        if lines[k].strip():
            lines[k] = lines[k].rstrip("\n") + pad + "\n"
    return text[:i] + "".join(lines)


def v_wide(rng: random.Random, text: str) -> str:
    """Many sibling joints under the root (a wide tree); motion lines padded to match."""
    n = rng.choice((100, 1000, 5000))
    m = re.search(r"ROOT[^\n]*\n\s*\{\s*\n[^\n]*OFFSET[^\n]*\n[^\n]*CHANNELS[^\n]*\n", text)
    count = None if m is None else re.search(r"CHANNELS\s+(\d+)", m.group(0))
    if m is None or count is None:  # no root, or a root whose channel count is mangled
        raise _Skip
    nroot = int(count.group(1))
    block = "".join(
        f"JOINT w{k}\n{{\nOFFSET 1 0 0\nCHANNELS 1 Zrotation\nEnd Site\n{{\nOFFSET 0 1 0\n}}\n}}\n"
        for k in range(n)
    )
    text = text[: m.end()] + block + text[m.end() :]
    i = _motion_start(text)
    lines = text[i:].splitlines(keepends=True)
    for k in range(3, len(lines)):
        if lines[k].strip():
            toks = lines[k].split()
            lines[k] = " ".join(toks[:nroot] + ["0"] * n + toks[nroot:]) + "\n"
    return text[:i] + "".join(lines)


def v_braces(rng: random.Random, text: str) -> str:
    return _sub_one(rng, r"[{}]", text, lambda m: rng.choice(("", "{", "}", "{ }", "}}")))


_BVH_MUTATORS: tuple[tuple[str, Mutator], ...] = (
    ("bvh_channel_count", v_channel_count),
    ("bvh_channel_name", v_channel_name),
    ("bvh_frames", v_frames),
    ("bvh_frame_time", v_frame_time),
    ("bvh_motion_value", v_motion_value),
    ("bvh_motion_value", v_motion_value),
    ("bvh_motion_lines", v_motion_lines),
    ("bvh_joint_block", v_joint_block),
    ("bvh_joint_name", v_joint_name),
    ("bvh_offset", v_offset),
    ("bvh_offset", v_offset),
    ("bvh_end_site_channels", v_end_site_channels),
    ("bvh_deep_chain", v_deep_chain),
    ("bvh_wide", v_wide),
    ("bvh_braces", v_braces),
)

# --- DH tables ------------------------------------------------------------------------

DH_FIELDS = ("a", "alpha", "d", "theta")
_DH_EXTREME = (
    "nan", "inf", "-inf", "-0.0", "0.0", "1e308", "-1e308", "1e-320", "5e-324", "1e154",
    "1e200", "-1e200", "1e15", "1e-9", "10**400", "2**63", "10**20", "3.141592653589793",
)  # fmt: skip
_DH_WRONG = (
    "None", "'1.0'", "'abc'", "''", "[1.0, 2.0]", "(1.0,)", "{}", "True", "1j", "np.float32(1.5)",
    "np.float16(70000)", "np.array([1.0])", "np.array(1.0)", "np.nan", "np.int64(2**62)",
    "np.longdouble('1e400')", "object()", "float",
)  # fmt: skip
_DH_TYPES = (
    "'revolute'", "'prismatic'", "'fixed'", "'continuous'", "'ball'", "'Revolute'", "''", "None",
    "1", "b'revolute'", "['revolute']",
)  # fmt: skip
_DH_LIMITS = (
    "None", "(-1.0, 1.0)", "(1.0, -1.0)", "(nan, 1.0)", "(-inf, inf)", "(inf, -inf)", "(0.0, 0.0)",
    "(-1e308, 1e308)", "(-1e300, 1e300)", "(1.0,)", "(1.0, 2.0, 3.0)", "'ab'", "[]", "(None, 1.0)",
    "('a', 'b')", "(0.0, 1e-320)", "(-10**400, 10**400)", "(5.0, 6.0)", "(-1e200, -1e199)",
    "np.array([-1.0, 1.0])", "(np.nan, np.nan)", "(-inf, -1e308)",
)  # fmt: skip
_DH_NAMES = ("None", "''", "'joint1'", "'joint2'", "'link0'", "'flange'", "'x' * 10000", "1", "'é'")
_DH_MATRICES = (
    "None", "np.eye(4)", "np.full((4, 4), nan)", "np.eye(3)", "[[1.0, 0.0, 0.0, 0.0]]", "'eye'",
    "np.diag([2.0, 2.0, 2.0, 1.0])", "np.zeros((4, 4))", "np.eye(4)[None]", "np.eye(4, dtype=int)",
    "[[1, 0, 0, 1e308], [0, 1, 0, 1e308], [0, 0, 1, 0], [0, 0, 0, 1]]",
    "[[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 2]]",
    "[[1, 0, 0, inf], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]",
    "[[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]", "np.eye(4) * (1 + 1e-9)",
)  # fmt: skip
_DH_ROWS_WHOLE = ("[]", "None", "'abc'", "()", "[None]", "[[0.1, 0.2, 0.3, 0.4]]", "[{'a': 0.1}]")
_DH_CONVENTIONS = ("'standard'", "'modified'", "'Standard'", "'craig'", "''", "None", "1")


def _dh_case(rng: random.Random) -> tuple[str, tuple[str, ...], str]:
    k = rng.randrange(len(_DH_SEEDS))
    convention, seed_rows = _DH_SEEDS[k]
    rows: list[dict[str, str] | str] = [dict(r) for r in seed_rows]
    kwargs: dict[str, str] = {}
    muts: list[str] = []
    whole: str | None = None
    for _ in range(rng.choice((1, 1, 2, 2, 3, 5))):
        op = rng.choice(
            ("extreme", "extreme", "extreme", "wrong_type", "type", "limits", "name", "add_rows",
             "delete_row", "many_rows", "row_type", "convention", "base_tool", "rows_whole",
             "random_table")
        )  # fmt: skip
        dict_rows = [r for r in rows if isinstance(r, dict)]
        if op in ("extreme", "wrong_type", "type", "limits", "name") and not dict_rows:
            continue
        if op == "extreme":
            rng.choice(dict_rows)[rng.choice(DH_FIELDS)] = rng.choice(_DH_EXTREME)
        elif op == "wrong_type":
            rng.choice(dict_rows)[rng.choice((*DH_FIELDS, "limits"))] = rng.choice(_DH_WRONG)
        elif op == "type":
            rng.choice(dict_rows)["type"] = rng.choice(_DH_TYPES)
        elif op == "limits":
            rng.choice(dict_rows)["limits"] = rng.choice(_DH_LIMITS)
        elif op == "name":
            rng.choice(dict_rows)["name"] = rng.choice(_DH_NAMES)
        elif op == "add_rows":
            rows.insert(rng.randrange(len(rows) + 1), _random_row(rng))
        elif op == "delete_row" and rows:
            del rows[rng.randrange(len(rows))]
        elif op == "many_rows":
            rows = [_random_row(rng) for _ in range(rng.choice((50, 200, 1000)))]
        elif op == "row_type" and rows:
            rows[rng.randrange(len(rows))] = rng.choice((*_DH_ROWS_WHOLE[2:], "3.0", "DHRow"))
        elif op == "convention":
            convention = rng.choice(_DH_CONVENTIONS)
        elif op == "base_tool":
            kwargs[rng.choice(("base", "tool"))] = rng.choice(_DH_MATRICES)
        elif op == "rows_whole":
            whole = rng.choice(_DH_ROWS_WHOLE)
        elif op == "random_table":
            rows = [_random_row(rng) for _ in range(rng.randint(1, 8))]
        muts.append(f"dh_{op}")
    return _dh_source(rows, convention, kwargs, whole), tuple(muts), f"dh{k}"


def _random_row(rng: random.Random) -> dict[str, str]:
    row = {
        f: rng.choice((repr(round(rng.uniform(-2, 2), 4)), "0.0", rng.choice(_DH_EXTREME)))
        for f in DH_FIELDS
        if rng.random() < 0.8
    }
    if rng.random() < 0.3:
        row["type"] = "'prismatic'"
    if rng.random() < 0.5:
        row["limits"] = rng.choice(_DH_LIMITS)
    return row


def _dh_source(
    rows: list[dict[str, str] | str], convention: str, kwargs: dict[str, str], whole: str | None
) -> str:
    """One ``from_dh(...)`` call, a row (and a field) per line so lines can be dropped."""
    out = ["from_dh("]
    if whole is not None:
        out.append(f"    {whole},")
    else:
        out.append("    [")
        for r in rows:
            if isinstance(r, str):
                out.append(f"        {r},")
                continue
            out.append("        DHRow(")
            out.extend(f"            {k}={v}," for k, v in r.items())
            out.append("        ),")
        out.append("    ],")
    out.append(f"    {convention},")
    out.extend(f"    {k}={v}," for k, v in kwargs.items())
    out.append(")")
    return "\n".join(out) + "\n"


def eval_dh(source: str) -> Any:
    """Evaluate a DH case (the source of one ``from_dh(...)`` call) and return the model."""
    import numpy as np

    from kinetree.io.dh import DHRow, from_dh

    ns = {"from_dh": from_dh, "DHRow": DHRow, "nan": math.nan, "inf": math.inf, "np": np}
    code = compile(
        source, "<dh case>", "eval"
    )  # a SyntaxError here is the harness's, not kinetree's
    return eval(code, ns)


# --- the oracle -----------------------------------------------------------------------


class Violation(Exception):
    """A loaded model or an IK result that breaks a promise (non-finite FK, bad success)."""


class HarnessError(Exception):
    """The case itself is broken (a DH source that does not compile): not kinetree's fault."""


def _where(exc: BaseException) -> str:
    """Innermost traceback frame inside kinetree (else the innermost frame), as file:line."""
    frames = traceback.extract_tb(exc.__traceback__)
    mine = [f for f in frames if "/kinetree/" in f.filename and "fuzz_inputs" not in f.filename]
    f = (mine or frames or [None])[-1]
    if f is None:
        return ""
    path = f.filename
    for marker in ("/site-packages/", "/src/"):
        if marker in path:
            path = path.split(marker, 1)[1]
    return f"{path}:{f.lineno} in {f.name}"


def check_case(case: Case, workdir: Path, stage_cb: Callable[[str], None] | None = None) -> dict:
    """Run one case; return its record (``outcome``: loaded, rejected or finding)."""
    from kinetree.errors import KinetreeError

    stage = "load"

    def enter(name: str) -> None:
        nonlocal stage
        stage = name
        if stage_cb is not None:
            stage_cb(name)

    rec: dict[str, Any] = {"key": case.key, "kind": case.kind, "ext": case.ext}
    t0 = time.perf_counter()
    notes: list[str] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            enter("load")
            model, clip = _load(case, workdir)
            rec["dof"] = int(model.dof)
            _check_model(model, clip, case, workdir, enter, notes)
        rec["outcome"] = "loaded"
    except HarnessError as exc:
        rec.update(outcome="harness", type="HarnessError", message=str(exc)[:500])
    except KinetreeError as exc:
        if stage == "load":
            rec.update(outcome="rejected", type=type(exc).__name__, message=str(exc)[:500])
        elif stage == "ik":  # IK may refuse a model (no active joints, ...) with a KinetreeError
            rec.update(outcome="loaded", ik_refused=f"{type(exc).__name__}: {str(exc)[:200]}")
        else:
            rec.update(outcome="finding", type=type(exc).__name__, message=str(exc)[:500])
            rec["where"] = _where(exc)
    except Violation as exc:
        rec.update(outcome="finding", type="Violation", message=str(exc)[:500])
    except Exception as exc:
        rec.update(outcome="finding", type=type(exc).__name__, message=str(exc)[:500])
        rec["where"] = _where(exc)
    rec["stage"] = stage
    rec["seconds"] = round(time.perf_counter() - t0, 4)
    if notes:
        rec["notes"] = notes
    if caught:
        rec["warnings"] = sorted({w.category.__name__ for w in caught})
    return rec


def _load(case: Case, workdir: Path) -> tuple[Any, Any]:
    import kinetree

    if case.kind == "dh":
        try:
            source = case.data.decode()
            compile(source, "<dh case>", "eval")
        except (SyntaxError, UnicodeDecodeError, ValueError) as exc:
            raise HarnessError(f"DH case does not compile: {exc}") from None
        return eval_dh(source), None
    path = workdir / f"case{case.ext}"
    path.write_bytes(case.data)
    if case.kind == "bvh":
        clip = kinetree.read_bvh(path)
        return clip.model, clip
    if case.kind in ("gltf", "usd", "fbx"):
        clip = kinetree.read_clip(path)
        return clip.model, clip
    return kinetree.load(path), None


def _finite(x: Any, what: str) -> None:
    import numpy as np

    a = np.asarray(x, dtype=float)
    if not np.all(np.isfinite(a)):
        raise Violation(f"{what} is not finite ({int(np.sum(~np.isfinite(a)))} of {a.size})")


def _check_model(
    model: Any, clip: Any, case: Case, workdir: Path, enter: Callable[[str], None], notes: list[str]
) -> None:
    import numpy as np

    enter("fk-neutral")
    qn = model.neutral()
    _finite(qn, "neutral configuration")
    _finite(model.fk_all(qn), "FK at the neutral configuration")
    enter("sample")
    Q = model.random_configuration(3, rng=case.seed % 2**32)
    _finite(Q, "random_configuration()")
    if not np.all(model.within_limits(Q)):
        raise Violation("random_configuration() is outside the joint limits")
    enter("fk-random")
    _finite(model.fk_all(Q), "FK at random configurations")
    if clip is not None:
        enter("fk-clip")
        _finite(clip.q, "clip.q")
        _finite(model.fk_all(clip.q[:3]), "FK at the clip's frames")
        if case.kind == "bvh":
            enter("bvh-roundtrip")
            _bvh_roundtrip(clip, workdir)
        else:
            enter(f"{case.kind}-roundtrip")
            _clip_roundtrip(clip, case.ext, workdir)
    if model.dof == 0 or not model.end_effectors:
        notes.append("no IK: no DoF or no end effector")
        return
    enter("ik")
    frame = model.end_effectors[0]
    target = model.fk(Q[0], frame)
    result = model.ik(target, frame, **IK_OPTIONS)
    enter("ik-result")
    _check_ik(model, frame, target, result)


def _bvh_roundtrip(clip: Any, workdir: Path) -> None:
    """A clip that loaded writes out and reads back to the same q."""
    import numpy as np

    import kinetree

    out = workdir / "roundtrip.bvh"
    kinetree.write_bvh(out, clip)
    back = kinetree.read_bvh(out)
    if back.q.shape != clip.q.shape or not np.allclose(back.q, clip.q, rtol=1e-9, atol=1e-9):
        raise Violation("write_bvh then read_bvh changes q")


def _clip_roundtrip(clip: Any, ext: str, workdir: Path) -> None:
    """A glTF or USD clip that loaded writes out and reads back to the same joint poses
    (to float32, what both formats store animation curves in)."""
    import numpy as np

    import kinetree

    gltf = ext in (".gltf", ".glb")
    out = workdir / ("roundtrip.glb" if gltf else "roundtrip.usdc")
    kinetree.write_clip(clip, out)
    # glTF is written in metres (read back in the model's unit); USD keeps the unit.
    back = kinetree.read_clip(out, scale=clip.model.length_scale if gltf else 1.0)
    # The joints as written: glTF names them as the model's frames; USD by their paths
    # (leaf names may repeat), in the order of the model's frames.
    frames = set(clip.model.frame_names)
    leaves = list(back.joint_names)  # the same names (glTF, or USD read from USD)
    if not set(leaves) <= frames:
        leaves = [name.rsplit("/", 1)[-1] for name in back.joint_names]
    if len(set(leaves)) != len(leaves) or not set(leaves) <= frames:
        leaves = [f for f in clip.model.frame_names if f != clip.model.node_names[0]]
    if not set(leaves) <= frames:
        raise Violation(f"write_clip then read_clip renames the joints ({back.joint_names[:5]})")
    a, b = clip.world_poses(leaves), back.world_poses()
    if a.shape != b.shape:
        raise Violation(f"write_clip then read_clip changes the joints ({a.shape} -> {b.shape})")
    size = max(float(np.max(np.abs(a[..., :3, 3]), initial=0.0)), 1.0)
    if not np.allclose(a, b, rtol=0.0, atol=1e-5 * size):
        raise Violation("write_clip then read_clip changes the joint poses")


def _check_ik(model: Any, frame: str, target: Any, result: Any) -> None:
    import numpy as np
    from scipy.spatial.transform import Rotation

    q = np.asarray(result.q, dtype=float)
    pe = np.asarray(result.position_error, dtype=float)
    oe = np.asarray(result.orientation_error, dtype=float)
    success = bool(np.all(result.success))
    if success and not (np.all(np.isfinite(pe)) and np.all(np.isfinite(oe))):
        raise Violation("IK success with a non-finite position or orientation error")
    if not np.all(np.isfinite(q)):
        raise Violation(f"IK result q is not finite (success={success})")
    if np.any(np.isnan(pe)) or np.any(np.isnan(oe)):
        raise Violation(f"IK result error is NaN (success={success})")
    if not success:
        return
    # Independent check: FK of the returned q (all frames, then pick one) against the target.
    T_all = model.fk_all(q)
    T = T_all[model.frame_names.index(frame)]
    scale = max(1.0, float(np.max(np.abs(T_all[..., :3, 3]))))
    slack = 1e-12 * scale
    p_err = float(np.linalg.norm(T[:3, 3] - target[:3, 3]))
    R_err = target[:3, :3].T @ T[:3, :3]
    r_err = float(Rotation.from_matrix(R_err).magnitude())
    if p_err > IK_TOL * 1.001 + slack or r_err > IK_TOL * 1.001 + 1e-9:
        raise Violation(
            f"IK reports success but FK(q) misses the target by {p_err:.3g} m, {r_err:.3g} rad"
        )


# --- findings -------------------------------------------------------------------------


def signature(rec: dict) -> tuple[str, str, str, str]:
    """Group key: (input kind, stage, exception type, message prefix with values masked)."""
    msg = rec.get("message", "")
    msg = re.sub(r"(/[^\s:'\"]+)+", "<path>", msg)
    msg = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", msg)
    msg = re.sub(r"[-+]?\d+(\.\d+)?([eE][-+]?\d+)?", "N", msg)
    return (rec["kind"], rec.get("stage", ""), rec.get("type", ""), msg[:60])


def case_payload(case: Case) -> dict[str, str]:
    """The input, JSON-safe: ``text`` if it is UTF-8, else ``b64``."""
    try:
        return {"text": case.data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"b64": base64.b64encode(case.data).decode()}


def group_findings(records: Iterable[dict]) -> list[tuple[tuple[str, ...], list[dict]]]:
    """Findings grouped by :func:`signature`, largest group first."""
    groups: dict[tuple[str, ...], list[dict]] = {}
    for r in records:
        if r["outcome"] in ("finding", "hang", "crash"):
            groups.setdefault(signature(r), []).append(r)
    return sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))


def format_groups(groups: list[tuple[tuple[str, ...], list[dict]]], limit: int = 40) -> str:
    lines = []
    for (kind, stage, typ, msg), recs in groups[:limit]:
        first = min(recs, key=lambda r: r.get("size", 0))
        where = f" at {first['where']}" if first.get("where") else ""
        lines.append(f"{len(recs):5d} x {kind:4s} {stage:12s} {typ}: {msg}{where}")
        lines.append(f"        e.g. {first['key']} ({first.get('size', '?')} bytes)")
    if len(groups) > limit:
        lines.append(f"... and {len(groups) - limit} more groups")
    return "\n".join(lines)


# --- the process pool -----------------------------------------------------------------


def _worker(conn: Connection, workdir: str, mem_limit: int) -> None:
    """Worker process: warm up the compiled kernels, then check cases until told to stop."""
    import logging
    import resource

    if mem_limit:
        resource.setrlimit(resource.RLIMIT_AS, (mem_limit, mem_limit))
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)  # loaders' warnings and logging are not findings
    logging.disable(logging.CRITICAL)
    wd = Path(workdir)
    _warm_up(wd)
    conn.send(("ready", os.getpid()))
    while True:
        case = conn.recv()
        if case is None:
            return
        rec = check_case(case, wd, lambda s: conn.send(("stage", s)))
        conn.send(("done", rec))


def _warm_up(workdir: Path) -> None:
    """Load the kernels (compiled once per cache dir) before the per-case clock runs."""
    for kind in ("urdf", "bvh"):
        name, text = seed_texts(kind)[0]
        check_case(Case(kind, 0, text.encode(), "." + kind, name, ()), workdir)
    src = _dh_source([dict(r) for r in _DH_SEEDS[1][1]], "'standard'", {}, None)
    check_case(Case("dh", 0, src.encode(), ".py", "dh1", ()), workdir)


@dataclass
class _Slot:
    proc: Any = None
    conn: Any = None
    case: Case | None = None
    started: float = 0.0
    stage: str = ""
    ready: bool = False
    spawned: float = 0.0
    workdir: str = ""


@dataclass
class PoolStats:
    restarts: int = 0
    warmup_s: list[float] = field(default_factory=list)


def run_cases(
    cases: Iterable[Case],
    jobs: int = 2,
    timeout: float = TIMEOUT_S,
    on_result: Callable[[Case, dict], None] | None = None,
    mem_limit: int = 6 << 30,
    warmup_timeout: float = 900.0,
    stats: PoolStats | None = None,
) -> list[dict]:
    """Check every case in ``jobs`` worker processes; a case over ``timeout`` s is a hang.

    A worker that dies mid-case (segfault, os._exit) gives a ``crash`` record; one that
    overruns is killed and gives a ``hang`` record; either way a fresh worker takes over.
    """
    ctx = mp.get_context("spawn")
    stats = stats if stats is not None else PoolStats()
    root = tempfile.mkdtemp(prefix="kinetree-fuzz-")
    todo = iter(cases)  # lazily: a long campaign never holds all its inputs
    more = True
    results: list[dict] = []
    slots = [_Slot() for _ in range(max(1, jobs))]

    def spawn(s: _Slot) -> None:
        parent, child = ctx.Pipe()
        s.workdir = tempfile.mkdtemp(dir=root)
        s.proc = ctx.Process(target=_worker, args=(child, s.workdir, mem_limit), daemon=True)
        s.proc.start()
        child.close()
        s.conn, s.case, s.ready, s.spawned = parent, None, False, time.monotonic()

    def finish(s: _Slot, rec: dict) -> None:
        assert s.case is not None
        rec["size"] = len(s.case.data)
        rec["origin"] = s.case.origin
        rec["mutations"] = list(s.case.mutations)
        results.append(rec)
        if on_result is not None:
            on_result(s.case, rec)
        s.case = None

    def kill(s: _Slot) -> None:
        s.proc.kill()
        s.proc.join()
        s.conn.close()
        stats.restarts += 1

    try:
        for s in slots:
            spawn(s)
        while more or any(s.case is not None for s in slots):
            for s in slots:
                if s.ready and s.case is None and more:
                    case = next(todo, None)
                    if case is None:
                        more = False
                        break
                    s.case, s.started, s.stage = case, time.monotonic(), "send"
                    s.conn.send(case)
            by_conn = {s.conn: s for s in slots}
            for conn in wait(list(by_conn), timeout=0.1):
                s = by_conn[conn]
                try:
                    kind, payload = conn.recv()
                except (EOFError, OSError):
                    s.proc.join()
                    if s.case is not None:
                        rec = {"key": s.case.key, "kind": s.case.kind, "ext": s.case.ext}
                        rec.update(
                            outcome="crash", type="WorkerDied", stage=s.stage,
                            message=f"worker exit code {s.proc.exitcode}",
                            seconds=round(time.monotonic() - s.started, 3),
                        )  # fmt: skip
                        finish(s, rec)
                    elif not s.ready:
                        raise RuntimeError(
                            f"fuzz worker died while warming up (exit code {s.proc.exitcode})"
                        ) from None
                    stats.restarts += 1
                    spawn(s)
                    continue
                if kind == "ready":
                    s.ready = True
                    stats.warmup_s.append(time.monotonic() - s.spawned)
                elif kind == "stage":
                    s.stage = payload
                elif kind == "done":
                    finish(s, payload)
            now = time.monotonic()
            for s in slots:
                if s.case is not None and now - s.started > timeout:
                    rec = {"key": s.case.key, "kind": s.case.kind, "ext": s.case.ext}
                    rec.update(
                        outcome="hang", type="Timeout", stage=s.stage,
                        message=f"no answer within {timeout:g} s",
                        seconds=round(now - s.started, 3),
                    )  # fmt: skip
                    finish(s, rec)
                    kill(s)
                    spawn(s)
                elif not s.ready and now - s.spawned > warmup_timeout:
                    raise RuntimeError(f"fuzz worker did not warm up within {warmup_timeout:g} s")
    finally:
        for s in slots:
            if s.proc is not None and s.proc.is_alive():
                try:
                    s.conn.send(None)
                except OSError:
                    pass
                s.proc.join(timeout=2)
                if s.proc.is_alive():
                    s.proc.kill()
                    s.proc.join()
        shutil.rmtree(root, ignore_errors=True)
    return results


def outcome_counts(results: Iterable[dict]) -> Counter[tuple[str, str]]:
    """Counts per (kind, outcome)."""
    return Counter((r["kind"], r["outcome"]) for r in results)


def finding_line(case: Case, rec: dict) -> str:
    """One JSON line for a finding: the record plus the input that reproduces it."""
    return json.dumps({**rec, "seed": case.seed, **case_payload(case)}, ensure_ascii=False)


# --- minimizing a finding -------------------------------------------------------------


def _same_failure(rec: dict) -> tuple[str, ...]:
    """What a smaller input must keep: stage, type and where it was raised (or the message)."""
    if rec.get("outcome") not in ("finding", "hang", "crash"):
        return ("not a finding",)
    detail = rec.get("where") or signature(rec)[3].split("(")[0]
    return (rec.get("stage", ""), rec.get("type", ""), detail)


def minimize(case: Case, rec: dict, workdir: Path, budget_s: float = 60.0) -> Case:
    """A smaller input with the same failure: greedy removal of line chunks, then bytes.

    Runs in this process with a 5 s alarm per try (no use for crashes); hangs are kept
    as they are.
    """
    import signal

    if rec.get("outcome") != "finding":
        return case
    goal = _same_failure(rec)
    deadline = time.monotonic() + budget_s

    def alarm(signum: int, frame: Any) -> None:
        raise TimeoutError("minimize: try took too long")

    def fails_alike(data: bytes) -> bool:
        old = signal.signal(signal.SIGALRM, alarm)
        signal.alarm(int(TIMEOUT_S))
        try:
            r = check_case(Case(case.kind, case.seed, data, case.ext, case.origin, ()), workdir)
        except TimeoutError:
            return False
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)
        return _same_failure(r) == goal

    def shrink(units: list[bytes]) -> list[bytes]:
        n = 2
        while len(units) >= 2 and time.monotonic() < deadline:
            chunk = max(1, -(-len(units) // n))
            for i in range(0, len(units), chunk):
                cand = units[:i] + units[i + chunk :]
                if fails_alike(b"".join(cand)):
                    units, n = cand, max(n - 1, 2)
                    break
            else:
                if chunk == 1:
                    break
                n = min(len(units), n * 2)
        return units

    data = b"".join(shrink(case.data.splitlines(keepends=True)))
    if case.kind != "dh" and len(data) <= 6000:
        data = b"".join(shrink([data[i : i + 1] for i in range(len(data))]))
    return Case(case.kind, case.seed, data, case.ext, case.origin, (*case.mutations, "minimized"))
