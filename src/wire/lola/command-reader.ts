/**
 * The LoLA command reader (docs/lola.md): turns the byte stream a LoLA
 * client writes into partial commands, one per MessagePack map.
 *
 * - **Streaming.** Clients split and merge writes, so bytes are framed here: a small resumable
 *   scanner finds where each MessagePack value ends without decoding it (three outcomes, as in
 *   mcap's parseRecord: a complete value, "need more bytes", or malformed). Each complete map is
 *   then decoded by msgpackr's `Unpackr`. The scanner is what makes "need more" exact and bounded:
 *   a declared length can never make us wait for, or hold, more than `maxMessageBytes`.
 * - **Lenient per key.** Keys are looked up by name in any order (HULKs sends them alphabetically),
 *   any subset is valid (B-Human sends 10 keys without Sonar), integers are accepted where floats
 *   are expected (newer msgpack-c packs 0.0 as 0, which crashed LoLA), `Sonar` is two booleans (0
 *   and 1 are accepted too). A key with the wrong length or type is reported in `problems` and left
 *   out; the rest of the message still applies. Unknown keys are reported and ignored.
 * - **Strict per stream.** Bytes that are not MessagePack (0xc1), a top-level value that is not a
 *   map, MessagePack extension types (LoLA's old-spec dialect has none) or a message larger than
 *   `maxMessageBytes` make the stream undecodable: `push()` returns a {@link LolaStreamError} and
 *   the reader ignores everything after it. The server drops that client with the error's message.
 *   There is no way to find the next message boundary in a MessagePack stream after such bytes.
 *
 * Value checks (finite numbers, joint limits, 0..1 clamping) are not done here: the runtime does
 * them in one place (`applyCommandUpdate` in src/bodies/nao/commands.ts, via `NaoRobot.command`).
 *
 * - **Allocation-free on request** (`reuseUpdate`, what the LoLA server uses: it runs on the
 *   real-time core's thread, whose steady state allocates nothing). A message whose every key is a
 *   known LoLA key, once, with an array of exactly its count of numbers (booleans for `Sonar`) is
 *   decoded straight from the bytes into the reader's own update and arrays, rewritten by the next
 *   message. Anything else (an unknown or repeated key, a wrong length or type, 64-bit integers)
 *   goes through msgpackr as without the option, so its problems read the same; the update then is
 *   a fresh object. test/lola/command-reader.test.ts checks both paths give the same updates.
 *
 * Pure: no I/O, browser-safe. Allocates per message (msgpackr builds the arrays) unless
 * `reuseUpdate`, never per byte; `push()` never throws.
 */
import { Unpackr } from "msgpackr";
import { LOLA_COMMAND_KEY_BY_NAME, LOLA_COMMAND_KEYS, LOLA_MAX_COMMAND_BYTES, type LolaCommandKeyName, MP_HEAD, MP_LENGTH } from "./constants.js";

/**
 * A partial command in LoLA's keys, order and units. Structurally the same as `NaoCommandUpdate`
 * (src/bodies/nao/commands.ts); wire/ does not import bodies/, a test checks the two stay assignable.
 */
export type LolaCommandUpdate = {
  [K in Exclude<LolaCommandKeyName, "Sonar">]?: number[];
} & { Sonar?: boolean[] };

/** One key the reader left out of the update, and why. Same shape as `CommandProblem`. */
export interface LolaCommandProblem {
  readonly key: string;
  readonly reason: string;
}

export type LolaStreamErrorKind = "malformed" | "not-a-map" | "extension" | "too-large" | "undecodable";

/** The client's byte stream cannot be decoded any further: drop the client with `message`. */
export class LolaStreamError extends Error {
  constructor(
    readonly kind: LolaStreamErrorKind,
    /** Offset of the offending byte in the whole stream (bytes since the client connected). */
    readonly streamOffset: number,
    message: string,
  ) {
    super(message);
    this.name = "LolaStreamError";
  }
}

