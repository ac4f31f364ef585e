/**
 * `npm run bench -- fleet`: two tables, each figure beside a baseline measured in the same run.
 *
 * 1. E-stop-all under a request flood (docs/fleet.md): 10 and 50 light robots (bench/fleet-light-host.ts:
 *    the real fleet bridge over a latch, no body cycle; 25 per process) on a local nats-server;
 *    the e-stop-all latency (request to the last robot's answer, sent once its latch holds) p50/p99,
 *    without and with a flood of 90,000 `cmd.health` requests a second at one robot
 *    (test/support/nats-flood.mjs, its own process), against the same run's floor: the NATS broker's
 *    round trip (PING) and the same scatter-gather to bare NATS responders, one per robot, that
 *    answer at once (no bodylink). Target: every robot latched within 500 ms under the flood.
 *
 * 2. The fleet of real runtimes: 10 and 50 simulated NAOs (several per process: `startRuntime`,
 *    the code path of `bodylink serve`, K times):
 *   - messages/s through the broker (all bodylink.> subjects), against the nominal rate (robots × (10 + 1) Hz + events);
 *   - state latency, from the cycle that produced a state (its epoch_ms) to a fleet subscriber, p50/p99,
 *     against the broker's own round trip (nc.rtt()) and the state's period (100 ms at 10 Hz: a state waits up to one);
 *   - e-stop-all latency, from the request to the last robot's answer (sent after it latched), p50/p99 (target p99 < 50 ms);
 *   - runtime CPU per robot, with the fleet against the same robots without it.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { loadavg } from "node:os";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { NatsConnection } from "@nats-io/transport-node";
import { FleetClient } from "../src/fleet/client.js";
import { subject } from "../src/fleet/subjects.js";
import { quantileOfSorted } from "../src/runtime/timing.js";
import { generateSigningKey, type SigningKey } from "../src/fleet/sign.js";
import { startClosedFleet } from "../test/support/fleet.js";
import { hasNats, NATS_SKIP, startNats } from "../test/support/nats.js";
import { fmt } from "./util.js";

const HOST = fileURLToPath(new URL("./fleet-host.ts", import.meta.url));
const LIGHT_HOST = fileURLToPath(new URL("./fleet-light-host.ts", import.meta.url));
const FLOOD = fileURLToPath(new URL("../test/support/nats-flood.mjs", import.meta.url));
const QUICK = process.env.BENCH_QUICK === "1" || process.argv.includes("--quick");
const PER_PROCESS = 5;
const LIGHT_PER_PROCESS = 25;
const FLOOD_HZ = 90_000;
const ROUNDS = QUICK ? 10 : 30;
const LATCH_TARGET_MS = 500;
const WINDOW_MS = 5000;
const ESTOPS = 30;
/**
 * Table 2's fleet sizes (BENCH_FLEET_REAL=10,50). 10 by default: a simulated NAO runtime takes about 5 % of a
 * core at 83 Hz (docs/performance.md), so 50 of them want ~2.5 cores, more than a 2-core VM has; there they
 * starve each other and the row measures the CPU shortage, not the fleet. Table 1 covers 50 robots' e-stop.
 */
const REAL_ROBOTS = (process.env.BENCH_FLEET_REAL ?? "10").split(",").map(Number);
if (!REAL_ROBOTS.every((n) => Number.isInteger(n) && n > 0)) throw new Error(`BENCH_FLEET_REAL: a comma-separated list of robot counts, got "${process.env.BENCH_FLEET_REAL}"`);

interface Host {
  child: ChildProcess;
  ask(line: string, expect: RegExp): Promise<string>;
}

