/**
 * `npm run bench -- api`: the robot API's cost to the runtime. A NAO runtime (simulated chest
 * board, real clock, 12 ms cycle) serves the API on loopback; 200 WebSocket subscribers in a
 * separate process take the 20 Hz stream. Reported, in the same run, with and without them:
 * the runtime process's CPU share (user + system, % of one CPU), its event-loop utilisation, and
 * the cycle's timing (period p99 and jitter p99 = |period − 12 ms| at the 99th percentile).
 *
 * Phases are interleaved (none, 200, none, 200, …, none; ten rounds) because the machine is
 * shared, after a warm-up that includes one unmeasured round with subscribers (the first
 * broadcasts compile the server's send path; measured, they looked like jitter). The p99 of one
 * 3 s phase is its third-worst cycle, so a burst of VM stalls decides it, and such bursts come as
 * often without subscribers as with them. So each phase with subscribers is compared with the
 * baselines either side of it, and the verdict is the median of those ten growths; the same
 * statistic between baselines alone shows what chance gives. The pooled p99 is printed too.
 * Target: the jitter p99 grows by ≤ 0.2 ms.
 *
 * Collections: the loop collects V8's young generation itself between cycles (src/runtime/gc.ts);
 * the gc column counts every collection in the phase, the scheduled ones in brackets, and the
 * longest pause. Two switches, for comparisons on the same machine:
 * - BENCH_API_V8_GC=1 leaves collection to V8 (the loop schedules none), to see what it costs;
 * - BENCH_RT=<1..99> runs the runtime at SCHED_FIFO priority (chrt, Linux, root), as a robot's HAL
 *   runs, so that other load on a shared machine does not decide the figure.
 *
 * The runtime itself runs in a child process with node's default flags (not the bench runner's
 * --expose-gc and 128 MB young generation), as `bodylink serve` runs it, with scheduled collections
 * every 100 ms as `serve` sets them.
 *
 * The subscribers run in a child process (this file, started with --api-bench-clients) at the
 * lowest scheduling priority, so their own JSON parsing neither counts as the runtime's CPU nor
 * competes with it for a core. Each counts messages and checks that sequence numbers increase.
 */
import { execFileSync, fork } from "node:child_process";
import { availableParallelism, loadavg, setPriority } from "node:os";
import { fileURLToPath } from "node:url";
import { PerformanceObserver, performance } from "node:perf_hooks";
import WebSocket from "ws";
import { MonotonicClock } from "../src/runtime/clock.js";
import { NaoRobot } from "../src/runtime/nao-robot.js";
import { quantileOfSorted } from "../src/runtime/timing.js";
import { adapterFor, startApiServer } from "../src/serve/api/build.js";
import { StateStream } from "../src/serve/api/stream.js";
import { fmt, median, timeIt } from "./util.js";

const SUBSCRIBERS = 200;
const PHASE_MS = 3000;
const SETTLE_MS = 500;
const WARMUP_MS = 2000;
const ROUNDS = 10;
const NOMINAL_MS = 12;

interface PhaseResult {
  name: string;
  subscribers: number;
  cpuPct: number;
  eluPct: number;
  periodP99Ms: number;
  jitterP99Ms: number;
  execP99Ms: number;
  lateCycles: number;
  cycles: number;
  sentPerS: number;
  skipped: number;
  /** How long one stretch of the stream's sending held the event loop: p99 and max, ms. */
  sliceP99Ms: number;
  sliceMaxMs: number;
  /** Garbage collections during the phase: how many, the longest pause (ms), and how many of them the loop scheduled between cycles. */
  gcCount: number;
  gcMaxMs: number;
  gcScheduled: number;
  /** Every cycle period of the phase, ms (for the pooled percentiles). */
  periods: Float64Array;
}

/** |period − nominal| at the 99th percentile over all periods of `phases` together. */
function pooledJitterP99(phases: readonly PhaseResult[]): number {
  return quantileOfSorted(
    phases.flatMap((p) => Array.from(p.periods, (v) => Math.abs(v - NOMINAL_MS))).sort((a, b) => a - b),
    0.99,
  );
}