export interface LolaCommandReaderOptions {
  /** A message (one map) larger than this makes the stream undecodable. Defaults to 64 KiB. */
  readonly maxMessageBytes?: number;
  /**
   * Decode well-formed messages without allocating: the update passed to the listener, its arrays
   * and the (empty) problems are the reader's own, valid only during the call (the next message
   * rewrites them; copy what you keep). Defaults to false: every update is a fresh object.
   */
  readonly reuseUpdate?: boolean;
}

/** Called once per complete map, in stream order. `problems` is empty when every key applied. */
export type LolaCommandListener = (update: LolaCommandUpdate, problems: LolaCommandProblem[]) => void;

const NEED_MORE = -1;
const FAILED = -2;
/** A learnt layout (reuseUpdate) covers messages up to this long: a full float32 command is 786 bytes. */
const LAYOUT_MAX_BYTES = 2048;

/** The problems of a message that has none (shared: never pushed to). */
const NO_PROBLEMS: LolaCommandProblem[] = Object.freeze([]) as unknown as LolaCommandProblem[];

/** Each key's index in LOLA_COMMAND_KEYS (the reused update's arrays and `seen` flags are in that order). */
const KI = Object.fromEntries(LOLA_COMMAND_KEYS.map((k, i) => [k.key, i])) as Readonly<Record<LolaCommandKeyName, number>>;

/** Each key's name as bytes (ASCII), to match a key in a message without decoding it. */
const KEY_NAME_BYTES: readonly Uint8Array[] = LOLA_COMMAND_KEYS.map((k) => Uint8Array.from(k.key, (c) => c.charCodeAt(0)));

/** Big-endian float bytes go through this scratch (no DataView per message). */
const SCRATCH = new Uint8Array(8);
const SCRATCH_F32 = new Float32Array(SCRATCH.buffer, 0, 1);
const SCRATCH_F64 = new Float64Array(SCRATCH.buffer, 0, 1);
const LITTLE_ENDIAN = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;

/**
 * Store the MessagePack number at `p` into `out[i]` as msgpackr decodes it; the bytes it spans, or 0
 * when it is not a number the fast path takes (64-bit integers, anything else). It stores rather
 * than returns: a double returned from a call that is not inlined is boxed, 16 bytes each.
 */
function numberInto(s: Uint8Array, p: number, out: number[], i: number): number {
  const t = s[p]!;
  if (t <= 0x7f) {
    out[i] = t;
    return 1;
  }
  if (t >= 0xe0) {
    out[i] = t - 256;
    return 1;
  }
  switch (t) {
    case 0xca:
      for (let j = 0; j < 4; j++) SCRATCH[LITTLE_ENDIAN ? 3 - j : j] = s[p + 1 + j]!;
      out[i] = SCRATCH_F32[0]!;
      return 5;
    case 0xcb:
      for (let j = 0; j < 8; j++) SCRATCH[LITTLE_ENDIAN ? 7 - j : j] = s[p + 1 + j]!;
      out[i] = SCRATCH_F64[0]!;
      return 9;
    case 0xcc:
      out[i] = s[p + 1]!;
      return 2;
    case 0xcd:
      out[i] = (s[p + 1]! << 8) | s[p + 2]!;
      return 3;
    case 0xce:
      out[i] = ((s[p + 1]! << 24) | (s[p + 2]! << 16) | (s[p + 3]! << 8) | s[p + 4]!) >>> 0;
      return 5;
    case 0xd0:
      out[i] = (s[p + 1]! << 24) >> 24;
      return 2;
    case 0xd1:
      out[i] = (((s[p + 1]! << 8) | s[p + 2]!) << 16) >> 16;
      return 3;
    case 0xd2:
      out[i] = (s[p + 1]! << 24) | (s[p + 2]! << 16) | (s[p + 3]! << 8) | s[p + 4]!;
      return 5;
    default:
      return 0;
  }
}

