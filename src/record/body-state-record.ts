/**
 * The P7's and the TNY-360's state of every cycle in a recording (/p7/state, /tny360/state).
 *
 * Producer (perform side, allocation-free): the state in its shared-memory layout (the same table
 * and binding that carry it from a worker core to its host: src/shm/p7-state.ts, tny360-state.ts),
 * behind the loop's cycle number (src/shm/state-record.ts). A core in its worker writes it into its
 * own ring; a core on the main thread into the tap's; the bytes are the same.
 *
 * Consumer (the recorder): decoded with the binding into a state object, then written as the robot
 * API's state message for that cycle (its envelope, `cycle`, `valid`, and the body's API fields,
 * built by the API's own field function), so a recording reads like the stream, one message per cycle.
 */
import Type from "typebox";
import type { TObject } from "typebox";
import type { LinkStatus } from "../bodies/link.js";
import { P7State } from "../bodies/p7/state.js";
import { snapshotTny360State, Tny360State } from "../bodies/tny360/state.js";
import { P7FieldsSchema, p7Fields } from "../serve/api/bodies/p7.js";
import { TnyFieldsSchema, tnyFields } from "../serve/api/bodies/tny360.js";
import { stateSchema } from "../serve/api/schemas.js";
import { P7_BINDING, P7_STATE_BYTES, type P7Mirror } from "../shm/p7-state.js";
import { StateRecordReader, StateRecordWriter } from "../shm/state-record.js";
import { TNY360_BINDING, TNY360_STATE_BYTES, type Tny360Mirror } from "../shm/tny360-state.js";
import { RING_CHANNEL } from "./channels.js";

export type { P7Mirror, Tny360Mirror };

export const p7StateRecordWriter = (): StateRecordWriter<P7Mirror, typeof P7_BINDING.layout> => new StateRecordWriter(P7_BINDING, P7_STATE_BYTES, RING_CHANNEL.p7State);
export const tny360StateRecordWriter = (): StateRecordWriter<Tny360Mirror, typeof TNY360_BINDING.layout> =>
  new StateRecordWriter(TNY360_BINDING, TNY360_STATE_BYTES, RING_CHANNEL.tny360State);

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
