/**
 * The robot API end to end, as a user runs it: the real server on an ephemeral loopback port,
 * the SDK over a real WebSocket (`ws`) and fetch. Rates are measured on the real clock; the
 * REST-vs-stream comparison runs the body on simulated time so both see the same cycle.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import WebSocket from "ws";
import { afterEach, describe, expect, it } from "vitest";
import { API_ORDER } from "../../src/bodies/nao/joints.js";
import { ApiError, type BodyClient, type BodylinkClient, type RobotState, connect } from "../../src/client/index.js";
import { MonotonicClock, SimClock } from "../../src/runtime/clock.js";
import { type RunningApiServer, startApiServer } from "../../src/serve/api/build.js";
import { type AnyRobot, simNao, simP7, simTny, step } from "./helpers.js";

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function serve(robot: AnyRobot, port = 0): Promise<RunningApiServer> {
  const server = await startApiServer(robot, { port });
  cleanup.push(() => server.close());
  return server;
}
async function client(url: string, owner = "sdk"): Promise<BodylinkClient> {
  const c = await connect(url, { WebSocket, owner });
  cleanup.push(() => c.close());
  return c;
}
async function started<R extends AnyRobot>(robot: R): Promise<R> {
  await robot.start();
  cleanup.push(() => robot.stop());
  return robot;
}
type NaoWire = Record<string, unknown> & { battery: { temperature: number }; seq: number };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The stream test's messages per body: 2 s at 20 Hz. */
const STREAM_MESSAGES = 40;
function next<T>(c: BodylinkClient, ev: "state" | "reconnected" | "disconnected" | "reconnecting" | "control-lost", pred: (v: T) => boolean = () => true): Promise<T> {
  return new Promise((resolve) => {
    const off = c.on(ev, ((v: T) => {
      if (!pred(v)) return;
      off();
      resolve(v);
    }) as never);
  });
}

