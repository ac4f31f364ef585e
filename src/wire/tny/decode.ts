/**
 * TNY-360 binary API decoder (tny360.md §3.1 header, §4 payload encoding, §7 types). Pure,
 * browser-safe; reads through the shared `Reader` and never reads past the bytes it was given.
 *
 * Three outcomes (style §2):
 * - not enough bytes yet → `undefined`, cursor unchanged (stream use, e.g. a serial link);
 * - malformed → `TnyDecodeError` with the offset and what was expected vs found;
 * - unknown message type → `{ kind: "unknown" }`, not an error.
 *
 * Arguments are decoded strictly (the server answers InvalidParameters on any error): exact length,
 * bools 0 or 1, finite float32, integer ranges and string lengths from the table. Return values are
 * decoded leniently: bytes a newer firmware appends are skipped, NaN passes through.
 *
 * Allocation: headers and message views allocate one small object; field values allocate their
 * results (arrays, objects, strings). The server's hot path allocates one args array per request
 * (and the cursor's view of each new buffer).
 */
import { Reader, toHex } from "../bytes.js";
import { ERROR_EVENT_PAYLOAD_BYTES, type FieldSpec, MessageType, TNY_HEADER_BYTES, TNY_MAX_REQUEST_BYTES } from "./constants.js";
import { type ErrorEvent, type MotorCalibration, TnyDecodeError, type TnyHeader, type TnyMessage, type Vec3 } from "./types.js";

const utf8 = new TextDecoder("utf-8");
const NO_ARGS: readonly unknown[] = Object.freeze([]);
/** decodeArgs' cursor, reset per call (it never re-enters: no field decodes arguments). */
const ARGS_READER = new Reader();
/**
 * NOTE: hot path (every request): the arguments are read from a copy in this one buffer, whose
 * DataView the reader keeps. Read in place, each request (a new slice of the socket's buffer)
 * would cost a DataView; every field decoder copies what it returns, so nothing points in here.
 */
const ARGS_SCRATCH = new Uint8Array(TNY_MAX_REQUEST_BYTES);

/** Read the 8-byte header, or `undefined` (cursor unchanged) when fewer than 8 bytes remain. */
export function decodeHeader(r: Reader): TnyHeader | undefined {
  if (r.remaining() < TNY_HEADER_BYTES) return undefined;
  const type = r.u8();
  const flags = r.u8();
  const msgId = r.u16();
  const code = r.u16(); // module (low byte) | action << 8, or status
  const length = r.u16();
  return { type, flags, msgId, code, length };
}

/**
 * Decode one message from a stream: header plus `length` payload bytes. Returns `undefined` and
 * rewinds when the bytes are incomplete. The payload is a borrowed view.
 */
export function decodeMessage(r: Reader): TnyMessage | undefined {
  const start = r.offset;
  const h = decodeHeader(r);
  if (!h) return undefined;
  if (r.remaining() < h.length) {
    r.offset = start; // need more; caller appends and retries
    return undefined;
  }
  const payload = r.bytesView(h.length);
  return messageFrom(h, payload);
}

/**
 * Decode a WebSocket frame that must hold exactly one message (§2.1). Throws `TnyDecodeError` when
 * the frame is shorter than a header or its size disagrees with the header's `length` (the
 * firmware trusts `length` and may read past the frame; bodylink refuses instead).
 */
export function decodeFrame(frame: Uint8Array): TnyMessage {
  const r = new Reader(frame);
  const h = decodeHeader(r);
  if (!h) throw new TnyDecodeError(0, `a ${TNY_HEADER_BYTES}-byte header`, `${frame.length} byte(s): ${toHex(frame)}`);
  if (r.remaining() !== h.length) throw new TnyDecodeError(6, `length ${r.remaining()} (the frame's payload size)`, `length ${h.length}`);
  return messageFrom(h, r.bytesView(h.length));
}

