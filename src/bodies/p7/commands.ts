/**
 * Validation of P7 commands. The runtime calls these before anything reaches the arm; a refused
 * command changes nothing. The rules (docs/p7.md, "Commands and their checks"):
 *
 * - joint targets: exactly 7 values, each a finite number (no NaN, no ±Infinity), each inside the
 *   command limits `P7_MIN_RAD..P7_MAX_RAD` (inclusive). A target outside the limits is
 *   **refused**, not clamped: the API can say why, and silently moving somewhere else than asked
 *   is the "success but nothing happened" failure users of other arms report.
 * - speed (moveJoints): omitted → π/3 rad/s for every joint (the SDK default); one number → that
 *   speed for every joint; or 7 numbers. Each must be finite and > 0. A speed above a joint's
 *   maximum is **clamped** to that maximum (a speed is an upper bound, so this never moves the arm
 *   faster than asked); the command's answer reports the speeds applied.
 * - joint index (clearError): an integer 0..6, or omitted for all joints.
 *
 * The typed command (`P7Commands`): what the arm is asked to do at the next write, values in SI
 * units, from the route (validated once, by the validators below) to the driver's `write`. One
 * preallocated record per holder (a threaded host's outbox, the core's output), field for field
 * the mailbox slot (P7_COMMAND_LAYOUT), so it crosses threads without allocating. A command
 * replaces the one before it, as on the arm (no merge).
 *
 * Pure and browser-safe. The validators write into a caller-owned Float64Array and allocate only
 * the reason string of a refusal, so a 250 Hz servo stream does not allocate.
 */
import { P7_DEFAULT_SPEED_RAD_S, P7_JOINT_COUNT, P7_JOINT_NAMES, P7_MAX_ACCEL_RAD_S2, P7_MAX_RAD, P7_MAX_SPEED_RAD_S, P7_MIN_RAD } from "./joints.js";
import { P7_COMMAND_KIND, type P7_COMMAND_LAYOUT } from "./layout.js";

/**
 * What a command record asks the arm at the next write (`header[0]`): a client's motion (the
 * mailbox's kinds, P7_COMMAND_KIND) or one of the core's own stops. 3 is a recording's clearError
 * (P7_TAKEN_KIND), never a write.
 */
export const P7_WRITE_KIND = {
  /** Nothing pending: the arm goes on with what it was given. */
  none: 0,
  /** Point-to-point to `targetsRad` under `speedRadS`, joints arriving together. */
  moveJoints: P7_COMMAND_KIND.moveJoints,
  /** Each joint tracks `targetsRad` at its maximum speed and acceleration. */
  servoJoints: P7_COMMAND_KIND.servoJoints,
  /** Every joint decelerates at its stop rate and holds (a lease ended, a category-1 e-stop). */
  hold: 4,
  /** Every joint halts where it is, no ramp (a category-0 e-stop, a dying core). */
  halt: 5,
} as const;
export type P7WriteKind = (typeof P7_WRITE_KIND)[keyof typeof P7_WRITE_KIND];

/** The P7's command record: [kind (P7_WRITE_KIND), lease generation], targets rad, speed limits rad/s. */
export class P7Commands {
  readonly header = new Uint32Array(2);
  readonly targetsRad = new Float64Array(P7_JOINT_COUNT);
  /** moveJoints: the speed limit applied per joint, clamped (unused by the others). */
  readonly speedRadS = new Float64Array(P7_JOINT_COUNT);
}

type Fields = { readonly [F in (typeof P7_COMMAND_LAYOUT)[number] as F["name"]]: { set(a: ArrayLike<number>): void } & ArrayLike<number> };

/** Copy every field from `from` to `to` (a mailbox slot's views or a P7Commands). No allocation. */
export function copyP7Commands(from: Fields, to: Fields): void {
  to.header.set(from.header);
  to.targetsRad.set(from.targetsRad);
  to.speedRadS.set(from.speedRadS);
}

/** The pending kind (P7_WRITE_KIND.none: nothing to apply). */
export function p7WriteKind(c: P7Commands): number {
  return c.header[0]!;
}

/** Ask for `kind` at the next write under `generation` (targets and speeds as the record holds them). */
export function setP7Write(c: P7Commands, kind: P7WriteKind, generation: number): void {
  c.header[0] = kind;
  c.header[1] = generation;
}

function isArrayLike(v: unknown): v is ArrayLike<unknown> {
  return Array.isArray(v) || (ArrayBuffer.isView(v) && !(v instanceof DataView));
}

function describe(v: unknown): string {
  if (typeof v === "number") return String(v);
  if (v === null) return "null";
  return typeof v;
}

/**
 * Check 7 joint targets, rad. On success copies them into `into` (length ≥ 7) and returns null;
 * on failure returns the reason and leaves `into` unchanged.
 */
