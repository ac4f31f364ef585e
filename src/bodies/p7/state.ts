/**
 * P7 state: the three snapshot models of the P7 SDK (ArmJointState, ArmMotorState, ImuState,
 * docs/p7.md) plus what the SDK lacks: every snapshot carries the cycle's `seq`, monotonic
 * `timestampMs` and `epochMs`, and `P7StateSnapshot` holds all three from one cycle.
 *
 * - `P7State` is the runtime's store: typed arrays overwritten in place every 4 ms cycle (no
 *   allocation). Never hand it to a client.
 * - `toArmJointState` / `toArmMotorState` / `toImuState` build a **frozen** snapshot (frozen
 *   object, frozen plain arrays) or return `null` when a length does not match the body or a value
 *   is not a proper number. They allocate; call them on the prepare side (a client read), not per
 *   cycle. The client SDK uses the same functions on what it receives, so the rule is one.
 *
 * Pure and browser-safe.
 */
import { SIM_WORLD_SLOTS } from "../sim-world.js";
import { P7_JOINT_COUNT } from "./joints.js";
import { P7_CONTACT_LINKS } from "./mjcf.js";

/** When and in which cycle a snapshot was taken. */
export interface SnapshotMeta {
  /** Runtime cycle sequence number of the state (increases by one per cycle with data). */
  readonly seq: number;
  /** Monotonic time of that cycle, ms (the runtime's clock; compare only with the same runtime). */
  readonly timestampMs: number;
  /** Wall-clock time of that cycle, ms since the Unix epoch. */
  readonly epochMs: number;
}

/** Joint feedback, 7 values each in J1..J7 order. Feedback, not command limits. */
export interface ArmJointState extends SnapshotMeta {
  /** Joint position, rad. */
  readonly angles: readonly number[];
  /** Joint velocity, rad/s. */
  readonly velocities: readonly number[];
  /** Joint effort (motor torque, positive about the joint's positive direction), N·m. Not a calibrated force sensor. */
  readonly efforts: readonly number[];
}

/** Motor readings, 7 values each in J1..J7 order. */
export interface ArmMotorState extends SnapshotMeta {
  /** Motor temperature, °C. */
  readonly temperatures: readonly number[];
  /**
   * Error identifier per motor as the raw integer: 0 = normal, anything else is an error bit or
   * code whose meaning depends on motor and firmware. Keep the integer; do not map it through
   * another product's table. A joint with a nonzero id is stopped until the error is cleared.
   */
  readonly errorIds: readonly number[];
}

/** IMU readings in the `arm_imu` frame, (x, y, z). */
export interface ImuState extends SnapshotMeta {
  /** Angular velocity, rad/s. */
  readonly angularVelocity: readonly [number, number, number];
  /** Linear acceleration (specific force) including gravity, m/s²: at rest its norm is g ≈ 9.81. */
  readonly linearAcceleration: readonly [number, number, number];
}

/** All three models from one cycle (the P7 SDK's getters are separate calls; this is atomic). */
export interface P7StateSnapshot extends SnapshotMeta {
  readonly joints: ArmJointState;
  readonly motors: ArmMotorState;
  readonly imu: ImuState;
}

/** The runtime's live store, overwritten in place each cycle. Copy before handing out. */
export class P7State {
  seq = 0;
  timestampMs = 0;
  epochMs = 0;
  /** The arrays below hold a complete, length-checked reading of each model from cycle `seq`. */
  jointValid = false;
  motorValid = false;
  imuValid = false;
  readonly angles = new Float64Array(P7_JOINT_COUNT);
  readonly velocities = new Float64Array(P7_JOINT_COUNT);
  readonly efforts = new Float64Array(P7_JOINT_COUNT);
  readonly temperatures = new Float64Array(P7_JOINT_COUNT);
  /** Raw error ids (integers up to 2^53 are exact in a Float64Array). */
  readonly errorIds = new Float64Array(P7_JOINT_COUNT);
  readonly angularVelocity = new Float64Array(3);
  readonly linearAcceleration = new Float64Array(3);
  /**
   * A physics simulator's world (slots in SIM_WORLD, ../sim-world.ts): present (1 with the
   * physics arm), simulated time, the base's pose (bolted at the origin), fallen (never), the
   * real-time factor. All 0 on a real arm and the kinematic simulator.
   */
  readonly simWorld = new Float64Array(SIM_WORLD_SLOTS);
  /** The physics arm's contacts: the net force between each link (P7_CONTACT_LINKS) and the floor or base, N (0: none). */
  readonly simContacts = new Float32Array(P7_CONTACT_LINKS.length);

