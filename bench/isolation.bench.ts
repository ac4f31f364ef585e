/**
 * `npm run bench -- isolation`: does the threaded core keep the NAO's cycle on time whatever the
 * main thread suffers? In ONE run, `bodylink serve` (NAO simulator, the real CLI as a user starts
 * it, BODYLINK_TEST_HOOKS=1 for the stall hook; its core in its own thread), with a LoLA
 * controller commanding stiffness 1.0 on every frame (test/rt/serve-rig.ts), through these phases:
 *
 *   idle ×3 / subs200 ×2, interleaved   the jitter growth with 200 stream subscribers, and its
 *                                       placebo: the same statistic between two idle phases
 *   posts     200 KB and 1 MB JSON bodies to /v1/commands/joints every 300 ms, without a lease
 *   subs1000  1,000 stream subscribers (another process, lowest priority)
 *   stall     the main thread blocked for 1 s (SIGUSR2 test hook)
 *   steady    60 s idle: CPU share at 83 Hz (the process from /proc/PID/stat; the core's own
 *             thread as it reports itself, /v1/health cycle.core_cpu_ms) and the collections V8
 *             started by itself on the core's thread (cycle.core_gc_collections, counted inside
 *             that thread; the scheduled ones, cycle.gc_collections, apart)
 *   no client 15 s with the controller gone: the core's CPU without LoLA's socket I/O
 * and once more the worker core's steady phase with `--gc-every-ms 0`: does its young generation
 * fill at all when nothing schedules collections? Then, for the CPU lines, the worker core with
 * the wake-up it had before ("wait", 0.2 ms spin: the jitter rounds, steady, no client) and the P7
 * and TNY-360 worker cores idle, each figure per cycle with its wake-ups (/v1/health
 * core_cpu_ms, core_wakeups) and as a ratio against the NAO's.
 *
 * Per phase and core: late cycles, safety ramps (errors.lateRamps), cycle lateness after the
 * deadline p99/max and jitter p99 over exactly the phase's cycles (/v1/health?window_cycles=N),
 * and the stiffness dips the controller saw; beside the idle, jitter and load phases, the machine's
 * own stalls (test/rt/placebo.mjs: a SCHED_FIFO thread pinned to each CPU in a process of its own,
 * waking every 2 ms; wake-ups more than 4 ms late), so a late cycle the machine explains is not
 * charged to the load. Each target gets a verdict line (MET / NOT MET /
 * INCONCLUSIVE and why, with the numbers). BENCH_QUICK=1 (or --quick) shortens every phase for a
 * smoke run; a verdict from a quick run says so.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { availableParallelism, loadavg, setPriority } from "node:os";
import { performance } from "node:perf_hooks";
import type { BodyKind } from "../src/bodies/registry.js";
import type { HealthAnswer } from "../src/client/messages.js";
import { actionSpec, TNY_MAX_REQUEST_BYTES, TNY_HEADER_BYTES } from "../src/wire/tny/constants.js";
import { encodeRawRequest, encodeRequest } from "../src/wire/tny/encode.js";
import { Placebo, type PlaceboReport, type ServeRig, StiffController, startServe } from "../test/rt/serve-rig.js";
import { fmt, median } from "./util.js";

const QUICK = process.env.BENCH_QUICK === "1" || process.argv.includes("--quick");
const PHASE_MS = QUICK ? 2500 : 10_000;
const STEADY_MS = QUICK ? 6000 : 60_000;
const SETTLE_MS = 300;
const NO_CLIENT_MS = QUICK ? 3000 : 15_000;
const BODY_MS = QUICK ? 3000 : 15_000;
const JITTER_ROUNDS = QUICK ? 1 : 2;
const TARGET_JITTER_MS = 0.2;
const TARGET_CPU_PCT = 3;
const CLK_TCK = 100; // Linux USER_HZ: /proc/PID/stat counts CPU in 1/100 s

interface Phase {
  name: string;
  ms: number;
  cycles: number;
  lateCycles: number;
  /** Deadlines a stall made the loop skip (health missed_cycles). */
  missedCycles: number;
  lateRamps: number;
  latenessP99Ms: number;
  latenessMaxMs: number;
  jitterP99Ms: number;
  frames: number;
  dips: number;
  coreCpuPct: number | null;
  /** The core's thread: µs of CPU and wake-ups (timeslices) per cycle it ran. */
  coreUsPerCycle: number | null;
  coreWakeupsPerCycle: number | null;
  processCpuPct: number | null;
  v8Gcs: number;
  scheduledGcs: number;
  gcMaxMs: number;
  /** The machine's own stalls over the phase (test/rt/placebo.mjs: a SCHED_FIFO thread per CPU woke >4 ms late), and its worst lateness; null without it. */
  machineStalls: number | null;
  /** Of those, past 22 ms: long enough to explain a NAO safety ramp. */
  machineLongStalls: number | null;
  machineMaxMs: number | null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** user + system CPU of a process, ms (Linux), or null. */
function processCpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" "); // fields from the 3rd on
    return ((Number(f[11]) + Number(f[12])) * 1000) / CLK_TCK;
  } catch {
    return null;
  }
}

async function health(rig: ServeRig, windowCycles?: number): Promise<HealthAnswer> {
  const q = windowCycles ? `?window_cycles=${Math.min(2048, Math.max(1, windowCycles))}` : "";
  return (await (await fetch(`${rig.apiUrl}/v1/health${q}`)).json()) as HealthAnswer;
}

/** N stream subscribers in another process at the lowest priority; resolves once all are open. */
async function subscribers(rig: ServeRig, n: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["test/rt/subscribers.mjs", `${rig.apiUrl.replace(/^http/, "ws")}/v1/stream`, String(n)], { stdio: ["ignore", "pipe", "inherit"] });
  try {
    setPriority(child.pid!, 19);
  } catch {
    // not allowed: they compete at normal priority
  }
  let out = "";
  child.stdout!.on("data", (d) => {
    out += String(d);
  });
  const t0 = performance.now();
  while (!new RegExp(`^open( ${n})?$`, "m").test(out)) {
    if (performance.now() - t0 > 30_000) throw new Error(`only ${/open (\d+)\n?$/.exec(out)?.[1] ?? 0} of ${n} subscribers opened in 30 s`);
    await sleep(50);
  }
  return child;
}

async function killed(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGKILL");
  await exited;
}

/** Run `load` for `ms`, then read what the core and the controller saw over exactly those cycles. */
async function phase(rig: ServeRig, lola: StiffController | null, name: string, ms: number, load: (signal: AbortSignal) => Promise<void>, placebo: Placebo | null = null): Promise<Phase> {
  await placebo?.request("start", /^started$/);
  const h0 = await health(rig);
  const cpu0 = processCpuMs(rig.child.pid!);
  const t0 = performance.now(); // CPU shares are over the wall time between the two health reads
  lola?.resetCounts();
  const stop = new AbortController();
  const running = load(stop.signal);
  await sleep(ms);
  stop.abort();
  await running;
  await sleep(SETTLE_MS); // a ramp that started at the end shows in the frames
  const frames = lola?.frames ?? 0;
  const dips = lola?.dips ?? 0;
  const h1 = await health(rig);
  const machine = placebo ? (JSON.parse(await placebo.request("report", /^\{.*\}$/)) as PlaceboReport) : null;
  const cpu1 = processCpuMs(rig.child.pid!);
  const wallMs = performance.now() - t0;
  const w = await health(rig, h1.cycle.cycles - h0.cycle.cycles);
  const c0 = h0.cycle.core_cpu_ms;
  const c1 = h1.cycle.core_cpu_ms;
  const cycles = h1.cycle.cycles - h0.cycle.cycles;
  const k0 = h0.cycle.core_wakeups;
  const k1 = h1.cycle.core_wakeups;
  return {
    name,
    ms: wallMs,
    cycles: h1.cycle.cycles - h0.cycle.cycles,
    lateCycles: h1.cycle.late_cycles - h0.cycle.late_cycles,
    missedCycles: h1.cycle.missed_cycles - h0.cycle.missed_cycles,
    lateRamps: (h1.errors.lateRamps ?? 0) - (h0.errors.lateRamps ?? 0),
    latenessP99Ms: w.cycle.lateness_ms.p99,
    latenessMaxMs: w.cycle.lateness_ms.max,
    jitterP99Ms: w.cycle.jitter_p99_ms,
    frames,
    dips,
    coreCpuPct: c0 === null || c1 === null ? null : (100 * (c1 - c0)) / wallMs,
    coreUsPerCycle: c0 === null || c1 === null || cycles <= 0 ? null : (1000 * (c1 - c0)) / cycles,
    coreWakeupsPerCycle: k0 === null || k1 === null || cycles <= 0 ? null : (k1 - k0) / cycles,
    processCpuPct: cpu0 === null || cpu1 === null ? null : (100 * (cpu1 - cpu0)) / wallMs,
    v8Gcs: h1.cycle.core_gc_collections - h0.cycle.core_gc_collections,
    scheduledGcs: h1.cycle.gc_collections - h0.cycle.gc_collections,
    gcMaxMs: h1.cycle.core_gc_max_ms,
    machineStalls: machine?.fifo ? machine.stalls : null,
    machineLongStalls: machine?.fifo ? machine.longStalls : null,
    machineMaxMs: machine?.fifo ? machine.maxLateMs : null,
  };
}

