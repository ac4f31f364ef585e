/**
 * Bounded HTTP connections with a descriptor reserve (issue 25, Build 3; src/serve/connection-limit.ts):
 * at the limit the stalest idle socket makes room, so idle sockets never lock a request out; only
 * when every socket is busy is the newcomer closed; the bound never eats the descriptor reserve.
 */
import { createServer, request, type Server } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { descriptorLimit, descriptorReserve, effectiveMaxConnections, limitConnections } from "../../src/serve/connection-limit.js";
import { until } from "../lola/client.js";

let server: Server | null = null;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  server?.closeAllConnections();
  await new Promise((r) => (server ? server.close(r) : r(null)));
  server = null;
});

async function listen(handler: Parameters<typeof createServer>[1], max: number) {
  server = createServer({ keepAliveTimeout: 60_000 }, handler);
  const limit = limitConnections(server, max);
  await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
  return { limit, port: (server.address() as AddressInfo).port };
}

/** An open TCP connection that sends nothing; resolves once connected; `closed` tells whether the server closed it. */
async function idleSocket(port: number): Promise<{ socket: Socket; closed: () => boolean }> {
  const socket = connect(port, "127.0.0.1");
  sockets.push(socket);
  let closed = false;
  socket.on("close", () => (closed = true));
  socket.on("error", () => {});
  await new Promise((r) => socket.once("connect", r));
  return { socket, closed: () => closed };
}

function get(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path: "/", agent: false }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("connection limit", () => {
  it("at the limit, a new request is served and the stalest idle socket is closed for it", async () => {
    const { limit, port } = await listen((_q, r) => r.end("ok"), 10);
    const idle: Array<Awaited<ReturnType<typeof idleSocket>>> = [];
    for (let i = 0; i < 10; i++) idle.push(await idleSocket(port));
    await until(() => limit.stats().open === 10, "10 open");
    expect(await get(port)).toBe(200);
    await until(() => idle[0]!.closed(), "the stalest closed");
    // the request's socket has gone (agent: false): 9 open; the next newcomer fits, the one after evicts the next stalest
    await until(() => limit.stats().open === 9, "9 open");
    idle.push(await idleSocket(port));
    idle.push(await idleSocket(port));
    await until(() => idle[1]!.closed(), "the next stalest closed");
    expect(idle.slice(2).some((s) => s.closed())).toBe(false);
    expect(limit.stats().idleClosed).toBe(2);
    expect(limit.stats().open).toBe(10);
  });

  it("a socket in a request is never closed for room; when all are busy the newcomer is", async () => {
    const hold: Array<() => void> = [];
    const { limit, port } = await listen((_q, r) => hold.push(() => r.end("late")), 3);
    const busy = [get(port), get(port), get(port)];
    await until(() => hold.length === 3, "three requests in flight");
    const newcomer = await idleSocket(port);
    await until(() => newcomer.closed(), "the newcomer closed");
    expect(limit.stats().refused).toBe(1);
    for (const h of hold) h();
    expect(await Promise.all(busy)).toEqual([200, 200, 200]);
  });

  it("a keep-alive socket between requests is idle again (the freshest)", async () => {
    const { limit, port } = await listen((_q, r) => r.end("ok"), 2);
    const a = await idleSocket(port);
    const ka = await idleSocket(port);
    ka.socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    await new Promise((r) => ka.socket.once("data", r));
    // `a` (never sent anything) is the stalest idle: a third connection's request closes it, not ka
    expect(await get(port)).toBe(200);
    await until(() => a.closed(), "the stalest closed");
    expect(ka.closed()).toBe(false);
    expect(limit.stats().idleClosed).toBe(1);
  });

  it("an upgraded socket (the state stream) is never closed for room", async () => {
    server = createServer((_q, r) => r.end("ok"));
    // an upgrade listener exists before the limit is attached, as @fastify/websocket's does
    const upgraded: Socket[] = [];
    server.on("upgrade", (_req, socket: Socket) => {
      upgraded.push(socket); // out of HTTP's hands: this test ends it
      socket.write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n");
    });
    const limit = limitConnections(server, 2);
    await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
    const port = (server.address() as AddressInfo).port;
    const up = await idleSocket(port);
    up.socket.write("GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: x\r\n\r\n");
    await new Promise((r) => up.socket.once("data", r));
    const a = await idleSocket(port);
    const b = await idleSocket(port); // over the limit: `a`, the stalest idle, goes; the upgraded one stays
    await until(() => a.closed(), "the idle one closed");
    const c = await idleSocket(port);
    await until(() => b.closed(), "the next idle one closed");
    expect(up.closed()).toBe(false);
    expect(c.closed()).toBe(false);
    expect(limit.stats().idleClosed).toBe(2);
    for (const u of upgraded) u.destroy();
  });

  it("the bound keeps a reserve of descriptors: an eighth of the limit, at least 128", () => {
    expect(descriptorReserve(1024)).toBe(128);
    expect(descriptorReserve(20_000)).toBe(2500);
    expect(effectiveMaxConnections(1024, 20_000)).toBe(1024);
    expect(effectiveMaxConnections(100_000, 20_000)).toBe(17_500);
    expect(effectiveMaxConnections(1024, 512)).toBe(384);
    expect(effectiveMaxConnections(1024, null)).toBe(1024);
    expect(effectiveMaxConnections(1024, 100)).toBe(16);
    const limit = descriptorLimit();
    if (limit !== null) expect(limit).toBeGreaterThan(0); // read from /proc/self/limits
  });
});
