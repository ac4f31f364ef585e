/**
 * TNY-360 binary API encoder (tny360.md §3.1 header, §4 payload encoding). Pure, browser-safe.
 *
 * `encode*Into(w, …)` writes in place through a caller-owned `Writer` (no allocation beyond UTF-8
 * encoding of strings); `encodeRequest`/`encodeResponse` return a fresh, exactly sized copy (a
 * WebSocket may queue the buffer it is given, so a sender must not reuse it).
 *
 * Lengths are learned later and patched (mcap style): the header's `length` is written as 0 and
 * patched once the payload is written. Values are checked before any byte is written: a wrong type,
 * an integer out of range or a string too long throws `TnyEncodeError` (a caller bug).
 */
import { Writer } from "../bytes.js";
import { type ActionSpec, type FieldSpec, MessageFlags, MessageType, type ModuleSpec, TNY_HEADER_BYTES, TNY_MAX_PAYLOAD_BYTES, WIRE_TYPES } from "./constants.js";
import { type ErrorEvent, type MotorCalibration, TnyEncodeError, type Vec3 } from "./types.js";

const utf8 = new TextEncoder();

/** Write an 8-byte header. `code` = module | action << 8 (request) or the status (response). */
export function writeHeader(w: Writer, type: number, flags: number, msgId: number, code: number, length: number): void {
  w.u8(type) // type: 1 request, 2 response, 3 event
    .u8(flags) // flags: 0x01 RequireAck (requests only)
    .u16(msgId & 0xffff) // msg_id, echoed by the response
    .u16(code) // module | action << 8, or status
    .u16(length); // payload length
}

const INT_MAX = { u8: 0xff, u16: 0xffff, u32: 0xffffffff } as const;

function fail(field: FieldSpec, why: string): never {
  throw new TnyEncodeError(`cannot encode ${field.name} (${field.type}): ${why}`);
}

function isArrayLike(v: unknown): v is ArrayLike<number> {
  return typeof v === "object" && v !== null && typeof (v as { length?: unknown }).length === "number";
}

/** Bytes a field will take, after checking its value. */
function fieldBytes(field: FieldSpec, v: unknown): number {
  const fixed = WIRE_TYPES[field.type].bytes;
  switch (field.type) {
    case "u8":
    case "u16":
    case "u32":
      if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || v > INT_MAX[field.type]) fail(field, `expected an integer 0..${INT_MAX[field.type]}, got ${String(v)}`);
      return fixed;
    case "i32":
      if (typeof v !== "number" || !Number.isInteger(v) || v < -0x80000000 || v > 0x7fffffff) fail(field, `expected an int32, got ${String(v)}`);
      return fixed;
    case "f32":
      if (typeof v !== "number") fail(field, `expected a number, got ${typeof v}`);
      return fixed;
    case "bool":
      if (typeof v !== "boolean") fail(field, `expected a boolean, got ${typeof v}`);
      return fixed;
    case "string": {
      if (typeof v !== "string") fail(field, `expected a string, got ${typeof v}`);
      const n = utf8.encode(v).length;
      if (n > 0xffff) fail(field, `${n} bytes exceed the u16 length`);
      if (field.maxLength !== undefined && n >= field.maxLength) fail(field, `${n} bytes; must be shorter than ${field.maxLength}`);
      return 2 + n;
    }
    case "vec3f": {
      const o = v as Vec3;
      if (typeof o !== "object" || o === null || typeof o.x !== "number" || typeof o.y !== "number" || typeof o.z !== "number") fail(field, "expected {x, y, z} numbers");
      return fixed;
    }
    case "f32x14":
    case "f32x16": {
      const n = field.type === "f32x14" ? 14 : 16;
      if (!isArrayLike(v) || v.length !== n) fail(field, `expected ${n} numbers, got ${isArrayLike(v) ? v.length : typeof v}`);
      for (let i = 0; i < n; i++) if (typeof v[i] !== "number") fail(field, `element ${i} is not a number`);
      return fixed;
    }
    case "errorEvent": {
      const e = v as ErrorEvent;
      if (typeof e !== "object" || e === null || !(e.payload instanceof Uint8Array)) fail(field, "expected an ErrorEvent");
      if (e.payload.length > 32) fail(field, `payload of ${e.payload.length} bytes exceeds 32`);
      return fixed;
    }
    case "calibrationDataPadded":
    case "calibrationDataPacked":
      if (typeof v !== "object" || v === null) fail(field, "expected a MotorCalibration");
      return fixed;
    case "bytes8":
      if (!(v instanceof Uint8Array) || v.length > 0xff) fail(field, "expected a Uint8Array of at most 255 bytes");
      return 1 + v.length;
    case "bytesRest":
      if (!(v instanceof Uint8Array)) fail(field, "expected a Uint8Array");
      return v.length;
  }
}