const idle = async (): Promise<void> => {};

/** The wake-up the worker cores had before this bench chose "block" (docs/architecture.md, Wake-up): compared in the same run. */
const OLD_WAKE_ARGS = ["--core-wake", "wait", "--core-spin-ms", "0.2"];

/** A P7 or TNY-360 serve with its core in its worker, idle: what its core's thread costs per cycle. */
async function runBody(body: Exclude<BodyKind, "nao">): Promise<Phase> {
  const rig = await startServe([], {}, { body });
  try {
    await sleep(QUICK ? 500 : 2000);
    return { ...(await phase(rig, null, body === "p7" ? "P7 250 Hz" : "TNY 200 Hz", BODY_MS, idle)) };
  } finally {
    await rig.close();
  }
}

/** What the flooding client (bench/tny-flood.mjs) sent and got back. */
interface FloodReport {
  sent: number;
  sentBytes: number;
  replies: number;
  byStatus: Record<string, number>;
  reconnects: number;
  closeCodes: Record<string, number>;
}

/**
 * The hostile client's three connections (the robot's limit), each sending one frame as fast as
 * its socket takes it: setVelocity (a command at max rate: the lease renewed by every frame), a
 * 256-byte request (the most the robot takes; its arguments do not fit: InvalidParameters), and a
 * 64 KiB one (the most the server's `ws` lets in; OutOfMemory).
 */
function floodFrames(): Uint8Array[] {
  const v = actionSpec("body", "setVelocity");
  const a = actionSpec("joint", "setJointAngles");
  return [
    encodeRequest(1, v.module, v.action, [0.2, 0, 0, true]),
    encodeRawRequest(1, a.module.code, a.action.code, new Uint8Array(TNY_MAX_REQUEST_BYTES - TNY_HEADER_BYTES).fill(0x3f)),
    encodeRawRequest(1, 0, 0, new Uint8Array(64 * 1024 - TNY_HEADER_BYTES)),
  ];
}

/** Start bench/tny-flood.mjs against `url`; resolves once its connections are open, with its stop. */
async function startFlood(url: string): Promise<() => Promise<FloodReport>> {
  const hex = floodFrames().map((f) => Buffer.from(f).toString("hex"));
  const child = spawn(process.execPath, [new URL("./tny-flood.mjs", import.meta.url).pathname, url], { stdio: ["pipe", "pipe", "inherit"] });
  child.stdin!.write(`${JSON.stringify(hex)}\n`);
  let out = "";
  child.stdout!.on("data", (d) => {
    out += String(d);
  });
  const t0 = performance.now();
  while (!/^open$/m.test(out)) {
    if (performance.now() - t0 > 20_000 || child.exitCode !== null) {
      child.kill("SIGKILL");
      throw new Error(`the TNY-360 flood did not connect: ${out}`);
    }
    await sleep(20);
  }
  return async () => {
    child.stdin!.write("stop\n");
    while (!/^\{.*\}$/m.test(out)) {
      if (child.exitCode !== null && !/^\{.*\}$/m.test(out)) throw new Error(`the TNY-360 flood exited without its report: ${out}`);
      await sleep(20);
    }
    await killed(child);
    return JSON.parse(/^\{.*\}$/m.exec(out)![0]) as FloodReport;
  };
}

