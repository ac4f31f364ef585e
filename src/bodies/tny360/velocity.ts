/**
 * bodylink's velocity keep-alive, which the firmware lacks (tny360.md §9, §12 #12): a body
 * velocity that is not renewed within `timeoutMs` (default 500 ms) decays linearly to zero over
 * `decayMs` (default 250 ms). The simulator applies it every control tick; the real-robot driver
 * applies it on its side and forwards the decayed values. Allocation-free.
 */

export interface VelocityKeepAliveOptions {
  /** A velocity not renewed for this long starts to decay. Defaults to 500 ms. */
  timeoutMs?: number;
  /** Time the decay takes from the commanded value to zero. Defaults to 250 ms. */
  decayMs?: number;
}

export const DEFAULT_VELOCITY_TIMEOUT_MS = 500;
export const DEFAULT_VELOCITY_DECAY_MS = 250;

export class VelocityKeepAlive {
  readonly timeoutMs: number;
  readonly decayMs: number;
  /** The last command [x m/s, y m/s, yaw rad/s]. */
  readonly commanded = new Float64Array(3);
  /** What applies now (the command, or its decay). */
  readonly current = new Float64Array(3);
  #lastCommandMs = Number.NEGATIVE_INFINITY;
  #decaying = false;

  constructor(opts: VelocityKeepAliveOptions = {}) {
    this.timeoutMs = positive(opts.timeoutMs, DEFAULT_VELOCITY_TIMEOUT_MS);
    this.decayMs = Math.max(0, opts.decayMs ?? DEFAULT_VELOCITY_DECAY_MS);
  }

  /** True between the timeout and the end of the decay. */
  get decaying(): boolean {
    return this.#decaying;
  }

  /** A new (or renewed) command at `nowMs`. */
  command(x: number, y: number, yaw: number, nowMs: number): void {
    const c = this.commanded;
    const cur = this.current;
    c[0] = cur[0] = x;
    c[1] = cur[1] = y;
    c[2] = cur[2] = yaw;
    this.#lastCommandMs = nowMs;
    this.#decaying = false;
  }

  /** Zero at once (connection closed, lease lost, emergency stop, reboot). */
  clear(): void {
    this.commanded.fill(0);
    this.current.fill(0);
    this.#decaying = false;
  }

  /** Apply the timeout at `nowMs`; returns true when `current` changed. */
  update(nowMs: number): boolean {
    const c = this.commanded;
    if (c[0] === 0 && c[1] === 0 && c[2] === 0) return false;
    const late = nowMs - this.#lastCommandMs - this.timeoutMs;
    if (late <= 0) return false;
    const k = this.decayMs > 0 ? Math.max(0, 1 - late / this.decayMs) : 0;
    this.#decaying = k > 0;
    for (let i = 0; i < 3; i++) this.current[i] = c[i]! * k;
    if (k === 0) this.commanded.fill(0); // decayed: the command is gone, not paused
    return true;
  }
}

function positive(v: number | undefined, fallback: number): number {
  return v !== undefined && Number.isFinite(v) && v > 0 ? v : fallback;
}
