/**
 * Snapshots the SDK hands out: deep-frozen plain objects built from one state message, or null.
 *
 * The rule (the same for every body, modelled on the P7 SDK's getters, plus what it lacks):
 * - every snapshot carries its source cycle's `seq`, `timestampMs` (runtime's monotonic clock)
 *   and `epochMs` (wall clock), so freshness can be checked;
 * - a getter returns `null` when an array is missing, has the wrong length for the body, or holds
 *   something other than finite numbers (error ids: non-negative integers); the client adds the
 *   staleness and link rules on top;
 * - objects and arrays are frozen (`Object.isFrozen`), so assignment throws in strict mode and a
 *   snapshot can be shared and kept.
 *
 * The common models per body (docs/api.md):
 * | model  | NAO (26 joints, API order)            | P7 (7 joints)                      |
 * | angles | joint_positions, rad (hands 0..1)     | joint_positions, rad               |
 * | velocities | joint_velocities, rad/s, estimated | joint_velocities, rad/s           |
 * | efforts | joint_currents, **A** (no torque sensor) | joint_efforts, N·m             |
 * | temperatures | joint_temperatures, °C          | motor_temperatures, °C             |
 * | errorIds | joint_status 0..3 (temperature)     | error_ids, raw integers            |
 * | imu    | imu.angular_velocity, imu.linear_acceleration (m/s², includes gravity)      |
 *
 * TNY-360 (14 joints, JointId order): angles joint_positions, velocities joint_velocities,
 * efforts joint_efforts N·m (null on a real robot → the joint model is null there); the motor
 * model is always null (its hobby servos report neither temperature nor error ids); the IMU model
 * is null on a real robot (its firmware answers empty).
 *
 * Allocates (prepare side); pure and browser-safe.
 */
import type { BodyKind, LinkStatus, StateMessage } from "./messages.js";

export interface SnapshotMeta {
  /** Source cycle sequence number. */
  readonly seq: number;
  /** Source cycle time on the runtime's monotonic clock, ms (compare only with the same runtime). */
  readonly timestampMs: number;
  /** Source cycle wall-clock time, ms since the Unix epoch. */
  readonly epochMs: number;
}

export type EffortUnit = "N·m" | "A";

export interface JointState extends SnapshotMeta {
  /** Joint names, the order of every array here. */
  readonly names: readonly string[];
  /** rad (NAO hands: opening 0..1). */
  readonly angles: readonly number[];
  /** rad/s (NAO: estimated from consecutive cycles). */
  readonly velocities: readonly number[];
  /** In `effortUnit`: N·m on the P7, motor current in A on the NAO. */
  readonly efforts: readonly number[];
  readonly effortUnit: EffortUnit;
}

export interface MotorState extends SnapshotMeta {
  /** °C per joint motor. */
  readonly temperatures: readonly number[];
  /** Raw integers per motor, 0 = normal (NAO: temperature status 0..3). */
  readonly errorIds: readonly number[];
}

export interface ImuState extends SnapshotMeta {
  /** rad/s, x y z. */
  readonly angularVelocity: readonly [number, number, number];
  /** m/s², x y z, including gravity. */
  readonly linearAcceleration: readonly [number, number, number];
}

/** Joints, motors and IMU from one cycle, plus the body's own fields (frozen, wire spelling). */
export interface RobotState extends SnapshotMeta {
  readonly body: BodyKind;
  readonly link: LinkStatus;
  readonly joints: JointState;
  /** null only on a body without motor sensing (the TNY-360: BODY_SHAPES.tny360.motors is false). */
  readonly motors: MotorState | null;
  readonly imu: ImuState;
  readonly fields: Readonly<StateMessage>;
}

/**
 * How many joints each body has, what its efforts are measured in, whether it has a motor model at
 * all (the TNY-360's hobby servos report neither temperature nor error ids), and which fields of
 * its message feed the efforts and the motor model (every body's angles are `joint_positions`, its
 * velocities `joint_velocities`).
 */
