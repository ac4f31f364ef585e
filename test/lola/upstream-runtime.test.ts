/**
 * bodylink on a stock NAO (issue 15), end to end over real sockets: the upstream is bodylink's own
 * simulated LoLA (a NaoRobot on the simulated chest board with its LoLA server, byte-exact with
 * LoLA), the proxy is `startRuntime` with `lolaUpstream` (what `serve --lola-upstream` runs), and
 * the tests talk to the proxy's LoLA socket and robot API as clients do.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { type Server, type Socket, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { unpack } from "msgpackr";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type RunningRuntime, startRuntime } from "../../src/cli/serve.js";
import { NaoRobot } from "../../src/runtime/nao-robot.js";
import { startLolaServer } from "../../src/serve/lola/server.js";
import { LolaCommandWriter } from "../../src/wire/lola/command-message.js";
import { LolaCommandReader, type LolaCommandUpdate } from "../../src/wire/lola/command-reader.js";
import { LolaSensorWriter } from "../../src/wire/lola/sensor-message.js";
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

/** The upstream: bodylink's simulated NAO with its LoLA socket (one reader slot for the test's own direct client). */
async function upstreamLola(path: string) {
  const robot = await NaoRobot.create();
  await robot.start();
  const server = await startLolaServer(robot, { path, readers: 1, log: () => {}, robotConfig: { headId: "P0000074A05S93M00061" } });
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await server.close();
    await robot.stop();
  };
  cleanups.push(stop);
  return { robot, server, stop };
}

async function proxy(upstreamPath: string, extra: { lolaReaders?: number } = {}): Promise<RunningRuntime & { lolaPath: string }> {
  const lolaPath = tmpSocketPath();
  const rt = await startRuntime({
    body: "nao",
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
const robotOf = (rt: RunningRuntime) => rt.robot as NaoRobot;

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

  it("the safety ramp runs when the controlling client goes silent: the upstream's stiffness falls to 0", async () => {
    const up = tmpSocketPath();
    const lola = await upstreamLola(up);
    const rt = await proxy(up);
    const c = await client(rt.lolaPath);
    const w = new LolaCommandWriter().setFloats("Position", Float32Array.from(lola.robot.state.position)).setFloats("Stiffness", new Float32Array(25).fill(1));
    // Command every cycle until the upstream robot is stiff (after a slow start the ramp comes up first).
    const t0 = Date.now();
    while (!(lola.robot.state.stiffness[0]! > 0.9)) {
      if (Date.now() - t0 > 20_000) throw new Error("the upstream never got stiff");
      await c.frame();
      await c.send(w.bytes);
    }
    // Silence (the client stays connected): its lease expires after 100 ms, then a 500 ms ramp.
    const faultsBefore = robotOf(rt).health().errors.linkDown ?? 0;
    await until(() => /expired/.test(robotOf(rt).state.safetyReason ?? ""), "the proxy's safety reason", 10_000);
    const mid: number[] = [];
    await until(() => {
      mid.push(lola.robot.state.stiffness[0]!);
      return lola.robot.state.stiffness[0] === 0;
    }, "stiffness 0 upstream", 10_000);
    // It ramped, it did not drop; unless the link itself failed meanwhile (this test's upstream
    // shares the process, so a loaded machine can stall it), which drops to 0 by design.
    if ((robotOf(rt).health().errors.linkDown ?? 0) === faultsBefore) expect(mid.some((v) => v > 0 && v < 0.9)).toBe(true);
  });
});

describe("serve --lola-upstream: what it refuses", () => {
  const base = { body: "nao", host: "127.0.0.1", apiPort: 0, lola: true, lolaReaders: 0, lolaGraceMs: 100, acceptBoardVersion: [10, 11], seed: 1, tny: false, gcEveryMs: 0 };
  it("two body links, our socket on the upstream's path, or a body other than the NAO: one clear usage error each", async () => {
    const up = tmpSocketPath();
    await expect(startRuntime({ ...base, lolaUpstream: up, usb: true })).rejects.toMatchObject({ exitCode: 2, message: expect.stringMatching(/--usb and --lola-upstream are two body links/) });
    await expect(startRuntime({ ...base, lolaUpstream: up, lolaPath: up })).rejects.toMatchObject({ exitCode: 2, message: expect.stringMatching(/is the upstream LoLA's own socket; serve ours elsewhere \(default with --lola-upstream: \/tmp\/bodylink\)/) });
    await expect(startRuntime({ ...base, body: "p7", lolaUpstream: true })).rejects.toMatchObject({ exitCode: 2, message: expect.stringMatching(/does not apply to --body p7/) });
  });
});
