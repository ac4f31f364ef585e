/**
 * The one runtime loop: paces a body's cycle on a {@link Clock} with absolute deadlines, records
 * timing, and tells the body when a cycle starts late so it can go to a safe state (HAL's
 * DcmLostPlugin lowers stiffness when its cycle runs late; ours does the same through `onLate`).
 *
 * Pacing policy: deadline += period each cycle (no drift). If the loop falls more than one period
 * behind, it does not burst to catch up: it skips to now and counts the cycle as late.
 *
 * A body whose link has its own clock (an upstream LoLA sends one message per 12 ms) gives a
 * {@link CyclePacer}: the loop then waits on it instead of the clock, and each cycle's deadline is
 * one period after the previous cycle actually started (the device's period, not ours), so timing
 * and lateness describe the device's pace. A pacer that takes the loop's `runNow` (push) runs
 * each device cycle inside the device's own callback: the bytes in, the cycle and its output
 * leave in one call stack, with no promise or microtask between them.
 *
 * Garbage collection: with `youngGcEveryMs` the loop collects V8's young
 * generation itself, in the slack after a cycle, so that V8 does not stop the thread at a random
 * moment (see gc.ts). Each collection's duration is recorded with the cycle timing.
 */
import type { Clock } from "./clock.js";
import { youngGenerationCollector, youngGenerationUsage } from "./gc.js";
import { ThreadCpuClock, ThreadStats, type ThreadStatsSnapshot } from "./thread-stats.js";
import { CycleTiming, type TimingSummary } from "./timing.js";

/**
 * The longest gap between two readings of the young generation's fill, in collection intervals
 * (youngGcEveryMs): a burst of allocation after a quiet reading is found within this many.
 */
const GC_READ_MAX_INTERVALS = 5;

/** What the loop drives. Bodies implement this; the loop owns pacing, timing and late detection. */
export interface CycleBody {
  readonly periodMs: number;
  /** Perform side: read → decode → publish → arbitrate → check → encode → write. Must not throw for link errors. */
  cycle(nowMs: number): void;
  /** A cycle started `lateByMs` after its deadline (beyond the loop's bound). */
  onLate?(lateByMs: number): void;
  /** `cycle` threw (a bug): go to a safe state. The loop keeps running. */
  onCycleError?(error: unknown): void;
}

/**
 * Paces the loop by the body's own events. `wait` resolves when the next cycle should start: when
 * the device has something (an upstream message), or, when it has nothing, by itself around
 * `deadlineMs` (one period after the last cycle), so the safety logic keeps running on the
 * loop's clock. Called once per cycle, on the thread that runs the loop.
 */
export interface CyclePacer {
  wait(deadlineMs: number): Promise<void>;
  /**
   * Optional, push: the loop hands over `runNow` when it starts (and null when it stops). The
   * pacer calls it from the device's callback (a message arrived) to run that cycle right there,
   * synchronously; `wait` then resolves only for the cycles the device does not start (the
   * fallback). `runNow` does nothing while the loop is stopped.
   */
  attach?(runNow: (() => void) | null): void;
}

