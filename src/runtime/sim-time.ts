/**
 * A simulated body's time against the wall: what `/v1/health` reports as `sim` (simulated time,
 * the real-time factor, which clock drives it) and the NAO's physics world streams as
 * `sim.real_time_factor`.
 *
 * The real-time factor is simulated seconds per real second over the last `windowMs` of real
 * time: about 1 on a real-time clock (less when the simulator drops time after a stall), the
 * machine's speed under lockstep, and 0 when simulated time stood still for the whole window
 * (lockstep with nobody stepping). A reset of the simulated world (its time back to 0) restarts
 * the window.
 *
 * `sample()` runs on the perform side, once per cycle: it writes two numbers into a ring and
 * allocates nothing. `realTimeFactor()` is for the prepare side (health) and the cycle alike.
 */

/** How the simulated body's time is driven: the wall clock, or lockstep (docs/simulation.md). */
export type SimClockKind = "real-time" | "lockstep";

/** `RobotHealth.sim`: a simulated body's time (null on a real body). */
export interface SimHealth {
  /** What drives simulated time. */
  readonly clock: SimClockKind;
  /** The body under the simulator: the NAO's "physics" or "kinematic"; the P7's and TNY-360's "kinematic". */
  readonly model: string;
  /** Simulated time since the simulator started or was last reset, s. */
  readonly timeS: number;
  /** Simulated seconds per real second over the last second (see the module comment). */
  readonly realTimeFactor: number;
}

const SLOTS = 256;

export class SimTimeMeter {
  /** Per slot: real ms, simulated s. */
  readonly #ring = new Float64Array(2 * SLOTS);
  /** [0] samples written (total), [1] the window, ms. */
  readonly #f = new Float64Array(2);
  readonly #realNowMs: () => number;

  constructor(opts: { windowMs?: number; realNowMs?: () => number } = {}) {
    this.#f[1] = opts.windowMs ?? 1000;
    this.#realNowMs = opts.realNowMs ?? (() => performance.now());
  }

  /** Simulated time of the newest sample, s (0 before the first). */
  get timeS(): number {
    const n = this.#f[0]!;
    return n === 0 ? 0 : this.#ring[2 * ((n - 1) % SLOTS) + 1]!;
  }

  /** Record the simulator's time now (perform side, allocation-free). */
  sample(simTimeS: number): void {
    const n = this.#f[0]!;
    if (n > 0 && simTimeS < this.#ring[2 * ((n - 1) % SLOTS) + 1]!) this.#f[0] = 0; // reset: a new window
    const at = 2 * (this.#f[0]! % SLOTS);
    this.#ring[at] = this.#realNowMs();
    this.#ring[at + 1] = simTimeS;
    this.#f[0]! += 1;
  }

  /**
   * Simulated over real time from the oldest sample inside the window to now (0 when none is in
   * it, or only one sample and no real time passed).
   */
  realTimeFactor(): number {
    const n = this.#f[0]!;
    if (n === 0) return 0;
    const nowMs = this.#realNowMs();
    const from = nowMs - this.#f[1]!;
    const newest = 2 * ((n - 1) % SLOTS);
    if (this.#ring[newest]! < from) return 0;
    // The oldest sample still in the ring and in the window (real times only grow: bisect).
    let lo = Math.max(0, n - SLOTS);
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.#ring[2 * (mid % SLOTS)]! < from) lo = mid + 1;
      else hi = mid;
    }
    const oldest = 2 * (lo % SLOTS);
    const realMs = nowMs - this.#ring[oldest]!;
    return realMs > 0 ? ((this.#ring[newest + 1]! - this.#ring[oldest + 1]!) * 1000) / realMs : 0;
  }

  /** The health figure for a simulator of `model` on a clock of `clock`'s kind. */
  health(clock: { readonly realTime?: boolean }, model: string): SimHealth {
    return { clock: clock.realTime === true ? "real-time" : "lockstep", model, timeS: this.timeS, realTimeFactor: this.realTimeFactor() };
  }
}
