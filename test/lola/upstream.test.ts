/**
 * The LoLA upstream client against real servers on temp Unix sockets: bodylink's own simulated
 * LoLA (a NaoRobot with its LoLA server, byte-exact with LoLA) for the normal path and restarts,
 * and a raw socket server for garbage, stalls and split writes.
 */
import type { Socket } from "node:net";
import { encode } from "@msgpack/msgpack";
import { unpack } from "msgpackr";
import { afterEach, describe, expect, it } from "vitest";
import { NaoRobot } from "../../src/runtime/nao-robot.js";
import { startLolaServer } from "../../src/serve/lola/server.js";
import { LolaUpstream, type LolaUpstreamFaultKind, type LolaUpstreamOptions, SEND } from "../../src/transport/lola-upstream.js";
import { LolaCommandWriter } from "../../src/wire/lola/command-message.js";
import { LolaSensorWriter } from "../../src/wire/lola/sensor-message.js";
import { rawSocketServer, tmpSocketPath, until } from "./client.js";
import { KNOWN_ROBOT_CONFIG, knownSensorValues } from "./helpers.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Seen {
  logs: string[];
  faults: Array<{ kind: LolaUpstreamFaultKind; reason: string; writable: boolean }>;
  sensors: Uint8Array[];
  commands: Uint8Array[];
}

function upstream(path: string, opts: LolaUpstreamOptions = {}): { up: LolaUpstream; seen: Seen } {
  const seen: Seen = { logs: [], faults: [], sensors: [], commands: [] };
  const up = new LolaUpstream({
    path,
    retryMinMs: 10,
    retryMaxMs: 40,
    log: (_l, m) => seen.logs.push(m),
    tap: {
      sensor: (b, n) => seen.sensors.push(Uint8Array.from(b.subarray(0, n))),
      command: (_c, b, n) => seen.commands.push(Uint8Array.from(b.subarray(0, n))),
    },
    ...opts,
  });
  up.onFault = (kind, reason, writable) => seen.faults.push({ kind, reason, writable });
  cleanups.push(() => up.close());
  return { up, seen };
}

/** bodylink's simulated NAO serving LoLA on `path`, cycling on the wall clock. */
async function simulatedLola(path: string) {
  const robot = await NaoRobot.create();
  await robot.start();
  const server = await startLolaServer(robot, { path, log: () => {} });
  const stop = async () => {
    await server.close();
    await robot.stop();
  };
  cleanups.push(stop);
  return { robot, server, stop };
}

/** A raw socket server: the test decides every byte. */
async function rawServer(path: string, onConnection: (s: Socket, n: number) => void): Promise<Awaited<ReturnType<typeof rawSocketServer>>> {
  const raw = await rawSocketServer(path, onConnection);
  cleanups.push(raw.close);
  return raw;
}

const message = (headYaw = 0): Uint8Array => {
  const v = knownSensorValues();
  v.position[0] = headYaw;
  return Uint8Array.from(new LolaSensorWriter(KNOWN_ROBOT_CONFIG).write(v));
};

