/**
 * Local web security (issue 10, items 2–4; docs/security.md), over real loopback sockets as an
 * attacker on the same machine would try it: a foreign Host (DNS rebinding), a foreign Origin on
 * both WebSockets and on state-changing requests, a blind `no-cors` POST, no token off loopback,
 * the stream's subscriber cap and its dropping of subscribers that do not read, the TNY-360
 * server's idle timeout, the LoLA socket's mode.
 */
import { statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import type { NaoRobot } from "../../src/runtime/nao-robot.js";
import type { Tny360Robot } from "../../src/runtime/tny360-robot.js";
import { type RunningApiServer, startApiServer } from "../../src/serve/api/build.js";
import { startLolaServer } from "../../src/serve/lola/server.js";
import { startTnyServer, type TnyServer } from "../../src/serve/tny/server.js";
import { actionSpec } from "../../src/wire/tny/constants.js";
import { encodeRequest } from "../../src/wire/tny/encode.js";
import { simNao, simTny } from "./helpers.js";

interface Answer {
  status: number;
  json: { code?: string; message?: string } & Record<string, unknown>;
}

/** One HTTP request with exactly these headers (fetch would not let us set Host or Origin). */
function raw(url: string, method: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, agent: false, headers: { ...headers, ...(body !== undefined ? { "content-length": String(Buffer.byteLength(body)) } : {}) } }, (res) => {
      let text = "";
      res.on("data", (d) => {
        text += d;
      });
      res.on("end", () => {
        let json = {};
        try {
          json = JSON.parse(text);
        } catch {
          json = { message: text };
        }
        resolve({ status: res.statusCode ?? 0, json });
      });
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** Open a WebSocket with these headers; resolves with "open" or the HTTP status it was refused with. */
function tryWs(url: string, headers: Record<string, string> = {}): Promise<{ opened: boolean; status: number; ws: WebSocket }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers });
    ws.once("open", () => resolve({ opened: true, status: 101, ws }));
    ws.once("unexpected-response", (_req, res) => {
      resolve({ opened: false, status: res.statusCode ?? 0, ws });
      res.resume();
    });
    ws.once("error", () => resolve({ opened: false, status: 0, ws }));
  });
}

