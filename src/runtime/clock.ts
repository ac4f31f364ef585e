/**
 * Clocks. Nothing in bodylink calls Date.now() or performance.now() directly: the runtime, the
 * simulators and the servers take a {@link Clock}, so tests run in simulated time.
 *
 * - {@link MonotonicClock}: performance.now(); `sleepUntil` targets absolute deadlines, so timer
 *   error does not accumulate the way chained setInterval periods do.
 * - {@link SimClock}: time moves only when a test calls `advance()`; sleepers wake in deadline order.
 */
import { ThreadWaker } from "./waker.js";

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

export interface MonotonicClockOptions {
  /**
   * How `sleepUntil` meets a deadline. "spin" (the default): a timer until ~1 ms before, then
   * setImmediate until the deadline; exact, ~8 % of a core at 83 Hz. "thread": a helper thread
   * sleeps in a futex until 0.05 ms before and wakes this one (waker.ts); ~4 % of a core, wakes
   * tens of microseconds after the deadline. On a virtual machine an idle vCPU can be slow to
   * wake: measure before choosing it (docs/architecture.md).
   */
  wake?: "spin" | "thread";
}

/** The thread waker aims this much before a deadline; the rest is yielded away on setImmediate. */
const THREAD_LEAD_MS = 0.05;

export class MonotonicClock implements Clock {
  readonly realTime = true;
  readonly wake: "spin" | "thread";
  readonly #epochOffsetMs = Date.now() - performance.now();
  readonly #waker: ThreadWaker | null;

  constructor(opts: MonotonicClockOptions = {}) {
    this.wake = opts.wake ?? "spin";
    if (this.wake !== "spin" && this.wake !== "thread") throw new RangeError(`wake must be "spin" or "thread", got ${String(this.wake)}`);
    this.#waker = this.wake === "thread" ? ThreadWaker.shared() : null;
  }
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
      const waker = this.#waker;
      if (waker?.alive && deadlineMs - performance.now() > THREAD_LEAD_MS) {
        waker.sleepUntil(performance.timeOrigin + deadlineMs - THREAD_LEAD_MS).then(finish);
      } else tick();
      // After the thread's wake-up: whatever is left of the lead (usually nothing) on setImmediate;
      // if the thread died meanwhile, the usual timer path.
      function finish(): void {
        const left = deadlineMs - performance.now();
        if (left <= 0) resolve();
        else if (left > THREAD_LEAD_MS) tick();
        else setImmediate(finish);
      }
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
