/** bodylink's TNY server over real loopback WebSockets: every served action, every status, limits, control. */
import WebSocket, { WebSocketServer } from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SIM_KINDS } from "../../src/bodies/sim-world.js";
import { TnyClient, TnyStatusError } from "../../src/client/tny/index.js";
import { tny360PhysicsModel } from "../../src/drivers/tny360/driver.js";
import { SimClock } from "../../src/runtime/clock.js";
import { Tny360Host } from "../../src/host/tny360-host.js";
import { Tny360Robot } from "../../src/runtime/tny360-robot.js";
import { dispatchTnyFrame, newDispatchStats } from "../../src/serve/tny/dispatch.js";
import { deferMessages, directReplySocket, startTnyServer, type TnyServer } from "../../src/serve/tny/server.js";
import { fromHex, toHex } from "../../src/wire/bytes.js";
import { actionSpec, Status } from "../../src/wire/tny/constants.js";
import { decodeFrame } from "../../src/wire/tny/decode.js";
import { encodeRawRequest, encodeRequest } from "../../src/wire/tny/encode.js";
import { f32le } from "./arbitraries.js";
import { RawSocket } from "./helpers.js";
import { expectEveryAction, SAMPLE_ARGS } from "./sample-args.js";

const req = (msgId: number, m: string, a: string, args: unknown[]): Uint8Array => {
  const s = actionSpec(m, a);
  return encodeRequest(msgId, s.module, s.action, args);
};
const statusOf = (reply: Uint8Array): { msgId: number; status: number; length: number } => {
  const msg = decodeFrame(reply);
  if (msg.kind !== "response") throw new Error(`not a response: ${toHex(reply)}`);
  return { msgId: msg.msgId, status: msg.status, length: msg.payload.length };
};

describe.each(SIM_KINDS)("TNY server: every served action round-trips through a real WebSocket (%s body)", (sim) => {
  let robot: Tny360Robot;
  let server: TnyServer;
  let client: TnyClient;

  beforeAll(async () => {
    robot = await Tny360Robot.create(sim === "physics" ? { simModel: await tny360PhysicsModel() } : {});
    await robot.start();
    server = await startTnyServer(robot, { port: 0 });
    client = await TnyClient.connect(`ws://127.0.0.1:${server.port}/`, { WebSocket });
  });
  afterAll(async () => {
    client.close();
    await server.close();
    await robot.stop();
  });

  it("answers Ok with decodable values for each served action; the rest answer their documented status", async () => {
    const ev = robot.sim!.errors.add(1234, 0x05010102, [1, 2]);
    SAMPLE_ARGS["error.getErrorEventById"] = [ev.eventId];
    const served = await expectEveryAction(client);
    expect(robot.sim!.handlerKeys().sort()).toEqual([...served].sort()); // a handler for exactly the served ones
  });

  it("the typed client shapes results: undefined, a value, or an object by field names", async () => {
    expect(await client.system.ping()).toBeUndefined();
    expect(typeof (await client.power.getVoltage())).toBe("number");
    const stats = await client.system.getStatistics();
    expect(Object.keys(stats)).toEqual(["temperatureC", "cpuCore0Pct", "cpuCore1Pct", "ramInternalTotalBytes", "ramInternalUsedBytes", "psramTotalBytes", "psramUsedBytes"]);
    const line = await client.system.getLogLine(0);
    expect(line.tag).toBe("system");
    await expect(client.joint.setAngle(2, 3.0)).rejects.toBeInstanceOf(TnyStatusError);
    await expect(client.call("gait", "setType", 1)).resolves.toBeUndefined();
  });
});

/** A TNY-360 API server on a free port: its port, its counters where this thread can read them, its end. */
interface TnyRig {
  readonly port: number;
  /** The server's counters (the in-thread server's; a threaded core's server keeps them in its worker). */
  readonly stats: (() => ReturnType<TnyServer["stats"]>) | null;
  close(): Promise<void>;
}

/**
 * The runtimes the contract runs against: the threaded core `bodylink serve` runs (the server in the
 * core's worker, src/rt/tny360-worker.ts) on the kinematic body and on the physics body
 * (`serve --sim physics`), and the in-thread robot of the library.
 */