describe("robot API: Host, Origin and non-simple requests", () => {
  let robot: NaoRobot;
  let api: RunningApiServer;
  beforeAll(async () => {
    robot = await simNao();
    await robot.start();
    api = await startApiServer(robot, { allowOrigins: ["http://trusted.example:3000"] });
  });
  afterAll(async () => {
    await api.close();
    await robot.stop();
  });
  const host = () => `127.0.0.1:${api.port}`;

  it("Host: evil.example (DNS rebinding) is refused with 421 on reads, writes and the stream", async () => {
    const r = await raw(`${api.url}/v1/state`, "GET", { host: "evil.example" });
    expect(r.status).toBe(421);
    expect(r.json.code).toBe("BL_ERR_WEB_HOST");
    expect((await raw(`${api.url}/v1/estop`, "POST", { host: `evil.example:${api.port}`, "content-type": "application/json" }, "{}")).status).toBe(421);
    expect(robot.authority.holder()).toBeNull();
    expect(robot.state.safetyReason ?? "").not.toMatch(/emergency/);
    const ws = await tryWs(`ws://127.0.0.1:${api.port}/v1/stream`, { host: "evil.example" });
    expect(ws.opened).toBe(false);
    expect(ws.status).toBe(421);
    for (const ok of [host(), `localhost:${api.port}`, `[::1]:${api.port}`]) expect((await raw(`${api.url}/v1/info`, "GET", { host: ok })).status, ok).toBe(200);
  });

  it("a foreign Origin cannot open the stream, take a lease or trigger the e-stop; same origin, no Origin and --allow-origin can", async () => {
    const evil = { host: host(), origin: "http://127.0.0.1:9" };
    const ws = await tryWs(`ws://${host()}/v1/stream`, { origin: evil.origin });
    expect(ws.opened).toBe(false);
    expect(ws.status).toBe(403);
    const stop = await raw(`${api.url}/v1/estop`, "POST", { ...evil, "content-type": "application/json" }, "{}");
    expect(stop.status).toBe(403);
    expect(stop.json.code).toBe("BL_ERR_WEB_ORIGIN");
    expect(stop.json.message).toContain('"http://127.0.0.1:9"');
    const take = await raw(`${api.url}/v1/control`, "POST", { ...evil, "content-type": "application/json" }, JSON.stringify({ owner: "page" }));
    expect(take.status).toBe(403);
    expect(robot.authority.holder()).toBeNull();
    expect(robot.state.safetyReason ?? "").not.toMatch(/emergency/);
    // Allowed: no Origin (programs), the server's own origin (its dashboard), an --allow-origin one.
    for (const origin of [undefined, `http://${host()}`, "http://trusted.example:3000"]) {
      const w = await tryWs(`ws://${host()}/v1/stream`, origin ? { origin } : {});
      expect(w.opened, String(origin)).toBe(true);
      w.ws.close();
      const c = await raw(`${api.url}/v1/control`, "GET", origin ? { host: host(), origin } : { host: host() });
      expect(c.status).toBe(200);
    }
  });

  it("a blind POST (no JSON content type, no bodylink header: what fetch's no-cors mode sends) cannot trigger the e-stop", async () => {
    for (const headers of [{}, { "content-type": "text/plain" }, { "content-type": "application/x-www-form-urlencoded" }] as Array<Record<string, string>>) {
      const r = await raw(`${api.url}/v1/estop`, "POST", { host: host(), ...headers }, "");
      expect(r.status).toBe(415);
      expect(r.json.code).toBe("BL_ERR_WEB_SIMPLE_REQUEST");
    }
    expect(robot.state.safetyReason ?? "").not.toMatch(/emergency/);
    // With the header (curl -H x-bodylink-client:curl -X POST …) it stops.
    const ok = await raw(`${api.url}/v1/estop`, "POST", { host: host(), "x-bodylink-client": "curl" });
    expect(ok.status).toBe(200);
  });
});

describe("robot API: a token off loopback", () => {
  let robot: NaoRobot;
  let api: RunningApiServer | null = null;
  beforeAll(async () => {
    robot = await simNao();
    await robot.start();
  });
  afterAll(async () => {
    await api?.close();
    await robot.stop();
  });

  it("--host 0.0.0.0 without a token refuses to start, with one clear error", async () => {
    await expect(startApiServer(robot, { host: "0.0.0.0" })).rejects.toMatchObject({ code: "BL_ERR_WEB_TOKEN_NEEDED" });
    await expect(startTnyServer(await simTny(), { host: "0.0.0.0", port: 0 })).rejects.toMatchObject({ code: "BL_ERR_WEB_TOKEN_NEEDED" });
  });

  it("with a token, a request without it gets 401; Bearer and ?token= (the stream) pass; a wrong one of the same length does not", async () => {
    const token = "s3cret-token-0123456789";
    api = await startApiServer(robot, { host: "0.0.0.0", token });
    const url = `http://127.0.0.1:${api.port}`;
    const none = await raw(`${url}/v1/state`, "GET", {});
    expect(none.status).toBe(401);
    expect(none.json.code).toBe("BL_ERR_WEB_TOKEN");
    expect((await raw(`${url}/v1/state`, "GET", { authorization: `Bearer ${token.replace(/.$/, "X")}` })).status).toBe(401);
    expect((await raw(`${url}/v1/info`, "GET", { authorization: `Bearer ${token}` })).status).toBe(200);
    expect((await tryWs(`ws://127.0.0.1:${api.port}/v1/stream`)).status).toBe(401);
    const w = await tryWs(`ws://127.0.0.1:${api.port}/v1/stream?token=${token}`);
    expect(w.opened).toBe(true);
    w.ws.close();
    // The dashboard's page holds no data and loads without it (it passes its own ?token= on).
    expect((await raw(`${url}/`, "GET", {})).status).toBe(200);
  });
});