export interface BodyShape {
  readonly joints: number;
  readonly effortUnit: EffortUnit;
  readonly motors: boolean;
  readonly fields: { readonly efforts: string; readonly temperatures: string; readonly errorIds: string };
}
export const BODY_SHAPES: { readonly [K in BodyKind]: BodyShape } = Object.freeze({
  nao: Object.freeze({ joints: 26, effortUnit: "A" as const, motors: true, fields: Object.freeze({ efforts: "joint_currents", temperatures: "joint_temperatures", errorIds: "joint_status" }) }),
  p7: Object.freeze({ joints: 7, effortUnit: "N·m" as const, motors: true, fields: Object.freeze({ efforts: "joint_efforts", temperatures: "motor_temperatures", errorIds: "error_ids" }) }),
  tny360: Object.freeze({ joints: 14, effortUnit: "N·m" as const, motors: false, fields: Object.freeze({ efforts: "joint_efforts", temperatures: "joint_temperatures", errorIds: "error_ids" }) }),
});

/** Where each common model's arrays live in a body's message. */
interface Sources {
  angles: unknown;
  velocities: unknown;
  efforts: unknown;
  temperatures: unknown;
  errorIds: unknown;
  angularVelocity: unknown;
  linearAcceleration: unknown;
}

function field(o: unknown, k: string): unknown {
  return o !== null && typeof o === "object" ? (o as Record<string, unknown>)[k] : undefined;
}

function sources(m: StateMessage, shape: BodyShape): Sources {
  const imu = field(m, "imu");
  return {
    angles: field(m, "joint_positions"),
    velocities: field(m, "joint_velocities"),
    efforts: field(m, shape.fields.efforts),
    temperatures: field(m, shape.fields.temperatures),
    errorIds: field(m, shape.fields.errorIds),
    angularVelocity: field(imu, "angular_velocity"),
    linearAcceleration: field(imu, "linear_acceleration"),
  };
}

/** A frozen copy of `a` if it is an array of `n` finite numbers, else null. */
export function finiteArray(a: unknown, n: number): readonly number[] | null {
  if (!Array.isArray(a) || a.length !== n) return null;
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    const v: unknown = a[i];
    if (typeof v !== "number" || !Number.isFinite(v)) return null;
    out[i] = v;
  }
  return Object.freeze(out);
}

function errorIdArray(a: unknown, n: number): readonly number[] | null {
  const out = finiteArray(a, n);
  if (!out) return null;
  for (let i = 0; i < n; i++) if (!Number.isSafeInteger(out[i]) || out[i]! < 0) return null;
  return out;
}

/** Freeze a parsed JSON value and everything in it. */
export function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === "object" && !Object.isFrozen(v)) {
    for (const k of Object.keys(v)) deepFreeze((v as Record<string, unknown>)[k]);
    Object.freeze(v);
  }
  return v;
}

function metaOf(m: StateMessage): SnapshotMeta | null {
  const { seq, timestamp_ms, epoch_ms } = m;
  if (!Number.isSafeInteger(seq) || !Number.isFinite(timestamp_ms) || !Number.isFinite(epoch_ms)) return null;
  return { seq, timestampMs: timestamp_ms, epochMs: epoch_ms };
}

/** The three common models of one message, or null per model when it does not fit the body. */
export function buildModels(m: StateMessage, names: readonly string[]): { joints: JointState | null; motors: MotorState | null; imu: ImuState | null; meta: SnapshotMeta | null } {
  const shape = BODY_SHAPES[m.body];
  const meta = metaOf(m);
  if (!shape || !meta) return { joints: null, motors: null, imu: null, meta: null };
  const n = shape.joints;
  const s = sources(m, shape);
  const angles = finiteArray(s.angles, n);
  const velocities = finiteArray(s.velocities, n);
  const efforts = finiteArray(s.efforts, n);
  const joints = angles && velocities && efforts && names.length === n ? Object.freeze({ ...meta, names, angles, velocities, efforts, effortUnit: shape.effortUnit }) : null;
  const temperatures = shape.motors ? finiteArray(s.temperatures, n) : null;
  const errorIds = shape.motors ? errorIdArray(s.errorIds, n) : null;
  const motors = temperatures && errorIds ? Object.freeze({ ...meta, temperatures, errorIds }) : null;
  const w = finiteArray(s.angularVelocity, 3);
  const a = finiteArray(s.linearAcceleration, 3);
  const imu = w && a ? Object.freeze({ ...meta, angularVelocity: w as readonly [number, number, number], linearAcceleration: a as readonly [number, number, number] }) : null;
  return { joints, motors, imu, meta };
}