/** The reader's own update for `reuseUpdate`: every key present (undefined when absent), one array per key. */
type ReusedUpdate = Record<LolaCommandKeyName, number[] | boolean[] | undefined>;

/**
 * One reader per client connection. Feed it whatever the socket delivers, in order.
 */
export class LolaCommandReader {
  readonly #max: number;
  readonly #unpackr = new Unpackr({ mapsAsObjects: false, useRecords: false });
  /** Bytes of an incomplete message, always starting at a message boundary. */
  #buf = new Uint8Array(2048);
  #len = 0;
  /** Stream offset of #buf[0]. */
  #base = 0;
  /** Resumable scanner state for the message at #buf[0]: next item's offset and items still due. */
  #scanAt = 0;
  #scanLeft = 1;
  #failed: LolaStreamError | null = null;
  #messages = 0;
  /** reuseUpdate: the update handed out, its arrays by key index, and which keys this message set. */
  readonly #update: ReusedUpdate | null;
  readonly #arrays: Array<number[] | boolean[]>;
  readonly #seen = new Uint8Array(LOLA_COMMAND_KEYS.length);
  /**
   * reuseUpdate: the layout of the last message the fast path took whose every number was a float32
   * (what LoLA clients send, the same keys in the same order every cycle): its length (0: none), its
   * bytes, where its structural bytes are (every byte but the float32 payloads and Sonar's booleans),
   * and per entry the key and where its first value's marker is. A message of the same length with
   * the same structural bytes is that layout with other values: no scan, one pass over the values
   * (see #readLearnt). The arrays are made once: learning a new layout allocates nothing.
   */
  #layoutLen = 0;
  readonly #layoutBytes: Uint8Array;
  readonly #layoutStructAt: Int32Array;
  #layoutStructs = 0;
  readonly #layoutKey = new Int8Array(LOLA_COMMAND_KEYS.length);
  readonly #layoutValueAt = new Int32Array(LOLA_COMMAND_KEYS.length);
  #layoutEntries = 0;
  /**
   * Big-endian float32 reads: a view of the reader's own buffer, and one of the last chunk pushed
   * (a socket reader pushes its one read buffer every time), known by identity.
   */
  #bufView: DataView;
  #chunk: Uint8Array | null = null;
  #chunkView: DataView;

  constructor(opts: LolaCommandReaderOptions = {}) {
    const max = opts.maxMessageBytes ?? LOLA_MAX_COMMAND_BYTES;
    if (!Number.isInteger(max) || max < 16) throw new RangeError(`maxMessageBytes must be an integer >= 16, got ${max}`);
    this.#max = max;
    // Packed, not `new Array(n).fill()` (holey): an element of a holey double array may be the hole,
    // so optimised code that reads it boxes each number (~90 bytes a command in applyCommandUpdate).
    this.#arrays = opts.reuseUpdate ? LOLA_COMMAND_KEYS.map((k) => (k.type === "bool" ? Array.from({ length: k.count }, () => false) : Array.from({ length: k.count }, () => 0.5))) : [];
    if (opts.reuseUpdate) {
      const u = {} as ReusedUpdate;
      for (const k of LOLA_COMMAND_KEYS) u[k.key] = undefined;
      this.#update = u;
    } else this.#update = null;
    const layoutBytes = opts.reuseUpdate ? Math.min(LAYOUT_MAX_BYTES, max) : 0;
    this.#layoutBytes = new Uint8Array(layoutBytes);
    this.#layoutStructAt = new Int32Array(layoutBytes);
    this.#bufView = new DataView(this.#buf.buffer);
    this.#chunkView = this.#bufView;
  }

  /** Maps decoded so far. */
  get messages(): number {
    return this.#messages;
  }
  /** Bytes held for an incomplete message. */
  get pendingBytes(): number {
    return this.#len;
  }
  /** The error that stopped this stream, or null. */
  get error(): LolaStreamError | null {
    return this.#failed;
  }

