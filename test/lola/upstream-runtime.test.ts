/**
 * bodylink on a stock NAO (issue 15), end to end over real sockets: the upstream is bodylink's own
 * simulated LoLA (a NaoRobot on the simulated chest board with its LoLA server, byte-exact with
 * LoLA), the proxy is `startRuntime` with `lolaUpstream` (what `serve --lola-upstream` runs: the
 * core in its worker), and the tests talk to the proxy's LoLA socket and robot API as clients do.
 */
import fs, { mkdtempSync, rmSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import net, { type Server, Socket, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { unpack } from "msgpackr";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type RunningRuntime, startRuntime } from "../../src/cli/serve.js";
import { NaoRobot } from "../../src/runtime/nao-robot.js";
import type { NaoHost } from "../../src/host/nao-host.js";
import { LolaUpstreamDriver } from "../../src/drivers/nao/lola-upstream.js";
import { MonotonicClock } from "../../src/runtime/clock.js";
import { startLolaServer } from "../../src/serve/lola/server.js";
import { LolaCommandWriter } from "../../src/wire/lola/command-message.js";
import { LolaCommandReader, type LolaCommandUpdate } from "../../src/wire/lola/command-reader.js";
import { LolaSensorWriter } from "../../src/wire/lola/sensor-message.js";
import { messagesByTopic } from "../record/helpers.js";
import { TestLolaClient, tmpSocketPath, until } from "./client.js";
import { KNOWN_ROBOT_CONFIG, knownSensorValues } from "./helpers.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
let runtimeDir = "";
const savedDir = process.env.BODYLINK_RUNTIME_DIR;
beforeAll(() => {
  runtimeDir = mkdtempSync(join(tmpdir(), "bl-up-rt-"));
  process.env.BODYLINK_RUNTIME_DIR = runtimeDir;
});
afterAll(() => {
  if (savedDir === undefined) delete process.env.BODYLINK_RUNTIME_DIR;
  else process.env.BODYLINK_RUNTIME_DIR = savedDir;
  rmSync(runtimeDir, { recursive: true, force: true });
});

/**
 * The upstream: bodylink's simulated NAO with its LoLA socket (one reader slot for the test's own
 * direct client). `commands` collects every command map its clients sent (the proxy's), decoded.
 */
async function upstreamLola(path: string) {
  const robot = await NaoRobot.create();
  await robot.start();
  const commands: LolaCommandUpdate[] = [];
  const readers = new Map<number, LolaCommandReader>();
  const tap = {
    sensor: () => {},
    command: (client: number, bytes: Uint8Array, n: number) => {
      const r = readers.get(client) ?? new LolaCommandReader();
      readers.set(client, r);
      r.push(Buffer.from(bytes.subarray(0, n)), (u) => commands.push(u));
    },
  };
  const server = await startLolaServer(robot, { path, readers: 1, log: () => {}, robotConfig: { headId: "P0000074A05S93M00061" }, tap });
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await server.close();
    await robot.stop();
  };
  cleanups.push(stop);
  return { robot, server, stop, commands };
}

async function proxy(upstreamPath: string, extra: { lolaReaders?: number; record?: string } = {}): Promise<RunningRuntime & { lolaPath: string }> {
  const lolaPath = tmpSocketPath();
  const rt = await startRuntime({
    body: "nao",
    ...(extra.record ? { record: extra.record } : {}),
    host: "127.0.0.1",
    apiPort: 0,
    lola: true,
    lolaPath,
    lolaReaders: extra.lolaReaders ?? 0,
    lolaGraceMs: 100,
    lolaUpstream: upstreamPath,
    // The upstream shares this process: on a loaded machine a 60 ms gap is this process, not LoLA
    // (stalls are tested in upstream.test.ts against a server that really goes silent).
    lolaUpstreamStallMs: 400,
    acceptBoardVersion: [10, 11],
    seed: 1,
    tny: false,
    gcEveryMs: 0,
  });
  cleanups.push(() => rt.close());
  return Object.assign(rt, { lolaPath });
}

async function client(path: string): Promise<TestLolaClient> {
  const c = await TestLolaClient.connect(path);
  cleanups.push(() => c.close());
  return c;
}