function messageFrom(h: TnyHeader, payload: Uint8Array): TnyMessage {
  switch (h.type) {
    case MessageType.Request:
      return { kind: "request", flags: h.flags, msgId: h.msgId, module: h.code & 0xff, action: (h.code >> 8) & 0xff, payload };
    case MessageType.Response:
      return { kind: "response", flags: h.flags, msgId: h.msgId, status: h.code, payload };
    case MessageType.Event:
      return { kind: "event", msgId: h.msgId, eventId: h.code, payload };
    default:
      return { kind: "unknown", type: h.type, msgId: h.msgId, payload };
  }
}

// ---------------------------------------------------------------------------------------------
// Fields

function need(r: Reader, n: number, what: string): void {
  if (r.remaining() < n) throw new TnyDecodeError(r.offset, `${n} byte(s) for ${what}`, `${r.remaining()}`);
}

function readVec3(r: Reader): Vec3 {
  const x = r.f32();
  const y = r.f32();
  const z = r.f32();
  return { x, y, z };
}

function readF32Array(r: Reader, n: number, strict: boolean, name: string): Float32Array {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const at = r.offset;
    const v = r.f32();
    if (strict && !Number.isFinite(v)) throw new TnyDecodeError(at, `a finite float32 for ${name}[${i}]`, String(v));
    out[i] = v;
  }
  return out;
}

function readErrorEvent(r: Reader): ErrorEvent {
  const timestampMs = r.u32();
  const eventId = r.u16();
  const module = r.u8();
  const subsystem = r.u8();
  const code = r.u8();
  const severity = r.u8();
  const sizeAt = r.offset;
  const payloadSize = r.u8();
  if (payloadSize > ERROR_EVENT_PAYLOAD_BYTES) throw new TnyDecodeError(sizeAt, `payloadSize ≤ ${ERROR_EVENT_PAYLOAD_BYTES}`, String(payloadSize));
  const all = r.bytesView(ERROR_EVENT_PAYLOAD_BYTES);
  r.skip(1); // padding byte after the packed fields (struct alignment to 4)
  return { timestampMs, eventId, module, subsystem, code, severity, payload: all.slice(0, payloadSize) };
}

/** The error id `0xMMSSCCVV` of an event (module, subsystem, code, severity). */
export function errorIdOf(ev: ErrorEvent): number {
  return ((ev.module << 24) | (ev.subsystem << 16) | (ev.code << 8) | ev.severity) >>> 0;
}

function readCalibration(r: Reader, padded: boolean): MotorCalibration {
  const dcMinMs = r.f32();
  const dcMaxMs = r.f32();
  const dcDeadband = r.f32();
  const feedbackMinV = r.f32();
  const feedbackMaxV = r.f32();
  const feedbackNoiseV = r.f32();
  const feedbackLatencyMs = r.f32();
  const feedbackInverted = r.u8() !== 0;
  if (padded) r.skip(3); // the firmware memcpy's the struct: 3 padding bytes before max_speed (§4)
  const maxSpeed = r.f32();
  return { dcMinMs, dcMaxMs, dcDeadband, feedbackMinV, feedbackMaxV, feedbackNoiseV, feedbackLatencyMs, feedbackInverted, maxSpeed };
}

/**
 * Decode one field. `strict` (arguments): bools must be 0/1, float32 finite, integers within
 * `max`, strings within `maxLength`.
 */