/**
 * Bytes the given values take. A trailing optional field whose value is `undefined` is left out
 * (the receiver then uses its default). Throws `TnyEncodeError` for a bad value.
 */
export function fieldsByteLength(fields: readonly FieldSpec[], values: ArrayLike<unknown>): number {
  if (values.length > fields.length) throw new TnyEncodeError(`${values.length} values for ${fields.length} field(s)`);
  let n = 0;
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i]!;
    const v = values[i];
    if (v === undefined && field.optional && i === fields.length - 1) break;
    n += fieldBytes(field, v);
  }
  return n;
}

function writeField(w: Writer, field: FieldSpec, v: unknown): void {
  switch (field.type) {
    case "u8":
      w.u8(v as number);
      return;
    case "u16":
      w.u16(v as number);
      return;
    case "u32":
      w.u32(v as number);
      return;
    case "i32":
      w.i32(v as number);
      return;
    case "f32":
      w.f32(v as number);
      return;
    case "bool":
      w.bool(v as boolean);
      return;
    case "string": {
      const b = utf8.encode(v as string);
      w.u16(b.length).bytesFrom(b); // u16 length, then raw bytes, no NUL
      return;
    }
    case "vec3f": {
      const o = v as Vec3;
      w.f32(o.x).f32(o.y).f32(o.z);
      return;
    }
    case "f32x14":
    case "f32x16": {
      const arr = v as ArrayLike<number>;
      for (let i = 0; i < arr.length; i++) w.f32(arr[i]!);
      return;
    }
    case "errorEvent": {
      const e = v as ErrorEvent;
      w.u32(e.timestampMs >>> 0)
        .u16(e.eventId & 0xffff)
        .u8(e.module & 0xff)
        .u8(e.subsystem & 0xff)
        .u8(e.code & 0xff)
        .u8(e.severity & 0xff);
      w.u8(e.payload.length); // payloadSize
      w.bytesFrom(e.payload);
      for (let i = e.payload.length; i < 32; i++) w.u8(0); // payload u8[32], zero-filled
      w.u8(0); // padding byte (struct alignment to 4), as the firmware's memcpy sends it
      return;
    }
    case "calibrationDataPadded":
    case "calibrationDataPacked": {
      const c = v as MotorCalibration;
      w.f32(c.dcMinMs).f32(c.dcMaxMs).f32(c.dcDeadband).f32(c.feedbackMinV).f32(c.feedbackMaxV).f32(c.feedbackNoiseV).f32(c.feedbackLatencyMs);
      w.bool(c.feedbackInverted);
      if (field.type === "calibrationDataPadded") w.u8(0).u8(0).u8(0); // 3 padding bytes before max_speed
      w.f32(c.maxSpeed);
      return;
    }
    case "bytes8": {
      const b = v as Uint8Array;
      w.u8(b.length).bytesFrom(b);
      return;
    }
    case "bytesRest":
      w.bytesFrom(v as Uint8Array);
      return;
  }
}

/** Write the values of `fields` in order (a trailing optional `undefined` is left out). */
export function writeFields(w: Writer, fields: readonly FieldSpec[], values: ArrayLike<unknown>): void {
  for (let i = 0; i < fields.length; i++) {
    const v = values[i];
    if (v === undefined && fields[i]!.optional && i === fields.length - 1) break;
    writeField(w, fields[i]!, v);
  }
}