const api = async (rt: RunningRuntime, path: string) => (await fetch(`${rt.record.apiUrl}${path}`)).json() as Promise<Record<string, unknown>>;
const robotOf = (rt: RunningRuntime) => rt.robot as NaoHost;

/**
 * The core's own composition on this thread (what src/rt/nao-worker.ts builds in the core's
 * worker: the upstream driver under a NaoRobot, our LoLA server on it), for the one test that
 * watches this thread's sockets call by call.
 */
async function inThreadProxy(upstreamPath: string): Promise<{ robot: NaoRobot; lolaPath: string }> {
  const lolaPath = tmpSocketPath();
  const clock = new MonotonicClock();
  const upstream = new LolaUpstreamDriver({ path: upstreamPath, clock, stallMs: 400 });
  const robot = await NaoRobot.create({ clock, driver: upstream, acceptBoardVersions: [10, 11], youngGcEveryMs: 0 });
  await robot.start();
  const server = await startLolaServer(robot, { path: lolaPath, readers: 0, robotConfigSource: () => upstream.robotConfig, holdUntilValid: true, log: () => {} });
  cleanups.push(async () => {
    await server.close();
    await robot.stop();
  });
  return { robot, lolaPath };
}

// Real runtimes over real sockets on a shared machine: generous per-test budgets.
describe("bodylink on top of LoLA (serve --lola-upstream)", { timeout: 60_000 }, () => {
  it("a client of the proxy receives 896-byte messages byte-identical to the upstream's", async () => {
    const up = tmpSocketPath();
    await upstreamLola(up);
    const rt = await proxy(up);
    const direct = await client(up); // the upstream's reader: what LoLA itself sends
    const c = await client(rt.lolaPath);
    await until(() => robotOf(rt).state.valid, "the proxy's first state");
    // Collect what the upstream sends while the proxy's client reads (both as they arrive).
    const seenUpstream = new Set<string>();
    let collecting = true;
    const collector = (async () => {
      while (collecting) seenUpstream.add((await direct.frame()).toString("hex"));
    })();
    await new Promise((res) => setTimeout(res, 100));
    c.discard(); // only messages from inside the direct client's window
    const ours: Buffer[] = [];
    for (let i = 0; i < 10; i++) ours.push(await c.frame());
    await new Promise((res) => setTimeout(res, 100));
    collecting = false;
    await collector;
    expect(ours.every((f) => f.length === 896)).toBe(true);
    // Every message the proxy sent is one the upstream sent, byte for byte (values, Stiffness as LoLA
    // reports it, RobotConfig with the upstream's head id).
    const matched = ours.filter((f) => seenUpstream.has(f.toString("hex")));
    expect(matched.length).toBe(ours.length);
    const m = unpack(ours.at(-1)!) as { RobotConfig: string[] };
    expect(m.RobotConfig[2]).toBe("P0000074A05S93M00061");
    // The robot API and the dashboard run on top: the health says the link is up and names the upstream.
    const health = await api(rt, "/v1/health");
    expect(health.link).toBe("ok");
    expect(rt.record.transport).toBe(`lola:${up}`);
  });

  it("a command through the proxy reaches the upstream robot; a reader's is ignored", async () => {
    const up = tmpSocketPath();
    const lola = await upstreamLola(up);
    const rt = await proxy(up, { lolaReaders: 1 });
    const c = await client(rt.lolaPath);
    await c.frame();
    const reader = await client(rt.lolaPath);
    await reader.frame(); // admitted as a reader
    const position = Float32Array.from(lola.robot.state.position);
    position[0] = 0.4; // head yaw
    const stiffness = new Float32Array(25);
    stiffness[0] = 1;
    const w = new LolaCommandWriter().setFloats("Position", position).setFloats("Stiffness", stiffness);
    const r = new LolaCommandWriter().setFloats("Position", new Float32Array(25).fill(-0.3)).setFloats("Stiffness", new Float32Array(25).fill(1));
    let sending = true;
    const loop = (async () => {
      while (sending) {
        await c.frame().catch(() => {});
        await c.send(w.bytes).catch(() => {});
        reader.discard();
        await reader.send(r.bytes).catch(() => {});
      }
    })();
    cleanups.push(async () => {
      sending = false;
      await loop;
    });
    await until(() => Math.abs(lola.robot.state.position[0]! - 0.4) < 0.02, "the upstream head to turn to 0.4", 10_000);
    expect(lola.robot.state.position[1]).not.toBeCloseTo(-0.3, 1); // the reader's command never applied
    expect(lola.robot.state.stiffness[1]).toBe(0);
  });

  it("waits for an upstream that starts after it, and survives the upstream restarting", async () => {
    const up = tmpSocketPath();
    const rt = await proxy(up); // nothing there yet
    const c = await client(rt.lolaPath);
    await until(() => robotOf(rt).state.link === "lost", "link lost while LoLA is not there");
    expect(c.pending).toBe(0); // no zeros passed off as a robot
    const first = await upstreamLola(up);
    expect((await c.readExact(896, 8000)).length).toBe(896);
    await until(() => robotOf(rt).state.link === "ok", "link ok");
    const health = await api(rt, "/v1/health");
    expect(health.link).toBe("ok");
    await first.stop(); // LoLA goes away (Restart=on-failure brings it back)
    await until(() => robotOf(rt).state.link === "lost", "link lost after the upstream closed");
    expect(robotOf(rt).state.safetyReason).toMatch(/LoLA closed the connection/);
    c.discard();
    await new Promise((res) => setTimeout(res, 60));
    expect(c.pending).toBe(0);
    await upstreamLola(up);
    expect((await c.readExact(896, 8000)).length).toBe(896);
    await until(() => robotOf(rt).state.link === "ok", "link ok again");
  });

  it("garbage from the upstream: link lost, the last command upstream is stiffness 0, then it recovers with a real LoLA", async () => {
    const up = tmpSocketPath();
    const lola = await upstreamLola(up);
    const rt = await proxy(up);
    const c = await client(rt.lolaPath);
    // A controlling client holds head stiffness 1 through the proxy.
    const w = new LolaCommandWriter().setFloats("Position", Float32Array.from(lola.robot.state.position)).setFloats("Stiffness", new Float32Array(25).fill(1));
    let sending = true;
    const loop = (async () => {
      while (sending) {
        await c.readExact(896, 60_000).catch(() => {});
        await c.send(w.bytes).catch(() => {});
      }
    })();
    cleanups.push(async () => {
      sending = false;
      c.socket.destroy();
      await loop;
    });
    await until(() => lola.robot.state.stiffness[0]! > 0.9, "stiffness upstream", 10_000);
    await lola.stop();
    // Replace the upstream by one that sends a good message, then bytes that are not MessagePack.
    const received: Buffer[] = [];
    const sockets = new Set<Socket>();
    const goodMessage = Buffer.from(new LolaSensorWriter(KNOWN_ROBOT_CONFIG).write(knownSensorValues()));
    const bad: Server = createServer((s) => {
      sockets.add(s);
      s.on("data", (b) => received.push(b));
      s.on("error", () => {});
      s.write(Buffer.concat([goodMessage, Buffer.from([0xc1])]));
    });
    await new Promise<void>((res) => bad.listen(up, res));
    await until(() => received.length > 0 && robotOf(rt).state.safetyReason !== null && /not a sensor message/.test(robotOf(rt).state.safetyReason ?? ""), "the garbage fault", 10_000);
    expect(robotOf(rt).state.link).toBe("lost");
    // The last command the proxy sent upstream holds every joint at stiffness 0.
    const updates: LolaCommandUpdate[] = [];
    new LolaCommandReader().push(Buffer.concat(received), (u) => updates.push(u));
    expect(updates.at(-1)?.Stiffness).toEqual(new Array(25).fill(0));
    for (const s of sockets) s.destroy();
    await new Promise<void>((res) => bad.close(() => res()));
    const again = await upstreamLola(up);
    await until(() => robotOf(rt).state.link === "ok", "link ok with a real LoLA again", 10_000);
    // After recovery, stiffness comes back on the ramp, never in one jump.
    const seen: number[] = [];
    const t0 = Date.now();
    while (Date.now() - t0 < 1500 && (seen.at(-1) ?? 0) < 0.99) {
      seen.push(again.robot.state.stiffness[0]!);
      await new Promise((res) => setTimeout(res, 10));
    }
    for (let i = 1; i < seen.length; i++) expect(seen[i]! - seen[i - 1]!, `step ${i}`).toBeLessThan(0.5);
  });

  it("the safety ramp runs when the controlling client goes silent: the commands upstream step down to stiffness 0", async () => {
    const up = tmpSocketPath();
    const lola = await upstreamLola(up);
    const rt = await proxy(up);
    const c = await client(rt.lolaPath);
    const w = new LolaCommandWriter().setFloats("Position", Float32Array.from(lola.robot.state.position)).setFloats("Stiffness", new Float32Array(25).fill(1));
    // Command every message until the proxy sends full stiffness upstream (after a start or a fault the ramp comes up first).
    const full = () => lola.commands.some((u) => u.Stiffness?.[0] === 1);
    while (!full()) {
      await c.frame();
      await c.send(w.bytes);
    }
    // Silence (the client stays connected): its lease expires (100 ms grace), then the proxy ramps.
    const from = lola.commands.length;
    const linkDownBefore = (await robotOf(rt).health()).errors.linkDown ?? 0;
    await until(() => lola.commands.slice(from).some((u) => u.Stiffness?.[0] === 0), "a command at stiffness 0 upstream", 20_000);
    expect(robotOf(rt).authority.holder()).toBeNull(); // the silent client's lease expired
    // Judged on what the upstream received, command by command, not on when: the head's stiffness
    // never rises, and unless the link itself failed meanwhile (a loaded machine can stall this
    // process's upstream, which drops to 0 by design) it steps down by one ramp step per cycle
    // (12 ms of a 500 ms ramp) through the values between, never in one jump.
    const head = lola.commands.slice(from).map((u) => u.Stiffness![0]!);
    const end = head.indexOf(0);
    for (let i = 1; i <= end; i++) expect(head[i]!, `command ${i}`).toBeLessThanOrEqual(head[i - 1]!);
    if (((await robotOf(rt).health()).errors.linkDown ?? 0) === linkDownBefore) {
      const between = head.slice(0, end).filter((v) => v > 0 && v < 1);
      expect(between.length).toBeGreaterThanOrEqual(Math.floor(500 / 12) - 2);
      for (let i = 1; i <= end; i++) expect(head[i - 1]! - head[i]!, `step ${i}`).toBeLessThan(12 / 500 + 1e-3);
    }
  });
});

