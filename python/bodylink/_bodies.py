"""Per body: the getters (shared by the blocking and the asyncio clients) and the commands (one
async implementation each, which the blocking client runs on its loop thread).

Every getter reads the newest state message only (no I/O, never blocks) and returns a frozen
snapshot or ``None`` (no current data: before the first state, after ``close()``, while the stream
is down or the body link is lost, when the newest state is older than ``stale_after_s``, or when
the message does not fit the body).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional, Sequence, TypeVar, Union, cast

from . import models as m
from ._core import Core

T = TypeVar("T")


class _Reads:
    """What every client has: its core, and the snapshot helper."""

    _core: Core

    def _snap(self, key: str, build: Callable[[m.Message, m.Stamp], Optional[T]]) -> Optional[T]:
        def make(msg: m.Message) -> Optional[T]:
            s = m.stamp(msg)
            return build(msg, s) if s is not None else None

        return cast(Optional[T], self._core.snapshot(key, make))

    @property
    def url(self) -> str:
        """Base URL of the robot API, e.g. ``http://127.0.0.1:8780``."""
        return self._core.url

    @property
    def body(self) -> str:
        """The body the runtime serves: ``nao``, ``p7`` or ``tny360`` (from its hello)."""
        return self._core.body

    @property
    def joint_names(self) -> tuple[str, ...]:
        """Joint names, the order of every joint tuple."""
        return self._core.joint_names

    @property
    def connected(self) -> bool:
        """True while the state stream is open."""
        return self._core.connected

    def age_s(self) -> float:
        """How old the newest state is, s (inf when there is none); measured without trusting either wall clock."""
        return self._core.age_s()

    def get_state_message(self) -> Optional[Mapping[str, Any]]:
        """The newest state message as sent (wire spelling, docs/api.md), or None when not current. Do not modify it."""
        return self._core.current()


class P7Reads(_Reads):
    """The AIRBOT P7's getters: the vendor SDK's three, unchanged (seed 002), plus the runtime's stamp."""

    def get_arm_joint_state(self) -> Optional[m.ArmJointState]:
        """Joint angles (rad), velocities (rad/s), efforts (N·m) of J1..J7, or None when no current data."""
        return self._snap("arm_joint", m.arm_joint_state)

    def get_arm_motor_state(self) -> Optional[m.ArmMotorState]:
        """Motor temperatures (°C) and raw error ids, or None when no current data."""
        return self._snap("arm_motor", m.arm_motor_state)

    def get_imu_state(self) -> Optional[m.ImuState]:
        """The arm IMU's angular velocity (rad/s) and linear acceleration (m/s², with gravity), or None."""
        return self._snap("imu", m.imu_state)


class NaoReads(_Reads):
    """The NAO's getters."""

    def get_joint_state(self) -> Optional[m.NaoJointState]:
        return self._snap("joint", m.nao_joint_state)

    def get_motor_state(self) -> Optional[m.NaoMotorState]:
        return self._snap("motor", m.nao_motor_state)

    def get_imu_state(self) -> Optional[m.NaoImuState]:
        return self._snap("imu", m.nao_imu_state)

    def get_battery_state(self) -> Optional[m.BatteryState]:
        return self._snap("battery", m.battery_state)

    def get_fsr_state(self) -> Optional[m.FsrState]:
        return self._snap("fsr", m.fsr_state)

    def get_foot_state(self) -> Optional[m.FootState]:
        return self._snap("foot", m.foot_state)

    def get_touch_state(self) -> Optional[m.TouchState]:
        return self._snap("touch", m.touch_state)

    def get_sonar_state(self) -> Optional[m.SonarState]:
        return self._snap("sonar", m.sonar_state)

    def get_head_state(self) -> Optional[m.HeadState]:
        return self._snap("head", m.head_state)


class TnyReads(_Reads):
    """The TNY-360's getters."""

    def get_joint_state(self) -> Optional[m.TnyJointState]:
        return self._snap("joint", m.tny_joint_state)

    def get_imu_state(self) -> Optional[m.TnyImuState]:
        return self._snap("imu", m.tny_imu_state)

    def get_locomotion_state(self) -> Optional[m.LocomotionState]:
        return self._snap("locomotion", m.locomotion_state)

    def get_odometry_state(self) -> Optional[m.OdometryState]:
        return self._snap("odometry", m.odometry_state)


# --- command answers ---


@dataclass(frozen=True)
class MoveResult:
    """What the P7 took from a move: the estimated time to arrive and the speed limits applied."""

    eta_s: float
    speed_rad_s: tuple[float, ...]
    """rad/s per joint (a speed above a joint's maximum is clamped to it)."""


@dataclass(frozen=True)
class Clamped:
    """One NAO value clamped to its limit."""

    joint: str
    field: str
    requested: float
    applied: float


