/**
 * Chest-board frames (layout inferred, see docs/protocol/chestboard.md):
 *
 *   u16 count | count × u16 message length | messages | u32 CRC-32 of everything before it
 *
 * all little-endian, ≤ 255 messages, ≤ 4,096 bytes in all. Each message starts kind, bus, address.
 *
 * Decoding never throws and never reads out of bounds: a frame whose length table does not add up
 * (or whose CRC or count is wrong) decodes to **no messages** and says why. HAL's decoder writes
 * past 255 table entries; ours refuses a count above 255 before reading the table.
 *
 * Hot path: `indexFrame` fills a preallocated {@link FrameIndex}; `FrameTemplate` builds a frame
 * once and lets the caller overwrite payload bytes in place, then `seal()` refreshes the CRC.
 */
import { crc32Matches, crc32Write } from "../crc32.js";
import { FRAME } from "./constants.js";

/** One message: the three header bytes and the payload after them. */
export interface ChestMessage {
  readonly kind: number;
  readonly bus: number;
  readonly address: number;
  /** Bytes after the 3-byte header (borrowed view when decoded). */
  readonly payload: Uint8Array;
}

/** Why a frame decoded to no messages. */
export enum FrameFault {
  None = 0,
  /** Fewer bytes than count + CRC. */
  TooShort = 1,
  /** More than 4,096 bytes. */
  TooLong = 2,
  /** Count above 255. */
  TooManyMessages = 3,
  /** count, table and message bytes don't add up to the frame length. */
  LengthTableMismatch = 4,
  /** A table entry below the 3-byte message header. */
  MessageTooShort = 5,
  /** Trailing CRC-32 differs from the computed one. */
  CrcMismatch = 6,
}

export const FRAME_FAULT_TEXT: Readonly<Record<FrameFault, string>> = {
  [FrameFault.None]: "ok",
  [FrameFault.TooShort]: "frame shorter than its count and CRC",
  [FrameFault.TooLong]: `frame longer than ${FRAME.MAX_BYTES} bytes`,
  [FrameFault.TooManyMessages]: `more than ${FRAME.MAX_MESSAGES} messages`,
  [FrameFault.LengthTableMismatch]: "length table does not add up to the frame length",
  [FrameFault.MessageTooShort]: "a message is shorter than its 3-byte header",
  [FrameFault.CrcMismatch]: "CRC-32 mismatch",
};

/** Refusal to encode (too many messages, too many bytes, bad header values). */
export class FrameEncodeError extends RangeError {
  constructor(message: string) {
    super(message);
    this.name = "FrameEncodeError";
  }
}

/** Message positions of a decoded frame; preallocated once, refilled by `indexFrame`. */
export class FrameIndex {
  readonly starts = new Int32Array(FRAME.MAX_MESSAGES);
  readonly lengths = new Int32Array(FRAME.MAX_MESSAGES);
  count = 0;
  fault: FrameFault = FrameFault.None;
}

const u16 = (b: Uint8Array, at: number) => b[at]! | (b[at + 1]! << 8);

/**
 * Index the messages of `bytes[0, length)` into `into`. Returns the message count (0 with
 * `into.fault` set when the frame is bad). Never throws, never allocates.
 */
export function indexFrame(bytes: Uint8Array, length: number, into: FrameIndex): number {
  into.count = 0;
  into.fault = FrameFault.None;
  const n = Math.min(length, bytes.length);
  if (n > FRAME.MAX_BYTES) return fail(into, FrameFault.TooLong);
  if (n < FRAME.COUNT_BYTES + FRAME.CRC_BYTES) return fail(into, FrameFault.TooShort);
  const count = u16(bytes, 0);
  if (count > FRAME.MAX_MESSAGES) return fail(into, FrameFault.TooManyMessages);
  const tableEnd = FRAME.COUNT_BYTES + count * FRAME.LENGTH_ENTRY_BYTES;
  const bodyEnd = n - FRAME.CRC_BYTES;
  if (tableEnd > bodyEnd) return fail(into, FrameFault.LengthTableMismatch);
  let at = tableEnd;
  for (let i = 0; i < count; i++) {
    const len = u16(bytes, FRAME.COUNT_BYTES + i * FRAME.LENGTH_ENTRY_BYTES);
    if (len < FRAME.MESSAGE_HEADER_BYTES) return fail(into, FrameFault.MessageTooShort);
    into.starts[i] = at;
    into.lengths[i] = len;
    at += len;
    if (at > bodyEnd) return fail(into, FrameFault.LengthTableMismatch);
  }
  if (at !== bodyEnd) return fail(into, FrameFault.LengthTableMismatch);
  if (!crc32Matches(bytes, 0, bodyEnd, bodyEnd)) return fail(into, FrameFault.CrcMismatch);
  into.count = count;
  return count;
}

function fail(into: FrameIndex, fault: FrameFault): number {
  into.count = 0;
  into.fault = fault;
  return 0;
}

