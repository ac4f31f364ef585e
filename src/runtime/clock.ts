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
  /**
   * Optional, callback form of `sleepUntil` for the one loop that paces itself on this clock: call
   * `cb` at `deadlineMs` with no promise in between (MonotonicClock "block": nothing allocated per
   * wait but the event loop's two immediates). `wakeNow` makes a pending wake-up fire at the next
   * turn without waiting (how a loop stops).
   */
  wakeAt?(deadlineMs: number, cb: () => void): void;
  wakeNow?(): void;
}

/** How a {@link MonotonicClock} meets a deadline (docs/architecture.md, "Wake-up"; the figures: docs/performance.md). */
export type WakeMode = "spin" | "wait" | "block";
export const WAKE_MODES: readonly WakeMode[] = ["spin", "wait", "block"];
/**
 * The wake-up a real-time core in its own worker thread uses unless told otherwise (`serve
 * --core-wake`): one futex wait per cycle, woken early by its host's requests (`interrupt`), with
 * the learned lead ("auto"). Chosen by `npm run bench -- wake`, figures in docs/performance.md
 * ("Wake-up").
 */
export const WORKER_WAKE_DEFAULT: WakeMode = "block";

/**
 * A futex word that wakes a blocked wait early: whoever wants the sleeping thread to serve its
 * event loop (a message it posted to it) adds 1 to `words[index]` and calls `Atomics.notify` on
 * it. See {@link wakeInterrupt}.
 */
export interface WakeInterrupt {
  readonly words: Int32Array;
  readonly index: number;
}

/** The other side of a {@link WakeInterrupt}: call after posting a message to the sleeping thread. */
export function wakeInterrupt(words: Int32Array, index: number): void {
  Atomics.add(words, index, 1);
  Atomics.notify(words, index, 1);
}

export interface MonotonicClockOptions {
  /**
   * How `sleepUntil` meets a deadline:
   * - "spin" (the default): a timer until ~1 ms before, then setImmediate until the deadline;
   *   exact, but the spin costs CPU at 83 Hz. The event loop keeps serving I/O all along.
   * - "wait": a timer until ~1 ms before, then this thread blocks in `Atomics.wait` (a futex with
   *   a timeout) until the lead before the deadline and spins the rest synchronously. The event
   *   loop is blocked only for that last slice (≤ 1.5 ms): I/O arriving then is served right after
   *   the cycle. Blocking is allowed in a worker thread; do not use it on a thread that serves clients.
   * - "block": one futex wait per gap. After one turn of the event loop (what is ready is served),
   *   the thread blocks in `Atomics.wait` until the lead before the deadline, turns the event loop
   *   once more (what arrived meanwhile lands in this cycle), and spins the rest. I/O is served at
   *   cycle boundaries, and at once when someone wakes it through `interrupt` (its host, after
   *   posting a request): one wake-up per cycle instead of a timer's, a futex's and every socket's.
   */
  wake?: WakeMode;
  /**
   * "wait"/"block": how long before the deadline the futex wait ends, the rest spun, ms (0..2), or
   * "auto" (the default): learned from how late the futex wakes here (its 90th percentile,
   * {@link WakeLead}), so a machine whose futex wakes 5 µs late spins 5 µs and a VM whose idle
   * vCPU takes 0.1 ms spins about that. A fixed 0.2 ms bought a lateness p99 of 0.09–0.16 ms
   * against 0.9–1.2 ms with 0.05 ms on the loaded development VM, for ~1.5 % of a CPU (bench wake).
   */
  spinMs?: number | "auto";
  /** "block" (and "wait"): a futex word that ends the wait early so the event loop serves a message at once. */
  interrupt?: WakeInterrupt;
  /**
   * "block": turn the event loop once more between the end of the futex wait and the deadline, so
   * what arrived during the wait is served before the cycle (the default, true). false: one turn
   * per cycle, the one before the wait; the wait ends in the spin and the deadline's callback, and
   * what arrived during it is served right after that cycle. For a thread whose cycle reads what
   * it needs itself (the NAO's core: its LoLA server's `pollCommands`, the simulated chest board);
   * not for a link whose answers come through the event loop (USB's transfers).
   */
  turnAfterWait?: boolean;
}