/**
 * The TNY-360 core (its API server in the core's thread, `bodylink serve --body tny360` as a user
 * starts it) idle, then under a hostile client flooding its API server (floodFrames: max size, max
 * rate, every slot), then idle again: the core's late cycles with and without the flood, in one run.
 */
async function runTnyFlood(): Promise<{ phases: Phase[]; flood: FloodReport; floodMs: number }> {
  const rig = await startServe([], {}, { body: "tny360" });
  const placebo = await Placebo.start();
  try {
    await sleep(QUICK ? 500 : 2000);
    const phases = [await phase(rig, null, "TNY idle 1", PHASE_MS, idle, placebo)];
    const stop = await startFlood(rig.tnyUrl!);
    let report: FloodReport | null = null;
    try {
      phases.push(await phase(rig, null, "TNY flood", PHASE_MS, idle, placebo));
    } finally {
      report = await stop();
    }
    phases.push(await phase(rig, null, "TNY idle 2", PHASE_MS, idle, placebo));
    return { phases, flood: report, floodMs: phases[1]!.ms };
  } finally {
    placebo.close();
    await rig.close();
  }
}

/**
 * One serve with its LoLA controller through the phases: "all" (every load, then steady, then 15 s
 * with the controller gone), "cpu" (the jitter rounds, steady and the no-client phase: a wake-up
 * to compare with the default), "steady" (steady only).
 */
async function runCore(extraArgs: string[] = [], only: "all" | "cpu" | "steady" = "all"): Promise<Phase[]> {
  // The stall phase blocks the main thread for 1 s, the default heartbeat bound: the core would latch "host unresponsive" (src/rt/host-watch.ts).
  const rig = await startServe(["--max-subscribers", "1100", "--host-timeout-ms", "3000", ...extraArgs], { BODYLINK_TEST_HOOKS: "1" });
  let lola: StiffController | null = null;
  let subs: ChildProcess | null = null;
  // The machine's own stalls beside the idle, jitter and load phases (not steady and no client:
  // its 1,000 wake-ups a second would be in the CPU figures).
  const placebo = only === "steady" ? null : await Placebo.start();
  const out: Phase[] = [];
  try {
    lola = await StiffController.connect(rig.lolaPath);
    const t0 = performance.now();
    while (!lola.reached) {
      if (performance.now() - t0 > 20_000) throw new Error("the controller never got stiffness 1.0");
      await sleep(50);
    }
    await sleep(QUICK ? 500 : 2000); // warm-up: the first sends and collections of a fresh runtime
    const l = lola;
    if (only !== "steady") {
      for (let r = 0; r < JITTER_ROUNDS; r++) {
        out.push(await phase(rig, l, `idle ${r + 1}`, PHASE_MS, idle, placebo));
        subs = await subscribers(rig, 200);
        out.push(await phase(rig, l, `subs200 ${r + 1}`, PHASE_MS, idle, placebo));
        await killed(subs);
        subs = null;
      }
      out.push(await phase(rig, l, `idle ${JITTER_ROUNDS + 1}`, PHASE_MS, idle, placebo));
    }
    if (only === "all") {
      const big = (kb: number) => JSON.stringify({ positions: Array.from({ length: (kb * 1024) / 20 }, () => 0.123456789012345) });
      const bodies = [big(200), big(1024)];
      out.push(
        await phase(
          rig,
          l,
          "posts",
          PHASE_MS,
          async (signal) => {
            for (let i = 0; !signal.aborted; i++) {
              await fetch(`${rig.apiUrl}/v1/commands/joints`, { method: "POST", headers: { "content-type": "application/json" }, body: bodies[i % 2]!, signal })
                .then((res) => res.arrayBuffer())
                .catch(() => {});
              await sleep(300);
            }
          },
          placebo,
        ),
      );
      subs = await subscribers(rig, 1000);
      out.push(await phase(rig, l, "subs1000", PHASE_MS, idle, placebo));
      await killed(subs);
      subs = null;
      out.push(
        await phase(
          rig,
          l,
          "stall",
          PHASE_MS,
          async () => {
            await sleep(Math.min(1000, PHASE_MS / 4));
            rig.child.kill("SIGUSR2"); // the main thread spins for 1 s
          },
          placebo,
        ),
      );
    }
    out.push(await phase(rig, l, "steady", STEADY_MS, idle));
    if (only !== "steady") {
      // the controller leaves: what the core costs with no LoLA client (no socket I/O per frame)
      await l.close();
      lola = null;
      await sleep(SETTLE_MS);
      out.push(await phase(rig, null, "no client", NO_CLIENT_MS, idle));
    }
  } finally {
    placebo?.close();
    if (subs) await killed(subs);
    await lola?.close();
    await rig.close();
  }
  return out;
}

