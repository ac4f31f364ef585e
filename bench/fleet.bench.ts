/**
 * `npm run bench -- fleet`: 10 and 50 simulated NAOs in a fleet on a real nats-server on this
 * machine (several per process: `startRuntime`, the code path of `bodylink serve`, K times).
 * Each figure comes with a baseline measured in the same run:
 *   - messages/s through the broker (all bodylink.> subjects), against the nominal rate (robots × (10 + 1) Hz + events);
 *   - state latency, from the cycle that produced a state (its epoch_ms) to a fleet subscriber, p50/p99,
 *     against the broker's own round trip (nc.rtt()) and the state's period (100 ms at 10 Hz: a state waits up to one);
 *   - e-stop-all latency, from the request to the last robot's answer (sent after it latched), p50/p99 (target p99 < 50 ms);
 *   - runtime CPU per robot, with the fleet against the same robots without it.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { FleetClient } from "../src/fleet/client.js";
import { quantileOfSorted } from "../src/runtime/timing.js";
import { hasNats, NATS_SKIP, startNats } from "../test/support/nats.js";
import { fmt } from "./util.js";

const HOST = fileURLToPath(new URL("./fleet-host.ts", import.meta.url));
const PER_PROCESS = 5;
const WINDOW_MS = 5000;
const ESTOPS = 30;

interface Host {
  child: ChildProcess;
  ask(line: string, expect: RegExp): Promise<string>;
}

async function host(count: number, prefix: string, url: string): Promise<Host> {
  const child = spawn(process.execPath, ["--import", "tsx", HOST, String(count), prefix, url], { stdio: ["pipe", "pipe", "inherit"], env: { ...process.env, BODYLINK_RUNTIME_DIR: `/tmp/bodylink-fleet-bench-${process.pid}` } });
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

async function hosts(robots: number, prefix: string, url: string): Promise<Host[]> {
  const out: Host[] = [];
  for (let i = 0; i < robots; i += PER_PROCESS) out.push(await host(Math.min(PER_PROCESS, robots - i), `${prefix}${i / PER_PROCESS}`, url));
  return out;
}

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

const pct = (xs: number[], q: number) => quantileOfSorted([...xs].sort((a, b) => a - b), q);

export async function run(): Promise<void> {
  if (!hasNats) {
    console.log(`fleet bench skipped: ${NATS_SKIP}`);
    return;
  }
  const nats = await startNats();
  try {
    console.log(`robots | msgs/s (nominal) | state latency p50/p99 ms (broker rtt) | e-stop-all p50/p99 ms | CPU/robot % with fleet (without) | late cycles`);
    for (const robots of [10, 50]) {
      // Baseline: the same robots without the fleet.
      const bare = await hosts(robots, `bare${robots}-`, "none");
      const base = await cpuPerRobot(bare, robots);
      await quit(bare);

      const hs = await hosts(robots, `r${robots}-`, nats.url);
      const c = await FleetClient.connect({ url: nats.url }, "fleet bench");
      const present = (await c.robots()).filter((r) => r.name.startsWith(`r${robots}-`)).map((r) => r.name);
      if (present.length !== robots) throw new Error(`${present.length} of ${robots} robots joined`);
      let msgs = 0;
      const latencies: number[] = [];
      const all = c.nc.subscribe("bodylink.>", { callback: () => void msgs++ });
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
      }
      await c.close();
      await quit(hs);
      console.log(
        `${String(robots).padStart(6)} | ${fmt(rate, 0)} (${robots * 11}) | ${fmt(pct(latencies, 0.5), 1)}/${fmt(pct(latencies, 0.99), 1)} (${fmt(pct(rtts, 0.5), 2)}) | ${fmt(pct(estops, 0.5), 1)}/${fmt(pct(estops, 0.99), 1)}${pct(estops, 0.99) < 50 ? "" : " (over the 50 ms target)"} | ${fmt(fleetCpu.cpuPct, 1)} (${fmt(base.cpuPct, 1)}) = x${fmt(fleetCpu.cpuPct / base.cpuPct, 2)} | ${fleetCpu.late} (${base.late})`,
      );
    }
  } finally {
    await nats.close();
  }
}
