"""Real BVH files from six public projects against an independent forward kinematics.

The corpus (tests/data/bvh_corpus, see its README) holds every BVH file of pybvh,
bvh-python, PyMO, deep-motion-editing and two CMU mirrors, headers intact, motion cut
to the first 60 frames. Files whose licence keeps them out of this repository
(MocapNET, Bandai-Namco) are checked the same way from a folder named by
``KINETREE_BVH_CORPUS_EXTRA`` (made by ``tests/data/bvh_corpus/collect.py --only extra``).

The oracle below reads a file on its own (a token stream, no kinetree code) and
composes each joint's transform with numpy, frame by frame:
``T_parent @ Trans(t) @ R_1 @ ... @ R_n`` (the channel order as listed), ``t`` the
OFFSET with each axis that has a position channel set to the channel's value, wherever
it stands (the OFFSET is the rest translation; Blender's and MotionBuilder's reading,
kinetree's documented default). Every joint and End Site of every frame must agree to
1e-9 relative to the clip's size; writing the clip and reading it back must give the
file's numbers exactly. The other reading, ``read_bvh(..., positions="add")``, is
checked against the oracle's ``add=True`` (``t`` = OFFSET + channels).

    python tests/io/test_bvh_corpus.py [FOLDER ...]    # prints the summary numbers
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

from kinetree.io.bvh import read_bvh, write_bvh

CORPUS = Path(__file__).resolve().parents[1] / "data" / "bvh_corpus"
RTOL = 1e-9


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.bvh")) if folder.is_dir() else []


FILES = _files(CORPUS)
EXTRA = _files(Path(os.environ["KINETREE_BVH_CORPUS_EXTRA"])) if os.environ.get(
    "KINETREE_BVH_CORPUS_EXTRA") else []  # fmt: skip


def oracle(
    path: Path, turned: bool = False, add: bool = False
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """``(names, values, positions)``: joint names (End Sites as ``parent_end``, a
    second one ``parent_end2``), the MOTION table as floats, and world positions
    ``(frames, joints, 3)`` in the file's unit and axes. ``add``: position channels add
    to the OFFSET instead of replacing it along their axis. ``turned``: a convention
    kinetree left behind, position channels listed after rotations turned by them and
    added to the OFFSET."""
    text = path.read_text(encoding="utf-8", errors="replace")
    head, motion = text.split("MOTION", 1)
    tok = head.replace("{", " { ").replace("}", " } ").split()
    names: list[str] = []
    parent: list[int] = []
    offset: list[np.ndarray] = []
    chans: list[list[str]] = []
    stack: list[int] = []
    ends: dict[int, int] = {}
    i = tok.index("HIERARCHY") + 1
    pending: tuple[str, int] | None = None
    while i < len(tok):
        t = tok[i]
        if t in ("ROOT", "JOINT"):
            j = i + 1
            words = []
            while tok[j] != "{":
                words.append(tok[j])
                j += 1
            pending = (" ".join(words), stack[-1] if stack else -1)
            i = j
        elif t == "End":
            p = stack[-1]
            ends[p] = ends.get(p, 0) + 1
            k = ends[p]
            pending = (f"{names[p]}_end" + ("" if k == 1 else str(k)), p)
            i += 2  # "End Site"
            continue
        elif t == "{":
            assert pending is not None
            names.append(pending[0])
            parent.append(pending[1])
            offset.append(np.zeros(3))
            chans.append([])
            stack.append(len(names) - 1)
            i += 1
        elif t == "}":
            stack.pop()
            i += 1
        elif t == "OFFSET":
            offset[stack[-1]] = np.array([float(x) for x in tok[i + 1 : i + 4]])
            i += 4
        elif t == "CHANNELS":
            n = int(tok[i + 1])
            chans[stack[-1]] = [c.lower() for c in tok[i + 2 : i + 2 + n]]
            i += 2 + n
        else:
            i += 1
    rows = [ln for ln in motion.splitlines() if ln.strip()]
    start = next(k for k, ln in enumerate(rows) if ln.strip().lower().startswith("frame time"))
    values = np.array([[float(x) for x in ln.split()] for ln in rows[start + 1 :]], dtype=float)
    n = values.shape[0]
    world = np.zeros((n, len(names), 4, 4))
    col = 0
    for j in range(len(names)):
        trans = np.broadcast_to(offset[j], (n, 3)).copy()
        rot = np.broadcast_to(np.eye(3), (n, 3, 3)).copy()
        for c in chans[j]:
            v = values[:, col]
            col += 1
            axis = "xyz".index(c[0])
            if c.endswith("position"):
                if turned:
                    step = np.zeros((n, 3))
                    step[:, axis] = v
                    trans += np.einsum("nij,nj->ni", rot, step)
                elif add:
                    trans[:, axis] += v
                else:
                    trans[:, axis] = v  # the channel is the translation along this axis
                continue
            a = np.deg2rad(v)
            ca, sa = np.cos(a), np.sin(a)
            R = np.zeros((n, 3, 3))
            u, w = (axis + 1) % 3, (axis + 2) % 3
            R[:, axis, axis] = 1.0
            R[:, u, u] = ca
            R[:, w, w] = ca
            R[:, u, w] = -sa
            R[:, w, u] = sa
            rot = np.einsum("nij,njk->nik", rot, R)
        local = np.zeros((n, 4, 4))
        local[:, :3, :3] = rot
        local[:, :3, 3] = trans
        local[:, 3, 3] = 1.0
        above = world[:, parent[j]] if parent[j] >= 0 else np.eye(4)
        world[:, j] = np.matmul(above, local)
    assert col == values.shape[1], f"{path}: {values.shape[1]} values for {col} channels"
    return names, values, world[..., :3, 3]


def compare(path: Path, tmp: Path, add: bool = False) -> dict[str, float]:
    """kinetree against the oracle, and the write/read round trip, for one file."""
    positions = "add" if add else "replace"
    names, values, P = oracle(path, add=add)
    clip = read_bvh(path, positions=positions)
    assert list(clip.joint_names) == names
    Q = clip.joint_positions()
    size = max(float(np.abs(P).max()), 1e-12)
    rel = float(np.abs(Q - P).max()) / size
    out = tmp / "round_trip.bvh"
    write_bvh(out, clip)
    _, values_back, _ = oracle(out)
    back = read_bvh(out, positions=positions)
    return {
        "frames": float(values.shape[0]),
        "joints": float(len(names)),
        "rel": rel,
        "values_exact": float(np.array_equal(values_back, values)),
        "q_exact": float(np.array_equal(back.q, clip.q)),
    }


@pytest.mark.parametrize(
    "path", FILES + EXTRA, ids=[f"{p.parent.name}/{p.name}" for p in FILES + EXTRA]
)
def test_corpus_file_agrees_with_independent_fk(path: Path, tmp_path: Path) -> None:
    r = compare(path, tmp_path)
    assert r["rel"] <= RTOL
    assert r["values_exact"] == 1.0  # the numbers written are the file's, bit for bit
    assert r["q_exact"] == 1.0


# Files whose joints have both an OFFSET and position channels: there the two readings differ.
MOVED = [p for p in FILES + EXTRA if p.parent.name in ("pymo", "bandai-namco")]


@pytest.mark.parametrize("path", MOVED, ids=[f"{p.parent.name}/{p.name}" for p in MOVED])
def test_corpus_file_read_with_added_positions(path: Path, tmp_path: Path) -> None:
    r = compare(path, tmp_path, add=True)
    assert r["rel"] <= RTOL
    assert r["values_exact"] == 1.0
    assert r["q_exact"] == 1.0


def test_oracle_tells_the_position_readings_apart() -> None:
    # PyMO's Meredith walk has a root OFFSET (11.3, 35.4, -54.3) and root position
    # channels whose height repeats the OFFSET's (35.6 in frame 0): read as replacing
    # the OFFSET its hips stand at about their rest height; added, twice as high.
    path = CORPUS / "pymo" / "demos__data__AV_8Walk_Meredith_HVHA_Rep1.bvh"
    names, values, P = oracle(path)
    _, _, added = oracle(path, add=True)
    Q = read_bvh(path).joint_positions()
    assert np.abs(Q - P).max() <= RTOL * np.abs(P).max()
    assert np.abs(Q - added).max() > 50.0  # the OFFSET's length, about 66
    hips = names.index("Hips")
    np.testing.assert_allclose(P[:, hips, 1], values[:, 1])  # the channel is the height
    np.testing.assert_allclose(added[:, hips, 1], values[:, 1] + 35.41, atol=0.01)


def test_corpus_is_there() -> None:
    # The README promises these sources; a lost folder must not pass silently.
    assert {p.parent.name for p in FILES} >= {
        "pybvh", "bvh-python", "pymo", "deep-motion-editing", "bvh11-cmu", "cmpt414-cmu"
    }  # fmt: skip
    assert len(FILES) >= 45


def test_oracle_sees_a_wrong_convention(tmp_path: Path) -> None:
    # The oracle can tell conventions apart: on a file whose root lists rotations
    # first, turning the root's translation by its rotation moves the skeleton far off,
    # and kinetree agrees with the right one only.
    path = Path(__file__).resolve().parents[1] / "data" / "bvh" / "rotation_first_root.bvh"
    _, _, P = oracle(path)
    _, _, wrong = oracle(path, turned=True)
    Q = read_bvh(path).joint_positions()
    size = np.abs(P).max()
    assert np.abs(Q - P).max() <= RTOL * size
    assert np.abs(Q - wrong).max() > 0.1 * size


def main(folders: list[str]) -> None:
    import tempfile

    paths = [p for f in folders for p in _files(Path(f))] if folders else FILES + EXTRA
    by_source: dict[str, list[dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for p in paths:
            by_source.setdefault(p.parent.name, []).append(compare(p, Path(tmp)))
    print("| source | files | frames | joints (max) | max relative error | round trips exact |")
    print("|---|---|---|---|---|---|")
    tot = [0, 0, 0.0, 0]
    for src, rs in sorted(by_source.items()):
        f, fr = len(rs), int(sum(r["frames"] for r in rs))
        err = max(r["rel"] for r in rs)
        exact = sum(int(r["values_exact"] and r["q_exact"]) for r in rs)
        joints = int(max(r["joints"] for r in rs))
        print(f"| {src} | {f} | {fr} | {joints} | {err:.1e} | {exact}/{f} |")
        tot = [tot[0] + f, tot[1] + fr, max(tot[2], err), tot[3] + exact]
    print(f"| all | {tot[0]} | {tot[1]} | | {tot[2]:.1e} | {tot[3]}/{tot[0]} |")


if __name__ == "__main__":
    main(sys.argv[1:])