/**
 * The learned lead of a blocking wake-up: how long before a deadline to end the futex wait so the
 * thread is running by then, spinning the rest. A streaming quantile (the "frugal" estimator, O(1),
 * allocation-free): every wake-up later than the lead moves it up by `quantile × stepMs`, every
 * earlier one down by `(1 − quantile) × stepMs`, so it settles where that fraction of wake-ups is
 * late: the 90th percentile of the futex's overshoot by default. It follows a machine that gets
 * busier within tens of cycles and a quieter one within a few hundred.
 */
export class WakeLead {
  readonly #s: Float64Array; // [0] the lead, ms (a typed slot: no boxed double per update)
  constructor(
    initialMs = 0.2,
    readonly maxMs = 1,
    readonly quantile = 0.9,
    readonly stepMs = 0.004,
  ) {
    if (!(initialMs >= 0 && initialMs <= maxMs)) throw new RangeError(`initialMs must be between 0 and maxMs (${maxMs}), got ${initialMs}`);
    if (!(quantile > 0 && quantile < 1)) throw new RangeError(`quantile must be between 0 and 1, got ${quantile}`);
    if (!(stepMs > 0 && stepMs <= maxMs)) throw new RangeError(`stepMs must be > 0 and ≤ maxMs, got ${stepMs}`);
    this.#s = Float64Array.of(initialMs);
  }
  get ms(): number {
    return this.#s[0]!;
  }
  /** One wake-up: how long after the aimed moment (deadline − lead) the thread ran again, ms. */
  record(overshootMs: number): void {
    if (!Number.isFinite(overshootMs)) return;
    const s = this.#s;
    const next = s[0]! + (overshootMs > s[0]! ? this.quantile * this.stepMs : -(1 - this.quantile) * this.stepMs);
    s[0] = Math.max(0, Math.min(next, this.maxMs));
  }
}

// The futex word the blocking modes wait on without an interrupt; nobody notifies it, so a wait always times out.
/** `performance`, read once: Node defines the global as an accessor, a getter call per read (~20-40 ns; several reads a cycle). */
const PERF = performance;
const SLEEP_CELL = new Int32Array(new SharedArrayBuffer(4));

// The spin's calibration, in typed slots: [0] iterations of busyLoop per ms (learned), and a sink
// the loop writes so it is not optimised away.
const SPIN = Float64Array.of(1000);
const SINK = new Int32Array(1);

function busyLoop(n: number): void {
  let x = SINK[0]!;
  for (let i = 0; i < n; i++) x = (x + i) | 0;
  SINK[0] = x;
}

/**
 * Spin until `deadlineMs` (performance.now() time), reading the clock a few times only: each round
 * runs an integer loop calibrated to half the time left, so ~10 reads per spin instead of
 * thousands (every performance.now() returns a boxed double: 16 bytes of young generation).
 */
export function spinUntil(deadlineMs: number): void {
  let first = -1;
  for (;;) {
    const t0 = PERF.now();
    if (first < 0) first = t0;
    const left = deadlineMs - t0;
    if (left <= 0) {
      SPUN[0]! += t0 - first;
      return;
    }
    if (left < 0.003) continue; // the last few µs: just read the clock
    const n = Math.ceil(left * 0.5 * SPIN[0]!);
    busyLoop(n);
    const took = PERF.now() - t0;
    // learn the loop's speed from rounds that ran undisturbed (a preempted one says nothing); at most ×2 per round
    if (took > 0 && took < left) SPIN[0] = Math.min(2 * SPIN[0]!, 0.5 * SPIN[0]! + (0.5 * n) / took);
  }
}

// Time this thread has spent in spinUntil, ms (module state: per thread).
const SPUN = new Float64Array(1);

/** How long this thread has spun in {@link spinUntil} so far, ms (the bench's breakdown of a core's CPU). */
export function spunMs(): number {
  return SPUN[0]!;
}

/** MonotonicClock.wakeCounts. */
export interface WakeCounts {
  interrupted: number;
  timedOut: number;
  gaps: number;
  yielded: number;
}

// What a blocking wait ended by (MonotonicClock.#block).
const WAITED = 0;
const INTERRUPTED = 1;
const NO_WAIT = 2;

