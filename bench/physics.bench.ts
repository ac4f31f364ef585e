/**
 * `npm run bench -- physics`: the MuJoCo NAO against the kinematic one, in the same run.
 *
 * 1. Step cost: one whole NaoRobot cycle on the simulated chest board (the board steps its body),
 *    each cycle timed, µs p50/p99, for both bodies; budget used = p99 / 12 ms (target: physics
 *    ≤ 2 ms of the cycle at p99, i.e. ≤ 17 %).
 * 2. Real time: `serve --sim X` with its core in a worker and a LoLA controller answering every
 *    message for 60 s (--quick: 10 s) after 5 s of warm-up: late cycles, each attributed by the
 *    core thread's CPU time (/v1/health `late_cycles_own_work`; the rest were descheduled or woken
 *    late), the cycle's exec p99 and the core's CPU. Both bodies serve at once, in the same
 *    window, so the VM's stalls hit both (windows one after the other differed 4 against 8). The
 *    budget: neither kind of late cycle more frequent with physics than with the kinematic NAO
 *    (bench/util.ts lateVerdict says why not "0 own work"), and exec p99 ≤ 2 ms.
 * 3. Lockstep: `serve --lockstep --sim X` and the same client for 1,000 cycles: simulated over
 *    wall time (target ≥ 5× with physics).
 * 4. The TNY-360's cycle, physics against kinematic, walking (physics-tny360.ts).
 * 5. The AIRBOT P7's cycle, physics against kinematic, servoing a sweep (physics-p7.ts).
 * The machine's load changes every absolute figure: read the physics/kinematic ratios.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type RunningRuntime, startRuntime } from "../src/cli/serve.js";
import { SimClock } from "../src/runtime/clock.js";
import { NaoRobot } from "../src/runtime/nao-robot.js";
import type { NaoSimKind } from "../src/sim/nao/model.js";
import { MujocoNaoModel } from "../src/sim/nao/physics/mujoco-nao.js";
import { LolaCommandWriter } from "../src/wire/lola/command-message.js";
import { TestLolaClient, tmpSocketPath } from "../test/lola/client.js";
import { LOLA_SIM_RUNTIME_OPTIONS } from "../test/support/sim-runtime.js";
import { p7Section } from "./physics-p7.js";
import { tny360Section } from "./physics-tny360.js";
import { fmt, lateVerdict, percentile } from "./util.js";

const QUICK = process.argv.includes("--quick") || process.env.BENCH_QUICK === "1";
const CYCLE_MS = 12;
/** The real-time window starts this long after the controller connects (see section 2). */
const WARM_S = 5;

/**
 * Per-cycle cost of NaoRobot.cycle on the simulated board with `kind` underneath, µs: wall time
 * and the process's CPU time (getrusage, µs resolution). On a shared VM the wall time's tail is
 * the scheduler's (another process ran mid-cycle), not the step's; the CPU time is the step's own
 * cost whatever the load, and on a robot the core runs at SCHED_FIFO where the two agree.
 */
async function stepCost(kind: NaoSimKind, cycles: number): Promise<{ p50: number; p99: number; max: number; cpuP50: number; cpuP99: number }> {
  const clock = new SimClock();
  const robot = await NaoRobot.create({ clock, ...(kind === "physics" ? { simModel: await MujocoNaoModel.create("crouch") } : {}) });
  await robot.configure();
  const lease = robot.authority.acquire("bench", "cli", 3_600_000);
  if (!lease.ok) throw new Error("no lease");
  // Hold the posture it is in at stiffness 1: the physics robot stays crouched, contacts and all.
  robot.command(lease.lease.id, { Stiffness: new Array(25).fill(1), Position: Array.from(robot.sim!.body.positionRad) });
  let t = 0;
  const us: number[] = [];
  const cpuUs: number[] = [];
  for (let i = 0; i < cycles + 200; i++) {
    t += CYCLE_MS;
    clock.set(t);
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    robot.cycle(t);
    const wall = (performance.now() - t0) * 1000;
    const c = process.cpuUsage(c0);
    if (i >= 200) {
      us.push(wall);
      cpuUs.push(c.user + c.system);
    }
  }
  return { p50: percentile(us, 0.5), p99: percentile(us, 0.99), max: Math.max(...us), cpuP50: percentile(cpuUs, 0.5), cpuP99: percentile(cpuUs, 0.99) };
}

async function serveNao(kind: NaoSimKind, lockstep: boolean): Promise<{ rt: RunningRuntime; lolaPath: string }> {
  const lolaPath = tmpSocketPath();
  const rt = await startRuntime({ ...LOLA_SIM_RUNTIME_OPTIONS, body: "nao", sim: kind, lockstep, lolaPath, seed: 1 });
  return { rt, lolaPath };
}

/** A LoLA controller holding the measured posture at stiffness 1, answering every message until `until()` says stop. */
async function hold(lolaPath: string, until: (frames: number) => boolean): Promise<number> {
  const c = await TestLolaClient.connect(lolaPath);
  const w = new LolaCommandWriter().setFloats("Stiffness", new Float32Array(25).fill(1));
  let frames = 0;
  while (!until(frames)) {
    const f = await c.frame();
    if (frames === 0) {
      // Position is the first key of LoLA's sensor message: hold whatever the robot measures now.
      const { unpack } = await import("msgpackr");
      w.setFloats("Position", Float32Array.from((unpack(f) as { Position: number[] }).Position));
    }
    frames++;
    await c.send(w.bytes);
  }
  await c.close();
  return frames;
}

