/**
 * The decoded NAO state of one cycle as a fixed binary record (written into the ring on the
 * perform side, allocation-free) and back as JSON for the `/nao/state` channel (consumer side).
 *
 * Layout, little-endian: f64 seq | f64 timestamp_ms | f64 epoch_ms | f64 battery_temperature_c |
 * f64 head voltage_v, power_w, current_a, face_temperature_c | u8 valid | u8 link | 6 pad |
 * then every array of {@link ARRAYS} as f32 in table order (status too), then the physics
 * simulator's world: `simWorld` as f64 (SIM_WORLD slots) and `simContacts` as f32. Units are the
 * state's (LoLA's order and units; src/bodies/nao/state.ts). The JSON carries `sim` (the robot
 * API's shape) only when a physics world is present.
 */
import { NAO_CONTACT_LINKS } from "../bodies/nao/mjcf.js";
import type { NaoState } from "../bodies/nao/state.js";
import { SCALAR, SIM_CONTACT_SLOTS, SIM_WORLD } from "../bodies/nao/state.js";

type ArrayField =
  | "accelerometer"
  | "gyroscope"
  | "angles"
  | "battery"
  | "fsr"
  | "sonar"
  | "touch"
  | "position"
  | "current"
  | "temperature"
  | "status"
  | "stiffness"
  | "footWeightKg"
  | "centerOfPressureM";

/** [state field, JSON key, length, unit]. */
export const ARRAYS: ReadonlyArray<readonly [ArrayField, string, number, string]> = [
  ["accelerometer", "accelerometer", 3, "m/s², x y z"],
  ["gyroscope", "gyroscope", 3, "rad/s, x y z"],
  ["angles", "angles", 2, "rad, x y"],
  ["battery", "battery", 4, "charge 0..1, status bits, current A, temperature (LoLA's scale)"],
  ["fsr", "fsr", 8, "kg: left FL FR RL RR, right FL FR RL RR"],
  ["sonar", "sonar", 2, "m, left right"],
  ["touch", "touch", 14, "0 or 1, seed order"],
  ["position", "position", 25, "rad (hands 0..1), LoLA order"],
  ["current", "current", 25, "A, LoLA order"],
  ["temperature", "temperature", 25, "°C, LoLA order"],
  ["status", "status", 25, "0..3, LoLA order"],
  ["stiffness", "stiffness", 25, "0..1 as commanded, LoLA order"],
  ["footWeightKg", "foot_weight_kg", 2, "kg, left right"],
  ["centerOfPressureM", "center_of_pressure_m", 4, "m, left x y, right x y"],
];

const LINKS = ["starting", "ok", "degraded", "lost", "stopped"] as const;
const LINK_CODE: Readonly<Record<string, number>> = { starting: 0, ok: 1, degraded: 2, lost: 3, stopped: 4 };
const SCALARS_BYTES = 8 * 8;
const FLAGS_BYTES = 8;
const ARRAYS_BYTES = 4 * ARRAYS.reduce((n, a) => n + a[2], 0);
const SIM_WORLD_SLOTS = Object.keys(SIM_WORLD).length;
export const NAO_STATE_RECORD_BYTES = SCALARS_BYTES + FLAGS_BYTES + ARRAYS_BYTES + 8 * SIM_WORLD_SLOTS + 4 * SIM_CONTACT_SLOTS;

/** Write `s` at `at` in `v` (perform side, no allocation). */
export function writeNaoStateRecord(v: DataView, at: number, s: NaoState): void {
  const sc = s.scalars;
  v.setFloat64(at, s.seq, true);
  v.setFloat64(at + 8, sc[SCALAR.timestampMs]!, true);
  v.setFloat64(at + 16, sc[SCALAR.epochMs]!, true);
  v.setFloat64(at + 24, sc[SCALAR.batteryTemperatureC]!, true);
  v.setFloat64(at + 32, sc[SCALAR.headVoltageV]!, true);
  v.setFloat64(at + 40, sc[SCALAR.headPowerW]!, true);
  v.setFloat64(at + 48, sc[SCALAR.headCurrentA]!, true);
  v.setFloat64(at + 56, sc[SCALAR.faceTemperatureC]!, true);
  v.setUint8(at + 64, s.valid ? 1 : 0);
  v.setUint8(at + 65, LINK_CODE[s.link] ?? 0);
  let q = at + SCALARS_BYTES + FLAGS_BYTES;
  for (let k = 0; k < ARRAYS.length; k++) {
    const a = s[ARRAYS[k]![0]];
    const n = ARRAYS[k]![2];
    for (let i = 0; i < n; i++) {
      v.setFloat32(q, a[i]!, true);
      q += 4;
    }
  }
  for (let i = 0; i < SIM_WORLD_SLOTS; i++) {
    v.setFloat64(q, s.simWorld[i]!, true);
    q += 8;
  }
  for (let i = 0; i < SIM_CONTACT_SLOTS; i++) {
    v.setFloat32(q, s.simContacts[i]!, true);
    q += 4;
  }
}

