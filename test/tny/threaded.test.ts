/**
 * The TNY-360 API server against the THREADED core, the way `bodylink serve` runs it: the body in
 * its worker (src/rt/tny360-worker.ts) and the server in that worker too. The SDK-facing behaviour must be
 * the in-thread server's (test/tny/server.test.ts): every served action answers Ok with decodable
 * values, the typed client's shapes, the control rule, the e-stop latch against a client that
 * keeps commanding, and closing a connection clears its velocity. On the kinematic body and the
 * physics body alike (`serve --sim`).
 */
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SIM_KINDS } from "../../src/bodies/sim-world.js";
import { TnyClient, TnyStatusError } from "../../src/client/tny/index.js";
import { Tny360Host } from "../../src/host/tny360-host.js";
import { toHex } from "../../src/wire/bytes.js";
import { actionSpec, Status } from "../../src/wire/tny/constants.js";
import { decodeFrame } from "../../src/wire/tny/decode.js";
import { encodeRequest } from "../../src/wire/tny/encode.js";
import { RawSocket } from "./helpers.js";
import { expectEveryAction } from "./sample-args.js";

const req = (msgId: number, m: string, a: string, args: unknown[]): Uint8Array => {
  const s = actionSpec(m, a);
  return encodeRequest(msgId, s.module, s.action, args);
};
const statusOf = (reply: Uint8Array): number => {
  const msg = decodeFrame(reply);
  if (msg.kind !== "response") throw new Error(`not a response: ${toHex(reply)}`);
  return msg.status;
};
const ZERO_VELOCITY = "00 00 00 00 00 00 00 00 00 00 00 00";

// The contract holds whatever body is under the simulator: the kinematic model and MuJoCo's (serve --sim).
describe.each(SIM_KINDS)("TNY-360 API server with the threaded core, in the core's thread (%s body)", (sim) => {
  let host: Tny360Host;
  let url: string;

  beforeAll(async () => {
    host = await Tny360Host.start({
      seed: 1,
      sim,
      remote: null,
      server: { host: "127.0.0.1", port: 0, fallbackToFreePort: false, token: null, allowHosts: [], allowOrigins: [] },
    });
    url = `ws://127.0.0.1:${host.tnyPort}/`;
  }, 60_000);
  afterAll(async () => {
    await host?.shutdown();
  });

  it("answers Ok with decodable values for each served action; the rest answer their documented status", async () => {
    const client = await TnyClient.connect(url, { WebSocket });
    try {
      // the robot's own error ring holds no event here (no simulator hook across threads): index 0 is
      // past its end (InvalidParameters), id 0 is no event's (NotFound), as the firmware answers
      expect(await client.call("error", "getErrorCount")).toBe(0);
      await expectEveryAction(client, { "error.getErrorEventByIndex": Status.InvalidParameters, "error.getErrorEventById": Status.NotFound });
    } finally {
      client.close();
    }
  }, 60_000);

  it("the typed client shapes results, and a refused command rejects with its status", async () => {
    const client = await TnyClient.connect(url, { WebSocket });
    try {
      expect(await client.system.ping()).toBeUndefined();
      expect(typeof (await client.power.getVoltage())).toBe("number");
      const stats = await client.system.getStatistics();
      expect(Object.keys(stats)).toEqual(["temperatureC", "cpuCore0Pct", "cpuCore1Pct", "ramInternalTotalBytes", "ramInternalUsedBytes", "psramTotalBytes", "psramUsedBytes"]);
      await expect(client.joint.setAngle(2, 3.0)).rejects.toBeInstanceOf(TnyStatusError);
      await expect(client.call("gait", "setType", 1)).resolves.toBeUndefined();
    } finally {
      client.close();
    }
  });

  it("the first commanding connection holds control; others get UnknownError and a log line; closing clears its velocity", async () => {
    const a = await RawSocket.open(url);
    const b = await RawSocket.open(url);
    expect(statusOf(await a.roundTrip(req(1, "body", "setVelocity", [0.2, 0, 0, true])))).toBe(Status.Ok);
    expect(host.authority.holder()?.owner).toMatch(/^tny:127\.0\.0\.1:\d+#\d+$/);
    expect(statusOf(await b.roundTrip(req(2, "body", "setVelocity", [0.5, 0, 0, true])))).toBe(Status.UnknownError);
    expect(statusOf(await b.roundTrip(req(3, "body", "getTargetVelocity", [])))).toBe(Status.Ok);
    const nLines = decodeFrame(await b.roundTrip(req(4, "system", "getNbLogLines", [])));
    const n = nLines.kind === "response" ? nLines.payload[0]! : 0;
    const line = decodeFrame(await b.roundTrip(req(5, "system", "getLogLine", [n - 1])));
    expect(new TextDecoder().decode(line.kind === "response" ? line.payload : new Uint8Array())).toMatch(/body\.setVelocity refused: control is held by tny:127\.0\.0\.1/);
    await a.close();
    // the release crosses to the core's authority: wait for the host's mirror to show it
    const t0 = Date.now();
    while (host.authority.holder() !== null && Date.now() - t0 < 5000) await new Promise((r) => setTimeout(r, 10));
    expect(host.authority.holder()).toBeNull();
    let tv = "";
    for (let i = 0; i < 100 && tv !== ZERO_VELOCITY; i++) {
      const r = decodeFrame(await b.roundTrip(req(6 + i, "body", "getTargetVelocity", [])));
      tv = r.kind === "response" ? toHex(r.payload) : "";
      if (tv !== ZERO_VELOCITY) await new Promise((r) => setTimeout(r, 10));
    }
    expect(tv).toBe(ZERO_VELOCITY); // cleared at once, well before the 500 ms decay would end it
    expect(statusOf(await b.roundTrip(req(200, "body", "setVelocity", [0.1, 0, 0, true])))).toBe(Status.Ok);
    await b.close();
  });

  it("an emergency stop holds against a client that keeps commanding (status 7); after the reset only a new connection takes control", async () => {
    const a = await RawSocket.open(url);
    expect(statusOf(await a.roundTrip(req(1, "body", "setVelocity", [0.2, 0, 0, true])))).toBe(Status.Ok);
    await host.estop({ source: "test", reason: "stop", category: 0 }); // resolves once the core engaged it
    let id = 2;
    for (let i = 0; i < 20; i++) {
      expect(statusOf(await a.roundTrip(req(id++, "body", "setVelocity", [0.3, 0, 0, true])))).toBe(Status.EmergencyStop);
      const tv = decodeFrame(await a.roundTrip(req(id++, "body", "getTargetVelocity", [])));
      expect(tv.kind === "response" && toHex(tv.payload)).toBe(ZERO_VELOCITY);
      expect(host.authority.holder()).toBeNull();
    }
    await host.resetEstop({ source: "test", reason: "clear" });
    expect(statusOf(await a.roundTrip(req(id++, "body", "setVelocity", [0.3, 0, 0, true])))).toBe(Status.UnknownError);
    const c = await RawSocket.open(url);
    expect(statusOf(await c.roundTrip(req(1, "body", "setVelocity", [0.1, 0, 0, true])))).toBe(Status.Ok);
    expect(host.authority.holder()?.source).toBe("tny");
    await a.close();
    await c.close();
  });
});
