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
  { name: "velocity", type: "f32", count: 25 },
  { name: "current", type: "f32", count: 25 },
  { name: "temperature", type: "f32", count: 25 },
  { name: "stiffness", type: "f32", count: 25 },
  { name: "footWeightKg", type: "f32", count: 2 },
  { name: "centerOfPressureM", type: "f32", count: 4 },
  { name: "status", type: "u8", count: 25 },
  { name: "jointInitialized", type: "u8", count: 25 },
  // a physics simulator's world (NaoState.simWorld, SIM_WORLD slots) and floor contacts
  { name: "simWorld", type: "f64", count: 11 },
  { name: "simContacts", type: "f32", count: 16 },
  // valid (0/1), link (LINK_CODE), safety (SAFETY_CODE)
  { name: "flags", type: "u8", count: 3 },
  // safety reason: [0] version (changes with the text), [1] byte length; text in reasonText
  { name: "reasonHeader", type: "u32", count: 2 },
  { name: "reasonText", type: "u8", count: 512 },
] as const;

/** Slots of the `counters` field. */
export const NAO_COUNTER = { seq: 0, unacknowledgedFrames: 1, readTimeouts: 2, badFrames: 3, boardStatus: 4 } as const;

/**
 * One slot of the NAO command mailbox (src/shm/mailbox.ts): a command the host validated (lengths,
 * NaN/Infinity, limits clamped, lease held) in LoLA's keys, order and units. `header[0]` is the
 * mask of keys present (NAO_COMMAND_KEY), `header[1]` the lease generation it was validated under
 * (the core drops it when the holder changed since).
 */
export const NAO_COMMAND_LAYOUT = [
  { name: "header", type: "u32", count: 2 },
  { name: "Position", type: "f32", count: 25 },
  { name: "Stiffness", type: "f32", count: 25 },
  { name: "Chest", type: "f32", count: 3 },
  { name: "LEar", type: "f32", count: 10 },
  { name: "REar", type: "f32", count: 10 },
  { name: "LEye", type: "f32", count: 24 },
  { name: "REye", type: "f32", count: 24 },
  { name: "LFoot", type: "f32", count: 3 },
  { name: "RFoot", type: "f32", count: 3 },
  { name: "Skull", type: "f32", count: 12 },
  { name: "Sonar", type: "u8", count: 2 },
] as const;

/** Bits of a mailbox slot's key mask, one per LoLA command key. */
export const NAO_COMMAND_KEY = {
  Position: 1 << 0,
  Stiffness: 1 << 1,
  Chest: 1 << 2,
  LEar: 1 << 3,
  REar: 1 << 4,
  LEye: 1 << 5,
  REye: 1 << 6,
  LFoot: 1 << 7,
  RFoot: 1 << 8,
  Skull: 1 << 9,
  Sonar: 1 << 10,
} as const;
