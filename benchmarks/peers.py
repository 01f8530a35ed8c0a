"""The libraries a user would pick instead of kinetree, behind one small interface.

Every peer is imported lazily and guarded: a peer that is not installed (or fails
to import) is reported as such and skipped. Each :class:`Peer` builds its own
model of an arm from the same kinematics kinetree uses (Panda: kinetree's
shipped URDF or the library's own built-in Panda; UR5 and iiwa14: a URDF or ETS
written from kinetree's model), and :func:`fk_discrepancy` checks that the two
agree before any timing is trusted.

Install them with ``make bench-peers`` (torch CPU wheel first, then ``.[peers]``).
The settings each peer runs with are in its ``settings`` string; they are printed
with the tables and written to ``docs/benchmarks.md``.
"""

from __future__ import annotations

import atexit
import importlib
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

import kinetree
from kinetree.spatial import matrix_to_rpy

__all__ = [
    "PEER_PACKAGES",
    "Arm",
    "Peer",
    "Skip",
    "all_peers",
    "arm",
    "fk_discrepancy",
    "peer_status",
]

#: pip name -> import name, in the order of the tables.
PEER_PACKAGES = {
    "roboticstoolbox-python": "roboticstoolbox",
    "pin": "pinocchio",
    "pytorch-kinematics": "pytorch_kinematics",
    "pybullet": "pybullet",
    "ikpy": "ikpy",
}

#: Same stopping rule the kinetree rows get: give up on a target after this long.
TIME_BUDGET = 0.005


class Skip(Exception):
    """A peer cannot run this scenario (not installed, unsupported target, model mismatch)."""


