"""State snapshots: frozen dataclasses of tuples, built from one state message, or ``None``.

The P7's three models keep the vendor SDK's names, fields and order (``ArmJointState(angles,
velocities, efforts)``, ``ArmMotorState(motor_temperatures, error_ids)``, ``ImuState(
angular_velocity, linear_acceleration)``); the NAO's and the TNY-360's follow the same style.

Unlike the vendor's models, every snapshot also carries its source cycle's stamp: ``seq`` (the
runtime's cycle number), ``timestamp_ms`` (the runtime's monotonic clock) and ``epoch_ms`` (its
wall clock). The vendor's models carry none, so there "a single nonempty result does not prove
that the state is fresh enough for real-time control"; here the getters already return ``None``
for a state older than ``stale_after_s``, and the stamp lets a program check for itself (two
snapshots with the same ``seq`` are the same cycle; ``timestamp_ms`` differences are exact
cycle-time differences, immune to either machine's wall clock).

A builder returns ``None`` when an array is missing, has the wrong length for the body, or holds
something other than finite numbers (error ids: non-negative integers), as the seed says
("They may return None when an array is missing or lengths do not match").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Optional

Vector = tuple[float, ...]


@dataclass(frozen=True)
class Stamp:
    """The source cycle of a snapshot (why: the module docstring)."""

    seq: int
    """The runtime's cycle that produced the values (increases by one per body cycle)."""
    timestamp_ms: float
    """That cycle's time on the runtime's monotonic clock, ms (compare only within one runtime)."""
    epoch_ms: float
    """That cycle's wall-clock time, ms since the Unix epoch."""


# --- AIRBOT P7 (seed 002: the vendor SDK's models, plus the stamp) ---


@dataclass(frozen=True)
class ArmJointState:
    """The P7's 7 revolute joints, J1..J7, all three tuples in the same joint order.

    Carries the runtime's ``seq``/``timestamp_ms``/``epoch_ms`` (the vendor's does not, so there a
    non-empty result does not prove the state is fresh; here the getter returns ``None`` for a
    stale state and the stamp says which cycle it is).
    """

    angles: Vector
    """Joint positions, rad (7)."""
    velocities: Vector
    """Joint velocities, rad/s (7)."""
    efforts: Vector
    """Effort/torque feedback, N·m (7): feedback, not a calibrated force sensor."""
    seq: int
    timestamp_ms: float
    epoch_ms: float


@dataclass(frozen=True)
class ArmMotorState:
    """The P7's motors: temperature and error identifier each (with the runtime's stamp, see ArmJointState)."""

    motor_temperatures: Vector
    """°C per motor (7)."""
    error_ids: tuple[int, ...]
    """Raw integer per motor, 0 normal; anything else is a device error bit or code: keep the integer."""
    seq: int
    timestamp_ms: float
    epoch_ms: float


@dataclass(frozen=True)
class ImuState:
    """An IMU's rates (P7: the arm_imu frame), with the runtime's stamp (see ArmJointState)."""

    angular_velocity: Vector
    """rad/s, (x, y, z)."""
    linear_acceleration: Vector
    """m/s², (x, y, z), including the gravity the sensor observes."""
    seq: int
    timestamp_ms: float
    epoch_ms: float


# --- NAO (docs/api.md "State per body") ---


NAO_JOINT_NAMES: tuple[str, ...] = (
    "HeadYaw", "HeadPitch",
    "LShoulderPitch", "LShoulderRoll", "LElbowYaw", "LElbowRoll", "LWristYaw", "LHand",
    "LHipYawPitch", "LHipRoll", "LHipPitch", "LKneePitch", "LAnklePitch", "LAnkleRoll",
    "RHipYawPitch", "RHipRoll", "RHipPitch", "RKneePitch", "RAnklePitch", "RAnkleRoll",
    "RShoulderPitch", "RShoulderRoll", "RElbowYaw", "RElbowRoll", "RWristYaw", "RHand",
)  # fmt: skip
"""The API's NAO joint order (NAOqi's Body chain, 26): both hip yaw-pitch names, one motor (docs/api.md)."""


@dataclass(frozen=True)
class NaoJoint:
    """One NAO joint's reading, from one cycle."""

    angle: float
    """rad (hands: opening 0..1)."""
    velocity: float
    """rad/s, estimated."""
    current: float
    """A."""
    stiffness: float
    """0..1, as commanded this cycle."""


