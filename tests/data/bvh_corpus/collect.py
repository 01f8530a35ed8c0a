"""How this corpus was made (run once, by hand, where the source repositories are
checked out; CI never runs it): every BVH file of the listed repositories, its header
unchanged, its motion cut to the first FRAMES frames (the ``Frames:`` line says so).

    python tests/data/bvh_corpus/collect.py MIRRORS OUT [--frames 60] [--only committed|extra]

MIRRORS holds one git directory per repository, named ``owner+name/repo``; files are
read at the repository's HEAD with ``git show``.
"""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

#: (folder here, repository, licence, redistributable here)
SOURCES = [
    ("pybvh", "VictorS-67+pybvh", "MIT", True),
    ("bvh-python", "20tab+bvh-python", "MIT", True),
    ("pymo", "omimo+PyMO", "MIT", True),
    ("deep-motion-editing", "DeepMotionEditing+deep-motion-editing", "BSD-2-Clause", True),
    ("bvh11-cmu", "yuki-koyama+bvh11", "MIT (code); CMU data: free for any use", True),
    ("cmpt414-cmu", "jcairo+CMPUT414", "CMU data: free for any use", True),
    ("mocapnet", "FORTH-ModelBasedTracker+MocapNET", "FORTH research licence: not here", False),
    (
        "bandai-namco",
        "BandaiNamcoResearchInc+Bandai-Namco-Research-Motiondataset",
        "CC BY-NC 4.0: not here",
        False,
    ),
]
BANDAI_PER_SET = (20, 19)  # the first files of dataset 1 and dataset 2 (sorted names)


def trim(text: str, frames: int) -> str:
    head, _, motion = text.partition("MOTION")
    lines = motion.strip("\r\n").splitlines()
    n_line = next(i for i, ln in enumerate(lines) if ln.strip().lower().startswith("frames"))
    t_line = next(i for i, ln in enumerate(lines) if ln.strip().lower().startswith("frame time"))
    data = [ln for ln in lines[t_line + 1 :] if ln.strip()]
    keep = data[:frames]
    out = [*lines[:n_line], f"Frames: {len(keep)}", *lines[n_line + 1 : t_line + 1], *keep]
    return head + "MOTION\n" + "\n".join(out) + "\n"


def files(git: Path) -> list[str]:
    names = subprocess.run(
        ["git", "-C", str(git), "ls-tree", "-r", "--name-only", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    return sorted(n for n in names if n.lower().endswith(".bvh"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("mirrors", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--frames", type=int, default=60)
    ap.add_argument("--only", choices=("committed", "extra", "all"), default="all")
    args = ap.parse_args()
    for folder, repo, _licence, free in SOURCES:
        if (args.only == "committed" and not free) or (args.only == "extra" and free):
            continue
        git = args.mirrors / repo / "repo"
        if (git / ".git").exists():
            git = git / ".git"
        names = files(git)
        if folder == "bandai-namco":
            sets = [[n for n in names if f"dataset-{k}/" in n] for k in (1, 2)]
            names = [*sets[0][: BANDAI_PER_SET[0]], *sets[1][: BANDAI_PER_SET[1]]]
        for name in names:
            raw = subprocess.run(
                ["git", "-C", str(git), "show", f"HEAD:{name}"], capture_output=True, check=True
            ).stdout
            text = raw.decode("utf-8", errors="replace")
            dest = args.out / folder / name.replace("/", "__").replace(" ", "_")
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(trim(text, args.frames))
            print(dest)


if __name__ == "__main__":
    main()
