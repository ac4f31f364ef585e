/**
 * `npm run bench -- cores`: the P7 and TNY-360 cores on the main thread against their threaded
 * cores (serve's default), and the TNY-360 API server in the core's thread against on the main
 * thread — in one run, each `bodylink serve` a child process, every figure a ratio against the
 * in-thread core (`--core main`) measured in the same run.
 *
 * Per configuration, phases of PHASE_MS each (BODYLINK_BENCH_PHASE_MS overrides):
 * - quiet: nothing but the measuring clients;
 * - api: 200 KB JSON bodies to a command route every 100 ms, without a lease (refused after
 *   parsing: the main thread's worst case, docs/security.md), plus the latency client;
 * - stall: the main thread blocks for 1 s (serve's test hook, SIGUSR2 with BODYLINK_TEST_HOOKS=1)
 *   300 ms into the phase, plus the latency client;
 * - tny (TNY-360 only): two TNY-360 connections hammer the API server in a closed loop with 60 KB
 *   frames (answered OutOfMemory after `ws` read them: the server's worst case a client can send),
 *   plus the latency client.
 * Measured: the core's cycle lateness (start − deadline) p99/max and late cycles over the phase
 * (/v1/health?window_cycles=N, counted by the core), and the command latency a client sees: the
 * TNY-360 client's body.setVelocity round trip (request → applied by the simulated robot → reply),
 * or for the P7 a servo-joints POST with a lease (in-thread: applied → 200; threaded: validated on the
 * main thread and posted to the core's mailbox → 200, applied at the core's next cycle).
 *
 * Verdicts: per body, does the worker keep the cycle on time under the API load (lateness p99 with
 * load ≤ 2× its quiet p99 + 0.5 ms, and lower than the in-thread core's under the same load), and
 * what does it cost in command latency (ratio); for the TNY-360 server, which placement gives the
 * lower command latency and whether a hammered server in the core's thread costs the cycle more
 * than the same hammering costs the in-thread core.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import WebSocket from "ws";
import { LEASE_HEADER } from "../src/bodies/link.js";
import type { BodyKind } from "../src/bodies/registry.js";
import { quantileOfSorted } from "../src/runtime/timing.js";
import { actionSpec } from "../src/wire/tny/constants.js";
import { encodeRequest } from "../src/wire/tny/encode.js";
import { fmt } from "./util.js";

const PHASE_MS = Number(process.env.BODYLINK_BENCH_PHASE_MS) || 3000;

interface Config {
  readonly name: string;
  readonly body: Exclude<BodyKind, "nao">;
  readonly args: readonly string[];
}

/** The "stall" load blocks the main thread for 1 s, the default heartbeat bound: a worker core would latch "host unresponsive" (src/rt/host-watch.ts). */
const HOST_TIMEOUT = ["--host-timeout-ms", "3000"];

const CONFIGS: readonly Config[] = [
  { name: "p7 core main", body: "p7", args: ["--core", "main"] },
  { name: "p7 core worker", body: "p7", args: ["--core", "worker", ...HOST_TIMEOUT] },
  { name: "tny core main", body: "tny360", args: ["--core", "main"] },
  { name: "tny core worker, server worker", body: "tny360", args: ["--core", "worker", "--tny-server", "worker", ...HOST_TIMEOUT] },
  { name: "tny core worker, server main", body: "tny360", args: ["--core", "worker", "--tny-server", "main", ...HOST_TIMEOUT] },
];

interface Serve {
  child: ChildProcess;
  apiUrl: string;
  tnyUrl: string | null;
  periodMs: number;
  close(): Promise<void>;
}

