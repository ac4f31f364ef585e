/**
 * The TNY-360's typed command: what a client asked the body to do, as values in SI units, from the
 * robot API's route (validated once, runtime/tny360-checks.ts) to the driver's `write`. One
 * preallocated record per holder (a threaded host's outbox, the core's output), field for field
 * the mailbox slot (TNY360_COMMAND_LAYOUT, layout.ts), so it crosses threads without allocating.
 *
 * Commands within one cycle merge into the record (`merge*`): a later value of a key replaces the
 * earlier one; a velocity or posture that clears the joint overrides drops the overrides merged
 * before it. The driver applies the keys in a fixed order (enable bits, gait, posture, velocity,
 * joint overrides), so the result equals the commands applied one after the other. Pure, no
 * allocation.
 */
import { JOINT_COUNT } from "../../wire/tny/constants.js";
import { TNY360_ALL_JOINTS, TNY360_COMMAND_FLAG, TNY360_COMMAND_HEADER, TNY360_COMMAND_KEY, TNY360_COMMAND_LAYOUT } from "./layout.js";

export class Tny360Commands {
  /** [keys, lease generation, joint-override bits, flags]: TNY360_COMMAND_HEADER. */
  readonly header = new Uint32Array(4);
  /** x, y m/s; yaw rad/s (float32, as on the wire). */
  readonly velocity = new Float32Array(3);
  /** x, y, z m; rx, ry, rz rad, Euler XYZ. */
  readonly posture = new Float32Array(6);
  /** Bit i = JointId i. */
  readonly enabledMask = new Uint32Array(1);
  /** GaitType. */
  readonly gait = new Uint32Array(1);
  /** Joint overrides, rad, index = JointId (those whose bit is set in header[joints]). */
  readonly jointRad = new Float32Array(JOINT_COUNT);
}

/** A body posture: position m (z = height above the ground), rotation rad, Euler XYZ. */
export interface Tny360Posture {
  readonly xM: number;
  readonly yM: number;
  /** Height of the body above the ground (default 0.12 m). */
  readonly zM: number;
  readonly rxRad: number;
  readonly ryRad: number;
  readonly rzRad: number;
}

type Fields = { readonly [F in (typeof TNY360_COMMAND_LAYOUT)[number] as F["name"]]: { set(a: ArrayLike<number>): void } & ArrayLike<number> };

/** Copy every field of the layout from `from` to `to` (a slot's views or a Tny360Commands). No allocation. */
export function copyTny360Commands(from: Fields, to: Fields): void {
  for (let i = 0; i < TNY360_COMMAND_LAYOUT.length; i++) {
    const name = TNY360_COMMAND_LAYOUT[i]!.name;
    to[name].set(from[name]);
  }
}

const H = TNY360_COMMAND_HEADER;
const KEY = TNY360_COMMAND_KEY;
const FLAG = TNY360_COMMAND_FLAG;

/** The keys present (0: nothing to apply). */
export function tny360Keys(c: Tny360Commands): number {
  return c.header[H.keys]!;
}

/** Start merging under `generation`: a record left from another lease's generation is emptied first. */
export function openTny360Merge(c: Tny360Commands, generation: number): void {
  if (c.header[H.generation] !== generation >>> 0) c.header.fill(0);
  c.header[H.generation] = generation;
}

/** Nothing pending (the generation is kept). */
export function clearTny360Commands(c: Tny360Commands): void {
  c.header[H.keys] = 0;
  c.header[H.joints] = 0;
  c.header[H.flags] = 0;
}

/** A velocity or posture: `flag` says whether it clears the joint overrides, which drops those merged before it. */
function clearing(c: Tny360Commands, key: number, flag: number, clears: boolean): void {
  const h = c.header;
  if (clears) {
    h[H.flags]! |= flag;
    h[H.keys]! &= ~KEY.joints;
    h[H.joints] = 0;
  }
  // NOTE: a clear stays set when a later value does not clear: applied one after the other, the
  // first had cleared the body's overrides already.
  h[H.keys]! |= key;
}

export function mergeVelocity(c: Tny360Commands, xMS: number, yMS: number, yawRadS: number, clearOverrides: boolean): void {
  c.velocity[0] = xMS;
  c.velocity[1] = yMS;
  c.velocity[2] = yawRadS;
  clearing(c, KEY.velocity, FLAG.velocityClearsOverrides, clearOverrides);
}

export function mergePosture(c: Tny360Commands, p: Tny360Posture, clearOverrides: boolean): void {
  const o = c.posture;
  o[0] = p.xM;
  o[1] = p.yM;
  o[2] = p.zM;
  o[3] = p.rxRad;
  o[4] = p.ryRad;
  o[5] = p.rzRad;
  clearing(c, KEY.posture, FLAG.postureClearsOverrides, clearOverrides);
}

export function mergeEnabledMask(c: Tny360Commands, mask: number): void {
  c.enabledMask[0] = mask;
  c.header[H.keys]! |= KEY.enabledMask;
}

export function mergeGait(c: Tny360Commands, gait: number): void {
  c.gait[0] = gait;
  c.header[H.keys]! |= KEY.gait;
}

export function mergeJointAngle(c: Tny360Commands, jointId: number, angleRad: number): void {
  c.jointRad[jointId] = angleRad;
  c.header[H.joints]! |= 1 << jointId;
  c.header[H.keys]! |= KEY.joints;
}

export function mergeJointAngles(c: Tny360Commands, anglesRad: ArrayLike<number>): void {
  for (let i = 0; i < JOINT_COUNT; i++) c.jointRad[i] = anglesRad[i]!;
  c.header[H.joints] = TNY360_ALL_JOINTS;
  c.header[H.keys]! |= KEY.joints;
}

/**
 * Merge every key of `from` into `into` by the rules above, in the apply order (a record taken
 * from the mailbox into the core's output that the driver has not applied yet).
 */
export function mergeTny360Commands(from: Tny360Commands, into: Tny360Commands): void {
  const keys = from.header[H.keys]!;
  const flags = from.header[H.flags]!;
  if (keys & KEY.enabledMask) mergeEnabledMask(into, from.enabledMask[0]!);
  if (keys & KEY.gait) mergeGait(into, from.gait[0]!);
  if (keys & KEY.posture) {
    const p = from.posture;
    into.posture.set(p);
    clearing(into, KEY.posture, FLAG.postureClearsOverrides, (flags & FLAG.postureClearsOverrides) !== 0);
  }
  if (keys & KEY.velocity) {
    into.velocity.set(from.velocity);
    clearing(into, KEY.velocity, FLAG.velocityClearsOverrides, (flags & FLAG.velocityClearsOverrides) !== 0);
  }
  if (keys & KEY.joints) {
    const joints = from.header[H.joints]!;
    for (let i = 0; i < JOINT_COUNT; i++) if (joints & (1 << i)) into.jointRad[i] = from.jointRad[i]!;
    into.header[H.joints]! |= joints;
    into.header[H.keys]! |= KEY.joints;
  }
}