  /**
   * Feed the next bytes of the stream (`chunk[0, length)`, all of it by default). Calls
   * `onMessage` for every map completed by them and returns null, or returns the {@link LolaStreamError} that makes the stream undecodable (also on
   * every later call). Never throws, except what `onMessage` itself throws.
   */
  push(chunk: Uint8Array, onMessage: LolaCommandListener, length = chunk.length): LolaStreamError | null {
    if (this.#failed) return this.#failed;
    // `length`: only chunk[0, length) is new (a socket read into a reused buffer)
    const n = Math.min(Math.max(0, length | 0), chunk.length);
    if (n === 0) return null;
    let src: Uint8Array;
    let srcLen: number;
    let srcBase: number;
    if (this.#len === 0) {
      // Nothing pending: read straight from the chunk, copy only an incomplete tail.
      src = chunk;
      srcLen = n;
      srcBase = this.#base;
    } else {
      this.#reserve(this.#len + n);
      const buf = this.#buf;
      const at = this.#len;
      if (n === chunk.length) buf.set(chunk, at);
      else for (let i = 0; i < n; i++) buf[at + i] = chunk[i]!; // no view object for a part
      this.#len += n;
      src = buf;
      srcLen = this.#len;
      srcBase = this.#base;
    }
    let pos = 0;
    while (pos < srcLen) {
      // The learnt layout first (reuseUpdate): a message like the last one needs no scan.
      const learnt = this.#layoutLen;
      if (learnt > 0 && srcLen - pos >= learnt && this.#readLearnt(src, pos)) {
        this.#messages++;
        pos += learnt;
        this.#scanAt = 0;
        this.#scanLeft = 1;
        onMessage(this.#update as LolaCommandUpdate, NO_PROBLEMS);
        continue;
      }
      const end = this.#scan(src, pos, srcLen, srcBase);
      if (end === FAILED) return this.#failed;
      if (end === NEED_MORE) break;
      if (this.#update && this.#decodeInto(src, pos, end)) {
        this.#learn(src, pos, end);
        this.#messages++;
        pos = end;
        this.#scanAt = 0;
        this.#scanLeft = 1;
        onMessage(this.#update as LolaCommandUpdate, NO_PROBLEMS);
        continue;
      }
      let value: unknown;
      try {
        value = this.#unpackr.unpack(src, { start: pos, end });
      } catch (e) {
        return this.#fail("undecodable", srcBase + pos, `undecodable LoLA command at stream byte ${srcBase + pos}: ${(e as Error)?.message ?? String(e)} (${hexAt(src, pos, end)})`);
      }
      this.#messages++;
      pos = end;
      this.#scanAt = 0;
      this.#scanLeft = 1;
      const problems: LolaCommandProblem[] = [];
      onMessage(toCommandUpdate(value as Map<unknown, unknown>, problems), problems);
    }
    // Keep the incomplete tail at the start of #buf; the scanner's state is relative to it.
    const tail = srcLen - pos;
    if (src === this.#buf) {
      if (pos > 0) this.#buf.copyWithin(0, pos, srcLen);
    } else if (tail > 0) {
      this.#reserve(tail);
      // a byte loop, not set(subarray()): no view object per read that ends mid-message
      const buf = this.#buf;
      for (let i = 0; i < tail; i++) buf[i] = src[pos + i]!;
    }
    this.#len = tail;
    this.#base = srcBase + pos;
    return null;
  }

  /**
   * reuseUpdate: decode the complete map at [start, end) (the scanner checked its structure) into
   * the reader's own update, if every entry is a known key, once, with exactly its count of
   * numbers (booleans, or 0/1, for Sonar). False leaves it to msgpackr and toCommandUpdate.
   */
  #decodeInto(s: Uint8Array, start: number, end: number): boolean {
    const t = s[start]!;
    let p = start + 1;
    let entries: number;
    if (t <= 0x8f) entries = t & 0x0f;
    else if (t === 0xde) {
      entries = (s[start + 1]! << 8) | s[start + 2]!;
      p = start + 3;
    } else {
      entries = ((s[start + 1]! << 24) | (s[start + 2]! << 16) | (s[start + 3]! << 8) | s[start + 4]!) >>> 0;
      p = start + 5;
    }
    const seen = this.#seen;
    seen.fill(0);
    for (let e = 0; e < entries; e++) {
      // the key: a string naming one of the keys
      const kt = s[p]!;
      let len: number;
      if (kt >= 0xa0 && kt <= 0xbf) {
        len = kt & 0x1f;
        p += 1;
      } else if (kt === 0xd9) {
        len = s[p + 1]!;
        p += 2;
      } else return false;
      let k = -1;
      for (let i = 0; i < KEY_NAME_BYTES.length; i++) {
        const name = KEY_NAME_BYTES[i]!;
        if (name.length !== len) continue;
        let same = true;
        for (let j = 0; j < len; j++) {
          if (s[p + j] !== name[j]) {
            same = false;
            break;
          }
        }
        if (same) {
          k = i;
          break;
        }
      }
      if (k < 0 || seen[k]) return false;
      seen[k] = 1;
      p += len;
      // the value: an array of exactly the key's count
      const spec = LOLA_COMMAND_KEYS[k]!;
      const at = s[p]!;
      let n: number;
      if (at >= 0x90 && at <= 0x9f) {
        n = at & 0x0f;
        p += 1;
      } else if (at === 0xdc) {
        n = (s[p + 1]! << 8) | s[p + 2]!;
        p += 3;
      } else return false;
      if (n !== spec.count) return false;
      const out = this.#arrays[k]!;
      if (spec.type === "bool") {
        for (let i = 0; i < n; i++) {
          const b = s[p++]!;
          if (b === 0xc3 || b === 0x01) out[i] = true;
          else if (b === 0xc2 || b === 0x00) out[i] = false;
          else return false;
        }
      } else {
        const nums = out as number[];
        for (let i = 0; i < n; i++) {
          const skip = numberInto(s, p, nums, i);
          if (skip === 0) return false;
          p += skip;
        }
      }
    }
    if (p !== end) return false; // cannot happen after the scanner; leave it to msgpackr if it does
    this.#handOut();
    return true;
  }

  /** reuseUpdate: the reader's own update names the arrays of the keys in `#seen`, and no others. */
  #handOut(): void {
    // By name, not `u[key] = …` in a loop: a computed key that takes 11 names is a megamorphic
    // keyed store, a lookup in V8's stub cache per key per message (docs/performance.md).
    const u = this.#update!;
    const seen = this.#seen;
    const a = this.#arrays;
    u.Position = seen[KI.Position] ? a[KI.Position] : undefined;
    u.Stiffness = seen[KI.Stiffness] ? a[KI.Stiffness] : undefined;
    u.REar = seen[KI.REar] ? a[KI.REar] : undefined;
    u.LEar = seen[KI.LEar] ? a[KI.LEar] : undefined;
    u.Chest = seen[KI.Chest] ? a[KI.Chest] : undefined;
    u.LEye = seen[KI.LEye] ? a[KI.LEye] : undefined;
    u.REye = seen[KI.REye] ? a[KI.REye] : undefined;
    u.LFoot = seen[KI.LFoot] ? a[KI.LFoot] : undefined;
    u.RFoot = seen[KI.RFoot] ? a[KI.RFoot] : undefined;
    u.Skull = seen[KI.Skull] ? a[KI.Skull] : undefined;
    u.Sonar = seen[KI.Sonar] ? a[KI.Sonar] : undefined;
  }

  /**
   * reuseUpdate: take the message at `s[start, start + #layoutLen)` if it has the learnt layout
   * (every structural byte the same, Sonar's values booleans or 0/1), decoding its values into the
   * reader's own update; false leaves it to the scanner and #decodeInto. Equivalent to them for
   * such a message: the structure fixes where it ends and which key each array is; its float32
   * values decode to the same numbers (NaN and ±Infinity too: the runtime rejects them, as before).
   */
  #readLearnt(s: Uint8Array, start: number): boolean {
    const bytes = this.#layoutBytes;
    const at = this.#layoutStructAt;
    for (let i = 0; i < this.#layoutStructs; i++) {
      const o = at[i]!;
      if (s[start + o] !== bytes[o]) return false;
    }
    let view = this.#chunkView;
    if (s === this.#buf) view = this.#bufView;
    else if (s !== this.#chunk) {
      this.#chunk = s;
      view = this.#chunkView = new DataView(s.buffer, s.byteOffset, s.byteLength);
    }
    const keys = this.#layoutKey;
    const valueAt = this.#layoutValueAt;
    const seen = this.#seen;
    seen.fill(0);
    for (let e = 0; e < this.#layoutEntries; e++) {
      const k = keys[e]!;
      const spec = LOLA_COMMAND_KEYS[k]!;
      const out = this.#arrays[k]!;
      seen[k] = 1;
      if (spec.type === "bool") {
        const p = start + valueAt[e]!;
        for (let i = 0; i < spec.count; i++) {
          const b = s[p + i]!;
          if (b === 0xc3 || b === 0x01) out[i] = true;
          else if (b === 0xc2 || b === 0x00) out[i] = false;
          else return false; // the update is handed out only on success; the arrays are rewritten then
        }
      } else {
        const nums = out as number[];
        const p = start + valueAt[e]! + 1; // after the float 32 marker
        for (let i = 0; i < spec.count; i++) nums[i] = view.getFloat32(p + 5 * i, false);
      }
    }
    this.#handOut();
    return true;
  }

  /**
   * reuseUpdate, after #decodeInto took the map at [start, end): learn its layout when every number
   * in it is a float32; otherwise there is none (integers change a message's length with its values:
   * msgpack-c ≥ 6.1 packs 0.0 as 0). Runs when a client's layout changes, not per message; allocates nothing.
   */
  #learn(s: Uint8Array, start: number, end: number): void {
    const len = end - start;
    if (len > this.#layoutBytes.length) return;
    const at = this.#layoutStructAt;
    let structs = 0;
    let entries = 0;
    const t = s[start]!;
    let p = start + (t <= 0x8f ? 1 : t === 0xde ? 3 : 5); // map header
    for (; structs < p - start; structs++) at[structs] = structs;
    while (p < end) {
      // key: fixstr or str 8 naming a known key (#decodeInto checked it)
      const kt = s[p]!;
      const keyStart = p;
      const nameLen = kt === 0xd9 ? s[p + 1]! : kt & 0x1f;
      p += (kt === 0xd9 ? 2 : 1) + nameLen;
      let k = -1;
      for (let i = 0; i < KEY_NAME_BYTES.length && k < 0; i++) {
        const name = KEY_NAME_BYTES[i]!;
        if (name.length !== nameLen) continue;
        let same = true;
        for (let j = 0; j < nameLen && same; j++) same = s[p - nameLen + j] === name[j];
        if (same) k = i;
      }
      // array header: fixarray or array 16
      p += s[p] === 0xdc ? 3 : 1;
      for (let o = keyStart; o < p; o++) at[structs++] = o - start;
      const spec = LOLA_COMMAND_KEYS[k]!;
      this.#layoutKey[entries] = k;
      this.#layoutValueAt[entries] = p - start;
      entries++;
      if (spec.type === "bool") {
        p += spec.count; // values (one byte each), checked per message
        continue;
      }
      for (let i = 0; i < spec.count; i++) {
        if (s[p] !== 0xca) {
          this.#layoutLen = 0; // not all float32: no layout
          return;
        }
        at[structs++] = p - start; // the float 32 marker
        p += 5;
      }
    }
    const bytes = this.#layoutBytes;
    for (let i = 0; i < len; i++) bytes[i] = s[start + i]!; // no view object: a client may change layouts every message
    this.#layoutStructs = structs;
    this.#layoutEntries = entries;
    this.#layoutLen = len;
  }

  #reserve(n: number): void {
    if (n <= this.#buf.length) return;
    let cap = this.#buf.length;
    while (cap < n) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.#buf.subarray(0, this.#len));
    this.#buf = next;
    this.#bufView = new DataView(next.buffer);
  }

  #fail(kind: LolaStreamErrorKind, streamOffset: number, message: string): LolaStreamError {
    this.#failed = new LolaStreamError(kind, streamOffset, message);
    this.#len = 0;
    return this.#failed;
  }