describe("robot API over loopback with the SDK", () => {
  it("streams at most 20 messages per second, in source time too, with increasing sequence numbers (NAO, P7, TNY-360)", async () => {
    // One body at a time, each stopped before the next starts: three real-time loops at once on a
    // shared 2-core machine would measure the machine, not the stream.
    const bodies = [
      ["nao", 26, () => simNao(new MonotonicClock())],
      ["p7", 7, () => simP7(new MonotonicClock())],
      ["tny360", 14, () => simTny(new MonotonicClock())],
    ] as const;
    for (const [body, joints, make] of bodies) {
      const robot = await make();
      await robot.start();
      const server = await startApiServer(robot, { port: 0 });
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const c = await connect(server.url, { WebSocket });
      try {
        await next(c, "state"); // running
        // A count of messages, not a fixed window: a loaded machine only makes it take longer. Never
        // faster than 20 Hz (a correctness bound): on the wall clock from the subscription to the
        // last (a slow machine only lowers it), and in source time below, where the lower bound
        // says it flows; the exact rate is the bench's business (bench/api).
        const got: RobotState[] = [];
        const t0 = performance.now();
        let off = () => {};
        await new Promise<void>((done) => {
          off = c.subscribe((st) => {
            if (got.length < STREAM_MESSAGES) got.push(st);
            if (got.length === STREAM_MESSAGES) done();
          });
        });
        const wallS = (performance.now() - t0) / 1000;
        off();
        expect((got.length - 1) / wallS, `${body} msg/s`).toBeLessThanOrEqual(21);
        for (let i = 1; i < got.length; i++) {
          expect(got[i]!.seq).toBeGreaterThan(got[i - 1]!.seq);
          expect(got[i]!.timestampMs).toBeGreaterThan(got[i - 1]!.timestampMs);
        }
        // Source time between first and last: 50 ms per message on the runtime's clock.
        const spanS = (got.at(-1)!.timestampMs - got[0]!.timestampMs) / 1000;
        expect((got.length - 1) / spanS).toBeGreaterThan(10);
        expect((got.length - 1) / spanS).toBeLessThan(21);
        expect(got[0]!.body).toBe(body);
        expect(c.getJointState()!.angles).toHaveLength(joints);
        const health = await c.fetchHealth();
        expect(health.api.subscribers).toBe(1);
        // Real sends happened in at least one slice; the longest bounds the 99th percentile.
        expect(health.api.send_slice_ms.max).toBeGreaterThan(0);
        expect(health.api.send_slice_ms.p99).toBeLessThanOrEqual(health.api.send_slice_ms.max);
        expect(health.link).toBe("ok");
      } finally {
        await c.close();
        await server.close();
        await robot.stop();
      }
    }
  }, 30_000);

  it("REST fields and units match the stream (battery temperature whole °C on REST, LoLA's scale on the stream)", async () => {
    const clock = new SimClock();
    const robot = await simNao(clock);
    const server = await serve(robot);
    // The SDK measures age on the runtime's (simulated) clock here, so a slow machine does not
    // make the states look stale.
    const c = await connect(server.url, { WebSocket, now: () => clock.nowMs() });
    cleanup.push(() => c.close());
    expect(c.getJointState()).toBeNull(); // nothing yet: the body has not cycled
    // Step one cycle at a time; when a cycle's state has been streamed (the broadcast runs between
    // cycles), stop stepping: GET /v1/state then sees the same cycle as the stream.
    for (let round = 0; round < 3; round++) {
      const streamed = () => c.getBodyState() as unknown as NaoWire | null;
      await step(robot, clock, 1); // a new cycle each round
      for (let i = 0; i < 12 && streamed()?.seq !== robot.state.seq; i++) {
        await step(robot, clock, 1);
        for (let wait = 0; wait < 20 && streamed()?.seq !== robot.state.seq; wait++) await sleep(5);
      }
      const live = streamed();
      expect(live?.seq).toBe(robot.state.seq);
      if (!live) return;
      const rest = (await c.fetchState()) as unknown as Record<string, unknown> & { battery: { temperature: number } };
      expect(rest.seq).toBe(live.seq);
      const { battery: rb, ...restOther } = rest;
      const { battery: sb, ...streamOther } = live;
      expect(restOther).toEqual(streamOther);
      expect({ ...rb, temperature: 0 }).toEqual({ ...sb, temperature: 0 });
      // Units: REST whole °C; the stream LoLA's scale (0.1 applied twice: 28.5 °C reads 2.8).
      expect(Number.isInteger(rest.battery.temperature)).toBe(true);
      expect(rest.battery.temperature).toBe(Math.round(robot.state.batteryTemperatureC));
      expect(Math.abs(live.battery.temperature * 10 - rest.battery.temperature)).toBeLessThanOrEqual(1);
      expect(live.battery.temperature).toBeLessThan(10);
    }
    expect((await c.fetchInfo()).joint_names).toEqual([...API_ORDER]);
  });

  it("leases: renewed in the background, the second client refused naming the holder, released by `await using`", async () => {
    const robot = await started(await simNao(new MonotonicClock()));
    const server = await serve(robot);
    const alice = await client(server.url, "alice");
    const bob = await client(server.url, "bob");
    await next(alice, "state");
    {
      await using lease = await alice.acquireControl({ leaseMs: 300 });
      expect(lease.active).toBe(true);
      await sleep(900); // three lease durations: only background renewal keeps it
      const refused = await bob.acquireControl().catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(ApiError);
      expect(refused).toMatchObject({ status: 409, code: "BL_ERR_AUTH_HELD", holder: { owner: "alice", source: "api" } });
      expect((refused as ApiError).message).toMatch(/held by alice \(api\) until \d{4}-\d\d-\d\dT/);
      const r = await (alice as BodyClient<"nao">).nao.setJointTargets({ stiffness: new Array(26).fill(0.3) });
      expect(r.applied).toEqual(["stiffness"]);
      const noLease = await (bob as BodyClient<"nao">).nao.setJointTargets({ stiffness: new Array(26).fill(0) }).catch((e: unknown) => e);
      expect(noLease).toMatchObject({ status: 403, code: "BL_ERR_AUTH_REQUIRED" });
    }
    // `await using` released it: bob gets control at once.
    const bl = await bob.acquireControl({ leaseMs: 500 });
    expect((await bob.fetchControl()).holder?.owner).toBe("bob");
    // Emergency stop needs no lease; the holder learns it lost control.
    const lost = next<{ reason: string }>(bob, "control-lost");
    const stop = await alice.emergencyStop("test stop", { category: 0 });
    expect(stop).toMatchObject({ stopped: true, latched: true, reason: "test stop", category: 0, phase: "cut" });
    expect((await lost).reason).toMatch(/latched|not held/);
    expect(bl.active).toBe(false);
    expect(bob.control).toBeNull();
    await expect.poll(async () => (await bob.fetchHealth()).safety_reason).toMatch(/emergency stop latched \(category 0, api: test stop\)/);
    expect((await bob.fetchEstop()).latched).toBe(true);
    await expect(bob.acquireControl({ leaseMs: 500 })).rejects.toMatchObject({ status: 409, code: "BL_ERR_ESTOP_LATCHED" });
    expect(await bob.resetEstop("test over")).toMatchObject({ latched: false, was_latched: true });
    const after = await bob.acquireControl({ leaseMs: 500 });
    expect(after.active).toBe(true);
    await bob.releaseControl();
  });

  it("e-stop while holding control: the lease ends at once, no renewal is sent into the latch; a latched health or e-stop answer ends a lease too", async () => {
    const robot = await started(await simNao(new MonotonicClock()));
    const server = await serve(robot);
    // Every request each client makes, to see that no refused renewal (PUT /v1/control) is sent.
    const log: string[] = [];
    let failEstop = false;
    const counted = (who: string) => async (url: string, init: { method: string; headers: Record<string, string>; body?: string }) => {
      if (failEstop && url.endsWith("/v1/estop") && init.method === "POST") throw new TypeError("fetch failed");
      const r = await fetch(url, init);
      log.push(`${who} ${init.method} ${new URL(url).pathname} ${r.status}`);
      return r;
    };
    const holder = await connect(server.url, { WebSocket, owner: "holder", fetch: counted("holder") });
    const other = await connect(server.url, { WebSocket, owner: "other", fetch: counted("other") });
    cleanup.push(
      () => holder.close(),
      () => other.close(),
    );
    // Its own stop: renewals every 20 ms, so one would be refused within a few ms of the latch if not held back.
    const lease = await holder.acquireControl({ leaseMs: 300, renewEveryMs: 20 });
    const lost = next<{ reason: string }>(holder, "control-lost");
    await holder.emergencyStop("hand in the way", { category: 0 });
    expect(lease.active).toBe(false);
    expect((await lost).reason).toBe("revoked by the emergency stop (hand in the way)");
    await sleep(150);
    const afterStop = log.slice(log.findIndex((l) => l.startsWith("holder POST /v1/estop")));
    expect(afterStop.filter((l) => l.includes("PUT /v1/control"))).toEqual([]);
    expect(log.filter((l) => / 4\d\d$/.test(l))).toEqual([]);
    await other.resetEstop("clear");

    // Another client's stop: the holder's next health answer ends its lease (renewal timer far away).
    const lease2 = await holder.acquireControl({ leaseMs: 60_000, renewEveryMs: 30_000 });
    const lost2 = next<{ reason: string }>(holder, "control-lost");
    await other.emergencyStop("from the other client");
    expect(lease2.active).toBe(true); // nothing told it yet
    expect((await holder.fetchHealth()).estop.latched).toBe(true);
    expect(lease2.active).toBe(false);
    expect((await lost2).reason).toBe("revoked by the emergency stop (from the other client)");
    expect(holder.control).toBeNull();
    expect(log.filter((l) => / 4\d\d$/.test(l))).toEqual([]);
    // An unlatched answer leaves a lease alone; a stop that never reached the server leaves it renewing.
    await other.resetEstop("clear");
    const lease3 = await holder.acquireControl({ leaseMs: 300, renewEveryMs: 20 });
    expect((await holder.fetchEstop()).latched).toBe(false);
    expect(lease3.active).toBe(true);
    failEstop = true;
    await expect(holder.emergencyStop("lost on the way")).rejects.toMatchObject({ status: 0 });
    const renewals = log.filter((l) => l === "holder PUT /v1/control 200").length;
    await sleep(600); // two lease durations: only renewal keeps it
    expect(log.filter((l) => l === "holder PUT /v1/control 200").length).toBeGreaterThan(renewals);
    expect(lease3.active).toBe(true);
    await holder.releaseControl();
  });

  it("reconnects by itself and says so through events", async () => {
    const robot = await started(await simNao(new MonotonicClock()));
    const s1 = await startApiServer(robot, { port: 0 });
    const port = s1.port;
    const c = await connect(s1.url, { WebSocket, reconnect: { initialDelayMs: 50, maxDelayMs: 200 } });
    cleanup.push(() => c.close());
    await next(c, "state");
    const events: string[] = [];
    c.on("disconnected", (e) => events.push(`disconnected:${e.willReconnect}`));
    c.on("reconnecting", (e) => events.push(`reconnecting:${e.attempt}`));
    c.on("reconnected", () => events.push("reconnected"));
    const down = next(c, "disconnected");
    await s1.close();
    await down;
    expect(c.getJointState()).toBeNull();
    expect(c.connected).toBe(false);
    await sleep(300);
    const back = next(c, "reconnected");
    await serve(robot, port);
    await back;
    await next(c, "state");
    expect(c.getJointState()).not.toBeNull();
    expect(events[0]).toBe("disconnected:true");
    expect(events).toContain("reconnecting:1");
    expect(events.at(-1)).toBe("reconnected");
  });

  it("fails to connect with a clear error when nothing listens", async () => {
    const err = await connect("http://127.0.0.1:1", { WebSocket, connectTimeoutMs: 300 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "BL_ERR_CLI_NO_RUNTIME" });
    expect((err as Error).message).toContain("http://127.0.0.1:1");
  });

  it("fails at once, not after connectTimeoutMs, when nothing listens (the HTTP probe is refused)", async () => {
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
    }, 10_000);
    const err = await connect("http://127.0.0.1:1", { WebSocket, connectTimeoutMs: 60_000 }).catch((e: unknown) => e);
    clearTimeout(timer);
    expect(timedOut).toBe(false);
    expect(err).toMatchObject({ code: "BL_ERR_CLI_NO_RUNTIME" });
  });

  it("keeps retrying within connectTimeoutMs while something answers HTTP but the stream is refused", async () => {
    // A peer that answers every request 503 (a runtime still starting, a proxy): not "nothing listens".
    const { createServer } = await import("node:http");
    let connections = 0;
    const peer = createServer((_req, res) => res.writeHead(503).end()).listen(0, "127.0.0.1");
    peer.on("connection", () => connections++);
    await new Promise((r) => peer.once("listening", r));
    const port = (peer.address() as { port: number }).port;
    const err = await connect(`http://127.0.0.1:${port}`, { WebSocket, connectTimeoutMs: 700 }).catch((e: unknown) => e);
    peer.close();
    expect(err).toMatchObject({ code: "BL_ERR_CLI_NO_RUNTIME" });
    // The probe, and the stream tried again (100, 200, 400 ms backoff) until the timeout.
    expect(connections).toBeGreaterThanOrEqual(3);
  });

  it("binds 127.0.0.1 unless told otherwise", async () => {
    const robot = await simP7(new SimClock());
    const s = await serve(robot);
    expect(s.app.server.address()).toMatchObject({ address: "127.0.0.1" });
  });
});

