import { spawnSync } from "node:child_process";
import { existsSync, lstatSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { decode, encode } from "@msgpack/msgpack";
import { pack, unpack } from "msgpackr";
import { afterEach, describe, expect, it } from "vitest";
import { SimClock } from "../../src/runtime/clock.js";
import { stiffnessFromCounts, stiffnessToCounts } from "../../src/bodies/nao/units.js";
import { NaoRobot } from "../../src/runtime/nao-robot.js";
import { type LolaServer, type LolaServerOptions, startLolaServer } from "../../src/serve/lola/server.js";
import { LolaCommandWriter } from "../../src/wire/lola/command-message.js";
import { LOLA_SENSOR_KEYS, type LolaCommandKeyName } from "../../src/wire/lola/constants.js";
import { type LogLine, TestLolaClient, tmpSocketPath, until } from "./client.js";
import { f32At, walkMap } from "./helpers.js";
import { naoTestSimModel, TEST_SIM } from "../support/test-sim.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Rig {
  clock: SimClock;
  robot: NaoRobot;
  server: LolaServer;
  logs: LogLine[];
  path: string;
  /** Advance simulated time one period and run one cycle, `n` times. */
  step(n?: number): Promise<void>;
  connect(): Promise<TestLolaClient>;
  logged(re: RegExp): boolean;
}

async function rig(opts: LolaServerOptions = {}, robotOpts: { stiffnessRampMs?: number } = {}): Promise<Rig> {
  const clock = new SimClock();
  const robot = await NaoRobot.create({ clock, ...robotOpts, ...(await naoTestSimModel()) });
  await robot.configure();
  const logs: LogLine[] = [];
  const path = opts.path ?? tmpSocketPath();
  const server = await startLolaServer(robot, { path, log: (level, message) => logs.push({ level, message }), ...opts });
  cleanups.push(() => server.close());
  const r: Rig = {
    clock,
    robot,
    server,
    logs,
    path,
    async step(n = 1) {
      for (let i = 0; i < n; i++) {
        await clock.advance(12);
        robot.loop.step();
      }
    },
    async connect() {
      const c = await TestLolaClient.connect(path);
      cleanups.push(() => c.close());
      return c;
    },
    logged: (re) => logs.some((l) => re.test(l.message)),
  };
  return r;
}

const range = (n: number, f: (i: number) => number): number[] => Array.from({ length: n }, (_, i) => f(i));
const STIFF = range(25, (i) => Math.fround(0.3 + i / 50)); // distinct, inside 0..1
/** The stiffness the runtime reports as sent: the chest board takes 8 bits (0..255). */
const sent = (v: number): number => Math.fround(stiffnessFromCounts(stiffnessToCounts(v)));
const SENT_STIFF = STIFF.map(sent);

/** Send a command and wait until the server has applied it (the robot's lease holder changes or the count moves). */
async function sendAndWait(r: Rig, c: TestLolaClient, bytes: Uint8Array, commandsBefore?: number): Promise<void> {
  const before = commandsBefore ?? r.server.clients().find((x) => x.role === "controller")?.commands ?? 0;
  await c.send(bytes);
  await until(() => (r.server.clients().find((x) => x.role === "controller")?.commands ?? 0) > before, "the command to arrive");
}

