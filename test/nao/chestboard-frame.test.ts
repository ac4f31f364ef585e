import { crc32 as zlibCrc32 } from "node:zlib";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FRAME, Kind } from "../../src/wire/chestboard/constants.js";
import { type ChestMessage, decodeFrame, encodeFrame, FrameEncodeError, FrameFault, FrameIndex, FrameTemplate, indexFrame } from "../../src/wire/chestboard/frame.js";
import { crc32 } from "../../src/wire/crc32.js";
import { bytes, u16le, u32le, u8 } from "../helpers/bytes.js";

/** The golden frame: two messages, built field by field. */
const body = bytes(
  u16le(2), // message count
  u16le(4), // length of message 0
  u16le(6), // length of message 1
  u8(0x00),
  u8(0x01),
  u8(0x10),
  u8(0x20), // Read, bus 1, HeadBoard, register 0x20 (configuration)
  u8(0x02),
  u8(0x01),
  u8(0x10),
  u8(0x34),
  u8(0x12),
  u8(0xff), // Actuate, bus 1, HeadBoard, position 0x1234, stiffness 255
);
const GOLDEN = bytes([...body], u32le(zlibCrc32(body)));

describe("crc32", () => {
  it("matches zlib's CRC-32 and the standard check value", () => {
    expect(crc32(new TextEncoder().encode("123456789"))).toBe(0xcbf43926);
    fc.assert(fc.property(fc.uint8Array({ maxLength: 600 }), (b) => crc32(b) === zlibCrc32(b)));
  });
  it("continues incrementally", () => {
    const b = new TextEncoder().encode("hello, chest board");
    expect(crc32(b, 7, b.length, crc32(b, 0, 7))).toBe(crc32(b));
  });
});

describe("chest-board frame golden vectors", () => {
  it("decodes the golden frame", () => {
    const d = decodeFrame(GOLDEN);
    expect(d.ok).toBe(true);
    expect(d.messages.map((m) => [m.kind, m.bus, m.address, [...m.payload]])).toEqual([
      [Kind.Read, 1, 0x10, [0x20]],
      [Kind.Actuate, 1, 0x10, [0x34, 0x12, 0xff]],
    ]);
  });
  it("encodes to exactly the golden bytes", () => {
    const msgs: ChestMessage[] = [
      { kind: Kind.Read, bus: 1, address: 0x10, payload: Uint8Array.of(0x20) },
      { kind: Kind.Actuate, bus: 1, address: 0x10, payload: Uint8Array.of(0x34, 0x12, 0xff) },
    ];
    expect([...encodeFrame(msgs)]).toEqual([...GOLDEN]);
  });
  it("decodes a length table off by one to no messages, both ways", () => {
    for (const delta of [1, -1]) {
      const bad = GOLDEN.slice();
      bad[2] = 4 + delta; // message 0 length
      const fixed = bytes([...bad.subarray(0, bad.length - 4)], u32le(zlibCrc32(bad.subarray(0, bad.length - 4)))); // valid CRC, bad table
      const d = decodeFrame(fixed);
      expect(d.ok).toBe(false);
      expect(d.messages).toEqual([]);
      if (!d.ok) expect(d.fault).toBe(FrameFault.LengthTableMismatch);
    }
  });
  it("detects a damaged CRC byte or header byte, one at a time", () => {
    for (let i = 0; i < GOLDEN.length; i++) {
      const bad = GOLDEN.slice();
      bad[i]! ^= 0x01;
      const d = decodeFrame(bad);
      expect(d.ok).toBe(false);
      expect(d.messages).toEqual([]);
    }
  });
  it("every prefix of a valid frame decodes to no messages", () => {
    for (let n = 0; n < GOLDEN.length; n++) expect(decodeFrame(GOLDEN.subarray(0, n)).messages).toEqual([]);
  });
});

const msgN = (n: number, payloadBytes = 0): ChestMessage[] => Array.from({ length: n }, (_, i) => ({ kind: Kind.Actuate, bus: i & 0xff, address: 1, payload: new Uint8Array(payloadBytes) }));

