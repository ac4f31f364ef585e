/**
 * The LoLA sensor message reader, the client side of the sensor message (docs/lola.md): decodes the
 * 896-byte MessagePack map a LoLA server writes each cycle into LoLA-ordered arrays in place
 * (a `NaoState` satisfies {@link LolaSensorTarget}). It is the inverse of `LolaSensorWriter`
 * (sensor-message.ts); both are tested on the same golden bytes.
 *
 * - **Any key order.** Real LoLA's key order has never been published (lola.md §4.2, §10), so keys
 *   are matched by name, byte for byte, without building strings. Unknown keys are skipped (a
 *   newer LoLA may add some); a missing or repeated key, or a known key with the wrong count, makes
 *   the message malformed.
 * - **Lenient numbers, strict shapes.** Every number encoding is accepted where LoLA writes float32
 *   (float32, float64, any integer: newer msgpack-c packs 0.0 as 0); `Status` takes integers 0..127
 *   (floats with integral values too). NaN and ±Infinity make the message malformed: a LoLA never
 *   sends them, and a position that is not a number must never become a target.
 * - **Three outcomes** (mcap's parseRecord): the offset after a complete message; {@link LOLA_NEED_MORE}
 *   when the bytes end first (nothing is written to the target then); a thrown {@link LolaSensorError}
 *   with the stream offset and the bytes found. On a malformed message the target may be partly
 *   written; the caller treats it as invalid.
 * - RobotConfig's four strings are compared with the last ones seen and decoded only when they
 *   change (`robotConfig`, `robotConfigChanges`).
 * - **The layout is learnt, as B-Human does.** After a message decoded the general way, its
 *   layout (every structural byte, and where each float32 and Status value sits) is kept; a
 *   message whose structural bytes are the same is then read at those offsets directly, which is
 *   what a LoLA sends every cycle. Anything else (a different layout, NaN, a Status that is not a
 *   fixint, a new RobotConfig) takes the general way again, errors included.
 *
 * Pure: no I/O, browser-safe. `decode()` allocates nothing once the layout is learnt (and while
 * RobotConfig stays the same); learning it allocates.
 */
import { LOLA_SENSOR_KEYS, type LolaSensorField, MP, MP_HEAD, MP_LENGTH } from "./constants.js";
import type { LolaRobotConfig } from "./sensor-message.js";

/** A writable array of numbers: Float32Array, Uint8Array, number[]. */
export interface LolaWritableArray {
  readonly length: number;
  [index: number]: number;
}

/**
 * Where the reader writes, in LoLA's order and units. Same fields as `LolaSensorValues`, writable;
 * `NaoState` satisfies it. Each array must hold at least the key's count (checked at construction).
 */
export type LolaSensorTarget = { readonly [F in Exclude<LolaSensorField, "robotConfig">]: LolaWritableArray };

/** Returned by {@link LolaSensorReader.decode} when the message is not complete yet. */
export const LOLA_NEED_MORE = -1;

/** The largest sensor message the reader accepts (a LoLA message is 896 bytes). */
export const LOLA_MAX_SENSOR_MESSAGE_BYTES = 4096;

/** Longest RobotConfig string accepted (LoLA's are 20 and 5 characters). */
const MAX_CONFIG_STRING = 64;

export type LolaSensorErrorKind = "not-a-map" | "malformed" | "too-large" | "missing-key" | "bad-value";

/** The bytes are not a LoLA sensor message. There is no next message boundary to resume at. */
export class LolaSensorError extends Error {
  constructor(
    readonly kind: LolaSensorErrorKind,
    /** Offset of the offending byte, counted from the `start` given to decode(). */
    readonly offset: number,
    message: string,
  ) {
    super(message);
    this.name = "LolaSensorError";
  }
}

export interface LolaSensorReaderOptions {
  /** A message larger than this is malformed. Defaults to {@link LOLA_MAX_SENSOR_MESSAGE_BYTES}. */
  readonly maxMessageBytes?: number;
}

/** The key table as bytes, for matching without strings. */
const KEY_BYTES: readonly Uint8Array[] = LOLA_SENSOR_KEYS.map((k) => Uint8Array.from(k.key, (c) => c.charCodeAt(0)));
const ROBOT_CONFIG = LOLA_SENSOR_KEYS.findIndex((k) => k.field === "robotConfig");
const ALL_KEYS = (1 << LOLA_SENSOR_KEYS.length) - 1;
const CONFIG_FIELDS = ["bodyId", "bodyVersion", "headId", "headVersion"] as const;