export interface LoopOptions {
  /** Wait on this instead of the clock between cycles (see {@link CyclePacer}). Defaults to none: the clock's deadlines. */
  pacer?: CyclePacer;
  /** A cycle that starts later than this after its deadline counts as late. Defaults to half a period. */
  lateBoundMs?: number;
  /**
   * Collect the young generation after a cycle at most this often, ms of the clock; 0 (the
   * default) leaves collection to V8. `bodylink serve` sets 100 (`--gc-every-ms`). A collection is
   * skipped unless the slack before the next deadline is at least a quarter period and twice the
   * recent collections' duration.
   */
  youngGcEveryMs?: number;
  /** What collects, when `youngGcEveryMs` is set. Defaults to V8's minor GC (gc.ts); tests pass their own. */
  youngGcCollector?: () => void;
  /**
   * Skip a scheduled collection while the young generation holds less than this many bytes (or,
   * if its capacity is under four times that, less than a quarter of it): collecting a nearly
   * empty space costs its fixed overhead (and wakes V8's helper threads) for nothing. Defaults to
   * 256 KiB: a core that allocates a few KB per cycle collects every ~0.5 s, not every 100 ms; the
   * main thread under the API's load still collects at every interval. 0: collect every time.
   */
  youngGcMinBytes?: number;
  /** How full the young generation is now (gc.ts youngGenerationUsage, the default); tests pass their own. */
  youngGcUsage?: () => { usedBytes: number; capacityBytes: number };
  /**
   * Tell a late cycle its own work made late from one the machine did by the thread's CPU time
   * (one /proc read per cycle, see #runOne). Off by default: measured on the NAO core at quiet,
   * the read and its bookkeeping cost ~55 µs a cycle (1.18× the core's CPU), which a robot's
   * team pays for a diagnosis only benches need. Off, the timestamp rule attributes. Defaults to
   * $BODYLINK_LATE_CPU_TIME === "1" (a worker inherits it; `npm run bench -- physics` sets it).
   */
  lateByCpuTime?: boolean;
}

export type CycleListener = (seq: number, nowMs: number) => void;

export class CycleLoop {
  readonly timing: CycleTiming;
  readonly #body: CycleBody;
  readonly #thread: ThreadStats;
  readonly #clock: Clock;
  readonly #lateBoundMs: number;
  readonly #listeners: CycleListener[] = [];
  #running = false;
  #done: Promise<void> | null = null;
  /**
   * Ends the current wait early when stop() is called, so a loop asleep on a SimClock stops without
   * time passing. One per wait, not one promise raced every cycle: `Promise.race([sleep, stop])`
   * left a reaction on the long-lived stop promise per cycle, kept until stop (~350 B a cycle, the
   * old generation grew until V8 collected it, and could free nothing).
   */
  #interrupt: (() => void) | null = null;
  #seq = 0;
  #lastStartMs = Number.NaN;
  readonly #pacer: CyclePacer | null;
  readonly #gcEveryMs: number;
  readonly #collectYoung: (() => void) | null;
  readonly #gcMinBytes: number;
  readonly #gcUsage: () => { usedBytes: number; capacityBytes: number };
  /** Scheduled collections skipped because the young generation was nearly empty. */
  gcSkipped = 0;
  // [0] running average of collection durations, ms; [1] when the next may start; [2] the young
  // generation's bytes at the last reading (or at the last collection: 0) and [3] when (NaN: not
  // known), the rate that spaces the readings. Typed slots: a double field would be boxed on every update.
  readonly #gc = Float64Array.of(0, Number.NEGATIVE_INFINITY, 0, Number.NaN);
  /** When the thread last finished the loop's work (a cycle, its listeners, its GC slot), ms: who made a late cycle late. */
  readonly #idleSince = Float64Array.of(Number.NEGATIVE_INFINITY);
  /** On a real-time clock, while running: this thread's CPU time (see #runOne). */
  #cpuClock: ThreadCpuClock | null = null;
  readonly #lateByCpuTime: boolean;
  /** [0] the thread's CPU time when the last cycle started, [1] now, ms. */
  readonly #cpu = Float64Array.of(Number.NaN, Number.NaN);

