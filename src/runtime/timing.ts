/**
 * Cycle timing statistics in preallocated ring buffers (perform side: `record` never allocates).
 * Reports period and execution-time percentiles the way ros2_control records them per component.
 */

export interface TimingSummary {
  readonly cycles: number;
  readonly lateCycles: number;
  /**
   * The late cycles the loop's own work made late: on a real-time clock, the CPU time the thread
   * used since the cycle before started (that cycle, its listeners, GC slot, requests between
   * cycles) would have kept it busy past the deadline plus the late bound even had it never been
   * descheduled; on a simulated clock (or without per-thread CPU time), it was still busy then.
   * The others are the machine's: the thread was descheduled or woken late.
   */
  readonly lateCyclesOwnWork: number;
  /**
   * Deadlines that passed without their cycle: the loop fell more than two periods behind (a
   * stall) and, rather than burst, went on from now (loop.ts). cycles + missedCycles counts every
   * deadline since the start, so a loop that runs slower than its period cannot go unnoticed.
   */
  readonly missedCycles: number;
  /** How many of the most recent cycles the percentiles below describe (at most the ring's capacity). */
  readonly windowCycles: number;
  readonly periodMs: { readonly p50: number; readonly p99: number; readonly max: number };
  readonly execMs: { readonly p50: number; readonly p99: number; readonly max: number };
  /** How long after its deadline each cycle started (the wake-up's error plus any stall), ms. */
  readonly latenessMs: { readonly p50: number; readonly p99: number; readonly max: number };
  /** |period − nominal| at the 99th percentile: the jitter figure the benchmarks compare. */
  readonly jitterP99Ms: number;
  /** Young-generation collections the loop scheduled between cycles (see gc.ts), and their durations. */
  readonly gc: { readonly collections: number; readonly ms: { readonly p50: number; readonly p99: number; readonly max: number } };
}

/**
 * The `q`-quantile of ascending `sorted` values: the element at floor(q·n), clamped; 0 when empty.
 * The one rule every percentile here (cycle timing, the stream's send slices, the benches) uses.
 */
export function quantileOfSorted(sorted: ArrayLike<number>, q: number): number {
  const n = sorted.length;
  return n ? sorted[Math.min(n - 1, Math.floor(q * n))]! : 0;
}

/** Cycles a CycleTiming keeps by default (about 25 s at the NAO's 83 Hz): the most a health window covers. */
export const TIMING_RING_CYCLES = 2048;

export class CycleTiming {
  readonly #periods: Float64Array;
  readonly #execs: Float64Array;
  readonly #lateness: Float64Array;
  readonly #scratch: Float64Array;
  readonly #gcs: Float64Array;
  #n = 0;
  #gcN = 0;
  cycles = 0;
  lateCycles = 0;
  lateCyclesOwnWork = 0;
  missedCycles = 0;

  constructor(
    readonly nominalPeriodMs: number,
    capacity = TIMING_RING_CYCLES,
  ) {
    this.#periods = new Float64Array(capacity);
    this.#execs = new Float64Array(capacity);
    this.#lateness = new Float64Array(capacity);
    this.#scratch = new Float64Array(capacity);
    this.#gcs = new Float64Array(capacity);
  }

  /**
   * One cycle: its period, its execution time, how long after its deadline it started (ms),
   * whether that counted as late, and if so whether the loop's own work was still running then.
   */
  record(periodMs: number, execMs: number, latenessMs: number, late: boolean, ownWork = false): void {
    const i = this.#n % this.#periods.length;
    this.#periods[i] = periodMs;
    this.#execs[i] = execMs;
    this.#lateness[i] = Math.max(latenessMs, 0);
    this.#n++;
    this.cycles++;
    if (late) {
      this.lateCycles++;
      if (ownWork) this.lateCyclesOwnWork++;
    }
  }

  /** A scheduled young-generation collection took `ms` (perform side: never allocates). */
  recordGc(ms: number): void {
    this.#gcs[this.#gcN++ % this.#gcs.length] = ms;
  }

  reset(): void {
    this.#n = 0;
    this.#gcN = 0;
    this.cycles = 0;
    this.lateCycles = 0;
    this.lateCyclesOwnWork = 0;
    this.missedCycles = 0;
  }

  /**
   * Prepare side: the recorded periods (ms) since the last reset, oldest first, at most `capacity`
   * of them, as a new array (benchmarks pool several windows before taking percentiles).
   */
  periods(): Float64Array {
    const cap = this.#periods.length;
    const count = Math.min(this.#n, cap);
    const out = new Float64Array(count);
    const start = this.#n > cap ? this.#n % cap : 0;
    for (let i = 0; i < count; i++) out[i] = this.#periods[(start + i) % cap]!;
    return out;
  }

  /**
   * Prepare side: sorts a copy, allocates the summary object. The percentiles describe the last
   * `windowCycles` cycles (default and at most: all the ring holds), so a caller that counted the
   * cycles between two reads gets exactly that stretch's figures (the isolation bench's phases).
   */
  summary(windowCycles = Number.POSITIVE_INFINITY): TimingSummary {
    const cap = this.#periods.length;
    const count = Math.max(0, Math.min(this.#n, cap, Math.floor(windowCycles)));
    const first = this.#n - count; // the oldest cycle of the window
    const pct = (src: Float64Array, f: (v: number) => number) => {
      const s = this.#scratch.subarray(0, count);
      for (let i = 0; i < count; i++) s[i] = f(src[(first + i) % cap]!);
      s.sort();
      return { p50: quantileOfSorted(s, 0.5), p99: quantileOfSorted(s, 0.99), max: count ? s[count - 1]! : 0 };
    };
    const periodMs = pct(this.#periods, (v) => v);
    const execMs = pct(this.#execs, (v) => v);
    const latenessMs = pct(this.#lateness, (v) => v);
    const jitter = pct(this.#periods, (v) => Math.abs(v - this.nominalPeriodMs));
    const gcCount = Math.min(this.#gcN, this.#gcs.length);
    const gcSorted = this.#scratch.subarray(0, gcCount);
    gcSorted.set(this.#gcs.subarray(0, gcCount));
    gcSorted.sort();
    const gcMs = { p50: quantileOfSorted(gcSorted, 0.5), p99: quantileOfSorted(gcSorted, 0.99), max: gcCount ? gcSorted[gcCount - 1]! : 0 };
    return {
      cycles: this.cycles,
      lateCycles: this.lateCycles,
      lateCyclesOwnWork: this.lateCyclesOwnWork,
      missedCycles: this.missedCycles,
      windowCycles: count,
      periodMs,
      execMs,
      latenessMs,
      jitterP99Ms: jitter.p99,
      gc: { collections: this.#gcN, ms: gcMs },
    };
  }
}
