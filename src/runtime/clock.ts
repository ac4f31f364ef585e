/**
 * Clocks. Nothing in bodylink calls Date.now() or performance.now() directly: the runtime, the
 * simulators and the servers take a {@link Clock}, so tests run in simulated time.
 *
 * - {@link MonotonicClock}: performance.now(); `sleepUntil` targets absolute deadlines, so timer
 *   error does not accumulate the way chained setInterval periods do.
 * - {@link SimClock}: time moves only when a test calls `advance()`; sleepers wake in deadline order.
 */

export interface Clock {
  /** True when time passes on its own (a wall clock); false or absent for simulated time. */
  readonly realTime?: boolean;
  /** Monotonic milliseconds (arbitrary origin). */
  nowMs(): number;
  /** Wall-clock milliseconds since the Unix epoch, for timestamps shown to users. */
  epochMs(): number;
  /** Resolve at or after the absolute monotonic deadline `deadlineMs`. */
  sleepUntil(deadlineMs: number): Promise<void>;
}

export class MonotonicClock implements Clock {
  readonly realTime = true;
  readonly #epochOffsetMs = Date.now() - performance.now();
  nowMs(): number {
    return performance.now();
  }
  epochMs(): number {
    return this.#epochOffsetMs + performance.now();
  }
  sleepUntil(deadlineMs: number): Promise<void> {
    return new Promise((resolve) => {
      // setTimeout fires late by up to ~1 ms; aim a little early, then yield until the deadline.
      const tick = (): void => {
        const left = deadlineMs - performance.now();
        if (left <= 0) resolve();
        else if (left > 1.5) setTimeout(tick, left - 1);
        else setImmediate(tick);
      };
      tick();
    });
  }
}

/** Resolves after all queued microtasks have run (a macrotask boundary). */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

interface Sleeper {
  deadlineMs: number;
  resolve: () => void;
}

export class SimClock implements Clock {
  #nowMs: number;
  readonly #epochBaseMs: number;
  readonly #sleepers: Sleeper[] = [];

  constructor(startMs = 0, epochBaseMs = Date.UTC(2026, 0, 1)) {
    this.#nowMs = startMs;
    this.#epochBaseMs = epochBaseMs;
  }
  nowMs(): number {
    return this.#nowMs;
  }
  epochMs(): number {
    return this.#epochBaseMs + this.#nowMs;
  }
  sleepUntil(deadlineMs: number): Promise<void> {
    if (deadlineMs <= this.#nowMs) return Promise.resolve();
    return new Promise((resolve) => {
      this.#sleepers.push({ deadlineMs, resolve });
      this.#sleepers.sort((a, b) => a.deadlineMs - b.deadlineMs);
    });
  }
  /** Move time forward by `ms`, waking sleepers in order and letting their continuations run. */
  async advance(ms: number): Promise<void> {
    const target = this.#nowMs + ms;
    for (;;) {
      // Let every pending continuation run (and schedule its next sleep) before looking.
      await settle();
      const next = this.#sleepers[0];
      if (!next || next.deadlineMs > target) break;
      this.#sleepers.shift();
      this.#nowMs = Math.max(this.#nowMs, next.deadlineMs);
      next.resolve();
    }
    this.#nowMs = target;
  }
  /** Set time without waking anyone (for pure, synchronous tests). */
  set(ms: number): void {
    this.#nowMs = ms;
  }
}
