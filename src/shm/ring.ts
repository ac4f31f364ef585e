/**
 * A single-producer single-consumer byte ring over one SharedArrayBuffer: the real-time side
 * appends records (a channel number, a time and a payload) every cycle, the other side drains
 * them. The recorder uses it to take raw chest-board frames, LoLA messages and the decoded state
 * out of the cycle without the cycle ever waiting, and the same buffer works unchanged when the
 * producer and the consumer live in different threads (post the `sab` to the worker and build a
 * second `ByteRing` over it there).
 *
 * Lossless or loud: a record is either stored whole or refused (the write returns false and is
 * counted in `dropped`); it is never cut or overwritten. Size the ring for the consumer's worst
 * stall (the recorder uses 8 MiB: seconds of a NAO's traffic).
 *
 * Layout (all little-endian):
 *
 *   header, 32 bytes, Int32 slots read and written with Atomics:
 *     [0] write position   free-running byte counter (mod 2^32), advanced by the producer only
 *     [1] read position    free-running byte counter, advanced by the consumer only
 *     [2] dropped records  records the producer refused because the ring was full
 *     [3] capacity         data bytes (a power of two)
 *     [4] magic            0x52494e47 ("RING")
 *   data, `capacity` bytes: records, each starting on an 8-byte boundary:
 *     u32 payload length | u16 channel | u16 flags | f64 time (ms) | payload | pad to 8
 *   A record never wraps: when it does not fit before the end, the producer writes the
 *   length WRAP (0xffffffff) there and starts the record at offset 0.
 *
 * Write side (perform side, allocation-free): `write` copies a payload; `reserve` + `commit`
 * lets a producer encode in place. Read side (`drain`) hands each record to a callback as
 * offsets into `bytes`, valid until the callback returns. Pure: no I/O, browser-safe.
 */

export const RING_HEADER_BYTES = 32;
export const RING_RECORD_HEADER_BYTES = 16;
export const RING_MAGIC = 0x52494e47;
/**
 * A record's time sits this many bytes before its payload. A producer that reserved with time 0
 * may set it there (`view.setFloat64(at - RING_TIME_BEFORE_PAYLOAD, t, true)`) before `commit()`:
 * a number passed to a call that V8 does not inline is boxed, 16 bytes a record.
 */
export const RING_TIME_BEFORE_PAYLOAD = 8;
const WRAP = 0xffffffff;
const W = 0;
const R = 1;
const DROPPED = 2;
const CAPACITY = 3;
const MAGIC = 4;

/** Called once per drained record; `offset` is the payload's first byte in `ring.bytes`. */
export type RingRecordHandler = (channel: number, flags: number, timeMs: number, offset: number, length: number) => void;

function align8(n: number): number {
  return (n + 7) & ~7;
}

export class ByteRing {
  readonly sab: SharedArrayBuffer;
  /** The data area; payloads are read from (and reserved in) here. */
  readonly bytes: Uint8Array;
  readonly capacity: number;
  /** A DataView of `bytes`, for producers that encode numbers in place after `reserve`. */
  readonly view: DataView;
  readonly #h: Int32Array;
  readonly #v: DataView;
  readonly #mask: number;
  /** Producer-side: where a reserved record starts, and its payload offset (-1 when none). */
  #reservedAt = -1;
  #reservedNext = 0;

  /** A new ring of `capacityBytes` (a power of two, 64 B .. 1 GiB). */
  static create(capacityBytes: number): ByteRing {
    if (!Number.isInteger(capacityBytes) || capacityBytes < 64 || capacityBytes > 2 ** 30 || (capacityBytes & (capacityBytes - 1)) !== 0) {
      throw new RangeError(`ring capacity must be a power of two from 64 B to 1 GiB, got ${capacityBytes}`);
    }
    const sab = new SharedArrayBuffer(RING_HEADER_BYTES + capacityBytes);
    const h = new Int32Array(sab, 0, RING_HEADER_BYTES / 4);
    h[CAPACITY] = capacityBytes;
    h[MAGIC] = RING_MAGIC;
    return new ByteRing(sab);
  }

  /** A view of an existing ring (the other thread's side). */
  constructor(sab: SharedArrayBuffer) {
    const h = new Int32Array(sab, 0, RING_HEADER_BYTES / 4);
    if (Atomics.load(h, MAGIC) !== RING_MAGIC) throw new RangeError("not a ByteRing buffer (magic mismatch)");
    this.sab = sab;
    this.#h = h;
    this.capacity = Atomics.load(h, CAPACITY);
    if (sab.byteLength !== RING_HEADER_BYTES + this.capacity) throw new RangeError("ring buffer size does not match its header");
    this.bytes = new Uint8Array(sab, RING_HEADER_BYTES, this.capacity);
    this.#v = new DataView(sab, RING_HEADER_BYTES, this.capacity);
    this.view = this.#v;
    this.#mask = this.capacity - 1;
  }