describe("frame limits", () => {
  it("encodes and decodes 255 messages", () => {
    const f = encodeFrame(msgN(255));
    const d = decodeFrame(f);
    expect(d.ok && d.messages.length).toBe(255);
  });
  it("refuses to encode 256 messages with a clear error", () => {
    expect(() => encodeFrame(msgN(256))).toThrow(FrameEncodeError);
    expect(() => encodeFrame(msgN(256))).toThrow(/at most 255 messages, got 256/);
  });
  it("decodes a 256-message frame to no messages without touching the table (HAL overruns here)", () => {
    const msgs = msgN(256);
    const n = msgs.length;
    const len = 2 + 2 * n + 3 * n;
    const b = new Uint8Array(len + 4);
    b[0] = n & 0xff;
    b[1] = n >> 8;
    for (let i = 0; i < n; i++) b[2 + 2 * i] = 3;
    new DataView(b.buffer).setUint32(len, zlibCrc32(b.subarray(0, len)), true);
    const idx = new FrameIndex();
    expect(indexFrame(b, b.length, idx)).toBe(0);
    expect(idx.fault).toBe(FrameFault.TooManyMessages);
  });
  it("accepts exactly 4,096 bytes and refuses 4,097", () => {
    // 2 + 2·16 + 4 = 38 bytes of overhead; 16 messages share 4,058 bytes: 3 header + payload each.
    const sizes = Array.from({ length: 16 }, (_, i) => (i < 15 ? 254 : 4058 - 15 * 254));
    const msgs = sizes.map((s) => ({ kind: 1, bus: 2, address: 3, payload: new Uint8Array(s - 3) }));
    const f = encodeFrame(msgs);
    expect(f.length).toBe(FRAME.MAX_BYTES);
    expect(decodeFrame(f).ok).toBe(true);
    msgs[15] = { ...msgs[15]!, payload: new Uint8Array(sizes[15]! - 2) };
    expect(() => encodeFrame(msgs)).toThrow(/at most 4096 bytes, these messages need 4097/);
    const tooLong = new Uint8Array(4097);
    const idx = new FrameIndex();
    indexFrame(tooLong, tooLong.length, idx);
    expect(idx.fault).toBe(FrameFault.TooLong);
  });
  it("refuses header values that are not bytes", () => {
    expect(() => encodeFrame([{ kind: 256, bus: 0, address: 0, payload: new Uint8Array(0) }])).toThrow(/kind must be a byte/);
  });
});

describe("frame properties", () => {
  const message = fc.record({
    kind: fc.integer({ min: 0, max: 255 }),
    bus: fc.integer({ min: 0, max: 255 }),
    address: fc.integer({ min: 0, max: 255 }),
    payload: fc.uint8Array({ maxLength: 40 }),
  });
  it("arbitrary bytes never throw and never report messages outside the buffer", () => {
    const idx = new FrameIndex();
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 700 }), (b) => {
        const n = indexFrame(b, b.length, idx);
        for (let i = 0; i < n; i++) expect(idx.starts[i]! + idx.lengths[i]!).toBeLessThanOrEqual(b.length);
        return n === 0 || idx.fault === FrameFault.None;
      }),
      { numRuns: 3000 },
    );
  });
  it("arbitrary bytes with a valid CRC and count never throw either", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 300 }), fc.uint8Array({ maxLength: 600 }), (count, rest) => {
        const b = bytes(u16le(count), [...rest]);
        const f = bytes([...b], u32le(zlibCrc32(b)));
        const d = decodeFrame(f);
        return d.ok ? d.messages.length === count : d.messages.length === 0;
      }),
      { numRuns: 3000 },
    );
  });
  it("any valid message list survives encode then decode unchanged", () => {
    fc.assert(
      fc.property(fc.array(message, { maxLength: 80 }), (msgs) => {
        const d = decodeFrame(encodeFrame(msgs));
        expect(d.ok).toBe(true);
        expect(d.messages.map((m) => ({ ...m, payload: [...m.payload] }))).toEqual(msgs.map((m) => ({ ...m, payload: [...m.payload] })));
      }),
      { numRuns: 500 },
    );
  });
  it("a single flipped bit anywhere is always detected", () => {
    fc.assert(
      fc.property(fc.array(message, { minLength: 1, maxLength: 20 }), fc.nat(), fc.integer({ min: 0, max: 7 }), (msgs, at, bit) => {
        const f = encodeFrame(msgs);
        f[at % f.length]! ^= 1 << bit;
        return !decodeFrame(f).ok;
      }),
      { numRuns: 1000 },
    );
  });
});

describe("FrameTemplate", () => {
  it("overwrites payloads in place and reseals to the same bytes as a fresh encode", () => {
    const msgs = msgN(3, 4);
    const t = new FrameTemplate(msgs);
    t.bytes[t.payloadOffset(1) + 2] = 0xab;
    t.seal();
    const expected = encodeFrame(msgs.map((m, i) => (i === 1 ? { ...m, payload: Uint8Array.of(0, 0, 0xab, 0) } : m)));
    expect([...t.bytes]).toEqual([...expected]);
    expect(new DataView(t.bytes.buffer).getUint32(t.length - 4, true)).toBe(zlibCrc32(t.bytes.subarray(0, t.length - 4)));
  });
});