/** positive fixint 0..127; a module constant, not a property load per value in the hot loop. */
const FIXINT_MAX = MP.POSITIVE_FIXINT_MAX;

/** A learnt layout: offsets are relative to the message start. */
interface Layout {
  readonly length: number;
  /** Offsets of the structural bytes (headers, keys, markers, string headers) and their values. */
  readonly structAt: Int32Array;
  readonly structByte: Uint8Array;
  /** Per key index: the offset of each value's data (float32: after 0xca; Status: the fixint); null for RobotConfig. */
  readonly valueAt: (Int32Array | null)[];
  /** RobotConfig strings: offset of the first character and the length, 4 each. */
  readonly configAt: Int32Array;
  readonly configLen: Int32Array;
}

export class LolaSensorReader {
  readonly #max: number;
  /** The target array per key index (null for RobotConfig). */
  readonly #arrays: (LolaWritableArray | null)[];
  readonly #isStatus: boolean[];
  /** The last RobotConfig strings' bytes, one buffer per string, with their lengths. */
  readonly #config = [new Uint8Array(MAX_CONFIG_STRING), new Uint8Array(MAX_CONFIG_STRING), new Uint8Array(MAX_CONFIG_STRING), new Uint8Array(MAX_CONFIG_STRING)];
  readonly #configLen = Int32Array.of(-1, -1, -1, -1);
  #view: DataView = new DataView(new ArrayBuffer(0));
  #robotConfig: LolaRobotConfig | null = null;
  #robotConfigChanges = 0;
  #messages = 0;
  /** Cursor shared by the private readers (a field, so reading a value returns only the value). */
  #p = 0;
  #layout: Layout | null = null;
  /** While decoding the general way: where each value was, and whether the message fits a layout. */
  readonly #rec: (Int32Array | null)[] = LOLA_SENSOR_KEYS.map((k) => (k.field === "robotConfig" ? null : new Int32Array(k.count)));
  readonly #recConfig = new Int32Array(8);
  #recOk = true;