@dataclass(frozen=True)
class NaoJointState:
    """The NAO's 26 joints in the API's order (``robot.joint_names``), with the runtime's stamp.

    ``state.joint("HeadYaw")`` reads one by name. ``LHipYawPitch`` and ``RHipYawPitch`` are one motor
    on the robot (LoLA's ``LHipYawPitch``, slot 7 of its 25; LoLA has no ``RHipYawPitch``): both names
    read it.
    """

    angles: Vector
    """rad (hands: opening 0..1, 0 closed)."""
    velocities: Vector
    """rad/s, estimated from two consecutive cycles (the NAO has no velocity sensor)."""
    currents: Vector
    """Motor currents, A (the NAO has no torque sensor)."""
    stiffness: Vector
    """0..1, the stiffness commanded this cycle (not measured)."""
    seq: int
    timestamp_ms: float
    epoch_ms: float

    def joint(self, name: str) -> NaoJoint:
        """The joint ``name`` (NAOqi's spelling, ``NAO_JOINT_NAMES``); KeyError for another name."""
        try:
            i = NAO_JOINT_NAMES.index(name)
        except ValueError:
            raise KeyError(f"no NAO joint {name!r} (names: NAO_JOINT_NAMES)") from None
        return NaoJoint(self.angles[i], self.velocities[i], self.currents[i], self.stiffness[i])


@dataclass(frozen=True)
class NaoMotorState:
    """The NAO's 26 joint motors (API order), with the runtime's stamp."""

    temperatures: Vector
    """°C (steps of 2 °C)."""
    status: tuple[int, ...]
    """Temperature status: 0 normal, 1 above the minimum, 2 near the maximum, 3 at the maximum."""
    seq: int
    timestamp_ms: float
    epoch_ms: float


@dataclass(frozen=True)
class NaoImuState:
    """The NAO's inertial unit in the torso, with the runtime's stamp."""

    angular_velocity: Vector
    """rad/s, (x, y, z)."""
    linear_acceleration: Vector
    """m/s², (x, y, z), including gravity."""
    roll_pitch: Vector
    """rad, the inertial unit's own estimate, with the preference offsets."""
    seq: int
    timestamp_ms: float
    epoch_ms: float


@dataclass(frozen=True)
class BatteryState:
    """The NAO's battery, with the runtime's stamp."""

    charge: float
    """0..1."""
    current_a: float
    """A, negative while discharging."""
    temperature_lola: float
    """LoLA's scale (the 0.1 factor applied twice: 28.5 °C reads 2.8); ``fetch_state()`` has whole °C."""
    charging: bool
    status: int
    """The status register, raw, as LoLA's ``Battery[1]`` (signed 16-bit)."""
    seq: int
    timestamp_ms: float
    epoch_ms: float


@dataclass(frozen=True)
class FsrState:
    """The NAO's foot pressure sensors, kg, each (front left, front right, rear left, rear right)."""

    left_kg: Vector
    right_kg: Vector
    seq: int
    timestamp_ms: float
    epoch_ms: float


@dataclass(frozen=True)
class FootState:
    """The NAO's feet: weight on each and its centre of pressure, with the runtime's stamp."""

    left_weight_kg: float
    right_weight_kg: float
    left_center_of_pressure_m: Vector
    """m, (x, y) in the left ankle frame; 0 when unloaded."""
    right_center_of_pressure_m: Vector
    seq: int
    timestamp_ms: float
    epoch_ms: float


@dataclass(frozen=True)
class TouchState:
    """The NAO's buttons and bumpers; each hand and each foot is one value (any of its sensors)."""

    chest_button: bool
    head_front: bool
    head_middle: bool
    head_rear: bool
    left_hand: bool
    right_hand: bool
    left_foot: bool
    right_foot: bool
    seq: int
    timestamp_ms: float
    epoch_ms: float


@dataclass(frozen=True)
class SonarState:
    """The NAO's sonars, m."""

    left_m: float
    right_m: float
    seq: int
    timestamp_ms: float
    epoch_ms: float


@dataclass(frozen=True)
class HeadState:
    """The NAO's head supply (INA230) and face temperature (TMP100; 0 until its first reading)."""

    voltage_v: float
    power_w: float
    current_a: float
    face_temperature_c: float
    seq: int
    timestamp_ms: float
    epoch_ms: float


# --- TNY-360 (docs/protocol/tny360.md) ---


@dataclass(frozen=True)
class TnyJointState:
    """The TNY-360's 14 joints in JointId order (4 legs × hip roll, hip pitch, knee; the ears)."""

    angles: Vector
    """rad."""
    targets: Vector
    """rad, what each joint drives to."""
    velocities: Vector
    """rad/s."""
    efforts: Optional[Vector]
    """N·m, or None on a real robot (no torque estimate)."""
    enabled: tuple[bool, ...]
    seq: int
    timestamp_ms: float
    epoch_ms: float


@dataclass(frozen=True)
class TnyImuState:
    """The TNY-360's IMU in the body frame. ``None`` from the getter on a real robot (its firmware answers the rates empty)."""

    orientation: Vector
    """rad, Euler XYZ (a real robot's yaw is always 0)."""
    angular_velocity: Vector
    """rad/s, (x, y, z)."""
    linear_acceleration: Vector
    """m/s², (x, y, z), including gravity."""
    seq: int
    timestamp_ms: float
    epoch_ms: float


