/**
 * The robot API's NAO adapter: NaoState (LoLA's arrays, order and units) → the API's converted
 * state (docs/api.md, units), and the NAO command routes.
 *
 * Conversions, all here and nowhere else:
 * - joint arrays go from LoLA's order (25) to the API's order (26, NAOqi's Body chain, with
 *   RHipYawPitch reading the one HipYawPitch motor that LoLA calls LHipYawPitch), via API_TO_LOLA;
 * - `battery.temperature` is LoLA's scale on the stream (the 0.1 factor applied twice, 28.5 °C
 *   reads 2.8) and whole degrees Celsius on REST, as docs/api.md says; `battery.charging` is
 *   `current > 0`;
 * - `touch` folds LoLA's 14 sensors into booleans, one per hand and per foot (any of its sensors);
 * - `joint_velocities` are estimated (the NAO has no velocity sensor): the finite difference of
 *   two consecutive fresh states' positions, rad/s, computed by the runtime in its cycle
 *   (`NaoState.velocity`), so the adapter reads it on demand and listens to no cycle.
 *
 * Commands arrive in the API's order and are mapped to LoLA keys for `NaoBody.command` (NaoRobot, or NaoHost for a core in a worker). Joint
 * positions outside the limits are **clamped** (the answer lists what was clamped); stiffness and
 * LED values are clamped to 0..1; wrong lengths, NaN and ±Infinity are refused by the schema
 * (400) before the robot sees them. RHipYawPitch: one motor drives both hip yaw-pitch joints, so
 * LHipYawPitch's value is used and a differing RHipYawPitch is reported in `notes`.
 *
 * Prepare side (allocates); nothing here runs per cycle.
 */
import Type, { type TArray, type TNumber, type TOptional, type TSchema } from "typebox";
import { BodylinkError } from "../../../errors.js";
import { API_JOINT_COUNT, API_ORDER, API_TO_LOLA, JOINT_LIMITS, LOLA_JOINT_COUNT, LOLA_ORDER, pastLimit } from "../../../bodies/nao/joints.js";
import type { NaoCommandUpdate } from "../../../bodies/nao/commands.js";
import type { NaoPreferences } from "../../../bodies/nao/prefs.js";
import type { NaoBody } from "../../../runtime/nao-body.js";
import type { BoardReport } from "../../../transport/chestboard-link.js";
import type { BodyAdapter, BodyFields, CommandOutcome, CommandRoute, ReadRoute, SourceStamp, StateView } from "../adapter.js";
import { numbers } from "../schemas.js";
import { NAO_CONTACT_LINKS } from "../../../bodies/nao/mjcf.js";
import { type NaoState, SIM_WORLD } from "../../../bodies/nao/state.js";
import { NAO_SIM_POSES } from "../../../bodies/nao/sim-world.js";
import { type SimWorldAnswer, SimWorldSchema, simResetRoute, simWorldAnswer } from "./sim-world.js";
import { AdapterBase, f32, f32Array, intArray } from "./common.js";

/** For each LoLA index, the API index of the same joint (LHipYawPitch → API 8). */
const LOLA_TO_API: Int8Array = Int8Array.from(LOLA_ORDER, (n) => API_ORDER.indexOf(n));
const API_L_HYP = API_ORDER.indexOf("LHipYawPitch");
const API_R_HYP = API_ORDER.indexOf("RHipYawPitch");

/** LoLA touch indexes (docs/api.md) folded per part. */
const TOUCH = {
  chest_button: [0],
  head_front: [1],
  head_middle: [2],
  head_rear: [3],
  left_foot: [4, 5],
  left_hand: [6, 7, 8],
  right_foot: [9, 10],
  right_hand: [11, 12, 13],
} as const;
type TouchPart = keyof typeof TOUCH;
const TOUCH_PARTS = Object.keys(TOUCH) as TouchPart[];

/** LED groups: API name → LoLA key and length (lola.md §5.1; each group keeps LoLA's index order). */
const LEDS = {
  chest: { key: "Chest", n: 3, doc: "R, G, B" },
  left_ear: { key: "LEar", n: 10, doc: "segment i at 36·i degrees" },
  right_ear: { key: "REar", n: 10, doc: "segment i at 324 − 36·i degrees (LoLA's REar order: 324°, 288°, …, 0°)" },
  left_eye: { key: "LEye", n: 24, doc: "R×8, G×8, B×8; within each colour 45°, 0°, 315°, 270°, 225°, 180°, 135°, 90°" },
  right_eye: { key: "REye", n: 24, doc: "R×8, G×8, B×8; within each colour 0°, 45°, 90°, …, 315°" },
  left_foot: { key: "LFoot", n: 3, doc: "R, G, B" },
  right_foot: { key: "RFoot", n: 3, doc: "R, G, B" },
  skull: { key: "Skull", n: 12, doc: "LoLA's skull order (lola.md §5.2)" },
} as const;
type LedName = keyof typeof LEDS;
const LED_NAMES = Object.keys(LEDS) as LedName[];

