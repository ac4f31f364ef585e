/** The typed TNY client against a scripted WebSocket server: msg_id matching, timeouts, statuses, limits. */
import WebSocket, { WebSocketServer } from "ws";
import { afterEach, describe, expect, it } from "vitest";
import { TnyClient, TnyClosedError, TnyStatusError, TnyTimeoutError } from "../../src/client/tny/index.js";
import { Reader, toHex } from "../../src/wire/bytes.js";
import { actionSpec } from "../../src/wire/tny/constants.js";
import { decodeHeader } from "../../src/wire/tny/decode.js";
import { encodeResponse } from "../../src/wire/tny/encode.js";
import { TnyDecodeError, TnyEncodeError } from "../../src/wire/tny/types.js";

type Script = (frame: Uint8Array, reply: (bytes: Uint8Array) => void, all: Uint8Array[]) => void;

const servers: WebSocketServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    for (const c of s.clients) c.terminate();
    await new Promise<void>((r) => s.close(() => r()));
  }
});

/** A fake robot on an ephemeral port that runs `script` for every request frame. */
async function fakeRobot(script: Script): Promise<string> {
  const wss = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  servers.push(wss);
  await new Promise<void>((r) => wss.once("listening", () => r()));
  wss.on("connection", (ws) => {
    const all: Uint8Array[] = [];
    ws.on("message", (data: Buffer) => {
      const frame = new Uint8Array(data);
      all.push(frame);
      script(frame, (b) => ws.send(b), all);
    });
  });
  const addr = wss.address();
  return `ws://127.0.0.1:${typeof addr === "object" && addr ? addr.port : 0}/`;
}

const msgIdOf = (frame: Uint8Array): number => decodeHeader(new Reader(frame))!.msgId;

