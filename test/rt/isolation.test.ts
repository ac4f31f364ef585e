/**
 * Issue 9, "Done means": `bodylink serve` (NAO simulator, the threaded core by default) with a LoLA
 * controller that commands stiffness 1.0 on every frame, under three loads one after the other:
 * (a) 200 KB and 1 MB JSON bodies to /v1/commands/joints every 300 ms without a lease, (b) 1,000
 * stream subscribers (another process), (c) a 1 s synchronous stall of the main thread (test hook,
 * SIGUSR2 with BODYLINK_TEST_HOOKS=1).
 *
 * Asserted on the controller's frames and the core's safety counters (/v1/health errors.lateRamps:
 * cycles so late the safety ramp engaged), never on timing values. The machine is shared (2 cores,
 * other developers): a quiet phase of the same length first measures what the machine alone does to
 * the worker, and each load may not add more than that noise. On the in-thread core the stall alone
 * costs ~83 frames, a ramp and a second of stiffness below 1.0, so this cannot pass by luck.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../lola/client.js";
import { type ServeRig, StiffController, startServe } from "./serve-rig.js";

interface Health {
  errors: { lateRamps: number; lateCycles: number; coreStalls: number };
  cycle: { cycles: number };
}

const PHASE_MS = 3000;

describe("the real-time core under hostile load", () => {
  let rig: ServeRig;
  let lola: StiffController;
  let subs: ChildProcess | null = null;
  beforeAll(async () => {
    rig = await startServe(["--max-subscribers", "1100"], { BODYLINK_TEST_HOOKS: "1" });
    lola = await StiffController.connect(rig.lolaPath);
    await until(() => lola.reached, "stiffness 1.0", 20_000);
  }, 60_000);
  afterAll(async () => {
    subs?.kill("SIGKILL");
    await lola?.close();
    await rig?.close();
  });

  const health = async (): Promise<Health> => (await (await fetch(`${rig.apiUrl}/v1/health`)).json()) as Health;

  /** Run `load` for a phase; what the controller and the core's counters saw meanwhile. */
  async function phase(load: (signal: AbortSignal) => Promise<void>) {
    const h0 = await health();
    lola.resetCounts();
    const stop = new AbortController();
    const running = load(stop.signal);
    await new Promise((r) => setTimeout(r, PHASE_MS));
    stop.abort();
    await running;
    await new Promise((r) => setTimeout(r, 300)); // a ramp that started at the end shows in the frames
    const h1 = await health();
    return { frames: lola.frames, dips: lola.dips, full: lola.full, lateRamps: h1.errors.lateRamps - h0.errors.lateRamps, cycles: h1.cycle.cycles - h0.cycle.cycles };
  }

  it("keeps stiffness 1.0 and counts no late ramp beyond the machine's own noise", async () => {
    const quiet = await phase(async () => {});
    const big = (kb: number) => JSON.stringify({ positions: Array.from({ length: (kb * 1024) / 20 }, () => 0.123456789012345) });
    const bodies = [big(200), big(1024)];
    const posts = await phase(async (signal) => {
      let i = 0;
      while (!signal.aborted) {
        const body = bodies[i++ % 2]!;
        await fetch(`${rig.apiUrl}/v1/commands/joints`, { method: "POST", headers: { "content-type": "application/json" }, body, signal }).catch(() => {});
        await new Promise((r) => setTimeout(r, 300));
      }
    });
    subs = spawn(process.execPath, ["test/rt/subscribers.mjs", `${rig.apiUrl.replace(/^http/, "ws")}/v1/stream`, "1000"], { stdio: ["ignore", "pipe", "inherit"] });
    let subsOut = "";
    subs.stdout!.on("data", (d) => {
      subsOut += String(d);
    });
    await until(() => /open 1000|^open$/m.test(subsOut), "1000 subscribers", 30_000).catch(() => {});
    const subscribers = await phase(async () => {});
    subs.kill("SIGKILL");
    subs = null;
    const stall = await phase(async () => {
      rig.child.kill("SIGUSR2"); // the main thread spins for 1 s
    });
    const phases = { quiet, posts, subscribers, stall };
    console.log(JSON.stringify(phases));
    // The machine's noise moves from phase to phase (load average 20+ on 2 cores was seen): allow
    // twice the quiet phase's count and a few more. A load the core is not isolated from costs
    // far more (the in-thread core: the stall alone is a ramp and a third of the frames).
    const noise = 2 * quiet.lateRamps + 3;
    for (const [name, p] of Object.entries(phases)) {
      // The core kept cycling and the controller kept getting frames (≥ half the nominal 83 Hz).
      expect(p.cycles, name).toBeGreaterThan((PHASE_MS / 12) * 0.5);
      expect(p.frames, name).toBeGreaterThan((PHASE_MS / 12) * 0.5);
      expect(p.lateRamps, `${name}: late ramps (quiet phase: ${quiet.lateRamps})`).toBeLessThanOrEqual(noise);
      // A ramp takes ~40 frames back to 1.0: more dips than the noise allows mean a load caused one.
      expect(p.dips, `${name}: frames below stiffness 1.0 (quiet phase: ${quiet.dips})`).toBeLessThanOrEqual(2 * quiet.dips + 45 * 3);
    }
    // The stall in particular: the main thread ran nothing for a second, the core did not notice.
    // (On the in-thread core it costs ~83 frames of ~250 and a ramp.)
    expect(stall.lateRamps).toBeLessThanOrEqual(noise);
    expect(stall.frames).toBeGreaterThan(quiet.frames * 0.85);
  }, 120_000);
});
