/**
 * The recording's channels: one table (like a protocol's constants.ts) that the tap, the
 * recorder, `--info`, verify, replay, the Foxglove server and docs/recordings.md all read.
 *
 * `ring` is the channel's number in the {@link ByteRing} records the real-time side writes;
 * `topic`, `messageEncoding` and `schema` are what the MCAP file (and Foxglove) see. Raw channels
 * carry the bytes exactly as they crossed the wire and have no schema (MCAP schema id 0); their
 * formats are in docs/recordings.md. JSON channels declare a JSON Schema so that Foxglove plots
 * fields by name.
 */

import { BODY_KINDS, type BodyKind } from "../bodies/registry.js";
import { FRAME_TRANSFORMS_SCHEMA_NAME, LOG_SCHEMA_NAME, SCENE_UPDATE_SCHEMA_NAME } from "./foxglove-schemas.js";

export const RECORDING_PROFILE = "bodylink";
/** Bumped when a channel's payload format changes incompatibly. */
export const RECORDING_FORMAT_VERSION = 1;

export const RING_CHANNEL = {
  /** A chest-board command frame, as handed to bulk OUT (the whole frame, CRC trailer included). */
  chestOut: 1,
  /** A chest-board answer frame, as bulk IN returned it. */
  chestIn: 2,
  /** Every other chest-board transfer: vendor requests (ack 0x14, status 0x15) and failed transfers. */
  chestTransfer: 3,
  /** The 896-byte LoLA sensor message the LoLA server wrote this cycle. */
  lolaSensor: 4,
  /** Bytes a LoLA client sent, as received (flags: the client's number). */
  lolaCommand: 5,
  /** The decoded NAO state of one cycle, in the binary layout of nao-state-record.ts. */
  naoState: 6,
  /** The robot API's state message (the 20 Hz stream's JSON), UTF-8. */
  apiState: 7,
  /** A runtime event, UTF-8 JSON. */
  event: 8,
  /** A LoLA sensor message as received from an upstream LoLA (bodylink as LoLA's client). */
  lolaUpstreamSensor: 9,
  /** Bytes sent to an upstream LoLA. */
  lolaUpstreamCommand: 10,
  /** The P7's state of one cycle: f64 cycle, then the P7 state layout (src/shm/state-record.ts). */
  p7State: 11,
  /** The TNY-360's state of one cycle: f64 cycle, then the TNY-360 state layout. */
  tny360State: 12,
  /** A command the P7 took (P7Robot.onCommand): the layout of P7_COMMAND_RECORD (body-state-record.ts). */
  p7Command: 13,
  /** A binary frame a TNY-360 API client sent, as received (flags: the connection's number). */
  tnyRequest: 14,
  /** A reply the TNY-360 API server sent, as sent (flags: the connection's number). */
  tnyReply: 15,
  // The robot in the viewers' 3D panel (viewer-3d.ts): written by the recorder from the decoded
  // states, never through a ring; numbered here so every channel has one id.
  /** The NAO's link frames, foxglove.FrameTransforms. */
  naoTf: 16,
  /** The NAO's shapes, foxglove.SceneUpdate. */
  naoScene: 17,
  /** The P7's link frames. */
  p7Tf: 18,
  /** The P7's shapes. */
  p7Scene: 19,
  /** The TNY-360's link frames. */
  tny360Tf: 20,
  /** The TNY-360's shapes. */
  tny360Scene: 21,
  /** The runtime's events again as foxglove.Log (the viewers' Log panel), written by the recorder beside each event. */
  log: 22,
} as const;
export type RingChannel = (typeof RING_CHANNEL)[keyof typeof RING_CHANNEL];

/** `chestTransfer` payload: u8 op | u8 request | i32 result (LE) | the bytes transferred. */
export const TRANSFER_OP = { bulkOut: 1, vendorIn: 2, bulkIn: 3 } as const;
export const TRANSFER_OP_NAME: Readonly<Record<number, string>> = { 1: "bulk_out", 2: "vendor_in", 3: "bulk_in" };
export const TRANSFER_HEADER_BYTES = 6;

export interface ChannelSpec {
  readonly ring: RingChannel;
  readonly topic: string;
  readonly messageEncoding: string;
  /** JSON Schema (as an object) for JSON channels; null for raw ones. */
  readonly schemaName: string | null;
  readonly description: string;
}

