# kinetree: the two commands a newcomer needs are `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev

.PHONY: demo test lint bench bench-peers bench-collision bench-diffik test-interop test-browser fuzz clean test-bvh-corpus

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q torch==2.13.0  # CPU wheel first: kinetree[learn] trains with it, tests check its inference
	$(BIN)/pip install -q -e ".[dev]"
	touch $(STAMP)

# Compile the kernels once (cached on disk; seconds when they are), so no first call waits.
WARMUP := $(BIN)/kinetree warmup --jobs 2

demo: $(STAMP)
	$(WARMUP)
	$(BIN)/python examples/00_demo.py

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks examples
	$(BIN)/ruff format --check src tests benchmarks examples
	$(BIN)/mypy

# The kernels compile (two processes) while mypy reads the types: a fresh clone's
# first `make test` spends most of its time in the compiler.
test: $(STAMP)
	$(BIN)/ruff check src tests benchmarks examples
	$(BIN)/ruff format --check src tests benchmarks examples
	$(WARMUP) & warm=$$!; $(BIN)/mypy; typed=$$?; wait $$warm && exit $$typed
	$(BIN)/python -m pytest -n 2 tests

bench: $(STAMP)
	$(WARMUP)
	$(BIN)/python benchmarks/run.py
	$(BIN)/python benchmarks/realism.py  # sparse full-body IK on held-out mocap, with and without the prior
	$(BIN)/python benchmarks/motion.py  # tracking clips and streams from sparse points (docs/characters.md)
	$(BIN)/python benchmarks/interleaved.py  # kinetree auto vs rtb ik_LM in one process
	$(BIN)/pip install -q example-robot-data  # the G1 of the retargeting benchmark
	$(BIN)/python benchmarks/retarget_motion.py  # retargeting onto the G1 as motion: spikes, jerk, dips
	$(BIN)/python benchmarks/teleop.py  # a tracked person's head and hands drive the G1, frame by frame
	$(MAKE) bench-collision bench-diffik
	$(MAKE) bench-learned bench-wholebody

# Whole-body IK (G1, Talos: floating base, hands and feet 6D) beside placo, which pins its own
# Pinocchio and so gets a venv of its own (.venv-placo); interleaved target by target.
PLACO_VENV := .venv-placo
$(PLACO_VENV)/bin/python:
	$(PY) -m venv $(PLACO_VENV)
	$(PLACO_VENV)/bin/pip install -q placo
.PHONY: bench-wholebody
bench-wholebody: $(STAMP) | $(PLACO_VENV)/bin/python
	$(BIN)/pip install -q example-robot-data
	$(BIN)/python benchmarks/wholebody.py --placo-python $(PLACO_VENV)/bin/python

# Collision-aware IK on the Panda of example-robot-data, checked by coal on the exact meshes.
bench-collision: $(STAMP)
	$(BIN)/pip install -q example-robot-data coal
	$(BIN)/python benchmarks/collision_ik.py

# Learned IK seeds (kinetree.learn.train_ik) against random restarts on the Panda scene
# (docs/learned_ik.md); trains once with torch's CPU wheel, kept in out/learned_ik_panda.npz.
.PHONY: bench-learned
bench-learned: $(STAMP)
	$(BIN)/pip install -q -e ".[learn]" example-robot-data coal
	$(BIN)/python benchmarks/learned_ik.py

.PHONY: bench-gpu
bench-gpu: $(STAMP)  # needs an NVIDIA GPU, numba-cuda, torch and pytorch_kinematics (docs/gpu.md)
	$(BIN)/python benchmarks/gpu.py

# The IK kernels compiled for an H100 without one (NVVM and ptxas of NVIDIA's nvidia-cuda-nvcc
# wheel, or of a CUDA toolkit at CUDA_HOME; no GPU): fails unless the default kernel holds at
# most 128 registers with no spills (docs/gpu.md).
CUDA_HOME ?= /usr/local/cuda
.PHONY: test-gpu-compile
test-gpu-compile: $(STAMP)
	$(BIN)/pip install -q nvidia-cuda-nvcc  # numba-cuda comes with the dev extra
	CUDA_HOME=$(CUDA_HOME) $(BIN)/python benchmarks/gpu.py --compile-only --methods dls,transpose,ccd --check-registers 128

bench-peers: $(STAMP)
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e ".[peers]"

# One-step differential IK beside mink and pink on the Panda scene (docs/benchmarks.md).
bench-diffik: $(STAMP)
	$(BIN)/pip install -q -e ".[qp]" mink pin-pink example-robot-data
	$(BIN)/python benchmarks/diffik.py

test-interop: $(STAMP)
	$(BIN)/pip install -q example-robot-data dm-control gymnasium-robotics
	$(WARMUP)
	KINETREE_INTEROP=1 $(BIN)/python -m pytest -q tests/interop

# The viewer in headless Chromium (Debian's chromium, installed when missing; playwright
# drives it): screenshots of the Panda with its meshes, of a CMU walk and of a skinned glTF
# character before and after its hand is dragged, into docs/figures.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
test-browser: $(STAMP)
	command -v chromium >/dev/null 2>&1 || ($(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq chromium)
	$(BIN)/pip install -q -e ".[viewer,meshes,formats]" "playwright>=1.40"
	$(WARMUP)
	KINETREE_BROWSER=1 $(BIN)/python -m pytest -q tests/browser

# The long fuzz campaign (>= 20,000 mutated URDF/BVH/MJCF/DH inputs; docs/fuzz.md).
fuzz: $(STAMP)
	$(WARMUP)
	$(BIN)/python benchmarks/fuzz.py --cases 20000 --seed 0 --jobs 2 --out out/fuzz --minimize
	$(BIN)/python benchmarks/fuzz.py --kinds fbx --cases 300 --seed 0 --jobs 2 --out out/fuzz-fbx --minimize

clean:
	rm -rf $(VENV) $(PLACO_VENV) out .pytest_cache .mypy_cache .ruff_cache
	find src -name '*.nbi' -delete -o -name '*.nbc' -delete

# BVH files whose licences keep them out of the repository (MocapNET, Bandai-Namco), checked
# against the independent FK like tests/data/bvh_corpus (which `make test` runs): make the
# folder with tests/data/bvh_corpus/collect.py MIRRORS DIR --only extra, then
# make test-bvh-corpus BVH_CORPUS_EXTRA=DIR
test-bvh-corpus: $(STAMP)
	KINETREE_BVH_CORPUS_EXTRA=$(BVH_CORPUS_EXTRA) $(BIN)/python -m pytest -q tests/io/test_bvh_corpus.py
	KINETREE_BVH_CORPUS_EXTRA=$(BVH_CORPUS_EXTRA) $(BIN)/python tests/io/test_bvh_corpus.py