/** The record at `at` as the `/nao/state` JSON object (consumer side: allocates). */
export function readNaoStateRecord(v: DataView, at: number): Record<string, unknown> {
  const out: Record<string, unknown> = {
    seq: v.getFloat64(at, true),
    timestamp_ms: v.getFloat64(at + 8, true),
    epoch_ms: v.getFloat64(at + 16, true),
    valid: v.getUint8(at + 64) === 1,
    link: LINKS[v.getUint8(at + 65)] ?? "starting",
    battery_temperature_c: v.getFloat64(at + 24, true),
    head: { voltage_v: v.getFloat64(at + 32, true), power_w: v.getFloat64(at + 40, true), current_a: v.getFloat64(at + 48, true), face_temperature_c: v.getFloat64(at + 56, true) },
  };
  let q = at + SCALARS_BYTES + FLAGS_BYTES;
  for (const [, key, n] of ARRAYS) {
    const a: number[] = new Array(n);
    for (let i = 0; i < n; i++) {
      a[i] = v.getFloat32(q, true);
      q += 4;
    }
    out[key] = a;
  }
  if (v.getFloat64(q + 8 * SIM_WORLD.present, true) === 1) {
    const w = (k: keyof typeof SIM_WORLD) => v.getFloat64(q + 8 * SIM_WORLD[k], true);
    const at = q + 8 * SIM_WORLD_SLOTS;
    const contacts: Array<{ link: string; force_n: number }> = [];
    for (let i = 0; i < NAO_CONTACT_LINKS.length; i++) {
      const f = v.getFloat32(at + 4 * i, true);
      if (f > 0) contacts.push({ link: NAO_CONTACT_LINKS[i]!, force_n: f });
    }
    out.sim = {
      time_s: w("timeS"),
      base_position_m: [w("x"), w("y"), w("z")],
      base_orientation_xyzw: [w("qx"), w("qy"), w("qz"), w("qw")],
      fallen: w("fallen") === 1,
      real_time_factor: w("realTimeFactor"),
      contacts,
    };
  }
  return out;
}

/** JSON Schema of the `/nao/state` messages. */
export const NAO_STATE_SCHEMA = {
  type: "object",
  properties: {
    seq: { type: "number" },
    timestamp_ms: { type: "number", description: "runtime clock, ms" },
    epoch_ms: { type: "number" },
    valid: { type: "boolean" },
    link: { type: "string", enum: [...LINKS] },
    battery_temperature_c: { type: "number" },
    head: {
      type: "object",
      properties: { voltage_v: { type: "number" }, power_w: { type: "number" }, current_a: { type: "number" }, face_temperature_c: { type: "number" } },
    },
    ...Object.fromEntries(ARRAYS.map(([, key, n, unit]) => [key, { type: "array", items: { type: "number" }, minItems: n, maxItems: n, description: unit }])),
    sim: {
      type: "object",
      description: "The physics simulator's world (serve --sim physics; docs/simulation.md); absent on a robot and on the kinematic simulator",
      properties: {
        time_s: { type: "number", description: "Simulated time since power-on or the last reset, s" },
        base_position_m: { type: "array", items: { type: "number" }, minItems: 3, maxItems: 3, description: "The torso frame's origin in the world, m (z up, the floor at z = 0)" },
        base_orientation_xyzw: { type: "array", items: { type: "number" }, minItems: 4, maxItems: 4, description: "The torso's orientation in the world, quaternion x y z w" },
        fallen: { type: "boolean", description: "Torso more than 50° from upright, or the torso or head on the floor" },
        real_time_factor: { type: "number", description: "Simulated seconds per real second over the last second" },
        contacts: {
          type: "array",
          description: "Links touching the floor now",
          items: { type: "object", properties: { link: { type: "string", description: "LFoot, RTibia, Head, …" }, force_n: { type: "number", description: "Net contact force, N" } } },
        },
      },
    },
  },
} as const;
