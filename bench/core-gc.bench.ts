/**
 * `npm run bench -- core-gc`: does each body's real-time core allocate in steady state, and does
 * V8 then collect on the core's thread at a moment nobody chose? Issue 9's target: 0 collections
 * V8 starts itself on every core's thread over 60 s of steady state.
 *
 * Every body's threaded core as `bodylink serve` starts it (the hosts from dist/ in a child process
 * with no node flags, bench/core-gc-host.mjs: the compiled worker entry, V8's default heap sizes;
 * the clients in this process), two at a time side by side: one with
 * serve's scheduled young collections (`--gc-every-ms 100`), one with scheduling off
 * (`--gc-every-ms 0`: does its young generation fill at all?). Configurations:
 *   nao, no LoLA server        the baseline: the cycle, its pacing and the host link only
 *   nao, LoLA client           the LoLA server with a controller answering every frame (stiffness 1.0)
 *   p7                         the arm's core (no server of its own)
 *   tny360, server, no client  the TNY-360 API server in the core's thread, nobody connected
 *   tny360, SDK client         the same with a client commanding setVelocity every 10 ms
 * Per configuration, over STEADY_MS (60 s; BENCH_QUICK=1: 6 s) after a warm-up, measured inside the
 * core's thread (src/runtime/allocation.ts: heap used + what each collection freed, V8's GC
 * profiler): JS-heap and external bytes allocated per cycle, the collections by type with
 * scheduling off (every one V8's own), and with scheduling on the collections V8 started itself
 * (/v1/health's core_gc_collections: the scheduled ones carry V8's "forced" flag). A configuration
 * that allocates gets its top allocation sites (V8's sampling heap profiler in the core's thread).
 * Ratios: each configuration's bytes per cycle against the baseline's, measured in the same run.
 * BODYLINK_BENCH_CONFIGS=a,b runs only the configurations whose name contains a or b.
 */
import { type ChildProcess, execFileSync, fork } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import WebSocket from "ws";
import type { BodyKind } from "../src/bodies/registry.js";
import type { AllocationSample } from "../src/runtime/allocation.js";
import { actionSpec } from "../src/wire/tny/constants.js";
import { encodeRequest } from "../src/wire/tny/encode.js";
import { StiffController } from "../test/rt/serve-rig.js";
import { fmt } from "./util.js";

const QUICK = process.env.BENCH_QUICK === "1" || process.argv.includes("--quick");
const STEADY_MS = QUICK ? 6000 : 60_000;
const WARMUP_MS = QUICK ? 1500 : 4000;
/** Bytes per cycle below which a configuration counts as allocation-free (the counters' own rounding). */
const ZERO_BYTES = 8;

