/**
 * Little-endian byte cursors shared by every wire codec. Pure: no I/O, browser-safe.
 *
 * Both cursors wrap a caller-owned Uint8Array through one cached DataView, so a reader or writer
 * created once can be `reset()` onto new bytes every cycle without allocating (hot path).
 * Reads past the end throw {@link WireRangeError}; decoders that must never throw check
 * `remaining()` first.
 */

/** Thrown when a read or write would leave the buffer. Carries the offset and the need. */
export class WireRangeError extends RangeError {
  constructor(
    readonly offset: number,
    readonly needed: number,
    readonly available: number,
  ) {
    super(`need ${needed} byte(s) at offset ${offset}, only ${available} left`);
    this.name = "WireRangeError";
  }
}

const EMPTY = new Uint8Array(0);

/** Sequential little-endian reader over a borrowed byte view. */
export class Reader {
  #bytes: Uint8Array = EMPTY;
  #view: DataView = new DataView(EMPTY.buffer);
  #end = 0;
  offset = 0;

  constructor(bytes?: Uint8Array, start = 0, end?: number) {
    if (bytes) this.reset(bytes, start, end);
  }

  /** Point the reader at new bytes without allocating when the underlying buffer is unchanged. */
  reset(bytes: Uint8Array, start = 0, end = bytes.length): this {
    if (bytes.buffer !== this.#view.buffer || bytes.byteOffset !== this.#view.byteOffset || bytes.byteLength !== this.#view.byteLength) {
      this.#view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    }
    this.#bytes = bytes;
    this.offset = start;
    this.#end = end;
    return this;
  }

  get bytes(): Uint8Array {
    return this.#bytes;
  }
  get end(): number {
    return this.#end;
  }
  remaining(): number {
    return this.#end - this.offset;
  }

  #need(n: number): number {
    const at = this.offset;
    if (at + n > this.#end) throw new WireRangeError(at, n, this.#end - at);
    this.offset = at + n;
    return at;
  }

  u8(): number {
    return this.#bytes[this.#need(1)]!;
  }
  i8(): number {
    return this.#view.getInt8(this.#need(1));
  }
  u16(): number {
    return this.#view.getUint16(this.#need(2), true);
  }
  i16(): number {
    return this.#view.getInt16(this.#need(2), true);
  }
  u32(): number {
    return this.#view.getUint32(this.#need(4), true);
  }
  i32(): number {
    return this.#view.getInt32(this.#need(4), true);
  }
  f32(): number {
    return this.#view.getFloat32(this.#need(4), true);
  }
  f64(): number {
    return this.#view.getFloat64(this.#need(8), true);
  }
  bool(): boolean {
    return this.u8() !== 0;
  }
  /** A view into the reader's bytes (borrowed: valid until the caller's buffer is reused). */
  bytesView(n: number): Uint8Array {
    const at = this.#need(n);
    return this.#bytes.subarray(at, at + n);
  }
  /** A copy of the next n bytes (owned by the caller). */
  bytesCopy(n: number): Uint8Array {
    return this.bytesView(n).slice();
  }
  skip(n: number): void {
    this.#need(n);
  }
}

/** Sequential little-endian writer into a caller-owned buffer; writes in place, never grows. */
export class Writer {
  #bytes: Uint8Array = EMPTY;
  #view: DataView = new DataView(EMPTY.buffer);
  offset = 0;

  constructor(bytes?: Uint8Array, start = 0) {
    if (bytes) this.reset(bytes, start);
  }

  reset(bytes: Uint8Array, start = 0): this {
    if (bytes.buffer !== this.#view.buffer || bytes.byteOffset !== this.#view.byteOffset || bytes.byteLength !== this.#view.byteLength) {
      this.#view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    }
    this.#bytes = bytes;
    this.offset = start;
    return this;
  }

  get bytes(): Uint8Array {
    return this.#bytes;
  }
  remaining(): number {
    return this.#bytes.length - this.offset;
  }

  #need(n: number): number {
    const at = this.offset;
    if (at + n > this.#bytes.length) throw new WireRangeError(at, n, this.#bytes.length - at);
    this.offset = at + n;
    return at;
  }

  u8(v: number): this {
    this.#bytes[this.#need(1)] = v;
    return this;
  }
  i8(v: number): this {
    this.#view.setInt8(this.#need(1), v);
    return this;
  }
  u16(v: number): this {
    this.#view.setUint16(this.#need(2), v, true);
    return this;
  }
  i16(v: number): this {
    this.#view.setInt16(this.#need(2), v, true);
    return this;
  }
  u32(v: number): this {
    this.#view.setUint32(this.#need(4), v, true);
    return this;
  }
  i32(v: number): this {
    this.#view.setInt32(this.#need(4), v, true);
    return this;
  }
  f32(v: number): this {
    this.#view.setFloat32(this.#need(4), v, true);
    return this;
  }
  f64(v: number): this {
    this.#view.setFloat64(this.#need(8), v, true);
    return this;
  }
  bool(v: boolean): this {
    return this.u8(v ? 1 : 0);
  }
  bytesFrom(src: Uint8Array): this {
    this.#bytes.set(src, this.#need(src.length));
    return this;
  }
  /** Patch a u16 at an earlier offset (lengths learned later, mcap-style), cursor unchanged. */
  patchU16(at: number, v: number): this {
    this.#view.setUint16(at, v, true);
    return this;
  }
  patchU32(at: number, v: number): this {
    this.#view.setUint32(at, v, true);
    return this;
  }
  /** A view of what was written so far (borrowed). */
  writtenView(): Uint8Array {
    return this.#bytes.subarray(0, this.offset);
  }
}

/** Hex dump for error messages and test failures: `01 02 ff`. */
export function toHex(bytes: Uint8Array, max = 64): string {
  let s = "";
  const n = Math.min(bytes.length, max);
  for (let i = 0; i < n; i++) s += (i ? " " : "") + bytes[i]!.toString(16).padStart(2, "0");
  return bytes.length > max ? `${s} … (${bytes.length} bytes)` : s;
}

/** Parse `"01 02 ff"` (spaces optional) into bytes; for test vectors and CLI input. */
export function fromHex(hex: string): Uint8Array {
  const clean = hex.replace(/\s+/g, "");
  if (clean.length % 2 !== 0 || /[^0-9a-fA-F]/.test(clean)) throw new Error(`not a hex string: ${JSON.stringify(hex)}`);
  const out = new Uint8Array(clean.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(clean.slice(i * 2, i * 2 + 2), 16);
  return out;
}
