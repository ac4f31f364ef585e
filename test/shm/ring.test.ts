import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ByteRing, RING_HEADER_BYTES, RING_RECORD_HEADER_BYTES } from "../../src/shm/ring.js";
import { leastHeapAllocated } from "../support/allocated.js";

interface Rec {
  channel: number;
  flags: number;
  timeMs: number;
  payload: number[];
}

function drainAll(ring: ByteRing, max?: number): Rec[] {
  const out: Rec[] = [];
  ring.drain((channel, flags, timeMs, offset, length) => {
    out.push({ channel, flags, timeMs, payload: Array.from(ring.bytes.subarray(offset, offset + length)) });
  }, max);
  return out;
}

describe("ByteRing (src/shm/ring.ts)", () => {
  it("lays out one record as documented: u32 length, u16 channel, u16 flags, f64 time, payload, pad to 8", () => {
    const ring = ByteRing.create(64);
    expect(ring.sab.byteLength).toBe(RING_HEADER_BYTES + 64);
    expect(ring.write(7, 0x0102, 1.5, [0xaa, 0xbb, 0xcc], 0, 3)).toBe(true);
    const d = ring.bytes;
    expect(Array.from(d.subarray(0, 8))).toEqual([3, 0, 0, 0, 7, 0, 0x02, 0x01]); // length, channel, flags
    expect(new DataView(ring.sab, RING_HEADER_BYTES + 8, 8).getFloat64(0, true)).toBe(1.5); // time
    expect(Array.from(d.subarray(16, 19))).toEqual([0xaa, 0xbb, 0xcc]); // payload
    expect(ring.usedBytes).toBe(24); // 16 + 3, padded to 8
    expect(drainAll(ring)).toEqual([{ channel: 7, flags: 0x0102, timeMs: 1.5, payload: [0xaa, 0xbb, 0xcc] }]);
    expect(ring.usedBytes).toBe(0);
  });

  it("refuses a record that does not fit, whole, and counts it; nothing is cut or overwritten", () => {
    const ring = ByteRing.create(64);
    expect(ring.write(1, 0, 0, new Uint8Array(16), 0, 16)).toBe(true); // 32 bytes
    expect(ring.write(2, 0, 0, new Uint8Array(16), 0, 16)).toBe(true); // 64: full
    expect(ring.write(3, 0, 0, new Uint8Array(1), 0, 1)).toBe(false);
    expect(ring.dropped).toBe(1);
    expect(drainAll(ring).map((r) => r.channel)).toEqual([1, 2]);
    expect(ring.write(4, 0, 0, new Uint8Array(1), 0, 1)).toBe(true);
    expect(drainAll(ring).map((r) => r.channel)).toEqual([4]);
  });

  it("never wraps a record: the tail is skipped with a marker and the record starts at 0", () => {
    const ring = ByteRing.create(128);
    ring.write(1, 0, 0, new Uint8Array(48), 0, 48); // 64 bytes at 0
    ring.write(1, 0, 0, new Uint8Array(40), 0, 40); // 56 bytes at 64
    drainAll(ring);
    expect(ring.write(2, 0, 0, Uint8Array.of(9, 8, 7, 6, 5, 4, 3, 2, 1), 0, 9)).toBe(true); // 32 bytes: the tail is 8 → wraps
    expect(Array.from(ring.bytes.subarray(120, 124))).toEqual([0xff, 0xff, 0xff, 0xff]);
    expect(drainAll(ring)).toEqual([{ channel: 2, flags: 0, timeMs: 0, payload: [9, 8, 7, 6, 5, 4, 3, 2, 1] }]);
  });

  it("reserve + commit encodes in place; an uncommitted reservation is invisible", () => {
    const ring = ByteRing.create(128);
    const at = ring.reserve(5, 0, 2, 4);
    ring.bytes.set([1, 2, 3, 4], at);
    expect(drainAll(ring)).toEqual([]);
    ring.commit();
    expect(drainAll(ring)).toEqual([{ channel: 5, flags: 0, timeMs: 2, payload: [1, 2, 3, 4] }]);
    expect(() => ring.commit()).toThrow(/nothing reserved/);
  });

  it("a second view over the same buffer (the other thread's side) sees the same records", () => {
    const a = ByteRing.create(256);
    const b = new ByteRing(a.sab);
    a.write(3, 0, 4, [1, 2], 0, 2);
    expect(drainAll(b)).toEqual([{ channel: 3, flags: 0, timeMs: 4, payload: [1, 2] }]);
    expect(a.usedBytes).toBe(0);
    expect(() => new ByteRing(new SharedArrayBuffer(64))).toThrow(/magic/);
    expect(() => ByteRing.create(100)).toThrow(/power of two/);
  });

  it("property: any interleaving of writes and partial drains delivers exactly the accepted records, in order", () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant("w" as const), channel: fc.nat(0xffff), flags: fc.nat(0xffff), timeMs: fc.double({ noNaN: true }), payload: fc.array(fc.nat(255), { maxLength: 200 }) }),
      fc.record({ kind: fc.constant("d" as const), max: fc.integer({ min: 0, max: 5 }) }),
    );
    fc.assert(
      fc.property(fc.constantFrom(256, 512, 1024), fc.array(op, { maxLength: 300 }), (capacity, ops) => {
        const ring = ByteRing.create(capacity);
        const expected: Rec[] = [];
        const got: Rec[] = [];
        let refused = 0;
        for (const o of ops) {
          if (o.kind === "w") {
            const rec = { channel: o.channel, flags: o.flags, timeMs: o.timeMs, payload: o.payload };
            const before = ring.usedBytes;
            if (ring.write(o.channel, o.flags, o.timeMs, o.payload, 0, o.payload.length)) expected.push(rec);
            else {
              refused++;
              // Refused only when it could not fit: the skipped tail is always shorter than the record.
              const need = (RING_RECORD_HEADER_BYTES + o.payload.length + 7) & ~7;
              expect(o.payload.length > ring.maxPayload || before + 2 * need > capacity).toBe(true);
            }
          } else {
            got.push(...drainAll(ring, o.max));
          }
          expect(ring.usedBytes).toBeLessThanOrEqual(capacity);
        }
        got.push(...drainAll(ring));
        expect(got).toEqual(expected);
        expect(ring.dropped).toBe(refused);
        expect(ring.usedBytes).toBe(0);
      }),
      { numRuns: 300 },
    );
  });

  it("property: a drained ring takes any record up to maxPayload", () => {
    fc.assert(
      fc.property(fc.constantFrom(64, 256, 4096), fc.array(fc.nat(), { maxLength: 20 }), (capacity, sizes) => {
        const ring = ByteRing.create(capacity);
        for (const s of sizes) {
          const n = s % (ring.maxPayload + 1);
          expect(ring.write(1, 0, 0, new Uint8Array(n), 0, n)).toBe(true);
          expect(drainAll(ring)[0]!.payload.length).toBe(n);
        }
      }),
    );
  });

  it("the write side allocates nothing in steady state", () => {
    const ring = ByteRing.create(1 << 16);
    const src = new Uint8Array(512).fill(3);
    const noop = () => {};
    const rounds = () => {
      for (let i = 0; i < 200; i++) {
        for (let k = 0; k < 100; k++) ring.write(1, 0, k, src, 0, 512);
        ring.drain(noop);
      }
    };
    // 20,000 writes a round: an allocation per write would be ≥ 20,000 × 16 B = 320 kB.
    expect(leastHeapAllocated(rounds)).toBeLessThan(64_000);
  });
});