function readField(r: Reader, field: FieldSpec, strict: boolean): unknown {
  const at = r.offset;
  const fixed = FIXED_BYTES[field.type];
  // NOTE: hot path (every request's arguments): the message is built only when the bytes are short
  if (fixed > 0 && r.remaining() < fixed) need(r, fixed, `${field.name} (${field.type})`);
  switch (field.type) {
    case "u8":
    case "u16":
    case "u32":
    case "i32": {
      const v = field.type === "u8" ? r.u8() : field.type === "u16" ? r.u16() : field.type === "u32" ? r.u32() : r.i32();
      if (strict && field.max !== undefined && v > field.max) throw new TnyDecodeError(at, `${field.name} ≤ ${field.max}`, String(v));
      return v;
    }
    case "f32": {
      const v = r.f32();
      if (strict && !Number.isFinite(v)) throw new TnyDecodeError(at, `a finite float32 for ${field.name}`, String(v));
      return v;
    }
    case "bool": {
      const v = r.u8();
      if (strict && v > 1) throw new TnyDecodeError(at, `bool 0 or 1 for ${field.name}`, `0x${v.toString(16).padStart(2, "0")}`);
      return v !== 0;
    }
    case "string": {
      need(r, 2, `${field.name} length (u16)`);
      const n = r.u16();
      if (strict && field.maxLength !== undefined && n >= field.maxLength) throw new TnyDecodeError(at, `${field.name} shorter than ${field.maxLength} bytes`, `${n} bytes`);
      need(r, n, `${field.name} (${n} string bytes)`);
      return utf8.decode(r.bytesView(n));
    }
    case "vec3f": {
      const v = readVec3(r);
      if (strict && !(Number.isFinite(v.x) && Number.isFinite(v.y) && Number.isFinite(v.z))) throw new TnyDecodeError(at, `a finite Vec3f for ${field.name}`, `${v.x}, ${v.y}, ${v.z}`);
      return v;
    }
    case "f32x14":
      return readF32Array(r, 14, strict, field.name);
    case "f32x16":
      return readF32Array(r, 16, strict, field.name);
    case "errorEvent":
      return readErrorEvent(r);
    case "calibrationDataPadded":
      return readCalibration(r, true);
    case "calibrationDataPacked":
      return readCalibration(r, false);
    case "bytes8": {
      need(r, 1, `${field.name} length (u8)`);
      const n = r.u8();
      need(r, n, `${field.name} (${n} bytes)`);
      return r.bytesCopy(n);
    }
    case "bytesRest":
      return r.bytesCopy(r.remaining());
  }
}

const FIXED_BYTES: Readonly<Record<FieldSpec["type"], number>> = {
  u8: 1,
  u16: 2,
  u32: 4,
  i32: 4,
  f32: 4,
  bool: 1,
  string: 0,
  vec3f: 12,
  f32x14: 56,
  f32x16: 64,
  errorEvent: 44,
  calibrationDataPadded: 36,
  calibrationDataPacked: 33,
  bytes8: 0,
  bytesRest: 0,
};

/**
 * Decode request arguments strictly, in declared order. A missing trailing optional field takes
 * its default (clear_overrides = true, §4). Any byte left over is an error: one message per
 * frame, and a client sending more than the action takes has the wrong layout. The payload is
 * `bytes` from `start` on (a whole frame and TNY_HEADER_BYTES: no view of it per request).
 */
export function decodeArgs(fields: readonly FieldSpec[], bytes: Uint8Array, start = 0): unknown[] {
  const n = bytes.length - start;
  if (fields.length === 0) {
    // no arguments (ping and most getters): no cursor, no array
    if (n !== 0) throw new TnyDecodeError(0, "end of payload (0 argument(s))", `${n} extra byte(s)`);
    return NO_ARGS as unknown[];
  }
  const scalars = decodeScalarArgs(fields, bytes, start, n);
  if (scalars !== null) return scalars;
  let r: Reader;
  if (n <= ARGS_SCRATCH.length) {
    // NOTE: hot path: a byte loop, not set(subarray()) (a view per request); the dispatcher answers frames over the scratch OutOfMemory
    for (let i = 0; i < n; i++) ARGS_SCRATCH[i] = bytes[start + i]!;
    r = ARGS_READER.reset(ARGS_SCRATCH, 0, n);
  } else r = ARGS_READER.reset(start === 0 ? bytes : bytes.subarray(start)); // error offsets count from the payload
  const out: unknown[] = new Array(fields.length);
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i]!;
    if (field.optional && r.remaining() === 0) {
      out[i] = field.defaultValue;
      continue;
    }
    out[i] = readField(r, field, true);
  }
  if (r.remaining() !== 0) throw new TnyDecodeError(r.offset, `end of payload (${fields.length} argument(s))`, `${r.remaining()} extra byte(s)`);
  return out;
}

