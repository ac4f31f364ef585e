/**
 * `npm run bench -- core-gc`: does each body's real-time core allocate in steady state, and does
 * V8 then collect on the core's thread at a moment nobody chose? Issue 9's target: 0 collections
 * V8 starts itself on every core's thread over 60 s of steady state.
 *
 * Every body's threaded core as `bodylink serve` starts it (the hosts from dist/, so the worker
 * runs the compiled entry serve runs, not tsx's transform), two at a time side by side: one with
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
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import WebSocket from "ws";
import type { CoreHost } from "../src/host/core-host.js";
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

export type Hosts = {
  NaoHost: typeof import("../src/host/nao-host.js").NaoHost;
  P7Host: typeof import("../src/host/p7-host.js").P7Host;
  Tny360Host: typeof import("../src/host/tny360-host.js").Tny360Host;
};

/** The hosts from dist/ (built now if stale), so the core's worker runs the compiled entry, as under serve (bench record uses it too). */
export async function distHosts(): Promise<Hosts> {
  execFileSync(process.execPath, ["bin/build.js", "--incremental"], { cwd: root, stdio: "inherit" });
  const load = (m: string) => import(new URL(`../dist/host/${m}.js`, import.meta.url).href);
  return {
    NaoHost: ((await load("nao-host")) as Pick<Hosts, "NaoHost">).NaoHost,
    P7Host: ((await load("p7-host")) as Pick<Hosts, "P7Host">).P7Host,
    Tny360Host: ((await load("tny360-host")) as Pick<Hosts, "Tny360Host">).Tny360Host,
  };
}

interface Running {
  host: CoreHost;
  close(): Promise<void>;
}

interface Config {
  name: string;
  start(hosts: Hosts, gcEveryMs: number, dir: string): Promise<Running>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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
  {
    name: "nao, no LoLA server",
    async start(h, gcEveryMs) {
      const host = await h.NaoHost.start({ seed: 1, usb: false, acceptBoardVersions: [11], gcEveryMs, lola: null });
      return { host, close: () => host.shutdown() };
    },
  },
  {
    name: "nao, LoLA client",
    async start(h, gcEveryMs, dir) {
      const path = join(dir, `robocup-${gcEveryMs}`);
      const host = await h.NaoHost.start({ seed: 1, usb: false, acceptBoardVersions: [11], gcEveryMs, lola: { path, fallbackPath: null, readers: 0, graceMs: 100 } });
      const lola = await StiffController.connect(path);
      const t0 = performance.now();
      while (!lola.reached && performance.now() - t0 < 10_000) await sleep(20);
      return {
        host,
        async close() {
          await lola.close();
          await host.shutdown();
        },
      };
    },
  },
  {
    name: "p7",
    async start(h, gcEveryMs) {
      const host = await h.P7Host.start({ seed: 1, gcEveryMs });
      return { host, close: () => host.shutdown() };
    },
  },
  {
    name: "tny360, server, no client",
    async start(h, gcEveryMs) {
      const host = await h.Tny360Host.start({ seed: 1, remote: null, gcEveryMs, server: tnyServer() });
      return { host, close: () => host.shutdown() };
    },
  },
  {
    name: "tny360, SDK client",
    async start(h, gcEveryMs) {
      const host = await h.Tny360Host.start({ seed: 1, remote: null, gcEveryMs, server: tnyServer() });
      const client = await tnyClient(host.tnyPort!);
      return {
        host,
        async close() {
          await client.close();
          await host.shutdown();
        },
      };
    },
  },
];

function tnyServer() {
  return { host: "127.0.0.1", port: 0, fallbackToFreePort: false, token: null, allowHosts: [], allowOrigins: [] };
}

interface Result {
  name: string;
  off: AllocationSample;
  on: AllocationSample;
  /** Collections V8 started itself on the scheduled core (health), and the scheduled ones. */
  onV8: number;
  onScheduled: number;
  sites: Array<{ site: string; bytes: number }>;
  sampledCycles: number;
}