export function validateJointTargets(targets: unknown, into: Float64Array): string | null {
  if (!isArrayLike(targets)) return `joint targets must be an array of ${P7_JOINT_COUNT} numbers (rad), got ${describe(targets)}`;
  if (targets.length !== P7_JOINT_COUNT) return `expected ${P7_JOINT_COUNT} joint targets (rad), got ${targets.length}`;
  for (let i = 0; i < P7_JOINT_COUNT; i++) {
    const v = targets[i];
    if (typeof v !== "number" || !Number.isFinite(v)) {
      return `target for ${P7_JOINT_NAMES[i]} (index ${i}) must be a finite number, got ${describe(v)}`;
    }
    if (v < P7_MIN_RAD[i]! || v > P7_MAX_RAD[i]!) {
      return `target for ${P7_JOINT_NAMES[i]} (index ${i}) is ${v} rad, outside its limits [${P7_MIN_RAD[i]}, ${P7_MAX_RAD[i]}] rad`;
    }
  }
  for (let i = 0; i < P7_JOINT_COUNT; i++) into[i] = targets[i] as number;
  return null;
}

/**
 * Check a move speed, rad/s: undefined, one number, or 7 numbers. On success writes the speed to
 * apply per joint (clamped to `P7_MAX_SPEED_RAD_S`) into `into` and returns null.
 */
export function validateSpeed(speed: unknown, into: Float64Array): string | null {
  if (speed === undefined) {
    for (let i = 0; i < P7_JOINT_COUNT; i++) into[i] = Math.min(P7_DEFAULT_SPEED_RAD_S, P7_MAX_SPEED_RAD_S[i]!);
    return null;
  }
  if (typeof speed === "number") {
    if (!Number.isFinite(speed) || speed <= 0) return `speed must be a finite number > 0 (rad/s), got ${speed}`;
    for (let i = 0; i < P7_JOINT_COUNT; i++) into[i] = Math.min(speed, P7_MAX_SPEED_RAD_S[i]!);
    return null;
  }
  if (!isArrayLike(speed)) return `speed must be a number or ${P7_JOINT_COUNT} numbers (rad/s), got ${describe(speed)}`;
  if (speed.length !== P7_JOINT_COUNT) return `expected ${P7_JOINT_COUNT} speeds (rad/s), got ${speed.length}`;
  for (let i = 0; i < P7_JOINT_COUNT; i++) {
    const v = speed[i];
    if (typeof v !== "number" || !Number.isFinite(v) || v <= 0) {
      return `speed for ${P7_JOINT_NAMES[i]} (index ${i}) must be a finite number > 0 (rad/s), got ${describe(v)}`;
    }
  }
  for (let i = 0; i < P7_JOINT_COUNT; i++) into[i] = Math.min(speed[i] as number, P7_MAX_SPEED_RAD_S[i]!);
  return null;
}

/** Check an optional joint index for clearError: undefined (all joints) or an integer 0..6. */
export function validateJointIndex(joint: unknown): string | null {
  if (joint === undefined) return null;
  if (typeof joint !== "number" || !Number.isInteger(joint) || joint < 0 || joint >= P7_JOINT_COUNT) {
    return `joint must be an integer index 0..${P7_JOINT_COUNT - 1} (${P7_JOINT_NAMES.join(", ")}) or omitted for all, got ${describe(joint)}`;
  }
  return null;
}

/** Closer than this to its target (rad), a joint does not take part in a move (the arm snaps it on). */
export const P7_SNAP_RAD = 1e-9;

/** A target clamped to joint `i`'s command limits (a non-finite one keeps `fromRad`). */
export function clampP7Target(i: number, targetRad: number, fromRad: number): number {
  if (!Number.isFinite(targetRad)) return fromRad;
  return Math.min(P7_MAX_RAD[i]!, Math.max(P7_MIN_RAD[i]!, targetRad));
}

/**
 * The synchronised point-to-point move from `fromRad` to `targetsRad` (joints with a nonzero
 * `errorIds` entry keep holding and take no part): writes the path's speed and acceleration
 * scales (1/s, 1/s², on s ∈ [0, 1]; Infinity when no joint moves) into `scales[0]`, `scales[1]`
 * and returns the move's estimated duration from rest, s (0 when nothing moves). One rule for the
 * simulated arm, which executes it, and a host that answers a command before its core takes it.
 * Allocation-free.
 */
export function p7MoveScales(fromRad: ArrayLike<number>, targetsRad: ArrayLike<number>, speedRadS: ArrayLike<number>, errorIds: ArrayLike<number>, scales: Float64Array): number {
  let sv = Number.POSITIVE_INFINITY,
    sa = Number.POSITIVE_INFINITY;
  for (let i = 0; i < P7_JOINT_COUNT; i++) {
    if (errorIds[i] !== 0) continue;
    const ad = Math.abs(clampP7Target(i, targetsRad[i]!, fromRad[i]!) - fromRad[i]!);
    if (ad > P7_SNAP_RAD) {
      sv = Math.min(sv, Math.max(0, speedRadS[i]!) / ad);
      sa = Math.min(sa, P7_MAX_ACCEL_RAD_S2[i]! / ad);
    }
  }
  scales[0] = sv;
  scales[1] = sa;
  if (!Number.isFinite(sv) || !Number.isFinite(sa) || sv <= 0) return 0;
  // Trapezoid on the path parameter s ∈ [0, 1] with speed sv and acceleration sa.
  return (sv * sv) / sa >= 1 ? 2 * Math.sqrt(1 / sa) : 1 / sv + sv / sa;
}
