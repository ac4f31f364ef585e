/**
 * The P7 state's shared-memory layout: one table from which the typed views over the P7 core's
 * SharedArrayBuffer are built (src/shm/layout.ts); src/shm/p7-state.ts copies P7State in and out
 * of it, test/rt/shm.test.ts checks it against P7State. Order is free; the builder aligns each
 * field to its element size. Values stay float64, as P7State holds them (error ids are exact).
 */
import { SIM_WORLD_SLOTS } from "../sim-world.js";
import { P7_JOINT_COUNT } from "./joints.js";
import { P7_CONTACT_LINKS } from "./mjcf.js";

export const P7_STATE_LAYOUT = [
  // seq, timestampMs, epochMs
  { name: "scalars", type: "f64", count: 3 },
  { name: "angles", type: "f64", count: P7_JOINT_COUNT },
  { name: "velocities", type: "f64", count: P7_JOINT_COUNT },
  { name: "efforts", type: "f64", count: P7_JOINT_COUNT },
  { name: "temperatures", type: "f64", count: P7_JOINT_COUNT },
  { name: "errorIds", type: "f64", count: P7_JOINT_COUNT },
  { name: "angularVelocity", type: "f64", count: 3 },
  { name: "linearAcceleration", type: "f64", count: 3 },
  // a physics simulator's world (SIM_WORLD's slots; all 0 without one)
  { name: "simWorld", type: "f64", count: SIM_WORLD_SLOTS },
  // its contacts (P7_CONTACT_LINKS' order, N)
  { name: "simContacts", type: "f32", count: P7_CONTACT_LINKS.length },
  // jointValid, motorValid, imuValid (0/1), link (LINK_CODE)
  { name: "flags", type: "u8", count: 4 },
] as const;

/** Slots of the `scalars` field. */
export const P7_SCALAR = { seq: 0, timestampMs: 1, epochMs: 2 } as const;
/** Slots of the `flags` field. */
export const P7_FLAG = { jointValid: 0, motorValid: 1, imuValid: 2, link: 3 } as const;

/**
 * One slot of the P7 command mailbox (src/shm/mailbox.ts): a motion command the host validated
 * (lease held, 7 finite targets inside the command limits, speeds finite > 0 and clamped, no joint
 * fault) in the arm's units. `header[0]` is its kind (P7_COMMAND_KIND), `header[1]` the lease
 * generation it was validated under (the core drops it when the holder changed since). Each
 * command replaces the previous one, as on the arm, so the newest write wins.
 */
export const P7_COMMAND_LAYOUT = [
  { name: "header", type: "u32", count: 2 },
  { name: "targetsRad", type: "f64", count: P7_JOINT_COUNT },
  // moveJoints: the speed limit applied per joint, rad/s (unused by servo)
  { name: "speedRadS", type: "f64", count: P7_JOINT_COUNT },
] as const;

/** `header[0]` of a P7 mailbox slot. */
export const P7_COMMAND_KIND = { moveJoints: 1, servoJoints: 2 } as const;
