/**
 * Defense in depth on the robot API (issue 9, item 5), over real loopback sockets: a body larger
 * than its route can validly be is refused with 413 before it is parsed (from its Content-Length,
 * or from its first bytes when it is chunked), the lease is checked before the body is read, and a
 * client that keeps sending is cut. The limits come from the schemas (body-limit.ts); the first
 * block checks the sizer against the largest valid body of every route of every body.
 */
import { connect, type Socket } from "node:net";
import type { TSchema } from "typebox";
import { Check } from "typebox/value";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adapterFor, type RunningApiServer, startApiServer } from "../../src/serve/api/build.js";
import { bodyLimitFor, maxJsonBytes } from "../../src/serve/api/body-limit.js";
import { AcquireBodySchema, EstopBodySchema, RenewBodySchema } from "../../src/serve/api/schemas.js";
import type { NaoRobot } from "../../src/runtime/nao-robot.js";
import { LEASE, simNao, simP7, simTny } from "./helpers.js";

interface S {
  type?: string;
  const?: unknown;
  anyOf?: S[];
  items?: S;
  maxItems?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  properties?: Record<string, S>;
}

/** The longest valid value of a schema, written compactly (every string character needs \u escaping). */
function longest(s: S): unknown {
  if (s.const !== undefined) return s.const;
  if (s.anyOf) {
    const vals = s.anyOf.map(longest);
    return vals.reduce((a, b) => (JSON.stringify(b).length > JSON.stringify(a).length ? b : a));
  }
  switch (s.type) {
    case "boolean":
      return false;
    case "null":
      return null;
    case "integer":
      return String(s.minimum).length >= String(s.maximum).length ? s.minimum : s.maximum;
    case "number":
      return -2.2250738585072014e-308;
    case "string":
      return "\u0001".repeat(s.maxLength!);
    case "array":
      return Array.from({ length: s.maxItems! }, () => longest(s.items!));
    case "object":
      return Object.fromEntries(Object.entries(s.properties ?? {}).map(([k, v]) => [k, longest(v)]));
  }
  throw new Error(`no longest value for ${JSON.stringify(s)}`);
}

describe("body limits derived from the request schemas", () => {
  it("the sizer's bound is exactly the longest valid compact body, and the limit admits it pretty-printed, for every route of every body", async () => {
    const schemas: Array<[string, TSchema]> = [
      ["POST /v1/control", AcquireBodySchema],
      ["PUT /v1/control", RenewBodySchema],
      ["POST /v1/estop", EstopBodySchema],
    ];
    for (const robot of [await simNao(), await simP7(), await simTny()]) {
      for (const c of adapterFor(robot).commands) schemas.push([`${robot.kind} ${c.path}`, c.request]);
    }
    for (const [where, schema] of schemas) {
      const v = longest(schema as S);
      expect(Check(schema, v), `${where}: the longest value is valid`).toBe(true);
      const compact = Buffer.byteLength(JSON.stringify(v));
      expect(maxJsonBytes(schema), where).toBe(compact);
      expect(Buffer.byteLength(JSON.stringify(v, null, 2)), where).toBeLessThanOrEqual(bodyLimitFor(schema));
    }
    // A few KB for joints, as issue 9 asks.
    const joints = adapterFor(await simNao()).commands.find((c) => c.path === "/v1/commands/joints")!;
    expect(bodyLimitFor(joints.request)).toBeLessThan(8 * 1024);
  });

  it("an unbounded schema is refused at build, naming where", async () => {
    const Type = (await import("typebox")).default;
    expect(() => maxJsonBytes(Type.Object({ s: Type.String() }, { additionalProperties: false }))).toThrow(/\.s is a string without maxLength/);
    expect(() => maxJsonBytes(Type.Object({ a: Type.Array(Type.Number()) }, { additionalProperties: false }))).toThrow(/\.a is an array without maxItems/);
    expect(() => maxJsonBytes(Type.Object({}))).toThrow(/additional properties/);
  });
});

/** One raw HTTP exchange: what the server answered (status line and body) and whether it closed the socket. */
interface Raw {
  status: number;
  body: string;
  closed: boolean;
  /** Body bytes we managed to write before the server closed (only for `feed`). */
  written: number;
}

/**
 * Send `head` and then, if given, keep writing `chunk` (up to `total` bytes) as fast as the socket
 * takes it, until the server answers and closes or `total` is reached.
 */