  /**
   * Find the end of the MessagePack map starting at `start`: its end offset, NEED_MORE (state
   * saved for the next push) or FAILED (#failed set). Only headers are read; string and binary
   * payloads are skipped by length.
   */
  #scan(s: Uint8Array, start: number, end: number, base: number): number {
    let p = start + this.#scanAt;
    let left = this.#scanLeft;
    const limit = start + this.#max;
    if (this.#scanAt === 0) {
      const t = s[start]!;
      if (!(t >= 0x80 && t <= 0x8f) && t !== 0xde && t !== 0xdf) {
        this.#fail("not-a-map", base + start, `LoLA commands must be MessagePack maps; stream byte ${base + start} is 0x${hex2(t)} (${typeName(t)}): ${hexAt(s, start, end)}`);
        return FAILED;
      }
    }
    while (left > 0) {
      if (p >= end || p > limit) break;
      const t = s[p]!;
      const size = MP_HEAD.headBytes[t]!; // header bytes
      if (size === 0) {
        if (t === 0xc1) this.#fail("malformed", base + p, `undecodable LoLA command: stream byte ${base + p} is 0xc1, which MessagePack never uses: ${hexAt(s, p, end)}`);
        // 0xc7-0xc9 ext 8/16/32, 0xd4-0xd8 fixext
        else
          this.#fail("extension", base + p, `undecodable LoLA command: stream byte ${base + p} is 0x${hex2(t)}, a MessagePack extension type, which LoLA's dialect does not use: ${hexAt(s, p, end)}`);
        return FAILED;
      }
      let skip = MP_HEAD.fixedBytes[t]!; // payload bytes after the header
      let items = MP_HEAD.fixedItems[t]!; // child items added
      if (size > 1) {
        if (p + size > end) break; // the length field itself is not here yet
        const n = size === 2 ? s[p + 1]! : size === 3 ? (s[p + 1]! << 8) | s[p + 2]! : ((s[p + 1]! << 24) | (s[p + 2]! << 16) | (s[p + 3]! << 8) | s[p + 4]!) >>> 0;
        const counts = MP_HEAD.lengthCounts[t]!;
        if (counts === MP_LENGTH.ITEMS) items = n;
        else if (counts === MP_LENGTH.PAIRS) items = 2 * n;
        else skip = n;
      }
      left = left - 1 + items;
      p += size + skip;
      // Every item due takes at least one byte: fail now rather than wait for bytes that cannot fit.
      if (p - start + left > this.#max) {
        this.#fail(
          "too-large",
          base + start,
          `LoLA command at stream byte ${base + start} is larger than ${this.#max} bytes (a full command is 786); the client is not speaking LoLA: ${hexAt(s, start, end)}`,
        );
        return FAILED;
      }
    }
    if (left === 0 && p <= end) return p;
    this.#scanAt = p - start;
    this.#scanLeft = left;
    return NEED_MORE;
  }
}