@dataclass(frozen=True)
class LocomotionState:
    """What the TNY-360's gait engine is doing."""

    target_velocity: Vector
    """(x m/s, y m/s, yaw rad/s)."""
    posture: Vector
    """(x, y, z m; rx, ry, rz rad)."""
    height_m: float
    """Measured body height, m."""
    gait: str
    """``Creep``, ``Walk`` or ``Run``."""
    enabled_mask: int
    """Bit i = joint i powered."""
    smooth: str
    """The smooth enable/disable phase (``idle`` when none runs)."""
    grounded: tuple[bool, ...]
    """Per leg (front left, back left, back right, front right): the paw is on the ground."""
    seq: int
    timestamp_ms: float
    epoch_ms: float


@dataclass(frozen=True)
class OdometryState:
    """The TNY-360's odometry since start: position m, yaw rad, velocities m/s and rad/s."""

    x_m: float
    y_m: float
    yaw_rad: float
    vx_m_s: float
    vy_m_s: float
    yaw_rate_rad_s: float
    seq: int
    timestamp_ms: float
    epoch_ms: float


# --- builders: a message (parsed JSON) → a snapshot or None ---

Message = Mapping[str, Any]


def _num(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def floats(a: object, n: int) -> Vector | None:
    """``a`` as a tuple of ``n`` floats, or None (missing, wrong length, not finite)."""
    if not isinstance(a, list) or len(a) != n or not all(_num(v) for v in a):
        return None
    return tuple(float(v) for v in a)


def ints(a: object, n: int) -> tuple[int, ...] | None:
    """``a`` as a tuple of ``n`` non-negative integers, or None."""
    if not isinstance(a, list) or len(a) != n:
        return None
    out: list[int] = []
    for v in a:
        if not _num(v) or float(v) != int(v) or v < 0:
            return None
        out.append(int(v))
    return tuple(out)


def bools(a: object, n: int) -> tuple[bool, ...] | None:
    if not isinstance(a, list) or len(a) != n or not all(isinstance(v, bool) for v in a):
        return None
    return tuple(a)


def _obj(m: object, k: str) -> Mapping[str, Any]:
    v = m.get(k) if isinstance(m, Mapping) else None
    return v if isinstance(v, Mapping) else {}


def stamp(m: Message) -> Stamp | None:
    v = floats([m.get("seq"), m.get("timestamp_ms"), m.get("epoch_ms")], 3)
    if v is None or v[0] != int(v[0]):
        return None
    return Stamp(int(v[0]), v[1], v[2])


def arm_joint_state(m: Message, s: Stamp) -> ArmJointState | None:
    a, v, e = floats(m.get("joint_positions"), 7), floats(m.get("joint_velocities"), 7), floats(m.get("joint_efforts"), 7)
    return ArmJointState(a, v, e, s.seq, s.timestamp_ms, s.epoch_ms) if a and v and e else None


def arm_motor_state(m: Message, s: Stamp) -> ArmMotorState | None:
    t, ids = floats(m.get("motor_temperatures"), 7), ints(m.get("error_ids"), 7)
    return ArmMotorState(t, ids, s.seq, s.timestamp_ms, s.epoch_ms) if t and ids else None


def imu_state(m: Message, s: Stamp) -> ImuState | None:
    imu = _obj(m, "imu")
    w, a = floats(imu.get("angular_velocity"), 3), floats(imu.get("linear_acceleration"), 3)
    return ImuState(w, a, s.seq, s.timestamp_ms, s.epoch_ms) if w and a else None


NAO_JOINTS = 26


def nao_joint_state(m: Message, s: Stamp) -> NaoJointState | None:
    a = floats(m.get("joint_positions"), NAO_JOINTS)
    v = floats(m.get("joint_velocities"), NAO_JOINTS)
    c = floats(m.get("joint_currents"), NAO_JOINTS)
    k = floats(m.get("joint_stiffness"), NAO_JOINTS)
    return NaoJointState(a, v, c, k, s.seq, s.timestamp_ms, s.epoch_ms) if a and v and c and k else None


def nao_motor_state(m: Message, s: Stamp) -> NaoMotorState | None:
    t, st = floats(m.get("joint_temperatures"), NAO_JOINTS), ints(m.get("joint_status"), NAO_JOINTS)
    return NaoMotorState(t, st, s.seq, s.timestamp_ms, s.epoch_ms) if t and st else None


def nao_imu_state(m: Message, s: Stamp) -> NaoImuState | None:
    imu = _obj(m, "imu")
    w, a, rp = floats(imu.get("angular_velocity"), 3), floats(imu.get("linear_acceleration"), 3), floats(imu.get("roll_pitch"), 2)
    return NaoImuState(w, a, rp, s.seq, s.timestamp_ms, s.epoch_ms) if w and a and rp else None


def battery_state(m: Message, s: Stamp) -> BatteryState | None:
    b = _obj(m, "battery")
    v = floats([b.get("charge"), b.get("current"), b.get("temperature"), b.get("status")], 4)
    charging = b.get("charging")
    if v is None or not isinstance(charging, bool):
        return None
    return BatteryState(v[0], v[1], v[2], charging, int(v[3]), s.seq, s.timestamp_ms, s.epoch_ms)


def fsr_state(m: Message, s: Stamp) -> FsrState | None:
    left, right = floats(m.get("left_foot_pressure"), 4), floats(m.get("right_foot_pressure"), 4)
    return FsrState(left, right, s.seq, s.timestamp_ms, s.epoch_ms) if left and right else None


def foot_state(m: Message, s: Stamp) -> FootState | None:
    w, cop = _obj(m, "foot_weight"), _obj(m, "center_of_pressure")
    weights = floats([w.get("left"), w.get("right")], 2)
    lc, rc = floats(cop.get("left"), 2), floats(cop.get("right"), 2)
    if weights is None or not lc or not rc:
        return None
    return FootState(weights[0], weights[1], lc, rc, s.seq, s.timestamp_ms, s.epoch_ms)


TOUCH_FIELDS = ("chest_button", "head_front", "head_middle", "head_rear", "left_hand", "right_hand", "left_foot", "right_foot")


def touch_state(m: Message, s: Stamp) -> TouchState | None:
    t = _obj(m, "touch")
    v = bools([t.get(k) for k in TOUCH_FIELDS], len(TOUCH_FIELDS))
    if v is None:
        return None
    return TouchState(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], s.seq, s.timestamp_ms, s.epoch_ms)