function exchange(port: number, head: string, feed?: { chunk: Buffer; total: number; chunked: boolean }): Promise<Raw> {
  return new Promise((resolve) => {
    const s: Socket = connect(port, "127.0.0.1");
    let got = "";
    let written = 0;
    let closed = false;
    let stop = false;
    s.on("data", (d) => {
      got += d.toString("latin1");
    });
    s.on("error", () => undefined);
    const done = () => {
      stop = true;
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(got)?.[1] ?? 0);
      resolve({ status, body: got.slice(got.indexOf("\r\n\r\n") + 4), closed, written });
    };
    s.on("close", () => {
      closed = true;
      done();
    });
    s.write(head);
    if (!feed) return;
    const pump = (): void => {
      while (!stop && written < feed.total) {
        const piece = feed.chunked ? Buffer.concat([Buffer.from(`${feed.chunk.length.toString(16)}\r\n`), feed.chunk, Buffer.from("\r\n")]) : feed.chunk;
        written += feed.chunk.length;
        if (!s.write(piece)) {
          s.once("drain", pump);
          return;
        }
      }
      if (!stop && feed.chunked) s.write("0\r\n\r\n");
    };
    pump();
    // Whatever happens, give up after a while (the assertion on `closed` then fails).
    setTimeout(() => {
      if (!closed) {
        s.destroy();
      }
    }, 10_000).unref();
  });
}

describe("the robot API refuses what it need not read (issue 9, item 5)", () => {
  let robot: NaoRobot;
  let api: RunningApiServer;
  let lease: string;
  beforeAll(async () => {
    robot = await simNao();
    await robot.start();
    api = await startApiServer(robot);
    const r = await fetch(`${api.url}/v1/control`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ owner: "limits-test" }) });
    lease = ((await r.json()) as { lease_id: string }).lease_id;
  });
  afterAll(async () => {
    await api.close();
    await robot.stop();
  });

  const big = `{"positions": [${"1.5,".repeat(50_000)}`; // ~200 KB and not even valid JSON

  it("a 200 KB body to /v1/commands/joints, with or without a lease, is 413 from its Content-Length (never parsed: it is not JSON)", async () => {
    for (const headers of [{}, { [LEASE]: lease }] as Array<Record<string, string>>) {
      const r = await fetch(`${api.url}/v1/commands/joints`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: big });
      expect(r.status).toBe(413);
      const body = (await r.json()) as { code: string; message: string };
      expect(body.code).toBe("BL_ERR_API_BODY_TOO_LARGE");
      expect(r.headers.get("connection")).toBe("close");
    }
  });

  it("without a lease, a body of the right size is refused 403 before it is parsed (a broken body is not even looked at)", async () => {
    const r = await fetch(`${api.url}/v1/commands/joints`, { method: "POST", headers: { "content-type": "application/json" }, body: "{positions" });
    expect(r.status).toBe(403);
    expect(((await r.json()) as { code: string }).code).toBe("BL_ERR_AUTH_REQUIRED");
    const u = await fetch(`${api.url}/v1/commands/joints`, { method: "POST", headers: { "content-type": "application/json", [LEASE]: "not-a-lease" }, body: "{positions" });
    expect(u.status).toBe(403);
    expect(((await u.json()) as { code: string }).code).toBe("BL_ERR_AUTH_UNKNOWN_LEASE");
    // With the lease the same broken body reaches the parser: 400.
    const p = await fetch(`${api.url}/v1/commands/joints`, { method: "POST", headers: { "content-type": "application/json", [LEASE]: lease }, body: "{positions" });
    expect(p.status).toBe(400);
  });

  it("the largest valid joints body is accepted", async () => {
    const positions = Array.from({ length: 26 }, () => -2.2250738585072014e-308);
    const r = await fetch(`${api.url}/v1/commands/joints`, {
      method: "POST",
      headers: { "content-type": "application/json", [LEASE]: lease },
      body: JSON.stringify({ positions, stiffness: positions }, null, 2),
    });
    expect(r.status).toBe(200);
  });

  it("a chunked body is refused at its first bytes over the limit, and a client that keeps sending is cut", async () => {
    const head = `POST /v1/commands/joints HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${LEASE}: ${lease}\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const total = 64 * 1024 * 1024;
    const r = await exchange(api.port, head, { chunk: Buffer.alloc(16 * 1024, 0x20), total, chunked: true });
    expect(r.status).toBe(413);
    expect(r.body).toContain("BL_ERR_API_BODY_TOO_LARGE");
    expect(r.closed).toBe(true);
    expect(r.written).toBeLessThan(total);
  });

  it("a declared 100 MB body without a lease is answered at once and the connection is cut while the client keeps sending", async () => {
    const total = 100 * 1024 * 1024;
    const head = `POST /v1/commands/joints HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${total}\r\n\r\n`;
    const r = await exchange(api.port, head, { chunk: Buffer.alloc(64 * 1024, 0x20), total, chunked: false });
    expect(r.status).toBe(413);
    expect(r.closed).toBe(true);
    expect(r.written).toBeLessThan(total);
  });

  it("a body sent without a lease is cut too, once the 403 is written", async () => {
    const total = 100 * 1024 * 1024;
    const head = `POST /v1/commands/joints HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const r = await exchange(api.port, head, { chunk: Buffer.alloc(64 * 1024, 0x20), total, chunked: true });
    expect(r.status).toBe(403);
    expect(r.closed).toBe(true);
    expect(r.written).toBeLessThan(total);
  });

  it("after all this the server still answers", async () => {
    const r = await fetch(`${api.url}/v1/health`);
    expect(r.status).toBe(200);
  });
});