function printTable(title: string, phases: readonly Phase[]): void {
  console.log(`\n${title}`);
  console.log(
    "phase        s  cycles late missed ramps | lateness p99   max ms | jitter p99 | frames dips | core CPU % µs/cycle wake-ups/cycle process CPU % | V8 GCs sched | V8 GC max ms so far | machine stalls, max ms",
  );
  for (const p of phases) {
    console.log(
      `${p.name.padEnd(10)} ${fmt(p.ms / 1000, 1).padStart(4)} ${String(p.cycles).padStart(7)} ${String(p.lateCycles).padStart(4)} ${String(p.missedCycles).padStart(6)} ${String(p.lateRamps).padStart(5)} | ${fmt(p.latenessP99Ms, 3).padStart(12)} ${fmt(p.latenessMaxMs, 2).padStart(8)} | ${fmt(p.jitterP99Ms, 3).padStart(10)} | ${String(p.frames).padStart(6)} ${String(p.dips).padStart(4)} | ${(p.coreCpuPct === null ? "n/a" : fmt(p.coreCpuPct)).padStart(10)} ${(p.coreUsPerCycle === null ? "n/a" : fmt(p.coreUsPerCycle, 0)).padStart(8)} ${(p.coreWakeupsPerCycle === null ? "n/a" : fmt(p.coreWakeupsPerCycle, 2)).padStart(14)} ${(p.processCpuPct === null ? "n/a" : fmt(p.processCpuPct)).padStart(13)} | ${String(p.v8Gcs).padStart(6)} ${String(p.scheduledGcs).padStart(5)} | ${fmt(p.gcMaxMs, 2).padStart(8)} | ${p.machineStalls === null ? "n/a" : `${p.machineStalls}, ${fmt(p.machineMaxMs!, 2)}`}`,
    );
  }
  if (phases.some((p) => p.cycles > 2048)) console.log("(a phase longer than 2,048 cycles: its lateness and jitter percentiles are over its last 2,048 cycles, the most the core keeps)");
}

/** Growth of the jitter p99 with 200 subscribers over the idle phases either side, and the same statistic between idle phases (placebo). */
function jitterGrowth(phases: readonly Phase[]): { growth: number; placebo: number; growths: number[]; placebos: number[] } {
  const idles = phases.filter((p) => p.name.startsWith("idle"));
  const subs = phases.filter((p) => p.name.startsWith("subs200"));
  const growths = subs.map((s, i) => s.jitterP99Ms - (idles[i]!.jitterP99Ms + idles[i + 1]!.jitterP99Ms) / 2);
  const placebos = idles.slice(1).map((p, i) => p.jitterP99Ms - idles[i]!.jitterP99Ms);
  return { growth: median(growths), placebo: median(placebos.map(Math.abs)), growths, placebos };
}