  constructor(body: CycleBody, clock: Clock, opts: LoopOptions = {}) {
    this.#body = body;
    this.#clock = clock;
    this.#lateBoundMs = opts.lateBoundMs ?? body.periodMs / 2;
    this.#lateByCpuTime = opts.lateByCpuTime ?? process.env.BODYLINK_LATE_CPU_TIME === "1";
    this.timing = new CycleTiming(body.periodMs);
    this.#thread = ThreadStats.shared();
    this.#pacer = opts.pacer ?? null;
    this.#wakeAt = !this.#pacer && clock.wakeAt ? clock.wakeAt : null;
    const gcEvery = opts.youngGcEveryMs ?? 0;
    if (!(gcEvery >= 0 && Number.isFinite(gcEvery))) throw new RangeError(`youngGcEveryMs must be a finite number ≥ 0, got ${gcEvery}`);
    this.#collectYoung = gcEvery > 0 ? (opts.youngGcCollector ?? youngGenerationCollector()) : null;
    this.#gcEveryMs = this.#collectYoung ? gcEvery : 0;
    const minBytes = opts.youngGcMinBytes ?? 256 * 1024;
    if (!(minBytes >= 0 && Number.isFinite(minBytes))) throw new RangeError(`youngGcMinBytes must be a finite number ≥ 0, got ${minBytes}`);
    this.#gcMinBytes = minBytes;
    this.#gcUsage = opts.youngGcUsage ?? youngGenerationUsage;
  }

