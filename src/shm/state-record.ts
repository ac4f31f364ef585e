/**
 * A body's state as one recording record, in the same layout table that carries it across threads
 * (src/bodies/<body>/layout.ts, bound by src/shm/<body>-state.ts): payload = f64 cycle number
 * (the loop's count, which the state's own `seq` is not: a lost link runs cycles without data)
 * followed by the layout's bytes. So a core in its worker and an in-thread robot on the main thread write the
 * same bytes, and the recorder decodes both with the binding's `read`.
 *
 * The writer is perform side (allocation-free: the views over its scratch buffer are made once);
 * the reader is the recorder's, on the consumer side.
 */
import type { ByteRing } from "./ring.js";
import type { ShmField } from "./layout.js";
import { type StateBinding, StateChannel } from "./state-channel.js";

/** Bytes before the layout: the f64 cycle number (keeps the layout 8-aligned). */
export const STATE_RECORD_HEADER_BYTES = 8;

/** A binding's state over a private scratch buffer: the seqlock there has no other side, it never retries. */
class Scratch<S, L extends readonly ShmField[]> {
  readonly bytes: Uint8Array;
  readonly cycle: Float64Array;
  readonly channel: StateChannel<S, L>;
  constructor(binding: StateBinding<S, L>, layoutBytes: number) {
    const sab = new SharedArrayBuffer(STATE_RECORD_HEADER_BYTES + layoutBytes);
    this.bytes = new Uint8Array(sab);
    this.cycle = new Float64Array(sab, 0, 1);
    this.channel = new StateChannel(binding, sab, STATE_RECORD_HEADER_BYTES, new Int32Array(new SharedArrayBuffer(4)), 0);
  }
}

export class StateRecordWriter<S, L extends readonly ShmField[]> {
  readonly #scratch: Scratch<S, L>;
  readonly #channel: number;
  /** Payload bytes of every record. */
  readonly length: number;

  /** Records on ring channel `channel`; `layoutBytes` = layoutBytes(binding.layout). */
  constructor(binding: StateBinding<S, L>, layoutBytes: number, channel: number) {
    this.#scratch = new Scratch(binding, layoutBytes);
    this.#channel = channel;
    this.length = this.#scratch.bytes.length;
  }

  /**
   * Reserve the record of loop cycle `cycle` and copy `state` into it; its payload offset, or -1
   * (counted by the ring) when the ring is full. The record's time is 0: set it
   * (RING_TIME_BEFORE_PAYLOAD), then `ring.commit()`. Never waits, allocates nothing.
   */
  reserve(ring: ByteRing, cycle: number, state: S): number {
    const s = this.#scratch;
    s.cycle[0] = cycle;
    s.channel.publish(state);
    const src = s.bytes;
    const n = src.length;
    const at = ring.reserve(this.#channel, 0, 0, n);
    if (at < 0) return -1;
    const b = ring.bytes;
    for (let i = 0; i < n; i++) b[at + i] = src[i]!;
    return at;
  }
}

export class StateRecordReader<S, L extends readonly ShmField[]> {
  readonly #scratch: Scratch<S, L>;

  constructor(binding: StateBinding<S, L>, layoutBytes: number) {
    this.#scratch = new Scratch(binding, layoutBytes);
  }

  /** Decode the record at `bytes[offset, offset + length)` into `into`; its cycle number, or -1 when the length is not this layout's. */
  read(bytes: Uint8Array, offset: number, length: number, into: S): number {
    const s = this.#scratch;
    if (length !== s.bytes.length) return -1;
    s.bytes.set(bytes.subarray(offset, offset + length));
    s.channel.readInto(into);
    return s.cycle[0]!;
  }
}