async function phase(name: string, robot: NaoRobot, stream: StateStream, subscribers: number, counters: () => Promise<{ sent: number; skipped: number }>): Promise<PhaseResult> {
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  const c0 = await counters();
  robot.loop.timing.reset();
  stream.resetSliceStats();
  const gcs: number[] = [];
  const gcObserver = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcs.push(e.duration);
  });
  gcObserver.observe({ entryTypes: ["gc"] });
  const cpu0 = process.cpuUsage();
  const elu0 = performance.eventLoopUtilization();
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, PHASE_MS));
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const elu = performance.eventLoopUtilization(elu0);
  const t = robot.loop.timing.summary();
  const slices = stream.sliceStats();
  gcObserver.disconnect();
  const c1 = await counters();
  return {
    name,
    subscribers,
    cpuPct: ((cpu.user + cpu.system) / 1000 / wallMs) * 100,
    eluPct: elu.utilization * 100,
    periodP99Ms: t.periodMs.p99,
    jitterP99Ms: t.jitterP99Ms,
    execP99Ms: t.execMs.p99,
    lateCycles: t.lateCycles,
    cycles: t.cycles,
    sentPerS: ((c1.sent - c0.sent) / wallMs) * 1000,
    skipped: c1.skipped - c0.skipped,
    periods: robot.loop.timing.periods(),
    sliceP99Ms: slices.p99Ms,
    sliceMaxMs: slices.maxMs,
    gcCount: gcs.length,
    gcMaxMs: gcs.length ? Math.max(...gcs) : 0,
    gcScheduled: t.gc.collections,
  };
}