describe("LoLA server: sensor messages", () => {
  it(`runs on this project's body model: ${TEST_SIM} (vitest.config.ts runs this file on both)`, async () => {
    const r = await rig();
    expect(r.robot.sim!.body.model.kind).toBe(TEST_SIM);
  });

  it("sends the first 896-byte message right after accept, with the body id from the preferences", async () => {
    const r = await rig({ robotConfig: { headId: "P0000074A05S93M00061" } });
    expect(r.server.path).toBe(r.path);
    expect(lstatSync(r.path).isSocket()).toBe(true);
    const c = await r.connect();
    const first = await c.frame(); // no cycle has run
    const m = decode(first) as Record<string, unknown[]>;
    expect(Object.keys(m)).toEqual(LOLA_SENSOR_KEYS.map((k) => k.key));
    expect(m.RobotConfig).toEqual(["P0000073A07S94700012", "6.0.0", "P0000074A05S93M00061", "6.0.0"]);
    expect(r.server.clients()).toMatchObject([{ name: "lola:client#1", role: "controller", framesSent: 1 }]);
  });

  it("a read_exact(896) client gets one whole message per cycle for 1,000 cycles, matching the state", async () => {
    const r = await rig();
    const c = await r.connect();
    await c.frame();
    for (let k = 0; k < 1000; k++) {
      await r.step();
      const f = await c.frame();
      if (k % 50 === 0 || k === 999) {
        const m = unpack(f) as Record<string, number[]>;
        expect(m.Accelerometer).toEqual(Array.from(r.robot.state.accelerometer));
        expect(m.Battery).toEqual(Array.from(r.robot.state.battery));
        expect(m.Position).toEqual(Array.from(r.robot.state.position));
        expect(m.Status).toEqual(Array.from(r.robot.state.status));
      }
    }
    expect(c.pending).toBe(0);
    expect(c.received).toBe(1001 * 896);
    expect(r.server.clients()[0]).toMatchObject({ framesSent: 1001, framesDropped: 0 });
  });

  it("a B-Human-style client can cache the first packet's offsets and read later packets there", async () => {
    const r = await rig();
    const c = await r.connect();
    const first = await c.frame();
    const { entries } = walkMap(first); // parsed once, like NaoProvider
    const keyBytes = entries.map((e) => first.subarray(e.keyOffset, e.keyOffset + 1 + e.key.length).toString("latin1"));
    const fields: Record<string, keyof NaoRobot["state"]> = {
      Stiffness: "stiffness",
      Position: "position",
      Temperature: "temperature",
      Current: "current",
      Battery: "battery",
      Accelerometer: "accelerometer",
      Gyroscope: "gyroscope",
      Angles: "angles",
      Sonar: "sonar",
      FSR: "fsr",
      Touch: "touch",
      Status: "status",
    };
    // Give the joints something to do so values change between packets.
    const move = new LolaCommandWriter(["Position", "Stiffness"])
      .setFloats(
        "Stiffness",
        range(25, () => 1),
      )
      .setFloat("Position", 0, 0.5)
      .setFloat("Position", 1, 0.3);
    await sendAndWait(r, c, move.bytes);
    let last = first;
    for (let k = 0; k < 60; k++) {
      await r.step();
      const f = await c.frame();
      for (const [i, e] of entries.entries()) expect(f.subarray(e.keyOffset, e.keyOffset + 1 + e.key.length).toString("latin1")).toBe(keyBytes[i]);
      for (const e of entries) {
        if (e.key === "RobotConfig") continue;
        const src = r.robot.state[fields[e.key]!] as ArrayLike<number>;
        e.values.forEach((v, i) => {
          const got = v.type === "f32" ? f32At(f, v.offset) : f[v.offset];
          expect(got, `${e.key}[${i}]`).toBe(src[i]);
        });
      }
      last = f;
    }
    const headYaw = entries.find((e) => e.key === "Position")!.values[0]!.offset;
    expect(f32At(last, headYaw)).not.toBe(f32At(first, headYaw)); // the values did move
  });
});