const RAW_FRAME = "bodylink.chestboard.frame";
const RAW_LOLA = "bodylink.lola.msgpack";
const RAW_TNY = "bodylink.tny.frame";

export const CHANNELS: readonly ChannelSpec[] = [
  { ring: RING_CHANNEL.chestOut, topic: "/nao/chestboard/out", messageEncoding: RAW_FRAME, schemaName: null, description: "command frames, bulk OUT EP1, as sent" },
  { ring: RING_CHANNEL.chestIn, topic: "/nao/chestboard/in", messageEncoding: RAW_FRAME, schemaName: null, description: "answer frames, bulk IN EP1, as received" },
  {
    ring: RING_CHANNEL.chestTransfer,
    topic: "/nao/chestboard/transfer",
    messageEncoding: "json",
    schemaName: "bodylink.ChestTransfer",
    description: "vendor requests (ack, status) and failed transfers",
  },
  { ring: RING_CHANNEL.lolaSensor, topic: "/lola/sensor", messageEncoding: RAW_LOLA, schemaName: null, description: "LoLA sensor messages as sent (896 bytes, MessagePack)" },
  { ring: RING_CHANNEL.lolaCommand, topic: "/lola/command", messageEncoding: RAW_LOLA, schemaName: null, description: "bytes LoLA clients sent, as received" },
  { ring: RING_CHANNEL.naoState, topic: "/nao/state", messageEncoding: "json", schemaName: "bodylink.NaoState", description: "the decoded state, every cycle" },
  { ring: RING_CHANNEL.apiState, topic: "/api/state", messageEncoding: "json", schemaName: "bodylink.ApiState", description: "the robot API's state message (20 Hz)" },
  { ring: RING_CHANNEL.event, topic: "/events", messageEncoding: "json", schemaName: "bodylink.Event", description: "runtime events: handshake, leases, e-stops, late cycles, faults, recording gaps" },
  { ring: RING_CHANNEL.lolaUpstreamSensor, topic: "/lola/upstream/sensor", messageEncoding: RAW_LOLA, schemaName: null, description: "LoLA sensor messages as received from an upstream LoLA" },
  { ring: RING_CHANNEL.lolaUpstreamCommand, topic: "/lola/upstream/command", messageEncoding: RAW_LOLA, schemaName: null, description: "bytes sent to an upstream LoLA" },
  {
    ring: RING_CHANNEL.p7State,
    topic: "/p7/state",
    messageEncoding: "json",
    schemaName: "bodylink.P7State",
    description: "the arm's state, every cycle (the API's state fields, with the loop's cycle)",
  },
  {
    ring: RING_CHANNEL.p7Command,
    topic: "/p7/command",
    messageEncoding: "json",
    schemaName: "bodylink.P7Command",
    description: "every command the arm took: moves, servo targets, cleared errors (applied values)",
  },
  { ring: RING_CHANNEL.tnyRequest, topic: "/tny360/api/request", messageEncoding: RAW_TNY, schemaName: null, description: "frames TNY-360 API clients sent, as received (docs/protocol/tny360.md §2)" },
  { ring: RING_CHANNEL.tnyReply, topic: "/tny360/api/reply", messageEncoding: RAW_TNY, schemaName: null, description: "replies the TNY-360 API server sent" },
  {
    ring: RING_CHANNEL.tny360State,
    topic: "/tny360/state",
    messageEncoding: "json",
    schemaName: "bodylink.Tny360State",
    description: "the quadruped's state, every cycle (the API's state fields, with the loop's cycle)",
  },
  {
    ring: RING_CHANNEL.naoTf,
    topic: "/nao/tf",
    messageEncoding: "json",
    schemaName: FRAME_TRANSFORMS_SCHEMA_NAME,
    description: "every link's pose from the kinematics, 20 Hz (the 3D panel); with --sim physics rooted at world, the torso where the simulator has it",
  },
  {
    ring: RING_CHANNEL.naoScene,
    topic: "/nao/scene",
    messageEncoding: "json",
    schemaName: SCENE_UPDATE_SCHEMA_NAME,
    description: "the body's shapes on its link frames, every second (the 3D panel); with --sim physics the ground too, and the floor contacts (and a fall) at 20 Hz",
  },
  { ring: RING_CHANNEL.p7Tf, topic: "/p7/tf", messageEncoding: "json", schemaName: FRAME_TRANSFORMS_SCHEMA_NAME, description: "every link's pose from the kinematics, 20 Hz (the 3D panel)" },
  { ring: RING_CHANNEL.p7Scene, topic: "/p7/scene", messageEncoding: "json", schemaName: SCENE_UPDATE_SCHEMA_NAME, description: "the arm's shapes on its link frames, every second (the 3D panel)" },
  { ring: RING_CHANNEL.tny360Tf, topic: "/tny360/tf", messageEncoding: "json", schemaName: FRAME_TRANSFORMS_SCHEMA_NAME, description: "every link's pose from the kinematics, 20 Hz (the 3D panel)" },
  { ring: RING_CHANNEL.log, topic: "/log", messageEncoding: "json", schemaName: LOG_SCHEMA_NAME, description: "every event of /events as a log line with a level (the Log panel)" },
  {
    ring: RING_CHANNEL.tny360Scene,
    topic: "/tny360/scene",
    messageEncoding: "json",
    schemaName: SCENE_UPDATE_SCHEMA_NAME,
    description: "the body's shapes on its link frames, every second (the 3D panel)",
  },
];