  invalidate(): void {
    this.jointValid = false;
    this.motorValid = false;
    this.imuValid = false;
  }
}

function finiteArray(a: unknown, n: number): number[] | null {
  if (a === null || typeof a !== "object") return null;
  const src = a as ArrayLike<unknown>;
  if (typeof src.length !== "number" || src.length !== n) return null;
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    const v = src[i];
    if (typeof v !== "number" || !Number.isFinite(v)) return null;
    out[i] = v;
  }
  return out;
}

function errorIdArray(a: unknown, n: number): number[] | null {
  const out = finiteArray(a, n);
  if (!out) return null;
  for (let i = 0; i < n; i++) if (!Number.isSafeInteger(out[i]) || out[i]! < 0) return null;
  return out;
}

function meta(m: SnapshotMeta): SnapshotMeta | null {
  if (!Number.isFinite(m.seq) || !Number.isFinite(m.timestampMs) || !Number.isFinite(m.epochMs)) return null;
  return { seq: m.seq, timestampMs: m.timestampMs, epochMs: m.epochMs };
}

/** Frozen ArmJointState, or null unless all three arrays have 7 finite numbers. Allocates. */
export function toArmJointState(src: { readonly angles: unknown; readonly velocities: unknown; readonly efforts: unknown }, m: SnapshotMeta): ArmJointState | null {
  const mm = meta(m);
  const angles = finiteArray(src.angles, P7_JOINT_COUNT);
  const velocities = finiteArray(src.velocities, P7_JOINT_COUNT);
  const efforts = finiteArray(src.efforts, P7_JOINT_COUNT);
  if (!mm || !angles || !velocities || !efforts) return null;
  return Object.freeze({ ...mm, angles: Object.freeze(angles), velocities: Object.freeze(velocities), efforts: Object.freeze(efforts) });
}

/**
 * Frozen ArmMotorState, or null unless both arrays have 7 entries: finite temperatures and
 * non-negative integer error ids. (The SDK allows both arrays empty; for this body that is
 * "no current data", so null.) Allocates.
 */
export function toArmMotorState(src: { readonly temperatures: unknown; readonly errorIds: unknown }, m: SnapshotMeta): ArmMotorState | null {
  const mm = meta(m);
  const temperatures = finiteArray(src.temperatures, P7_JOINT_COUNT);
  const errorIds = errorIdArray(src.errorIds, P7_JOINT_COUNT);
  if (!mm || !temperatures || !errorIds) return null;
  return Object.freeze({ ...mm, temperatures: Object.freeze(temperatures), errorIds: Object.freeze(errorIds) });
}

/** Frozen ImuState, or null unless both arrays have 3 finite numbers. Allocates. */
export function toImuState(src: { readonly angularVelocity: unknown; readonly linearAcceleration: unknown }, m: SnapshotMeta): ImuState | null {
  const mm = meta(m);
  const w = finiteArray(src.angularVelocity, 3);
  const a = finiteArray(src.linearAcceleration, 3);
  if (!mm || !w || !a) return null;
  return Object.freeze({
    ...mm,
    angularVelocity: Object.freeze(w) as unknown as readonly [number, number, number],
    linearAcceleration: Object.freeze(a) as unknown as readonly [number, number, number],
  });
}

/** All three models of one cycle, or null if any of them is null. Frozen. Allocates. */
export function toP7StateSnapshot(joints: ArmJointState | null, motors: ArmMotorState | null, imu: ImuState | null): P7StateSnapshot | null {
  if (!joints || !motors || !imu) return null;
  if (joints.seq !== motors.seq || joints.seq !== imu.seq) return null; // not one cycle
  return Object.freeze({ seq: joints.seq, timestampMs: joints.timestampMs, epochMs: joints.epochMs, joints, motors, imu });
}

/** The store's joint model as a frozen snapshot, or null when it is not valid. Allocates. */
export function snapshotJointState(s: P7State): ArmJointState | null {
  return s.jointValid ? toArmJointState(s, s) : null;
}
/** The store's motor model as a frozen snapshot, or null when it is not valid. Allocates. */
export function snapshotMotorState(s: P7State): ArmMotorState | null {
  return s.motorValid ? toArmMotorState(s, s) : null;
}
/** The store's IMU model as a frozen snapshot, or null when it is not valid. Allocates. */
export function snapshotImuState(s: P7State): ImuState | null {
  return s.imuValid ? toImuState(s, s) : null;
}