describe("the path from an upstream message to ours", { timeout: 60_000 }, () => {
  it("each upstream message runs its cycle inside the socket's read callback: our client's message is written there, the command upstream right after", async () => {
    const up = tmpSocketPath();
    await upstreamLola(up);
    // Every socket write and read callback of this process, named by what it is:
    // U the upstream writes a message, R/r the proxy's read callback begins/ends, D the proxy writes
    // our client's message, C the proxy writes a command upstream.
    const events: string[] = [];
    let tracing = false;
    // The proxy reads the upstream into its own buffer (net.connect's onread): R/r around that callback.
    type OnRead = { buffer: Uint8Array; callback: (n: number, b: Uint8Array) => boolean };
    const connect0 = net.connect;
    net.connect = ((opts: unknown, ...rest: unknown[]) => {
      const o = opts as { path?: string; onread?: OnRead };
      if (o && typeof o === "object" && o.path === up && o.onread) {
        const cb = o.onread.callback;
        o.onread = {
          buffer: o.onread.buffer,
          callback: (n, b) => {
            if (tracing) events.push("R");
            const r = cb(n, b);
            if (tracing) events.push("r");
            return r;
          },
        };
      }
      return (connect0 as (...a: unknown[]) => Socket)(opts, ...rest);
    }) as typeof net.connect;
    syncBuiltinESMExports();
    let rt: Awaited<ReturnType<typeof inThreadProxy>>;
    try {
      rt = await inThreadProxy(up);
    } finally {
      net.connect = connect0;
      syncBuiltinESMExports();
    }
    const c = await client(rt.lolaPath);
    const w = new LolaCommandWriter().setFloats("Stiffness", new Float32Array(25));
    const proto = Socket.prototype as unknown as { write: (...a: unknown[]) => boolean };
    const { write } = proto;
    // The LoLA server writes its clients' messages, and the proxy its commands upstream, straight to
    // the socket's descriptor (fs.writeSync; socket.write only when the kernel does not take one
    // whole): D (896 bytes) or C (a command) either way.
    const writeSync = fs.writeSync;
    fs.writeSync = ((fd: number, b: Uint8Array, ...rest: unknown[]) => {
      if (b.length === 896) events.push("D");
      else if (b.length >= 64) events.push("C");
      return (writeSync as (...a: unknown[]) => number)(fd, b, ...rest);
    }) as typeof fs.writeSync;
    syncBuiltinESMExports();
    tracing = true;
    const serverPath = (s: Socket) => (s as unknown as { server?: Server }).server?.address();
    proto.write = function (this: Socket, chunk: unknown, ...rest: unknown[]) {
      const n = (chunk as Uint8Array | undefined)?.length ?? 0;
      const at = serverPath(this);
      if (n === 896 && at === up) events.push("U");
      else if (n === 896 && at === rt.lolaPath) events.push("D");
      else if (n >= 64 && at === undefined && this !== c.socket) events.push("C");
      return write.call(this, chunk, ...rest);
    };
    try {
      await until(() => rt.robot.state.link === "ok", "link ok");
      for (let i = 0; i < 30; i++) {
        await c.frame();
        await c.send(w.bytes);
      }
    } finally {
      tracing = false;
      proto.write = write;
      fs.writeSync = writeSync;
      syncBuiltinESMExports();
    }
    // Per upstream read callback (R to r): our client's message (D), then the command upstream (C),
    // both inside it: the command leaves when the cycle's listeners are done, with no microtask.
    const seq = events.join("");
    const callbacks = seq.match(/R[^R]*/g) ?? [];
    expect(callbacks.length).toBeGreaterThan(20);
    const inside = callbacks.filter((cb) => /^R[^rC]*D[^rC]*C[^r]*r/.test(cb));
    // A message that arrives while a previous write to our client is pending is dropped for it (no D),
    // and a fault cycle has no command: on a loaded machine a few callbacks may differ, most may not.
    expect(inside.length).toBeGreaterThanOrEqual(callbacks.length - 3);
    expect(seq).not.toMatch(/R[^rD]*C/); // never a command before our client's message
  });
});

