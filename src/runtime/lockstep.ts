/**
 * Lockstep time (`serve --lockstep`): a simulated clock that moves one cycle at a time, when the
 * client driving the robot has answered, so an unchanged LoLA binary runs as fast as the machine
 * allows and the same client gives the same run, bit for bit.
 *
 * Time stands still until `grant()`; each grant lets it run one period further (waking every
 * sleeper due by then, in deadline order, the cycle loop's among them). The LoLA server grants a
 * cycle when the controlling client connects and for every command it sends (it answers each
 * sensor message with one), so cycle N+1 runs only once the answer to cycle N is in. Nothing else
 * moves time: without a controlling client the world waits.
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
  /** [0] simulated now, ms; [1] granted cycles not yet run; [2] real time at the first grant, ms. */
  readonly #f = Float64Array.of(0, 0, Number.NaN);
  readonly #epochBaseMs: number;
  readonly #sleepers: Sleeper[] = [];
  readonly #realNowMs: () => number;
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
      }
    } finally {
      this.#pumping = false;
    }
  }
}