describe("TnyClient", () => {
  it("sends byte-exact requests with RequireAck and increasing msg_ids", async () => {
    const seen: string[] = [];
    const url = await fakeRobot((frame, reply) => {
      seen.push(toHex(frame));
      reply(encodeResponse(msgIdOf(frame), 0));
    });
    const c = await TnyClient.connect(url, { WebSocket });
    await c.body.setVelocity(0.2, 0, 0, true);
    await c.body.setEnabled(0x0fff);
    expect(seen).toEqual(["01 01 01 00 03 02 0d 00 cd cc 4c 3e 00 00 00 00 00 00 00 00 01", "01 01 02 00 03 00 02 00 ff 0f"]);
    c.close();
  });

  it("typed methods send as many arguments as the caller passed (a trailing optional left out), refuse too many, and calls made together keep their own bytes", async () => {
    const seen: string[] = [];
    const url = await fakeRobot((frame, reply) => {
      seen.push(toHex(frame));
      reply(encodeResponse(msgIdOf(frame), 0));
    });
    const c = await TnyClient.connect(url, { WebSocket });
    await c.body.setVelocity(0.2, 0, 0); // clear_overrides left out: the robot takes its default
    await Promise.all([c.body.setVelocity(0.5, 0, 0, false), c.gait.setType(2), c.body.setPosture(0, 0, 0.12, 0, 0, 0)]);
    // @ts-expect-error one argument too many on purpose
    await expect(c.body.setVelocity(0.2, 0, 0, true, 1)).rejects.toThrow(/5 values for 4 field/);
    expect(seen).toEqual([
      "01 01 01 00 03 02 0c 00 cd cc 4c 3e 00 00 00 00 00 00 00 00",
      "01 01 02 00 03 02 0d 00 00 00 00 3f 00 00 00 00 00 00 00 00 00",
      "01 01 03 00 02 00 01 00 02",
      "01 01 04 00 03 04 18 00 00 00 00 00 00 00 00 00 8f c2 f5 3d 00 00 00 00 00 00 00 00 00 00 00 00",
    ]);
    c.close();
  });

  it("matches replies by msg_id when they arrive out of order", async () => {
    const power = actionSpec("power", "getVoltage").action;
    const url = await fakeRobot((_frame, reply, all) => {
      if (all.length < 3) return;
      // answer the three requests in reverse order, each with its own value
      for (const f of [...all].reverse()) reply(encodeResponse(msgIdOf(f), 0, power.returns, [msgIdOf(f) * 1.5]));
    });
    const c = await TnyClient.connect(url, { WebSocket });
    const [x, y, z] = await Promise.all([c.power.getVoltage(), c.power.getVoltage(), c.power.getVoltage()]);
    expect([x, y, z]).toEqual([1.5, 3, 4.5]);
    c.close();
  });

  it("rejects with TnyStatusError on a non-Ok status, and request() resolves it instead", async () => {
    const url = await fakeRobot((frame, reply) => reply(encodeResponse(msgIdOf(frame), 3)));
    const c = await TnyClient.connect(url, { WebSocket });
    const err = await c.joint.setAngle(2, 9).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TnyStatusError);
    expect((err as TnyStatusError).status).toBe(3);
    expect((err as Error).message).toBe("TNY-360 answered InvalidParameters (3) to joint.setAngle");
    const s = actionSpec("joint", "setAngle");
    expect(await c.request(s.module, s.action, [2, 9])).toEqual({ status: 3, values: [] });
    c.close();
  });

  it("times out a request that gets no reply (the firmware drops oversized frames silently)", async () => {
    const url = await fakeRobot(() => undefined);
    const c = await TnyClient.connect(url, { WebSocket, timeoutMs: 50 });
    await expect(c.system.ping()).rejects.toBeInstanceOf(TnyTimeoutError);
    expect(c.pending).toBe(0);
    c.close();
  });

  it("times out each request at its own deadline, from one timer: replies in between change nothing", async () => {
    // frames answered only when their msg_id is even: 1 and 3 time out, 2 and 4 are answered
    const url = await fakeRobot((frame, reply) => {
      if (msgIdOf(frame) % 2 === 0) reply(encodeResponse(msgIdOf(frame), 0));
    });
    const c = await TnyClient.connect(url, { WebSocket, timeoutMs: 120 });
    const t0 = performance.now();
    const settled = (p: Promise<unknown>): Promise<[string, number]> =>
      p.then(
        () => ["ok", performance.now() - t0],
        (e: unknown) => [(e as Error).name, performance.now() - t0],
      );
    const first = settled(c.system.ping());
    const second = settled(c.system.ping());
    await new Promise((r) => setTimeout(r, 60));
    const third = settled(c.system.ping());
    const fourth = settled(c.system.ping());
    const [a, b, d, e] = await Promise.all([first, second, third, fourth]);
    expect([a[0], b[0], d[0], e[0]]).toEqual(["TnyTimeoutError", "ok", "TnyTimeoutError", "ok"]);
    expect(a[1]).toBeGreaterThanOrEqual(119);
    expect(d[1]).toBeGreaterThanOrEqual(60 + 119); // its own deadline, not the first one's
    expect(c.pending).toBe(0);
    c.close();
  });

  it("works over a browser-style WebSocket too (addEventListener, ArrayBuffer data)", async () => {
    const url = await fakeRobot((frame, reply) => reply(encodeResponse(msgIdOf(frame), 0, actionSpec("power", "getVoltage").action.returns, [7.5])));
    /** `ws` seen only through the browser's surface: no `on`, messages as events. */
    class BrowserLike {
      readonly #ws: WebSocket;
      constructor(u: string) {
        this.#ws = new WebSocket(u);
      }
      get readyState(): number {
        return this.#ws.readyState;
      }
      get binaryType(): string {
        return this.#ws.binaryType;
      }
      set binaryType(t: string) {
        this.#ws.binaryType = t as "arraybuffer";
      }
      send(d: Uint8Array): void {
        this.#ws.send(d);
      }
      close(code?: number, reason?: string): void {
        this.#ws.close(code, reason);
      }
      addEventListener(type: "open" | "close" | "error" | "message", l: (e: object) => void): void {
        this.#ws.addEventListener(type, l);
      }
    }
    const c = await TnyClient.connect(url, { WebSocket: BrowserLike });
    expect(await c.power.getVoltage()).toBe(7.5);
    expect(await c.power.getVoltage()).toBe(7.5);
    c.close();
  });

  it("counts late replies whose msg_id is no longer pending", async () => {
    let held: Uint8Array | null = null;
    const url = await fakeRobot((frame, reply) => {
      if (!held) held = frame;
      else {
        reply(encodeResponse(msgIdOf(held), 0));
        reply(encodeResponse(msgIdOf(frame), 0));
      }
    });
    const c = await TnyClient.connect(url, { WebSocket, timeoutMs: 50 });
    await expect(c.system.ping()).rejects.toBeInstanceOf(TnyTimeoutError);
    // the second request gets its reply; the first one's late reply is unmatched
    await c.system.ping();
    expect(c.unmatchedReplies).toBe(1);
    c.close();
  });

  it("rejects the firmware's empty Ok for imu.getAcceleration (§12 #7) with a decode error", async () => {
    const url = await fakeRobot((frame, reply) => reply(encodeResponse(msgIdOf(frame), 0)));
    const c = await TnyClient.connect(url, { WebSocket });
    await expect(c.imu.getAcceleration()).rejects.toBeInstanceOf(TnyDecodeError);
    c.close();
  });

  it("refuses a request over 256 bytes locally, and bad arguments before sending", async () => {
    let received = 0;
    const url = await fakeRobot(() => {
      received++;
    });
    const c = await TnyClient.connect(url, { WebSocket });
    await expect(c.i2c.writeRegisters(0x40, 0, new Uint8Array(250))).rejects.toThrow(/256-byte limit/);
    // @ts-expect-error wrong argument type on purpose
    await expect(c.body.setVelocity("fast", 0, 0)).rejects.toBeInstanceOf(TnyEncodeError);
    await new Promise((r) => setTimeout(r, 20));
    expect(received).toBe(0);
    c.close();
  });

  it("rejects pending requests with TnyClosedError when the connection closes, and later calls too", async () => {
    const url = await fakeRobot(() => undefined);
    const c = await TnyClient.connect(url, { WebSocket });
    let reason = "";
    c.onClose((r) => {
      reason = r;
    });
    const p = c.system.ping();
    for (const s of servers) for (const ws of s.clients) ws.close(1001, "bye");
    await expect(p).rejects.toBeInstanceOf(TnyClosedError);
    expect(reason).toMatch(/1001/);
    await expect(c.system.ping()).rejects.toBeInstanceOf(TnyClosedError);
  });

  it("fails to connect with a TnyClosedError that says what to check", async () => {
    await expect(TnyClient.connect("ws://127.0.0.1:1/", { WebSocket })).rejects.toThrow(TnyClosedError);
    await expect(TnyClient.connect("ws://127.0.0.1:1/", { WebSocket: undefined })).rejects.toThrow(/WebSocket|cannot connect/);
  });
});
