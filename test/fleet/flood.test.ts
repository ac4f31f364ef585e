/**
 * A fleet e-stop under a request flood (issue 25, "Done means"): three runtimes of three bodies
 * (`bodylink serve --fleet` processes, as a user runs them) on a real nats-server; a flood client in
 * its own process sends 90,000 `cmd.health` requests a second at one of them for 4 s; an e-stop to
 * every robot sent in the middle of it latches each one within 500 ms, measured by the runtime's
 * own latch (`since_ms` of GET /v1/estop against the moment it was sent) and answered by every
 * robot. The flooded robot refused the excess (503/429) and dropped the rest, counted in its
 * health, shed the flood (requests off for a second, the broker's backlog dropped), and its e-stop
 * connection was never cut. A closed fleet (test/support/fleet.ts): the flood logs in as the viewer
 * (who may send read commands), the e-stops are the operator `test`'s.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FleetClient } from "../../src/fleet/client.js";
import { loadBundle } from "../../src/fleet/roster.js";
import { subject } from "../../src/fleet/subjects.js";
import { type ClosedFleet, startClosedFleet, stopServes } from "../support/fleet.js";
import { hasNats, NATS_SKIP } from "../support/nats.js";
import { useRuntimeDir } from "../support/runtime-dir.js";

const bin = join(import.meta.dirname, "../../bin/bodylink.js");
const FLOOD = join(import.meta.dirname, "../support/nats-flood.mjs");
const FLOOD_HZ = 90_000;
const FLOOD_MS = 4000;
const LATCH_BOUND_MS = 500;
const dir = useRuntimeDir("bodylink-flood-");

interface Runtime {
  name: string;
  child: ChildProcess;
  api: string;
  err: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, f: () => T | null | undefined | false, timeoutMs = 30_000): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = f();
    if (v) return v;
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

interface FloodResult {
  sent: number;
  seconds: number;
  rate: number;
  replies: number;
  codes: Record<string, number>;
}

/** The flood in its own process: resolves `started` once it sends, `done` with its figures. */
function flood(url: string, subj: string, as: { seedFile: string; inboxPrefix: string }): { started: Promise<void>; done: Promise<FloodResult> } {
  const child = spawn(process.execPath, [FLOOD, url, subj, String(FLOOD_HZ), String(FLOOD_MS), "0", as.seedFile, as.inboxPrefix], { stdio: ["ignore", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout! });
  let started!: () => void;
  const startedP = new Promise<void>((r) => {
    started = r;
  });
  const done = new Promise<FloodResult>((resolve, reject) => {
    lines.on("line", (l) => {
      if (l === "flooding") started();
      else if (l.startsWith("{")) resolve(JSON.parse(l) as FloodResult);
    });
    child.once("exit", (code) => code !== 0 && reject(new Error(`the flood exited with ${code}`)));
  });
  return { started: startedP, done };
}

describe.skipIf(!hasNats)("a fleet e-stop under a 90k/s request flood", { timeout: 120_000 }, () => {
  let fleet: ClosedFleet;
  let client: FleetClient;
  const rts: Runtime[] = [];

  async function serve(body: string, name: string): Promise<Runtime> {
    const child = spawn(
      process.execPath,
      [bin, "serve", "--body", body, "--name", name, "--api-port", "0", "--tny-port", "0", "--lola-path", join(dir, `${name}.sock`), "--fleet", fleet.url, "--fleet-dir", fleet.bundle(name)],
      {
        env: { ...process.env, BODYLINK_RUNTIME_DIR: dir },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    const rt: Runtime = { name, child, api: "", err: "" };
    let out = "";
    child.stdout!.on("data", (d) => {
      out += String(d);
    });
    child.stderr!.on("data", (d) => {
      rt.err += String(d);
    });
    rt.api = await until(`${name} to start (${out}${rt.err})`, () => /robot API: (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1], 60_000);
    await until(`${name} to join (${rt.err})`, () => rt.err.includes(`fleet: joined ${fleet.url} as ${name}`));
    return rt;
  }

  const estopOf = async (rt: Runtime) => (await (await fetch(`${rt.api}/v1/estop`)).json()) as { latched: boolean; reason: string; source: string; since_ms: number };
  const healthOf = async (rt: Runtime) =>
    (await (await fetch(`${rt.api}/v1/health`)).json()) as {
      fleet: { disconnects: number; estop: { connection: string; disconnects: number; received: number }; requests: { admitted: number; refused: number; dropped: number; sheds: number } };
    };

  beforeAll(async () => {
    fleet = await startClosedFleet({ robots: ["nao-1", "arm-1", "quad-1"], operators: ["test"], viewers: ["flood"] });
    for (const [body, name] of [
      ["nao", "nao-1"],
      ["p7", "arm-1"],
      ["tny360", "quad-1"],
    ] as const)
      rts.push(await serve(body, name));
    client = await fleet.client("test");
  }, 180_000);

  afterAll(async () => {
    await client?.close().catch(() => undefined);
    await stopServes(rts.map((r) => r.child));
    await fleet?.close();
  }, 60_000);

  it("every robot latches within 500 ms and answers; the flooded one refuses the excess and keeps its e-stop connection", async () => {
    const names = rts.map((r) => r.name);
    // Baseline in the same run: the same e-stop without the flood.
    const quiet = await client.estop(null, { reason: "quiet stop", by: "test" }, { expect: names });
    expect(quiet.missing).toEqual([]);
    await client.reset(null, { reason: "area clear" }, { expect: names });

    const f = flood(fleet.url, subject.cmd("nao-1", "health"), { seedFile: loadBundle(fleet.bundle("flood")).seedFile, inboxPrefix: "_INBOX_flood" });
    await f.started;
    await sleep(1500); // the flood at full rate, and the broker's buffers for nao-1 as full as they get
    const t0 = Date.now();
    const r = await client.estop(null, { reason: "flood stop", by: "test" }, { expect: names, maxWaitMs: 3000 });
    const flooded = await f.done;
    const latchMs: Record<string, number> = {};
    for (const rt of rts) {
      const e = await estopOf(rt);
      expect(e, rt.name).toMatchObject({ latched: true, reason: "flood stop", source: "fleet:test" });
      latchMs[rt.name] = e.since_ms - t0;
    }
    const h = await healthOf(rts[0]!);
    console.log(
      `flood: ${flooded.sent} requests in ${flooded.seconds.toFixed(2)} s (${Math.round(flooded.rate)}/s), ${flooded.replies} answered ${JSON.stringify(flooded.codes)}; ` +
        `e-stop-all answered by ${r.replies.length} in ${r.elapsedMs.toFixed(1)} ms (quiet: ${quiet.elapsedMs.toFixed(1)} ms); latched after ${JSON.stringify(latchMs)} ms; ` +
        `nao-1 requests ${JSON.stringify(h.fleet.requests)}, main connection cuts ${h.fleet.disconnects}, e-stop connection ${JSON.stringify(h.fleet.estop)}`,
    );
    expect(flooded.rate).toBeGreaterThan(0.8 * FLOOD_HZ);
    expect(r.missing).toEqual([]);
    for (const x of r.replies) expect(x.estop, x.name).toMatchObject({ latched: true, reason: "flood stop" });
    for (const rt of rts) expect(latchMs[rt.name], rt.name).toBeLessThanOrEqual(LATCH_BOUND_MS);
    // The excess was refused (503 while 64 were in flight, 429 past the buckets) or dropped, never
    // worked on; the flood was shed (requests off, the broker's backlog dropped) at least once.
    expect((flooded.codes.BL_ERR_FLEET_RATE_LIMITED ?? 0) + (flooded.codes.BL_ERR_FLEET_BUSY ?? 0)).toBeGreaterThan(0);
    expect(h.fleet.requests.sheds).toBeGreaterThanOrEqual(1);
    expect(h.fleet.requests.admitted).toBeLessThan(0.01 * flooded.sent);
    expect(rts[0]!.err).toMatch(/"level":40,[^\n]*"component":"fleet"[^\n]*"msg":"fleet: a request flood \(500 refused within 250 ms\): taking no requests for 1000 ms/);
    expect(h.fleet.estop).toMatchObject({ connection: "connected", disconnects: 0 });
    await client.reset(null, { reason: "area clear" }, { expect: names });
  });
});

if (!hasNats) describe("fleet e-stop under a flood", () => it.skip(NATS_SKIP, () => undefined));