const jointNote = `${API_JOINT_COUNT} values in the API's joint order (NAOqi's Body order, GET /v1/info joint_names)`;

/** The `sim` field from the state, or undefined without a physics world. */
function naoSimWorld(s: NaoState): SimWorldAnswer | undefined {
  if (s.simWorld[SIM_WORLD.present] !== 1) return undefined;
  const contacts: Array<{ link: string; force_n: number }> = [];
  for (let i = 0; i < NAO_CONTACT_LINKS.length; i++) if (s.simContacts[i]! > 0) contacts.push({ link: NAO_CONTACT_LINKS[i]!, force_n: f32(s.simContacts[i]!) });
  return simWorldAnswer(s.simWorld, contacts);
}

function naoFieldsSchema(view: StateView) {
  return Type.Object({
    battery: Type.Object({
      charge: Type.Number({ description: "0..1" }),
      current: Type.Number({ description: "A, negative while discharging" }),
      temperature:
        view === "stream"
          ? Type.Number({ description: "LoLA's scale: the 0.1 factor applied twice, so 28.5 °C reads 2.8 (REST gives whole °C)" })
          : Type.Integer({ description: "°C, whole degrees (the stream gives LoLA's scale)" }),
      charging: Type.Boolean({ description: "true when the current is above 0" }),
      status: Type.Integer({ description: "The battery's status register bit field, raw" }),
    }),
    imu: Type.Object({
      linear_acceleration: numbers(3, "m/s², x y z"),
      angular_velocity: numbers(3, "rad/s, x y z"),
      roll_pitch: numbers(2, "rad, the inertial unit's own estimate with the preference offsets"),
    }),
    sonar: numbers(2, "m, left and right (first echo)"),
    left_foot_pressure: numbers(4, "kg: front left, front right, rear left, rear right"),
    right_foot_pressure: numbers(4, "kg: front left, front right, rear left, rear right"),
    foot_weight: Type.Object({ left: Type.Number({ description: "kg" }), right: Type.Number({ description: "kg" }) }),
    center_of_pressure: Type.Object({ left: numbers(2, "m, x y in the left ankle frame"), right: numbers(2, "m, x y in the right ankle frame") }, { description: "0 when the foot is unloaded" }),
    touch: Type.Object(Object.fromEntries(TOUCH_PARTS.map((p) => [p, Type.Boolean()])) as Record<TouchPart, ReturnType<typeof Type.Boolean>>, {
      description: "true while touched; each hand and each foot is one value (any of its sensors)",
    }),
    joint_positions: numbers(API_JOINT_COUNT, `rad (hands 0..1, 0 closed), ${jointNote}`),
    joint_velocities: numbers(API_JOINT_COUNT, `rad/s, estimated from two consecutive cycles (the NAO has no velocity sensor), ${jointNote}`),
    joint_currents: numbers(API_JOINT_COUNT, `A, ${jointNote}`),
    joint_temperatures: numbers(API_JOINT_COUNT, `°C (steps of 2 °C), ${jointNote}`),
    joint_status: Type.Array(Type.Integer({ minimum: 0, maximum: 3 }), {
      minItems: API_JOINT_COUNT,
      maxItems: API_JOINT_COUNT,
      description: `Temperature status: 0 normal, 1 above the minimum, 2 near the maximum, 3 at the maximum; ${jointNote}`,
    }),
    joint_stiffness: numbers(API_JOINT_COUNT, `0..1, the stiffness commanded this cycle (not measured), ${jointNote}`),
    sim: Type.Optional(SimWorldSchema),
    head: Type.Object({
      voltage: Type.Number({ description: "V (INA230)" }),
      power: Type.Number({ description: "W (INA230)" }),
      current: Type.Number({ description: "A (INA230)" }),
      face_temperature: Type.Number({ description: "°C (TMP100), 0 until the first reading" }),
    }),
  });
}

