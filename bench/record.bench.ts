/**
 * `npm run bench -- record`: what recording costs the NAO's cycle, at full rate (every frame both
 * ways, every LoLA message, the decoded state every cycle, API state at 20 Hz, events), on the
 * wall clock with `serve`'s settings (scheduled GC every 100 ms), and how fast verify re-decodes.
 *
 * One runtime with the recording tap, alternating phases of BENCH_RECORD_PHASE_S (default 10 s):
 * "baseline" (the ring is drained and thrown away: no MCAP, no JSON, no compression, no disk)
 * and "recording" (the recorder writes an MCAP file), BENCH_RECORD_S (default 60) seconds of each
 * in all. Reported: the cycle's jitter p99 (|period − 12 ms|) and its execution time p99 per
 * phase, their medians and the difference (target: recording adds < 0.1 ms to the p99), late
 * cycles, MB per minute written, and the tap's own cost per cycle measured in isolation.
 *
 * Then the AIRBOT P7 and the TNY-360 with their core in its worker (serve's default), where the
 * core itself writes its state of every cycle into its ring: alternating phases of
 * BENCH_RECORD_BODY_PHASE_S (default 5 s; BENCH_QUICK=1: 2 s), BENCH_RECORD_BODY_ROUNDS (default
 * 2) of each, a core without a recording against a core recording to MCAP, started fresh per
 * phase. Reported from the core's own timing (health over the phase's cycles): jitter and
 * execution p99, late cycles, collections V8 started in the worker (target 0), records lost, MB
 * per minute; a verdict per body. Each phase runs in a child process with no node flags
 * (bench/record-host.mjs, the hosts from dist/, built if stale), so the worker runs the compiled
 * entry with V8's default young generation, as under serve (npm run bench's own
 * --max-semi-space-size would size the workers' too and hide collections). Then, in each recording core's thread (src/runtime/allocation.ts):
 * the JS heap allocated per cycle against the baseline core's, and V8's sampling heap profile of
 * the recording code itself (src/record/, src/shm/: target 0 bytes; late-cycle events excepted,
 * they allocate their JSON only when a cycle was late).
 * BENCH_RECORD_NAO=0 skips the NAO part, BENCH_RECORD_BODIES=0 this one.
 */
import { mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RING_CHANNEL } from "../src/record/channels.js";
import { PreferenceAssembler } from "../src/record/prefs-from-frames.js";
import { RECORD_RING_BYTES, Recorder } from "../src/record/recorder.js";
import { RecordTap, TappedChestboard } from "../src/record/tap.js";
import { MonotonicClock } from "../src/runtime/clock.js";
import { NaoRobot } from "../src/runtime/nao-robot.js";
import { startLolaServer } from "../src/serve/lola/server.js";
import { ByteRing } from "../src/shm/ring.js";
import { verifyRecording } from "../src/verify/verify.js";
import type { BodyKind } from "../src/bodies/registry.js";
import { execFileSync, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { fmt, median, timeIt } from "./util.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function run(): Promise<void> {
  if (process.env.BENCH_RECORD_NAO !== "0") await nao();
  if (process.env.BENCH_RECORD_BODIES !== "0") {
    // dist/ up to date: the child runs the compiled worker entry, as serve does
    execFileSync(process.execPath, ["bin/build.js", "--incremental"], { cwd: root, stdio: "inherit" });
    for (const body of ["p7", "tny360"] as const) await workerBody(body);
  }
}

/** The bodies this part measures (the NAO has its own part above). */
type ThreadedBody = Exclude<BodyKind, "nao">;

const root = fileURLToPath(new URL("..", import.meta.url));

const QUICK = process.env.BENCH_QUICK === "1" || process.argv.includes("--quick");