async function host(count: number, prefix: string, url: string, script = HOST, more: { args?: string[]; env?: Record<string, string> } = {}): Promise<Host> {
  const child = spawn(process.execPath, ["--import", "tsx", script, String(count), prefix, url, ...(more.args ?? [])], {
    stdio: ["pipe", "pipe", "inherit"],
    env: { ...process.env, BODYLINK_RUNTIME_DIR: `/tmp/bodylink-fleet-bench-${process.pid}`, ...more.env },
  });
  const lines = createInterface({ input: child.stdout! });
  const waiters: Array<{ re: RegExp; resolve: (l: string) => void }> = [];
  lines.on("line", (l) => {
    const i = waiters.findIndex((w) => w.re.test(l));
    if (i >= 0) waiters.splice(i, 1)[0]!.resolve(l);
  });
  const wait = (re: RegExp) => new Promise<string>((resolve) => waiters.push({ re, resolve }));
  await wait(/^ready$/);
  return {
    child,
    ask(line, re) {
      const p = wait(re);
      child.stdin!.write(`${line}\n`);
      return p;
    },
  };
}

async function hosts(robots: number, prefix: string, url: string, fleetDir?: string): Promise<Host[]> {
  const out: Host[] = [];
  for (let i = 0; i < robots; i += PER_PROCESS) out.push(await host(Math.min(PER_PROCESS, robots - i), `${prefix}${i / PER_PROCESS}`, url, HOST, fleetDir ? { args: [fleetDir] } : {}));
  return out;
}

/** The names fleet-host gives `robots` robots under `prefix` (PREFIX + process index, "-", index in the process). */
const namesOf = (robots: number, prefix: string) => Array.from({ length: robots }, (_, i) => `${prefix}${Math.floor(i / PER_PROCESS)}-${i % PER_PROCESS}`);