def _version(pip_name: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(pip_name)
    except PackageNotFoundError:
        return "?"


def peer_status() -> list[tuple[str, str, str]]:
    """``(pip name, version or '-', status)`` of every peer: 'ok' or why it is unusable."""
    rows = []
    for pip_name, mod in PEER_PACKAGES.items():
        try:
            importlib.import_module(mod)
        except ImportError as exc:
            msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            status = (
                "not installed"
                if isinstance(exc, ModuleNotFoundError) and exc.name == mod
                else (f"import failed: {msg}")
            )
            rows.append((pip_name, "-", status))
            continue
        except Exception as exc:  # a broken install raises anything
            rows.append(
                (pip_name, _version(pip_name), f"import failed: {type(exc).__name__}: {exc}")
            )
            continue
        rows.append((pip_name, _version(pip_name), "ok"))
    return rows


# --- the arms, as every peer sees them ------------------------------------------------------


def model_to_urdf(model: kinetree.Model, meshless_inertials: bool = True) -> str:
    """URDF text with exactly ``model``'s kinematics (serial or tree, no mimic joints).

    Links are kinetree's node names; each moving node becomes a revolute or
    prismatic joint named after its DoF, every other node a fixed joint. Each link
    gets a unit inertial at its own origin (pybullet wants one; nobody else reads it).
    """
    out = ['<?xml version="1.0"?>', f'<robot name="{model.name}">']
    for name in model.node_names:
        if meshless_inertials:
            out.append(
                f'  <link name="{name}"><inertial><origin xyz="0 0 0" rpy="0 0 0"/>'
                '<mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" '
                'izz="0.01"/>'
                "</inertial></link>"
            )
        else:
            out.append(f'  <link name="{name}"/>')
    for k in range(1, model.n_nodes):
        O = model.origin[k]
        xyz = " ".join(repr(float(v)) for v in O[:3, 3])
        rpy = " ".join(repr(float(v)) for v in matrix_to_rpy(O[:3, :3]))
        parent = model.node_names[int(model.parent[k])]
        jt = int(model.joint_type[k])
        qi = int(model.q_index[k])
        if jt == 0 or qi < 0:
            out.append(
                f'  <joint name="{model.node_names[k]}_fixed" type="fixed">'
                f'<parent link="{parent}"/>'
                f'<child link="{model.node_names[k]}"/><origin xyz="{xyz}" rpy="{rpy}"/></joint>'
            )
            continue
        if model.q_scale[k] != 1.0 or model.q_offset[k] != 0.0:
            raise Skip(f"{model.name}: mimic joints are not exported")
        kind = "revolute" if jt == 1 else "prismatic"
        lo, hi = (float(v) for v in model.limits[qi])
        axis = " ".join(repr(float(v)) for v in model.axis[k])
        out.append(
            f'  <joint name="{model.joint_names[qi]}" type="{kind}"><parent link="{parent}"/>'
            f'<child link="{model.node_names[k]}"/><origin xyz="{xyz}" rpy="{rpy}"/>'
            f'<axis xyz="{axis}"/><limit lower="{lo!r}" upper="{hi!r}" effort="1" velocity="1"/>'
            "</joint>"
        )
    out.append("</robot>")
    return "\n".join(out) + "\n"


_TMP = Path(tempfile.mkdtemp(prefix="kinetree-bench-"))
atexit.register(shutil.rmtree, _TMP, ignore_errors=True)


@dataclass
class Arm:
    """One arm as kinetree and the peers see it.

    ``urdf`` is the file the URDF-reading peers load; ``urdf_meshless`` a copy
    without ``<visual>`` meshes (pybullet refuses unresolved mesh paths); ``tip``
    the URDF link that is kinetree's end effector.
    """

    name: str
    model: kinetree.Model
    urdf: Path
    urdf_meshless: Path
    tip: str
    base: str
    notes: list[str] = field(default_factory=list)

    @cached_property
    def lo(self) -> np.ndarray:
        return self.model.limits[:, 0]

    @cached_property
    def hi(self) -> np.ndarray:
        return self.model.limits[:, 1]


def arm(name: str) -> Arm:
    """The arm ``name`` ('panda', 'ur5', 'iiwa14') with the URDF files the peers load."""
    model = kinetree.load(name)
    if name == "panda":
        ref = resources.files("kinetree.models") / "data" / "panda.urdf"
        with resources.as_file(ref) as p:
            shipped = Path(p)
        # Same kinematics, written from kinetree's DH Panda, for the peer that needs
        # a mesh-free file; fk_discrepancy checks both against kinetree.load("panda").
        meshless = _TMP / "panda_meshless.urdf"
        meshless.write_text(model_to_urdf(kinetree.load("panda_urdf")))
        return Arm(name, model, shipped, meshless, tip="panda_link8", base="panda_link0")
    path = _TMP / f"{name}.urdf"
    path.write_text(model_to_urdf(model))
    return Arm(name, model, path, path, tip=model.end_effectors[0], base=model.node_names[0])


# --- peers ------------------------------------------------------------------------------------


class Peer:
    """One solver of one library. Subclasses fill in ``_prepare``/``fk``/``solve``."""

    #: Row label in the tables.
    label = ""
    #: pip name (see PEER_PACKAGES).
    package = ""
    #: Most targets per scenario for single solves (slow peers); None: all.
    cap: int | None = None
    #: Target kinds supported: "pose", "position".
    kinds: tuple[str, ...] = ("pose", "position")
    #: Has a batched solver (solve_batch).
    batched = False
    settings = ""

    def __init__(self) -> None:
        self.arm: Arm | None = None
        self.kind = "pose"
        self.tol = 1e-6

    def prepare(self, arm: Arm, kind: str = "pose", tol: float = 1e-6) -> None:
        """Build this peer's model of ``arm`` for targets of ``kind``; raises :class:`Skip`."""
        if kind not in self.kinds:
            raise Skip(f"no {kind}-only target")
        mod = PEER_PACKAGES[self.package]
        try:
            importlib.import_module(mod)
        except Exception:
            raise Skip("not installed") from None
        self.arm, self.kind, self.tol = arm, kind, tol
        self._prepare(arm)

    def _prepare(self, arm: Arm) -> None:
        raise NotImplementedError

    def fk(self, q: np.ndarray) -> np.ndarray:
        """4x4 pose of the tip at one configuration, by the peer's own kinematics."""
        raise NotImplementedError

    def fk_many(self, Q: np.ndarray) -> np.ndarray:
        """FK of many configurations the fastest way the library offers (default: a loop)."""
        return np.array([self.fk(q) for q in Q])

    def solve(self, T: np.ndarray, q0: np.ndarray) -> np.ndarray:
        """Joint vector for the target ``T`` (4x4; position-only scenarios read ``T[:3, 3]``)."""
        raise NotImplementedError

    def solve_batch(self, T: np.ndarray, q0: np.ndarray) -> np.ndarray:
        raise NotImplementedError


def fk_discrepancy(peer: Peer, arm: Arm, n: int = 8, seed: int = 7) -> float:
    """Max |T_peer - T_kinetree| over ``n`` random configurations (plus the neutral one)."""
    Q = np.vstack([arm.model.neutral(), arm.model.random_configuration(n, rng=seed)])
    T_ref = arm.model.fk(Q)
    T_peer = np.array([peer.fk(q) for q in Q])
    return float(np.max(np.abs(T_peer - T_ref)))


class _RNG:
    """Per-peer restarts draw from one fixed seed, like kinetree's ``seed=0``."""

    def __init__(self, seed: int = 0) -> None:
        self.gen = np.random.default_rng(seed)

    def within(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        return lo + (hi - lo) * self.gen.random(lo.shape)


# roboticstoolbox-python ----------------------------------------------------------------------


class RTB(Peer):
    package = "roboticstoolbox-python"
    batched = False

    def __init__(self, method: str) -> None:
        super().__init__()
        self.method = method
        self.label = f"rtb {method}"
        self.settings = (
            f"`ETS.{method}(T, q0=q0, ilimit=30, slimit=100, tol=1e-14, joint_limits=True)` "
            "(C++ solver; `tol` is on E = e^T W e / 2, so 1e-14 means |e| ~ 1.4e-7; "
            "slimit = up to 100 random restarts inside the limits; position-only: "
            "mask=[1,1,1,0,0,0])"
        )

    def _prepare(self, arm: Arm) -> None:
        import roboticstoolbox as rtb

        if arm.name == "panda":
            # rtb's built-in Panda (URDF-based ETS). Its default end effector is the
            # hand (gripper offset and -45 deg about z); kinetree's flange is panda_link8.
            robot = rtb.models.Panda()
            self.ets = robot.ets(end="panda_link8")
            arm.notes.append(
                "rtb: built-in `rtb.models.Panda()` ETS with end='panda_link8' (its default end "
                "effector `panda_hand` sits 0.1034 m further along z and is turned -45° about z: "
                "off by 0.75 in the pose matrix)"
            )
        else:
            self.ets = _ets_from_model(rtb, arm.model)
        lim = np.asarray(self.ets.qlim).T
        if not np.allclose(lim, arm.model.limits, atol=1e-9):
            d = float(np.max(np.abs(lim - arm.model.limits)))
            arm.notes.append(f"rtb: joint limits differ from kinetree's by {d:.2g}")
        self.mask = np.array([1.0, 1, 1, 0, 0, 0]) if self.kind == "position" else None
        self._fn = getattr(self.ets, self.method)
        np.random.seed(0)  # noqa: NPY002 (rtb restarts draw from the global generator)

    def fk(self, q: np.ndarray) -> np.ndarray:
        return np.asarray(self.ets.fkine(q).A)

    def fk_many(self, Q: np.ndarray) -> np.ndarray:
        return np.asarray(self.ets.fkine(Q).A)

    def solve(self, T: np.ndarray, q0: np.ndarray) -> np.ndarray:
        sol = self._fn(
            T, q0=q0, ilimit=30, slimit=100, tol=1e-14, joint_limits=True, mask=self.mask
        )
        return np.asarray(sol.q, dtype=float)


def _ets_from_model(rtb: Any, model: kinetree.Model) -> Any:
    """An rtb ETS with exactly the model's chain to its first end effector."""
    path = model.ancestors(model.frame_index())
    ets = []
    for k in path[1:]:
        O = model.origin[k]
        if not np.allclose(O, np.eye(4)):
            ets.append(rtb.ET.SE3(O.copy()))
        jt = int(model.joint_type[k])
        if jt == 0:
            continue
        if jt != 1:
            raise Skip("prismatic joints not mapped")
        ax = model.axis[k]
        i = int(np.argmax(np.abs(ax)))
        if abs(abs(ax[i]) - 1.0) > 1e-12:
            raise Skip("joint axis not along x, y or z")
        qi = int(model.q_index[k])
        make = (rtb.ET.Rx, rtb.ET.Ry, rtb.ET.Rz)[i]
        ets.append(make(jindex=qi, flip=bool(ax[i] < 0), qlim=model.limits[qi].copy()))
    return rtb.ETS(ets)


# Pinocchio -----------------------------------------------------------------------------------


class Pinocchio(Peer):
    package = "pin"
    label = "pinocchio CLIK (py)"
    settings = (
        "the classic CLIK loop in Python (Pinocchio's inverse-kinematics example): "
        "`framesForwardKinematics`, error `log6(oMdes^-1 oMf)`, "
        "`computeFrameJacobian(LOCAL)` premultiplied by `Jlog6`, damped step "
        "v = -J^T (J J^T + 1e-12 I)^-1 e, `integrate` with DT = 1 (the example's 0.1 "
        "only slows it), q clipped into the limits after each step; stop at |e_p|, |e_r| < "
        "1e-9 (position-only: 3 rows); an attempt ends after 100 iterations or 10 "
        "iterations without halving its best error, then restarts from uniform random q "
        "within the limits (seed 0) until 5 ms (kinetree auto's budget) is spent"
    )

    def _prepare(self, arm: Arm) -> None:
        import pinocchio as pin

        self.pin = pin
        self.model = pin.buildModelFromUrdf(str(arm.urdf))
        self.data = self.model.createData()
        self.fid = self.model.getFrameId(arm.tip)
        self.lo = np.asarray(self.model.lowerPositionLimit, dtype=float).copy()
        self.hi = np.asarray(self.model.upperPositionLimit, dtype=float).copy()
        self.rng = _RNG(0)
        if self.model.nq != arm.model.dof:
            raise Skip(f"pinocchio model has nq={self.model.nq}, kinetree dof={arm.model.dof}")

    def fk(self, q: np.ndarray) -> np.ndarray:
        self.pin.framesForwardKinematics(self.model, self.data, np.asarray(q, dtype=float))
        return np.array(self.data.oMf[self.fid].homogeneous)

    def solve(self, T: np.ndarray, q0: np.ndarray) -> np.ndarray:
        pin, model, data, fid = self.pin, self.model, self.data, self.fid
        t0 = time.perf_counter()
        position = self.kind == "position"
        oMdes = pin.SE3(np.ascontiguousarray(T[:3, :3]), np.ascontiguousarray(T[:3, 3]))
        p_des = T[:3, 3]
        eps = 1e-9
        q = np.clip(np.asarray(q0, dtype=float), self.lo, self.hi)
        best_q, best_e = q, np.inf
        eye = np.eye(3 if position else 6)
        while True:
            attempt_best, stall = np.inf, 0
            for _ in range(100):
                pin.framesForwardKinematics(model, data, q)
                oMf = data.oMf[fid]
                if position:
                    err = oMf.translation - p_des
                    ep, er = float(np.linalg.norm(err)), 0.0
                else:
                    dMf = oMdes.actInv(oMf)
                    err = pin.log6(dMf).vector
                    ep, er = float(np.linalg.norm(err[:3])), float(np.linalg.norm(err[3:]))
                if ep < eps and er < eps:
                    return q
                e = max(ep, er)
                if e < best_e:
                    best_q, best_e = q, e
                # Stalled (a limit blocks the step, or a singularity): restart.
                if e < 0.5 * attempt_best:
                    attempt_best, stall = e, 0
                else:
                    stall += 1
                    if stall >= 10:
                        break
                if position:
                    J = pin.computeFrameJacobian(model, data, q, fid, pin.LOCAL_WORLD_ALIGNED)[:3]
                else:
                    J = pin.Jlog6(dMf) @ pin.computeFrameJacobian(model, data, q, fid, pin.LOCAL)
                v = -J.T @ np.linalg.solve(J @ J.T + 1e-12 * eye, err)
                q = np.clip(pin.integrate(model, q, v), self.lo, self.hi)
            if time.perf_counter() - t0 > TIME_BUDGET:
                return best_q
            q = self.rng.within(self.lo, self.hi)


# pytorch_kinematics --------------------------------------------------------------------------


class PyTorchKinematics(Peer):
    package = "pytorch-kinematics"
    label = "pytorch_kinematics PseudoInverseIK"
    cap = 100
    batched = True
    RETRIES = 10
    settings = (
        "`PseudoInverseIK(chain, pos_tolerance=1e-8, rot_tolerance=1e-8, "
        "retry_configs=[q0 + 9 uniform random q within limits (seed 0)], "
        "max_iterations=100, lr=1.0, lm_damping=0.1, early_stopping_any_converged=True, "
        "clamp_to_limits=True, enforce_joint_limits=True)` (position-only: "
        "orientation_weight=0, rot_tolerance=1e9), float64 on CPU, chain "
        "built from the URDF with torch's default dtype set to float64 (built in float32 "
        "its constant transforms are off by ~2e-8); the answer is the first converged "
        "retry, else the one with the smallest error. Single solves: one call per target "
        "(10 retries batched inside); batches: one call for all targets"
    )

    def _prepare(self, arm: Arm) -> None:
        import pytorch_kinematics as pk
        import torch

        self.torch, self.pk = torch, pk
        old = torch.get_default_dtype()
        torch.set_default_dtype(torch.float64)
        try:
            self.chain = pk.build_serial_chain_from_urdf(arm.urdf.read_bytes(), arm.tip).to(
                dtype=torch.float64
            )
        finally:
            torch.set_default_dtype(old)
        self._solvers: dict[Any, Any] = {}

    def _solver(self, q0: np.ndarray) -> Any:
        key = q0.tobytes()
        ik = self._solvers.get(key)
        if ik is None:
            torch = self.torch
            arm = self.arm
            assert arm is not None
            gen = np.random.default_rng(0)
            lo, hi = arm.lo, arm.hi
            retry = np.vstack([q0, lo + (hi - lo) * gen.random((self.RETRIES - 1, len(lo)))])
            position = self.kind == "position"
            ik = self.pk.PseudoInverseIK(
                self.chain,
                pos_tolerance=1e-8,
                # Position-only: orientation weighs nothing and never blocks convergence.
                rot_tolerance=1e9 if position else 1e-8,
                orientation_weight=0.0 if position else 1.0,
                retry_configs=torch.tensor(retry, dtype=torch.float64),
                joint_limits=torch.tensor(arm.model.limits, dtype=torch.float64),
                max_iterations=100,
                lr=1.0,
                early_stopping_any_converged=True,
                clamp_to_limits=True,
            )
            self._solvers[key] = ik
        return ik

    def fk(self, q: np.ndarray) -> np.ndarray:
        return self.fk_many(np.asarray(q, dtype=float)[None])[0]

    def fk_many(self, Q: np.ndarray) -> np.ndarray:
        with self.torch.no_grad():
            return self.chain.forward_kinematics(self.torch.from_numpy(Q)).get_matrix().numpy()

    def solve(self, T: np.ndarray, q0: np.ndarray) -> np.ndarray:
        return self.solve_batch(T[None], q0)[0]

    def solve_batch(self, T: np.ndarray, q0: np.ndarray) -> np.ndarray:
        torch = self.torch
        ik = self._solver(np.asarray(q0, dtype=float))
        sol = ik.solve(self.pk.Transform3d(matrix=torch.from_numpy(np.ascontiguousarray(T))))
        conv = sol.converged  # (M, R)
        err = sol.err_pos if self.kind == "position" else sol.err_pos + sol.err_rot
        # First converged retry, else the smallest error.
        score = torch.where(conv, torch.arange(conv.shape[1]).to(err.dtype) - 1e9, err)
        pick = torch.argmin(score, dim=1)
        q = sol.solutions[torch.arange(conv.shape[0]), pick]
        return q.numpy()


# pybullet ------------------------------------------------------------------------------------


class PyBullet(Peer):
    package = "pybullet"
    label = "pybullet calculateInverseKinematics"
    cap = 100
    #: Its DLS converges slowly: with kinetree auto's 5 ms it reaches 1e-6 on few targets.
    budget = 0.05
    #: Its own FK is only good to ~1e-7 (it differs from kinetree's by up to ~3e-7).
    stop = 1e-7
    settings = (
        "DIRECT mode, the mesh-free URDF (pybullet refuses the shipped one: its mesh "
        "paths do not resolve); joints reset to q0, then "
        "`calculateInverseKinematics(body, tip, pos, quat, lowerLimits, upperLimits, "
        "jointRanges, restPoses=q, maxNumIterations=1000, residualThreshold=1e-12)` "
        "(its default DLS solver; with limits given it uses its null-space variant; "
        "position-only: no orientation), called again from its own answer (the "
        "'accurate IK' loop of pybullet's examples) until pybullet's own FK is within "
        "1e-7 (its FK agrees with kinetree's only to ~3e-7, so tighter never stops) or 50 ms "
        "is spent (with kinetree auto's 5 ms it reaches 1e-6 on under a third of the "
        "targets). One call alone reaches 1e-6 on none of the Panda targets "
        "tried; without limits one call reaches it on about half but leaves joints "
        "up to 2.5 rad outside the limits. `solver=IK_SDLS` crashed (segfault)"
    )

    def _prepare(self, arm: Arm) -> None:
        import pybullet as p

        self.p = p
        if getattr(self, "cid", None) is None:
            self.cid = p.connect(p.DIRECT)
        p.resetSimulation(physicsClientId=self.cid)
        self.body = p.loadURDF(str(arm.urdf_meshless), useFixedBase=True, physicsClientId=self.cid)
        n = p.getNumJoints(self.body, physicsClientId=self.cid)
        self.movable = []
        self.tip = -1
        for i in range(n):
            info = p.getJointInfo(self.body, i, physicsClientId=self.cid)
            if info[2] != p.JOINT_FIXED:
                self.movable.append(i)
            if info[12].decode() == arm.tip:
                self.tip = i
        if self.tip < 0 or len(self.movable) != arm.model.dof:
            raise Skip("could not map the URDF's joints")
        self.lo = arm.lo.tolist()
        self.hi = arm.hi.tolist()
        self.ranges = (arm.hi - arm.lo).tolist()

    def _set(self, q: np.ndarray) -> None:
        for j, v in zip(self.movable, q):
            self.p.resetJointState(self.body, j, float(v), physicsClientId=self.cid)

    def fk(self, q: np.ndarray) -> np.ndarray:
        p = self.p
        self._set(q)
        st = p.getLinkState(
            self.body, self.tip, computeForwardKinematics=True, physicsClientId=self.cid
        )
        T = np.eye(4)
        T[:3, :3] = np.array(p.getMatrixFromQuaternion(st[5])).reshape(3, 3)
        T[:3, 3] = st[4]
        return T

    def solve(self, T: np.ndarray, q0: np.ndarray) -> np.ndarray:
        p = self.p
        t0 = time.perf_counter()
        pos = T[:3, 3].tolist()
        kw: dict[str, Any] = dict(
            lowerLimits=self.lo,
            upperLimits=self.hi,
            jointRanges=self.ranges,
            maxNumIterations=1000,
            residualThreshold=1e-12,
            physicsClientId=self.cid,
        )
        pose = self.kind == "pose"
        if pose:
            w, x, y, z = kinetree.spatial.matrix_to_quaternion(T[:3, :3])
            kw["targetOrientation"] = [x, y, z, w]
        q = np.asarray(q0, dtype=float)
        best_q, best_e = q, np.inf
        while True:
            self._set(q)
            q = np.asarray(
                p.calculateInverseKinematics(self.body, self.tip, pos, restPoses=q.tolist(), **kw),
                dtype=float,
            )
            # pybullet's own FK decides whether to go on (kinetree judges afterwards).
            self._set(q)
            st = p.getLinkState(
                self.body, self.tip, computeForwardKinematics=True, physicsClientId=self.cid
            )
            e = float(np.linalg.norm(np.subtract(st[4], pos)))
            if pose:
                dq = p.getDifferenceQuaternion(st[5], kw["targetOrientation"])
                e = max(e, 2.0 * float(np.linalg.norm(dq[:3])))
            if e < best_e:
                best_q, best_e = q, e
            if e < self.stop or time.perf_counter() - t0 > self.budget:
                return best_q


# IKPy ----------------------------------------------------------------------------------------


class IKPy(Peer):
    package = "ikpy"
    label = "ikpy"
    cap = 100
    settings = (
        "`Chain.from_urdf_file(urdf, base_elements=[base])` with only the arm joints "
        "active, `inverse_kinematics(pos, R, orientation_mode='all' (position-only: None), "
        "initial_position=q0, tol=1e-12)` (numpy backend: scipy least_squares, "
        "finite-difference Jacobian, bounds = joint limits; one attempt, no restarts)"
    )

    def _prepare(self, arm: Arm) -> None:
        import warnings

        import ikpy.chain

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            chain = ikpy.chain.Chain.from_urdf_file(str(arm.urdf), base_elements=[arm.base])
            mask = [getattr(lk, "joint_type", "fixed") != "fixed" for lk in chain.links]
            self.chain = ikpy.chain.Chain.from_urdf_file(
                str(arm.urdf), base_elements=[arm.base], active_links_mask=mask
            )
        self.mask = np.array(mask)
        if int(self.mask.sum()) != arm.model.dof:
            raise Skip("could not map the URDF's joints")

    def _full(self, q: np.ndarray) -> np.ndarray:
        full = np.zeros(len(self.mask))
        full[self.mask] = q
        return full

    def fk(self, q: np.ndarray) -> np.ndarray:
        return np.asarray(self.chain.forward_kinematics(self._full(q)))

    def solve(self, T: np.ndarray, q0: np.ndarray) -> np.ndarray:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if self.kind == "pose":
                full = self.chain.inverse_kinematics(
                    T[:3, 3],
                    T[:3, :3],
                    orientation_mode="all",
                    initial_position=self._full(q0),
                    tol=1e-12,
                )
            else:
                full = self.chain.inverse_kinematics(
                    T[:3, 3], initial_position=self._full(q0), tol=1e-12
                )
        return np.asarray(full)[self.mask]


def all_peers() -> list[Peer]:
    """One instance of every peer solver, in table order."""
    return [RTB("ik_LM"), RTB("ik_NR"), Pinocchio(), PyTorchKinematics(), PyBullet(), IKPy()]
