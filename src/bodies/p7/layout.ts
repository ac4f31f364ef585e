/**
 * The P7 state's shared-memory layout: one table from which the typed views over the P7 core's
 * SharedArrayBuffer are built (src/shm/layout.ts); src/shm/p7-state.ts copies P7State in and out
 * of it, test/rt/shm.test.ts checks it against P7State. Order is free; the builder aligns each
 * field to its element size. Values stay float64, as P7State holds them (error ids are exact).
 */
import { P7_JOINT_COUNT } from "./joints.js";

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
  // jointValid, motorValid, imuValid (0/1), link (LINK_CODE)
  { name: "flags", type: "u8", count: 4 },
] as const;

/** Slots of the `scalars` field. */
export const P7_SCALAR = { seq: 0, timestampMs: 1, epochMs: 2 } as const;
/** Slots of the `flags` field. */
export const P7_FLAG = { jointValid: 0, motorValid: 1, imuValid: 2, link: 3 } as const;
