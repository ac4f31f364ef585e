/**
 * A seqlock over one Int32 slot: one writer (the real-time core), any number of readers. The
 * writer never waits: it makes the sequence odd, writes, makes it even again. A reader copies,
 * then checks the sequence did not move and was even; otherwise it copies again. So a reader never
 * sees a torn state (realtime_tools' RealtimeBuffer, HULKs' buffered_watch, Linux's seqlock).
 * `Atomics.notify` on the slot wakes readers waiting in `Atomics.waitAsync` for the next state.
 * Allocation-free on both sides.
 */
export class SeqLock {
  constructor(
    readonly words: Int32Array,
    readonly index: number,
  ) {}

  /** Writer: the state becomes inconsistent from here. */
  begin(): void {
    Atomics.add(this.words, this.index, 1);
  }

  /** Writer: consistent again; wakes waiting readers. */
  end(): void {
    Atomics.add(this.words, this.index, 1);
    Atomics.notify(this.words, this.index);
  }

  /** The current sequence (even: consistent). */
  get sequence(): number {
    return Atomics.load(this.words, this.index);
  }

  /**
   * Reader: run `copy` until it saw a consistent state; false after `tries` torn copies (the
   * writer is mid-write every time: try again later). Returns the sequence read in `out[0]`.
   */
  read(copy: () => void, tries = 8): boolean {
    for (let i = 0; i < tries; i++) {
      const s1 = Atomics.load(this.words, this.index);
      if (s1 & 1) continue;
      copy();
      if (Atomics.load(this.words, this.index) === s1) return true;
    }
    return false;
  }
}