/** Per body, the 3D panel's channels (viewer-3d.ts). */
export const VIEWER_3D_CHANNELS: { readonly [K in BodyKind]: { readonly tf: RingChannel; readonly scene: RingChannel } } = {
  nao: { tf: RING_CHANNEL.naoTf, scene: RING_CHANNEL.naoScene },
  p7: { tf: RING_CHANNEL.p7Tf, scene: RING_CHANNEL.p7Scene },
  tny360: { tf: RING_CHANNEL.tny360Tf, scene: RING_CHANNEL.tny360Scene },
};

/** Per body, the first segments of its topics (/lola/ is the NAO's protocol). */
export const BODY_TOPIC_PREFIXES: { readonly [K in BodyKind]: readonly string[] } = {
  nao: ["/nao/", "/lola/"],
  p7: ["/p7/"],
  tny360: ["/tny360/"],
};

/** Which body a body-specific channel belongs to (by its topic's first segment), or null for the shared ones. */
export function channelBody(topic: string): BodyKind | null {
  for (const kind of BODY_KINDS) if (BODY_TOPIC_PREFIXES[kind].some((p) => topic.startsWith(p))) return kind;
  return null;
}

export const CHANNEL_BY_RING: ReadonlyMap<number, ChannelSpec> = new Map(CHANNELS.map((c) => [c.ring, c]));
export const CHANNEL_BY_TOPIC: ReadonlyMap<string, ChannelSpec> = new Map(CHANNELS.map((c) => [c.topic, c]));

/** Attachment holding the NAO's raw preference block (so every split file can be verified alone). */
export const PREFS_ATTACHMENT = "nao-preferences.bin";
/** Metadata record describing the recording. */
export const METADATA_NAME = "bodylink";

export const EVENT_SCHEMA = {
  type: "object",
  properties: {
    type: { type: "string", description: "handshake, lease_acquired, lease_released, estop, estop_reset, late_cycle, link, safety, recording_gap, recording_started, recording_stopped, lola_client" },
    seq: { type: "number", description: "cycle sequence number when the event was seen" },
    text: { type: "string", description: "one line for humans" },
  },
  required: ["type", "text"],
  additionalProperties: true,
} as const;

/**
 * foxglove.Log levels per event type (a type not listed is INFO): a stop latched by anyone is an
 * ERROR, what a user should look at a WARNING.
 */
export const LOG_LEVEL = { unknown: 0, debug: 1, info: 2, warning: 3, error: 4, fatal: 5 } as const;
export const EVENT_LOG_LEVEL: Readonly<Record<string, number>> = {
  estop: LOG_LEVEL.error,
  late_cycle: LOG_LEVEL.warning,
  link: LOG_LEVEL.warning,
  safety: LOG_LEVEL.warning,
  recording_gap: LOG_LEVEL.warning,
  lease_released: LOG_LEVEL.info,
};

export const TRANSFER_SCHEMA = {
  type: "object",
  properties: {
    op: { type: "string", enum: ["bulk_out", "vendor_in", "bulk_in"] },
    request: { type: "number", description: "vendor request code (0x14 ack, 0x15 status); 0 for bulk transfers" },
    result: { type: "number", description: "bytes transferred, or -1 timed out, -2 error, -3 device gone" },
    bytes_hex: { type: "string" },
  },
  required: ["op", "request", "result", "bytes_hex"],
} as const;