describe("state stream: subscriber cap and subscribers that do not answer", () => {
  it("the cap holds (503 before the upgrade), and a subscriber that reads nothing is dropped with 1008 and a reason", async () => {
    const robot = await simNao();
    await robot.start();
    const api = await startApiServer(robot, { maxSubscribers: 3, pingIntervalMs: 300 });
    const url = `ws://127.0.0.1:${api.port}/v1/stream`;
    try {
      const open = [await tryWs(url), await tryWs(url), await tryWs(url)];
      expect(open.every((o) => o.opened)).toBe(true);
      const fourth = await tryWs(url);
      expect(fourth.opened).toBe(false);
      expect(fourth.status).toBe(503);
      for (const o of open) o.ws.close();
      while (api.stream.subscribers > 0) await new Promise((r) => setTimeout(r, 20));
      // A subscriber that stops reading (its socket paused: it takes neither state nor pings).
      const slow = await tryWs(url);
      expect(slow.opened).toBe(true);
      const closed = new Promise<{ code: number; reason: string }>((resolve) => slow.ws.once("close", (code, reason) => resolve({ code, reason: reason.toString() })));
      const sock = (slow.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
      sock.pause();
      while (api.stream.subscribersDropped === 0) await new Promise((r) => setTimeout(r, 50));
      expect(api.stream.subscribers).toBe(0);
      sock.resume();
      const c = await closed;
      expect(c.code).toBe(1008);
      expect(c.reason).toBe("no answer to ping");
    } finally {
      await api.close();
      await robot.stop();
    }
  });
});

describe("TNY-360 API server: Origin, Host, token, idle timeout", () => {
  let robot: Tny360Robot;
  let server: TnyServer;
  afterEach(async () => {
    await server?.close();
    await robot?.stop();
  });

  it("a foreign Origin and a foreign Host cannot connect; the vendor SDK's Node client (no Origin) can", async () => {
    robot = await simTny();
    await robot.start();
    server = await startTnyServer(robot, { port: 0 });
    const url = `ws://127.0.0.1:${server.port}/`;
    const foreign = await tryWs(url, { origin: "http://127.0.0.1:9" });
    expect(foreign.opened).toBe(false);
    expect(foreign.status).toBe(403);
    expect((await tryWs(url, { host: "evil.example" })).status).toBe(421);
    expect(server.stats().refusedAccess).toBe(2);
    const ok = await tryWs(url);
    expect(ok.opened).toBe(true);
    ok.ws.close();
  });

  it("with a token, ?token= is needed", async () => {
    robot = await simTny();
    await robot.start();
    server = await startTnyServer(robot, { port: 0, token: "tny-token" });
    expect((await tryWs(`ws://127.0.0.1:${server.port}/`)).status).toBe(401);
    const ok = await tryWs(`ws://127.0.0.1:${server.port}/?token=tny-token`);
    expect(ok.opened).toBe(true);
    ok.ws.close();
  });

  it("three idle connections do not lock everyone else out: they are closed after the idle timeout", async () => {
    robot = await simTny();
    await robot.start();
    server = await startTnyServer(robot, { port: 0, idleTimeoutMs: 300 });
    const url = `ws://127.0.0.1:${server.port}/`;
    const idle = [await tryWs(url), await tryWs(url), await tryWs(url)];
    expect(idle.every((o) => o.opened)).toBe(true);
    expect((await tryWs(url)).status).toBe(503);
    const reasons = await Promise.all(idle.map((o) => new Promise<string>((resolve) => o.ws.once("close", (_c, r) => resolve(r.toString())))));
    expect(reasons.every((r) => /idle/.test(r))).toBe(true);
    expect(server.stats().idleClosed).toBe(3);
    const next = await tryWs(url);
    expect(next.opened).toBe(true);
    next.ws.close();
  });

  it("the idle timeout counts from the last frame: a connection that pings every 100 ms stays open past it, and closes once it falls quiet", async () => {
    robot = await simTny();
    await robot.start();
    server = await startTnyServer(robot, { port: 0, idleTimeoutMs: 300 });
    const o = await tryWs(`ws://127.0.0.1:${server.port}/`);
    expect(o.opened).toBe(true);
    const ping = actionSpec("system", "ping");
    let closedAt = 0;
    o.ws.once("close", () => (closedAt = performance.now()));
    const t0 = performance.now();
    while (performance.now() - t0 < 1000) {
      o.ws.send(encodeRequest(1, ping.module, ping.action, []));
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(closedAt).toBe(0); // 1 s of traffic: more than three idle timeouts, never idle
    const quietFrom = performance.now();
    await new Promise<void>((r) => (closedAt ? r() : o.ws.once("close", () => r())));
    expect(closedAt - quietFrom).toBeGreaterThanOrEqual(150); // the rest of the 300 ms after the last frame (sent ≤ 100 ms before)
    expect(server.stats().idleClosed).toBe(1);
  });

  it("three connections that send junk every 100 ms and hold no control give their slots to new ones; one in control keeps its slot (issue 25)", async () => {
    robot = await simTny();
    await robot.start();
    server = await startTnyServer(robot, { port: 0, yieldSlotAfterMs: 300 });
    const url = `ws://127.0.0.1:${server.port}/`;
    const held = await tryWs(url);
    const s = actionSpec("body", "setVelocity");
    const replies: Buffer[] = [];
    held.ws.on("message", (d) => replies.push(d as Buffer));
    // the controller commands every 100 ms (it holds the lease throughout)
    const command = setInterval(() => held.ws.send(encodeRequest(1, s.module, s.action, [0, 0, 0, true])), 100);
    const junk = [await tryWs(url), await tryWs(url)];
    expect(junk.every((o) => o.opened)).toBe(true);
    // each sends a frame the robot cannot understand every 100 ms: never idle, never useful
    const noise = setInterval(() => {
      for (const o of junk) if (o.ws.readyState === WebSocket.OPEN) o.ws.send(Buffer.from([0x07, 0, 0, 0]));
    }, 100);
    try {
      expect((await tryWs(url)).status).toBe(503); // all three useful within the last 300 ms (just connected)
      await new Promise((r) => setTimeout(r, 450));
      const closed = junk.map((o) => new Promise<string>((resolve) => o.ws.once("close", (code, r) => resolve(`${code} ${r.toString()}`))));
      const a = await tryWs(url);
      const b = await tryWs(url);
      expect(a.opened && b.opened).toBe(true);
      for (const r of await Promise.all(closed)) expect(r).toMatch(/^1008 slot given to a new connection: no control and no request for \d+ ms$/);
      expect(server.stats().slotsYielded).toBe(2);
      expect(held.ws.readyState).toBe(WebSocket.OPEN);
      expect(robot.authority.holder()).not.toBeNull();
      // the newcomers are within their grace and the controller holds its lease: the next one waits
      expect((await tryWs(url)).status).toBe(503);
      a.ws.close();
      b.ws.close();
    } finally {
      clearInterval(command);
      clearInterval(noise);
      held.ws.close();
    }
  });
});

describe("LoLA socket mode", () => {
  it("is 0600 whatever the umask, and 0660 with a group", async () => {
    const dir = await mkdtemp(join(tmpdir(), "bodylink-lola-mode-"));
    const robot = await simNao();
    await robot.start();
    const old = process.umask(0);
    try {
      const a = await startLolaServer(robot, { path: join(dir, "a"), log: () => {} });
      expect(statSync(a.path).mode & 0o777).toBe(0o600);
      await a.close();
      const gid = process.getgid!();
      const b = await startLolaServer(robot, { path: join(dir, "b"), group: gid, log: () => {} });
      expect(statSync(b.path).mode & 0o777).toBe(0o660);
      expect(statSync(b.path).gid).toBe(gid);
      await b.close();
      await expect(startLolaServer(robot, { path: join(dir, "c"), group: "no-such-group-here", log: () => {} })).rejects.toThrow(/no group "no-such-group-here"/);
    } finally {
      process.umask(old);
      await robot.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