const TNY_RIGS: Record<"threaded core (serve)" | "threaded core, physics body (serve --sim physics)" | "in-thread robot", () => Promise<TnyRig>> = {
  "threaded core (serve)": async () => {
    const host = await Tny360Host.start({
      seed: 1,
      remote: null,
      server: { host: "127.0.0.1", port: 0, fallbackToFreePort: false, token: null, allowHosts: [], allowOrigins: [] },
      gcEveryMs: 0,
    });
    return { port: host.tnyPort!, stats: null, close: () => host.shutdown() };
  },
  "threaded core, physics body (serve --sim physics)": async () => {
    const host = await Tny360Host.start({
      seed: 1,
      sim: "physics",
      remote: null,
      server: { host: "127.0.0.1", port: 0, fallbackToFreePort: false, token: null, allowHosts: [], allowOrigins: [] },
      gcEveryMs: 0,
    });
    return { port: host.tnyPort!, stats: null, close: () => host.shutdown() };
  },
  "in-thread robot": async () => {
    const robot = await Tny360Robot.create();
    await robot.start();
    const server = await startTnyServer(robot, { port: 0 });
    return {
      port: server.port,
      stats: () => server.stats(),
      close: async () => {
        await server.close();
        await robot.stop();
      },
    };
  },
};

