/**
 * Standard CRC-32 (IEEE 802.3, reflected, init and xorout 0xFFFFFFFF): the one zlib computes.
 * Pure and browser-safe (node:zlib's crc32 is Node-only; a test checks both agree).
 * Slicing-by-8 tables (8 KiB, built once): about four times the speed of the byte-wise loop on the
 * 200–500-byte frames of every cycle. No allocation per call. Incremental: pass the previous result.
 */

const T = (() => {
  const t = new Int32Array(256 * 8);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c;
  }
  for (let n = 0; n < 256; n++) {
    let c = t[n]!;
    for (let s = 1; s < 8; s++) {
      c = t[c & 0xff]! ^ (c >>> 8);
      t[s * 256 + n] = c;
    }
  }
  return t;
})();

/** CRC-32 of `bytes[start, end)`; continue a previous CRC with `prev`. Returns an unsigned 32-bit value. */
export function crc32(bytes: Uint8Array, start = 0, end = bytes.length, prev = 0): number {
  crcRaw(bytes, start, end, ~prev);
  return ~REG[0]! >>> 0;
}

/**
 * Write the CRC-32 of `bytes[start, end)` little-endian at `bytes[at, at + 4)`.
 * NOTE: hot path. A 32-bit CRC is outside V8's small-integer range half the time, so returning
 * it from a call that is not inlined allocates; writing it into the bytes does not.
 */
export function crc32Write(bytes: Uint8Array, start: number, end: number, at: number): void {
  crcRaw(bytes, start, end, -1);
  const c = ~REG[0]!;
  bytes[at] = c & 0xff;
  bytes[at + 1] = (c >>> 8) & 0xff;
  bytes[at + 2] = (c >>> 16) & 0xff;
  bytes[at + 3] = (c >>> 24) & 0xff;
}

/** True when the little-endian u32 at `bytes[at, at + 4)` is the CRC-32 of `bytes[start, end)`. No allocation. */
export function crc32Matches(bytes: Uint8Array, start: number, end: number, at: number): boolean {
  crcRaw(bytes, start, end, -1);
  const c = ~REG[0]!;
  return c === (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24));
}

/** The CRC register after `crcRaw`, as an int32: a typed slot, so passing it back never allocates. */
const REG = new Int32Array(1);

/** The register loop from the pre-inverted register `init`; leaves the register in REG[0]. */
function crcRaw(bytes: Uint8Array, start: number, end: number, init: number): void {
  let c = init | 0;
  let i = start;
  const stop8 = end - 8;
  for (; i <= stop8; i += 8) {
    const a = c ^ (bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24));
    c =
      T[1792 + (a & 0xff)]! ^
      T[1536 + ((a >>> 8) & 0xff)]! ^
      T[1280 + ((a >>> 16) & 0xff)]! ^
      T[1024 + (a >>> 24)]! ^
      T[768 + bytes[i + 4]!]! ^
      T[512 + bytes[i + 5]!]! ^
      T[256 + bytes[i + 6]!]! ^
      T[bytes[i + 7]!]!;
  }
  for (; i < end; i++) c = T[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  REG[0] = c;
}
