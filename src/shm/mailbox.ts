/**
 * A preallocated mailbox over one SharedArrayBuffer: one writer thread, one reader thread, newest
 * wins. The host posts commands it has validated; the real-time core takes the newest one at the
 * start of a cycle.
 *
 * Two slots, each under its own seqlock, and a count of completed writes: write n goes into slot
 * n % 2, so the slot the reader copies is never the one being written unless the writer completed
 * two more writes during the copy (then the copy is torn, the seqlock says so, and the reader takes
 * the newer one instead). The writer never waits; the reader never sees a torn slot and, after
 * `tries` torn copies in a row, takes nothing this cycle (the command is still there next cycle).
 * `taken` tells the writer which write the reader consumed last (the host merges partial commands
 * that the core has not taken yet, so no key is lost when two arrive within one cycle).
 *
 * Words (Int32, from `start`): [0] writes completed, [1] the write last taken, [2] slot 0's
 * sequence, [3] slot 1's. Then the two slots, each a layout (src/shm/layout.ts). Reading and
 * writing allocate nothing.
 */
import { buildViews, layoutBytes, type ShmField, type ShmViews } from "./layout.js";
import { SeqLock } from "./seqlock.js";

const WORDS = 4;
const W_WRITES = 0;
const W_TAKEN = 1;

/** Bytes a mailbox of `layout` needs. */
export function mailboxBytes(layout: readonly ShmField[]): number {
  return WORDS * 4 + 2 * layoutBytes(layout);
}

export class Mailbox<L extends readonly ShmField[]> {
  readonly #words: Int32Array;
  readonly slots: readonly [ShmViews<L>, ShmViews<L>];
  readonly #locks: readonly [SeqLock, SeqLock];
  /** Reader: the write count it copies (set before each copy). */
  #reading = 0;
  #copyFrom: ShmViews<L>;
  #copy: (from: ShmViews<L>) => void = () => {};
  readonly #copyBound = (): void => this.#copy(this.#copyFrom);

  /** `buffer` from byte `start` (a multiple of 8), `mailboxBytes(layout)` long. */
  constructor(layout: L, buffer: SharedArrayBuffer, start: number) {
    this.#words = new Int32Array(buffer, start, WORDS);
    const slotBytes = layoutBytes(layout);
    const at = start + WORDS * 4;
    this.slots = [buildViews(layout, buffer, at), buildViews(layout, buffer, at + slotBytes)];
    this.#locks = [new SeqLock(this.#words, 2), new SeqLock(this.#words, 3)];
    this.#copyFrom = this.slots[0];
  }

  /** Writes completed so far. */
  get writes(): number {
    return Atomics.load(this.#words, W_WRITES);
  }

  /** The write the reader took last (0: none yet). */
  get taken(): number {
    return Atomics.load(this.#words, W_TAKEN);
  }

  /** Writer: fill the next slot and publish it. Never waits. Returns the write's number. */
  write(fill: (slot: ShmViews<L>) => void): number {
    const n = Atomics.load(this.#words, W_WRITES);
    const i = n & 1;
    const lock = this.#locks[i];
    lock.begin();
    fill(this.slots[i]);
    lock.end();
    Atomics.store(this.#words, W_WRITES, n + 1);
    return n + 1;
  }

  /**
   * Reader: the newest write not taken yet is handed to `copy` (which must copy out what it needs:
   * the slot may be rewritten after it returns). Returns the write's number, or 0 when there was
   * nothing new (or only torn copies, `tries` times). `copy` should be bound once: a closure made
   * per call would allocate.
   */
  take(copy: (slot: ShmViews<L>) => void, tries = 4): number {
    this.#copy = copy;
    for (let t = 0; t < tries; t++) {
      const n = Atomics.load(this.#words, W_WRITES);
      if (n === Atomics.load(this.#words, W_TAKEN)) return 0;
      const i = (n - 1) & 1;
      this.#reading = n;
      this.#copyFrom = this.slots[i];
      const lock = this.#locks[i];
      const s1 = lock.sequence;
      // Odd: the writer is in this slot again (two newer writes are under way): look again.
      if (s1 & 1) continue;
      this.#copyBound();
      if (lock.sequence !== s1) continue;
      Atomics.store(this.#words, W_TAKEN, this.#reading);
      return this.#reading;
    }
    return 0;
  }
}