describe("LoLA server: commands", () => {
  const full = (keys: readonly LolaCommandKeyName[]) => {
    const w = new LolaCommandWriter(keys);
    w.setFloats("Stiffness", STIFF);
    if (keys.includes("Position"))
      w.setFloats(
        "Position",
        range(25, () => 0),
      );
    return w.bytes;
  };

  it("applies HULKs' alphabetical 11-key command and takes control as lola:client#1", async () => {
    const r = await rig();
    const c = await r.connect();
    await c.frame();
    const cmd = {
      Chest: [1, 0, 0],
      LEar: range(10, () => 1),
      LEye: range(24, () => 0.5),
      LFoot: [0, 1, 0],
      Position: range(25, () => 0),
      REar: range(10, () => 1),
      REye: range(24, () => 0.5),
      RFoot: [0, 0, 1],
      Skull: range(12, () => 0.25),
      Sonar: [true, false],
      Stiffness: STIFF,
    };
    const bytes = encode(cmd, { forceFloat32: true, forceIntegerToFloat: true });
    expect(bytes.length).toBe(786);
    await sendAndWait(r, c, bytes);
    expect(r.robot.authority.holder()).toMatchObject({ owner: "lola:client#1", source: "lola" });
    await r.step();
    expect(Array.from(r.robot.state.stiffness)).toEqual(SENT_STIFF);
    // The next sensor message reports it.
    c.discard();
    await r.step();
    expect((unpack(await c.frame()) as { Stiffness: number[] }).Stiffness).toEqual(SENT_STIFF);
    expect(r.logs.filter((l) => l.level === "warn")).toEqual([]);
  });

  it("applies B-Human's 10 keys without Sonar (777 bytes)", async () => {
    const r = await rig();
    const c = await r.connect();
    const bytes = full(["Position", "Stiffness", "REar", "LEar", "Chest", "LEye", "REye", "LFoot", "RFoot", "Skull"]);
    expect(bytes.length).toBe(777);
    await sendAndWait(r, c, bytes);
    await r.step();
    expect(Array.from(r.robot.state.stiffness)).toEqual(SENT_STIFF);
    expect(r.logs.filter((l) => l.level === "warn")).toEqual([]);
  });

  it("accepts integers in float places (msgpack-c ≥ 6.1 style)", async () => {
    const r = await rig();
    const c = await r.connect();
    const stiff = range(25, (i) => i % 2); // 0 and 1 packed as fixints
    const bytes = pack({ Position: range(25, () => 0), Stiffness: stiff, Chest: [1, 0, 0] });
    expect(bytes.includes(0xca)).toBe(false);
    await sendAndWait(r, c, bytes);
    await r.step();
    expect(Array.from(r.robot.state.stiffness)).toEqual(stiff);
    expect(r.logs.filter((l) => l.level === "warn")).toEqual([]);
  });

  it("rejects a wrong-length array (and NaN) with a logged reason and applies the rest", async () => {
    const r = await rig();
    const c = await r.connect();
    await sendAndWait(r, c, encode({ Position: range(24, () => 0), Stiffness: STIFF, Chest: [Number.NaN, 0, 0] }, { forceFloat32: true, forceIntegerToFloat: true }));
    await r.step();
    expect(Array.from(r.robot.state.stiffness)).toEqual(SENT_STIFF);
    expect(r.logged(/lola:client#1: Position: expected 25 values, got 24 \(key ignored, the rest applied; logged once\)/)).toBe(true);
    expect(r.logged(/lola:client#1: Chest: values must be finite numbers/)).toBe(true);
    // The same problem again is counted, not logged again.
    const lines = r.logs.length;
    await sendAndWait(r, c, encode({ Position: range(24, () => 0) }, { forceFloat32: true }));
    expect(r.logs.length).toBe(lines);
    expect(r.server.clients()[0]!.keyProblems).toBe(3);
  });

  it("garbage bytes drop that client with one clear line; the next client controls", async () => {
    const r = await rig();
    const c = await r.connect();
    await sendAndWait(r, c, full(["Stiffness"]));
    expect(r.robot.authority.holder()?.owner).toBe("lola:client#1");
    await c.send(Uint8Array.of(0x81, 0xa5, 0x43, 0x68, 0x65, 0x73, 0x74, 0xc1, 0xff));
    await c.closed;
    expect(r.logs.filter((l) => /lola:client#1 dropped: undecodable LoLA command: stream byte \d+ is 0xc1/.test(l.message))).toHaveLength(1);
    expect(r.robot.authority.holder()).toBeNull();
    const c2 = await r.connect();
    await c2.frame();
    await sendAndWait(r, c2, full(["Stiffness"]));
    expect(r.robot.authority.holder()?.owner).toBe("lola:client#2");
  });

  it("commands are ignored while another source (the robot API) holds control", async () => {
    const r = await rig();
    const api = r.robot.authority.acquire("api:alice", "api", 5000);
    expect(api.ok).toBe(true);
    const c = await r.connect();
    await sendAndWait(r, c, full(["Stiffness"]));
    expect(r.robot.authority.holder()?.owner).toBe("api:alice");
    expect(r.server.clients()[0]).toMatchObject({ commands: 1, commandsIgnored: 1, hasControl: false });
    expect(r.logged(/lola:client#1: control: commands ignored: control is held by api:alice \(api\)/)).toBe(true);
    if (api.ok) api.lease.release();
    await sendAndWait(r, c, full(["Stiffness"]));
    expect(r.robot.authority.holder()?.owner).toBe("lola:client#1");
  });
});

describe("LoLA server: clients, grace period, reconnects", () => {
  it("refuses a second controlling client with an Error map and EOF; the first is unaffected", async () => {
    const r = await rig();
    const c1 = await r.connect();
    await c1.frame();
    const c2 = await r.connect();
    const bytes = await c2.rest();
    expect(bytes.length).toBeLessThan(896); // a read_exact(896) client sees EOF
    const m = decode(bytes) as { Error: string };
    expect(m.Error).toBe(
      "bodylink LoLA: client#2 refused: lola:client#1 is the controlling client and this server allows no read-only clients (LoLA serves one client; start bodylink with --lola-readers N to allow N)",
    );
    expect(r.logged(/client#2 refused: lola:client#1 is the controlling client/)).toBe(true);
    await r.step();
    await c1.frame();
    expect(r.server.clients().map((c) => c.name)).toEqual(["lola:client#1"]);
  });

  it("with readers: 1, the second client reads every message, its commands are ignored, a third is refused", async () => {
    const r = await rig({ readers: 1 });
    const c1 = await r.connect();
    const c2 = await r.connect();
    await c1.frame();
    await c2.frame();
    await sendAndWait(r, c1, new LolaCommandWriter(["Stiffness"]).setFloats("Stiffness", STIFF).bytes);
    await c2.send(new LolaCommandWriter(["Stiffness"]).bytes); // stiffness 0: must not apply
    await until(() => r.logged(/lola:client#2 is read-only: the commands it sends are ignored \(lola:client#1 controls\)/), "the read-only log line");
    await r.step();
    expect(Array.from(r.robot.state.stiffness)).toEqual(SENT_STIFF);
    expect((await c2.frame()).length).toBe(896);
    const c3 = await r.connect();
    expect((decode(await c3.rest()) as { Error: string }).Error).toMatch(/client#3 refused: lola:client#1 is the controlling client and all 1 read-only slots are taken/);
    expect(r.server.clients().map((c) => [c.name, c.role])).toEqual([
      ["lola:client#1", "controller"],
      ["lola:client#2", "reader"],
    ]);
  });

  it("a silent client keeps its last command for the grace period, then stiffness ramps to 0 (simulated time)", async () => {
    const r = await rig({ graceMs: 100 }, { stiffnessRampMs: 500 });
    const c = await r.connect();
    await c.frame();
    await sendAndWait(
      r,
      c,
      new LolaCommandWriter(["Stiffness", "Position"]).setFloats(
        "Stiffness",
        range(25, () => 1),
      ).bytes,
    );
    const t0 = r.clock.nowMs();
    const stiffness: number[] = [];
    const reported: number[] = [];
    for (let k = 1; k <= 60; k++) {
      await r.step();
      stiffness.push(r.robot.state.stiffness[0]!);
      reported.push((unpack(await c.frame()) as { Stiffness: number[] }).Stiffness[0]!);
    }
    // Cycles 1..8 (≤ 96 ms after the command): the command holds.
    expect(stiffness.slice(0, 8)).toEqual(Array(8).fill(1));
    expect(r.clock.nowMs() - t0).toBe(720);
    // Cycle 9 (108 ms): the lease has expired; the ramp takes 500 ms at 12 ms per step.
    expect(stiffness[8]).toBeLessThan(1);
    expect(stiffness[8]).toBe(sent(1 - 12 / 500));
    for (let k = 9; k < 60; k++) expect(stiffness[k]).toBeLessThanOrEqual(stiffness[k - 1]!);
    const zeroAt = stiffness.indexOf(0);
    expect(zeroAt).toBeGreaterThan(8 + 40);
    expect(zeroAt).toBeLessThanOrEqual(8 + Math.ceil(500 / 12));
    // The client saw the same ramp in its sensor messages.
    expect(reported).toEqual(stiffness);
    expect(r.logged(/lola:client#1 sent no command for 100 ms: its control expired, stiffness ramps to 0/)).toBe(true);
    expect(r.robot.state.safetyReason).toMatch(/control expired \(lola:client#1\)|control released or expired/);
    // The next command takes control again.
    await sendAndWait(
      r,
      c,
      new LolaCommandWriter(["Stiffness"]).setFloats(
        "Stiffness",
        range(25, () => 1),
      ).bytes,
    );
    expect(r.robot.authority.holder()?.owner).toBe("lola:client#1");
    await r.step();
    expect(r.robot.state.stiffness[0]).toBe(1);
  });

  it("a disconnect releases control at once (same ramp); a new client reconnects without a restart", async () => {
    const r = await rig({ graceMs: 1000 });
    const c = await r.connect();
    await c.frame();
    await sendAndWait(
      r,
      c,
      new LolaCommandWriter(["Stiffness"]).setFloats(
        "Stiffness",
        range(25, () => 1),
      ).bytes,
    );
    await r.step();
    expect(r.robot.state.stiffness[0]).toBe(1);
    await c.close();
    await until(() => r.robot.authority.holder() === null, "control to be released");
    expect(r.logged(/lola:client#1 disconnected while in control: control released, stiffness ramps to 0/)).toBe(true);
    await r.step(); // well within the 1000 ms grace: the disconnect, not the lease, ended control
    expect(r.robot.state.stiffness[0]).toBe(sent(1 - 12 / 500));
    const c2 = await r.connect();
    await c2.frame();
    expect(r.server.clients()).toMatchObject([{ name: "lola:client#2", role: "controller" }]);
    await sendAndWait(
      r,
      c2,
      new LolaCommandWriter(["Stiffness"]).setFloats(
        "Stiffness",
        range(25, () => 1),
      ).bytes,
    );
    await r.step();
    expect(r.robot.state.stiffness[0]).toBe(1);
    expect(r.robot.authority.holder()?.owner).toBe("lola:client#2");
  });

  it("after an emergency stop the client must reconnect; a new connection gets stiffness 0 until the reset, then a ramp", async () => {
    const r = await rig();
    const c = await r.connect();
    const on = new LolaCommandWriter(["Stiffness"]).setFloats(
      "Stiffness",
      range(25, () => 1),
    ).bytes;
    await sendAndWait(r, c, on);
    r.robot.emergencyStop("test");
    expect(r.robot.authority.holder()).toBeNull();
    expect(r.logged(/lola:client#1 lost control: revoked \(emergency stop or shutdown\); its commands are ignored until it reconnects/)).toBe(true);
    await sendAndWait(r, c, on);
    expect(r.robot.authority.holder()).toBeNull();
    await r.step();
    expect(r.robot.state.stiffness[0]).toBe(0);
    expect(r.server.clients()[0]).toMatchObject({ commandsIgnored: 1, hasControl: false });
    await c.close();
    // Wait for the server to see the hang-up, so the command count below is the new client's.
    await until(() => r.server.clients().length === 0, "client 1 to be gone");
    // The stop is latched: a new connection gets stiffness 0 until the reset.
    const c2 = await r.connect();
    await sendAndWait(r, c2, on, 0);
    expect(r.robot.authority.holder()).toBeNull();
    expect(r.logged(/lola:client#2: control: commands ignored: emergency stop latched \(category \d, local: test\)/)).toBe(true);
    for (let i = 0; i < 5; i++) await r.step();
    expect(r.robot.state.stiffness.every((v) => v === 0)).toBe(true);
    // After the reset its next command takes control, and stiffness ramps up instead of jumping.
    r.robot.resetEstop({ source: "test", reason: "clear" });
    await sendAndWait(r, c2, on, 1);
    expect(r.robot.authority.holder()?.owner).toBe("lola:client#2");
    await r.step();
    const first = r.robot.state.stiffness[0]!;
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThan(0.1);
    for (let i = 0; i < 60; i++) {
      await sendAndWait(r, c2, on, 1);
      await r.step();
    }
    expect(r.robot.state.stiffness[0]).toBeCloseTo(1, 2);
  });

  it("a client that hangs up and reconnects at once controls again (not refused)", async () => {
    const r = await rig();
    const c1 = await r.connect();
    await c1.frame();
    c1.socket.destroy(); // no waiting for the server to notice
    const c2 = await r.connect();
    expect((await c2.frame()).length).toBe(896);
    expect(r.server.clients()).toMatchObject([{ name: "lola:client#2", role: "controller" }]);
    expect(r.logged(/refused/)).toBe(false);
  });

  it("a client that stops reading loses frames instead of blocking the runtime or the others; frames stay whole", async () => {
    const r = await rig({ readers: 1 });
    const c1 = await r.connect();
    const slow = await r.connect();
    slow.socket.pause(); // never reads: the kernel buffer fills
    await c1.frame();
    await until(() => r.server.clients().length === 2, "the reader to be admitted");
    for (let k = 0; k < 600; k++) {
      await r.step();
      await c1.frame();
    }
    const [ctl, rdr] = r.server.clients();
    expect(ctl).toMatchObject({ framesSent: 601, framesDropped: 0 });
    expect(rdr!.framesDropped).toBeGreaterThan(0);
    expect(rdr!.framesSent + rdr!.framesDropped).toBe(601);
    expect(r.logged(/lola:client#2 is not reading fast enough: dropping sensor messages/)).toBe(true);
    // Let it catch up: everything it gets is whole 896-byte messages.
    slow.socket.resume();
    await until(() => slow.received === rdr!.framesSent * 896, "the slow reader to drain");
    await r.step();
    await until(() => slow.received === (rdr!.framesSent + 1) * 896, "one more frame");
    expect(r.logged(/lola:client#2 caught up after \d+ dropped sensor message\(s\)/)).toBe(true);
    for (let i = 0; i < 20; i++) expect(decode(await slow.frame())).toHaveProperty("RobotConfig");
  });
});

describe("LoLA server: the sockets it rebuilds (own read buffer, direct writes)", () => {
  it("every byte crosses unchanged both ways: commands split and merged at random, sensor messages as written", async () => {
    const sensed: Buffer[] = [];
    const commanded: Buffer[] = [];
    const tap = {
      sensor: (b: Uint8Array, n: number) => void sensed.push(Buffer.from(b.subarray(0, n))),
      command: (_id: number, b: Uint8Array, n: number) => void commanded.push(Buffer.from(b.subarray(0, n))),
    };
    const r = await rig({ tap });
    const c = await r.connect();
    await c.frame();
    // 300 commands, each with its own values, as one byte stream cut at pseudo-random points
    const cmds = Array.from(
      { length: 300 },
      (_, k) =>
        new LolaCommandWriter(["Position", "Stiffness", "Chest"])
          .setFloats(
            "Stiffness",
            range(25, (i) => Math.fround(((k + i) % 100) / 100)),
          )
          .setFloats("Chest", [k / 300, 0.5, 1]).bytes,
    );
    const stream = Buffer.concat(cmds);
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let p = 0; p < stream.length; ) {
      const n = 1 + rand(3000);
      await c.send(stream.subarray(p, p + n));
      p += n;
      if (rand(4) === 0) await r.step();
    }
    await until(() => r.server.clients()[0]!.commands === 300, "every command to arrive");
    expect(Buffer.concat(commanded).equals(stream)).toBe(true);
    expect(r.server.clients()[0]).toMatchObject({ commands: 300, keyProblems: 0, framesDropped: 0 });
    // the last command applied, to the byte
    expect(Array.from(r.robot.output.commands.stiffness)).toEqual(range(25, (i) => Math.fround(((299 + i) % 100) / 100)));
    for (let k = 0; k < 50; k++) await r.step();
    const sent = r.server.clients()[0]!.framesSent;
    await until(() => c.received === sent * 896, "every frame to arrive");
    // the first frame (read above) was written at accept, not by a cycle, so it is not tapped; every later one is a tapped cycle's
    const frames: Buffer[] = [];
    for (let k = 1; k < sent; k++) frames.push(await c.frame());
    expect(frames.length).toBeGreaterThan(50);
    expect(frames.map((f) => f.toString("hex"))).toEqual(sensed.slice(-(sent - 1)).map((f) => f.toString("hex")));
  });
});

describe("LoLA server: pollCommands (the cycle reads the controlling client, issue 26)", () => {
  const cmd = (k: number) =>
    new LolaCommandWriter(["Position", "Stiffness"]).setFloats(
      "Stiffness",
      range(25, (i) => Math.fround(((k + i) % 100) / 100)),
    ).bytes;
  /** Poll until the controller's command count reaches `n` (the bytes may still be on their way). */
  const polledUntil = async (r: Rig, n: number) => {
    await until(() => {
      r.server.pollCommands();
      return (r.server.clients().find((x) => x.role === "controller")?.commands ?? 0) >= n;
    }, `${n} commands read by pollCommands`);
  };

  it("nothing is read until pollCommands(): then every byte, split or merged, in one read, as on arrival", async () => {
    const commanded: Buffer[] = [];
    const r = await rig({ pollCommands: true, tap: { sensor: () => {}, command: (_id, b, n) => void commanded.push(Buffer.from(b.subarray(0, n))) } });
    const c = await r.connect();
    await c.frame();
    await c.send(cmd(1));
    await c.send(cmd(2).subarray(0, 100));
    await new Promise((res) => setTimeout(res, 30)); // arrived in the kernel, and nobody reads it (the fallback waits 250 ms)
    expect(r.server.clients()[0]).toMatchObject({ role: "controller", commands: 0 });
    expect(r.robot.authority.holder()).toBeNull();
    r.server.pollCommands();
    expect(r.server.clients()[0]!.commands).toBe(1); // read and applied inside the call
    expect(r.robot.authority.holder()).toMatchObject({ owner: "lola:client#1", source: "lola" });
    await c.send(cmd(2).subarray(100));
    await polledUntil(r, 2);
    expect(Buffer.concat(commanded).equals(Buffer.concat([cmd(1), cmd(2)]))).toBe(true);
    expect(Array.from(r.robot.output.commands.stiffness)).toEqual(range(25, (i) => Math.fround(((2 + i) % 100) / 100)));
    r.server.pollCommands(); // nothing there (EAGAIN): nothing happens, nothing logged
    expect(r.server.clients()[0]!.commands).toBe(2);
    expect(r.logs.filter((l) => l.level === "warn")).toEqual([]);
    // More than one read buffer (16 KiB) at once: read until the kernel has no more.
    const many = Buffer.concat(range(80, (k) => k).map((k) => Buffer.from(cmd(k))));
    expect(many.length).toBeGreaterThan(16 * 1024);
    await c.send(many);
    await polledUntil(r, 82);
    expect(r.server.clients()[0]).toMatchObject({ commands: 82, keyProblems: 0 });
  });

  it("a client that hangs up is seen at the next poll: control released at once, the next client controls", async () => {
    const r = await rig({ pollCommands: true });
    const c = await r.connect();
    await c.frame();
    await c.send(cmd(1));
    await polledUntil(r, 1);
    expect(r.robot.authority.holder()?.owner).toBe("lola:client#1");
    await c.close();
    await until(() => {
      r.server.pollCommands();
      return r.server.clients().length === 0;
    }, "the hang-up to be read");
    expect(r.robot.authority.holder()).toBeNull();
    expect(r.logged(/lola:client#1 disconnected while in control/)).toBe(true);
    const d = await r.connect();
    await d.frame();
    await d.send(cmd(3));
    await polledUntil(r, 1);
    expect(r.robot.authority.holder()?.owner).toBe("lola:client#2");
  });

  it("when no cycle polls (a stopped loop), a timer reads the client within a quarter second: it is never left blocked", async () => {
    const r = await rig({ pollCommands: true });
    const c = await r.connect();
    await c.frame();
    await c.send(cmd(5));
    const t0 = performance.now();
    await until(() => r.server.clients()[0]!.commands === 1, "the fallback's read", 3000);
    expect(performance.now() - t0).toBeGreaterThan(50); // not at once: only a cycle's poll is
    expect(r.robot.authority.holder()?.owner).toBe("lola:client#1");
  });

  it("garbage is dropped as on arrival; readers are read by the event loop as before", async () => {
    const r = await rig({ pollCommands: true, readers: 1 });
    const c = await r.connect();
    await c.frame();
    const reader = await r.connect();
    await until(() => r.server.clients().length === 2, "the reader's admission");
    await reader.send(cmd(1));
    await until(() => r.logged(/read-only: the commands it sends are ignored/), "the reader's bytes read without a poll");
    await c.send(Buffer.from([0xc1, 0xc1, 0xc1, 0xc1]));
    await until(() => {
      r.server.pollCommands();
      return r.logged(/lola:client#1 dropped/);
    }, "the garbage to be read");
    expect(r.server.clients().map((x) => x.name)).toEqual(["lola:client#2"]);
  });
});

describe("LoLA server: socket file and configuration", () => {
  it("replaces a stale socket file, refuses a live one or a non-socket, removes the file on close", async () => {
    const path = tmpSocketPath();
    // A stale socket: its server was killed, the file stays.
    const child = spawnSync(process.execPath, ["-e", `require("net").createServer().listen(${JSON.stringify(path)}, () => process.kill(process.pid, "SIGKILL"))`]);
    expect(child.signal).toBe("SIGKILL");
    expect(lstatSync(path).isSocket()).toBe(true);
    const r = await rig({ path });
    const c = await r.connect();
    await c.frame();
    await expect(startLolaServer(r.robot, { path, log: () => {} })).rejects.toMatchObject({
      code: "BL_ERR_LOLA_SOCKET",
      message: expect.stringMatching(/another server \(LoLA itself, or another bodylink\) is accepting on it/),
    });
    await r.server.close();
    await c.closed;
    expect(existsSync(path)).toBe(false);
    expect(r.logged(/stopped serving LoLA/)).toBe(true);
    await r.server.close(); // idempotent

    const file = tmpSocketPath();
    writeFileSync(file, "not a socket");
    cleanups.push(() => rmSync(file, { force: true }));
    await expect(startLolaServer(r.robot, { path: file, log: () => {} })).rejects.toMatchObject({ code: "BL_ERR_LOLA_SOCKET", message: expect.stringMatching(/exists and is not a socket/) });
    expect(readFileSync(file, "utf8")).toBe("not a socket");
  });

  it("RobotConfig: pads short strings (logged), refuses long ones at start-up, validates options", async () => {
    const r = await rig({ robotConfig: { headId: "P0000074", headVersion: "6.0" } });
    expect(r.server.robotConfig.headId).toBe("P0000074            ");
    expect(r.logged(/RobotConfig headId "P0000074" padded with spaces to 20 characters/)).toBe(true);
    const c = await r.connect();
    expect((decode(await c.frame()) as { RobotConfig: string[] }).RobotConfig[3]).toBe("6.0  ");
    const path = tmpSocketPath();
    await expect(startLolaServer(r.robot, { path, robotConfig: { bodyId: "P0000073A07S947000123" }, log: () => {} })).rejects.toMatchObject({
      code: "BL_ERR_LOLA_CONFIG",
      message: expect.stringMatching(/bodyId "P0000073A07S947000123" is 21 characters; LoLA clients need exactly 20/),
    });
    await expect(startLolaServer(r.robot, { path, robotConfig: { headId: "short" }, padRobotConfig: false, log: () => {} })).rejects.toMatchObject({ code: "BL_ERR_LOLA_CONFIG" });
    await expect(startLolaServer(r.robot, { path, graceMs: 10, log: () => {} })).rejects.toThrow(/graceMs must be 50\.\.60000 ms, got 10/);
    await expect(startLolaServer(r.robot, { path, readers: -1, log: () => {} })).rejects.toThrow(/readers must be an integer/);
    expect(existsSync(path)).toBe(false);
  });
});

describe("LoLA server on top of a link identified later (an upstream LoLA)", () => {
  it("holdUntilValid: nothing before the first valid state or while the link is lost, then every cycle", async () => {
    const r = await rig({ holdUntilValid: true });
    expect(r.robot.state.valid).toBe(false); // configured, no cycle yet
    const c = await r.connect();
    await new Promise((res) => setTimeout(res, 30));
    expect(c.pending).toBe(0); // no zeros passed off as a robot
    await r.step();
    expect((await c.frame()).length).toBe(896);
    r.robot.sim!.dropAnswers = 8; // the chest board stops answering: lost after 5
    await r.step(5);
    expect(r.robot.state.link).toBe("lost");
    await new Promise((res) => setTimeout(res, 30));
    c.discard();
    await r.step(3);
    await new Promise((res) => setTimeout(res, 30));
    expect(c.pending).toBe(0);
    await r.step(); // the link answers again
    expect(r.robot.state.valid).toBe(true);
    expect((await c.frame()).length).toBe(896);
  });

  it("robotConfigSource: RobotConfig follows the source in place (padded), given fields win, bad ones are logged", async () => {
    let source: Partial<{ bodyId: string; bodyVersion: string; headId: string; headVersion: string }> | null = null;
    const r = await rig({ robotConfigSource: () => source, robotConfig: { headVersion: "6.0.1" } });
    const c = await r.connect();
    const config = async () => {
      c.discard();
      await r.step();
      return (decode(await c.frame()) as { RobotConfig: string[] }).RobotConfig;
    };
    expect((await config())[0]).toBe(r.robot.prefs!.bodyId); // nothing from the source yet
    source = { bodyId: "P0000073A07S94799999", bodyVersion: "6.0.0", headId: "P0000074A05S93M0006", headVersion: "6.0.0" };
    expect(await config()).toEqual(["P0000073A07S94799999", "6.0.0", "P0000074A05S93M0006 ", "6.0.1"]);
    expect(r.server.robotConfig.bodyId).toBe("P0000073A07S94799999");
    expect(r.logged(/RobotConfig now P0000073A07S94799999 6\.0\.0 P0000074A05S93M0006 {2}6\.0\.1/)).toBe(true);
    source = { bodyId: "P0000073A07S947999991" };
    expect((await config())[0]).toBe("P0000073A07S94799999"); // kept
    expect(r.logged(/kept out of the messages: .*is 21 characters/)).toBe(true);
  });
});