/** The NAO's state fields on the stream (battery temperature in LoLA's scale) and in GET /v1/state. */
export const NaoStreamFieldsSchema = naoFieldsSchema("stream");
export const NaoRestFieldsSchema = naoFieldsSchema("rest");

const JointsCommandSchema = Type.Object(
  {
    positions: Type.Optional(numbers(API_JOINT_COUNT, `Targets, rad (hands 0..1), ${jointNote}; outside the limits → clamped`)),
    stiffness: Type.Optional(numbers(API_JOINT_COUNT, `0..1 (clamped), ${jointNote}`)),
  },
  { additionalProperties: false, minProperties: 1 },
);
type JointsCommand = { positions?: number[]; stiffness?: number[] };

const LedsCommandSchema = Type.Object(
  Object.fromEntries(LED_NAMES.map((g) => [g, Type.Optional(numbers(LEDS[g].n, `0..1 (clamped); ${LEDS[g].doc}`))])) as Record<LedName, TOptional<TArray<TNumber>>>,
  { additionalProperties: false, minProperties: 1 },
);
type LedsCommand = Partial<Record<LedName, number[]>>;

const SonarCommandSchema = Type.Object({ left: Type.Boolean(), right: Type.Boolean() }, { additionalProperties: false, description: "Sonar transmitters on or off" });

const Clamped = Type.Array(Type.Object({ joint: Type.String(), field: Type.String(), requested: Type.Number(), applied: Type.Number() }), {
  description: "Values outside their limits, clamped to the limit",
});
export const AppliedResultSchema = Type.Object({
  applied: Type.Array(Type.String(), { description: "The fields that took effect" }),
  clamped: Clamped,
  notes: Type.Array(Type.String()),
});
const PrefsSchema = Type.Object({
  body_id: Type.String(),
  body_version: Type.String(),
  serials: Type.Record(Type.String(), Type.Integer(), { description: "Stored serial number per board name" }),
  values: Type.Array(Type.Object({ key: Type.String(), value: Type.Union([Type.Number(), Type.String()]), unit: Type.String() }), { description: "All 76 entries in the block's order, with units" }),
});

export function prefsAnswer(p: NaoPreferences) {
  return {
    body_id: p.bodyId,
    body_version: p.bodyVersion,
    serials: Object.fromEntries(p.serials),
    values: p.values.map((v) => ({ key: v.key, value: v.value, unit: v.unit })),
  };
}

const nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const BoardSchema = Type.Object({
  name: Type.String(),
  bus: Type.Integer(),
  address: Type.Integer(),
  type: Type.String(),
  accepted: Type.Boolean(),
  reason: nullable(Type.String({ description: "Why the board was rejected" })),
  attempts: Type.Integer(),
  serial: nullable(Type.Integer()),
  stored_serial: nullable(Type.Integer({ description: "The serial stored in the preferences" })),
  serial_mismatch: Type.Boolean(),
  config_version: nullable(Type.Integer()),
  hardware_revision: nullable(Type.Integer()),
  board_type: nullable(Type.Integer()),
  started: Type.Boolean(),
});

export function boardAnswer(b: BoardReport) {
  return {
    name: b.name,
    bus: b.bus,
    address: b.address,
    type: b.type,
    accepted: b.accepted,
    reason: b.reason,
    attempts: b.attempts,
    serial: b.serial,
    stored_serial: b.storedSerial,
    serial_mismatch: b.serialMismatch,
    config_version: b.configVersion,
    hardware_revision: b.hardwareRevision,
    board_type: b.boardType,
    started: b.started,
  };
}

const SmoothResult = Type.Object({ estimated_s: Type.Number({ description: "Estimated seconds until the posture is reached" }) });