/** Print the TNY-360 flood's table and figures; its verdict line. */
function tnyFloodReport(r: { phases: Phase[]; flood: FloodReport; floodMs: number }, quick: string): string {
  printTable("TNY-360 core: idle, a hostile client flooding its API server (3 connections: setVelocity, 256 B and 64 KiB frames, as fast as they go), idle", r.phases);
  const f = r.flood;
  const byStatus = Object.entries(f.byStatus)
    .map(([k, n]) => `${k === "0" ? "Ok" : `status ${k}`} ${n}`)
    .join(", ");
  console.log(
    `  the flood: ${fmt((f.sent * 1000) / r.floodMs, 0)} requests/s sent (${fmt((f.sentBytes * 1000) / r.floodMs / 1e6, 1)} MB/s), ${f.replies} replies (${byStatus}), ${f.reconnects} reconnects (counts over the phase and the 1 s drain after it)`,
  );
  const [i1, fl, i2] = r.phases as [Phase, Phase, Phase];
  const idleLate = Math.max(i1.lateCycles, i2.lateCycles);
  const explained = fl.lateCycles <= Math.max(idleLate, fl.machineStalls ?? 0) ? "no more than idle or the machine's stalls explain" : "more than idle or the machine's stalls explain";
  return `TNY-360 core under a hostile request flood: 0 late cycles: ${fl.lateCycles === 0 ? "MET" : "NOT MET"} (${fl.lateCycles} late, lateness max ${fmt(fl.latenessMaxMs, 2)} ms, over ${fl.cycles} cycles; idle either side ${i1.lateCycles} and ${i2.lateCycles} late${
    fl.lateCycles > 0 ? `; the machine's own stalls over the flood ${fl.machineStalls ?? "n/a"}: ${explained}` : ""
  })${quick}`;
}

export async function run(): Promise<void> {
  const quick = QUICK ? " (QUICK smoke run: phases too short for a verdict that closes anything)" : "";
  console.log(
    `phases of ${PHASE_MS / 1000} s, steady ${STEADY_MS / 1000} s${quick}; load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")} on ${availableParallelism()} CPUs`,
  );
  // BL_ISOLATION_ONLY=tny: the TNY-360 flood alone (~40 s; quick ~12 s)
  if (process.env.BL_ISOLATION_ONLY === "tny") {
    console.log(`\nverdict: ${tnyFloodReport(await runTnyFlood(), quick)}`);
    return;
  }
  const worker = await runCore();
  printTable("serve (the core in its own thread)", worker);
  const noGc = await runCore(["--gc-every-ms", "0"], "steady");
  printTable("--gc-every-ms 0 (no scheduled collections)", noGc);
  const oldWake = await runCore(OLD_WAKE_ARGS, "cpu");
  printTable(`${OLD_WAKE_ARGS.join(" ")} (the cores' previous wake-up: timer, futex, 0.2 ms spin)`, oldWake);
  const bodies = { p7: await runBody("p7"), tny360: await runBody("tny360") };
  printTable("P7 and TNY-360 worker cores, idle (each its own serve, default flags)", [bodies.p7, bodies.tny360]);
  const tnyVerdict = tnyFloodReport(await runTnyFlood(), quick);
  console.log(
    `\nload average at the end ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}`,
  );

  // Loads: what each cost, measured against the same core's idle phases.
  console.log("\nloads (late cycles, lateness max, controller dips):");
  const idleNoise = (ps: readonly Phase[]) => {
    const idles = ps.filter((p) => p.name.startsWith("idle"));
    return { late: Math.max(...idles.map((p) => p.lateCycles)), dips: Math.max(...idles.map((p) => p.dips)), ramps: Math.max(...idles.map((p) => p.lateRamps)) };
  };
  const wn = idleNoise(worker);
  console.log(`  (idle phases' worst, the machine's own noise: ${wn.late} late, ${wn.ramps} ramps, ${wn.dips} dips)`);
  let isolated = true;
  for (const name of ["posts", "subs1000", "stall"]) {
    const w = worker.find((p) => p.name === name)!;
    // A late cycle the machine explains (its own stalls over the same phase, placebo.mjs) is not the load's.
    // Dips follow a ramp: a ramp the machine explains explains its dips.
    const rampsOk = w.lateRamps <= Math.max(wn.ramps, w.machineLongStalls ?? 0);
    const ok = w.lateCycles <= Math.max(wn.late, w.machineStalls ?? 0) && rampsOk && (w.dips <= wn.dips || w.lateRamps > 0);
    isolated &&= ok;
    console.log(
      `  ${name.padEnd(9)} ${w.lateCycles} late, max ${fmt(w.latenessMaxMs, 2)} ms, ${w.dips} dips, ${w.lateRamps} ramps | machine ${w.machineStalls ?? "n/a"} stalls (${w.machineLongStalls ?? "n/a"} past 22 ms)`,
    );
  }
  const wIdle = worker.filter((p) => p.name.startsWith("idle"));
  const verdicts: string[] = [];
  verdicts.push(
    `loads leave the worker core's cycle on time (no more late cycles, ramps or dips than its worst idle phase, ${wn.late} late, ${wn.ramps} ramps, ${wn.dips} dips, or than the machine's own stalls over the same phase explain): ${isolated ? "MET" : "NOT MET"}${quick}`,
  );

  // Jitter growth with 200 subscribers, and the placebo.
  const jw = jitterGrowth(worker);
  console.log(
    `\njitter p99 growth with 200 subscribers (median over ${jw.growths.length} round(s); placebo = the same between idle phases): worker ${fmt(jw.growth, 3)} ms (placebo ${fmt(jw.placebo, 3)} ms; rounds ${jw.growths.map((g) => fmt(g, 3)).join(", ")})`,
  );
  console.log(
    `  idle phases' jitter p99, worker: ${wIdle.map((p) => fmt(p.jitterP99Ms, 3)).join(", ")} ms; the machine's stalls in the worker's idle phases (wake-ups >4 ms late, worst ms): ${wIdle.map((p) => (p.machineStalls === null ? "n/a" : `${p.machineStalls} (${fmt(p.machineMaxMs!, 2)})`)).join(", ")}`,
  );
  const conclusive = jw.placebo <= TARGET_JITTER_MS / 2;
  verdicts.push(
    conclusive
      ? `jitter p99 growth with 200 subscribers ≤ ${TARGET_JITTER_MS} ms (worker core): ${jw.growth <= TARGET_JITTER_MS ? "MET" : "NOT MET"}, CONCLUSIVE: growth ${fmt(jw.growth, 3)} ms, two idle phases differ by ${fmt(jw.placebo, 3)} ms (≤ half the target)${quick}`
      : `jitter p99 growth with 200 subscribers ≤ ${TARGET_JITTER_MS} ms (worker core): INCONCLUSIVE: two identical idle phases differ by ${fmt(jw.placebo, 3)} ms at p99, more than half the target, so the growth of ${fmt(jw.growth, 3)} ms cannot be told from chance (the p99 of a ${PHASE_MS / 1000} s phase is decided by its ${Math.ceil((PHASE_MS / 12) * 0.01)} worst cycles: a few VM stalls)${quick}`,
  );

  // CPU at 83 Hz idle and collections over the steady phase.
  const ws = worker.find((p) => p.name === "steady")!;
  const ng = noGc.find((p) => p.name === "steady")!;
  const wn0 = worker.find((p) => p.name === "no client")!;
  const os = oldWake.find((p) => p.name === "steady")!;
  const on0 = oldWake.find((p) => p.name === "no client")!;
  console.log(
    `\nsteady ${fmt(ws.ms / 1000, 0)} s at 83 Hz, idle: worker core thread ${ws.coreCpuPct === null ? "n/a" : fmt(ws.coreCpuPct)} % of a CPU, its process ${fmt(ws.processCpuPct ?? Number.NaN)} %`,
  );
  const per = (p: Phase) => `${fmt(p.coreUsPerCycle ?? Number.NaN, 0)} µs/cycle (${fmt(p.coreCpuPct ?? Number.NaN)} % of a CPU), ${fmt(p.coreWakeupsPerCycle ?? Number.NaN, 2)} wake-ups/cycle`;
  const ratio = (a: Phase, b: Phase) => fmt((a.coreUsPerCycle ?? Number.NaN) / (b.coreUsPerCycle ?? Number.NaN), 2);
  console.log("the core's thread at idle, per cycle it ran (CPU from its own schedstat, /v1/health core_cpu_ms and core_wakeups):");
  console.log(`  NAO, default wake-up (block, learned lead):   LoLA client answering every frame ${per(ws)}; no client ${per(wn0)}`);
  console.log(`  NAO, old wake-up (${OLD_WAKE_ARGS.join(" ")}): LoLA client answering every frame ${per(os)}; no client ${per(on0)}`);
  console.log(
    `  default / old, CPU per cycle: ${ratio(ws, os)}× with the client, ${ratio(wn0, on0)}× without; wake-ups per cycle ${fmt((ws.coreWakeupsPerCycle ?? Number.NaN) / (os.coreWakeupsPerCycle ?? Number.NaN), 2)}× / ${fmt((wn0.coreWakeupsPerCycle ?? Number.NaN) / (on0.coreWakeupsPerCycle ?? Number.NaN), 2)}×`,
  );
  console.log(`  P7 (4 ms cycle):       ${per(bodies.p7)}; per cycle ${ratio(bodies.p7, wn0)}× the NAO's without a client`);
  console.log(`  TNY-360 (5 ms cycle, its API server in the core: wake-up "wait"): ${per(bodies.tny360)}; per cycle ${ratio(bodies.tny360, wn0)}× the NAO's without a client`);
  console.log("  (the simulated chest board's own work, on a robot another processor, is in the NAO's figures: npm run bench -- wake splits it out)");
  const jo = jitterGrowth(oldWake);
  console.log(
    `  jitter p99 growth with 200 subscribers, old wake-up: ${fmt(jo.growth, 3)} ms (placebo ${fmt(jo.placebo, 3)} ms) against the default's ${fmt(jw.growth, 3)} ms (placebo ${fmt(jw.placebo, 3)} ms)`,
  );
  verdicts.push(
    ws.coreCpuPct === null
      ? "CPU share of the worker core's thread at 83 Hz idle ≤ 3 %: INCONCLUSIVE: this OS does not report per-thread CPU (/proc/thread-self/schedstat)"
      : `CPU share of the worker core's thread at 83 Hz idle, a LoLA client answering every frame, ≤ ${TARGET_CPU_PCT} % of a CPU: ${ws.coreCpuPct <= TARGET_CPU_PCT ? "MET" : "NOT MET"} (${fmt(ws.coreCpuPct)} %; old wake-up ${fmt(os.coreCpuPct ?? Number.NaN)} %; bench wake prints this machine's floor)${quick}`,
  );
  verdicts.push(
    wn0.coreCpuPct === null
      ? "CPU share of the worker core's thread at 83 Hz, no LoLA client: INCONCLUSIVE (no per-thread CPU)"
      : `CPU share of the worker core's thread at 83 Hz with no LoLA client ≤ ${TARGET_CPU_PCT} % of a CPU: ${wn0.coreCpuPct <= TARGET_CPU_PCT ? "MET" : "NOT MET"} (${fmt(wn0.coreCpuPct)} %; old wake-up ${fmt(on0.coreCpuPct ?? Number.NaN)} %)${quick}`,
  );
  verdicts.push(
    `CPU share of the whole runtime process (worker core, API idle) at 83 Hz ≤ ${TARGET_CPU_PCT} % of a CPU: ${(ws.processCpuPct ?? 99) <= TARGET_CPU_PCT ? "MET" : "NOT MET"} (${fmt(ws.processCpuPct ?? Number.NaN)} %)${quick}`,
  );
  console.log(
    `collections on the core's thread over the steady phase: worker ${ws.v8Gcs} started by V8 (+${ws.scheduledGcs} scheduled, every 100 ms); worker with --gc-every-ms 0: ${ng.v8Gcs} by V8 (longest ${fmt(ng.gcMaxMs, 2)} ms) in ${fmt(ng.ms / 1000, 0)} s`,
  );
  verdicts.push(
    `worker core: collections V8 started itself over ${fmt(ws.ms / 1000, 0)} s of steady state = 0: ${ws.v8Gcs === 0 ? "MET" : "NOT MET"} (${ws.v8Gcs}; with scheduling off the young generation filled ${ng.v8Gcs} time(s) in ${fmt(ng.ms / 1000, 0)} s)${STEADY_MS < 60_000 ? " (steady phase shorter than the 60 s asked: QUICK)" : ""}`,
  );
  verdicts.push(tnyVerdict);
  console.log("");
  for (const v of verdicts) console.log(`verdict: ${v}`);
}