  constructor(
    readonly target: LolaSensorTarget,
    opts: LolaSensorReaderOptions = {},
  ) {
    const max = opts.maxMessageBytes ?? LOLA_MAX_SENSOR_MESSAGE_BYTES;
    if (!Number.isInteger(max) || max < 16) throw new RangeError(`maxMessageBytes must be an integer >= 16, got ${max}`);
    this.#max = max;
    this.#arrays = LOLA_SENSOR_KEYS.map((k) => {
      if (k.field === "robotConfig") return null;
      const a = target[k.field];
      if (!a || a.length < k.count) throw new RangeError(`target.${k.field} must hold ${k.count} values`);
      return a;
    });
    this.#isStatus = LOLA_SENSOR_KEYS.map((k) => k.encoding === "fixint");
  }

  /** Messages decoded so far. */
  get messages(): number {
    return this.#messages;
  }
  /** RobotConfig of the last message (a frozen object, replaced only when the strings change), or null before the first. */
  get robotConfig(): LolaRobotConfig | null {
    return this.#robotConfig;
  }
  /** How often RobotConfig has changed, the first message included. */
  get robotConfigChanges(): number {
    return this.#robotConfigChanges;
  }

  /**
   * Decode the message starting at `b[start]`, reading no further than `end`. Returns the offset
   * just after it, or {@link LOLA_NEED_MORE} (target untouched). Throws {@link LolaSensorError}.
   * Perform side: no allocation unless RobotConfig changed.
   */
  decode(b: Uint8Array, start = 0, end = b.length): number {
    const l = this.#layout;
    if (l !== null && end - start >= l.length && this.#readLearnt(l, b, start)) {
      this.#messages++;
      return start + l.length;
    }
    return this.#decodeGeneral(b, start, end);
  }

  /** Perform side: read a message that has the learnt layout; false (fall back) when it has not. */
  #readLearnt(l: Layout, b: Uint8Array, start: number): boolean {
    const sa = l.structAt;
    const sb = l.structByte;
    for (let i = 0; i < sa.length; i++) if (b[start + sa[i]!] !== sb[i]) return false;
    const cfg = this.#config;
    for (let s = 0; s < 4; s++) {
      const at = start + l.configAt[s]!;
      const saved = cfg[s]!;
      const n = l.configLen[s]!;
      for (let i = 0; i < n; i++) if (b[at + i] !== saved[i]) return false; // a new RobotConfig: decode it
    }
    // Check every value before writing any (the target is untouched when this falls back).
    const isStatus = this.#isStatus;
    for (let k = 0; k < l.valueAt.length; k++) {
      const at = l.valueAt[k];
      if (at === null) continue;
      if (isStatus[k]) {
        for (let i = 0; i < at.length; i++) if (b[start + at[i]!]! > FIXINT_MAX) return false;
      } else {
        // NaN and ±Infinity have all exponent bits set: the general way reports them.
        for (let i = 0; i < at.length; i++) {
          const p = start + at[i]!;
          if ((b[p]! & 0x7f) === 0x7f && (b[p + 1]! & 0x80) === 0x80) return false;
        }
      }
    }
    const arrays = this.#arrays;
    const view = this.#learntView(b);
    for (let k = 0; k < arrays.length; k++) {
      const at = l.valueAt[k];
      if (at === null) continue;
      const dst = arrays[k]!;
      if (isStatus[k]) for (let i = 0; i < at.length; i++) dst[i] = b[start + at[i]!]!;
      else for (let i = 0; i < at.length; i++) dst[i] = view.getFloat32(start + at[i]!, false); // float 32, big-endian (finite: checked above)
    }
    return true;
  }

  /**
   * A view per buffer decoded from, for the two a socket reader uses (its read buffer, and its own
   * for split messages), known by identity: made once each (a `.buffer` or `.byteOffset` getter per
   * message would cost more than the view saves).
   */
  readonly #viewOf: [Uint8Array | null, Uint8Array | null] = [null, null];
  readonly #views: [DataView | null, DataView | null] = [null, null];
  #nextView = 0;

  #learntView(b: Uint8Array): DataView {
    if (b === this.#viewOf[0]) return this.#views[0]!;
    if (b === this.#viewOf[1]) return this.#views[1]!;
    const i = this.#nextView;
    this.#nextView ^= 1;
    const made = new DataView(b.buffer, b.byteOffset, b.byteLength);
    this.#viewOf[i] = b;
    this.#views[i] = made;
    return made;
  }

  #decodeGeneral(b: Uint8Array, start: number, end: number): number {
    const stop = this.#scanEnd(b, start, end);
    if (stop === LOLA_NEED_MORE) return LOLA_NEED_MORE; // (a split message keeps the learnt layout)
    this.#layout = null;
    this.#recOk = true;
    if (b.buffer !== this.#view.buffer || b.byteOffset !== this.#view.byteOffset || b.byteLength !== this.#view.byteLength) {
      this.#view = new DataView(b.buffer, b.byteOffset, b.byteLength);
    }
    this.#p = start;
    const n = this.#mapHeader(b, start);
    let seen = 0;
    for (let e = 0; e < n; e++) {
      const k = this.#key(b, start);
      if (k < 0) {
        this.#skip(b, start, stop); // unknown key: skip its value, whatever it is
        continue;
      }
      const bit = 1 << k;
      if (seen & bit) throw this.#error("malformed", b, start, this.#p, `key ${LOLA_SENSOR_KEYS[k]!.key} appears twice`);
      seen |= bit;
      const count = this.#arrayHeader(b, start, k);
      if (k === ROBOT_CONFIG) this.#readConfig(b, start);
      else {
        const dst = this.#arrays[k]!;
        const rec = this.#rec[k]!;
        const status = this.#isStatus[k];
        for (let i = 0; i < count; i++) {
          const at = this.#p;
          const t = b[at]!;
          // The learnt layout covers LoLA's encodings only: float32 values, Status as fixint.
          if (status ? t > MP.POSITIVE_FIXINT_MAX : t !== MP.FLOAT32) this.#recOk = false;
          rec[i] = (status ? at : at + 1) - start;
          dst[i] = status ? this.#status(b, start, k, i) : this.#number(b, start, k, i);
        }
      }
    }
    if (seen !== ALL_KEYS) {
      const missing = LOLA_SENSOR_KEYS.filter((_, i) => (seen & (1 << i)) === 0).map((k) => k.key);
      throw new LolaSensorError("missing-key", 0, `LoLA sensor message lacks ${missing.join(", ")} (it has ${n} keys; LoLA sends all ${LOLA_SENSOR_KEYS.length})`);
    }
    this.#messages++;
    if (this.#recOk) this.#learn(b, start, stop);
    return stop;
  }

  /** Keep the layout of the message just decoded (prepare side: allocates, once per layout). */
  #learn(b: Uint8Array, start: number, stop: number): void {
    const length = stop - start;
    const isValue = new Uint8Array(length);
    const valueAt = this.#rec.map((r, k) => {
      if (!r) return null;
      const width = this.#isStatus[k] ? 1 : 4;
      for (const at of r) for (let i = 0; i < width; i++) isValue[at + i] = 1;
      return Int32Array.from(r);
    });
    const configAt = Int32Array.from(this.#recConfig.subarray(0, 4));
    const configLen = Int32Array.from(this.#recConfig.subarray(4, 8));
    for (let s = 0; s < 4; s++) for (let i = 0; i < configLen[s]!; i++) isValue[configAt[s]! + i] = 1;
    const structAt: number[] = [];
    for (let i = 0; i < length; i++) if (!isValue[i]) structAt.push(i);
    this.#layout = {
      length,
      structAt: Int32Array.from(structAt),
      structByte: Uint8Array.from(structAt, (i) => b[start + i]!),
      valueAt,
      configAt,
      configLen,
    };
  }

  #mapHeader(b: Uint8Array, start: number): number {
    const t = b[this.#p]!;
    if (t >= MP.FIXMAP && t <= 0x8f) {
      this.#p++;
      return t & 0x0f; // fixmap
    }
    const v = this.#view;
    if (t === 0xde) {
      this.#p += 3;
      return v.getUint16(this.#p - 2); // map 16
    }
    if (t === 0xdf) {
      this.#p += 5;
      return v.getUint32(this.#p - 4); // map 32
    }
    throw this.#error("not-a-map", b, start, this.#p, `a LoLA sensor message is a MessagePack map; byte 0 is 0x${hex2(t)}`);
  }

  /** Read a key string; its index in LOLA_SENSOR_KEYS, or -1 when unknown. */
  #key(b: Uint8Array, start: number): number {
    const at = this.#p;
    const t = b[at]!;
    let len: number;
    let p = at + 1;
    if (t >= MP.FIXSTR && t <= 0xbf)
      len = t & 0x1f; // fixstr
    else if (t === 0xd9)
      len = b[p++]!; // str 8
    else if (t === 0xda) {
      len = (b[p]! << 8) | b[p + 1]!; // str 16
      p += 2;
    } else throw this.#error("malformed", b, start, at, `expected a string key, found 0x${hex2(t)}`);
    this.#p = p + len;
    for (let k = 0; k < KEY_BYTES.length; k++) {
      const kb = KEY_BYTES[k]!;
      if (kb.length !== len) continue;
      let i = 0;
      while (i < len && b[p + i] === kb[i]) i++;
      if (i === len) return k;
    }
    return -1;
  }

  #arrayHeader(b: Uint8Array, start: number, k: number): number {
    const at = this.#p;
    const t = b[at]!;
    let count: number;
    if (t >= MP.FIXARRAY && t <= 0x9f) {
      count = t & 0x0f; // fixarray
      this.#p = at + 1;
    } else if (t === MP.ARRAY16) {
      count = this.#view.getUint16(at + 1); // array 16
      this.#p = at + 3;
    } else if (t === 0xdd) {
      count = this.#view.getUint32(at + 1); // array 32
      this.#p = at + 5;
    } else throw this.#error("malformed", b, start, at, `${LOLA_SENSOR_KEYS[k]!.key} must be an array, found 0x${hex2(t)}`);
    const want = LOLA_SENSOR_KEYS[k]!.count;
    if (count !== want) throw this.#error("bad-value", b, start, at, `${LOLA_SENSOR_KEYS[k]!.key} has ${count} values, LoLA sends ${want}`);
    return count;
  }

  /** One number of a float key, any MessagePack number encoding; finite only. */
  #number(b: Uint8Array, start: number, k: number, i: number): number {
    const at = this.#p;
    const t = b[at]!;
    const v = this.#view;
    let x: number;
    if (t === MP.FLOAT32) {
      x = v.getFloat32(at + 1); // float 32
      this.#p = at + 5;
    } else if (t <= MP.POSITIVE_FIXINT_MAX) {
      x = t; // positive fixint
      this.#p = at + 1;
    } else {
      x = this.#otherNumber(b, start, at, t, k, i);
    }
    if (x - x !== 0) throw this.#error("bad-value", b, start, at, `${LOLA_SENSOR_KEYS[k]!.key}[${i}] is ${x}; LoLA values are finite`);
    return x;
  }

  #otherNumber(b: Uint8Array, start: number, at: number, t: number, k: number, i: number): number {
    const v = this.#view;
    let x: number;
    let size: number;
    switch (t) {
      case 0xcb: // float 64
        x = v.getFloat64(at + 1);
        size = 9;
        break;
      case 0xcc: // uint 8
        x = b[at + 1]!;
        size = 2;
        break;
      case 0xcd: // uint 16
        x = v.getUint16(at + 1);
        size = 3;
        break;
      case 0xce: // uint 32
        x = v.getUint32(at + 1);
        size = 5;
        break;
      case 0xcf: // uint 64
        x = v.getUint32(at + 1) * 4294967296 + v.getUint32(at + 5);
        size = 9;
        break;
      case 0xd0: // int 8
        x = v.getInt8(at + 1);
        size = 2;
        break;
      case 0xd1: // int 16
        x = v.getInt16(at + 1);
        size = 3;
        break;
      case 0xd2: // int 32
        x = v.getInt32(at + 1);
        size = 5;
        break;
      case 0xd3: // int 64
        x = v.getInt32(at + 1) * 4294967296 + v.getUint32(at + 5);
        size = 9;
        break;
      default:
        if (t >= 0xe0) {
          x = t - 0x100; // negative fixint
          size = 1;
          break;
        }
        throw this.#error("bad-value", b, start, at, `${LOLA_SENSOR_KEYS[k]!.key}[${i}] is 0x${hex2(t)} (${typeName(t)}), not a number`);
    }
    this.#p = at + size;
    return x;
  }

  /** One Status value: an integer 0..127 (a positive fixint on the wire). */
  #status(b: Uint8Array, start: number, k: number, i: number): number {
    const at = this.#p;
    const x = this.#number(b, start, k, i);
    if (!(x >= 0 && x <= MP.POSITIVE_FIXINT_MAX && Math.floor(x) === x)) {
      throw this.#error("bad-value", b, start, at, `Status[${i}] is ${x}; LoLA sends integers 0..3`);
    }
    return x;
  }

  /** RobotConfig: four strings. Decoded into a new object only when their bytes change. */
  #readConfig(b: Uint8Array, start: number): void {
    let changed = false;
    for (let s = 0; s < 4; s++) {
      const at = this.#p;
      const t = b[at]!;
      let len: number;
      let p = at + 1;
      if (t >= MP.FIXSTR && t <= 0xbf)
        len = t & 0x1f; // fixstr
      else if (t === 0xd9)
        len = b[p++]!; // str 8
      else throw this.#error("bad-value", b, start, at, `RobotConfig[${s}] must be a string, found 0x${hex2(t)} (${typeName(t)})`);
      if (len > MAX_CONFIG_STRING) throw this.#error("bad-value", b, start, at, `RobotConfig[${s}] is ${len} bytes long (LoLA's are 20 and 5)`);
      this.#recConfig[s] = p - start;
      this.#recConfig[4 + s] = len;
      const saved = this.#config[s]!;
      if (this.#configLen[s] !== len) {
        changed = true;
        this.#configLen[s] = len;
      }
      for (let i = 0; i < len; i++) {
        const c = b[p + i]!;
        if (saved[i] !== c) {
          saved[i] = c;
          changed = true;
        }
      }
      this.#p = p + len;
    }
    if (!changed) return;
    const out: Record<(typeof CONFIG_FIELDS)[number], string> = { bodyId: "", bodyVersion: "", headId: "", headVersion: "" };
    for (let s = 0; s < 4; s++) out[CONFIG_FIELDS[s]!] = String.fromCharCode(...this.#config[s]!.subarray(0, this.#configLen[s]!));
    this.#robotConfig = Object.freeze(out);
    this.#robotConfigChanges++;
  }

  /** Skip one value of any type (an unknown key's). The message is known to be complete. */
  #skip(b: Uint8Array, start: number, stop: number): void {
    const end = skipValues(b, this.#p, stop, 1, stop - this.#p);
    if (end < 0) throw this.#error("malformed", b, start, this.#p, "undecodable value");
    this.#p = end;
  }

  /** Where the map at `start` ends, LOLA_NEED_MORE, or throw when it cannot be a message. */
  #scanEnd(b: Uint8Array, start: number, end: number): number {
    if (start >= end) return LOLA_NEED_MORE;
    const t = b[start]!;
    if (!((t >= MP.FIXMAP && t <= 0x8f) || t === 0xde || t === 0xdf)) {
      throw this.#error("not-a-map", b, start, start, `a LoLA sensor message is a MessagePack map; its first byte is 0x${hex2(t)} (${typeName(t)})`);
    }
    const r = skipValues(b, start, end, 1, this.#max);
    if (r === SKIP_NEED_MORE) return LOLA_NEED_MORE;
    if (r === SKIP_TOO_LARGE) throw this.#error("too-large", b, start, start, `LoLA sensor message is larger than ${this.#max} bytes (LoLA's are 896)`);
    if (r < 0) throw this.#error("malformed", b, start, -r - 3, `byte 0x${hex2(b[-r - 3]!)} cannot appear in LoLA's MessagePack (${typeName(b[-r - 3]!)})`);
    return r;
  }

  #error(kind: LolaSensorErrorKind, b: Uint8Array, start: number, at: number, what: string): LolaSensorError {
    return new LolaSensorError(kind, at - start, `bad LoLA sensor message at byte ${at - start}: ${what} (${hexAt(b, at, Math.min(b.length, at + 16))})`);
  }
}