export class NaoAdapter extends AdapterBase<NaoBody> implements BodyAdapter {
  readonly kind = "nao" as const;
  readonly jointNames: readonly string[] = API_ORDER;
  readonly schemas = { stream: NaoStreamFieldsSchema, rest: NaoRestFieldsSchema };
  readonly reads: readonly ReadRoute[];
  readonly commands: readonly CommandRoute[];
  constructor(robot: NaoBody) {
    super(robot);
    this.reads = [
      {
        path: "/v1/preferences",
        summary: "The chest board's decoded preference block (76 values, CRC-checked)",
        description: "503 BL_ERR_STATE_NONE until the runtime has started and read the block; 404 BL_ERR_PREFS_UNAVAILABLE on a body link that has none (on top of an upstream LoLA).",
        response: PrefsSchema,
        get: () => {
          if (robot.prefs) return prefsAnswer(robot.prefs);
          const why = robot.prefsUnavailable;
          return why ? new BodylinkError("BL_ERR_PREFS_UNAVAILABLE", why) : new BodylinkError("BL_ERR_STATE_NONE");
        },
      },
      {
        path: "/v1/boards",
        summary: "Motor-board handshake results, one per board (empty before start)",
        response: Type.Array(BoardSchema),
        get: () => robot.boards.map(boardAnswer),
      },
    ];
    const joints: CommandRoute<JointsCommand> = {
      path: "/v1/commands/joints",
      summary: "Set joint targets: positions and/or stiffness (26 values each, API order)",
      description:
        "Positions outside the joint limits are clamped to the limit and listed in `clamped`; stiffness is clamped to 0..1. " +
        "RHipYawPitch shares its motor with LHipYawPitch: LHipYawPitch's value is used. The targets stay in force while the lease is held.",
      request: JointsCommandSchema,
      response: AppliedResultSchema,
      handle: (leaseId, body) => this.#joints(leaseId, body),
    };
    const leds: CommandRoute<LedsCommand> = {
      path: "/v1/commands/leds",
      summary: "Set LED intensities per group (0..1, LoLA's index order per group)",
      request: LedsCommandSchema,
      response: AppliedResultSchema,
      handle: (leaseId, body) => this.#leds(leaseId, body),
    };
    const sonar: CommandRoute<{ left: boolean; right: boolean }> = {
      path: "/v1/commands/sonar",
      summary: "Switch the sonar transmitters on or off",
      request: SonarCommandSchema,
      response: AppliedResultSchema,
      handle: (leaseId, body) => this.#apply(leaseId, { Sonar: [body.left, body.right] }, ["sonar"], []),
    };
    const smooth = (enable: boolean): CommandRoute<Record<string, never>> => ({
      path: enable ? "/v1/commands/smooth-enable" : "/v1/commands/smooth-disable",
      summary: enable ? "Ramp stiffness up and move to the stand posture; answers the estimated seconds" : "Move to the rest posture, then turn stiffness off; answers the estimated seconds",
      request: Type.Object({}, { additionalProperties: false }),
      response: SmoothResult,
      handle: async (leaseId) => {
        const r = await (enable ? robot.smoothEnable(leaseId) : robot.smoothDisable(leaseId));
        return r.ok ? { ok: true, result: { estimated_s: r.estimatedS } } : r;
      },
    });
    const simReset = simResetRoute(
      NAO_SIM_POSES,
      "stand (the zero posture), crouch (the rest posture) or lying (on its back)",
      "the joint targets become the pose, held at the stiffness last commanded.",
      (leaseId, pose) => robot.simReset(leaseId, pose),
    );
    this.commands = [joints, leds, sonar, smooth(true), smooth(false), simReset] as CommandRoute[];
  }

  source(): SourceStamp | null {
    const s = this.body.state;
    // Once a state was decoded, keep serving it with its link status (lost/stopped included), so
    // clients see why values stopped changing; the SDK returns null unless the link is ok/degraded.
    if (s.seq === 0) return null;
    return { seq: s.seq, timestampMs: s.timestampMs, epochMs: s.epochMs, link: s.link };
  }

  read(view: StateView): BodyFields | null {
    const s = this.body.state;
    if (s.seq === 0) return null;
    const b = s.battery;
    const touch = {} as Record<TouchPart, boolean>;
    for (const p of TOUCH_PARTS) touch[p] = TOUCH[p].some((i) => s.touch[i]! > 0.5);
    return {
      battery: {
        charge: f32(b[0]!),
        current: f32(b[2]!),
        temperature: view === "stream" ? f32(b[3]!) : Math.round(s.batteryTemperatureC),
        charging: b[2]! > 0,
        status: Math.trunc(b[1]!),
      },
      imu: {
        linear_acceleration: f32Array(s.accelerometer),
        angular_velocity: f32Array(s.gyroscope),
        roll_pitch: f32Array(s.angles),
      },
      sonar: f32Array(s.sonar),
      left_foot_pressure: f32Array(s.fsr.subarray(0, 4)),
      right_foot_pressure: f32Array(s.fsr.subarray(4, 8)),
      foot_weight: { left: f32(s.footWeightKg[0]!), right: f32(s.footWeightKg[1]!) },
      center_of_pressure: { left: f32Array(s.centerOfPressureM.subarray(0, 2)), right: f32Array(s.centerOfPressureM.subarray(2, 4)) },
      touch,
      joint_positions: f32Array(s.position, API_TO_LOLA),
      joint_velocities: f32Array(s.velocity, API_TO_LOLA),
      joint_currents: f32Array(s.current, API_TO_LOLA),
      joint_temperatures: f32Array(s.temperature, API_TO_LOLA),
      joint_status: intArray(s.status, API_TO_LOLA),
      joint_stiffness: f32Array(s.stiffness, API_TO_LOLA),
      ...(s.simWorld[SIM_WORLD.present] === 1 ? { sim: naoSimWorld(s) } : {}),
      head: {
        voltage: f32(s.head.voltageV),
        power: f32(s.head.powerW),
        current: f32(s.head.currentA),
        face_temperature: f32(s.head.faceTemperatureC),
      },
    };
  }