/** Bytes of each scalar field type (integers, float32, bool: FIXED_BYTES'); 0: not a scalar (decodeScalarArgs leaves it to the general path). */
const SCALAR_TYPES: ReadonlySet<FieldSpec["type"]> = new Set(["u8", "u16", "u32", "i32", "f32", "bool"]);
const SCALAR_BYTES = Object.fromEntries(Object.entries(FIXED_BYTES).map(([t, n]) => [t, SCALAR_TYPES.has(t as FieldSpec["type"]) ? n : 0])) as Readonly<Record<FieldSpec["type"], number>>;
/** One float32's bytes, read little-endian through a view made once (the frame's own buffer changes per request). */
const F32_BYTES = new Uint8Array(4);
const F32_VIEW = new DataView(F32_BYTES.buffer);

/**
 * Arguments of scalar fields only (integers, float32, bools: setVelocity, setPosture, setAngle, the
 * getters taking an id), every field present, read straight from the frame: no copy, no cursor.
 * NOTE: hot path (every command). Null for anything else (a non-scalar field, a payload of another
 * size, an optional field left out, a value the strict rules refuse): the general path then decodes
 * or throws its precise error, so both accept exactly the same bytes (test/tny/wire.test.ts).
 */
function decodeScalarArgs(fields: readonly FieldSpec[], b: Uint8Array, start: number, n: number): unknown[] | null {
  let size = 0;
  for (let i = 0; i < fields.length; i++) {
    const k = SCALAR_BYTES[fields[i]!.type];
    if (k === 0) return null;
    size += k;
  }
  if (size !== n) return null;
  const out: unknown[] = new Array(fields.length);
  let at = start;
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i]!;
    switch (field.type) {
      case "f32": {
        F32_BYTES[0] = b[at]!;
        F32_BYTES[1] = b[at + 1]!;
        F32_BYTES[2] = b[at + 2]!;
        F32_BYTES[3] = b[at + 3]!;
        const v = F32_VIEW.getFloat32(0, true);
        if (!Number.isFinite(v)) return null;
        out[i] = v;
        at += 4;
        break;
      }
      case "bool": {
        const v = b[at++]!;
        if (v > 1) return null;
        out[i] = v !== 0;
        break;
      }
      default: {
        // u8, u16, u32 and i32, little-endian
        const t = field.type;
        let v: number;
        if (t === "u8") v = b[at++]!;
        else if (t === "u16") {
          v = b[at]! | (b[at + 1]! << 8);
          at += 2;
        } else {
          const w = b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24); // i32
          v = t === "u32" ? w >>> 0 : w;
          at += 4;
        }
        if (field.max !== undefined && v > field.max) return null;
        out[i] = v;
      }
    }
  }
  return out;
}

/** Decode return values leniently: trailing bytes (a newer firmware's additions) are skipped. */
export function decodeReturns(fields: readonly FieldSpec[], payload: Uint8Array): unknown[] {
  const r = new Reader(payload);
  const out: unknown[] = new Array(fields.length);
  for (let i = 0; i < fields.length; i++) out[i] = readField(r, fields[i]!, false);
  return out;
}

/**
 * Shape decoded return values the way the client hands them out: nothing, the single value, or
 * an object keyed by field names (see `ResultOf` in types.ts).
 */
export function resultOf(fields: readonly FieldSpec[], values: readonly unknown[]): unknown {
  if (fields.length === 0) return undefined;
  if (fields.length === 1) return values[0];
  const o: Record<string, unknown> = {};
  for (let i = 0; i < fields.length; i++) o[fields[i]!.name] = values[i];
  return Object.freeze(o);
}