const SKIP_NEED_MORE = -1;
const SKIP_TOO_LARGE = -2;

/**
 * Walk `items` MessagePack values from `p`: the offset after them, SKIP_NEED_MORE, SKIP_TOO_LARGE
 * (more than `max` bytes from `p`), or -(offset + 3) of a byte that cannot appear (0xc1, extension
 * types, which LoLA's old-spec dialect does not have). Headers only; payloads are skipped by length.
 */
function skipValues(b: Uint8Array, p: number, end: number, items: number, max: number): number {
  const limit = p + max;
  let left = items;
  while (left > 0) {
    if (p >= end) return p >= limit ? SKIP_TOO_LARGE : SKIP_NEED_MORE;
    const t = b[p]!;
    const size = MP_HEAD.headBytes[t]!; // header bytes
    if (size === 0) return -(p + 3); // 0xc1 never used; 0xc7-0xc9, 0xd4-0xd8 extensions
    let skip = MP_HEAD.fixedBytes[t]!; // payload bytes
    let add = MP_HEAD.fixedItems[t]!; // child items
    if (size > 1) {
      if (p + size > end) return p + size > limit ? SKIP_TOO_LARGE : SKIP_NEED_MORE;
      const n = size === 2 ? b[p + 1]! : size === 3 ? (b[p + 1]! << 8) | b[p + 2]! : ((b[p + 1]! << 24) | (b[p + 2]! << 16) | (b[p + 3]! << 8) | b[p + 4]!) >>> 0;
      const counts = MP_HEAD.lengthCounts[t]!;
      if (counts === MP_LENGTH.ITEMS) add = n;
      else if (counts === MP_LENGTH.PAIRS) add = 2 * n;
      else skip = n;
    }
    left = left - 1 + add;
    p += size + skip;
    // Every item still due takes at least a byte: give up now rather than wait for what cannot fit.
    if (p + left > limit) return SKIP_TOO_LARGE;
  }
  return p > end ? SKIP_NEED_MORE : p; // the last payload is not all here yet
}

function hex2(x: number): string {
  return x.toString(16).padStart(2, "0");
}

function hexAt(b: Uint8Array, from: number, to: number): string {
  let out = "";
  for (let i = from; i < to; i++) out += (i > from ? " " : "") + hex2(b[i]!);
  return out.length ? `bytes ${out}${to < b.length ? " …" : ""}` : "no bytes";
}

function typeName(t: number): string {
  if (t <= 0x7f) return "positive fixint";
  if (t >= 0xe0) return "negative fixint";
  if (t <= 0x8f) return "fixmap";
  if (t <= 0x9f) return "fixarray";
  if (t <= 0xbf) return "fixstr";
  if (t === 0xc0) return "nil";
  if (t === 0xc1) return "never used in MessagePack";
  if (t === 0xc2 || t === 0xc3) return "boolean";
  if (t >= 0xc4 && t <= 0xc6) return "binary";
  if (t === 0xca || t === 0xcb) return "float";
  if (t >= 0xcc && t <= 0xd3) return "integer";
  if (t >= 0xd9 && t <= 0xdb) return "string";
  if (t === 0xdc || t === 0xdd) return "array";
  if (t === 0xde || t === 0xdf) return "map";
  return "extension";
}