async function serve(c: Config): Promise<Serve> {
  const dir = mkdtempSync(join(tmpdir(), "bodylink-bench-cores-"));
  const child = spawn(process.execPath, ["bin/bodylink.js", "serve", "--body", c.body, "--api-port", "0", ...(c.body === "tny360" ? ["--tny-port", "0"] : []), ...c.args], {
    env: { ...process.env, BODYLINK_RUNTIME_DIR: dir, BODYLINK_TEST_HOOKS: "1" },
    stdio: ["ignore", "pipe", "ignore"],
  });
  let out = "";
  child.stdout!.on("data", (d) => {
    out += String(d);
  });
  const t0 = Date.now();
  while (!/Ctrl-C to stop/.test(out)) {
    if (Date.now() - t0 > 60_000 || child.exitCode !== null) {
      child.kill("SIGKILL");
      throw new Error(`serve ${c.args.join(" ")} did not start: ${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    child,
    apiUrl: /robot API: (http:\/\/\S+)/.exec(out)![1]!,
    tnyUrl: /TNY-360 API: (ws:\/\/\S+)/.exec(out)?.[1] ?? null,
    periodMs: c.body === "p7" ? 4 : 5,
    async close() {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

interface Health {
  cycle: { cycles: number; late_cycles: number; lateness_ms: { p99: number; max: number } };
}

async function health(s: Serve, windowCycles?: number): Promise<Health> {
  return (await (await fetch(`${s.apiUrl}/v1/health${windowCycles ? `?window_cycles=${windowCycles}` : ""}`)).json()) as Health;
}

/** A closed-loop TNY-360 client on one connection: send, wait for the reply (by msg_id), repeat. */
class TnyLoop {
  readonly ws: WebSocket;
  #pending: ((b: Buffer) => void) | null = null;
  private constructor(ws: WebSocket) {
    this.ws = ws;
    ws.on("message", (d: Buffer) => {
      const p = this.#pending;
      this.#pending = null;
      p?.(d);
    });
  }
  static async open(url: string): Promise<TnyLoop> {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    return new TnyLoop(ws);
  }
  roundTrip(frame: Uint8Array): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      this.#pending = resolve;
      this.ws.send(frame, { binary: true }, (e) => e && reject(e));
    });
  }
  close(): void {
    this.ws.close();
  }
}

interface PhaseResult {
  lateCycles: number;
  latenessP99Ms: number;
  latenessMaxMs: number;
  commandP50Us: number;
  commandP99Us: number;
  commandMaxUs: number;
  commands: number;
}

const BIG = JSON.stringify({ positions: Array.from({ length: (200 * 1024) / 20 }, () => 0.123456789012345) });
const setVelocity = actionSpec("body", "setVelocity");
const OVERSIZED = (() => {
  const f = new Uint8Array(60 * 1024);
  f.set(encodeRequest(1, actionSpec("system", "ping").module, actionSpec("system", "ping").action, []));
  return f;
})();

type Load = "quiet" | "api" | "stall" | "tny";

async function phase(s: Serve, c: Config, load: Load): Promise<PhaseResult> {
  const stop = { done: false };
  const loads: Promise<void>[] = [];
  if (load === "api") {
    const route = c.body === "p7" ? "/v1/commands/servo-joints" : "/v1/commands/joints";
    loads.push(
      (async () => {
        while (!stop.done) {
          await fetch(`${s.apiUrl}${route}`, { method: "POST", headers: { "content-type": "application/json" }, body: BIG }).catch(() => {});
          await new Promise((r) => setTimeout(r, 100));
        }
      })(),
    );
  }
  const hammers: TnyLoop[] = [];
  if (load === "tny" && s.tnyUrl) {
    for (let i = 0; i < 2; i++) {
      const h = await TnyLoop.open(s.tnyUrl);
      hammers.push(h);
      loads.push(
        (async () => {
          while (!stop.done) await h.roundTrip(OVERSIZED);
        })(),
      );
    }
  }
  if (load === "stall") {
    const t = setTimeout(() => s.child.kill("SIGUSR2"), 300);
    loads.push(new Promise((r) => setTimeout(r, 300)).then(() => clearTimeout(t)));
  }
  // the latency client
  const lat: number[] = [];
  const h0 = await health(s);
  const t0 = performance.now();
  if (c.body === "tny360") {
    const client = await TnyLoop.open(s.tnyUrl!);
    let id = 1;
    while (performance.now() - t0 < PHASE_MS) {
      const a = performance.now();
      await client.roundTrip(encodeRequest(id++ & 0xffff, setVelocity.module, setVelocity.action, [0, 0, 0, true]));
      lat.push((performance.now() - a) * 1000);
      await new Promise((r) => setTimeout(r, 5));
    }
    client.close();
  } else {
    const headers = { "content-type": "application/json" };
    const lease = (await (await fetch(`${s.apiUrl}/v1/control`, { method: "POST", headers, body: JSON.stringify({ owner: "bench", lease_ms: 60_000 }) })).json()) as { lease_id: string };
    const body = JSON.stringify({ positions: [0, 0, 0, 0, 0, 0, 0] });
    while (performance.now() - t0 < PHASE_MS) {
      const a = performance.now();
      await (await fetch(`${s.apiUrl}/v1/commands/servo-joints`, { method: "POST", headers: { ...headers, [LEASE_HEADER]: lease.lease_id }, body })).arrayBuffer();
      lat.push((performance.now() - a) * 1000);
      await new Promise((r) => setTimeout(r, 5));
    }
    await fetch(`${s.apiUrl}/v1/control`, { method: "DELETE", headers: { [LEASE_HEADER]: lease.lease_id, "x-bodylink-client": "bench" } }).catch(() => {});
  }
  const elapsed = performance.now() - t0;
  stop.done = true;
  for (const h of hammers) h.close();
  await Promise.allSettled(loads);
  const h1 = await health(s, Math.max(10, Math.floor(elapsed / s.periodMs)));
  lat.sort((x, y) => x - y);
  return {
    lateCycles: h1.cycle.late_cycles - h0.cycle.late_cycles,
    latenessP99Ms: h1.cycle.lateness_ms.p99,
    latenessMaxMs: h1.cycle.lateness_ms.max,
    commandP50Us: quantileOfSorted(lat, 0.5),
    commandP99Us: quantileOfSorted(lat, 0.99),
    commandMaxUs: lat.length ? lat[lat.length - 1]! : 0,
    commands: lat.length,
  };
}

export async function run(): Promise<void> {
  const results = new Map<string, Map<string, PhaseResult>>();
  for (const c of CONFIGS) {
    const s = await serve(c);
    try {
      await new Promise((r) => setTimeout(r, 1000)); // past start-up (compiling, first collections)
      const byPhase = new Map<string, PhaseResult>();
      for (const load of c.body === "tny360" ? (["quiet", "api", "stall", "tny"] as const) : (["quiet", "api", "stall"] as const)) {
        byPhase.set(load, await phase(s, c, load));
        await new Promise((r) => setTimeout(r, 500)); // the stall's backlog drains before the next phase
      }
      results.set(c.name, byPhase);
    } finally {
      await s.close();
    }
  }
  console.log(`phases of ${PHASE_MS} ms; lateness = cycle start − deadline, over the phase's cycles; command = client round trip`);
  console.log("config                            phase  late  lateness p99/max ms   command p50/p99/max µs (n)          ×main p99 late  ×main cmd p50");
  for (const c of CONFIGS) {
    const base = results.get(c.body === "p7" ? "p7 core main" : "tny core main")!;
    for (const [load, r] of results.get(c.name)!) {
      const b = base.get(load)!;
      console.log(
        `${c.name.padEnd(33)} ${load.padEnd(6)} ${String(r.lateCycles).padStart(5)}  ${fmt(r.latenessP99Ms, 3).padStart(7)} / ${fmt(r.latenessMaxMs, 2).padStart(7)}   ${fmt(r.commandP50Us, 0).padStart(7)} / ${fmt(r.commandP99Us, 0).padStart(7)} / ${fmt(r.commandMaxUs, 0).padStart(8)} (${r.commands})   ${fmt(r.latenessP99Ms / Math.max(b.latenessP99Ms, 1e-3), 2).padStart(6)}         ${fmt(r.commandP50Us / b.commandP50Us, 2).padStart(6)}`,
      );
    }
  }
  const r = (n: string, p: string) => results.get(n)!.get(p)!;
  const isolates = (main: string, worker: string) => {
    const w = r(worker, "api");
    const q = r(worker, "quiet");
    const m = r(main, "api");
    return w.latenessP99Ms <= 2 * q.latenessP99Ms + 0.5 && w.latenessP99Ms < m.latenessP99Ms;
  };
  for (const [body, main, worker] of [
    ["P7", "p7 core main", "p7 core worker"],
    ["TNY-360", "tny core main", "tny core worker, server worker"],
  ] as const) {
    const ok = isolates(main, worker);
    const cost = r(worker, "quiet").commandP50Us / r(main, "quiet").commandP50Us;
    console.log(
      `verdict ${body}: ${ok ? "the worker keeps the cycle on time under the API load" : "INCONCLUSIVE: under the API load the worker's lateness p99 is not clearly below the in-thread core's (or rose above 2× its quiet p99 + 0.5 ms)"} (api p99 ${fmt(r(worker, "api").latenessP99Ms, 3)} ms vs in-thread ${fmt(r(main, "api").latenessP99Ms, 3)} ms); command latency ×${fmt(cost, 2)} of the in-thread core's when quiet`,
    );
  }
  for (const [body, main, worker] of [
    ["P7", "p7 core main", "p7 core worker"],
    ["TNY-360", "tny core main", "tny core worker, server worker"],
  ] as const) {
    const m = r(main, "stall");
    const w = r(worker, "stall");
    console.log(
      `verdict ${body}, main thread blocked 1 s: cycle lateness max ${fmt(w.latenessMaxMs, 1)} ms with the worker vs ${fmt(m.latenessMaxMs, 1)} ms in-thread (×${fmt(w.latenessMaxMs / Math.max(m.latenessMaxMs, 1e-3), 3)}): ${w.latenessMaxMs < 500 && m.latenessMaxMs >= 500 ? "the worker's cycle did not notice" : "INCONCLUSIVE"}`,
    );
  }
  const stallInCore = r("tny core worker, server worker", "stall").commandMaxUs / 1000;
  const stallOnMain = r("tny core worker, server main", "stall").commandMaxUs / 1000;
  console.log(
    `verdict TNY-360 server, main thread blocked 1 s: the slowest TNY-360 command round trip was ${fmt(stallInCore, 1)} ms with the server in the core's thread vs ${fmt(stallOnMain, 1)} ms on the main thread: ${stallInCore < 500 && stallOnMain >= 500 ? "in the core, a TNY-360 client keeps commanding the body through a blocked main thread" : "INCONCLUSIVE"}`,
  );
  const inCore = r("tny core worker, server worker", "quiet").commandP50Us;
  const onMain = r("tny core worker, server main", "quiet").commandP50Us;
  const underApiInCore = r("tny core worker, server worker", "api").commandP50Us;
  const underApiOnMain = r("tny core worker, server main", "api").commandP50Us;
  const hammeredInCore = r("tny core worker, server worker", "tny").latenessP99Ms;
  const hammeredInThread = r("tny core main", "tny").latenessP99Ms;
  console.log(
    `verdict TNY-360 server: in the core's thread the command round trip is ×${fmt(inCore / onMain, 2)} (quiet) and ×${fmt(underApiInCore / underApiOnMain, 2)} (API load) of the main-thread placement's; hammered with 60 KB frames the core's lateness p99 is ${fmt(hammeredInCore, 3)} ms in the core's thread vs ${fmt(hammeredInThread, 3)} ms for the in-thread core: ${inCore <= onMain && underApiInCore <= underApiOnMain ? "keep it in the core (default --tny-server worker)" : "INCONCLUSIVE on this run: the main-thread placement answered faster"}${hammeredInCore > 2 * r("tny core worker, server worker", "quiet").latenessP99Ms + 0.5 ? "; NOTE: a hammered server in the core's thread made the cycle late" : ""}`,
  );
}