export type DecodedFrame = { readonly ok: true; readonly messages: ChestMessage[] } | { readonly ok: false; readonly fault: FrameFault; readonly reason: string; readonly messages: readonly [] };

/** Decode a whole frame into message objects (allocates; payloads are views into `bytes`). */
export function decodeFrame(bytes: Uint8Array, length = bytes.length): DecodedFrame {
  const idx = new FrameIndex();
  const count = indexFrame(bytes, length, idx);
  if (idx.fault !== FrameFault.None) return { ok: false, fault: idx.fault, reason: FRAME_FAULT_TEXT[idx.fault], messages: [] };
  const messages: ChestMessage[] = [];
  for (let i = 0; i < count; i++) {
    const s = idx.starts[i]!;
    messages.push({ kind: bytes[s]!, bus: bytes[s + 1]!, address: bytes[s + 2]!, payload: bytes.subarray(s + 3, s + idx.lengths[i]!) });
  }
  return { ok: true, messages };
}

/** Bytes a frame of these messages takes, or throws FrameEncodeError when it can't be encoded. */
export function frameSize(messages: readonly ChestMessage[]): number {
  if (messages.length > FRAME.MAX_MESSAGES) {
    throw new FrameEncodeError(`a frame holds at most ${FRAME.MAX_MESSAGES} messages, got ${messages.length}`);
  }
  let size = FRAME.COUNT_BYTES + messages.length * FRAME.LENGTH_ENTRY_BYTES + FRAME.CRC_BYTES;
  for (const m of messages) {
    for (const [name, v] of [
      ["kind", m.kind],
      ["bus", m.bus],
      ["address", m.address],
    ] as const) {
      if (!Number.isInteger(v) || v < 0 || v > 0xff) throw new FrameEncodeError(`message ${name} must be a byte, got ${v}`);
    }
    size += FRAME.MESSAGE_HEADER_BYTES + m.payload.length;
  }
  if (size > FRAME.MAX_BYTES) throw new FrameEncodeError(`a frame is at most ${FRAME.MAX_BYTES} bytes, these messages need ${size}`);
  return size;
}

/** Encode into `buf` from offset 0; returns the frame length. Throws FrameEncodeError when refused. */
export function encodeFrameInto(buf: Uint8Array, messages: readonly ChestMessage[]): number {
  const size = frameSize(messages);
  if (size > buf.length) throw new FrameEncodeError(`buffer of ${buf.length} bytes is too small for a ${size}-byte frame`);
  buf[0] = messages.length & 0xff;
  buf[1] = messages.length >> 8;
  let at = FRAME.COUNT_BYTES + messages.length * FRAME.LENGTH_ENTRY_BYTES;
  messages.forEach((m, i) => {
    const len = FRAME.MESSAGE_HEADER_BYTES + m.payload.length;
    const t = FRAME.COUNT_BYTES + i * FRAME.LENGTH_ENTRY_BYTES;
    buf[t] = len & 0xff;
    buf[t + 1] = len >> 8;
    buf[at] = m.kind;
    buf[at + 1] = m.bus;
    buf[at + 2] = m.address;
    buf.set(m.payload, at + 3);
    at += len;
  });
  writeCrc(buf, at);
  return at + FRAME.CRC_BYTES;
}

/** Encode into a new buffer (copy). */
export function encodeFrame(messages: readonly ChestMessage[]): Uint8Array {
  const buf = new Uint8Array(frameSize(messages));
  encodeFrameInto(buf, messages);
  return buf;
}

function writeCrc(buf: Uint8Array, bodyEnd: number): void {
  crc32Write(buf, 0, bodyEnd, bodyEnd);
}

/**
 * A frame whose message list is fixed (the per-cycle command frame): built once, then payload
 * bytes are overwritten in place through `payloadOffset(i)` and `seal()` refreshes the CRC.
 * NOTE: hot path; no allocation after construction.
 */
export class FrameTemplate {
  readonly bytes: Uint8Array;
  readonly length: number;
  readonly #payloadOffsets: Int32Array;

  constructor(messages: readonly ChestMessage[]) {
    this.length = frameSize(messages);
    this.bytes = new Uint8Array(this.length);
    encodeFrameInto(this.bytes, messages);
    this.#payloadOffsets = new Int32Array(messages.length);
    let at = FRAME.COUNT_BYTES + messages.length * FRAME.LENGTH_ENTRY_BYTES;
    messages.forEach((m, i) => {
      this.#payloadOffsets[i] = at + FRAME.MESSAGE_HEADER_BYTES;
      at += FRAME.MESSAGE_HEADER_BYTES + m.payload.length;
    });
  }
  /** Offset in `bytes` of message i's payload. */
  payloadOffset(i: number): number {
    return this.#payloadOffsets[i]!;
  }
  /** Recompute the trailing CRC after payload writes (the ack must echo those four bytes). */
  seal(): void {
    writeCrc(this.bytes, this.length - FRAME.CRC_BYTES);
  }
}