/** Write a request in place. Returns the number of bytes written. */
export function encodeRequestInto(w: Writer, msgId: number, mod: ModuleSpec, action: ActionSpec, args: ArrayLike<unknown>, flags: number = MessageFlags.RequireAck): number {
  const payloadBytes = fieldsByteLength(action.args, args); // validates before writing
  if (payloadBytes > TNY_MAX_PAYLOAD_BYTES) throw new TnyEncodeError(`payload of ${payloadBytes} bytes exceeds the u16 length field`);
  const start = w.offset;
  writeHeader(w, MessageType.Request, flags, msgId, mod.code | (action.code << 8), 0);
  writeFields(w, action.args, args);
  w.patchU16(start + 6, w.offset - start - TNY_HEADER_BYTES); // length learned after the payload
  return w.offset - start;
}

/** A request as a fresh, exactly sized buffer. */
export function encodeRequest(msgId: number, mod: ModuleSpec, action: ActionSpec, args: ArrayLike<unknown>, flags: number = MessageFlags.RequireAck): Uint8Array {
  const out = new Uint8Array(TNY_HEADER_BYTES + fieldsByteLength(action.args, args));
  encodeRequestInto(new Writer(out), msgId, mod, action, args, flags);
  return out;
}

/** A request from raw module/action codes and a raw payload (tests, proxies, fuzzing). */
export function encodeRawRequest(msgId: number, moduleCode: number, actionCode: number, payload: Uint8Array, flags: number = MessageFlags.RequireAck): Uint8Array {
  if (payload.length > TNY_MAX_PAYLOAD_BYTES) throw new TnyEncodeError(`payload of ${payload.length} bytes exceeds the u16 length field`);
  const out = new Uint8Array(TNY_HEADER_BYTES + payload.length);
  const w = new Writer(out);
  writeHeader(w, MessageType.Request, flags, msgId, (moduleCode & 0xff) | ((actionCode & 0xff) << 8), payload.length);
  w.bytesFrom(payload);
  return out;
}

/** Write a response in place; `fields`/`values` only for an Ok reply. Returns bytes written. */
export function encodeResponseInto(w: Writer, msgId: number, status: number, fields: readonly FieldSpec[] = [], values: ArrayLike<unknown> = []): number {
  const start = w.offset;
  if (status !== 0) {
    writeHeader(w, MessageType.Response, 0, msgId, status, 0); // an error response carries no payload
    return TNY_HEADER_BYTES;
  }
  const payloadBytes = fieldsByteLength(fields, values);
  if (payloadBytes > TNY_MAX_PAYLOAD_BYTES) throw new TnyEncodeError(`payload of ${payloadBytes} bytes exceeds the u16 length field`);
  writeHeader(w, MessageType.Response, 0, msgId, 0, payloadBytes);
  writeFields(w, fields, values);
  return w.offset - start;
}

const newBytes = (n: number): Uint8Array => new Uint8Array(n);

/**
 * A response in a fresh buffer from `alloc`, which may hand out unzeroed memory (every byte of the
 * response is written): a server passes Node's pooled `Buffer.allocUnsafe`, which `ws` sends as it
 * is (a plain Uint8Array gets a Buffer view per send). The response takes the buffer's last bytes:
 * `alloc(n)` may return more than `n`, the bytes before the response being the caller's (the TNY-360
 * server writes a WebSocket frame header there, so a reply goes to the socket as one buffer).
 */
export function encodeResponse(msgId: number, status: number, fields: readonly FieldSpec[] = [], values: ArrayLike<unknown> = [], alloc: (bytes: number) => Uint8Array = newBytes): Uint8Array {
  if (status !== 0 || fields.length === 0) {
    // header only (errors, and Ok replies without return values): no cursor needed
    const out = alloc(TNY_HEADER_BYTES);
    const at = out.length - TNY_HEADER_BYTES;
    out[at] = MessageType.Response; // type
    out[at + 1] = 0; // flags
    out[at + 2] = msgId & 0xff; // msg_id LE
    out[at + 3] = (msgId >> 8) & 0xff;
    out[at + 4] = status & 0xff; // status LE
    out[at + 5] = (status >> 8) & 0xff;
    out[at + 6] = 0; // length 0
    out[at + 7] = 0;
    return out;
  }
  const n = TNY_HEADER_BYTES + fieldsByteLength(fields, values);
  const out = alloc(n);
  encodeResponseInto(new Writer(out, out.length - n), msgId, status, fields, values);
  return out;
}