describe("LoLA upstream client", () => {
  it("waits for an upstream that starts later, then decodes its messages exactly as received", async () => {
    const path = tmpSocketPath();
    const { up, seen } = upstream(path);
    up.start();
    await until(() => seen.logs.some((l) => /waiting for LoLA at .* \(ENOENT: no socket there yet\)/.test(l)), "the waiting log");
    expect(up.status).toBe("waiting");
    const lola = await simulatedLola(path);
    await until(() => up.status === "streaming" && up.counters.messages >= 3, "messages");
    expect(seen.logs.some((l) => /connected to LoLA at .* after \d+ retries/.test(l))).toBe(true);
    expect(up.take()).toBe(true);
    // The staged values are those of the newest message the tap saw, byte for byte.
    const last = unpack(seen.sensors.at(-1)!) as Record<string, number[]>;
    expect(seen.sensors.every((s) => s.length === 896)).toBe(true);
    expect(Array.from(up.staged.position)).toEqual(last.Position);
    expect(Array.from(up.staged.battery)).toEqual(last.Battery);
    expect(Array.from(up.staged.status)).toEqual(last.Status);
    expect(up.robotConfig?.bodyId).toBe(lola.robot.prefs?.bodyId);
    expect(up.take()).toBe(false);
  });

  it("sends commands that move the upstream robot; the tap sees them as sent; nothing queues", async () => {
    const path = tmpSocketPath();
    const lola = await simulatedLola(path);
    const { up, seen } = upstream(path);
    expect(up.send(new Uint8Array(4))).toBe(SEND.NotConnected);
    up.start();
    await until(() => up.status === "streaming", "streaming");
    const w = new LolaCommandWriter();
    const stiffness = new Float32Array(25);
    stiffness[0] = 1;
    const position = Float32Array.from(lola.robot.state.position);
    position[0] = 0.4; // head yaw
    w.setFloats("Stiffness", stiffness).setFloats("Position", position);
    // One command per upstream message, as a LoLA client does.
    up.onMessage = () => {
      if (up.take()) up.send(w.bytes);
    };
    await until(() => Math.abs(lola.robot.state.position[0]! - 0.4) < 0.02, "the upstream head to turn", 8000);
    expect(lola.server.clients()[0]?.commands).toBeGreaterThan(0); // the head moved: it had control
    expect(seen.commands.length).toBeGreaterThan(0);
    expect(seen.commands.at(-1)).toEqual(w.bytes);
    expect(up.counters.commandsSent).toBe(seen.commands.length);
  });

  it("survives the upstream restarting: a 'closed' fault, then it reconnects and streams again", async () => {
    const path = tmpSocketPath();
    const first = await simulatedLola(path);
    const { up, seen } = upstream(path);
    up.start();
    await until(() => up.status === "streaming", "streaming");
    await first.stop();
    await until(() => seen.faults.some((f) => f.kind === "closed"), "the closed fault");
    expect(seen.faults[0]).toMatchObject({ kind: "closed", writable: false });
    expect(seen.faults[0]!.reason).toMatch(/LoLA closed the connection/);
    expect(up.connected).toBe(false);
    const before = up.counters.messages;
    await simulatedLola(path);
    await until(() => up.status === "streaming" && up.counters.messages > before, "streaming again");
    expect(up.counters.connects).toBe(2);
  });

  it("garbage: the fault comes while a last command can still be sent, the connection is dropped and made again", async () => {
    const path = tmpSocketPath();
    const raw = await rawServer(path, (s, n) => {
      if (n === 1)
        s.write(Uint8Array.from([...message(), 0xc1, 0x00])); // one good message, then bytes MessagePack never uses
      else s.write(message(0.25));
    });
    const { up, seen } = upstream(path);
    const last = new LolaCommandWriter(["Stiffness"]).bytes; // stiffness 0
    up.onFault = (kind, reason, writable) => {
      seen.faults.push({ kind, reason, writable });
      if (writable) up.send(last);
    };
    up.start();
    await until(() => raw.connections() === 2 && up.counters.messages === 2, "the second connection's message");
    expect(seen.faults).toHaveLength(1);
    expect(seen.faults[0]).toMatchObject({ kind: "garbage", writable: true });
    expect(seen.faults[0]!.reason).toMatch(/not a sensor message: .*first byte is 0xc1/);
    await until(() => Buffer.concat(raw.received).length >= last.length, "the last command");
    expect(Buffer.concat(raw.received).subarray(0, last.length)).toEqual(Buffer.from(last));
    expect(up.take()).toBe(true);
    expect(up.staged.position[0]).toBe(Math.fround(0.25));
    expect(up.counters.garbage).toBe(1);
  });

  it("a well-formed map that is not a sensor message is garbage too (wrong counts, NaN)", async () => {
    const plain = (change: (m: Record<string, unknown[]>) => void): Uint8Array => {
      const m = unpack(message()) as Record<string, unknown[]>;
      change(m);
      return encode(m); // well-formed MessagePack (float64, ints: any encoding is accepted)
    };
    const cases: Array<[Uint8Array, RegExp]> = [
      [plain((m) => m.Position!.pop()), /Position has 24 values, LoLA sends 25/],
      [plain((m) => (m.Gyroscope![2] = Number.NaN)), /Gyroscope\[2\] is NaN/],
      [plain((m) => delete m.Touch), /lacks Touch/],
    ];
    for (const [bytes, re] of cases) {
      const path = tmpSocketPath();
      await rawServer(path, (s) => s.write(bytes));
      const { up, seen } = upstream(path);
      up.start();
      await until(() => seen.faults.length > 0, "the fault");
      expect(seen.faults[0]!.kind).toBe("garbage");
      expect(seen.faults[0]!.reason).toMatch(re);
      expect(up.take()).toBe(false);
      await up.close();
    }
  });

  it("stall: a fault after stallMs on an open connection, which is closed and made again if LoLA stays silent", async () => {
    const path = tmpSocketPath();
    const raw = await rawServer(path, (s) => s.write(message())); // one message per connection, then silence
    const { up, seen } = upstream(path, { stallMs: 50, reconnectAfterStallMs: 150 });
    up.start();
    await until(() => seen.faults.some((f) => f.kind === "stalled"), "the stall");
    expect(seen.faults[0]).toMatchObject({ kind: "stalled", writable: true, reason: "no message from LoLA for 50 ms" });
    expect(up.status).toBe("stalled");
    await until(() => raw.connections() === 2, "the reconnect");
    expect(seen.logs.some((l) => /still no message after 150 ms: closing the connection and reconnecting/.test(l))).toBe(true);
  });

  it("a stalled LoLA that resumes is streaming again on the same connection", async () => {
    const path = tmpSocketPath();
    let sock: Socket | null = null;
    const raw = await rawServer(path, (s) => {
      sock = s;
      s.write(message());
    });
    const { up, seen } = upstream(path, { stallMs: 40, reconnectAfterStallMs: 60_000 });
    up.start();
    await until(() => up.status === "stalled", "the stall");
    sock!.write(message(0.5));
    await until(() => up.status === "streaming", "streaming again");
    expect(raw.connections()).toBe(1);
    expect(seen.logs).toContain("LoLA is sending again");
  });

  it("frames split and merged writes by structure; the newest of merged messages wins", async () => {
    const path = tmpSocketPath();
    const three = Buffer.concat([message(0.1), message(0.2), message(0.3)]);
    await rawServer(path, (s) => {
      // 1, 7, 895, 1000, … byte pieces, each its own write and (with setImmediate) its own read.
      const sizes = [1, 7, 895, 1000, 3, 600, 182];
      let at = 0;
      let k = 0;
      const next = () => {
        if (at >= three.length) return;
        const n = sizes[k++ % sizes.length]!;
        s.write(three.subarray(at, at + n));
        at += n;
        setTimeout(next, 2);
      };
      next();
    });
    const { up, seen } = upstream(path, { stallMs: 10_000 }); // pieces 2 ms apart may be far apart on a loaded machine
    const taken: number[] = [];
    up.onMessage = () => {
      if (up.take()) taken.push(up.staged.position[0]!);
    };
    up.start();
    await until(() => up.counters.messages === 3, "three messages");
    expect(seen.faults).toEqual([]);
    expect(seen.sensors.map((s) => Buffer.from(s))).toEqual([message(0.1), message(0.2), message(0.3)].map((m) => Buffer.from(m)));
    expect(taken.at(-1)).toBe(Math.fround(0.3));
    expect(taken.length + up.counters.superseded).toBe(3);
  });

  it("validates its options", () => {
    expect(() => new LolaUpstream({ stallMs: 0 })).toThrow(/stallMs must be a positive number/);
    expect(() => new LolaUpstream({ retryMinMs: 500, retryMaxMs: 100 })).toThrow(/retryMaxMs \(100\) must be at least retryMinMs \(500\)/);
  });
});