  /**
   * Prepare side: the timing summary (over the last `windowCycles` cycles, see CycleTiming) with
   * what the thread running this loop cost (CPU) and suffered (collections V8 started itself).
   */
  summary(windowCycles?: number): TimingSummary & { readonly nominalPeriodMs: number; readonly core: ThreadStatsSnapshot } {
    return { ...this.timing.summary(windowCycles), nominalPeriodMs: this.timing.nominalPeriodMs, core: this.#thread.snapshot() };
  }

  /** Whether the loop schedules young-generation collections itself (see gc.ts). */
  get schedulesGc(): boolean {
    return this.#gcEveryMs > 0;
  }

  get running(): boolean {
    return this.#running;
  }
  get seq(): number {
    return this.#seq;
  }
  /** When the next cycle is due, on the loop's clock (a server on this thread holds new work back just before it). */
  get nextDeadlineMs(): number {
    return this.#deadline[0]!;
  }

  /** Called after every cycle on the perform side: keep listeners cheap and allocation-free. */
  onCycle(listener: CycleListener): () => void {
    this.#listeners.push(listener);
    return () => {
      const i = this.#listeners.indexOf(listener);
      if (i >= 0) this.#listeners.splice(i, 1);
    };
  }

  /** Run exactly one cycle now (tests, benchmarks, single-shot CLI reads). */
  step(): void {
    this.#runOne(this.#clock.nowMs(), 0);
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    if (this.#chainDone !== null) return; // stopped but not yet awaited: the pending wake-up goes on running it
    this.#done = this.#wakeAt ? this.#runChained() : this.#run();
  }

  async stop(): Promise<void> {
    this.#running = false;
    this.#pacer?.attach?.(null);
    this.#interrupt?.();
    if (this.#chainDone !== null) this.#clock.wakeNow?.();
    await this.#done;
    this.#done = null;
    if (!this.#running) {
      this.#cpuClock?.close();
      this.#cpuClock = null;
      this.#cpu.fill(Number.NaN);
    }
  }

  /**
   * The clock's callback form (Clock.wakeAt), when it has one and no pacer is given: each cycle
   * runs in the clock's own callback and arms the next, with no promise, async frame or closure
   * per cycle (the promise path below cost the worker cores ~0.5–1 KB of young generation per
   * cycle: `npm run bench -- core-gc`).
   */
  readonly #wakeAt: ((deadlineMs: number, cb: () => void) => void) | null;
  /** Ends the callback path's chain (set while a wake-up is pending on it, null when none is). */
  #chainDone: (() => void) | null = null;

  #runChained(): Promise<void> {
    this.#begin();
    const done = new Promise<void>((resolve) => {
      this.#chainDone = resolve;
    });
    this.#wakeAt!(this.#deadline[0]!, this.#onWake);
    return done;
  }

  /** One cycle on the callback path, then the next wake-up; or the end of the chain once stopped. */
  readonly #onWake = (): void => {
    if (this.#running) {
      this.#runClocked();
      if (this.#running) {
        this.#wakeAt!(this.#deadline[0]!, this.#onWake);
        return;
      }
    }
    const resolve = this.#chainDone!;
    this.#chainDone = null;
    resolve();
  };

  async #run(): Promise<void> {
    this.#begin();
    const pacer = this.#pacer;
    const d = this.#deadline;
    pacer?.attach?.(this.#runPaced);
    while (this.#running) {
      // NOTE: this path allocates a promise (and, on the wall clock, a timer) per cycle it waits
      // for (#runChained does not); a push pacer's cycles (runNow) allocate none, nor does the cycle.
      const ranBefore = this.#seq;
      await this.#waitUntil(pacer, d[0]!);
      this.#interrupt = null;
      if (!this.#running) break;
      if (pacer) {
        // The device ran cycles meanwhile (push) and the next one is not due yet: wait again.
        if (this.#seq !== ranBefore && this.#clock.nowMs() < d[0]!) continue;
        this.#runPaced();
        continue;
      }
      this.#runClocked();
    }
  }

  /** Both paths start so: the first deadline is now. */
  #begin(): void {
    if (this.#lateByCpuTime && this.#clock.realTime && !this.#cpuClock) this.#cpuClock = ThreadCpuClock.open();
    // The first collections of a fresh heap are the slow ones (3–20 ms measured): take one now,
    // before the first deadline, rather than in a cycle's slack.
    if (this.#gcEveryMs > 0) this.#collect(Number.POSITIVE_INFINITY, this.#body.periodMs, false);
    this.#deadline[0] = this.#clock.nowMs();
  }

  /** One cycle due at the deadline (the clock's pace, either path), then the next deadline and the GC slot. */
  #runClocked(): void {
    const period = this.#body.periodMs;
    const d = this.#deadline;
    const now = this.#clock.nowMs();
    this.#runOne(now, now - d[0]!);
    d[0]! += period;
    if (now - d[0]! > period) {
      // fell behind: skip, don't burst; the deadlines that passed meanwhile are counted missed
      this.timing.missedCycles += Math.floor((now - d[0]! + period) / period);
      d[0] = now + period;
    }
    if (this.#gcEveryMs > 0 && now >= this.#gc[1]!) this.#collect(d[0]!, period);
    this.#idleSince[0] = this.#clock.nowMs();
  }

  /** Resolves at the deadline (the pacer's or the clock's), or at once when stop() is called. */
  #waitUntil(pacer: CyclePacer | null, deadlineMs: number): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#interrupt = resolve;
      void (pacer ? pacer.wait(deadlineMs) : this.#clock.sleepUntil(deadlineMs)).then(resolve);
    });
  }

  /** The next cycle's deadline, ms (a typed slot: no boxed double per cycle). */
  readonly #deadline = Float64Array.of(0);

  /** One cycle at the device's pace: now, its lateness against one period after the last, then its GC slot. */
  readonly #runPaced = (): void => {
    if (!this.#running) return;
    const period = this.#body.periodMs;
    const d = this.#deadline;
    const now = this.#clock.nowMs();
    this.#runOne(now, now - d[0]!);
    d[0] = now + period;
    if (this.#gcEveryMs > 0 && now >= this.#gc[1]!) this.#collect(d[0]!, period);
    this.#idleSince[0] = this.#clock.nowMs();
  };

  #runOne(now: number, lateBy: number): void {
    const bound = this.#lateBoundMs;
    const late = lateBy > bound;
    const cpu = this.#cpu;
    this.#cpuClock?.read(cpu, 1);
    // Whose fault a late cycle is. With the thread's CPU time: had it run whenever it wanted since
    // the last cycle started, its own work since (that cycle, listeners, GC slot, requests between
    // cycles) would have kept it busy until then + the CPU it used; past the deadline + the bound,
    // the work made this cycle late; otherwise the machine did (descheduled, or woken late). On a
    // simulated clock, or without the CPU time: the thread was still busy at the deadline + bound.
    const ownWork =
      late &&
      (!Number.isNaN(cpu[1]!) && !Number.isNaN(cpu[0]!) && !Number.isNaN(this.#lastStartMs)
        ? this.#lastStartMs + (cpu[1]! - cpu[0]!) > now - lateBy + bound
        : this.#idleSince[0]! > now - lateBy + bound);
    cpu[0] = cpu[1]!;
    try {
      if (late) this.#body.onLate?.(lateBy);
      this.#body.cycle(now);
    } catch (e) {
      // A bug, not a link error (bodies report those in their state). The loop goes on, so the
      // body's safety logic keeps running; the body is told (NaoRobot ramps stiffness to 0).
      this.#failed("cycle", e);
      try {
        this.#body.onCycleError?.(e);
      } catch {
        // onCycleError must not take the loop down either
      }
    }
    const end = this.#clock.nowMs();
    const period = Number.isNaN(this.#lastStartMs) ? this.#body.periodMs : now - this.#lastStartMs;
    this.#lastStartMs = now;
    this.timing.record(period, end - now, lateBy, late, ownWork);
    const seq = ++this.#seq;
    const ls = this.#listeners;
    for (let i = 0; i < ls.length; i++) {
      try {
        ls[i]!(seq, now);
      } catch (e) {
        this.#failed("cycle listener", e); // one server's bug must not stop the cycle or the others
      }
    }
  }

  /**
   * Collect the young generation now if the slack before `nextDeadline` allows it (a quarter
   * period, and twice the recent collections' duration), and record how long it took. A skipped
   * collection lets the estimate decay, so one slow collection cannot stop the scheduling for good
   * (V8 then collects on its own meanwhile, as without scheduling). A young generation that holds
   * less than youngGcMinBytes is left alone until the next interval. `typical` is false for the
   * collection before the first cycle, which is slow and is neither recorded nor averaged (and
   * always taken).
   */
  #collect(nextDeadline: number, period: number, typical = true): void {
    const t0 = this.#clock.nowMs();
    const gc = this.#gc;
    if (nextDeadline - t0 < Math.max(period / 4, 2 * gc[0]!)) {
      gc[0] = 0.9 * gc[0]!; // too close to the next cycle: try after it, a little less cautious
      return;
    }
    const every = this.#gcEveryMs;
    gc[1] = t0 + every;
    if (typical && this.#gcMinBytes > 0) {
      // Nearly empty: skip, and read again when, at the rate it filled since the last reading, it
      // would be half-way to full (at least one interval, at most GC_READ_MAX_INTERVALS): the reading
      // itself costs (eight binding calls and their objects, run cold), and a core allocating ~1 KB a
      // cycle needs ~2 s to fill 256 KiB, so reading every interval read it ~20 times per collection.
      const u = this.#gcUsage();
      const full = Math.min(this.#gcMinBytes, u.capacityBytes / 4);
      if (u.usedBytes < full) {
        this.gcSkipped++;
        const rate = (u.usedBytes - gc[2]!) / (t0 - gc[3]!); // bytes/ms; NaN or ≤ 0 when not known
        const waitMs = rate > 0 ? (0.5 * (full - u.usedBytes)) / rate : every;
        gc[1] = t0 + Math.min(Math.max(waitMs, every), GC_READ_MAX_INTERVALS * every);
        gc[2] = u.usedBytes;
        gc[3] = t0;
        return;
      }
    }
    this.#collectYoung!();
    const end = this.#clock.nowMs();
    gc[2] = 0; // a scavenge leaves the survivors only: the next reading's growth is from here
    gc[3] = end;
    if (!typical) return; // not counted: it ran before any cycle and says nothing of the next ones
    const took = end - t0;
    this.timing.recordGc(took);
    gc[0] = gc[0] === 0 ? took : 0.8 * gc[0]! + 0.2 * took;
  }

  /** Exceptions caught in cycles and listeners (bugs); the first and every 1000th are logged. */
  errors = 0;

  #failed(where: string, e: unknown): void {
    if (this.errors++ % 1000 === 0) console.error(`bodylink: ${where} threw (${this.errors} so far): ${(e as Error)?.stack ?? e}`);
  }
}