describe.each(Object.keys(TNY_RIGS) as Array<keyof typeof TNY_RIGS>)("TNY server: statuses and limits (raw frames), %s", (rigName) => {
  let server: TnyRig;
  let a: RawSocket;
  const url = () => `ws://127.0.0.1:${server.port}/`;

  beforeAll(async () => {
    server = await TNY_RIGS[rigName]();
    a = await RawSocket.open(url());
  }, 30_000);
  afterAll(async () => {
    await a?.close();
    await server?.close();
  });

  it("golden: the reference's setVelocity bytes get the reference's Ok bytes", async () => {
    const reply = await a.roundTrip(fromHex("01 01 01 00 03 02 0d 00 cd cc 4c 3e 00 00 00 00 00 00 00 00 01"));
    expect(toHex(reply)).toBe("02 00 01 00 00 00 00 00");
    const sv = await a.roundTrip(req(2, "body", "getTargetVelocity", []));
    expect(toHex(sv)).toBe(`02 00 02 00 00 00 0c 00 ${toHex(new Uint8Array([...f32le(0.2), 0, 0, 0, 0, 0, 0, 0, 0]))}`);
    await a.roundTrip(req(3, "body", "setVelocity", [0, 0, 0, true]));
  });

  it("UnknownModule (1) for unregistered modules, including the docs-only ones", async () => {
    for (const mod of [0x08, 0x0b, 0x11, 0x12, 0x15, 0xff]) {
      expect(statusOf(await a.roundTrip(encodeRawRequest(40 + mod, mod, 0, new Uint8Array(0))))).toEqual({ msgId: 40 + mod, status: Status.UnknownModule, length: 0 });
    }
  });

  it("UnknownAction (2) past each module's real table, including the firmware's [N, 4N) bug range", async () => {
    expect(statusOf(await a.roundTrip(encodeRawRequest(7, 0x03, 0x08, new Uint8Array(0)))).status).toBe(Status.UnknownAction);
    expect(statusOf(await a.roundTrip(encodeRawRequest(8, 0x03, 0x1f, new Uint8Array(0)))).status).toBe(Status.UnknownAction);
    expect(statusOf(await a.roundTrip(encodeRawRequest(9, 0x0f, 0x01, new Uint8Array(0)))).status).toBe(Status.UnknownAction);
    expect(statusOf(await a.roundTrip(encodeRawRequest(10, 0x00, 0xff, new Uint8Array(0)))).status).toBe(Status.UnknownAction);
  });

  it("InvalidParameters (3) for short, long, malformed and out-of-range payloads", async () => {
    const bad: Uint8Array[] = [
      encodeRawRequest(20, 0x03, 0x02, new Uint8Array(11)), // setVelocity, 11 of 12 bytes
      encodeRawRequest(21, 0x03, 0x02, new Uint8Array(14)), // one byte too many
      encodeRawRequest(22, 0x03, 0x02, new Uint8Array([...f32le(Number.NaN), ...new Uint8Array(8)])),
      encodeRawRequest(23, 0x03, 0x02, new Uint8Array([...new Uint8Array(12), 7])), // bool 7
      encodeRawRequest(24, 0x05, 0x02, new Uint8Array([14, ...f32le(0)])), // joint 14
      encodeRawRequest(25, 0x04, 0x04, new Uint8Array([4])), // leg 4
      encodeRawRequest(26, 0x02, 0x00, new Uint8Array([3])), // gait 3 (firmware: unchecked cast)
      encodeRawRequest(27, 0x05, 0x02, new Uint8Array([2, ...f32le(3)])), // knee beyond 150°: refused, old kept
      encodeRawRequest(28, 0x03, 0x02, new Uint8Array([...f32le(5), ...new Uint8Array(8)])), // 5 m/s: beyond the limits
      encodeRawRequest(29, 0x00, 0x08, new Uint8Array([200])), // log line 200 does not exist
      encodeRawRequest(30, 0x13, 0x01, new Uint8Array([0xff, 0x00])), // error index past the count
    ];
    for (const frame of bad) {
      const r = statusOf(await a.roundTrip(frame));
      expect(r.status, toHex(frame)).toBe(Status.InvalidParameters);
      expect(r.msgId).toBe(frame[2]);
      expect(r.length).toBe(0);
    }
    // header length disagreeing with the frame: the firmware would read past the frame
    const lying = encodeRawRequest(31, 0x00, 0x00, new Uint8Array(0));
    lying[6] = 40;
    expect(statusOf(await a.roundTrip(lying))).toMatchObject({ msgId: 31, status: Status.InvalidParameters });
    // a request frame shorter than a header but with a msg_id
    expect(statusOf(await a.roundTrip([0x01, 0x01, 0x20, 0x00, 0x00]))).toMatchObject({ msgId: 32, status: Status.InvalidParameters });
  });

  it("UnknownError (4) for actions the simulator does not serve", async () => {
    expect(statusOf(await a.roundTrip(req(50, "motor", "setDutyCycle", [1, 1.5]))).status).toBe(Status.UnknownError);
    expect(statusOf(await a.roundTrip(req(51, "imu", "getCalibrationState", []))).status).toBe(Status.UnknownError);
    expect(statusOf(await a.roundTrip(req(52, "system", "getSettings", []))).status).toBe(Status.UnknownError);
  });

  it("NotFound (5) for an error event id the ring does not hold", async () => {
    expect(statusOf(await a.roundTrip(req(60, "error", "getErrorEventById", [0xbeef])))).toEqual({ msgId: 60, status: Status.NotFound, length: 0 });
  });

  it("OutOfMemory (6) for a request over 256 bytes, with its msg_id echoed", async () => {
    const big = encodeRawRequest(0x1234, 0x00, 0x00, new Uint8Array(300));
    expect(statusOf(await a.roundTrip(big))).toEqual({ msgId: 0x1234, status: Status.OutOfMemory, length: 0 });
    const edge = encodeRawRequest(0x1235, 0x00, 0x00, new Uint8Array(249)); // 257 bytes
    expect(statusOf(await a.roundTrip(edge)).status).toBe(Status.OutOfMemory);
    // exactly 256 bytes is within the limit (and then malformed for ping)
    expect(statusOf(await a.roundTrip(encodeRawRequest(0x1236, 0x00, 0x00, new Uint8Array(248)))).status).toBe(Status.InvalidParameters);
  });

  it("ignores frames without a msg_id and non-requests, then keeps answering", async () => {
    a.send([0x01, 0x00, 0x05]);
    a.send(fromHex("02 00 09 00 00 00 00 00")); // a Response sent to the server
    a.send(fromHex("03 00 09 00 00 00 00 00")); // an Event
    const r = statusOf(await a.roundTrip(req(77, "system", "ping", [])));
    expect(r).toEqual({ msgId: 77, status: 0, length: 0 });
    if (server.stats) expect(server.stats().ignoredFrames).toBeGreaterThanOrEqual(3);
  });

  it("a text frame closes the connection with 1003", async () => {
    const b = await RawSocket.open(url());
    b.ws.send("ping");
    expect(await b.closed).toBe(1003);
  });

  it("plain HTTP gets 426", async () => {
    const res = await fetch(`http://127.0.0.1:${server.port}/`);
    expect(res.status).toBe(426);
  });

  it("at most 3 connections: a 4th is refused with HTTP 503 until one closes", async () => {
    const b = await RawSocket.open(url());
    const c = await RawSocket.open(url());
    await expect(RawSocket.open(url())).rejects.toThrow(/503/);
    await c.close();
    await new Promise((r) => setTimeout(r, 20));
    const d = await RawSocket.open(url());
    expect(statusOf(await d.roundTrip(req(1, "system", "ping", []))).status).toBe(0);
    await d.close();
    await b.close();
    if (server.stats) expect(server.stats().refusedConnections).toBe(1);
  });
});

