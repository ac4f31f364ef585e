/**
 * A timer for "nothing came for `ms`" that costs the events nothing: each event only stamps its
 * time (`stamp`), and the timer, armed once, looks at the newest stamp when it fires. Fired early
 * (an event came meanwhile), it re-arms itself for exactly the rest; fired with `ms` of silence
 * behind it, it calls `onSilence` and stays disarmed until `arm()`. Never early, never late but by
 * the timer's own lateness: `onSilence` comes `ms` after the last event.
 *
 * Why not `timeout.refresh()` per event: a refresh re-links the timer in Node's list and reads
 * libuv's clock (~1 % of the `--lola-upstream` proxy's core thread per timer), and it does not move
 * libuv's own timer, so the list still expires at the old deadline and wakes the thread anyway.
 * Here an event costs one clock read and one store, and the thread wakes for the timer once per
 * `ms` while events flow.
 *
 * Why a new Timeout per early firing (~300 bytes with its Node list, once per `ms`: ~65 bytes a
 * LoLA cycle at 60 ms) rather than re-arming one in place: `refresh()` can only re-arm for the whole
 * `ms` from now, which puts the next firing at a phase of its own, between two events. Re-armed
 * for the rest, it is due `ms` after an event, when the next events come too: measured, the thread
 * then mostly finds it due while it is awake for an event (+0.05 wake-ups per LoLA message against
 * +0.2 re-armed in place, and +0.4 with two such timers).
 *
 * Perform side.
 */
const PERF = performance;

export class SilenceTimer {
  /** When the last event came, on `performance.now()`'s clock (a typed slot: no boxed double per event). */
  readonly #lastAtMs = Float64Array.of(Number.NEGATIVE_INFINITY);
  /**
   * The moment the pending Timeout is for (performance.now() ms). The firing is checked against it
   * as well as against the newest stamp: Node's timers run on libuv's whole-millisecond clock, so a
   * Timeout can fire up to 1 ms before its delay has passed on `performance.now()` (a 2 ms one after
   * 1.13 ms, test/lola/silence-timer.test.ts); fired early, it waits out the rest.
   */
  readonly #dueAtMs = Float64Array.of(Number.NEGATIVE_INFINITY);
  #timer: ReturnType<typeof setTimeout> | null = null;
  readonly #fire = (): void => {
    this.#timer = null;
    const now = PERF.now();
    const dueAt = Math.max(this.lastAtMs + this.ms, this.#dueAtMs[0]!);
    if (dueAt > now) this.#schedule(dueAt, now);
    else this.onSilence();
  };

  /** With `stampedBy`, the events' stamps are kept elsewhere (one clock read per event serves two timers); read only when arming or firing. */
  constructor(
    readonly ms: number,
    readonly onSilence: () => void,
    readonly stampedBy: (() => number) | null = null,
  ) {
    if (!(ms > 0 && Number.isFinite(ms))) throw new RangeError(`ms must be a positive number, got ${ms}`);
  }

  /** An event came now. Costs one clock read; arms nothing (see `arm`). */
  stamp(): void {
    this.#lastAtMs[0] = PERF.now();
  }

  /** When the last event came (performance.now() ms), or -Infinity before the first. */
  get lastAtMs(): number {
    return this.stampedBy === null ? this.#lastAtMs[0]! : this.stampedBy();
  }

  get armed(): boolean {
    return this.#timer !== null;
  }

  /** Counts the silence from the newest stamp, or from now when that is `ms` old or more; no-op while armed. */
  arm(): void {
    if (this.#timer !== null) return;
    const now = PERF.now();
    const fromStamp = this.lastAtMs + this.ms;
    this.#schedule(fromStamp > now ? fromStamp : now + this.ms, now);
  }

  /** Stamps now and arms: the silence counts from now. */
  restart(): void {
    this.stamp();
    this.arm();
  }

  cancel(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
  }

  /** A Timeout for `dueAtMs` (performance.now() ms), `nowMs` being now. */
  #schedule(dueAtMs: number, nowMs: number): void {
    this.#dueAtMs[0] = dueAtMs;
    // Node truncates a delay to whole ms: rounded up, and a firing still early (see #dueAtMs) re-arms for the rest.
    this.#timer = setTimeout(this.#fire, Math.ceil(dueAtMs - nowMs));
    this.#timer.unref?.();
  }
}
