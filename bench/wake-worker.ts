/**
 * One phase of `npm run bench -- wake`, inside a worker thread as a real-time core runs, at the
 * priority a core asks for (SCHED_FIFO 20, or nice −10). What runs on this thread (`load`):
 *   futex  no event loop: a synchronous Atomics.wait per 12 ms (the floor of one wake-up per cycle)
 *   bare   a CycleLoop with an empty cycle, paced by the clock (+ the event loop's turn per wake-up)
 *   socket a bare CycleLoop whose cycle writes 896 bytes (a LoLA sensor message's size) to a Unix
 *          socket whose peer, on the main thread, answers each with 1 KB: the floor of LoLA's I/O
 *   robot  a NaoRobot on the simulated chest board (12 ms, scheduled collections every 100 ms as
 *          serve sets them), its state published under the seqlock after every cycle with the main
 *          thread following it (Atomics.waitAsync), as a threaded core and its host do
 *   lola   robot + the LoLA server on this thread, with a controller on the main thread answering
 *          every frame at stiffness 1.0 (as `serve`'s core with a LoLA client)
 *   idle   nothing (the process's baseline)
 * Measured here, on this thread: the cycles' lateness after their deadlines, this thread's CPU
 * time and its timeslices (/proc/thread-self/schedstat: run ns, and how often it was scheduled
 * in = its wake-ups), the simulated chest board's own time (on a robot that is another processor),
 * the final spin's time (spinUntil; "spin" mode yields on setImmediate instead and shows none),
 * and how long a message from the main thread (the host's request path: posted, then the wake
 * word bumped, as CoreLink does) waited before this thread's event loop ran its handler.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { getPriority, setPriority, tmpdir } from "node:os";
import { createServer, type Socket } from "node:net";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { type MessagePort, parentPort, workerData } from "node:worker_threads";
import { ChestboardDriver, simulatedChestboard } from "../src/drivers/nao/chestboard.js";
import { MonotonicClock, spunMs, type WakeMode } from "../src/runtime/clock.js";
import { CycleLoop } from "../src/runtime/loop.js";
import { NaoRobot } from "../src/runtime/nao-robot.js";
import { quantileOfSorted } from "../src/runtime/timing.js";
import { startLolaServer } from "../src/serve/lola/server.js";
import { NaoStateChannel } from "../src/shm/nao-state.js";
import type { ChestboardTransport, TransferDone } from "../src/transport/chestboard.js";

export type WakeLoad = "idle" | "futex" | "bare" | "socket" | "robot" | "lola";

export interface WakePhaseResult {
  cycles: number;
  lateCycles: number;
  latenessMs: { p50: number; p99: number; max: number };
  jitterP99Ms: number;
  /** This thread's CPU time, % of one CPU, and µs per cycle; null where the OS does not say. */
  threadCpuPct: number | null;
  cpuUsPerCycle: number | null;
  /** Timeslices of this thread per cycle (how often it was scheduled in: its wake-ups). */
  slicesPerCycle: number | null;
  /** The simulated chest board's own work on this thread, µs per cycle (0 without a robot). */
  simUsPerCycle: number;
  /** The final spin of the blocking wake-ups (spinUntil), µs per cycle. */
  spinUsPerCycle: number;
  processCpuPct: number;
  messageDelayMs: { p50: number; p99: number; max: number; n: number };
  /** Frames the LoLA controller answered (load "lola"). */
  lolaFrames: number;
  /** The thread's priority ("nice -10", "SCHED_FIFO 20"), or null when it could not be raised. */
  nice: string | null;
}

export interface WakePhaseConfig {
  wake: WakeMode;
  spinMs: number | "auto";
  /** Whether the clock wakes early on the word the main thread bumps after each ping (CoreLink's way). */
  interrupt: boolean;
  load: WakeLoad;
  phaseMs: number;
  warmupMs: number;
  priority: "nice" | "fifo";
  /** [0] the wake word the main thread bumps; [1] the state seqlock the main thread follows. */
  words: Int32Array;
  stateBuffer: SharedArrayBuffer;
  pings: MessagePort;
}

