/**
 * Precise wake-ups without spinning. Node's timers have millisecond granularity and fire up to a
 * millisecond late, so `MonotonicClock` by default sleeps on a timer until ~1 ms before a deadline
 * and then spins on setImmediate: exact, but the spin costs CPU at the NAO's 83 Hz.
 *
 * Here a helper thread sleeps instead: `Atomics.wait` with a timeout is a futex wait, precise to
 * tens of microseconds, and at the deadline the thread posts one message to this thread, whose
 * event loop is asleep in epoll until then: less CPU, a slightly later wake-up. On the development
 * VM it made the jitter p99 worse (an idle vCPU is slow to wake), so it is opt-in:
 * `new MonotonicClock({ wake: "thread" })`. The figures are in docs/architecture.md ("Wake-up"),
 * where they are kept with the bench that measured them.
 *
 * One thread per process serves every clock: sleepers are kept here, sorted, and the thread only
 * ever sleeps until the earliest. It is unreferenced (it never keeps the process alive); the port
 * is referenced only while someone sleeps.
 *
 * Shared memory layout (Int32 indexes): [0] request generation (this thread bumps it and notifies
 * when the earliest deadline changes), [1] spare word the thread waits on with a timeout; Float64
 * at byte 8: the earliest deadline in ms since the Unix epoch (timeOrigin + now), or +∞.
 */
import { type MessagePort, MessageChannel, Worker } from "node:worker_threads";

// CommonJS source of the helper thread (eval'd: works the same from src/ through tsx and from dist/).
const THREAD_SOURCE = `
const { workerData } = require("node:worker_threads");
const { performance } = require("node:perf_hooks");
const { sab, port } = workerData;
const i32 = new Int32Array(sab, 0, 2);
const deadline = new Float64Array(sab, 8, 1);
let seen = 0;
for (;;) {
  // Asleep until a deadline is set, or until the earliest deadline passes or changes.
  seen = Atomics.load(i32, 0);
  const left = deadline[0] - (performance.timeOrigin + performance.now());
  if (left <= 0) {
    deadline[0] = Infinity;
    port.postMessage(0);
    continue;
  }
  Atomics.wait(i32, 0, seen, Number.isFinite(left) ? left : undefined);
}
`;

const SKEW_MS = 0.05;

interface Sleeper {
  readonly atMs: number;
  readonly resolve: () => void;
}

export class ThreadWaker {
  static #shared: ThreadWaker | null = null;

  /** The process's one waker (started on first use). */
  static shared(): ThreadWaker {
    ThreadWaker.#shared ??= new ThreadWaker();
    return ThreadWaker.#shared;
  }

  readonly #i32: Int32Array;
  readonly #deadline: Float64Array;
  readonly #port: MessagePort;
  // Sorted by atMs, earliest first; few entries (one per running loop).
  readonly #sleepers: Sleeper[] = [];
  #alive = true;

  /** False once the helper thread has stopped (an error, or terminated): use timers instead. */
  get alive(): boolean {
    return this.#alive;
  }

  private constructor() {
    const sab = new SharedArrayBuffer(16);
    this.#i32 = new Int32Array(sab, 0, 2);
    this.#deadline = new Float64Array(sab, 8, 1);
    this.#deadline[0] = Number.POSITIVE_INFINITY;
    const { port1, port2 } = new MessageChannel();
    // execArgv []: the thread needs none of the process's flags (--import tsx would load a
    // compiler into it; --input-type=module would make the source above ESM, without require).
    const worker = new Worker(THREAD_SOURCE, { eval: true, execArgv: [], workerData: { sab, port: port2 }, transferList: [port2] });
    worker.unref();
    // If the thread dies, nobody may sleep forever: wake everyone now (the clock finishes their
    // waits itself) and tell the clocks to go back to timers.
    const died = (why: string) => {
      if (!this.#alive) return;
      this.#alive = false;
      console.error(`bodylink: the wake-up thread stopped (${why}); clocks fall back to timers`);
      const due = this.#sleepers.splice(0);
      this.#port.unref();
      for (const d of due) d.resolve();
    };
    worker.on("error", (e) => died(String(e)));
    worker.on("exit", (code) => died(`exit ${code}`));
    this.#port = port1;
    this.#port.on("message", this.#onWake);
    this.#port.unref();
  }

  /**
   * Resolve at `atMs` (milliseconds since the Unix epoch, as timeOrigin + performance.now()), at
   * most 0.05 ms early by this thread's clock.
   */
  sleepUntil(atMs: number): Promise<void> {
    return new Promise((resolve) => {
      const s = this.#sleepers;
      let i = s.length;
      while (i > 0 && s[i - 1]!.atMs > atMs) i--;
      s.splice(i, 0, { atMs, resolve });
      if (s.length === 1) this.#port.ref();
      if (i === 0) this.#arm();
    });
  }

  /** Point the thread at the earliest deadline (or at none) and wake it to re-read. */
  #arm(): void {
    this.#deadline[0] = this.#sleepers.length ? this.#sleepers[0]!.atMs : Number.POSITIVE_INFINITY;
    Atomics.add(this.#i32, 0, 1);
    Atomics.notify(this.#i32, 0);
  }

  readonly #onWake = (): void => {
    // The two threads' epoch-based clocks can differ by microseconds: a sleeper that is due within
    // SKEW_MS counts as due (callers that need "at or after" finish the wait themselves; see clock.ts).
    const now = performance.timeOrigin + performance.now() + SKEW_MS;
    const s = this.#sleepers;
    let n = 0;
    while (n < s.length && s[n]!.atMs <= now) n++;
    const due = s.splice(0, n);
    if (s.length === 0) this.#port.unref();
    this.#arm();
    for (const d of due) d.resolve();
  };
}