interface Health {
  cycle: { cycles: number; late_cycles: number; late_cycles_own_work: number; exec_ms: { p99: number; max: number }; core_cpu_ms: number | null };
}

export async function run(): Promise<void> {
  const runtimeDir = mkdtempSync(join(tmpdir(), "bl-bench-physics-"));
  process.env.BODYLINK_RUNTIME_DIR = runtimeDir;
  process.env.BODYLINK_LATE_CPU_TIME = "1"; // late cycles attributed by the core thread's CPU time (runtime/loop.ts)
  try {
    const cycles = QUICK ? 1000 : 5000;
    console.log(`1. step cost: NaoRobot.cycle on the simulated chest board, ${cycles} cycles each (µs)`);
    const kin = await stepCost("kinematic", cycles);
    const phy = await stepCost("physics", cycles);
    for (const [name, r] of [
      ["kinematic", kin],
      ["physics", phy],
    ] as const) {
      console.log(`   ${name.padEnd(10)} wall p50 ${fmt(r.p50, 1)}  p99 ${fmt(r.p99, 1)}  max ${fmt(r.max, 1)}   CPU p50 ${fmt(r.cpuP50, 1)}  p99 ${fmt(r.cpuP99, 1)}`);
    }
    console.log(`   physics/kinematic at p50: ${fmt(phy.p50 / kin.p50, 1)}x wall, ${fmt(phy.cpuP50 / Math.max(1, kin.cpuP50), 1)}x CPU`);
    const budget = phy.p99 / (CYCLE_MS * 1000);
    const cpuBudget = phy.cpuP99 / (CYCLE_MS * 1000);
    console.log(
      `   physics budget used at p99: wall ${fmt(budget * 100, 1)} %, CPU ${fmt(cpuBudget * 100, 1)} % of the 12 ms cycle (target ≤ 16.7 %, 2 ms): wall ${budget <= 2 / 12 ? "MET" : "NOT MET"}, CPU ${cpuBudget <= 2 / 12 ? "MET" : "NOT MET"}`,
    );

    const seconds = QUICK ? 10 : 60;
    console.log(`2. real time: serve --sim X (core in a worker), a LoLA controller for ${seconds} s after ${WARM_S} s of warm-up; both bodies at once, so the same window's stalls hit both`);
    const rows: Record<string, Health["cycle"] & { cpuPct: number }> = {};
    const served = await Promise.all((["kinematic", "physics"] as const).map(async (kind) => ({ kind, ...(await serveNao(kind, false)) })));
    try {
      await Promise.all(
        served.map(async ({ kind, rt, lolaPath }) => {
          // The window starts once the controller has run WARM_S: its first seconds compile the LoLA
          // path and MuJoCo's steps on the core's thread (own work, once, at 10x the kinematic's).
          const start = performance.now();
          const holding = hold(lolaPath, () => performance.now() - start > (WARM_S + seconds) * 1000);
          await new Promise((r) => setTimeout(r, WARM_S * 1000));
          const before = (await (await fetch(`${rt.record.apiUrl}/v1/health`)).json()) as Health;
          const t0 = performance.now();
          await holding;
          const h = (await (await fetch(`${rt.record.apiUrl}/v1/health`)).json()) as Health;
          const wallMs = performance.now() - t0;
          const cpuMs = h.cycle.core_cpu_ms !== null && before.cycle.core_cpu_ms !== null ? h.cycle.core_cpu_ms - before.cycle.core_cpu_ms : Number.NaN;
          rows[kind] = {
            ...h.cycle,
            late_cycles: h.cycle.late_cycles - before.cycle.late_cycles,
            late_cycles_own_work: h.cycle.late_cycles_own_work - before.cycle.late_cycles_own_work,
            cpuPct: (100 * cpuMs) / wallMs,
          };
        }),
      );
    } finally {
      for (const { rt } of served) await rt.close();
    }
    for (const [kind, r] of Object.entries(rows)) {
      console.log(
        `   ${kind.padEnd(10)} late cycles ${r.late_cycles} (own work ${r.late_cycles_own_work}, machine ${r.late_cycles - r.late_cycles_own_work})  exec p99 ${fmt(r.exec_ms.p99, 3)} ms, max ${fmt(r.exec_ms.max, 3)} ms  core CPU ${fmt(r.cpuPct, 1)} %`,
      );
    }
    console.log(`   ${lateVerdict(rows.physics!, rows.kinematic!)}`);

    const lockCycles = QUICK ? 300 : 1000;
    console.log(`3. lockstep: serve --lockstep --sim X, the same client for ${lockCycles} cycles`);
    const rtf: Record<string, number> = {};
    for (const kind of ["kinematic", "physics"] as const) {
      const { rt, lolaPath } = await serveNao(kind, true);
      const t0 = performance.now();
      await hold(lolaPath, (n) => n >= lockCycles);
      rtf[kind] = (lockCycles * CYCLE_MS) / (performance.now() - t0);
      await rt.close();
    }
    console.log(`   kinematic  ${fmt(rtf.kinematic!, 1)}x real time`);
    console.log(`   physics    ${fmt(rtf.physics!, 1)}x real time (${fmt(rtf.physics! / rtf.kinematic!, 2)} of kinematic): ${rtf.physics! >= 5 ? "MET" : "NOT MET"} (target ≥ 5x)`);
    await tny360Section(QUICK);
    await p7Section(QUICK);
    console.log(
      `   load average now: ${(await import("node:os"))
        .loadavg()
        .map((x) => x.toFixed(1))
        .join(" ")} on ${(await import("node:os")).availableParallelism()} cores`,
    );
  } finally {
    rmSync(runtimeDir, { recursive: true, force: true });
  }
}