/**
 * Turn one decoded map into an update, reporting each key left out. The map's values are reused
 * (no copy) after their types are checked.
 */
function toCommandUpdate(map: Map<unknown, unknown>, problems: LolaCommandProblem[]): LolaCommandUpdate {
  const update: LolaCommandUpdate = {};
  for (const [rawKey, value] of map) {
    if (typeof rawKey !== "string") {
      problems.push({ key: String(rawKey), reason: `keys must be strings, got ${describe(rawKey)}; entry ignored` });
      continue;
    }
    const spec = LOLA_COMMAND_KEY_BY_NAME[rawKey];
    if (!spec) {
      problems.push({ key: rawKey, reason: "unknown key, ignored (LoLA keys: Position Stiffness Chest LEar REar LEye REye LFoot RFoot Skull Sonar)" });
      continue;
    }
    if (!Array.isArray(value)) {
      problems.push({ key: rawKey, reason: `expected an array of ${spec.count} ${spec.type === "bool" ? "booleans" : "numbers"}, got ${describe(value)}` });
      continue;
    }
    if (value.length !== spec.count) {
      problems.push({ key: rawKey, reason: `expected ${spec.count} values, got ${value.length}` });
      continue;
    }
    if (spec.type === "bool") {
      let bad = -1;
      for (let i = 0; i < value.length; i++) {
        const x = value[i];
        if (typeof x === "boolean") continue;
        if (x === 0 || x === 1) value[i] = x === 1;
        else {
          bad = i;
          break;
        }
      }
      if (bad >= 0) {
        problems.push({ key: rawKey, reason: `element ${bad} is ${describe(value[bad])}; expected a boolean (or 0/1)` });
        continue;
      }
      update.Sonar = value as boolean[];
    } else {
      let bad = -1;
      for (let i = 0; i < value.length; i++) {
        const x = value[i];
        if (typeof x === "number") continue;
        if (typeof x === "bigint")
          value[i] = Number(x); // uint 64 / int 64: accept as a number
        else {
          bad = i;
          break;
        }
      }
      if (bad >= 0) {
        problems.push({ key: rawKey, reason: `element ${bad} is ${describe(value[bad])}; expected a number` });
        continue;
      }
      update[rawKey as Exclude<LolaCommandKeyName, "Sonar">] = value as number[];
    }
  }
  return update;
}

