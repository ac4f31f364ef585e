/**
 * The TNY-360 state's shared-memory layout: one table from which the typed views over the
 * TNY-360 core's SharedArrayBuffer are built (src/shm/layout.ts); src/shm/tny360-state.ts copies
 * Tny360State in and out of it, test/rt/shm.test.ts checks it against Tny360State. Arrays keep
 * Tny360State's element types (float32 joints, u8 bits); scalars are float64.
 */
import { JOINT_COUNT, LEG_COUNT } from "../../wire/tny/constants.js";
import { SIM_WORLD_SLOTS } from "../sim-world.js";
import { TNY360_CONTACT_LINKS } from "./mjcf.js";

export const TNY360_STATE_LAYOUT = [
  // TNY360_SCALAR slots
  { name: "scalars", type: "f64", count: 19 },
  { name: "positionRad", type: "f32", count: JOINT_COUNT },
  { name: "targetRad", type: "f32", count: JOINT_COUNT },
  { name: "velocityRadS", type: "f32", count: JOINT_COUNT },
  { name: "effortNm", type: "f32", count: JOINT_COUNT },
  { name: "temperatureC", type: "f32", count: JOINT_COUNT },
  { name: "enabled", type: "u8", count: JOINT_COUNT },
  { name: "orientationRad", type: "f32", count: 3 },
  { name: "angularVelocityRadS", type: "f32", count: 3 },
  { name: "linearAccelerationMS2", type: "f32", count: 3 },
  { name: "down", type: "f32", count: 3 },
  { name: "grounded", type: "u8", count: LEG_COUNT },
  { name: "targetVelocity", type: "f32", count: 3 },
  { name: "posturePositionM", type: "f32", count: 3 },
  { name: "postureRotationRad", type: "f32", count: 3 },
  // TNY360_FLAG slots
  { name: "flags", type: "u8", count: 5 },
  // a physics simulator's world (Tny360State.simWorld, SIM_WORLD slots) and floor contacts
  { name: "simWorld", type: "f64", count: SIM_WORLD_SLOTS },
  { name: "simContacts", type: "f32", count: TNY360_CONTACT_LINKS.length },
] as const;

/** Slots of the `scalars` field. */
export const TNY360_SCALAR = {
  seq: 0,
  timestampMs: 1,
  epochMs: 2,
  heightM: 3,
  xM: 4,
  yM: 5,
  yawRad: 6,
  vxMS: 7,
  vyMS: 8,
  yawRateRadS: 9,
  voltageV: 10,
  currentA: 11,
  powerW: 12,
  chipTemperatureC: 13,
  errorCount: 14,
  lastEventId: 15,
  lastErrorId: 16,
  gait: 17,
  enabledMask: 18,
} as const;

/** Slots of the `flags` field: valid, link (LINK_CODE), smooth phase (SMOOTH_PHASES index), the two loop switches (0/1). */
export const TNY360_FLAG = { valid: 0, link: 1, smooth: 2, controlLoop: 3, decisionLoop: 4 } as const;

/** The smooth sequence's phase as a code (index). */
export const SMOOTH_PHASES = ["idle", "enabling", "disabling"] as const;

/**
 * One slot of the TNY-360 command mailbox (src/shm/mailbox.ts): typed commands the host validated
 * (lease held; arguments through the wire's strict codec, so float32 where the wire carries
 * float32; the simulator's limits) and merged until the core takes them, in the wire's units.
 * `header`: [0] the keys present (TNY360_COMMAND_KEY), [1] the lease generation they were
 * validated under (the core drops them when the holder changed since), [2] the joint overrides
 * present (bit i = JointId i), [3] TNY360_COMMAND_FLAG bits (clearOverrides of the velocity and
 * the posture). The core applies them in a fixed order — enable bits, gait, posture, velocity,
 * joint overrides — and the host drops pending joint overrides when a velocity or posture that
 * clears them arrives, so the result equals the commands applied one after the other.
 */
export const TNY360_COMMAND_LAYOUT = [
  { name: "header", type: "u32", count: 4 },
  // x, y m/s; yaw rad/s (body.setVelocity)
  { name: "velocity", type: "f32", count: 3 },
  // x, y, z m; rx, ry, rz rad, Euler XYZ (body.setPosture)
  { name: "posture", type: "f32", count: 6 },
  // body.setEnabled: bit i = JointId i
  { name: "enabledMask", type: "u32", count: 1 },
  // gait.setType: GaitType
  { name: "gait", type: "u32", count: 1 },
  // joint.setAngle / joint.setJointAngles, rad, index = JointId
  { name: "jointRad", type: "f32", count: JOINT_COUNT },
] as const;

/** Slots of a TNY-360 mailbox slot's `header`. */
export const TNY360_COMMAND_HEADER = { keys: 0, generation: 1, joints: 2, flags: 3 } as const;
/** Bits of `header[keys]`, one per typed command the mailbox carries. */
export const TNY360_COMMAND_KEY = { enabledMask: 1 << 0, gait: 1 << 1, posture: 1 << 2, velocity: 1 << 3, joints: 1 << 4 } as const;
/** Bits of `header[flags]`. */
export const TNY360_COMMAND_FLAG = { velocityClearsOverrides: 1 << 0, postureClearsOverrides: 1 << 1 } as const;
/** `header[joints]` with every joint's override present (what joint.setJointAngles sets). */
export const TNY360_ALL_JOINTS = (1 << JOINT_COUNT) - 1;