@dataclass(frozen=True)
class Applied:
    """What the NAO applied: the groups set, every value clamped to its limit, and notes."""

    applied: tuple[str, ...]
    clamped: tuple[Clamped, ...]
    notes: tuple[str, ...]


@dataclass(frozen=True)
class EstopState:
    """The emergency-stop latch (docs/api.md "Emergency stop")."""

    latched: bool
    reason: Optional[str]
    source: Optional[str]
    category: Optional[int]
    """0: cut at once; 1: safe posture, then cut."""
    phase: Optional[str]
    """``settling`` until the body is in its safe state, then ``cut``."""

    @staticmethod
    def from_wire(a: Any) -> EstopState:
        d: Mapping[str, Any] = a if isinstance(a, Mapping) else {}
        cat = d.get("category")
        return EstopState(
            bool(d.get("latched")),
            _opt_str(d.get("reason")),
            _opt_str(d.get("source")),
            int(cat) if isinstance(cat, int) else None,
            _opt_str(d.get("phase")),
        )


def _opt_str(v: object) -> Optional[str]:
    return v if isinstance(v, str) else None


def _float_tuple(v: object) -> tuple[float, ...]:
    return tuple(float(x) for x in v) if isinstance(v, list) else ()


def _applied(r: Mapping[str, Any]) -> Applied:
    cl = r.get("clamped")
    return Applied(
        tuple(str(x) for x in r.get("applied", [])),
        tuple(Clamped(str(c.get("joint")), str(c.get("field")), float(c.get("requested", math.nan)), float(c.get("applied", math.nan))) for c in cl)
        if isinstance(cl, list)
        else (),
        tuple(str(x) for x in r.get("notes", [])),
    )


def _vec(v: Sequence[float], what: str) -> list[float]:
    """A list of floats for the wire (a tuple from a snapshot, a list, a numpy array all fit)."""
    try:
        return [float(x) for x in v]
    except TypeError:
        raise TypeError(f"{what} must be a sequence of numbers, got {type(v).__name__}") from None


# --- commands: one async implementation per body ---


async def p7_move_joints(core: Core, positions: Sequence[float], speed: Union[None, float, Sequence[float]]) -> MoveResult:
    body: dict[str, Any] = {"positions": _vec(positions, "positions")}
    if speed is not None:
        body["speed"] = float(speed) if isinstance(speed, (int, float)) else _vec(speed, "speed")
    r = await core.command("/v1/commands/move-joints", body)
    return MoveResult(float(r.get("eta_s", 0.0)), _float_tuple(r.get("speed_rad_s")))


async def p7_servo_joints(core: Core, positions: Sequence[float]) -> None:
    await core.command("/v1/commands/servo-joints", {"positions": _vec(positions, "positions")})


async def p7_clear_error(core: Core, joint: Optional[int]) -> tuple[int, ...]:
    r = await core.command("/v1/commands/clear-error", {} if joint is None else {"joint": joint})
    j = r.get("cleared_joints")
    return tuple(int(x) for x in j) if isinstance(j, list) else ()


async def nao_set_joints(core: Core, positions: Optional[Sequence[float]], stiffness: Optional[Sequence[float]]) -> Applied:
    body: dict[str, Any] = {}
    if positions is not None:
        body["positions"] = _vec(positions, "positions")
    if stiffness is not None:
        body["stiffness"] = _vec(stiffness, "stiffness")
    return _applied(await core.command("/v1/commands/joints", body))


async def nao_set_leds(core: Core, groups: Mapping[str, Sequence[float]]) -> Applied:
    return _applied(await core.command("/v1/commands/leds", {k: _vec(v, k) for k, v in groups.items()}))


async def nao_set_sonar(core: Core, left: bool, right: bool) -> Applied:
    return _applied(await core.command("/v1/commands/sonar", {"left": left, "right": right}))


async def smooth(core: Core, enable: bool) -> float:
    r = await core.command("/v1/commands/smooth-enable" if enable else "/v1/commands/smooth-disable", {})
    return float(r.get("estimated_s", 0.0))


async def tny_command(core: Core, path: str, body: Mapping[str, Any]) -> bool:
    """A TNY-360 command; True when it was forwarded to a real robot."""
    r = await core.command(path, body)
    return bool(r.get("forwarded", False))


def tny_velocity(x_m_s: float, y_m_s: float, yaw_rad_s: float) -> dict[str, Any]:
    return {"x": float(x_m_s), "y": float(y_m_s), "yaw": float(yaw_rad_s)}


def tny_posture(x_m: float, y_m: float, z_m: float, rx_rad: float, ry_rad: float, rz_rad: float) -> dict[str, Any]:
    return {"x": float(x_m), "y": float(y_m), "z": float(z_m), "rx": float(rx_rad), "ry": float(ry_rad), "rz": float(rz_rad)}