const cfg = workerData as WakePhaseConfig;
const PERIOD_MS = 12;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const delays = new Float64Array(1 << 16);
let nDelays = 0;
let measuring = false;
cfg.pings.on("message", (sentAtMs: number) => {
  if (measuring && nDelays < delays.length) delays[nDelays++] = performance.timeOrigin + performance.now() - sentAtMs;
});

/** [run ns, timeslices] of this thread, or null. */
function schedstat(): [number, number] | null {
  try {
    const f = readFileSync("/proc/thread-self/schedstat", "latin1").split(" ");
    return [Number(f[0]), Number(f[2])];
  } catch {
    return null;
  }
}

/** The simulator's own time: from each call until it calls back (it does, synchronously, when its work is done). */
class TimedTransport implements ChestboardTransport {
  readonly name: string;
  readonly spentMs = new Float64Array(1);
  #t0 = 0;
  #done: TransferDone = () => {};
  readonly #after = (r: number): void => {
    this.spentMs[0]! += performance.now() - this.#t0;
    this.#done(r);
  };
  constructor(readonly inner: ChestboardTransport) {
    this.name = inner.name;
  }
  bulkOut(data: Uint8Array, length: number, timeoutMs: number, done: TransferDone): void {
    this.#done = done;
    this.#t0 = performance.now();
    this.inner.bulkOut(data, length, timeoutMs, this.#after);
  }
  vendorIn(request: number, into: Uint8Array, length: number, done: TransferDone): void {
    this.#done = done;
    this.#t0 = performance.now();
    this.inner.vendorIn(request, into, length, this.#after);
  }
  bulkIn(into: Uint8Array, timeoutMs: number, done: TransferDone): void {
    this.#done = done;
    this.#t0 = performance.now();
    this.inner.bulkIn(into, timeoutMs, this.#after);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

// As a real core's thread asks: nice −10 for this thread where allowed, or (priority "fifo")
// SCHED_FIFO 20 as a robot's HAL runs (chrt on this thread's id; needs root or CAP_SYS_NICE).
let nice: string | null = null;
try {
  setPriority(0, -10);
  nice = `nice ${getPriority(0)}`;
} catch {
  // unprivileged: the thread keeps the default priority (the bench prints which)
}
if (cfg.priority === "fifo") {
  try {
    const tid = readFileSync("/proc/thread-self/stat", "latin1").split(" ", 1)[0]!;
    execFileSync("chrt", ["-f", "-p", "20", tid], { stdio: "ignore" });
    nice = "SCHED_FIFO 20";
  } catch {
    nice = null;
  }
}

const clock = new MonotonicClock({ wake: cfg.wake, spinMs: cfg.spinMs, ...(cfg.interrupt ? { interrupt: { words: cfg.words, index: 0 } } : {}) });
let sim: TimedTransport | null = null;
let robot: NaoRobot | null = null;
let loop: CycleLoop | null = null;
let closeLola: (() => Promise<void>) | null = null;
let lolaDir: string | null = null;
let closeSocket: (() => void) | null = null;
if (cfg.load === "bare") {
  loop = new CycleLoop({ periodMs: PERIOD_MS, cycle: () => {} }, clock);
  loop.start();
} else if (cfg.load === "socket") {
  lolaDir = mkdtempSync(join(tmpdir(), "bodylink-wake-"));
  const path = join(lolaDir, "floor");
  let peer: Socket | null = null;
  const server = createServer((c) => {
    peer = c;
    c.on("data", () => {}); // read and dropped, as a server reads its client's answer
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  const frame = Buffer.alloc(896, 1);
  loop = new CycleLoop({ periodMs: PERIOD_MS, cycle: () => void peer?.write(frame) }, clock);
  loop.start();
  closeSocket = () => {
    (peer as Socket | null)?.destroy();
    server.close();
  };
  parentPort!.postMessage({ type: "socket", path });
} else if (cfg.load === "robot" || cfg.load === "lola") {
  const t = new TimedTransport(simulatedChestboard({ seed: 1, clock }));
  sim = t;
  const r = await NaoRobot.create({ clock, driver: new ChestboardDriver({ transport: t }), youngGcEveryMs: 100 });
  robot = r;
  loop = r.loop;
  await r.start();
  if (cfg.load === "lola") {
    lolaDir = mkdtempSync(join(tmpdir(), "bodylink-wake-"));
    const lola = await startLolaServer(r, { path: join(lolaDir, "robocup"), log: () => {} });
    closeLola = () => lola.close();
  }
  // After the LoLA server's listener, as runCore registers it: the state for the host.
  const channel = new NaoStateChannel(cfg.stateBuffer, 0, cfg.words, 1);
  r.onCycle(() => channel.publish(r.state));
  if (lolaDir) parentPort!.postMessage({ type: "lola", path: join(lolaDir, "robocup") });
}

let futexCycles = 0;
const lateness = new Float64Array(1 << 16);
/** load "futex": the thread does nothing but sleep in Atomics.wait until each deadline, synchronously. */
function futexLoop(ms: number): void {
  const cell = new Int32Array(new SharedArrayBuffer(4));
  const end = performance.now() + ms;
  let d = performance.now() + PERIOD_MS;
  while (d < end) {
    const left = d - performance.now();
    if (left > 0) Atomics.wait(cell, 0, 0, left);
    if (measuring && futexCycles < lateness.length) lateness[futexCycles++] = performance.now() - d;
    d += PERIOD_MS;
  }
}

if (cfg.load === "futex") futexLoop(cfg.warmupMs);
else await sleep(cfg.warmupMs);
const c0 = loop?.seq ?? 0;
const late0 = loop?.timing.lateCycles ?? 0;
const sim0 = sim?.spentMs[0] ?? 0;
const spun0 = spunMs();
const ss0 = schedstat();
const proc0 = process.cpuUsage();
const t0 = performance.now();
measuring = true;
if (cfg.load === "futex") futexLoop(cfg.phaseMs);
else await sleep(cfg.phaseMs);
measuring = false;
const wallMs = performance.now() - t0;
const ss1 = schedstat();
const proc = process.cpuUsage(proc0);
const simMs = (sim?.spentMs[0] ?? 0) - sim0;
const spinMs = spunMs() - spun0;
const s = loop?.summary(loop.seq - c0);
if (robot) await robot.shutdown();
else await loop?.stop();
closeSocket?.();
await closeLola?.();
if (lolaDir) rmSync(lolaDir, { recursive: true, force: true });

const cycles = cfg.load === "futex" ? futexCycles : (s?.windowCycles ?? 0);
const futexSorted = lateness.slice(0, futexCycles).sort();
const sorted = delays.slice(0, nDelays).sort();
const result: WakePhaseResult = {
  cycles,
  lateCycles: s ? s.lateCycles - late0 : 0,
  latenessMs:
    cfg.load === "futex"
      ? { p50: quantileOfSorted(futexSorted, 0.5), p99: quantileOfSorted(futexSorted, 0.99), max: futexCycles ? futexSorted[futexCycles - 1]! : 0 }
      : (s?.latenessMs ?? { p50: 0, p99: 0, max: 0 }),
  jitterP99Ms: s?.jitterP99Ms ?? 0,
  threadCpuPct: ss0 && ss1 ? (100 * (ss1[0] - ss0[0])) / 1e6 / wallMs : null,
  // per cycle of the wall time (a cycle every 12 ms), so an idle thread's figures compare too
  cpuUsPerCycle: ss0 && ss1 ? (ss1[0] - ss0[0]) / 1e3 / (wallMs / PERIOD_MS) : null,
  slicesPerCycle: ss0 && ss1 ? (ss1[1] - ss0[1]) / (wallMs / PERIOD_MS) : null,
  simUsPerCycle: (1000 * simMs) / (wallMs / PERIOD_MS),
  spinUsPerCycle: (1000 * spinMs) / (wallMs / PERIOD_MS),
  processCpuPct: (100 * (proc.user + proc.system)) / 1000 / wallMs,
  nice,
  lolaFrames: 0,
  messageDelayMs: { p50: quantileOfSorted(sorted, 0.5), p99: quantileOfSorted(sorted, 0.99), max: nDelays ? sorted[nDelays - 1]! : 0, n: nDelays },
};
parentPort!.postMessage({ type: "result", result });
cfg.pings.close();
