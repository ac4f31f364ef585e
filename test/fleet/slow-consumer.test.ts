/**
 * The broker cuts a runtime that does not read as a slow consumer (nats-server: more than
 * `max_pending` bytes queued for the connection); the runtime redials at once, not after a backoff,
 * and its e-stop connection, which carries nothing but e-stops, is not cut with it. The runtime's
 * thread is held for 1.5 s while 16 KiB requests (600 a second, from a process of its own: too few
 * to be shed as a flood, enough bytes to pass 256 KiB and the sockets' buffers) fill the broker's
 * queue for it, as a stalled event loop would.
 */
import { SIM_RUNTIME_OPTIONS } from "../support/sim-runtime.js";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningRuntime, startRuntime } from "../../src/cli/serve.js";
import { FleetClient } from "../../src/fleet/client.js";
import { createLog } from "../../src/serve/logger.js";
import { subject } from "../../src/fleet/subjects.js";
import { hasNats, NATS_SKIP, type NatsServer, startNats } from "../support/nats.js";
import { useRuntimeDir } from "../support/runtime-dir.js";

useRuntimeDir("bodylink-slow-consumer-");
const FLOOD = join(import.meta.dirname, "../support/nats-flood.mjs");

describe.skipIf(!hasNats)("a slow-consumer cut", { timeout: 60_000 }, () => {
  let nats: NatsServer;
  let rt: RunningRuntime;
  const lines: Array<{ atMs: number; line: string }> = [];

  beforeAll(async () => {
    nats = await startNats({ config: 'max_payload: 65536\nmax_pending: 262144\nwrite_deadline: "1s"\n' });
    rt = await startRuntime({
      ...SIM_RUNTIME_OPTIONS,
      body: "p7",
      name: "arm-sc",
      seed: 1,
      tny: false,
      fleet: nats.url,
      fleetInsecure: true, // a broker of its own with the limits this test needs, on loopback: no identities
      // The test holds the main thread 1.5 s on purpose: past the default 1 s the core would latch
      // "host unresponsive" (docs/security.md), which is not what this test is about.
      hostTimeoutMs: 5000,
      quiet: true,
      logger: createLog({ stream: { write: (line) => lines.push({ atMs: performance.now(), line }) } }).logger,
    });
    await rt.fleet!.joined();
  }, 60_000);

  afterAll(async () => {
    await rt?.close();
    await nats?.close();
  });

  it("is redialled at once; the e-stop connection stays up and a stop still latches", async () => {
    const nc = rt.fleet!.connection!;
    const events: Array<{ type: string; atMs: number }> = [];
    void (async () => {
      for await (const s of nc.status()) events.push({ type: s.type, atMs: performance.now() });
    })();
    const child = spawn(process.execPath, [FLOOD, nats.url, subject.cmd("arm-sc", "health"), "600", "2000", "16384"], { stdio: ["ignore", "pipe", "inherit"] });
    const exited = new Promise((r) => child.once("exit", r));
    await new Promise<void>((r) => child.stdout!.once("data", () => r()));
    // Hold this thread (the runtime's main thread) while the broker's queue for it fills.
    const until = performance.now() + 1500;
    while (performance.now() < until);
    const heldUntil = performance.now();
    await exited;
    const t0 = performance.now();
    for (;;) {
      if (rt.fleet!.status().connection === "connected" && events.some((e) => e.type === "reconnect")) break;
      if (performance.now() - t0 > 10_000) throw new Error(`no reconnect: ${JSON.stringify(events)} ${nats.log().slice(-500)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(nats.log()).toMatch(/Slow Consumer Detected/);
    const cut = events.find((e) => e.type === "disconnect")!;
    const back = events.find((e) => e.type === "reconnect" && e.atMs >= cut.atMs)!;
    console.log(
      `slow consumer: cut seen ${(cut.atMs - heldUntil).toFixed(0)} ms after the thread was free, redialled in ${(back.atMs - cut.atMs).toFixed(0)} ms; ${JSON.stringify(rt.fleet!.status().requests)}`,
    );
    // At once: nats.js waits only when the last dial is more recent than the delay (100 ms), and it was long ago.
    expect(back.atMs - cut.atMs).toBeLessThan(1000);
    expect(rt.fleet!.status().disconnects).toBeGreaterThanOrEqual(1);
    expect(rt.fleet!.status().requests.sheds).toBe(0); // the broker cut it, not the bridge's flood shedding
    expect(rt.fleet!.status().estop).toMatchObject({ connection: "connected", disconnects: 0 });

    const client = await FleetClient.connect({ url: nats.url }, "test", { insecure: true });
    try {
      const r = await client.estop(["arm-sc"], { reason: "after the cut", by: "test" });
      expect(r.missing).toEqual([]);
      expect(rt.robot.estopState()).toMatchObject({ latched: true, reason: "after the cut" });
      await client.reset(["arm-sc"], { reason: "area clear" });
    } finally {
      await client.close();
    }
  });
});

if (!hasNats) describe("slow-consumer cut", () => it.skip(NATS_SKIP, () => undefined));