  /** The largest payload a record can carry. */
  get maxPayload(): number {
    return this.capacity / 2 - RING_RECORD_HEADER_BYTES;
  }

  /** Records refused so far because the ring was full (both sides may read it). */
  get dropped(): number {
    return Atomics.load(this.#h, DROPPED) >>> 0;
  }

  /** Bytes written and not yet drained (including headers and padding). */
  get usedBytes(): number {
    return (Atomics.load(this.#h, W) - Atomics.load(this.#h, R)) >>> 0;
  }

  // ---- producer ------------------------------------------------------------------------------

  /**
   * Reserve a record with a `length`-byte payload; returns the payload's offset in `bytes`, or -1
   * (counted in `dropped`) when it does not fit. Write the payload, then `commit()`. Perform side.
   */
  reserve(channel: number, flags: number, timeMs: number, length: number): number {
    if (this.#reservedAt >= 0) throw new Error("ByteRing.reserve: the previous reservation was not committed");
    const need = align8(RING_RECORD_HEADER_BYTES + length);
    const h = this.#h;
    const w = Atomics.load(h, W) >>> 0;
    const r = Atomics.load(h, R) >>> 0;
    const free = this.capacity - ((w - r) >>> 0);
    let at = w & this.#mask;
    const tail = this.capacity - at;
    // A record never wraps: skip the tail (marked WRAP) when it is too short.
    const skip = need > tail ? tail : 0;
    if (length < 0 || length > this.maxPayload || need + skip > free) {
      Atomics.add(h, DROPPED, 1);
      return -1;
    }
    const v = this.#v;
    if (skip > 0) {
      v.setUint32(at, WRAP, true);
      at = 0;
    }
    v.setUint32(at, length, true);
    v.setUint16(at + 4, channel, true);
    v.setUint16(at + 6, flags, true);
    v.setFloat64(at + 8, timeMs, true);
    this.#reservedAt = at;
    this.#reservedNext = (w + skip + need) >>> 0;
    return at + RING_RECORD_HEADER_BYTES;
  }

  /** Publish the reserved record to the consumer. */
  commit(): void {
    if (this.#reservedAt < 0) throw new Error("ByteRing.commit: nothing reserved");
    this.#reservedAt = -1;
    Atomics.store(this.#h, W, this.#reservedNext | 0);
  }

  /** Give up a reservation (nothing becomes visible). */
  cancel(): void {
    this.#reservedAt = -1;
  }

  /** Append `src[srcOffset, srcOffset + length)` as one record. False (and counted) when full. Perform side. */
  write(channel: number, flags: number, timeMs: number, src: ArrayLike<number>, srcOffset: number, length: number): boolean {
    const at = this.reserve(channel, flags, timeMs, length);
    if (at < 0) return false;
    const b = this.bytes;
    // NOTE: a loop, not set(subarray()): a subarray is an allocation on the hot path.
    for (let i = 0; i < length; i++) b[at + i] = src[srcOffset + i]!;
    this.commit();
    return true;
  }

  // ---- consumer ------------------------------------------------------------------------------

  /**
   * Hand every published record to `handler`, in order, then free their space. At most
   * `maxRecords` per call (defaults to all). Returns the number of records handed over.
   */
  drain(handler: RingRecordHandler, maxRecords = Number.POSITIVE_INFINITY): number {
    const h = this.#h;
    const v = this.#v;
    const w = Atomics.load(h, W) >>> 0;
    let r = Atomics.load(h, R) >>> 0;
    let n = 0;
    while (r !== w && n < maxRecords) {
      let at = r & this.#mask;
      let len = v.getUint32(at, true);
      if (len === WRAP) {
        r = (r + this.capacity - at) >>> 0;
        at = 0;
        len = v.getUint32(0, true);
      }
      try {
        handler(v.getUint16(at + 4, true), v.getUint16(at + 6, true), v.getFloat64(at + 8, true), at + RING_RECORD_HEADER_BYTES, len);
      } finally {
        r = (r + align8(RING_RECORD_HEADER_BYTES + len)) >>> 0;
        Atomics.store(h, R, r | 0);
      }
      n++;
    }
    return n;
  }
}