export async function run(): Promise<void> {
  // `npm run bench` starts node with --expose-gc and a 128 MB young generation for the allocation
  // benches; `bodylink serve` has neither, and both change when V8 collects. Measure the runtime
  // as it is served: in a child process with node's default flags.
  if (process.execArgv.some((a) => a === "--expose-gc" || a.startsWith("--max-semi-space-size"))) {
    const child = fork(fileURLToPath(import.meta.url), ["--api-bench-main"], { execArgv: ["--import", "tsx"], stdio: "inherit" });
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    if (code !== 0) throw new Error(`api bench exited with ${code}`);
    return;
  }
  const v8Gc = process.env.BENCH_API_V8_GC === "1";
  const wake = process.env.BENCH_WAKE === "spin" ? process.env.BENCH_WAKE : undefined;
  const robot = await NaoRobot.create({ clock: new MonotonicClock(wake ? { wake } : {}), youngGcEveryMs: v8Gc ? 0 : 100 }); // 100: what `bodylink serve` runs
  await robot.start();
  const server = await startApiServer(robot, { port: 0 });
  // Stream counters from /v1/health, asked in process (inject: no socket) at phase boundaries.
  const counters = async () => {
    const h = (await server.app.inject({ url: "/v1/health" })).json() as { api: { messages_sent: number; messages_skipped: number } };
    return { sent: h.api.messages_sent, skipped: h.api.messages_skipped };
  };
  const child = fork(fileURLToPath(import.meta.url), ["--api-bench-clients", `${server.url.replace(/^http/, "ws")}/v1/stream`, String(SUBSCRIBERS)], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  // The subscribers' own JSON parsing is an artefact of running them on this machine, not work
  // the runtime does: give that process the lowest priority so it does not steal the runtime's core.
  // On the robot the subscribers are other machines. Here they share the VM, so keep them on the
  // last core (when there are two or more) and out of the runtime's way; the kernel's loopback work
  // for their 4,000 messages a second still lands somewhere, so the figure stays pessimistic.
  const cores = availableParallelism();
  if (cores >= 2) {
    try {
      execFileSync("taskset", ["-a", "-p", "-c", String(cores - 1), String(child.pid)], { stdio: "ignore" });
    } catch {
      // taskset missing or not permitted: measure anyway
    }
  }
  try {
    setPriority(child.pid!, 19);
  } catch {
    // not permitted: measure anyway
  }
  if (process.env.BENCH_RT) execFileSync("chrt", ["-a", "-f", "-p", process.env.BENCH_RT, String(process.pid)], { stdio: "inherit" });
  const ask = <T>(cmd: string): Promise<T> =>
    new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`subscriber process exited with ${code}`));
      child.once("exit", onExit);
      child.once("message", (m) => {
        child.off("exit", onExit);
        resolve(m as T);
      });
      child.send(cmd);
    });
  const results: PhaseResult[] = [];
  const reports: Array<{ messages: number; perClientHz: number; outOfOrder: number; clients: number }> = [];
  try {
    // JIT, simulator, first GCs, and one round of broadcasts to compile the send path: not measured.
    await new Promise((r) => setTimeout(r, WARMUP_MS));
    await ask("connect");
    await new Promise((r) => setTimeout(r, WARMUP_MS));
    await ask("disconnect");
    for (let round = 0; round < ROUNDS; round++) {
      results.push(await phase("no subscribers", robot, server.stream, 0, counters));
      await ask("connect");
      results.push(await phase(`${SUBSCRIBERS} subscribers`, robot, server.stream, SUBSCRIBERS, counters));
      reports.push(await ask("disconnect"));
    }
    results.push(await phase("no subscribers", robot, server.stream, 0, counters));

    console.log(
      `robot API, NAO runtime (simulated chest board, 12 ms cycle, real clock); ${PHASE_MS / 1000} s phases, interleaved; subscribers in a separate process; ` +
        `young-generation GC ${robot.loop.schedulesGc ? "scheduled between cycles" : "left to V8"}${process.env.BENCH_RT ? `; runtime at SCHED_FIFO ${process.env.BENCH_RT}` : ""}`,
    );
    console.log("phase              subs   cpu %   elu %   period p99   jitter p99   exec p99   late/cycles   stream msg/s   skipped   send slice p99/max   gc: n (scheduled) max");
    for (const p of results) {
      console.log(
        `${p.name.padEnd(18)} ${String(p.subscribers).padStart(4)}  ${fmt(p.cpuPct, 1).padStart(6)}  ${fmt(p.eluPct, 1).padStart(6)}   ${fmt(p.periodP99Ms, 3).padStart(7)} ms   ${fmt(p.jitterP99Ms, 3).padStart(7)} ms  ${fmt(p.execP99Ms, 3).padStart(6)} ms   ${`${p.lateCycles}/${p.cycles}`.padStart(11)}   ${fmt(p.sentPerS, 0).padStart(12)}   ${String(p.skipped).padStart(7)}   ${(p.subscribers ? `${fmt(p.sliceP99Ms, 3)}/${fmt(p.sliceMaxMs, 3)} ms` : "-").padStart(18)}   ${p.gcCount} (${p.gcScheduled}) ${fmt(p.gcMaxMs, 2)} ms`,
      );
    }
    // What one broadcast costs before any socket: building and encoding the message.
    const encodeAdapter = adapterFor(robot);
    const encodeStream = new StateStream(encodeAdapter);
    const encodeNs = timeIt(() => void encodeStream.encode(), 300, 200);
    const bytes = encodeStream.encode()?.length ?? 0;
    encodeStream.close();
    encodeAdapter.close();
    console.log(`encoding one state message (${bytes} bytes): ${fmt(encodeNs / 1000, 1)} µs, ${fmt((encodeNs / 1e6 / 12) * 100, 2)} % of a 12 ms cycle, 20 times a second`);
    const q = (xs: number[], f: number) =>
      quantileOfSorted(
        xs.slice().sort((x, y) => x - y),
        f,
      );
    const without = results.filter((p) => p.subscribers === 0);
    const withSubs = results.filter((p) => p.subscribers > 0);
    const jBase = pooledJitterP99(without);
    const jWith = pooledJitterP99(withSubs);
    const cBase = median(without.map((p) => p.cpuPct));
    const cWith = median(withSubs.map((p) => p.cpuPct));
    const msgs = reports.reduce((a, r) => a + r.messages, 0);
    const hz = reports.reduce((a, r) => a + r.perClientHz, 0) / reports.length;
    const ooo = reports.reduce((a, r) => a + r.outOfOrder, 0);
    console.log(`subscribers received ${msgs} messages: ${fmt(hz, 2)} msg/s per client (${SUBSCRIBERS} clients), ${ooo} out of order`);
    // Per round: the phase with subscribers against the mean of the baselines either side of it.
    // The verdict is the median over rounds: a burst of VM stalls (1–9 ms, seen in baselines as
    // often as with subscribers) decides a phase's p99, and the median ignores the rounds it hits.
    const paired = withSubs.map((p) => {
      const k = results.indexOf(p);
      return p.jitterP99Ms - (results[k - 1]!.jitterP99Ms + results[k + 1]!.jitterP99Ms) / 2;
    });
    // The same between baselines alone (each against the baselines two phases either side): what
    // chance gives when nothing changes.
    const placebo = without.slice(1, -1).map((p, i) => p.jitterP99Ms - (without[i]!.jitterP99Ms + without[i + 2]!.jitterP99Ms) / 2);
    const growth = median(paired);
    // When chance alone (the placebo) moves the figure by more than the target, say so.
    const noisy = Math.abs(median(placebo)) > 0.2 || q(placebo, 0.75) - q(placebo, 0.25) > 0.2;
    const verdict = noisy ? "inconclusive: baselines alone move it by more than the target on this machine" : growth <= 0.2 ? "met" : "NOT met";
    // The direct figure: the stream delays a cycle's wake-up by at most the stretch in progress.
    const sliceP99 = median(withSubs.map((p) => p.sliceP99Ms));
    const sliceMax = Math.max(...withSubs.map((p) => p.sliceMaxMs));
    console.log(
      `the stream held the event loop for ${fmt(sliceP99, 3)} ms at a time (median of the phases' p99), ${fmt(sliceMax, 3)} ms at most: ` +
        "the most it can delay a cycle (slices of 0.1 ms of sending, the encoding apart; a preempted vCPU or a collection inside a slice counts too)",
    );
    console.log(
      `pooled jitter p99 (${without.reduce((a, p) => a + p.periods.length, 0)} and ${withSubs.reduce((a, p) => a + p.periods.length, 0)} cycles): ` +
        `${fmt(jBase, 3)} ms without, ${fmt(jWith, 3)} ms with ${SUBSCRIBERS} subscribers (a few phases with VM stalls decide it)`,
    );
    console.log(
      `jitter p99 growth with ${SUBSCRIBERS} subscribers, median over ${paired.length} rounds: ${fmt(growth, 3)} ms ` +
        `(quartiles ${fmt(q(paired, 0.25), 3)}..${fmt(q(paired, 0.75), 3)}); between baselines alone: median ${fmt(median(placebo), 3)} ms ` +
        `(quartiles ${fmt(q(placebo, 0.25), 3)}..${fmt(q(placebo, 0.75), 3)}) — target ≤ 0.2 ms: ${verdict}`,
    );
    console.log(
      `median runtime CPU: ${fmt(cBase, 1)} % → ${fmt(cWith, 1)} % of one CPU (×${fmt(cWith / Math.max(0.1, cBase), 2)}); load average ${loadavg()
        .map((v) => fmt(v, 2))
        .join(" ")}`,
    );
  } finally {
    child.kill();
    await server.close();
    await robot.stop();
  }
}

