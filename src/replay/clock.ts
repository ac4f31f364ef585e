/**
 * A clock that runs `speed` times faster than the wall clock (replay --speed): the runtime's
 * 12 ms cycle then plays a recorded cycle every 12/speed ms of real time.
 */
import { type Clock, MonotonicClock } from "../runtime/clock.js";

export class ScaledClock implements Clock {
  readonly realTime = true;
  readonly speed: number;
  readonly #inner: Clock;
  readonly #t0: number;
  readonly #epoch0: number;

  constructor(speed: number, inner: Clock = new MonotonicClock()) {
    if (!(speed > 0 && Number.isFinite(speed))) throw new RangeError(`speed must be a positive number, got ${speed}`);
    this.speed = speed;
    this.#inner = inner;
    this.#t0 = inner.nowMs();
    this.#epoch0 = inner.epochMs();
  }
  nowMs(): number {
    return this.#t0 + (this.#inner.nowMs() - this.#t0) * this.speed;
  }
  epochMs(): number {
    return this.#epoch0 + (this.nowMs() - this.#t0);
  }
  sleepUntil(deadlineMs: number): Promise<void> {
    return this.#inner.sleepUntil(this.#t0 + (deadlineMs - this.#t0) / this.speed);
  }
}
