/**
 * One phase of `npm run bench -- wake`, inside a worker thread as the NAO's real-time core runs:
 * a NaoRobot (simulated chest board, 12 ms cycle, scheduled collections every 100 ms as serve sets
 * them) paced by a MonotonicClock in the given wake mode, or no loop at all ("idle": the baseline).
 * Measured here, on this thread: the cycles' lateness after their deadlines, this thread's CPU
 * time, and how long a message from the main thread (the host's request path; LoLA socket reads
 * wait the same way) waited before this thread's event loop ran its handler.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { getPriority, setPriority } from "node:os";
import { performance } from "node:perf_hooks";
import { type MessagePort, parentPort, workerData } from "node:worker_threads";
import { MonotonicClock, type WakeMode } from "../src/runtime/clock.js";
import { NaoRobot } from "../src/runtime/nao-robot.js";
import { threadCpuMs } from "../src/runtime/thread-stats.js";
import { quantileOfSorted } from "../src/runtime/timing.js";

export interface WakePhaseResult {
  cycles: number;
  lateCycles: number;
  latenessMs: { p50: number; p99: number; max: number };
  jitterP99Ms: number;
  threadCpuPct: number | null;
  processCpuPct: number;
  messageDelayMs: { p50: number; p99: number; max: number; n: number };
  /** The thread's priority ("nice -10", "SCHED_FIFO 20"), or null when it could not be raised. */
  nice: string | null;
}

const { mode, spinMs, phaseMs, warmupMs, pings, priority } = workerData as {
  mode: WakeMode | "idle";
  spinMs: number;
  phaseMs: number;
  warmupMs: number;
  pings: MessagePort;
  priority: "nice" | "fifo";
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const delays = new Float64Array(1 << 16);
let nDelays = 0;
let measuring = false;
pings.on("message", (sentAtMs: number) => {
  if (measuring && nDelays < delays.length) delays[nDelays++] = performance.timeOrigin + performance.now() - sentAtMs;
});

// As a real core's thread asks: nice −10 for this thread where allowed, or (priority "fifo")
// SCHED_FIFO 20 as a robot's HAL runs (chrt on this thread's id; needs root or CAP_SYS_NICE).
let nice: string | null = null;
try {
  setPriority(0, -10);
  nice = `nice ${getPriority(0)}`;
} catch {
  // unprivileged: the thread keeps the default priority (the bench prints which)
}
if (priority === "fifo") {
  try {
    const tid = readFileSync("/proc/thread-self/stat", "latin1").split(" ", 1)[0]!;
    execFileSync("chrt", ["-f", "-p", "20", tid], { stdio: "ignore" });
    nice = "SCHED_FIFO 20";
  } catch {
    nice = null;
  }
}
const robot = mode === "idle" ? null : await NaoRobot.create({ clock: new MonotonicClock({ wake: mode, spinMs }), seed: 1, youngGcEveryMs: 100 });
if (robot) await robot.start();
await sleep(warmupMs);
const c0 = robot?.loop.seq ?? 0;
const late0 = robot?.loop.timing.lateCycles ?? 0;
const cpu0 = threadCpuMs();
const proc0 = process.cpuUsage();
const t0 = performance.now();
measuring = true;
await sleep(phaseMs);
measuring = false;
const wallMs = performance.now() - t0;
const cpu1 = threadCpuMs();
const proc = process.cpuUsage(proc0);
const s = robot?.loop.summary(robot.loop.seq - c0);
await robot?.shutdown();
const sorted = delays.slice(0, nDelays).sort();
const result: WakePhaseResult = {
  cycles: s?.windowCycles ?? 0,
  lateCycles: s ? s.lateCycles - late0 : 0,
  latenessMs: s?.latenessMs ?? { p50: 0, p99: 0, max: 0 },
  jitterP99Ms: s?.jitterP99Ms ?? 0,
  threadCpuPct: cpu0 === null || cpu1 === null ? null : (100 * (cpu1 - cpu0)) / wallMs,
  processCpuPct: (100 * (proc.user + proc.system)) / 1000 / wallMs,
  nice,
  messageDelayMs: { p50: quantileOfSorted(sorted, 0.5), p99: quantileOfSorted(sorted, 0.99), max: nDelays ? sorted[nDelays - 1]! : 0, n: nDelays },
};
parentPort!.postMessage(result);
pings.close();
