"""Collect the clips the shipped ``"human"`` pose prior was trained on, held-out clips,
and one Daz-style clip kept for the outside check, from git copies of their public
repositories (nothing is committed here).

    python benchmarks/collect_prior_clips.py MIRRORS out/prior_data
    kinetree learn prior out/prior_data/train -o human.npz --every 2 --epochs 40 --seed 0 \
        --noise 0.01 --weight-decay 0.0001 --variants 2 --proportions 0.12 --name human
    python benchmarks/realism.py --extra out/prior_data/eval_cc

``MIRRORS`` holds one git directory per repository at ``MIRRORS/<owner>+<name>/repo``
(or ``.../<owner>+<name>.git``; a bare clone or a clone's ``.git``): ``git clone --bare
https://github.com/<owner>/<name> MIRRORS/<owner>+<name>/repo``. Each file is read at the
commit named below, so the data are the same whatever the repository holds today.

Training data (``train/``): CMU subjects 1 (playground), 3 (uneven terrain), 6
(basketball) and 7 (walks), every clip of theirs that DragonForgedTheArtist/IClone-CMU-Mocap
keeps on Reallusion's ``CC_Base_`` skeleton (converted from CMU's ASF/AMC with LifeForms
and retargeted in iClone). The temporal prior (``kinetree learn motion-prior``) also
trains on ``train_accad/``: ACCAD's performer Male1 (69 takes: stand, walk, turn, run,
crouch, crawl, lie down, pick up a box, skip; CC BY 3.0) as JONGGON/DeepHumanPrediction
keeps it. Held out (our evaluation): ``eval_cc/`` (CMU subject 5 on the Reallusion
skeleton), subjects 5, 12, 131 and every clip of tests/data (see benchmarks/realism.py).

Outside check only (``outside/``): the Daz-friendly CMU 02_03 below. CMU subject 2 is one of
the captures reserved for an outside check (with ACCAD Female1 and Male2 and CMU subjects
10, 13, 16, 60, 61, 94 and 135): never used for training or for choosing settings; run
``realism.py --extra out/prior_data/outside`` only to take that check.

CMU data: "The data used in this project was obtained from mocap.cs.cmu.edu. The
database was created with funding from NSF EIA-0196217." Free for any use.
"""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

ICLONE = ("DragonForgedTheArtist/IClone-CMU-Mocap", "79529f962ade3274163af53cd92179cee2ed9407")
RGBD = ("AmmarkoV/RGBDAcquisition", "800512684fbfe4b6d57cd33a1eba2dbf658cb20d")
ACCAD = ("JONGGON/DeepHumanPrediction", "2e131b4b365e6f565c7ed8075a61f2b3c7b2d53a")
#: ACCAD's performer Male1 (CC BY 3.0), resampled to 30 fps by that repository's author:
#: every ``Male1_*.bvh`` under this folder (sub-folders ``Long_data``, ``Short_data/*``).
ACCAD_DIR = (
    "DeepHumanPrediction/Code/DeepHumanPrediction/Motion_Prediction_Seq2Seq_sequencialversion/"
    "Data/ACCAD/Transform_Male1_bvh/"
)
_TRAIN_TAKES = {
    "001": (1, 8, 14),
    "003": (1, 2),
    "006": (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15),
    "007": (2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12),
}
#: (repository, commit, path in it, file name here, CMU subject).
TRAIN = [
    (*ICLONE, f"All_BVH/subjects/{s}/{s}_{t:02d}.bvh", f"{s}_{t:02d}.bvh", int(s))
    for s, takes in _TRAIN_TAKES.items()
    for t in takes
]
#: CMU subject 5 on the same Reallusion skeleton: held out (the temporal prior's check).
EVAL_CC = [
    (*ICLONE, f"All_BVH/subjects/005/005_{t:02d}.bvh", f"005_{t:02d}.bvh", 5) for t in range(1, 21)
]
#: CMU subject 2 (reserved): for the outside check only, never training or settings.
OUTSIDE = [
    (
        *RGBD,
        "opengl_acquisition_shared_library/opengl_depth_and_color_renderer/Motions/02_03.bvh",
        "daz_02_03.bvh",
        2,
    )
]


def _git_dir(mirrors: Path, repo: str) -> Path:
    base = mirrors / repo.replace("/", "+")
    for cand in (base / "repo", base.with_suffix(".git"), base / ".git", base):
        if cand.is_dir():
            return cand
    raise SystemExit(f"no git copy of {repo} under {mirrors} (looked for {base}/repo)")


def _ls(git_dir: Path, commit: str, folder: str) -> list[str]:
    """Paths of the ``.bvh`` files under ``folder`` at ``commit``, sorted."""
    out = subprocess.run(
        ["git", "--git-dir", str(git_dir), "ls-tree", "-r", "--name-only", commit, folder],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return sorted(p for p in out if p.endswith(".bvh"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("mirrors", type=Path)
    ap.add_argument("out", type=Path)
    args = ap.parse_args(argv)
    accad = [
        (*ACCAD, path, path.rsplit("/", 1)[1], 0)
        for path in _ls(_git_dir(args.mirrors, ACCAD[0]), ACCAD[1], ACCAD_DIR)
        if path.rsplit("/", 1)[1].startswith("Male1_")
    ]
    for folder, rows in (
        ("train", TRAIN),
        ("train_accad", accad),
        ("outside", OUTSIDE),
        ("eval_cc", EVAL_CC),
    ):
        (args.out / folder).mkdir(parents=True, exist_ok=True)
        for repo, commit, path, name, _subject in rows:
            data = subprocess.run(
                ["git", "--git-dir", str(_git_dir(args.mirrors, repo)), "show", f"{commit}:{path}"],
                check=True,
                capture_output=True,
            ).stdout
            (args.out / folder / name).write_bytes(data)
        print(f"{args.out / folder}: {len(rows)} clips")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
