/**
 * `npm run bench -- physics`, the AIRBOT P7's part: one whole P7Robot cycle (the 4 ms cycle: the
 * arm service's trajectory and the arm under it) on a SimClock, the MuJoCo arm against the
 * kinematic one in the same run, while the arm servos along a slow sweep of every joint (its
 * servos, gravity and inertia all working). Each cycle timed: wall and CPU (getrusage) µs p50/p99,
 * the budget used of the 4 ms cycle, and the cycles run back to back as simulated over wall time
 * (what `--lockstep` can reach at most, before HTTP). Then real time: `serve --body p7 --sim X`
 * with its core in a worker, a client servoing the same sweep over the robot API at 50 Hz, both
 * arms at once in the same window: late cycles (own work / the machine's, as the NAO's section),
 * the cycle's exec p99 and the core's CPU, from /v1/health, and the same verdict as the NAO's.
 */
import { LEASE_HEADER } from "../src/bodies/link.js";
import type { SimKind } from "../src/bodies/sim-world.js";
import { physicsP7Model } from "../src/drivers/p7/sim.js";
import { startRuntime } from "../src/cli/serve.js";
import { SimClock } from "../src/runtime/clock.js";
import { P7_PERIOD_MS, P7Robot } from "../src/runtime/p7-robot.js";
import { type CycleCost, cycleCost, fmt, lateVerdict, reportCycleCost } from "./util.js";

/** A sweep through bent poses, every joint inside its limits and the flange at least 4 cm above the floor (the physics arm collides with it): 0.5 Hz. */
const CENTRE = [0, -0.8, 0, -1.2, 0, 0.3, 0];
const AMPLITUDE = [0.8, 0.4, 0.8, 0.6, 1, 0.4, 0.8];

async function p7StepCost(kind: SimKind, cycles: number): Promise<CycleCost> {
  const clock = new SimClock();
  const robot = await P7Robot.create({ clock, seed: 1, ...(kind === "physics" ? { simModel: await physicsP7Model() } : {}) });
  const lease = robot.authority.acquire("bench", "cli", 3_600_000);
  if (!lease.ok) throw new Error("no lease");
  const id = lease.lease.id;
  const target = new Float64Array(7);
  let t = 0;
  const sweep = (): void => {
    const s = Math.sin((2 * Math.PI * 0.5 * t) / 1000);
    for (let j = 0; j < 7; j++) target[j] = CENTRE[j]! + AMPLITUDE[j]! * s;
    robot.servoJoints(id, target);
  };
  const run = (n: number): void => {
    for (let i = 0; i < n; i++) {
      t += P7_PERIOD_MS;
      clock.set(t);
      sweep();
      robot.loop.step();
    }
  };
  robot.loop.step();
  run(1000); // into the sweep, and the JIT warm
  const cost = cycleCost(
    cycles,
    P7_PERIOD_MS,
    () => {
      t += P7_PERIOD_MS;
      clock.set(t);
      sweep();
    },
    () => robot.loop.step(),
  );
  await robot.shutdown();
  return cost;
}

interface Health {
  cycle: { late_cycles: number; late_cycles_own_work: number; exec_ms: { p99: number }; core_cpu_ms: number | null };
}

/** `serve --body p7 --sim kind` for `seconds`, a client servoing the sweep at 50 Hz: late cycles, exec p99, core CPU %. */
async function p7RealTime(kind: SimKind, seconds: number): Promise<{ late: number; lateOwnWork: number; execP99Ms: number; cpuPct: number }> {
  const rt = await startRuntime({ body: "p7", sim: kind, host: "127.0.0.1", apiPort: 0, lola: false, lolaReaders: 0, lolaGraceMs: 100, acceptBoardVersion: [11], seed: 1, tny: false, quiet: true });
  try {
    const api = rt.record.apiUrl;
    const json = { "content-type": "application/json" };
    const health = async (): Promise<Health> => (await (await fetch(`${api}/v1/health`)).json()) as Health;
    const { lease_id } = (await (await fetch(`${api}/v1/control`, { method: "POST", headers: json, body: JSON.stringify({ owner: "bench" }) })).json()) as { lease_id: string };
    const before = await health();
    const t0 = performance.now();
    while (performance.now() - t0 < seconds * 1000) {
      const s = Math.sin(2 * Math.PI * 0.5 * ((performance.now() - t0) / 1000));
      const positions = CENTRE.map((c, j) => c + AMPLITUDE[j]! * s);
      await fetch(`${api}/v1/commands/servo-joints`, { method: "POST", headers: { ...json, [LEASE_HEADER]: lease_id }, body: JSON.stringify({ positions }) });
      await new Promise((r) => setTimeout(r, 20));
    }
    const h = await health();
    const wallMs = performance.now() - t0;
    const cpuMs = h.cycle.core_cpu_ms !== null && before.cycle.core_cpu_ms !== null ? h.cycle.core_cpu_ms - before.cycle.core_cpu_ms : Number.NaN;
    return {
      late: h.cycle.late_cycles - before.cycle.late_cycles,
      lateOwnWork: h.cycle.late_cycles_own_work - before.cycle.late_cycles_own_work,
      execP99Ms: h.cycle.exec_ms.p99,
      cpuPct: (100 * cpuMs) / wallMs,
    };
  } finally {
    await rt.close();
  }
}

/** Section 5 of the physics bench: the P7, physics against kinematic. */
export async function p7Section(quick: boolean): Promise<void> {
  const cycles = quick ? 2000 : 10000;
  console.log(`5. AIRBOT P7: P7Robot cycle (4 ms) servoing a 0.5 Hz sweep of every joint, ${cycles} cycles each (µs)`);
  const kin = await p7StepCost("kinematic", cycles);
  const phy = await p7StepCost("physics", cycles);
  reportCycleCost(kin, phy, P7_PERIOD_MS);
  const seconds = quick ? 10 : 30;
  console.log(`   real time: serve --body p7 --sim X (core in a worker), a client servoing the sweep at 50 Hz for ${seconds} s; both arms at once, in the same window`);
  const [kinRt, phyRt] = await Promise.all([p7RealTime("kinematic", seconds), p7RealTime("physics", seconds)]);
  for (const [kind, r] of [
    ["kinematic", kinRt],
    ["physics", phyRt],
  ] as const) {
    console.log(`   ${kind.padEnd(10)} late cycles ${r.late} (own work ${r.lateOwnWork}, machine ${r.late - r.lateOwnWork})  exec p99 ${fmt(r.execP99Ms, 3)} ms  core CPU ${fmt(r.cpuPct, 1)} %`);
  }
  const counts = (r: typeof kinRt) => ({ late_cycles: r.late, late_cycles_own_work: r.lateOwnWork });
  console.log(`   ${lateVerdict(counts(phyRt), counts(kinRt), "arm")}`);
}
