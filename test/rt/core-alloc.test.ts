/**
 * The NAO worker core's LoLA path allocates nothing per cycle: bytes, counted inside the core's
 * thread (src/runtime/allocation.ts), never time. Two cores from dist/ (the compiled worker entry
 * serve runs) side by side, each serving LoLA: one with a controller answering every frame at
 * stiffness 1.0, one with nobody connected. What the first allocates per cycle beyond the second is
 * what the LoLA server costs (reads, decoding, the command, the lease renewal, the frame write);
 * the wake-up and the cycle cost both the same. External memory is exact: a read that makes a
 * Buffer (socket 'data' events: ~280 B of backing store each) fails at once. Robust on a loaded
 * 2-core VM: the heap figure is the best of a few windows measured at the same time on both cores.
 * Then the same LoLA path on its own, exactly (test/rt/lola-alloc-child.mjs: a child process that
 * runs a cycle per command on simulated time, no timers): a regression that allocates per read or
 * per message (socket 'data' events: ~1.1 KB; msgpackr decoding: ~1.2 KB for this client's two keys;
 * socket.write: ~220 B; a closure per cycle: ~50 B) fails.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NaoHost as NaoHostClass } from "../../src/host/nao-host.js";
import type { AllocationSample } from "../../src/runtime/allocation.js";
import { StiffController } from "./serve-rig.js";

/**
 * Bytes per cycle the LoLA client may cost beyond the idle core, in the worker. Loose: the wake-up
 * (the loop's promises, setImmediate turns) still allocates ~5 KB a cycle, ±500 B between windows
 * with the timing, which hides small regressions here; the exact figure is the second test's
 * (209 B, bound 250).
 */
const LOLA_BOUND_BYTES = 1500;
const CYCLES = 250; // 3 s at 83 Hz per window
const WINDOWS = 4;

const dir = mkdtempSync(join(tmpdir(), "bodylink-core-alloc-"));
let withClient: NaoHostClass;
let idle: NaoHostClass;
let lola: StiffController;

beforeAll(async () => {
  // dist/, not the sources: from .ts the worker runs through tsx, whose transform adds its own garbage (__name)
  const { NaoHost } = (await import(new URL("../../dist/host/nao-host.js", import.meta.url).href)) as typeof import("../../src/host/nao-host.js");
  const start = (name: string) => NaoHost.start({ seed: 1, usb: false, acceptBoardVersions: [11], gcEveryMs: 100, lola: { path: join(dir, name), fallbackPath: null, readers: 0, graceMs: 100 } });
  [withClient, idle] = await Promise.all([start("with"), start("idle")]);
  lola = await StiffController.connect(join(dir, "with"));
  const t0 = Date.now();
  while (!lola.reached && Date.now() - t0 < 15_000) await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, 1500)); // warm-up: V8 optimizes the hot paths
}, 40_000);

afterAll(async () => {
  await lola?.close();
  await Promise.all([withClient?.shutdown(), idle?.shutdown()]);
  rmSync(dir, { recursive: true, force: true });
});

// The two measurements at once (bytes, never time: the first compares two cores measured together,
// the second's child runs on simulated time): the second's ~2 s beside the first's windows.
describe.concurrent("the LoLA path's allocations", () => {
  describe("NAO worker core: what a LoLA client costs its thread", () => {
    it("reads, decodes, applies and answers every frame without allocating per cycle (bytes counted in the core's thread)", { timeout: 60_000 }, async () => {
      expect(lola.reached).toBe(true);
      const diffs: number[] = [];
      let last: [AllocationSample, AllocationSample] | null = null;
      for (let w = 0; w < WINDOWS; w++) {
        const frames0 = lola.frames;
        last = await Promise.all([withClient.measureAllocation(CYCLES), idle.measureAllocation(CYCLES)]);
        const [a, b] = last;
        // the client really was answering during the window
        expect(lola.frames - frames0).toBeGreaterThan(CYCLES / 2);
        // reads into the client's own buffer: no Buffer backing store per read (socket 'data' events make one each)
        expect(a.externalBytes / a.cycles).toBeLessThan(16);
        diffs.push(a.heapBytes / a.cycles - b.heapBytes / b.cycles);
        if (Math.min(...diffs) < LOLA_BOUND_BYTES) break;
      }
      const best = Math.min(...diffs);
      expect(
        best,
        `LoLA client's extra bytes per cycle in each window: ${diffs.map((d) => d.toFixed(0)).join(", ")} (core with client ${(last![0].heapBytes / CYCLES).toFixed(0)} B/cycle, idle ${(last![1].heapBytes / CYCLES).toFixed(0)})`,
      ).toBeLessThan(LOLA_BOUND_BYTES);
    });
  });

  describe("the LoLA path on its own: a cycle per command, nothing else running (exact)", () => {
    it("a LoLA client answering every frame costs the cycle < 250 bytes (measured 209: Node's own per read and per write, and this harness's microtask)", { timeout: 60_000 }, async () => {
      const path = join(dir, "exact");
      const child = spawn(process.execPath, [new URL("./lola-alloc-child.mjs", import.meta.url).pathname, path, "3", "2000"], { stdio: ["ignore", "pipe", "inherit"] });
      let out = "";
      child.stdout!.on("data", (d) => {
        out += String(d);
      });
      const exited = new Promise<number | null>((r) => child.once("exit", r));
      try {
        while (!out.startsWith("ready")) {
          if (child.exitCode !== null) throw new Error(`child exited: ${out}`);
          await new Promise((r) => setTimeout(r, 20));
        }
        const c = await StiffController.connect(path);
        expect(await exited).toBe(0);
        await c.close();
      } finally {
        child.kill("SIGKILL");
      }
      const samples = out
        .trim()
        .split("\n")
        .slice(1)
        .map((l) => JSON.parse(l) as AllocationSample);
      expect(samples).toHaveLength(3);
      const perCycle = samples.map((x) => x.heapBytes / x.cycles);
      // What is left is Node's per syscall: ~60 B for the read callback, ~60 B for fs.writeSync's
      // context; before: ~1.4 KB per read ('data' events), ~220 B per socket.write, ~1.5 KB decoding.
      expect(Math.min(...perCycle), `bytes per cycle: ${perCycle.map((b) => b.toFixed(1)).join(", ")}`).toBeLessThan(250);
      for (const x of samples) expect(x.externalBytes / x.cycles).toBeLessThan(16);
    });
  });
});
