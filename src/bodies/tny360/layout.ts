/**
 * The TNY-360 state's shared-memory layout: one table from which the typed views over the
 * TNY-360 core's SharedArrayBuffer are built (src/shm/layout.ts); src/shm/tny360-state.ts copies
 * Tny360State in and out of it, test/rt/shm.test.ts checks it against Tny360State. Arrays keep
 * Tny360State's element types (float32 joints, u8 bits); scalars are float64.
 */
import { JOINT_COUNT, LEG_COUNT } from "../../wire/tny/constants.js";

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
