// Child process for test/rt/isolation.test.ts: what the machine itself does to a real-time thread.
// One thread per CPU, each pinned to its CPU (taskset) at SCHED_FIFO 20 (chrt), as the core's thread
// runs, waking every PERIOD_MS from a futex wait (Atomics.wait), as the core's does. None of the
// test's loads reach this process: a wake-up more than STALL_MS late is the machine's (the
// hypervisor stealing the vCPU, an interrupt storm), and a stall long enough to make the core
// 6 ms late makes the thread pinned to that CPU at least 6 - PERIOD_MS = STALL_MS late.
//
// stdin "start\n" zeroes the counts; "report\n" prints one JSON line:
// { fifo, cpus, stalls, longStalls, maxLateMs } (fifo false: chrt or taskset refused, the counts say nothing).
import { execFileSync } from "node:child_process";
import { readlinkSync } from "node:fs";
import { availableParallelism } from "node:os";
import { Worker, isMainThread, workerData } from "node:worker_threads";

const PERIOD_MS = 2;
const STALL_MS = 4;
// A stall that makes a core at least 24 ms late (the NAO's safety ramp) makes the pinned thread at least 24 - PERIOD_MS late.
const LONG_STALL_MS = 22;
const SLOTS = 4;

if (isMainThread) {
  const cpus = availableParallelism();
  // per CPU: [0] stalls, [1] max lateness ms, [2] 1 when pinned and FIFO, [3] long stalls
  const shared = new Float64Array(new SharedArrayBuffer(8 * SLOTS * cpus));
  const gen = new Int32Array(new SharedArrayBuffer(4));
  const workers = [];
  for (let cpu = 0; cpu < cpus; cpu++) workers.push(new Worker(new URL(import.meta.url), { workerData: { cpu, shared: shared.buffer, gen: gen.buffer } }));
  let buf = "";
  process.stdin.on("data", (d) => {
    buf += String(d);
    for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
      const line = buf.slice(0, i).trim();
      buf = buf.slice(i + 1);
      if (line === "start") {
        Atomics.add(gen, 0, 1);
        process.stdout.write("started\n");
      } else if (line === "report") {
        let stalls = 0;
        let longStalls = 0;
        let maxLateMs = 0;
        let fifo = true;
        for (let c = 0; c < cpus; c++) {
          stalls += shared[c * SLOTS];
          longStalls += shared[c * SLOTS + 3];
          maxLateMs = Math.max(maxLateMs, shared[c * SLOTS + 1]);
          fifo &&= shared[c * SLOTS + 2] === 1;
        }
        process.stdout.write(`${JSON.stringify({ fifo, cpus, stalls, longStalls, maxLateMs: Math.round(maxLateMs * 100) / 100 })}\n`);
      }
    }
  });
  process.stdin.on("end", () => process.exit(0));
  process.stdout.write("ready\n");
} else {
  const { cpu } = workerData;
  const s = new Float64Array(workerData.shared, cpu * SLOTS * 8, SLOTS);
  const gen = new Int32Array(workerData.gen);
  try {
    const tid = readlinkSync("/proc/thread-self").split("/").pop();
    execFileSync("taskset", ["-p", "-c", String(cpu), tid], { stdio: "ignore", timeout: 2000 });
    execFileSync("chrt", ["-f", "-p", "20", tid], { stdio: "ignore", timeout: 2000 });
    s[2] = 1;
  } catch {
    s[2] = 0;
  }
  const cell = new Int32Array(new SharedArrayBuffer(4));
  let seen = Atomics.load(gen, 0);
  let deadline = performance.now() + PERIOD_MS;
  for (;;) {
    const left = deadline - performance.now();
    if (left > 0) Atomics.wait(cell, 0, 0, left);
    const now = performance.now();
    const g = Atomics.load(gen, 0);
    if (g !== seen) {
      seen = g;
      s[0] = 0;
      s[1] = 0;
      s[3] = 0;
    } else {
      const late = now - deadline;
      if (late > STALL_MS) s[0]++;
      if (late > LONG_STALL_MS) s[3]++;
      if (late > s[1]) s[1] = late;
    }
    deadline += PERIOD_MS;
    if (now > deadline) deadline = now + PERIOD_MS; // a stall: count it once, don't burst
  }
}