interface BodyPhase {
  recording: boolean;
  cycles: number;
  jitter: number;
  exec: number;
  late: number;
  gc: number;
  dropped: number;
  mbPerMin: number;
  /** JS heap the core's thread allocated per cycle (everything it runs). */
  heapPerCycle: number;
  /** Recording phases: bytes V8's sampling profile attributes to the recording code, and to late-cycle events. */
  recordingBytes: number;
  /** The recording code's sites that allocated ("function (file:line)": bytes). */
  recordingSites: string[];
  eventBytes: number;
  sampledCycles: number;
}

/** Cycles measured for the allocation figures. */
const ALLOC_CYCLES = QUICK ? 250 : 1000;

/** One phase in a child process with no node flags (bench/record-host.mjs: a fresh core from dist/, recording or not). */
function bodyPhase(body: ThreadedBody, recording: boolean, phaseS: number, file: string): Promise<BodyPhase> {
  const child = fork(join(root, "bench/record-host.mjs"), [JSON.stringify({ body, recording, phaseS, allocCycles: ALLOC_CYCLES, file })], {
    execArgv: [],
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  return new Promise((resolve, reject) => {
    child.once("message", (m: { ok: true; value: BodyPhase } | { ok: false; error: string }) => (m.ok ? resolve(m.value) : reject(new Error(m.error))));
    child.once("exit", (code) => reject(new Error(`bench/record-host.mjs exited with ${code} before answering`)));
  });
}

async function workerBody(body: ThreadedBody): Promise<void> {
  const phaseS = Number(process.env.BENCH_RECORD_BODY_PHASE_S ?? (QUICK ? 2 : 5));
  const rounds = Number(process.env.BENCH_RECORD_BODY_ROUNDS ?? (QUICK ? 1 : 2));
  const dir = join(tmpdir(), `bl-bench-record-${body}-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  const rows: BodyPhase[] = [];
  console.log(`\n${body}, core in its worker: ${rounds} rounds of ${phaseS} s without and with a recording`);
  try {
    for (let i = 0; i < rounds * 2; i++) {
      const r = await bodyPhase(body, i % 2 === 1, phaseS, join(dir, `round-${i}.mcap`));
      rows.push(r);
      console.log(
        `  round ${Math.floor(i / 2) + 1} ${(r.recording ? "recording" : "baseline").padEnd(9)}: ${r.cycles} cycles, jitter p99 ${fmt(r.jitter, 3)} ms, exec p99 ${fmt(r.exec, 3)} ms, late ${r.late}, V8-started GCs in the worker ${r.gc}${r.recording ? `, ${r.dropped} records lost, ${fmt(r.mbPerMin, 2)} MB/min` : ""}`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const of = (rec: boolean, k: "jitter" | "exec" | "mbPerMin" | "heapPerCycle") => median(rows.filter((r) => r.recording === rec).map((r) => r[k]));
  const dj = of(true, "jitter") - of(false, "jitter");
  const de = of(true, "exec") - of(false, "exec");
  const base = rows.filter((r) => !r.recording).map((r) => r.jitter);
  const noise = base.length > 1 ? Math.max(...base) - Math.min(...base) : 0;
  const recRows = rows.filter((r) => r.recording);
  const gc = recRows.reduce((a, r) => a + r.gc, 0);
  const lost = recRows.reduce((a, r) => a + r.dropped, 0);
  // A verdict needs the baselines' own spread: with one round there is none to compare against.
  const timing =
    base.length < 2
      ? "INCONCLUSIVE (one round: no baseline spread to judge by; run BENCH_RECORD_BODY_ROUNDS=3 or more)"
      : noise > 0.1
        ? `INCONCLUSIVE (the baselines alone spread ${fmt(noise, 3)} ms)`
        : dj < 0.1
          ? "PASS"
          : "FAIL";
  console.log(`  jitter p99: baseline ${fmt(of(false, "jitter"), 3)} ms, recording ${fmt(of(true, "jitter"), 3)} ms: ${dj >= 0 ? "+" : ""}${fmt(dj, 3)} ms   target < 0.1 ms: ${timing}`);
  console.log(
    `  exec p99  : baseline ${fmt(of(false, "exec"), 3)} ms, recording ${fmt(of(true, "exec"), 3)} ms: ${de >= 0 ? "+" : ""}${fmt(de, 3)} ms (${fmt(of(false, "exec") > 0 ? of(true, "exec") / of(false, "exec") : 0, 2)}×)`,
  );
  const recBytes = recRows.reduce((a, r) => a + r.recordingBytes, 0);
  const evBytes = recRows.reduce((a, r) => a + r.eventBytes, 0);
  const sampled = recRows.reduce((a, r) => a + r.sampledCycles, 0);
  console.log(
    `  core's JS heap per cycle: baseline ${fmt(of(false, "heapPerCycle"), 0)} B, recording ${fmt(of(true, "heapPerCycle"), 0)} B (${fmt(of(false, "heapPerCycle") > 0 ? of(true, "heapPerCycle") / of(false, "heapPerCycle") : 0, 2)}×; the core's own allocation is bench core-gc's subject)`,
  );
  console.log(`  sampled in the recording code over ${sampled} cycles: ${recBytes} B (target 0: ${recBytes === 0 ? "PASS" : "FAIL"}); late-cycle events ${evBytes} B (only when a cycle was late)`);
  for (const site of new Set(recRows.flatMap((r) => r.recordingSites))) console.log(`    ${site}`);
  console.log(
    `  worker GCs V8 started while recording: ${gc} (target 0: ${gc === 0 ? "PASS" : "FAIL"}); records lost: ${lost} (${lost === 0 ? "PASS" : "FAIL"}); written ${fmt(of(true, "mbPerMin"), 2)} MB per minute`,
  );
}

async function nao(): Promise<void> {
  const totalS = Number(process.env.BENCH_RECORD_S ?? 60);
  const phaseS = Number(process.env.BENCH_RECORD_PHASE_S ?? 10);
  const rounds = Math.max(1, Math.round(totalS / phaseS));
  const dir = join(tmpdir(), `bl-bench-record-${process.pid}`);
  const clock = new MonotonicClock();
  const ring = ByteRing.create(RECORD_RING_BYTES);
  const tap = new RecordTap(ring, clock);
  const robot = await NaoRobot.create({ clock, youngGcEveryMs: 100, wrapTransport: (t) => new TappedChestboard(t, tap) });
  await robot.start();
  const lola = await startLolaServer(robot, { path: join(tmpdir(), `bl-bench-${process.pid}.sock`), tap: tap.lola, log: () => {} });
  // The preference reads are in the ring now; keep the block for every phase's file.
  const prefs = new PreferenceAssembler();
  ring.drain((channel, _f, _t, offset, length) => {
    if (channel === RING_CHANNEL.chestIn) prefs.push(ring.bytes.slice(offset, offset + length));
  });
  const prefsBlock = prefs.result() ?? undefined;
  const noop = () => {};
  const rows: Array<{ phase: string; jitter: number; exec: number; late: number; cycles: number; mbPerMin: number }> = [];
  let lastFile = "";
  try {
    for (let i = 0; i < rounds * 2; i++) {
      const recording = i % 2 === 1;
      let rec: Recorder | null = null;
      let drain: NodeJS.Timeout | null = null;
      if (recording) {
        lastFile = join(dir, `round-${i}.mcap`);
        rmSync(dir, { recursive: true, force: true });
        mkdirSync(dir, { recursive: true });
        rec = await Recorder.start({ tap, robot, transport: "sim" }, { path: lastFile, ...(prefsBlock ? { prefsBlock } : {}) });
      } else {
        drain = setInterval(() => ring.drain(noop), 10);
      }
      await sleep(500); // settle into the phase
      robot.loop.timing.reset();
      await sleep(phaseS * 1000);
      const s = robot.loop.timing.summary();
      const p = rec?.progress();
      if (rec) await rec.stop();
      if (drain) clearInterval(drain);
      rows.push({ phase: recording ? "recording" : "baseline", jitter: s.jitterP99Ms, exec: s.execMs.p99, late: s.lateCycles, cycles: s.cycles, mbPerMin: p?.mbPerMin ?? 0 });
      const r = rows[rows.length - 1]!;
      console.log(
        `round ${Math.floor(i / 2) + 1} ${r.phase.padEnd(9)}: ${r.cycles} cycles, jitter p99 ${fmt(r.jitter, 3)} ms, exec p99 ${fmt(r.exec, 3)} ms, late ${r.late}${recording ? `, ${fmt(r.mbPerMin, 2)} MB/min` : ""}`,
      );
    }
  } finally {
    await lola.close();
    await robot.stop();
  }
  const of = (phase: string, k: "jitter" | "exec" | "mbPerMin") => median(rows.filter((r) => r.phase === phase).map((r) => r[k]));
  const dj = of("recording", "jitter") - of("baseline", "jitter");
  const de = of("recording", "exec") - of("baseline", "exec");
  console.log(`medians over ${rounds} rounds of ${phaseS} s each:`);
  // The verdict needs a quiet machine: when the baseline's own spread between rounds exceeds the target, say so.
  const base = rows.filter((r) => r.phase === "baseline").map((r) => r.jitter);
  const noise = Math.max(...base) - Math.min(...base);
  const verdict = noise > 0.1 ? `INCONCLUSIVE (the baselines alone spread ${fmt(noise, 3)} ms between rounds)` : dj < 0.1 ? "PASS" : "FAIL";
  console.log(`  jitter p99: baseline ${fmt(of("baseline", "jitter"), 3)} ms, recording ${fmt(of("recording", "jitter"), 3)} ms: ${dj >= 0 ? "+" : ""}${fmt(dj, 3)} ms   target < 0.1 ms: ${verdict}`);
  console.log(`  exec p99  : baseline ${fmt(of("baseline", "exec"), 3)} ms, recording ${fmt(of("recording", "exec"), 3)} ms: ${de >= 0 ? "+" : ""}${fmt(de, 3)} ms`);
  console.log(`  written   : ${fmt(of("recording", "mbPerMin"), 2)} MB per minute (zstd chunks)`);

  // The tap's own work per cycle, isolated: one command frame, one ack, one answer, one LoLA message, one state.
  const frame = new Uint8Array(512).fill(1);
  const lolaMsg = new Uint8Array(896).fill(2);
  const perCycle = () => {
    tap.bytes(1, 0, frame, 300);
    tap.transfer(2, 0x14, 5, frame, 5);
    tap.bytes(2, 0, frame, 400);
    tap.lola.sensor(lolaMsg, 896);
    tap.naoState(robot.state);
  };
  const drainEvery = () => {
    perCycle();
    if (ring.usedBytes > RECORD_RING_BYTES / 2) ring.drain(noop);
  };
  const tapNs = median([timeIt(drainEvery, 200), timeIt(drainEvery, 200), timeIt(drainEvery, 200)]);
  console.log(`  the tap's copy per cycle (frames, ack, LoLA message, state): ${fmt(tapNs / 1000, 2)} µs`);

  if (lastFile) {
    const t0 = performance.now();
    const { result } = await verifyRecording(lastFile);
    const s = (performance.now() - t0) / 1000;
    console.log(
      `verify: ${result.messages.toLocaleString("en-US")} LoLA messages (${result.answerFrames.toLocaleString("en-US")} frames) in ${fmt(s, 2)} s: ${fmt(result.messages / s, 0)} messages/s, ${result.identicalValues === result.values ? "all identical" : "DIFFERENCES"}`,
    );
  }
  rmSync(dir, { recursive: true, force: true });
}
