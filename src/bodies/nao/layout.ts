/**
 * The NAO state's shared-memory layout: one table (like a protocol's constants.ts) from which the
 * typed views over the real-time core's SharedArrayBuffer are built (src/shm/layout.ts), the
 * publisher and the reader copy, and test/rt/shm.test.ts checks against NaoState. Order is free;
 * the builder aligns each field to its element size.
 */
export const NAO_STATE_LAYOUT = [
  // NaoState.scalars: timestamp, epoch, battery °C, head V/W/A, face °C (SCALAR slots)
  { name: "scalars", type: "f64", count: 7 },
  // seq, unacknowledgedFrames, readTimeouts, badFrames, boardStatus
  { name: "counters", type: "f64", count: 5 },
  { name: "accelerometer", type: "f32", count: 3 },
  { name: "gyroscope", type: "f32", count: 3 },
  { name: "angles", type: "f32", count: 2 },
  { name: "battery", type: "f32", count: 4 },
  { name: "fsr", type: "f32", count: 8 },
  { name: "sonar", type: "f32", count: 2 },
  { name: "touch", type: "f32", count: 14 },
  { name: "position", type: "f32", count: 25 },
  { name: "current", type: "f32", count: 25 },
  { name: "temperature", type: "f32", count: 25 },
  { name: "stiffness", type: "f32", count: 25 },
  { name: "footWeightKg", type: "f32", count: 2 },
  { name: "centerOfPressureM", type: "f32", count: 4 },
  { name: "status", type: "u8", count: 25 },
  { name: "jointInitialized", type: "u8", count: 25 },
  // valid (0/1), link (LINK_CODE)
  { name: "flags", type: "u8", count: 2 },
  // safety reason: [0] version (changes with the text), [1] byte length; text in reasonText
  { name: "reasonHeader", type: "u32", count: 2 },
  { name: "reasonText", type: "u8", count: 512 },
] as const;

/** Slots of the `counters` field. */
export const NAO_COUNTER = { seq: 0, unacknowledgedFrames: 1, readTimeouts: 2, badFrames: 3, boardStatus: 4 } as const;
