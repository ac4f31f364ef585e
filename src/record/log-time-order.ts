/**
 * Puts the recorder's messages in log-time order before they reach the file.
 *
 * Why they come out of order: the recorder drains two rings (the core's, then the main thread's)
 * and stamps a few messages with the time of the cycle they describe (`/api/state` is the state of
 * an earlier cycle, a `link` event the cycle that showed it), so a message can be some
 * milliseconds older than the one drained before it (66–82 steps back per 5 s file before this).
 * MCAP allows that, but viewers that stream a file in file order show such messages late.
 *
 * A message is held until the newest log time seen is `windowNs` past it; by then nothing older
 * is expected. Ties keep their arrival order (so frames of one ring keep the order verify and
 * replay pair them by). A message older than one already handed out (it waited longer than the
 * window, e.g. the main thread stalled for seconds) is still written, out of order, and counted
 * in `late`: nothing is dropped.
 *
 * Consumer side; allocates (the held messages).
 */
export interface Timed {
  readonly logTime: bigint;
}

export class LogTimeOrder<T extends Timed> {
  readonly #windowNs: bigint;
  #items: T[] = [];
  #head = 0;
  #newest: bigint | null = null;
  #released: bigint | null = null;
  #late = 0;

  /** `windowNs`: how long a message waits for older ones, ns of log time. */
  constructor(windowNs: bigint) {
    this.#windowNs = windowNs;
  }

  /** Messages written out of order so far (they came later than the window). */
  get late(): number {
    return this.#late;
  }

  get size(): number {
    return this.#items.length - this.#head;
  }

  push(item: T): void {
    const t = item.logTime;
    if (this.#newest === null || t > this.#newest) this.#newest = t;
    if (this.#released !== null && t < this.#released) this.#late++;
    // Nearly sorted input: the place is almost always at the end.
    let i = this.#items.length;
    while (i > this.#head && this.#items[i - 1]!.logTime > t) i--;
    if (i === this.#items.length) this.#items.push(item);
    else this.#items.splice(i, 0, item);
  }

  /** The next message whose wait is over (all of them with `all`), or undefined. */
  shift(all = false): T | undefined {
    if (this.#head >= this.#items.length) return undefined;
    const item = this.#items[this.#head]!;
    if (!all && item.logTime > this.#newest! - this.#windowNs) return undefined;
    this.#items[this.#head] = undefined as unknown as T; // let it go
    this.#head++;
    if (this.#head === this.#items.length) {
      this.#items = [];
      this.#head = 0;
    } else if (this.#head > 4096 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    if (this.#released === null || item.logTime > this.#released) this.#released = item.logTime;
    return item;
  }

  /** Forget everything held (a failed recording). */
  clear(): void {
    this.#items = [];
    this.#head = 0;
  }
}
