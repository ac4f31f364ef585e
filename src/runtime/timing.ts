/**
 * Cycle timing statistics in preallocated ring buffers (perform side: `record` never allocates).
 * Reports period and execution-time percentiles the way ros2_control records them per component.
 */

export interface TimingSummary {
  readonly cycles: number;
  readonly lateCycles: number;
  readonly periodMs: { readonly p50: number; readonly p99: number; readonly max: number };
  readonly execMs: { readonly p50: number; readonly p99: number; readonly max: number };
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

export class CycleTiming {
  readonly #periods: Float64Array;
  readonly #execs: Float64Array;
  readonly #scratch: Float64Array;
  readonly #gcs: Float64Array;
  #n = 0;
  #gcN = 0;
  cycles = 0;
  lateCycles = 0;

  constructor(
    readonly nominalPeriodMs: number,
    capacity = 2048,
  ) {
    this.#periods = new Float64Array(capacity);
    this.#execs = new Float64Array(capacity);
    this.#scratch = new Float64Array(capacity);
    this.#gcs = new Float64Array(capacity);
  }

  record(periodMs: number, execMs: number, late: boolean): void {
    const i = this.#n % this.#periods.length;
    this.#periods[i] = periodMs;
    this.#execs[i] = execMs;
    this.#n++;
    this.cycles++;
    if (late) this.lateCycles++;
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

  /** Prepare side: sorts a copy, allocates the summary object. */
  summary(): TimingSummary {
    const count = Math.min(this.#n, this.#periods.length);
    const pct = (src: Float64Array, f: (v: number) => number, n = count) => {
      const s = this.#scratch.subarray(0, n);
      for (let i = 0; i < n; i++) s[i] = f(src[i]!);
      s.sort();
      return { p50: quantileOfSorted(s, 0.5), p99: quantileOfSorted(s, 0.99), max: n ? s[n - 1]! : 0 };
    };
    const periodMs = pct(this.#periods, (v) => v);
    const execMs = pct(this.#execs, (v) => v);
    const jitter = pct(this.#periods, (v) => Math.abs(v - this.nominalPeriodMs));
    const gcMs = pct(this.#gcs, (v) => v, Math.min(this.#gcN, this.#gcs.length));
    return { cycles: this.cycles, lateCycles: this.lateCycles, periodMs, execMs, jitterP99Ms: jitter.p99, gc: { collections: this.#gcN, ms: gcMs } };
  }
}
