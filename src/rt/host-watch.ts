/**
 * The core's watchdog on its host (Spot's e-stop endpoint timeout applied to our
 * own serving side): the host bumps CTL.hostBeat from a timer on its event loop (CoreHost), so the
 * beat stands still exactly when the main thread cannot act — an HTTP e-stop, a signal, a fleet
 * stop would all wait. When it has stood still for longer than CTL.hostTimeoutMs, `check` says so
 * once and the core latches a category-1 stop itself (src/rt/core-worker.ts): if the stop button
 * cannot be reached, stop. A beat seen again re-arms it; the latch holds until a reset, which only
 * a responsive host can send.
 *
 * What counts as the host's silence:
 * - the core's own running time between checks (one per cycle); a gap between two checks longer
 *   than PAUSE_GAP_MS is not counted: the core's thread did not run either (the whole process
 *   stopped by SIGSTOP, the VM descheduled, the core itself stalled), so the host had no chance;
 * - minus the time the main thread spent waiting for a CPU meanwhile (Linux schedstat's run-queue
 *   wait, `mainThreadWaitMs`): on an overloaded machine a main thread that gets 10 % of a CPU
 *   takes a second of wall time for 100 ms of legal work, and the core (which the scheduler
 *   favours) must not read that as a wedge. A main thread that is busy (a busy loop) or blocked (a
 *   deadlock) does not wait for a CPU, so its silence counts in full. Starved past
 *   STARVED_LIMIT_BOUNDS times the bound, it trips anyway: a stop button that far away is not one.
 * The run-queue wait is read only once the silence passed a quarter of the bound (never while the
 * host beats: steady state reads nothing and allocates nothing), then at most every
 * WAIT_REREAD_MS. Perform side: one Atomics load per check.
 */
import { closeSync, openSync, readSync } from "node:fs";
import { CTL } from "./core-shm.js";

export { DEFAULT_HOST_TIMEOUT_MS, HOST_TIMEOUT_RANGE_MS, hostBeatEveryMs, STARTUP_HOST_TIMEOUT_MS } from "./core-shm.js";

/** A gap between two checks longer than this: the core's own thread did not run (not counted as the host's silence), ms. */
export const PAUSE_GAP_MS = 100;
/** A main thread starved of CPU for this many bounds trips the watch however little of it was its own silence. */
export const STARVED_LIMIT_BOUNDS = 5;
/** While silent past the bound but starved, the run-queue wait is read again at most this often (core time), ms. */
export const WAIT_REREAD_MS = 50;

/** The main thread's run-queue wait so far, ms (NaN: unknown). */
export type WaitClock = () => number;

export class HostWatch {
  readonly #ctl: Int32Array;
  readonly #waited: WaitClock;
  #beat = 0;
  #lastMs = Number.NaN;
  #silentMs = 0;
  /** The main thread's run-queue wait when the silence passed a quarter of the bound (NaN: not read yet). */
  #waitFromMs = Number.NaN;
  #starvedMs = 0;
  /** Silence at which the wait is read again. */
  #rereadAtMs = 0;
  #tripped = false;

  constructor(ctl: Int32Array, waited: WaitClock = () => Number.NaN) {
    this.#ctl = ctl;
    this.#waited = waited;
    this.#beat = Atomics.load(ctl, CTL.hostBeat);
  }

  /** How long the heartbeat has stood still, in the core's running time, ms. */
  get silentMs(): number {
    return this.#silentMs;
  }

  /** Of that, how long the main thread waited for a CPU (as far as it was read), ms. */
  get starvedMs(): number {
    return this.#starvedMs;
  }

  /** The bound in force, ms (0: not watched). */
  get timeoutMs(): number {
    return Atomics.load(this.#ctl, CTL.hostTimeoutMs);
  }

  /** Perform side, once per cycle: true once when the host has been silent past its bound (re-armed by its next beat). */
  check(nowMs: number): boolean {
    const dt = nowMs - this.#lastMs;
    this.#lastMs = nowMs;
    const beat = Atomics.load(this.#ctl, CTL.hostBeat);
    if (beat !== this.#beat) {
      this.#beat = beat;
      this.#silentMs = 0;
      this.#starvedMs = 0;
      this.#waitFromMs = Number.NaN;
      this.#tripped = false;
      return false;
    }
    if (dt > 0 && dt <= PAUSE_GAP_MS) this.#silentMs += dt;
    const bound = Atomics.load(this.#ctl, CTL.hostTimeoutMs);
    if (this.#tripped || bound <= 0) return false;
    const silent = this.#silentMs;
    if (silent > bound / 4 && Number.isNaN(this.#waitFromMs)) {
      this.#waitFromMs = this.#waited();
      this.#rereadAtMs = bound;
    }
    if (silent <= bound) return false;
    if (silent <= STARVED_LIMIT_BOUNDS * bound) {
      // Starved enough as last read: read again only every WAIT_REREAD_MS; and always before tripping.
      if (silent - this.#starvedMs <= bound && silent < this.#rereadAtMs) return false;
      const waited = this.#waited() - this.#waitFromMs;
      if (waited > 0) this.#starvedMs = waited;
      this.#rereadAtMs = silent + WAIT_REREAD_MS;
      if (silent - this.#starvedMs <= bound) return false;
    }
    this.#tripped = true;
    return true;
  }
}

/**
 * The main thread's run-queue wait from /proc/self/task/PID/schedstat (Linux: the process's main
 * thread has the process's id), read into a preallocated buffer with one pread; NaN where there is
 * none (another OS, a kernel without it). Opened once, on the prepare side.
 */
export function mainThreadWaitClock(): { waited: WaitClock; close(): void } {
  let fd = -1;
  try {
    fd = openSync(`/proc/self/task/${process.pid}/schedstat`, "r");
  } catch {
    return { waited: () => Number.NaN, close: () => {} };
  }
  const buf = Buffer.alloc(96);
  const waited = (): number => {
    let n = 0;
    try {
      n = readSync(fd, buf, 0, buf.length, 0);
    } catch {
      return Number.NaN;
    }
    // "<on-cpu ns> <run-queue wait ns> <timeslices>\n": the second field, digit by digit (no string).
    let i = 0;
    while (i < n && buf[i] !== 0x20) i++; // skip the first field
    i++;
    let ns = 0;
    let digits = 0;
    for (; i < n; i++) {
      const c = buf[i]! - 0x30;
      if (c < 0 || c > 9) break;
      ns = ns * 10 + c;
      digits++;
    }
    return digits > 0 ? ns / 1e6 : Number.NaN;
  };
  return {
    waited,
    close: () => {
      try {
        closeSync(fd);
      } catch {
        // already closed
      }
    },
  };
}

/** The latch's reason, for `silentMs` of silence (`starvedMs` of it waiting for a CPU) against `boundMs` (made once, when it trips). */
export function hostUnresponsiveReason(silentMs: number, starvedMs: number, boundMs: number): string {
  const starved = starvedMs > 0 ? `, ${Math.round(starvedMs)} ms of it waiting for a CPU` : "";
  return `host unresponsive: the main thread has not beaten for ${Math.round(silentMs)} ms (bound ${boundMs} ms${starved}); reset once it answers again`;
}