async function cpuPerRobot(hs: Host[], robots: number): Promise<{ cpuPct: number; late: number }> {
  await Promise.all(hs.map((h) => h.ask("mark", /^marked$/)));
  await new Promise((r) => setTimeout(r, WINDOW_MS));
  const rs = await Promise.all(hs.map(async (h) => JSON.parse(await h.ask("cpu", /^\{/)) as { cpuMs: number; late: number }));
  const cpuMs = rs.reduce((a, r) => a + r.cpuMs, 0);
  return { cpuPct: (100 * cpuMs) / WINDOW_MS / robots, late: rs.reduce((a, r) => a + r.late, 0) };
}

async function quit(hs: Host[]): Promise<void> {
  await Promise.all(
    hs.map(async (h) => {
      const exited = new Promise((r) => h.child.once("exit", r));
      h.child.stdin!.write("quit\n");
      await exited;
    }),
  );
}

const pct = (xs: number[], q: number) =>
  quantileOfSorted(
    [...xs].sort((a, b) => a - b),
    q,
  );
const p5099 = (xs: number[]) => `${fmt(pct(xs, 0.5), 1)}/${fmt(pct(xs, 0.99), 1)}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Publish once on `subj` and wait for `n` replies: ms to the last (Infinity when one is missing after 2 s). */
async function gather(nc: NatsConnection, subj: string, n: number): Promise<number> {
  const inbox = nc.subscribe(`_INBOX.bench.${Math.random().toString(36).slice(2)}`);
  const t0 = performance.now();
  let got = 0;
  let last = Number.POSITIVE_INFINITY;
  const timer = setTimeout(() => inbox.unsubscribe(), 2000);
  nc.publish(subj, "", { reply: inbox.getSubject() });
  for await (const _ of inbox) {
    if (++got === n) {
      last = performance.now() - t0;
      break;
    }
  }
  clearTimeout(timer);
  inbox.unsubscribe();
  return last;
}

interface EstopRun {
  floor: number[];
  estop: number[];
  /** Robots that did not answer a round, or answered without their latch holding. */
  failed: number;
}

/** `ROUNDS` rounds of floor, e-stop-all, reset, while `until()` is true. */
async function estopRounds(c: FleetClient, names: string[], until: () => boolean): Promise<EstopRun> {
  const out: EstopRun = { floor: [], estop: [], failed: 0 };
  for (let i = 0; i < ROUNDS && until(); i++) {
    out.floor.push(await gather(c.nc, "bench.floor", names.length));
    const r = await c.estop(null, { category: 0, reason: "bench", by: "bench" }, { expect: names, maxWaitMs: 3000 });
    out.failed += r.missing.length + r.replies.filter((x) => !x.estop.latched).length;
    out.estop.push(r.missing.length ? Number.POSITIVE_INFINITY : r.elapsedMs);
    // Under the flood the flooded robot takes no requests while it sheds (a reset among them): it
    // stays latched and the next round's e-stop finds it so, which still measures the stop's path.
    await c.reset(null, { reason: "bench" }, { expect: names, maxWaitMs: 500 });
    await sleep(50);
  }
  return out;
}

/** Table 1: e-stop-all over light robots, without and with the flood, against the floor. */
export async function estopUnderFlood(url: string, operator: SigningKey): Promise<void> {
  console.log(
    `e-stop-all under a ${FLOOD_HZ / 1000}k/s request flood; light robots (the real bridge, no body cycle); ${ROUNDS} rounds each; load average ${loadavg()[0]!.toFixed(1)}${QUICK ? " (QUICK)" : ""}`,
  );
  console.log("robots | broker rtt p50 ms | quiet: floor p50/p99 | e-stop-all p50/p99 (x floor) | flood: rate/s | floor p50/p99 | e-stop-all p50/p99 (x floor) | failed | verdict");
  for (const robots of [10, 50]) {
    const prefix = `light${robots}`;
    const hs: Host[] = [];
    for (let i = 0; i < robots; i += LIGHT_PER_PROCESS)
      hs.push(await host(Math.min(LIGHT_PER_PROCESS, robots - i), `${prefix}p${i / LIGHT_PER_PROCESS}`, url, LIGHT_HOST, { env: { BODYLINK_BENCH_OPERATOR: operator.publicKey } }));
    // The light robots trust the bench's operator key (resets are signed) and have no key of their own: an insecure client.
    const c = await FleetClient.connect({ url }, "fleet bench (e-stop)", { signer: operator, insecure: true });
    const names = (await c.robots()).filter((r) => r.name.startsWith(prefix)).map((r) => r.name);
    if (names.length !== robots) throw new Error(`${names.length} of ${robots} light robots joined`);
    const rtts: number[] = [];
    for (let i = 0; i < 20; i++) {
      const t0 = performance.now();
      await c.nc.flush(); // PING, PONG: the broker's round trip (nc.rtt() rounds to whole ms)
      rtts.push(performance.now() - t0);
    }
    const quiet = await estopRounds(c, names, () => true);

    const flood = spawn(process.execPath, [FLOOD, url, subject.cmd(`${prefix}p0-0`, "health"), String(FLOOD_HZ), String(2000 + ROUNDS * 800)], { stdio: ["ignore", "pipe", "inherit"] });
    let floodLine = "";
    let flooding = true;
    createInterface({ input: flood.stdout! }).on("line", (l) => {
      if (l.startsWith("{")) floodLine = l;
    });
    const floodDone = new Promise((r) => flood.once("exit", r)).then(() => {
      flooding = false;
    });
    await sleep(1000);
    const loud = await estopRounds(c, names, () => flooding);
    await floodDone;
    const rate = floodLine ? (JSON.parse(floodLine) as { rate: number }).rate : Number.NaN;
    await c.close();
    await quit(hs);
    const x = (e: number[], f: number[]) => fmt(pct(e, 0.5) / pct(f, 0.5), 1);
    const met = loud.failed === 0 && loud.estop.length > 0 && pct(loud.estop, 0.99) <= LATCH_TARGET_MS;
    console.log(
      `${String(robots).padStart(6)} | ${fmt(pct(rtts, 0.5), 2)} | ${p5099(quiet.floor)} | ${p5099(quiet.estop)} (x${x(quiet.estop, quiet.floor)}) | ${fmt(rate, 0)} | ${p5099(loud.floor)} | ${p5099(loud.estop)} (x${x(loud.estop, loud.floor)}) over ${loud.estop.length} | ${quiet.failed + loud.failed} | ${met ? "MET" : "NOT MET"} (p99 under the flood <= ${LATCH_TARGET_MS} ms, every robot latched)`,
    );
  }
}

export async function run(): Promise<void> {
  if (!hasNats) {
    console.log(`fleet bench skipped: ${NATS_SKIP}`);
    return;
  }
  // Table 1 on an open loopback broker (light robots, raw floor responders, the flood); table 2 on a
  // closed fleet as docs/fleet.md sets it up (each runtime its bundle; the operator "bench" signs the
  // resets; the admin counts every message).
  const open = await startNats();
  const fleet = await startClosedFleet({ robots: REAL_ROBOTS.flatMap((n) => namesOf(n, `r${n}-`)), operators: ["bench"] });
  const nats = fleet.nats;
  try {
    await estopUnderFlood(open.url, generateSigningKey("bench"));
    console.log(`\nthe fleet of simulated NAOs (real runtimes; ${REAL_ROBOTS.join(" and ")} robots: BENCH_FLEET_REAL=10,50 for more)`);
    console.log(`robots | msgs/s (nominal) | state latency p50/p99 ms (broker rtt) | e-stop-all p50/p99 ms | CPU/robot % with fleet (without) | late cycles`);
    for (const robots of REAL_ROBOTS) {
      // Baseline: the same robots without the fleet.
      const bare = await hosts(robots, `bare${robots}-`, "none");
      const base = await cpuPerRobot(bare, robots);
      await quit(bare);

      const hs = await hosts(robots, `r${robots}-`, nats.url, fleet.dir);
      const c = await fleet.client("bench");
      const admin = await fleet.client("admin");
      const present = (await c.robots()).filter((r) => r.name.startsWith(`r${robots}-`)).map((r) => r.name);
      if (present.length !== robots) throw new Error(`${present.length} of ${robots} robots joined`);
      let msgs = 0;
      const latencies: number[] = [];
      const all = admin.nc.subscribe("bodylink.>", { callback: () => void msgs++ });
      const states = c.subscribe("bodylink.*.state", (_n, body) => latencies.push(Date.now() - (body as { epoch_ms: number }).epoch_ms));
      const rtts: number[] = [];
      const [fleetCpu] = await Promise.all([
        cpuPerRobot(hs, robots),
        (async () => {
          for (let i = 0; i < 20; i++) {
            rtts.push(await c.nc.rtt());
            await new Promise((r) => setTimeout(r, WINDOW_MS / 25));
          }
        })(),
      ]);
      const rate = msgs / (WINDOW_MS / 1000);
      all.unsubscribe();
      states.unsubscribe();

      const estops: number[] = [];
      for (let i = 0; i < ESTOPS; i++) {
        const r = await c.estop(null, { category: 0, reason: "bench" }, { expect: present, maxWaitMs: 5000 });
        if (r.missing.length) throw new Error(`e-stop: no answer from ${r.missing.join(", ")}`);
        if (r.replies.some((x) => !x.estop.latched)) throw new Error("e-stop: a robot answered without latching");
        estops.push(r.elapsedMs);
        const reset = await c.reset(null, { reason: "bench" }, { expect: present, maxWaitMs: 5000 });
        if (reset.missing.length) throw new Error(`reset: no answer from ${reset.missing.join(", ")}`);
        if (reset.replies.some((x) => !x.ok)) throw new Error(`reset refused: ${JSON.stringify(reset.replies.find((x) => !x.ok)?.error)}`);
      }
      await c.close();
      await admin.close();
      await quit(hs);
      console.log(
        `${String(robots).padStart(6)} | ${fmt(rate, 0)} (${robots * 11}) | ${fmt(pct(latencies, 0.5), 1)}/${fmt(pct(latencies, 0.99), 1)} (${fmt(pct(rtts, 0.5), 2)}) | ${fmt(pct(estops, 0.5), 1)}/${fmt(pct(estops, 0.99), 1)}${pct(estops, 0.99) < 50 ? "" : " (over the 50 ms target)"} | ${fmt(fleetCpu.cpuPct, 1)} (${fmt(base.cpuPct, 1)}) = x${fmt(fleetCpu.cpuPct / base.cpuPct, 2)} | ${fleetCpu.late} (${base.late})`,
      );
    }
  } finally {
    await open.close();
    await fleet.close();
  }
}
