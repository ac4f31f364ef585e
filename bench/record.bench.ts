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
import { fmt, median, timeIt } from "./util.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function run(): Promise<void> {
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
      console.log(`round ${Math.floor(i / 2) + 1} ${r.phase.padEnd(9)}: ${r.cycles} cycles, jitter p99 ${fmt(r.jitter, 3)} ms, exec p99 ${fmt(r.exec, 3)} ms, late ${r.late}${recording ? `, ${fmt(r.mbPerMin, 2)} MB/min` : ""}`);
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
    console.log(`verify: ${result.messages.toLocaleString("en-US")} LoLA messages (${result.answerFrames.toLocaleString("en-US")} frames) in ${fmt(s, 2)} s: ${fmt(result.messages / s, 0)} messages/s, ${result.identicalValues === result.values ? "all identical" : "DIFFERENCES"}`);
  }
  rmSync(dir, { recursive: true, force: true });
}