function describe(v: unknown): string {
  if (v === null || v === undefined) return "nil";
  if (Array.isArray(v)) return `an array of ${v.length}`;
  if (v instanceof Map) return `a map of ${v.size}`;
  if (v instanceof Uint8Array) return `${v.length} bytes of binary`;
  if (typeof v === "string") return `the string ${JSON.stringify(v.length > 24 ? `${v.slice(0, 24)}…` : v)}`;
  return `${typeof v} ${String(v)}`;
}

function hex2(b: number): string {
  return b.toString(16).padStart(2, "0");
}

/** Up to 16 bytes from `at`, in hex, for error messages. */
function hexAt(s: Uint8Array, at: number, end: number): string {
  const stop = Math.min(end, at + 16);
  let out = "";
  for (let i = at; i < stop; i++) out += (i > at ? " " : "") + hex2(s[i]!);
  return `bytes ${out}${end > stop ? " …" : ""}`;
}

function typeName(t: number): string {
  if (t <= 0x7f) return "positive fixint";
  if (t >= 0xe0) return "negative fixint";
  if (t <= 0x9f) return "fixarray";
  if (t <= 0xbf) return "fixstr";
  if (t === 0xdc || t === 0xdd) return "array";
  if (t === 0xca || t === 0xcb) return "float";
  if (t >= 0xcc && t <= 0xd3) return "integer";
  if (t === 0xd9 || t === 0xda || t === 0xdb) return "string";
  if (t === 0xc4 || t === 0xc5 || t === 0xc6) return "binary";
  if (t === 0xc0) return "nil";
  if (t === 0xc2 || t === 0xc3) return "boolean";
  if (t === 0xc1) return "never used in MessagePack";
  return "extension";
}
