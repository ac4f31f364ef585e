/**
 * A seqlock over one Int32 slot: one writer (the real-time core), any number of readers. The
 * writer never waits: it makes the sequence odd, writes, makes it even again. A reader copies,
 * then checks the sequence did not move and was even; otherwise it copies again. So a reader never
 * sees a torn state (realtime_tools' RealtimeBuffer, HULKs' buffered_watch, Linux's seqlock).
 * `Atomics.notify` on the slot wakes readers waiting in `Atomics.waitAsync` for the next state.
 * Allocation-free on both sides.
 */
/**
 * Whom `end()` wakes: "always" (the default), "never" (nobody waits on this lock: the lease
 * mirror), or `{ followersIndex }`: only while `words[followersIndex]` is nonzero (a reader sets it
 * before it reads the sequence it will wait on, and clears it when it stops waiting). V8's
 * `Atomics.notify` takes a process-wide lock and walks the waiter list even when nobody waits.
 */
export type SeqLockNotify = "always" | "never" | { readonly followersIndex: number };

const NOTIFY_ALWAYS = -1;
const NOTIFY_NEVER = -2;

export class SeqLock {
  /** NOTIFY_ALWAYS, NOTIFY_NEVER or the followers word's index (a number: no object read per end()). */
  readonly #notify: number;

  constructor(
    readonly words: Int32Array,
    readonly index: number,
    notify: SeqLockNotify = "always",
  ) {
    this.#notify = notify === "always" ? NOTIFY_ALWAYS : notify === "never" ? NOTIFY_NEVER : notify.followersIndex;
    if (this.#notify >= words.length || (this.#notify < 0 && this.#notify !== NOTIFY_ALWAYS && this.#notify !== NOTIFY_NEVER) || !Number.isInteger(this.#notify)) {
      throw new RangeError(`followersIndex must name a word of the lock's array, got ${String(this.#notify)}`);
    }
  }

  /** Writer: the state becomes inconsistent from here. */
  begin(): void {
    Atomics.add(this.words, this.index, 1);
  }

  /**
   * Writer: consistent again; wakes waiting readers (see SeqLockNotify). With a followers word: the
   * sequence is bumped before the word is read, and a reader sets the word before it reads the
   * sequence (both sequentially consistent), so either this end() sees the reader or the reader
   * sees the new sequence and does not wait for it.
   */
  end(): void {
    Atomics.add(this.words, this.index, 1);
    const n = this.#notify;
    if (n === NOTIFY_ALWAYS || (n >= 0 && Atomics.load(this.words, n) !== 0)) Atomics.notify(this.words, this.index);
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