describe("bodylink serve", () => {
  it("serves the robot API for each body; the SDK reads each one's state", async () => {
    const dir = mkdtempSync(join(tmpdir(), "bodylink-api-test-"));
    cleanup.push(async () => rmSync(dir, { recursive: true, force: true }));
    const bin = join(import.meta.dirname, "../../bin/bodylink.js");
    // the three side by side: each start mostly waits (a process, a worker, a port), and no rate is measured here
    const bodies = [
      ["nao", 26],
      ["p7", 7],
      ["tny360", 14],
    ] as const;
    const served = await Promise.allSettled(
      bodies.map(async ([body, joints]) => {
        const child = spawn(process.execPath, [bin, "serve", "--body", body, "--api-port", "0", "--no-lola", "--no-tny"], {
          env: { ...process.env, BODYLINK_RUNTIME_DIR: dir },
          stdio: ["ignore", "pipe", "pipe"],
        });
        const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
        try {
          let out = "";
          const url = await new Promise<string>((resolve, reject) => {
            child.stdout.on("data", (d: Buffer) => {
              out += d.toString();
              const m = /robot API: (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
              if (m) resolve(m[1]!);
            });
            child.stderr.on("data", (d: Buffer) => {
              out += d.toString();
            });
            child.once("exit", (code) => reject(new Error(`bodylink serve --body ${body} exited with ${code}: ${out}`)));
          });
          const c = await client(url);
          expect(c.body).toBe(body);
          // the first state after the hello (a loaded machine sends it later)
          await expect.poll(() => c.getJointState()?.angles, { timeout: 10_000, message: body }).toHaveLength(joints);
          await c.close();
        } finally {
          child.kill("SIGINT");
          await exited;
        }
      }),
    );
    for (const r of served) if (r.status === "rejected") throw r.reason;
  }, 60_000);
});

/** Modules outside src/client the SDK may import: pure tables, no imports of their own. */
const SHARED_TABLES = ["../errors.js", "../bodies/link.js", "../bodies/registry.js", "../bodies/safety.js"];

describe("SDK stays browser-safe", () => {
  it("imports nothing from node: and nothing outside src/client except the error table and the pure body tables", () => {
    const dir = join(import.meta.dirname, "../../src/client");
    let imports = 0;
    for (const f of readdirSync(dir).filter((x) => x.endsWith(".ts"))) {
      const src = readFileSync(join(dir, f), "utf8");
      for (const m of src.matchAll(/^\s*(?:import|export)\b[^;]*?from\s+"([^"]+)";/gm)) {
        const spec = m[1]!;
        imports++;
        expect(spec.startsWith("node:"), `${f}: ${spec}`).toBe(false);
        expect(spec.startsWith("./") || SHARED_TABLES.includes(spec), `${f}: ${spec}`).toBe(true);
      }
    }
    expect(imports).toBeGreaterThan(10);
    // The shared tables (errors, link words, the body registry, the safety codes) import nothing at all.
    for (const t of SHARED_TABLES) expect(readFileSync(join(dir, t.replace(/\.js$/, ".ts")), "utf8"), t).not.toMatch(/^\s*import\b/m);
  });
});
