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

/** How a {@link MonotonicClock} meets a deadline (docs/architecture.md, "Wake-up", has the figures). */
export type WakeMode = "spin" | "thread" | "wait" | "block";
export const WAKE_MODES: readonly WakeMode[] = ["spin", "thread", "wait", "block"];
/**
 * The wake-up a real-time core in its own worker thread uses unless told otherwise (`serve
 * --core-wake`), with the default 0.2 ms final spin: chosen by `npm run bench -- wake`, figures
 * in docs/architecture.md ("Wake-up").
 */
export const WORKER_WAKE_DEFAULT: WakeMode = "wait";

export interface MonotonicClockOptions {
  /**
   * How `sleepUntil` meets a deadline:
   * - "spin" (the default): a timer until ~1 ms before, then setImmediate until the deadline;
   *   exact, but the spin costs CPU at 83 Hz. The event loop keeps serving I/O all along.
   * - "thread": a helper thread sleeps in a futex until 0.05 ms before and wakes this one
   *   (waker.ts); less CPU, wakes tens of microseconds late, more on a VM whose idle vCPU is slow.
   * - "wait": a timer until ~1 ms before, then this thread blocks in `Atomics.wait` (a futex with
   *   a timeout) until `spinMs` (0.2) before the deadline and spins the rest synchronously. The event
   *   loop is blocked only for that last slice (≤ 1.5 ms): I/O arriving then is served right after
   *   the cycle. Blocking is allowed in a worker thread; do not use it on a thread that serves clients.
   * - "block": after one turn of the event loop, block in `Atomics.wait` until the deadline (the
   *   same final spin), then one more turn before the cycle runs, so I/O that arrived meanwhile
   *   lands in this cycle. The thread serves I/O only at cycle boundaries.
   */
  wake?: WakeMode;
  /**
   * "wait"/"block": spin (synchronously) this final part of the wait, ms. Defaults to 0.2: a futex
   * wakes up to the timer slack (50 µs) plus the scheduler's delay late, and 0.2 ms of spin bought
   * a lateness p99 of 0.09–0.16 ms against 0.9–1.2 ms with 0.05 ms, for ~1.5 % of a core (bench wake).
   */
  spinMs?: number;
}

// The futex word the blocking modes wait on; nobody ever notifies it, so a wait always times out.
const SLEEP_CELL = new Int32Array(new SharedArrayBuffer(4));

/** Block this thread until `deadlineMs` (performance.now() time): a futex wait, then a spin for the last `spinMs`. */
function blockUntil(deadlineMs: number, spinMs: number): void {
  const left = deadlineMs - spinMs - performance.now();
  if (left > 0) Atomics.wait(SLEEP_CELL, 0, 0, left);
  while (performance.now() < deadlineMs) {
    // the final slice: a futex wakes up to the kernel's timer slack (50 µs) late; this does not
  }
}

/** The thread waker aims this much before a deadline; the rest is yielded away on setImmediate. */
const THREAD_LEAD_MS = 0.05;

export class MonotonicClock implements Clock {
  readonly realTime = true;
  readonly wake: WakeMode;
  readonly #spinMs: number;
  readonly #epochOffsetMs = Date.now() - performance.now();
  readonly #waker: ThreadWaker | null;

  constructor(opts: MonotonicClockOptions = {}) {
    this.wake = opts.wake ?? "spin";
    if (!WAKE_MODES.includes(this.wake)) throw new RangeError(`wake must be one of ${WAKE_MODES.join(", ")}; got ${String(this.wake)}`);
    this.#spinMs = opts.spinMs ?? 0.2;
    if (!(this.#spinMs >= 0 && this.#spinMs <= 2)) throw new RangeError(`spinMs must be between 0 and 2, got ${opts.spinMs}`);
    this.#waker = this.wake === "thread" ? ThreadWaker.shared() : null;
  }
  nowMs(): number {
    return performance.now();
  }
  epochMs(): number {
    return this.#epochOffsetMs + performance.now();
  }
  sleepUntil(deadlineMs: number): Promise<void> {
    const spinMs = this.#spinMs;
    if (this.wake === "block") {
      return new Promise((resolve) => {
        if (deadlineMs - performance.now() <= 0) return resolve();
        // One turn first (I/O ready now is served), then the thread sleeps; one turn after.
        setImmediate(() => {
          blockUntil(deadlineMs, spinMs);
          setImmediate(resolve);
        });
      });
    }
    const wait = this.wake === "wait";
    return new Promise((resolve) => {
      // setTimeout fires late by up to ~1 ms; aim a little early, then yield (or block) until the deadline.
      const tick = (): void => {
        const left = deadlineMs - performance.now();
        if (left <= 0) resolve();
        else if (left > 1.5) setTimeout(tick, left - 1);
        else if (wait) {
          blockUntil(deadlineMs, spinMs);
          resolve();
        } else setImmediate(tick);
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