const root = fileURLToPath(new URL("..", import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One child process (bench/core-gc-host.mjs, plain `node` as serve runs) hosting a body's cores. */
class Child {
  readonly #proc: ChildProcess;
  #next = 1;
  readonly #waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  readonly ready: Promise<void>;
  private constructor() {
    // No node flags: the bench's own (--expose-gc, --max-semi-space-size=128) would size the
    // workers' young generation, and the question is how serve's fills.
    this.#proc = fork(join(root, "bench/core-gc-host.mjs"), [], { execArgv: [], stdio: ["ignore", "ignore", "inherit", "ipc"] });
    this.ready = new Promise((resolve, reject) => {
      this.#proc.once("error", reject);
      this.#proc.on("message", (m: { ready?: true; id?: number; ok?: boolean; value?: unknown; error?: string }) => {
        if (m.ready) return resolve();
        const w = this.#waiting.get(m.id!);
        this.#waiting.delete(m.id!);
        if (m.ok) w?.resolve(m.value);
        else w?.reject(new Error(m.error));
      });
    });
  }
  static async start(): Promise<Child> {
    const c = new Child();
    await c.ready;
    return c;
  }
  call<T>(m: Record<string, unknown>): Promise<T> {
    const id = this.#next++;
    return new Promise<T>((resolve, reject) => {
      this.#waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.#proc.send({ ...m, id });
    });
  }
  async close(): Promise<void> {
    await this.call({ type: "stop" }).catch(() => {});
    const exited = new Promise((r) => this.#proc.once("exit", r));
    this.#proc.kill("SIGTERM");
    await exited;
  }
}

interface Core {
  key: string;
  periodMs: number;
  tnyPort: number | null;
}

interface Config {
  name: string;
  body: BodyKind;
  /** A client on the core's own server, started once both cores run. */
  client?: "lola" | "tny";
}

/** A TNY-360 SDK-style client: setVelocity every 10 ms, each after the previous answer. */
async function tnyClient(port: number): Promise<{ close(): Promise<void> }> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/`, { perMessageDeflate: false });
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  const spec = actionSpec("body", "setVelocity");
  let running = true;
  let id = 1;
  const done = (async () => {
    while (running && ws.readyState === WebSocket.OPEN) {
      await new Promise<void>((resolve) => {
        ws.once("message", () => resolve());
        ws.send(encodeRequest(id++ & 0xffff, spec.module, spec.action, [0.05, 0, 0, true]), { binary: true });
      });
      await sleep(10);
    }
  })();
  return {
    async close() {
      running = false;
      ws.close();
      await Promise.race([done, sleep(500)]);
    },
  };
}

const CONFIGS: readonly Config[] = [
  { name: "nao, no LoLA server", body: "nao" },
  { name: "nao, LoLA client", body: "nao", client: "lola" },
  { name: "p7", body: "p7" },
  { name: "tny360, server, no client", body: "tny360" },
  { name: "tny360, SDK client", body: "tny360", client: "tny" },
];

interface Result {
  name: string;
  off: AllocationSample;
  on: AllocationSample;
  /** Collections V8 started itself on the scheduled core (health), and the scheduled ones. */
  onV8: number;
  /** Of those, by kind ("minor": the young generation filled; "major"/"incremental": the old one grew). */
  onV8Kinds: Record<string, number>;
  onScheduled: number;
  sites: Array<{ site: string; bytes: number }>;
  sampledCycles: number;
}

async function measure(c: Config, dir: string): Promise<Result> {
  const child = await Child.start();
  const clients: Array<{ close(): Promise<void> }> = [];
  try {
    const cores: Core[] = [];
    for (const gcEveryMs of [0, 100]) {
      const key = `gc${gcEveryMs}`;
      const lolaPath = c.client === "lola" ? join(dir, `robocup-${gcEveryMs}`) : null;
      const started = await child.call<{ periodMs: number; tnyPort: number | null }>({ type: "start", key, body: c.body, gcEveryMs, lolaPath });
      cores.push({ key, ...started });
      if (lolaPath) {
        const lola = await StiffController.connect(lolaPath);
        clients.push(lola);
        const t0 = performance.now();
        while (!lola.reached && performance.now() - t0 < 10_000) await sleep(20);
      }
      if (c.client === "tny") clients.push(await tnyClient(started.tnyPort!));
    }
    const [off, on] = cores as [Core, Core];
    await sleep(WARMUP_MS);
    const cycles = (k: Core) => Math.max(1, Math.round(STEADY_MS / k.periodMs));
    type H = { v8: number; scheduled: number; byKind: Record<string, number> };
    const h0 = await child.call<H>({ type: "health", key: on.key });
    const [a, b] = await Promise.all([
      child.call<AllocationSample>({ type: "measure", key: off.key, cycles: cycles(off) }),
      child.call<AllocationSample>({ type: "measure", key: on.key, cycles: cycles(on) }),
    ]);
    const h1 = await child.call<H>({ type: "health", key: on.key });
    const onV8Kinds: Record<string, number> = {};
    for (const [k, n] of Object.entries(h1.byKind)) if (n - (h0.byKind[k] ?? 0) > 0) onV8Kinds[k] = n - (h0.byKind[k] ?? 0);
    let sites: Result["sites"] = [];
    let sampledCycles = 0;
    if ((a.heapBytes + a.externalBytes) / a.cycles > ZERO_BYTES) {
      sampledCycles = Math.round((QUICK ? 1500 : 5000) / off.periodMs);
      sites = (await child.call<{ sites: Result["sites"] }>({ type: "sites", key: off.key, cycles: sampledCycles })).sites;
    }
    return { name: c.name, off: a, on: b, onV8: h1.v8 - h0.v8, onV8Kinds, onScheduled: h1.scheduled - h0.scheduled, sites, sampledCycles };
  } finally {
    for (const cl of clients) await cl.close();
    await child.close();
  }
}

const perCycle = (s: AllocationSample, k: "heapBytes" | "externalBytes") => s[k] / s.cycles;
const kinds = (s: AllocationSample) =>
  Object.entries(s.collections)
    .map(([k, n]) => `${n} ${k}`)
    .join(", ") || "none";
const v8Count = (s: AllocationSample) => Object.values(s.collections).reduce((a, b) => a + b, 0);

export async function run(): Promise<void> {
  const quick = QUICK ? " (QUICK smoke run: too short for a verdict that closes anything)" : "";
  console.log(
    `steady ${STEADY_MS / 1000} s per configuration, scheduling on and off side by side${quick}; load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")} on ${availableParallelism()} CPUs`,
  );
  execFileSync(process.execPath, ["bin/build.js", "--incremental"], { cwd: root, stdio: "inherit" }); // the child runs dist/
  const dir = mkdtempSync(join(tmpdir(), "bodylink-bench-core-gc-"));
  const results: Result[] = [];
  try {
    // BODYLINK_BENCH_CONFIGS=nao,tny: only the configurations whose name contains one of them
    const only = (process.env.BODYLINK_BENCH_CONFIGS ?? "").split(",").filter(Boolean);
    for (const c of CONFIGS.filter((x) => only.length === 0 || only.some((o) => x.name.includes(o)))) {
      const r = await measure(c, dir);
      results.push(r);
      console.log(`  measured ${c.name}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const base = results.find((r) => r.name === CONFIGS[0]!.name) ?? results[0]!;
  console.log(
    "\nconfiguration                | heap B/cycle ext B/cycle  ×baseline promoted B/cycle | scheduling off: collections in the window      | scheduling on: V8-started (kinds)  scheduled | heap B/cycle promoted B/cycle (on)",
  );
  for (const r of results) {
    const ratio = perCycle(base.off, "heapBytes") > 0 ? fmt(perCycle(r.off, "heapBytes") / perCycle(base.off, "heapBytes"), 2) : "n/a";
    const started = `${r.onV8}${
      r.onV8
        ? ` (${Object.entries(r.onV8Kinds)
            .map(([k, n]) => `${n} ${k}`)
            .join(", ")})`
        : ""
    }`;
    console.log(
      `${r.name.padEnd(28)} | ${fmt(perCycle(r.off, "heapBytes"), 1).padStart(12)} ${fmt(perCycle(r.off, "externalBytes"), 1).padStart(11)} ${ratio.padStart(10)} ${fmt(r.off.promotedBytes / r.off.cycles, 1).padStart(16)} | ${`${v8Count(r.off)} (${kinds(r.off)}) in ${r.off.cycles} cycles`.padEnd(46)} | ${started.padStart(24)} ${String(r.onScheduled).padStart(10)} | ${fmt(perCycle(r.on, "heapBytes"), 1).padStart(12)} ${fmt(r.on.promotedBytes / r.on.cycles, 1).padStart(16)}`,
    );
  }
  console.log(
    "(promoted: what collections moved into the old generation, per cycle; it grows until V8 runs a major collection itself, which scheduled young collections do not prevent. heap (on) includes what the scheduled collections themselves leave: Node's gc PerformanceObserver entries, ThreadStats)",
  );
  for (const r of results) {
    if (r.sites.length === 0) continue;
    console.log(`\nwhere "${r.name}" allocates (sampling heap profile over ${r.sampledCycles} cycles, estimated bytes per cycle):`);
    for (const s of r.sites) console.log(`  ${fmt(s.bytes / r.sampledCycles, 1).padStart(9)}  ${s.site}`);
  }
  console.log(
    `\nload average at the end ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}`,
  );
  console.log("");
  for (const r of results) {
    const bytes = perCycle(r.off, "heapBytes") + perCycle(r.off, "externalBytes");
    const fills = v8Count(r.off);
    console.log(
      `verdict: ${r.name}: collections V8 started on the core's thread over ${STEADY_MS / 1000} s of steady state = 0: ${r.onV8 === 0 ? "MET" : "NOT MET"} (${r.onV8} with scheduling on; ${fills} with it off); allocation per cycle ${bytes <= ZERO_BYTES ? "≈ 0" : `${fmt(bytes, 0)} B`}${quick}`,
    );
  }
}
