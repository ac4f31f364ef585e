/**
 * Lockstep time (`serve --lockstep`): a simulated clock that moves one cycle at a time, when the
 * client driving the robot has answered, so an unchanged LoLA binary runs as fast as the machine
 * allows and the same client gives the same run, bit for bit.
 *
 * Time stands still until `grant()`; each grant lets it run one period further (waking every
 * sleeper due by then, in deadline order, the cycle loop's among them). The LoLA server grants a
 * cycle when the controlling client connects and for every command it sends (it answers each
 * sensor message with one), so cycle N+1 runs only once the answer to cycle N is in. The robot
 * API's `POST /v1/sim/step` (any body) grants cycles too and answers once they have run (`step`).
 * Nothing else moves time: without a controlling client the world waits.
 *
 * Prepare side only (timers, promises); the cycle itself runs as on any clock.
 */
import type { Clock } from "./clock.js";

interface Sleeper {
  deadlineMs: number;
  resolve: () => void;
}

export class LockstepClock implements Clock {
  readonly realTime = false;
  readonly periodMs: number;
  /** [0] simulated now, ms; [1] granted cycles not yet run; [2] real time at the first grant, ms; [3] the end of the period being run, ms (NaN between). */
  readonly #f = Float64Array.of(0, 0, Number.NaN, Number.NaN);
  readonly #epochBaseMs: number;
  readonly #sleepers: Sleeper[] = [];
  readonly #realNowMs: () => number;
  /** `step()` callers waiting for simulated time to reach their target, ms. */
  readonly #steppers: Sleeper[] = [];
  #pumping = false;
  /** Cycles granted so far. */
  granted = 0;

  constructor(periodMs: number, opts: { epochBaseMs?: number; realNowMs?: () => number } = {}) {
    this.periodMs = periodMs;
    this.#epochBaseMs = opts.epochBaseMs ?? Date.UTC(2026, 0, 1);
    this.#realNowMs = opts.realNowMs ?? (() => performance.now());
  }

  nowMs(): number {
    return this.#f[0]!;
  }
  epochMs(): number {
    return this.#epochBaseMs + this.#f[0]!;
  }
  sleepUntil(deadlineMs: number): Promise<void> {
    if (deadlineMs <= this.#f[0]!) return Promise.resolve();
    return new Promise((resolve) => {
      const s = this.#sleepers;
      let i = s.length;
      while (i > 0 && s[i - 1]!.deadlineMs > deadlineMs) i--;
      s.splice(i, 0, { deadlineMs, resolve });
    });
  }

  /** Let simulated time run one more period (the controlling client answered). */
  grant(): void {
    this.granted++;
    if (Number.isNaN(this.#f[2]!)) this.#f[2] = this.#realNowMs();
    this.#f[1]! += 1;
    if (!this.#pumping) void this.#pump();
  }

  /**
   * Grant `cycles` more periods and resolve once they have run (every sleeper due by then woken
   * and its continuation run, the cycle loop's among them), with the simulated time then, ms.
   */
  step(cycles: number): Promise<number> {
    const runningTo = this.#f[3]!;
    const targetMs = (Number.isNaN(runningTo) ? this.#f[0]! : runningTo) + (this.#f[1]! + cycles) * this.periodMs;
    const done = new Promise<number>((resolve) => this.#steppers.push({ deadlineMs: targetMs, resolve: () => resolve(this.#f[0]!) }));
    for (let i = 0; i < cycles; i++) this.grant();
    return done;
  }

  /** Simulated over real time since the first grant (0 before it). */
  realTimeFactor(): number {
    const realMs = this.#realNowMs() - this.#f[2]!;
    return Number.isNaN(realMs) || realMs <= 0 ? 0 : this.#f[0]! / realMs;
  }

  async #pump(): Promise<void> {
    this.#pumping = true;
    try {
      while (this.#f[1]! > 0) {
        this.#f[1]! -= 1;
        const target = this.#f[0]! + this.periodMs;
        this.#f[3] = target;
        for (;;) {
          // Let every woken sleeper's continuation run (and sleep again) before looking.
          await new Promise<void>((r) => setImmediate(r));
          const next = this.#sleepers[0];
          if (!next || next.deadlineMs > target) break;
          this.#sleepers.shift();
          this.#f[0] = Math.max(this.#f[0]!, next.deadlineMs);
          next.resolve();
        }
        this.#f[0] = target;
        this.#f[3] = Number.NaN;
        const st = this.#steppers;
        for (let i = 0; i < st.length; ) {
          if (st[i]!.deadlineMs <= target) st.splice(i, 1)[0]!.resolve();
          else i++;
        }
      }
    } finally {
      this.#pumping = false;
    }
  }
}
