/**
 * Test helpers for LoLA: tiny byte builders (one field per line in the tests) and an independent
 * MessagePack walker that records the offset and the encoding of every value, the way B-Human's
 * NaoProvider parses the first packet and caches pointers. Written from the MessagePack spec, not
 * from src/wire/lola, so it checks the writer rather than repeating it.
 */

export const u8 = (...b: number[]): number[] => b;
export const fixmap = (n: number): number[] => [0x80 | n];
export const fixarray = (n: number): number[] => [0x90 | n];
export const array16 = (n: number): number[] => [0xdc, n >> 8, n & 0xff];
export const str = (s: string): number[] => [0xa0 | s.length, ...Array.from(s, (c) => c.charCodeAt(0))];
export function f32(v: number): number[] {
  const dv = new DataView(new ArrayBuffer(4));
  dv.setFloat32(0, v, false);
  return [0xca, dv.getUint8(0), dv.getUint8(1), dv.getUint8(2), dv.getUint8(3)];
}
export const f32s = (vs: ArrayLike<number>): number[] => Array.from(vs).flatMap(f32);
export const fixints = (vs: ArrayLike<number>): number[] => Array.from(vs);

export type WalkedValue =
  | { type: "f32"; offset: number; value: number }
  | { type: "f64"; offset: number; value: number }
  | { type: "int"; offset: number; value: number }
  | { type: "str"; offset: number; value: string }
  | { type: "bool"; offset: number; value: boolean };

export interface WalkedEntry {
  key: string;
  keyOffset: number;
  values: WalkedValue[];
}

/**
 * Walk a map of string keys to arrays of scalars. `offset` of each value is where its data starts
 * (after the type byte for f32/f64/str; the byte itself for fixint and bool). Throws on anything else.
 */
export function walkMap(b: Uint8Array): { entries: WalkedEntry[]; end: number } {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  let p = 0;
  const t0 = b[p++]!;
  let n: number;
  if (t0 >= 0x80 && t0 <= 0x8f) n = t0 & 0x0f;
  else if (t0 === 0xde) {
    n = dv.getUint16(p);
    p += 2;
  } else throw new Error(`not a map: 0x${t0.toString(16)}`);
  const readStr = (): { s: string; at: number } => {
    const t = b[p++]!;
    let len: number;
    if (t >= 0xa0 && t <= 0xbf) len = t & 0x1f;
    else if (t === 0xd9) len = b[p++]!;
    else throw new Error(`not a string at ${p - 1}: 0x${t.toString(16)}`);
    const at = p;
    p += len;
    return { s: String.fromCharCode(...b.subarray(at, at + len)), at };
  };
  const entries: WalkedEntry[] = [];
  for (let i = 0; i < n; i++) {
    const keyOffset = p;
    const key = readStr().s;
    const ta = b[p++]!;
    let count: number;
    if (ta >= 0x90 && ta <= 0x9f) count = ta & 0x0f;
    else if (ta === 0xdc) {
      count = dv.getUint16(p);
      p += 2;
    } else throw new Error(`value of ${key} is not an array: 0x${ta.toString(16)}`);
    const values: WalkedValue[] = [];
    for (let j = 0; j < count; j++) {
      const t = b[p]!;
      if (t === 0xca) {
        values.push({ type: "f32", offset: p + 1, value: dv.getFloat32(p + 1) });
        p += 5;
      } else if (t === 0xcb) {
        values.push({ type: "f64", offset: p + 1, value: dv.getFloat64(p + 1) });
        p += 9;
      } else if (t <= 0x7f) {
        values.push({ type: "int", offset: p, value: t });
        p += 1;
      } else if (t === 0xc2 || t === 0xc3) {
        values.push({ type: "bool", offset: p, value: t === 0xc3 });
        p += 1;
      } else if ((t >= 0xa0 && t <= 0xbf) || t === 0xd9) {
        const { s, at } = readStr();
        values.push({ type: "str", offset: at, value: s });
      } else throw new Error(`unexpected 0x${t.toString(16)} at ${p} in ${key}`);
    }
    entries.push({ key, keyOffset, values });
  }
  return { entries, end: p };
}

/** Read a float32 big-endian at `offset` (how a B-Human-style client reads cached offsets). */
export function f32At(b: Uint8Array, offset: number): number {
  return new DataView(b.buffer, b.byteOffset, b.byteLength).getFloat32(offset, false);
}

/** A deterministic NaoState-like value set with every kind of number LoLA carries. */
export function knownSensorValues() {
  return {
    // 0.0 and 1.0 included on purpose: they must still be float32.
    stiffness: Float32Array.from({ length: 25 }, (_, i) => i / 24),
    position: Float32Array.from({ length: 25 }, (_, i) => (i - 12) * 0.1),
    temperature: Float32Array.from({ length: 25 }, (_, i) => 30 + 2 * (i % 5)),
    current: Float32Array.from({ length: 25 }, (_, i) => i * 0.01),
    battery: Float32Array.of(0.75, -32708, -1.25, 2.8),
    accelerometer: Float32Array.of(0.1, -0.2, -9.81),
    gyroscope: Float32Array.of(0.01, 0.02, -0.03),
    angles: Float32Array.of(0.05, -0.02),
    sonar: Float32Array.of(0.3, 5),
    fsr: Float32Array.of(0.5, 0.4, 0.3, 0.2, 0.6, 0.7, 0.8, 0.9),
    status: Uint8Array.from({ length: 25 }, (_, i) => i % 4),
    touch: Float32Array.from({ length: 14 }, (_, i) => (i % 3 === 0 ? 1 : 0)),
  };
}

export const KNOWN_ROBOT_CONFIG = {
  bodyId: "P0000073A07S94700012",
  bodyVersion: "6.0.0",
  headId: "P0000074A05S93M00061",
  headVersion: "6.0.0",
} as const;

export function toHex(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("hex");
}

/**
 * A known full command (all 11 keys, nidhogg's order) with whole values (0.0, 1.0) among them,
 * for the golden vector test/lola/golden/command-full.hex that the writer and the reader share.
 */
export function knownCommandValues() {
  const ramp = (n: number, f: (i: number) => number) => Array.from({ length: n }, (_, i) => Math.fround(f(i)));
  return {
    Position: ramp(25, (i) => (i - 12) * 0.05),
    Stiffness: ramp(25, (i) => (i % 5) / 4), // 0, 0.25, 0.5, 0.75, 1
    REar: ramp(10, (i) => i / 9),
    LEar: ramp(10, (i) => 1 - i / 9),
    Chest: [1, 0, 0.5],
    LEye: ramp(24, (i) => (i % 8) / 7),
    REye: ramp(24, (i) => ((i + 3) % 8) / 7),
    LFoot: [0, 1, 0],
    RFoot: [0, 0, 1],
    Skull: ramp(12, (i) => (i % 2 === 0 ? 1 : 0.125)),
    Sonar: [true, false],
  };
}