  #joints(leaseId: string, body: JointsCommand): CommandOutcome {
    const update: NaoCommandUpdate = {};
    const applied: string[] = [];
    const clamped: Array<{ joint: string; field: string; requested: number; applied: number }> = [];
    const notes: string[] = [];
    if (body.positions) {
      const p = body.positions;
      for (let i = 0; i < API_JOINT_COUNT; i++) {
        if (i === API_R_HYP) continue;
        const name = API_ORDER[i]!;
        const limit = JOINT_LIMITS[name];
        const { minRad, maxRad } = limit;
        const v = p[i]!;
        if (pastLimit(limit, v)) clamped.push({ joint: name, field: "positions", requested: v, applied: Math.min(maxRad, Math.max(minRad, v)) });
      }
      if (Math.abs(p[API_R_HYP]! - p[API_L_HYP]!) > 1e-6) {
        notes.push(`RHipYawPitch (${p[API_R_HYP]}) differs from LHipYawPitch (${p[API_L_HYP]}): one motor drives both, LHipYawPitch's value was used`);
      }
      update.Position = toLola(p);
      applied.push("positions");
    }
    if (body.stiffness) {
      const st = body.stiffness;
      for (let i = 0; i < API_JOINT_COUNT; i++) {
        if (i === API_R_HYP) continue;
        const v = st[i]!;
        if (v < 0 || v > 1) clamped.push({ joint: API_ORDER[i]!, field: "stiffness", requested: v, applied: Math.min(1, Math.max(0, v)) });
      }
      if (Math.abs(st[API_R_HYP]! - st[API_L_HYP]!) > 1e-6) {
        notes.push("RHipYawPitch stiffness differs from LHipYawPitch's: one motor drives both, LHipYawPitch's value was used");
      }
      update.Stiffness = toLola(st);
      applied.push("stiffness");
    }
    return this.#apply(leaseId, update, applied, clamped, notes);
  }

  #leds(leaseId: string, body: LedsCommand): CommandOutcome {
    const update: Record<string, number[]> = {};
    const applied: string[] = [];
    const clamped: Array<{ joint: string; field: string; requested: number; applied: number }> = [];
    for (const g of LED_NAMES) {
      const v = body[g];
      if (!v) continue;
      update[LEDS[g].key] = v;
      applied.push(g);
      for (let i = 0; i < v.length; i++) {
        if (v[i]! < 0 || v[i]! > 1) clamped.push({ joint: `${g}[${i}]`, field: "leds", requested: v[i]!, applied: Math.min(1, Math.max(0, v[i]!)) });
      }
    }
    return this.#apply(leaseId, update as NaoCommandUpdate, applied, clamped);
  }

  #apply(leaseId: string, update: NaoCommandUpdate, applied: string[], clamped: Array<{ joint: string; field: string; requested: number; applied: number }>, notes: string[] = []): CommandOutcome {
    const r = this.body.command(leaseId, update);
    if (!r.ok) return r;
    if (r.problems.length > 0) {
      // The schema already checked lengths and finiteness, so this is the runtime refusing a key.
      const e = new BodylinkError("BL_ERR_CMD_INVALID", r.problems.map((p) => `${p.key}: ${p.reason}`).join("; "));
      return { ok: false, error: Object.assign(e, { problems: r.problems }) };
    }
    return { ok: true, result: { applied, clamped, notes } };
  }
}

/** 26 API-order values → 25 LoLA-order values (LHipYawPitch's value for the shared motor). */
function toLola(api: readonly number[]): number[] {
  const out = new Array<number>(LOLA_JOINT_COUNT);
  for (let l = 0; l < LOLA_JOINT_COUNT; l++) out[l] = api[LOLA_TO_API[l]!]!;
  return out;
}
