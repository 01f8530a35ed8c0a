"""Interop: real MJCF models from installed packages, kinetree FK and Jacobians vs MuJoCo's.

Opt-in, not part of ``make test``: ``make test-interop`` installs dm-control and
gymnasium-robotics (which brings gymnasium) and runs this with ``KINETREE_INTEROP=1``.
A model whose package is not installed is skipped.

For each file: ``kinetree.load(path)`` (the only warnings allowed are
:class:`~kinetree.io.MJCFWarning` and :class:`~kinetree.geometry.GeometryWarning`),
then ``q_neutral == qpos0``, ``nq``/``nv`` equal MuJoCo's, and at random ``qpos`` the
pose of every body and every site equals MuJoCo's ``mj_kinematics`` to 1e-9, and the
Jacobian of every body equals ``mj_jacBody`` to 1e-9.
"""

from __future__ import annotations

import os
import warnings
from importlib import util
from pathlib import Path

import numpy as np
import pytest

if os.environ.get("KINETREE_INTEROP") != "1":
    pytest.skip(
        "interop tests are opt-in: pip install dm-control gymnasium-robotics, "
        "set KINETREE_INTEROP=1",
        allow_module_level=True,
    )

import kinetree
from kinetree.geometry import GeometryWarning
from kinetree.io import MJCFWarning

mujoco = pytest.importorskip("mujoco")

from mjcf_helpers import fk_errors, jacobian_errors, random_qpos  # noqa: E402

N_CONFIGS = 10
N_JACOBIAN_CONFIGS = 2
TOL = 1e-9

# (importable package, file relative to the package's folder)
MODELS: tuple[tuple[str, str], ...] = (
    # MuJoCo's own wheel: free, ball, slide and hinge joints, unnamed bodies
    ("mujoco", "testdata/model.xml"),
    # dm_control suite
    ("dm_control", "suite/humanoid_CMU.xml"),
    ("dm_control", "suite/humanoid.xml"),
    ("dm_control", "suite/quadruped.xml"),
    ("dm_control", "suite/dog.xml"),
    ("dm_control", "suite/manipulator.xml"),
    ("dm_control", "suite/stacker.xml"),
    ("dm_control", "suite/fish.xml"),
    ("dm_control", "suite/ball_in_cup.xml"),
    ("dm_control", "suite/cheetah.xml"),
    ("dm_control", "suite/walker.xml"),
    ("dm_control", "suite/swimmer.xml"),
    ("dm_control", "suite/finger.xml"),
    # dm_control locomotion walkers and third-party models
    ("dm_control", "locomotion/walkers/assets/humanoid_CMU_V2020.xml"),
    ("dm_control", "locomotion/walkers/assets/rodent.xml"),
    ("dm_control", "locomotion/walkers/assets/dog_v2/dog.xml"),
    ("dm_control", "locomotion/walkers/assets/fruitfly_v2/fruitfly.xml"),
    ("dm_control", "third_party/ant/ant.xml"),
    ("dm_control", "third_party/kinova/jaco_arm.xml"),
    ("dm_control", "third_party/kinova/jaco_hand.xml"),
    # gymnasium-robotics: Fetch, the Shadow hand, Adroit, the Franka kitchen
    ("gymnasium_robotics", "envs/assets/fetch/reach.xml"),
    ("gymnasium_robotics", "envs/assets/fetch/pick_and_place.xml"),
    ("gymnasium_robotics", "envs/assets/hand/reach.xml"),
    ("gymnasium_robotics", "envs/assets/hand/manipulate_block.xml"),
    ("gymnasium_robotics", "envs/assets/hand/manipulate_egg.xml"),
    ("gymnasium_robotics", "envs/assets/adroit_hand/adroit_door.xml"),
    ("gymnasium_robotics", "envs/assets/adroit_hand/adroit_relocate.xml"),
    ("gymnasium_robotics", "envs/assets/kitchen_franka/kitchen_assets/kitchen_env_model.xml"),
    # gymnasium's MuJoCo environments
    ("gymnasium", "envs/mujoco/assets/ant.xml"),
    ("gymnasium", "envs/mujoco/assets/humanoid.xml"),
    ("gymnasium", "envs/mujoco/assets/humanoidstandup.xml"),
    ("gymnasium", "envs/mujoco/assets/half_cheetah.xml"),
    ("gymnasium", "envs/mujoco/assets/hopper.xml"),
    ("gymnasium", "envs/mujoco/assets/walker2d_v5.xml"),
    ("gymnasium", "envs/mujoco/assets/pusher_v5.xml"),
    ("gymnasium", "envs/mujoco/assets/reacher.xml"),
)


def _path(package: str, rel: str) -> Path:
    spec = util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        pytest.skip(f"{package} is not installed")
    path = Path(next(iter(spec.submodule_search_locations))) / rel
    if not path.is_file():
        pytest.skip(f"{package} has no {rel} in this version")
    return path


@pytest.mark.parametrize(("package", "rel"), MODELS, ids=[f"{p}/{r}" for p, r in MODELS])
def test_fk_and_jacobians_match_mujoco(package: str, rel: str) -> None:
    path = _path(package, rel)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = kinetree.load(path)
    unexpected = [w for w in caught if not issubclass(w.category, (MJCFWarning, GeometryWarning))]
    assert not unexpected, [str(w.message) for w in unexpected]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mujoco.set_mju_user_warning(lambda _msg: None)
        try:
            m = mujoco.MjModel.from_xml_path(str(path))
        finally:
            mujoco.set_mju_user_warning(None)
    d = mujoco.MjData(m)
    assert (model.nq, model.nv) == (m.nq, m.nv)
    np.testing.assert_allclose(model.q_neutral, m.qpos0, atol=1e-12)
    rng = np.random.default_rng(0)
    worst = 0.0
    for k in range(N_CONFIGS):
        q = random_qpos(m, rng)
        errors = fk_errors(model, m, d, q)
        frame = max(errors, key=errors.__getitem__)
        assert errors[frame] < TOL, (frame, errors[frame])
        worst = max(worst, errors[frame])
        if k < N_JACOBIAN_CONFIGS:
            jac = jacobian_errors(model, m, d, q)
            frame = max(jac, key=jac.__getitem__)
            assert jac[frame] < TOL, (frame, jac[frame])
    print(f"{package}/{rel}: {m.nbody} bodies, {m.nsite} sites, nq={m.nq}: "
          f"max FK error {worst:.2e}")  # fmt: skip