/** Child process: N subscribers, connected and disconnected on command from the bench. */
async function subscribers(url: string, n: number): Promise<void> {
  let sockets: WebSocket[] = [];
  let messages = 0;
  let outOfOrder = 0;
  let tStart = 0;
  const lastSeq = new Float64Array(n);
  const connectAll = () =>
    Promise.all(
      Array.from(
        { length: n },
        (_, i) =>
          new Promise<void>((resolve, reject) => {
            const ws = new WebSocket(url);
            sockets.push(ws);
            lastSeq[i] = -1;
            ws.on("message", (data: Buffer) => {
              // Read only the head of the message: the subscribers share this 2-core machine with
              // the runtime they measure, so they must cost it as little CPU as possible.
              const head = /^\{"type":"(\w+)"(?:,"body":"\w+","seq":(\d+))?/.exec(data.toString("latin1", 0, 96));
              if (head?.[1] === "hello") return resolve();
              if (head?.[1] !== "state" || tStart === 0) return; // count only the measured window
              messages++;
              const seq = Number(head[2]);
              if (seq <= lastSeq[i]!) outOfOrder++;
              lastSeq[i] = seq;
            });
            ws.once("error", reject);
          }),
      ),
    );
  process.on("message", (cmd) => {
    if (cmd === "connect") {
      messages = 0;
      outOfOrder = 0;
      tStart = 0;
      void connectAll().then(() => {
        tStart = performance.now();
        process.send!("ready");
      });
    } else if (cmd === "disconnect") {
      const s = (performance.now() - tStart) / 1000;
      const report = { messages, perClientHz: messages / n / s, outOfOrder, clients: n };
      for (const ws of sockets) ws.terminate();
      sockets = [];
      process.send!(report);
    }
  });
}

const at = process.argv.indexOf("--api-bench-clients");
if (at >= 0) await subscribers(process.argv[at + 1]!, Number(process.argv[at + 2]));
else if (process.argv.includes("--api-bench-main")) await run();
