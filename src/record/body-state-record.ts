/**
 * The P7's and the TNY-360's state of every cycle in a recording (/p7/state, /tny360/state).
 *
 * Producer (perform side, allocation-free): the state in its shared-memory layout (the same table
 * and binding that carry it from a worker core to its host: src/shm/p7-state.ts, tny360-state.ts),
 * behind the loop's cycle number (src/shm/state-record.ts). A core in its worker writes it into its
 * own ring; an in-thread robot on the main thread into the tap's; the bytes are the same.
 *
 * Consumer (the recorder): decoded with the binding into a state object, then written as the robot
 * API's state message for that cycle (its envelope, `cycle`, `valid`, and the body's API fields,
 * built by the API's own field function), so a recording reads like the stream, one message per cycle.
 *
 * The P7's commands (/p7/command) are records of their own, written when the arm takes one
 * (P7Robot.onCommand: after validation, with the applied values), in P7_COMMAND_RECORD's layout.
 */
import Type from "typebox";
import type { TObject } from "typebox";
import type { LinkStatus } from "../bodies/link.js";
import { P7_JOINT_COUNT } from "../bodies/p7/joints.js";
import { P7State } from "../bodies/p7/state.js";
import { P7_TAKEN_KIND } from "../runtime/p7-robot.js";
import { snapshotTny360State, Tny360State } from "../bodies/tny360/state.js";
import { P7FieldsSchema, p7Fields } from "../serve/api/bodies/p7.js";
import { TnyFieldsSchema, tnyFields } from "../serve/api/bodies/tny360.js";
import { stateSchema } from "../serve/api/schemas.js";
import { P7_BINDING, P7_STATE_BYTES, type P7Mirror } from "../shm/p7-state.js";
import type { ByteRing } from "../shm/ring.js";
import { StateRecordReader, StateRecordWriter } from "../shm/state-record.js";
import { TNY360_BINDING, TNY360_STATE_BYTES, type Tny360Mirror } from "../shm/tny360-state.js";
import { RING_CHANNEL } from "./channels.js";

export type { P7Mirror, Tny360Mirror };

export const p7StateRecordWriter = (): StateRecordWriter<P7Mirror, typeof P7_BINDING.layout> => new StateRecordWriter(P7_BINDING, P7_STATE_BYTES, RING_CHANNEL.p7State);
export const tny360StateRecordWriter = (): StateRecordWriter<Tny360Mirror, typeof TNY360_BINDING.layout> => new StateRecordWriter(TNY360_BINDING, TNY360_STATE_BYTES, RING_CHANNEL.tny360State);

const perCycle = {
  cycle: Type.Integer({ description: "The runtime's cycle count (health's cycles); `seq` counts the cycles that brought data" }),
  valid: Type.Boolean({ description: "This cycle's state is complete (false while the link is lost: the fields are the last complete ones)" }),
};

function schema(fields: TObject, body: string): TObject {
  return stateSchema(Type.Object({ ...perCycle, ...fields.properties }), `The ${body}'s state of one cycle: the robot API's state message for that cycle`);
}

export const P7_STATE_RECORD_SCHEMA = schema(P7FieldsSchema, "AIRBOT P7");
export const TNY360_STATE_RECORD_SCHEMA = schema(TnyFieldsSchema, "TNY-360");

/** A decoded state record: the JSON message, and the link it carried (the recorder writes link events from it). */
export interface DecodedState {
  readonly message: Record<string, unknown>;
  readonly cycle: number;
  readonly link: LinkStatus;
}

/** Decodes one body's state records (consumer side; allocates). Null for a record of the wrong size. */
export type StateRecordDecoder = (bytes: Uint8Array, offset: number, length: number) => DecodedState | null;

export function p7StateDecoder(): StateRecordDecoder {
  const reader = new StateRecordReader(P7_BINDING, P7_STATE_BYTES);
  const m: P7Mirror = { state: new P7State(), link: "starting" };
  return (bytes, offset, length) => {
    const cycle = reader.read(bytes, offset, length, m);
    if (cycle < 0) return null;
    const s = m.state;
    const valid = s.jointValid && s.motorValid && s.imuValid;
    return { cycle, link: m.link, message: { type: "state", body: "p7", seq: s.seq, timestamp_ms: s.timestampMs, epoch_ms: s.epochMs, link: m.link, cycle, valid, ...p7Fields(s) } };
  };
}

/** `source`: the TNY-360's ("sim" or "remote"; not in the layout: it never changes). */
export function tny360StateDecoder(source: "sim" | "remote"): StateRecordDecoder {
  const reader = new StateRecordReader(TNY360_BINDING, TNY360_STATE_BYTES);
  const m: Tny360Mirror = { state: new Tny360State(source) };
  return (bytes, offset, length) => {
    const cycle = reader.read(bytes, offset, length, m);
    if (cycle < 0) return null;
    const s = m.state;
    return {
      cycle,
      link: s.link,
      message: { type: "state", body: "tny360", seq: s.seq, timestamp_ms: s.timestampMs, epoch_ms: s.epochMs, link: s.link, cycle, valid: s.valid, ...tnyFields(snapshotTny360State(s)) },
    };
  };
}

