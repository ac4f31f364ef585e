/**
 * Standard CRC-32 (IEEE 802.3, reflected, init and xorout 0xFFFFFFFF): the one zlib computes.
 * Pure and browser-safe (node:zlib's crc32 is Node-only; a test checks both agree).
 * Table-driven, no allocation per call. Incremental: pass the previous result as `prev`.
 */

const TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** CRC-32 of `bytes[start, end)`; continue a previous CRC with `prev`. Returns an unsigned 32-bit value. */
export function crc32(bytes: Uint8Array, start = 0, end = bytes.length, prev = 0): number {
  let c = (prev ^ 0xffffffff) >>> 0;
  for (let i = start; i < end; i++) c = TABLE[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