async function coreHealth(host: CoreHost): Promise<{ v8: number; scheduled: number }> {
  const h = await host.health();
  return { v8: h.cycle.core.gcCollections, scheduled: h.cycle.gc.collections };
}

async function measure(hosts: Hosts, c: Config, dir: string): Promise<Result> {
  const off = await c.start(hosts, 0, dir);
  const on = await c.start(hosts, 100, dir);
  try {
    await sleep(WARMUP_MS);
    const cycles = (r: Running) => Math.max(1, Math.round(STEADY_MS / r.host.periodMs));
    const h0 = await coreHealth(on.host);
    const [a, b] = await Promise.all([off.host.measureAllocation(cycles(off)), on.host.measureAllocation(cycles(on))]);
    const h1 = await coreHealth(on.host);
    let sites: Result["sites"] = [];
    let sampledCycles = 0;
    if (a.heapBytes / a.cycles > ZERO_BYTES) {
      sampledCycles = Math.round((QUICK ? 1500 : 5000) / off.host.periodMs);
      const s = await off.host.allocationSites(sampledCycles, 128);
      sites = s.sites.slice(0, 6);
    }
    return { name: c.name, off: a, on: b, onV8: h1.v8 - h0.v8, onScheduled: h1.scheduled - h0.scheduled, sites, sampledCycles };
  } finally {
    await on.close();
    await off.close();
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
  console.log(`steady ${STEADY_MS / 1000} s per configuration, scheduling on and off side by side${quick}; load average ${loadavg().map((l) => l.toFixed(1)).join(" ")} on ${availableParallelism()} CPUs`);
  const hosts = await distHosts();
  const dir = mkdtempSync(join(tmpdir(), "bodylink-bench-core-gc-"));
  const results: Result[] = [];
  try {
    for (const c of CONFIGS) {
      const r = await measure(hosts, c, dir);
      results.push(r);
      console.log(`  measured ${c.name}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const base = results[0]!;
  console.log("\nconfiguration                | heap B/cycle ext B/cycle  ×baseline | scheduling off: collections in the window | scheduling on: V8-started  scheduled | heap B/cycle (on)");
  for (const r of results) {
    const ratio = perCycle(base.off, "heapBytes") > 0 ? fmt(perCycle(r.off, "heapBytes") / perCycle(base.off, "heapBytes"), 2) : "n/a";
    console.log(
      `${r.name.padEnd(28)} | ${fmt(perCycle(r.off, "heapBytes"), 1).padStart(12)} ${fmt(perCycle(r.off, "externalBytes"), 1).padStart(11)} ${ratio.padStart(10)} | ${`${v8Count(r.off)} (${kinds(r.off)}) in ${r.off.cycles} cycles`.padEnd(41)} | ${String(r.onV8).padStart(9)} ${String(r.onScheduled).padStart(10)} | ${fmt(perCycle(r.on, "heapBytes"), 1).padStart(10)}`,
    );
  }
  for (const r of results) {
    if (r.sites.length === 0) continue;
    console.log(`\nwhere "${r.name}" allocates (sampling heap profile over ${r.sampledCycles} cycles, estimated bytes per cycle):`);
    for (const s of r.sites) console.log(`  ${fmt(s.bytes / r.sampledCycles, 1).padStart(9)}  ${s.site}`);
  }
  console.log(`\nload average at the end ${loadavg().map((l) => l.toFixed(1)).join(" ")}`);
  console.log("");
  for (const r of results) {
    const bytes = perCycle(r.off, "heapBytes") + perCycle(r.off, "externalBytes");
    const fills = v8Count(r.off);
    console.log(
      `verdict: ${r.name}: collections V8 started on the core's thread over ${STEADY_MS / 1000} s of steady state = 0: ${r.onV8 === 0 ? "MET" : "NOT MET"} (${r.onV8} with scheduling on; ${fills} with it off); allocation per cycle ${bytes <= ZERO_BYTES ? "≈ 0" : `${fmt(bytes, 0)} B`}${quick}`,
    );
  }
}