def sonar_state(m: Message, s: Stamp) -> SonarState | None:
    v = floats(m.get("sonar"), 2)
    return SonarState(v[0], v[1], s.seq, s.timestamp_ms, s.epoch_ms) if v else None


def head_state(m: Message, s: Stamp) -> HeadState | None:
    h = _obj(m, "head")
    v = floats([h.get(k) for k in ("voltage", "power", "current", "face_temperature")], 4)
    return HeadState(v[0], v[1], v[2], v[3], s.seq, s.timestamp_ms, s.epoch_ms) if v else None


TNY_JOINTS = 14


def tny_joint_state(m: Message, s: Stamp) -> TnyJointState | None:
    a, t, v = floats(m.get("joint_positions"), TNY_JOINTS), floats(m.get("joint_targets"), TNY_JOINTS), floats(m.get("joint_velocities"), TNY_JOINTS)
    en = bools(m.get("joint_enabled"), TNY_JOINTS)
    raw_e = m.get("joint_efforts")
    e = None if raw_e is None else floats(raw_e, TNY_JOINTS)
    if not a or not t or not v or en is None or (raw_e is not None and e is None):
        return None
    return TnyJointState(a, t, v, e, en, s.seq, s.timestamp_ms, s.epoch_ms)


def tny_imu_state(m: Message, s: Stamp) -> TnyImuState | None:
    imu = _obj(m, "imu")
    o, w, a = floats(imu.get("orientation"), 3), floats(imu.get("angular_velocity"), 3), floats(imu.get("linear_acceleration"), 3)
    return TnyImuState(o, w, a, s.seq, s.timestamp_ms, s.epoch_ms) if o and w and a else None


def locomotion_state(m: Message, s: Stamp) -> LocomotionState | None:
    loc = _obj(m, "locomotion")
    tv, p = _obj(loc, "target_velocity"), _obj(loc, "posture")
    vel = floats([tv.get(k) for k in ("x", "y", "yaw")], 3)
    posture = floats([p.get(k) for k in ("x", "y", "z", "rx", "ry", "rz")], 6)
    hm = floats([loc.get("height"), loc.get("enabled_mask")], 2)
    gait, smooth = loc.get("gait"), loc.get("smooth")
    grounded = bools(_obj(m, "paws").get("grounded"), 4)
    if not vel or not posture or not hm or not isinstance(gait, str) or not isinstance(smooth, str) or grounded is None:
        return None
    return LocomotionState(vel, posture, hm[0], gait, int(hm[1]), smooth, grounded, s.seq, s.timestamp_ms, s.epoch_ms)


def odometry_state(m: Message, s: Stamp) -> OdometryState | None:
    o = _obj(m, "odometry")
    v = floats([o.get(k) for k in ("x", "y", "yaw", "vx", "vy", "yaw_rate")], 6)
    return OdometryState(v[0], v[1], v[2], v[3], v[4], v[5], s.seq, s.timestamp_ms, s.epoch_ms) if v else None