export class MonotonicClock implements Clock {
  readonly realTime = true;
  readonly wake: WakeMode;
  /**
   * "wait" only: asked once per gap, as its last ~1.5 ms begin; true, and that slice yields to the
   * event loop until the deadline (as "spin" does: what arrives is served at once, for the CPU the
   * spin takes) instead of blocking it. For a thread whose clients are busy right now (the TNY-360
   * core's API server under a client sending request after request); null: always block.
   */
  yieldWhen: (() => boolean) | null = null;
  /** The lead of the blocking modes: fixed (spinMs) or learned ("auto"). */
  readonly lead: WakeLead | number;
  readonly #epochOffsetMs = Date.now() - performance.now();
  readonly #cell: Int32Array;
  readonly #index: number;
  readonly #interruptible: boolean;
  readonly #turnAfterWait: boolean;
  /**
   * [0] interrupt value last served; [1] wake-ups ended early by the interrupt; [2] blocking waits
   * that timed out; "wait" only: [3] gaps that reached their last slice, [4] those of them that yielded.
   */
  readonly #counts = new Float64Array(5);

  constructor(opts: MonotonicClockOptions = {}) {
    this.wake = opts.wake ?? "spin";
    if (!WAKE_MODES.includes(this.wake)) throw new RangeError(`wake must be one of ${WAKE_MODES.join(", ")}; got ${String(this.wake)}`);
    const spin = opts.spinMs ?? "auto";
    if (spin !== "auto" && !(spin >= 0 && spin <= 2)) throw new RangeError(`spinMs must be "auto" or between 0 and 2, got ${opts.spinMs}`);
    this.lead = spin === "auto" ? new WakeLead() : spin;
    const i = opts.interrupt;
    if (i && !(i.words instanceof Int32Array && i.words.buffer instanceof SharedArrayBuffer && Number.isInteger(i.index) && i.index >= 0 && i.index < i.words.length)) {
      throw new RangeError("interrupt must name an Int32Array word over a SharedArrayBuffer");
    }
    this.#cell = i ? i.words : SLEEP_CELL;
    this.#index = i ? i.index : 0;
    this.#interruptible = i !== undefined;
    this.#turnAfterWait = opts.turnAfterWait ?? true;
    if (i) this.#counts[0] = Atomics.load(i.words, i.index);
    if (this.wake === "block") this.wakeAt = this.#wakeAtBlock;
  }
  nowMs(): number {
    return PERF.now();
  }
  epochMs(): number {
    return this.#epochOffsetMs + PERF.now();
  }
  /**
   * Blocking waits ended early by the interrupt (a message served at once), and those that ran to
   * the lead; "wait" only (0 otherwise): the gaps that reached their last slice (where yieldWhen is
   * asked), and those of them that yielded to the event loop instead of blocking.
   */
  get wakeCounts(): WakeCounts {
    const c = this.#counts;
    return { interrupted: c[1]!, timedOut: c[2]!, gaps: c[3]!, yielded: c[4]! };
  }
  #leadMs(): number {
    return typeof this.lead === "number" ? this.lead : this.lead.ms;
  }
  /**
   * Block until `targetMs` (the deadline minus the lead): WAITED when the futex wait ran out,
   * INTERRUPTED when the interrupt ended it (or had moved since it was last served: a message is
   * waiting), NO_WAIT when the target had passed already.
   */
  #block(targetMs: number): number {
    const c = this.#counts;
    if (this.#interruptible) {
      const v = Atomics.load(this.#cell, this.#index);
      if (v !== c[0]) {
        c[0] = v;
        c[1]!++;
        return INTERRUPTED;
      }
    }
    const left = targetMs - PERF.now();
    if (left <= 0) return NO_WAIT;
    if (Atomics.wait(this.#cell, this.#index, c[0]!, left) === "timed-out") {
      c[2]!++;
      return WAITED;
    }
    c[0] = Atomics.load(this.#cell, this.#index);
    c[1]!++;
    return INTERRUPTED;
  }
  /** The end of a blocking wait: learn how late the futex woke (when it ran out), spin the rest of the lead. */
  #finish(deadlineMs: number, targetMs: number, how: number): void {
    if (how === WAITED && typeof this.lead !== "number") this.lead.record(PERF.now() - targetMs);
    spinUntil(deadlineMs);
  }
  // "block", one sleeper at a time without allocating closures: [0] its deadline, [1] the moment
  // the futex wait aimed at, [2] how the wait ended; what to call at the deadline (a promise's
  // resolve or a wakeAt callback; null: no sleeper on this path).
  readonly #blk = new Float64Array(3);
  #blkResolve: (() => void) | null = null;
  readonly #blkPhase = (): void => {
    const b = this.#blk;
    b[1] = b[0]! - this.#leadMs();
    b[2] = this.#block(b[1]!);
    if (b[2] === INTERRUPTED) setImmediate(this.#blkPhase);
    else if (this.#turnAfterWait) setImmediate(this.#blkFinish);
    else this.#blkFinish(); // one turn per cycle: the one before this wait
  };
  readonly #blkFinish = (): void => {
    const b = this.#blk;
    this.#finish(b[0]!, b[1]!, b[2]!);
    const resolve = this.#blkResolve!;
    this.#blkResolve = null;
    this.#blkIsWake = false;
    resolve();
  };
  /** "block" only (undefined in the other modes, whose loops keep the promise path): see Clock.wakeAt. */
  readonly wakeAt?: (deadlineMs: number, cb: () => void) => void;
  readonly #wakeAtBlock = (deadlineMs: number, cb: () => void): void => {
    if (this.#blkResolve !== null) {
      void this.sleepUntil(deadlineMs).then(cb); // a second sleeper: the promise path
      return;
    }
    this.#blk[0] = deadlineMs;
    this.#blkResolve = cb;
    this.#blkIsWake = true;
    // One turn first (I/O ready now is served), even when the deadline has passed: a loop that is
    // behind still lets its event loop run between cycles.
    setImmediate(this.#blkPhase);
  };
  /** The fast slot's sleeper came from wakeAt (wakeNow never cuts short a sleepUntil's promise). */
  #blkIsWake = false;
  wakeNow(): void {
    // The pending wakeAt wake-up (if any) ends at its next step: no futex wait, no spin.
    if (this.#blkIsWake && this.#blkResolve !== null) this.#blk[0] = Number.NEGATIVE_INFINITY;
  }
  sleepUntil(deadlineMs: number): Promise<void> {
    if (this.wake === "block") {
      // One turn first (I/O ready now is served), then the thread sleeps until the lead; a turn
      // after it (what arrived meanwhile lands in this cycle), then the spin. An interrupt ends
      // the sleep early: one turn serves the message, then it sleeps again.
      if (this.#blkResolve === null) {
        // The usual case (one sleeper: the loop): callbacks bound once, the deadline in a typed
        // slot; what is left per sleep is its promise and two immediates.
        return new Promise((resolve) => {
          if (deadlineMs - PERF.now() <= 0) return resolve();
          this.#blk[0] = deadlineMs;
          this.#blkResolve = resolve;
          setImmediate(this.#blkPhase);
        });
      }
      return new Promise((resolve) => {
        if (deadlineMs - PERF.now() <= 0) return resolve();
        const phase = (): void => {
          const target = deadlineMs - this.#leadMs();
          const how = this.#block(target);
          if (how === INTERRUPTED) return void setImmediate(phase);
          setImmediate(() => {
            this.#finish(deadlineMs, target, how);
            resolve();
          });
        };
        setImmediate(phase);
      });
    }
    const wait = this.wake === "wait";
    return new Promise((resolve) => {
      /** "wait": this gap's last slice yields to the event loop instead of blocking it (yieldWhen said so). */
      let yielding = false;
      /** "wait": this gap has reached its last slice (counted once). */
      let last = false;
      // setTimeout fires late by up to ~1 ms; aim a little early, then yield (or block) until the deadline.
      const tick = (): void => {
        const left = deadlineMs - PERF.now();
        if (left <= 0) resolve();
        else if (left > 1.5) setTimeout(tick, left - 1);
        else if (wait && !last) {
          last = true;
          this.#counts[3]!++;
          tick();
        } else if (wait && !yielding && this.yieldWhen?.() === true) {
          yielding = true;
          this.#counts[4]!++;
          setImmediate(tick);
        } else if (wait && !yielding) {
          const target = deadlineMs - this.#leadMs();
          const how = this.#block(target);
          if (how === INTERRUPTED) return void setImmediate(tick);
          this.#finish(deadlineMs, target, how);
          resolve();
        } else setImmediate(tick);
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