describe("serve --lola-upstream on the threaded core (serve's default), recording", { timeout: 90_000 }, () => {
  it("the worker owns the upstream client, the driver and our LoLA server: byte-identical messages, commands upstream, the exact upstream bytes recorded", async () => {
    const up = tmpSocketPath();
    const lola = await upstreamLola(up);
    const dir = mkdtempSync(join(tmpdir(), "bl-up-rec-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, "up.mcap");
    const rt = await proxy(up, { record: file });
    expect(rt.host).not.toBeNull(); // the core runs in its worker, recording or not
    expect(rt.record.transport).toBe(`lola:${up}`);
    const direct = await client(up);
    await direct.frame(); // admitted (a reader's role is decided 25 ms after accept): what LoLA sends from now on
    const c = await client(rt.lolaPath);
    const seenUpstream = new Set<string>();
    let collecting = true;
    const collector = (async () => {
      while (collecting) seenUpstream.add((await direct.frame()).toString("hex"));
    })();
    await c.frame();
    c.discard();
    // The proxy's client commands head yaw 0.4 at stiffness 1; it reaches the upstream robot.
    const position = Float32Array.from(lola.robot.state.position);
    position[0] = 0.4;
    const stiffness = new Float32Array(25);
    stiffness[0] = 1;
    const w = new LolaCommandWriter().setFloats("Position", position).setFloats("Stiffness", stiffness);
    const ours: Buffer[] = [];
    const t0 = Date.now();
    // Until the head is there and the upstream took the command at full stiffness: the proxy ramps
    // a newly controlling client's stiffness, and a quick head gets there before the ramp ends.
    const taken = () => lola.commands.some((u) => u.Stiffness?.[0] === 1 && Math.abs((u.Position?.[0] ?? Number.NaN) - 0.4) < 1e-6);
    while (!(Math.abs(lola.robot.state.position[0]! - 0.4) < 0.02 && taken())) {
      // A bound with the proxy's own account, not a hang, if the command never arrives.
      if (Date.now() - t0 > 40_000)
        throw new Error(`the head never reached 0.4 at stiffness 1 (at ${lola.robot.state.position[0]}, stiffness 1 taken: ${taken()}); proxy health ${JSON.stringify(await robotOf(rt).health())}`);
      ours.push(await c.readExact(896, 10_000));
      await c.send(w.bytes);
    }
    await new Promise((res) => setTimeout(res, 100));
    collecting = false;
    await collector;
    expect(ours.every((f) => f.length === 896)).toBe(true);
    expect(ours.map((f, i) => (seenUpstream.has(f.toString("hex")) ? -1 : i)).filter((i) => i >= 0)).toEqual([]);
    // Preferences: the one clear answer for a link that has none.
    const prefs = await fetch(`${rt.record.apiUrl}/v1/preferences`);
    expect(prefs.status).toBe(404);
    expect(await prefs.json()).toMatchObject({ code: "BL_ERR_PREFS_UNAVAILABLE", message: expect.stringMatching(/the upstream LoLA gives no preferences/) });
    await rt.close();
    // The recording (written by the main thread from the core's ring): every upstream message our
    // client got is in /lola/upstream/sensor byte for byte, and /lola/sensor holds what we sent.
    const byTopic = await messagesByTopic(file);
    const hex = (t: string) => new Set((byTopic.get(t) ?? []).map((b) => b.toString("hex")));
    const upSensor = hex("/lola/upstream/sensor");
    const ourSensor = hex("/lola/sensor");
    for (const f of ours) {
      expect(upSensor.has(f.toString("hex"))).toBe(true);
      expect(ourSensor.has(f.toString("hex"))).toBe(true);
    }
    // Commands sent upstream, the state of each cycle (the core's), and the main thread's events.
    const cmds: LolaCommandUpdate[] = [];
    for (const b of byTopic.get("/lola/upstream/command") ?? []) new LolaCommandReader().push(b, (u) => cmds.push(u));
    expect(cmds.some((u) => u.Stiffness?.[0] === 1 && Math.abs(u.Position![0]! - 0.4) < 1e-6)).toBe(true);
    const states = (byTopic.get("/nao/state") ?? []).map((b) => JSON.parse(b.toString()) as { seq: number });
    for (let i = 1; i < states.length; i++) expect(states[i]!.seq).toBeGreaterThanOrEqual(states[i - 1]!.seq);
    // One state per cycle; a cycle per upstream message at least (our client may also get a fallback cycle's repeat).
    expect(new Set(states.map((st) => st.seq)).size).toBeGreaterThanOrEqual(new Set(ours.map((f) => f.toString("hex"))).size);
    const events = (byTopic.get("/events") ?? []).map((b) => (JSON.parse(b.toString()) as { type: string }).type);
    expect(events).toEqual(expect.arrayContaining(["recording_started", "lease_acquired", "recording_stopped"]));
  });
});

describe("serve --lola-upstream: what it refuses", () => {
  const base = { body: "nao", host: "127.0.0.1", apiPort: 0, lola: true, lolaReaders: 0, lolaGraceMs: 100, acceptBoardVersion: [10, 11], seed: 1, tny: false, gcEveryMs: 0 };
  it("two body links, our socket on the upstream's path, or a body other than the NAO: one clear usage error each", async () => {
    const up = tmpSocketPath();
    await expect(startRuntime({ ...base, lolaUpstream: up, usb: true })).rejects.toMatchObject({ exitCode: 2, message: expect.stringMatching(/--usb and --lola-upstream are two body links/) });
    await expect(startRuntime({ ...base, lolaUpstream: up, lolaPath: up })).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringMatching(/is the upstream LoLA's own socket; serve ours elsewhere \(default with --lola-upstream: \/tmp\/bodylink\)/),
    });
    await expect(startRuntime({ ...base, body: "p7", lolaUpstream: true })).rejects.toMatchObject({ exitCode: 2, message: expect.stringMatching(/does not apply to --body p7/) });
  });
});