describe("TNY server: reply order and control", () => {
  it("replies to RPC actions after a control tick, so a later ping overtakes them (match by msg_id)", async () => {
    const clock = new SimClock();
    const robot = await Tny360Robot.create({ clock });
    await robot.start(); // the loop sleeps on the SimClock until advanced
    const server = await startTnyServer(robot, { port: 0 });
    const s = await RawSocket.open(`ws://127.0.0.1:${server.port}/`);
    s.send(req(100, "body", "getEnabled", []));
    s.send(req(101, "system", "ping", []));
    expect(statusOf(await s.next()).msgId).toBe(101);
    await clock.advance(5);
    const late = await s.next();
    expect(statusOf(late)).toMatchObject({ msgId: 100, status: 0, length: 2 });
    await s.close();
    await server.close();
    await robot.stop();
  });

  it("an emergency stop holds against a client that keeps commanding: velocity 0 for 2 s, status 7; after the reset only a new connection takes control", async () => {
    const robot = await Tny360Robot.create();
    await robot.start();
    const server = await startTnyServer(robot, { port: 0 });
    const url = `ws://127.0.0.1:${server.port}/`;
    const a = await RawSocket.open(url);
    expect(statusOf(await a.roundTrip(req(1, "body", "setVelocity", [0.2, 0, 0, true]))).status).toBe(Status.Ok);
    robot.estop({ source: "test", reason: "stop", category: 0 });
    const zero = "00 00 00 00 00 00 00 00 00 00 00 00";
    const t0 = Date.now();
    let id = 2;
    let commands = 0;
    while (Date.now() - t0 < 2000) {
      expect(statusOf(await a.roundTrip(req(id++ & 0xffff, "body", "setVelocity", [0.3, 0, 0, true]))).status).toBe(Status.EmergencyStop);
      commands++;
      const tv = decodeFrame(await a.roundTrip(req(id++ & 0xffff, "body", "getTargetVelocity", [])));
      expect(tv.kind === "response" && toHex(tv.payload)).toBe(zero);
      expect(robot.authority.holder()).toBeNull();
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(commands).toBeGreaterThan(10);
    // a new connection is refused too while latched
    const b = await RawSocket.open(url);
    expect(statusOf(await b.roundTrip(req(1, "body", "setVelocity", [0.3, 0, 0, true]))).status).toBe(Status.EmergencyStop);
    robot.resetEstop({ source: "test", reason: "clear" });
    // both commanded through the latch: neither gets control implicitly again
    expect(statusOf(await a.roundTrip(req(id++ & 0xffff, "body", "setVelocity", [0.3, 0, 0, true]))).status).toBe(Status.UnknownError);
    expect(statusOf(await b.roundTrip(req(2, "body", "setVelocity", [0.3, 0, 0, true]))).status).toBe(Status.UnknownError);
    expect(robot.authority.holder()).toBeNull();
    const c = await RawSocket.open(url);
    expect(statusOf(await c.roundTrip(req(1, "body", "setVelocity", [0.1, 0, 0, true]))).status).toBe(Status.Ok);
    expect(robot.authority.holder()?.source).toBe("tny");
    for (const s of [a, b, c]) await s.close();
    await server.close();
    await robot.stop();
  });

  it("the first commanding connection holds control; others get UnknownError and a log line; closing clears its velocity", async () => {
    const robot = await Tny360Robot.create();
    await robot.start();
    const server = await startTnyServer(robot, { port: 0 });
    const url = `ws://127.0.0.1:${server.port}/`;
    const a = await RawSocket.open(url);
    const b = await RawSocket.open(url);
    expect(statusOf(await a.roundTrip(req(1, "body", "setVelocity", [0.2, 0, 0, true]))).status).toBe(Status.Ok);
    expect(robot.authority.holder()?.source).toBe("tny");
    expect(robot.authority.holder()?.owner).toMatch(/^tny:127\.0\.0\.1:\d+#\d+$/);
    expect(statusOf(await b.roundTrip(req(2, "body", "setVelocity", [0.5, 0, 0, true]))).status).toBe(Status.UnknownError);
    // reads need no control
    expect(statusOf(await b.roundTrip(req(3, "body", "getTargetVelocity", []))).status).toBe(Status.Ok);
    // the reason is in the robot's log ring
    const nLines = decodeFrame(await b.roundTrip(req(4, "system", "getNbLogLines", [])));
    const n = nLines.kind === "response" ? nLines.payload[0]! : 0;
    const line = decodeFrame(await b.roundTrip(req(5, "system", "getLogLine", [n - 1])));
    const text = new TextDecoder().decode(line.kind === "response" ? line.payload : new Uint8Array());
    expect(text).toMatch(/body\.setVelocity refused: control is held by tny:127\.0\.0\.1/);
    // an unserved command is answered without taking control
    expect(statusOf(await b.roundTrip(req(6, "motor", "startCalibration", [1]))).status).toBe(Status.UnknownError);

    const clears = robot.health().errors.velocityClears!;
    await a.close();
    // released at the close, and the velocity cleared on the control tick after it (however late a loaded machine runs it)
    await expect.poll(() => robot.authority.holder(), { timeout: 10_000 }).toBeNull();
    await expect.poll(() => robot.health().errors.velocityClears, { timeout: 10_000 }).toBe(clears + 1);
    const tv = decodeFrame(await b.roundTrip(req(7, "body", "getTargetVelocity", [])));
    expect(tv.kind === "response" && toHex(tv.payload)).toBe("00 00 00 00 00 00 00 00 00 00 00 00"); // cleared, not decaying
    expect(statusOf(await b.roundTrip(req(8, "body", "setVelocity", [0.1, 0, 0, true]))).status).toBe(Status.Ok);
    await b.close();
    await server.close();
    await robot.stop();
  });

  it("binds 127.0.0.1 by default", async () => {
    const robot = await Tny360Robot.create();
    const server = await startTnyServer(robot, { port: 0 });
    expect(server.host).toBe("127.0.0.1");
    await server.close();
    await robot.stop();
  });
});

describe("TNY server: hostile upgrades", () => {
  const rawUpgrade = (port: number, headers: string): Promise<import("node:net").Socket> =>
    import("node:net").then(
      ({ connect }) =>
        new Promise((resolve) => {
          const s = connect(port, "127.0.0.1", () => {
            s.write(`GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n${headers}\r\n`);
            resolve(s);
          });
          s.on("error", () => undefined);
        }),
    );

  it("a client that resets while being refused does not crash the server", async () => {
    const robot = await Tny360Robot.create();
    const server = await startTnyServer(robot, { port: 0 });
    const url = `ws://127.0.0.1:${server.port}/`;
    const full = await Promise.all([RawSocket.open(url), RawSocket.open(url), RawSocket.open(url)]);
    for (let i = 0; i < 5; i++) {
      const s = await rawUpgrade(server.port, "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n");
      s.resetAndDestroy();
    }
    await new Promise((r) => setTimeout(r, 50));
    expect(statusOf(await full[0]!.roundTrip(req(1, "system", "ping", []))).status).toBe(Status.Ok);
    for (const s of full) await s.close();
    await server.close();
    await robot.stop();
  });

  it("rejected handshakes do not use up connection slots", async () => {
    const robot = await Tny360Robot.create();
    const server = await startTnyServer(robot, { port: 0 });
    for (let i = 0; i < 4; i++) (await rawUpgrade(server.port, "")).end(); // no Sec-WebSocket-Key: ws answers 400
    await new Promise((r) => setTimeout(r, 50));
    const s = await RawSocket.open(`ws://127.0.0.1:${server.port}/`);
    expect(statusOf(await s.roundTrip(req(1, "system", "ping", []))).status).toBe(Status.Ok);
    await s.close();
    await server.close();
    await robot.stop();
  });
});

describe("TNY server: beforeFrame (a threaded core takes the host's e-stop request before each frame)", () => {
  it("runs before every frame is dispatched: an e-stop latched there already refuses that frame's command (7)", async () => {
    const robot = await Tny360Robot.create();
    await robot.start();
    let frames = 0;
    let latchAt = -1;
    const server = await startTnyServer(robot, {
      port: 0,
      beforeFrame: () => {
        if (frames++ === latchAt) robot.estop({ source: "test", reason: "requested between cycles", category: 0 });
      },
    });
    try {
      const a = await RawSocket.open(`ws://127.0.0.1:${server.port}/`);
      expect(statusOf(await a.roundTrip(req(1, "body", "setVelocity", [0.1, 0, 0, true]))).status).toBe(Status.Ok);
      latchAt = frames; // the next frame: the hook engages the latch just before it is dispatched
      expect(statusOf(await a.roundTrip(req(2, "body", "setVelocity", [0.2, 0, 0, true]))).status).toBe(Status.EmergencyStop);
      expect(frames).toBe(2);
      await a.close();
    } finally {
      await server.close();
      await robot.stop();
    }
  });
});

describe("TNY dispatcher: reply buffers", () => {
  it("answers in Buffers (ws sends them as they are), byte for byte the encoder's replies, for Ok, errors and values", async () => {
    const robot = await Tny360Robot.create({ clock: new SimClock() });
    const lease = robot.authority.acquire("test", "tny", 60_000);
    if (!lease.ok) throw new Error(lease.reason);
    const stats = newDispatchStats();
    const cases: [Uint8Array, string][] = [
      [req(7, "body", "setVelocity", [0.1, 0, 0, true]), "02 00 07 00 00 00 00 00"],
      [req(8, "body", "setVelocity", [9, 0, 0, true]), "02 00 08 00 03 00 00 00"], // over the limit: InvalidParameters
      [fromHex("01 01 09 00 63 00 00 00"), "02 00 09 00 01 00 00 00"], // module 99: UnknownModule
    ];
    for (const [frame, hex] of cases) {
      const out = dispatchTnyFrame(frame, robot, () => lease.lease.id, stats);
      expect(Buffer.isBuffer(out)).toBe(true);
      expect(toHex(out as Uint8Array)).toBe(hex);
    }
    const voltage = dispatchTnyFrame(req(10, "power", "getVoltage", []), robot, () => null, stats);
    expect(Buffer.isBuffer(voltage)).toBe(true);
    const v = decodeFrame(voltage as Uint8Array);
    expect(v).toMatchObject({ kind: "response", msgId: 10, status: 0 });
    await robot.stop();
  });
});

describe("TNY server: a flood waits its turn (BURST_FRAMES a millisecond; docs/performance.md, the TNY-360 flood)", () => {
  it("answers every frame of a burst far over the budget, in order, and defers the flooding connection's messages", async () => {
    const robot = await Tny360Robot.create();
    await robot.start();
    const server = await startTnyServer(robot, { port: 0 });
    try {
      const a = await RawSocket.open(`ws://127.0.0.1:${server.port}/`);
      // 600 requests sent back to back: the server reads many in one go
      const frames = Array.from({ length: 600 }, (_, i) => req(i, i % 2 ? "system" : "body", i % 2 ? "ping" : "setVelocity", i % 2 ? [] : [0.05, 0, 0, true]));
      for (const f of frames) a.send(f);
      const ids: number[] = [];
      for (let i = 0; i < frames.length; i++) {
        const r = statusOf(await a.next(5000));
        expect(r.status).toBe(Status.Ok);
        ids.push(r.msgId);
      }
      expect(ids).toEqual(frames.map((_, i) => i));
      expect(server.stats().framesWaited).toBeGreaterThan(0);
      await a.close();
    } finally {
      await server.close();
      await robot.stop();
    }
  });

  it("drops the waiting frames of a connection that closed: its commands do not take control back", async () => {
    const robot = await Tny360Robot.create();
    await robot.start();
    const server = await startTnyServer(robot, { port: 0, burstFrames: 1 }); // 1 a millisecond: 400 frames wait ~400 ms
    try {
      const a = await RawSocket.open(`ws://127.0.0.1:${server.port}/`);
      // 400 commands back to back, then the connection is gone
      for (let i = 0; i < 400; i++) a.send(req(i, "body", "setVelocity", [0.05, 0, 0, true]));
      a.ws.terminate();
      await new Promise((r) => setTimeout(r, 300));
      expect(server.stats().framesWaited).toBeGreaterThan(0);
      expect(server.stats().connections).toBe(0);
      expect(robot.authority.holder()).toBeNull();
    } finally {
      await server.close();
      await robot.stop();
    }
  });

  it("mayServe false: frames wait, in order, and are answered once it allows them", async () => {
    const robot = await Tny360Robot.create();
    await robot.start();
    let allow = false;
    const server = await startTnyServer(robot, { port: 0, mayServe: () => allow });
    try {
      const a = await RawSocket.open(`ws://127.0.0.1:${server.port}/`);
      for (let i = 0; i < 5; i++) a.send(req(i, "system", "ping", []));
      await expect(a.next(100)).rejects.toThrow();
      allow = true;
      for (let i = 0; i < 5; i++) expect(statusOf(await a.next(2000)).msgId).toBe(i);
      await a.close();
    } finally {
      await server.close();
      await robot.stop();
    }
  });

  it("replies go out as whole WebSocket frames of every length class, and the tap records the reply without the frame header", async () => {
    const robot = await Tny360Robot.create();
    await robot.start(); // adc.getAllChannels answers after a control tick
    const tapped: Uint8Array[] = [];
    const server = await startTnyServer(robot, {
      port: 0,
      tap: { request: () => {}, reply: (_c, b, n, o = 0) => void tapped.push(Uint8Array.from(b.subarray(o, o + n))) },
    });
    const c = await RawSocket.open(`ws://127.0.0.1:${server.port}/`);
    try {
      // 8 bytes (header only), 72 (adc, after a tick), and over 125 (a 16-bit length in the frame header): a long log line
      robot.logLine(2, "test", "x".repeat(180));
      const nLines = decodeFrame(await c.roundTrip(req(1, "system", "getNbLogLines", [])));
      const last = nLines.kind === "response" ? nLines.payload[0]! - 1 : -1;
      const got = [
        await c.roundTrip(req(2, "body", "setVelocity", [0.1, 0, 0, true])),
        await c.roundTrip(req(3, "adc", "getAllChannels", [])),
        await c.roundTrip(req(4, "system", "getLogLine", [last])),
        await c.roundTrip(encodeRawRequest(5, 0xee, 0, new Uint8Array(0))), // UnknownModule
      ].map((b) => Uint8Array.from(b));
      expect(got.map((b) => b.length)).toEqual([8, 72, expect.any(Number), 8]);
      expect(got[2]!.length).toBeGreaterThan(125);
      const line = decodeFrame(got[2]!);
      expect(line.kind === "response" && new TextDecoder().decode(line.payload)).toContain("x".repeat(180));
      expect(tapped.slice(-4)).toEqual(got);
    } finally {
      await c.close();
      await server.close();
      await robot.stop();
    }
  });

  it("directReplySocket finds the socket under a ws connection and its sender idle (pins the ws internals the one-write reply relies on)", async () => {
    const wss = new WebSocketServer({ port: 0, host: "127.0.0.1", perMessageDeflate: false });
    await new Promise((r) => wss.once("listening", r));
    const direct = new Promise<ReturnType<typeof directReplySocket>>((resolve) => wss.on("connection", (ws) => resolve(directReplySocket(ws))));
    const addr = wss.address();
    const c = new WebSocket(`ws://127.0.0.1:${typeof addr === "object" && addr ? addr.port : 0}/`);
    await new Promise((r) => c.once("open", r));
    const d = await direct;
    expect(d).not.toBeNull();
    expect(d?.sender._state).toBe(0);
    c.close();
    await new Promise((r) => wss.close(r));
  });

  it("deferMessages switches one connection's receiver to a message per turn (pins the ws internal it relies on)", async () => {
    const wss = new WebSocketServer({ port: 0, host: "127.0.0.1" });
    await new Promise((r) => wss.once("listening", r));
    const got: string[] = [];
    const deferred = new Promise<boolean>((resolve) =>
      wss.on("connection", (ws) => {
        const ok = deferMessages(ws);
        ws.on("message", (d) => got.push(String(d)));
        resolve(ok);
      }),
    );
    const addr = wss.address();
    const c = new WebSocket(`ws://127.0.0.1:${typeof addr === "object" && addr ? addr.port : 0}/`);
    await new Promise((r) => c.once("open", r));
    expect(await deferred).toBe(true);
    c.send("a");
    c.send("b");
    await new Promise((r) => setTimeout(r, 100));
    expect(got).toEqual(["a", "b"]);
    c.close();
    await new Promise((r) => wss.close(r));
  });
});