/**
 * /p7/command's ring payload, little-endian: u8 kind (P7_TAKEN_KIND) | u8 0 | i16 joint (-1:
 * every joint, or not a clearError) | u32 0 | f64 cycle (the loop's count when it was taken; it acts
 * from the next cycle) | f64 × 7 targets, rad | f64 × 7 speed limits, rad/s.
 */
export const P7_COMMAND_RECORD = { kind: 0, joint: 2, cycle: 8, targets: 16, speeds: 16 + 8 * P7_JOINT_COUNT, bytes: 16 + 16 * P7_JOINT_COUNT } as const;

const P7_COMMAND_WORD: Readonly<Record<number, string>> = { [P7_TAKEN_KIND.moveJoints]: "move_joints", [P7_TAKEN_KIND.servoJoints]: "servo_joints", [P7_TAKEN_KIND.clearError]: "clear_error" };

/**
 * Perform side: reserve one command record in `ring` and fill it; its payload offset, or -1
 * (counted) when the ring is full. Its time is 0: set it (RING_TIME_BEFORE_PAYLOAD), then commit.
 */
export function reserveP7Command(ring: ByteRing, cycle: number, kind: number, targetsRad: ArrayLike<number>, speedRadS: ArrayLike<number>, joint: number): number {
  const at = ring.reserve(RING_CHANNEL.p7Command, 0, 0, P7_COMMAND_RECORD.bytes);
  if (at < 0) return -1;
  const v = ring.view;
  v.setUint8(at + P7_COMMAND_RECORD.kind, kind);
  v.setUint8(at + 1, 0);
  v.setInt16(at + P7_COMMAND_RECORD.joint, joint, true);
  v.setUint32(at + 4, 0, true);
  v.setFloat64(at + P7_COMMAND_RECORD.cycle, cycle, true);
  for (let i = 0; i < P7_JOINT_COUNT; i++) {
    v.setFloat64(at + P7_COMMAND_RECORD.targets + 8 * i, targetsRad[i]!, true);
    v.setFloat64(at + P7_COMMAND_RECORD.speeds + 8 * i, speedRadS[i]!, true);
  }
  return at;
}

/** Consumer side: the JSON /p7/command carries, or null for a record of another size. */
export function readP7Command(view: DataView, offset: number, length: number): Record<string, unknown> | null {
  if (length !== P7_COMMAND_RECORD.bytes) return null;
  const kind = view.getUint8(offset + P7_COMMAND_RECORD.kind);
  const cycle = view.getFloat64(offset + P7_COMMAND_RECORD.cycle, true);
  const word = P7_COMMAND_WORD[kind] ?? `kind_${kind}`;
  if (kind === P7_TAKEN_KIND.clearError) {
    const joint = view.getInt16(offset + P7_COMMAND_RECORD.joint, true);
    return { command: word, cycle, joint: joint < 0 ? null : joint };
  }
  const targets: number[] = [];
  const speeds: number[] = [];
  for (let i = 0; i < P7_JOINT_COUNT; i++) {
    targets.push(view.getFloat64(offset + P7_COMMAND_RECORD.targets + 8 * i, true));
    speeds.push(view.getFloat64(offset + P7_COMMAND_RECORD.speeds + 8 * i, true));
  }
  return { command: word, cycle, positions: targets, speed_rad_s: speeds };
}

export const P7_COMMAND_RECORD_SCHEMA = Type.Object(
  {
    command: Type.Union([Type.Literal("move_joints"), Type.Literal("servo_joints"), Type.Literal("clear_error")], {
      description: "The robot API's command route it came through (or the same call on the runtime)",
    }),
    cycle: Type.Integer({ description: "The runtime's cycle count when the arm took it; it acts from the next cycle" }),
    positions: Type.Optional(Type.Array(Type.Number(), { minItems: P7_JOINT_COUNT, maxItems: P7_JOINT_COUNT, description: "Targets, rad, J1..J7 (moves and servo)" })),
    speed_rad_s: Type.Optional(
      Type.Array(Type.Number(), { minItems: P7_JOINT_COUNT, maxItems: P7_JOINT_COUNT, description: "Speed limits applied, rad/s (clamped to each joint's maximum; servo: the maxima)" }),
    ),
    joint: Type.Optional(Type.Union([Type.Integer(), Type.Null()], { description: "clear_error: the joint index, or null for every joint" })),
  },
  { description: "A command the AIRBOT P7 took, with the values it applied" },
);
